#!/bin/bash
# Runs each libFuzzer target given for SECONDS, FUZZ_JOBS at a time
# (default: the online cores):
#   scripts/fuzz.sh SECONDS build/fuzz/bin/fuzz_NAME...
# A target starts from its committed seeds (fuzz/corpus/NAME/, read only)
# and the inputs earlier runs found (build/fuzz/corpus/NAME/, where new
# ones go), with fuzz/NAME.dict when there is one.  A crash, a leak, a
# timeout (over 10 s for one input) or memory past 2 GB stops the target
# and keeps the input as build/fuzz/crashes/NAME-*; the script goes on with
# the other targets, then exits non-zero if any stopped that way.  Each
# target's lines are printed when it ends, so parallel ones never mix.
set -u
seconds=$1
shift
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 1)}
mkdir -p build/fuzz/crashes

# Runs one target; its summary goes to build/fuzz/NAME.out, and
# build/fuzz/NAME.failed marks a finding.
run_target() {
    local bin=$1 name work dict log
    name=$(basename "$bin" | sed 's/^fuzz_//')
    work=build/fuzz/corpus/$name
    log=build/fuzz/$name.log
    mkdir -p "$work"
    rm -f "build/fuzz/$name.failed"
    dict=""
    [ ! -f "fuzz/$name.dict" ] || dict="-dict=fuzz/$name.dict"
    # -close_fd_mask=1: what the commands under test print is dropped;
    # their messages, libFuzzer's lines and the sanitizers' reports stay.
    "$bin" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -close_fd_mask=1 -print_final_stats=1 $dict \
        -artifact_prefix="build/fuzz/crashes/$name-" "$work" "fuzz/corpus/$name" \
        > "$log" 2>&1
    local rc=$?
    {
        echo "== fuzz $name: ${seconds}s"
        grep -E '^(#[0-9]+.*(DONE|INITED)|stat::number_of_executed_units|stat::peak_rss_mb)' \
            "$log" | sed 's/^/   /'
        if [ "$rc" -ne 0 ]; then
            tail -n 60 "$log"
            ls build/fuzz/crashes/"$name"-* 2>/dev/null | sed 's/^/   kept: /'
            touch "build/fuzz/$name.failed"
        fi
    } > "build/fuzz/$name.out"
}

running=0
for bin in "$@"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
    fi
    run_target "$bin" &
    running=$((running + 1))
done
wait

failed=""
for bin in "$@"; do
    name=$(basename "$bin" | sed 's/^fuzz_//')
    cat "build/fuzz/$name.out"
    [ ! -f "build/fuzz/$name.failed" ] || failed="$failed $name"
done
if [ -n "$failed" ]; then
    echo "fuzz: failed:$failed (inputs in build/fuzz/crashes/)" >&2
    exit 1
fi
echo "fuzz: every target ran ${seconds}s without a finding"

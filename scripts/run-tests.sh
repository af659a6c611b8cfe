#!/bin/bash
# Runs the test programs given on the command line, TEST_JOBS at a time
# (default: the online cores), and ends with one line totalling the test
# cases: "tests: N passed, M failed, K skipped".
#
# Each program's output is printed whole when it ends, under a line with
# its time, so parallel programs never interleave and the slow ones show;
# the slowest are listed again before the totals.  Programs start slowest
# first, by the times of the last run kept in TEST_TIMES (default
# build/test-times: "milliseconds program" lines), so the longest one does
# not start last.  A program that exits non-zero beyond its failed cases
# (a crash, a sanitizer report at exit, a failed group setup) adds one
# failed case.  Exits non-zero if anything failed.
set -u
jobs=${TEST_JOBS:-$(nproc 2>/dev/null || echo 1)}
times=${TEST_TIMES:-build/test-times}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# The programs, slowest first; one not timed yet counts as slowest.
ordered() {
    for t in "$@"; do
        ms=$(awk -v t="$t" '$2 == t { print $1 }' "$times" 2>/dev/null | tail -n 1)
        echo "${ms:-999999999} $t"
    done | sort -k1,1nr | cut -d' ' -f2-
}

# Runs program $2 as job $1; its log, exit status and time go to $work.
run_one() {
    local start end
    start=$(date +%s%N)
    "$2" > "$work/$1.log" 2>&1
    echo $? > "$work/$1.rc.tmp"
    end=$(date +%s%N)
    echo $(((end - start) / 1000000)) > "$work/$1.ms"
    mv "$work/$1.rc.tmp" "$work/$1.rc"
}

# The cases of one kind that a program's groups counted, added up (a
# program may run several groups, each with its own summary line).
count() {
    sed -n "s/^\\[  $1 *\\] \\([0-9]*\\) test.*/\\1/p" "$2" | awk '{ n += $1 } END { print n + 0 }'
}

passed=0 failed=0 skipped=0 bad_programs="" done_count=0
mapfile -t programs < <(ordered "$@")
total=${#programs[@]}
declare -A reported

# Prints and counts every job that has ended and is not reported yet.
report_done() {
    local i t rc ms log p f k
    for i in "${!programs[@]}"; do
        [ -f "$work/$i.rc" ] && [ -z "${reported[$i]:-}" ] || continue
        reported[$i]=1
        t=${programs[$i]} rc=$(cat "$work/$i.rc") ms=$(cat "$work/$i.ms") log=$work/$i.log
        done_count=$((done_count + 1))
        printf '== %s (%d.%01d s, %d/%d)\n' "$t" $((ms / 1000)) $((ms % 1000 / 100)) \
            "$done_count" "$total"
        cat "$log"
        echo "$ms $t" >> "$work/times"
        p=$(count PASSED "$log") f=$(count FAILED "$log") k=$(count SKIPPED "$log")
        passed=$((passed + ${p:-0}))
        failed=$((failed + ${f:-0}))
        skipped=$((skipped + ${k:-0}))
        if [ "$rc" -ne 0 ]; then
            [ "${f:-0}" -gt 0 ] || failed=$((failed + 1))
            bad_programs="$bad_programs $t"
        fi
    done
}

running=0
for i in "${!programs[@]}"; do
    if [ "$running" -ge "$jobs" ]; then
        wait -n
        running=$((running - 1))
        report_done
    fi
    run_one "$i" "${programs[$i]}" &
    running=$((running + 1))
done
wait
report_done

if [ -s "$work/times" ]; then
    mkdir -p "$(dirname "$times")"
    sort -k1,1nr "$work/times" > "$times"
    echo "slowest:"
    head -n 5 "$times" | awk '{ printf "  %6.1f s  %s\n", $1 / 1000, $2 }'
fi
[ -z "$bad_programs" ] || echo "failing programs:$bad_programs" >&2
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

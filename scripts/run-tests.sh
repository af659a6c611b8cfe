#!/bin/sh
# Runs each test program given on the command line (cmocka prints its own
# summary per program) and ends with one line totalling the test cases:
# "tests: N passed, M failed, K skipped".  A program that exits non-zero beyond its
# failed cases (a crash, a sanitizer report at exit, a failed group setup)
# adds one failed case.  Exits non-zero if anything failed.
set -u
passed=0
failed=0
skipped=0
bad_programs=""
log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in "$@"; do
    echo "== $t"
    "$t" > "$log" 2>&1
    rc=$?
    cat "$log"
    p=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    f=$(sed -n 's/^\[  FAILED  \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    k=$(sed -n 's/^\[  SKIPPED \] \([0-9]*\) test.*/\1/p' "$log" | tail -n 1)
    skipped=$((skipped + ${k:-0}))
    passed=$((passed + ${p:-0}))
    failed=$((failed + ${f:-0}))
    if [ "$rc" -ne 0 ]; then
        [ "${f:-0}" -gt 0 ] || failed=$((failed + 1))
        bad_programs="$bad_programs $t"
    fi
done
[ -z "$bad_programs" ] || echo "failing programs:$bad_programs" >&2
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]

#!/bin/sh
# Runs each test binary given on the command line (cmocka prints its own
# summary per binary) and ends with one line totalling the test programs:
# "tests: N passed, M failed".  Exits non-zero if any failed.
set -u
passed=0
failed=0
for t in "$@"; do
    echo "== $t"
    if "$t"; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "FAILED: $t" >&2
    fi
done
echo "tests: $passed passed, $failed failed"
[ "$failed" -eq 0 ]

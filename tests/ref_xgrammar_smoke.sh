#!/bin/sh
# ref_xgrammar_smoke.sh: a hand-run check of scripts/ref/xgrammar.js (not part
# of `make test`): masks of experiments/grammars/xgrammar-json.ebnf on Llama 3
# after a few prefixes, then the maskbench mode on N schemas (default 20):
# every 10th file of the MaskBench data in sorted order (sorted(files)[::10]),
# the first N of them, and, where python3 is installed, the serialization of
# their instances against Python's json.dumps.
#
#   tests/ref_xgrammar_smoke.sh [N] [MASKBENCH_DATA_DIR]
#
# Needs `make setup` (scripts/ref/node_modules) and data/cache/llama3.
set -eu
cd "$(dirname "$0")/.."
n=${1:-20}
data=${2:-../shared/maskbench/data}
vocab=data/cache/llama3/tokenizer.json
xg="node scripts/ref/xgrammar.js"
grammar=experiments/grammars/xgrammar-json.ebnf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

[ -d scripts/ref/node_modules/@mlc-ai/web-xgrammar ] ||
    { echo "smoke: run make setup first" >&2; exit 1; }
[ -f "$vocab" ] || { echo "smoke: $vocab is missing (make data)" >&2; exit 1; }

fail() { echo "smoke: FAIL: $*" >&2; exit 1; }
has() { grep -qx "$2" "$1"; }

# Llama 3 ids: 90 "{", 92 "}", 1 '"', 16 "1", 58 "[", 128000
# <|begin_of_text|> (special), 128001 <|end_of_text|> and 128009 <|eot_id|>
# (XGrammar's stop tokens).
i=0
for after in '' '{' '{"a":' '[1, ' '{"a": 1}'; do
    i=$((i + 1))
    $xg mask --vocab "$vocab" --ebnf "$grammar" --after "$after" > "$tmp/m$i"
    printf 'after %-10s %6d ids\n' "'$after'" "$(wc -l < "$tmp/m$i")"
    sort -n -c "$tmp/m$i" || fail "ids after '$after' are not sorted"
    ! has "$tmp/m$i" 128000 || fail "a special token after '$after'"
done
has "$tmp/m1" 90 && has "$tmp/m1" 58 && ! has "$tmp/m1" 92 ||
    fail "at the start: want { and [, not }"
has "$tmp/m2" 1 && has "$tmp/m2" 92 && ! has "$tmp/m2" 90 ||
    fail "after {: want \" and }, not {"
has "$tmp/m3" 16 && has "$tmp/m3" 90 && ! has "$tmp/m3" 92 ||
    fail "after {\"a\":: want 1 and {, not }"
has "$tmp/m4" 16 && ! has "$tmp/m4" 92 || fail "after [1, : want 1, not }"
has "$tmp/m5" 128001 && has "$tmp/m5" 128009 && ! has "$tmp/m2" 128001 ||
    fail "stop tokens: want them after a whole document only"
if $xg mask --vocab "$vocab" --ebnf "$grammar" --after '{]' 2> "$tmp/err"; then
    fail "a refused --after text was accepted"
fi
grep -q 'refused at byte 1' "$tmp/err" || fail "the refusal names no offset"
echo "masks: ok"

[ -d "$data" ] || { echo "smoke: no MaskBench data in $data: stop here"; exit 0; }
ls "$data" | LC_ALL=C sort | awk 'NR % 10 == 1' | head -n "$n" |
    sed "s|^|$data/|" > "$tmp/files"
if command -v python3 > /dev/null; then
    $xg dumps $(cat "$tmp/files") > "$tmp/js"
    python3 -c '
import json, sys
for f in sys.argv[1:]:
    for t in json.load(open(f, encoding="utf-8")).get("tests", []):
        print(json.dumps(t["data"], ensure_ascii=False))' $(cat "$tmp/files") > "$tmp/py"
    cmp -s "$tmp/js" "$tmp/py" || fail "serialization differs from json.dumps"
    echo "serialization: $(wc -l < "$tmp/js") instances as json.dumps writes them"
fi
$xg maskbench --vocab "$vocab" < "$tmp/files" > "$tmp/out"
[ "$(wc -l < "$tmp/out")" -eq "$(wc -l < "$tmp/files")" ] ||
    fail "not one line per schema"
node -e '
const rows = require("fs").readFileSync(process.argv[1], "utf8").trim()
  .split("\n").map((l) => JSON.parse(l));
const count = {};
for (const r of rows) count[r.outcome] = (count[r.outcome] || 0) + 1;
const q = (a, p) => { a = a.slice().sort((x, y) => x - y);
  return a.length ? a[Math.min(a.length - 1, Math.floor(p * a.length))] : NaN; };
const ttfm = rows.filter((r) => r.ttfm_us !== null);
const tbm = [].concat(...rows.map((r) => r.tbm_us));
console.log("schemas", rows.length, JSON.stringify(count));
for (const r of rows) if (r.outcome !== "pass")
  console.log("  " + r.file, r.outcome, r.error || "",
    JSON.stringify(r.instances.filter((x) => x.outcome !== "pass")));
console.log("TTFM ms: p50", q(ttfm.map((r) => r.ttfm_us), 0.5) / 1e3,
  "max", q(ttfm.map((r) => r.ttfm_us), 1) / 1e3,
  "(CPU p50", q(ttfm.map((r) => r.ttfm_cpu_us), 0.5) / 1e3 + ")");
console.log("TBM us:", tbm.length, "masks, p50", q(tbm, 0.5), "p90", q(tbm, 0.9),
  "p99", q(tbm, 0.99), "max", q(tbm, 1));
console.log("warnings", JSON.stringify([].concat(...rows.map((r) => r.warnings))));
' "$tmp/out"

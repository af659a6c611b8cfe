#!/bin/sh
# Trains a SentencePiece model on the multi corpus with Debian's spm_train
# (sentencepiece 0.1.97) and writes the .model file to OUTFILE.
# Usage: scripts/train-spm.sh OUTFILE [NAME]
#   NAME is spm-unigram or spm-bpe; without it, the name of OUTFILE's
#   directory (data/cache/NAME/...), as scripts/fetch-data.sh calls it.
#
# Settings are fixed so that the model is the same bytes on every run: one
# thread, a fixed random seed, no shuffling, and a fixed subset of the
# corpus (every third line) so that training stays well under a minute.
# Two user-defined symbols are included so that the tokenizers' handling of
# user-defined pieces is exercised.
set -eu
export LC_ALL=C
cd "$(dirname "$0")/.."

out=${1:?usage: train-spm.sh OUTFILE [NAME]}
name=${2:-$(basename "$(dirname "$out")")}
case "$name" in
spm-unigram) type=unigram ;;
spm-bpe) type=bpe ;;
*) echo "train-spm: unknown model '$name' (spm-unigram, spm-bpe)" >&2; exit 1 ;;
esac
command -v spm_train >/dev/null ||
    { echo "train-spm: spm_train missing (package sentencepiece: make setup)" >&2; exit 1; }

corpus=data/cache/multi/multi.txt
# Relative output paths are taken from the caller's directory.
case "$out" in /*) ;; *) out="$OLDPWD/$out" ;; esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
if [ ! -f "$corpus" ]; then
    scripts/make-corpus.sh "$tmp/multi.txt" multi
    corpus="$tmp/multi.txt"
fi
awk 'NR % 3 == 0' "$corpus" >"$tmp/train.txt"

# spm_train records its input and output paths in the model: relative names
# inside the temporary folder keep them the same on every run.
(cd "$tmp" && spm_train --input=train.txt --model_prefix=m \
    --model_type="$type" --vocab_size=8000 \
    --normalization_rule_name=nmt_nfkc --byte_fallback=true \
    --character_coverage=0.9995 --user_defined_symbols='<sep>,<cls>' \
    --num_threads=1 --random_seed=1 --shuffle_input_sentence=false \
    --input_sentence_size=200000 --max_sentence_length=4192 \
    --minloglevel=1 >log 2>&1) ||
    { cat "$tmp/log" >&2; echo "train-spm: spm_train failed" >&2; exit 1; }
mv "$tmp/m.model" "$out"

#!/bin/sh
# Writes one tokbench corpus to OUTFILE, the same bytes on every run.
# Usage: scripts/make-corpus.sh OUTFILE [KIND]
#   KIND is multi, unicode, stress or invalid; without it the kind is the
#   name of OUTFILE's directory (data/cache/KIND/...), which is how
#   scripts/fetch-data.sh calls it (it passes the manifest entry name too).
#
#   multi    English, German, Russian and Chinese fortunes (Debian packages
#            fortunes, fortunes-de, fortunes-ru, fortunes-zh), files in
#            byte order of their names, lines as they are.
#   unicode  Unicode's NamesList.txt, NormalizationTest.txt as shipped, and
#            NormalizationTest's columns written out as the characters
#            themselves (package unicode-data).
#   stress   generated valid UTF-8: a 100 000-letter run on one line, long
#            whitespace runs, digit runs, generated source code.
#   invalid  generated random bytes and invalid UTF-8 sequences, apart from
#            the rest because some reference tokenizers refuse them.
#
# Only sh, coreutils, perl and bzip2; random text comes from a fixed LCG in
# perl (not perl's rand) so that no perl version changes the bytes.
set -eu
export LC_ALL=C

out=${1:?usage: make-corpus.sh OUTFILE [KIND]}
kind=${2:-$(basename "$(dirname "$out")")}
fortunes=/usr/share/games/fortunes
unicode=/usr/share/unicode

need() { # file package
    [ -f "$1" ] || { echo "make-corpus: $1 missing (install $2: make setup)" >&2; exit 1; }
}

# Regular fortune files of a directory, skipping the .dat indexes and the
# .u8 (and other) symbolic links, in byte order of their names.
fortune_files() {
    for f in "$1"/*; do
        case "$f" in *.dat|*.u8) continue ;; esac
        [ -f "$f" ] && [ ! -L "$f" ] && echo "$f"
    done | sort
}

multi() {
    need "$fortunes/fortunes" fortunes
    need "$fortunes/de/witze" fortunes-de
    need "$fortunes/ru/2001.03" fortunes-ru
    need "$fortunes/chinese" fortunes-zh
    for d in "$fortunes" "$fortunes/de" "$fortunes/ru"; do
        for f in $(fortune_files "$d"); do cat "$f"; done
    done
}

unicode() {
    need "$unicode/NamesList.txt" unicode-data
    need "$unicode/NormalizationTest.txt.bz2" unicode-data
    cat "$unicode/NamesList.txt"
    bzip2 -dc "$unicode/NormalizationTest.txt.bz2"
    # Each test line "c1;c2;c3;c4;c5; # comment" as the five strings, tab
    # separated: real text in every normalization form.
    bzip2 -dc "$unicode/NormalizationTest.txt.bz2" | perl -CO -ne '
        next if /^[#@]/;
        my @c = (split /;/)[0..4];
        print join("\t", map { join "", map { chr hex } split / / } @c), "\n";'
}

stress() {
    perl -CO -e '
        use strict;
        my $x = 12345;
        sub rnd { $x = ($x * 1103515245 + 12345) & 0xffffffff; return $x >> 8; }
        # One letter 100 000 times on one line, then other long runs.
        print "a" x 100000, "\n";
        print "\x{3042}" x 20000, "\n";           # a Hiragana letter
        print "\x{2581}" x 5000, "\n";            # SentencePiece word marker
        print " " x 10000, "\n";
        print "\t" x 5000, "\n";
        print " \t" x 3000, "\n";
        print "\x{3000}" x 3000, "\n";            # ideographic space
        print "x", " " x 2000, "y", "\n";
        print "\r\n" x 3;
        print "\n" x 50;
        # Digit runs and numbers.
        print "0123456789" x 1000, "\n";
        print "9" x 10000, "\n";
        for my $i (1 .. 2000) { print rnd() % 1000000, ($i % 20 ? " " : "\n"); }
        for my $i (1 .. 500) { printf "%d.%04d, ", rnd() % 100000, rnd() % 10000; }
        print "\n";
        print "\x{0661}\x{0662}\x{0663}\x{0664}\x{0665}" x 200, "\n"; # Arabic-Indic digits
        print "\x{FF11}\x{FF12}\x{FF13}" x 300, "\n";                   # fullwidth digits
        # Generated source code: C and Python with mixed indentation.
        my @names = qw(count buf len next_state token_id trie node mask pos);
        for my $i (1 .. 400) {
            my $f = $names[rnd() % @names] . "_" . $i;
            my $a = $names[rnd() % @names];
            print "static int $f(const uint8_t *$a, size_t n)\n{\n";
            print "\tfor (size_t i = 0; i < n; i++) {\n";
            print "\t\tif ($a\[i] == 0x", sprintf("%02x", rnd() % 256), ")\n";
            print "\t\t\treturn (int)i; /* found */\n\t}\n\treturn -1;\n}\n\n";
            print "def py_$f($a, n=", rnd() % 100, "):\n";
            print "    \"\"\"Returns the first index of a byte.\"\"\"\n";
            print "    for i, c in enumerate($a\[:n]):\n";
            print "        if c == ", rnd() % 256, ":\n            return i\n";
            print "    return -1\n\n";
        }
    '
}

invalid() {
    perl -e '
        use strict;
        my $x = 987654321;
        sub rnd { $x = ($x * 1103515245 + 12345) & 0xffffffff; return $x >> 8; }
        # Random bytes, lines of random length; no NUL, CR or LF inside a
        # line so that line-based tools see the same lines.
        for my $l (1 .. 2000) {
            my $n = 1 + rnd() % 200;
            my $s = "";
            while (length $s < $n) {
                my $b = rnd() & 0xff;
                next if $b == 0 || $b == 10 || $b == 13;
                $s .= chr $b;
            }
            print $s, "\n";
        }
        # Named kinds of invalid UTF-8, alone and between valid text.
        my @bad = ("\x80", "\xbf", "\x80\x80\x80", "\xc0\xaf", "\xc1\xbf",
                   "\xe0\x80\xaf", "\xf0\x80\x80\xaf", "\xed\xa0\x80",
                   "\xed\xbf\xbf", "\xf4\x90\x80\x80", "\xf5\x80\x80\x80",
                   "\xfe", "\xff", "\xc3", "\xe2\x82", "\xf0\x9f\x98",
                   "\xe2\x28\xa1", "\xc3\x28", "\xf8\x88\x80\x80\x80",
                   "\xfc\x84\x80\x80\x80\x80");
        for my $b (@bad) {
            print $b, "\n";
            print "abc", $b, "def\n";
            print "\xc3\xa9t\xc3\xa9 ", $b, " \xe6\x97\xa5\xe6\x9c\xac", $b, $b, "\n";
            print " ", $b x 50, "\n";
        }
        print join("", @bad), "\n";
    '
}

case "$kind" in
multi | unicode | stress | invalid) ;;
*) echo "make-corpus: unknown corpus '$kind' (multi, unicode, stress, invalid)" >&2; exit 1 ;;
esac
tmp="$out.tmp.$$"
trap 'rm -f "$tmp"' EXIT INT TERM
"$kind" >"$tmp"
mv "$tmp" "$out"

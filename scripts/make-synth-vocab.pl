#!/usr/bin/perl
# Writes a synthetic byte-level BPE tokenizer.json to OUTFILE, the same
# bytes on every run: vocabularies past the real ones' sizes (up to a
# million tokens) for the time-per-mask-against-vocabulary-size plot.
# Usage: scripts/make-synth-vocab.pl OUTFILE NAME
#   NAME is synth-512k (2^19 - 1 tokens: the most the flat dfs trie's
#   19-bit id field holds, so every layout can be measured on it) or
#   synth-1m (2^20 tokens: past dfs, for the layouts that scale further),
#   as scripts/fetch-data.sh passes the manifest entry's name.
#
# Tokens 0-255 are the single bytes; then come distinct substrings of the
# multi corpus (data/cache/multi/multi.txt, fetched before these entries)
# at pseudo-random positions, so that their bytes follow real text.  A
# length is the smaller of two draws in 2..16, so short tokens are drawn
# more often, as in real vocabularies; deduplication then shifts the mix
# to longer ones (mean 8.7 bytes at 1M: short substrings run out).  Both
# sizes draw from one fixed sequence, so synth-512k's tokens are the first
# ones of synth-1m's.  There are no merges: the file is for tries, not encoding
# (tokbench's loader accepts an empty merges list; a BPE encoder over it
# would only ever emit single bytes).  Random numbers come from a fixed LCG
# written here, not perl's rand, so no perl version changes the output.
use strict;
use warnings;

my ($out, $name) = @ARGV;
die "usage: make-synth-vocab.pl OUTFILE NAME\n" unless defined $name;
my %sizes = ('synth-512k' => (1 << 19) - 1, 'synth-1m' => 1 << 20);
my $total = $sizes{$name}
    or die "make-synth-vocab: unknown NAME '$name' (synth-512k, synth-1m)\n";
my $corpus = 'data/cache/multi/multi.txt';
open(my $in, '<:raw', $corpus)
    or die "make-synth-vocab: $corpus: $! (make data fetches multi first)\n";
my $text = do { local $/; <$in> };
close $in;
my $n = length $text;
die "make-synth-vocab: $corpus is too short\n" if $n < 1000;

my $x = 20261122;
sub rnd { $x = ($x * 1103515245 + 12345) & 0xffffffff; return $x >> 8; }
sub below { my $m = shift; return ((rnd() << 24) | rnd()) % $m; }

# GPT-2's byte-to-unicode map, as byte-level tokenizer.json files spell
# token bytes: printable Latin-1 stands for itself, the rest is 256 + k.
my @b2u;
my $k = 0;
for my $b (0 .. 255) {
    my $keep = ($b >= 33 && $b <= 126) || ($b >= 161 && $b <= 172) || $b >= 174;
    $b2u[$b] = chr($keep ? $b : 256 + $k++);
}
sub spell {
    my $s = join '', map { $b2u[$_] } unpack 'C*', shift;
    $s =~ s/(["\\])/\\$1/g;    # the map leaves no control characters
    return $s;
}

my @tokens = map { chr } 0 .. 255;
my %seen;
while (@tokens < $total) {
    my ($a, $b) = (2 + below(15), 2 + below(15));
    my $len = $a < $b ? $a : $b;
    my $tok = substr($text, below($n - $len), $len);
    next if $seen{$tok}++;
    push @tokens, $tok;
}

open(my $o, '>:raw:encoding(UTF-8)', $out) or die "make-synth-vocab: $out: $!\n";
print $o qq({"version":"1.0","truncation":null,"padding":null,"added_tokens":[],),
    qq("normalizer":null,),
    qq("pre_tokenizer":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},),
    qq("post_processor":null,),
    qq("decoder":{"type":"ByteLevel","add_prefix_space":false,"trim_offsets":true,"use_regex":true},),
    qq("model":{"type":"BPE","dropout":null,"unk_token":null,"continuing_subword_prefix":null,),
    qq("end_of_word_suffix":null,"fuse_unk":false,"byte_fallback":false,"ignore_merges":false,),
    qq("vocab":{\n);
for my $id (0 .. $#tokens) {
    print $o '"', spell($tokens[$id]), '":', $id, $id < $#tokens ? ",\n" : "\n";
}
print $o "},\"merges\":[]}}\n";
close $o or die "make-synth-vocab: $out: $!\n";

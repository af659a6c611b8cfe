#!/usr/bin/perl
# gen-unorm.pl: writes the C tables of tok/unorm.c (Unicode normalization
# forms) to stdout, from the Unicode Character Database files of Debian's
# unicode-data package.
#
#   perl scripts/gen-unorm.pl [UCD_DIR] > unorm_tables.h
#
# UCD_DIR defaults to /usr/share/unicode and must hold UnicodeData.txt,
# DerivedAge.txt and DerivedNormalizationProps.txt.
#
# The tables are those of Unicode $VERSION, not of the installed files:
# tokbench must normalize exactly as the reference (Hugging Face tokenizers,
# whose unicode-normalization-alignments crate has old tables) does.  The
# normalization stability policy (UAX #15, section 3 and the policy at
# unicode.org/policies/stability_policy.html) says that the decomposition
# mapping, canonical combining class and composition exclusion of an
# assigned character never change, so the data of version V is today's data
# restricted to characters whose Age is <= V; later characters are
# unassigned for V: ccc 0, no decomposition, in no composition pair.
#
# $VERSION = 9.0 was measured with the reference (npm @anush008/tokenizers
# 0.6.0, tokenizers 0.22.2), running its NFD / NFKD normalizers over every
# character of UnicodeData.txt with a decomposition or a non-zero ccc, by
# Age: every such character of 1.1 .. 9.0 is known (e.g. all 63 marks of 9.0
# with ccc != 0 are reordered, the one 9.0 compatibility decomposition is
# applied); none of 10.0 .. 15.0 is (0 of 12, 23, 13, 10, 40, 10 marks
# reordered; 0 of the compatibility decompositions of 12.0 .. 15.0; U+11938
# of 13.0 not decomposed, U+11935 U+11930 not composed).
use strict;
use warnings;

my $VERSION = '9.0';
my $dir = shift // '/usr/share/unicode';

sub open_ucd {
    my ($name) = @_;
    open(my $fh, '<', "$dir/$name")
        or die "gen-unorm.pl: cannot read $dir/$name ($!); install the "
             . "unicode-data package (scripts/setup.sh)\n";
    return $fh;
}

# Versions compare as numbers made of major and minor ("10.0" > "9.0").
sub vnum { my ($maj, $min) = split /\./, $_[0]; return $maj * 100 + $min; }
my $vmax = vnum($VERSION);

my %young;    # code points assigned after $VERSION
my $fh = open_ucd('DerivedAge.txt');
my $ucd_version = '?';
while (<$fh>) {
    $ucd_version = $1 if /^# DerivedAge-([\d.]+)\.txt/;
    next unless /^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*([\d.]+)/;
    next if vnum($3) <= $vmax;
    $young{$_} = 1 for hex($1) .. hex($2 // $1);
}
close $fh;

my (%ccc, %canon, %compat);   # one-level mappings, as the UCD gives them
$fh = open_ucd('UnicodeData.txt');
while (<$fh>) {
    my @f = split /;/;
    my $cp = hex $f[0];
    next if $young{$cp};
    $ccc{$cp} = $f[3] if $f[3];
    next unless length $f[5];
    if ($f[5] =~ s/^<[^>]*>\s*//) {
        $compat{$cp} = [map { hex } split ' ', $f[5]];
    } else {
        $canon{$cp} = [map { hex } split ' ', $f[5]];
    }
}
close $fh;

my %excluded;
$fh = open_ucd('DerivedNormalizationProps.txt');
while (<$fh>) {
    next unless /^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*Full_Composition_Exclusion\b/;
    $excluded{$_} = 1 for hex($1) .. hex($2 // $1);
}
close $fh;

# Hangul syllables decompose by arithmetic (Unicode chapter 3.12); the
# tables leave them to unorm.c but expand them where a mapping contains one.
my ($SBASE, $LBASE, $VBASE, $TBASE) = (0xAC00, 0x1100, 0x1161, 0x11A7);
my ($VCOUNT, $TCOUNT, $SCOUNT) = (21, 28, 11172);

sub full {
    my ($cp, $k) = @_;
    if ($cp >= $SBASE && $cp < $SBASE + $SCOUNT) {
        my $s = $cp - $SBASE;
        my @r = ($LBASE + int($s / ($VCOUNT * $TCOUNT)),
                 $VBASE + int(($s % ($VCOUNT * $TCOUNT)) / $TCOUNT));
        push @r, $TBASE + $s % $TCOUNT if $s % $TCOUNT;
        return @r;
    }
    my $m = $canon{$cp} // ($k ? $compat{$cp} : undef);
    return ($cp) unless $m;
    return map { full($_, $k) } @$m;
}

# Primary composites: two-character canonical mappings not excluded.
my (%second, @pairs);
for my $cp (sort { $a <=> $b } keys %canon) {
    my $m = $canon{$cp};
    next if @$m != 2 || $excluded{$cp};
    push @pairs, [$m->[0], $m->[1], $cp];
    $second{$m->[1]} = 1;
}
# Hangul V and T jamo compose with a preceding L or LV (by arithmetic).
$second{$_} = 1 for $VBASE .. $VBASE + $VCOUNT - 1, $TBASE + 1 .. $TBASE + $TCOUNT - 1;

# One record per distinct property set; code points index records through
# a two-level table (blocks of 128 code points, identical blocks shared).
my (@info, %info_id, @pool);
push @info, '0, 0, 0, 0, 0, 0';
$info_id{$info[0]} = 0;
my %rec;
my %cps = map { $_ => 1 } (keys %ccc, keys %canon, keys %compat, keys %second);
for my $cp (sort { $a <=> $b } keys %cps) {
    my @cd = full($cp, 0);
    my @kd = full($cp, 1);
    my ($coff, $clen, $koff, $klen) = (0, 0, 0, 0);
    my $put = sub {
        my $off = @pool;
        push @pool, map { sprintf '0x%08X', (($ccc{$_} // 0) << 24) | $_ } @_;
        return $off;
    };
    if (@cd != 1 || $cd[0] != $cp) { $clen = @cd; $coff = $put->(@cd); }
    if ("@kd" ne "@cd") { $klen = @kd; $koff = $put->(@kd); }
    # Flags: 1 = may compose with a preceding starter; 2 (canonical) and 4
    # (compatibility) = its decomposition starts with a character that may
    # interact with what precedes it (a non-starter or such a second), so
    # the text cannot be cut into independent segments before it.
    my $flags = ($second{$cp} ? 1 : 0);
    $flags |= 2 if ($ccc{$cd[0]} // 0) || $second{$cd[0]};
    $flags |= 4 if ($ccc{$kd[0]} // 0) || $second{$kd[0]};
    my $r = join ', ', $ccc{$cp} // 0, $flags, $clen, $klen, $coff, $koff;
    $info_id{$r} //= do { push @info, $r; $#info };
    $rec{$cp} = $info_id{$r};
}
die "gen-unorm.pl: pool too large\n" if @pool > 65535 || @info > 65535;

my $SHIFT = 7;
my $BLOCK = 1 << $SHIFT;
my (@stage1, @blocks, %block_id);
for (my $base = 0; $base < 0x110000; $base += $BLOCK) {
    my $b = join ',', map { $rec{$base + $_} // 0 } 0 .. $BLOCK - 1;
    $block_id{$b} //= do { push @blocks, $b; $#blocks };
    push @stage1, $block_id{$b};
}
my $s1type = @blocks <= 256 ? 'uint8_t' : 'uint16_t';

sub wrap {
    my ($per, @v) = @_;
    my $s = '';
    while (my @l = splice @v, 0, $per) { $s .= '    ' . join(', ', @l) . ",\n"; }
    return $s;
}

my ($n1, $n2, $ni) = (scalar @stage1, @blocks * $BLOCK, scalar @info);
push @pool, '0' unless @pool;
my $np = @pool;
my $s1 = wrap(24, @stage1);
my $s2 = join '', map { wrap(16, split /,/) } @blocks;
my $si = join '', map { "    {$_},\n" } @info;
my $sp = wrap(6, @pool);
print <<"EOF";
/* Generated by scripts/gen-unorm.pl from the Unicode $ucd_version data files,
 * restricted to characters assigned in Unicode $VERSION or before.  Do not
 * edit; see tok/unorm.c for the layout. */
#define UNORM_VERSION "$VERSION"
#define UNORM_SHIFT $SHIFT

static const $s1type unorm_stage1[$n1] = {
$s1};

static const uint16_t unorm_stage2[$n2] = {
$s2};

static const unorm_info_t unorm_info[$ni] = {
$si};

static const uint32_t unorm_pool[$np] = {
$sp};

EOF
# Pairs sorted by (first, second), packed as first << 42 | second << 21 |
# composite so that one sorted uint64 array serves a binary search.
my @packed;
for my $p (sort { $a->[0] <=> $b->[0] || $a->[1] <=> $b->[1] } @pairs) {
    push @packed, sprintf('0x%016XULL', ($p->[0] << 42) | ($p->[1] << 21) | $p->[2]);
}
my $npairs = @packed;
print "static const uint64_t unorm_pairs[$npairs] = {\n", wrap(3, @packed), "};\n";

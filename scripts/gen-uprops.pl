#!/usr/bin/perl
# gen-uprops.pl: writes the C tables of tok/uprops.c (the General_Category
# of every code point at a pinned Unicode version) to stdout.
#
#   perl scripts/gen-uprops.pl GC_FILE PROBE [ALIASES [PROPLIST]] > uprops_tables.h
#
# GC_FILE is General_Category/index.mjs of the npm package
# @unicode/unicode-V (data/manifest's ucd-V entry, fetched into
# data/cache/ucd-V/); V is read from the package's directory name.  Its
# data is one base64 string of gzip-compressed JSON: a flat array of
# (gap, length, value) runs, each run starting `gap` code points after the
# end of the previous one, `value` a long category name (the package's
# decode-property-map.mjs reads it the same way).  Code points in no run
# are unassigned (Cn).  ALIASES (default /usr/share/unicode/
# PropertyValueAliases.txt, package unicode-data) gives the short names,
# the long names and the groups (L = Ll | Lm | Lo | Lt | Lu, ...).
# PROBE is scripts/probe-pcre2.c built for this machine's PCRE2: it is run
# with the leaf names and says which category PCRE2's own tables give every
# code point, so that the tables can also list where PCRE2 and the pinned
# version disagree (uprops.c uses PCRE2's \p{..} elsewhere).
# PROPLIST (default /usr/share/unicode/PropList.txt, Unicode 15.0 in
# Debian 12) gives White_Space, the references' \s: it is the same set
# from Unicode 6.3 (when U+180E left it) through 16.0.
#
# The version is the one of the references' regex engines, not the one of
# PCRE2: scripts/ref/probe-unicode.js measures it character by character.
use strict;
use warnings;
use MIME::Base64 qw(decode_base64);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP qw(decode_json);

my ($gc_file, $probe) = (shift, shift);
die "usage: gen-uprops.pl GC_FILE PROBE [ALIASES [PROPLIST]]\n" unless $probe;
my $aliases = shift // '/usr/share/unicode/PropertyValueAliases.txt';
my $proplist = shift // '/usr/share/unicode/PropList.txt';

my ($version) = $gc_file =~ m{ucd-(\d+\.\d+\.\d+)/}
    or die "gen-uprops.pl: $gc_file: want data/cache/ucd-V.V.V/index.mjs\n";

# ---- the aliases: leaves (two-letter categories) and groups -------------
open(my $fh, '<', $aliases)
    or die "gen-uprops.pl: cannot read $aliases ($!); install the "
         . "unicode-data package (scripts/setup.sh)\n";
my (@leaves, %leaf_of_long, @groups);
while (<$fh>) {
    next unless /^gc\s*;\s*(\w+)\s*;\s*(\w+)(?:\s*;\s*\w+)?\s*(?:#\s*(.*))?$/;
    my ($short, $long, $members) = ($1, $2, $3);
    if (defined $members) {
        push @groups, [$short, $long, [split /\s*\|\s*/, $members]];
    } else {
        push @leaves, [$short, $long];
        $leaf_of_long{$long} = $#leaves;
    }
}
close $fh;
die "gen-uprops.pl: $aliases: no gc aliases\n" unless @leaves && @groups;
my %leaf_of_short = map { $leaves[$_][0] => $_ } 0 .. $#leaves;
die "gen-uprops.pl: more than 32 categories\n" if @leaves > 32;

# ---- the runs -----------------------------------------------------------
open($fh, '<', $gc_file) or die "gen-uprops.pl: cannot read $gc_file ($!)\n";
my $src = do { local $/; <$fh> };
close $fh;
my ($b64) = $src =~ /gunzipSync\(Buffer\.from\('([^']*)'/
    or die "gen-uprops.pl: $gc_file: no gzip base64 string\n";
my $json;
gunzip(\decode_base64($b64) => \$json)
    or die "gen-uprops.pl: $gc_file: $GunzipError\n";
my $runs = decode_json($json);
die "gen-uprops.pl: $gc_file: not (gap, length, value) runs\n"
    if ref $runs ne 'ARRAY' || @$runs % 3;

my $cn = $leaf_of_short{Cn} // die "gen-uprops.pl: no Cn alias\n";
my @out;    # [lo, hi, leaf], covering 0 .. 0x10FFFF
my $cp = 0;
sub add_run {
    my ($lo, $hi, $leaf) = @_;
    return if $hi < $lo;
    if (@out && $out[-1][2] == $leaf && $out[-1][1] + 1 == $lo) {
        $out[-1][1] = $hi;
    } else {
        push @out, [$lo, $hi, $leaf];
    }
}
for (my $i = 0; $i < @$runs; $i += 3) {
    my ($gap, $len, $name) = @$runs[$i .. $i + 2];
    my $leaf = $leaf_of_long{$name}
        // die "gen-uprops.pl: $gc_file: unknown category '$name'\n";
    add_run($cp, $cp + $gap - 1, $cn);
    $cp += $gap;
    add_run($cp, $cp + $len - 1, $leaf);
    $cp += $len;
}
die "gen-uprops.pl: $gc_file: runs go past U+10FFFF\n" if $cp > 0x110000;
add_run($cp, 0x10FFFF, $cn);

# ---- White_Space ------------------------------------------------------
open($fh, '<', $proplist)
    or die "gen-uprops.pl: cannot read $proplist ($!); install the "
         . "unicode-data package (scripts/setup.sh)\n";
my @space;
while (<$fh>) {
    next unless /^([0-9A-F]+)(?:\.\.([0-9A-F]+))?\s*;\s*White_Space\b/;
    push @space, [hex($1), hex($2 // $1)];
}
close $fh;
die "gen-uprops.pl: $proplist: no White_Space\n" unless @space;

# ---- PCRE2's own categories, and where they differ ----------------------
my @pcre2 = (-1) x 0x110000;
open($fh, '-|', $probe, map { $_->[0] } @leaves)
    or die "gen-uprops.pl: cannot run $probe ($!)\n";
my $pcre2_version;
while (<$fh>) {
    if (/^unicode (\S+)/) {
        $pcre2_version = $1;
    } elsif (/^([0-9a-f]+) ([0-9a-f]+) (\w+)$/) {
        my $leaf = $leaf_of_short{$3} // die "gen-uprops.pl: $probe: '$3'?\n";
        $pcre2[$_] = $leaf for hex($1) .. hex($2);
    }
}
close $fh or die "gen-uprops.pl: $probe failed\n";
die "gen-uprops.pl: $probe gave no Unicode version\n" unless $pcre2_version;
my @delta;    # [lo, hi, leaf here, leaf in PCRE2]
for my $r (@out) {
    for my $cp ($r->[0] .. $r->[1]) {
        my $p = $pcre2[$cp];
        die "gen-uprops.pl: $probe left U+" . sprintf('%04X', $cp) . " out\n"
            if $p < 0;
        next if $p == $r->[2];
        if (@delta && $delta[-1][1] + 1 == $cp && $delta[-1][2] == $r->[2]
            && $delta[-1][3] == $p) {
            $delta[-1][1] = $cp;
        } else {
            push @delta, [$cp, $cp, $r->[2], $p];
        }
    }
}

# ---- the header ---------------------------------------------------------
print "/* Generated by scripts/gen-uprops.pl from $gc_file\n"
    . " * (npm \@unicode/unicode-$version), $aliases and $proplist. */\n";
print "#define UPROPS_VERSION \"$version\"\n\n";
print "/* leaf categories, by index: short and long name */\n";
print "static const char *const uprops_leaves[][2] = {\n";
print "    {\"$_->[0]\", \"$_->[1]\"},\n" for @leaves;
print "};\n\n";
print "/* group categories: short and long name, mask of leaf indexes */\n";
print "static const struct { const char *name[2]; uint32_t mask; } "
    . "uprops_groups[] = {\n";
for my $g (@groups) {
    my $mask = 0;
    for my $m (@{$g->[2]}) {
        defined $leaf_of_short{$m}
            or die "gen-uprops.pl: group $g->[0]: unknown member $m\n";
        $mask |= 1 << $leaf_of_short{$m};
    }
    printf "    {{\"%s\", \"%s\"}, 0x%08x},\n", $g->[0], $g->[1], $mask;
}
print "};\n\n";
print "/* White_Space: first and last code point of each range */\n";
print "static const uint32_t uprops_space[][2] = {\n";
printf "    {0x%x, 0x%x},\n", @$_ for @space;
print "};\n\n";
print "/* the PCRE2 the tables were probed with: its Unicode version and\n"
    . " * every run where its category differs (first, last, leaf index here,\n"
    . " * leaf index in PCRE2) */\n";
print "#define UPROPS_PCRE2_UNICODE \"$pcre2_version\"\n";
print "static const uint32_t uprops_pcre2_delta[][4] = {\n";
printf "    {0x%x, 0x%x, %d, %d},\n", @$_ for @delta;
print "    {0x110000, 0x110000, 0, 0}, /* end */\n};\n\n";
print "/* every code point in one run: first, last, leaf index */\n";
print "static const uprops_run_t uprops_runs[] = {\n";
printf "    {0x%x, 0x%x, %d},\n", @$_ for @out;
print "};\n";

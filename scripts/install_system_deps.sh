#!/usr/bin/env bash
# Install the Debian/Ubuntu packages needed to build KenLM's lmplz and build_binary
# (see scripts/build_lmplz.sh).
#
# Usage: scripts/install_system_deps.sh
#
# Idempotent: does nothing when every package is already installed (checked with `dpkg -s`).
# Runs apt-get through sudo when not root. Exits non-zero with a message on failure.
set -euo pipefail

PACKAGES=(
    build-essential
    cmake
    libboost-program-options-dev
    libboost-system-dev
    libboost-thread-dev
    libboost-test-dev
    zlib1g-dev
    libbz2-dev
    liblzma-dev
)
# Debian's python3 needs python3-venv for `python3 -m venv` (the Makefile's virtual environment).
if ! "${PYTHON:-python3}" -c "import ensurepip, venv" >/dev/null 2>&1; then
    PACKAGES+=(python3-venv python3-pip)
fi

die() {
    echo "install_system_deps.sh: error: $*" >&2
    exit 1
}

command -v dpkg >/dev/null 2>&1 || die "dpkg not found: this script supports Debian/Ubuntu only; install the equivalents of: ${PACKAGES[*]}"

missing=()
for pkg in "${PACKAGES[@]}"; do
    if ! dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed'; then
        missing+=("$pkg")
    fi
done

if [ "${#missing[@]}" -eq 0 ]; then
    echo "install_system_deps.sh: all ${#PACKAGES[@]} packages already installed; nothing to do."
    exit 0
fi

echo "install_system_deps.sh: installing: ${missing[*]}"

SUDO=()
if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "not root and sudo is not available; run as root: apt-get install ${missing[*]}"
    SUDO=(sudo)
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found"

export DEBIAN_FRONTEND=noninteractive
"${SUDO[@]}" apt-get update || die "apt-get update failed"
"${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}" || die "apt-get install failed for: ${missing[*]}"

for pkg in "${missing[@]}"; do
    dpkg -s "$pkg" 2>/dev/null | grep -q '^Status: install ok installed' || die "package $pkg is still not installed"
done
echo "install_system_deps.sh: done."

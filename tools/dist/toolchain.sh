#!/usr/bin/env bash
# Installs, or checks, what `make dist` and `make dist-test` need, from the registries a fresh
# machine of our kind reaches. Every failure says what is missing and how to get it.
#
#   tools/dist/toolchain.sh build TRIPLE...   Rust std for each target (rustup), and Zig with
#                                             cargo-zigbuild (PyPI, pinned in requirements.txt)
#                                             in build/tools/venv
#   tools/dist/toolchain.sh test              qemu-aarch64 (Debian's qemu-user), to run the
#                                             aarch64 binaries on this x86_64 machine
#
# Set FERRO_DIST_NO_INSTALL=1 to only check (nothing is installed; a missing piece fails).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
TOOLS="${FERRO_DIST_TOOLS:-$ROOT/build/tools}"
VENV="$TOOLS/venv"
REQUIREMENTS="$ROOT/tools/dist/requirements.txt"
PYTHON="${PYTHON:-python3}"
NO_INSTALL="${FERRO_DIST_NO_INSTALL:-}"
WHO="make dist"

say() { printf 'dist-tools: %s\n' "$*" >&2; }
die() {
    printf '\n%s: %s\n' "$WHO" "$1" >&2
    shift
    for line in "$@"; do printf '  %s\n' "$line" >&2; done
    printf '\n' >&2
    exit 1
}

# The rustup targets a dist triple needs (universal2 is lipo'd from the two macOS builds).
rust_targets() {
    case "$1" in
        universal2-apple-darwin) echo "x86_64-apple-darwin aarch64-apple-darwin" ;;
        *) echo "$1" ;;
    esac
}

ensure_rust_targets() {
    command -v cargo >/dev/null || die "no cargo on PATH." \
        "Install Rust with rustup (https://rustup.rs is the usual way; Debian's 'rustup' package also works)."
    local wanted=() t
    for triple in "$@"; do
        for t in $(rust_targets "$triple"); do wanted+=("$t"); done
    done
    command -v rustup >/dev/null || die "rustup is not on PATH, so the Rust standard library for ${wanted[*]} cannot be added." \
        "This build cross-compiles with rustup's prebuilt std for each target. Install Rust with rustup," \
        "then run: rustup target add ${wanted[*]}"
    local installed missing=()
    installed="$(cd "$ROOT" && rustup target list --installed)"
    for t in "${wanted[@]}"; do
        grep -qx "$t" <<<"$installed" || missing+=("$t")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    [ -n "$NO_INSTALL" ] && die "the Rust standard library is missing for: ${missing[*]}." \
        "Add it with: rustup target add ${missing[*]}"
    say "rustup target add ${missing[*]}"
    (cd "$ROOT" && rustup target add "${missing[@]}") >&2 || die "'rustup target add ${missing[*]}' failed (see above)." \
        "It downloads the prebuilt std of each target from the Rust distribution server; run it by hand" \
        "where that server is reachable, for the toolchain 'rustc -V' shows in this repository."
}

ensure_zig() {
    local stamp="$VENV/.installed"
    if [ ! -x "$VENV/bin/cargo-zigbuild" ] || [ ! -f "$stamp" ] || [ "$REQUIREMENTS" -nt "$stamp" ]; then
        [ -n "$NO_INSTALL" ] && die "Zig and cargo-zigbuild are not installed in $VENV." \
            "Install them with: $PYTHON -m venv $VENV && $VENV/bin/pip install -r tools/dist/requirements.txt" \
            "(or run 'make dist-tools', which does exactly that)."
        say "installing $(grep -v '^#' "$REQUIREMENTS" | xargs) into $VENV"
        "$PYTHON" -m venv "$VENV" || die "'$PYTHON -m venv $VENV' failed." \
            "Install Python 3 with its venv module (Debian: apt-get install python3-venv), or set PYTHON=/path/to/python3."
        "$VENV/bin/pip" install --quiet --disable-pip-version-check -r "$REQUIREMENTS" >&2 || die \
            "could not install Zig (PyPI 'ziglang') and cargo-zigbuild (PyPI 'cargo-zigbuild') from PyPI." \
            "They are the C compiler/linker and cargo wrapper for the musl and macOS targets. With PyPI reachable:" \
            "  $VENV/bin/pip install -r tools/dist/requirements.txt" \
            "or from crates.io plus Zig from your OS: cargo install --locked cargo-zigbuild@0.24.1 --root $TOOLS," \
            "then put a 'zig' 0.17 on PATH and set FERRO_DIST_NO_INSTALL=1."
        touch "$stamp"
    fi
    "$VENV/bin/cargo-zigbuild" --version >/dev/null 2>&1 || die "$VENV/bin/cargo-zigbuild does not run." \
        "Remove $VENV and run 'make dist-tools' again."
    "$VENV/bin/python" -m ziglang version >/dev/null 2>&1 || die "Zig (python -m ziglang) in $VENV does not run." \
        "Remove $VENV and run 'make dist-tools' again."
}

ensure_qemu() {
    if command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null; then
        return 0
    fi
    local how="Install Debian's qemu-user (apt-get install qemu-user), or qemu-user-static; any qemu-aarch64 on PATH will do."
    [ -n "$NO_INSTALL" ] && die "qemu-aarch64 is not on PATH: the aarch64 binaries cannot be run on this machine." "$how"
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
        say "apt-get install qemu-user"
        export DEBIAN_FRONTEND=noninteractive
        apt-get install -y -qq qemu-user >&2 || { apt-get update -qq >&2 && apt-get install -y -qq qemu-user >&2; } || true
    fi
    command -v qemu-aarch64 >/dev/null || command -v qemu-aarch64-static >/dev/null || \
        die "qemu-aarch64 is not on PATH and could not be installed: the aarch64 binaries cannot be run here." "$how" \
            "(Installing it automatically needs root and apt-get.)"
}

case "${1:-}" in
    build)
        shift
        [ $# -gt 0 ] || die "toolchain.sh build: no target triples given."
        ensure_rust_targets "$@"
        ensure_zig
        ;;
    test)
        WHO="make dist-test"
        ensure_qemu
        ;;
    *)
        echo "usage: $0 build TRIPLE... | test" >&2
        exit 2
        ;;
esac

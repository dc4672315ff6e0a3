#!/usr/bin/env bash
# Assembles the collection tree and packs it with ansible-galaxy: the one recipe behind both
# `make collection` (this machine's binary) and `make dist` (every release platform).
#
#   tools/dist/collection.sh TREE OUTPUT_DIR TRIPLE=BINARY...
#
# TREE is rebuilt from scratch with the collection's files (COLLECTION_FILES below: the one list
# of what a collection tarball holds besides its binaries; galaxy.yml's build_ignore then drops
# Python caches) and, for each TRIPLE, native/<triple>/ferro_proxmox (a copy of BINARY, the
# multi-call binary of crate multicall/) with a relative link to it per module under modules/
# (native/<triple>/proxmox_kvm -> ferro_proxmox ...): the binary runs the module its name says,
# and `ansible-galaxy collection build` and `install` keep links that point inside the
# collection. tools/dist/binfmt.py checks every binary against its triple, then
# `ansible-galaxy collection build` writes OUTPUT_DIR/ferro-proxmox-<version>.tar.gz, whose
# path and size in bytes are printed last.
#
# Environment: ANSIBLE_GALAXY (default .venv/bin/ansible-galaxy), PYTHON (default python3),
# COLLECTION_VERSION (default galaxy.yml's version, what `make dist` builds): the version written
# into the tree's galaxy.yml, hence into MANIFEST.json and the tarball's name (`make collection`
# passes <version>-dev+<git sha> so that a development build is never taken for a release).
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
ANSIBLE_GALAXY="${ANSIBLE_GALAXY:-$ROOT/.venv/bin/ansible-galaxy}"
PYTHON="${PYTHON:-python3}"
COLLECTION_FILES=(galaxy.yml README.md COPYING SECURITY.md CHANGELOG.md changelogs docs meta plugins playbooks)
MULTICALL=ferro_proxmox

die() { printf 'collection.sh: %s\n' "$*" >&2; exit 1; }

[ $# -ge 3 ] || die "usage: $0 TREE OUTPUT_DIR TRIPLE=BINARY..."
tree="$1" out="$2"
shift 2

modules=()
for dir in "$ROOT"/modules/*/; do
    [ -f "$dir/Cargo.toml" ] && modules+=("$(basename "$dir")")
done
[ ${#modules[@]} -gt 0 ] || die "no module crates under $ROOT/modules"

rm -rf "$tree"
mkdir -p "$tree" "$out"
(cd "$ROOT" && cp -r "${COLLECTION_FILES[@]}" "$tree/")
# changelogs/ ships its config and changelog.yaml, not the unreleased fragments or the cache.
rm -rf "$tree/changelogs/fragments" "$tree/changelogs/.plugin-cache.yaml"
# The sanity ignore files ship, as Galaxy's importer reads them (none today: tests/sanity/run.sh).
if compgen -G "$ROOT/tests/sanity/ignore-*.txt" >/dev/null; then
    mkdir -p "$tree/tests/sanity" && cp "$ROOT"/tests/sanity/ignore-*.txt "$tree/tests/sanity/"
fi
find "$tree" -name __pycache__ -prune -exec rm -rf {} +
for pair in "$@"; do
    triple="${pair%%=*}" binary="${pair#*=}"
    [ -n "$triple" ] && [ "$triple" != "$pair" ] || die "'$pair' is not TRIPLE=BINARY"
    [ -f "$binary" ] || die "no binary $binary for $triple (did its cargo build run?)"
    install -D -m 0755 "$binary" "$tree/native/$triple/$MULTICALL"
    for m in "${modules[@]}"; do
        ln -s "$MULTICALL" "$tree/native/$triple/$m"
    done
done
"$PYTHON" "$ROOT/tools/dist/binfmt.py" check "$tree/native"

version="${COLLECTION_VERSION:-$(sed -n 's/^version: *//p' "$ROOT/galaxy.yml")}"
sed -i "s/^version: .*/version: $version/" "$tree/galaxy.yml"
tarball="$out/ferro-proxmox-$version.tar.gz"
rm -f "$tarball"
"$ANSIBLE_GALAXY" collection build "$tree" --output-path "$out" --force >/dev/null
[ -f "$tarball" ] || die "ansible-galaxy wrote no $tarball"
printf '%s %d\n' "$tarball" "$(stat -c %s "$tarball")"

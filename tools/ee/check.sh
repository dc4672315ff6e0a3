#!/usr/bin/env bash
# Checks that AWX / Automation Controller users can build an execution environment with the
# collection tarball (make dist-test): ansible-builder writes a build context from an EE
# definition that installs the tarball, and its introspection of the installed collection reads
# meta/execution-environment.yml and finds no Python or system dependency.
#
# usage: tools/ee/check.sh EE_VENV ANSIBLE_VENV TARBALL WORKDIR
set -euo pipefail

ee_venv=$(realpath "$1") ansible_venv=$(realpath "$2") tarball=$(realpath "$3") workdir=$4
name=$(basename "$tarball")
rm -rf "$workdir" && mkdir -p "$workdir" && workdir=$(realpath "$workdir")
cp "$tarball" "$workdir/"

# The definition a user writes (ansible-builder 3 format), with the collection from its tarball;
# from Galaxy it would be `- name: ferro.proxmox` instead. The base image is only named: `create`
# writes the context without pulling or building anything.
cat > "$workdir/execution-environment.yml" <<YAML
---
version: 3
images:
  base_image:
    name: registry.fedoraproject.org/fedora:41
dependencies:
  python_interpreter:
    package_system: python3.11
    python_path: /usr/bin/python3.11
  ansible_core:
    package_pip: ansible-core>=2.17
  ansible_runner:
    package_pip: ansible-runner
  galaxy:
    collections:
      - name: /build/collections/$name
        type: file
additional_build_files:
  - src: $name
    dest: collections
additional_build_steps:
  prepend_galaxy:
    - COPY _build/collections/ /build/collections/
YAML

(cd "$workdir" && "$ee_venv/bin/ansible-builder" create -f execution-environment.yml --context context --output-filename Containerfile >/dev/null)
context=$workdir/context
for f in Containerfile _build/requirements.yml "_build/collections/$name"; do
  [ -e "$context/$f" ] || { echo "ee: ansible-builder create wrote no $f" >&2; exit 1; }
done
grep -q "/build/collections/$name" "$context/_build/requirements.yml" \
  || { echo "ee: the context's requirements.yml does not install $name" >&2; exit 1; }
cmp -s "$tarball" "$context/_build/collections/$name" || { echo "ee: the context holds another $name" >&2; exit 1; }

# What the image build does next: install the collection, then introspect it.
ANSIBLE_COLLECTIONS_PATH="$workdir/collections" "$ansible_venv/bin/ansible-galaxy" collection install "$tarball" -p "$workdir/collections" >/dev/null
meta=$workdir/collections/ansible_collections/ferro/proxmox/meta/execution-environment.yml
[ -f "$meta" ] || { echo "ee: the tarball has no meta/execution-environment.yml" >&2; exit 1; }
deps=$("$ee_venv/bin/ansible-builder" introspect "$workdir/collections")
expected=$'python: []\nsystem: []'
if [ "$(grep -v -e '^#' -e '^---$' -e '^$' <<<"$deps")" != "$expected" ]; then
  echo "ee: introspection of ferro.proxmox found dependencies, expected none:" >&2
  echo "$deps" >&2
  exit 1
fi
echo "ee: ansible-builder $("$ee_venv/bin/ansible-builder" --version) wrote an EE build context for $name ($context); introspection: no Python or system dependency"

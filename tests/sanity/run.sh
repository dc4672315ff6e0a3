#!/usr/bin/env bash
# Runs `ansible-test sanity` on the collection as it ships (the tarball), offline (make sanity).
#
# usage: tests/sanity/run.sh TARBALL VENV WHEELS WORKDIR [ansible-test sanity options...]
#
# ansible-test needs the collection at .../ansible_collections/ferro/proxmox/: the tarball is
# unpacked there under WORKDIR, with this directory's ignore files (tests/sanity/ignore-*.txt).
# ansible-test builds one virtualenv per sanity test under ~/.ansible/test and fills it with pip;
# it bootstraps pip with a get-pip.py it downloads from ci-files.testing.ansible.com.
# Both are kept off the network: HOME is WORKDIR/home (so the virtualenvs are cached there, and
# `make clean` removes them), its pip.conf points pip at the wheels `make venv` downloaded
# (tests/sanity/requirements.txt), and the get-pip.py that ansible-test finds in its cache is a
# small stand-in that installs pip from the pip wheel among them (get_pip.py beside this script).
set -euo pipefail

tarball=$(realpath "$1") venv=$(realpath "$2") wheels=$(realpath "$3") workdir=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)

[ -f "$tarball" ] || { echo "sanity: no $tarball (make collection builds it)" >&2; exit 1; }
ls "$wheels"/pip-*.whl >/dev/null 2>&1 || { echo "sanity: no wheels in $wheels (make venv downloads them)" >&2; exit 1; }

mkdir -p "$workdir"
workdir=$(realpath "$workdir")
root=$workdir/ansible_collections/ferro/proxmox
rm -rf "$workdir/ansible_collections"
mkdir -p "$root"
tar -xzf "$tarball" -C "$root"
# Only the ignore files belong to the collection's own tests/sanity (the tarball of `make
# collection` has them too); this runner does not.
mkdir -p "$root/tests/sanity"
for f in "$here"/ignore-*.txt; do
  if [ -e "$f" ]; then cp "$f" "$root/tests/sanity/"; fi
done
# ansible-test lists the files to test with git from the nearest .git upwards, which would be this
# repository's (where build/ is ignored): the unpacked collection gets a repository of its own.
git init --quiet "$root"

home=$workdir/home
pip_version=$(sed -n 's/^pip==//p' "$here/requirements.txt")
mkdir -p "$home/.config/pip" "$home/.ansible/test/cache"
printf '[global]\nno-index = true\nfind-links = %s\ndisable-pip-version-check = true\nquiet = 1\n' "$wheels" \
  > "$home/.config/pip/pip.conf"
install -m 0644 "$here/get_pip.py" "$home/.ansible/test/cache/get_pip_${pip_version//./_}.py"

cd "$root"
# Only the venv's Python is on this machine: the multi-version tests (compile, import) run on it.
HOME=$home PATH="$venv/bin:$PATH" "$venv/bin/ansible-test" sanity --python "$("$venv/bin/python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
  --color no "$@"

#!/usr/bin/env bash
# The benchmark's own virtualenv: ansible-core, proxmoxer and requests, and community.proxmox from
# the `ansible` package (which bundles it), pinned. Prints the virtualenv's path on stdout; progress on stderr.
#
#   bench/venv.sh BUILD_DIR
#
# A Python 3.12 or newer gets ansible 14 (ansible-core 2.21, community.proxmox 2.0.0); otherwise
# $PYTHON (3.11) gets ansible 12 (ansible-core 2.19, community.proxmox 1.x). BENCH_PYTHON forces
# an interpreter. The virtualenv is reused while its requirements file's content is unchanged.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: venv.sh BUILD_DIR}

usable() {  # usable PYTHON MIN_MINOR: runs, has venv and ssl, and is 3.MIN_MINOR or newer
  "$1" -c "import sys, venv, ssl, ensurepip; sys.exit(0 if sys.version_info >= (3, $2) else 1)" >/dev/null 2>&1
}

py=""
if [ -n "${BENCH_PYTHON:-}" ]; then
  py=$BENCH_PYTHON
else
  for cand in python3.13 python3.12 /root/.pyenv/versions/3.12.1/bin/python3.12 /usr/bin/python3.12; do
    if command -v "$cand" >/dev/null 2>&1 && usable "$cand" 12; then py=$cand; break; fi
  done
  if [ -z "$py" ]; then
    py=${PYTHON:-python3}
    echo "bench: no usable Python 3.12+; measuring with $py and ansible 12 (community.proxmox 1.x)" >&2
  fi
fi
if usable "$py" 12; then
  req=$here/requirements-ansible14.txt; tag=ansible14
elif usable "$py" 11; then
  req=$here/requirements-ansible12.txt; tag=ansible12
else
  echo "bench: $py is older than Python 3.11; set BENCH_PYTHON" >&2
  exit 1
fi
venv=$out/venv-$tag
stamp=$venv/requirements.installed   # a copy of the requirements it was built from
if ! cmp -s "$req" "$stamp"; then
  ansible_pin=$(grep -m1 '^ansible==' "$req")
  echo "bench: installing $ansible_pin's community.proxmox into $venv with $py (about a minute, once)" >&2
  rm -rf "$venv"
  mkdir -p "$out"
  "$py" -m venv "$venv"
  # Everything but the `ansible` package itself: ansible-core, proxmoxer, requests, pinned.
  grep -v '^ansible==' "$req" > "$venv/requirements-core.txt"
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$venv/requirements-core.txt" >&2
  # community.proxmox comes from the `ansible` wheel, but only its directory is unpacked: the wheel
  # holds about a hundred collections (tens of thousands of files), and installing all of them
  # took three of the benchmark's minutes.
  rm -rf "$venv/wheel"
  "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
    -d "$venv/wheel" "$ansible_pin" >&2
  "$venv/bin/python" - "$venv" "$venv"/wheel/ansible-*.whl <<'PY'
import os, sys, sysconfig, zipfile
venv, wheel = sys.argv[1], sys.argv[2]
site = sysconfig.get_paths()['purelib']
prefix = 'ansible_collections/community/proxmox/'
with zipfile.ZipFile(wheel) as z:
    members = [m for m in z.namelist() if m.startswith(prefix)]
    if not members:
        sys.exit('bench: %s holds no %s' % (wheel, prefix))
    z.extractall(site, members)
with open(os.path.join(venv, 'ansible-package.txt'), 'w') as f:
    f.write(os.path.basename(wheel).split('-')[1] + '\n')   # the `ansible` version it came from
PY
  rm -rf "$venv/wheel"
  cp "$req" "$stamp"
fi
echo "$venv"

#!/usr/bin/env bash
# community.proxmox's virtualenv, the baseline of the benchmark and of tests/e2e/test_upstream_scenario.py:
# ansible-core, proxmoxer and requests pinned (bench/requirements-ansible14.txt), and community.proxmox
# from the `ansible` package that bundles it. Prints the virtualenv's path on stdout; progress on stderr.
#
#   bench/venv.sh BUILD_DIR          (make upstream-venv runs it with build/bench)
#
# Everything is pinned and found one way, so every machine gets the same baseline or a clear failure:
# the interpreter is Python 3.12 (UPSTREAM_PYTHON, else python3.12 on PATH, else a pyenv install), and the
# community.proxmox it ends up with must be exactly $COMMUNITY_PROXMOX. There is no fallback.
# The virtualenv is reused while it holds that version and its requirements file is unchanged.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: venv.sh BUILD_DIR}

PYTHON_MINOR=3.12          # ansible-core 2.21 runs on 3.12+; one minor so every machine builds the same
COMMUNITY_PROXMOX=2.0.0    # the version the scenario and the benchmark compare against (ansible 14.5.0 bundles it)
req=$here/requirements-ansible14.txt

fail() { echo "upstream-venv: $*" >&2; exit 1; }

runs() { "$1" -c '' >/dev/null 2>&1; }
# The lookup, in order, the same as mk/matrix.mk's for its virtualenvs: UPSTREAM_PYTHON; python3.12
# on PATH if it runs (a pyenv shim of an inactive version does not); a pyenv install,
# $PYENV_ROOT/versions/3.12.*/bin/python3.12.
py=${UPSTREAM_PYTHON:-}
if [ -z "$py" ]; then
  for c in "python$PYTHON_MINOR" "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$PYTHON_MINOR".*/bin/python"$PYTHON_MINOR"; do
    if runs "$c"; then py=$c; break; fi
  done
fi
[ -n "$py" ] && runs "$py" || fail "no Python $PYTHON_MINOR found (python$PYTHON_MINOR on PATH, or pyenv's): install one, or set UPSTREAM_PYTHON"
have=$("$py" -c 'import sys, venv, ssl, ensurepip; print("%d.%d" % sys.version_info[:2])' 2>/dev/null) \
  || fail "$py cannot make a virtualenv with ssl (venv, ssl, ensurepip)"
[ "$have" = "$PYTHON_MINOR" ] || fail "$py is Python $have, not $PYTHON_MINOR"

installed() {  # the community.proxmox version a virtualenv holds (its MANIFEST.json), or nothing
  "$1/bin/python" - <<'PY' 2>/dev/null
import json, os, sysconfig
path = os.path.join(sysconfig.get_paths()['purelib'], 'ansible_collections/community/proxmox/MANIFEST.json')
print(json.load(open(path))['collection_info']['version'])
PY
}

venv=$out/venv-upstream
stamp=$venv/requirements.installed   # a copy of the requirements it was built from
if ! cmp -s "$req" "$stamp" || [ "$(installed "$venv")" != "$COMMUNITY_PROXMOX" ]; then
  ansible_pin=$(grep -m1 '^ansible==' "$req")
  echo "upstream-venv: installing $ansible_pin's community.proxmox into $venv with $py (about a minute, once)" >&2
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
        sys.exit('upstream-venv: %s holds no %s' % (wheel, prefix))
    z.extractall(site, members)
with open(os.path.join(venv, 'ansible-package.txt'), 'w') as f:
    f.write(os.path.basename(wheel).split('-')[1] + '\n')   # the `ansible` version it came from
PY
  rm -rf "$venv/wheel"
  got=$(installed "$venv")
  [ "$got" = "$COMMUNITY_PROXMOX" ] || fail "$ansible_pin gave community.proxmox '${got:-none}', not $COMMUNITY_PROXMOX"
  cp "$req" "$stamp"
fi
echo "$venv"

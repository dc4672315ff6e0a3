"""A minimal PEP 517/660 build backend for pvesim, standard library only.

pvesim is one pure-Python package (`pvesim/`) with one console script. This backend writes its wheel,
its editable wheel (a .pth file pointing at this directory) and an sdist without setuptools, so that
an isolated pip build needs nothing from a package index. The wheel carries the seeds (`seeds/*.json` as
`pvesim/seeds/`) and the schema data as package data, the AGPL text (LICENSE) and PYPI.md as its description;
its version is the collection's (galaxy.yml in a checkout, PKG-INFO in the sdist).
"""

import base64
import hashlib
import io
import os
import re
import tarfile
import tomllib
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = 'pvesim'


# The collection's galaxy.yml, two levels up in a checkout; an sdist has PKG-INFO instead.
GALAXY = os.path.join(os.path.dirname(os.path.dirname(ROOT)), 'galaxy.yml')
README = 'PYPI.md'
LICENSE = 'LICENSE'


def _version():
    """The collection's version (galaxy.yml `version:`), so that pvesim X.Y.Z is the one of ferro.proxmox X.Y.Z."""
    for path, pattern in ((os.path.join(ROOT, 'PKG-INFO'), r'^Version:\s*(\S+)\s*$'), (GALAXY, r'^version:\s*(\S+)\s*$')):
        if os.path.exists(path):
            with open(path, encoding='utf-8') as fh:
                found = re.search(pattern, fh.read(), re.M)
            if found:
                return found.group(1).strip('"\'')
    raise RuntimeError('pvesim: no version: neither galaxy.yml nor PKG-INFO found near ' + ROOT)


def _project():
    with open(os.path.join(ROOT, 'pyproject.toml'), 'rb') as fh:
        project = tomllib.load(fh)['project']
    project.setdefault('version', _version())
    return project


def _metadata(project):
    lines = ['Metadata-Version: 2.4', 'Name: ' + project['name'], 'Version: ' + project['version'],
             'Summary: ' + project.get('description', ''),
             'Requires-Python: ' + project.get('requires-python', '>=3')]
    if project.get('license'):
        lines.append('License-Expression: ' + project['license'])
        lines.append('License-File: ' + LICENSE)
    lines += ['Classifier: ' + c for c in project.get('classifiers', [])]
    lines += ['Project-URL: {0}, {1}'.format(k, v) for k, v in sorted(project.get('urls', {}).items())]
    lines += ['Requires-Dist: ' + dep for dep in project.get('dependencies', [])]
    lines.append('Description-Content-Type: text/markdown')
    with open(os.path.join(ROOT, README), encoding='utf-8') as fh:
        description = fh.read()
    return '\n'.join(lines) + '\n\n' + description


def _entry_points(project):
    scripts = project.get('scripts', {})
    return '[console_scripts]\n' + ''.join('{0} = {1}\n'.format(k, v) for k, v in sorted(scripts.items()))


def _dist_info(project):
    return '{0}-{1}.dist-info'.format(project['name'], project['version'])


def _wheel_name(project):
    return '{0}-{1}-py3-none-any.whl'.format(project['name'], project['version'])


def _record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    return '{0},sha256={1},{2}'.format(name, digest, len(data))


def _write_wheel(directory, files):
    project = _project()
    info = _dist_info(project)
    files = list(files) + [
        (info + '/METADATA', _metadata(project).encode()),
        (info + '/WHEEL', b'Wheel-Version: 1.0\nGenerator: pvesim-backend\nRoot-Is-Purelib: true\nTag: py3-none-any\n'),
        (info + '/entry_points.txt', _entry_points(project).encode()),
        (info + '/licenses/' + LICENSE, _read(LICENSE)),
    ]
    record = [_record_line(name, data) for name, data in files] + [info + '/RECORD,,']
    name = _wheel_name(project)
    with zipfile.ZipFile(os.path.join(directory, name), 'w', zipfile.ZIP_DEFLATED) as whl:
        for path, data in files:
            whl.writestr(path, data)
        whl.writestr(info + '/RECORD', '\n'.join(record) + '\n')
    return name


def _read(rel):
    with open(os.path.join(ROOT, rel), 'rb') as fh:
        return fh.read()


def _seed_files():
    """The seeds (seeds/*.json) as package data, pvesim/seeds/<name>.json (admin.py SEEDS)."""
    seeds = os.path.join(ROOT, 'seeds')
    return [(PACKAGE + '/seeds/' + name, _read(os.path.join('seeds', name)))
            for name in sorted(os.listdir(seeds)) if name.endswith('.json')]


def _package_files():
    out = []
    base = os.path.join(ROOT, PACKAGE)
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != '__pycache__']
        for fname in sorted(filenames):
            if fname.endswith(('.pyc', '.pyo')):
                continue
            full = os.path.join(dirpath, fname)
            with open(full, 'rb') as fh:
                out.append((os.path.relpath(full, ROOT).replace(os.sep, '/'), fh.read()))
    return out


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, _package_files() + _seed_files())


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    return _write_wheel(wheel_directory, [('__editable__.pvesim.pth', (ROOT + '\n').encode())])


def build_sdist(sdist_directory, config_settings=None):
    project = _project()
    base = '{0}-{1}'.format(project['name'], project['version'])
    name = base + '.tar.gz'
    with tarfile.open(os.path.join(sdist_directory, name), 'w:gz') as tar:
        seeds = ['seeds/' + name.split('/')[-1] for name, _ in _seed_files()]
        for rel in ['pyproject.toml', README, LICENSE, 'README.md', '_build/backend.py'] + seeds + \
                [p for p, _ in _package_files()]:
            full = os.path.join(ROOT, rel)
            if os.path.exists(full):
                info = tar.gettarinfo(full, arcname=base + '/' + rel)
                info.uid = info.gid = 0
                info.uname = info.gname = ''
                with open(full, 'rb') as fh:
                    tar.addfile(info, fh)
        pkg = _metadata(project).encode()
        info = tarfile.TarInfo(base + '/PKG-INFO')
        info.size = len(pkg)
        tar.addfile(info, io.BytesIO(pkg))
    return name

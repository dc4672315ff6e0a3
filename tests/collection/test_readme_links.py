"""README.md as Galaxy renders it from the tarball: every link resolves inside the tarball (a
file it ships, a heading of the README) or is a public page (the repository's own pages must name
a file the repository has); no file of the repository is named that the tarball lacks; the
licence ships and MANIFEST.json names it; no developer material (make targets) and no internal
work-item numbers; install and the first playbook come first."""

import json
import os
import re
import subprocess
import tarfile
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
GALAXY = yaml.safe_load((ROOT / 'galaxy.yml').read_text())
REPOSITORY_PAGES = GALAXY['repository'] + '/blob/main/'


def dev_tarball():
    if os.environ.get('FERRO_TARBALL'):
        return ROOT / os.environ['FERRO_TARBALL']
    found = sorted((ROOT / 'dist').glob('ferro-proxmox-*-dev+*.tar.gz'), key=lambda p: p.stat().st_mtime)
    assert found, 'no development tarball in dist/: run `make collection`'
    return found[-1]


def shipped():
    """(files of the tarball, its README text, its MANIFEST.json)."""
    with tarfile.open(dev_tarball()) as tar:
        files = {m.name for m in tar.getmembers() if m.isfile() or m.issym()}
        readme = tar.extractfile('README.md').read().decode()
        manifest = json.load(tar.extractfile('MANIFEST.json'))
    return files, readme, manifest


def prose(text):
    """The text outside fenced code blocks (commands a user types, examples)."""
    return re.sub(r'^ *```.*?^ *```', '', text, flags=re.S | re.M)


def anchors(text):
    """GitHub's heading anchors: lower case, punctuation but - and _ dropped, spaces to -."""
    out = set()
    for heading in re.findall(r'^#+ (.*)$', prose(text), re.M):
        out.add(re.sub(r'[^\w\- ]', '', heading.strip().lower()).replace(' ', '-'))
    return out


def repository_files():
    listed = subprocess.run(['git', 'ls-files'], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return set(listed.split()) | {p.relative_to(ROOT).as_posix() for p in ROOT.rglob('*.md') if '.venv' not in p.parts}


def link_problems(text, files):
    problems = []
    repo = None
    for target in re.findall(r'\]\(([^)\s]+)\)', prose(text)):
        if target.startswith('#'):
            if target[1:] not in anchors(text):
                problems.append('no heading for %s' % target)
        elif target.startswith(REPOSITORY_PAGES):
            repo = repo or repository_files()
            path = target[len(REPOSITORY_PAGES):].split('#')[0]
            if path not in repo:
                problems.append('the repository has no %s' % path)
        elif re.match(r'https://', target):
            continue
        elif target.split('#')[0] not in files:
            problems.append('the tarball has no %s' % target)
    # A file named in the text (not as a link) must be one the tarball ships.
    bare = re.sub(r'\[[^\]]*\]\([^)]*\)', '', prose(text))
    for name in re.findall(r'(?<![\w./~-])((?:[\w.-]+/)+[\w.-]+\.(?:md|py|rs|ya?ml|json|sh|txt)|[A-Z]+\.md)\b', bare):
        if name not in files:
            problems.append('names %s, which the tarball lacks' % name)
    return problems


def test_every_readme_link_resolves_in_the_tarball_or_to_a_public_page():
    files, readme, _ = shipped()
    assert link_problems(readme, files) == []


def test_the_link_check_finds_a_missing_file_and_anchor():
    files, readme, _ = shipped()
    broken = readme + '\nSee [x](docs/missing.md), [y](#no-such-heading), tests/e2e/test_role.py and ' \
        '[z](%sno/such/file.rs).\n' % REPOSITORY_PAGES
    assert link_problems(broken, files) == [
        'the tarball has no docs/missing.md', 'no heading for #no-such-heading',
        'the repository has no no/such/file.rs', 'names tests/e2e/test_role.py, which the tarball lacks']


def test_the_licence_ships_and_manifest_names_it():
    files, _, manifest = shipped()
    assert 'COPYING' in files
    info = manifest['collection_info']
    assert info['license_file'] == 'COPYING'
    # Galaxy's importer refuses `license` and `license_file` together.
    assert not info['license']
    assert 'GNU GENERAL PUBLIC LICENSE' in (ROOT / 'COPYING').read_text()[:200]
    assert 'Version 3' in (ROOT / 'COPYING').read_text()[:200]


def test_the_user_docs_the_readme_points_to_ship():
    files, _, _ = shipped()
    assert {'SECURITY.md', 'docs/pve-semantics.md', 'docs/saved-plans.md', 'docs/refusals.md'} <= files


def test_readme_is_for_users_first():
    _, readme, _ = shipped()
    text = prose(readme)
    assert re.findall(r'`make\b|\bmake (?:test|demo|bench|dist|install|lint|sanity|stubs|venv|collection|help)\b',
                      text) == []
    assert re.findall(r'[Ii]ssues? \d+|<!--', readme) == []
    headings = re.findall(r'^## (.*)$', text, re.M)
    assert headings[:2] == ['Install', 'Your first playbook'], headings
    first_playbook = readme.index('# first_vm.yml')
    assert readme[:first_playbook].count('\n') < 120


def test_pvesim_says_its_licence_where_it_is_run():
    pyproject = (ROOT / 'tests' / 'pvesim' / 'pyproject.toml').read_text()
    assert 'license = "AGPL-3.0-or-later"' in pyproject   # PEP 639: the wheel's License-Expression
    readme = (ROOT / 'tests' / 'pvesim' / 'README.md').read_text()
    assert '## Licence' in readme and 'AGPL-3.0-or-later' in readme.split('## Licence')[1]

"""The dist tarball: within the size budget, and once installed it ships, for each platform, one
multi-call binary (ferro_proxmox) and a link to it per module, the binary of the right format
and architecture (read from the header bytes)."""

import os
import tarfile

import binfmt
from conftest import module_names

MULTICALL = 'ferro_proxmox'


def test_within_the_size_budget(tarball):
    # mk/dist.mk's DIST_MAX_BYTES (half of Galaxy's 20 MB limit), passed by `make dist-test`.
    budget = int(os.environ.get('FERRO_DIST_MAX_BYTES', '10000000'))
    size = os.path.getsize(tarball)
    assert size <= budget, '%s is %d bytes, over the budget of %d' % (tarball, size, budget)


def test_ships_the_binary_and_a_link_per_module_for_every_platform_and_nothing_else(native_dir, triples):
    assert sorted(os.listdir(native_dir)) == sorted(triples)
    for triple in triples:
        tdir = os.path.join(native_dir, triple)
        assert sorted(os.listdir(tdir)) == sorted(module_names() + [MULTICALL]), triple
        assert not os.path.islink(os.path.join(tdir, MULTICALL)), triple
        for name in module_names():
            assert os.readlink(os.path.join(tdir, name)) == MULTICALL, (triple, name)


def test_the_tarball_holds_the_links_as_links(tarball, triples):
    # ansible-galaxy build keeps a link that points inside the collection; a copy per module
    # would multiply the size by the number of modules.
    with tarfile.open(tarball) as tar:
        members = {m.name: m for m in tar.getmembers()}
    for triple in triples:
        assert members['native/%s/%s' % (triple, MULTICALL)].isfile(), triple
        for name in module_names():
            member = members['native/%s/%s' % (triple, name)]
            assert member.issym() and member.linkname == MULTICALL, (triple, name, member.type, member.linkname)


def binary(native_dir, triple):
    return os.path.join(native_dir, triple, MULTICALL)


def test_binaries_are_installed_executable(native_dir, triples):
    for triple in triples:
        mode = os.stat(binary(native_dir, triple)).st_mode
        assert mode & 0o111 == 0o111, '%s/%s has mode %o' % (triple, MULTICALL, mode & 0o777)


def test_each_binary_is_of_its_platforms_format_and_architecture(native_dir, triples):
    found = {triple: binfmt.problems(binary(native_dir, triple), triple) for triple in triples}
    assert not any(found.values()), found


def test_linux_binaries_are_static(native_dir, triples):
    for triple in (t for t in triples if '-linux-' in t):
        info = binfmt.describe(binary(native_dir, triple))
        assert info['format'] == 'elf' and info['static'], (triple, info)


def test_macos_binaries_are_mach_o_of_the_right_architectures(native_dir, triples):
    arches = {'universal2-apple-darwin': ['arm64', 'x86_64'], 'aarch64-apple-darwin': ['arm64'],
              'x86_64-apple-darwin': ['x86_64']}
    darwin = [t for t in triples if t.endswith('-apple-darwin')]
    assert darwin, 'this build ships no macOS binaries'
    for triple in darwin:
        info = binfmt.describe(binary(native_dir, triple))
        assert info['format'] == 'macho' and info['executable'], (triple, info)
        assert info['arches'] == arches[triple], (triple, info)
        assert info['fat'] == (triple == 'universal2-apple-darwin'), (triple, info)

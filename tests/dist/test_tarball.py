"""The dist tarball: under Galaxy's size limit, and once installed it ships one binary per module
for each platform, each of the right format and architecture (read from the header bytes)."""

import os

import binfmt
from conftest import module_names

GALAXY_MAX_BYTES = 20 * 1000 * 1000


def test_under_galaxys_size_limit(tarball):
    size = os.path.getsize(tarball)
    assert size < GALAXY_MAX_BYTES, '%s is %d bytes' % (tarball, size)


def test_ships_every_module_for_every_platform_and_nothing_else(native_dir, triples):
    assert sorted(os.listdir(native_dir)) == sorted(triples)
    for triple in triples:
        assert sorted(os.listdir(os.path.join(native_dir, triple))) == module_names(), triple


def test_binaries_are_installed_executable(native_dir, triples):
    for triple in triples:
        for name in module_names():
            mode = os.stat(os.path.join(native_dir, triple, name)).st_mode
            assert mode & 0o111 == 0o111, '%s/%s has mode %o' % (triple, name, mode & 0o777)


def test_each_binary_is_of_its_platforms_format_and_architecture(native_dir, triples):
    found = {}
    for triple in triples:
        for name in module_names():
            problems = binfmt.problems(os.path.join(native_dir, triple, name), triple)
            if problems:
                found['%s/%s' % (triple, name)] = problems
    assert not found, found


def test_linux_binaries_are_static(native_dir, triples):
    for triple in (t for t in triples if '-linux-' in t):
        for name in module_names():
            info = binfmt.describe(os.path.join(native_dir, triple, name))
            assert info['format'] == 'elf' and info['static'], (triple, name, info)


def test_macos_binaries_are_mach_o_of_the_right_architectures(native_dir, triples):
    arches = {'universal2-apple-darwin': ['arm64', 'x86_64'], 'aarch64-apple-darwin': ['arm64'],
              'x86_64-apple-darwin': ['x86_64']}
    darwin = [t for t in triples if t.endswith('-apple-darwin')]
    assert darwin, 'this build ships no macOS binaries'
    for triple in darwin:
        for name in module_names():
            info = binfmt.describe(os.path.join(native_dir, triple, name))
            assert info['format'] == 'macho' and info['executable'], (triple, name, info)
            assert info['arches'] == arches[triple], (triple, name, info)
            assert info['fat'] == (triple == 'universal2-apple-darwin'), (triple, name, info)

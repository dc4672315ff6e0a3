"""The header checks themselves, on hand-made headers: a check that passes everything proves
nothing."""

import struct

import pytest

import binfmt


def elf(machine, interp=False):
    phnum = 2
    header = bytearray(64)
    header[:4] = b'\x7fELF'
    header[4], header[5], header[6] = 2, 1, 1
    struct.pack_into('<HHI', header, 16, 3, machine, 1)
    struct.pack_into('<Q', header, 32, 64)          # e_phoff
    struct.pack_into('<HH', header, 54, 56, phnum)  # e_phentsize, e_phnum
    phdrs = bytearray(56 * phnum)
    struct.pack_into('<I', phdrs, 0, 6)             # PT_PHDR
    struct.pack_into('<I', phdrs, 56, 3 if interp else 1)
    return bytes(header + phdrs)


def macho(cputype, filetype=binfmt.MH_EXECUTE, signed=True, minos=(11, 0)):
    # LC_BUILD_VERSION: platform macOS, minos, sdk, no tools
    cmds = struct.pack('<IIIIII', binfmt.LC_BUILD_VERSION, 24, 1, minos[0] << 16 | minos[1] << 8, 15 << 16, 0)
    if signed:
        cmds += struct.pack('<IIII', binfmt.LC_CODE_SIGNATURE, 16, 4096, 256)
    return struct.pack('<IiiIIII', binfmt.MH_MAGIC_64, cputype, 0, filetype, 2 if signed else 1, len(cmds), 0) \
        + b'\0' * 4 + cmds


def fat(*slices):
    header = struct.pack('>II', binfmt.FAT_MAGIC, len(slices))
    offset = 4096
    body = b''
    for cputype, data in slices:
        header += struct.pack('>iiIII', cputype, 0, offset + len(body), len(data), 12)
        body += data
    return header + b'\0' * (offset - len(header)) + body


def write(tmp_path, data):
    path = tmp_path / 'bin'
    path.write_bytes(data)
    path.chmod(0o755)
    return str(path)


ARM64, X86_64 = binfmt.CPU_TYPE_ARM64, binfmt.CPU_TYPE_X86_64
CASES = [
    ('x86_64-unknown-linux-musl', elf(binfmt.EM_X86_64), []),
    ('aarch64-unknown-linux-musl', elf(binfmt.EM_AARCH64), []),
    ('aarch64-unknown-linux-musl', elf(binfmt.EM_X86_64), ['is for x86_64, expected aarch64']),
    ('x86_64-unknown-linux-musl', elf(binfmt.EM_X86_64, interp=True), ['is dynamically linked']),
    ('universal2-apple-darwin', fat((X86_64, macho(X86_64)), (ARM64, macho(ARM64))), []),
    ('universal2-apple-darwin', fat((X86_64, macho(X86_64))), ['is for x86_64, expected arm64+x86_64']),
    ('aarch64-apple-darwin', macho(ARM64), []),
    ('x86_64-apple-darwin', macho(ARM64), ['is for arm64, expected x86_64']),
    ('x86_64-apple-darwin', macho(X86_64, signed=False), []),
    ('aarch64-apple-darwin', macho(ARM64, minos=(10, 15)), []),
    ('aarch64-apple-darwin', macho(ARM64, minos=(15, 0)), ['needs macOS 15.0, expected at most 11.0']),
    ('universal2-apple-darwin', fat((X86_64, macho(X86_64)), (ARM64, macho(ARM64, minos=(15, 0)))),
     ['needs macOS 15.0']),
    ('aarch64-apple-darwin', macho(ARM64, signed=False), ['arm64 slice without a code signature']),
    ('universal2-apple-darwin', fat((X86_64, macho(X86_64)), (ARM64, macho(ARM64, signed=False))),
     ['arm64 slice without a code signature']),
    ('x86_64-apple-darwin', macho(X86_64, filetype=6), ['is not an executable']),
    ('aarch64-apple-darwin', elf(binfmt.EM_AARCH64), ['is elf, expected macho']),
    ('x86_64-unknown-linux-musl', macho(X86_64), ['is macho, expected elf']),
    ('universal2-apple-darwin', fat((ARM64, macho(X86_64))), ['fat header says cputype']),
    ('x86_64-unknown-linux-musl', b'#!/bin/sh\n', ['neither ELF nor Mach-O']),
]


@pytest.mark.parametrize('triple,data,expected', CASES)
def test_problems(tmp_path, triple, data, expected):
    found = binfmt.problems(write(tmp_path, data), triple)
    assert len(found) == len(expected), found
    for got, want in zip(found, expected):
        assert want in got, found


def test_links_must_name_a_binary_beside_them(tmp_path):
    tdir = tmp_path / 'x86_64-unknown-linux-musl'
    tdir.mkdir()
    (tdir / 'ferro_proxmox').write_bytes(elf(binfmt.EM_X86_64))
    (tdir / 'ferro_proxmox').chmod(0o755)
    (tdir / 'proxmox_nic').symlink_to('ferro_proxmox')
    (tdir / 'proxmox_kvm').symlink_to('missing')
    (tdir / 'proxmox_disk').symlink_to('../x86_64-unknown-linux-musl/ferro_proxmox')
    (tdir / 'proxmox_vm_info').symlink_to('proxmox_nic')
    found = {name: binfmt.link_problems(str(tmp_path), tdir.name, target)
             for _, name, target in binfmt.links(str(tmp_path))}
    assert found['proxmox_nic'] == []
    assert 'not a binary' in found['proxmox_kvm'][0]
    assert 'same directory' in found['proxmox_disk'][0]
    assert 'not a binary' in found['proxmox_vm_info'][0]
    assert [name for _, name, _ in binfmt.binaries(str(tmp_path))] == ['ferro_proxmox']
    assert binfmt.main(['binfmt.py', 'check', str(tmp_path)]) == 1

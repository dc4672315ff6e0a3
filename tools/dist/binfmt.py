#!/usr/bin/env python3
"""What a built module binary is, read from its header bytes (no `file` needed), and whether
it fits the target triple it is shipped under.

    binfmt.py check NATIVE_DIR      check every binary under native/<triple>/, and that each link
                                    there (one per module) names a binary beside it; exit 1 on a
                                    mismatch
    binfmt.py sizes NATIVE_DIR      one line per binary: size in bytes, triple/name, the modules
                                    linked to it

ELF: class, byte order, e_machine, and static linking (no PT_INTERP: runs without a loader).
Mach-O: thin (MH_MAGIC_64) or fat/universal (FAT_MAGIC, big-endian header), each slice's CPU
type, file type (MH_EXECUTE), minimum macOS (LC_BUILD_VERSION), and for arm64 a code signature (LC_CODE_SIGNATURE), without which
macOS on Apple silicon refuses to run it.
"""

import os
import struct
import sys

EM_X86_64 = 62
EM_AARCH64 = 183
PT_INTERP = 3

MH_MAGIC_64 = 0xFEEDFACF
FAT_MAGIC = 0xCAFEBABE
FAT_MAGIC_64 = 0xCAFEBABF
MH_EXECUTE = 2
LC_CODE_SIGNATURE = 0x1D
LC_BUILD_VERSION = 0x32
# The oldest macOS the binaries must run on (mk/dist.mk sets MACOSX_DEPLOYMENT_TARGET to it;
# without it Zig stamps its own default, macOS 15).
MACOS_MIN = (11, 0)
CPU_TYPE_X86_64 = 0x01000007
CPU_TYPE_ARM64 = 0x0100000C

ELF_MACHINES = {EM_X86_64: 'x86_64', EM_AARCH64: 'aarch64'}
MACHO_CPUS = {CPU_TYPE_X86_64: 'x86_64', CPU_TYPE_ARM64: 'arm64'}

# What each shipped triple must be: (format, architectures).
EXPECTED = {
    'x86_64-unknown-linux-musl': ('elf', ['x86_64']),
    'aarch64-unknown-linux-musl': ('elf', ['aarch64']),
    'x86_64-unknown-linux-gnu': ('elf', ['x86_64']),
    'aarch64-unknown-linux-gnu': ('elf', ['aarch64']),
    'x86_64-apple-darwin': ('macho', ['x86_64']),
    'aarch64-apple-darwin': ('macho', ['arm64']),
    'universal2-apple-darwin': ('macho', ['arm64', 'x86_64']),
}


class FormatError(ValueError):
    pass


def _elf(data):
    if len(data) < 64 or data[4] != 2:
        raise FormatError('not a 64-bit ELF file')
    endian = {1: '<', 2: '>'}.get(data[5])
    if endian is None:
        raise FormatError('ELF with an unknown byte order')
    e_type, e_machine = struct.unpack_from(endian + 'HH', data, 16)
    e_phoff, = struct.unpack_from(endian + 'Q', data, 32)
    e_phentsize, e_phnum = struct.unpack_from(endian + 'HH', data, 54)
    interp = False
    for i in range(e_phnum):
        p_type, = struct.unpack_from(endian + 'I', data, e_phoff + i * e_phentsize)
        interp = interp or p_type == PT_INTERP
    return {
        'format': 'elf',
        'arches': [ELF_MACHINES.get(e_machine, 'e_machine=%d' % e_machine)],
        'executable': e_type in (2, 3),  # ET_EXEC, or ET_DYN (static-pie)
        'static': not interp,
    }


def _macho_thin(data, offset=0):
    """(arch, is an executable, has a code signature, minimum macOS) of the Mach-O at offset."""
    if len(data) < offset + 32:
        raise FormatError('truncated Mach-O header')
    magic, cputype, _subtype, filetype, ncmds, _sizeofcmds = struct.unpack_from('<IiiIII', data, offset)
    if magic != MH_MAGIC_64:
        raise FormatError('not a 64-bit little-endian Mach-O (magic 0x%08x at offset %d)' % (magic, offset))
    signed, minos = False, None
    at = offset + 32
    for _ in range(ncmds):
        cmd, cmdsize = struct.unpack_from('<II', data, at)
        signed = signed or cmd == LC_CODE_SIGNATURE
        if cmd == LC_BUILD_VERSION:
            version, = struct.unpack_from('<I', data, at + 12)
            minos = (version >> 16, (version >> 8) & 0xFF)
        if cmdsize < 8:
            raise FormatError('Mach-O load command of size %d' % cmdsize)
        at += cmdsize
    return MACHO_CPUS.get(cputype & 0xFFFFFFFF, 'cputype=0x%x' % (cputype & 0xFFFFFFFF)), filetype == MH_EXECUTE, signed, minos


def _macho(data):
    magic, = struct.unpack_from('>I', data, 0)
    if magic in (FAT_MAGIC, FAT_MAGIC_64):
        nfat, = struct.unpack_from('>I', data, 4)
        if not 0 < nfat < 16:
            raise FormatError('fat Mach-O with %d slices' % nfat)
        arches, executable, unsigned, minos = [], True, [], []
        for i in range(nfat):
            if magic == FAT_MAGIC:
                cputype, _sub, offset, size, _align = struct.unpack_from('>iiIII', data, 8 + 20 * i)
            else:
                cputype, _sub, offset, size, _align, _res = struct.unpack_from('>iiQQII', data, 8 + 32 * i)
            if offset + size > len(data):
                raise FormatError('fat Mach-O slice %d runs past the end of the file' % i)
            arch, is_exec, signed, slice_minos = _macho_thin(data, offset)
            minos.append(slice_minos)
            if not signed:
                unsigned.append(arch)
            if arch != MACHO_CPUS.get(cputype & 0xFFFFFFFF):
                raise FormatError('fat header says cputype 0x%x, slice %d is %s' % (cputype & 0xFFFFFFFF, i, arch))
            arches.append(arch)
            executable = executable and is_exec
        return {'format': 'macho', 'arches': sorted(arches), 'executable': executable, 'static': None, 'fat': True,
                'unsigned': sorted(unsigned), 'minos': max(minos, key=lambda v: v or (99, 0))}
    arch, is_exec, signed, minos = _macho_thin(data)
    return {'format': 'macho', 'arches': [arch], 'executable': is_exec, 'static': None, 'fat': False,
            'unsigned': [] if signed else [arch], 'minos': minos}


def describe(path):
    """{'format': 'elf'|'macho', 'arches': [...], 'executable': bool, 'static': bool|None}."""
    with open(path, 'rb') as f:
        data = f.read()
    if data[:4] == b'\x7fELF':
        return _elf(data)
    if len(data) >= 4 and (struct.unpack_from('<I', data)[0] == MH_MAGIC_64
                           or struct.unpack_from('>I', data)[0] in (FAT_MAGIC, FAT_MAGIC_64)):
        return _macho(data)
    raise FormatError('neither ELF nor Mach-O (starts with %r)' % data[:8])


def problems(path, triple):
    """Why the binary at path is not fit to ship as native/<triple>/; empty when it is."""
    if triple not in EXPECTED:
        return ['%s is not a target triple this collection knows' % triple]
    fmt, arches = EXPECTED[triple]
    try:
        info = describe(path)
    except (FormatError, struct.error, OSError) as e:
        return [str(e)]
    found = []
    if info['format'] != fmt:
        found.append('is %s, expected %s' % (info['format'], fmt))
    elif sorted(info['arches']) != sorted(arches):
        found.append('is for %s, expected %s' % ('+'.join(info['arches']), '+'.join(arches)))
    if not info['executable']:
        found.append('is not an executable')
    if triple.endswith('-musl') and info['static'] is False:
        found.append('is dynamically linked (has an ELF interpreter); a musl build must be static')
    if 'arm64' in info.get('unsigned', ()):
        # macOS on Apple silicon kills an arm64 executable without a code signature (an ad-hoc
        # one is enough, and is what the linker writes).
        found.append('has an arm64 slice without a code signature (LC_CODE_SIGNATURE)')
    if info['format'] == 'macho' and (info['minos'] is None or info['minos'] > MACOS_MIN):
        found.append('needs macOS %s, expected at most %d.%d (LC_BUILD_VERSION minos)'
                     % ('%d.%d' % info['minos'] if info['minos'] else '(no LC_BUILD_VERSION)', *MACOS_MIN))
    if not os.access(path, os.X_OK):
        found.append('is not executable (mode %o)' % (os.stat(path).st_mode & 0o777))
    return found


def binaries(native_dir):
    """(triple, name, path) of every regular file under native/<triple>/."""
    for triple, name, path in _entries(native_dir):
        if not os.path.islink(path):
            yield triple, name, path


def links(native_dir):
    """(triple, name, target) of every link under native/<triple>/ (one per module)."""
    for triple, name, path in _entries(native_dir):
        if os.path.islink(path):
            yield triple, name, os.readlink(path)


def _entries(native_dir):
    for triple in sorted(os.listdir(native_dir)):
        tdir = os.path.join(native_dir, triple)
        if os.path.isdir(tdir):
            for name in sorted(os.listdir(tdir)):
                yield triple, name, os.path.join(tdir, name)


def link_problems(native_dir, triple, target):
    """Why a link in native/<triple>/ to target does not name a binary shipped beside it."""
    if os.path.dirname(target) or target in ('', '.', '..'):
        return ['points to %s, expected the name of a binary in the same directory' % target]
    path = os.path.join(native_dir, triple, target)
    if os.path.islink(path) or not os.path.isfile(path):
        return ['points to %s, which is not a binary in %s/' % (target, triple)]
    return []


def main(argv):
    if len(argv) != 3 or argv[1] not in ('check', 'sizes'):
        print(__doc__, file=sys.stderr)
        return 2
    native_dir = argv[2]
    if argv[1] == 'sizes':
        for triple, name, path in binaries(native_dir):
            linked = [n for t, n, target in links(native_dir) if t == triple and target == name]
            print('%9d  %s/%s%s' % (os.path.getsize(path), triple, name,
                                    '  (runs: %s)' % ', '.join(linked) if linked else ''))
        return 0
    bad, seen = 0, 0
    for triple, name, path in binaries(native_dir):
        seen += 1
        found = problems(path, triple)
        if found:
            bad += 1
            print('%s/%s: %s' % (triple, name, '; '.join(found)), file=sys.stderr)
    for triple, name, target in links(native_dir):
        found = link_problems(native_dir, triple, target)
        if found:
            bad += 1
            print('%s/%s: %s' % (triple, name, '; '.join(found)), file=sys.stderr)
    if not seen:
        print('%s: no binaries' % native_dir, file=sys.stderr)
    return 1 if bad or not seen else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))

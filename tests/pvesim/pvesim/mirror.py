"""What qemu-server's clone_disk refuses of a drive QEMU mirrors (a full copy of a running VM's drive): the TPM state,
and aio=io_uring towards a storage known to break it (docs/pve-semantics.md §58).

Source: qemu-server 9.2.6 src/PVE/QemuServer.pm `clone_disk` (`$use_drive_mirror`: full, running, a drive name, no
snapshot, not `unusedN`; `cannot move TPM state while VM is running`), `clone_disk_check_io_uring` and
`storage_allows_io_uring_default` (lvm and cifs never; rbd with krbd only with a direct cache), src/PVE/QemuServer/
Drive.pm `drive_uses_cache_direct`. A drive without `aio` is checked only for a running QEMU machine older than 10.0
(`Machine.pm get_current_qemu_machine`, `is_machine_version_at_least`): `running_machine` is that machine, which
status/current shows as `running-machine` (QemuServer.pm `vmstatus`, `$machinecb`).
"""
import re

from fakepve.qemu import volume_ref

from . import drives as d
from .node_qemu import DEFAULT

TPM_RUNNING = 'cannot move TPM state while VM is running'
IO_URING = 'target storage is known to cause issues with aio=io_uring (used by current drive)'


def _cache_direct(props, scfg):
    """Drive.pm drive_uses_cache_direct."""
    cache = props.get('cache')
    if cache:
        return cache in ('off', 'none', 'directsync')
    return props.get('media') != 'cdrom' and not (scfg.get('type') == 'btrfs' and not scfg.get('nocow'))


def _allows_io_uring(scfg, cache_direct):
    """QemuServer.pm storage_allows_io_uring_default."""
    kind = scfg.get('type')
    if kind == 'rbd' and str(scfg.get('krbd', 0)) in ('1', 'True') and not cache_direct:
        return False
    return kind not in ('lvm', 'cifs')


# Machine.pm extract_version_parts
MACHINE_VERSION = re.compile(r'^(?:pc(?:-i440fx|-q35)?|virt)-(\d+)\.(\d+)')
QEMU = '.'.join(DEFAULT.split('.')[:2])  # pvesim's QEMU (node_qemu.py): an unpinned machine runs at its version


def running_machine(vm):
    """The machine QEMU runs a running VM with: the seed's `running_machine`, else the config's pinned `machine`
    type, else the newest of its kind (QemuServer.pm vm_start_nolock, Machine.pm get_vm_machine)."""
    if vm.status != 'running':
        return None
    seeded = vm.__dict__.get('running_machine')
    if seeded:
        return seeded
    kind = (vm.config.get('machine') or '').split(',')[0].replace('type=', '')
    if MACHINE_VERSION.match(kind):
        return kind
    return 'pc-q35-{0}+pve0'.format(QEMU) if kind.startswith('q35') else 'pc-i440fx-{0}+pve0'.format(QEMU)


def refusal(key, value, target, storages, machine=None):
    """clone_disk's words for the drive `key` (`value`) of a running VM mirrored to storage `target`, or None. The
    EFI disk, the TPM state (after its own refusal) and a cloud-init drive take clone_disk's other branches.
    `machine`: the running machine (`running_machine`)."""
    if not d.is_drive(key) or key.startswith('unused'):
        return None
    if key == 'tpmstate0':
        return TPM_RUNNING
    volume, props = d.parse_drive(value)
    source = volume_ref(volume or 'none')[0]
    if source is None or source == target or key == 'efidisk0' or d.is_cloudinit(value):
        return None
    src, dst = storages.get(source, {}), storages.get(target, {})
    direct = _cache_direct(props, src)
    if props.get('aio'):
        uses = props['aio'] == 'io_uring'
    else:  # clone_disk_check_io_uring: the default aio of a machine before 10.0 was io_uring where allowed
        version = MACHINE_VERSION.match(machine or '')
        old = version is not None and (int(version.group(1)), int(version.group(2))) < (10, 0)
        uses = old and _allows_io_uring(src, direct)
    return IO_URING if uses and not _allows_io_uring(dst, direct) else None

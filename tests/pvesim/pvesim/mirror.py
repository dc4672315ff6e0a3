"""What qemu-server's clone_disk refuses of a drive QEMU mirrors (a full copy of a running VM's drive): the TPM state,
and aio=io_uring towards a storage known to break it (docs/pve-semantics.md §58).

Source: qemu-server 9.2.6 src/PVE/QemuServer.pm `clone_disk` (`$use_drive_mirror`: full, running, a drive name, no
snapshot, not `unusedN`; `cannot move TPM state while VM is running`), `clone_disk_check_io_uring` and
`storage_allows_io_uring_default` (lvm and cifs never; rbd with krbd only with a direct cache), src/PVE/QemuServer/
Drive.pm `drive_uses_cache_direct`. A drive without `aio` is checked only for a running QEMU machine older than 10.0,
which pvesim does not model: its QEMU is 10.
"""

from fakepve.qemu import volume_ref

from . import drives as d

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


def refusal(key, value, target, storages):
    """clone_disk's words for the drive `key` (`value`) of a running VM mirrored to storage `target`, or None. The
    EFI disk, the TPM state (after its own refusal) and a cloud-init drive take clone_disk's other branches."""
    if not d.is_drive(key) or key.startswith('unused'):
        return None
    if key == 'tpmstate0':
        return TPM_RUNNING
    volume, props = d.parse_drive(value)
    source = volume_ref(volume or 'none')[0]
    if source is None or source == target or key == 'efidisk0' or d.is_cloudinit(value):
        return None
    if props.get('aio') != 'io_uring':
        return None
    src, dst = storages.get(source, {}), storages.get(target, {})
    return None if _allows_io_uring(dst, _cache_direct(props, src)) else IO_URING

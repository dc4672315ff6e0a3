"""What the `qmigrate` task refuses from the VM's config, snapshots and replication jobs before it moves anything: a
job to the target marked for removal and local devices (QemuMigrate.pm `prepare`), a snapshot of a local volume the
migration cannot carry (QemuMigrate.pm `scan_local_volumes`). clone_migrate.py's task calls these.

Sources: qemu-server 9.2.6 src/PVE/QemuMigrate.pm `prepare` (`find_local_replication_job` and `remove_job`, then
`check_local_resources` and its `$blocking_resources`), `scan_local_volumes` (`$test_volid`: `referenced_in_snapshot`,
`replicated`, the storages that carry snapshots), src/PVE/QemuMigrate/Helpers.pm `check_local_resources`,
`check_non_migratable_resources`; pve-guest-common src/PVE/ReplicationConfig.pm `find_local_replication_job`;
docs/pve-semantics.md §59.2.
"""

import re

from fakepve.qemu import volume_ref

from . import drives as d, options as o
from .qemu_command import _props
from .replication import can_replicate

OWNER = re.compile(r'(?:^|/)(?:vm|base)-(\d+)-')


def _numbered(key, prefix):
    return re.fullmatch(re.escape(prefix) + r'\d+', key) is not None


def prepare_error(vm, jobs, target, running):
    """QemuMigrate.pm prepare: the `local` job to the target has `remove_job`; then the blocking local resources of
    check_local_resources, which without `force` (root only; the module never sends it) abort the task. PVE joins
    them in Perl's hash order; pvesim in the config's."""
    for job in jobs:
        if job.get('type', 'local') == 'local' and job['target'] == target and job.get('remove_job'):
            return 'refusing to migrate replicated VM whose replication job is marked for removal'
    conf = vm.config
    blocking = []
    if running:
        # check_non_migratable_resources with $state
        blocking += [k for k in ('amd-sev', 'intel-tdx') if conf.get(k) not in (None, '', '0')]
        if any(_numbered(k, 'virtiofs') for k in conf):
            blocking.append('virtiofs')
    blocking += [k for k in ('hostusb', 'hostpci', 'ivshmem') if conf.get(k) not in (None, '', '0')]
    for key in sorted(conf, key=o.natural):
        props = _props(conf[key], 'host')
        if _numbered(key, 'usb'):
            if props.get('host', '').lower() == 'spice' or props.get('mapping'):
                continue  # a SPICE port is no device; a mapped one is $mapped_res
        elif _numbered(key, 'hostpci'):
            if props.get('mapping'):
                continue
        elif _numbered(key, 'serial'):
            if conf[key] == 'socket':
                continue
        elif not _numbered(key, 'parallel'):
            continue  # virtiofsN is always a mapped directory
        blocking.append(key)
    if blocking:
        return "can't migrate VM which uses local devices: " + ', '.join(blocking)
    return None


def _format(name):
    for fmt in ('qcow2', 'vmdk'):
        if name.endswith('.' + fmt):
            return fmt
    return 'subvol' if 'subvol-' in name else 'raw'


def snapshot_errors(vm, storages, jobs, target, running):
    """scan_local_volumes' $test_volid for the VM's own volumes on storage that is not shared that a snapshot
    references ({volid: words}): a running VM's must be replicated (a `local` job to the target and a storage that
    replicates, get_replicatable_volumes), else the storage must carry snapshots (zfspool, raw on btrfs, qcow2
    without snapshot-as-volume-chain)."""
    replicated = any(j.get('type', 'local') == 'local' and j['target'] == target for j in jobs)
    errors = {}
    for snap in vm.snapshots.values():
        for key, value in snap.items():
            if not d.is_drive(key) or d.is_cdrom(value):
                continue
            volume = d.parse_drive(value)[0]
            sid, name = volume_ref(volume or '')
            store = storages.get(sid)
            owner = OWNER.search(name or '')
            if store is None or store.get('shared') or not owner or int(owner.group(1)) != vm.vmid:
                continue
            fmt = _format(name)
            chain = str(store.get('snapshot-as-volume-chain', 0)) == '1'
            if running and not (replicated and can_replicate(store, fmt)):
                errors[volume] = 'online storage migration not possible if non-replicated snapshot exists'
            elif not (store.get('type') == 'zfspool' or (store.get('type') == 'btrfs' and fmt == 'raw')
                      or (fmt == 'qcow2' and not chain)):
                errors[volume] = 'non-migratable snapshot exists'
    return errors


def _local_path(volume, storages):
    """pve-storage `path` of a volume on storage that is not shared: Plugin.pm `filesystem_path`
    (`<path>/images/<vmid>/<name>`), LVMPlugin.pm / LvmThinPlugin.pm (`/dev/<vg>/<name>`), ZFSPoolPlugin.pm
    (`/dev/zvol/<pool>/<name>`); None elsewhere."""
    sid, name = volume_ref(volume or '')
    store = storages.get(sid) or {}
    if not name or str(store.get('shared', 0)) in ('1', 'True'):
        return None
    owner, last = OWNER.search(name), name.rsplit('/', 1)[-1]
    kind = store.get('type')
    if kind in ('dir', 'btrfs') and store.get('path') and owner:
        return '{0}/images/{1}/{2}'.format(store['path'], owner.group(1), last)
    if kind in ('lvm', 'lvmthin') and store.get('vgname'):
        return '/dev/{0}/{1}'.format(store['vgname'], last)
    if kind == 'zfspool' and store.get('pool'):
        return '/dev/zvol/{0}/{1}'.format(store['pool'], last)
    return None


def aliased_error(vm, storages):
    """scan_local_volumes after its `foreach_volid`: the VM's own volumes (config, pending, snapshots) on storage
    that is not shared, by path; two volume ids on one path die `detected not supported aliased volumes: ...`."""
    by_path = {}
    for conf in [vm.config, getattr(vm, 'pending', {}) or {}] + list(vm.snapshots.values()):
        for key, value in conf.items():
            if value is None or not (d.is_drive(key) or d.UNUSED_KEY.match(key)) or d.is_cdrom(value):
                continue
            volume = d.parse_drive(value)[0]
            owner = OWNER.search(volume_ref(volume or '')[1] or '')
            path = owner and int(owner.group(1)) == vm.vmid and _local_path(volume, storages)
            if path:
                by_path.setdefault(path, set()).add(volume)
    for volumes in by_path.values():
        if len(volumes) > 1:
            return "detected not supported aliased volumes: '" + "', '".join(sorted(volumes)) + "'"
    return None

"""Storage types as pve-storage's plugins have them: volume names (new disks, linked clones), formats, what
is shared, capacity, and which volumes can be templates.

Sources: pve-storage 9.1.7 src/PVE/Storage.pm (`vdisk_alloc`, `storage_default_format`) and
src/PVE/Storage/Plugin.pm (`@SHARED_STORAGE`, `parse_config`, `get_formats`, `find_free_diskname`,
`$get_vm_disk_number`, `parse_volname`, `clone_image`), DirPlugin.pm, NFSPlugin.pm, CIFSPlugin.pm, RBDPlugin.pm,
ZFSPoolPlugin.pm, LVMPlugin.pm, LvmThinPlugin.pm (each one's `plugindata`, `alloc_image`, `clone_image`,
`parse_volname`, `volume_has_feature`, `status`), Plugin.pm `preallocation_cmd_opt`; qemu-server 9.2.6
QemuServer.pm `template_create`, `clone_disk`, QemuImage.pm `convert`;
docs/pve-semantics.md §8, §22.
"""

import math
import re
import time

from fakepve.qemu import volume_ref
from fakepve.routing import die
from fakepve.storage import parse_name_dir

GIB = 1024 ** 3
MIB = 1024 ** 2
# Plugin.pm @SHARED_STORAGE: parse_config sets `shared` on these types, whatever storage.cfg says.
SHARED_TYPES = ('iscsi', 'nfs', 'cifs', 'rbd', 'cephfs', 'iscsidirect', 'zfs', 'drbd', 'pbs')
FILE_TYPES = ('dir', 'nfs', 'cifs', 'btrfs', 'cephfs')
# Each plugin's plugindata `format` ([valid], default); a type without one is raw only (Plugin.pm get_formats).
FORMATS = {'dir': ('raw qcow2 vmdk subvol', 'raw'), 'nfs': ('raw qcow2 vmdk', 'raw'),
           'cifs': ('raw qcow2 vmdk', 'raw'), 'btrfs': ('raw subvol', 'raw'), 'zfspool': ('raw subvol', 'raw'),
           'lvm': ('raw qcow2', 'raw')}
# Plugin.pm $get_vm_disk_number: the prefixes that take a disk number, by type (docs/pve-semantics.md §22.2).
NUMBERED = {'dir': 'vm|base|subvol|basevol', 'zfspool': 'vm|base|subvol|basevol', 'btrfs': 'vm|base|subvol|basevol'}
# parse_volname of the linked-clone forms, one group for the owner: RBDPlugin.pm, ZFSPoolPlugin.pm, Plugin.pm.
LINKED_NAME = {'rbd': re.compile(r'^(?:base-\d+-\S+/)?(?:base|vm)-(\d+)-\S+$'),
               'zfspool': re.compile(r'^(?:(?:base|basevol)-\d+-\S+/)?(?:base|basevol|vm|subvol)-(\d+)-\S+$')}
FILE_LINKED = re.compile(r'^(\d+)/(\S+)/(\d+)/(\S+)$')
LVM_EXTENT = 4 * MIB
# Plugin.pm parse_name_dir: the extensions a file volume's name may end with, whatever the storage's formats.
NAME_DIR_FORMATS = ('raw', 'qcow2', 'vmdk', 'subvol')
# What a plugin's alloc_image rounds a new volume up to: lvcreate whole extents (LVMPlugin.pm lvcreate,
# LvmThinPlugin.pm alloc_image `-V`), RBDPlugin.pm alloc_image `rbd create --size` in whole MiB
# (int((kib + 1023) / 1024)), ZFSPoolPlugin.pm zfs_create_zvol pads to whole MiB; files keep the size.
ALLOC_UNIT = {'lvm': LVM_EXTENT, 'lvmthin': LVM_EXTENT, 'rbd': MIB, 'zfspool': MIB}


def is_shared(store):
    """Plugin.pm parse_config: a type of @SHARED_STORAGE is shared; dir and lvm when the admin says so."""
    return store.get('type') in SHARED_TYPES or str(store.get('shared', 0)) in ('1', 'True', 'true')


def alloc_size(store, size):
    """The size a new volume of `size` bytes gets on this storage (ALLOC_UNIT), which volume_size_info
    then reports and the drive's `size=` shows."""
    unit = ALLOC_UNIT.get(store.get('type'))
    return int(math.ceil(size / float(unit))) * unit if unit and size else size


def preallocation(store, fmt):
    """Plugin.pm preallocation_cmd_opt: the storage's `preallocation` for a qcow2 (default metadata) or raw
    image (default off; metadata means off on raw); None for other formats, and on btrfs, whose alloc_image
    makes raw volumes with `truncate` (BTRFSPlugin.pm)."""
    if store.get('type') == 'btrfs':
        return None
    mode = store.get('preallocation')
    if fmt == 'qcow2':
        return mode or 'metadata'
    if fmt == 'raw':
        return 'off' if mode in (None, 'metadata') else mode
    return None


def written_at_alloc(store, fmt, size):
    """The bytes a new empty volume takes from its storage's free space as that storage's status counts it
    (see `_footprint`): on a file storage, the whole file with preallocation falloc or full (qemu-img create
    -o preallocation=..., Plugin.pm alloc_image), else nothing (a sparse raw file; qcow2's few metadata
    clusters are not counted); nothing on thin storages either."""
    if store.get('type') in FILE_TYPES and preallocation(store, fmt) in ('falloc', 'full'):
        return size
    return 0


def formats_of(store):
    """Plugin.pm get_formats: (valid formats, default) of a storage; the `format` option sets the default."""
    valid, default = FORMATS.get(store.get('type'), ('raw', 'raw'))
    if store.get('type') == 'lvm':
        # LVMPlugin.pm get_formats: raw only; with volume chains raw and qcow2, qcow2 the default (so a move or
        # clone of a qcow2 volume to plain LVM makes a raw one: Storage.pm resolve_format_hint)
        if str(store.get('snapshot-as-volume-chain', 0)) == '1':
            return ['raw', 'qcow2'], 'qcow2'
        return ['raw'], 'raw'
    if store.get('type') in FORMATS and store.get('format'):
        default = store['format']
    return valid.split(), default


class StorageTypesMixin:
    """Allocation, naming and capacity by storage type."""

    def _storage_defaults(self, store):
        """Plugin.pm parse_config: `shared 1` on the types of @SHARED_STORAGE, as the API shows them."""
        if store.get('type') in SHARED_TYPES:
            store['shared'] = 1

    async def _sc_create(self, v, user):
        out = await super()._sc_create(v, user)
        self._storage_defaults(self.storages[v['storage']])
        return out

    def _space(self, store):
        """(total, used, avail) in bytes, used + avail = total: `total` from the seed (100 GiB if unset), `used`
        the volumes' footprints (`_footprint`), stopping at `total` on the storages that over-provision (what a
        full thin pool reports)."""
        total = int(store.get('total', 100 * GIB))
        used = sum(self._footprint(store, vol) for vol in store.get('volumes', {}).values())
        used = min(used, total)
        return total, used, total - used

    @staticmethod
    def _footprint(store, vol):
        """What one volume takes from its storage as the plugin's `status` counts it: thick LVM the whole LV
        (LVMPlugin.pm status: vg size - vg free) and a non-sparse zvol its reservation (ZFSPoolPlugin.pm status:
        the pool's `used`, which counts refreservation; a zfs clone has none); everything else what is written
        in it, the volume's `written` (file storages: Plugin.pm status is df of the path; LvmThinPlugin.pm status:
        the pool's data_percent; RBDPlugin.pm status: the pool's `stored`). A seeded volume without `written`
        counts as full."""
        size = int(vol.get('size') or 0)
        kind = store.get('type')
        if kind == 'lvm' or (kind == 'zfspool' and str(store.get('sparse', 0)) != '1'
                             and not vol.get('linked_from') and vol.get('content') == 'images'):
            return size
        return int(vol.get('written', size))

    def _qm_free_name(self, sid, vmid, fmt):
        """Plugin.pm find_free_diskname: the lowest free vm-<vmid>-disk-<n> (with `.<fmt>` on file storages)."""
        store = self.storages[sid]
        kind = store.get('type', 'dir')
        # the last part of a name is the disk itself (a linked clone's path starts with its base)
        pattern = re.compile(r'^(?:{0})-{1}-disk-(\d+)(\.\w+)?$'.format(NUMBERED.get(kind, 'vm|base'), vmid))
        # nfs and cifs only count names of the requested format (§22.2); so does lvm for qcow2
        by_format = kind in ('nfs', 'cifs') or (kind == 'lvm' and fmt == 'qcow2')
        taken = set()
        for volname in self._volumes(sid):
            found = pattern.match(volname.rsplit('/', 1)[-1])
            if found and not (by_format and found.group(2) != '.' + fmt):
                taken.add(int(found.group(1)))
        n = next(i for i in range(1025) if i not in taken)
        if n >= 1024:
            raise die("unable to allocate an image name for VM {0} in storage '{1}'".format(vmid, sid))
        name = 'vm-{0}-disk-{1}'.format(vmid, n)
        return '{0}.{1}'.format(name, fmt) if kind in FILE_TYPES or (kind == 'lvm' and fmt == 'qcow2') else name

    def _qm_alloc(self, sid, vmid, fmt, size, linked_from=None):
        """Storage.pm vdisk_alloc (a new volume) or the plugin's clone_image (a linked clone of the base
        `linked_from`, '<base vmid>/<base volname>'): returns (volume id, format), PVE's error otherwise."""
        store = self.storages[sid]
        if not store.get('active', 1):
            raise die("storage '{0}' is not online".format(sid))
        kind = store.get('type', 'dir')
        valid, default = formats_of(store)
        if linked_from:
            volname, fmt = self._clone_image_name(sid, store, vmid, linked_from)
        else:
            fmt = fmt or default
            if kind == 'rbd':
                # RBDPlugin.pm alloc_image takes no format: an RBD image is raw
                fmt = 'raw'
            else:
                self._refuse_format(store, fmt)
            name = self._qm_free_name(sid, vmid, fmt)
            if kind in FILE_TYPES and fmt not in NAME_DIR_FORMATS:
                # Plugin.pm alloc_image (BTRFSPlugin.pm's hands it every format but raw and subvol): the
                # name find_free_diskname gives ends in `.<fmt>`, which parse_name_dir does not accept
                raise die("unable to parse volume filename '{0}'".format(name))
            if fmt == 'subvol' and size and kind in FILE_TYPES:
                # BTRFSPlugin.pm and Plugin.pm alloc_image: no quotas, so a subvolume only without a size
                # (storage.cfg's default `format subvol` reaches here; docs/pve-semantics.md §57.3)
                raise die('btrfs quotas are currently not supported, use an unsized subvolume or a raw file'
                          if kind == 'btrfs' else 'storage does not support subvol quotas')
            volname = '{0}/{1}'.format(vmid, name) if kind in FILE_TYPES else name
            self._check_capacity(sid, store, volname, size, fmt)
            size = alloc_size(store, size)
        vol = {'content': 'images', 'format': fmt, 'size': size, 'vmid': vmid, 'ctime': int(time.time()),
               'written': 0 if linked_from else written_at_alloc(store, fmt, size)}
        if linked_from:
            vol['linked_from'] = linked_from
        store.setdefault('volumes', {})[volname] = vol
        return '{0}:{1}'.format(sid, volname), fmt

    @staticmethod
    def _refuse_format(store, fmt):
        """The plugin's alloc_image refusing a format it cannot make (LVMPlugin.pm alloc_lvm_image: qcow2 only
        with snapshot-as-volume-chain; LvmThinPlugin.pm and ZFSPoolPlugin.pm alloc_image: `unsupported
        format`). PVE's `die` there has no newline, so Perl adds ` at <file> line <n>.`, left out here."""
        valid, _default = formats_of(store)
        if store.get('type') in FILE_TYPES:
            # Plugin.pm alloc_image checks no format list: it names the file (`_qm_alloc`)
            return
        if store.get('type') == 'lvm' and fmt == 'qcow2' and str(store.get('snapshot-as-volume-chain', 0)) != '1':
            raise die('snapshot-as-volume-chain option need to be enabled to use qcow2 format')
        if fmt not in valid:
            raise die("unsupported format '{0}'".format(fmt))

    def _clone_image_name(self, sid, store, vmid, linked_from):
        """clone_image of each plugin (docs/pve-semantics.md §22.3): the name records the base, except on
        lvmthin (a thin snapshot); lvm has no linked clones."""
        kind = store.get('type', 'dir')
        base = linked_from.split('/', 1)[1]
        if kind == 'lvm':
            raise die("can't clone images in lvm storage")
        if kind in FILE_TYPES:
            # Plugin.pm clone_image: always a qcow2 overlay, numbered among the qcow2 names
            return '{0}/{1}/{2}'.format(linked_from, vmid, self._qm_free_name(sid, vmid, 'qcow2')), 'qcow2'
        name = self._qm_free_name(sid, vmid, 'raw')
        if kind in ('rbd', 'zfspool'):
            return '{0}/{1}'.format(base.rsplit('/', 1)[-1], name), 'raw'
        return name, 'raw'

    def _check_capacity(self, sid, store, volname, size, fmt='raw'):
        """Where allocation itself needs the space (§22.4): thick LVM (LVMPlugin.pm alloc_lvm_image, which
        compares free bytes with the size in KiB, then lvcreate), non-sparse zvols (ZFSPoolPlugin.pm
        zfs_create_zvol, whole MiB) and files preallocated with falloc or full (qemu-img create fails as
        Plugin.pm alloc_image runs it). Thin storages (lvmthin, rbd, sparse zfs) and sparse files
        over-provision: their allocation does not fail for space."""
        kind = store.get('type')
        _total, _used, free = self._space(store)
        if written_at_alloc(store, fmt, size) > free:
            # PVE::Storage::Common::qemu_img_create runs it with errmsg "unable to create image", so
            # PVE::Tools run_command dies with qemu-img's last stderr line: QEMU block/file-posix.c
            # handle_aiocb_truncate (fallocate, or writing the zeroes of `full`), which a qcow2 image
            # reaches through qcow2_co_create and qcow2_co_truncate, each prepending its words
            what = ('Could not preallocate new data' if preallocation(store, fmt) == 'falloc'
                    else 'Could not write zeros for preallocation')
            through = 'Could not resize image: Failed to resize underlying file: ' if fmt == 'qcow2' else ''
            raise die('unable to create image: qemu-img: {0}: {1}{2}: No space left on device'.format(
                self._volume_path(sid, volname, 'images'), through, what))
        if kind == 'lvm':
            kib = int(math.ceil(size / 1024.0))
            if free < kib:
                raise die('not enough free space ({0} < {1})'.format(free, kib))
            need, have = int(math.ceil(size / float(LVM_EXTENT))), free // LVM_EXTENT
            if need > have:
                vg = store.get('vgname', 'pve')
                raise die('lvcreate \'{0}/{1}\' error:   Volume group "{0}" has insufficient free space '
                          '({2} extents): {3} required.'.format(vg, volname, have, need))
        elif kind == 'zfspool' and str(store.get('sparse', 0)) != '1':
            if int(math.ceil(size / float(MIB))) * MIB > free:
                raise die("zfs error: cannot create '{0}/{1}': out of space".format(store.get('pool', 'rpool'),
                                                                                     volname))

    def _copy_data(self, src_volid, dst_volid):
        """A full copy (QemuServer.pm clone_disk → clone_disk_copy_data → QemuImage.pm convert, `qemu-img convert
        -n` into the volume vdisk_alloc just made) writes the source's data into the target: its `written`
        grows by it. A file storage whose file system cannot hold it fails the copy (qemu-img's write error,
        `copy failed: command ... failed: exit code 1`); thin storages take it (their `used` stops at `total`)."""
        src, dst = self._qm_volume(src_volid), self._qm_volume(dst_volid)
        if src is None or dst is None:
            return
        data = min(int(src.get('written', src.get('size') or 0)), int(dst.get('size') or 0))
        grow = max(data - int(dst.get('written') or 0), 0)
        sid, name = volume_ref(dst_volid)
        store = self.storages[sid]
        if store.get('type') in FILE_TYPES and grow > self._space(store)[2]:
            ssid, sname = volume_ref(src_volid)
            # QemuImage.pm convert: source format and path, target `zeroinit:` (a new file is zero-initialized)
            raise die("copy failed: command '/usr/bin/qemu-img convert -p -n -f {0} -O {1} {2} zeroinit:{3}' "
                      "failed: exit code 1".format(src.get('format') or 'raw', dst.get('format') or 'raw',
                                                    self._volume_path(ssid, sname, 'images'),
                                                    self._volume_path(sid, name, 'images')))
        dst['written'] = int(dst.get('written') or 0) + grow

    def _renamed_volname(self, store, volname, target, name):
        """Each plugin's rename_volume (a disk moved to VM `target` as `name`): a linked clone keeps its base
        part (Plugin.pm `<basevmid>/<basename>/<target>/<name>`, RBDPlugin.pm and ZFSPoolPlugin.pm
        `<basename>/<name>`)."""
        if store.get('type') in FILE_TYPES:
            found = FILE_LINKED.match(volname)
            base = '{0}/{1}/'.format(found.group(1), found.group(2)) if found else ''
            return '{0}{1}/{2}'.format(base, target, name)
        return volname.rsplit('/', 1)[0] + '/' + name if '/' in volname else name

    def _check_grow(self, sid, volname, delta):
        """A resize growing a volume by `delta` bytes, where the storage reserves space: LVMPlugin.pm
        volume_resize (`lvextend`, 4 MiB extents) and ZFSPoolPlugin.pm volume_resize (`zfs set volsize`,
        refused beyond the pool's free space unless sparse); thin and file storages grow without a check."""
        store = self.storages[sid]
        kind = store.get('type')
        free = self._space(store)[2]
        if kind == 'lvm':
            need, have = int(math.ceil(delta / float(LVM_EXTENT))), free // LVM_EXTENT
            if need > have:
                raise die("error resizing volume '/dev/{0}/{1}':   Insufficient free space: {2} extents needed, "
                          "but only {3} available".format(store.get('vgname', 'pve'), volname, need, have))
        elif kind == 'zfspool' and str(store.get('sparse', 0)) != '1' and delta > free:
            raise die("zfs error: cannot set property for '{0}/{1}': size is greater than available space".format(
                store.get('pool', 'rpool'), volname))

    @staticmethod
    def _check_resizable(store, volname):
        """What a plugin cannot resize at all, before it looks at the VM's power state (docs/pve-semantics.md
        §57.2): BTRFSPlugin.pm volume_resize refuses a subvolume (no quotas), Plugin.pm volume_resize (the
        other file storages) every file but `.raw` and `.qcow2`."""
        kind = store.get('type', 'dir')
        if kind == 'btrfs' and volname.endswith('.subvol'):
            raise die('cannot resize subvolume - btrfs quotas are currently not supported')
        if kind in FILE_TYPES and kind != 'btrfs' and not re.search(r'\.(raw|qcow2)$', volname):
            raise die("can't resize this image format")

    def _resize_volume(self, sid, volname, vol, newsize):
        """A volume grown to `newsize` bytes, once `_check_grow` allows it: a preallocated file grows its
        footprint with it (Plugin.pm volume_resize passes preallocation_cmd_opt to qemu-img resize)."""
        store = self.storages[sid]
        self._check_resizable(store, volname)
        self._check_grow(sid, volname, newsize - int(vol.get('size') or 0))
        if 'written' in vol:
            grow = written_at_alloc(store, vol.get('format') or 'raw', newsize - int(vol.get('size') or 0))
            vol['written'] = int(vol['written']) + grow
        vol['size'] = newsize

    def _storage_resource(self, node, name):
        """The storage's /cluster/resources entry with the same figures as its status (disk = used,
        maxdisk = total; pve-manager PVE/API2Tools.pm extract_storage_stats)."""
        item = super()._storage_resource(node, name)
        if item is not None:
            total, used, _avail = self._space(self.storages[name])
            item.update(disk=used, maxdisk=total)
        return item

    def _item(self, name, volname, vol):
        """A storage content entry; on file storages a VM image's `used` is what its file occupies (Plugin.pm
        list_images: file_size_info), its footprint here."""
        item = super()._item(name, volname, vol)
        store = self.storages[name]
        if store.get('type') in FILE_TYPES and vol.get('content') == 'images':
            item['used'] = self._footprint(store, vol)
        return item

    def _parse_volname(self, store, volname):
        """parse_volname of the linked-clone forms, whose owner is the clone, not the base (§22.1, §22.3);
        LVMPlugin.pm and LvmThinPlugin.pm parse_volname first call Plugin.pm parse_lvm_name, and thick LVM
        names no base volume (§57.1)."""
        kind = store.get('type', 'dir')
        if kind in ('lvm', 'lvmthin') and not re.match(r'^[a-z0-9][a-z0-9\-_.]*[a-z0-9]$', volname, re.I):
            raise die("lvm name '{0}' contains illegal characters".format(volname))
        if kind == 'lvm' and not re.match(r'^vm-\d+-\S+$', volname):
            raise die("unable to parse lvm volume name '{0}'".format(volname))
        if kind in LINKED_NAME:
            found = LINKED_NAME[kind].match(volname)
            if not found:
                raise die("unable to parse {0} volume name '{1}'".format('rbd' if kind == 'rbd' else 'zfs', volname))
            return 'images', int(found.group(1)), 'raw'
        found = FILE_LINKED.match(volname) if kind in FILE_TYPES else None
        if found:
            return 'images', int(found.group(3)), parse_name_dir(found.group(4))[1]
        return super()._parse_volname(store, volname)

    def _qm_rename_volume(self, volid):
        """QemuServer.pm template_create: a volume whose storage lacks the 'template' feature stays as it is
        (LVMPlugin.pm volume_has_feature offers none; create_base would die)."""
        sid = volume_ref(volid)[0]
        if sid in self.storages and self.storages[sid].get('type') == 'lvm':
            return volid
        return super()._qm_rename_volume(volid)

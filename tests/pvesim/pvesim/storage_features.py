"""What each storage plugin lets PVE do with a volume: pve-storage's `volume_has_feature` tables.

Sources: pve-storage 9.1.7 src/PVE/Storage.pm `volume_has_feature` (a volume id that names no storage has no
feature), and the `volume_has_feature` of src/PVE/Storage/Plugin.pm (the base class: dir, nfs, cifs, cephfs),
BTRFSPlugin.pm, LVMPlugin.pm, LvmThinPlugin.pm, RBDPlugin.pm, ZFSPoolPlugin.pm, ZFSPlugin.pm, ISCSIPlugin.pm,
ISCSIDirectPlugin.pm, ESXiPlugin.pm and PBSPlugin.pm. Each plugin keys its table by the volume's state, from
`parse_volname`: 'snap' when a snapshot is named, else 'base' for a template's base volume, else 'current'; the
file plugins and LVM key it by the volume's format too. docs/pve-semantics.md §51.1.
"""

from fakepve.qemu import volume_ref
from fakepve.routing import die

from . import drives as d

ALL = 'qcow2 raw vmdk subvol'
# feature -> state -> formats (a space-separated list), or True where the plugin does not look at the format
TABLES = {
    'plugin': {'snapshot': {'current': 'qcow2', 'snap': 'qcow2'},
               'clone': {'base': 'qcow2 raw vmdk'},
               'template': {'current': ALL},
               'copy': {'base': 'qcow2 raw vmdk', 'current': 'qcow2 raw vmdk', 'snap': 'qcow2'},
               'rename': {'current': 'qcow2 raw vmdk'}},
    'btrfs': {'snapshot': {'current': 'qcow2 raw subvol', 'snap': 'qcow2 raw subvol'},
              'clone': {'base': ALL, 'current': 'raw', 'snap': 'raw'},
              'template': {'current': ALL},
              'copy': {'base': ALL, 'current': ALL, 'snap': 'qcow2 raw subvol'},
              'rename': {'current': 'qcow2 raw vmdk'}},
    # LVMPlugin.pm: its 'template' and 'clone' entries are commented out
    'lvm': {'copy': {'base': 'qcow2 raw', 'current': 'qcow2 raw', 'snap': 'qcow2'},
            'rename': {'current': 'qcow2 raw'},
            'snapshot': {'current': 'qcow2', 'snap': 'qcow2'}},
    'lvmthin': {'snapshot': {'current': True}, 'clone': {'base': True, 'snap': True}, 'template': {'current': True},
                'copy': {'base': True, 'current': True, 'snap': True}, 'rename': {'current': True}},
    'rbd': {'snapshot': {'current': True, 'snap': True}, 'clone': {'base': True, 'snap': True},
            'template': {'current': True}, 'copy': {'base': True, 'current': True, 'snap': True},
            'rename': {'current': True}},
    'zfspool': {'snapshot': {'current': True, 'snap': True}, 'clone': {'base': True}, 'template': {'current': True},
                'copy': {'base': True, 'current': True}, 'rename': {'current': True}},
    # ZFSPlugin.pm (ZFS over iSCSI): ZFSPoolPlugin.pm's table without 'rename'
    'zfs': {'snapshot': {'current': True, 'snap': True}, 'clone': {'base': True}, 'template': {'current': True},
            'copy': {'base': True, 'current': True}},
    'iscsi': {'copy': {'current': True}},
    'iscsidirect': {'copy': {'current': True}},
    'pbs': {},
}
PLUGIN_TYPES = ('dir', 'nfs', 'cifs', 'cephfs', 'glusterfs')


def has_feature(kind, feature, volname, fmt, snap=False):
    """The plugin's answer for a volume `volname` in format `fmt` on a storage of type `kind`; None for a type
    pve-storage does not ship."""
    if kind == 'esxi':  # ESXiPlugin.pm: a copy (an import), never of a snapshot nor of the .vmx
        return feature == 'copy' and not snap and not volname.endswith('.vmx')
    table = TABLES.get('plugin' if kind in PLUGIN_TYPES else kind)
    if table is None:
        return None
    state = 'snap' if snap else 'base' if volname.split('/')[-1].startswith('base-') else 'current'
    offered = table.get(feature, {}).get(state)
    if offered is True:
        return True
    return bool(offered) and (fmt or 'raw') in offered.split()


class StorageFeaturesMixin:
    """Storage.pm volume_has_feature on the simulated storages."""

    def volume_has_feature(self, feature, volid, snap=False):
        """Storage.pm volume_has_feature: the storage's plugin decides; a path has no feature."""
        sid, name = volume_ref(volid)
        store = self.storages.get(sid) if sid else None
        if store is None:
            return False
        fmt = (self._qm_volume(volid) or {}).get('format')
        if fmt is None:  # parse_volname: a file's extension, LVM's `.qcow2`
            ext = name.rsplit('.', 1)[-1] if '.' in name.split('/')[-1] else 'raw'
            fmt = ext if ext in ALL.split() else 'raw'
        return has_feature(store.get('type', 'dir'), feature, name, fmt, snap) is not False

    def _clone_features(self, v, user, src):
        """Qemu.pm clone_vm, once the checks before its drive loop pass (the declared privileges, the lock, the
        snapshot, the linked-clone parameters, $check_storage_access_clone's Datastore.AllocateSpace on each
        drive's storage, the config file): each drive of the source (of its snapshot) in the keys' order, a
        CD-ROM aside, needs the 'copy' feature when it is copied (a full clone, a cloud-init drive, tpmstate0)
        and the 'clone' feature when it is linked (fakepve's own clone checks only that a linked volume is a
        base)."""
        snapname, storage, newid = v.get('snapname'), v.get('storage'), int(v['newid'])
        if src is None or src.node != v['node'] or src.lock or (snapname and snapname not in src.snapshots) \
                or self._qm_taken(newid):
            return
        full = v.get('full')
        full = not src.template if full is None else str(full) in ('1', 'True', 'true')
        if (storage or v.get('format')) and not full:
            return
        self._qm_check_pool(v.get('pool'))
        self._qm_perm(user, newid, v.get('pool'), 'VM.Allocate')
        conf = src.snapshots[snapname] if snapname else src.config
        drives = [(key, conf[key]) for key in sorted(conf) if d.is_drive(key) and not d.UNUSED_KEY.match(key)
                  and (not d.is_cdrom(conf[key]) or d.is_cloudinit(conf[key]))]
        for _key, value in drives:
            sid = volume_ref(d.parse_drive(value)[0] or 'none')[0]
            if sid is not None:
                self.require(user, '/storage/' + (storage or sid), 'Datastore.AllocateSpace')
        for key, value in drives:
            volume = d.parse_drive(value)[0]
            if volume_ref(volume or 'none')[0] not in self.storages:
                continue
            copy = full or d.is_cloudinit(value) or key == 'tpmstate0'
            if not self.volume_has_feature('copy' if copy else 'clone', volume, bool(snapname)):
                raise die("{0} clone feature is not supported for {1}'{2}' ({3})".format(
                    'Full' if copy else 'Linked', 'a snapshot of ' if snapname else '', volume, key))

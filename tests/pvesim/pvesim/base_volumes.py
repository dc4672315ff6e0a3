"""Freeing a volume as pve-storage does: a base volume a linked clone still uses is not freed, on every path
that frees one (docs/pve-semantics.md §32.2).

Source: pve-storage src/PVE/Storage.pm `vdisk_free` ("LVM-thin allows deletion of still referenced base
volumes!": it asks `volume_is_base_and_used` first, which lists the storage's images and looks for one whose
parsed name has this volume as its base) and qemu-server's callers: QemuServer.pm `try_deallocate_drive`
(an `unusedN` delete or a forced drive delete), `vmconfig_apply_pending` (which turns the error of a forced
delete into `unable to apply pending change <key> : <error>` and keeps the pending delete), and Qemu.pm
`move_vm_disk` (`delete`: the free is in an eval, its error only a warning).
"""

from fakepve.qemu import volume_ref
from fakepve.routing import die


class BaseVolumesMixin:
    """`_qm_free` (fakepve's vdisk_free) refuses a base volume in use."""

    def _base_volume_in_use(self, volid):
        """Storage.pm volume_is_base_and_used: a volume the storage's `list_images` lists names this one as
        its base when the plugin's `parse_volname` takes it apart: `<base>/<name>` on rbd and zfspool,
        `<base vmid>/<base file>/<vmid>/<file>` on file storages (Plugin.pm list_images names a qcow2
        overlay after its backing file). It asks the listing, not the configs: a clone's file that is gone
        from a file storage (list_images globs the image directory) no longer holds the base. A thin LVM
        clone is a plain `vm-<vmid>-disk-<n>` (LvmThinPlugin.pm clone_image, a thin snapshot) whose
        parse_volname names no base, so on lvmthin a base is never in use: PVE frees it, and the clone's
        snapshot lives on."""
        sid, name = volume_ref(volid or '')
        store = self.storages.get(sid) if sid else None
        if store is None or not name.split('/')[-1].startswith('base-'):
            return False
        return any(other != name and other.startswith(name + '/') for other in self._volumes(sid))

    def _qm_free(self, volid):
        if self._base_volume_in_use(volid):
            raise die("base volume '{0}' is still in use by linked clones".format(volume_ref(volid)[1]))
        return super()._qm_free(volid)

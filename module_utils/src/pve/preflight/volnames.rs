//! What a volume's storage plugin refuses by the volume's name or format, before the write's handler looks any further: a name it cannot parse, a resize of a format it cannot resize, a new volume in a format it cannot make (docs/pve-semantics.md §57).

use super::{refuse, Preflight};
use crate::error::Result;
use crate::pve::values::devices::attached_format;
use crate::pve::volume::Volume;

impl Preflight<'_> {
    /// The plugin of `volid`'s storage parses its name (`StorageConfig::refuses_volname`):
    /// pve-storage `Storage.pm` `check_volume_access`, which qemu-server's `$check_storage_access`
    /// calls for every drive naming an existing volume, and qemu-server `Drive.pm`
    /// `checked_parse_volname` (an `import-from` source) die with the plugin's words before PVE
    /// looks for the volume; as `option`'s error. A storage this user cannot see, or whose type's
    /// parser is not known here, is left to PVE. §57.1.
    /// Then qemu-server's `checked_parse_volname` (Qemu.pm `create_disks` for an attached volume,
    /// `$check_storage_access` for an `import-from` source) takes only QEMU's formats
    /// (`values::devices::attached_format`, §62.3; an `import/` volume's as a source only:
    /// `Preflight::import_source`).
    pub fn volname(&self, volid: &str, option: &str) -> Result<()> {
        self.parsed_volname(volid, option, false)
    }

    /// `source`: `volname` of an `import-from` source, the first of `Preflight::import_source`'s checks.
    pub(super) fn parsed_volname(&self, volid: &str, option: &str, source: bool) -> Result<()> {
        let Some(volume) = Volume::parse(volid) else { return Ok(()) };
        let storages = self.storages()?;
        let scfg = storages.iter().find(|s| s.storage == volume.storage);
        let format = || scfg.and_then(|s| attached_format(volid, s, source));
        match scfg.and_then(|s| s.refuses_volname(volume.volname)).or_else(format) {
            Some(why) => Err(refuse(option, why)),
            None => Ok(()),
        }
    }

    /// The plugin of `volid`'s storage can resize it at all (`StorageConfig::refuses_resize`:
    /// pve-storage `Plugin.pm` / `BTRFSPlugin.pm` `volume_resize`, run by qemu-server's
    /// `resize_vm` task), else its words after `context`; a drive whose file is no volume id (a
    /// passed-through device's path) fails first, in resize_vm's `parse_volname` (Plugin.pm
    /// `parse_volume_id`). §57.2.
    pub fn resizable(&self, volid: &str, context: &str) -> Result<()> {
        let Some(volume) = Volume::parse(volid) else {
            return Err(refuse(context, format!("unable to parse volume ID '{volid}'")));
        };
        let storages = self.storages()?;
        let scfg = storages.iter().find(|s| s.storage == volume.storage);
        match scfg.and_then(|s| s.refuses_resize(volume.volname)) {
            Some(why) => Err(refuse(context, why)),
            None => Ok(()),
        }
    }

    /// A new volume of `bytes` on `storage` in `format` (`None`: storage.cfg's default), named
    /// `volid` as predicted (`None`: not known), as Qemu.pm `create_disks` hands it to Storage.pm
    /// `vdisk_alloc`: the storage's plugin refuses a format it cannot make, a file name
    /// `parse_name_dir` cannot parse or a sized subvolume (`StorageConfig::refuses_new_volume`,
    /// §42.1, §57.3), after `during`, as `option`'s error. A storage storage.cfg does not show is
    /// left to `storage`'s check.
    pub fn new_volume(
        &self,
        storage: &str,
        volid: Option<&str>,
        format: Option<&str>,
        bytes: u64,
        option: &str,
        during: &str,
    ) -> Result<()> {
        let storages = self.storages()?;
        let scfg = storages.iter().find(|s| s.storage == storage);
        match scfg.and_then(|s| {
            s.refuses_new_volume(format, bytes, volid.and_then(|v| v.split_once(':')).map(|(_, name)| name))
        }) {
            Some(why) => Err(refuse(option, format!("{during}{why}"))),
            None => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    fn text(r: Result<()>) -> String {
        r.err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn names_resizes_and_new_volumes_are_refused_in_the_plugins_words_from_storage_cfg_alone() {
        let api = ScriptedApi::default();
        api.answer(
            Method::Get,
            "/storage",
            Ok(json!([
                {"storage": "thin", "type": "lvmthin", "content": "images"},
                {"storage": "files", "type": "dir", "content": "images,iso", "format": "subvol"},
            ])),
        );
        let pf = Preflight::new(&api);
        assert_eq!(text(pf.volname("thin:foo", "scsi1")), "scsi1: unable to parse lvm volume name 'foo'");
        assert!(pf.volname("thin:vm-100-disk-0", "scsi1").is_ok());
        // a storage storage.cfg does not show is left to the storage check
        assert!(pf.volname("gone:foo", "scsi1").is_ok());
        // checked_parse_volname: a container's subvolume is no QEMU image; an import volume only as a source
        assert_eq!(
            text(pf.volname("files:100/subvol-100-disk-0.subvol", "scsi1")),
            "scsi1: volume 'files:100/subvol-100-disk-0.subvol' - not a QEMU image format 'subvol'"
        );
        assert!(pf.volname("files:import/x.ova", "scsi1").is_ok());
        assert_eq!(
            text(pf.parsed_volname("files:import/x.ova", "import_from", true)),
            "import_from: volume 'files:import/x.ova' - not a QEMU image format 'ova'"
        );
        assert!(pf.parsed_volname("files:import/x.ova/disk1.vmdk", "import_from", true).is_ok());
        assert!(pf.parsed_volname("files:import/x.qcow2", "import_from", true).is_ok());
        assert_eq!(
            text(pf.resizable("files:100/vm-100-disk-0.vmdk", "resizing scsi1")),
            "resizing scsi1: can't resize this image format"
        );
        assert_eq!(
            text(pf.resizable("/dev/sdb", "resizing scsi1")),
            "resizing scsi1: unable to parse volume ID '/dev/sdb'"
        );
        assert!(pf.resizable("thin:vm-100-disk-0", "resizing scsi1").is_ok());
        assert_eq!(
            text(pf.new_volume("files", None, None, 1 << 30, "storage", "")),
            "storage: storage does not support subvol quotas"
        );
        assert!(pf.new_volume("files", None, Some("raw"), 1 << 30, "format", "").is_ok());
        // storage.cfg is read once
        assert_eq!(api.calls.borrow().len(), 1);
    }
}

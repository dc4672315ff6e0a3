//! What storage.cfg decides of a drive before the create or config handler takes it: an `import-from` OVA disk is extracted onto a storage that takes images and is file based; an existing volume's `format=` is its own (Qemu.pm `$check_storage_access`, `create_disks`; docs/pve-semantics.md §63.3, §63.4).

use super::{refuse, Content, Preflight};
use crate::error::Result;
use crate::pve::devices::Disk;
use crate::pve::resources::cluster_vms;
use crate::pve::storage::is_file_storage;
use crate::pve::volume::{content_and_owner, Volume, VolumeKind};

/// Whether a source is a disk inside an OVA archive of an import storage (`import/<name>.ova/<disk>`),
/// which QemuServer/Helpers.pm `needs_extraction` extracts before the copy (pve-storage Plugin.pm
/// `parse_volname`: content `import`, format `ova+<fmt>`).
pub fn in_ova(volname: &str) -> bool {
    volname
        .strip_prefix("import/")
        .and_then(|r| r.split_once(".ova/"))
        .is_some_and(|(a, d)| !a.is_empty() && !d.is_empty())
}

impl Preflight<'_> {
    /// A new drive `disk` on storage `sid` (`STORAGE:N`, or the default storage): the storage
    /// (`Preflight::storage`), then its `import-from` source (`import_source`).
    pub fn new_drive(&self, node: &str, sid: &str, disk: &Disk, option: &str) -> Result<()> {
        self.storage(node, sid, Content::Images, option)?;
        match disk.other.get("import-from") {
            Some(source) => self.import_source(node, &disk.key, source, option),
            None => Ok(()),
        }
    }

    /// Every check of an `import-from` `source` for drive `key` on `node`, in PVE's order (§63.3,
    /// §70). Qemu.pm `$check_storage_access` first: `checked_parse_volname` (the plugin's parse
    /// and QEMU's formats, `Preflight::parsed_volname`, as `option`'s error, §57.1, §62.3); then
    /// a disk inside an OVA is extracted, onto `import-working-storage` (the modules never send
    /// it) or else the source's own storage, which must take images and be file based, else a
    /// parameter error on `key` (a storage this user cannot see is left to PVE). Then, in the
    /// task, `create_disks`' `$import_from_volid`: an image whose owner VM is in the cluster
    /// (`/cluster/resources`, read only then) must be on `node`, else `owner VM <n> not on local
    /// node` (§63.6).
    pub fn import_source(&self, node: &str, key: &str, source: &str, option: &str) -> Result<()> {
        self.parsed_volname(source, option, true)?;
        if let Some(volume) = Volume::parse(source).filter(|v| in_ova(v.volname)) {
            let storages = self.storages()?;
            let scfg = storages.iter().find(|s| s.storage == volume.storage);
            if let Some(scfg) = scfg.filter(|s| !s.content.contains("images") || !is_file_storage(&s.plugintype)) {
                let words = "does not support 'images' content type or is not file based.";
                return Err(refuse(key, format!("import working storage '{}' {words}", scfg.storage)));
            }
        }
        if let Some(owner) = Volume::parse(source).and(content_and_owner(source).1) {
            if cluster_vms(self.api)?.iter().any(|vm| vm.vmid == owner && vm.node != node) {
                let words = format!("cannot import from '{source}' - owner VM {owner} not on local node");
                return Err(refuse(key, words));
            }
        }
        Ok(())
    }
}

impl Preflight<'_> {
    /// A drive `key` = `value` naming an existing volume: its name parses (`Preflight::volname`,
    /// §57.1), then Qemu.pm `create_disks` (and Blockdev.pm `generate_format_blockdev` at each
    /// start) wants a `format=` to be the volume's own format (`checked_parse_volname`: a file
    /// storage's extension, an LVM volume chain's `.qcow2`, raw on the other block storages), else
    /// `drive '<key>' - volume '<volid>' - 'format=<f>' option different from storage format
    /// '<g>'`. A storage whose type is not known here is left to PVE.
    pub fn existing_drive(&self, key: &str, value: &str, option: &str) -> Result<()> {
        let Some(file) = Disk::parse(key, value).and_then(|d| d.volume) else { return Ok(()) };
        self.volname(&file, option)?;
        let explicit = value.split(',').find_map(|p| p.strip_prefix("format="));
        let Some((explicit, volume)) = explicit.zip(Volume::parse(&file)) else { return Ok(()) };
        if volume.kind != VolumeKind::Image {
            return Ok(());
        }
        let storages = self.storages()?;
        let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { return Ok(()) };
        let format = match scfg.plugintype.as_str() {
            t if is_file_storage(t) || t == "lvm" => volume.format(),
            "lvmthin" | "zfspool" | "rbd" => "raw",
            _ => return Ok(()),
        };
        if explicit == format {
            return Ok(());
        }
        let words = format!("'format={explicit}' option different from storage format '{format}'");
        Err(refuse(option, format!("drive '{key}' - volume '{file}' - {words}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    fn cluster() -> ScriptedApi {
        let api = ScriptedApi::default();
        for _ in 0..3 {
            // one read per import of an owned image
            api.answer(Method::Get, "/cluster/resources", Ok(json!([{"vmid": 750, "node": "pve2", "type": "qemu"}])));
        }
        api.answer(
            Method::Get,
            "/storage",
            Ok(json!([
                {"storage": "local", "type": "dir", "content": "iso,import"},
                {"storage": "work", "type": "dir", "content": "images,import"},
                {"storage": "local-lvm", "type": "lvmthin", "content": "images"},
                {"storage": "vmdata", "type": "dir", "content": "images"},
                {"storage": "shared", "type": "nfs", "content": "images"},
            ])),
        );
        api
    }

    #[test]
    fn a_disk_inside_an_ova_is_extracted() {
        assert!(in_ova("import/appliance.ova/disk1.vmdk"));
        assert!(!in_ova("import/disk1.qcow2"));
        assert!(!in_ova("import/.ova/disk1.vmdk"));
        assert!(!in_ova("iso/appliance.ova/disk1.vmdk"));
    }

    #[test]
    fn an_import_source_needs_a_working_storage_and_its_owner_on_this_node() {
        let api = cluster();
        let pf = Preflight::new(&api);
        let err = pf.import_source("pve1", "scsi1", "local:import/a.ova/d.vmdk", "scsi1").unwrap_err().to_string();
        let words = "import working storage 'local' does not support 'images' content type or is not file based.";
        assert_eq!(err, format!("scsi1: {words}"));
        assert!(pf.import_source("pve1", "scsi1", "work:import/a.ova/d.vmdk", "scsi1").is_ok());
        assert!(pf.import_source("pve1", "scsi1", "local:import/d.qcow2", "scsi1").is_ok(), "no extraction");
        let owned = "shared:750/vm-750-disk-0.qcow2";
        let err = pf.import_source("pve1", "scsi1", owned, "scsi1").unwrap_err().to_string();
        assert_eq!(err, format!("scsi1: cannot import from '{owned}' - owner VM 750 not on local node"));
        assert!(pf.import_source("pve2", "scsi1", owned, "scsi1").is_ok());
        assert!(pf.import_source("pve1", "scsi1", "shared:751/vm-751-disk-0.qcow2", "scsi1").is_ok(), "no such VM");
    }

    /// Two refusals of one source at once: `$check_storage_access`' format check comes before
    /// `create_disks`' owner check (§70).
    #[test]
    fn an_import_source_refused_twice_gives_pve_s_first_refusal() {
        let api = cluster();
        let pf = Preflight::new(&api);
        let owned = "vmdata:750/subvol-750-disk-0.subvol";
        let err = pf.import_source("pve1", "scsi1", owned, "import_from").unwrap_err().to_string();
        assert_eq!(err, format!("import_from: volume '{owned}' - not a QEMU image format 'subvol'"));
        let owned_raw = "vmdata:750/vm-750-disk-0.raw";
        let err = pf.import_source("pve1", "scsi1", owned_raw, "import_from").unwrap_err().to_string();
        assert!(err.ends_with("owner VM 750 not on local node"), "{err}");
    }

    #[test]
    fn an_existing_volume_takes_its_own_format_only() {
        let api = cluster();
        let pf = Preflight::new(&api);
        let err = pf.existing_drive("scsi1", "local-lvm:vm-100-disk-1,format=qcow2", "scsi.scsi1").unwrap_err();
        let words = "'format=qcow2' option different from storage format 'raw'";
        assert_eq!(err.to_string(), format!("scsi.scsi1: drive 'scsi1' - volume 'local-lvm:vm-100-disk-1' - {words}"));
        assert!(pf.existing_drive("scsi1", "local-lvm:vm-100-disk-1,format=raw", "o").is_ok());
        assert!(pf.existing_drive("scsi1", "vmdata:100/vm-100-disk-1.qcow2,format=qcow2", "o").is_ok());
        assert!(pf.existing_drive("scsi1", "vmdata:100/vm-100-disk-1.qcow2,format=raw", "o").is_err());
        assert!(pf.existing_drive("scsi1", "vmdata:100/vm-100-disk-1.qcow2", "o").is_ok(), "no format=");
    }
}

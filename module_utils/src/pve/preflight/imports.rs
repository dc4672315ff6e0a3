//! What storage.cfg decides of a drive before the create or config handler takes it: an `import-from` source's format and privileges in PVE's order, an OVA disk extracted onto a storage that takes images and is file based; an existing volume's `format=` is its own (Qemu.pm `$check_storage_access`, `create_disks`; docs/pve-semantics.md §63.3, §63.4).

use super::{refuse, Content, Preflight};
use crate::error::Result;
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::permissions::{self, Privileges};
use crate::pve::request::Form;
use crate::pve::resources::cluster_vms;
use crate::pve::storage::is_file_storage;
use crate::pve::volume::{content_and_owner, in_ova, Volume, VolumeKind};

impl Preflight<'_> {
    /// A new drive `disk` on storage `sid` (`STORAGE:N`, or the default storage): the storage
    /// (`Preflight::storage`), then its `import-from` source's owner (`import_source`).
    pub fn new_drive(&self, node: &str, sid: &str, disk: &Disk, option: &str) -> Result<()> {
        self.storage(node, sid, Content::Images, option)?;
        match disk.other.get("import-from") {
            Some(source) => self.import_source(node, &disk.key, source),
            None => Ok(()),
        }
    }

    /// Qemu.pm `$check_storage_access` on each drive of `form` with an `import-from` source, in
    /// its order (§63.3): the drive's own privileges (a new disk's `Datastore.AllocateSpace` on its
    /// storage, or `default_storage`'s), then the source: `checked_parse_volname` (the plugin's
    /// parse and QEMU's formats, `Preflight::parsed_volname`, as `option(key)`'s error, §57.1,
    /// §62.3), a disk inside an OVA extracted onto the source's own storage (the modules never send
    /// `import-working-storage`), which must take images and be file based, else a parameter error
    /// on `key` (a storage this user cannot see is left to PVE), and only then the source's
    /// privileges (`permissions::import_from`). A create runs this before its options' privileges
    /// (`$check_vm_modify_config_perm`), an update after them; `request` names the write.
    pub fn import_sources(
        &self,
        privileges: &Privileges,
        vmid: u64,
        form: &Form,
        default_storage: Option<&str>,
        (request, option): (&str, &dyn Fn(&str) -> String),
    ) -> Result<()> {
        for (key, value) in form.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")) {
            let Some(source) = Disk::parse(key, value).and_then(|d| d.other.get("import-from").cloned()) else {
                continue;
            };
            privileges.require_for(&permissions::storage_access(vmid, key, value, default_storage), request)?;
            self.parsed_volname(&source, &option(key), true)?;
            if let Some(volume) = Volume::parse(&source).filter(|v| in_ova(v.volname)) {
                let storages = self.storages()?;
                let scfg = storages.iter().find(|s| s.storage == volume.storage);
                if let Some(scfg) = scfg.filter(|s| !s.content.contains("images") || !is_file_storage(&s.plugintype)) {
                    let words = "does not support 'images' content type or is not file based.";
                    return Err(refuse(key, format!("import working storage '{}' {words}", scfg.storage)));
                }
            }
            privileges.require_for(&permissions::import_from(vmid, &source), request)?;
        }
        Ok(())
    }

    /// What the task's `create_disks` (`$import_from_volid`) checks of an `import-from` `source`
    /// for drive `key` on `node`, after `import_sources`: an image whose owner VM is in the
    /// cluster (`/cluster/resources`, read only then) must be on `node`, else `owner VM <n> not
    /// on local node` (§63.6, §70).
    pub fn import_source(&self, node: &str, key: &str, source: &str) -> Result<()> {
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
    use crate::pve::request::{form, Method};
    use serde_json::{json, Value};

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

    /// `import_sources` for one drive `local-lvm:0,import-from=<source>`, as `who` (their
    /// privileges as `/access/permissions` lists them).
    fn sources(who: Value, source: &str) -> Result<()> {
        let api = cluster();
        api.answer(Method::Get, "/access/permissions", Ok(who));
        let (pf, p) = (Preflight::new(&api), Privileges::new(&api, "ops@pve!t"));
        let set = form([("scsi1", format!("local-lvm:0,import-from={source}"))]);
        pf.import_sources(&p, 100, &set, None, ("POST /nodes/pve1/qemu/100/config (scsi1)", &|_| "import_from".into()))
    }

    #[test]
    fn an_import_source_needs_a_working_storage_and_its_owner_on_this_node() {
        let every = json!({"/": {"Datastore.Allocate": 1, "Datastore.AllocateSpace": 1, "VM.Clone": 1}});
        let err = sources(every.clone(), "local:import/a.ova/d.vmdk").unwrap_err().to_string();
        let words = "import working storage 'local' does not support 'images' content type or is not file based.";
        assert_eq!(err, format!("scsi1: {words}"));
        assert!(sources(every.clone(), "work:import/a.ova/d.vmdk").is_ok());
        assert!(sources(every, "local:import/d.qcow2").is_ok(), "no extraction");
        let api = cluster();
        let pf = Preflight::new(&api);
        let owned = "shared:750/vm-750-disk-0.qcow2";
        let err = pf.import_source("pve1", "scsi1", owned).unwrap_err().to_string();
        assert_eq!(err, format!("scsi1: cannot import from '{owned}' - owner VM 750 not on local node"));
        assert!(pf.import_source("pve2", "scsi1", owned).is_ok());
        assert!(pf.import_source("pve1", "scsi1", "shared:751/vm-751-disk-0.qcow2").is_ok(), "no such VM");
    }

    /// A source with a bad format and a missing privilege at once (§63.3): Qemu.pm
    /// `$check_storage_access` weighs the new disk's storage, then the source's format
    /// (`checked_parse_volname`), then the source's own privileges.
    #[test]
    fn an_import_source_s_format_comes_between_the_disk_s_storage_and_the_source_s_privileges() {
        let (subvol, raw) = ("vmdata:750/subvol-750-disk-0.subvol", "vmdata:750/vm-750-disk-0.raw");
        let (ova, qcow2) = ("local:import/x.ova", "local:import/x.qcow2");
        let bad = |s: &str| {
            format!("import_from: volume '{s}' - not a QEMU image format '{}'", s.rsplit('.').next().unwrap_or(""))
        };
        let space = "(/storage/local-lvm, Datastore.AllocateSpace)";
        let clone = "(/vms/750, VM.Clone)";
        let import = "(/storage/local, Datastore.AllocateSpace|Datastore.Audit)";
        let storage = json!({"Datastore.AllocateSpace": 1, "Datastore.Audit": 1});
        let no_space = json!({"/storage": {"Datastore.Audit": 1}, "/vms": {"VM.Clone": 1}});
        let no_clone = json!({"/storage": storage.clone(), "/vms": {"VM.Audit": 1}});
        let no_import = json!({"/storage/local-lvm": storage.clone(), "/vms": {"VM.Clone": 1}});
        let every = json!({"/storage": storage, "/vms": {"VM.Clone": 1}});
        let cases: [(&Value, &str, Option<String>); 10] = [
            (&no_space, subvol, Some(space.into())),
            (&no_space, raw, Some(space.into())),
            (&no_clone, subvol, Some(bad(subvol))),
            (&no_clone, raw, Some(clone.into())),
            (&no_import, ova, Some(bad(ova))),
            (&no_import, qcow2, Some(import.into())),
            (&every, subvol, Some(bad(subvol))),
            (&every, ova, Some(bad(ova))),
            (&every, raw, None),
            (&every, qcow2, None),
        ];
        for (who, source, want) in cases {
            let got = sources(who.clone(), source).err().map(|e| e.to_string());
            match (&got, &want) {
                (Some(got), Some(want)) if got.contains(want.as_str()) => {}
                (None, None) => {}
                _ => panic!("{who} with {source}: got {got:?}, want {want:?}"),
            }
        }
    }

    /// Two refusals of one source at once: `$check_storage_access`' format check comes before
    /// `create_disks`' owner check (§70).
    #[test]
    fn an_import_source_refused_twice_gives_pve_s_first_refusal() {
        let every = json!({"/": {"Datastore.Allocate": 1, "Datastore.AllocateSpace": 1, "VM.Clone": 1}});
        let owned = "vmdata:750/subvol-750-disk-0.subvol";
        let err = sources(every, owned).unwrap_err().to_string();
        assert_eq!(err, format!("import_from: volume '{owned}' - not a QEMU image format 'subvol'"));
        let api = cluster();
        let pf = Preflight::new(&api);
        let err = pf.import_source("pve1", "scsi1", "vmdata:750/vm-750-disk-0.raw").unwrap_err().to_string();
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

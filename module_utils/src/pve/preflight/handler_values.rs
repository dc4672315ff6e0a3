//! What create_vm and update_vm_api refuse of a value by storage.cfg and a storage's content: a hook script snippet that does not exist (GuestHelpers.pm `check_hookscript`), SCSI `product`/`vendor` on an iSCSI volume of a VM pinned below machine 4.1 (Qemu.pm `assert_scsi_feature_compatibility`; docs/pve-semantics.md §67).

use std::collections::BTreeMap;

use super::{enabled, Preflight};
use crate::error::{Error, Result};
use crate::pve::devices::{parse_new_disk, Disk};
use crate::pve::machine::pinned;
use crate::pve::permissions::{lists_volume, Privileges};
use crate::pve::storage::is_file_storage;
use crate::pve::values;
use crate::pve::volume::{content_and_owner, Volume, VolumeKind};

/// The storage types whose `path` is an `iscsi://` URL (pve-storage ISCSIDirectPlugin.pm and
/// ZFSPlugin.pm, ZFS over iSCSI, `path`), which Drive.pm `get_scsi_device_type` passes through
/// as `scsi-generic` before machine version 4.1.
const ISCSI_URL_TYPES: &[&str] = &["iscsidirect", "zfs"];

impl Preflight<'_> {
    /// pve-guest-common GuestHelpers.pm `check_hookscript` on the `hookscript` of a config write
    /// on `node` (Qemu.pm `update_vm_api`, a parameter error on the key, before the root-only
    /// privilege of `$check_vm_modify_config_perm`): a snippet (`values::hookscript`), then the
    /// file must exist (`-f $path`), which the storage's content listing tells (`volumes_on`).
    /// The listing shows snippets only on a file storage enabled on `node` whose `content` has
    /// `snippets`, and only to a user with `Datastore.Allocate` on it (Storage.pm
    /// `check_volume_access`); otherwise the run warns that PVE may refuse it (§67.1). That the
    /// file is executable is the node's (R-config-94).
    pub fn hookscript(&self, privileges: &Privileges, node: &str, volid: &str) -> Result<()> {
        let storages = self.storages()?;
        if let Some(words) = values::hookscript(volid, &storages) {
            return Err(Error::failed(words));
        }
        let Some(volume) = Volume::parse(volid).filter(|_| content_and_owner(volid).0 == "snippets") else {
            return Ok(());
        };
        let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { return Ok(()) };
        let sid = &scfg.storage;
        let why = if !is_file_storage(&scfg.plugintype) {
            return Ok(()); // its parser refuses a snippet's name (R-any-04's family), not this rule
        } else if !scfg.content.contains("snippets") || enabled(&storages, sid, node, "").is_err() {
            format!(
                "storage '{sid}' lists no snippets on node {node} (its content has none, or it is not enabled there)"
            )
        } else if !lists_volume(privileges, sid, "snippets", None)? {
            format!("this user's listing of storage '{sid}' shows no snippets (Datastore.Allocate on it would)")
        } else if self.volumes_on(node, sid)?.contains_key(volid) {
            return Ok(());
        } else {
            return Err(Error::failed(format!("hookscript: {}", missing_script(volid))));
        };
        let refusal = missing_script(volid);
        privileges.not_known(format!(
            "whether hook script '{volid}' exists is not known: {why}; PVE may refuse it: hookscript: {refusal}"
        ));
        Ok(())
    }

    /// Qemu.pm `assert_scsi_feature_compatibility` on a `scsiN` drive `key` = `value` of a create
    /// (`config`: the request) or a config update (`config`: the VM's applied config, as
    /// `get_vm_machine` reads it): Drive.pm `get_scsi_device_type` makes an existing volume whose
    /// path is an `iscsi://` URL `generic` when the `machine` is pinned below 4.1 (an unpinned
    /// one runs at the node's QEMU; a CD-ROM or cloud-init drive is `cd`, a new disk `hd`), and
    /// such a device takes no `product` or `vendor`. A `/dev` path is the node's (R-config-186).
    pub fn scsi_identity(&self, key: &str, value: &str, config: &BTreeMap<String, String>) -> Result<()> {
        let Some(disk) = Disk::parse(key, value).filter(|d| d.bus == "scsi" && d.media != "cdrom") else {
            return Ok(());
        };
        let Some(what) = ["product", "vendor"].into_iter().find(|k| disk.other.contains_key(*k)) else { return Ok(()) };
        let file = disk.volume.as_deref().unwrap_or_default();
        let volume = Volume::parse(file).filter(|v| v.kind != VolumeKind::CloudInit && parse_new_disk(file).is_none());
        let Some(volume) = volume.filter(|_| pinned(config).is_some_and(|v| v < (4, 1, 0))) else {
            return Ok(());
        };
        let storages = self.storages()?;
        if !storages.iter().any(|s| s.storage == volume.storage && ISCSI_URL_TYPES.contains(&s.plugintype.as_str())) {
            return Ok(());
        }
        Err(Error::failed(format!(
            "{key}: Passing of {what} information is only supported for 'scsi-hd' and 'scsi-cd' devices (e.g. not pass-through)."
        )))
    }
}

/// check_hookscript's words for a snippet that is not there.
fn missing_script(volid: &str) -> String {
    format!("script '{volid}' does not exist")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    fn cluster(privs: serde_json::Value) -> ScriptedApi {
        let api = ScriptedApi::default();
        api.answer(
            Method::Get,
            "/storage",
            Ok(json!([
                {"storage": "local", "type": "dir", "content": "iso,snippets"},
                {"storage": "isos", "type": "dir", "content": "iso"},
                {"storage": "ziscsi", "type": "zfs", "content": "images"},
                {"storage": "direct", "type": "iscsidirect", "content": "images"},
                {"storage": "local-lvm", "type": "lvmthin", "content": "images"},
            ])),
        );
        api.answer(Method::Get, "/access/permissions", Ok(privs));
        api.answer(Method::Get, "/nodes/pve1/storage/local/content", Ok(json!([{"volid": "local:snippets/hook.pl"}])));
        api
    }

    #[test]
    fn a_hook_script_must_exist_where_the_listing_can_tell() {
        let api = cluster(json!({"/storage": {"Datastore.Allocate": 1}}));
        let (pf, p) = (Preflight::new(&api), Privileges::new(&api, "ops@pve!t"));
        assert!(pf.hookscript(&p, "pve1", "local:snippets/hook.pl").is_ok());
        let err = pf.hookscript(&p, "pve1", "local:snippets/gone.pl").unwrap_err().to_string();
        assert_eq!(err, "hookscript: script 'local:snippets/gone.pl' does not exist");
        let err = pf.hookscript(&p, "pve1", "local-lvm:vm-100-disk-0").unwrap_err().to_string();
        assert_eq!(err, "hookscript: 'local-lvm:vm-100-disk-0' is not in the snippets directory");
        // a storage whose content has no snippets lists none: PVE may find the file all the same
        assert!(pf.hookscript(&p, "pve1", "isos:snippets/hook.pl").is_ok());
        let warned = p.take_unknowns();
        assert!(warned[0].contains("PVE may refuse it: hookscript: script 'isos:snippets/hook.pl' does not exist"));
    }

    #[test]
    fn a_user_whose_listing_hides_snippets_is_warned() {
        let api = cluster(json!({"/storage": {"Datastore.Audit": 1, "Datastore.AllocateSpace": 1}}));
        let (pf, p) = (Preflight::new(&api), Privileges::new(&api, "ops@pve!t"));
        assert!(pf.hookscript(&p, "pve1", "local:snippets/gone.pl").is_ok());
        let warned = p.take_unknowns();
        assert_eq!(warned.len(), 1);
        assert!(warned[0].contains("shows no snippets (Datastore.Allocate on it would)"), "{warned:?}");
        assert!(api.calls.borrow().iter().all(|(_, path, _)| !path.contains("/content")), "no listing read");
    }

    #[test]
    fn scsi_identity_on_an_iscsi_url_needs_machine_4_1() {
        let api = cluster(json!({}));
        let pf = Preflight::new(&api);
        let old = BTreeMap::from([("machine".to_string(), "pc-i440fx-4.0".to_string())]);
        let words = "information is only supported for 'scsi-hd' and 'scsi-cd' devices (e.g. not pass-through).";
        let err = pf.scsi_identity("scsi1", "ziscsi:vm-100-disk-1,product=DISK", &old).unwrap_err().to_string();
        assert_eq!(err, format!("scsi1: Passing of product {words}"));
        let err = pf.scsi_identity("scsi2", "direct:lun3,vendor=ACME", &old).unwrap_err().to_string();
        assert_eq!(err, format!("scsi2: Passing of vendor {words}"));
        let newer = BTreeMap::from([("machine".to_string(), "type=pc-q35-4.1".to_string())]);
        assert!(pf.scsi_identity("scsi1", "ziscsi:vm-100-disk-1,product=DISK", &newer).is_ok());
        assert!(pf.scsi_identity("scsi1", "ziscsi:vm-100-disk-1,product=DISK", &BTreeMap::new()).is_ok(), "unpinned");
        assert!(pf.scsi_identity("scsi1", "ziscsi:8,product=DISK", &old).is_ok(), "a new disk is scsi-hd");
        assert!(pf.scsi_identity("scsi1", "local-lvm:vm-100-disk-1,product=DISK", &old).is_ok());
        assert!(pf.scsi_identity("scsi1", "ziscsi:vm-100-disk-1,media=cdrom,product=D", &old).is_ok());
        assert!(pf.scsi_identity("virtio1", "ziscsi:vm-100-disk-1,product=DISK", &old).is_ok());
    }
}

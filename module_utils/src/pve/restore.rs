//! What PVE refuses of a restore (a create with `archive`) from the request alone: a drive beside the archive, whose drives the restore takes; an archive piped from standard input; and the storages the archive's own config names for its drives (the restore's hints, docs/pve-semantics.md §64).

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::devices::is_disk_key;
use crate::pve::request::{ApiPath, Form};

/// Qemu.pm `create_vm`'s refusals of a restore's request, in its order: drives beside the archive
/// (§45.4), then an archive from standard input (§51.4).
pub fn refuse_request(form: &Form) -> Result<()> {
    require_no_drives(form)?;
    refuse_pipe(form)
}

/// Qemu.pm `create_vm`: with `archive`, the first drive option of the request (in Perl's `sort`
/// order; `unusedN` is no drive there) is refused, `option conflicts with option 'archive'`
/// (a parameter error, after the privileges; docs/pve-semantics.md §45.4).
pub fn require_no_drives(form: &Form) -> Result<()> {
    if !form.iter().any(|(k, v)| k == "archive" && !v.is_empty()) {
        return Ok(());
    }
    let mut drives: Vec<&str> =
        form.iter().map(|(k, _)| k.as_str()).filter(|k| is_disk_key(k) && !k.starts_with("unused")).collect();
    drives.sort_unstable();
    match drives.first() {
        Some(key) => Err(Error::args(format!("{key}: option conflicts with option 'archive'"))),
        None => Ok(()),
    }
}

/// Qemu.pm `create_vm`: an `archive` of `-` (the backup piped from standard input) is taken only
/// from `qmrestore` on the node (`pipe requires cli environment` where the request comes through
/// the API), after the drives' conflict (docs/pve-semantics.md §51.4).
pub fn refuse_pipe(form: &Form) -> Result<()> {
    match form.iter().any(|(k, v)| k == "archive" && v == "-") {
        true => Err(Error::failed("archive: pipe requires cli environment")),
        false => Ok(()),
    }
}

/// The archive's config as pve-manager API2/VZDump.pm `extractconfig` gives it (Storage.pm
/// `extract_vzdump_config`: the config the backup holds, with vzdump's `#qmdump#map:` lines).
pub fn extracted_config(api: &dyn Api, node: &str, volid: &str) -> Result<String> {
    let path = ApiPath::new(["nodes", node, "vzdump", "extractconfig"]);
    let data = api.get(&path, &vec![("volume".to_string(), volid.to_string())])?;
    Ok(data.as_str().unwrap_or_default().to_string())
}

/// QemuServer.pm `$parse_backup_hints`: the storages a restore allocates on, in the config's
/// order, each once: a drive's `#qmdump#map:<drive>:<name>:<storage>:<format>:` line names its
/// storage (none: `local`), a cloud-init drive its volume's; a `storage` in the request replaces
/// them all (`''`: `local`). Each must hold `images` and, for anyone but root@pam, grant
/// `Datastore.AllocateSpace` (`$check_storage`).
pub fn hint_storages(config: &str, storage: Option<&str>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in config.lines() {
        let named = if let Some(map) = line.strip_prefix("#qmdump#map:") {
            let parts: Vec<&str> = map.split(':').collect();
            (parts.len() == 5 && parts[4].is_empty()).then(|| parts[2].to_string())
        } else {
            let (key, value) = line.split_once(':').unwrap_or_default();
            let drive =
                ["ide", "sata", "scsi"].iter().any(|p| key.strip_prefix(p).is_some_and(|n| n.parse::<u8>().is_ok()));
            let file = value.trim().split(',').next().unwrap_or_default();
            let cloudinit = file.split_once(':').filter(|(_, v)| v.contains("-cloudinit"));
            cloudinit.filter(|_| drive).map(|(sid, _)| sid.to_string())
        };
        let Some(named) = named else { continue };
        let sid = match storage {
            Some(s) => s.to_string(),
            None => named,
        };
        let sid = if sid.is_empty() { "local".to_string() } else { sid };
        if !out.contains(&sid) {
            out.push(sid);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pve::request::form;

    #[test]
    fn a_drive_beside_an_archive_is_refused_and_named() {
        let f = form([("archive", "backup:vzdump.vma.zst"), ("scsi1", "local-lvm:1"), ("ide2", "none,media=cdrom")]);
        let err = require_no_drives(&f).unwrap_err().to_string();
        assert!(err.contains("ide2: option conflicts with option 'archive'"), "{err}");
        assert!(require_no_drives(&form([("archive", "backup:x"), ("cores", "2")])).is_ok());
        assert!(require_no_drives(&form([("scsi0", "local-lvm:1")])).is_ok());
    }

    #[test]
    fn an_archive_piped_from_standard_input_is_refused_through_the_api() {
        let err = refuse_pipe(&form([("archive", "-"), ("cores", "2")])).unwrap_err().to_string();
        assert!(err.contains("archive: pipe requires cli environment"), "{err}");
        assert!(refuse_pipe(&form([("archive", "backup:backup/vzdump-qemu-100.vma.zst")])).is_ok());
    }

    #[test]
    fn the_restore_allocates_on_the_storages_its_hints_name_or_on_the_request_s() {
        let config = "#qmdump#map:scsi0:drive-scsi0:local-lvm:raw:\n#qmdump#map:scsi1:drive-scsi1::qcow2:\n\
                      #qmdump#map:efidisk0:drive-efidisk0:local-lvm:raw:\nide2: vmdata:100/vm-100-cloudinit.qcow2,media=cdrom\n\
                      ide0: isos:iso/d.iso,media=cdrom\nmemory: 1024\n";
        assert_eq!(hint_storages(config, None), ["local-lvm", "local", "vmdata"]);
        assert_eq!(hint_storages(config, Some("fast")), ["fast"]);
        assert!(hint_storages("memory: 512\n", None).is_empty());
    }
}

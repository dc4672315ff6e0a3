//! The drive rules of qemu-server's create and config handlers that one request breaks on its own: an `import-from` drive's syntax, its required options and its source's kind (docs/pve-semantics.md §63).
//!
//! Each is decided from the request's drive values alone, before any read, and returns PVE's
//! words with the key PVE raises them on; `schema::cross_field` applies them to every create and
//! config write (`check_write`), in check and real runs alike.

use crate::pve::devices::{is_disk_key, parse_new_disk, Disk};
use crate::pve::request::Form;
use crate::pve::volume::{content_and_owner, Volume};

/// QemuServer/Drive.pm `drive_is_cloudinit` on a file name: `[:/](vm-<n>-)?cloudinit(.<fmt>)?` at
/// its end.
pub fn is_cloudinit_volume(file: &str) -> bool {
    let Some(at) = file.rfind([':', '/']) else { return false };
    let name = &file[at + 1..];
    let name = name
        .strip_prefix("vm-")
        .and_then(|r| r.split_once('-'))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map_or(name, |(_, rest)| rest);
    let stem = name.rsplit_once('.').filter(|(_, f)| ["raw", "qcow2", "vmdk"].contains(f)).map_or(name, |(s, _)| s);
    stem == "cloudinit"
}

/// The first `import-from` drive of `form` that PVE refuses, as (key, PVE's words), in the order
/// PVE checks them: Qemu.pm `$check_drive_param` (sorted keys) wants the new-disk syntax with size
/// 0, `efitype` and `pre-enrolled-keys` on an `efidisk0`, `version` on a `tpmstate0`;
/// `$check_storage_access` a source volume of content `images` or `import` (`update_vm_api` runs
/// the first before the second, `create_vm` the second first: `create`); then `create_disks`
/// (`$import_from_volid`, in its eval that prefixes `cannot import from '<source>' - `) a source
/// that is no cloud-init disk.
pub fn import_from(form: &Form, create: bool) -> Result<(), (String, String)> {
    let mut drives: Vec<(&str, Disk)> = form
        .iter()
        .filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused"))
        .filter_map(|(k, v)| Some((k.as_str(), Disk::parse(k, v)?)))
        .filter(|(_, d)| d.other.contains_key("import-from"))
        .collect();
    drives.sort_by(|a, b| a.0.cmp(b.0));
    if create {
        sources(&drives)?;
    }
    syntax(&drives)?;
    sources(&drives)?;
    match drives.iter().find(|(_, d)| is_cloudinit_volume(&d.other["import-from"])) {
        Some((key, d)) => {
            let source = &d.other["import-from"];
            Err((key.to_string(), format!("cannot import from '{source}' - cannot import from cloudinit disk")))
        }
        None => Ok(()),
    }
}

fn syntax(drives: &[(&str, Disk)]) -> Result<(), (String, String)> {
    for (key, drive) in drives {
        let file = drive.volume.as_deref().unwrap_or("");
        if parse_new_disk(file).and_then(|(_, n)| n.parse::<f64>().ok()) != Some(0.0) {
            let words = "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>";
            return Err((key.to_string(), words.into()));
        }
        let required: &[&str] = match *key {
            "efidisk0" => &["efitype", "pre-enrolled-keys"],
            "tpmstate0" => &["version"],
            _ => &[],
        };
        if let Some(missing) = required.iter().find(|r| !drive.other.contains_key(**r)) {
            return Err((key.to_string(), format!("need to specify '{missing}' when using 'import-from'")));
        }
    }
    Ok(())
}

fn sources(drives: &[(&str, Disk)]) -> Result<(), (String, String)> {
    for (key, drive) in drives {
        let source = &drive.other["import-from"];
        if Volume::parse(source).is_none() {
            continue; // an absolute path: no volume, no content type
        }
        match content_and_owner(source).0 {
            "images" | "import" => {}
            kind => {
                let words = format!("{source} has wrong type '{kind}' - needs to be 'images' or 'import'");
                return Err((key.to_string(), words));
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(pairs: &[(&str, &str)]) -> Option<(String, String)> {
        let form: Form = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        import_from(&form, false).err()
    }

    #[test]
    fn an_import_needs_the_new_disk_syntax_with_size_zero() {
        let syntax = "'import-from' requires special syntax - use <storage ID>:0,import-from=<source>";
        for file in ["local-lvm:8", "local-lvm:vm-100-disk-0", "/dev/sdb"] {
            let value = format!("{file},import-from=local:import/a.qcow2");
            assert_eq!(refusal(&[("scsi1", &value)]), Some(("scsi1".into(), syntax.into())), "{file}");
        }
        assert_eq!(refusal(&[("scsi1", "local-lvm:0,import-from=local:import/a.qcow2")]), None);
        assert_eq!(refusal(&[("scsi1", "local-lvm:0.0,import-from=vmdata:100/vm-100-disk-0.qcow2")]), None);
        assert_eq!(refusal(&[("scsi1", "local-lvm:8")]), None, "no import: not these rules");
    }

    #[test]
    fn efi_and_tpm_imports_need_their_options() {
        let efi = refusal(&[("efidisk0", "local-lvm:0,import-from=local:import/e.raw,efitype=4m")]);
        assert_eq!(efi.unwrap().1, "need to specify 'pre-enrolled-keys' when using 'import-from'");
        let efi = refusal(&[("efidisk0", "local-lvm:0,import-from=local:import/e.raw")]);
        assert_eq!(efi.unwrap().1, "need to specify 'efitype' when using 'import-from'");
        let tpm = refusal(&[("tpmstate0", "local-lvm:0,import-from=local:import/t.raw")]);
        assert_eq!(tpm.unwrap().1, "need to specify 'version' when using 'import-from'");
        assert_eq!(refusal(&[("tpmstate0", "local-lvm:0,import-from=local:import/t.raw,version=v2.0")]), None);
    }

    #[test]
    fn a_source_is_an_image_or_an_import_and_no_cloud_init_disk() {
        let iso = refusal(&[("scsi1", "local-lvm:0,import-from=local:iso/a.iso")]).unwrap();
        assert_eq!(iso.1, "local:iso/a.iso has wrong type 'iso' - needs to be 'images' or 'import'");
        let ci = refusal(&[("scsi1", "local-lvm:0,import-from=local-lvm:vm-100-cloudinit")]).unwrap();
        assert_eq!(ci.1, "cannot import from 'local-lvm:vm-100-cloudinit' - cannot import from cloudinit disk");
        assert!(is_cloudinit_volume("local:100/vm-100-cloudinit.qcow2"));
        assert!(!is_cloudinit_volume("local-lvm:vm-100-disk-0"));
        assert!(!is_cloudinit_volume("local:100/vm-100-mycloudinit.qcow2"));
        assert_eq!(refusal(&[("scsi1", "local-lvm:0,import-from=/mnt/a.qcow2")]), None);
        // the syntax of every drive first, then the sources (PVE's two loops)
        let both = refusal(&[
            ("scsi1", "local-lvm:0,import-from=local:iso/a.iso"),
            ("scsi2", "x:1,import-from=y:import/b.raw"),
        ]);
        assert_eq!(both.unwrap().0, "scsi2");
        let form: Form =
            [("scsi1", "local-lvm:0,import-from=local:iso/a.iso"), ("scsi2", "x:1,import-from=y:import/b.raw")]
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(import_from(&form, true).unwrap_err().0, "scsi1", "a create checks the sources first");
    }
}

//! What PVE refuses of a restore (a create with `archive`) from the request alone: a drive beside the archive, whose drives the restore takes; an archive piped from standard input.

use crate::error::{Error, Result};
use crate::pve::devices::is_disk_key;
use crate::pve::request::Form;

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
}

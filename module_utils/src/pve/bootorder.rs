//! A VM's boot order and the CD-ROM drives a config write appends to it (Qemu.pm `update_vm_api`), and the one write whose result depends on the order PVE walks its keys in (docs/pve-semantics.md §46).
//!
//! `update_vm_api` reads the applied `boot: order=` once, before its loop over the request's keys
//! (`foreach my $opt (keys %$param)`, Perl's hash order, random per process). Each drive it sets
//! that is a CD-ROM (`drive_is_cdrom($drive, 1)`: `media=cdrom`, not a cloud-init drive) and is not
//! in that order is appended to it, written as the pending `boot`, when an order exists. A `boot`
//! met before such a drive is overwritten by that append; one met after it wins. `create_vm` has
//! no such append (a new VM's `boot` is the request's, or `get_default_bootdevices`).

use crate::pve::devices::{format_for_key, parse_new_cloudinit};
use crate::pve::propstring::PropertyString;
use crate::pve::volume::{Volume, VolumeKind};

/// The devices of a `boot` value's `order=` (none for a legacy value or no value).
pub fn order(boot: Option<&str>) -> Vec<String> {
    let Some(boot) = boot else { return Vec::new() };
    let list = boot.split(',').find_map(|part| part.trim().strip_prefix("order="));
    list.into_iter().flat_map(|l| l.split([';', ',', ' '])).filter(|d| !d.is_empty()).map(str::to_string).collect()
}

/// PVE's `print_bootorder`: `order=<dev>;<dev>...`.
pub fn print(devices: &[String]) -> String {
    format!("order={}", devices.join(";"))
}

/// Whether a drive value sets a CD-ROM in `drive_is_cdrom($drive, 1)`'s sense.
fn is_cdrom_drive(key: &str, value: &str) -> bool {
    let Some(format) = format_for_key(key) else { return false };
    let Ok(drive) = PropertyString::parse_lenient(format, value) else { return false };
    let file = drive.get("file").unwrap_or_default();
    let cloudinit =
        parse_new_cloudinit(file).is_some() || Volume::parse(file).is_some_and(|v| v.kind == VolumeKind::CloudInit);
    drive.get("media") == Some("cdrom") && !cloudinit
}

/// The drive keys of a config write's `body` that `update_vm_api` appends to the applied boot
/// order `applied_boot`, in the body's order: each CD-ROM drive it sets that the order lacks,
/// when there is an order.
pub fn appended(applied_boot: Option<&str>, body: &[(String, String)]) -> Vec<String> {
    let order = order(applied_boot);
    if order.is_empty() {
        return Vec::new();
    }
    body.iter()
        .filter(|(k, v)| format_for_key(k).is_some() && !order.contains(k) && is_cdrom_drive(k, v))
        .map(|(k, _)| k.clone())
        .collect()
}

/// Whether one write of `body` ends with a boot order that depends on PVE's key order: it sets
/// `boot` and a drive `appended` adds. Sent as two writes, the drives first and `boot` after, the
/// order is the one asked for whatever the order.
pub fn depends_on_key_order(applied_boot: Option<&str>, body: &[(String, String)]) -> bool {
    body.iter().any(|(k, _)| k == "boot") && !appended(applied_boot, body).is_empty()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn a_new_cdrom_joins_an_existing_order_and_with_boot_the_result_depends_on_key_order() {
        let boot = Some("order=scsi0;net0");
        let cd = body(&[("ide2", "local:iso/d.iso,media=cdrom"), ("boot", "order=ide2;scsi0")]);
        assert_eq!(appended(boot, &cd), ["ide2"]);
        assert!(depends_on_key_order(boot, &cd));
        assert_eq!(print(&order(boot)), "order=scsi0;net0");
        // no order (legacy or none), a drive already in it, a disk, a cloud-init drive: nothing appended
        assert!(appended(Some("cdn"), &cd).is_empty());
        assert!(appended(None, &cd).is_empty());
        assert!(appended(Some("order=ide2;scsi0"), &cd).is_empty());
        assert!(appended(boot, &body(&[("scsi1", "local-lvm:4")])).is_empty());
        assert!(appended(boot, &body(&[("ide0", "local-lvm:cloudinit,media=cdrom")])).is_empty());
        assert!(!depends_on_key_order(boot, &body(&[("ide2", "none,media=cdrom")])));
    }
}

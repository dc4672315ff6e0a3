//! A drive of a stored config as qemu-server parses it (Drive.pm `parse_drive`, strictly, against PVE's drive schema), and what clone and move refuse when it cannot (docs/pve-semantics.md §65.1).

use std::collections::BTreeMap;

use serde_json::Value;

use super::{parse_property_string, Endpoint};
use crate::pve::devices::is_disk_key;
use crate::pve::request::Method;

/// Drive.pm `$DROPPED_PROPERTIES`: keys `parse_drive` skips (old geometry options).
const DROPPED: &[&str] = &["cyls", "heads", "secs", "trans"];
/// Drive.pm `parse_drive`: an option set (Perl-true) without the one it requires.
const REQUIRES: &[(&str, &str)] = &[
    ("mbps_max", "mbps"),
    ("mbps_rd_max", "mbps_rd"),
    ("mbps_wr_max", "mbps_wr"),
    ("miops_max", "miops"),
    ("miops_rd_max", "miops_rd"),
    ("miops_wr_max", "miops_wr"),
    ("bps_max_length", "mbps_max"),
    ("bps_rd_max_length", "mbps_rd_max"),
    ("bps_wr_max_length", "mbps_wr_max"),
    ("iops_max_length", "iops_max"),
    ("iops_rd_max_length", "iops_rd_max"),
    ("iops_wr_max_length", "iops_wr_max"),
];
/// Drive.pm `parse_drive`: pairs it refuses together (a total limit and a per-direction one).
const EXCLUSIVE: &[(&str, &str)] =
    &[("mbps_rd", "mbps"), ("mbps_wr", "mbps"), ("iops_rd", "iops"), ("iops_wr", "iops")];

/// Drive.pm `parse_drive($key, $value)` of a config's drive: `Err` holds the `$@` its caller
/// quotes (the property string's error; empty where `parse_drive` returns without dying). It
/// reads with `$drivedesc_hash`, the config's schema (the API's adds `import-from`), skips the
/// dropped keys, then refuses what the schema cannot say: `bps*` with its `mbps*`, a `*_max`
/// without its base, a total with a per-direction limit, a CD-ROM with `snapshot`, `format` or on
/// virtio. The schema is the config endpoint's (`schema/params.json`).
pub fn parse_drive(key: &str, value: &str) -> Result<(), String> {
    let endpoint = Endpoint::by_template(Method::Put, "/nodes/{node}/qemu/{vmid}/config");
    let keys = endpoint.and_then(|e| e.param(key)).and_then(|s| s.get("keys")).and_then(Value::as_object);
    let Some(keys) = keys else { return Err(String::new()) };
    let skipped =
        |p: &&str| p.split_once('=').is_some_and(|(k, v)| !k.is_empty() && !v.is_empty() && DROPPED.contains(&k));
    let kept: Vec<&str> = value.split(',').filter(|p| !skipped(p)).collect();
    if kept.iter().any(|p| p.starts_with("import-from=")) {
        return Err("invalid key in comma-separated list property: import-from".into());
    }
    let parsed = parse_property_string(keys, key, &kept.join(","))?;
    let get = |k: &str| parsed.iter().find(|(p, _)| p == k).map(|(_, v)| v.as_str());
    // `bps` becomes `mbps` ("%.3f", always true in Perl), refused where `mbps` is set too
    if ["bps", "bps_rd", "bps_wr"].iter().any(|b| get(b).is_some() && get(&format!("m{b}")).is_some()) {
        return Err(String::new());
    }
    let set = |k: &str| {
        get(k).is_some_and(|v| !v.is_empty() && v != "0") || k.strip_prefix('m').is_some_and(|b| get(b).is_some())
    };
    let cdrom = get("media") == Some("cdrom") && (set("snapshot") || set("format") || key.starts_with("virtio"));
    if REQUIRES.iter().any(|(o, r)| set(o) && !set(r)) || EXCLUSIVE.iter().any(|(a, b)| set(a) && set(b)) || cdrom {
        return Err(String::new());
    }
    Ok(())
}

/// Qemu.pm `clone_vm`, for each drive of the source's config (`unusedN` skipped): `unable to
/// parse drive options for '<key>'`. PVE walks the keys in hash order; here, in the config's.
pub fn clone_refusal(config: &BTreeMap<String, String>) -> Option<String> {
    let drives = config.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused"));
    let mut bad = drives.filter(|(k, v)| parse_drive(k, v).is_err());
    bad.next().map(|(key, _)| format!("unable to parse drive options for '{key}'"))
}

/// Qemu.pm `move_vm_disk` of `disk` (its config value `value`): to a storage, a drive it cannot
/// parse has no volume (`disk '<disk>' has no associated volume`); to another VM
/// (`target_disk`), `failed to parse source disk - <why>`. `None`: it parses.
pub fn move_refusal(disk: &str, value: &str, reassign: bool) -> Option<String> {
    let why = parse_drive(disk, value).err()?;
    Some(if reassign { format!("failed to parse source disk - {why}") } else { no_volume(disk) })
}

fn no_volume(disk: &str) -> String {
    format!("disk '{disk}' has no associated volume")
}

/// Qemu.pm `move_vm_disk` to another VM, after the running source: the drive parsed again in the
/// target slot's format (`target_disk`; an `unusedN` takes the volume alone), so an option that
/// bus lacks (`ssd` on virtio) refuses it: `failed to parse source disk for target disk format - <why>`.
pub fn reassign_target_refusal(target_disk: &str, value: &str, volume: &str) -> Option<String> {
    let value = if target_disk.starts_with("unused") { volume } else { value };
    let why = parse_drive(target_disk, value).err()?;
    Some(format!("failed to parse source disk for target disk format - {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_as_pve_does() {
        let ok = |k: &str, v: &str| parse_drive(k, v).is_ok();
        assert!(ok("scsi0", "local-lvm:vm-100-disk-0,ssd=1,size=8G"));
        assert!(ok("scsi0", "local-lvm:vm-100-disk-0,cyls=2,size=8G"), "a dropped key is skipped");
        assert!(!ok("virtio0", "local-lvm:vm-100-disk-0,ssd=1"), "virtio has no ssd");
        assert!(!ok("scsi0", "local-lvm:vm-100-disk-0,cache=fast"));
        assert!(!ok("scsi0", "size=8G"), "no volume");
        assert!(!ok("scsi0", "local-lvm:vm-100-disk-0,import-from=local:iso/a.img"));
        assert!(!ok("scsi0", "local-lvm:vm-100-disk-0,mbps_rd=5,mbps=10"));
        assert!(!ok("scsi0", "local-lvm:vm-100-disk-0,bps=5,mbps=10"));
        assert!(!ok("scsi0", "local-lvm:vm-100-disk-0,mbps_max=10"));
        assert!(ok("scsi0", "local-lvm:vm-100-disk-0,bps=1048576,mbps_max=10"), "bps stands for mbps");
        assert!(!ok("virtio1", "local:iso/a.iso,media=cdrom"));
        assert!(ok("ide2", "local:iso/a.iso,media=cdrom"));
        assert!(ok("unused0", "local-lvm:vm-100-disk-1"));
    }

    #[test]
    fn refusals_use_pve_words() {
        let config: BTreeMap<String, String> =
            [("scsi0", "local-lvm:vm-100-disk-0"), ("scsi1", "local-lvm:vm-100-disk-1,bogus=1"), ("unused0", "x,y")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect();
        assert_eq!(clone_refusal(&config).as_deref(), Some("unable to parse drive options for 'scsi1'"));
        assert_eq!(move_refusal("scsi1", &config["scsi1"], false), Some(no_volume("scsi1")));
        let why = move_refusal("scsi1", &config["scsi1"], true).unwrap();
        assert!(why.starts_with("failed to parse source disk - invalid key"), "{why}");
        let ssd = "local-lvm:vm-100-disk-0,ssd=1";
        assert!(reassign_target_refusal("virtio1", ssd, "local-lvm:vm-100-disk-0").is_some());
        assert_eq!(reassign_target_refusal("unused3", ssd, "local-lvm:vm-100-disk-0"), None);
        assert_eq!(reassign_target_refusal("scsi3", ssd, "local-lvm:vm-100-disk-0"), None);
    }
}

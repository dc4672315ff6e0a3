//! What a running VM takes live and what waits for its next start: Proxmox VE's one hot-plug rule.
//!
//! Follows qemu-server `src/PVE/QemuServer.pm`: `vmconfig_hotplug_pending` (which key needs which
//! `hotplug` feature, the `$fast_plug_option` keys), `vmconfig_update_net` (which NIC options are
//! changed live and which need an unplug and a plug) and `vmconfig_update_disk` (which drive options
//! wait for the next start); docs/pve-semantics.md §6 states the table. On a stopped VM nothing waits
//! (`vmconfig_apply_pending`). Every module asks here; no module keeps its own list.

use std::collections::BTreeSet;

use crate::pve::config::VmConfig;
use crate::pve::devices::{disk_bus, format_for_key, is_cloudinit_drive, is_nic_key};
use crate::pve::propstring::{PropertyString, AGENT, NET};

// Here rather than in config.rs, so the hot-plug rule reads the config and not the other way round.
impl VmConfig {
    /// What the VM hot-plugs when running (`hotplug`; unset = `network,disk,usb`, §6).
    pub fn hotplug(&self) -> Hotplug {
        Hotplug::parse(self.current.get("hotplug").map(String::as_str))
    }
}

/// Keys written to the config at once on a running VM, whatever `hotplug` says
/// (`$fast_plug_option`), with every `ipconfigN`.
const FAST_PLUG: &[&str] = &[
    "description",
    "hookscript",
    "lock",
    "migrate_downtime",
    "migrate_speed",
    "name",
    "onboot",
    "protection",
    "shares",
    "startup",
    "tags",
    "vmstatestorage",
    "citype",
    "ciuser",
    "cipassword",
    "ciupgrade",
    "cicustom",
    "searchdomain",
    "nameserver",
    "sshkeys",
];

/// NIC options whose change unplugs and plugs the NIC again, so needs `network` hotplug; the other
/// options (`bridge`, `tag`, `trunks`, `firewall`, `rate`, `link_down`) change live (`vmconfig_update_net`).
const NET_REPLUG: &[&str] = &["model", "macaddr", "queues", "mtu"];

/// Drive options whose change on an existing drive waits for the next start (`vmconfig_update_disk`).
const DISK_COLD: &[&str] = &["aio", "discard", "iothread", "queues", "product", "cache", "ssd", "vendor", "ro"];

/// The `hotplug` setting of a VM: unset or `1` means `network,disk,usb`, `0` nothing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hotplug(BTreeSet<String>);

impl Hotplug {
    pub fn parse(value: Option<&str>) -> Hotplug {
        let list = match value.map(str::trim) {
            None | Some("") | Some("1") => "network,disk,usb",
            Some("0") => "",
            Some(other) => other,
        };
        Hotplug(list.split([',', ';', ' ']).filter(|s| !s.is_empty()).map(str::to_string).collect())
    }

    pub fn allows(&self, feature: &str) -> bool {
        self.0.contains(feature)
    }
}

/// Whether `key` is written at once on a running VM whatever `hotplug` says.
fn is_fast_plug(key: &str) -> bool {
    FAST_PLUG.contains(&key) || key.starts_with("ipconfig")
}

/// Whether the drive is a CD-ROM (its medium changes live).
pub fn is_cdrom(drive: &PropertyString) -> bool {
    drive.get("media") == Some("cdrom") || matches!(drive.get("file"), Some("none" | "cdrom"))
}

fn is_scsi_or_virtio(key_or_bus: &str) -> bool {
    key_or_bus.starts_with("scsi") || key_or_bus.starts_with("virtio")
}

/// Whether a change of NIC `netN` waits on a running VM: `before` `None` is a new NIC, `after`
/// `None` a deleted one (`vmconfig_update_net`, `vmconfig_delete_or_pending`).
pub fn nic_change_waits(hotplug: &Hotplug, before: Option<&PropertyString>, after: Option<&PropertyString>) -> bool {
    let replug = match (before, after) {
        (None, None) => false,
        (None, Some(_)) | (Some(_), None) => true,
        (Some(b), Some(a)) => {
            b.get("bridge").is_some() != a.get("bridge").is_some() || NET_REPLUG.iter().any(|k| b.differs_as_set(a, k))
        }
    };
    replug && !hotplug.allows("network")
}

/// Whether plugging a new drive, or unplugging one, waits on a running VM: only `scsiN` and
/// `virtioN` hot-plug, and only with `disk` hotplug. `key_or_bus` is `scsi1` or `scsi`.
pub fn drive_plug_waits(hotplug: &Hotplug, key_or_bus: &str) -> bool {
    !(hotplug.allows("disk") && is_scsi_or_virtio(key_or_bus))
}

/// Whether changing an existing drive from `applied` to `desired` waits on a running VM
/// (`vmconfig_update_disk`): EFI and TPM drives always, a CD-ROM's medium never, another volume
/// with `disk` hotplug only, and the cold options always.
pub fn drive_update_waits(
    hotplug: &Hotplug,
    key_or_bus: &str,
    applied: &PropertyString,
    desired: &PropertyString,
) -> bool {
    if key_or_bus.starts_with("efidisk") || key_or_bus.starts_with("tpmstate") {
        return true;
    }
    if is_cdrom(applied) {
        return false;
    }
    if applied.get("file") != desired.get("file") {
        return !hotplug.allows("disk");
    }
    DISK_COLD.iter().any(|k| applied.differs_as_set(desired, k))
}

/// What PVE refuses of changing an existing drive from `applied` to `desired` on a running VM
/// (`vmconfig_hotplug_pending`, `vmconfig_update_disk`): its media type (`media`, `disk` when
/// unset) cannot change live, whatever `hotplug` says. PVE writes the change pending first, then
/// fails the update with these words (docs/pve-semantics.md §48.3). EFI, TPM and cloud-init drives
/// are skipped before that rule (they wait for the next start).
pub fn drive_update_refusal(key: &str, applied: &PropertyString, desired: &PropertyString) -> Option<String> {
    if key.starts_with("efidisk") || key.starts_with("tpmstate") || is_cloudinit_drive(key, &desired.to_string()) {
        return None;
    }
    let media = |d: &PropertyString| d.get("media").unwrap_or("disk").to_string();
    (media(applied) != media(desired)).then(|| MEDIA_CHANGE.to_string())
}

/// PVE's words for a drive whose media type would change on a running VM (`add_error` prefixes
/// `hotplug problem - `).
pub const MEDIA_CHANGE: &str = "hotplug problem - unable to change media type";

/// Whether deleting `key` waits on a running VM: deletions hot-unplug like additions.
pub fn delete_waits(hotplug: &Hotplug, key: &str) -> bool {
    if is_nic_key(key) {
        return !hotplug.allows("network");
    }
    if disk_bus(key).is_some_and(|b| b != "unused") {
        return drive_plug_waits(hotplug, key);
    }
    !(is_fast_plug(key) || matches!(key, "cpuunits" | "cpulimit"))
}

/// Whether PVE leaves writing `key` = `after` (effective value now `before`) pending on a VM in
/// this power state (`vmconfig_hotplug_pending`).
pub fn stays_pending(key: &str, before: Option<&str>, after: &str, running: bool, config: &VmConfig) -> bool {
    if !running {
        return false;
    }
    let hotplug = config.hotplug();
    if is_fast_plug(key) {
        return false;
    }
    let has = |text: &str, feature: &str| text.contains(feature);
    match key {
        "hotplug" => {
            let old = config.current.get("hotplug").map(String::as_str).unwrap_or("");
            return has(old, "cpu") || has(old, "memory") || has(after, "cpu") || has(after, "memory");
        }
        "tablet" => return !hotplug.allows("usb"),
        "vcpus" => return !hotplug.allows("cpu"),
        "memory" => return !hotplug.allows("memory"),
        "cpuunits" | "cpulimit" => return false,
        "balloon" => {
            let old = before.unwrap_or("");
            return (old != "0" && after == "0") || (old == "0" && after != "0");
        }
        // `vmconfig_update_agent`: pending without an agent value or with a false one
        // (`!$conf->{agent}`), or when an option but `fstrim_cloned_disks` differs, set or unset.
        "agent" => {
            let old = before.unwrap_or("");
            let parse = |t: &str| PropertyString::parse_lenient(&AGENT, t).ok();
            return match (parse(old).filter(|_| !matches!(old, "" | "0")), parse(after)) {
                (Some(a), Some(b)) => {
                    a.keys().chain(b.keys()).any(|k| k != "fstrim_cloned_disks" && a.differs_as_set(&b, k))
                }
                _ => true,
            };
        }
        _ => {}
    }
    if key.starts_with("usb") {
        let ostype = config.get("ostype").unwrap_or("other");
        return !(hotplug.allows("usb") && matches!(ostype, "l26" | "win8" | "win10" | "win11"));
    }
    if is_nic_key(key) {
        let Some(before) = before else { return !hotplug.allows("network") };
        let (Ok(b), Ok(a)) = (PropertyString::parse_lenient(&NET, before), PropertyString::parse_lenient(&NET, after))
        else {
            return !hotplug.allows("network");
        };
        return nic_change_waits(&hotplug, Some(&b), Some(&a));
    }
    if disk_bus(key).is_some_and(|b| b != "unused") {
        if matches!(key, "efidisk0" | "tpmstate0") || after.contains("cloudinit") {
            return true;
        }
        let Some(format) = format_for_key(key) else { return true };
        return match before.map(|b| PropertyString::parse_lenient(format, b)) {
            None => drive_plug_waits(&hotplug, key),
            Some(Ok(b)) => match PropertyString::parse_lenient(format, after) {
                Ok(a) => drive_update_waits(&hotplug, key, &b, &a),
                Err(_) => true,
            },
            Some(Err(_)) => true,
        };
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The table of docs/pve-semantics.md §6, one row a case: (hotplug, key, before, after, waits).
    #[test]
    fn running_vm_table() {
        const NIC: &str = "virtio=BC:24:11:00:00:01,bridge=vmbr0";
        const DISK: &str = "local-lvm:vm-100-disk-0,size=8G";
        type Row<'a> = (Option<&'a str>, &'a str, Option<&'a str>, &'a str, bool);
        let rows: &[Row] = &[
            // $fast_plug_option: at once, whatever hotplug says.
            (Some("0"), "name", Some("a"), "b", false),
            (Some("0"), "ipconfig0", None, "ip=dhcp", false),
            (Some("0"), "sshkeys", None, "ssh-ed25519%20AAAA", false),
            // NICs: new ones need network; bridge/tag live; model/MAC/queues/mtu replug.
            (None, "net1", None, NIC, false),
            (Some("disk"), "net1", None, NIC, true),
            (Some("0"), "net0", Some(NIC), "virtio=BC:24:11:00:00:01,bridge=vmbr1,tag=5", false),
            (Some("0"), "net0", Some(NIC), "virtio=BC:24:11:00:00:01,bridge=vmbr0,mtu=1400", true),
            (Some("0"), "net0", Some(NIC), "e1000=BC:24:11:00:00:01,bridge=vmbr0", true),
            (None, "net0", Some(NIC), "e1000=BC:24:11:00:00:01,bridge=vmbr0", false),
            // Disks: scsi/virtio plug with disk; ide/sata/efidisk never; cold options wait.
            (None, "scsi1", None, "local-lvm:4", false),
            (Some("network"), "scsi1", None, "local-lvm:4", true),
            (None, "ide1", None, "local-lvm:4", true),
            (None, "efidisk0", None, "local-lvm:1", true),
            (None, "scsi0", Some(DISK), "local-lvm:vm-100-disk-0,size=8G,cache=writeback", true),
            (Some("0"), "scsi0", Some(DISK), "local-lvm:vm-100-disk-0,size=8G,mbps_rd=10", false),
            (None, "scsi0", Some(DISK), "local-lvm:vm-100-disk-1,size=8G", false),
            (Some("0"), "scsi0", Some(DISK), "local-lvm:vm-100-disk-1,size=8G", true),
            (Some("0"), "ide2", Some("none,media=cdrom"), "local:iso/a.iso,media=cdrom", false),
            (None, "ide2", None, "local-lvm:cloudinit", true),
            // CPU, memory and the rest.
            (None, "memory", Some("2048"), "4096", true),
            (Some("memory"), "memory", Some("2048"), "4096", false),
            (Some("cpu"), "vcpus", Some("1"), "2", false),
            (None, "vcpus", Some("1"), "2", true),
            (Some("0"), "cpulimit", None, "2", false),
            (None, "balloon", Some("1024"), "2048", false),
            (None, "balloon", Some("1024"), "0", true),
            (None, "agent", Some("1"), "1,fstrim_cloned_disks=1", false),
            (None, "agent", Some("0"), "1", true),
            (None, "agent", Some("0"), "0,fstrim_cloned_disks=1", true),
            (None, "agent", Some("1"), "enabled=on,fstrim_cloned_disks=1", false),
            (None, "agent", Some("1"), "1,type=virtio", true),
            (None, "agent", Some("enabled=0"), "0,fstrim_cloned_disks=1", false),
            (None, "hotplug", None, "network,disk", false),
            (None, "hotplug", None, "network,cpu", true),
            (None, "tablet", Some("1"), "0", false),
            (Some("0"), "tablet", Some("1"), "0", true),
            (None, "cores", Some("1"), "2", true),
        ];
        for (hotplug, key, before, after, waits) in rows {
            let mut pairs = vec![];
            if let Some(h) = hotplug {
                pairs.push(("hotplug", *h));
            }
            let c = VmConfig::from_pairs(&pairs);
            assert_eq!(
                stays_pending(key, *before, after, true, &c),
                *waits,
                "{hotplug:?} {key}: {before:?} -> {after}"
            );
            assert!(!stays_pending(key, *before, after, false, &c), "stopped VM: {key} applies at once");
        }
    }

    /// PVE compares a drive's cold options and a NIC's replug options as set or not set
    /// (GuestHelpers.pm `safe_string_ne`, `safe_num_ne` in QemuServer.pm `vmconfig_update_disk`,
    /// `vmconfig_update_net`): every such key written with its default value where it was not set
    /// waits (or replugs), and the same value in another spelling does not.
    #[test]
    fn a_key_set_to_its_default_differs_from_an_unset_one() {
        let all = Hotplug::parse(None);
        let none = Hotplug::parse(Some("0"));
        let parse = |key: &str, v: &str| PropertyString::parse_lenient(format_for_key(key).unwrap(), v).unwrap();
        let disk = parse("scsi0", "local-lvm:vm-100-disk-0,size=8G");
        let defaults = [
            ("aio", "io_uring"),
            ("discard", "ignore"),
            ("iothread", "0"),
            ("queues", "1"),
            ("product", "QEMU"),
            ("cache", "none"),
            ("ssd", "0"),
            ("vendor", "QEMU"),
            ("ro", "0"),
        ];
        assert_eq!(defaults.len(), DISK_COLD.len());
        for (key, value) in defaults {
            assert!(DISK_COLD.contains(&key));
            let set = parse("scsi0", &format!("local-lvm:vm-100-disk-0,size=8G,{key}={value}"));
            assert!(drive_update_waits(&all, "scsi0", &disk, &set), "{key}={value} where unset");
            assert!(drive_update_waits(&all, "scsi0", &set, &disk), "{key} unset where {value}");
            assert!(!drive_update_waits(&all, "scsi0", &set, &set.clone()), "{key} unchanged");
        }
        let spelled = parse("scsi0", "local-lvm:vm-100-disk-0,size=8G,iothread=on");
        let one = parse("scsi0", "local-lvm:vm-100-disk-0,size=8G,iothread=1");
        assert!(!drive_update_waits(&all, "scsi0", &one, &spelled), "iothread=on is iothread=1");
        let nic = parse("net0", "virtio=BC:24:11:00:00:01,bridge=vmbr0");
        for (key, value) in [("queues", "1"), ("mtu", "1500")] {
            assert!(NET_REPLUG.contains(&key));
            let set = parse("net0", &format!("virtio=BC:24:11:00:00:01,bridge=vmbr0,{key}={value}"));
            assert!(nic_change_waits(&none, Some(&nic), Some(&set)), "{key}={value} where unset");
            assert!(!nic_change_waits(&all, Some(&nic), Some(&set)), "network hotplug replugs it");
        }
    }

    #[test]
    fn deletions_unplug_like_additions() {
        let all = Hotplug::parse(None);
        let none = Hotplug::parse(Some("0"));
        assert!(!delete_waits(&all, "net0") && delete_waits(&none, "net0"));
        assert!(!delete_waits(&all, "virtio1") && delete_waits(&none, "scsi1"));
        assert!(delete_waits(&all, "sata0") && delete_waits(&all, "efidisk0"));
        assert!(!delete_waits(&none, "description") && !delete_waits(&none, "ipconfig1"));
        assert!(!delete_waits(&none, "cpulimit") && delete_waits(&all, "cores"));
    }

    #[test]
    fn hotplug_defaults() {
        assert!(Hotplug::parse(None).allows("usb") && Hotplug::parse(Some("1")).allows("disk"));
        assert!(!Hotplug::parse(Some("0")).allows("network"));
        assert!(Hotplug::parse(Some("cpu,memory")).allows("memory") && !Hotplug::parse(Some("cpu")).allows("disk"));
    }

    /// vmconfig_update_disk: a running VM's drive keeps its media type (`disk` when unset).
    #[test]
    fn media_type_never_changes_live() {
        let drive = |key: &str, v: &str| PropertyString::parse_lenient(format_for_key(key).unwrap(), v).unwrap();
        let disk = drive("scsi1", "truenas:120/vm-120-disk-0.qcow2,iothread=1,size=100G");
        let iso = drive("scsi1", "local:iso/debian.iso,media=cdrom");
        assert_eq!(drive_update_refusal("scsi1", &disk, &iso).as_deref(), Some(MEDIA_CHANGE));
        assert_eq!(drive_update_refusal("scsi1", &iso, &disk).as_deref(), Some(MEDIA_CHANGE));
        let explicit = drive("scsi1", "truenas:120/vm-120-disk-0.qcow2,media=disk,size=100G");
        assert_eq!(drive_update_refusal("scsi1", &disk, &explicit), None);
        let other_iso = drive("ide2", "local:iso/other.iso,media=cdrom");
        assert_eq!(drive_update_refusal("ide2", &iso, &other_iso), None);
        let cloudinit = drive("ide2", "local-lvm:cloudinit,media=cdrom");
        assert_eq!(drive_update_refusal("ide2", &drive("ide2", "local-lvm:vm-1-disk-0"), &cloudinit), None);
    }
}

//! The privileges a write needs, as qemu-server checks them, tested against what PVE says the token or user holds (`GET /access/permissions`), before any write and in check mode alike.
//!
//! Each operation's function lists its `Need`s in the order qemu-server's API method checks them
//! (qemu-server `src/PVE/API2/Qemu.pm`: the method's `permissions => { check => ... }` entry, then
//! the checks in its code); `Privileges::require` asks PVE once per ACL path and fails at the
//! first need not held with the text of PVE's own 403, `Permission check failed (<path>,
//! <privilege>)` (pve-access-control `RPCEnvironment.pm` `check`, `check_any`), so a check run
//! and a real run fail alike. docs/pve-semantics.md §24 (how PVE answers), §27 (these rules).

use std::collections::{BTreeMap, BTreeSet};

use crate::pve::devices::{
    disk_bus, is_disk_key, is_nic_key, parse_new_cloudinit, parse_new_disk, volume_storage, Disk, Nic,
};
use crate::pve::request::Form;
use crate::pve::volume::{content_and_owner, Volume, VolumeKind};

/// One privilege check of PVE.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Need {
    /// `check` (every privilege, `any: false`) or `check_any` (one of them) on one ACL path.
    Privs { path: String, privs: Vec<&'static str>, any: bool },
    /// Held when one of `options` is held (tried in order, as PVE tries a pool before the VM).
    /// When none is: the last option's message, or with `bare` PVE's `raise_perm_exc()` without
    /// a detail, `Permission check failed`.
    OneOf { options: Vec<Need>, bare: bool },
    /// `SDN.Use` on a bridge or on each of its VLANs (pve-guest-common `GuestHelpers.pm`
    /// `check_vnet_access`): on `/sdn/zones/<zone>/<bridge>` without VLANs, else on
    /// `/sdn/zones/<zone>/<bridge>/<vlan>` for each. The zone is the VNet's, `localnetwork` for a
    /// plain bridge (`Privileges::with_vnet_zones`).
    Bridge { bridge: String, vlans: Vec<u16> },
    /// Held when every one of these is (in order; the first not held fails).
    AllOf(Vec<Need>),
    /// What only `root@pam` may do; the message is PVE's.
    RootOnly(String),
    /// Never held: PVE refuses with this message (inside a `OneOf`, unless an earlier option is
    /// held).
    Refused(String),
    /// A change of the VM's tags from `old` to `new` under the datacenter's tag policy
    /// (`assert_tag_permissions` after its `VM.Config.Options`; docs/pve-semantics.md §44.3).
    Tags { old: String, new: String },
    /// One of `options`, which one PVE checks depending on what this user cannot see
    /// (`unseen.rs`): every option held, passed; none, refused with `refused`; some, passed with
    /// the warning `unknown`.
    Unseen { options: Vec<Need>, refused: String, unknown: String },
}

/// The privileges of one VM path, `/vms/{vmid}`.
pub fn vms(vmid: u64) -> String {
    format!("/vms/{vmid}")
}

fn all(path: impl Into<String>, privs: &[&'static str]) -> Need {
    Need::Privs { path: path.into(), privs: privs.to_vec(), any: false }
}

/// `RPCEnvironment::check_vm_perm`: on the pool if one is given and holds them, else on the VM.
fn vm_perm(vmid: u64, pool: Option<&str>, privs: &[&'static str], any: bool) -> Need {
    let on_vm = Need::Privs { path: vms(vmid), privs: privs.to_vec(), any };
    match pool {
        Some(p) => Need::OneOf {
            options: vec![Need::Privs { path: format!("/pool/{p}"), privs: privs.to_vec(), any }, on_vm],
            bare: false,
        },
        None => on_vm,
    }
}

/// `VM.Allocate` on the new VM or on its pool, else the bare `Permission check failed`
/// (`create_vm`, and the `or` of `clone_vm`'s permissions entry).
fn allocate(vmid: u64, pool: Option<&str>) -> Need {
    let mut options = vec![all(vms(vmid), &["VM.Allocate"])];
    if let Some(p) = pool {
        options.push(all(format!("/pool/{p}"), &["VM.Allocate"]));
    }
    Need::OneOf { options, bare: true }
}

/// The privilege class of each config key qemu-server's `$check_vm_modify_config_perm` knows
/// (its `$cpuoptions`, `$memoryoptions`, `$hwtypeoptions`, `$generaloptions`, `$vmpoweroptions`,
/// `$diskoptions`, `$cloudinitoptions`).
const KEY_PRIVILEGES: &[(&str, &[&str])] = &[
    ("VM.Config.CPU", &["cores", "cpu", "runningcpu", "cpulimit", "cpuunits", "numa", "smp", "sockets", "vcpus"]),
    ("VM.Config.Memory", &["memory", "balloon", "shares", "allow-ksm"]),
    (
        "VM.Config.HWType",
        &[
            "acpi",
            "hotplug",
            "kvm",
            "machine",
            "runningmachine",
            "scsihw",
            "smbios1",
            "tablet",
            "vga",
            "watchdog",
            "audio0",
            "rng0",
        ],
    ),
    (
        "VM.Config.Options",
        &[
            "agent",
            "autostart",
            "bios",
            "description",
            "keyboard",
            "localtime",
            "migrate_downtime",
            "migrate_speed",
            "name",
            "onboot",
            "ostype",
            "protection",
            "reboot",
            "startdate",
            "startup",
            "tdf",
            "template",
        ],
    ),
    ("VM.PowerMgmt", &["freeze"]),
    ("VM.Config.Disk", &["boot", "bootdisk", "vmstatestorage"]),
    (
        "VM.Config.Cloudinit",
        &["cicustom", "cipassword", "citype", "ciuser", "ciupgrade", "nameserver", "searchdomain", "sshkeys"],
    ),
];

/// `numa0`, `ipconfig3`, ...: the key has this prefix and a decimal index.
fn indexed(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// `$check_vm_modify_config_perm` for one key set or deleted: the privileges on `/vms/{vmid}`
/// (or the pool) that key needs. Drives, `cdrom`, `unusedN`, `serialN`, `usbN`, `hostpciN`,
/// `virtiofsN` and `tags` need nothing here: their checks depend on the value and are made
/// elsewhere (`drive`, `device`). A key in none of PVE's classes is root's only.
pub fn config_key(vmid: u64, pool: Option<&str>, key: &str) -> Vec<Need> {
    if is_disk_key(key) || key == "cdrom" || key == "tags" {
        return Vec::new();
    }
    if ["unused", "serial", "usb", "hostpci", "virtiofs"].iter().any(|p| indexed(key, p)) {
        return Vec::new();
    }
    if let Some((privilege, _)) = KEY_PRIVILEGES.iter().find(|(_, keys)| keys.contains(&key)) {
        let mut needs = vec![vm_perm(vmid, pool, &[privilege], false)];
        if key == "startup" {
            // "special case for startup since it changes host behaviour"
            needs.push(all("/", &["Sys.Modify"]));
        }
        return needs;
    }
    if indexed(key, "numa") {
        return vec![vm_perm(vmid, pool, &["VM.Config.CPU"], false)];
    }
    if is_nic_key(key) || key == "running-nets-host-mtu" {
        return vec![vm_perm(vmid, pool, &["VM.Config.Network"], false)];
    }
    if indexed(key, "ipconfig") {
        return vec![vm_perm(vmid, pool, &["VM.Config.Cloudinit", "VM.Config.Network"], true)];
    }
    if key == "vmstate" {
        return vec![vm_perm(vmid, pool, &["VM.Config.Disk", "VM.PowerMgmt"], false)];
    }
    vec![Need::RootOnly(format!("only root can set '{key}' config"))]
}

/// What a drive value is to PVE's checks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum DriveKind {
    CloudInit,
    Cdrom,
    Disk,
}

fn drive_kind(key: &str, value: &str) -> DriveKind {
    let disk = Disk::parse(key, value);
    let file = disk.as_ref().and_then(|d| d.volume.clone()).unwrap_or_default();
    if is_cloudinit_volume(&file) {
        DriveKind::CloudInit
    } else if disk.is_some_and(|d| d.media == "cdrom") || file == "cdrom" {
        DriveKind::Cdrom
    } else {
        DriveKind::Disk
    }
}

/// qemu-server `Drive.pm` `drive_is_cloudinit`: a cloud-init drive to allocate
/// (`<storage>:cloudinit`) or a cloud-init volume (`vm-<vmid>-cloudinit`).
fn is_cloudinit_volume(file: &str) -> bool {
    parse_new_cloudinit(file).is_some() || Volume::parse(file).is_some_and(|v| v.kind == VolumeKind::CloudInit)
}

/// `update_vm_api`'s `$check_drive_perms` for a drive's old or new value: a cloud-init drive
/// needs `VM.Config.Cloudinit` and `VM.Config.CDROM`, a CD-ROM `VM.Config.CDROM`, a disk
/// `VM.Config.Disk`.
pub fn drive(vmid: u64, key: &str, value: &str) -> Need {
    match drive_kind(key, value) {
        DriveKind::CloudInit => vm_perm(vmid, None, &["VM.Config.Cloudinit", "VM.Config.CDROM"], false),
        DriveKind::Cdrom => vm_perm(vmid, None, &["VM.Config.CDROM"], false),
        DriveKind::Disk => vm_perm(vmid, None, &["VM.Config.Disk"], false),
    }
}

/// pve-storage `Storage.pm` `check_volume_access` for VM `vmid` using the existing volume
/// `volid`: `Datastore.Allocate` on its storage is enough; else an ISO, container template or
/// import source needs `Datastore.AllocateSpace` or `Datastore.Audit` there, the VM's own images
/// nothing, another VM's images `Datastore.Audit` and `VM.Config.Disk` on that VM. A path
/// outside any storage is root's only.
pub(crate) fn volume_access(vmid: u64, volid: &str) -> Vec<Need> {
    let Some(sid) = volume_storage(volid) else {
        return vec![Need::RootOnly("Only root can pass arbitrary filesystem paths.".into())];
    };
    let storage = format!("/storage/{sid}");
    let otherwise = match content_and_owner(volid) {
        ("iso" | "vztmpl" | "import", _) => {
            // "require at least read access to storage, (custom) templates/ISOs could be sensitive"
            Need::Privs { path: storage.clone(), privs: vec!["Datastore.AllocateSpace", "Datastore.Audit"], any: true }
        }
        (_, Some(owner)) if owner == vmid => return Vec::new(),
        ("images", Some(owner)) => {
            Need::AllOf(vec![all(storage.clone(), &["Datastore.Audit"]), all(vms(owner), &["VM.Config.Disk"])])
        }
        _ => Need::Refused(format!("missing privileges to access {volid}")),
    };
    vec![Need::OneOf { options: vec![all(storage, &["Datastore.Allocate"]), otherwise], bare: false }]
}

/// qemu-server `API2/Qemu.pm` `$check_storage_access` for one drive a create or update sets: a
/// new disk (`STORAGE:N`, or `N` on `default_storage`) needs `Datastore.AllocateSpace` on its
/// storage; the host's CD-ROM drive `Sys.Console` on `/`; an existing volume
/// `check_volume_access`; `none` and cloud-init nothing. An `import-from` source's own privileges
/// are `import_from`'s, weighed after the source's format (`Preflight::import_sources`, §63.3).
pub fn storage_access(vmid: u64, key: &str, value: &str, default_storage: Option<&str>) -> Vec<Need> {
    let Some(disk) = Disk::parse(key, value) else { return Vec::new() };
    if disk_bus(key) == Some("unused") {
        return disk.volume.map(|v| volume_access(vmid, &v)).unwrap_or_default();
    }
    let file = disk.volume.clone().unwrap_or_default();
    let cdrom = disk.media == "cdrom";
    let mut needs = Vec::new();
    if file.is_empty() || file == "none" || is_cloudinit_volume(&file) {
        // nothing to check
    } else if cdrom && file == "cdrom" {
        needs.push(all("/", &["Sys.Console"]));
    } else if let (false, Some((storage, _))) = (cdrom, parse_new_disk(&file)) {
        match storage.or(default_storage) {
            Some(sid) => needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"])),
            None => needs.push(Need::Refused("no storage ID specified (and no default storage)".into())),
        }
    } else {
        needs.extend(volume_access(vmid, &file));
    }
    needs
}

/// `check_bridge_access` for a `netN` value: `SDN.Use` on its bridge, or on its VLAN tag and each
/// trunk VLAN (`get_tags_from_trunk`: `10;20-22` is 10, 20, 21, 22).
pub fn bridge(key: &str, value: &str) -> Vec<Need> {
    let nic = Nic::parse(key, value);
    let Some(bridge) = nic.bridge else { return Vec::new() };
    let mut vlans: BTreeSet<u16> = nic.tag.filter(|t| *t > 0).into_iter().collect();
    for part in nic.trunks.as_deref().unwrap_or("").split(';').filter(|p| !p.is_empty()) {
        let (from, to) = part.split_once('-').unwrap_or((part, ""));
        let Ok(from) = from.trim().parse::<u16>() else { continue };
        match to.trim().parse::<u16>() {
            Ok(to) if to > from => vlans.extend(from..=to),
            _ => {
                vlans.insert(from);
            }
        }
    }
    vec![Need::Bridge { bridge, vlans: vlans.into_iter().collect() }]
}

const EITHER: &str = "either 'host' or 'mapping' must be set.";
/// The value-dependent keys `$check_vm_modify_config_perm` leaves out: `serialN` (`socket` needs
/// `VM.Config.HWType`, a host device is root's), `usbN` (`VM.Config.HWType`; `spice`, or a mapping with `Mapping.Use`
/// on `/mapping/usb/<id>`; a host device is root's), `hostpciN` (a mapping: `Mapping.Use` and `VM.Config.HWType`, a
/// `romfile` root@pam's; a host device is root's), `virtiofsN` (`VM.Config.Disk`, `Mapping.Use` on `/mapping/dir/<id>`);
/// a `usbN` or `hostpciN` with neither host nor mapping is refused but for root@pam (§64).
fn device(vmid: u64, pool: Option<&str>, key: &str, value: &str) -> Vec<Need> {
    let prop = |name: &str| {
        value.split(',').find_map(|kv| kv.split_once('=').filter(|(k, _)| *k == name).map(|(_, v)| v.to_string()))
    };
    let hwtype = || vm_perm(vmid, pool, &["VM.Config.HWType"], false);
    if indexed(key, "serial") {
        let real = || Need::RootOnly(format!("only root can set '{key}' config for real devices"));
        return vec![if value == "socket" { hwtype() } else { real() }];
    }
    if indexed(key, "usb") {
        let host = prop("host").or_else(|| (!value.contains('=')).then(|| value.to_string()));
        return match (host, prop("mapping")) {
            (Some(h), _) if h.eq_ignore_ascii_case("spice") => vec![hwtype()],
            (Some(_), _) => {
                vec![hwtype(), Need::RootOnly(format!("only root can set '{key}' config for real devices"))]
            }
            (None, Some(m)) => vec![hwtype(), all(format!("/mapping/usb/{m}"), &["Mapping.Use"])],
            (None, None) => vec![hwtype(), Need::RootOnly(EITHER.into())], // root@pam returns first
        };
    }
    if indexed(key, "hostpci") {
        let host = prop("host").is_some() || !value.split(',').next().unwrap_or("").contains('=');
        return match prop("mapping") {
            None if !host => vec![Need::RootOnly(EITHER.into())], // check_hostpci_perm: neither (§64)
            Some(m) if !host => {
                // then a ROM file, even on a mapped device, is root@pam's (a parameter error)
                let rom =
                    prop("romfile").map(|_| Need::RootOnly(format!("{key}: only root@pam can set 'romfile' option")));
                [all(format!("/mapping/pci/{m}"), &["Mapping.Use"]), hwtype()].into_iter().chain(rom).collect()
            }
            _ => vec![Need::RootOnly(format!("only root can set '{key}' config for non-mapped devices"))],
        };
    }
    if indexed(key, "rng") {
        return handlers::rng(vmid, pool, value);
    }
    if indexed(key, "virtiofs") {
        let dirid = prop("dirid").unwrap_or_else(|| value.split(',').next().unwrap_or("").to_string());
        return vec![
            vm_perm(vmid, pool, &["VM.Config.Disk"], false),
            all(format!("/mapping/dir/{dirid}"), &["Mapping.Use"]),
        ];
    }
    Vec::new()
}

/// The device keys whose old value `update_vm_api` checks as it checks a new one.
const VALUE_DEVICES: &[&str] = &["usb", "hostpci", "rng", "virtiofs"];

/// The parameters of `create_vm` that are not config keys (taken out before its checks).
const CREATE_PARAMS: &[&str] = &[
    "node",
    "vmid",
    "archive",
    "bwlimit",
    "force",
    "pool",
    "start",
    "ha-managed",
    "storage",
    "unique",
    "live-restore",
    "import-working-storage",
];

/// The config keys of a create's form (its other parameters left out).
fn config_entries(config: &Form) -> impl Iterator<Item = (&str, &str)> {
    config.iter().map(|(k, v)| (k.as_str(), v.as_str())).filter(|(k, _)| !CREATE_PARAMS.contains(k))
}

/// `POST /nodes/{node}/qemu` (`create_vm`) of VM `vmid` with the config keys `config` (what the
/// module sends: drives, NICs, options), `pool`, `storage` (the default storage) and `start`:
/// `Datastore.AllocateSpace` on `storage`; `VM.PowerMgmt` to start; `VM.Allocate` on the VM or
/// its pool; each drive's storage access; each key's class (on the VM or its pool); the
/// value-dependent devices; `SDN.Use` on each bridge. A `cdrom` alias counts as `ide2`.
pub fn create(vmid: u64, pool: Option<&str>, storage: Option<&str>, start: bool, config: &Form) -> Vec<Need> {
    let mut needs = Vec::new();
    if let Some(sid) = storage {
        needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]));
    }
    if start {
        needs.push(vm_perm(vmid, pool, &["VM.PowerMgmt"], false));
    }
    needs.push(allocate(vmid, pool));
    if let Some((_, archive)) = config.iter().find(|(k, v)| k == "archive" && v != "-") {
        needs.extend(handlers::archive(vmid, archive));
    }
    for (key, value) in config_entries(config) {
        if key == "cdrom" {
            let value = if value.contains("media=") { value.to_string() } else { format!("{value},media=cdrom") };
            needs.extend(storage_access(vmid, "ide2", &value, storage));
        } else if is_disk_key(key) {
            needs.extend(storage_access(vmid, key, value, storage));
        }
    }
    for (key, _) in config_entries(config) {
        needs.extend(config_key(vmid, pool, key));
    }
    for (key, value) in config_entries(config) {
        needs.extend(device(vmid, pool, key, value));
    }
    for (key, value) in config_entries(config).filter(|(k, _)| is_nic_key(k)) {
        needs.extend(bridge(key, value));
    }
    if let Some((_, cpu)) = config_entries(config).find(|(k, _)| *k == "cpu") {
        needs.extend(handlers::cpu_model(cpu, None));
    }
    if let Some((_, tags)) = config_entries(config).find(|(k, _)| *k == "tags") {
        needs.extend(handlers::tags(vmid, None, tags));
    }
    needs
}

/// The privileges of which `PUT`/`POST .../config` (`update_vm`, `update_vm_async`) needs one
/// on `/vms/{vmid}` before anything else (`$vm_config_perm_list`).
const CONFIG_PRIVILEGES: &[&str] = &[
    "VM.Config.Disk",
    "VM.Config.CDROM",
    "VM.Config.CPU",
    "VM.Config.Memory",
    "VM.Config.Network",
    "VM.Config.HWType",
    "VM.Config.Options",
    "VM.Config.Cloudinit",
];

/// The parameters of `update_vm_api` that are not config keys (taken out before its checks).
const UPDATE_PARAMS: &[&str] =
    &["node", "vmid", "digest", "delete", "revert", "force", "skiplock", "background_delay", "import-working-storage"];

/// A config update of VM `vmid` (`update_vm_api`) that sets `set` and deletes `delete`, with
/// `current` the VM's config (applied values, pending ones over them: what PVE's
/// `load_config` sees): one of the config privileges; each deleted and each set key's class; each
/// set drive's storage access; `SDN.Use` on each new bridge; then, as its `$updatefn` checks them,
/// a deleted `unusedN` needs `VM.Config.Disk`, a deleted drive its drive privileges, a deleted
/// NIC `SDN.Use` on its bridge, a set drive the privileges of its old and its new value, a set
/// device its own.
pub fn update(vmid: u64, current: &BTreeMap<String, String>, set: &Form, delete: &[String]) -> Vec<Need> {
    let set: Form = set.iter().filter(|(k, _)| !UPDATE_PARAMS.contains(&k.as_str())).cloned().collect();
    let set = &set;
    let mut needs = vec![Need::Privs { path: vms(vmid), privs: CONFIG_PRIVILEGES.to_vec(), any: true }];
    for key in delete {
        needs.extend(config_key(vmid, None, key));
    }
    for (key, _) in set {
        needs.extend(config_key(vmid, None, key));
    }
    for (key, value) in set.iter().filter(|(k, _)| is_disk_key(k)) {
        needs.extend(storage_access(vmid, key, value, None));
    }
    for (key, value) in set.iter().filter(|(k, _)| is_nic_key(k)) {
        needs.extend(bridge(key, value));
    }
    if let Some((_, cpu)) = set.iter().find(|(k, _)| k == "cpu") {
        needs.extend(handlers::cpu_model(cpu, current.get("cpu").map(String::as_str)));
    }
    for key in delete {
        let Some(old) = current.get(key) else { continue };
        if indexed(key, "unused") {
            needs.push(vm_perm(vmid, None, &["VM.Config.Disk"], false));
            needs.extend(handlers::volume_removal(vmid, key, old));
        } else if is_disk_key(key) {
            needs.push(drive(vmid, key, old));
        } else if is_nic_key(key) {
            needs.extend(bridge(key, old));
        } else if indexed(key, "serial") {
            needs.push(handlers::serial_delete(vmid, key, old));
        } else if VALUE_DEVICES.iter().any(|p| indexed(key, p)) {
            needs.extend(device(vmid, None, key, old));
        } else if key == "tags" {
            needs.extend(handlers::tags(vmid, Some(old), ""));
        }
    }
    for (key, value) in set {
        if is_disk_key(key) && !indexed(key, "unused") {
            if let Some(old) = current.get(key) {
                needs.push(drive(vmid, key, old));
            }
            needs.push(drive(vmid, key, value));
        } else if indexed(key, "serial") {
            needs.push(handlers::serial_set(vmid, key, current.get(key).map(String::as_str), value));
        } else if key == "tags" {
            needs.extend(handlers::tags(vmid, current.get(key).map(String::as_str), value));
        } else {
            // a device's old value is checked as its new one (`check_usb_perm` and the others)
            if let (true, Some(old)) = (VALUE_DEVICES.iter().any(|p| indexed(key, p)), current.get(key)) {
                needs.extend(device(vmid, None, key, old));
            }
            needs.extend(device(vmid, None, key, value));
        }
    }
    needs
}

/// `POST .../clone` (`clone_vm`) of VM `vmid` (config `source`: the VM's, or the snapshot's) to
/// `newid` in `pool`, with the full clone's `storage`: `VM.Clone` on the source; `VM.Allocate` on
/// the new VM or the pool; `$check_storage_access_clone` (`Datastore.AllocateSpace` on `storage`,
/// or on each disk's own storage; `Sys.Console` for the host's CD-ROM drive; on
/// `vmstatestorage`); `SDN.Use` on each bridge of the source.
pub fn clone(
    vmid: u64,
    newid: u64,
    pool: Option<&str>,
    storage: Option<&str>,
    source: &BTreeMap<String, String>,
) -> Vec<Need> {
    let mut needs = vec![all(vms(vmid), &["VM.Clone"]), allocate(newid, pool)];
    for (key, value) in source.iter().filter(|(k, _)| is_disk_key(k) && !indexed(k, "unused")) {
        let Some(disk) = Disk::parse(key, value) else { continue };
        let file = disk.volume.unwrap_or_default();
        if file.is_empty() || file == "none" {
            continue;
        }
        if disk.media == "cdrom" || is_cloudinit_volume(&file) {
            if file == "cdrom" {
                needs.push(all("/", &["Sys.Console"]));
            }
        } else if let Some(sid) = storage.or(volume_storage(&file)) {
            needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]));
        }
    }
    if let Some(sid) = source.get("vmstatestorage") {
        needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]));
    }
    needs.extend(handlers::mapping_access(source));
    for (key, value) in source.iter().filter(|(k, _)| is_nic_key(k)) {
        needs.extend(bridge(key, value));
    }
    if let Some(cpu) = source.get("cpu") {
        needs.extend(handlers::cpu_model(cpu, None));
    }
    needs
}

/// `PUT /pools` (pve-manager `Pool.pm` `update_pool`) moving VM `vmid` into pool `to`, out of
/// `from`: `Pool.Allocate` on `/pool/<to>` (its permissions entry); `check_perm_modify` on the VM
/// (`Permissions.Modify` or `VM.Allocate` on `/vms/<vmid>`); with `allow-move`, `Pool.Allocate`
/// on `/pool/<from>`. docs/pve-semantics.md §36.
pub fn pool_move(vmid: u64, to: &str, from: Option<&str>) -> Vec<Need> {
    let mut needs = vec![
        all(format!("/pool/{to}"), &["Pool.Allocate"]),
        Need::Privs { path: vms(vmid), privs: vec!["Permissions.Modify", "VM.Allocate"], any: true },
    ];
    if let Some(old) = from {
        needs.push(all(format!("/pool/{old}"), &["Pool.Allocate"]));
    }
    needs
}

/// `POST .../move_disk` (`move_vm_disk`) to `storage`: `VM.Config.Disk`, then
/// `Datastore.AllocateSpace` on the target storage.
pub fn move_disk(vmid: u64, storage: &str) -> Vec<Need> {
    vec![all(vms(vmid), &["VM.Config.Disk"]), all(format!("/storage/{storage}"), &["Datastore.AllocateSpace"])]
}

/// `POST .../move_disk` with `target-vmid` (`move_vm_disk`, a reassign) of a volume on `storage`:
/// `VM.Config.Disk` on the VM, the same on the target VM (`check_vm_perm`), then
/// `Datastore.AllocateSpace` on the volume's storage.
pub fn reassign_disk(vmid: u64, target_vmid: u64, storage: &str) -> Vec<Need> {
    vec![
        all(vms(vmid), &["VM.Config.Disk"]),
        vm_perm(target_vmid, None, &["VM.Config.Disk"], false),
        all(format!("/storage/{storage}"), &["Datastore.AllocateSpace"]),
    ]
}

/// `POST .../migrate` (`migrate_vm`): `VM.Migrate`; with `targetstorage` other than the identity
/// map `1`, `VM.Config.Disk` too, and on each target storage `Datastore.AllocateSpace`
/// (`$check_storage_access_migrate`).
pub fn migrate(vmid: u64, targetstorage: Option<&str>) -> Vec<Need> {
    let mut needs = vec![all(vms(vmid), &["VM.Migrate"])];
    if let Some(map) = targetstorage {
        let targets: BTreeSet<&str> =
            map.split([',', ';']).map(|e| e.rsplit_once(':').map_or(e, |(_, t)| t)).filter(|t| *t != "1").collect();
        if map.split([',', ';']).all(|e| !e.is_empty() && e != "1") {
            needs.push(all(vms(vmid), &["VM.Config.Disk"]));
        }
        for sid in targets {
            needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]));
        }
    }
    needs
}

/// `POST .../status/{start,stop,shutdown,reboot,reset,suspend,resume}`: `VM.PowerMgmt`.
pub fn power(vmid: u64) -> Vec<Need> {
    vec![all(vms(vmid), &["VM.PowerMgmt"])]
}

/// `DELETE /nodes/{node}/qemu/{vmid}` (`destroy_vm`): `VM.Allocate`.
pub fn destroy(vmid: u64) -> Vec<Need> {
    vec![all(vms(vmid), &["VM.Allocate"])]
}

/// `POST .../template` (`template`): `VM.Allocate`.
pub fn template(vmid: u64) -> Vec<Need> {
    vec![all(vms(vmid), &["VM.Allocate"])]
}

mod handlers;
mod privileges;
mod tag_policy;
mod unseen;
pub use handlers::{import_from, read_config, resize, unlink, vmstate_storage};
pub use privileges::{Held, Privileges};
pub use unseen::{base_use_not_known, hibernate, lists_volume, volume_listing, Listing};

#[cfg(test)]
mod tests;

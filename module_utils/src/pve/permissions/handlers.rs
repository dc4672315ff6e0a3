//! The privileges qemu-server checks inside its handlers and task workers, by value: removing a volume, a device's old and new value, a custom CPU model, a hardware RNG, tags, a restore's archive.
//!
//! Sources: qemu-server `src/PVE/API2/Qemu.pm` (`update_vm_api`'s delete and set loops,
//! `check_usb_perm`, `check_hostpci_perm`, `check_rng_perm`, `check_dir_perm`,
//! `$check_cpu_model_access`, `resize_vm`), `src/PVE/QemuServer.pm` (`try_deallocate_drive`),
//! pve-guest-common `src/PVE/GuestHelpers.pm` (`assert_tag_permissions`). Every check but the
//! storage ones is skipped for `root@pam` itself, not for its API tokens: PVE compares the auth id
//! (`$authuser eq 'root@pam'`), and a token's is `root@pam!<tokenid>`. docs/pve-semantics.md §44.

use std::collections::{BTreeMap, BTreeSet};

use super::{all, indexed, vm_perm, vms, volume_access, Need};
use crate::pve::devices::{is_disk_key, volume_storage, Disk};
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{content_and_owner, in_ova, Volume};

/// One property of a property string (`source=/dev/hwrng,max_bytes=1024`), or its default key's
/// value when the string starts without `name=`.
fn prop(value: &str, name: &str, default_key: bool) -> Option<String> {
    value.split(',').enumerate().find_map(|(i, kv)| match kv.split_once('=') {
        Some((k, v)) if k == name => Some(v.to_string()),
        None if i == 0 && default_key && !kv.is_empty() => Some(kv.to_string()),
        _ => None,
    })
}

/// `try_deallocate_drive`: removing a volume the VM owns (deleting `unusedN`, or a drive with
/// `force`) needs `Datastore.AllocateSpace` on its storage; a CD-ROM, or a volume of another VM,
/// is only dropped from the config.
pub fn volume_removal(vmid: u64, key: &str, value: &str) -> Vec<Need> {
    let Some(disk) = Disk::parse(key, value) else { return Vec::new() };
    let Some(volid) = disk.volume.filter(|_| disk.media != "cdrom") else { return Vec::new() };
    match (volume_storage(&volid), content_and_owner(&volid)) {
        (Some(sid), ("images", Some(owner))) if owner == vmid => {
            vec![all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"])]
        }
        _ => Vec::new(),
    }
}

/// The VM a backup volume is of (pve-storage `Plugin.pm` `parse_volname`:
/// `backup/vzdump-<qemu|lxc|openvz>-<vmid>-...`; `PBSPlugin.pm`: `backup/<type>/<vmid>/<time>`).
pub fn backup_owner(volid: &str) -> Option<u64> {
    let digits = |id: &str| (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.parse().ok())?;
    let name = volid.split_once(':')?.1.strip_prefix("backup/")?;
    match name.split('/').collect::<Vec<_>>().as_slice() {
        [file] => {
            let rest = ["qemu", "lxc", "openvz"].iter().find_map(|t| file.strip_prefix(&format!("vzdump-{t}-")))?;
            rest.split_once('-').filter(|(_, tail)| !tail.is_empty()).and_then(|(id, _)| digits(id))
        }
        [_, id, _] => digits(id),
        _ => None,
    }
}

/// `create_vm` with `archive` (a restore): `check_volume_access` with content type `backup`. A
/// path is root's; a volume that is no backup is refused whoever asks; then `Datastore.Allocate`
/// on its storage is enough, a backup of this VM needs nothing more, one of another VM
/// `Datastore.AllocateSpace` on the storage and `VM.Backup` on that VM; else it is refused.
pub fn archive(vmid: u64, volid: &str) -> Vec<Need> {
    let Some(sid) = volume_storage(volid) else {
        return vec![Need::RootOnly("Only root can pass arbitrary filesystem paths.".into())];
    };
    if content_and_owner(volid).0 != "backup" {
        return vec![Need::Refused(format!("unable to use volume {volid} - content type needs to be 'backup'"))];
    }
    let storage = format!("/storage/{sid}");
    let otherwise = match backup_owner(volid) {
        Some(owner) if owner == vmid => return Vec::new(),
        Some(owner) => {
            Need::AllOf(vec![all(storage.clone(), &["Datastore.AllocateSpace"]), all(vms(owner), &["VM.Backup"])])
        }
        None => Need::Refused(format!("missing privileges to access {volid}")),
    };
    vec![Need::OneOf { options: vec![all(storage, &["Datastore.Allocate"]), otherwise], bare: false }]
}

/// `resize_vm`'s worker: `Datastore.AllocateSpace` on the storage of the volume it grows.
pub fn resize_storage(volid: &str) -> Vec<Need> {
    volume_storage(volid)
        .map(|sid| vec![all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"])])
        .unwrap_or_default()
}

/// `check_rng_perm` for an `rng0` value: `VM.Config.HWType` (on the VM, or its pool at create),
/// and with the host's hardware RNG as source `Mapping.Use` on `/mapping/hwrng`.
pub fn rng(vmid: u64, pool: Option<&str>, value: &str) -> Vec<Need> {
    let mut needs = vec![vm_perm(vmid, pool, &["VM.Config.HWType"], false)];
    if prop(value, "source", true).as_deref() == Some("/dev/hwrng") {
        needs.push(all("/mapping/hwrng", &["Mapping.Use"]));
    }
    needs
}

/// The CPU model of a `cpu` value (`cputype`, the default key).
fn cputype(value: &str) -> Option<String> {
    prop(value, "cputype", true).filter(|t| !t.is_empty())
}

/// `$check_cpu_model_access`: a custom model (`custom-<name>`) needs `Mapping.Use` on
/// `/mapping/cpu/<name>`, unless the VM's current `cpu` already names the same model.
pub fn cpu_model(new: &str, existing: Option<&str>) -> Vec<Need> {
    let Some(model) = cputype(new) else { return Vec::new() };
    if existing.and_then(cputype).is_some_and(|old| old == model) {
        return Vec::new();
    }
    match model.strip_prefix("custom-") {
        Some(name) => vec![all(format!("/mapping/cpu/{name}"), &["Mapping.Use"])],
        None => Vec::new(),
    }
}

/// QemuServer.pm `check_mapping_access` on a clone's source config: a host USB device (not
/// `spice`) or a host PCI device is root's; a mapped USB or PCI device, a hardware RNG and a
/// virtiofs directory need `Mapping.Use` on their mapping (keys in order; PVE walks a hash);
/// neither host nor mapping is refused but for root@pam, whom the check skips (§64).
pub fn mapping_access(config: &BTreeMap<String, String>) -> Vec<Need> {
    let mut needs = Vec::new();
    for (key, value) in config {
        let mapping = |kind: &str, id: Option<String>| match id {
            Some(id) => all(format!("/mapping/{kind}/{id}"), &["Mapping.Use"]),
            None => Need::RootOnly("either 'host' or 'mapping' must be set.".into()),
        };
        if indexed(key, "usb") {
            needs.push(match prop(value, "host", true) {
                Some(h) if h.eq_ignore_ascii_case("spice") => continue,
                Some(_) => Need::RootOnly(format!("only root can set '{key}' config for real devices")),
                None => mapping("usb", prop(value, "mapping", false)),
            });
        } else if indexed(key, "hostpci") {
            needs.push(match prop(value, "host", true) {
                Some(_) => Need::RootOnly(format!("only root can set '{key}' config for non-mapped devices")),
                None => mapping("pci", prop(value, "mapping", false)),
            });
        } else if indexed(key, "rng") {
            if prop(value, "source", true).as_deref() == Some("/dev/hwrng") {
                needs.push(all("/mapping/hwrng", &["Mapping.Use"]));
            }
        } else if indexed(key, "virtiofs") {
            needs.push(mapping("dir", prop(value, "dirid", true)));
        }
    }
    needs
}

/// `assert_tag_permissions` for a change of `tags` from `old` to `new`: `VM.Config.Options` on
/// the VM (never its pool), then each tag added or removed under the datacenter's tag policy
/// (`Need::Tags`, evaluated by `Privileges`).
pub fn tags(vmid: u64, old: Option<&str>, new: &str) -> Vec<Need> {
    vec![
        vm_perm(vmid, None, &["VM.Config.Options"], false),
        Need::Tags { old: old.unwrap_or("").to_string(), new: new.to_string() },
    ]
}

/// The tags whose count differs between `old` and `new` (PVE's `split_list` of each), sorted.
pub fn changed_tags(old: &str, new: &str) -> Vec<String> {
    let count = |text: &str| {
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for tag in text.split([';', ',', ' ']).filter(|t| !t.is_empty()) {
            *counts.entry(tag.to_string()).or_default() += 1;
        }
        counts
    };
    let (old, new) = (count(old), count(new));
    let all: BTreeSet<&String> = old.keys().chain(new.keys()).collect();
    all.into_iter().filter(|t| old.get(*t) != new.get(*t)).cloned().collect()
}

/// `update_vm_api`'s delete loop for `serialN`: a socket needs `VM.Config.HWType`, a real
/// device is root's, in the words of a delete.
pub fn serial_delete(vmid: u64, key: &str, old: &str) -> Need {
    if old == "socket" {
        vm_perm(vmid, None, &["VM.Config.HWType"], false)
    } else {
        Need::RootOnly(format!("only root can delete '{key}' config for real devices"))
    }
}

/// `update_vm_api`'s set loop for `serialN`: a socket where there was none or a socket needs
/// `VM.Config.HWType`; anything else is root's, in the words of a change.
pub fn serial_set(vmid: u64, key: &str, old: Option<&str>, new: &str) -> Need {
    if old.is_none_or(|v| v == "socket") && new == "socket" {
        vm_perm(vmid, None, &["VM.Config.HWType"], false)
    } else {
        Need::RootOnly(format!("only root can modify '{key}' config for real devices"))
    }
}

/// `PUT .../resize` (`resize_vm`) of the volume `volid`: `VM.Config.Disk`, then in its worker
/// `Datastore.AllocateSpace` on the volume's storage.
pub fn resize(vmid: u64, volid: &str) -> Vec<Need> {
    let mut needs = vec![all(vms(vmid), &["VM.Config.Disk"])];
    needs.extend(resize_storage(volid));
    needs
}

/// `PUT .../unlink` (`unlink`) of `key` (value `value`): `VM.Config.Disk`; removing the volume
/// (`unusedN`, or a drive with `force` on a stopped VM) `try_deallocate_drive`'s storage check.
pub fn unlink(vmid: u64, key: &str, value: &str, removes_volume: bool) -> Vec<Need> {
    let mut needs = vec![all(vms(vmid), &["VM.Config.Disk"])];
    if removes_volume || indexed(key, "unused") {
        needs.extend(volume_removal(vmid, key, value));
    }
    needs
}

/// QemuConfig.pm `find_vmstate_storage`: where a hibernation saves the VM's state when the call
/// names no `statestorage`: the config's `vmstatestorage`; else a shared storage one of its
/// drives (CD-ROMs left out) is on, else a local one, a file-based storage preferred in each;
/// else `local`. `None` when a storage of its drives is not in `storages` (not visible to this
/// user): then where PVE saves it is not known.
pub fn vmstate_storage(config: &BTreeMap<String, String>, storages: &[StorageConfig]) -> Option<String> {
    if let Some(sid) = config.get("vmstatestorage").filter(|s| !s.is_empty()) {
        return Some(sid.clone());
    }
    let (mut shared, mut local): (Option<&StorageConfig>, Option<&StorageConfig>) = (None, None);
    let used: BTreeSet<String> = config
        .iter()
        .filter(|(k, _)| is_disk_key(k) && !indexed(k, "unused"))
        .filter_map(|(k, v)| Disk::parse(k, v).filter(|d| d.media != "cdrom"))
        .filter_map(|d| d.volume.as_deref().and_then(volume_storage).map(str::to_string))
        .collect();
    for sid in used {
        let scfg = storages.iter().find(|s| s.storage == sid)?;
        let slot = if scfg.shared { &mut shared } else { &mut local };
        if slot.is_none() || scfg.path.is_some() {
            *slot = Some(scfg);
        }
    }
    Some(shared.or(local).map_or_else(|| "local".to_string(), |s| s.storage.clone()))
}

/// `vm_suspend` with `todisk` (its permission text: "if you have set 'todisk', you need also
/// 'VM.Config.Disk' on /vms/{vmid} and 'Datastore.AllocateSpace' on the storage for the
/// vmstate"): `VM.PowerMgmt` (the method's), `VM.Config.Disk`, then `Datastore.AllocateSpace` on
/// the state's storage (`vmstate_storage`; not checked when it is not known).
pub fn hibernate(vmid: u64, statestorage: Option<&str>) -> Vec<Need> {
    let mut needs = vec![all(vms(vmid), &["VM.PowerMgmt"]), vm_perm(vmid, None, &["VM.Config.Disk"], false)];
    if let Some(sid) = statestorage {
        needs.push(all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"]));
    }
    needs
}

/// Reading VM `vmid`'s config (`GET .../pending`, qemu-server API2/Qemu.pm `vm_pending`, and
/// `GET .../config`, `vm_config`: each `['perm', '/vms/{vmid}', ['VM.Audit']]`). A VM in `pool`
/// also has the pool's roles (pve-access-control RPCEnvironment.pm `$compile_acl_path` gives
/// each member `/vms/<vmid>` the roles of `/pool/<pool>`), which a new VM gets with its create or
/// clone (`add_vm_to_pool`).
pub fn read_config(vmid: u64, pool: Option<&str>) -> Vec<Need> {
    vec![vm_perm(vmid, pool, &["VM.Audit"], false)]
}

#[cfg(test)]
mod tests;

/// Qemu.pm `$check_storage_access` for a drive's `import-from` `source`, after its format
/// (`checked_parse_volname`): a disk inside an OVA is extracted onto the source's own storage
/// (the modules never send `import-working-storage`), which needs `Datastore.AllocateSpace`
/// there; then a source a VM owns needs `VM.Clone` on it, any other `check_volume_access`.
pub fn import_from(vmid: u64, source: &str) -> Vec<Need> {
    let Some(storage) = volume_storage(source) else { return volume_access(vmid, source) };
    let mut needs = Vec::new();
    if Volume::parse(source).is_some_and(|v| in_ova(v.volname)) {
        needs.push(all(format!("/storage/{storage}"), &["Datastore.AllocateSpace"]));
    }
    match content_and_owner(source).1 {
        Some(owner) => needs.push(all(vms(owner), &["VM.Clone"])),
        None => needs.extend(volume_access(vmid, source)),
    }
    needs
}

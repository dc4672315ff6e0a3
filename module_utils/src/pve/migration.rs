//! What PVE's migration task refuses from the VM's config, its snapshots and its replication jobs before it moves anything: a job to the target marked for removal, local devices, a snapshot of a local volume that cannot go along (docs/pve-semantics.md §59.2).
//!
//! qemu-server QemuMigrate.pm `prepare` and `scan_local_volumes` check these inside the
//! `qmigrate` task, after `migrate_vm` has forked it; the module reads the same facts before
//! it writes (the applied config, the snapshots' configs, storage.cfg, `GET
//! /cluster/replication`) and refuses first, in check and real runs alike. Each rule returns
//! PVE's words, `None` when PVE goes on.

use std::collections::BTreeMap;

use crate::pve::devices::Disk;
use crate::pve::replication::{can_replicate, Job};
use crate::pve::storage::StorageConfig;
use crate::pve::volume::{content_and_owner, Volume};

/// QemuMigrate.pm `prepare`: the `local` job of `vmid` to `target`
/// (ReplicationConfig.pm `find_local_replication_job`) has `remove_job` set.
pub fn job_marked_for_removal(jobs: &[Job], vmid: u64, target: &str) -> Option<&'static str> {
    jobs.iter()
        .any(|j| j.guest == vmid && j.kind == "local" && j.target == target && j.remove_job.is_some())
        .then_some("refusing to migrate replicated VM whose replication job is marked for removal")
}

/// A property of a property string (`k=v,...`).
fn prop<'v>(value: &'v str, key: &str) -> Option<&'v str> {
    value.split(',').find_map(|p| p.split_once('=').filter(|(k, _)| *k == key).map(|(_, v)| v))
}

/// QemuMigrate/Helpers.pm `check_local_resources`, as `prepare` uses it (without `force`, which
/// only root sends and the module never does): with the VM running, `amd-sev`, `intel-tdx` and
/// virtio-fs (`check_non_migratable_resources`); then `ivshmem`, and every `usbN` (but a SPICE
/// port or a mapped device), `hostpciN` (but a mapped device), `serialN` (but a socket),
/// `parallelN`. A `virtiofsN` is a mapped directory: whether the target has it is R-migrate-102.
/// PVE walks the keys in Perl's hash order; the list here is in the config's order.
/// `config`: the VM's applied config.
pub fn local_devices(config: &BTreeMap<String, String>, running: bool) -> Option<String> {
    let set = |k: &str| config.get(k).is_some_and(|v| !v.is_empty() && v != "0");
    let mut blocking: Vec<String> = Vec::new();
    if running {
        blocking.extend(["amd-sev", "intel-tdx"].into_iter().filter(|k| set(k)).map(String::from));
        if config.keys().any(|k| numbered(k, "virtiofs")) {
            blocking.push("virtiofs".into());
        }
    }
    blocking.extend(["hostusb", "hostpci", "ivshmem"].into_iter().filter(|k| set(k)).map(String::from));
    for (key, value) in config {
        let first = value.split(',').next().unwrap_or_default();
        let host = prop(value, "host").or((!first.contains('=')).then_some(first));
        let local = if numbered(key, "usb") {
            !host.is_some_and(|h| h.eq_ignore_ascii_case("spice")) && prop(value, "mapping").is_none()
        } else if numbered(key, "hostpci") {
            prop(value, "mapping").is_none()
        } else if numbered(key, "serial") {
            value != "socket"
        } else {
            numbered(key, "parallel")
        };
        if local {
            blocking.push(key.clone());
        }
    }
    (!blocking.is_empty()).then(|| format!("can't migrate VM which uses local devices: {}", blocking.join(", ")))
}

fn numbered(key: &str, prefix: &str) -> bool {
    key.strip_prefix(prefix).is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// QemuMigrate.pm `scan_local_volumes`, for each volume of the VM's own on a storage that is not
/// shared and that a snapshot references (`snapshots`: the snapshots' configs): a running VM
/// moves it only when replication keeps it (`replicated`: a `local` job targets the node and the
/// volume can replicate, QemuConfig.pm `get_replicatable_volumes`); else its storage must carry
/// the snapshots along: a ZFS pool, raw on btrfs, or qcow2 on a storage without volume chains.
/// PVE logs the volume's problem and aborts: `can't migrate local disk '<volid>': <words>`.
pub fn snapshot_volumes(
    vmid: u64,
    snapshots: &[BTreeMap<String, String>],
    storages: &[StorageConfig],
    running: bool,
    replicated: bool,
) -> Option<String> {
    let volumes = |c: &BTreeMap<String, String>| -> Vec<String> {
        c.iter()
            .filter_map(|(k, v)| Disk::parse(k, v))
            .filter(|d| d.media != "cdrom")
            .filter_map(|d| d.volume)
            .collect()
    };
    let mut in_snapshots: Vec<String> = snapshots.iter().flat_map(volumes).collect();
    in_snapshots.sort_unstable();
    in_snapshots.dedup();
    for volid in in_snapshots {
        let Some(volume) = Volume::parse(&volid) else { continue };
        let Some(scfg) = storages.iter().find(|s| s.storage == volume.storage) else { continue };
        let (vtype, owner) = content_and_owner(&volid);
        if scfg.shared || vtype != "images" || owner != Some(vmid) {
            continue;
        }
        let format = volume.format();
        let kept = replicated && can_replicate(&scfg.plugintype, format);
        let words = if running && !kept {
            "online storage migration not possible if non-replicated snapshot exists"
        } else if scfg.plugintype == "zfspool"
            || (scfg.plugintype == "btrfs" && format == "raw")
            || (format == "qcow2" && !scfg.volume_chain)
        {
            continue;
        } else {
            "non-migratable snapshot exists"
        };
        return Some(format!("can't migrate local disk '{volid}': {words}"));
    }
    None
}

/// The path a volume of a storage that is not shared has on the node (pve-storage `path`):
/// `<path>/images/<vmid>/<file>` on a file storage, `/dev/<vg>/<file>` on LVM, `/dev/zvol/<pool>/<file>`
/// on a ZFS pool. `None`: a shared storage, or one whose paths storage.cfg does not tell.
fn local_path(volid: &str, storages: &[StorageConfig]) -> Option<String> {
    let volume = Volume::parse(volid)?;
    let scfg = storages.iter().find(|s| s.storage == volume.storage).filter(|s| !s.shared)?;
    let file = volume.file;
    match (scfg.plugintype.as_str(), &scfg.path, &scfg.vgname, &scfg.pool) {
        ("dir" | "btrfs", Some(path), _, _) => Some(format!("{path}/images/{}/{file}", volume.owner?)),
        ("lvm" | "lvmthin", _, Some(vg), _) => Some(format!("/dev/{vg}/{file}")),
        ("zfspool", _, _, Some(pool)) => Some(format!("/dev/zvol/{pool}/{file}")),
        _ => None,
    }
}

/// QemuMigrate.pm `scan_local_volumes` (`foreach_volid`): the volume ids of `configs` (the
/// applied config, its pending values, or a snapshot's) on storages that are not shared, sorted:
/// each drive's and unused volume's, and `vmstate` (a hibernated VM's, a snapshot's with RAM).
/// `$test_volid` activates each before anything else of it (R-any-116, R-power-158).
pub fn scanned_volumes(configs: &[&BTreeMap<String, String>], storages: &[StorageConfig]) -> Vec<String> {
    let local =
        |v: &String| Volume::parse(v).is_some_and(|v| storages.iter().any(|s| s.storage == v.storage && !s.shared));
    let volume = |(k, v): (&String, &String)| if k == "vmstate" { Some(v.clone()) } else { Disk::parse(k, v)?.volume };
    let mut out: Vec<String> = configs.iter().flat_map(|c| c.iter()).filter_map(volume).filter(local).collect();
    out.sort();
    out.dedup();
    out
}

/// QemuMigrate.pm `scan_local_volumes`, after it has looked at every volume of the VM (`configs`:
/// the applied config, its pending values, each snapshot's): two volume ids of the VM's own on
/// storages that are not shared that name one path (two storages on one directory, volume
/// group or pool) abort the migration: `detected not supported aliased volumes: '<a>', '<b>'`
/// (PVE lists them in hash order; here, sorted).
pub fn aliased_volumes(vmid: u64, configs: &[&BTreeMap<String, String>], storages: &[StorageConfig]) -> Option<String> {
    let mut paths: Vec<(String, String)> = Vec::new();
    for (key, value) in configs.iter().flat_map(|c| c.iter()) {
        let Some(volid) = Disk::parse(key, value).filter(|d| d.media != "cdrom").and_then(|d| d.volume) else {
            continue;
        };
        if content_and_owner(&volid) == ("images", Some(vmid)) {
            paths.extend(local_path(&volid, storages).map(|path| (path, volid)));
        }
    }
    paths.sort();
    paths.dedup();
    let at = paths.windows(2).position(|w| w[0].0 == w[1].0)?;
    let volids: Vec<&str> =
        paths[at..].iter().take_while(|(p, _)| *p == paths[at].0).map(|(_, v)| v.as_str()).collect();
    Some(format!("detected not supported aliased volumes: '{}'", volids.join("', '")))
}

#[cfg(test)]
mod tests;

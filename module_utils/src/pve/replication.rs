//! Storage replication jobs (`GET /cluster/replication`) and what PVE refuses of a replicated VM: a removal without `purge`, a live migration to a node no job targets, a new drive or a disk reassigned to it on a storage that cannot replicate (docs/pve-semantics.md §50).
//!
//! pve-guest-common ReplicationConfig.pm keeps the jobs (`replication.cfg`); pve-manager
//! API2/ReplicationConfig.pm `index` lists those whose guest the user may audit (`VM.Audit` on
//! `/vms/<vmid>`, which every task that reads the VM's config has). A task reads them only when
//! its write could meet one of these refusals, and each rule returns PVE's words, `None` when
//! PVE accepts.

use serde_json::Value;

use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::devices::parse_new_disk;
use crate::pve::request::ApiPath;
use crate::pve::storage::StorageConfig;
use crate::pve::volume::Volume;

/// One replication job: `<vmid>-<n>`, its guest, its type (`local`) and target node, and
/// `remove_job` (`local` or `full`) when it is marked for removal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    pub id: String,
    pub guest: u64,
    pub kind: String,
    pub target: String,
    pub remove_job: Option<String>,
}

impl Job {
    /// A job of `GET /cluster/replication` (`guest` an integer; pvesim and PVE alike).
    pub fn from_json(v: &Value) -> Option<Job> {
        let guest = v.get("guest").and_then(|g| g.as_u64().or_else(|| g.as_str()?.parse().ok()))?;
        let text = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or_default().to_string();
        let remove_job = Some(text("remove_job")).filter(|r| !r.is_empty());
        Some(Job { id: text("id"), guest, kind: text("type"), target: text("target"), remove_job })
    }
}

/// The replication jobs of `vmid`, in the order the API lists them (by id).
pub fn jobs_of(api: &dyn Api, vmid: u64) -> Result<Vec<Job>> {
    let data = api
        .get(&ApiPath::new(["cluster", "replication"]), &Vec::new())
        .map_err(|e| e.context("reading the replication jobs"))?;
    let all = data.as_array().map(|a| a.iter().filter_map(Job::from_json).collect()).unwrap_or_else(Vec::new);
    Ok(all.into_iter().filter(|j: &Job| j.guest == vmid).collect())
}

/// Qemu.pm `destroy_vm` without `purge` (after protection and HA, before the running check):
/// ReplicationConfig.pm `check_for_existing_jobs` dies naming a job of the guest.
pub fn destroy(jobs: &[Job], vmid: u64, purge: bool) -> Option<String> {
    let job = jobs.iter().find(|j| j.guest == vmid).filter(|_| !purge)?;
    Some(format!("There is a replication job '{}' for guest '{vmid}' - Please remove that first.", job.id))
}

/// Qemu.pm `migrate_vm` of a running VM (after the lock and `--online` checks), again in
/// QemuMigrate.pm `prepare`: a replicated VM goes live only to a node a local job targets,
/// unless `force` (root only).
pub fn migrate(jobs: &[Job], vmid: u64, target: &str, force: bool) -> Option<String> {
    let replicated = jobs.iter().any(|j| j.guest == vmid);
    let to_target = jobs.iter().any(|j| j.guest == vmid && j.kind == "local" && j.target == target);
    (replicated && !to_target && !force).then(|| {
        format!(
            "Cannot live-migrate replicated VM to node '{target}' - not a replication target. Use 'force' to override."
        )
    })
}

/// pve-storage Plugin.pm `storage_can_replicate` (0 by default), ZFSPoolPlugin.pm (raw and
/// subvol volumes): only a ZFS pool replicates.
pub fn can_replicate(plugintype: &str, format: &str) -> bool {
    plugintype == "zfspool" && matches!(format, "raw" | "subvol")
}

/// The words of `update_vm_api`'s `$check_replication` for a drive value of the request on a
/// replicated VM (`replicated`: the VM has a job); `None` when PVE takes the drive. A CD-ROM, a
/// drive with `replicate=0` and a cloud-init volume pass; a path is refused; a volume (or a new
/// disk, in its `format` or the storage's default) on a storage that cannot replicate is refused
/// unless the storage is shared. `storages`: storage.cfg as `GET /storage` shows it.
pub fn config_drive(replicated: bool, value: &str, storages: &[StorageConfig]) -> Option<&'static str> {
    if !replicated {
        return None;
    }
    let mut parts = value.split(',');
    let first = parts.next().unwrap_or_default();
    let mut file = (!first.contains('=')).then_some(first);
    let (mut format, mut media, mut replicate) = (None, None, None);
    for part in std::iter::once(first).chain(parts) {
        match part.split_once('=') {
            Some(("file", v)) => file = Some(v),
            Some(("format", v)) => format = Some(v),
            Some(("media", v)) => media = Some(v),
            Some(("replicate", v)) => replicate = Some(v),
            _ => {}
        }
    }
    let file = file.filter(|f| !f.is_empty())?;
    if matches!(replicate, Some("0" | "no" | "off" | "false")) || media == Some("cdrom") || file == "cdrom" {
        return None;
    }
    let (storage, format) = match parse_new_disk(file) {
        Some((Some(storage), _)) => {
            let default = storages.iter().find(|s| s.storage == storage).map(|s| s.formats().1);
            (storage, format.map(str::to_string).or(default).unwrap_or_else(|| "raw".into()))
        }
        _ => {
            let Some(volume) = Volume::parse(file) else {
                return Some("cannot add non-managed/pass-through volume to a replicated VM");
            };
            if volume.volname == "cloudinit" {
                return None;
            }
            (volume.storage, volume.format().to_string())
        }
    };
    let scfg = storages.iter().find(|s| s.storage == storage)?;
    (!can_replicate(&scfg.plugintype, &format) && !scfg.shared)
        .then_some("cannot add non-replicatable volume to a replicated VM")
}

/// Qemu.pm `move_vm_disk`, the last check of a reassignment to a replicated VM: the volume's
/// storage must replicate its format (a shared storage is no exception here). `None` when PVE
/// takes it, or when `volid` is no volume (refused before).
pub fn reassign(volid: &str, storages: &[StorageConfig]) -> Option<&'static str> {
    let volume = Volume::parse(volid)?;
    let scfg = storages.iter().find(|s| s.storage == volume.storage)?;
    (!can_replicate(&scfg.plugintype, volume.format()))
        .then_some("Cannot move disk to a replicated VM. Storage does not support replication!")
}

#[cfg(test)]
mod tests;

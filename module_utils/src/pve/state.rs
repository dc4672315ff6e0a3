//! The VM's state before a write, the same in check and real runs: its config lock, protection, a template's base volumes that linked clones still use, and the power state a write needs, each refused with PVE's own words.
//!
//! PVE reads these inside its handlers (many inside the task), after a check run has stopped
//! asking, so without them `--check` says "changed" where the real run fails. Each rule below
//! follows the handler it names (docs/pve-semantics.md §33, docs/refusals.md): which writes call
//! `check_lock`, which lock values they let through, and where they skip it for `skiplock`.
//! The functions are pure; the caller adds what it was doing before PVE's words, as its real
//! failure would.

use std::collections::BTreeMap;

use crate::pve::config::VmConfig;
use crate::pve::devices::{is_disk_key, Disk};
use crate::pve::volume::{Volume, VolumeKind};

/// Lock values this module does not refuse: a create or clone in flight holds them for the
/// length of its task, and a write then waits for it to end (issue 23) rather than failing.
/// The hook: `lock_refusal` lets them through, and the waiting code decides.
pub const WAITED_LOCKS: [&str; 2] = ["create", "clone"];

/// A write, as far as the VM's state decides whether PVE takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op<'a> {
    /// `PUT`/`POST .../config` and `PUT .../unlink` (qemu-server `update_vm_api`): `deletes`
    /// the keys it removes, `force` whether it frees their volumes (unlink's `force`).
    Config { deletes: &'a [String], force: bool },
    /// `status/start` (QemuServer.pm `vm_start`).
    Start,
    /// `status/stop`, `status/shutdown` (`_do_vm_stop`, which returns when the VM is not running).
    Stop,
    /// `status/reboot` (`vm_reboot`: `_do_vm_stop` without skiplock).
    Reboot,
    /// `status/reset` (`vm_reset`).
    Reset,
    /// `status/suspend` (RunState.pm `vm_suspend`), `to_disk`: hibernation.
    Suspend { to_disk: bool },
    /// `status/resume` (RunState.pm `vm_resume`; a hibernated VM goes through `vm_start`).
    Resume,
    /// `PUT .../resize` (`resize_vm`).
    Resize,
    /// `POST .../move_disk` to another storage (`move_vm_disk`).
    MoveDisk,
    /// `POST .../move_disk` to another VM (`move_vm_disk`'s reassign), on the source and on the
    /// target VM: `unused` whether the disk is an `unusedN` (which a running VM may give away).
    Reassign { unused: bool },
    /// `POST .../clone` of this VM (`clone_vm`), `full` as it will be decided; `storage`,
    /// `format`: whether the request sets them.
    Clone { full: bool, storage: bool, format: bool },
    /// `POST .../template` (`template`).
    Template,
    /// `POST .../migrate` (`migrate_vm`).
    Migrate,
    /// `DELETE` the VM (`destroy_vm` API and QemuServer.pm `destroy_vm`).
    Destroy,
}

/// What PVE knows of the VM when it takes the write.
#[derive(Clone, Copy, Debug)]
pub struct Facts<'a> {
    pub vmid: u64,
    pub config: &'a VmConfig,
    /// Whether its QEMU process runs when the write reaches it (after a stop the same task
    /// makes first, it does not).
    pub running: bool,
    /// The task's `skiplock` (root only; PVE refuses it for anyone else before these checks).
    pub skiplock: bool,
}

/// The first refusal of `op` that the VM's state causes, in PVE's words and in the order its
/// handler checks them; `None` when the state lets the write through.
pub fn refusal(op: Op, f: &Facts) -> Option<String> {
    let current = &f.config.current;
    let template = current.get("template").is_some_and(|t| t == "1");
    match op {
        // Qemu.pm destroy_vm API: `$early_checks`, protection first, then running; then
        // QemuServer.pm destroy_vm's lock check (a hibernated VM's `suspended` lock aside).
        Op::Destroy => protection(current, &format!("can't remove VM {}", f.vmid))
            .or_else(|| f.running.then(|| format!("VM {} is running - destroy failed", f.vmid)))
            .or_else(|| lock_refusal(op, f)),
        // QemuServer.pm vm_start: a template first, then the lock.
        Op::Start if template => Some("you can't start a vm if it's a template".into()),
        Op::Resume if template => Some(format!("VM {} is a template and cannot be resumed!", f.vmid)),
        // Qemu.pm template: the lock, then "you can't convert a VM to template if VM is running".
        Op::Template => lock_refusal(op, f)
            .or_else(|| f.running.then(|| "you can't convert a VM to template if VM is running".to_string())),
        // Qemu.pm clone_vm `$load_and_check`: the lock, a linked clone's `storage` and `format`,
        // then, copying the drives, a full clone of a running VM refuses its TPM state.
        Op::Clone { full, storage, format } => lock_refusal(op, f)
            .or_else(|| (storage && !full).then(|| "parameter 'storage' not allowed for linked clones".to_string()))
            .or_else(|| (format && !full).then(|| "parameter 'format' not allowed for linked clones".to_string()))
            .or_else(|| {
                (full && f.running && current.contains_key("tpmstate0"))
                    .then(|| "cannot clone TPM state while VM is running".to_string())
            }),
        // Qemu.pm update_vm_api: the lock, then in its delete loop the protection of each drive
        // it removes (the drive itself, an unused volume, a hibernation's `vmstate`).
        Op::Config { deletes, .. } => lock_refusal(op, f).or_else(|| {
            deletes.iter().find_map(|key| {
                let value = f.config.get(key)?;
                if key.starts_with("unused") {
                    let volume = value.split(',').next().unwrap_or(value);
                    protection(current, &format!("can't remove unused disk '{volume}'"))
                } else if key == "vmstate" {
                    protection(current, &format!("can't remove vmstate '{value}'"))
                } else if is_disk_key(key) {
                    protection(current, &format!("can't remove drive '{key}'"))
                } else {
                    None
                }
            })
        }),
        // Qemu.pm move_vm_disk `$load_and_check_reassign_configs`: both locks, no template on
        // either side, then (after the disk's own checks) a running source keeps its drives
        Op::Reassign { unused } => lock_refusal(op, f)
            .or_else(|| template.then(|| "Can't move disks from or to template VMs".to_string()))
            .or_else(|| {
                (f.running && !unused)
                    .then(|| "Cannot move disk to another VM while the source VM is running - detach first".to_string())
            }),
        _ => lock_refusal(op, f),
    }
}

/// AbstractConfig.pm check_protection: `<what> - protection mode enabled`.
fn protection(current: &BTreeMap<String, String>, what: &str) -> Option<String> {
    current.get("protection").is_some_and(|p| p == "1").then(|| format!("{what} - protection mode enabled"))
}

/// AbstractConfig.pm check_lock (`VM is locked (<lock>)`) as each handler calls it: the writes
/// that take `skiplock`, and the lock values a handler lets through.
fn lock_refusal(op: Op, f: &Facts) -> Option<String> {
    let lock = f.config.current.get("lock")?.as_str();
    if WAITED_LOCKS.contains(&lock) {
        return None; // issue 23: a create or clone in flight is waited for, not refused
    }
    let skips = f.skiplock
        && matches!(
            op,
            Op::Config { .. }
                | Op::Start
                | Op::Stop
                | Op::Reset
                | Op::Suspend { .. }
                | Op::Resume
                | Op::Resize
                | Op::Destroy
        );
    let passes = match op {
        // vm_start: a hibernated VM resumes from its state; a running VM under backup is resumed
        Op::Start => lock == "suspended" || (lock == "backup" && f.running),
        // `_do_vm_stop` returns before it loads the config when QEMU does not run
        Op::Stop | Op::Reboot => !f.running,
        // vm_suspend and vm_resume let a backup through (to disk: refused below)
        Op::Suspend { to_disk } => lock == "backup" && !to_disk,
        Op::Resume => lock == "backup" || lock == "suspended",
        // QemuServer.pm destroy_vm: `suspended` aside
        Op::Destroy => lock == "suspended",
        // update_vm_api: deleting `vmstate` lifts a `suspended` lock for the check
        Op::Config { deletes, .. } => lock == "suspended" && deletes.iter().any(|k| k == "vmstate"),
        _ => false,
    };
    if skips || passes {
        return None;
    }
    if matches!(op, Op::Suspend { to_disk: true }) && lock == "backup" {
        return Some("cannot suspend to disk during backup".into());
    }
    Some(format!("VM is locked ({lock})"))
}

/// The volumes of a template's drives (unused ones too, CD-ROMs and paths aside) that are base
/// volumes, as QemuServer.pm destroy_vm walks them: `(storage, volid)`.
pub fn base_volumes(config: &VmConfig) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (key, value) in &config.current {
        let Some(disk) = Disk::parse(key, value) else { continue };
        if disk.media == "cdrom" {
            continue;
        }
        let Some(volid) = disk.volume else { continue };
        if Volume::parse(&volid).is_some_and(|v| v.is_base) {
            let storage = volid.split(':').next().unwrap_or_default().to_string();
            out.push((storage, volid));
        }
    }
    out
}

/// The volumes QemuServer.pm `destroy_vm` frees with VM `vmid` (whose config, applied and
/// pending, is `config`): each drive's, `unusedN`'s and `vmstate`'s volume that `vmid` owns
/// (`PVE::Storage::path`'s owner), once; CD-ROMs and paths aside, but a cloud-init drive's
/// volume freed (`drive_is_cdrom` with `exclude_cloudinit`). A linked clone's own volume is its
/// own; the base it uses belongs to the template, which keeps it.
pub fn owned_volumes(config: &VmConfig, vmid: u64) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for (key, value) in config.current.iter().chain(config.pending.iter()) {
        let volid = if key == "vmstate" {
            value.split(',').next().unwrap_or_default().to_string()
        } else {
            let Some(disk) = Disk::parse(key, value) else { continue };
            let Some(volid) = disk.volume else { continue };
            let cloudinit = Volume::parse(&volid).is_some_and(|v| v.kind == VolumeKind::CloudInit);
            if disk.media == "cdrom" && !cloudinit {
                continue;
            }
            volid
        };
        if Volume::parse(&volid).is_some_and(|v| v.owner == Some(vmid)) && !out.contains(&volid) {
            out.push(volid);
        }
    }
    out
}

/// The volumes VM `vmid` owns in `before` (`owned_volumes`) that it no longer refers to in
/// `after`, the config a change of its drives leaves: what that change frees (a drive removed
/// with `force`, a disk moved with `delete`; a volume that becomes `unusedN` is kept). Not for a
/// reassign, which renames the volume for another VM and frees nothing.
pub fn freed_volumes(before: &VmConfig, after: &VmConfig, vmid: u64) -> Vec<String> {
    let kept = owned_volumes(after, vmid);
    owned_volumes(before, vmid).into_iter().filter(|v| !kept.contains(v)).collect()
}

/// Whether a linked clone on the same storage uses base volume `volid` (pve-storage Storage.pm
/// `volume_is_base_and_used`: a volume of `listed` whose base is this volume's name).
pub fn base_in_use<'l>(volid: &str, listed: impl IntoIterator<Item = &'l String>) -> bool {
    let Some(base) = Volume::parse(volid).filter(|v| v.is_base) else { return false };
    listed
        .into_iter()
        .any(|other| Volume::parse(other).is_some_and(|o| o.storage == base.storage && o.base == Some(base.volname)))
}

/// QemuServer.pm destroy_vm, for a template: `base volume '<volid>' is still in use by linked cloned`.
pub fn template_in_use(volid: &str) -> String {
    format!("base volume '{volid}' is still in use by linked cloned")
}

/// A drive `key` removed with `force` whose base volume `volid` a linked clone uses: Storage.pm
/// vdisk_free's words (the volume name, without the storage), as QemuServer.pm
/// vmconfig_apply_pending reports them for the option (the delete then stays pending).
pub fn base_volume_in_use(key: &str, volid: &str) -> String {
    let volname = volid.split_once(':').map_or(volid, |(_, n)| n);
    format!("unable to apply pending change {key} : base volume '{volname}' is still in use by linked clones")
}

#[cfg(test)]
mod tests;

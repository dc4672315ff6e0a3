//! Checks PVE makes on a fact this user may not see: the storage a hibernation saves the VM's state on when a storage of its drives is hidden, and a template's linked clones on a storage this user lists only in part.
//!
//! PVE runs these checks inside the handler with root's view of storage.cfg; the module reads it
//! as the run's user, who sees a storage only with `Datastore.Audit` or
//! `Datastore.AllocateSpace` on it (pve-storage `API2/Storage/Config.pm` `index`). A hidden
//! storage is thus one this user holds neither on, and where PVE's choice among several
//! storages is not known, the check is decided when every choice decides it alike (all refused,
//! all allowed) and is otherwise a warning naming what cannot be seen (`Need::Unseen`).
//! docs/pve-semantics.md §52.

use std::collections::{BTreeMap, BTreeSet};

use super::{all, handlers, indexed, Need, Privileges};
use crate::error::Result;
use crate::pve::devices::{is_disk_key, volume_storage, Disk};
use crate::pve::storage::StorageConfig;

/// The storages of the VM's drives (CD-ROMs and `unusedN` left out), as QemuConfig.pm
/// `foreach_storage_used_by_vm` walks them.
fn drive_storages(config: &BTreeMap<String, String>) -> BTreeSet<String> {
    config
        .iter()
        .filter(|(k, _)| is_disk_key(k) && !indexed(k, "unused"))
        .filter_map(|(k, v)| Disk::parse(k, v).filter(|d| d.media != "cdrom"))
        .filter_map(|d| d.volume.as_deref().and_then(volume_storage).map(str::to_string))
        .collect()
}

/// The storages `find_vmstate_storage` may pick for `config` when it names no `vmstatestorage`
/// and `storages` (what this user sees) lacks some of its drives' storages: each hidden one,
/// and of the visible ones the shared ones if any (a shared storage wins over a local one),
/// else all. Empty when every storage is visible (`handlers::vmstate_storage` decides then).
pub fn vmstate_candidates(config: &BTreeMap<String, String>, storages: &[StorageConfig]) -> Vec<String> {
    if config.get("vmstatestorage").is_some_and(|s| !s.is_empty()) {
        return Vec::new();
    }
    let used = drive_storages(config);
    let seen: Vec<&StorageConfig> = storages.iter().filter(|s| used.contains(&s.storage)).collect();
    let hidden: Vec<String> = used.iter().filter(|sid| !seen.iter().any(|s| &s.storage == *sid)).cloned().collect();
    if hidden.is_empty() {
        return Vec::new();
    }
    let shared: Vec<String> = seen.iter().filter(|s| s.shared).map(|s| s.storage.clone()).collect();
    let visible = if shared.is_empty() { seen.iter().map(|s| s.storage.clone()).collect() } else { shared };
    visible.into_iter().chain(hidden).collect::<BTreeSet<_>>().into_iter().collect()
}

/// `vm_suspend` with `todisk` (`handlers::hibernate`) of VM `vmid` (config `config`, this user
/// seeing `storages`): the state's storage checked where it is known; else, among the storages
/// PVE may pick, `Datastore.AllocateSpace` on each: held on all, passed; on none, refused; else
/// not known (a warning).
pub fn hibernate(vmid: u64, config: &BTreeMap<String, String>, storages: &[StorageConfig]) -> Vec<Need> {
    let candidates = vmstate_candidates(config, storages);
    if candidates.is_empty() {
        let statestorage = handlers::vmstate_storage(config, storages);
        return handlers::hibernate(vmid, statestorage.as_deref());
    }
    let mut needs = handlers::hibernate(vmid, None);
    if let [only] = candidates.as_slice() {
        needs.push(all(format!("/storage/{only}"), &["Datastore.AllocateSpace"]));
        return needs;
    }
    let listed = candidates.join(", ");
    let hidden: Vec<&str> =
        candidates.iter().map(String::as_str).filter(|sid| !storages.iter().any(|s| s.storage == *sid)).collect();
    let hidden = hidden.join(", ");
    needs.push(Need::Unseen {
        options: candidates.iter().map(|sid| all(format!("/storage/{sid}"), &["Datastore.AllocateSpace"])).collect(),
        refused: format!(
            "Permission check failed (Datastore.AllocateSpace on the storage of VM {vmid}'s state, one of {listed}: this user holds it on none of them; which one PVE picks depends on storage.cfg of {hidden}, which this user cannot read)"
        ),
        unknown: format!(
            "whether PVE refuses to hibernate VM {vmid} is not known: it saves the state on one of {listed}, this user holds Datastore.AllocateSpace on some of them only, and which one PVE picks depends on storage.cfg of {hidden}, which this user cannot read; PVE may refuse it: Permission check failed (/storage/(known after apply), Datastore.AllocateSpace)"
        ),
    });
    needs
}

/// What this user's `GET /nodes/<node>/storage/<sid>/content` lists (pve-storage
/// `API2/Storage/Content.pm` `index`: `Datastore.Audit` or `Datastore.AllocateSpace` on the
/// storage to read it at all, then each volume through `Storage.pm` `check_volume_access` without
/// a VM: every volume with `Datastore.Allocate` there, else a VM's image only with
/// `Datastore.Audit` there and `VM.Config.Disk` on that VM).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Listing {
    /// Every volume: what PVE itself lists.
    Complete,
    /// Some VMs' images may be left out.
    Partial,
    /// The read is refused.
    Refused,
}

/// How much of storage `sid`'s content this user's listing shows.
pub fn volume_listing(p: &Privileges, sid: &str) -> Result<Listing> {
    let held = p.held(&format!("/storage/{sid}"))?;
    Ok(if !held.contains("Datastore.Audit") && !held.contains("Datastore.AllocateSpace") {
        Listing::Refused
    } else if held.contains("Datastore.Allocate")
        || (held.contains("Datastore.Audit") && p.held_below("/vms", "VM.Config.Disk")?)
    {
        Listing::Complete
    } else {
        Listing::Partial
    })
}

/// Whether this user's listing of its storage shows `volid` when the storage holds it (pve-storage
/// Storage.pm `check_volume_access`, as the content listing filters each volume): every volume
/// with `Datastore.Allocate` on the storage; an ISO, a template or an import source with
/// `Datastore.Audit` or `Datastore.AllocateSpace`; a VM's image with `Datastore.Audit` and
/// `VM.Config.Disk` on its VM. `false`: its absence from the listing tells nothing.
pub fn lists_volume(p: &Privileges, sid: &str, vtype: &str, owner: Option<u64>) -> Result<bool> {
    let held = p.held(&format!("/storage/{sid}"))?;
    let has = |privilege: &str| held.contains(privilege);
    Ok(has("Datastore.Allocate")
        || match (vtype, owner) {
            ("iso" | "vztmpl" | "import", _) => has("Datastore.Audit") || has("Datastore.AllocateSpace"),
            ("images", Some(vmid)) => {
                has("Datastore.Audit") && p.held(&format!("/vms/{vmid}"))?.contains("VM.Config.Disk")
            }
            _ => false,
        })
}

/// The warning for a template's removal whose base volume `volid` on `sid` may be used by a
/// linked clone this user's listing leaves out (`listing` not `Complete`); `refusal` is PVE's
/// words if it is.
pub fn base_use_not_known(vmid: u64, sid: &str, volid: &str, listing: Listing, refusal: &str) -> String {
    let why = match listing {
        Listing::Refused => {
            format!("this user cannot list storage '{sid}' (Datastore.Audit or Datastore.AllocateSpace on it)")
        }
        _ => format!(
            "this user's listing of storage '{sid}' leaves out the volumes of the VMs it lacks VM.Config.Disk on (Datastore.Allocate on the storage would show them all)"
        ),
    };
    format!(
        "whether a linked clone still uses base volume '{volid}' of VM {vmid} is not known: {why}; PVE may refuse it: {refusal}"
    )
}

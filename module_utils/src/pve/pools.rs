//! Resource pools (pve-manager `PVE/API2/Pool.pm`): the pool a VM is in, whether a pool exists, and the one write that moves a VM into a pool (docs/pve-semantics.md §40).
//!
//! A guest is in at most one pool (`user.cfg`'s `vms` map); `/cluster/resources` names it as the
//! entry's `pool`. `PUT /pools` (`update_pool`, PVE 8.1 and later; the older `PUT /pools/{poolid}`
//! is deprecated and cannot name a nested pool) with `vms=<vmid>` adds the VM; a VM in another
//! pool is refused (`VM <vmid> belongs already to pool '<old>' and 'allow-move' is not set`)
//! unless `allow-move=1`, which takes it out of the old pool in the same write of `user.cfg`. A
//! pool that does not exist is refused (`pool '<pool>' does not exist`) before anything changes.

use serde_json::Value;

use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::{ApiPath, Form};
use crate::pve::resources::VmResource;

/// The move of one VM into a pool, out of the one it is in (if any).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolMove {
    pub vmid: u64,
    pub to: String,
    pub from: Option<String>,
}

/// The pool `/cluster/resources` says the VM is in.
pub fn pool_of(vm: &VmResource) -> Option<&str> {
    vm.raw.get("pool").and_then(Value::as_str).filter(|p| !p.is_empty())
}

impl PoolMove {
    /// The move that puts `vm` in `wanted`; `None` when it is there already.
    pub fn plan(vm: &VmResource, wanted: &str) -> Option<PoolMove> {
        let from = pool_of(vm);
        (from != Some(wanted)).then(|| PoolMove {
            vmid: vm.vmid,
            to: wanted.to_string(),
            from: from.map(str::to_string),
        })
    }

    /// `PUT /pools`, `update_pool`'s path.
    pub fn path() -> ApiPath {
        ApiPath::new(["pools"])
    }

    /// The form of the write: the pool, the VM, and `allow-move` when it leaves another pool.
    pub fn form(&self) -> Form {
        let mut form: Form = vec![("poolid".into(), self.to.clone()), ("vms".into(), self.vmid.to_string())];
        if self.from.is_some() {
            form.push(("allow-move".into(), "1".into()));
        }
        form
    }

    /// The `pool: ...` line of the VM's diff before and after the move.
    pub fn diff_lines(&self) -> (String, String) {
        (self.from.as_ref().map(|p| format!("pool: {p}\n")).unwrap_or_default(), format!("pool: {}\n", self.to))
    }
}

/// The warning of a task that names another pool than the VM's without `update: true`.
pub fn not_moved(mv: &PoolMove) -> String {
    let now = mv.from.as_ref().map_or("in no pool".to_string(), |p| format!("in pool {p}"));
    format!("pool: VM {} is {now}, not in {}; set update: true to move it", mv.vmid, mv.to)
}

/// Whether `pool` exists. `GET /pools?poolid=` (`index` with a pool id) answers any user, a
/// user without `Pool.Audit` too, and dies with `pool '<pool>' does not exist` for a missing
/// one; a failure for another reason is returned as it is.
fn pool_exists(api: &dyn Api, pool: &str) -> Result<bool> {
    match api.get(&ApiPath::new(["pools"]), &vec![("poolid".into(), pool.to_string())]) {
        Ok(_) => Ok(true),
        Err(Error::Api { message, .. }) if message.contains("does not exist") => Ok(false),
        Err(e) => Err(e),
    }
}

/// Refuse a pool that does not exist, naming `option`, before any write, in `update_pool`'s
/// words.
pub fn require_pool(api: &dyn Api, pool: &str, option: &str) -> Result<()> {
    if pool_exists(api, pool)? {
        return Ok(());
    }
    Err(Error::failed(format!("{option}: pool '{pool}' does not exist (nothing was changed)")))
}

/// Refuse the `pool` of a create or clone that does not exist, in the words of
/// pve-access-control RPCEnvironment.pm `check_pool_exist` (`raise_perm_exc`, a 403), which
/// qemu-server's `create_vm` and `clone_vm` call before their other checks
/// (docs/pve-semantics.md §43).
pub fn require_guest_pool(api: &dyn Api, pool: &str) -> Result<()> {
    if pool_exists(api, pool)? {
        return Ok(());
    }
    Err(Error::failed(format!("pool: Permission check failed (pool '{pool}' does not exist)")))
}

/// Make the move.
pub fn apply(api: &dyn Api, mv: &PoolMove) -> Result<()> {
    api.put(&PoolMove::path(), &mv.form()).map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn vm(pool: Option<&str>) -> VmResource {
        let mut v = json!({"vmid": 100, "name": "web", "node": "pve1", "type": "qemu", "status": "stopped"});
        if let Some(p) = pool {
            v["pool"] = json!(p);
        }
        VmResource::from_json(&v).unwrap()
    }

    #[test]
    fn a_move_only_when_the_pool_differs_with_allow_move_out_of_another() {
        assert_eq!(PoolMove::plan(&vm(Some("web")), "web"), None);
        let join = PoolMove::plan(&vm(None), "web").unwrap();
        assert_eq!(join.form(), vec![("poolid".to_string(), "web".to_string()), ("vms".into(), "100".into())]);
        assert_eq!(join.diff_lines(), (String::new(), "pool: web\n".to_string()));
        let mv = PoolMove::plan(&vm(Some("db")), "web").unwrap();
        assert_eq!(mv.from.as_deref(), Some("db"));
        assert_eq!(mv.form().last(), Some(&("allow-move".to_string(), "1".to_string())));
        assert_eq!(mv.diff_lines(), ("pool: db\n".to_string(), "pool: web\n".to_string()));
        assert_eq!(not_moved(&mv), "pool: VM 100 is in pool db, not in web; set update: true to move it");
        assert_eq!(not_moved(&join), "pool: VM 100 is in no pool, not in web; set update: true to move it");
    }
}

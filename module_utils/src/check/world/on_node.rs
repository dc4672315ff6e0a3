//! A task that names its VM's node and vmid read in one request (`GET /nodes/<node>/qemu/<vmid>/pending`), the cluster read only where that cannot decide (issue 36).
//!
//! A no-op task on a real cluster costs what it reads: each request is a round trip through
//! pveproxy. Where the task names the node, the VM's config read on that node is the one read a
//! no-op needs; `/cluster/resources` is read only when the VM is not there (PVE answers the
//! config read of a VM on another node, or of none, with `Configuration file ... does not
//! exist`: qemu-server `PVE::QemuConfig->load_config`), when it is being created or cloned
//! (§30: the cluster read waits for it), when the config's name is not the task's (the identity
//! rule, §29), and whenever an earlier task of a check run or a saved plan holds the VM. The
//! config read here is not read again: the world's next `config` of that VM returns it.

use serde_json::{Map, Value};

use super::World;
use crate::error::{Error, Result};
use crate::pve::config::VmConfig;
use crate::pve::inflight;
use crate::pve::resources::VmResource;

/// The status of a VM read on its node alone: the config read does not say it.
pub const STATUS_NOT_READ: &str = "unknown";

impl World<'_> {
    /// The QEMU VM `vmid` on `node` with its config, in one read, when the task names both
    /// (and `name`, if given, is the config's): `None` when the cluster read must decide
    /// (module header). The VM's `status` is `STATUS_NOT_READ`: a task that needs it (a write,
    /// a power change) takes the cluster read, which hands this config back (`config`).
    pub fn on_node(
        &self,
        node: Option<&str>,
        vmid: Option<u64>,
        name: Option<&str>,
    ) -> Result<Option<(VmResource, VmConfig)>> {
        let (Some(node), Some(vmid)) = (node, vmid) else { return Ok(None) };
        if self.saved.is_some() || self.prediction(vmid).is_some() {
            return Ok(None);
        }
        let mut raw = Map::new();
        raw.insert("vmid".into(), Value::from(vmid));
        raw.insert("node".into(), Value::from(node));
        raw.insert("type".into(), Value::from("qemu"));
        raw.insert("status".into(), Value::from(STATUS_NOT_READ));
        let Some(mut vm) = VmResource::from_json(&Value::Object(raw)) else { return Ok(None) };
        let config = match crate::pve::config::read(self.api, &vm) {
            Ok(config) => config,
            // not on this node, no such VM, not visible to this user: the cluster read decides
            Err(Error::Api { .. }) => return Ok(None),
            Err(e) => return Err(e),
        };
        vm.name = config.current.get("name").cloned();
        vm.lock = config.current.get("lock").cloned();
        vm.template = config.current.get("template").is_some_and(|t| t == "1");
        for (key, value) in [("name", &vm.name), ("lock", &vm.lock)] {
            if let Some(v) = value {
                vm.raw.insert(key.into(), Value::from(v.as_str()));
            }
        }
        vm.raw.insert("template".into(), Value::from(u8::from(vm.template)));
        // a VM in flight is read again once its task ends; a name mismatch, as the cluster read has it
        if inflight::is_in_flight(&vm) || name.is_some_and(|n| vm.name.as_deref() != Some(n)) {
            return Ok(None);
        }
        *self.read_on_node.borrow_mut() = Some((vm.clone(), config.clone()));
        Ok(Some((vm, config)))
    }

    /// The config `on_node` read of `vm` (same vmid, same node), once.
    pub(super) fn take_read_on_node(&self, vm: &VmResource) -> Option<VmConfig> {
        let mut kept = self.read_on_node.borrow_mut();
        match kept.as_ref() {
            Some((read, _)) if read.vmid == vm.vmid && read.node == vm.node && self.prediction(vm.vmid).is_none() => {
                kept.take().map(|(_, config)| config)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::pve::client::testing::ScriptedApi;
    use crate::pve::request::Method;
    use serde_json::json;

    fn pending(api: &ScriptedApi, node: &str, answer: Result<Value>) {
        api.answer(Method::Get, &format!("/nodes/{node}/qemu/100/pending"), answer);
    }

    #[test]
    fn a_vm_on_the_named_node_is_one_read_and_its_config_is_not_read_again() {
        let api = ScriptedApi::default();
        pending(&api, "pve1", Ok(json!([{"key": "name", "value": "web"}, {"key": "cores", "value": 2}])));
        let world = World::new(&api, None);
        let (vm, config) = world.on_node(Some("pve1"), Some(100), Some("web")).unwrap().unwrap();
        assert_eq!(
            (vm.vmid, vm.node.as_str(), vm.name.as_deref(), vm.status.as_str()),
            (100, "pve1", Some("web"), "unknown")
        );
        assert_eq!(config.get("cores"), Some("2"));
        // the fallback's config read of that VM is the one already made
        assert_eq!(world.config(&vm).unwrap(), config);
        assert_eq!(api.calls.borrow().len(), 1);
    }

    #[test]
    fn elsewhere_in_flight_or_another_name_the_cluster_read_decides() {
        let api = ScriptedApi::default();
        let gone = Error::Api {
            method: "GET".into(),
            path: "/nodes/pve2/qemu/100/pending".into(),
            status: 500,
            message: "Configuration file 'nodes/pve2/qemu-server/100.conf' does not exist".into(),
        };
        pending(&api, "pve2", Err(gone));
        let world = World::new(&api, None);
        assert!(world.on_node(Some("pve2"), Some(100), None).unwrap().is_none());
        pending(&api, "pve1", Ok(json!([{"key": "lock", "value": "clone"}])));
        assert!(world.on_node(Some("pve1"), Some(100), None).unwrap().is_none());
        pending(&api, "pve1", Ok(json!([{"key": "name", "value": "db"}])));
        assert!(world.on_node(Some("pve1"), Some(100), Some("web")).unwrap().is_none());
        // nothing to read by: no node, or no vmid
        assert!(world.on_node(None, Some(100), None).unwrap().is_none());
        assert!(world.on_node(Some("pve1"), None, Some("web")).unwrap().is_none());
        assert_eq!(api.calls.borrow().len(), 3);
    }
}

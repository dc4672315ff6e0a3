//! What a start that pins a machine reads of its node's QEMU: the machine versions `GET /nodes/<node>/capabilities/qemu/machines` lists, and the `pve-qemu-kvm` version `GET /nodes/<node>/apt/versions` shows when that machine is refused (docs/pve-semantics.md §73).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Preflight;
use crate::pve::machine::{kvm_version, refusal, start_machine, version, NodeQemu};
use crate::pve::request::ApiPath;

/// The privilege pve-manager API2/APT.pm `versions` takes, on `/nodes/<node>`.
pub const APT_VERSIONS: &str = "Sys.Audit";

impl Preflight<'_> {
    /// For a start whose `config` (pending values applied) pins a machine (`start_machine`): the
    /// versions `GET /nodes/<node>/capabilities/qemu/machines` lists for the VM's architecture
    /// (`?arch=` its `arch`, else the node's; qemu-server API2/Qemu/Machine.pm `types`, every
    /// user); and when they refuse that machine, with `audit` (this user holds `APT_VERSIONS` on
    /// `/nodes/<node>`), the installed `pve-qemu-kvm` of `GET /nodes/<node>/apt/versions`
    /// (`OldVersion`, the installed one, beside the candidate `Version`). `None` for a start that
    /// pins none or when the list's read fails; a failed package read leaves the version unknown.
    pub fn node_qemu(&self, node: &str, config: &BTreeMap<String, String>, audit: bool) -> Option<NodeQemu> {
        let machine = start_machine(config)?;
        let path = ApiPath::new(["nodes", node, "capabilities", "qemu", "machines"]);
        let query: Vec<_> = config.get("arch").map(|a| ("arch".to_string(), a.clone())).into_iter().collect();
        let listed = self.api.get(&path, &query).ok()?;
        let machines = listed.as_array()?.iter().filter_map(|m| version(m.get("id")?.as_str()?)).collect();
        let mut qemu = NodeQemu { machines, kvmver: None };
        if audit && refusal(&machine, &qemu, node).is_some() {
            let packages = self.api.get(&ApiPath::new(["nodes", node, "apt", "versions"]), &Vec::new()).ok();
            let package = packages.as_ref().and_then(Value::as_array).and_then(|list| {
                list.iter().find(|p| p.get("Package").and_then(Value::as_str) == Some("pve-qemu-kvm"))
            });
            let installed = package.and_then(|p| p.get("OldVersion").or_else(|| p.get("Version"))?.as_str());
            qemu.kvmver = installed.and_then(kvm_version);
        }
        Some(qemu)
    }
}

//! What a start reads of its node beyond the config: its CPU count, and the CPU models its QEMU has for the VM's architecture where the config names one that must be looked up (docs/pve-semantics.md §43, §61).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Preflight;
use crate::error::Result;
use crate::pve::request::ApiPath;
use crate::pve::values::command_cpu::model_to_check;

impl Preflight<'_> {
    /// The node's CPU count (`maxcpu` of `GET /nodes`, `None` without `Sys.Audit` on it) and,
    /// when `config`'s `cpu` type is one `model_to_check` cannot decide alone, the models
    /// `GET /nodes/<node>/capabilities/qemu/cpu?arch=<arch>` lists (qemu-server API2/Qemu/CPU.pm
    /// `index`, `user => 'all'`: CPUConfig.pm `get_cpu_models` for that architecture, the
    /// built-in ones with it; custom models aside); `None` when that read fails.
    pub fn start_facts(
        &self,
        node: &str,
        config: &BTreeMap<String, String>,
    ) -> Result<(Option<u64>, Option<Vec<String>>)> {
        let cpus = self.nodes()?.iter().find(|n| n.node == node).and_then(|n| n.maxcpu);
        let Some((arch, _)) = model_to_check(config) else { return Ok((cpus, None)) };
        let path = ApiPath::new(["nodes", node, "capabilities", "qemu", "cpu"]);
        let listed = self.api.get(&path, &vec![("arch".to_string(), arch.to_string())]).ok();
        let models = listed.as_ref().and_then(Value::as_array).map(|items| {
            let builtin = items.iter().filter(|i| i.get("custom").and_then(Value::as_bool) != Some(true));
            builtin.filter_map(|i| i.get("name").and_then(Value::as_str).map(str::to_string)).collect()
        });
        Ok((cpus, models))
    }
}

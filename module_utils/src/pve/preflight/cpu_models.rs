//! What a start reads beyond the VM's config: its node's CPU count, the model a custom CPU model reports, and the CPU models the node's QEMU has for the VM's architecture where the config names one that must be looked up (docs/pve-semantics.md §43, §61).

use std::collections::BTreeMap;

use serde_json::Value;

use super::Preflight;
use crate::error::Result;
use crate::pve::request::ApiPath;
use crate::pve::values::command_cpu::{model_to_check, resolve_custom, StartFacts};

impl Preflight<'_> {
    /// The node's CPU count (`maxcpu` of `GET /nodes`, `None` without `Sys.Audit` on it); for a
    /// custom `cpu`, the model its definition reports (`GET /cluster/qemu/custom-cpu-models`,
    /// pve-manager API2/Cluster/Qemu/CustomCPUModels.pm `config`: the models this user has
    /// `Mapping.Audit`, `.Use` or `.Modify` on `/mapping/cpu/<name>` for); and when the `cpu`
    /// type (a custom one's reported model) is one `model_to_check` cannot decide alone, the
    /// models `GET /nodes/<node>/capabilities/qemu/cpu?arch=<arch>` lists (qemu-server
    /// API2/Qemu/CPU.pm `index`: CPUConfig.pm `get_cpu_models`). A read that fails leaves its
    /// part unknown.
    pub fn start_facts(&self, node: &str, config: &BTreeMap<String, String>) -> Result<StartFacts> {
        let cpus = self.nodes()?.iter().find(|n| n.node == node).and_then(|n| n.maxcpu);
        let mut facts = StartFacts { cpus, ..StartFacts::default() };
        let list = |path: ApiPath, query: Vec<(String, String)>| {
            let data = self.api.get(&path, &query).ok();
            data.as_ref().and_then(Value::as_array).cloned().unwrap_or_default()
        };
        let cpu = config.get("cpu").and_then(|c| c.split(',').next()).map(|c| c.trim_start_matches("cputype="));
        if let Some(custom) = cpu.filter(|c| c.starts_with("custom-")) {
            let defined = list(ApiPath::new(["cluster", "qemu", "custom-cpu-models"]), Vec::new());
            let entry = defined.iter().find(|m| m.get("cputype").and_then(Value::as_str) == Some(custom));
            // write_config stores a definition's `reported-model`, kvm64 when it named none
            let reported = entry.map(|m| m.get("reported-model").and_then(Value::as_str).unwrap_or("kvm64"));
            facts.reported = reported.map(str::to_string);
        }
        let resolved = resolve_custom(config, facts.reported.as_deref());
        if let Some((arch, _)) = model_to_check(resolved.as_ref().unwrap_or(config)) {
            let path = ApiPath::new(["nodes", node, "capabilities", "qemu", "cpu"]);
            let listed = list(path, vec![("arch".to_string(), arch.to_string())]);
            let builtin = listed.iter().filter(|i| i.get("custom").and_then(Value::as_bool) != Some(true));
            let names: Vec<String> = builtin.filter_map(|i| Some(i.get("name")?.as_str()?.to_string())).collect();
            facts.models = (!names.is_empty()).then_some(names);
        }
        Ok(facts)
    }
}

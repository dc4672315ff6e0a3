//! What proxmox_kvm checks of a start and a migration of a VM with mapped devices or directories, reading the mappings only when the config names one (`pve::mappings`, docs/pve-semantics.md §64), and the node's PCI devices for a `host` one (§72) and its QEMU for a pinned machine (§73).

use module_utils::pve::config::VmConfig;
use module_utils::pve::mappings;
use module_utils::pve::preflight::{pci_unknown, APT_VERSIONS, PCI_SCAN};
use module_utils::pve::resources::VmResource;
use module_utils::pve::state::Op;
use module_utils::pve::values::command_cpu::StartFacts;
use module_utils::Result;

use super::Checks;

/// The privileges that show a mapping in its kind's list (API2/Cluster/Mapping/*.pm `index`).
const SEE: [&str; 3] = ["Mapping.Modify", "Mapping.Use", "Mapping.Audit"];

/// The start of `values::command::virtiofs`'s words (Virtiofs.pm `assert_virtiofs_config`).
const ACL: &str = "Please disable ACLs for virtiofs";

impl Checks<'_> {
    /// Whether this user would see mapping `id` of `kind` if it existed; when not, the run warns
    /// that what PVE decides from it is not known (`what`: the write it decides) and that PVE may
    /// refuse it with `refusal`, its words for a mapping with no entry for the node (§52).
    fn sees(&self, kind: &str, id: &str, what: &str, refusal: impl FnOnce() -> String) -> bool {
        let held = self.privileges.held(&format!("/mapping/{kind}/{id}"));
        let sees = held.is_ok_and(|h| SEE.iter().any(|p| h.contains(*p)));
        if !sees {
            self.privileges.not_known(format!(
                "whether {kind} mapping '{id}' allows the {what} is not known: this user holds none of {} on /mapping/{kind}/{id}, which hides the mapping; PVE may refuse it: {}",
                SEE.join(", "),
                refusal()
            ));
        }
        sees
    }

    /// What a start of `vm` reads beyond its config (`Preflight::start_facts`, §61), storage.cfg
    /// (shared, §62), the mappings `config` names (`facts.mappings`, read with the node's checks,
    /// nothing read for a config that names none) and those this user cannot see (`facts.hidden`,
    /// each warned of), which `values::start_with` checks in their places (§70).
    pub(super) fn start_facts(&self, vm: &VmResource, config: &VmConfig) -> Result<StartFacts> {
        let effective = config.effective();
        let mut facts = self.preflight.start_facts(&vm.node, &effective)?;
        facts.storages = self.preflight.storages()?;
        facts.node = vm.node.clone();
        // the node's PCI devices, for a `host` id (§72): read with Sys.Audit or Sys.Modify on /, else warned of
        let lists = self.privileges.held("/").map(|h| PCI_SCAN.iter().any(|p| h.contains(*p))).unwrap_or(true);
        facts.pci = lists.then(|| self.preflight.node_pci(&vm.node, &effective)).flatten();
        if facts.pci.is_none() {
            pci_unknown(vm.vmid, &vm.node, &effective).into_iter().for_each(|w| self.privileges.not_known(w));
        }
        // the node's QEMU, for a pinned machine (§73): its package version only with Sys.Audit on the node
        let audit = self.privileges.held(&format!("/nodes/{}", vm.node)).map(|h| h.contains(APT_VERSIONS));
        facts.qemu = self.preflight.node_qemu(&vm.node, &effective, audit.unwrap_or(true));
        let named: Vec<_> = effective.iter().filter_map(|(k, v)| mappings::named(k, v)).collect();
        if named.is_empty() {
            return Ok(facts);
        }
        facts.mappings = mappings::read(self.api, &effective, Some(&vm.node))?;
        for (kind, id) in named {
            let known = facts.mappings.contains_key(&(kind, id.clone())) || facts.hidden.contains(&(kind, id.clone()));
            if !known && !self.sees(kind, &id, "start", || mappings::start_not_found(kind, &id, &vm.node)) {
                facts.hidden.push((kind, id));
            }
        }
        Ok(facts)
    }

    /// `state` (the VM's state's refusal) if any; then `values` (the config's values, the mapped
    /// devices among them); for a start, the mapped directories, which come last on the command
    /// line (`facts`: what `start_mappings` read).
    pub(super) fn mapped(
        &self,
        op: Op,
        config: &VmConfig,
        facts: &StartFacts,
        state: Option<String>,
        values: impl FnOnce() -> Option<String>,
    ) -> Option<String> {
        if state.is_some() || op != Op::Start {
            return state.or_else(values);
        }
        let visible = |kind: &str, id: &str| !facts.hidden.iter().any(|(k, i)| *k == kind && i == id);
        // virtio-fs comes last; Virtiofs.pm looks the directory up before its ACL check
        let dirs = || mappings::start_dirs(&config.effective(), &facts.node, &facts.mappings, &visible);
        match values() {
            Some(w) if w.starts_with(ACL) => dirs().filter(|d| !d.starts_with("directory mapping invalid")).or(Some(w)),
            other => other.or_else(dirs),
        }
    }

    /// QemuMigrate.pm `prepare`'s mapped devices, after the local ones: the mappings of the
    /// applied config to `target`, a running VM's that cannot migrate live.
    pub(super) fn mapped_migration(&self, config: &VmConfig, target: &str, running: bool) -> Result<Option<String>> {
        if !config.current.iter().any(|(k, v)| mappings::named(k, v).is_some()) {
            return Ok(None);
        }
        let maps = mappings::read(self.api, &config.current, None)?;
        let sees = |kind: &str, id: &str| {
            self.sees(kind, id, "migration", || mappings::migrate_not_found(&config.current, kind, id, target))
        };
        Ok(mappings::migrate(&config.current, target, running, &maps, &sees))
    }
}

//! What proxmox_kvm checks of a start and a migration of a VM with mapped devices or directories, reading the mappings only when the config names one (`pve::mappings`, docs/pve-semantics.md §64).

use module_utils::pve::config::VmConfig;
use module_utils::pve::mappings::{self, Mappings};
use module_utils::pve::resources::VmResource;
use module_utils::pve::state::Op;
use module_utils::Result;

use super::Checks;

/// The privileges that show a mapping in its kind's list (API2/Cluster/Mapping/*.pm `index`).
const SEE: [&str; 3] = ["Mapping.Modify", "Mapping.Use", "Mapping.Audit"];

/// The start of `values::command::virtiofs`'s words (Virtiofs.pm `assert_virtiofs_config`).
const ACL: &str = "Please disable ACLs for virtiofs";

impl Checks<'_> {
    /// Whether this user would see mapping `id` of `kind` if it existed; when not, the run warns
    /// that what PVE decides from it is not known (`what`: the write it decides).
    fn sees(&self, kind: &str, id: &str, what: &str) -> bool {
        let held = self.privileges.held(&format!("/mapping/{kind}/{id}"));
        let sees = held.is_ok_and(|h| SEE.iter().any(|p| h.contains(*p)));
        if !sees {
            self.privileges.not_known(format!(
                "whether {kind} mapping '{id}' allows the {what} is not known: this user holds none of {} on /mapping/{kind}/{id}, which hides the mapping",
                SEE.join(", ")
            ));
        }
        sees
    }

    /// `state` (the VM's state's refusal) if any; then a start's refusals in `config_to_command`'s
    /// order: the mapped PCI and USB devices on the VM's node, `values` (the config's values),
    /// the mapped directories; any other `op`: `values`. The mappings are read (with the node's
    /// checks) only for a config that names one.
    pub(super) fn mapped(
        &self,
        op: Op,
        vm: &VmResource,
        config: &VmConfig,
        state: Option<String>,
        values: impl FnOnce() -> Option<String>,
    ) -> Result<Option<String>> {
        if state.is_some() || op != Op::Start {
            return Ok(state.or_else(values));
        }
        let effective = config.effective();
        let maps = if effective.iter().any(|(k, v)| mappings::named(k, v).is_some()) {
            mappings::read(self.api, &effective, Some(&vm.node))?
        } else {
            Mappings::new()
        };
        let sees = |kind: &str, id: &str| self.sees(kind, id, "start");
        if let Some(words) = mappings::start_devices(&effective, &vm.node, &maps, &sees) {
            return Ok(Some(words));
        }
        // virtio-fs comes last; Virtiofs.pm looks the directory up before its ACL check
        let dirs = mappings::start_dirs(&effective, &vm.node, &maps, &sees);
        Ok(match values() {
            Some(w) if w.starts_with(ACL) => dirs.filter(|d| !d.starts_with("directory mapping invalid")).or(Some(w)),
            other => other.or(dirs),
        })
    }

    /// QemuMigrate.pm `prepare`'s mapped devices, after the local ones: the mappings of the
    /// applied config to `target`, a running VM's that cannot migrate live.
    pub(super) fn mapped_migration(&self, config: &VmConfig, target: &str, running: bool) -> Result<Option<String>> {
        if !config.current.iter().any(|(k, v)| mappings::named(k, v).is_some()) {
            return Ok(None);
        }
        let maps = mappings::read(self.api, &config.current, None)?;
        Ok(mappings::migrate(&config.current, target, running, &maps, &|kind, id| self.sees(kind, id, "migration")))
    }
}

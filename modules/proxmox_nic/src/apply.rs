//! proxmox_nic's I/O after the plan: the one config write (also checked in check mode), then the read back of what PVE made of it.

use module_utils::check::readback;
use module_utils::pve::client::Api;

use module_utils::pve::config::{self, VmConfig};
use module_utils::pve::request::{form, ApiPath, Form, Method};
use module_utils::pve::resources::VmResource;
use module_utils::Result;

use crate::plan::Action;

/// The write `action` makes, as sent (with the digest of `config`, the read it was planned from).
pub fn write(vm: &VmResource, config: &VmConfig, iface: &str, action: &Action) -> Option<(Method, ApiPath, Form)> {
    let mut body = match action {
        Action::Set(value) => form([(iface, value.as_str())]),
        Action::Delete => form([("delete", iface)]),
        Action::None => return None,
    };
    if let Some(d) = &config.digest {
        body.push(("digest".into(), d.clone()));
    }
    Some((Method::Put, vm.path().join(["config"]), body))
}

/// What a failure of `action`'s write says the module was doing.
pub fn context(vmid: u64, iface: &str, action: &Action) -> String {
    let verb = if matches!(action, Action::Delete) { "delete" } else { "change" };
    format!("Unable to {verb} nic {iface} on VM with vmid {vmid}")
}

/// Make the write `action` names and read the NIC back: its value and whether it waits for the
/// next start. What PVE stored is compared with `predicted`, the config the plan predicts (§46).
pub fn apply(
    api: &dyn Api,
    vm: &VmResource,
    config: &VmConfig,
    iface: &str,
    action: &Action,
    predicted: &VmConfig,
) -> Result<(Option<String>, bool)> {
    let Some((method, path, body)) = write(vm, config, iface, action) else {
        return Ok((config.get(iface).map(str::to_string), config.is_pending(iface)));
    };
    api.call(method, &path, &body).map_err(|e| e.context(&context(vm.vmid, iface, action)))?;
    let after = config::read(api, vm)?;
    readback::verify(&format!("VM {}", vm.vmid), Some(config), predicted, &after)?;
    Ok((after.get(iface).map(str::to_string), after.is_pending(iface)))
}

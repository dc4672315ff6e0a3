//! proxmox_nic's plan: from the VM's config, its power state and the task, the one change to the NIC and its predicted result. Pure: no I/O.
//!
//! Whether a running VM takes the change live is PVE's hot-plug rule, asked of
//! `module_utils::pve::hotplug` (qemu-server `vmconfig_update_net`).

use module_utils::check::unknown::KNOWN_AFTER_APPLY;
use module_utils::pve::config::VmConfig;
use module_utils::pve::hotplug::nic_change_waits;
use module_utils::pve::propstring::{PropertyString, NET};
use module_utils::{Error, Result};

use crate::params::{Params, State};

/// The NIC options this module manages; any other option of an existing NIC is kept.
const MANAGED_KEYS: &[&str] =
    &["model", "macaddr", "bridge", "tag", "trunks", "firewall", "link_down", "mtu", "queues", "rate"];

/// What the task will do to the NIC.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    None,
    /// `PUT .../config netN=<value>`.
    Set(String),
    /// `PUT .../config delete=netN`.
    Delete,
}

/// The plan for one task: the action, and the NIC before and (predicted) after it. A NIC sent
/// without a MAC gets one PVE draws at apply (qemu-server `PVE::QemuServer::Network`
/// `parse_net` with a random MAC, §9): `after` marks it known after apply.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub action: Action,
    pub before: Option<String>,
    pub after: Option<String>,
    /// Whether, after the action, the NIC will wait for the next start (predicted).
    pub pending: bool,
}

/// A float as PVE would keep it when we send it: integral rates without a fraction.
fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// The NIC the task describes, given the NIC that exists (for its MAC and unmanaged options).
/// Every value from the task goes through `set_checked`: none can add or change another key.
pub fn desired_nic(params: &Params, existing: Option<&PropertyString>) -> Result<PropertyString> {
    let mut nic = PropertyString::new(&NET);
    nic.set_checked("model", &params.model)?;
    match (&params.mac, existing.and_then(|e| e.get("macaddr"))) {
        (Some(mac), _) => nic.set_checked("macaddr", mac).map_err(|e| Error::args(format!("mac: {e}")))?,
        // A MAC an earlier task of this check run left to PVE is not sent: PVE keeps the one it drew.
        (None, Some(kept)) if kept != KNOWN_AFTER_APPLY => nic.set("macaddr", kept),
        (None, Some(_)) => {}
        (None, None) => {}
    }
    let optional = [
        ("bridge", params.bridge.clone()),
        ("firewall", params.firewall.then(|| "1".to_string())),
        ("link_down", params.link_down.then(|| "1".to_string())),
        ("mtu", params.mtu.map(|v| v.to_string())),
        ("queues", params.queues.map(|v| v.to_string())),
        ("rate", params.rate.map(number_text)),
        ("tag", params.tag.map(|v| v.to_string())),
        ("trunks", params.trunks.clone()),
    ];
    for (key, value) in optional {
        if let Some(v) = value {
            nic.set_checked(key, &v)?;
        }
    }
    if let Some(existing) = existing {
        for (key, value) in existing.iter() {
            if !MANAGED_KEYS.contains(&key) {
                nic.set(key, value);
            }
        }
    }
    Ok(nic)
}

/// Plan the task against the VM's config. Pure.
pub fn plan(config: &VmConfig, running: bool, params: &Params) -> Result<Plan> {
    let iface = params.interface.as_str();
    let before_text = config.get(iface).map(str::to_string);
    let before = match &before_text {
        Some(text) => Some(
            PropertyString::parse_lenient(&NET, text)
                .map_err(|e| Error::failed(format!("the current {iface} of the VM cannot be read: {e}")))?,
        ),
        None => None,
    };
    let already_pending = config.is_pending(iface);
    // What the VM runs with now decides whether a change can be hot-plugged.
    let applied = config.current.get(iface).and_then(|c| PropertyString::parse_lenient(&NET, c).ok());
    match params.state {
        State::Absent => Ok(match before {
            None => Plan { action: Action::None, before: None, after: None, pending: already_pending },
            Some(_) => Plan {
                action: Action::Delete,
                before: before_text,
                after: None,
                pending: running && nic_change_waits(&config.hotplug(), applied.as_ref(), None),
            },
        }),
        State::Present => {
            let desired = desired_nic(params, before.as_ref())?;
            let mut stored = desired.clone();
            if stored.get("macaddr").is_none() {
                stored.set("macaddr", KNOWN_AFTER_APPLY);
            }
            if let Some(b) = &before {
                if b.semantically_equal(&stored) {
                    return Ok(Plan {
                        action: Action::None,
                        before: before_text.clone(),
                        after: before_text,
                        pending: already_pending,
                    });
                }
            }
            let pending = running && nic_change_waits(&config.hotplug(), applied.as_ref(), Some(&desired));
            let value = desired.to_checked_string()?;
            Ok(Plan { action: Action::Set(value), before: before_text, after: Some(stored.to_string()), pending })
        }
    }
}

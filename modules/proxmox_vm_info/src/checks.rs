//! proxmox_vm_info's checks before it reads: the node the task names exists. It never writes; a node that does not exist is refused as upstream refuses it, before any VM's config or list is read.

use module_utils::error::clip;
use module_utils::pve::client::Api;
use module_utils::pve::pveformat::QUOTE_MAX;
use module_utils::pve::request::ApiPath;
use module_utils::{Error, Result};
use serde_json::Value;

use crate::params::Params;

/// The checks before the reads: the task's `node`, when it names one, is in the cluster.
pub fn before_reading(api: &dyn Api, params: &Params) -> Result<()> {
    match &params.node {
        Some(node) => require_node(api, node),
        None => Ok(()),
    }
}

/// Fail unless the cluster has `node` (upstream's words).
pub fn require_node(api: &dyn Api, node: &str) -> Result<()> {
    let nodes =
        api.get(&ApiPath::new(["nodes"]), &Vec::new()).map_err(|e| e.context("Unable to retrieve Proxmox VE node"))?;
    let known =
        nodes.as_array().is_some_and(|list| list.iter().any(|n| n.get("node").and_then(Value::as_str) == Some(node)));
    if !known {
        return Err(Error::failed(format!("Node {} doesn't exist in PVE cluster", clip(node, QUOTE_MAX))));
    }
    Ok(())
}

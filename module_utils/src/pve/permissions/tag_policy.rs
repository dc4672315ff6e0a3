//! The datacenter's tag policy as PVE applies it to a change of a VM's tags, read from `GET /cluster/options`, and what cannot be known without `Sys.Audit` on `/`.
//!
//! pve-guest-common `src/PVE/GuestHelpers.pm` `assert_tag_permissions`, `get_allowed_tags`;
//! pve-manager `PVE/API2/Cluster.pm` `get_options`. A user with `Sys.Modify` on `/` may set any
//! tag. Anyone else may add or remove a tag only when it is not a registered tag
//! (`registered-tags`) and it is either allowed to them (`allowed-tags`: the `user-allow-list`
//! and, unless `user-allow` is `list` or `none`, the tags of the guests they may audit) or
//! `user-allow` is `free` (the default); else PVE refuses with `Permission check failed (/,
//! Sys.Modify for modifying tag '<tag>')`. Anyone may read `GET /cluster/options`, which always
//! holds `allowed-tags`, but `user-tag-access` and `registered-tags` only with `Sys.Audit` on
//! `/`: without it, a tag outside `allowed-tags` may or may not be refused, and the check says
//! so instead of guessing. docs/pve-semantics.md §44.3.

use std::rc::Rc;

use serde_json::Value;

use super::handlers::changed_tags;
use super::Privileges;
use crate::error::Result;
use crate::pve::request::ApiPath;

/// The items of a list option, as PVE's JSON gives it (an array) or as text (`a;b`).
fn items(v: Option<&Value>) -> Vec<String> {
    match v {
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).map(str::to_string).collect(),
        Some(Value::String(s)) => s.split([';', ',', ' ']).filter(|t| !t.is_empty()).map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

fn options(p: &Privileges) -> Result<Rc<Value>> {
    if let Some(o) = p.options.borrow().as_ref() {
        return Ok(o.clone());
    }
    let read = p
        .api
        .get(&ApiPath::new(["cluster", "options"]), &Vec::new())
        .map_err(|e| e.context(&format!("reading the datacenter's tag policy as {}", p.authid)))?;
    let read = Rc::new(read);
    *p.options.borrow_mut() = Some(read.clone());
    Ok(read)
}

/// PVE's message when the tag policy refuses the change of tags `old` -> `new`, else `None`
/// (also when it cannot be known: then a warning is kept in `Privileges::unknowns`).
pub(super) fn refusal(p: &Privileges, old: &str, new: &str) -> Result<Option<String>> {
    let changed = changed_tags(old, new);
    if changed.is_empty() {
        return Ok(None);
    }
    let root = p.held("/")?;
    if root.contains("Sys.Modify") {
        return Ok(None);
    }
    let opts = options(p)?;
    let allowed = items(opts.get("allowed-tags"));
    let audit = root.contains("Sys.Audit");
    let registered = items(opts.get("registered-tags"));
    let free = opts.get("user-tag-access").and_then(|a| a.get("user-allow")).and_then(Value::as_str).unwrap_or("free")
        == "free";
    for tag in changed {
        let listed = allowed.contains(&tag);
        if audit {
            if (!listed && !free) || registered.contains(&tag) {
                return Ok(Some(format!("Permission check failed (/, Sys.Modify for modifying tag '{tag}')")));
            }
        } else if !listed {
            p.unknown.borrow_mut().push(format!(
                "whether Proxmox VE lets {} add or remove the tag '{tag}' is not known: it is not among the tags \
                 the datacenter allows this user (allowed-tags), and the rest of the tag policy (user-tag-access, \
                 registered-tags) needs Sys.Audit on / to read; PVE may refuse it: Permission check failed \
                 (/, Sys.Modify for modifying tag '{tag}')",
                p.authid
            ));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;

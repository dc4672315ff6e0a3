//! Asking PVE what the token or user of a run holds (`GET /access/permissions`), and whether that covers a list of `Need`s, failing with PVE's own message.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use super::{all, Need};
use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::{form, ApiPath};

/// What the token or user of this run holds, asked of PVE one ACL path at a time
/// (`GET /access/permissions?path=...`, as the caller itself: anyone may read their own) and kept
/// for the run.
pub struct Privileges<'a> {
    pub(super) api: &'a dyn Api,
    /// `user@realm` or `user@realm!token`: `root@pam` itself (not its tokens) passes the
    /// root-only checks.
    pub(super) authid: String,
    /// VNet -> SDN zone; a bridge not listed is in `localnetwork`.
    vnet_zones: BTreeMap<String, String>,
    held: RefCell<BTreeMap<String, Rc<BTreeSet<String>>>>,
    /// `GET /cluster/options` as this user reads it, once (the tag policy, `tag_policy.rs`).
    pub(super) options: RefCell<Option<Rc<Value>>>,
    /// What a check could not know (a tag the policy may or may not allow), for the run's warnings.
    pub(super) unknown: RefCell<Vec<String>>,
}

impl<'a> Privileges<'a> {
    pub fn new(api: &'a dyn Api, authid: &str) -> Privileges<'a> {
        Privileges {
            api,
            authid: authid.to_string(),
            vnet_zones: BTreeMap::new(),
            held: RefCell::new(BTreeMap::new()),
            options: RefCell::new(None),
            unknown: RefCell::new(Vec::new()),
        }
    }

    /// The SDN zone of each VNet a NIC may name (`GET /cluster/sdn/vnets`), for `Need::Bridge`.
    pub fn with_vnet_zones(mut self, vnet_zones: BTreeMap<String, String>) -> Privileges<'a> {
        self.vnet_zones = vnet_zones;
        self
    }

    /// The privileges held on `path` (a privilege held without propagation is held: PVE marks
    /// it `0`, docs/pve-semantics.md §24.1).
    pub fn held(&self, path: &str) -> Result<Rc<BTreeSet<String>>> {
        if let Some(privs) = self.held.borrow().get(path) {
            return Ok(privs.clone());
        }
        let data = self
            .api
            .get(&ApiPath::new(["access", "permissions"]), &form([("path", path)]))
            .map_err(|e| e.context(&format!("reading the privileges of {} on {path}", self.authid)))?;
        let privs: BTreeSet<String> =
            data.get(path).and_then(Value::as_object).map(|m| m.keys().cloned().collect()).unwrap_or_default();
        let privs = Rc::new(privs);
        self.held.borrow_mut().insert(path.to_string(), privs.clone());
        Ok(privs)
    }

    /// What the checks since the last call could not know (each once), to be reported as
    /// warnings: the run neither refuses nor promises these.
    pub fn take_unknowns(&self) -> Vec<String> {
        let mut seen: Vec<String> = Vec::new();
        for w in std::mem::take(&mut *self.unknown.borrow_mut()) {
            if !seen.contains(&w) {
                seen.push(w);
            }
        }
        seen
    }

    /// Read now the privileges on the paths `require(needs)` reads, in its order, except
    /// `except`, so that `require` then asks only for that one: a create or clone reads the rest
    /// before it asks PVE for the new VM's id (`except` is the path of a placeholder id), which
    /// it then takes as late as it can. Stops where `require` would fail (the failure is left to
    /// `require`); the options of a `OneOf` are left to it too: which of them it reads depends
    /// on what is held.
    pub fn read_ahead(&self, needs: &[Need], except: &str) -> Result<()> {
        self.read_ahead_until_refused(needs, except).map(|_| ())
    }

    /// `read_ahead`; `false` once a need is found not held.
    fn read_ahead_until_refused(&self, needs: &[Need], except: &str) -> Result<bool> {
        for need in needs {
            let held = match need {
                Need::Privs { path, .. } if path != except => self.check(need)?.is_none(),
                Need::AllOf(inner) => self.read_ahead_until_refused(inner, except)?,
                Need::Bridge { .. } => self.check(need)?.is_none(),
                Need::Privs { .. } | Need::OneOf { .. } | Need::RootOnly(_) | Need::Refused(_) | Need::Tags { .. } => {
                    true
                }
            };
            if !held {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Every need, in order; the first not held fails with PVE's message: a missing privilege
    /// with the text of PVE's 403, a root-only or refused one with the text PVE dies with.
    pub fn require(&self, needs: &[Need]) -> Result<()> {
        for need in needs {
            if let Some(message) = self.check(need)? {
                return Err(Error::failed(message));
            }
        }
        Ok(())
    }

    /// `require`, with a message that says who was refused and for what: PVE's text, then `, as
    /// <user>!<token>, for <request>` (`request::describe`); PVE's bare `Permission check failed`
    /// (a create without `VM.Allocate`) also names the privileges any one of which would do.
    /// The identity is `api_user` or `api_user!api_token_id`, never a secret.
    pub fn require_for(&self, needs: &[Need], request: &str) -> Result<()> {
        for need in needs {
            if let Some(message) = self.check(need)? {
                let wanted = match need {
                    Need::OneOf { bare: true, options } => {
                        let options: Vec<String> = options.iter().filter_map(wanted).collect();
                        format!("; it needs {}", options.join(" or "))
                    }
                    _ => String::new(),
                };
                return Err(Error::failed(format!("{message}, as {}, for {request}{wanted}", self.authid)));
            }
        }
        Ok(())
    }

    /// `None` when `need` is held, else PVE's message for it.
    fn check(&self, need: &Need) -> Result<Option<String>> {
        Ok(match need {
            Need::Privs { path, privs, any } => {
                let held = self.held(path)?;
                if *any {
                    (!privs.iter().any(|p| held.contains(*p)))
                        .then(|| format!("Permission check failed ({path}, {})", privs.join("|")))
                } else {
                    privs.iter().find(|p| !held.contains(**p)).map(|p| format!("Permission check failed ({path}, {p})"))
                }
            }
            Need::OneOf { options, bare } => {
                let mut last = None;
                for option in options {
                    match self.check(option)? {
                        None => return Ok(None),
                        Some(m) => last = Some(m),
                    }
                }
                if *bare {
                    Some("Permission check failed".to_string())
                } else {
                    last
                }
            }
            Need::AllOf(needs) => {
                for n in needs {
                    if let Some(m) = self.check(n)? {
                        return Ok(Some(m));
                    }
                }
                None
            }
            Need::Bridge { bridge, vlans } => {
                let zone = self.vnet_zones.get(bridge).map_or("localnetwork", String::as_str);
                let base = format!("/sdn/zones/{zone}/{bridge}");
                let paths: Vec<String> =
                    if vlans.is_empty() { vec![base] } else { vlans.iter().map(|v| format!("{base}/{v}")).collect() };
                let needs: Vec<Need> = paths.into_iter().map(|p| all(p, &["SDN.Use"])).collect();
                return self.check(&Need::AllOf(needs));
            }
            Need::RootOnly(message) => (self.authid != "root@pam").then(|| message.clone()),
            Need::Refused(message) => Some(message.clone()),
            Need::Tags { old, new } => super::tag_policy::refusal(self, old, new)?,
        })
    }
}

/// A privilege need as a message names it: `VM.Allocate on /vms/606`.
fn wanted(need: &Need) -> Option<String> {
    match need {
        Need::Privs { path, privs, any } => Some(format!("{} on {path}", privs.join(if *any { "|" } else { "+" }))),
        _ => None,
    }
}

//! Asking PVE what the token or user of a run holds (`GET /access/permissions`), and whether that covers a list of `Need`s, failing with PVE's own message.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::rc::Rc;

use serde_json::Value;

use super::{all, Need};
use crate::error::{Error, Result};
use crate::pve::client::Api;
use crate::pve::request::ApiPath;

/// What `GET /access/permissions` without `path` answers: each path the user holds something on
/// (with the paths every answer considers), and for each privilege whether it propagates.
type Tree = BTreeMap<String, BTreeMap<String, bool>>;

/// What the user of a run holds once read: one per run, handed to each `Privileges` of it
/// (`Privileges::sharing`).
#[derive(Clone, Default)]
pub struct Held(Rc<RefCell<Option<Rc<Tree>>>>);

/// What the token or user of this run holds, asked of PVE once for every path (`GET
/// /access/permissions` without `path`, as the caller itself: anyone may read their own) and
/// kept for the run; a path the answer leaves out holds what propagates to it from the nearest
/// path above that passes something down (docs/pve-semantics.md §52).
pub struct Privileges<'a> {
    pub(super) api: &'a dyn Api,
    /// `user@realm` or `user@realm!token`: `root@pam` itself (not its tokens) passes the
    /// root-only checks.
    pub(super) authid: String,
    /// VNet -> SDN zone; a bridge not listed is in `localnetwork`.
    vnet_zones: BTreeMap<String, String>,
    /// Shared by every `Privileges` of one run made with `sharing` (`Held`), so the tree is
    /// read once per run however many of them ask.
    tree: Held,
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
            tree: Held::default(),
            options: RefCell::new(None),
            unknown: RefCell::new(Vec::new()),
        }
    }

    /// The same privileges, kept in `held`: every `Privileges` made with the same `Held` reads
    /// `GET /access/permissions` at most once between them (a run's checks and its wait for a VM
    /// in flight ask the same question).
    pub fn sharing(mut self, held: &Held) -> Privileges<'a> {
        self.tree = held.clone();
        self
    }

    /// The SDN zone of each VNet a NIC may name (`GET /cluster/sdn/vnets`), for `Need::Bridge`.
    pub fn with_vnet_zones(mut self, vnet_zones: BTreeMap<String, String>) -> Privileges<'a> {
        self.vnet_zones = vnet_zones;
        self
    }

    /// Everything this user holds, read on the first question and kept for the run.
    fn tree(&self) -> Result<Rc<Tree>> {
        if let Some(tree) = self.tree.0.borrow().as_ref() {
            return Ok(tree.clone());
        }
        let data = self
            .api
            .get(&ApiPath::new(["access", "permissions"]), &Vec::new())
            .map_err(|e| e.context(&format!("reading the privileges of {}", self.authid)))?;
        let tree: Tree = data
            .as_object()
            .map(|paths| {
                paths
                    .iter()
                    .map(|(path, privs)| {
                        let privs = privs.as_object().map(|m| {
                            m.iter().map(|(p, prop)| (p.clone(), propagates(prop))).collect::<BTreeMap<_, _>>()
                        });
                        (path.clone(), privs.unwrap_or_default())
                    })
                    .collect()
            })
            .unwrap_or_default();
        // Told to the client: a new VM's footprint may take "no config" from `/cluster/resources` (§66.6).
        if held_below(&tree, "/vms", "VM.Audit") {
            self.api.every_guest_listed();
        }
        let tree = Rc::new(tree);
        *self.tree.0.borrow_mut() = Some(tree.clone());
        Ok(tree)
    }

    /// The privileges held on `path` (a privilege held without propagation is held: PVE marks
    /// it `0`, docs/pve-semantics.md §24.1).
    pub fn held(&self, path: &str) -> Result<Rc<BTreeSet<String>>> {
        Ok(Rc::new(on_path(self.tree()?.as_ref(), path)))
    }

    /// Whether `privilege` is held on every path below `parent` (`/vms`: on every VM, those to
    /// come too): on each such path the answer lists, and on those it leaves out.
    pub fn held_below(&self, parent: &str, privilege: &str) -> Result<bool> {
        Ok(held_below(self.tree()?.as_ref(), parent, privilege))
    }

    /// Whether this user holds `VM.Audit` on every guest: pve-manager `API2/Cluster.pm`
    /// `resources` skips only the guests a user lacks it on, so `/cluster/resources` then lists
    /// every vmid of the cluster, and a vmid it leaves out is free (docs/pve-semantics.md §66.2).
    pub fn sees_every_guest(&self) -> Result<bool> {
        self.held_below("/vms", "VM.Audit")
    }

    /// Report `what` among the warnings of this run: a check that could not be decided, which the
    /// run neither refuses nor promises.
    pub fn not_known(&self, what: String) {
        self.unknown.borrow_mut().push(what);
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

    /// Read now what this user holds, so that nothing is asked of PVE between this and the
    /// checks: a create or clone reads it before it asks PVE for the new VM's id, which it then
    /// takes as late as it can.
    pub fn read_ahead(&self) -> Result<()> {
        self.tree().map(|_| ())
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
            Need::Unseen { options, refused, unknown } => {
                let mut held = 0;
                for option in options {
                    held += usize::from(self.check(option)?.is_none());
                }
                match held {
                    0 => Some(refused.clone()),
                    n if n == options.len() => None,
                    _ => {
                        self.unknown.borrow_mut().push(unknown.clone());
                        None
                    }
                }
            }
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

/// A privilege's flag in PVE's answer: `1` (or `true`) where it propagates.
fn propagates(flag: &Value) -> bool {
    flag.as_bool().unwrap_or_else(|| flag.as_u64().is_some_and(|n| n != 0))
}

/// What `tree` says is held on `path` (pve-access-control `RPCEnvironment.pm`
/// `get_effective_permissions`, `permissions`; `AccessControl.pm` `roles`): a path in the answer
/// holds what it lists; a path the answer leaves out has no ACL of its own and is no pool's
/// member (those are all listed), so it holds what propagates to it (`passed_down`).
fn on_path(tree: &Tree, path: &str) -> BTreeSet<String> {
    if let Some(privs) = tree.get(path) {
        return privs.keys().cloned().collect();
    }
    let parent = path.trim_end_matches('/').rsplit_once('/').map_or("", |(parent, _)| parent);
    passed_down(tree, if parent.is_empty() { "/" } else { parent })
}

/// `Privileges::held_below` on a tree read.
fn held_below(tree: &Tree, parent: &str, privilege: &str) -> bool {
    let prefix = format!("{}/", parent.trim_end_matches('/'));
    passed_down(tree, parent).contains(privilege)
        && tree.iter().filter(|(path, _)| path.starts_with(&prefix)).all(|(_, privs)| privs.contains_key(privilege))
}

/// What a path below `parent` that the answer leaves out holds: the propagating privileges of
/// `parent` or of the nearest path above it that has any (one whose privileges all stop there
/// passes down what reached it from above). None when nothing above propagates.
fn passed_down(tree: &Tree, parent: &str) -> BTreeSet<String> {
    let mut at = parent;
    loop {
        let passed: BTreeSet<String> =
            tree.get(at).into_iter().flatten().filter(|(_, p)| **p).map(|(k, _)| k.clone()).collect();
        if !passed.is_empty() || at == "/" {
            return passed;
        }
        at = match at.rsplit_once('/') {
            Some(("", _)) | None => "/",
            Some((up, _)) => up,
        };
    }
}

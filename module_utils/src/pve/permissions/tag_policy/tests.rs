//! Tests of the tag policy: what `GET /cluster/options` tells a user with and without `Sys.Audit` on `/`, and the refusal or the unknown it makes of a change of tags.

use serde_json::{json, Value};

use super::super::{Need, Privileges};
use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::request::{ApiPath, Form, Method};

/// A PVE with `root` privileges on `/` and the datacenter `options` (as `get_options` returns
/// them to this user).
struct PolicyApi {
    root: Vec<&'static str>,
    options: Value,
}

impl Api for PolicyApi {
    fn call(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value> {
        assert_eq!(method, Method::Get);
        match path.encoded().as_str() {
            "/cluster/options" => Ok(self.options.clone()),
            "/access/permissions" => {
                assert!(params.is_empty(), "one read for every path");
                let root: serde_json::Map<String, Value> =
                    self.root.iter().map(|p| (p.to_string(), json!(0))).collect();
                Ok(json!({ "/": root, "/vms": { "VM.Config.Options": 1 } }))
            }
            other => panic!("unexpected read {other}"),
        }
    }
}

fn change(old: &str, new: &str) -> Vec<Need> {
    super::super::handlers::tags(100, Some(old), new)
}

#[test]
fn a_registered_tag_or_one_outside_a_list_policy_is_refused_to_an_auditor() {
    // GuestHelpers.pm assert_tag_permissions: `(!$allowed_tags->{$tag} && !$freeform) || $privileged_tags->{$tag}`
    let api = PolicyApi {
        root: vec!["Sys.Audit"],
        options: json!({"user-tag-access": {"user-allow": "list", "user-allow-list": ["web"]},
                        "registered-tags": ["prod"], "allowed-tags": ["db", "web"]}),
    };
    let p = Privileges::new(&api, "ops@pve!t");
    assert!(p.require(&change("db", "db;web")).is_ok());
    let e = p.require(&change("db", "db;other")).unwrap_err().to_string();
    assert_eq!(e, "Permission check failed (/, Sys.Modify for modifying tag 'other')");
    // removing counts as a change too; a registered tag is refused even under `free`
    let api = PolicyApi { root: vec!["Sys.Audit"], options: json!({"registered-tags": ["prod"], "allowed-tags": []}) };
    let p = Privileges::new(&api, "ops@pve!t");
    let e = p.require(&change("prod;web", "web")).unwrap_err().to_string();
    assert_eq!(e, "Permission check failed (/, Sys.Modify for modifying tag 'prod')");
    assert!(p.require(&change("web", "web;new")).is_ok(), "free: any tag that is not registered");
    assert!(p.require(&change("web", "web")).is_ok(), "nothing changed: nothing checked");
    assert!(p.take_unknowns().is_empty());
}

#[test]
fn sys_modify_may_set_any_tag() {
    let api = PolicyApi { root: vec!["Sys.Modify"], options: json!({}) };
    let p = Privileges::new(&api, "admin@pve!t");
    assert!(p.require(&change("", "prod")).is_ok());
}

#[test]
fn without_sys_audit_a_tag_outside_allowed_tags_is_unknown_not_refused() {
    // Cluster.pm get_options: without Sys.Audit on / only `allowed-tags` (and console, tag-style)
    let api = PolicyApi { root: vec![], options: json!({"allowed-tags": ["web"]}) };
    let p = Privileges::new(&api, "dev@pve!t");
    assert!(p.require(&change("", "web")).is_ok());
    assert!(p.take_unknowns().is_empty());
    assert!(p.require(&change("", "web;other")).is_ok());
    let unknowns = p.take_unknowns();
    assert_eq!(unknowns.len(), 1);
    assert!(
        unknowns[0].contains("the tag 'other' is not known") && unknowns[0].contains("Sys.Audit on /"),
        "{unknowns:?}"
    );
}

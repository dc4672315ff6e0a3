//! The parts of a request body the checks read: one key's value, what a config write sets and what it removes.

use module_utils::pve::config::VmConfig;
use module_utils::pve::request::Form;

/// The value of `key` in a request body.
pub(super) fn value<'b>(body: &'b Form, key: &str) -> Option<&'b str> {
    body.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// The keys a config write removes as `update_vm_api` sees them: its `delete` keys, and the
/// `revert` keys whose value is only pending (a revert of an applied key writes it back instead).
pub(super) fn removed_keys(body: &Form, config: &VmConfig) -> Vec<String> {
    let mut out = Vec::new();
    for (k, v) in body.iter().filter(|(k, _)| k == "delete" || k == "revert") {
        let keys = v.split(',').filter(|s| !s.is_empty());
        out.extend(keys.filter(|key| k == "delete" || !config.current.contains_key(*key)).map(str::to_string));
    }
    out
}

/// A config write's body as what it sets and what it deletes (`delete` and `revert` keys), its
/// other parameters (`digest`, `skiplock`) left out.
pub(super) fn split_config_body(body: &Form) -> (Form, Vec<String>) {
    let mut set = Form::new();
    let mut delete = Vec::new();
    for (k, v) in body {
        match k.as_str() {
            "delete" | "revert" => delete.extend(v.split(',').filter(|s| !s.is_empty()).map(str::to_string)),
            "digest" | "skiplock" => {}
            _ => set.push((k.clone(), v.clone())),
        }
    }
    (set, delete)
}

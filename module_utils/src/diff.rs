//! `--diff` output: a VM config rendered as one `key: value` line per key, so that Ansible's
//! unified diff of before and after reads like a diff of the VM's config file.

use serde_json::{json, Map, Value};

use crate::pveconfig::natural_cmp;

/// What ansible-core renders as a unified diff.
#[derive(Debug, Clone, PartialEq)]
pub struct Diff {
    pub before: String,
    pub after: String,
    pub before_header: String,
    pub after_header: String,
}

impl Diff {
    pub fn text(before: &str, after: &str, before_header: &str, after_header: &str) -> Self {
        Diff {
            before: before.to_string(),
            after: after.to_string(),
            before_header: before_header.to_string(),
            after_header: after_header.to_string(),
        }
    }

    /// A diff of two config maps (absent = the object does not exist).
    pub fn config(before: Option<&Map<String, Value>>, after: Option<&Map<String, Value>>, header: &str) -> Self {
        Diff {
            before: before.map(config_text).unwrap_or_default(),
            after: after.map(config_text).unwrap_or_default(),
            before_header: format!("{header} (before)"),
            after_header: format!("{header} (after)"),
        }
    }

    pub fn to_json(&self) -> Value {
        json!({
            "before": self.before,
            "after": self.after,
            "before_header": self.before_header,
            "after_header": self.after_header,
        })
    }
}

/// `key: value` lines in natural key order (`net2` before `net10`), `digest` left out.
pub fn config_text(config: &Map<String, Value>) -> String {
    let mut keys: Vec<&String> = config.keys().filter(|k| k.as_str() != "digest").collect();
    keys.sort_by(|a, b| natural_cmp(a, b));
    let mut out = String::new();
    for key in keys {
        let value = match &config[key.as_str()] {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        // A multi-line value (description) stays on one diff line per key.
        out.push_str(&format!("{key}: {}\n", value.replace('\n', "\\n")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_text_is_sorted_naturally_without_digest() {
        let m: Map<String, Value> = serde_json::from_value(json!({
            "net10": "virtio=BC:24:11:00:00:0A", "net2": "e1000", "cores": 2, "digest": "abc", "description": "a\nb"
        }))
        .unwrap();
        assert_eq!(config_text(&m), "cores: 2\ndescription: a\\nb\nnet2: e1000\nnet10: virtio=BC:24:11:00:00:0A\n");
    }

    #[test]
    fn absent_side_is_empty() {
        let m: Map<String, Value> = serde_json::from_value(json!({"name": "web"})).unwrap();
        let d = Diff::config(None, Some(&m), "VM 100");
        assert_eq!(d.before, "");
        assert_eq!(d.after, "name: web\n");
        assert_eq!(d.after_header, "VM 100 (after)");
    }
}

//! `--diff` output: what ansible-core renders as a unified diff of before and after (for a VM,
//! its config as `key: value` lines, so the diff reads like a diff of the config file).

use serde_json::{json, Value};

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

    /// A diff of an object rendered as `key: value` lines (absent = the object does not exist).
    pub fn config(before: Option<&str>, after: Option<&str>, header: &str) -> Self {
        Diff {
            before: before.unwrap_or_default().to_string(),
            after: after.unwrap_or_default().to_string(),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn absent_side_is_empty() {
        let d = Diff::config(None, Some("name: web\n"), "VM 100");
        assert_eq!(d.before, "");
        assert_eq!(d.after, "name: web\n");
        assert_eq!(d.after_header, "VM 100 (after)");
    }
}

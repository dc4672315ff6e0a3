//! Renders the doc fragment of an option group (`plugins/doc_fragments/<fragment>.py`): the options
//! several modules share (the connection) are documented once there, and each module's docs name
//! the fragment in `extends_documentation_fragment`, as ansible-core's convention is. ansible-doc
//! merges the fragment's options and notes into every module that extends it.

use crate::ansible::connection::CONNECTION;
use crate::ansible::spec::{ModuleSpec, OptionGroup};

use super::{fold_yaml, option_yaml, quote};

/// Every option group, each with its fragment. The drift test of each module's stub (`check_stub`,
/// built with the `docs` feature, which keeps the text) checks the fragments of the module's groups.
pub const GROUPS: &[&OptionGroup] = &[&CONNECTION];

/// The collection's namespace and name, the prefix of a fragment's name in a module's docs.
const COLLECTION: &str = "ferro.proxmox";

/// The path of a group's fragment, relative to the workspace root.
pub fn fragment_path(group: &OptionGroup) -> String {
    format!("plugins/doc_fragments/{}.py", group.fragment)
}

/// The `extends_documentation_fragment` of a module's DOCUMENTATION: one entry per option group.
pub(super) fn extends(spec: &ModuleSpec) -> String {
    if spec.option_groups.is_empty() {
        return String::new();
    }
    let mut out = String::from("extends_documentation_fragment:\n");
    for group in spec.option_groups {
        out.push_str(&format!("  - {COLLECTION}.{}\n", group.fragment));
    }
    out
}

/// The fragment's DOCUMENTATION: the group's options, then its notes.
fn documentation(group: &OptionGroup) -> String {
    let mut out = String::from("options:\n");
    for opt in group.options {
        option_yaml(&mut out, opt, 2);
    }
    if !group.notes.is_empty() {
        out.push_str("notes:\n");
        for note in group.notes {
            out.push_str(&format!("  - {}\n", quote(note)));
        }
    }
    out
}

/// The full text of `plugins/doc_fragments/<fragment>.py`.
pub fn render_fragment(group: &OptionGroup) -> String {
    format!(
        r#"# -*- coding: utf-8 -*-
# GENERATED from the option group's Rust spec (module_utils/src/ansible/) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Doc fragment {COLLECTION}.{name}: the options every module that extends it shares, documented once."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
{documentation}'''
"#,
        name = group.fragment,
        documentation = fold_yaml(&documentation(group)),
    )
}

/// Compare the committed fragment with the group's spec; with `FERRO_BLESS=1`, rewrite it instead.
pub fn check_fragment(group: &OptionGroup, workspace_root: &std::path::Path) -> Result<(), String> {
    let path = workspace_root.join(fragment_path(group));
    let want = render_fragment(group);
    if let Some((n, l)) = want.lines().enumerate().find(|(_, l)| l.chars().count() > 160) {
        return Err(format!(
            "{} line {} is over the 160 characters of ansible-test's pep8: {l}",
            path.display(),
            n + 1
        ));
    }
    if std::env::var("FERRO_BLESS").as_deref() == Ok("1") {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        return std::fs::write(&path, want).map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    if std::fs::read_to_string(&path).unwrap_or_default() == want {
        Ok(())
    } else {
        Err(format!(
            "{} is out of date with the option group's Rust spec: run `make stubs` and commit the result",
            path.display()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    #[test]
    fn every_doc_fragment_file_is_a_groups() {
        let want: Vec<String> = GROUPS.iter().map(|g| format!("{}.py", g.fragment)).collect();
        let dir = root().join("plugins/doc_fragments");
        let stale: Vec<String> = std::fs::read_dir(&dir)
            .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().to_string()).collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|n| n.ends_with(".py") && !want.contains(n))
            .collect();
        assert!(stale.is_empty(), "doc fragments no option group renders (remove them): {stale:?}");
    }

    #[test]
    fn a_group_is_documented_in_its_fragment_and_named_by_the_module() {
        let text = render_fragment(&CONNECTION);
        for opt in CONNECTION.options {
            assert!(text.contains(&format!("\n  {}:\n", opt.name)), "{} missing from the fragment", opt.name);
        }
        let mut spec = ModuleSpec {
            name: "m",
            short_description: "",
            description: &[],
            options: &[],
            option_groups: &[],
            mutually_exclusive: &[],
            required_together: &[],
            required_one_of: &[],
            required_if: &[],
            required_by: &[],
            check_mode: crate::ansible::spec::Support::Full,
            diff_mode: crate::ansible::spec::Support::Full,
            notes: &[],
            examples: "",
            returns: "",
        };
        assert_eq!(extends(&spec), "");
        spec.option_groups = &[&CONNECTION];
        assert_eq!(extends(&spec), "extends_documentation_fragment:\n  - ferro.proxmox.proxmox\n");
        let module = super::super::documentation(&spec);
        assert!(!module.contains("api_host"), "a group's options belong in its fragment only:\n{module}");
    }
}

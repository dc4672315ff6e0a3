//! Renders a module's `plugins/modules/<name>.py` stub from its Rust `ModuleSpec`: the docs
//! (`DOCUMENTATION`, `EXAMPLES`, `RETURN`) and the argument spec as Python data, which the action
//! plugin hands to ansible-core's own validator. The spec in Rust is the one source of truth:
//! each module has a test (`check_stub`) that fails when the committed stub drifts from it.

mod common;
pub mod fragment;
use common::{returns, seealso};

use serde_json::Value;

use crate::ansible::spec::{DefaultValue, Elem, Kind, ModuleSpec, OptionSpec, Support};

/// The path of a module's stub, relative to the workspace root.
pub fn stub_path(spec: &ModuleSpec) -> String {
    format!("plugins/modules/{}.py", spec.name)
}

/// The author line, in the form validate-modules accepts (`Name (@github-handle)`).
const AUTHOR: &str = "ferro.proxmox contributors (@ferro-proxmox)";

/// The width the stubs are folded to. ansible-test's pep8 allows 160 characters; the docs are
/// folded shorter so that they also read well in an editor.
const WIDTH: usize = 120;

/// A YAML/Python string literal (JSON's quoting is valid in both).
fn quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn kind_doc(kind: Kind) -> (&'static str, Option<&'static str>) {
    match kind {
        Kind::Str => ("str", None),
        Kind::Int => ("int", None),
        Kind::Float => ("float", None),
        Kind::Bool => ("bool", None),
        Kind::Path => ("path", None),
        Kind::Dict => ("dict", None),
        Kind::Raw => ("raw", None),
        Kind::List(Elem::Str) => ("list", Some("str")),
        Kind::List(Elem::Int) => ("list", Some("int")),
        Kind::List(Elem::Dict) => ("list", Some("dict")),
    }
}

fn default_yaml(d: DefaultValue) -> String {
    match d {
        DefaultValue::Str(s) => quote(s),
        DefaultValue::Int(i) => i.to_string(),
        DefaultValue::Float(f) => format!("{f:?}"),
        DefaultValue::Bool(b) => b.to_string(),
    }
}

fn default_python(d: DefaultValue) -> String {
    match d {
        DefaultValue::Bool(true) => "True".into(),
        DefaultValue::Bool(false) => "False".into(),
        other => default_yaml(other),
    }
}

fn list_yaml(items: &[&str]) -> String {
    format!("[{}]", items.iter().map(|s| quote(s)).collect::<Vec<_>>().join(", "))
}

/// One option's documentation at `indent` spaces, with its sub-options nested under it.
fn option_yaml(out: &mut String, opt: &OptionSpec, indent: usize) {
    let pad = " ".repeat(indent);
    out.push_str(&format!("{pad}{}:\n{pad}  description:\n", opt.name));
    for para in opt.description {
        out.push_str(&format!("{pad}    - {}\n", quote(para)));
    }
    if !opt.env.is_empty() {
        out.push_str(&format!(
            "{pad}    - {}\n",
            quote(&format!(
                "If not set, {} is used: from the task's C(environment) (play, role, block or task, the innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller. An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an empty variable): C(module_defaults), then the environment, then the default apply.",
                opt.env.iter().map(|v| format!("E({v})")).collect::<Vec<_>>().join(" or ")
            ))
        ));
    }
    let (ty, elements) = kind_doc(opt.kind);
    out.push_str(&format!("{pad}  type: {ty}\n"));
    if let Some(e) = elements {
        out.push_str(&format!("{pad}  elements: {e}\n"));
    }
    if opt.required {
        out.push_str(&format!("{pad}  required: true\n"));
    }
    if let Some(d) = opt.default {
        out.push_str(&format!("{pad}  default: {}\n", default_yaml(d)));
    }
    if !opt.choices.is_empty() {
        out.push_str(&format!("{pad}  choices: {}\n", list_yaml(opt.choices)));
    }
    if !opt.aliases.is_empty() {
        out.push_str(&format!("{pad}  aliases: {}\n", list_yaml(opt.aliases)));
    }
    if !opt.suboptions.is_empty() {
        out.push_str(&format!("{pad}  suboptions:\n"));
        for sub in opt.suboptions {
            option_yaml(out, sub, indent + 4);
        }
    }
}

/// The YAML text of a docs block with every line longer than `WIDTH` folded. Only a value YAML
/// folds back to the same text is folded: a double-quoted or plain scalar after `key: ` or `- `
/// (cut at a single space, so the fold reads back as that space), or a flow list cut after a
/// comma; continuation lines are indented past their key. Anything else is left as it is.
/// What every module's EXAMPLES open with: where the connection and the cluster's names come from,
/// so that the tasks run as printed (tests/e2e/test_examples.py runs them against pvesim).
const EXAMPLES_PREAMBLE: &str = "\
# These tasks set no connection: it comes from the play's module_defaults,
#   module_defaults:
#     group/ferro.proxmox.proxmox:
#       api_host: pve1.example.org
#       api_user: ansible@pve
#       api_token_id: automation
#       api_token_secret: \"{{ lookup('ansible.builtin.env', 'PROXMOX_TOKEN_SECRET') }}\"
#       ca_path: pve-root-ca.pem   # a copy of the cluster's /etc/pve/pve-root-ca.pem
# or from the environment ansible-playbook runs in: PROXMOX_HOST, PROXMOX_USER,
# PROXMOX_TOKEN_ID, PROXMOX_TOKEN_SECRET, PROXMOX_CA_PATH (README: The connection).
# The cluster's names are variables, set once in group_vars (the collection's
# playbooks/inventory/group_vars/all/cluster.yml): proxmox_node, proxmox_storage,
# proxmox_bridge, proxmox_template, proxmox_move_storage, proxmox_iso.

";

fn fold_yaml(text: &str) -> String {
    text.split_inclusive('\n').map(fold_yaml_line).collect()
}

fn fold_yaml_line(line: &str) -> String {
    let (body, newline) = match line.strip_suffix('\n') {
        Some(b) => (b, "\n"),
        None => (line, ""),
    };
    if body.len() <= WIDTH {
        return line.to_string();
    }
    let indent = body.len() - body.trim_start().len();
    let mut rest = &body[indent..];
    let mut column = indent;
    let dash = rest.starts_with("- ");
    if dash {
        rest = &rest[2..];
        column += 2;
    }
    let key_len = rest
        .find(": ")
        .filter(|&i| i > 0 && rest[..i].bytes().all(|b| b.is_ascii_alphanumeric() || b"_-.".contains(&b)))
        .map(|i| i + 2);
    if !dash && key_len.is_none() {
        return line.to_string();
    }
    let value_start = body.len() - rest.len() + key_len.unwrap_or(0);
    let value = &body[value_start..];
    let continuation = " ".repeat(column + 2);
    let bytes = value.as_bytes();
    // The byte offsets in `value` of the spaces a fold may replace.
    let breaks: Vec<usize> = if value.len() > 1 && value.starts_with('"') && value.ends_with('"') {
        (1..value.len() - 1).filter(|&i| bytes[i] == b' ' && bytes[i - 1] != b' ' && bytes[i + 1] != b' ').collect()
    } else if value.starts_with('[') && value.ends_with(']') && !value.contains('\'') {
        let mut in_str = false;
        let mut escaped = false;
        let mut out = Vec::new();
        for (i, b) in bytes.iter().enumerate() {
            match (in_str, *b) {
                (true, _) if escaped => escaped = false,
                (true, b'\\') => escaped = true,
                (_, b'"') => in_str = !in_str,
                (false, b' ') if i > 0 && bytes[i - 1] == b',' => out.push(i),
                _ => {}
            }
        }
        out
    } else if !value.is_empty()
        && !"'\"[]{}|>&*!%@`#?:,-".contains(value.chars().next().unwrap_or(' '))
        && !value.contains(" #")
        && !value.contains(": ")
        && !value.ends_with(':')
    {
        (1..value.len() - 1)
            .filter(|&i| {
                bytes[i] == b' '
                    && bytes[i - 1] != b' '
                    && bytes[i + 1] != b' '
                    && !b"'\"[]{}|>&*!%@`#?:,-".contains(&bytes[i + 1])
            })
            .collect()
    } else {
        return line.to_string();
    };
    let mut out = body[..value_start].to_string();
    let mut width = value_start;
    let mut from = 0;
    for (n, &b) in breaks.iter().enumerate() {
        let next = breaks.get(n + 1).copied().unwrap_or(value.len());
        // Cut here when the text up to the next possible cut would not fit.
        if width + (next - from) > WIDTH && b > from {
            out.push_str(&value[from..b]);
            out.push('\n');
            out.push_str(&continuation);
            width = continuation.len();
            from = b + 1;
        }
    }
    out.push_str(&value[from..]);
    out.push_str(newline);
    out
}

fn support(s: Support) -> (&'static str, Option<&'static str>) {
    match s {
        Support::Full => ("full", None),
        Support::Partial(why) => ("partial", Some(why)),
        Support::None => ("none", None),
        Support::NotApplicable => ("N/A", None),
    }
}

fn documentation(spec: &ModuleSpec) -> String {
    let mut out = String::new();
    out.push_str(&format!("module: {}\n", spec.name));
    out.push_str(&format!("short_description: {}\n", quote(spec.short_description)));
    out.push_str("version_added: \"0.1.0\"\n");
    out.push_str(&format!("author: {}\ndescription:\n", quote(AUTHOR)));
    for para in spec.description {
        out.push_str(&format!("  - {}\n", quote(para)));
    }
    // The module's own options; those of its option groups are in the groups' doc fragments.
    out.push_str("options:\n");
    for opt in spec.options {
        option_yaml(&mut out, opt, 2);
    }
    out.push_str("attributes:\n");
    for (name, what, s) in [
        (
            "check_mode",
            "Can run in check mode and return changed status prediction without modifying target.",
            spec.check_mode,
        ),
        (
            "diff_mode",
            "Will return details on what has changed (or possibly needs changing in check mode), when in diff mode.",
            spec.diff_mode,
        ),
    ] {
        let (level, details) = support(s);
        out.push_str(&format!("  {name}:\n    description: {}\n    support: {level}\n", quote(what)));
        if let Some(d) = details {
            out.push_str(&format!("    details: {}\n", quote(d)));
        }
    }
    out.push_str("  async:\n    description: \"Supports being used with the C(async) action keyword.\"\n    support: none\n    details: \"The action plugin refuses C(async): a module that waits for every Proxmox VE task it starts has nothing to poll; give the task a longer timeout instead.\"\n");
    out.push_str("  action_group:\n    description: \"Use C(group/ferro.proxmox.proxmox) in C(module_defaults) to set defaults for this module.\"\n    support: full\n    membership: [\"ferro.proxmox.proxmox\"]\n");
    out.push_str("  platform:\n    description: \"Target OS/families that can be operated against.\"\n    support: full\n    platforms: \"posix\"\n");
    out.push_str(&seealso(spec.name));
    out.push_str("notes:\n");
    out.push_str("  - \"Runs as a native binary on the Ansible controller; use it with C(delegate_to: localhost). The target VM needs no Python, SSH or network.\"\n");
    out.push_str(&format!("  - {}\n", quote(CHECKED_VALUES_NOTE)));
    for note in spec.notes {
        out.push_str(&format!("  - {}\n", quote(note)));
    }
    out.push_str(&fragment::extends(spec));
    out
}

/// A difference from community.proxmox that every module has (SECURITY.md, "What a task's values
/// can reach").
const CHECKED_VALUES_NOTE: &str = "Values that name an object or go into a device's property string (node, storage, bridge, volume, serial, ...) are checked against Proxmox VE's format for that option before any call and refused naming the option; community.proxmox sends them as they are, where a separator can reach another API path or add a key to a device.";

/// One option's entry of `ARGUMENT_SPEC` (`"name": {...}`) at `indent` spaces, on one line when it
/// fits, else one field per line.
fn option_python(opt: &OptionSpec, indent: usize) -> String {
    let (ty, elements) = kind_doc(opt.kind);
    let mut fields = vec![format!("'type': '{ty}'")];
    if let Some(e) = elements {
        fields.push(format!("'elements': '{e}'"));
    }
    if opt.required {
        fields.push("'required': True".into());
    }
    if let Some(d) = opt.default {
        fields.push(format!("'default': {}", default_python(d)));
    }
    if !opt.choices.is_empty() {
        fields.push(format!("'choices': {}", list_yaml(opt.choices)));
    }
    if !opt.aliases.is_empty() {
        fields.push(format!("'aliases': {}", list_yaml(opt.aliases)));
    }
    if opt.no_log {
        fields.push("'no_log': True".into());
    } else if opt.not_secret {
        // Tells ansible-core's and validate-modules' name heuristics that this is no secret.
        fields.push("'no_log': False".into());
    }
    if !opt.env.is_empty() {
        fields.push(format!("'fallback': (env_fallback, {})", list_yaml(opt.env)));
    }
    let pad = " ".repeat(indent);
    if !opt.suboptions.is_empty() {
        let subs: Vec<String> = opt.suboptions.iter().map(|sub| option_python(sub, indent + 8)).collect();
        fields.push(format!("'options': {{\n{}\n{pad}    }}", subs.join("\n")));
    }
    let one_line = format!("{pad}{}: {{{}}},", quote(opt.name), fields.join(", "));
    if one_line.len() <= WIDTH && !one_line.contains('\n') {
        return one_line;
    }
    let inner = " ".repeat(indent + 4);
    let fields: Vec<String> = fields
        .iter()
        .map(|f| match f.split_once(": ") {
            Some(("'choices'", _)) => {
                python_seq(&format!("{inner}'choices': "), "[", &quoted(opt.choices), "]", ",", indent + 4)
            }
            Some(("'aliases'", _)) => {
                python_seq(&format!("{inner}'aliases': "), "[", &quoted(opt.aliases), "]", ",", indent + 4)
            }
            _ => format!("{inner}{f},"),
        })
        .collect();
    format!("{pad}{}: {{\n{}\n{pad}}},", quote(opt.name), fields.join("\n"))
}

/// Python data `{head}{open}items{close}{suffix}` on one line when it fits in `WIDTH`, else with
/// a hanging indent (pep8's E128 rejects a visual one): the items fill lines at `indent + 4`,
/// and the closing bracket goes on a line of its own at `indent`.
fn python_seq(head: &str, open: &str, items: &[String], close: &str, suffix: &str, indent: usize) -> String {
    let one_line = format!("{head}{open}{}{close}{suffix}", items.join(", "));
    if one_line.len() <= WIDTH {
        return one_line;
    }
    let inner = " ".repeat(indent + 4);
    let mut out = format!("{head}{open}\n");
    let mut line = inner.clone();
    for item in items {
        if line.len() > inner.len() && line.len() + item.len() + 1 > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = inner.clone();
        }
        line.push_str(item);
        line.push_str(", ");
    }
    out.push_str(line.trim_end());
    out.push('\n');
    out.push_str(&format!("{}{close}{suffix}", " ".repeat(indent)));
    out
}

fn quoted(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| quote(s)).collect()
}

fn argument_spec_python(spec: &ModuleSpec) -> String {
    let mut out = String::from("ARGUMENT_SPEC = {\n");
    for opt in spec.all_options() {
        out.push_str(&option_python(opt, 4));
        out.push('\n');
    }
    out.push_str("}\n");
    let groups = |name: &str, gs: Vec<&[&str]>| {
        let items: Vec<String> = gs.iter().map(|g| list_yaml(g)).collect();
        python_seq(&format!("{name} = "), "[", &items, "]", "\n", 0)
    };
    out.push_str(&groups("MUTUALLY_EXCLUSIVE", spec.all_mutually_exclusive()));
    out.push_str(&groups("REQUIRED_TOGETHER", spec.all_required_together()));
    out.push_str(&groups("REQUIRED_ONE_OF", spec.all_required_one_of()));
    let required_if: Vec<String> = spec
        .required_if
        .iter()
        .map(|r| {
            format!(
                "({}, {}, {}{})",
                quote(r.key),
                quote(r.value),
                list_yaml(r.requirements),
                if r.any { ", True" } else { "" }
            )
        })
        .collect();
    out.push_str(&python_seq("REQUIRED_IF = ", "[", &required_if, "]", "\n", 0));
    let required_by: Vec<String> =
        spec.required_by.iter().map(|(k, v)| format!("{}: {}", quote(k), list_yaml(v))).collect();
    out.push_str(&python_seq("REQUIRED_BY = ", "{", &required_by, "}", "\n", 0));
    out
}

/// The full text of `plugins/modules/<name>.py`.
pub fn render_stub(spec: &ModuleSpec) -> String {
    format!(
        r#"# -*- coding: utf-8 -*-
# GENERATED from the module's Rust spec (modules/{name}/src/spec.rs) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation and argument spec of ferro.proxmox.{name}.

The module itself is a native binary (native/<target-triple>/{name}) that the collection's
action plugin runs; this file exists for ansible-doc, ansible-test and the action plugin's
argument validation.
"""

from __future__ import annotations

DOCUMENTATION = r'''
{documentation}'''

EXAMPLES = r'''
{examples}'''

RETURN = r'''
{returns}'''

from ansible.module_utils.basic import AnsibleModule, env_fallback

{spec}

def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
        required_together=REQUIRED_TOGETHER,
        required_one_of=REQUIRED_ONE_OF,
        required_if=REQUIRED_IF,
        required_by=REQUIRED_BY,
        supports_check_mode=True,
    )
    module.fail_json(msg="ferro.proxmox.{name} is a native module run by its action plugin; this Python file only documents it")


if __name__ == '__main__':
    main()
"#,
        name = spec.name,
        documentation = fold_yaml(&documentation(spec)),
        examples = fold_yaml(&format!("{EXAMPLES_PREAMBLE}{}", spec.examples.trim_start_matches('\n'))),
        returns = fold_yaml(&returns(spec)),
        spec = argument_spec_python(spec),
    )
}

/// Compare the committed stub, and the doc fragments of its option groups, with the spec; with
/// `FERRO_BLESS=1`, rewrite them instead. `workspace_root` is the repository root.
pub fn check_stub(spec: &ModuleSpec, workspace_root: &std::path::Path) -> Result<(), String> {
    for group in spec.option_groups {
        fragment::check_fragment(group, workspace_root)?;
    }
    let path = workspace_root.join(stub_path(spec));
    let want = render_stub(spec);
    // ansible-test sanity's pep8 test fails a line longer than 160 characters (E501).
    if let Some((n, l)) = want.lines().enumerate().find(|(_, l)| l.chars().count() > 160) {
        return Err(format!(
            "{} line {} would be {} characters, over the 160 of ansible-test's pep8: shorten or split the text in the spec: {l}",
            path.display(),
            n + 1,
            l.chars().count()
        ));
    }
    if std::env::var("FERRO_BLESS").as_deref() == Ok("1") {
        return std::fs::write(&path, want).map_err(|e| format!("cannot write {}: {e}", path.display()));
    }
    let have = std::fs::read_to_string(&path).unwrap_or_default();
    if have == want {
        Ok(())
    } else {
        Err(format!(
            "{} is out of date with the module's Rust spec: run `make stubs` and commit the result",
            path.display()
        ))
    }
}

/// The drift test every module crate has: `module_utils::stub_test!(SPEC);` in its tests.
/// Fails when `plugins/modules/<name>.py` differs from what the spec renders (run `make stubs`).
#[macro_export]
macro_rules! stub_test {
    ($spec:expr) => {
        #[test]
        fn stub_matches_spec() {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
            if let Err(e) = $crate::ansible::docs::check_stub(&$spec, &root) {
                panic!("{e}");
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What YAML reads back from a folded scalar: each line break and the next line's
    /// indentation become one space.
    fn unfold(text: &str) -> String {
        let mut out = String::new();
        for (i, line) in text.lines().enumerate() {
            if i > 0 {
                out.push(' ');
            }
            out.push_str(if i > 0 { line.trim_start() } else { line });
        }
        out
    }

    #[test]
    fn long_scalars_fold_to_the_same_text_within_the_width() {
        let words =
            "Proxmox VE applies C(cache), C(aio) and C(discard) at the next start, so the module returns pending.";
        let long = format!("{words} {words} {words}");
        for line in [
            format!("      - {}", quote(&long)),
            format!("    description: {long}"),
            format!("  - name: {long}"),
            format!(
                "    choices: {}",
                list_yaml(&["e1000", "e1000-82540em", "rtl8139", "virtio", "vmxnet3"].repeat(8))
            ),
        ] {
            let folded = fold_yaml(&format!("{line}\n"));
            assert!(folded.lines().count() > 1, "not folded: {line}");
            assert!(folded.lines().all(|l| l.len() <= WIDTH), "{folded}");
            assert_eq!(unfold(&folded), line);
        }
    }

    #[test]
    fn what_cannot_fold_safely_is_left_as_it_is() {
        let long_word = "x".repeat(WIDTH + 10);
        for line in [
            format!("    sample: {{\"key\": \"{}\"}}", "v ".repeat(80)),
            format!("    description: {long_word}"),
            format!("    description: a value with # a comment marker {}", "word ".repeat(30)),
            "word ".repeat(40),
        ] {
            assert_eq!(fold_yaml(&format!("{line}\n")), format!("{line}\n"));
        }
    }

    #[test]
    fn python_data_gets_a_hanging_indent_when_too_long() {
        let items: Vec<String> = (0..40).map(|i| format!("\"option_{i}\"")).collect();
        let text = python_seq("    'choices': ", "[", &items, "]", ",", 4);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "    'choices': [");
        assert_eq!(*lines.last().unwrap(), "    ],");
        assert!(lines[1..lines.len() - 1].iter().all(|l| l.starts_with("        \"") && l.len() <= WIDTH));
        assert_eq!(python_seq("X = ", "[", &items[..2], "]", "", 0), "X = [\"option_0\", \"option_1\"]");
    }
}

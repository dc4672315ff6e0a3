//! Renders a module's `plugins/modules/<name>.py` stub from its Rust `ModuleSpec`: the docs
//! (`DOCUMENTATION`, `EXAMPLES`, `RETURN`) and the argument spec as Python data, which the action
//! plugin hands to ansible-core's own validator. The spec in Rust is the one source of truth:
//! each module has a test (`check_stub`) that fails when the committed stub drifts from it.

use serde_json::Value;

use crate::spec::{DefaultValue, Elem, Kind, ModuleSpec, OptionSpec, Support};

/// The path of a module's stub, relative to the workspace root.
pub fn stub_path(spec: &ModuleSpec) -> String {
    format!("plugins/modules/{}.py", spec.name)
}

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

fn option_yaml(out: &mut String, opt: &OptionSpec) {
    out.push_str(&format!("  {}:\n    description:\n", opt.name));
    for para in opt.description {
        out.push_str(&format!("      - {}\n", quote(para)));
    }
    if !opt.env.is_empty() {
        out.push_str(&format!(
            "      - {}\n",
            quote(&format!(
                "If not set, {} is used: from the task's C(environment) (play, role, block or task, the innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.",
                opt.env.iter().map(|v| format!("E({v})")).collect::<Vec<_>>().join(" or ")
            ))
        ));
    }
    let (ty, elements) = kind_doc(opt.kind);
    out.push_str(&format!("    type: {ty}\n"));
    if let Some(e) = elements {
        out.push_str(&format!("    elements: {e}\n"));
    }
    if opt.required {
        out.push_str("    required: true\n");
    }
    if let Some(d) = opt.default {
        out.push_str(&format!("    default: {}\n", default_yaml(d)));
    }
    if !opt.choices.is_empty() {
        out.push_str(&format!("    choices: {}\n", list_yaml(opt.choices)));
    }
    if !opt.aliases.is_empty() {
        out.push_str(&format!("    aliases: {}\n", list_yaml(opt.aliases)));
    }
}

fn support(s: Support) -> (&'static str, Option<&'static str>) {
    match s {
        Support::Full => ("full", None),
        Support::Partial(why) => ("partial", Some(why)),
        Support::None => ("none", None),
    }
}

fn documentation(spec: &ModuleSpec) -> String {
    let mut out = String::new();
    out.push_str(&format!("module: {}\n", spec.name));
    out.push_str(&format!("short_description: {}\n", quote(spec.short_description)));
    out.push_str("version_added: \"0.1.0\"\n");
    out.push_str("author: \"ferro.proxmox contributors\"\ndescription:\n");
    for para in spec.description {
        out.push_str(&format!("  - {}\n", quote(para)));
    }
    out.push_str("options:\n");
    for opt in spec.all_options() {
        option_yaml(&mut out, opt);
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
    out.push_str("  action_group:\n    description: \"Use C(group/ferro.proxmox.proxmox) in C(module_defaults) to set defaults for this module.\"\n    support: full\n    membership: [\"ferro.proxmox.proxmox\"]\n");
    out.push_str("  platform:\n    description: \"Target OS/families that can be operated against.\"\n    support: full\n    platforms: \"posix\"\n");
    out.push_str("notes:\n");
    out.push_str("  - \"Runs as a native binary on the Ansible controller; use it with C(delegate_to: localhost). The target VM needs no Python, SSH or network.\"\n");
    for note in spec.notes {
        out.push_str(&format!("  - {}\n", quote(note)));
    }
    out
}

fn argument_spec_python(spec: &ModuleSpec) -> String {
    let mut out = String::from("ARGUMENT_SPEC = {\n");
    for opt in spec.all_options() {
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
        } else if opt.name.contains("token") || opt.name.contains("pass") {
            // Tell ansible-core's heuristics that this one is not a secret.
            fields.push("'no_log': False".into());
        }
        if !opt.env.is_empty() {
            fields.push(format!("'fallback': (env_fallback, {})", list_yaml(opt.env)));
        }
        out.push_str(&format!("    {}: {{{}}},\n", quote(opt.name), fields.join(", ")));
    }
    out.push_str("}\n");
    let groups = |name: &str, gs: Vec<&[&str]>| {
        let items: Vec<String> = gs.iter().map(|g| list_yaml(g)).collect();
        format!("{name} = [{}]\n", items.join(", "))
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
    out.push_str(&format!("REQUIRED_IF = [{}]\n", required_if.join(", ")));
    let required_by: Vec<String> =
        spec.required_by.iter().map(|(k, v)| format!("{}: {}", quote(k), list_yaml(v))).collect();
    out.push_str(&format!("REQUIRED_BY = {{{}}}\n", required_by.join(", ")));
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
        documentation = documentation(spec),
        examples = spec.examples.trim_start_matches('\n'),
        returns = spec.returns.trim_start_matches('\n'),
        spec = argument_spec_python(spec),
    )
}

/// Compare the committed stub with the spec; with `FERRO_BLESS=1`, rewrite it instead.
/// `workspace_root` is the repository root.
pub fn check_stub(spec: &ModuleSpec, workspace_root: &std::path::Path) -> Result<(), String> {
    let path = workspace_root.join(stub_path(spec));
    let want = render_stub(spec);
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
            if let Err(e) = $crate::docs::check_stub(&$spec, &root) {
                panic!("{e}");
            }
        }
    };
}

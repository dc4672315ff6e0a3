//! Argument specs declared in Rust (`ModuleSpec`, `OptionSpec`) and the typed `Args` they validate
//! into; the validation itself is in `validate.rs`.
//!
//! A module declares its options once, as a `ModuleSpec` of `const` data. The same value drives
//! three things: validation here (so a binary called directly is as strict as one called through
//! the action plugin), the generated `plugins/modules/<name>.py` stub (docs and the spec that the
//! action plugin hands to ansible-core's own validator, see `docs.rs`), and the typed `Args` of
//! each module. The order of checks and every message follow ansible-core's
//! `ArgumentSpecValidator.validate` (module_utils/common/arg_spec.py, 2.19), so a user sees the
//! same error whichever validator caught it first.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// Documentation text of a spec (an option's or a module's description, notes, examples, return
/// values): kept only in builds with the `docs` feature, which the module crates' tests enable to
/// render and check `plugins/modules/<name>.py` (`docs.rs`). The modules never read it when they
/// run, so the release binary leaves it out (about 60 KB; bench/README.md, "Release size").
pub const fn doc<T: ?Sized>(text: &'static T, without: &'static T) -> &'static T {
    if cfg!(feature = "docs") {
        text
    } else {
        without
    }
}

/// The type of an option, as Ansible names it in `type:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Str,
    Int,
    Float,
    Bool,
    Path,
    /// `type: list` with `elements:` of the given kind.
    List(Elem),
    Dict,
    Raw,
}

/// The `elements:` of a list option.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Str,
    Int,
    Dict,
}

/// A default value, as it appears in the docs and the spec.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DefaultValue {
    Str(&'static str),
    Int(i64),
    Float(f64),
    Bool(bool),
}

impl DefaultValue {
    pub fn to_json(self) -> Value {
        match self {
            DefaultValue::Str(s) => Value::from(s),
            DefaultValue::Int(i) => Value::from(i),
            DefaultValue::Float(f) => Value::from(f),
            DefaultValue::Bool(b) => Value::from(b),
        }
    }
}

/// One option of a module. Built with the `const fn` helpers so specs are plain `const` data.
#[derive(Clone, Copy, Debug)]
pub struct OptionSpec {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    pub default: Option<DefaultValue>,
    pub choices: &'static [&'static str],
    pub aliases: &'static [&'static str],
    pub no_log: bool,
    /// An explicit `no_log: False`: the name looks like a secret to ansible-core's and
    /// validate-modules' heuristics (`token`, `pass`, `key`, ...), but the value is not one.
    pub not_secret: bool,
    /// Environment variables tried, in order, when the option is not given (`env_fallback`).
    pub env: &'static [&'static str],
    /// Paragraphs of the option's documentation.
    pub description: &'static [&'static str],
    /// The options of a `dict` (or list of dicts) option, validated like the module's own
    /// (ansible-core's `_validate_sub_spec`); empty: a free-form dict.
    pub suboptions: &'static [OptionSpec],
}

impl OptionSpec {
    pub const fn new(name: &'static str, kind: Kind, description: &'static [&'static str]) -> Self {
        OptionSpec {
            name,
            kind,
            required: false,
            default: None,
            choices: &[],
            aliases: &[],
            no_log: false,
            not_secret: false,
            env: &[],
            description: doc(description, &[]),
            suboptions: &[],
        }
    }
    pub const fn required(mut self) -> Self {
        self.required = true;
        self
    }
    pub const fn default(mut self, value: DefaultValue) -> Self {
        self.default = Some(value);
        self
    }
    pub const fn choices(mut self, choices: &'static [&'static str]) -> Self {
        self.choices = choices;
        self
    }
    pub const fn aliases(mut self, aliases: &'static [&'static str]) -> Self {
        self.aliases = aliases;
        self
    }
    pub const fn no_log(mut self) -> Self {
        self.no_log = true;
        self
    }
    pub const fn not_secret(mut self) -> Self {
        self.not_secret = true;
        self
    }
    pub const fn env(mut self, env: &'static [&'static str]) -> Self {
        self.env = env;
        self
    }
    pub const fn suboptions(mut self, suboptions: &'static [OptionSpec]) -> Self {
        self.suboptions = suboptions;
        self
    }
}

/// `required_if`: when `key` equals `value`, the `requirements` must be set (all, or `any` one).
#[derive(Clone, Copy, Debug)]
pub struct RequiredIf {
    pub key: &'static str,
    pub value: &'static str,
    pub requirements: &'static [&'static str],
    pub any: bool,
}

/// How far a module supports check or diff mode, for the docs' `attributes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Full,
    Partial(&'static str),
    None,
    /// The mode does not apply (ansible-core's `N/A`: diff mode of a module that changes nothing).
    NotApplicable,
}

/// Options several modules share, with their constraints (the connection options).
#[derive(Clone, Copy, Debug)]
pub struct OptionGroup {
    /// The doc fragment that documents the group once for every module that has it:
    /// `plugins/doc_fragments/<fragment>.py`, which a module's docs extend as `ferro.proxmox.<fragment>`.
    pub fragment: &'static str,
    pub options: &'static [OptionSpec],
    pub required_together: &'static [&'static [&'static str]],
    pub required_one_of: &'static [&'static [&'static str]],
    /// The group's notes, in its doc fragment (so in every module that has the group).
    pub notes: &'static [&'static str],
}

/// Everything declared about one module: options, constraints and documentation.
#[derive(Clone, Copy, Debug)]
pub struct ModuleSpec {
    pub name: &'static str,
    pub short_description: &'static str,
    pub description: &'static [&'static str],
    pub options: &'static [OptionSpec],
    /// Option groups several modules share (`connection::CONNECTION`), after the module's own options.
    pub option_groups: &'static [&'static OptionGroup],
    pub mutually_exclusive: &'static [&'static [&'static str]],
    pub required_together: &'static [&'static [&'static str]],
    pub required_one_of: &'static [&'static [&'static str]],
    pub required_if: &'static [RequiredIf],
    pub required_by: &'static [(&'static str, &'static [&'static str])],
    pub check_mode: Support,
    pub diff_mode: Support,
    pub notes: &'static [&'static str],
    /// YAML text of the EXAMPLES block.
    pub examples: &'static str,
    /// YAML text of the RETURN block.
    pub returns: &'static str,
}

impl ModuleSpec {
    /// The module's own options followed by the shared connection options.
    pub fn all_options(&self) -> Vec<&'static OptionSpec> {
        let mut all: Vec<&'static OptionSpec> = self.options.iter().collect();
        for group in self.option_groups {
            all.extend(group.options.iter());
        }
        all
    }

    fn groups(
        &self,
        own: &'static [&'static [&'static str]],
        shared: fn(&OptionGroup) -> &'static [&'static [&'static str]],
    ) -> Vec<&'static [&'static str]> {
        let mut v: Vec<&'static [&'static str]> = own.to_vec();
        for group in self.option_groups {
            v.extend_from_slice(shared(group));
        }
        v
    }

    pub fn all_required_together(&self) -> Vec<&'static [&'static str]> {
        self.groups(self.required_together, |g| g.required_together)
    }

    pub fn all_required_one_of(&self) -> Vec<&'static [&'static str]> {
        self.groups(self.required_one_of, |g| g.required_one_of)
    }

    pub fn all_mutually_exclusive(&self) -> Vec<&'static [&'static str]> {
        self.groups(self.mutually_exclusive, |_| &[])
    }
}

/// Validated, coerced and defaulted options. Unset options without a default are absent.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Args {
    pub(crate) values: BTreeMap<String, Value>,
    pub(crate) no_log_values: Vec<String>,
    pub(crate) warnings: Vec<String>,
}

impl Args {
    /// Args with these values, as validation would leave them (for unit tests of their users).
    #[cfg(test)]
    pub(crate) fn from_values(values: BTreeMap<String, Value>) -> Args {
        Args { values, no_log_values: Vec::new(), warnings: Vec::new() }
    }
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.values.get(name).filter(|v| !v.is_null())
    }
    pub fn is_set(&self, name: &str) -> bool {
        self.get(name).is_some()
    }
    pub fn str(&self, name: &str) -> Option<&str> {
        self.get(name).and_then(Value::as_str)
    }
    pub fn int(&self, name: &str) -> Option<i64> {
        self.get(name).and_then(Value::as_i64)
    }
    pub fn float(&self, name: &str) -> Option<f64> {
        self.get(name).and_then(Value::as_f64)
    }
    pub fn bool(&self, name: &str) -> Option<bool> {
        self.get(name).and_then(Value::as_bool)
    }
    pub fn list(&self, name: &str) -> Option<&Vec<Value>> {
        self.get(name).and_then(Value::as_array)
    }
    pub fn dict(&self, name: &str) -> Option<&Map<String, Value>> {
        self.get(name).and_then(Value::as_object)
    }
    /// The values of `no_log` options, to be masked in everything the module returns.
    pub fn no_log_values(&self) -> &[String] {
        &self.no_log_values
    }
    /// Warnings raised during validation (an option given together with its alias).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }
    /// All values, for `invocation.module_args` (mask before printing).
    pub fn as_json(&self) -> Value {
        Value::Object(self.values.iter().map(|(k, v)| (k.clone(), v.clone())).collect())
    }
}

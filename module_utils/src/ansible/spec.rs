//! Argument specs declared in Rust, and their validation with AnsibleModule's semantics and wording.
//!
//! A module declares its options once, as a `ModuleSpec` of `const` data. The same value drives
//! three things: validation here (so a binary called directly is as strict as one called through
//! the action plugin), the generated `plugins/modules/<name>.py` stub (docs and the spec that the
//! action plugin hands to ansible-core's own validator, see `docs.rs`), and the typed `Params` of
//! each module. The order of checks and every message follow ansible-core's
//! `ArgumentSpecValidator.validate` (module_utils/common/arg_spec.py, 2.19), so a user sees the
//! same error whichever validator caught it first.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::error::{Error, Result};

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
            description,
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
}

/// Options several modules share, with their constraints (the connection options).
#[derive(Clone, Copy, Debug)]
pub struct OptionGroup {
    pub options: &'static [OptionSpec],
    pub required_together: &'static [&'static [&'static str]],
    pub required_one_of: &'static [&'static [&'static str]],
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
pub struct Params {
    values: BTreeMap<String, Value>,
    no_log_values: Vec<String>,
    warnings: Vec<String>,
}

impl Params {
    /// Params with these values, as validation would leave them (for unit tests of their users).
    #[cfg(test)]
    pub(crate) fn from_values(values: BTreeMap<String, Value>) -> Params {
        Params { values, no_log_values: Vec::new(), warnings: Vec::new() }
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

/// Validate raw task arguments (the user's options, no `_ansible_*` keys) against `spec`.
///
/// `env` looks up environment variables; it is a parameter so tests need not touch the process
/// environment. Returns the first error, as AnsibleModule's `fail_json` does.
pub fn validate(spec: &ModuleSpec, raw: &Map<String, Value>, env: &dyn Fn(&str) -> Option<String>) -> Result<Params> {
    let options = spec.all_options();
    let mut values: BTreeMap<String, Value> =
        raw.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
    let mut warnings = Vec::new();
    let mut no_log_values = Vec::new();

    // Environment fallbacks come first (set_fallbacks); their no_log values are masked too.
    set_fallbacks(&options, &mut values, env);
    // Aliases are folded into their option (_handle_aliases).
    fold_aliases(&options, &mut values, "", &mut warnings);
    collect_no_log_values(&options, &values, &mut no_log_values);

    // Unsupported parameters (_get_unsupported_parameters), with the supported list.
    let mut unsupported: Vec<&str> =
        values.keys().filter(|k| !options.iter().any(|o| o.name == k.as_str())).map(String::as_str).collect();
    if !unsupported.is_empty() {
        unsupported.sort_unstable();
        return Err(Error::args(format!(
            "Unsupported parameters for ({}) module: {}. Supported parameters include: {}.",
            spec.name,
            unsupported.join(", "),
            supported_list(&options)
        )));
    }

    for group in spec.all_mutually_exclusive() {
        let set: Vec<&str> = group.iter().copied().filter(|k| values.contains_key(*k)).collect();
        if set.len() > 1 {
            return Err(Error::args(format!("parameters are mutually exclusive: {}", group.join("|"))));
        }
    }

    // Options with a real default count as set for the checks below (_set_defaults(..., False)).
    set_defaults(&options, &mut values);
    check_required(&options, &values, &[])?;
    coerce_all(&options, &mut values, &[])?;
    check_choices(&options, &values, &[])?;

    let is_set = |k: &str| values.contains_key(k);
    for group in spec.all_required_together() {
        let n = group.iter().filter(|k| is_set(k)).count();
        if n > 0 && n < group.len() {
            return Err(Error::args(format!("parameters are required together: {}", group.join(", "))));
        }
    }
    for group in spec.all_required_one_of() {
        if !group.iter().any(|k| is_set(k)) {
            return Err(Error::args(format!("one of the following is required: {}", group.join(", "))));
        }
    }
    for rule in spec.required_if {
        let matches = values.get(rule.key).map(scalar_text).as_deref() == Some(rule.value);
        if !matches {
            continue;
        }
        let missing: Vec<&str> = rule.requirements.iter().copied().filter(|k| !is_set(k)).collect();
        let failed = if rule.any { missing.len() == rule.requirements.len() } else { !missing.is_empty() };
        if failed {
            return Err(Error::args(format!(
                "{} is {} but {} of the following are missing: {}",
                rule.key,
                rule.value,
                if rule.any { "any" } else { "all" },
                missing.join(", ")
            )));
        }
    }
    for (key, needs) in spec.required_by {
        if !is_set(key) {
            continue;
        }
        let missing: Vec<&str> = needs.iter().copied().filter(|k| !is_set(k)).collect();
        if !missing.is_empty() {
            return Err(Error::args(format!("missing parameter(s) required by '{}': {}", key, missing.join(", "))));
        }
    }

    // Sub-options last, as ansible-core's _validate_sub_spec; their unknown keys are reported
    // after every other error, as ArgumentSpecValidator appends them last.
    let mut sub_unsupported = Vec::new();
    let mut sub = SubContext {
        env,
        context: Vec::new(),
        warnings: &mut warnings,
        no_log_values: &mut no_log_values,
        unsupported: &mut sub_unsupported,
    };
    for opt in options.iter().filter(|o| !o.suboptions.is_empty()) {
        if let Some(v) = values.get_mut(opt.name) {
            validate_suboptions(opt, v, "", &mut sub)?;
        }
    }
    if let Some((_, supported)) = sub_unsupported.last() {
        let mut names: Vec<&str> = sub_unsupported.iter().map(|(n, _)| n.as_str()).collect();
        names.sort_unstable();
        return Err(Error::args(format!(
            "Unsupported parameters for ({}) module: {}. Supported parameters include: {}.",
            spec.name,
            names.join(", "),
            supported
        )));
    }

    Ok(Params { values, no_log_values, warnings })
}

/// `names (aliases)`, sorted, as ansible-core lists the supported parameters.
fn supported_list(options: &[&OptionSpec]) -> String {
    let mut names: Vec<&str> = options.iter().map(|o| o.name).collect();
    names.sort_unstable();
    let mut aliases: Vec<&str> = options.iter().flat_map(|o| o.aliases.iter().copied()).collect();
    aliases.sort_unstable();
    let mut supported = names.join(", ");
    if !aliases.is_empty() {
        supported.push_str(&format!(" ({})", aliases.join(", ")));
    }
    supported
}

/// ansible-core's suffix for an error inside sub-options: ` found in efidisk0` (nested: `a -> b`).
fn found_in(msg: String, context: &[&str]) -> String {
    if context.is_empty() {
        msg
    } else {
        format!("{msg} found in {}", context.join(" -> "))
    }
}

fn set_fallbacks(options: &[&OptionSpec], values: &mut BTreeMap<String, Value>, env: &dyn Fn(&str) -> Option<String>) {
    for opt in options {
        if values.contains_key(opt.name) || opt.aliases.iter().any(|a| values.contains_key(*a)) {
            continue;
        }
        if let Some(v) = opt.env.iter().find_map(|var| env(var)) {
            values.insert(opt.name.to_string(), Value::String(v));
        }
    }
}

/// `prefix` names the parent of sub-options in the warning (`efidisk0.`), empty at the top.
fn fold_aliases(
    options: &[&OptionSpec],
    values: &mut BTreeMap<String, Value>,
    prefix: &str,
    warnings: &mut Vec<String>,
) {
    for opt in options {
        for alias in opt.aliases {
            if let Some(v) = values.remove(*alias) {
                if values.contains_key(opt.name) {
                    warnings.push(format!("Both option {prefix}{} and its alias {prefix}{alias} are set.", opt.name));
                } else {
                    values.insert(opt.name.to_string(), v);
                }
            }
        }
    }
}

fn collect_no_log_values(options: &[&OptionSpec], values: &BTreeMap<String, Value>, out: &mut Vec<String>) {
    for opt in options.iter().filter(|o| o.no_log) {
        if let Some(v) = values.get(opt.name) {
            let text = scalar_text(v);
            if !text.is_empty() {
                out.push(text);
            }
        }
    }
}

fn set_defaults(options: &[&OptionSpec], values: &mut BTreeMap<String, Value>) {
    for opt in options {
        if let (false, Some(d)) = (values.contains_key(opt.name), opt.default) {
            values.insert(opt.name.to_string(), d.to_json());
        }
    }
}

fn check_required(options: &[&OptionSpec], values: &BTreeMap<String, Value>, context: &[&str]) -> Result<()> {
    let mut missing: Vec<&str> =
        options.iter().filter(|o| o.required && !values.contains_key(o.name)).map(|o| o.name).collect();
    if missing.is_empty() {
        return Ok(());
    }
    missing.sort_unstable();
    Err(Error::args(found_in(format!("missing required arguments: {}", missing.join(", ")), context)))
}

fn coerce_all(options: &[&OptionSpec], values: &mut BTreeMap<String, Value>, context: &[&str]) -> Result<()> {
    for opt in options {
        if let Some(v) = values.get(opt.name) {
            let coerced = coerce(opt, v, context)?;
            values.insert(opt.name.to_string(), coerced);
        }
    }
    Ok(())
}

fn check_choices(options: &[&OptionSpec], values: &BTreeMap<String, Value>, context: &[&str]) -> Result<()> {
    for opt in options.iter().filter(|o| !o.choices.is_empty()) {
        if let Some(v) = values.get(opt.name) {
            let items: Vec<&Value> = match v {
                Value::Array(items) => items.iter().collect(),
                other => vec![other],
            };
            let bad: Vec<String> =
                items.iter().map(|i| scalar_text(i)).filter(|t| !opt.choices.contains(&t.as_str())).collect();
            if !bad.is_empty() {
                let msg = if v.is_array() {
                    format!(
                        "value of {} must be one or more of: {}. Got no match for: {}",
                        opt.name,
                        opt.choices.join(", "),
                        bad.join(", ")
                    )
                } else {
                    format!("value of {} must be one of: {}, got: {}", opt.name, opt.choices.join(", "), bad[0])
                };
                return Err(Error::args(found_in(msg, context)));
            }
        }
    }
    Ok(())
}

/// What the sub-option checks share across options and nesting levels.
struct SubContext<'a> {
    env: &'a dyn Fn(&str) -> Option<String>,
    /// The names of the enclosing options, outermost first (ansible-core's `options_context`).
    context: Vec<&'static str>,
    warnings: &'a mut Vec<String>,
    no_log_values: &'a mut Vec<String>,
    /// Unknown sub-option keys (`efidisk0.size`) with the supported list of their level.
    unsupported: &'a mut Vec<(String, String)>,
}

/// Validate the sub-options of `opt` in its (already coerced) value, in place: each dict gets its
/// fallbacks, aliases, required, types, choices and defaults checked and filled in ansible-core's
/// order, and every sub-option it does not set becomes `null`, as `_set_defaults` leaves it.
fn validate_suboptions(opt: &OptionSpec, value: &mut Value, prefix: &str, sub: &mut SubContext) -> Result<()> {
    let options: Vec<&OptionSpec> = opt.suboptions.iter().collect();
    let is_list = matches!(opt.kind, Kind::List(_));
    sub.context.push(opt.name);
    let elements: Vec<&mut Value> = match value {
        Value::Array(items) => items.iter_mut().collect(),
        other => vec![other],
    };
    for (idx, element) in elements.into_iter().enumerate() {
        let Value::Object(map) = element else {
            return Err(Error::args(format!("value of '{}' must be of type dict or list of dicts", opt.name)));
        };
        let new_prefix =
            if is_list { format!("{prefix}{}[{idx}].", opt.name) } else { format!("{prefix}{}.", opt.name) };
        let mut values: BTreeMap<String, Value> =
            map.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), v.clone())).collect();
        set_fallbacks(&options, &mut values, sub.env);
        fold_aliases(&options, &mut values, &new_prefix, sub.warnings);
        collect_no_log_values(&options, &values, sub.no_log_values);
        for key in values.keys().filter(|k| !options.iter().any(|o| o.name == k.as_str())) {
            let dotted = sub.context.iter().copied().chain([key.as_str()]).collect::<Vec<_>>().join(".");
            sub.unsupported.push((dotted, supported_list(&options)));
        }
        values.retain(|k, _| options.iter().any(|o| o.name == k.as_str()));
        set_defaults(&options, &mut values);
        check_required(&options, &values, &sub.context)?;
        coerce_all(&options, &mut values, &sub.context)?;
        check_choices(&options, &values, &sub.context)?;
        for nested in options.iter().filter(|o| !o.suboptions.is_empty()) {
            if let Some(v) = values.get_mut(nested.name) {
                validate_suboptions(nested, v, &new_prefix, sub)?;
            }
        }
        for o in &options {
            values.entry(o.name.to_string()).or_insert(Value::Null);
        }
        *map = values.into_iter().collect();
    }
    sub.context.pop();
    Ok(())
}

/// Python's name for the type of a JSON value, as ansible-core prints it in type errors.
fn python_type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "NoneType",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float",
        Value::Number(_) => "int",
        Value::String(_) => "str",
        Value::Array(_) => "list",
        Value::Object(_) => "dict",
    }
}

/// Python's `repr` of a JSON value, close enough for error messages.
fn python_repr(v: &Value) -> String {
    match v {
        Value::String(s) => format!("'{}'", s.replace('\\', "\\\\").replace('\'', "\\'")),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => "None".into(),
        other => other.to_string(),
    }
}

/// The text of a scalar as Python's `str()` would give it (used for choices and no_log).
pub fn scalar_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

/// Ansible's boolean words (module_utils/parsing/convert_bool.py).
pub fn parse_ansible_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::Number(n) => {
            let x = n.as_f64();
            if x == Some(1.0) {
                Some(true)
            } else if x == Some(0.0) {
                Some(false)
            } else {
                None
            }
        }
        Value::String(s) => match s.trim().to_ascii_lowercase().as_str() {
            "y" | "yes" | "on" | "1" | "true" | "t" => Some(true),
            "n" | "no" | "off" | "0" | "false" | "f" => Some(false),
            _ => None,
        },
        _ => None,
    }
}

fn to_int(v: &Value) -> std::result::Result<i64, String> {
    let fail = || format!("\"{}\" cannot be converted to an int", python_repr(v));
    match v {
        Value::Number(n) => {
            if let Some(i) = n.as_i64() {
                Ok(i)
            } else {
                match n.as_f64() {
                    Some(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Ok(f as i64),
                    _ => Err(fail()),
                }
            }
        }
        Value::Bool(b) => Ok(i64::from(*b)),
        Value::String(s) => {
            let t = s.trim();
            if let Ok(i) = t.parse::<i64>() {
                return Ok(i);
            }
            // Decimal("3.0") == 3 is accepted by ansible-core; "3.5" is not.
            match t.parse::<f64>() {
                Ok(f) if f.is_finite() && f.fract() == 0.0 && f.abs() < 9.0e15 && !t.contains(['e', 'E']) => {
                    Ok(f as i64)
                }
                _ => Err(fail()),
            }
        }
        _ => Err(fail()),
    }
}

fn to_float(v: &Value) -> std::result::Result<f64, String> {
    let fail = || format!("<class '{}'> cannot be converted to a float", python_type_name(v));
    match v {
        Value::Number(n) => n.as_f64().ok_or_else(fail),
        Value::Bool(b) => Ok(if *b { 1.0 } else { 0.0 }),
        Value::String(s) => s.trim().parse::<f64>().ok().filter(|f| f.is_finite()).ok_or_else(fail),
        _ => Err(fail()),
    }
}

fn to_str(v: &Value) -> std::result::Result<String, String> {
    match v {
        Value::String(s) => Ok(s.clone()),
        Value::Array(_) | Value::Object(_) => Ok(v.to_string()),
        other => Ok(scalar_text(other)),
    }
}

fn to_bool(v: &Value) -> std::result::Result<bool, String> {
    match v {
        Value::Array(_) | Value::Object(_) | Value::Null => {
            Err(format!("<class '{}'> cannot be converted to a bool", python_type_name(v)))
        }
        _ => parse_ansible_bool(v).ok_or_else(|| {
            format!(
                "The value '{}' is not a valid boolean. Valid booleans include: 'y', 'yes', 'on', '1', 'true', 't', 1, 1.0, True, 'n', 'no', 'off', '0', 'false', 'f', 0, 0.0, False",
                scalar_text(v)
            )
        }),
    }
}

fn to_dict(v: &Value) -> std::result::Result<Map<String, Value>, String> {
    match v {
        Value::Object(m) => Ok(m.clone()),
        Value::String(s) if s.trim_start().starts_with('{') => match serde_json::from_str::<Value>(s) {
            Ok(Value::Object(m)) => Ok(m),
            _ => Err("unable to evaluate string as dictionary".into()),
        },
        Value::String(s) => {
            let mut m = Map::new();
            for field in s.split([',', ' ']).filter(|f| !f.is_empty()) {
                let (k, val) =
                    field.split_once('=').ok_or("dictionary requested, could not parse JSON or key=value")?;
                m.insert(k.trim().to_string(), Value::String(val.trim().to_string()));
            }
            Ok(m)
        }
        other => Err(format!("<class '{}'> cannot be converted to a dict", python_type_name(other))),
    }
}

fn coerce_scalar(kind: Kind, v: &Value) -> std::result::Result<Value, String> {
    Ok(match kind {
        Kind::Str => Value::String(to_str(v)?),
        Kind::Path => {
            let s = to_str(v)?;
            Value::String(expand_home(&s))
        }
        Kind::Int => Value::from(to_int(v)?),
        Kind::Float => Value::from(to_float(v)?),
        Kind::Bool => Value::Bool(to_bool(v)?),
        Kind::Dict => Value::Object(to_dict(v)?),
        Kind::Raw => v.clone(),
        Kind::List(_) => unreachable_list(),
    })
}

// Lists are handled in `coerce`; a list kind never reaches `coerce_scalar`.
fn unreachable_list() -> Value {
    Value::Null
}

fn expand_home(path: &str) -> String {
    match (path.strip_prefix('~'), std::env::var("HOME")) {
        (Some(rest), Ok(home)) if rest.is_empty() || rest.starts_with('/') => format!("{home}{rest}"),
        _ => path.to_string(),
    }
}

fn kind_name(kind: Kind) -> &'static str {
    match kind {
        Kind::Str => "str",
        Kind::Int => "int",
        Kind::Float => "float",
        Kind::Bool => "bool",
        Kind::Path => "path",
        Kind::List(_) => "list",
        Kind::Dict => "dict",
        Kind::Raw => "raw",
    }
}

fn elem_kind(e: Elem) -> Kind {
    match e {
        Elem::Str => Kind::Str,
        Elem::Int => Kind::Int,
        Elem::Dict => Kind::Dict,
    }
}

fn coerce(opt: &OptionSpec, v: &Value, context: &[&str]) -> Result<Value> {
    // ansible-core puts the context between the type and the rest, with its quote and full stop.
    let found = if context.is_empty() { String::new() } else { format!(" found in '{}'.", context.join(" -> ")) };
    let type_error = |e: String| {
        Error::args(format!(
            "argument '{}' is of type {}{found} and we were unable to convert to {}: {}",
            opt.name,
            python_type_name(v),
            kind_name(opt.kind),
            e
        ))
    };
    match opt.kind {
        Kind::List(elem) => {
            let items: Vec<Value> = match v {
                Value::Array(items) => items.clone(),
                Value::String(s) => s.split(',').map(|p| Value::String(p.to_string())).collect(),
                Value::Number(_) => vec![Value::String(v.to_string())],
                other => {
                    return Err(type_error(format!(
                        "<class '{}'> cannot be converted to a list",
                        python_type_name(other)
                    )))
                }
            };
            let kind = elem_kind(elem);
            items
                .iter()
                .map(|item| {
                    coerce_scalar(kind, item).map_err(|e| {
                        let found = if context.is_empty() {
                            String::new()
                        } else {
                            format!(" found in '{}'", context.join(" -> "))
                        };
                        Error::args(format!(
                            "Elements value for option '{}'{found} is of type {} and we were unable to convert to {}: {}",
                            opt.name,
                            python_type_name(item),
                            kind_name(kind),
                            e
                        ))
                    })
                })
                .collect::<Result<Vec<Value>>>()
                .map(Value::Array)
        }
        kind => coerce_scalar(kind, v).map_err(type_error),
    }
}

#[cfg(test)]
mod tests;

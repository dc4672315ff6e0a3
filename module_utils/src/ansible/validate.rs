//! Validation of a module's raw arguments against its `ModuleSpec`, with AnsibleModule's semantics
//! and wording (ansible-core `ArgumentSpecValidator.validate`, module_utils/common/arg_spec.py, 2.19).

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::ansible::spec::*;
use crate::error::{Error, Result};

/// Validate raw task arguments (the user's options, no `_ansible_*` keys) against `spec`.
///
/// `env` looks up environment variables; it is a parameter so tests need not touch the process
/// environment. Returns the first error, as AnsibleModule's `fail_json` does.
pub fn validate(spec: &ModuleSpec, raw: &Map<String, Value>, env: &dyn Fn(&str) -> Option<String>) -> Result<Args> {
    let options = spec.all_options();
    let mut values: BTreeMap<String, Value> = raw
        .iter()
        .filter(|(k, v)| !v.is_null() && !empty_is_unset(&options, k, v))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
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

    Ok(Args { values, no_log_values, warnings })
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

/// One rule for empty values (issue 27): an option with an environment fallback (the connection
/// options) counts as unset when given as an empty string, as a `lookup('env', ...)` of an unset
/// variable yields, so the environment (and the action plugin's `module_defaults`) still apply;
/// an empty variable is skipped the same way. native.py keeps the same rule (`EMPTY_IS_UNSET`).
fn empty_is_unset(options: &[&OptionSpec], key: &str, value: &Value) -> bool {
    value.as_str() == Some("")
        && options.iter().any(|o| !o.env.is_empty() && (o.name == key || o.aliases.contains(&key)))
}

fn set_fallbacks(options: &[&OptionSpec], values: &mut BTreeMap<String, Value>, env: &dyn Fn(&str) -> Option<String>) {
    for opt in options {
        if values.contains_key(opt.name) || opt.aliases.iter().any(|a| values.contains_key(*a)) {
            continue;
        }
        if let Some(v) = opt.env.iter().find_map(|var| env(var).filter(|v| !v.is_empty())) {
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

//! Proxmox VE's own API schema for every write our modules make: a request is checked against it before it is sent.
//!
//! The table (`schema/params.json`, derived from PVE's API schema by `tools/schema/extract.py`;
//! provenance and licence in `schema/README.md`) holds, per write endpoint, each parameter's
//! type, limits, enum, pattern and format. `check_write` matches a concrete `ApiPath` to its
//! endpoint template by its segments and checks the path's variables and every key and value of
//! the `Form` the way pve-common JSONSchema.pm does (`check_prop`, `check_type`,
//! `parse_property_string`, `check_object`), with PVE's words, then the rules PVE applies in
//! code rather than in the schema (`cross_field`, docs/pve-semantics.md §28). Named formats are
//! `pveformat::verify_named`'s, named property-string formats `formats`' (§34); a named format
//! known in neither is not checked (§34 lists them).
//! A path that matches no endpoint is not checked: the coverage test
//! (`tests/props/tests/schema_coverage.rs`) proves that every write the modules make is known.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use crate::error::{clip, Error, Result};
use crate::pve::devices::{is_disk_key, parse_new_cloudinit, parse_new_disk, Disk};
use crate::pve::propstring::{is_integer, is_number, parse_boolean};
use crate::pve::pveformat::{split_list, verify_named, QUOTE_MAX};
use crate::pve::request::{ApiPath, Form, Method};
use crate::pve::volume::{content_and_owner, Volume};

pub mod drive;
mod drives;
mod formats;

const TABLE_JSON: &str = include_str!("schema/params.json");

/// Parameters whose values a message never quotes.
const SECRET_PARAMS: &[&str] = &["password", "otp", "tfa-challenge", "cipassword"];

/// Every endpoint of the table: `"PUT /nodes/{node}/qemu/{vmid}/config"` -> its schema.
fn endpoints() -> &'static Map<String, Value> {
    static TABLE: OnceLock<Map<String, Value>> = OnceLock::new();
    TABLE.get_or_init(|| {
        // An unparsable table leaves it empty, which the table tests catch (no release has one).
        let parsed: Value = serde_json::from_str(TABLE_JSON).unwrap_or_default();
        let mut endpoints = parsed.get("endpoints").and_then(Value::as_object).cloned().unwrap_or_default();
        // A definition several endpoints share is written once, in `shared`, and named where it
        // is used (extract.py `share`); an unknown name resolves to nothing, which the tests catch.
        let shared = parsed.get("shared").and_then(Value::as_object);
        for schema in endpoints.values_mut() {
            if let Some(params) = schema.get_mut("params").and_then(Value::as_object_mut) {
                for entry in params.values_mut() {
                    if let Some(name) = entry.as_str() {
                        *entry = shared.and_then(|s| s.get(name)).cloned().unwrap_or(Value::Null);
                    }
                }
            }
        }
        endpoints
    })
}

/// One endpoint of the table with the values its path binds.
pub struct Endpoint {
    /// `PUT /nodes/{node}/qemu/{vmid}/config`.
    pub name: &'static str,
    params: &'static Map<String, Value>,
    additional: bool,
    bindings: Vec<(String, String)>,
}

impl Endpoint {
    /// The endpoint `template` (`/nodes/{node}/qemu/{vmid}/config`) of the table, if it has one.
    pub fn by_template(method: Method, template: &str) -> Option<Endpoint> {
        let (name, schema) = endpoints().get_key_value(&format!("{} {template}", method.as_str()))?;
        Some(Endpoint::new(name, schema, Vec::new()))
    }

    /// The endpoint a concrete path calls: the template whose segments match, literal segments
    /// before variables when two match.
    pub fn for_path(method: Method, path: &ApiPath) -> Option<Endpoint> {
        let segments = path.segments();
        let mut best: Option<(usize, Endpoint)> = None;
        for (name, schema) in endpoints() {
            let Some(template) = name.strip_prefix(method.as_str()).and_then(|t| t.strip_prefix(' ')) else {
                continue;
            };
            let parts: Vec<&str> = template.split('/').filter(|s| !s.is_empty()).collect();
            if parts.len() != segments.len() {
                continue;
            }
            let mut bindings = Vec::new();
            let mut literals = 0;
            let matched = parts.iter().zip(segments).all(|(part, seg)| {
                match part.strip_prefix('{').and_then(|p| p.strip_suffix('}')) {
                    Some(var) => bindings.push((var.to_string(), seg.clone())),
                    None if part == seg => literals += 1,
                    None => return false,
                }
                true
            });
            if matched && best.as_ref().is_none_or(|b| literals > b.0) {
                best = Some((literals, Endpoint::new(name, schema, bindings)));
            }
        }
        best.map(|(_, endpoint)| endpoint)
    }

    fn new(name: &'static str, schema: &'static Value, bindings: Vec<(String, String)>) -> Endpoint {
        static EMPTY: OnceLock<Map<String, Value>> = OnceLock::new();
        let params = schema.get("params").and_then(Value::as_object).unwrap_or_else(|| EMPTY.get_or_init(Map::new));
        let additional = schema.get("additional").and_then(Value::as_i64) != Some(0);
        Endpoint { name, params, additional, bindings }
    }

    /// The schema of parameter `key`: its own entry, or for `net3` the entry `net[n]` that
    /// stands for `net0` ... `net31` (`count` of them; no leading zero, as PVE spells the keys).
    /// `net[n]` itself names that entry.
    pub fn param(&self, key: &str) -> Option<&'static Value> {
        if let Some(schema) = self.params.get(key) {
            return Some(schema);
        }
        let base = key.trim_end_matches(|c: char| c.is_ascii_digit());
        let index = &key[base.len()..];
        let schema = self.params.get(&format!("{base}[n]"))?;
        let count = schema.get("count")?.as_u64()?;
        let ok = !index.is_empty() && (index == "0" || !index.starts_with('0'));
        index.parse::<u64>().ok().filter(|i| ok && *i < count).map(|_| schema)
    }

    /// Every parameter name of the table (`net[n]` for the numbered ones).
    pub fn param_names(&self) -> impl Iterator<Item = &'static str> {
        self.params.keys().map(String::as_str)
    }

    /// PVE's check of one request: the path's variables, every key and value, the parameters
    /// a given one `requires`, the parameters PVE requires, and the rules it applies in code. `Err((parameter, PVE's message))`.
    pub fn check(&self, form: &Form) -> std::result::Result<(), (String, String)> {
        for (var, value) in &self.bindings {
            if let Some(schema) = self.params.get(var) {
                check_prop(schema, var, value).map_err(|m| (var.clone(), m))?;
            }
        }
        for (key, value) in form {
            match self.param(key) {
                Some(schema) => check_prop(schema, key, value).map_err(|m| (key.clone(), mask(key, value, m)))?,
                None if !self.additional => return Err((key.clone(), NOT_IN_SCHEMA.to_string())),
                None => {}
            }
        }
        let given = |name: &str| self.bindings.iter().any(|(v, _)| v == name) || form.iter().any(|(k, _)| k == name);
        for (key, _) in form {
            let required = self.param(key).and_then(|s| str_field(s, "requires"));
            if let Some(required) = required.filter(|r| !given(r)) {
                return Err((required.to_string(), format!("missing property required by '{key}'")));
            }
        }
        for (name, schema) in self.params {
            let given = given(name);
            if !given && !is_optional(schema) && schema.get("count").is_none() {
                return Err((name.clone(), "property is missing and it is not optional".into()));
            }
        }
        cross_field(self, form)
    }
}

#[cfg(feature = "test-support")]
thread_local! {
    /// Each write `check_write` checked on this thread, as `METHOD /path`: what shows that a run
    /// checks each of its writes once (`checked_writes`). A few short lines per run, no values;
    /// only in builds with the `test-support` feature (the tests that count), not the binary.
    static CHECKED: std::cell::RefCell<Vec<String>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The writes checked on this thread so far, as `METHOD /path` (the path as sent), in order; a
/// test compares them with the writes a run sent.
#[cfg(feature = "test-support")]
pub fn checked_writes() -> Vec<String> {
    CHECKED.with(|c| c.borrow().clone())
}

/// PVE's words for a key the endpoint does not have (JSONSchema.pm `check_object`).
const NOT_IN_SCHEMA: &str = "property is not defined in schema and the schema does not allow additional properties";

/// Check a write before it is sent (`PveClient` does, for every write; check mode may run it on
/// the writes it plans): `Ok` for a read or a path the table does not know, else an `Args` error
/// that names the parameter, with PVE's message.
pub fn check_write(method: Method, path: &ApiPath, form: &Form) -> Result<()> {
    if method == Method::Get {
        return Ok(());
    }
    #[cfg(feature = "test-support")]
    CHECKED.with(|c| c.borrow_mut().push(format!("{} {}", method.as_str(), path.encoded())));
    let Some(endpoint) = Endpoint::for_path(method, path) else { return Ok(()) };
    endpoint.check(form).map_err(|(param, message)| {
        Error::args(format!(
            "{param}: {} (Proxmox VE's API schema for {}; nothing was sent)",
            message.trim_end().replace('\n', " "),
            endpoint.name
        ))
    })
}

fn is_optional(schema: &Value) -> bool {
    schema.get("optional").and_then(Value::as_i64).is_some_and(|o| o != 0)
}

/// A message about a secret parameter, with its value taken out.
fn mask(key: &str, value: &str, message: String) -> String {
    if SECRET_PARAMS.contains(&key) && !value.is_empty() {
        message.replace(value, "********").replace(&clip(value, QUOTE_MAX), "********")
    } else {
        message
    }
}

fn str_field<'a>(schema: &'a Value, field: &str) -> Option<&'a str> {
    schema.get(field).and_then(Value::as_str)
}

/// A limit as PVE prints it (`4094`, `0.5`), and its value.
fn limit(schema: &Value, field: &str) -> Option<(String, f64)> {
    match schema.get(field)? {
        Value::Number(n) => Some((n.to_string(), n.as_f64()?)),
        Value::String(s) => Some((s.clone(), s.parse().ok()?)),
        _ => None,
    }
}

/// A schema pattern as PVE applies it (`m/^$pattern$/`), in the regex crate's syntax: a Perl
/// `qr//` stringified as `(?^flags:...)` is `(?flags:...)`, and `{,n}` is `{0,n}` (its meaning
/// since Perl 5.34, which PVE 8 and 9 run on).
pub fn anchored(pattern: &str) -> String {
    let rust = pattern.replace("(?^:", "(?:").replace("(?^i:", "(?i:").replace("{,", "{0,");
    format!("^(?:{rust})$")
}

/// JSONSchema.pm `check_type` for a value that arrived as text. A boolean parameter is `0` or `1`
/// only (`check_type` compares with `eq`; docs/pve-semantics.md §32.1); inside a property string
/// `parse_property_string` has already turned `yes`/`off`/... into `1`/`0`.
fn check_type(schema: &Value, value: &str) -> std::result::Result<(), String> {
    let ty = str_field(schema, "type").unwrap_or("string");
    let ok = match ty {
        "boolean" => value == "0" || value == "1",
        "integer" => is_integer(value),
        "number" => is_number(value),
        _ => true,
    };
    if ok {
        Ok(())
    } else {
        Err(format!("type check ('{ty}') failed - got '{}'", clip(value, QUOTE_MAX)))
    }
}

/// JSONSchema.pm `check_prop` for one value, in its order: type, format, pattern, length,
/// limits, enum. `path` is the parameter (`net0`), or `net0.tag` inside a property string.
pub fn check_prop(schema: &Value, path: &str, value: &str) -> std::result::Result<(), String> {
    check_type(schema, value)?;
    if let Some(keys) = schema.get("keys").and_then(Value::as_object) {
        parse_property_string(keys, path, value).map_err(|e| format!("invalid format - {e}"))?;
    } else if let Some(format) = str_field(schema, "format") {
        let result = match formats::named(format) {
            Some((keys, validator)) => parse_property_string(keys, path, value).and_then(|parsed| {
                let get = |k: &str| parsed.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
                validator.map_or(Ok(()), |check| check(&get))
            }),
            None => verify_named(format, value).unwrap_or(Ok(())),
        };
        result.map_err(|e| format!("invalid format - {e}"))?;
    }
    if let Some(pattern) = str_field(schema, "pattern") {
        // A pattern that does not compile (pve::pattern) is not checked; the table test proves
        // that every pattern of the table compiles.
        if let Ok(re) = super::pattern::compile(&anchored(pattern)) {
            if !re.is_match(value) {
                return Err("value does not match the regex pattern".into());
            }
        }
    }
    let length = value.chars().count() as f64;
    if let Some((max, _)) = limit(schema, "maxLength").filter(|(_, n)| length > *n) {
        return Err(format!("value may only be {max} characters long"));
    }
    if let Some((min, _)) = limit(schema, "minLength").filter(|(_, n)| length < *n) {
        return Err(format!("value must be at least {min} characters long"));
    }
    if is_number(value) {
        let number: f64 = value.parse().unwrap_or(f64::NAN);
        if let Some((max, _)) = limit(schema, "maximum").filter(|(_, n)| number > *n) {
            return Err(format!("value must have a maximum value of {max}"));
        }
        if let Some((min, _)) = limit(schema, "minimum").filter(|(_, n)| number < *n) {
            return Err(format!("value must have a minimum value of {min}"));
        }
    }
    if let Some(choices) = schema.get("enum").and_then(Value::as_array) {
        if !choices.iter().any(|c| c.as_str() == Some(value)) {
            let all: Vec<&str> = choices.iter().filter_map(Value::as_str).collect();
            return Err(format!(
                "value '{}' does not have a value in the enumeration '{}'",
                clip(value, QUOTE_MAX),
                all.join(", ")
            ));
        }
    }
    Ok(())
}

/// JSONSchema.pm `parse_property_string` and the `check_object` it ends with: the parts, the
/// default key, aliases and key aliases, then every key's value; errors as PVE raises them
/// (one line, or `format error` with a line per key). `Ok`: the keys and values as parsed.
pub fn parse_property_string(
    keys: &Map<String, Value>,
    path: &str,
    data: &str,
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut parsed: Vec<(String, String)> = Vec::new();
    let get = |parsed: &Vec<(String, String)>, k: &str| parsed.iter().position(|(p, _)| p == k);
    let mut default_key: Option<&str> = None;
    for part in data.split(',') {
        if part.trim().is_empty() {
            continue;
        }
        match part.split_once('=') {
            Some((k, v)) if !k.is_empty() && !v.is_empty() => {
                if get(&parsed, k).is_some() {
                    return Err(format!("duplicate key in comma-separated list property: {k}"));
                }
                let mut key = k.to_string();
                if let Some(alias) = keys.get(k).and_then(|s| str_field(s, "alias")) {
                    if let Some(key_alias) = keys.get(k).and_then(|s| str_field(s, "keyAlias")) {
                        if get(&parsed, key_alias).is_some() {
                            return Err(format!("key alias '{key_alias}' is already defined"));
                        }
                        parsed.push((key_alias.to_string(), k.to_string()));
                    }
                    key = alias.to_string();
                }
                let Some(schema) = keys.get(&key) else {
                    return Err(format!("invalid key in comma-separated list property: {}", clip(&key, QUOTE_MAX)));
                };
                let mut value = v.to_string();
                if str_field(schema, "type") == Some("boolean") {
                    if let Some(b) = parse_boolean(v) {
                        value = if b { "1" } else { "0" }.to_string();
                    }
                }
                match get(&parsed, &key) {
                    Some(i) => parsed[i].1 = value,
                    None => parsed.push((key, value)),
                }
            }
            None => {
                if let Some(dk) = default_key {
                    return Err(format!("duplicate key in comma-separated list property: {dk}"));
                }
                let Some(dk) = keys.iter().find(|(_, s)| s.get("default_key").is_some()).map(|(k, _)| k.as_str())
                else {
                    return Err("value without key, but schema does not define a default key".into());
                };
                default_key = Some(dk);
                if get(&parsed, dk).is_some() {
                    return Err(format!("duplicate key in comma-separated list property: {dk}"));
                }
                parsed.push((dk.to_string(), part.to_string()));
            }
            Some(_) => return Err("missing key in comma-separated list property".into()),
        }
    }
    let mut errors: Vec<String> = Vec::new();
    for (key, schema) in keys {
        let sub = format!("{path}.{key}");
        match get(&parsed, key) {
            Some(i) => {
                if let Err(e) = check_prop(schema, &sub, &parsed[i].1) {
                    errors.push(format!("{sub}: {e}"));
                }
                if let Some(required) = str_field(schema, "requires") {
                    if get(&parsed, required).is_none() {
                        errors.push(format!("{path}.{required}: missing property required by '{sub}'"));
                    }
                }
            }
            None if !is_optional(schema) && schema.get("alias").is_none() => {
                errors.push(format!("{sub}: property is missing and it is not optional"));
            }
            None => {}
        }
    }
    if errors.is_empty() {
        return Ok(parsed);
    }
    errors.sort_unstable();
    Err(format!("format error\n{}", errors.join("\n")))
}

/// The current memory of a `memory` value (`2048` or `current=2048`; 512 when it names none):
/// qemu-server QemuServer/Memory.pm `get_current_memory`.
pub(crate) fn current_memory(value: &str) -> Option<f64> {
    let current = value.split(',').find_map(|p| match p.split_once('=') {
        Some(("current", v)) => Some(v),
        Some(_) => None,
        None => Some(p),
    });
    current.unwrap_or("512").parse().ok()
}

/// The keys of qemu-server's `$confdesc` that `json_config_properties` leaves out of the config
/// endpoints' schema (QemuServer.pm): `option_exists` knows them, so `delete` and `revert` take them
/// (a hibernation's `vmstate` is removed so).
const CONFDESC_ONLY: &[&str] =
    &["parent", "snaptime", "vmstate", "running-nets-host-mtu", "runningmachine", "runningcpu", "meta"];

/// The rules PVE applies in code rather than in the schema that one request can break, each as
/// PVE words it (docs/pve-semantics.md §28). For a config write (qemu-server API2/Qemu.pm
/// `update_vm_api`): a key both set and deleted or reverted (`raise_param_exc` on `delete`), a key
/// to delete or revert that is no config option, and a `balloon` above the `memory` of the same
/// request (`balloon value too large (must be smaller than assigned memory)`). `cdrom` in
/// `delete` is `ide2`, as PVE resolves it.
fn cross_field(endpoint: &Endpoint, form: &Form) -> std::result::Result<(), (String, String)> {
    if endpoint.name.ends_with("/qemu") || endpoint.name.ends_with("/qemu/{vmid}/config") {
        drive_contents(form)?;
        drives::import_from(form, endpoint.name.ends_with("/qemu"))?;
    }
    if !endpoint.name.ends_with("/qemu/{vmid}/config") {
        return Ok(());
    }
    let value = |k: &str| form.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let reverted: Vec<&str> = split_list(value("revert").unwrap_or("")).collect();
    for key in &reverted {
        if endpoint.param(key).is_none() && !CONFDESC_ONLY.contains(key) {
            return Err(("revert".into(), format!("unknown option '{}'", clip(key, QUOTE_MAX))));
        }
        if value(key).is_some() {
            // PVE raises this one on `delete`, although it is about `revert`.
            return Err(("delete".into(), format!("you can't use '-{key}' and -revert {key}' at the same time")));
        }
    }
    for key in split_list(value("delete").unwrap_or("")) {
        let key = if key == "cdrom" { "ide2" } else { key };
        if value(key).is_some() {
            return Err(("delete".into(), format!("you can't use '-{key}' and -delete {key}' at the same time")));
        }
        if reverted.contains(&key) {
            return Err((
                "revert".into(),
                format!("you can't use '-delete {key}' and '-revert {key}' at the same time"),
            ));
        }
        if endpoint.param(key).is_none() && !CONFDESC_ONLY.contains(&key) {
            return Err(("delete".into(), format!("unknown option '{}'", clip(key, QUOTE_MAX))));
        }
    }
    if let (Some(memory), Some(balloon)) = (value("memory"), value("balloon")) {
        let (Some(max), Ok(balloon)) = (current_memory(memory), balloon.parse::<f64>()) else { return Ok(()) };
        if balloon > max {
            return Err(("balloon".into(), "balloon value too large (must be smaller than assigned memory)".into()));
        }
    }
    Ok(())
}

/// qemu-server API2/Qemu.pm `create_vm` and `update_vm_api`, for each drive naming an existing
/// volume (not a new disk, a cloud-init drive, `none` or `cdrom`): `$check_drive_param` wants
/// `media=cdrom` on an ISO volume, and `$check_storage_access` a volume whose content type
/// (`parse_volname`, from its name) is images or iso; an `import/` volume is only a source
/// (`import-from`), never a drive's volume (docs/pve-semantics.md §42.4).
fn drive_contents(form: &Form) -> std::result::Result<(), (String, String)> {
    for (key, value) in form.iter().filter(|(k, _)| is_disk_key(k) && !k.starts_with("unused")) {
        let Some(drive) = Disk::parse(key, value) else { continue };
        let Some(file) = drive.volume.as_deref() else { continue };
        if parse_new_disk(file).is_some() || parse_new_cloudinit(file).is_some() || Volume::parse(file).is_none() {
            continue;
        }
        match content_and_owner(file).0 {
            "iso" if drive.media != "cdrom" => {
                return Err((key.clone(), "explicit 'media=cdrom' is required for iso images".into()));
            }
            "iso" | "images" => {}
            _ => return Err((key.clone(), "content type needs to be 'images' or 'iso'".into())),
        }
    }
    Ok(())
}

/// qemu-server API2/Qemu.pm `update_vm_api`, when a config write sets `boot` with an `order`:
/// each device it names must be in the config (applied or pending, `has`) or set by the same
/// request, and not deleted by it; else PVE dies with these words (an HTTP 500, after the keys
/// it wrote before `boot`: so it must be caught before the write). A create does not check this
/// (docs/pve-semantics.md §34.3). `form`: the request's body.
pub fn boot_order_devices(has: &dyn Fn(&str) -> bool, form: &Form) -> std::result::Result<(), String> {
    let value = |k: &str| form.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str());
    let Some(boot) = value("boot") else { return Ok(()) };
    let order = boot.split(',').find_map(|part| part.trim().strip_prefix("order="));
    let deleted: Vec<&str> =
        split_list(value("delete").unwrap_or("")).map(|k| if k == "cdrom" { "ide2" } else { k }).collect();
    for dev in split_list(order.unwrap_or("")) {
        if !(has(dev) || value(dev).is_some()) || deleted.contains(&dev) {
            return Err(format!("invalid bootorder: device '{}' does not exist'", clip(dev, QUOTE_MAX)));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;

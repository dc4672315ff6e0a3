//! PVE property strings (`virtio=BC:24:11:00:00:01,bridge=vmbr0`): parsing, canonical printing, semantic comparison; the formats and units are in `formats` and `units`.
//!
//! PVE stores and returns the *printed* form of a property string, which is rarely the form a
//! user wrote (`firewall=yes` comes back as `firewall=1`, `model=virtio,macaddr=..` as
//! `virtio=..`, `size=32768M` as `size=32G`). Idempotence therefore needs a comparison of parsed
//! values, never of raw text: that is what `PropertyString::semantically_equal` is for. The
//! parsing rules and error texts follow pve-common `JSONSchema.pm` `parse_property_string` /
//! `check_object` (see docs/pve-semantics.md §20), so a user sees PVE's wording before the request
//! is even sent. Formats are `const` data transcribed from the API schema (`pve-apidoc.json`),
//! with the 9.2 additions of §20.7 accepted too, so that strings read from a newer node parse.

use std::fmt;

use crate::error::{clip, Error, Result};
use crate::pve::pveformat::{self, PveFormat, QUOTE_MAX};

mod formats;
mod units;

pub use formats::*;
use units::bool_text;
pub use units::*;

/// The type of one key's value: decides validation (strict parse) and semantic comparison.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValueType {
    /// `1|on|yes|true` / `0|off|no|false`, any case; stored and printed as `1`/`0`.
    Bool,
    /// An integer with optional inclusive bounds.
    Int { min: Option<i64>, max: Option<i64> },
    /// A number (Perl `is_number`), kept as sent and compared numerically.
    Number { min: Option<i64> },
    /// A PVE `disk-size` (`\d+(\.\d+)?[KMGT]?`), printed with the canonical unit.
    Size,
    /// A unicast MAC address, stored upper case.
    Mac,
    /// One of a fixed set of words.
    Enum(&'static [&'static str]),
    /// Free text (volumes, bridges, urlencoded values): compared byte for byte.
    Str,
    /// Text that must match the anchored regular expression.
    Pattern(&'static str),
    /// A named PVE format (`pve-bridge-id`, `pve-volume-id-or-qm-path`, `urlencoded`, ...) and
    /// the schema's `maxLength`, if any.
    Named(PveFormat, Option<usize>),
}

/// One key of a format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyDef {
    pub name: &'static str,
    pub kind: ValueType,
    /// The value PVE assumes when the key is absent; `None` when absence has its own meaning.
    pub default: Option<&'static str>,
}

impl KeyDef {
    pub const fn new(name: &'static str, kind: ValueType) -> Self {
        KeyDef { name, kind, default: None }
    }
    pub const fn boolean(name: &'static str) -> Self {
        Self::new(name, ValueType::Bool)
    }
    pub const fn int(name: &'static str) -> Self {
        Self::new(name, ValueType::Int { min: None, max: None })
    }
    pub const fn int_range(name: &'static str, min: Option<i64>, max: Option<i64>) -> Self {
        Self::new(name, ValueType::Int { min, max })
    }
    pub const fn number(name: &'static str) -> Self {
        Self::new(name, ValueType::Number { min: None })
    }
    pub const fn str(name: &'static str) -> Self {
        Self::new(name, ValueType::Str)
    }
    pub const fn enumeration(name: &'static str, values: &'static [&'static str]) -> Self {
        Self::new(name, ValueType::Enum(values))
    }
    pub const fn pattern(name: &'static str, re: &'static str) -> Self {
        Self::new(name, ValueType::Pattern(re))
    }
    pub const fn with_default(self, default: &'static str) -> Self {
        KeyDef { default: Some(default), ..self }
    }
}

/// PVE's `keyAlias`: any of `keys` used as a key sets `key` to its own name and `value_key` to
/// its value (net: `virtio=<MAC>` is `model=virtio,macaddr=<MAC>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KeyAlias {
    pub keys: &'static [&'static str],
    pub key: &'static str,
    pub value_key: &'static str,
}

/// A property-string format: the schema of one config key's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Format {
    /// A short name used in error messages (`net`, `drive`, ...).
    pub name: &'static str,
    /// The key whose value may be given bare; it is also required (as in every PVE format
    /// defined here).
    pub default_key: Option<&'static str>,
    pub keys: &'static [KeyDef],
    /// `(alias, canonical key)`.
    pub aliases: &'static [(&'static str, &'static str)],
    pub key_alias: Option<KeyAlias>,
}

impl Format {
    /// The definition of a canonical key.
    pub fn key(&self, name: &str) -> Option<&'static KeyDef> {
        self.keys.iter().find(|k| k.name == name)
    }

    /// The canonical name of `name` through `aliases` (not the keyAlias).
    pub fn canonical_key<'a>(&self, name: &'a str) -> &'a str {
        match self.aliases.iter().find(|(a, _)| *a == name) {
            Some((_, target)) => target,
            None => name,
        }
    }

    /// Whether a task's `value` may be written as `key` (see `PropertyString::set_checked`);
    /// the message (value quoted, cut to a readable length) does not name the key, so that the
    /// caller can name the option instead.
    pub fn check_task_value(&self, key: &str, value: &str) -> std::result::Result<(), String> {
        let canonical = match self.key_alias_for(key) {
            Some(ka) => ka.value_key,
            None => self.canonical_key(key),
        };
        let Some(def) = self.key(canonical) else {
            return Err(format!("not a key of a {} property string", self.name));
        };
        let problem = if value.contains([',', '\n']) {
            "a value must not contain ',' or a newline (it would start another key)".to_string()
        } else if value.trim().is_empty() {
            "empty value".to_string()
        } else {
            match check_value(def.kind, &normalize_value(def.kind, value)) {
                Ok(()) => return Ok(()),
                Err(msg) => msg,
            }
        };
        let shown = clip(value, QUOTE_MAX);
        let problem = clip(&problem, 2 * QUOTE_MAX);
        Err(if problem.contains(&shown) { problem } else { format!("{problem} (got '{shown}')") })
    }

    fn key_alias_for(&self, name: &str) -> Option<KeyAlias> {
        self.key_alias.filter(|ka| ka.keys.contains(&name))
    }

    fn kind_of(&self, name: &str) -> ValueType {
        self.key(name).map_or(ValueType::Str, |k| k.kind)
    }
}

/// A parsed property string: `(key, value)` pairs in the order given, keys canonical.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PropertyString {
    format: &'static Format,
    entries: Vec<(String, String)>,
}

/// How far a parse checks the values.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Like PVE: unknown keys, bad values and a missing default key are errors.
    Strict,
    /// For values read back from PVE: only the structure is checked; unknown keys are kept.
    Lenient,
}

fn parse_error(format: &Format, text: &str, msg: &str) -> Error {
    Error::Args(format!(
        "invalid format - {} (in {} value '{}')",
        clip(msg, 2 * QUOTE_MAX),
        format.name,
        clip(text, QUOTE_MAX)
    ))
}

impl PropertyString {
    /// Parses `text` as PVE does, checking every value against `format`.
    pub fn parse(format: &'static Format, text: &str) -> Result<PropertyString> {
        Self::parse_mode(format, text, Mode::Strict)
    }

    /// Parses a value PVE returned: the structure is checked, but unknown keys are kept (as
    /// text) and values are not validated, so a config written by a newer PVE still reads.
    pub fn parse_lenient(format: &'static Format, text: &str) -> Result<PropertyString> {
        Self::parse_mode(format, text, Mode::Lenient)
    }

    /// An empty property string of `format`, to be filled with `set`.
    pub fn new(format: &'static Format) -> PropertyString {
        PropertyString { format, entries: Vec::new() }
    }

    fn parse_mode(format: &'static Format, text: &str, mode: Mode) -> Result<PropertyString> {
        let err = |msg: &str| parse_error(format, text, msg);
        if text.trim().is_empty() {
            return Err(err("empty value"));
        }
        if text.contains('\n') {
            return Err(err("properties must not contain newlines"));
        }
        let mut ps = PropertyString::new(format);
        for part in text.split(',') {
            // PVE skips empty and blank items (`a,,b`).
            if part.trim().is_empty() {
                continue;
            }
            match part.split_once('=') {
                Some((key, value)) => {
                    if key.is_empty() || value.is_empty() {
                        return Err(err("missing key in comma-separated list property"));
                    }
                    // Like PVE, the key as written is looked up among the canonical keys.
                    if ps.has_canonical(key) {
                        return Err(err(&format!("duplicate key in comma-separated list property: {key}")));
                    }
                    let target = if let Some(ka) = format.key_alias_for(key) {
                        if ps.get(ka.key).is_some() {
                            return Err(err(&format!("key alias '{}' is already defined", ka.key)));
                        }
                        ps.entries.push((ka.key.to_string(), key.to_string()));
                        ka.value_key
                    } else {
                        format.canonical_key(key)
                    };
                    if target != key && ps.get(target).is_some() {
                        return Err(err(&format!("key '{target}' is already defined (via alias)")));
                    }
                    if format.key(target).is_none() && mode == Mode::Strict {
                        return Err(err(&format!("invalid key in comma-separated list property: {target}")));
                    }
                    let value = normalize_value(format.kind_of(target), value);
                    ps.entries.push((target.to_string(), value));
                }
                None => {
                    let Some(dk) = format.default_key else {
                        return Err(err("value without key, but schema does not define a default key"));
                    };
                    if ps.get(dk).is_some() {
                        return Err(err(&format!("duplicate key in comma-separated list property: {dk}")));
                    }
                    let value = normalize_value(format.kind_of(dk), part);
                    ps.entries.push((dk.to_string(), value));
                }
            }
        }
        if ps.entries.is_empty() {
            // Only separators (`,`, `, ,`): nothing was given.
            return Err(err("empty value"));
        }
        if mode == Mode::Strict {
            if let Some(dk) = format.default_key {
                if ps.get(dk).is_none() {
                    return Err(err(&format!("{dk}: property is missing and it is not optional")));
                }
            }
            for (key, value) in &ps.entries {
                if let Err(msg) = check_value(format.kind_of(key), value) {
                    return Err(err(&format!("{key}: {msg}")));
                }
            }
        }
        Ok(ps)
    }

    fn has_canonical(&self, key: &str) -> bool {
        self.entries.iter().any(|(k, _)| k == key)
    }

    /// The format this string was parsed with.
    pub fn format(&self) -> &'static Format {
        self.format
    }

    /// The value of a key (aliases accepted).
    pub fn get(&self, key: &str) -> Option<&str> {
        let key = self.format.canonical_key(key);
        self.entries.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }

    /// Sets a key (aliases accepted; a keyAlias key such as `virtio` sets `model` and
    /// `macaddr`). Booleans are stored as `1`/`0` and MACs upper case, as a parse would. The
    /// value is not validated: it is the caller's to keep commas and newlines out.
    pub fn set(&mut self, key: &str, value: &str) {
        if let Some(ka) = self.format.key_alias_for(key) {
            self.set_canonical(ka.key, key);
            self.set_canonical(ka.value_key, value);
            return;
        }
        let key = self.format.canonical_key(key).to_string();
        self.set_canonical(&key, value);
    }

    /// Sets a key to a value that comes from a task: the key must be one of the format's and
    /// the value must pass PVE's check for that key (its type, enum, pattern or named format:
    /// `pve-bridge-id`, a volume id, `urlencoded`, ...) and hold no `,` or newline, so that it
    /// can neither add, remove nor change another key. The error names the key.
    pub fn set_checked(&mut self, key: &str, value: &str) -> Result<()> {
        self.format.check_task_value(key, value).map_err(|msg| Error::args(format!("{key}: {msg}")))?;
        self.set(key, value);
        Ok(())
    }

    /// The canonical text, after making sure it parses back to exactly these keys and values
    /// (the last guard before a property string is sent: a value that would split into more
    /// keys, or lose one, is an internal error instead of a write).
    pub fn to_checked_string(&self) -> Result<String> {
        let text = self.to_string();
        let back = PropertyString::parse_lenient(self.format, &text)?;
        let mut want: Vec<(&str, &str)> = self.iter().collect();
        let mut got: Vec<(&str, &str)> = back.iter().collect();
        want.sort_unstable();
        got.sort_unstable();
        let same_sizes = |a: &[(&str, &str)], b: &[(&str, &str)]| {
            a.len() == b.len()
                && a.iter().zip(b).all(|((ka, va), (kb, vb))| {
                    ka == kb
                        && (va == vb
                            || semantic_value(self.format.kind_of(ka), va)
                                == semantic_value(self.format.kind_of(kb), vb))
                })
        };
        if !same_sizes(&want, &got) {
            return Err(Error::Internal(format!(
                "refusing to send the {} value '{}': it does not parse back to the keys it was built from",
                self.format.name,
                clip(&text, QUOTE_MAX)
            )));
        }
        Ok(text)
    }

    fn set_canonical(&mut self, key: &str, value: &str) {
        let value = normalize_value(self.format.kind_of(key), value);
        match self.entries.iter_mut().find(|(k, _)| k == key) {
            Some(entry) => entry.1 = value,
            None => self.entries.push((key.to_string(), value)),
        }
    }

    /// Removes a key (aliases accepted), returning its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let key = self.format.canonical_key(key);
        let pos = self.entries.iter().position(|(k, _)| k == key)?;
        Some(self.entries.remove(pos).1)
    }

    /// The keys, in the order they were given.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().map(|(k, _)| k.as_str())
    }

    /// The `(key, value)` pairs, in the order they were given.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The value PVE would use for `key`: the given one, else the format's default.
    fn effective(&self, key: &str) -> Option<String> {
        let kind = self.format.kind_of(key);
        match self.get(key) {
            Some(v) => Some(semantic_value(kind, v)),
            None => self.format.key(key).and_then(|k| k.default).map(|d| semantic_value(kind, d)),
        }
    }

    /// True when both strings mean the same to PVE: key order, MAC case, boolean spellings,
    /// number spellings (`10` / `10.0`), size units (`32G` / `32768M`) and an absent key vs its
    /// default value do not matter.
    pub fn semantically_equal(&self, other: &PropertyString) -> bool {
        self.differences(other).is_empty()
    }

    /// Like `semantically_equal`, not looking at the keys in `ignore` (e.g. a drive's
    /// informational `size`).
    pub fn semantically_equal_ignoring(&self, other: &PropertyString, ignore: &[&str]) -> bool {
        self.differences(other).iter().all(|k| ignore.iter().any(|i| self.format.canonical_key(i) == k))
    }

    /// Whether `key` differs the way qemu-server's hot-plug code compares an old and a new value
    /// (pve-guest-common GuestHelpers.pm `safe_string_ne`, `safe_num_ne`): a key set on one side
    /// only differs even when it holds the default (`iothread=0` against no `iothread`); values set
    /// on both compare as parsed (boolean spellings, number spellings alike).
    pub fn differs_as_set(&self, other: &PropertyString, key: &str) -> bool {
        match (self.get(key), other.get(key)) {
            (None, None) => false,
            (Some(a), Some(b)) => {
                let kind = self.format.kind_of(key);
                semantic_value(kind, a) != semantic_value(kind, b)
            }
            _ => true,
        }
    }

    /// The keys whose semantic values differ, sorted.
    pub fn differences(&self, other: &PropertyString) -> Vec<String> {
        let mut keys: Vec<&str> = self.keys().chain(other.keys()).collect();
        keys.sort_unstable();
        keys.dedup();
        keys.into_iter().filter(|k| self.effective(k) != other.effective(k)).map(str::to_string).collect()
    }
}

impl fmt::Display for PropertyString {
    /// PVE's canonical form: the default key's value bare first (`<model>=<MAC>` for net when
    /// a MAC is set), then the other keys sorted, sizes with their canonical unit.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = Vec::with_capacity(self.entries.len());
        let mut skip: Vec<&str> = Vec::new();
        if let Some(dk) = self.format.default_key {
            if let Some(v) = self.get(dk) {
                skip.push(dk);
                match self.format.key_alias.filter(|ka| ka.key == dk) {
                    // `<model>=<MAC>` reads back as the keyAlias only for a model it knows.
                    Some(ka) if ka.keys.contains(&v) && self.get(ka.value_key).is_some() => {
                        skip.push(ka.value_key);
                        parts.push(format!("{v}={}", self.get(ka.value_key).unwrap_or("")));
                    }
                    // A bare value with `=` would read back as another key, a blank one not at
                    // all: those keep their key.
                    _ if v.contains('=') || v.trim().is_empty() => parts.push(format!("{dk}={v}")),
                    _ => parts.push(v.to_string()),
                }
            }
        }
        let mut rest: Vec<&(String, String)> =
            self.entries.iter().filter(|(k, _)| !skip.contains(&k.as_str())).collect();
        rest.sort_by(|a, b| a.0.cmp(&b.0));
        for (k, v) in rest {
            let v = match self.format.kind_of(k) {
                ValueType::Size => parse_size(v).map_or_else(|_| v.clone(), format_size),
                _ => v.clone(),
            };
            parts.push(format!("{k}={v}"));
        }
        f.write_str(&parts.join(","))
    }
}

/// What a parse stores for a value: booleans as `1`/`0`, MACs upper case, the rest as given.
fn normalize_value(kind: ValueType, value: &str) -> String {
    match kind {
        ValueType::Bool => match parse_boolean(value) {
            Some(b) => bool_text(b).to_string(),
            None => value.to_string(),
        },
        ValueType::Mac => normalize_mac(value).unwrap_or_else(|| value.to_string()),
        _ => value.to_string(),
    }
}

/// The form two values are compared in.
fn semantic_value(kind: ValueType, value: &str) -> String {
    match kind {
        ValueType::Bool => parse_boolean(value).map_or_else(|| value.to_string(), |b| bool_text(b).into()),
        ValueType::Int { .. } => value.parse::<i128>().map_or_else(|_| value.to_string(), |i| i.to_string()),
        ValueType::Number { .. } => match value.parse::<f64>() {
            // `{}` prints 10.0 as `10`, so equal numbers compare equal as text.
            Ok(n) if n.is_finite() && is_number(value) => format!("{}", n + 0.0),
            _ => value.to_string(),
        },
        ValueType::Size => parse_size(value).map_or_else(|_| value.to_string(), |b| b.to_string()),
        ValueType::Mac => value.to_ascii_uppercase(),
        ValueType::Enum(_) | ValueType::Str | ValueType::Pattern(_) | ValueType::Named(..) => value.to_string(),
    }
}

/// Checks a stored value as PVE's `check_object` would, with its wording.
fn check_value(kind: ValueType, value: &str) -> std::result::Result<(), String> {
    match kind {
        ValueType::Bool => {
            if value == "1" || value == "0" {
                Ok(())
            } else {
                Err(format!("type check ('boolean') failed - got '{value}'"))
            }
        }
        ValueType::Int { min, max } => {
            let n = if is_integer(value) { value.parse::<i128>().ok() } else { None };
            let Some(n) = n else {
                return Err(format!("type check ('integer') failed - got '{value}'"));
            };
            check_bounds(n as f64, min, max)
        }
        ValueType::Number { min } => match value.parse::<f64>() {
            Ok(n) if is_number(value) => check_bounds(n, min, None),
            _ => Err(format!("type check ('number') failed - got '{value}'")),
        },
        ValueType::Size => {
            parse_size(value).map(|_| ()).map_err(|_| format!("value does not look like a valid disk size: {value}"))
        }
        ValueType::Mac => normalize_mac(value)
            .map(|_| ())
            .ok_or_else(|| "value does not look like a valid unicast MAC address".to_string()),
        ValueType::Enum(values) => {
            if values.contains(&value) {
                Ok(())
            } else {
                Err(format!("value '{value}' does not have a value in the enumeration '{}'", values.join(", ")))
            }
        }
        ValueType::Str => Ok(()),
        ValueType::Pattern(re) => match super::pattern::compile(re) {
            Ok(r) if r.is_match(value) => Ok(()),
            Ok(_) => Err(format!("value does not match the regex pattern {re}")),
            Err(e) => Err(format!("internal error: bad pattern {re}: {e}")),
        },
        ValueType::Named(format, max_len) => {
            if let Some(max) = max_len.filter(|m| value.chars().count() > *m) {
                return Err(format!("value may only be {max} characters long"));
            }
            pveformat::verify(format, value)
        }
    }
}

fn check_bounds(n: f64, min: Option<i64>, max: Option<i64>) -> std::result::Result<(), String> {
    if let Some(min) = min {
        if n < min as f64 {
            return Err(format!("value must have a minimum value of {min}"));
        }
    }
    if let Some(max) = max {
        if n > max as f64 {
            return Err(format!("value must have a maximum value of {max}"));
        }
    }
    Ok(())
}

/// Perl `m/^[+-]?\d+$/` (ASCII digits).
pub(crate) fn is_integer(s: &str) -> bool {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
}

/// pve-common `is_number`: `^[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?$`.
pub(crate) fn is_number(s: &str) -> bool {
    let s = s.strip_prefix(['+', '-']).unwrap_or(s);
    let (mantissa, exponent) = match s.find(['e', 'E']) {
        Some(i) => (&s[..i], Some(&s[i + 1..])),
        None => (s, None),
    };
    if let Some(e) = exponent {
        if !is_integer(e) {
            return false;
        }
    }
    let (int, frac) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    match frac {
        None => !int.is_empty() && digits(int),
        Some(f) => (!int.is_empty() || !f.is_empty()) && digits(int) && digits(f),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests;

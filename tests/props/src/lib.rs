//! The properties ferro.proxmox keeps on any input (issue 9), shared by the property tests
//! (`cargo test -p ferro_props`, part of `make test`) and the cargo-fuzz targets in `tests/fuzz`
//! (`make fuzz`):
//!
//! - **module arguments** ([`check_args`]): whatever text arrives as a module's arguments,
//!   `protocol::execute` answers with one JSON object, never panics and never hangs; a rejected
//!   input gives `failed: true` and a message naming an option, a value of the input, or the
//!   arguments themselves; no `no_log` value is ever in the answer. The module body run here is
//!   the module's own argument checking (`Params::from_spec` and `connect::connection`),
//!   everything a module does before its first API call.
//! - **property strings** ([`check_propstring`]): parsing never panics; a string that parses
//!   prints in a form that parses again to the same value, and printing that gives the same text
//!   (canonical printing is a fixed point); a strict parse that succeeds also succeeds leniently.
//!
//! [`gen`] holds a small deterministic generator (xorshift, fixed seed): no new dependency, and
//! a failure names the seed and case so it can be replayed.

use std::time::{Duration, Instant};

use module_utils::ansible::spec::ModuleSpec;
use module_utils::connect::connection;
use module_utils::error::Result;
use module_utils::protocol::{execute, Context, ModuleMain, Outcome};
use module_utils::pve::propstring::{
    format_size, parse_gib_or_size, parse_size, Format, PropertyString, AGENT, DRIVE, EFIDISK, MEMORY, NET, TPMSTATE,
    UNUSED,
};
use serde_json::{Map, Value};

pub mod gen;

/// The generator's seed: `FERRO_PROP_SEED`, or a fixed default, so every run sees the same inputs.
pub fn seed() -> u64 {
    std::env::var("FERRO_PROP_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(0x5eed_f3e9_2026)
}

/// `tests/fuzz`: the cargo-fuzz workspace, its `corpus/` and `regressions/`.
pub fn fuzz_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz")
}

/// A no_log value the generator puts in `api_password` / `api_token_secret`: it must never be in
/// an answer.
pub const CANARY: &str = "CANARY-f7c3e1-fuzz-secret";

/// The longest a single input may take (debug build, 100 kB inputs included).
pub const MAX_DURATION: Duration = Duration::from_secs(3);

/// Every module of the collection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Module {
    VmInfo,
    Nic,
    Disk,
    Kvm,
}

pub const MODULES: [Module; 4] = [Module::VmInfo, Module::Nic, Module::Disk, Module::Kvm];

impl Module {
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    pub fn spec(self) -> &'static ModuleSpec {
        match self {
            Module::VmInfo => &proxmox_vm_info::SPEC,
            Module::Nic => &proxmox_nic::SPEC,
            Module::Disk => &proxmox_disk::SPEC,
            Module::Kvm => &proxmox_kvm::SPEC,
        }
    }

    /// The module's argument checking, without any I/O.
    pub fn body(self) -> ModuleMain {
        match self {
            Module::VmInfo => vm_info_args,
            Module::Nic => nic_args,
            Module::Disk => disk_args,
            Module::Kvm => kvm_args,
        }
    }

    pub fn by_name(name: &str) -> Option<Module> {
        MODULES.into_iter().find(|m| m.name() == name)
    }
}

fn accepted(ctx: &mut Context) -> Result<Outcome> {
    connection(&ctx.params)?;
    Ok(Outcome::new(false, "arguments accepted"))
}

fn vm_info_args(ctx: &mut Context) -> Result<Outcome> {
    proxmox_vm_info::Params::from_spec(&ctx.params)?;
    accepted(ctx)
}

fn nic_args(ctx: &mut Context) -> Result<Outcome> {
    proxmox_nic::Params::from_spec(&ctx.params, &mut |_| {})?;
    accepted(ctx)
}

fn disk_args(ctx: &mut Context) -> Result<Outcome> {
    proxmox_disk::Params::from_spec(&ctx.params)?;
    accepted(ctx)
}

fn kvm_args(ctx: &mut Context) -> Result<Outcome> {
    proxmox_kvm::Params::from_spec(&ctx.params, &mut |_| {})?;
    accepted(ctx)
}

/// The connection settings an inventory usually gives through the environment.
pub fn auth_env(key: &str) -> Option<String> {
    match key {
        "PROXMOX_HOST" => Some("pve1.example.org".into()),
        "PROXMOX_USER" => Some("ansible@pve".into()),
        "PROXMOX_TOKEN_ID" => Some("automation".into()),
        "PROXMOX_TOKEN_SECRET" => Some(CANARY.into()),
        _ => None,
    }
}

pub fn no_env(_: &str) -> Option<String> {
    None
}

/// Run `text` as `module`'s arguments and check every property; `Err` describes the violation.
/// The answer is returned for callers that look further.
pub fn check_args(module: Module, text: &str, with_env: bool) -> std::result::Result<(Value, i32), String> {
    let env: &dyn Fn(&str) -> Option<String> = if with_env { &auth_env } else { &no_env };
    let started = Instant::now();
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        execute(module.spec(), Ok(text.to_string()), env, module.body())
    }));
    let elapsed = started.elapsed();
    let (answer, code) = outcome.map_err(|_| {
        format!(
            "{}: panicked (a panic is a bug the process reports as a failure; no input may cause one)",
            module.name()
        )
    })?;
    if elapsed > MAX_DURATION {
        return Err(format!("{}: took {elapsed:?}", module.name()));
    }
    let Value::Object(obj) = &answer else {
        return Err(format!("{}: the answer is not a JSON object: {answer}", module.name()));
    };
    let printed = answer.to_string();
    if printed.contains(CANARY) && canary_is_secret(module.spec(), text, with_env) {
        return Err(format!("{}: the answer contains the no_log canary: {printed}", module.name()));
    }
    if serde_json::from_str::<Value>(&printed).ok().as_ref() != Some(&answer) {
        return Err(format!("{}: the answer does not print as one JSON object", module.name()));
    }
    let msg = obj.get("msg").and_then(Value::as_str).unwrap_or("");
    match code {
        0 => {
            if obj.contains_key("failed") || obj.get("changed") != Some(&Value::Bool(false)) {
                return Err(format!("{}: an accepted input answered {printed}", module.name()));
            }
        }
        1 => {
            if obj.get("failed") != Some(&Value::Bool(true)) || msg.is_empty() {
                return Err(format!("{}: a rejection without failed: true and a msg: {printed}", module.name()));
            }
            if msg.contains("internal error") || msg.contains("panicked") {
                return Err(format!("{}: a rejection that is a bug: {msg}", module.name()));
            }
            // Issue 15: a value is quoted cut, so a message stays readable whatever the input.
            if msg.chars().count() > MSG_MAX {
                return Err(format!("{}: a {}-character message", module.name(), msg.chars().count()));
            }
            if !names_the_culprit(module.spec(), text, msg) {
                return Err(format!("{}: the message names no option nor value of the input: {msg:?}", module.name()));
            }
        }
        other => return Err(format!("{}: exit code {other}", module.name())),
    }
    Ok((answer, code))
}

/// Whether the canary is a `no_log` value of this input (given to a no_log option or by the
/// environment); elsewhere, e.g. inside an unknown option's name, it is just text the user wrote.
fn canary_is_secret(spec: &ModuleSpec, text: &str, with_env: bool) -> bool {
    if with_env {
        return true;
    }
    let Ok(Value::Object(mut args)) = serde_json::from_str::<Value>(text) else { return false };
    if let Some(Value::Object(inner)) = args.remove("ANSIBLE_MODULE_ARGS") {
        args = inner;
    }
    let mut given = Vec::new();
    for opt in spec.all_options().into_iter().filter(|o| o.no_log) {
        for name in std::iter::once(opt.name).chain(opt.aliases.iter().copied()) {
            if let Some(v) = args.get(name) {
                collect_strings(v, &mut given);
            }
        }
    }
    given.iter().any(|v| v.contains(CANARY))
}

/// Whether a rejection message names an option of the module, a string of the input, or says
/// that the arguments as a whole are unusable.
/// The longest rejection message the modules may give (`Error::args` cuts at 1000 characters).
pub const MSG_MAX: usize = 1200;

pub fn names_the_culprit(spec: &ModuleSpec, text: &str, msg: &str) -> bool {
    if msg.contains("module arguments") {
        return true;
    }
    let option_named = spec
        .all_options()
        .iter()
        .flat_map(|o| std::iter::once(o.name).chain(o.aliases.iter().copied()))
        .any(|name| msg.contains(name));
    if option_named {
        return true;
    }
    let mut strings = Vec::new();
    if let Ok(v) = serde_json::from_str::<Value>(text) {
        collect_strings(&v, &mut strings);
    }
    // A long value is quoted cut (issue 15): its beginning is enough.
    strings
        .iter()
        .filter(|s| !s.trim().is_empty())
        .any(|s| msg.contains(s.as_str()) || msg.contains(&s.chars().take(40).collect::<String>()))
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(m) => m.iter().for_each(|(k, i)| {
            out.push(k.clone());
            collect_strings(i, out)
        }),
        _ => {}
    }
}

/// The property-string formats, indexed by the fuzz input's first byte.
pub static FORMATS: [&Format; 7] = [&NET, &DRIVE, &EFIDISK, &TPMSTATE, &UNUSED, &AGENT, &MEMORY];

/// Check parse / print / parse on one format and text.
pub fn check_propstring(format: &'static Format, text: &str) -> std::result::Result<(), String> {
    let strict = std::panic::catch_unwind(|| PropertyString::parse(format, text))
        .map_err(|_| format!("{}: parse panicked on {text:?}", format.name))?;
    let lenient = std::panic::catch_unwind(|| PropertyString::parse_lenient(format, text))
        .map_err(|_| format!("{}: lenient parse panicked on {text:?}", format.name))?;
    if let Err(e) = &strict {
        let m = e.to_string();
        if !(m.starts_with("invalid format - ") && m.contains(&format!("in {} value", format.name))) {
            return Err(format!("{}: a parse error in another form: {m}", format.name));
        }
    }
    if strict.is_ok() && lenient.is_err() {
        return Err(format!("{}: {text:?} parses strictly but not leniently", format.name));
    }
    if let Ok(ps) = &strict {
        round_trip(ps, text, true)?;
    }
    if let Ok(ps) = &lenient {
        round_trip(ps, text, false)?;
    }
    Ok(())
}

fn round_trip(ps: &PropertyString, text: &str, strict: bool) -> std::result::Result<(), String> {
    let name = ps.format().name;
    let printed = ps.to_string();
    let again = if strict {
        PropertyString::parse(ps.format(), &printed)
    } else {
        PropertyString::parse_lenient(ps.format(), &printed)
    };
    let mode = if strict { "strict" } else { "lenient" };
    let again =
        again.map_err(|e| format!("{name} ({mode}): {text:?} prints as {printed:?}, which does not parse: {e}"))?;
    if !again.semantically_equal(ps) {
        return Err(format!(
            "{name} ({mode}): {text:?} prints as {printed:?}, which parses to another value (differences: {:?})",
            again.differences(ps)
        ));
    }
    let reprinted = again.to_string();
    if reprinted != printed {
        return Err(format!("{name} ({mode}): printing is not canonical: {printed:?} then {reprinted:?}"));
    }
    Ok(())
}

/// Sizes: `format_size` output parses back to the same bytes; parsing never panics.
pub fn check_size(text: &str) -> std::result::Result<(), String> {
    if let Ok(bytes) = parse_size(text) {
        let printed = format_size(bytes);
        match parse_size(&printed) {
            Ok(b) if b == bytes => {}
            other => return Err(format!("size {text:?} = {bytes} prints as {printed:?}, which parses to {other:?}")),
        }
    }
    let _ = parse_gib_or_size(text);
    Ok(())
}

/// The fuzz entry for property strings: the first byte picks the format.
pub fn fuzz_propstring(data: &[u8]) -> std::result::Result<(), String> {
    let Some((first, rest)) = data.split_first() else { return Ok(()) };
    let format = FORMATS[usize::from(*first) % FORMATS.len()];
    let text = String::from_utf8_lossy(rest);
    check_propstring(format, &text)?;
    check_size(&text)
}

/// The fuzz entry for a module's arguments: the first byte says whether the environment gives
/// the connection settings, the rest is the arguments text.
pub fn fuzz_args(module: Module, data: &[u8]) -> std::result::Result<(), String> {
    let Some((first, rest)) = data.split_first() else { return Ok(()) };
    let text = String::from_utf8_lossy(rest);
    check_args(module, &text, first % 2 == 0).map(|_| ())
}

/// Build an arguments object from pairs (for tests).
pub fn args(pairs: &[(&str, Value)]) -> String {
    let m: Map<String, Value> = pairs.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    Value::Object(m).to_string()
}

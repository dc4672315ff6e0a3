//! The Ansible binary-module protocol: read the arguments, run the module, print exactly one JSON
//! object. This is the only place in the workspace that prints or exits.
//!
//! Input: a JSON object in the file named by `argv[1]` (how ansible-core runs binary modules), or
//! on stdin when there is no argument (how our action plugin runs a local binary). The object
//! holds the user's options plus `_ansible_*` keys; unknown `_ansible_*` keys are ignored because
//! their set changes between ansible-core versions. Output: one JSON object on stdout, also when
//! the arguments are unreadable and when the module panics; every `no_log` value is masked in it.
//!
//! `changed` is decided here too: a module's own answer, or `true` as soon as the run's
//! `WriteJournal` holds a write Proxmox accepted, also when the module then fails (a task slower
//! than `timeout`, a read-back answering 500, a destroy failing after its stop). The message then
//! says what was applied and what failed, so a change once made is always reported; a failed
//! task that changed nothing (the journal settled it, `pve::footprint`) is no change.

use std::io::Read;
use std::panic;

use crate::pve::journal::WriteJournal;

use serde_json::{json, Map, Value};

use crate::ansible::diff::Diff;
use crate::ansible::spec::{Args, ModuleSpec};
use crate::ansible::validate;
use crate::check::predictions::Predictions;
use crate::check::saved::SavedTask;
use crate::error::{Error, Result};

/// The run's check-mode predictions, handed in by the action plugin (`check::predictions`).
const PLAN_IN: &str = "_ferro_check_plan";
/// What the task predicted, handed back to the action plugin.
const PLAN_OUT: &str = "_ferro_check_plan_recorded";
/// The saved plan the run saves or applies, handed in by the action plugin (`check::saved`).
const SAVED_IN: &str = "_ferro_saved_plan";
/// What the task read and would write, handed back for the saved plan.
const SAVED_OUT: &str = "_ferro_saved_plan_recorded";

/// What a module sees of its run: validated options and Ansible's flags.
#[derive(Debug)]
pub struct Context {
    pub params: Args,
    pub check_mode: bool,
    /// In check mode, the predictions of the run's earlier tasks (`check::predictions`).
    pub predictions: Option<Predictions>,
    /// The saved plan this run saves (check mode) or applies (`check::saved`).
    pub saved: Option<SavedTask>,
    pub diff_mode: bool,
    pub verbosity: u64,
    /// The writes Proxmox accepted in this run; the client records into it (`connect::connect`).
    pub journal: WriteJournal,
    warnings: Vec<String>,
    deprecations: Vec<Value>,
    /// What the run acts on (`vmid`), once known: returned on failure too, as upstream's
    /// `fail_json(vmid=...)` does, so a failed task still says which VM it was about.
    subject: Map<String, Value>,
}

impl Context {
    /// A context for tests and for callers that validated elsewhere.
    pub fn new(params: Args, check_mode: bool, diff_mode: bool) -> Self {
        let warnings = params.warnings().to_vec();
        Context {
            params,
            check_mode,
            predictions: None,
            saved: None,
            diff_mode,
            verbosity: 0,
            journal: WriteJournal::default(),
            warnings,
            deprecations: Vec::new(),
            subject: Map::new(),
        }
    }

    /// The context of a run that failed before its options were validated.
    fn bare() -> Self {
        Context::new(Args::default(), false, false)
    }

    /// Record a key that identifies what the run acts on (`vmid`); a failure returns it too.
    /// A success returns the module's own `Outcome` fields, which name it again.
    pub fn identify(&mut self, key: &str, value: impl Into<Value>) {
        self.subject.insert(key.to_string(), value.into());
    }

    /// Add a warning to the result (shown as `[WARNING]: ...`).
    pub fn warn(&mut self, msg: impl Into<String>) {
        let msg = msg.into();
        if !self.warnings.contains(&msg) {
            self.warnings.push(msg);
        }
    }

    /// Add a deprecation to the result, in the dict form ansible-core renders.
    pub fn deprecate(&mut self, msg: impl Into<String>, version: &str) {
        self.deprecations.push(json!({
            "msg": msg.into(),
            "version": version,
            "collection_name": "ferro.proxmox",
        }));
    }

    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// Build a module's typed params from the validated options; the warnings the conversion
    /// raises (an ignored option, say) go into the result.
    pub fn parse<T>(&mut self, from_spec: impl FnOnce(&Args, &mut dyn FnMut(String)) -> Result<T>) -> Result<T> {
        let mut raised = Vec::new();
        let parsed = from_spec(&self.params, &mut |w| raised.push(w));
        for w in raised {
            self.warn(w);
        }
        parsed
    }
}

/// A module's successful result.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Outcome {
    pub changed: bool,
    pub msg: String,
    /// Only emitted in diff mode.
    pub diff: Option<Diff>,
    /// Module-specific return values (`vmid`, `mac`, `proxmox_vms`, ...).
    pub fields: Map<String, Value>,
}

impl Outcome {
    pub fn new(changed: bool, msg: impl Into<String>) -> Self {
        Outcome { changed, msg: msg.into(), ..Default::default() }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.fields.insert(key.to_string(), value.into());
        self
    }

    pub fn with_diff(mut self, diff: Option<Diff>) -> Self {
        self.diff = diff;
        self
    }
}

/// The signature of a module's body.
pub type ModuleMain = fn(&mut Context) -> Result<Outcome>;

/// A module as the multi-call binary knows it: its spec (`spec.name` is the module's name) and body.
pub type Module = (&'static ModuleSpec, ModuleMain);

/// Run a module as a process: read arguments, execute, print one JSON object, exit.
pub fn run(spec: &'static ModuleSpec, body: ModuleMain) -> ! {
    let input = read_input();
    let env = |k: &str| std::env::var(k).ok();
    let (result, code) = run_body(spec, input, &env, body, PanicReport::PrintAndExit);
    emit(&result, code)
}

/// Run the module that the program's own name (argv[0]) names, as the one binary that holds
/// every module does: it is run through a link, or a copy, named after the module.
pub fn run_named(modules: &[Module]) -> ! {
    let argv0 = std::env::args_os().next().map(|a| a.to_string_lossy().into_owned()).unwrap_or_default();
    match module_named(&argv0, modules) {
        Ok((spec, body)) => run(spec, *body),
        Err(e) => emit(&failure(&e, None, &Context::bare()), 1),
    }
}

/// The module whose name is the file name of `argv0`.
fn module_named<'a>(argv0: &str, modules: &'a [Module]) -> Result<&'a Module> {
    let name = std::path::Path::new(argv0).file_name().map(|n| n.to_string_lossy()).unwrap_or_default();
    modules.iter().find(|(spec, _)| spec.name == name).ok_or_else(|| {
        let names: Vec<&str> = modules.iter().map(|(spec, _)| spec.name).collect();
        Error::args(format!(
            "this binary runs the module named by the name it is run as (argv[0]), and {argv0:?} names none: \
             run it through a link or copy named {}",
            names.join(", ")
        ))
    })
}

/// The one print of the workspace: exactly one JSON object on stdout, then exit.
fn emit(result: &Value, code: i32) -> ! {
    #[allow(clippy::print_stdout)]
    {
        println!("{result}");
    }
    std::process::exit(code)
}

fn read_input() -> Result<String> {
    match std::env::args_os().nth(1) {
        Some(path) => std::fs::read_to_string(&path).map_err(|e| {
            Error::args(format!("unable to read the module arguments from {}: {e}", path.to_string_lossy()))
        }),
        None => {
            let mut text = String::new();
            std::io::stdin()
                .read_to_string(&mut text)
                .map_err(|e| Error::args(format!("unable to read the module arguments from stdin: {e}")))?;
            Ok(text)
        }
    }
}

/// Parse the arguments text into user options and Ansible's flags.
fn parse_input(text: &str) -> Result<(Map<String, Value>, Map<String, Value>)> {
    if text.trim().is_empty() {
        return Err(Error::args(
            "no module arguments: expected a JSON object in the file named by the first argument, or on stdin",
        ));
    }
    let value: Value =
        serde_json::from_str(text).map_err(|e| Error::args(format!("the module arguments are not valid JSON: {e}")))?;
    let Value::Object(mut object) = value else {
        return Err(Error::args("the module arguments must be a JSON object"));
    };
    // Accept the Python-module wrapper too, so the binary can be fed an AnsiballZ-style file.
    if object.len() == 1 {
        if let Some(Value::Object(inner)) = object.remove("ANSIBLE_MODULE_ARGS") {
            object = inner;
        }
    }
    let (internal, user): (Map<String, Value>, Map<String, Value>) =
        object.into_iter().partition(|(k, _)| k.starts_with("_ansible_") || k.starts_with("_ferro_"));
    Ok((user, internal))
}

/// Values of `no_log` options as given (or from their environment fallbacks), known before
/// validation so that even a validation error cannot echo them.
fn raw_no_log_values(
    spec: &ModuleSpec,
    user: &Map<String, Value>,
    env: &dyn Fn(&str) -> Option<String>,
) -> Vec<String> {
    let mut values = Vec::new();
    for opt in spec.all_options().into_iter().filter(|o| o.no_log) {
        let names = std::iter::once(opt.name).chain(opt.aliases.iter().copied());
        for name in names {
            if let Some(v) = user.get(name) {
                collect_strings(v, &mut values);
            }
        }
        for var in opt.env {
            if let Some(v) = env(var) {
                values.push(v);
            }
        }
    }
    values.retain(|v| !v.is_empty());
    values
}

fn collect_strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Value::Object(m) => m.values().for_each(|i| collect_strings(i, out)),
        Value::Null => {}
        other => out.push(validate::scalar_text(other)),
    }
}

/// Run the module on already-read input; returns the result object and the exit code.
/// Separate from `run` so the whole protocol is testable in-process (where a panic stays the
/// test's own: only `run`, the process, reports a panic as the module's result).
pub fn execute(
    spec: &'static ModuleSpec,
    input: Result<String>,
    env: &dyn Fn(&str) -> Option<String>,
    body: ModuleMain,
) -> (Value, i32) {
    run_body(spec, input, env, body, PanicReport::Leave)
}

/// Whether a panic in the module's body is reported as its result (the process) or left alone
/// (in-process callers: a test's panic is the test's failure).
#[derive(Clone, Copy, PartialEq)]
enum PanicReport {
    PrintAndExit,
    Leave,
}

fn run_body(
    spec: &'static ModuleSpec,
    input: Result<String>,
    env: &dyn Fn(&str) -> Option<String>,
    body: ModuleMain,
    panics: PanicReport,
) -> (Value, i32) {
    let parsed = input.and_then(|text| parse_input(&text));
    let (user, internal) = match parsed {
        Ok(p) => p,
        Err(e) => return (failure(&e, None, &Context::bare()), 1),
    };
    let mut no_log = raw_no_log_values(spec, &user, env);
    if panics == PanicReport::PrintAndExit {
        // validation and set-up, before the run has an invocation or a journal
        report_panics(None, WriteJournal::default(), no_log.clone());
    }
    let flag = |k: &str| internal.get(k).and_then(validate::parse_ansible_bool).unwrap_or(false);

    let params = match validate::validate(spec, &user, env) {
        Ok(p) => p,
        Err(e) => {
            let result = failure(&e, None, &Context::bare());
            return (mask(result, &no_log), 1);
        }
    };
    no_log.extend(params.no_log_values().iter().cloned());
    let mut ctx = Context::new(params, flag("_ansible_check_mode"), flag("_ansible_diff"));
    ctx.verbosity = internal.get("_ansible_verbosity").and_then(Value::as_u64).unwrap_or(0);
    if ctx.check_mode {
        ctx.predictions = internal.get(PLAN_IN).map(Predictions::from_json);
    }
    // A check run saves a plan, a real run applies one; the other way round is nothing.
    ctx.saved = internal.get(SAVED_IN).and_then(SavedTask::from_json).filter(|s| s.applying() != ctx.check_mode);
    let invocation = json!({"module_args": ctx.params.as_json()});

    if panics == PanicReport::PrintAndExit {
        report_panics(Some(invocation.clone()), ctx.journal.clone(), no_log.clone());
    }
    let outcome = body(&mut ctx);
    // The plugin's whole-run verification of a saved plan ends the body once connected
    // (`check::plan_verify`); when the plan holds, its answer is the result.
    let outcome = match ctx.saved.as_ref().and_then(SavedTask::held) {
        Some(answer) => Ok(Outcome::new(false, answer)),
        None => outcome.and_then(|o| unmade(&ctx, o)),
    };

    let (result, code) = match outcome {
        Ok(outcome) => (success(outcome, &ctx, invocation), 0),
        Err(e) => (failure(&e, Some(invocation), &ctx), 1),
    };
    // What this task predicted, for the later tasks of the check run (also after a failure, as a
    // real run's accepted writes stay made): the action plugin stores it and removes the key.
    // Predictions and the saved plan's record are masked by whole values only: a secret inside
    // another string (`web` in `existing-web`) is not the secret, and masking it there would
    // corrupt the name a later task or the plan compares (issue 33).
    let mut result = mask(result, &no_log);
    if let (Some(plan), Value::Object(map)) = (&ctx.predictions, &mut result) {
        let recorded = plan.recorded();
        if !recorded.is_empty() {
            map.insert(PLAN_OUT.into(), mask_whole(json!(recorded), &no_log));
        }
    }
    // For the plan the check run saves: each secret already as the keyed hash the plugin handed
    // in (docs/saved-plans.md); the plugin removes the key from the result.
    if let (Some(saved), Value::Object(map)) = (&ctx.saved, &mut result) {
        if !saved.applying() {
            map.insert(SAVED_OUT.into(), saved.recorded_json());
        }
    }
    (result, code)
}

/// A real run applying a saved plan whose task found nothing left to do where the plan wrote
/// (a VM already gone, a planned reboot of a VM now stopped) did less than the plan: a failure
/// naming what did not run (`SavedTask::unmade`).
fn unmade(ctx: &Context, outcome: Outcome) -> Result<Outcome> {
    match ctx.saved.as_ref().and_then(SavedTask::unmade) {
        Some(writes) => Err(Error::failed(format!(
            "the saved plan no longer holds: this task found nothing to do where the plan writes ({}: {}); \
             its planned writes did not run: {writes}",
            outcome.msg.trim_end_matches('.'),
            "done or made impossible by someone else since the plan"
        ))),
        None => Ok(outcome),
    }
}

/// A panic is a bug, but the user must still get one JSON object that says so, masked, and
/// `changed` when Proxmox already accepted a write. The hook prints it and exits before any
/// unwinding: the release build aborts on a panic (Cargo.toml, ARCHITECTURE.md "Release size"),
/// so there is nothing to catch; every build of the process takes this one path.
///
/// The report is built on a bare context: it has the run's accepted writes, but not the
/// warnings or the `vmid` a failure returns otherwise (a bug's report, not a task's result).
fn report_panics(invocation: Option<Value>, journal: WriteJournal, no_log: Vec<String>) {
    panic::set_hook(Box::new(move |info| {
        let payload = info.payload();
        let text = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".to_string());
        let location = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        let mut ctx = Context::bare();
        ctx.journal = journal.snapshot();
        let e = Error::Internal(format!("the module panicked: {text}{location}"));
        emit(&mask(failure(&e, invocation.clone(), &ctx), &no_log), 1)
    }));
}

fn success(outcome: Outcome, ctx: &Context, invocation: Value) -> Value {
    let mut result = Map::new();
    // A write Proxmox accepted is a change, whatever the module concluded.
    result.insert("changed".into(), Value::Bool(outcome.changed || ctx.journal.changed()));
    if !outcome.msg.is_empty() {
        result.insert("msg".into(), Value::String(outcome.msg));
    }
    for (k, v) in outcome.fields {
        result.insert(k, v);
    }
    if ctx.diff_mode {
        if let Some(diff) = outcome.diff {
            result.insert("diff".into(), diff.to_json());
        }
    }
    if !ctx.warnings.is_empty() {
        result.insert("warnings".into(), json!(ctx.warnings));
    }
    if !ctx.deprecations.is_empty() {
        result.insert("deprecations".into(), json!(ctx.deprecations));
    }
    report_retries(&mut result, &ctx.journal);
    result.insert("invocation".into(), invocation);
    Value::Object(result)
}

fn failure(e: &Error, invocation: Option<Value>, ctx: &Context) -> Value {
    let (warnings, deprecations) = (&ctx.warnings, &ctx.deprecations);
    let mut result = Map::new();
    result.insert("failed".into(), Value::Bool(true));
    result.insert("changed".into(), Value::Bool(false));
    result.insert("msg".into(), Value::String(e.to_string()));
    for (k, v) in &ctx.subject {
        result.insert(k.clone(), v.clone());
    }
    match e {
        Error::TaskFailed { upid, exitstatus, log_tail, .. } => {
            result.insert("upid".into(), json!(upid));
            result.insert("exitstatus".into(), json!(exitstatus));
            result.insert("task_log".into(), json!(log_tail));
        }
        Error::TaskTimeout { upid, .. } => {
            result.insert("upid".into(), json!(upid));
        }
        Error::Api { status, .. } => {
            result.insert("status_code".into(), json!(status));
        }
        _ => {}
    }
    if !warnings.is_empty() {
        result.insert("warnings".into(), json!(warnings));
    }
    if !deprecations.is_empty() {
        result.insert("deprecations".into(), json!(deprecations));
    }
    report_retries(&mut result, &ctx.journal);
    if let Some(inv) = invocation {
        result.insert("invocation".into(), inv);
    }
    let mut result = Value::Object(result);
    report_accepted(&mut result, &ctx.journal);
    result
}

/// The requests sent again after a transient refusal and the lost answers reconciled
/// (`pve::transient`, docs/pve-semantics.md §55), when there were any: `retries`, one line each.
fn report_retries(result: &mut Map<String, Value>, journal: &WriteJournal) {
    let retries = journal.retries();
    if !retries.is_empty() {
        result.insert("retries".into(), json!(retries));
    }
}

/// A failure after Proxmox applied a write is still a change: `changed: true`, those writes in
/// `accepted_writes`, and a message that says what was done before what failed. A task PVE
/// refused before its effect (the journal settled it against its footprint, §31) is no change:
/// it is listed in `refused_writes` and the message says that nothing was changed by it.
fn report_accepted(result: &mut Value, journal: &WriteJournal) {
    let (applied, refused) = (journal.lines(), journal.refused_lines());
    let failed = result["msg"].as_str().unwrap_or_default().to_string();
    let msg = match (applied.is_empty(), refused.is_empty()) {
        (true, true) => return,
        (true, false) => format!("Proxmox VE refused {}; nothing was changed. {failed}", refused.join("; ")),
        (false, _) => {
            let verb = if journal.all_ended() { "applied" } else { "accepted" };
            let also = if refused.is_empty() {
                String::new()
            } else {
                format!(" Proxmox VE refused {}, which changed nothing.", refused.join("; "))
            };
            format!(
                "Proxmox VE {verb} these changes before the run failed: {}.{also} Then: {failed}",
                applied.join("; ")
            )
        }
    };
    result["msg"] = Value::String(msg);
    if !applied.is_empty() {
        result["changed"] = Value::Bool(true);
        result["accepted_writes"] = json!(applied);
    }
    if !refused.is_empty() {
        result["refused_writes"] = json!(refused);
    }
}

/// AnsibleModule's `remove_values`: a string equal to a secret becomes
/// `VALUE_SPECIFIED_IN_NO_LOG_PARAMETER`, a secret inside a longer string becomes `********`.
pub fn mask(value: Value, secrets: &[String]) -> Value {
    if secrets.is_empty() {
        return value;
    }
    match value {
        Value::String(s) => Value::String(mask_str(&s, secrets)),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| mask(v, secrets)).collect()),
        Value::Object(m) => {
            Value::Object(m.into_iter().map(|(k, v)| (mask_str(&k, secrets), mask(v, secrets))).collect())
        }
        Value::Number(n) => {
            let text = n.to_string();
            if secrets.contains(&text) {
                Value::String("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER".into())
            } else {
                Value::Number(n)
            }
        }
        other => other,
    }
}

/// `value` with each string that is a whole secret replaced, as `mask` does; a secret inside
/// another string is left.
fn mask_whole(value: Value, secrets: &[String]) -> Value {
    match value {
        Value::String(s) if secrets.contains(&s) => Value::String("VALUE_SPECIFIED_IN_NO_LOG_PARAMETER".into()),
        Value::Array(items) => Value::Array(items.into_iter().map(|v| mask_whole(v, secrets)).collect()),
        Value::Object(m) => Value::Object(m.into_iter().map(|(k, v)| (k, mask_whole(v, secrets))).collect()),
        other => other,
    }
}

fn mask_str(s: &str, secrets: &[String]) -> String {
    if secrets.iter().any(|x| x == s) {
        return "VALUE_SPECIFIED_IN_NO_LOG_PARAMETER".into();
    }
    let mut out = s.to_string();
    // Longest first, so a secret that contains another is masked whole.
    let mut sorted: Vec<&String> = secrets.iter().collect();
    sorted.sort_by_key(|x| std::cmp::Reverse(x.len()));
    for secret in sorted {
        if out.contains(secret.as_str()) {
            out = out.replace(secret.as_str(), "********");
        }
    }
    out
}

#[cfg(test)]
mod tests;

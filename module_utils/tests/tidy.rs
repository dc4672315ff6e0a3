//! Consistency of the repository as ordinary tests (rust-analyzer's tidy tests in spirit): the layer
//! rules of module_utils, the size of source files, the common shape of the module crates, and one
//! module list everywhere a module is wired.
//!
//! Each rule is a pure checker over (path, text) fixtures, run once on the repository and once on a
//! deliberately broken fixture, so a checker that cannot fail would be seen.
#![allow(clippy::expect_used, clippy::unwrap_used)]

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

#[path = "tidy/asserts.rs"]
mod asserts;
#[path = "tidy/imports.rs"]
mod imports;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("module_utils has a parent").to_path_buf()
}

/// Every file under `dir` (relative to the repo root) whose name ends in `ext`, as (path, text).
fn files_under(dir: &str, ext: &str) -> Vec<(String, String)> {
    const SKIP: &[&str] = &["target", ".venv", "build", "dist", ".git", "__pycache__", "node_modules"];
    let root = repo_root();
    let mut out = Vec::new();
    let mut stack = vec![root.join(dir)];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let name = entry.file_name().to_string_lossy().to_string();
            if path.is_dir() {
                if !SKIP.contains(&name.as_str()) {
                    stack.push(path);
                }
            } else if name.ends_with(ext) {
                let rel = path.strip_prefix(&root).expect("under the root").to_string_lossy().replace('\\', "/");
                out.push((rel, fs::read_to_string(&path).unwrap_or_default()));
            }
        }
    }
    out.sort();
    out
}

// ------------------------------------------------------------------------------------ layers

/// What each layer of module_utils/src must not import: `pve/` knows nothing of Ansible, check mode
/// or the protocol; `ansible/` nothing of PVE; `check/` sits under the protocol.
const LAYER_RULES: &[(&str, &[&str])] = &[
    ("module_utils/src/pve/", &["crate::ansible", "crate::check", "crate::protocol", "crate::connect"]),
    ("module_utils/src/ansible/", &["crate::pve", "crate::check", "crate::protocol", "crate::connect"]),
    ("module_utils/src/check/", &["crate::ansible", "crate::protocol", "crate::connect"]),
];

/// One line per import that breaks a layer rule: `path:line: uses crate::x`. Every form of import
/// counts (tidy/imports.rs): grouped, nested, `pub use`, `super::`, multi-line, inline paths.
fn layer_violations(files: &[(String, String)]) -> Vec<String> {
    let all = imports::imports(files);
    let mut out = Vec::new();
    for (path, _) in files {
        for (layer, forbidden) in LAYER_RULES {
            if !path.starts_with(layer) {
                continue;
            }
            let mut seen = BTreeSet::new();
            for imp in all.get(path).into_iter().flatten() {
                for f in *forbidden {
                    let hit = imp.path == *f || imp.path.starts_with(&format!("{f}::"));
                    if hit && seen.insert((imp.line, *f)) {
                        out.push(format!("{path}:{}: uses {f}", imp.line));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn layers_import_only_downwards() {
    let files = files_under("module_utils/src", ".rs");
    assert!(files.iter().any(|(p, _)| p.starts_with("module_utils/src/pve/")), "no files found: {files:?}");
    let bad = layer_violations(&files);
    assert!(bad.is_empty(), "layer rules of ARCHITECTURE.md broken:\n{}", bad.join("\n"));
}

#[test]
fn layer_checker_sees_a_break() {
    let f = |p: &str, t: &str| (format!("module_utils/src/{p}"), t.to_string());
    let fixture = vec![
        f("pve/client.rs", "use crate::protocol::Context;\n"),
        f("ansible/spec.rs", "// crate::pve::x in a comment\nfn f() { let s = \"crate::pve::y\"; }\n"),
        f("ansible/diff.rs", "use crate::pve::devices::natural_cmp;\n"),
        f("protocol.rs", "use crate::pve::journal::WriteJournal;\n"),
        f("pve/a.rs", "use crate::{error::Error, protocol::Context};\n"),
        f("pve/b.rs", "use crate::{\n    error::Error,\n    check::{world::World, unknown},\n};\n"),
        f("pve/c.rs", "pub use crate::ansible::spec::Spec;\n"),
        f("pve/d.rs", "use super::super::connect::Connection;\n"),
        f("pve/e.rs", "fn f() { crate::protocol::exit(); }\n"),
        f("check/x.rs", "use crate::{pve::state::State, Error};\n"),
        f("check/mod.rs", "mod inner { use super::super::ansible::diff; }\n"),
    ];
    assert_eq!(
        layer_violations(&fixture),
        vec![
            "module_utils/src/pve/client.rs:1: uses crate::protocol".to_string(),
            "module_utils/src/ansible/diff.rs:1: uses crate::pve".to_string(),
            "module_utils/src/pve/a.rs:1: uses crate::protocol".to_string(),
            "module_utils/src/pve/b.rs:1: uses crate::check".to_string(),
            "module_utils/src/pve/c.rs:1: uses crate::ansible".to_string(),
            "module_utils/src/pve/d.rs:1: uses crate::connect".to_string(),
            "module_utils/src/pve/e.rs:1: uses crate::protocol".to_string(),
            "module_utils/src/check/mod.rs:1: uses crate::ansible".to_string(),
        ]
    );
}

/// Import circles between files of module_utils allowed, each with its reason. None: `pve/` has
/// none since issue 28 (request types in pve/request.rs, `StorageConfig` in storage.rs, the
/// hot-plug rule reading the config and not the other way round).
const CIRCLES_ALLOWED: &[&str] = &[];

#[test]
fn no_import_circle_between_files() {
    let files = files_under("module_utils/src", ".rs");
    let g = imports::graph(&files);
    assert!(g.get("crate::pve::client").is_some_and(|to| !to.is_empty()), "no imports found: {g:?}");
    let bad: Vec<String> =
        imports::circles(&g).into_iter().filter(|c| !CIRCLES_ALLOWED.contains(&c.as_str())).collect();
    assert!(bad.is_empty(), "import circles between files of module_utils (ARCHITECTURE.md):\n{}", bad.join("\n"));
}

#[test]
fn circle_checker_sees_a_break() {
    let f = |p: &str, t: &str| (format!("module_utils/src/{p}"), t.to_string());
    let fixture = vec![
        f("lib.rs", "pub mod pve;\npub mod error;\npub use error::{Error, Result};\n"),
        f("error.rs", "use crate::pve::client::ApiPath;\n"),
        f("pve/mod.rs", "pub mod client;\npub mod schema;\npub mod config;\npub mod hotplug;\n"),
        f("pve/client.rs", "use crate::Result;\nuse super::{schema::check_write, config};\nmod tests;\n"),
        f("pve/client/tests.rs", "use crate::pve::hotplug::Hotplug;\n"),
        f("pve/schema.rs", "pub fn check_write() {}\n"),
        f("pve/config.rs", "pub fn c() {}\n#[cfg(test)]\nmod tests {\n    use crate::pve::hotplug::H;\n}\n"),
        f("pve/hotplug.rs", "fn h() { crate::pve::client::get(); }\n"),
    ];
    assert_eq!(imports::circles(&imports::graph(&fixture)), vec!["crate::error <-> crate::pve::client".to_string()]);
    let mut fixture = fixture;
    fixture.push(f("pve/config.rs", "use super::hotplug::Hotplug;\n"));
    fixture.retain(|(p, t)| !(p.ends_with("config.rs") && t.contains("cfg(test)")));
    assert_eq!(
        imports::circles(&imports::graph(&fixture)),
        // One strongly connected part: the two circles share pve::client.
        vec!["crate::error <-> crate::pve::client <-> crate::pve::config <-> crate::pve::hotplug".to_string()]
    );
}

// --------------------------------------------------------------------------- the only ones

/// What exactly one file may do (ARCHITECTURE.md's "only" sentences): the words that do it, and
/// the file. Only `protocol.rs` prints or exits; only `pve/client.rs` does network I/O (ureq).
const ONLY_HERE: &[(&[&str], &str)] = &[
    (&["println!", "print!", "eprintln!", "eprint!", "process::exit", "stdout()"], "module_utils/src/protocol.rs"),
    (&["ureq"], "module_utils/src/pve/client.rs"),
];

/// One line per use of an `ONLY_HERE` word outside its file (test files and comments aside).
fn only_here_violations(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    // A build script (multicall/build.rs) speaks to cargo on its stdout; it is no part of the binary.
    let checked = |p: &str| !is_test_or_generated(p) && !p.ends_with("/build.rs");
    for (path, text) in files.iter().filter(|(p, _)| checked(p)) {
        for (n, line) in asserts::code_only(text).lines().enumerate() {
            for (words, home) in ONLY_HERE {
                for w in words.iter().filter(|w| path != home && has_word(line, w)) {
                    out.push(format!("{path}:{}: {w} (only {home} may)", n + 1));
                }
            }
        }
    }
    out
}

#[test]
fn only_protocol_prints_and_only_the_client_does_network_io() {
    let mut files = files_under("module_utils/src", ".rs");
    files.extend(files_under("modules", ".rs"));
    files.extend(files_under("multicall", ".rs"));
    assert!(files.iter().any(|(p, t)| p.ends_with("pve/client.rs") && t.contains("ureq")), "no files found");
    let bad = only_here_violations(&files);
    assert!(bad.is_empty(), "ARCHITECTURE.md's \"only\" rules broken:\n{}", bad.join("\n"));
}

#[test]
fn only_here_checker_sees_a_break() {
    let f = |p: &str, t: &str| (p.to_string(), t.to_string());
    let fixture = vec![
        f("module_utils/src/protocol.rs", "println!(\"{x}\");\nstd::process::exit(1)\n"),
        f("module_utils/src/pve/client.rs", "use ureq::Agent;\n"),
        f("modules/proxmox_nic/src/lib.rs", "// println! in a comment\nlet s = \"ureq\";\neprintln!(\"x\");\n"),
        f("module_utils/src/pve/tasks.rs", "let a = ureq::agent();\n"),
        f("modules/proxmox_nic/src/tests.rs", "println!(\"a test may\");\n"),
    ];
    assert_eq!(
        only_here_violations(&fixture),
        vec![
            "modules/proxmox_nic/src/lib.rs:3: eprintln! (only module_utils/src/protocol.rs may)".to_string(),
            "module_utils/src/pve/tasks.rs:1: ureq (only module_utils/src/pve/client.rs may)".to_string(),
        ]
    );
}

// ------------------------------------------------------------------------------- file sizes

const MAX_LINES: usize = 600;

/// Files over the limit that a later step splits, each with its size today: it may shrink, never grow.
/// None today: every source file is within the limit.
const OVERSIZED: &[(&str, usize)] = &[];

/// Whether a file is a test or generated: exempt from the size limit.
fn is_test_or_generated(path: &str) -> bool {
    path.starts_with("tests/")
        || path.starts_with("plugins/modules/")
        || path.ends_with("/tests.rs")
        || path.contains("/tests/")
        || path.contains("/benches/")
}

/// One line per source file over the limit (beyond its recorded size, if it has one), and per
/// recorded exception that is gone or back under the limit (so the list stays true).
fn oversized(files: &[(String, String)], exceptions: &[(&str, usize)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files.iter().filter(|(p, _)| !is_test_or_generated(p)) {
        let lines = text.lines().count();
        match exceptions.iter().find(|(p, _)| p == path) {
            Some((_, allowed)) if lines > *allowed => {
                out.push(format!("{path}: {lines} lines, grew past its recorded {allowed}"))
            }
            Some(_) if lines <= MAX_LINES => {
                out.push(format!("{path}: {lines} lines, now within {MAX_LINES}: drop it from OVERSIZED"))
            }
            Some(_) => {}
            None if lines > MAX_LINES => out.push(format!("{path}: {lines} lines (limit {MAX_LINES})")),
            None => {}
        }
    }
    for (path, _) in exceptions {
        if !files.iter().any(|(p, _)| p == path) {
            out.push(format!("{path}: listed in OVERSIZED but not found"));
        }
    }
    out
}

#[test]
fn no_source_file_over_600_lines() {
    let mut files = Vec::new();
    for dir in ["module_utils", "modules", "multicall", "bench"] {
        files.extend(files_under(dir, ".rs"));
    }
    for dir in ["plugins", "tools", "bench"] {
        files.extend(files_under(dir, ".py"));
    }
    let bad = oversized(&files, OVERSIZED);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn size_checker_sees_a_break() {
    let long = "x\n".repeat(MAX_LINES + 1);
    let fixture = vec![
        ("module_utils/src/pve/big.rs".to_string(), long.clone()),
        ("module_utils/src/pve/big/tests.rs".to_string(), long.clone()),
        ("plugins/modules/proxmox_kvm.py".to_string(), long.clone()),
        ("modules/proxmox_disk/src/plan.rs".to_string(), "x\n".repeat(700)),
        ("bench/run.py".to_string(), "x\n".repeat(10)),
    ];
    assert_eq!(
        oversized(&fixture, &[("modules/proxmox_disk/src/plan.rs", 679), ("bench/run.py", 644), ("gone.rs", 700)]),
        vec![
            "module_utils/src/pve/big.rs: 601 lines (limit 600)".to_string(),
            "modules/proxmox_disk/src/plan.rs: 700 lines, grew past its recorded 679".to_string(),
            "bench/run.py: 10 lines, now within 600: drop it from OVERSIZED".to_string(),
            "gone.rs: listed in OVERSIZED but not found".to_string(),
        ]
    );
}

// ------------------------------------------------------------------------- module crate shape

/// The files of every module crate's `src/` (ARCHITECTURE.md, "modules/<name>/"): wiring, spec,
/// params, plan, the checks before the first write, apply, the result, tests. A large plan,
/// checks or apply may be split into files under `plan/`, `checks/` or `apply/`, which count as
/// part of it.
const SHAPE_FILES: &[&str] =
    &["lib.rs", "spec.rs", "params.rs", "plan.rs", "checks.rs", "apply.rs", "result.rs", "tests.rs"];
const SHAPE_DIRS: &[&str] = &["plan/", "checks/", "apply/"];

/// What a plan must not use: it is pure (no client, no task waiter, no connection, no reads
/// through the check-mode world, no preflight reads), so check mode is "plan, then record" by construction.
const PLAN_FORBIDDEN: &[&str] =
    &["pve::client", "pve::tasks", "pve::preflight", "connect::", "::connect", "check::world", "Api"];

/// Crates not yet in the common shape: none now (proxmox_kvm joined it in issue 17). A crate
/// listed here while it already has the shape fails the checker, so the list cannot go stale.
const SHAPE_PENDING: &[&str] = &[];

/// Whether `word` occurs in `code` as a whole identifier (so `Api` is not `ApiPath`).
fn has_word(code: &str, word: &str) -> bool {
    let ident = |c: char| c.is_ascii_alphanumeric() || c == '_';
    code.match_indices(word).any(|(i, _)| {
        let before = code[..i].chars().next_back();
        let after = code[i + word.len()..].chars().next();
        let edge_ok = |c: Option<char>, at_word_edge: bool| !at_word_edge || c.is_none_or(|c| !ident(c));
        edge_ok(before, word.starts_with(ident)) && edge_ok(after, word.ends_with(ident))
    })
}

/// One line per break of the common shape: a crate's missing or extra file, an I/O use in its
/// plan, `ctx.check_mode` asked outside `lib.rs` (check mode is decided once, in `main`), and a
/// `SHAPE_PENDING` entry that already conforms. `files` are (path under modules/, text).
fn shape_violations(files: &[(String, String)], pending: &[&str]) -> Vec<String> {
    let mut crates: BTreeSet<&str> = BTreeSet::new();
    for (path, _) in files {
        if let Some(name) = path.strip_prefix("modules/").and_then(|r| r.split('/').next()) {
            crates.insert(name);
        }
    }
    let mut out = Vec::new();
    for name in crates {
        let prefix = format!("modules/{name}/src/");
        let mut own = Vec::new();
        for (path, text) in files {
            if let Some(rel) = path.strip_prefix(&prefix) {
                own.push((rel, text));
            }
        }
        let mut found = Vec::new();
        for file in SHAPE_FILES {
            if !own.iter().any(|(rel, _)| rel == file) {
                found.push(format!("{prefix}{file}: missing"));
            }
        }
        for (rel, text) in &own {
            let in_dir = SHAPE_DIRS.iter().any(|d| rel.starts_with(d) && !rel[d.len()..].is_empty());
            if !SHAPE_FILES.contains(rel) && !in_dir {
                found.push(format!("{prefix}{rel}: not a file of the common shape"));
            }
            let is_plan = *rel == "plan.rs" || rel.starts_with("plan/");
            for (n, line) in text.lines().enumerate() {
                let code = line.split("//").next().unwrap_or("");
                if is_plan {
                    for f in PLAN_FORBIDDEN.iter().filter(|f| has_word(code, f)) {
                        found.push(format!("{prefix}{rel}:{}: the plan uses {f} (I/O)", n + 1));
                    }
                }
                if *rel != "lib.rs" && has_word(code, "ctx.check_mode") {
                    found.push(format!("{prefix}{rel}:{}: ctx.check_mode outside lib.rs", n + 1));
                }
            }
        }
        match (pending.contains(&name), found.is_empty()) {
            (false, _) => out.extend(found),
            (true, true) => out.push(format!("{name}: has the common shape now: drop it from SHAPE_PENDING")),
            (true, false) => {}
        }
    }
    out
}

#[test]
fn module_crates_have_the_common_shape() {
    let files = files_under("modules", ".rs");
    assert!(files.iter().any(|(p, _)| p.ends_with("/plan.rs")), "no files found: {files:?}");
    let bad = shape_violations(&files, SHAPE_PENDING);
    assert!(bad.is_empty(), "module crates out of the common shape (ARCHITECTURE.md):\n{}", bad.join("\n"));
}

#[test]
fn shape_checker_sees_a_break() {
    // A crate's files: the shape files (empty unless given), minus `drop`, plus any other given.
    let crate_files = |name: &str, given: &[(&str, &str)], drop: &[&str]| {
        let mut v: Vec<(String, String)> = SHAPE_FILES
            .iter()
            .filter(|f| !drop.contains(f))
            .map(|f| {
                let text = given.iter().find(|(g, _)| g == f).map(|(_, t)| *t).unwrap_or("");
                (format!("modules/{name}/src/{f}"), text.to_string())
            })
            .collect();
        v.extend(
            given
                .iter()
                .filter(|(f, _)| !SHAPE_FILES.contains(f))
                .map(|(f, t)| (format!("modules/{name}/src/{f}"), t.to_string())),
        );
        v
    };
    let mut fixture = crate_files(
        "proxmox_good",
        &[
            ("plan.rs", "use crate::params::Params; // no pve::client here\nfn f(p: &ApiPath) {}\n"),
            ("plan/volumes.rs", "// reads nothing through check::world\n"),
            ("spec.rs", "check_mode: Support::Full,\n"),
            ("lib.rs", "if ctx.check_mode {}\n"),
            ("apply.rs", "fn apply(api: &dyn Api) {}\n"),
            ("checks/state.rs", "fn state(api: &dyn Api) {}\n"),
        ],
        &[],
    );
    fixture.extend(crate_files(
        "proxmox_io",
        &[
            ("plan.rs", "fn plan(api: &dyn Api) {}\n"),
            ("plan/read.rs", "use module_utils::check::world::World;\nuse module_utils::pve::preflight::Preflight;\n"),
        ],
        &[],
    ));
    fixture.extend(crate_files("proxmox_odd", &[("compare.rs", "if ctx.check_mode {}\n")], &["apply.rs"]));
    // the two homes the shape gained in issue 28, missing; a result split into files has none
    fixture.extend(crate_files("proxmox_old", &[("result/entry.rs", "")], &["checks.rs", "result.rs"]));
    fixture.extend(crate_files("proxmox_later", &[("power.rs", "")], &[]));
    fixture.extend(crate_files("proxmox_done", &[], &[]));
    assert_eq!(
        shape_violations(&fixture, &["proxmox_later", "proxmox_done"]),
        vec![
            "proxmox_done: has the common shape now: drop it from SHAPE_PENDING".to_string(),
            "modules/proxmox_io/src/plan.rs:1: the plan uses Api (I/O)".to_string(),
            "modules/proxmox_io/src/plan/read.rs:1: the plan uses check::world (I/O)".to_string(),
            "modules/proxmox_io/src/plan/read.rs:2: the plan uses pve::preflight (I/O)".to_string(),
            "modules/proxmox_odd/src/apply.rs: missing".to_string(),
            "modules/proxmox_odd/src/compare.rs: not a file of the common shape".to_string(),
            "modules/proxmox_odd/src/compare.rs:1: ctx.check_mode outside lib.rs".to_string(),
            "modules/proxmox_old/src/checks.rs: missing".to_string(),
            "modules/proxmox_old/src/result.rs: missing".to_string(),
            "modules/proxmox_old/src/result/entry.rs: not a file of the common shape".to_string(),
        ]
    );
}

// ------------------------------------------------------------------------------ module list

/// Where a module is wired, each read as the set of module names it holds.
struct Wiring {
    crates: BTreeSet<String>,
    runtime_yml: BTreeSet<String>,
    action_plugins: BTreeSet<String>,
    module_stubs: BTreeSet<String>,
    multicall_table: BTreeSet<String>,
    makefiles: BTreeSet<String>,
}

/// Every `proxmox_<word>` token of a text (module names are `proxmox_` and lower-case words).
fn module_names(text: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut rest = text;
    while let Some(i) = rest.find("proxmox_") {
        let tail = &rest[i..];
        let end = tail.find(|c: char| !(c.is_ascii_lowercase() || c == '_')).unwrap_or(tail.len());
        let before_ok = i == 0 || !rest.as_bytes()[i - 1].is_ascii_alphanumeric();
        if before_ok && end > "proxmox_".len() {
            out.insert(tail[..end].trim_end_matches('_').to_string());
        }
        rest = &tail[end.max(1)..];
    }
    out
}

/// The `name` of each `(&name::SPEC, name::main)` row of the multi-call binary's table.
fn multicall_modules(main_rs: &str) -> BTreeSet<String> {
    main_rs
        .lines()
        .filter_map(|l| l.trim().strip_prefix("(&")?.split_once("::SPEC").map(|(n, _)| n.to_string()))
        .collect()
}

/// The file stems of a directory listing.
fn stems(names: &[String], ext: &str) -> BTreeSet<String> {
    names.iter().filter_map(|n| n.strip_suffix(ext)).filter(|n| *n != "__init__").map(str::to_string).collect()
}

/// One line per place whose module list differs from the crates under `modules/`.
fn wiring_mismatches(w: &Wiring) -> Vec<String> {
    let places = [
        ("meta/runtime.yml", &w.runtime_yml),
        ("plugins/action/", &w.action_plugins),
        ("plugins/modules/", &w.module_stubs),
        ("multicall/src/main.rs", &w.multicall_table),
        ("Makefile and mk/*.mk", &w.makefiles),
    ];
    let mut out = Vec::new();
    for (place, names) in places {
        let missing: Vec<&String> = w.crates.difference(names).collect();
        let extra: Vec<&String> = names.difference(&w.crates).collect();
        if !missing.is_empty() || !extra.is_empty() {
            out.push(format!("{place}: missing {missing:?}, not a crate under modules/ {extra:?}"));
        }
    }
    out
}

fn list_dir(dir: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(repo_root().join(dir))
        .unwrap_or_else(|e| panic!("{dir}: {e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().to_string())
        .collect();
    names.sort();
    names
}

fn read(path: &str) -> String {
    fs::read_to_string(repo_root().join(path)).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn one_module_list_everywhere() {
    let mut makefiles = module_names(&read("Makefile"));
    for name in list_dir("mk").iter().filter(|n| n.ends_with(".mk")) {
        makefiles.extend(module_names(&read(&format!("mk/{name}"))));
    }
    let wiring = Wiring {
        crates: list_dir("modules").into_iter().collect(),
        runtime_yml: module_names(&read("meta/runtime.yml")),
        action_plugins: stems(&list_dir("plugins/action"), ".py"),
        module_stubs: stems(&list_dir("plugins/modules"), ".py"),
        multicall_table: multicall_modules(&read("multicall/src/main.rs")),
        makefiles,
    };
    assert!(wiring.crates.len() >= 4, "{:?}", wiring.crates);
    let bad = wiring_mismatches(&wiring);
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn module_list_checker_sees_a_break() {
    let set = |names: &[&str]| names.iter().map(|n| n.to_string()).collect::<BTreeSet<String>>();
    let all = set(&["proxmox_disk", "proxmox_kvm"]);
    let good = Wiring {
        crates: all.clone(),
        runtime_yml: module_names("action_groups:\n  proxmox:\n    - proxmox_disk\n    - proxmox_kvm\n"),
        action_plugins: stems(&["__init__.py".into(), "proxmox_disk.py".into(), "proxmox_kvm.py".into()], ".py"),
        module_stubs: all.clone(),
        multicall_table: multicall_modules(
            "    (&proxmox_disk::SPEC, proxmox_disk::main),\n    (&proxmox_kvm::SPEC, proxmox_kvm::main),\n",
        ),
        makefiles: module_names("FUZZ_TARGETS ?= args_proxmox_disk args_proxmox_kvm propstring"),
    };
    assert_eq!(wiring_mismatches(&good), Vec::<String>::new());
    let broken = Wiring {
        multicall_table: multicall_modules("    (&proxmox_disk::SPEC, proxmox_disk::main),\n"),
        module_stubs: set(&["proxmox_disk", "proxmox_kvm", "proxmox_lxc"]),
        ..good
    };
    assert_eq!(
        wiring_mismatches(&broken),
        vec![
            "plugins/modules/: missing [], not a crate under modules/ [\"proxmox_lxc\"]".to_string(),
            "multicall/src/main.rs: missing [\"proxmox_kvm\"], not a crate under modules/ []".to_string(),
        ]
    );
}

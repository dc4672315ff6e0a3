//! The property tests of issue 9, run by `cargo test` (so by `make test`): generated inputs from
//! a fixed seed, then every input kept by the fuzzers (`tests/fuzz/corpus`, `tests/fuzz/regressions`).
//!
//! `FERRO_PROP_CASES` (default 1500 per module, 15000 property strings) and `FERRO_PROP_SEED`
//! change the run; a failure prints the seed and the input.

use std::io::Write;
use std::path::{Path, PathBuf};

use ferro_props::gen::{self, Rng};
use ferro_props::{
    check_args, check_propstring, check_size, fuzz_args, fuzz_dir, fuzz_propstring, seed, Module, FORMATS, MODULES,
};

fn env_u64(key: &str, default: u64) -> u64 {
    std::env::var(key).ok().and_then(|v| v.parse().ok()).unwrap_or(default)
}

/// Counts go straight to stderr, past libtest's capture, so `make test` shows them.
fn report(line: &str) {
    let _ = writeln!(std::io::stderr(), "{line}");
}

fn fail_on(failures: &[String], what: &str) {
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(8).collect();
        panic!(
            "{} {what} violated a property (seed {:#x}); first ones:\n{}",
            failures.len(),
            seed(),
            shown.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n---\n")
        );
    }
}

fn clip(s: &str) -> String {
    if s.len() > 600 {
        format!("{}... ({} bytes)", &s[..s.char_indices().nth(600).map_or(s.len(), |(i, _)| i)], s.len())
    } else {
        s.to_string()
    }
}

#[test]
fn module_arguments_never_panic_and_rejections_name_the_culprit() {
    let cases = env_u64("FERRO_PROP_CASES", 1500);
    let mut total = 0;
    for (i, module) in MODULES.into_iter().enumerate() {
        let mut rng = Rng::new(seed() ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
        let (mut rejected, mut failures) = (0, Vec::new());
        for case in 0..cases {
            let text = gen::module_args(&mut rng, module);
            let with_env = rng.chance(50);
            match check_args(module, &text, with_env) {
                Ok((_, 1)) => rejected += 1,
                Ok(_) => {}
                Err(e) => failures.push(format!("case {case} env={with_env} input {}\n  {}", clip(&text), clip(&e))),
            }
        }
        total += cases;
        report(&format!(
            "property: {} arguments: {cases} inputs tried ({rejected} rejected, {} accepted)",
            module.name(),
            cases - rejected
        ));
        fail_on(&failures, &format!("{} argument inputs", module.name()));
    }
    report(&format!("property: module arguments: {total} inputs tried in all"));
}

#[test]
fn property_strings_round_trip_and_never_panic() {
    let cases = env_u64("FERRO_PROP_CASES", 1500) * 10;
    let mut rng = Rng::new(seed());
    let (mut parsed, mut failures) = (0u64, Vec::new());
    for case in 0..cases {
        let format = FORMATS[rng.below(FORMATS.len())];
        let text = gen::propstring(&mut rng, format);
        if module_utils::pve::propstring::PropertyString::parse(format, &text).is_ok() {
            parsed += 1;
        }
        if let Err(e) = check_propstring(format, &text).and_then(|()| check_size(&text)) {
            failures.push(format!("case {case}: {e}"));
        }
    }
    report(&format!("property: property strings: {cases} inputs tried ({parsed} valid, round-tripped)"));
    fail_on(&failures, "property strings");
}

#[test]
fn sizes_print_and_parse_back() {
    let mut rng = Rng::new(seed());
    for _ in 0..20_000 {
        let bytes = match rng.below(3) {
            0 => rng.next_u64(),
            1 => rng.next_u64() % (1 << 44),
            _ => (rng.next_u64() % 4096) << (10 * rng.below(5)),
        };
        let printed = module_utils::pve::propstring::format_size(bytes);
        assert_eq!(
            module_utils::pve::propstring::parse_size(&printed).ok(),
            Some(bytes),
            "{bytes} printed as {printed}"
        );
    }
}

fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|it| it.filter_map(|e| e.ok().map(|e| e.path())).filter(|p| p.is_file()).collect())
        .unwrap_or_default();
    files.sort();
    files
}

/// Every input the fuzzers kept (their corpus) or that once crashed (regressions) still holds.
#[test]
fn fuzz_corpus_replays_clean() {
    let mut total = 0;
    let mut failures = Vec::new();
    for kind in ["corpus", "regressions"] {
        for target in
            ["args_proxmox_vm_info", "args_proxmox_nic", "args_proxmox_disk", "args_proxmox_kvm", "propstring"]
        {
            let files = files_under(&fuzz_dir().join(kind).join(target));
            // A missing or empty corpus would make this test pass having replayed nothing.
            if kind == "corpus" && files.is_empty() {
                failures.push(format!(
                    "{}: no corpus inputs (missing or empty folder)",
                    fuzz_dir().join(kind).join(target).display()
                ));
            }
            for file in files {
                let Ok(data) = std::fs::read(&file) else { continue };
                total += 1;
                let result = match target.strip_prefix("args_").and_then(Module::by_name) {
                    Some(module) => fuzz_args(module, &data),
                    None => fuzz_propstring(&data),
                };
                if let Err(e) = result {
                    failures.push(format!("{}: {}", file.display(), clip(&e)));
                }
            }
        }
    }
    report(&format!("property: fuzz corpus: {total} kept inputs replayed"));
    assert!(total >= 100, "only {total} fuzz inputs replayed: is tests/fuzz/corpus there?");
    fail_on(&failures, "fuzz corpus inputs");
}

/// The table of edge cases the issue names, each with the message a user gets.
#[test]
fn named_bad_arguments_get_their_message() {
    use serde_json::json;
    let auth = [
        ("api_host", json!("pve1")),
        ("api_user", json!("ansible@pve")),
        ("api_token_id", json!("automation")),
        ("api_token_secret", json!(ferro_props::CANARY)),
    ];
    let with = |extra: &[(&str, serde_json::Value)]| {
        let mut pairs: Vec<(&str, serde_json::Value)> = auth.to_vec();
        pairs.extend(extra.iter().cloned());
        ferro_props::args(&pairs)
    };
    let cases: Vec<(Module, String, &str)> = vec![
        (
            Module::Nic,
            with(&[("vmid", json!(100)), ("interface", json!("net0")), ("tag", json!(i64::MAX))]),
            "tag must be between 1 and 4094, got 9223372036854775807",
        ),
        (
            Module::Nic,
            with(&[("vmid", json!(100)), ("interface", json!("nét0"))]),
            "interface must be one of net0 to net31, got 'nét0'",
        ),
        (Module::Disk, with(&[("vmid", json!(100)), ("disk", json!("scsi0")), ("size", json!("1e400"))]), "size"),
        (
            Module::Kvm,
            with(&[("vmid", json!(100)), ("node", json!("pve1")), ("net", json!({"net0": "virtio,tag=0"}))]),
            "net.net0: invalid format - tag: value must have a minimum value of 1",
        ),
        (
            Module::Kvm,
            with(&[
                ("vmid", json!(100)),
                ("node", json!("pve1")),
                ("scsi", json!({"scsi0": "local-lvm:vm-100-disk-0,size=1.G"})),
            ]),
            "scsi.scsi0: invalid format - size: value does not look like a valid disk size: 1.G",
        ),
        (Module::VmInfo, with(&[("vmid", json!(-1))]), "vmid must be between 100 and 999999999, got -1"),
        (Module::VmInfo, ferro_props::args(&[("api_host", json!("pve1"))]), "missing required arguments: api_user"),
    ];
    for (module, text, want) in cases {
        let (answer, code) = check_args(module, &text, false).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(code, 1, "{} {text}: {answer}", module.name());
        let msg = answer["msg"].as_str().unwrap_or_default();
        assert!(msg.contains(want), "{} {text}: got {msg:?}, want {want:?}", module.name());
    }
}

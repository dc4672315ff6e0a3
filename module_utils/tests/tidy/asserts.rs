//! Every Rust `#[test]` function can fail (issue 28): its body asserts, panics, unwraps, or returns
//! a `Result` it can fail with. The Python half of the rule is tests/meta/test_every_test_asserts.py.

use super::files_under;

/// The words that make a test able to fail: the assert family and `panic!`, `unwrap`/`expect` (and
/// their `_err` forms), and `fail_on` (tests/props' helper that panics on any failure it is given).
const FAILS: &[&str] = &["assert", "panic!", "unwrap", "expect", "unreachable!", "fail_on("];

/// Test functions allowed to hold none of `FAILS`, each with its reason. None today.
pub const EXCEPTIONS: &[(&str, &str)] = &[];

/// Where the workspace's tests live.
pub const DIRS: &[&str] = &["module_utils", "modules", "multicall", "tests/props"];

/// The text of `text` with string literals, char literals and comments blanked, so their braces
/// and words do not count.
pub fn code_only(text: &str) -> String {
    let b: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == '/' && b.get(i + 1) == Some(&'/') {
            while i < b.len() && b[i] != '\n' {
                i += 1;
            }
        } else if c == 'r' && matches!(b.get(i + 1), Some('#' | '"')) && (i == 0 || !b[i - 1].is_alphanumeric()) {
            let mut j = i + 1;
            while b.get(j) == Some(&'#') {
                j += 1;
            }
            if b.get(j) != Some(&'"') {
                out.push(c);
                i += 1;
                continue;
            }
            let close: String = std::iter::once('"').chain(std::iter::repeat_n('#', j - i - 1)).collect();
            let rest: String = b[j + 1..].iter().collect();
            let end = rest.find(&close).map_or(b.len(), |e| j + 1 + rest[..e].chars().count() + close.len());
            out.push_str("\"\"");
            i = end;
        } else if c == '"' {
            i += 1;
            while i < b.len() && b[i] != '"' {
                i += if b[i] == '\\' { 2 } else { 1 };
            }
            out.push_str("\"\"");
            i += 1;
        } else if c == '\'' && b.get(i + 2) == Some(&'\'') {
            out.push_str("' '");
            i += 3;
        } else if c == '\'' && b.get(i + 1) == Some(&'\\') {
            let end = (i + 2..b.len()).find(|&k| b[k] == '\'').unwrap_or(b.len());
            out.push_str("' '");
            i = end + 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// `path::name` of each `#[test]` function whose body holds none of `FAILS` and whose signature
/// returns no `Result`.
pub fn tests_that_cannot_fail(files: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for (path, text) in files {
        let code = code_only(text);
        let mut rest = code.as_str();
        while let Some(at) = rest.find("#[test]") {
            rest = &rest[at + "#[test]".len()..];
            let Some(fn_at) = rest.find("fn ") else { break };
            let sig_end = rest[fn_at..].find('{').map_or(rest.len(), |e| fn_at + e);
            let sig = &rest[fn_at..sig_end];
            let name: String = sig[3..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
            let mut depth = 0usize;
            let mut end = rest.len();
            for (k, ch) in rest[sig_end..].char_indices() {
                match ch {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = sig_end + k + 1;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            let body = &rest[sig_end..end];
            let returns_result = sig.contains("-> Result") || sig.contains("-> anyhow::Result");
            if !returns_result && !FAILS.iter().any(|w| body.contains(w)) {
                out.push(format!("{path}::{name}"));
            }
            rest = &rest[end..];
        }
    }
    out
}

#[test]
fn every_rust_test_can_fail() {
    let mut files = Vec::new();
    for dir in DIRS {
        files.extend(files_under(dir, ".rs"));
    }
    let count: usize = files.iter().map(|(_, t)| code_only(t).matches("#[test]").count()).sum();
    assert!(count > 200, "found only {count} #[test] functions");
    let bad: Vec<String> =
        tests_that_cannot_fail(&files).into_iter().filter(|t| !EXCEPTIONS.iter().any(|(e, _)| e == t)).collect();
    assert!(
        bad.is_empty(),
        "#[test] functions that cannot fail (assert, or list them in EXCEPTIONS):\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_assertion_rule_sees_a_test_that_cannot_fail() {
    let text = r##"
#[test]
fn prints() { let s = "assert!(x) {"; println!("{s}"); } // assert! in a comment
#[test]
fn asserts() { if true { assert_eq!(1, 1); } }
#[test]
#[ignore]
fn returns() -> Result<(), String> { Ok(()) }
#[test]
fn unwraps() { let _ = Some('}').unwrap(); }
#[test]
fn raw() { let _ = r#"panic!("}")"#; }
"##;
    assert_eq!(
        tests_that_cannot_fail(&[("x.rs".to_string(), text.to_string())]),
        vec!["x.rs::prints".to_string(), "x.rs::raw".to_string()]
    );
}

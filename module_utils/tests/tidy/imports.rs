//! What each file of module_utils/src imports, every form of it: `use` with groups, nested groups,
//! `pub use`, `self::`/`super::`/`crate::` and multi-line statements, plus paths written inline
//! (`crate::pve::x::f()`), each resolved to an absolute `crate::...` path (following `pub use`
//! re-exports) and to the file it lands in. The layer rules and the no-circle rule read this.

use std::collections::{BTreeMap, BTreeSet};

use super::asserts::code_only;

/// One import of a file: its line, the absolute path, and whether it sits in test code (an inline
/// `mod tests` or a `tests.rs` file), which the circle rule ignores.
#[derive(Debug, Clone)]
pub struct Import {
    pub line: usize,
    pub path: String,
    pub in_test: bool,
}

/// The module path of a file under module_utils/src: `pve/client.rs` is `crate::pve::client`.
pub fn module_of(path: &str) -> Option<String> {
    let rel = path.strip_prefix("module_utils/src/")?.strip_suffix(".rs")?;
    let rel = rel.strip_suffix("/mod").unwrap_or(rel);
    Some(if rel == "lib" { "crate".to_string() } else { format!("crate::{}", rel.replace('/', "::")) })
}

/// The paths one `use` tree stands for: `a::{b, c::{d, self}}` is `a::b`, `a::c::d`, `a::c`.
fn expand(tree: &str) -> Vec<String> {
    let tree: String = tree.split_whitespace().collect::<Vec<_>>().join(" ");
    let tree = tree.trim();
    let Some(open) = tree.find('{') else {
        let path = tree.split(" as ").next().unwrap_or("").replace(' ', "");
        return vec![path.trim_end_matches("::*").to_string()];
    };
    let prefix = tree[..open].replace(' ', "");
    let inner = &tree[open + 1..tree.rfind('}').unwrap_or(tree.len())];
    let (mut parts, mut depth, mut start) = (Vec::new(), 0, 0);
    for (i, c) in inner.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&inner[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&inner[start..]);
    let mut out = Vec::new();
    for part in parts.iter().map(|p| p.trim()).filter(|p| !p.is_empty()) {
        for sub in expand(part) {
            out.push(match sub.as_str() {
                "self" => prefix.trim_end_matches("::").to_string(),
                "*" => prefix.trim_end_matches("::").to_string(),
                _ => format!("{prefix}{sub}"),
            });
        }
    }
    out
}

/// The absolute form of `path` written in module `here`: `self::`, `super::` and a first segment
/// naming a child module of `here` are resolved; paths into other crates give None.
fn absolute(path: &str, here: &str, modules: &BTreeSet<String>) -> Option<String> {
    let mut segs: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
    let mut base: Vec<&str> = here.split("::").collect();
    match segs.first().copied()? {
        "crate" => return Some(segs.join("::")),
        "self" => {
            segs.remove(0);
        }
        "super" => {
            while segs.first() == Some(&"super") {
                segs.remove(0);
                base.pop();
            }
        }
        first if modules.contains(&format!("{here}::{first}")) => {}
        _ => return None,
    }
    base.extend(segs);
    Some(base.join("::"))
}

/// Every import of every file, by file. `files` are (path, text) under module_utils/src.
pub fn imports(files: &[(String, String)]) -> BTreeMap<String, Vec<Import>> {
    let modules: BTreeSet<String> = files.iter().filter_map(|(p, _)| module_of(p)).collect();
    let mut out = BTreeMap::new();
    for (path, text) in files {
        let Some(file_mod) = module_of(path) else { continue };
        let code = code_only(text);
        let file_is_test = path.ends_with("/tests.rs");
        let mut found = Vec::new();
        // Inline modules: the brace depth each opened at, its name.
        let mut inline: Vec<(usize, String)> = Vec::new();
        let mut depth = 0usize;
        let newlines: Vec<usize> = code.match_indices('\n').map(|(i, _)| i).collect();
        let (chars, mut i) = (code.char_indices().collect::<Vec<_>>(), 0);
        while i < chars.len() {
            let (at, c) = chars[i];
            let line = newlines.partition_point(|&n| n < at) + 1;
            let here = || {
                let inner = inline.iter().map(|(_, n)| n.as_str());
                std::iter::once(file_mod.as_str()).chain(inner).collect::<Vec<_>>().join("::")
            };
            let in_test = file_is_test || inline.iter().any(|(_, n)| n == "tests");
            let word_start = at == 0 || !code[..at].ends_with(|p: char| p.is_alphanumeric() || p == '_' || p == ':');
            let rest = &code[at..];
            if c == '{' {
                depth += 1;
            } else if c == '}' {
                if inline.last().is_some_and(|(d, _)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            } else if word_start && rest.starts_with("mod ") {
                let name: String = rest[4..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect();
                let after = rest[4 + name.len()..].trim_start();
                if after.starts_with('{') {
                    inline.push((depth + 1, name));
                }
            } else if word_start && rest.starts_with("use ") {
                let end = rest.find(';').unwrap_or(rest.len());
                let here = here();
                for p in expand(&rest[4..end]) {
                    if let Some(abs) = absolute(&p, &here, &modules) {
                        found.push(Import { line, path: abs, in_test });
                    }
                }
                i += rest[..end].chars().count();
                continue;
            } else if word_start && ["crate::", "super::", "self::"].iter().any(|p| rest.starts_with(p)) {
                let len = rest.find(|c: char| !(c.is_alphanumeric() || c == '_' || c == ':')).unwrap_or(rest.len());
                if let Some(abs) = absolute(rest[..len].trim_end_matches(':'), &here(), &modules) {
                    found.push(Import { line, path: abs, in_test });
                }
                i += rest[..len].chars().count();
                continue;
            }
            i += 1;
        }
        out.insert(path.clone(), found);
    }
    out
}

/// `pub use` re-exports of the crate: `crate::Error` → `crate::error::Error`.
fn reexports(files: &[(String, String)], all: &BTreeMap<String, Vec<Import>>) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (path, text) in files {
        let Some(m) = module_of(path) else { continue };
        let code = code_only(text);
        for stmt in code.split(';') {
            let t = stmt.trim_start();
            let Some(tree) = t.strip_prefix("pub use ").or_else(|| t.strip_prefix("pub(crate) use ")) else { continue };
            for p in expand(tree) {
                let name = p.rsplit("::").next().unwrap_or("").to_string();
                let target = all[path].iter().find(|i| i.path.ends_with(&format!("::{name}")) || i.path == p);
                if let Some(target) = target {
                    out.insert(format!("{m}::{name}"), target.path.clone());
                }
            }
        }
    }
    out
}

/// The file node a path lands in: the deepest module of `nodes` that prefixes it, after following
/// re-exports.
fn node_of(path: &str, nodes: &BTreeSet<String>, re: &BTreeMap<String, String>) -> Option<String> {
    let mut p = path.to_string();
    for _ in 0..8 {
        match re.get(&p) {
            Some(t) if *t != p => p = t.clone(),
            _ => break,
        }
    }
    let segs: Vec<&str> = p.split("::").collect();
    (1..=segs.len()).rev().map(|n| segs[..n].join("::")).find(|m| nodes.contains(m))
}

/// The node of a file: its module cut to one file of a layer (`crate::pve::client` for
/// pve/client/tests.rs): a file's submodule files are parts of it.
fn node(module: &str, layers: &BTreeSet<String>) -> String {
    let segs: Vec<&str> = module.split("::").collect();
    let keep = if segs.len() > 1 && layers.contains(&segs[..2].join("::")) { 3 } else { 2 };
    segs[..keep.min(segs.len())].join("::")
}

/// The file-level import graph of module_utils (test code left out): node → the nodes it imports.
pub fn graph(files: &[(String, String)]) -> BTreeMap<String, BTreeSet<String>> {
    let all = imports(files);
    let re = reexports(files, &all);
    let layers: BTreeSet<String> =
        files.iter().filter(|(p, _)| p.ends_with("/mod.rs")).filter_map(|(p, _)| module_of(p)).collect();
    let modules: BTreeSet<String> = files.iter().filter_map(|(p, _)| module_of(p)).collect();
    let nodes: BTreeSet<String> = modules.iter().map(|m| node(m, &layers)).collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (path, list) in &all {
        let Some(m) = module_of(path) else { continue };
        let from = node(&m, &layers);
        let entry = g.entry(from.clone()).or_default();
        for imp in list.iter().filter(|i| !i.in_test) {
            if let Some(to) = node_of(&imp.path, &nodes, &re).map(|n| node(&n, &layers)) {
                if to != from {
                    entry.insert(to);
                }
            }
        }
    }
    g
}

/// Each import circle of the graph once, as `a -> b -> a` (strongly connected parts, named by
/// their members in order).
pub fn circles(g: &BTreeMap<String, BTreeSet<String>>) -> Vec<String> {
    let reach = |from: &str| {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.to_string()];
        while let Some(n) = stack.pop() {
            for m in g.get(&n).into_iter().flatten() {
                if seen.insert(m.clone()) {
                    stack.push(m.clone());
                }
            }
        }
        seen
    };
    let mut out = BTreeSet::new();
    for n in g.keys() {
        let r = reach(n);
        if r.contains(n) {
            let part: Vec<String> = g.keys().filter(|m| r.contains(*m) && reach(m).contains(n)).cloned().collect();
            out.insert(part.join(" <-> "));
        }
    }
    out.into_iter().collect()
}

//! pve::pattern against the regex crate it replaced: the same classes for every code point, and the same matches and groups of every pattern we carry on generated text.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;
use crate::pve::schema::anchored;

/// Every pattern the binary compiles: the API schema table's (anchored as `schema.rs` applies
/// them, with its named formats), the property-string formats', and the literal ones of the files
/// that compile a constant (raw strings starting with `^`).
fn carried_patterns() -> Vec<String> {
    let mut out = Vec::new();
    let json_patterns = |text: &str, out: &mut Vec<String>| {
        for piece in text.split("\"pattern\":").skip(1) {
            let value: String = serde_json::Deserializer::from_str(piece.trim_start())
                .into_iter::<String>()
                .next()
                .and_then(|v| v.ok())
                .expect("a pattern is a JSON string");
            out.push(anchored(&value));
        }
    };
    json_patterns(include_str!("../schema/params.json"), &mut out);
    json_patterns(include_str!("../schema/formats.rs"), &mut out);
    for text in [
        include_str!("../storage/volname.rs"),
        include_str!("../cipassword.rs"),
        include_str!("../propstring/formats.rs"),
    ] {
        for piece in text.split("r\"^").skip(1) {
            out.push(format!("^{}", piece.split('"').next().unwrap_or_default()));
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[test]
fn every_carried_pattern_compiles_in_both_engines() {
    let patterns = carried_patterns();
    assert!(patterns.len() >= 40, "{}", patterns.len());
    for p in &patterns {
        assert!(regex::Regex::new(p).is_ok(), "regex: {p}");
        assert!(compile(p).is_ok(), "pattern: {p}: {:?}", compile(p).err());
    }
}

/// Text from pieces that PVE's values and the patterns are made of, with Unicode digits and
/// spaces and letters in them: every string of up to three pieces, and the samples.
fn texts() -> Vec<String> {
    const PIECES: &[&str] = &[
        "",
        "0",
        "7",
        "\u{663}",
        "\u{1D7CE}",
        " ",
        "\u{A0}",
        "\u{3000}",
        "\n",
        "a",
        "\u{E9}",
        "x",
        "-",
        ".",
        "/",
        "_",
        ":",
        ";",
        ",",
        "=",
        "+",
        "$",
        "vm",
        "100",
        "disk",
    ];
    const SAMPLES: &[&str] = &[
        "vm-100-disk-0",
        "vm-100-disk-0.qcow2",
        "base-100-disk-0/vm-101-disk-1",
        "subvol-100-disk-0.subvol",
        "100/vm-100-disk-0.raw",
        "100/base-100-disk-0.raw/101/vm-101-disk-0.qcow2",
        "iso/debian.iso",
        "iso/DEBIAN.ISO",
        "vztmpl/x.tar.gz",
        "pc-q35-8.1+pve0",
        "pc-i440fx-9.0",
        "q35",
        "virt-9.0",
        "net0=1,net1=2",
        "0x1234",
        "0x0123456789abcdef",
        "10G",
        "+1.5T",
        "now",
        "2024-01-02T03:04:05",
        "/dev/ttyS0",
        "socket",
        "$5$salt$hash",
        "$2y$x$y",
        "12345678-1234-1234-1234-123456789abc",
        "1",
        "scsi0",
        "virtio15",
        "lun5",
        "backup/vm/100/2024-01-01T00:00:00Z",
        "1.2.3.abc",
        "1.2.\u{663}.abc",
        "snap-x.qcow2",
        "vendor 1",
        "vendor\u{A0}1",
        "1-2;3-4",
        "1\u{663}-2",
        "0x1234:0x5678",
        "1-2.3",
        "spice",
        "SPICE",
        "+aes;-pcid",
        "aa:bb.c",
        "0000:aa:bb.1",
        "dGVzdA==",
        "acdn",
        "vm-\u{663}-disk-0",
        "vm-100-disk 0",
    ];
    let mut out: Vec<String> = SAMPLES.iter().map(|s| s.to_string()).collect();
    for a in PIECES {
        for b in PIECES {
            out.push(format!("{a}{b}"));
            for c in &PIECES[..12] {
                out.push(format!("{a}{b}{c}"));
            }
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

#[test]
fn every_carried_pattern_matches_and_captures_as_the_regex_crate_did() {
    let texts = texts();
    for p in carried_patterns() {
        let (old, new) = (regex::Regex::new(&p).unwrap(), compile(&p).unwrap());
        for t in &texts {
            let groups_old = old.captures(t).map(|c| c.iter().map(|m| m.map(|m| m.range())).collect::<Vec<_>>());
            let groups_new = new.captures(t).map(|c| c.iter().map(|m| m.map(|m| m.range())).collect::<Vec<_>>());
            assert_eq!(groups_old, groups_new, "{p} on {t:?}");
        }
    }
}

#[test]
fn perl_classes_are_the_regex_crates_for_every_code_point() {
    let both = |p: &str| (p.to_string(), regex::Regex::new(p).unwrap(), compile(p).unwrap());
    let classes = [both(r"^\d$"), both(r"^\s$")];
    let forms =
        [both(r"^\D$"), both(r"^\S$"), both(r"^[a\d]$"), both(r"^[^/\s]$"), both(r"^[^\d_]$"), both(r"^x\sy\dz$")];
    // The code points where the tables change (each range's ends, one either side).
    let mut edges: Vec<u32> = [DIGIT, SPACE]
        .iter()
        .flat_map(|t| t.split(['{', '}']).filter_map(|h| u32::from_str_radix(h, 16).ok()))
        .flat_map(|c| [c.saturating_sub(1), c, c + 1])
        .collect();
    edges.sort_unstable();
    for c in (0..=0x10FFFFu32).filter_map(char::from_u32) {
        let one = c.to_string();
        for (p, old, new) in &classes {
            assert_eq!(old.is_match(&one), new.is_match(&one), "{p} on U+{:04X}", c as u32);
        }
        if (c as u32) < 0x3100 || edges.binary_search(&(c as u32)).is_ok() {
            let framed = format!("x{c}y{c}z");
            for (p, old, new) in &forms {
                let text = if p.starts_with("^x") { &framed } else { &one };
                assert_eq!(old.is_match(text), new.is_match(text), "{p} on U+{:04X}", c as u32);
            }
        }
    }
}

#[test]
fn what_regex_lite_would_match_differently_does_not_compile() {
    for p in [r"\w+", r"a\b", r"\p{L}", r"[\S]", r"[a\D]", r"(?i)abc", r"(?i:a)", r"(?-u:\d)", r"(?x) a", r"[a[b]]"] {
        assert!(compile(p).is_err(), "{p}");
    }
    for p in [r"(?:a)", r"(?P<n>a)", r"(?<n>a)", r"(?m)^a$", r"[]a]", r"[^]a]", r"[\-\s]", r"\x{41}\."] {
        assert!(compile(p).is_ok(), "{p}: {:?}", compile(p).err());
    }
}

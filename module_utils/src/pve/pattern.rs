//! PVE's regular expressions (the API schema's patterns, the storage plugins' volume names) compiled with regex-lite, `\d` and `\s` keeping their Unicode meaning.
//!
//! The regex crate's engine was a sixteenth of the release binary (ARCHITECTURE.md "Release
//! size"); regex-lite has the same syntax and API, but ASCII-only Perl classes and no nested
//! classes. So before compiling, `\d`, `\s` (and outside a class `\D`, `\S`) are written out
//! as the Unicode classes the regex crate gave them (feature `unicode-perl`: general category Nd,
//! property White_Space). What regex-lite would match differently from the regex crate (`\w`,
//! `\b`, `\p{..}`, `\D` or `\S` inside a class, the flags `i`, `u` and `x`) is an error here,
//! as `(?i)` was with the regex crate without `unicode-case`. No pattern we carry has one: the
//! tests (`pattern/tests.rs`) compile each and compare both engines on it.

pub use regex_lite::Regex;

/// Unicode's decimal digits (`\d`, general category Nd), as the body of a class.
const DIGIT: &str = concat!(
    r"0-9\x{660}-\x{669}\x{6F0}-\x{6F9}\x{7C0}-\x{7C9}\x{966}-\x{96F}\x{9E6}-\x{9EF}",
    r"\x{A66}-\x{A6F}\x{AE6}-\x{AEF}\x{B66}-\x{B6F}\x{BE6}-\x{BEF}\x{C66}-\x{C6F}",
    r"\x{CE6}-\x{CEF}\x{D66}-\x{D6F}\x{DE6}-\x{DEF}\x{E50}-\x{E59}\x{ED0}-\x{ED9}",
    r"\x{F20}-\x{F29}\x{1040}-\x{1049}\x{1090}-\x{1099}\x{17E0}-\x{17E9}\x{1810}-\x{1819}",
    r"\x{1946}-\x{194F}\x{19D0}-\x{19D9}\x{1A80}-\x{1A89}\x{1A90}-\x{1A99}\x{1B50}-\x{1B59}",
    r"\x{1BB0}-\x{1BB9}\x{1C40}-\x{1C49}\x{1C50}-\x{1C59}\x{A620}-\x{A629}\x{A8D0}-\x{A8D9}",
    r"\x{A900}-\x{A909}\x{A9D0}-\x{A9D9}\x{A9F0}-\x{A9F9}\x{AA50}-\x{AA59}\x{ABF0}-\x{ABF9}",
    r"\x{FF10}-\x{FF19}\x{104A0}-\x{104A9}\x{10D30}-\x{10D39}\x{10D40}-\x{10D49}",
    r"\x{11066}-\x{1106F}\x{110F0}-\x{110F9}\x{11136}-\x{1113F}\x{111D0}-\x{111D9}",
    r"\x{112F0}-\x{112F9}\x{11450}-\x{11459}\x{114D0}-\x{114D9}\x{11650}-\x{11659}",
    r"\x{116C0}-\x{116C9}\x{116D0}-\x{116E3}\x{11730}-\x{11739}\x{118E0}-\x{118E9}",
    r"\x{11950}-\x{11959}\x{11BF0}-\x{11BF9}\x{11C50}-\x{11C59}\x{11D50}-\x{11D59}",
    r"\x{11DA0}-\x{11DA9}\x{11F50}-\x{11F59}\x{16130}-\x{16139}\x{16A60}-\x{16A69}",
    r"\x{16AC0}-\x{16AC9}\x{16B50}-\x{16B59}\x{16D70}-\x{16D79}\x{1CCF0}-\x{1CCF9}",
    r"\x{1D7CE}-\x{1D7FF}\x{1E140}-\x{1E149}\x{1E2F0}-\x{1E2F9}\x{1E4F0}-\x{1E4F9}",
    r"\x{1E5F1}-\x{1E5FA}\x{1E950}-\x{1E959}\x{1FBF0}-\x{1FBF9}",
);

/// Unicode's white space (`\s`, property White_Space), as the body of a class.
const SPACE: &str = r"\x{9}-\x{D}\x{20}\x{85}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}-\x{2029}\x{202F}\x{205F}\x{3000}";

/// `pattern` compiled, or why not: it does not compile, or regex-lite would not match it as the
/// regex crate does (the file's header).
pub fn compile(pattern: &str) -> Result<Regex, String> {
    Regex::new(&unicode_classes(pattern)?).map_err(|e| e.to_string())
}

/// `pattern` with `\d` and `\s` written out: `[0-9\x{660}-...]`, inside a class without the
/// brackets; `\D` and `\S` as `[^...]`, outside a class only.
fn unicode_classes(pattern: &str) -> Result<String, String> {
    let mut out = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    // Inside `[...]`, and whether a `]` now is a literal one (first in the class).
    let (mut in_class, mut first_in_class) = (false, false);
    while let Some(c) = chars.next() {
        let first = std::mem::take(&mut first_in_class);
        match c {
            '\\' => {
                let e = chars.next().ok_or("a trailing backslash")?;
                match e {
                    'd' | 's' if in_class => out.push_str(class_body(e)),
                    'd' | 's' => out.extend(["[", class_body(e), "]"]),
                    'D' | 'S' if !in_class => out.extend(["[^", class_body(e.to_ascii_lowercase()), "]"]),
                    'D' | 'S' | 'w' | 'W' | 'b' | 'B' | 'p' | 'P' => return Err(format!("\\{e} is not supported")),
                    _ => out.extend(['\\', e]),
                }
            }
            '[' if in_class => return Err("a nested class is not supported".into()),
            '[' => {
                (in_class, first_in_class) = (true, true);
                out.push(c);
                if chars.next_if_eq(&'^').is_some() {
                    out.push('^');
                }
            }
            ']' if in_class && !first => {
                in_class = false;
                out.push(c);
            }
            '(' if !in_class && chars.peek() == Some(&'?') => {
                out.push(c);
                let flags: String =
                    chars.clone().skip(1).take_while(|f| f.is_ascii_alphabetic() || *f == '-').collect();
                if !flags.starts_with('P') && flags.contains(['i', 'u', 'x']) {
                    return Err(format!("the flags {flags} are not supported"));
                }
            }
            _ => out.push(c),
        }
    }
    Ok(out)
}

/// The class body of `\d` or `\s`.
fn class_body(perl: char) -> &'static str {
    if perl == 'd' {
        DIGIT
    } else {
        SPACE
    }
}

#[cfg(test)]
mod tests;

//! PVE's units and scalar forms: booleans (`parse_boolean`), sizes (`32G`, `512M`), MAC addresses.

use crate::error::{Error, Result};

/// pve-common `parse_boolean`: `1|on|yes|true` and `0|off|no|false`, case-insensitive.
pub fn parse_boolean(text: &str) -> Option<bool> {
    match text.to_ascii_lowercase().as_str() {
        "1" | "on" | "yes" | "true" => Some(true),
        "0" | "off" | "no" | "false" => Some(false),
        _ => None,
    }
}

pub(super) fn bool_text(b: bool) -> &'static str {
    if b {
        "1"
    } else {
        "0"
    }
}

/// Bytes of a PVE `disk-size`: `\d+(\.\d+)?[KMGT]?`, no suffix = bytes, units are powers of
/// 1024, fractions truncated. Strict like PVE: no lower-case units, no `B`, no spaces, no sign.
pub fn parse_size(text: &str) -> Result<u64> {
    let bad = || Error::Args(format!("invalid size '{text}': expected a number with an optional K, M, G or T suffix"));
    let (number, shift) = match text.as_bytes().last() {
        Some(b'K') => (&text[..text.len() - 1], 10),
        Some(b'M') => (&text[..text.len() - 1], 20),
        Some(b'G') => (&text[..text.len() - 1], 30),
        Some(b'T') => (&text[..text.len() - 1], 40),
        _ => (text, 0),
    };
    let (int, frac) = match number.split_once('.') {
        Some((i, f)) => (i, f),
        None => (number, ""),
    };
    let digits = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if int.is_empty() || !digits(int) || !digits(frac) || (number.contains('.') && frac.is_empty()) {
        return Err(bad());
    }
    let too_big = || Error::Args(format!("invalid size '{text}': too large"));
    let mut whole: u128 = 0;
    for b in int.bytes() {
        whole = whole
            .checked_mul(10)
            .and_then(|w| w.checked_add(u128::from(b - b'0')))
            .filter(|w| *w <= u128::from(u64::MAX))
            .ok_or_else(too_big)?;
    }
    let mut bytes = whole << shift;
    // Exact decimal arithmetic for the fraction; digits beyond 24 cannot change the
    // truncated result at these multipliers.
    let frac: String = frac.chars().take(24).collect();
    if !frac.is_empty() {
        let scale = 10u128.pow(frac.len() as u32);
        let f: u128 = frac.parse().map_err(|_| bad())?;
        bytes += (f << shift) / scale;
    }
    u64::try_from(bytes).map_err(|_| too_big())
}

/// pve-common `format_size`: the largest of T/G/M/K that divides `bytes` exactly, else plain
/// bytes. Like PVE, 0 prints as `0T`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [(u32, &str); 4] = [(40, "T"), (30, "G"), (20, "M"), (10, "K")];
    for (shift, unit) in UNITS {
        if bytes % (1u64 << shift) == 0 {
            return format!("{}{unit}", bytes >> shift);
        }
    }
    bytes.to_string()
}

/// Bytes of a module's size option: a bare number (fractions allowed) means GiB, otherwise a
/// number with a K/M/G/T suffix as in `parse_size`.
pub fn parse_gib_or_size(text: &str) -> Result<u64> {
    let bare = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit() || b == b'.');
    let result = if bare { parse_size(&format!("{text}G")) } else { parse_size(text) };
    result.map_err(|_| {
        Error::Args(format!("invalid size '{text}': expected a number of GiB or a number with a K, M, G or T suffix"))
    })
}

/// A MAC address in PVE's `mac-addr` format (`XX:XX:XX:XX:XX:XX`, unicast: the second hex
/// digit even), upper case; `None` when `text` is not one.
pub fn normalize_mac(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    if bytes.len() != 17 {
        return None;
    }
    for (i, b) in bytes.iter().enumerate() {
        let ok = if i % 3 == 2 { *b == b':' } else { b.is_ascii_hexdigit() };
        if !ok {
            return None;
        }
    }
    // The I/G bit: PVE refuses multicast addresses.
    let second = char::from(bytes[1]).to_digit(16)?;
    if second % 2 != 0 {
        return None;
    }
    Some(text.to_ascii_uppercase())
}

//! Cloud-init `sshkeys` as PVE validates them before a create or config write: each line must be a public key that `ssh-keygen -l` reads (docs/pve-semantics.md §43.7).
//!
//! pve-common Tools.pm `validate_ssh_public_keys` runs `ssh-keygen -l -f` on each line that is
//! not blank (after `uri_unescape`) and dies `SSH public key validation error` when it fails.
//! OpenSSH's `do_fingerprint` reads a line as a key (`<type> <base64 blob> [comment]`), else as an
//! `authorized_keys` line (options first) or a `known_hosts` one (host names first); a comment
//! line fails too. The blob must hold the type it is named with and that type's fields, nothing
//! more (`sshkey_from_blob`). This is that reading, for the key types OpenSSH 9 knows.

/// PVE's words.
pub const INVALID: &str = "SSH public key validation error";

/// `INVALID` when a line of `keys` (decoded) is not a public key, else `None`.
pub fn validate(keys: &str) -> Option<&'static str> {
    keys.split('\n').filter(|l| !l.trim().is_empty()).any(|l| !line_is_key(l)).then_some(INVALID)
}

/// The line's words, a double-quoted part (an option's value) kept within its word.
fn words(line: &str) -> Vec<&str> {
    let (mut out, mut start, mut quoted) = (Vec::new(), None, false);
    for (i, c) in line.char_indices() {
        match c {
            '"' => quoted = !quoted,
            ' ' | '\t' if !quoted => {
                if let Some(s) = start.take() {
                    out.push(&line[s..i]);
                }
                continue;
            }
            _ => {}
        }
        start.get_or_insert(i);
    }
    if let Some(s) = start {
        out.push(&line[s..]);
    }
    out
}

/// A key at the start of the line, or after one word of options or host names.
fn line_is_key(line: &str) -> bool {
    let w = words(line);
    (0..2).any(|i| w.len() > i + 1 && blob_is_key(w[i], w[i + 1]))
}

/// Reads the length-prefixed strings of a key blob.
struct Blob<'b>(&'b [u8]);

impl<'b> Blob<'b> {
    fn string(&mut self) -> Option<&'b [u8]> {
        let len = u32::from_be_bytes(self.0.get(..4)?.try_into().ok()?) as usize;
        let s = self.0.get(4..4 + len)?;
        self.0 = &self.0[4 + len..];
        Some(s)
    }
}

/// The bits of an mpint's value.
fn bits(n: &[u8]) -> usize {
    let n: Vec<u8> = n.iter().copied().skip_while(|b| *b == 0).collect();
    n.first().map_or(0, |f| (n.len() - 1) * 8 + (8 - f.leading_zeros() as usize))
}

/// `kind`'s blob holds `kind` and its fields: an Ed25519 key of 32 bytes, RSA's exponent and a
/// modulus of at least 1024 bits (`SSH_RSA_MINIMUM_MODULUS_SIZE`), DSA's four numbers, ECDSA's
/// curve and an uncompressed point of that curve's size; a security key's application after.
fn blob_is_key(kind: &str, b64: &str) -> bool {
    let Some(blob) = base64(b64) else { return false };
    let mut b = Blob(&blob);
    if b.string() != Some(kind.as_bytes()) {
        return false;
    }
    let point = |b: &mut Blob, curve: &str, len: usize| {
        b.string() == Some(curve.as_bytes()) && b.string().is_some_and(|q| q.len() == len)
    };
    let fields = match kind {
        "ssh-ed25519" => b.string().is_some_and(|k| k.len() == 32),
        "sk-ssh-ed25519@openssh.com" => b.string().is_some_and(|k| k.len() == 32) && b.string().is_some(),
        "ssh-rsa" => b.string().is_some() && b.string().is_some_and(|n| bits(n) >= 1024),
        "ssh-dss" => (0..4).all(|_| b.string().is_some()),
        "ecdsa-sha2-nistp256" => point(&mut b, "nistp256", 65),
        "ecdsa-sha2-nistp384" => point(&mut b, "nistp384", 97),
        "ecdsa-sha2-nistp521" => point(&mut b, "nistp521", 133),
        "sk-ecdsa-sha2-nistp256@openssh.com" => point(&mut b, "nistp256", 65) && b.string().is_some(),
        _ => false,
    };
    fields && b.0.is_empty()
}

/// Standard base64 with its `=` padding; `None` for anything else.
fn base64(text: &str) -> Option<Vec<u8>> {
    let body = text.trim_end_matches('=');
    if text.len() % 4 != 0 || text.len() - body.len() > 2 {
        return None;
    }
    let value = |c: u8| -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            _ => return None,
        } as u32)
    };
    let mut out = Vec::with_capacity(body.len() * 3 / 4);
    for chunk in body.as_bytes().chunks(4) {
        let mut n = 0u32;
        for (i, c) in chunk.iter().enumerate() {
            n |= value(*c)? << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    // made with `ssh-keygen -t ed25519`, and ed25519 blobs of 32 bytes written by hand
    const ED25519: &str = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO0OWM0AXYaRJtcmVMDbb37SUwicXNYEFrJOk8K7XekV me@host";
    const EXAMPLE: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyReplaceWithYoursExampleKeyReplace admin@example.org";

    #[test]
    fn keys_ssh_keygen_reads_pass() {
        for keys in [
            ED25519,
            EXAMPLE,
            &format!("{ED25519}\n\n{EXAMPLE}\n"),
            &format!("no-pty,command=\"a b\" {ED25519}"),
            &format!("host.example {ED25519}"),
            &format!("   {ED25519}"),
        ] {
            assert_eq!(validate(keys), None, "{keys}");
        }
    }

    #[test]
    fn what_ssh_keygen_refuses_is_refused() {
        for keys in [
            "ssh-ed25519 AAAA me@host",
            "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyReplaceWithYours admin@example.org",
            "# a comment",
            "AAAAC3NzaC1lZDI1NTE5AAAAIO0OWM0AXYaRJtcmVMDbb37SUwicXNYEFrJOk8K7XekV",
            "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIO0OWM0AXYaRJtcmVMDbb37SUwicXNYEFrJOk8K7XekV x",
            &format!("{ED25519}\nnot a key"),
        ] {
            assert_eq!(validate(keys), Some(INVALID), "{keys}");
        }
        assert_eq!(validate("\n  \n"), None);
    }
}

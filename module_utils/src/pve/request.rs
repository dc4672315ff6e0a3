//! What a request to the PVE API is, as plain data: its method, its path (`ApiPath`, segments
//! percent-encoded when sent) and its parameters (`Form`). The client sends these, the schema checks
//! them, the footprint reads through `Read`; none of those needs the others to name a request.

use std::fmt;

use serde_json::Value;

use crate::error::{Error, Result};

/// HTTP methods the PVE API uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Method {
    Get,
    Post,
    Put,
    Delete,
}

impl Method {
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Delete => "DELETE",
        }
    }
}

/// Request parameters, in order: the query for GET/DELETE, the form body for POST/PUT.
pub type Form = Vec<(String, String)>;

/// Build a `Form` from pairs of anything string-like.
pub fn form<K: Into<String>, V: Into<String>>(pairs: impl IntoIterator<Item = (K, V)>) -> Form {
    pairs.into_iter().map(|(k, v)| (k.into(), v.into())).collect()
}

/// A request path below `/api2/json`, kept as its segments. It is the only way to name an
/// endpoint: `encoded()` percent-encodes every segment, so a `/`, `?`, `#` or `%` inside a value
/// (a node name, a UPID, ...) stays part of that one segment.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ApiPath(Vec<String>);

impl ApiPath {
    /// `ApiPath::new(["nodes", node, "qemu"])`.
    pub fn new<S: AsRef<str>>(segments: impl IntoIterator<Item = S>) -> ApiPath {
        ApiPath(segments.into_iter().map(|s| s.as_ref().to_string()).collect())
    }

    /// This path with more segments after it: `vm.path().join(["status", "stop"])`.
    pub fn join<S: AsRef<str>>(&self, more: impl IntoIterator<Item = S>) -> ApiPath {
        let mut segments = self.0.clone();
        segments.extend(more.into_iter().map(|s| s.as_ref().to_string()));
        ApiPath(segments)
    }

    pub fn segments(&self) -> &[String] {
        &self.0
    }

    /// The path as sent: `/` and each segment percent-encoded.
    pub fn encoded(&self) -> String {
        self.0.iter().map(|s| format!("/{}", percent_encode(s))).collect()
    }

    /// Refuse, before any I/O, a segment that encoding cannot make safe: an empty one (servers
    /// collapse `//`, so the next segment would move up) and `.`/`..` (dot-segments, which URL
    /// normalisation removes together with the segment before them).
    pub fn check(&self) -> Result<()> {
        match self.0.iter().find(|s| s.is_empty() || *s == "." || *s == "..") {
            Some(bad) => Err(Error::Internal(format!(
                "refusing to call a path with the segment {bad:?}: {} (a value that should have been refused earlier)",
                self.encoded()
            ))),
            None => Ok(()),
        }
    }
}

impl fmt::Display for ApiPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.encoded())
    }
}

/// A request as a message names it: `PUT /nodes/pve1/qemu/100/config (memory, net1)`, the
/// parameters' names only (never a value, which may be a secret), `digest` left out, at most six.
pub fn describe(method: Method, path: &ApiPath, form: &Form) -> String {
    let keys: Vec<&str> = form.iter().map(|(k, _)| k.as_str()).filter(|k| *k != "digest").collect();
    let mut text = format!("{} {path}", method.as_str());
    if !keys.is_empty() {
        let more = if keys.len() > 6 { format!(", and {} more", keys.len() - 6) } else { String::new() };
        text.push_str(&format!(" ({}{more})", keys[..keys.len().min(6)].join(", ")));
    }
    text
}

/// Percent-encode everything but RFC 3986's unreserved characters: a path segment (UPIDs
/// contain `:`, `@` and `!`) or a `urlencoded` PVE value such as `sshkeys` (the same as Python's
/// `urllib.parse.quote(text, safe='')`, which community.proxmox applies).
pub fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.' | b'~') {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// A read of the API (`GET path?query`, the answer's `data`), for code that only reads and must not
/// name the client (the footprint and the write journal): `&|p, q| api.get(p, q)`.
pub type Read<'a> = &'a dyn Fn(&ApiPath, &Form) -> Result<Value>;

//! What the API's certificate is checked against when `ca_path` is unset: the system's trust store, read where OpenSSL (hence Python's ssl and curl) reads it.
//!
//! `SSL_CERT_FILE` and `SSL_CERT_DIR`, when either is set, name the store, as for OpenSSL; else
//! the first CA bundle of the usual places that exists (Debian's `/etc/ssl/certs/ca-certificates.crt`,
//! Red Hat's, SUSE's, Alpine's and macOS's `/etc/ssl/cert.pem`). A system without any (a minimal container without ca-certificates) leaves
//! the bundled Mozilla roots (webpki-roots, in ureq). `ca_path` replaces both with the CA file it
//! names. Read here with std alone rather than with a crate: ARCHITECTURE.md, "Dependencies".

use std::path::Path;

/// The CA bundles OpenSSL builds use by default, by distribution, in the order they are tried.
const BUNDLES: [&str; 5] = [
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
];

/// Where the roots came from, for the message of a certificate that did not verify.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Trust {
    /// The certificates of the `ca_path` file.
    CaPath(String),
    /// The system's trust store, named as in messages: the variables that chose it, or the system's.
    System(String),
    /// The bundled Mozilla roots: the system's store had none (or verification is off, where no
    /// certificate is checked and no message names the roots).
    Bundled,
}

impl Trust {
    /// How the message of an unverified certificate names what it was checked against.
    pub fn describe(&self) -> String {
        match self {
            Trust::CaPath(path) => format!("the CA file {path} (ca_path)"),
            Trust::System(source) => source.clone(),
            Trust::Bundled => "the bundled Mozilla roots (no system trust store found)".to_string(),
        }
    }
}

/// The system's roots as PEM text, and how they are described; `Trust::Bundled` and no text
/// when the system has none.
pub fn system_roots() -> (Trust, String) {
    let (file, dir) = (env_var("SSL_CERT_FILE"), env_var("SSL_CERT_DIR"));
    let pem = if file.is_some() || dir.is_some() {
        let mut pem = file.as_deref().map(read_pem).unwrap_or_default();
        if let Some(dir) = &dir {
            // SSL_CERT_DIR is a list, as for OpenSSL (':' separated).
            dir.split(':').for_each(|d| pem.push_str(&read_dir_pem(Path::new(d))));
        }
        pem
    } else {
        BUNDLES.iter().map(|b| read_pem(b)).find(|p| !p.is_empty()).unwrap_or_default()
    };
    if pem.is_empty() {
        return (Trust::Bundled, pem);
    }
    (Trust::System(source_from_env(file.as_deref(), dir.as_deref())), pem)
}

/// The text of one file ("" when it cannot be read; the PEM parser keeps its certificates).
fn read_pem(path: &str) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

/// The text of every file of a directory (the PEM parser keeps the certificates).
fn read_dir_pem(dir: &Path) -> String {
    let Ok(entries) = std::fs::read_dir(dir) else { return String::new() };
    let mut pem = String::new();
    for path in entries.filter_map(|e| e.ok().map(|e| e.path())) {
        if let Ok(text) = std::fs::read_to_string(path) {
            pem.push_str(&text);
            pem.push('\n');
        }
    }
    pem
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// The trust store's name in messages: the variables that chose it, else the system's.
fn source_from_env(file: Option<&str>, dir: Option<&str>) -> String {
    match (file, dir) {
        (Some(f), Some(d)) => format!("the trust store of SSL_CERT_FILE={f}, SSL_CERT_DIR={d}"),
        (Some(f), None) => format!("the trust store of SSL_CERT_FILE={f}"),
        (None, Some(d)) => format!("the trust store of SSL_CERT_DIR={d}"),
        (None, None) => "the system's trust store".to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_source_of_roots_is_named_as_a_user_would_look_for_it() {
        assert_eq!(source_from_env(None, None), "the system's trust store");
        assert_eq!(
            source_from_env(Some("/etc/corp/ca.pem"), None),
            "the trust store of SSL_CERT_FILE=/etc/corp/ca.pem"
        );
        assert_eq!(
            source_from_env(Some("/a.pem"), Some("/certs")),
            "the trust store of SSL_CERT_FILE=/a.pem, SSL_CERT_DIR=/certs"
        );
        assert_eq!(Trust::CaPath("ca.pem".into()).describe(), "the CA file ca.pem (ca_path)");
        assert_eq!(Trust::System("the system's trust store".into()).describe(), "the system's trust store");
        assert!(Trust::Bundled.describe().contains("bundled Mozilla roots"));
    }
}

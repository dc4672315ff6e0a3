//! The connection options every module shares (named as community.proxmox names them) and
//! the typed `Connection` built from them.

use crate::error::{clip, Error, Result};
use crate::spec::{DefaultValue, Kind, OptionSpec, Params};

pub const AUTH_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("api_host", Kind::Str, &["The Proxmox VE host (name or address) to connect to. A port may follow as C(host:port). A URL such as C(https://pve1:8006/) is accepted too (scheme C(https) only, no path but C(/api2/json))."])
        .required()
        .env(&["PROXMOX_HOST"]),
    OptionSpec::new("api_port", Kind::Int, &["The port of the Proxmox VE API. Defaults to 8006."]).env(&["PROXMOX_PORT"]),
    OptionSpec::new("api_user", Kind::Str, &["The user to authenticate as, C(user@realm)."])
        .required()
        .env(&["PROXMOX_USER"]),
    OptionSpec::new("api_password", Kind::Str, &["The user's password. When set, password (ticket) authentication is used instead of an API token."])
        .no_log()
        .env(&["PROXMOX_PASSWORD"]),
    OptionSpec::new("api_otp", Kind::Str, &[
        "The current one-time password of O(api_user)'s second factor, for a password login (O(api_password)) of a user with two-factor authentication: Proxmox VE then answers the password with a challenge, which the module completes with this code.",
        "A bare TOTP code such as C(123456) is sent as C(totp:123456); a value with a type prefix (C(totp:), C(recovery:) for a recovery key) is sent as it is.",
        "Proxmox VE accepts a TOTP code for one login only, and every task logs in: a code an earlier task used is refused. For more than one task, use an API token (O(api_token_id)), which has no second factor.",
        "Not used with an API token, nor when the user has no second factor.",
    ])
    .no_log()
    .env(&["PROXMOX_OTP"]),
    OptionSpec::new("api_token_id", Kind::Str, &["The id of the API token (the part after C(!)), for token authentication."])
        .not_secret()
        .env(&["PROXMOX_TOKEN_ID"]),
    OptionSpec::new("api_token_secret", Kind::Str, &["The secret of the API token."])
        .no_log()
        .env(&["PROXMOX_TOKEN_SECRET"]),
    OptionSpec::new("api_timeout", Kind::Int, &["Timeout of each HTTP request to the API, in seconds (not of Proxmox tasks: see the module's own C(timeout) where it has one)."])
        .default(DefaultValue::Int(5))
        .env(&["PROXMOX_API_TIMEOUT"]),
    OptionSpec::new("validate_certs", Kind::Bool, &["Whether to verify the API's TLS certificate. Unlike community.proxmox 1.x, the default is C(true); set O(ca_path) for a private CA."])
        .default(DefaultValue::Bool(true))
        .env(&["PROXMOX_VALIDATE_CERTS"]),
    OptionSpec::new("ca_path", Kind::Path, &["A PEM file with the CA certificate(s) to trust when O(validate_certs=true), for a Proxmox VE with a self-signed or private CA."])
        .env(&["PROXMOX_CA_PATH"]),
];

pub const AUTH_REQUIRED_TOGETHER: &[&[&str]] = &[&["api_token_id", "api_token_secret"]];
pub const AUTH_REQUIRED_ONE_OF: &[&[&str]] = &[&["api_password", "api_token_id"]];

/// How to authenticate.
#[derive(Clone, PartialEq)]
pub enum Credentials {
    /// `PVEAPIToken=<user>!<token_id>=<secret>`.
    Token { token_id: String, secret: String },
    /// A ticket from `POST /access/ticket`, plus its CSRF token for writes; `otp` answers the
    /// second-factor challenge of a user with two-factor authentication.
    Password { password: String, otp: Option<String> },
}

// Never print a secret, not even in debug output.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Token { token_id, .. } => write!(f, "Token {{ token_id: {token_id:?}, secret: <hidden> }}"),
            Credentials::Password { otp, .. } => {
                write!(f, "Password {{ password: <hidden>, otp: {} }}", if otp.is_some() { "<hidden>" } else { "None" })
            }
        }
    }
}

/// Where and how to reach the PVE API.
#[derive(Clone, Debug, PartialEq)]
pub struct Connection {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub credentials: Credentials,
    pub timeout_secs: u64,
    pub validate_certs: bool,
    pub ca_path: Option<String>,
}

impl Connection {
    pub fn from_params(p: &Params) -> Result<Connection> {
        let host_opt = p.str("api_host").unwrap_or_default().trim().to_string();
        if host_opt.is_empty() {
            return Err(Error::args("api_host must not be empty"));
        }
        let (host, port_in_host) = parse_api_host(&host_opt)?;
        let port = match p.int("api_port") {
            Some(port) => u16::try_from(port)
                .ok()
                .filter(|p| *p > 0)
                .ok_or_else(|| Error::args(format!("api_port must be between 1 and 65535, got {port}")))?,
            None => port_in_host.unwrap_or(8006),
        };
        let user = p.str("api_user").unwrap_or_default().to_string();
        if !user.contains('@') {
            return Err(Error::args(format!(
                "api_user must be of the form user@realm (for example root@pam), got '{}'",
                clip(&user, 80)
            )));
        }
        let credentials = match (p.str("api_password"), p.str("api_token_id"), p.str("api_token_secret")) {
            (Some(pw), _, _) => Credentials::Password {
                password: pw.to_string(),
                // An empty api_otp (an unset variable in a template) means none.
                otp: p.str("api_otp").map(str::trim).filter(|s| !s.is_empty()).map(str::to_string),
            },
            (None, Some(id), Some(secret)) => {
                // Accept the full form "user@realm!id" too, as users often paste it.
                let id = id.rsplit('!').next().unwrap_or(id).to_string();
                if id.is_empty() {
                    return Err(Error::args("api_token_id must not be empty"));
                }
                Credentials::Token { token_id: id, secret: secret.to_string() }
            }
            _ => return Err(Error::args("one of the following is required: api_password, api_token_id")),
        };
        let timeout = p.int("api_timeout").unwrap_or(5);
        if timeout <= 0 {
            return Err(Error::args(format!("api_timeout must be a positive number of seconds, got {timeout}")));
        }
        Ok(Connection {
            host,
            port,
            user,
            credentials,
            timeout_secs: timeout as u64,
            validate_certs: p.bool("validate_certs").unwrap_or(true),
            // An empty ca_path (an unset variable in a template) means none.
            ca_path: p.str("ca_path").filter(|s| !s.is_empty()).map(str::to_string),
        })
    }

    /// Who we authenticate as, for messages: the user, and the token id when a token is used.
    pub fn principal(&self) -> String {
        match &self.credentials {
            Credentials::Token { token_id, .. } => format!("{}!{} (API token)", self.user, token_id),
            Credentials::Password { otp: None, .. } => format!("{} (password)", self.user),
            Credentials::Password { otp: Some(_), .. } => format!("{} (password and one-time password)", self.user),
        }
    }
}

/// `api_host` as a host, `host:port`, `[v6]:port`, or an `https://` URL of the API's origin.
/// What cannot be a host (a path, a query, credentials, another scheme) is refused with the fix,
/// before any connection.
fn parse_api_host(text: &str) -> Result<(String, Option<u16>)> {
    let shown = clip(text, 80);
    let mut authority = text;
    if let Some((scheme, rest)) = text.split_once("://") {
        if !scheme.eq_ignore_ascii_case("https") {
            return Err(Error::args(format!(
                "api_host: the Proxmox VE API is served over https only, got a {} URL; give the host, e.g. api_host: pve1 (port 8006 is the default)",
                clip(scheme, 16)
            )));
        }
        let (auth, path) = rest.split_once('/').map_or((rest, ""), |(a, p)| (a, p));
        if !matches!(path.trim_end_matches('/'), "" | "api2/json") {
            return Err(Error::args(format!(
                "api_host: give the host (optionally https:// and a port), not a path: '{shown}'; e.g. api_host: pve1 or https://pve1:8006"
            )));
        }
        authority = auth;
    }
    if authority.contains('@') {
        // Never echo it: the part before `@` may be a password.
        return Err(Error::args(
            "api_host must not contain credentials (user@host): give them as api_user and api_password or api_token_id/api_token_secret",
        ));
    }
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '[' | ']' | '%');
    if authority.is_empty() || !authority.chars().all(allowed) {
        return Err(Error::args(format!(
            "api_host: '{shown}' is not a host name or address (optionally with :port); e.g. api_host: pve1, pve1:8006 or https://pve1:8006"
        )));
    }
    split_host_port(authority)
}

/// The answer to PVE's second-factor challenge for the one-time password `otp`: PVE reads it as
/// `<type>:<value>` (proxmox-tfa `TfaResponse::from_str`: `totp:`, `recovery:`, `u2f:`,
/// `webauthn:`) and refuses anything else, so a bare code is taken for what users mean by a
/// one-time password, a TOTP code, as the TOTP form of PVE's login dialog sends it.
pub fn tfa_response(otp: &str) -> String {
    const TYPES: [&str; 4] = ["totp:", "recovery:", "u2f:", "webauthn:"];
    if TYPES.iter().any(|t| otp.starts_with(t)) {
        otp.to_string()
    } else {
        format!("totp:{otp}")
    }
}

fn split_host_port(text: &str) -> Result<(String, Option<u16>)> {
    let bad = || {
        Error::args(format!(
            "api_host has an invalid port: '{}' (expected host or host:port with a port from 1 to 65535)",
            clip(text, 80)
        ))
    };
    if let Some(rest) = text.strip_prefix('[') {
        // [v6]:port or [v6]
        let (addr, tail) = rest.split_once(']').ok_or_else(bad)?;
        let port = match tail.strip_prefix(':') {
            Some(p) => Some(p.parse().map_err(|_| bad())?),
            None if tail.is_empty() => None,
            None => return Err(bad()),
        };
        return Ok((format!("[{addr}]"), port));
    }
    match text.matches(':').count() {
        0 => Ok((text.to_string(), None)),
        1 => {
            let (h, p) = text.split_once(':').ok_or_else(bad)?;
            Ok((h.to_string(), Some(p.parse().map_err(|_| bad())?)))
        }
        // A bare IPv6 address.
        _ => Ok((format!("[{text}]"), None)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(split_host_port("pve1").unwrap(), ("pve1".into(), None));
        assert_eq!(split_host_port("pve1:8443").unwrap(), ("pve1".into(), Some(8443)));
        assert_eq!(split_host_port("[::1]:8006").unwrap(), ("[::1]".into(), Some(8006)));
        assert_eq!(split_host_port("::1").unwrap(), ("[::1]".into(), None));
        assert!(split_host_port("pve1:http").is_err());
    }

    #[test]
    fn api_host_as_url() {
        for (text, want) in [
            ("https://pve1:8006/", ("pve1", Some(8006))),
            ("https://pve1:8006", ("pve1", Some(8006))),
            ("HTTPS://pve1/api2/json/", ("pve1", None)),
            ("https://[::1]:8443/", ("[::1]", Some(8443))),
            ("pve1.example.org", ("pve1.example.org", None)),
        ] {
            assert_eq!(parse_api_host(text).unwrap(), (want.0.to_string(), want.1), "{text}");
        }
        for (text, want) in [
            ("http://pve1:8006/", "api_host: the Proxmox VE API is served over https only, got a http URL"),
            ("https://pve1:8006/other", "api_host: give the host (optionally https:// and a port), not a path"),
            ("https://root:secret@pve1/", "api_host must not contain credentials"),
            ("pve1/x", "api_host: 'pve1/x' is not a host name or address"),
            ("pve1?x=1", "api_host: 'pve1?x=1' is not a host name or address"),
            ("pve1:99999", "api_host has an invalid port: 'pve1:99999'"),
        ] {
            let e = parse_api_host(text).unwrap_err().to_string();
            assert!(e.starts_with(want), "{text}: {e}");
            assert!(!e.contains("root:secret"), "{e}");
        }
        let e = parse_api_host(&"h/".repeat(50_000)).unwrap_err().to_string();
        assert!(e.len() < 300, "{}", e.len());
    }

    #[test]
    fn debug_never_shows_secrets() {
        let c = Credentials::Token { token_id: "automation".into(), secret: "topsecret".into() };
        assert!(!format!("{c:?}").contains("topsecret"));
        let pw = Credentials::Password { password: "pw123".into(), otp: Some("654321".into()) };
        assert!(!format!("{pw:?}").contains("pw123"));
        assert!(!format!("{pw:?}").contains("654321"));
    }

    #[test]
    fn tfa_response_forms() {
        assert_eq!(tfa_response("123456"), "totp:123456");
        assert_eq!(tfa_response("totp:123456"), "totp:123456");
        assert_eq!(tfa_response("recovery:abcd-ef01"), "recovery:abcd-ef01");
    }

    fn params(pairs: &[(&str, &str)]) -> Params {
        Params::from_values(
            pairs.iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string()))).collect(),
        )
    }

    #[test]
    fn otp_goes_with_the_password_only() {
        let base = [("api_host", "pve1"), ("api_user", "u@pve")];
        let c = Connection::from_params(&params(&[base[0], base[1], ("api_password", "pw"), ("api_otp", " 123456 ")]))
            .unwrap();
        assert_eq!(c.credentials, Credentials::Password { password: "pw".into(), otp: Some("123456".into()) });
        assert_eq!(c.principal(), "u@pve (password and one-time password)");
        let c = Connection::from_params(&params(&[base[0], base[1], ("api_password", "pw"), ("api_otp", "")])).unwrap();
        assert_eq!(c.credentials, Credentials::Password { password: "pw".into(), otp: None });
        let c = Connection::from_params(&params(&[
            base[0],
            base[1],
            ("api_token_id", "t"),
            ("api_token_secret", "s"),
            ("api_otp", "123456"),
        ]))
        .unwrap();
        assert_eq!(c.credentials, Credentials::Token { token_id: "t".into(), secret: "s".into() });
    }
}

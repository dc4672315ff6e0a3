//! The connection options every module shares (named as community.proxmox names them) and
//! the typed `Connection` built from them.

use crate::error::{Error, Result};
use crate::spec::{DefaultValue, Kind, OptionSpec, Params};

pub const AUTH_OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("api_host", Kind::Str, &["The Proxmox VE host (name or address) to connect to. A port may follow as C(host:port)."])
        .required()
        .env(&["PROXMOX_HOST"]),
    OptionSpec::new("api_port", Kind::Int, &["The port of the Proxmox VE API. Defaults to 8006."]).env(&["PROXMOX_PORT"]),
    OptionSpec::new("api_user", Kind::Str, &["The user to authenticate as, C(user@realm)."])
        .required()
        .env(&["PROXMOX_USER"]),
    OptionSpec::new("api_password", Kind::Str, &["The user's password. When set, password (ticket) authentication is used instead of an API token."])
        .no_log()
        .env(&["PROXMOX_PASSWORD"]),
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
    /// A ticket from `POST /access/ticket`, plus its CSRF token for writes.
    Password(String),
}

// Never print a secret, not even in debug output.
impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Credentials::Token { token_id, .. } => write!(f, "Token {{ token_id: {token_id:?}, secret: <hidden> }}"),
            Credentials::Password(_) => f.write_str("Password(<hidden>)"),
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
        let (host, port_in_host) = split_host_port(&host_opt)?;
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
                "api_user must be of the form user@realm (for example root@pam), got '{user}'"
            )));
        }
        let credentials = match (p.str("api_password"), p.str("api_token_id"), p.str("api_token_secret")) {
            (Some(pw), _, _) => Credentials::Password(pw.to_string()),
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
            Credentials::Password(_) => format!("{} (password)", self.user),
        }
    }
}

fn split_host_port(text: &str) -> Result<(String, Option<u16>)> {
    let bad = || Error::args(format!("api_host has an invalid port: '{text}'"));
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
    fn debug_never_shows_secrets() {
        let c = Credentials::Token { token_id: "automation".into(), secret: "topsecret".into() };
        assert!(!format!("{c:?}").contains("topsecret"));
        assert!(!format!("{:?}", Credentials::Password("pw123".into())).contains("pw123"));
    }
}

//! From a module's options to its started run: the one place where the Ansible side (the
//! options, the run's context) meets the PVE side (`Connection`, `PveClient`), and the start-up
//! every module shares (`Session`).

use std::time::Duration;

use crate::ansible::spec::Args;
use crate::check::plan_verify;
use crate::check::predictions::Predictions;
use crate::check::saved::SavedTask;
use crate::check::world::World;
use crate::error::{clip, Error, Result};
use crate::protocol::Context;
use crate::pve::auth::{Connection, Credentials};
use crate::pve::client::PveClient;
use crate::pve::permissions::{Held, Privileges};

/// What the start-up needs to know of a module's typed task.
pub trait Task {
    /// The vmid the task names, if it names one: returned on failure too (`Context::identify`).
    fn vmid(&self) -> Option<u64>;
    /// How long reads wait for a VM whose create or clone runs (the task's `timeout`); `None`:
    /// the world's default.
    fn wait(&self) -> Option<Duration> {
        None
    }
}

/// A module's run once started: its task, who it authenticates as, the client, and what the
/// check-mode world of the run is built from. Every module's `main` starts with `Session::start`.
pub struct Session<P> {
    pub params: P,
    pub api: PveClient,
    /// Who the run authenticates as (`Connection::authid`), whose privileges are checked.
    pub authid: String,
    predictions: Option<Predictions>,
    saved: Option<SavedTask>,
    /// What the user holds, read at most once per run however many `Privileges` ask (the
    /// checks' and the world's wait for a VM in flight).
    held: Held,
}

impl<P: Task> Session<P> {
    /// The shared start-up, in this order: the typed task from the validated options (its
    /// warnings into the result), the vmid it names recorded, the connection options checked,
    /// the client connected (`connect`).
    pub fn start(
        ctx: &mut Context,
        from_spec: impl FnOnce(&Args, &mut dyn FnMut(String)) -> Result<P>,
    ) -> Result<Self> {
        let params = ctx.parse(from_spec)?;
        if let Some(id) = params.vmid() {
            ctx.identify("vmid", id);
        }
        let authid = connection(&ctx.params)?.authid();
        let mut api = connect(ctx)?;
        // a saved plan's whole-run verification ends the invocation here (`check::plan_verify`)
        if let Some((saved, records)) = ctx.saved.as_ref().and_then(|s| Some((s, s.verifying()?))) {
            return Err(plan_verify::run(&api, &records, saved));
        }
        // A transient refusal is sent again within the task's `timeout` (pve::transient, §55).
        if let Some(wait) = params.wait() {
            api.retrying_for(wait);
        }
        Ok(Session {
            params,
            api,
            authid,
            predictions: ctx.predictions.clone(),
            saved: ctx.saved.clone(),
            held: Held::default(),
        })
    }

    /// What the task reads PVE through: the run's predictions in check mode, its saved plan, and
    /// the task's wait for a VM in flight (by this run's user).
    pub fn world(&self) -> World<'_> {
        let world = World::new(&self.api, self.predictions.clone())
            .saving(self.saved.clone())
            .seen_by(&self.authid, &self.held);
        match self.params.wait() {
            Some(wait) => world.waiting_up_to(wait),
            None => world,
        }
    }

    /// The privileges of the user the run authenticates as, read once per task (shared with the
    /// world's: one `GET /access/permissions` at most), and only when a check asks.
    pub fn privileges(&self) -> Privileges<'_> {
        Privileges::new(&self.api, &self.authid).sharing(&self.held)
    }
}

/// Build a client from the module's connection options, warning in the result when TLS
/// verification is off. Every write the client sees accepted is recorded in the run's journal.
pub fn connect(ctx: &mut Context) -> Result<PveClient> {
    let conn = connection(&ctx.params)?;
    if !conn.validate_certs {
        ctx.warn("validate_certs is false: the TLS certificate of the Proxmox VE API is not verified; set ca_path to its CA instead");
    }
    PveClient::connect(&conn, ctx.journal.clone())
}

/// The typed connection from the options (`api_host`, `api_user`, ...), checked before any call.
pub fn connection(p: &Args) -> Result<Connection> {
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

    fn params(pairs: &[(&str, &str)]) -> Args {
        Args::from_values(
            pairs.iter().map(|(k, v)| (k.to_string(), serde_json::Value::String(v.to_string()))).collect(),
        )
    }

    #[test]
    fn otp_goes_with_the_password_only() {
        let base = [("api_host", "pve1"), ("api_user", "u@pve")];
        let c = connection(&params(&[base[0], base[1], ("api_password", "pw"), ("api_otp", " 123456 ")])).unwrap();
        assert_eq!(c.credentials, Credentials::Password { password: "pw".into(), otp: Some("123456".into()) });
        assert_eq!(c.principal(), "u@pve (password and one-time password)");
        assert_eq!(c.authid(), "u@pve");
        let c = connection(&params(&[base[0], base[1], ("api_password", "pw"), ("api_otp", "")])).unwrap();
        assert_eq!(c.credentials, Credentials::Password { password: "pw".into(), otp: None });
        let c = connection(&params(&[
            base[0],
            base[1],
            ("api_token_id", "t"),
            ("api_token_secret", "s"),
            ("api_otp", "123456"),
        ]))
        .unwrap();
        assert_eq!(c.credentials, Credentials::Token { token_id: "t".into(), secret: "s".into() });
        // What PVE's ACLs (and `GET /access/permissions`) see: the token, not its user.
        assert_eq!(c.authid(), "u@pve!t");
    }
}

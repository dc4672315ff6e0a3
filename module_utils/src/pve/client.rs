//! The PVE API client: the only code in the workspace that does network I/O.
//!
//! `Api` is the seam: modules and the task waiter talk to `&dyn Api`, `PveClient` implements it
//! over HTTPS (ureq + rustls), and tests implement it with scripted answers. A request path is an
//! `ApiPath` (pve/request.rs: its segments, each percent-encoded when sent), so no value can add a
//! segment, a query or a fragment, and no module formats a URL. Every write is checked against PVE's API
//! schema (`pve::schema::check_write`) before it is sent, once: a module checks its planned writes
//! through `Api::check_write` before the first of them (in check mode too), and `PveClient`
//! remembers those, so sending one does not check it again; a write it has not seen checked is
//! checked as it is sent, so nothing unchecked is ever sent (a form sent other than as checked,
//! such as a clone's configuring write, is so checked twice). Retry policy lives
//! here: reads (GET) are retried on transient failures with backoff; a write is sent again only
//! when PVE is known to have done nothing with it (`pve::transient`, §55), and a write whose answer
//! was lost, which may already have been applied, is first reconciled by reading what PVE did.

use std::sync::Mutex;
use std::time::Duration;

use serde_json::Value;

use crate::error::{clip, Error, Result};
use crate::pve::auth::{tfa_response, Connection, Credentials};
use crate::pve::footprint::{Footprint, RecentReads};
use crate::pve::journal::WriteJournal;
use crate::pve::pveformat::QUOTE_MAX;
use crate::pve::request::{form, ApiPath, Form, Method};
use crate::pve::schema;
use crate::pve::transient::{self, Backoff, Class, Reconciled};
use crate::pve::trust::{system_roots, Trust};

/// The PVE API as modules see it: a path below `/api2/json` in, the `data` of the answer out.
pub trait Api {
    fn call(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value>;

    fn get(&self, path: &ApiPath, query: &Form) -> Result<Value> {
        self.call(Method::Get, path, query)
    }
    fn post(&self, path: &ApiPath, body: &Form) -> Result<Value> {
        self.call(Method::Post, path, body)
    }
    fn put(&self, path: &ApiPath, body: &Form) -> Result<Value> {
        self.call(Method::Put, path, body)
    }
    fn delete(&self, path: &ApiPath, query: &Form) -> Result<Value> {
        self.call(Method::Delete, path, query)
    }
    /// The run's record of accepted writes, when this client keeps one (`PveClient` does).
    fn journal(&self) -> Option<&WriteJournal> {
        None
    }
    /// Check a write against PVE's API schema before it is sent (`pve::schema::check_write`),
    /// in check and real runs alike. `PveClient` remembers the writes checked here, so that
    /// sending one does not check it a second time.
    fn check_write(&self, method: Method, path: &ApiPath, params: &Form) -> Result<()> {
        schema::check_write(method, path, params)
    }
    /// The user holds `VM.Audit` on every guest (`Privileges::sees_every_guest`): a new VM's
    /// footprint takes "no config" from a `/cluster/resources` read that leaves its vmid out (§66.6).
    fn every_guest_listed(&self) {}
}

/// The words of a certificate verification failure (a permanent one: never retried).
const TLS_UNVERIFIED: &str = "could not be verified";

/// How many times a read is tried, and the pause before each retry.
const READ_BACKOFF: [Duration; 3] =
    [Duration::from_millis(200), Duration::from_millis(500), Duration::from_millis(1200)];

/// An authenticated HTTPS client for one PVE API endpoint.
pub struct PveClient {
    agent: ureq::Agent,
    base: String,
    principal: String,
    auth_header: (String, String),
    csrf_token: Option<String>,
    /// Every write PVE accepts is recorded here, so a later failure still reports the change.
    journal: WriteJournal,
    /// What was read since the last write, for the footprint of the next one.
    recent: RecentReads,
    /// The writes `Api::check_write` checked and that have not been sent yet (method, encoded
    /// path, form as given): `send` sends one of them without checking it again.
    checked: Mutex<Vec<(Method, String, Form)>>,
    /// What the server's certificate is checked against, for the message when it does not verify.
    trust: Trust,
    /// Who PVE sees (`user@realm` or `user@realm!token`): whose tasks a lost answer looks for.
    authid: String,
    /// How long a write refused transiently is sent again (`pve::transient`: the task's `timeout`).
    retry_budget: Duration,
}

impl PveClient {
    /// Build the agent and authenticate (one `POST /access/ticket` for password auth); every write
    /// PVE accepts is recorded in `journal`.
    pub fn connect(conn: &Connection, journal: WriteJournal) -> Result<PveClient> {
        let (tls, trust) = tls_config(conn)?;
        let config = ureq::Agent::config_builder()
            .tls_config(tls)
            .timeout_global(Some(Duration::from_secs(conn.timeout_secs)))
            .http_status_as_error(false)
            // PVE never redirects its API: a 3xx comes from something else (a proxy, another
            // web service on that port) and is refused in `send`, never followed.
            .max_redirects(0)
            .user_agent(concat!("ferro.proxmox/", env!("CARGO_PKG_VERSION")))
            .build();
        let agent: ureq::Agent = config.into();
        let base = format!("https://{}:{}/api2/json", conn.host, conn.port);
        let mut client = PveClient {
            agent,
            base,
            principal: conn.principal(),
            auth_header: (String::new(), String::new()),
            csrf_token: None,
            journal,
            recent: RecentReads::default(),
            checked: Mutex::new(Vec::new()),
            trust,
            authid: conn.authid(),
            retry_budget: transient::DEFAULT_BUDGET,
        };
        match &conn.credentials {
            Credentials::Token { token_id, secret } => {
                client.auth_header =
                    ("Authorization".into(), format!("PVEAPIToken={}!{}={}", conn.user, token_id, secret));
            }
            Credentials::Password { password, otp } => {
                // A ticket changes nothing on PVE (pve-access-control `create_ticket` signs one): the
                // password step is sent again on a transient refusal or a lost answer (§55, §60).
                let (login, body) =
                    (ApiPath::new(["access", "ticket"]), form([("username", &conn.user), ("password", password)]));
                let (mut backoff, call) = (Backoff::new(transient::DEFAULT_BUDGET), "POST /access/ticket");
                let mut answer = loop {
                    let e = match client.send(Method::Post, &login, &body) {
                        Ok(answer) => break answer,
                        Err(e) => e,
                    };
                    let why = match transient::classify(&e) {
                        Class::Final => return Err(e),
                        Class::Again(why) => why,
                        Class::Lost => "the answer was lost (a login changes nothing)".to_string(),
                    };
                    client.again(&mut backoff, call, &why).ok_or(e)?;
                };
                if needs_second_factor(&answer) {
                    answer = client.second_factor(conn, &answer, otp.as_deref())?;
                }
                let ticket = answer.get("ticket").and_then(Value::as_str);
                let csrf = answer.get("CSRFPreventionToken").and_then(Value::as_str);
                match (ticket, csrf) {
                    (Some(t), Some(c)) => {
                        client.auth_header = ("Cookie".into(), format!("PVEAuthCookie={t}"));
                        client.csrf_token = Some(c.to_string());
                    }
                    _ => return Err(Error::Internal("POST /access/ticket answered without a ticket".into())),
                }
            }
        }
        Ok(client)
    }

    /// Send transient refusals again for at most `budget` (the task's `timeout`), not the default.
    pub fn retrying_for(&mut self, budget: Duration) {
        self.retry_budget = budget;
    }

    /// A write: sent, and sent again only when PVE is known to have done nothing with it
    /// (`pve::transient`, docs/pve-semantics.md §55); a lost answer is reconciled with what PVE did.
    fn write(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value> {
        let mut backoff = Backoff::new(self.retry_budget);
        let call = format!("{} {}", method.as_str(), path.encoded());
        loop {
            // What the write's task could touch, read first, so that a failure of the task can
            // be told from a change (pve::footprint, docs/pve-semantics.md §31).
            let footprint = Footprint::before(&self.recent.over(&|p, q| self.get(p, q)), method, path, params);
            let sent_at = transient::now_secs();
            let sent = self.send(method, path, params);
            self.recent.forget();
            let answer = match sent {
                Ok(answer) => answer,
                Err(e) => match transient::classify(&e) {
                    Class::Final => return Err(e),
                    Class::Again(why) => {
                        self.again(&mut backoff, &call, &why).ok_or(e)?;
                        continue;
                    }
                    Class::Lost => {
                        let read = |p: &ApiPath, q: &Form| self.get(p, q);
                        let fp = footprint.as_ref();
                        let (answer, how) =
                            match transient::reconcile(&read, method, path, params, &self.authid, sent_at, fp) {
                                Reconciled::Unknown => return Err(e),
                                Reconciled::Nothing => {
                                    let why = "the answer was lost, and neither the task list nor the VM shows it done";
                                    self.again(&mut backoff, &call, why).ok_or(e)?;
                                    continue;
                                }
                                Reconciled::Task(upid) => {
                                    let how = format!("its task {upid} is in the node's task list");
                                    (Value::String(upid), how)
                                }
                                Reconciled::Applied => (Value::Null, "the config's digest shows it applied".into()),
                            };
                        self.journal.retried(format!("{call}: the answer was lost; {how}: not sent again"));
                        answer
                    }
                },
            };
            let names: Vec<&str> = params.iter().map(|(k, _)| k.as_str()).collect();
            self.journal.accepted_with(method.as_str(), &path.encoded(), &names, &answer, footprint);
            return Ok(answer);
        }
    }

    /// Wait before sending `call` again, noting why in the run's `retries`; `None` once the budget
    /// is spent.
    fn again(&self, backoff: &mut Backoff, call: &str, why: &str) -> Option<()> {
        let pause = backoff.pause()?;
        self.journal.retried(format!("{call}: {why}; sent again after {} ms", pause.as_millis()));
        std::thread::sleep(pause);
        Some(())
    }

    /// The second step of PVE's two-factor login (pve-access-control `API2/AccessControl.pm`
    /// `create_ticket`, `AccessControl.pm` `authenticate_user`): the password got a ticket that
    /// only carries the challenge (`NeedTFA`); the same call with that ticket as `tfa-challenge`
    /// and the answer to it as `password` gets the real ticket. The one-time password is sent
    /// only here, when PVE asks for it.
    fn second_factor(&self, conn: &Connection, challenge: &Value, otp: Option<&str>) -> Result<Value> {
        let Some(otp) = otp else {
            return Err(Error::args(format!(
                "{} has two-factor authentication: Proxmox VE asks for a second factor after the password; set api_otp (or PROXMOX_OTP) to the current one-time password, or use an API token (api_token_id, api_token_secret)",
                conn.user
            )));
        };
        let Some(challenge) = challenge.get("ticket").and_then(Value::as_str) else {
            return Err(Error::Internal("POST /access/ticket asked for a second factor without a challenge".into()));
        };
        let response = tfa_response(otp);
        let body =
            form([("username", conn.user.as_str()), ("tfa-challenge", challenge), ("password", response.as_str())]);
        self.send(Method::Post, &ApiPath::new(["access", "ticket"]), &body).map_err(|e| match e {
            // PVE answers any login failure with the same words, so say what is likely.
            Error::Api { method, path, status: 401, message } => Error::Api {
                method,
                path,
                status: 401,
                message: format!(
                    "{message} at the second factor: the one-time password (api_otp) was refused; Proxmox VE accepts a TOTP code only while it is current and only once (a code an earlier task used is refused)"
                ),
            },
            other => other,
        })
    }

    fn send(&self, method: Method, api_path: &ApiPath, params: &Form) -> Result<Value> {
        api_path.check()?;
        // Every write, the login included, is checked against PVE's API schema first: a value
        // PVE would refuse is never sent (docs/pve-semantics.md §28). Once: a write the module
        // checked before its first write (`Api::check_write`) is not checked again.
        if !self.was_checked(method, api_path, params) {
            schema::check_write(method, api_path, params)?;
        }
        let path = api_path.encoded();
        let path = path.as_str();
        let url = format!("{}{}", self.base, path);
        let pairs = params.iter().map(|(k, v)| (k.as_str(), v.as_str()));
        let auth = (!self.auth_header.0.is_empty()).then_some(&self.auth_header);
        let response = match method {
            Method::Get | Method::Delete => {
                let mut req = if method == Method::Get { self.agent.get(&url) } else { self.agent.delete(&url) };
                if let Some((k, v)) = auth {
                    req = req.header(k.as_str(), v.as_str());
                }
                if method == Method::Delete {
                    if let Some(csrf) = &self.csrf_token {
                        req = req.header("CSRFPreventionToken", csrf.as_str());
                    }
                }
                req.query_pairs(pairs).call()
            }
            Method::Post | Method::Put => {
                let mut req = if method == Method::Post { self.agent.post(&url) } else { self.agent.put(&url) };
                if let Some((k, v)) = auth {
                    req = req.header(k.as_str(), v.as_str());
                }
                if let Some(csrf) = &self.csrf_token {
                    req = req.header("CSRFPreventionToken", csrf.as_str());
                }
                req.send_form(pairs)
            }
        };
        let mut response = response.map_err(|e| self.transport_error(method, path, &e))?;
        let status = response.status().as_u16();
        if (300..400).contains(&status) {
            let location = response.headers().get("location").and_then(|v| v.to_str().ok()).unwrap_or("");
            return Err(redirect_error(method, path, status, location, &self.base));
        }
        let body = response.body_mut().read_to_string().map_err(|e| self.transport_error(method, path, &e))?;
        decode(method, path, status, &body, &self.principal)
    }

    /// Whether `Api::check_write` checked exactly this write (same method, path and form) since
    /// it was last sent; it is then taken from the list, so each check covers one send.
    fn was_checked(&self, method: Method, path: &ApiPath, params: &Form) -> bool {
        if method == Method::Get {
            return false;
        }
        let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
        let path = path.encoded();
        match checked.iter().position(|(m, p, f)| *m == method && *p == path && f == params) {
            Some(at) => {
                checked.remove(at);
                true
            }
            None => false,
        }
    }

    fn transport_error(&self, method: Method, path: &str, e: &ureq::Error) -> Error {
        // Failures before the request left this machine cannot have changed anything.
        // What the TCP connect itself answers (ureq's connector): no byte of the request left, and
        // the next try may find the API up (a refused connection, no route); tried again (§55).
        let refused = match e {
            ureq::Error::ConnectionFailed => true,
            ureq::Error::Io(io) => matches!(
                io.kind(),
                std::io::ErrorKind::ConnectionRefused
                    | std::io::ErrorKind::HostUnreachable
                    | std::io::ErrorKind::NetworkUnreachable
                    | std::io::ErrorKind::NetworkDown
                    | std::io::ErrorKind::AddrNotAvailable
            ),
            _ => false,
        };
        let not_sent = refused || matches!(e, ureq::Error::HostNotFound | ureq::Error::Tls(_) | ureq::Error::Rustls(_));
        let mut detail = e.to_string();
        if matches!(e, ureq::Error::Tls(_) | ureq::Error::Rustls(_)) || detail.contains("certificate") {
            detail = tls_detail(self.base.trim_end_matches("/api2/json"), &detail, &self.trust);
        } else {
            // Which address was tried: a refused connection or an unknown name is fixed there.
            detail = format!("{detail} (the API at {})", self.base.trim_end_matches("/api2/json"));
        }
        if refused {
            detail.push_str(transient::NOT_SENT);
        }
        Error::Transport {
            method: method.as_str().to_string(),
            path: path.to_string(),
            detail,
            may_have_applied: method != Method::Get && !not_sent,
        }
    }
}

impl Api for PveClient {
    fn journal(&self) -> Option<&WriteJournal> {
        Some(&self.journal)
    }

    fn every_guest_listed(&self) {
        self.recent.every_guest_listed();
    }

    fn check_write(&self, method: Method, path: &ApiPath, params: &Form) -> Result<()> {
        schema::check_write(method, path, params)?;
        if method != Method::Get {
            let mut checked = self.checked.lock().unwrap_or_else(|p| p.into_inner());
            checked.push((method, path.encoded(), params.clone()));
        }
        Ok(())
    }

    fn call(&self, method: Method, path: &ApiPath, params: &Form) -> Result<Value> {
        if method != Method::Get {
            return self.write(method, path, params);
        }
        let (mut attempt, mut backoff) = (0, Backoff::new(self.retry_budget));
        loop {
            match self.send(method, path, params) {
                // A connection refused before anything was sent: tried again within the budget (§55).
                Err(e) if transient::refused_before_sending(&e) => {
                    let why = "connection failed before the request was sent";
                    self.again(&mut backoff, &format!("GET {}", path.encoded()), why).ok_or(e)?;
                }
                Err(e) if attempt < READ_BACKOFF.len() && is_transient(&e) => {
                    let (call, pause) = (format!("GET {}", path.encoded()), READ_BACKOFF[attempt]);
                    self.journal.retried(format!(
                        "{call}: {}; read again after {} ms",
                        clip(&e.to_string(), 200),
                        pause.as_millis()
                    ));
                    std::thread::sleep(pause);
                    attempt += 1;
                }
                Ok(answer) => {
                    self.recent.keep(path, params, &answer);
                    return Ok(answer);
                }
                Err(e) => {
                    self.recent.keep_absent(path, params, &e);
                    return Err(e);
                }
            }
        }
    }
}

/// What to tell the user about a certificate that did not verify. A certificate for other
/// names is its own case: another CA would not help, the name in `api_host` has to be one the
/// certificate holds.
fn tls_detail(origin: &str, detail: &str, trust: &Trust) -> String {
    let detail = clip(detail, 2 * QUOTE_MAX);
    if detail.contains("not valid for name") || detail.contains("NotValidForName") {
        return format!(
            "the TLS certificate of {origin} {TLS_UNVERIFIED}: it was issued for other names than the api_host ({detail}); connect with a name the certificate holds, or have it issued for this one (ca_path does not help with a name mismatch)"
        );
    }
    let against = trust.describe();
    let fix = match trust {
        Trust::CaPath(path) => format!("{path} is not the CA that signed it: set ca_path to that CA"),
        _ => "set ca_path to the CA that signed it".to_string(),
    };
    format!(
        "the TLS certificate of {origin} {TLS_UNVERIFIED} against {against} ({detail}); {fix} (on a Proxmox VE node: /etc/pve/pve-root-ca.pem), or validate_certs: false to skip verification"
    )
}

/// A 3xx answer: refused, never followed (PVE's API does not redirect).
fn redirect_error(method: Method, path: &str, status: u16, location: &str, base: &str) -> Error {
    let to = if location.is_empty() { String::new() } else { format!(" to {}", clip(location, QUOTE_MAX)) };
    Error::Api {
        method: method.as_str().to_string(),
        path: path.to_string(),
        status,
        message: format!(
            "{} answered a redirect{to}, which Proxmox VE's API never does: not followed; check that api_host and api_port name the Proxmox VE API itself (port 8006), not a proxy or another web service",
            base.trim_end_matches("/api2/json")
        ),
    }
}

/// Whether a `POST /access/ticket` answer is the challenge of a two-factor login rather than a
/// ticket (`NeedTFA: 1`; PVE writes numbers as numbers or strings, docs/pve-semantics.md §3).
fn needs_second_factor(answer: &Value) -> bool {
    match answer.get("NeedTFA") {
        Some(Value::Number(n)) => n.as_i64() != Some(0),
        Some(Value::String(s)) => !s.is_empty() && s != "0",
        Some(Value::Bool(b)) => *b,
        _ => false,
    }
}

/// Whether a failed read is worth trying again: no answer at all, a proxy/gateway error, or a
/// 500 whose message does not say something permanent about the object.
pub fn is_transient(e: &Error) -> bool {
    match e {
        // A certificate that does not verify will not verify on the next try either.
        Error::Transport { detail, .. } => !detail.contains(TLS_UNVERIFIED),
        Error::Api { status, message, .. } => match status {
            502 | 503 | 504 | 595 | 596 => true,
            500 => {
                const PERMANENT: [&str; 8] = [
                    "does not exist",
                    "not running",
                    "no such",
                    "not found",
                    "guest agent",
                    "unable to parse",
                    "is locked",
                    "permission",
                ];
                let lower = message.to_ascii_lowercase();
                !PERMANENT.iter().any(|p| lower.contains(p))
            }
            _ => false,
        },
        _ => false,
    }
}

/// Turn an HTTP answer into `data` or an `Error::Api` with PVE's message and parameter errors.
pub fn decode(method: Method, path: &str, status: u16, body: &str, principal: &str) -> Result<Value> {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    if (200..300).contains(&status) {
        return match parsed {
            Some(Value::Object(mut m)) => Ok(m.remove("data").unwrap_or(Value::Null)),
            _ => Err(Error::Internal(format!(
                "{} {path} answered HTTP {status} with a body that is not a PVE JSON envelope",
                method.as_str()
            ))),
        };
    }
    let mut message = parsed
        .as_ref()
        .and_then(|v| v.get("message"))
        .and_then(Value::as_str)
        .map(|m| m.trim_end().to_string())
        .unwrap_or_default();
    if message.is_empty() {
        message = match status {
            401 => "authentication failure".to_string(),
            403 => "permission denied".to_string(),
            _ => format!("HTTP {status}"),
        };
    }
    if let Some(Value::Object(errors)) = parsed.as_ref().and_then(|v| v.get("errors")) {
        let details: Vec<String> = errors
            .iter()
            .map(|(k, v)| {
                let text = v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string());
                format!("{k}: {}", text.trim_end().replace('\n', " "))
            })
            .collect();
        if !details.is_empty() {
            message = format!("{message} {}", details.join("; "));
        }
    }
    if status == 401 {
        message = format!("authentication failed for {principal}: {message}");
    } else if status == 403 {
        // who was refused (never a secret); the Display of Error::Api adds the request
        message = format!("{message}, as {principal}");
    }
    Err(Error::Api { method: method.as_str().to_string(), path: path.to_string(), status, message })
}

/// The TLS settings of a connection, and what its certificate is checked against: the `ca_path`
/// file, else the system's trust store (pve::trust), else ureq's bundled Mozilla roots.
fn tls_config(conn: &Connection) -> Result<(ureq::tls::TlsConfig, Trust)> {
    let mut builder = ureq::tls::TlsConfig::builder();
    let trust = if !conn.validate_certs {
        builder = builder.disable_verification(true);
        Trust::Bundled
    } else if let Some(path) = &conn.ca_path {
        let pem =
            std::fs::read(path).map_err(|e| Error::args(format!("ca_path: unable to read the CA file {path}: {e}")))?;
        let mut certs = Vec::new();
        for item in ureq::tls::parse_pem(&pem) {
            match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => certs.push(c.to_owned()),
                Ok(_) => {}
                Err(e) => return Err(Error::args(format!("ca_path: {path} is not a valid PEM file: {e}"))),
            }
        }
        if certs.is_empty() {
            return Err(Error::args(format!("ca_path: no certificate found in {path}")));
        }
        builder = builder.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        Trust::CaPath(path.clone())
    } else {
        let (trust, pem) = system_roots();
        // A file of the store that does not parse is skipped, as OpenSSL skips it.
        let certs: Vec<_> = ureq::tls::parse_pem(pem.as_bytes())
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c.to_owned()),
                _ => None,
            })
            .collect();
        if !certs.is_empty() {
            builder = builder.root_certs(ureq::tls::RootCerts::new_with_certs(&certs));
        }
        trust
    };
    Ok((builder.build(), trust))
}

#[cfg(test)]
pub mod testing;

#[cfg(test)]
mod tests;

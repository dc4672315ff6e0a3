//! Who a client authenticates as with the PVE API: the typed `Connection` (host, user, credentials,
//! TLS) and the answer to PVE's second-factor challenge.

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
    /// Who PVE's ACLs see: `user@realm`, or `user@realm!tokenid` for an API token (pve-access-control
    /// `PVE::AccessControl` `split_tokenid`); what `GET /access/permissions` answers for.
    pub fn authid(&self) -> String {
        match &self.credentials {
            Credentials::Token { token_id, .. } => format!("{}!{}", self.user, token_id),
            Credentials::Password { .. } => self.user.clone(),
        }
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

#[cfg(test)]
mod tests {
    use super::*;

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
}

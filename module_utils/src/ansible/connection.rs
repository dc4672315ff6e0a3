//! The connection options every module shares, named as community.proxmox names them: one option
//! group that a module lists in `ModuleSpec::option_groups`, after its own options.

use crate::ansible::spec::{doc, DefaultValue, Kind, OptionGroup, OptionSpec};

/// The connection options, with their constraints: a token id needs its secret, and one of password
/// or token is required.
pub const CONNECTION: OptionGroup = OptionGroup {
    fragment: "proxmox",
    options: CONNECTION_OPTIONS,
    required_together: &[&["api_token_id", "api_token_secret"]],
    required_one_of: &[&["api_password", "api_token_id"]],
    notes: doc(&[
        "Difference from community.proxmox: O(api_otp) is sent only when Proxmox VE asks for a second factor after the password, and a bare code is sent as C(totp:<code>) (community.proxmox sends it as it is with the password, which Proxmox VE 8 and 9 refuse). Proxmox VE accepts a TOTP code once, so each task needs a current code: use an API token for plays of more than one task.",
    ], &[]),
};

const CONNECTION_OPTIONS: &[OptionSpec] = &[
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

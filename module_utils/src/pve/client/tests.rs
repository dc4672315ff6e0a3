//! Unit tests of `client`.

use super::*;
use crate::pve::request::percent_encode;

#[test]
fn decode_success_and_errors() {
    assert_eq!(decode(Method::Get, "/version", 200, r#"{"data":{"version":"9.2"}}"#, "u").unwrap()["version"], "9.2");
    let e = decode(
        Method::Put,
        "/nodes/pve1/qemu/100/config",
        400,
        r#"{"data":null,"message":"Parameter verification failed.\n","errors":{"net0":"invalid format - format error\nnet0.tag: value must have a maximum value of 4094\n"}}"#,
        "u",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Parameter verification failed. net0: invalid format - format error net0.tag: value must have a maximum value of 4094 (HTTP 400 on PUT /nodes/pve1/qemu/100/config)"
    );
    let e = decode(Method::Get, "/cluster/resources", 401, r#"{"data":null}"#, "ansible@pve!automation (API token)")
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        "authentication failed for ansible@pve!automation (API token): authentication failure (HTTP 401 on GET /cluster/resources)"
    );
    assert!(matches!(decode(Method::Get, "/x", 200, "<html>", "u"), Err(Error::Internal(_))));
    // a 403 names who was refused, after PVE's words; the request follows
    let e = decode(
        Method::Get,
        "/nodes/pve1/qemu/100/config",
        403,
        r#"{"data":null,"message":"Permission check failed (/vms/100, VM.Audit)\n"}"#,
        "auditor@pve!readonly (API token)",
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        "Permission check failed (/vms/100, VM.Audit), as auditor@pve!readonly (API token) (HTTP 403 on GET /nodes/pve1/qemu/100/config)"
    );
}

#[test]
fn redirects_and_name_mismatches_say_what_they_are() {
    let e = redirect_error(Method::Get, "/version", 301, "https://login.example/", "https://pve1:443/api2/json");
    assert!(!is_transient(&e));
    assert_eq!(
        e.to_string(),
        "https://pve1:443 answered a redirect to https://login.example/, which Proxmox VE's API never does: not followed; check that api_host and api_port name the Proxmox VE API itself (port 8006), not a proxy or another web service (HTTP 301 on GET /version)"
    );
    let long = format!("https://x/{}", "a".repeat(100_000));
    assert!(redirect_error(Method::Get, "/v", 302, &long, "b").to_string().len() < 600);
    let mismatch = tls_detail(
        "https://10.0.0.5:8006",
        "rustls: invalid peer certificate: certificate not valid for name \"10.0.0.5\"; certificate is only valid for DnsName(\"pve1\")",
        &Trust::Bundled,
    );
    assert!(mismatch.contains("it was issued for other names than the api_host"), "{mismatch}");
    assert!(!mismatch.contains("set ca_path to the CA"), "{mismatch}");
    let unknown = tls_detail("https://pve1:8006", "rustls: invalid peer certificate: UnknownIssuer", &Trust::Bundled);
    assert!(unknown.contains("set ca_path to the CA that signed it"), "{unknown}");
    // A wrong CA file is named, as what the certificate was checked against and what to fix.
    let wrong_ca = tls_detail(
        "https://pve1:8006",
        "rustls: invalid peer certificate: UnknownIssuer",
        &Trust::CaPath("/srv/ca/other.pem".into()),
    );
    assert_eq!(
        wrong_ca,
        "the TLS certificate of https://pve1:8006 could not be verified against the CA file /srv/ca/other.pem (ca_path) (rustls: invalid peer certificate: UnknownIssuer); /srv/ca/other.pem is not the CA that signed it: set ca_path to that CA (on a Proxmox VE node: /etc/pve/pve-root-ca.pem), or validate_certs: false to skip verification"
    );
    for d in [&mismatch, &unknown] {
        assert!(!is_transient(&Error::Transport {
            method: "GET".into(),
            path: "/x".into(),
            detail: d.clone(),
            may_have_applied: false
        }));
    }
}

#[test]
fn transient_classification() {
    let api =
        |status, message: &str| Error::Api { method: "GET".into(), path: "/x".into(), status, message: message.into() };
    assert!(is_transient(&api(500, "Internal Server Error")));
    let transport = |detail: &str| Error::Transport {
        method: "GET".into(),
        path: "/x".into(),
        detail: detail.into(),
        may_have_applied: false,
    };
    assert!(is_transient(&transport("connection reset")));
    // Found by the e2e TLS tests: a wrong CA cost three retries (1.9 s) per task.
    assert!(!is_transient(&transport(
        "the TLS certificate of https://pve1:8006 could not be verified (UnknownIssuer); set ca_path"
    )));
    assert!(is_transient(&api(503, "")));
    assert!(!is_transient(&api(500, "Configuration file 'nodes/pve1/qemu-server/1.conf' does not exist")));
    assert!(!is_transient(&api(400, "Parameter verification failed.")));
    assert!(!is_transient(&api(401, "authentication failure")));
}

#[test]
fn path_segments_are_encoded_one_by_one() {
    let node = "pve1/qemu/100/status/stop#";
    let path = ApiPath::new(["nodes", node, "qemu"]);
    assert_eq!(path.encoded(), "/nodes/pve1%2Fqemu%2F100%2Fstatus%2Fstop%23/qemu");
    assert_eq!(path.segments().len(), 3);
    assert_eq!(ApiPath::new(["nodes", "pve1?x=1"]).to_string(), "/nodes/pve1%3Fx%3D1");
    assert_eq!(ApiPath::new(["a"]).join(["b c", "%2F"]).encoded(), "/a/b%20c/%252F");
    assert!(path.check().is_ok());
    for bad in ["", ".", ".."] {
        assert!(matches!(ApiPath::new(["nodes", bad, "qemu"]).check(), Err(Error::Internal(_))), "{bad:?}");
    }
    // `...` is no dot-segment: it is sent (and refused by PVE's schema, not by the client).
    assert!(ApiPath::new(["..."]).check().is_ok());
}

#[test]
fn second_factor_is_asked_for_by_need_tfa() {
    assert!(needs_second_factor(&serde_json::json!({"ticket": "PVE:!tfa!x", "NeedTFA": 1})));
    assert!(needs_second_factor(&serde_json::json!({"ticket": "PVE:!tfa!x", "NeedTFA": "1"})));
    assert!(!needs_second_factor(&serde_json::json!({"ticket": "PVE:u@pve:1", "cap": {}})));
    assert!(!needs_second_factor(&serde_json::json!({"NeedTFA": 0})));
}

#[test]
fn upid_segment_encoding() {
    assert_eq!(
        percent_encode("UPID:pve1:0000A1B2:00C0FFEE:65F00000:qmcreate:101:ansible@pve!automation:"),
        "UPID%3Apve1%3A0000A1B2%3A00C0FFEE%3A65F00000%3Aqmcreate%3A101%3Aansible%40pve%21automation%3A"
    );
}

#[test]
fn a_write_checked_before_is_sent_without_a_second_check() {
    // A token login sends nothing: the client is built without a network.
    let conn = Connection {
        host: "127.0.0.1".into(),
        port: 9,
        user: "u@pve".into(),
        credentials: Credentials::Token { token_id: "t".into(), secret: "s".into() },
        timeout_secs: 1,
        validate_certs: true,
        ca_path: None,
    };
    let client = PveClient::connect(&conn, WriteJournal::default()).unwrap();
    let path = ApiPath::new(["nodes", "pve1", "qemu", "100", "config"]);
    let body = form([("cores", "2")]);
    assert!(!client.was_checked(Method::Put, &path, &body));
    client.check_write(Method::Put, &path, &body).unwrap();
    // once per check: the same write sent again is checked again
    assert!(!client.was_checked(Method::Post, &path, &body));
    assert!(!client.was_checked(Method::Put, &path, &form([("cores", "3")])));
    assert!(client.was_checked(Method::Put, &path, &body));
    assert!(!client.was_checked(Method::Put, &path, &body));
    // a write the schema refuses is refused, and not remembered as checked
    let bad = form([("cores", "0")]);
    let e = client.check_write(Method::Put, &path, &bad).unwrap_err().to_string();
    assert!(e.starts_with("cores: "), "{e}");
    assert!(!client.was_checked(Method::Put, &path, &bad));
}

//! A VM's cloud-init password as PVE stores it, and whether a task's password is that one (docs/pve-semantics.md §29.5).
//!
//! PVE never returns `cipassword` in a config read (API2/Qemu.pm `vm_config` / `vm_pending`
//! answer `**********`). What it stores is readable in the generated cloud-init user data
//! (`GET .../cloudinit/dump?type=user`, Cloudinit.pm `cloudinit_userdata`: a `password:` line,
//! masked unless the user holds VM.Config.Cloudinit). An update stores a SHA-256-crypt hash
//! (`update_vm_api`: `PVE::Tools::encrypt_pw`, `$5$` and an 8-character salt) unless the value
//! already looks like a crypt hash or the guest is Windows; a create stores the value as given.

mod sha256crypt;

pub use sha256crypt::{sha256, sha256_crypt};

use crate::error::Result;
use crate::pve::client::Api;
use crate::pve::request::form;
use crate::pve::resources::VmResource;

/// What PVE shows instead of a password it will not return.
pub const MASKED: &str = "**********";

/// qemu-server's test for a value that is already a crypt hash (`update_vm_api`:
/// `/^\$(?:[156]|2[ay])(\$.+){2}/`): such a value is stored as given.
pub fn looks_hashed(value: &str) -> bool {
    super::pattern::compile(r"^\$(?:[156]|2[ay])(\$.+){2}").is_ok_and(|re| re.is_match(value))
}

/// Whether the stored password `stored` is the task's `wanted`: `Some(true)` or `Some(false)`
/// when that can be known, `None` when it cannot (masked, or a crypt scheme other than `$5$`).
/// A task value that is itself a hash is compared as a string, as PVE stores it as given.
pub fn matches(stored: &str, wanted: &str) -> Option<bool> {
    if stored == MASKED {
        return None;
    }
    if !looks_hashed(stored) || looks_hashed(wanted) {
        return Some(stored == wanted);
    }
    sha256_crypt(wanted, stored).map(|hash| hash == stored)
}

/// The password VM `vm` stores, from its generated cloud-init user data: `None` when it has
/// none, [`MASKED`] when this user may not see it (no VM.Config.Cloudinit).
pub fn stored(api: &dyn Api, vm: &VmResource) -> Result<Option<String>> {
    let data = api
        .get(&vm.path().join(["cloudinit", "dump"]), &form([("type", "user")]))
        .map_err(|e| e.context(&format!("reading the cloud-init user data of VM {}", vm.vmid)))?;
    Ok(data
        .as_str()
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("password: ")).map(|p| p.trim_end().to_string())))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::Value;

    fn dump_with(password: &str) -> Value {
        Value::String(format!("#cloud-config\nhostname: vm\nmanage_etc_hosts: true\npassword: {password}\n"))
    }

    #[test]
    fn what_qemu_server_takes_for_a_hash() {
        for h in ["$5$abc$def", "$6$s$h", "$1$s$h", "$2a$10$h", "$2y$x$y", "$5$rounds=5000$s$h"] {
            assert!(looks_hashed(h), "{h}");
        }
        for p in ["secret", "$5$", "$5$salt", "$5$salt$", "$y$j9T$s$h", "$7$a$b", "5$a$b"] {
            assert!(!looks_hashed(p), "{p}");
        }
    }

    #[test]
    fn a_task_password_is_compared_with_the_stored_hash_by_its_salt() {
        let stored = sha256_crypt("old-secret", "$5$Ab3dE6gH").unwrap();
        assert_eq!(matches(&stored, "old-secret"), Some(true));
        assert_eq!(matches(&stored, "new-secret"), Some(false));
        // a hash given by the task is stored as given: compared as text
        assert_eq!(matches(&stored, &stored), Some(true));
        assert_eq!(matches(&stored, "$5$other$hash"), Some(false));
        // a create stores the value as given; so does an update of a Windows guest
        assert_eq!(matches("plain", "plain"), Some(true));
        assert_eq!(matches("plain", "other"), Some(false));
        // not knowable: masked, or a scheme PVE does not make and we do not compute
        assert_eq!(matches(MASKED, "x"), None);
        assert_eq!(matches("$6$salt$hash", "x"), None);
    }

    #[test]
    fn the_stored_password_is_read_from_the_user_data() {
        use crate::pve::client::testing::ScriptedApi;
        use crate::pve::request::Method;
        let vm = VmResource::from_json(&serde_json::json!({"vmid": 100, "node": "pve1", "type": "qemu"})).unwrap();
        let api = ScriptedApi::default();
        api.answer(Method::Get, "/nodes/pve1/qemu/100/cloudinit/dump", Ok(dump_with("$5$s$h")));
        assert_eq!(stored(&api, &vm).unwrap().as_deref(), Some("$5$s$h"));
        assert_eq!(api.calls.borrow()[0].2, form([("type", "user")]));
        api.answer(Method::Get, "/nodes/pve1/qemu/100/cloudinit/dump", Ok(Value::String("#cloud-config\n".into())));
        assert_eq!(stored(&api, &vm).unwrap(), None);
    }
}

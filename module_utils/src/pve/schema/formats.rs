//! The named property-string formats of qemu-server that the API schema gives by name only: their keys, as PVE defines them, and the check PVE runs on the parsed value.
//!
//! Each table is written from its qemu-server source (docs/pve-semantics.md §34): `pve-qm-ipconfig`
//! (Network.pm `$ipconfig_fmt`), `pve-vm-cpu-conf` (CPUConfig.pm `$cpu_fmt` and
//! `validate_vm_cpu_conf`), `pve-qm-hostpci` (PCI.pm `$hostpci_fmt`), `pve-qm-boot`
//! (QemuServer.pm `$boot_fmt`), `pve-qm-smbios1` (`$smbios1_fmt`), `pve-qm-watchdog`
//! (`$watchdog_fmt`), `pve-qm-cicustom` (`$cicustom_fmt`), `pve-qm-rng` (RNG.pm `$rng_fmt`),
//! `pve-qemu-sev-fmt` and `pve-qemu-tdx-fmt` (CPUConfig.pm `$sev_fmt`, `$tdx_fmt`), and
//! `pve-qm-ide` (Drive.pm `$ide_fmt`: the keys of the table's own `ide[n]`). Where two PVE
//! releases differ (9.1 and 9.2), a table takes the union, so that no value one of them accepts
//! is refused. Patterns are in the regex crate's syntax, applied anchored as PVE does.

use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::Endpoint;
use crate::pve::pveformat::qemu::vm_cpu_conf;
use crate::pve::request::Method;

/// The check PVE runs on a parsed value after its keys (`parse_property_string`'s validator):
/// the value of a key by name, or `Err` with PVE's words.
pub type Validator = fn(&dyn Fn(&str) -> Option<String>) -> std::result::Result<(), String>;

const IPCONFIG: &str = r#"{
"gw":{"format":"ipv4","optional":1,"requires":"ip","type":"string"},
"gw6":{"format":"ipv6","optional":1,"requires":"ip6","type":"string"},
"ip":{"format":"pve-ipv4-config","optional":1,"type":"string"},
"ip6":{"format":"pve-ipv6-config","optional":1,"type":"string"}}"#;

/// `flags`: `$cpu_flag_any_re(;$cpu_flag_any_re)*`; `level` is qemu-server 9.2's.
const CPU: &str = r#"{
"cputype":{"default_key":1,"optional":1,"type":"string"},
"reported-model":{"optional":1,"type":"string","enum_from":"cpu-models"},
"hidden":{"optional":1,"type":"boolean"},
"hv-vendor-id":{"optional":1,"type":"string","pattern":"[a-zA-Z0-9]{1,12}"},
"flags":{"optional":1,"type":"string","pattern":"[+-][a-zA-Z0-9\\-_\\.]+(;[+-][a-zA-Z0-9\\-_\\.]+)*"},
"guest-phys-bits":{"optional":1,"type":"integer","minimum":32,"maximum":64},
"phys-bits":{"optional":1,"type":"string","format":"pve-phys-bits"},
"level":{"optional":1,"type":"integer","minimum":0,"maximum":4294967295}}"#;

/// `host`: PCI.pm `$PCIRE` (lower-case hex only), `;`-separated.
const HOSTPCI: &str = r#"{
"host":{"default_key":1,"optional":1,"type":"string","pattern":"(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\\.[a-f0-9])?(;(?:[a-f0-9]{4,}:)?[a-f0-9]{2}:[a-f0-9]{2}(?:\\.[a-f0-9])?)*"},
"mapping":{"optional":1,"type":"string","format":"pve-configid"},
"rombar":{"optional":1,"type":"boolean"},
"romfile":{"optional":1,"type":"string","pattern":"[^,;]+"},
"pcie":{"optional":1,"type":"boolean"},
"x-vga":{"optional":1,"type":"boolean"},
"legacy-igd":{"optional":1,"type":"boolean"},
"mdev":{"optional":1,"type":"string","pattern":"[^/\\.:]+"},
"vendor-id":{"optional":1,"type":"string","pattern":"^0x[0-9a-fA-F]{4}$"},
"device-id":{"optional":1,"type":"string","pattern":"^0x[0-9a-fA-F]{4}$"},
"sub-vendor-id":{"optional":1,"type":"string","pattern":"^0x[0-9a-fA-F]{4}$"},
"sub-device-id":{"optional":1,"type":"string","pattern":"^0x[0-9a-fA-F]{4}$"},
"driver":{"optional":1,"type":"string","enum":["vfio","keep"]}}"#;

const BOOT: &str = r#"{
"legacy":{"default_key":1,"optional":1,"type":"string","pattern":"[acdn]{1,4}"},
"order":{"optional":1,"type":"string","format":"pve-qm-bootdev-list"}}"#;

const SMBIOS1: &str = r#"{
"uuid":{"optional":1,"type":"string","pattern":"[a-fA-F0-9]{8}(?:-[a-fA-F0-9]{4}){3}-[a-fA-F0-9]{12}"},
"version":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"serial":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"manufacturer":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"product":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"sku":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"family":{"optional":1,"type":"string","pattern":"[A-Za-z0-9+/]+={0,2}"},
"base64":{"optional":1,"type":"boolean"}}"#;

const WATCHDOG: &str = r#"{
"model":{"default_key":1,"optional":1,"type":"string","enum":["i6300esb","ib700"]},
"action":{"optional":1,"type":"string","enum":["reset","shutdown","poweroff","pause","debug","none"]}}"#;

const CICUSTOM: &str = r#"{
"meta":{"optional":1,"type":"string","format":"pve-volume-id"},
"network":{"optional":1,"type":"string","format":"pve-volume-id"},
"user":{"optional":1,"type":"string","format":"pve-volume-id"},
"vendor":{"optional":1,"type":"string","format":"pve-volume-id"}}"#;

/// `source` is not optional.
const RNG: &str = r#"{
"source":{"default_key":1,"type":"string","enum":["/dev/urandom","/dev/random","/dev/hwrng"]},
"max_bytes":{"optional":1,"type":"integer"},
"period":{"optional":1,"type":"integer"}}"#;

/// `type` is not optional; `snp` and `allow-smt` are qemu-server 9.2's.
const SEV: &str = r#"{
"type":{"default_key":1,"type":"string","enum":["std","es","snp"],"maxLength":3},
"no-debug":{"optional":1,"type":"boolean"},
"no-key-sharing":{"optional":1,"type":"boolean"},
"allow-smt":{"optional":1,"type":"boolean"},
"kernel-hashes":{"optional":1,"type":"boolean"}}"#;

/// Neither `type` nor `attestation` is optional in `$tdx_fmt`.
const TDX: &str = r#"{
"type":{"default_key":1,"type":"string","enum":["tdx"]},
"attestation":{"type":"boolean"},
"vsock-cid":{"optional":1,"type":"integer","minimum":2},
"vsock-port":{"optional":1,"type":"integer","minimum":0}}"#;

const TABLES: &[(&str, &str)] = &[
    ("pve-qm-ipconfig", IPCONFIG),
    ("pve-vm-cpu-conf", CPU),
    ("pve-qm-hostpci", HOSTPCI),
    ("pve-qm-boot", BOOT),
    ("pve-qm-smbios1", SMBIOS1),
    ("pve-qm-watchdog", WATCHDOG),
    ("pve-qm-cicustom", CICUSTOM),
    ("pve-qm-rng", RNG),
    ("pve-qemu-sev-fmt", SEV),
    ("pve-qemu-tdx-fmt", TDX),
];

/// A table as `parse_property_string` reads it: `enum_from: cpu-models` becomes the model list.
fn load(json: &str) -> Map<String, Value> {
    let mut keys: Map<String, Value> = serde_json::from_str(json).unwrap_or_default();
    for schema in keys.values_mut() {
        if let Some(obj) = schema.as_object_mut() {
            if obj.remove("enum_from").is_some() {
                let models = crate::pve::pveformat::qemu::CPU_MODELS.iter().map(|m| Value::from(*m)).collect();
                obj.insert("enum".into(), Value::Array(models));
            }
        }
    }
    keys
}

fn tables() -> &'static Vec<(&'static str, Map<String, Value>)> {
    static LOADED: OnceLock<Vec<(&'static str, Map<String, Value>)>> = OnceLock::new();
    LOADED.get_or_init(|| {
        let mut all: Vec<(&'static str, Map<String, Value>)> =
            TABLES.iter().map(|(name, json)| (*name, load(json))).collect();
        // `cdrom` is an IDE drive: the keys of the table's own `ide[n]`.
        let ide = Endpoint::by_template(Method::Post, "/nodes/{node}/qemu")
            .and_then(|e| e.param("ide0"))
            .and_then(|s| s.get("keys"))
            .and_then(Value::as_object)
            .cloned();
        if let Some(keys) = ide {
            all.push(("pve-qm-ide", keys));
        }
        all
    })
}

/// The keys of named property-string format `name`, and the check PVE runs after them.
pub fn named(name: &str) -> Option<(&'static Map<String, Value>, Option<Validator>)> {
    let keys = tables().iter().find(|(n, _)| *n == name).map(|(_, keys)| keys)?;
    let validator: Option<Validator> = match name {
        "pve-vm-cpu-conf" => Some(vm_cpu_conf),
        _ => None,
    };
    Some((keys, validator))
}

/// Every named property-string format known here, for the tests.
#[cfg(test)]
pub fn names() -> impl Iterator<Item = &'static str> {
    tables().iter().map(|(n, _)| *n)
}

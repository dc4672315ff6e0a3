//! A deterministic generator of hostile inputs: module arguments shaped by each module's spec,
//! and property strings shaped by each format, each with a share of nonsense.

use module_utils::ansible::spec::{Elem, Kind, ModuleSpec, OptionSpec};
use module_utils::pve::propstring::{Format, ValueType};
use serde_json::{json, Map, Value};

use crate::{Module, CANARY};

/// xorshift64*: tiny, fast, reproducible from its seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    pub fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next_u64() % n as u64) as usize
        }
    }
    pub fn chance(&mut self, percent: u64) -> bool {
        self.next_u64() % 100 < percent
    }
    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Strings that have broken parsers before: empty, blank, separators, unicode, control
/// characters, number look-alikes, injection attempts.
pub const NASTY: &[&str] = &[
    "",
    " ",
    "\t",
    "\n",
    ",",
    "=",
    ",,",
    "==",
    "a=b,c",
    "=x",
    "x=",
    ";",
    "%",
    "%zz",
    "\u{0}",
    "\u{7f}",
    "ünïcødé",
    "💥",
    "名前",
    "\u{202e}evil",
    "\u{feff}",
    "e\u{301}",
    "0",
    "-0",
    "-1",
    "+1",
    "1e400",
    "1e-400",
    "NaN",
    "inf",
    "-inf",
    "0x10",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775809",
    "18446744073709551616",
    "3.0",
    "3.5",
    ".5",
    "5.",
    "yes",
    "no",
    "maybe",
    "True",
    "null",
    "None",
    "{}",
    "[]",
    "{\"a\": 1}",
    "{bad json",
    "../../etc/passwd",
    "/dev/null",
    "~",
    "~/x",
    "$(reboot)",
    "`id`",
    "'; DROP TABLE vms; --",
    "{{ lookup('env','HOME') }}",
    "net0",
    "net31",
    "net32",
    "net-1",
    "net01",
    "scsi0",
    "scsi31",
    "scsi99",
    "virtio16",
    "ide4",
    "sata6",
    "efidisk0",
    "tpmstate0",
    "unused0",
    "virtio=BC:24:11:00:00:01,bridge=vmbr0",
    "virtio=bc:24:11:00:00:01",
    "virtio=01:00:00:00:00:00",
    "virtio,bridge=vmbr0,tag=4095",
    "e1000,tag=0",
    "model=virtio,virtio=BC:24:11:00:00:01",
    "local-lvm:32",
    "local-lvm:vm-100-disk-0,size=32G",
    "local-lvm:0.5,format=raw",
    "local-lvm:vm-100-disk-0,size=-1G",
    "local-lvm:vm-100-disk-0,size=1.G",
    "local-lvm:vm-100-disk-0,iothread=maybe",
    "file=a=b",
    "none,media=cdrom",
    "10G",
    "+10G",
    "+0G",
    "0",
    "10g",
    "10 G",
    "1.5T",
    "99999999999999999999T",
    "0x00000000000000",
    "0x0123456789abcdef",
    "root@pam",
    "root",
    "@pve",
    "user@pve!token",
    "pve1",
    "pve1:8006",
    "pve1:0",
    "pve1:99999",
    "pve1:http",
    "[::1]:8006",
    "[::1",
    "::1",
    "vmbr0",
    "present",
    "absent",
    "started",
    "current",
];

fn long_string(rng: &mut Rng) -> String {
    let unit = *rng.pick(&["a", "é", "💥", ",", "=", "0", "net0,", "A:"]);
    let n = *rng.pick(&[300usize, 4096, 4096, 20_000]);
    unit.repeat(n)
}

fn nasty_string(rng: &mut Rng) -> String {
    if rng.chance(2) {
        return long_string(rng);
    }
    let s = rng.pick(NASTY).to_string();
    if rng.chance(15) {
        // Glue two together.
        return format!("{s}{}", rng.pick(NASTY));
    }
    s
}

const INTS: &[i64] = &[
    0,
    1,
    -1,
    2,
    31,
    32,
    99,
    100,
    101,
    4094,
    4095,
    65520,
    65535,
    65536,
    999_999_999,
    1_000_000_000,
    i64::MAX,
    i64::MIN,
    i64::MAX - 1,
    1 << 53,
];

fn nasty_number(rng: &mut Rng) -> Value {
    match rng.below(6) {
        0 => json!(*rng.pick(INTS)),
        1 => json!(*rng.pick(&[0.5f64, -0.0, 1e300, -1e300, 3.0, 4094.5, 1e-9])),
        2 => json!(u64::MAX),
        3 => serde_json::from_str("1e400").unwrap_or(Value::Null),
        4 => json!(rng.next_u64() as i64),
        _ => json!((rng.next_u64() % 10_000) as i64 - 100),
    }
}

/// Any JSON value, nested a little.
pub fn any_value(rng: &mut Rng, depth: u32) -> Value {
    match rng.below(if depth > 2 { 4 } else { 7 }) {
        0 => Value::Null,
        1 => Value::Bool(rng.chance(50)),
        2 => nasty_number(rng),
        3 => Value::String(nasty_string(rng)),
        4 => Value::Array((0..rng.below(4)).map(|_| any_value(rng, depth + 1)).collect()),
        5 => {
            let mut m = Map::new();
            for _ in 0..rng.below(4) {
                m.insert(nasty_string(rng), any_value(rng, depth + 1));
            }
            Value::Object(m)
        }
        _ => Value::String(long_string(rng)),
    }
}

fn good_scalar(rng: &mut Rng, opt: &OptionSpec) -> Value {
    if !opt.choices.is_empty() && rng.chance(70) {
        return json!(rng.pick(opt.choices));
    }
    match opt.kind {
        Kind::Int => {
            if rng.chance(30) {
                json!(rng.pick(INTS).to_string())
            } else {
                json!(*rng.pick(INTS))
            }
        }
        Kind::Float => json!(*rng.pick(&[0.0f64, 10.0, 10.5, -1.0, 1e308])),
        Kind::Bool => {
            json!(*rng.pick(&[json!(true), json!(false), json!("yes"), json!("off"), json!(1), json!("maybe")]))
        }
        Kind::Dict => dict_value(rng, opt.name),
        Kind::List(Elem::Int) => json!([rng.pick(INTS), rng.pick(INTS)]),
        Kind::List(_) => json!([nasty_string(rng), "web", "prod"]),
        Kind::Path => json!(*rng.pick(&["/nonexistent/ca.pem", "", "/dev/null", "~/ca.pem", "/etc/hostname"])),
        Kind::Str | Kind::Raw => {
            if opt.no_log {
                json!(CANARY)
            } else {
                Value::String(nasty_string(rng))
            }
        }
    }
}

/// A kvm dict option (`net`, `scsi`, ...): keys of the option's family, values property strings.
fn dict_value(rng: &mut Rng, option: &str) -> Value {
    let mut m = Map::new();
    for _ in 0..1 + rng.below(3) {
        let key = match rng.below(4) {
            0 => format!("{option}{}", rng.below(40)),
            1 => rng.pick(NASTY).to_string(),
            _ => format!("{option}{}", rng.below(3)),
        };
        let value = match rng.below(5) {
            0 => any_value(rng, 1),
            1 => Value::String(crate::gen::propstring(
                rng,
                if option == "net" {
                    &module_utils::pve::propstring::NET
                } else {
                    &module_utils::pve::propstring::DRIVE
                },
            )),
            _ => Value::String(nasty_string(rng)),
        };
        m.insert(key, value);
    }
    if option == "efidisk0" || option == "tpmstate0" {
        m.insert("storage".into(), json!("local-lvm"));
    }
    Value::Object(m)
}

/// A set of arguments for `module`: mostly well-formed with one or two things wrong.
pub fn module_args(rng: &mut Rng, module: Module) -> String {
    let spec: &ModuleSpec = module.spec();
    let options = spec.all_options();
    let mut m = Map::new();
    // A plausible base: auth (sometimes) and the module's anchor options.
    if rng.chance(50) {
        m.insert("api_host".into(), json!("pve1"));
        m.insert("api_user".into(), json!("ansible@pve"));
        m.insert("api_token_id".into(), json!("automation"));
        m.insert("api_token_secret".into(), json!(CANARY));
    }
    if rng.chance(10) {
        m.insert("api_password".into(), json!(CANARY));
    }
    match module {
        Module::Nic => {
            m.insert("vmid".into(), json!(100));
            m.insert("interface".into(), json!("net0"));
        }
        Module::Disk => {
            m.insert("vmid".into(), json!(100));
            m.insert("disk".into(), json!("scsi1"));
        }
        Module::Kvm => {
            m.insert("vmid".into(), json!(100));
            m.insert("name".into(), json!("web"));
            m.insert("node".into(), json!("pve1"));
        }
        Module::VmInfo => {}
    }
    // Some options with good-looking values, some with anything.
    for _ in 0..rng.below(5) {
        let opt = *rng.pick(&options);
        let value = if rng.chance(70) { good_scalar(rng, opt) } else { any_value(rng, 0) };
        let name = if !opt.aliases.is_empty() && rng.chance(30) { *rng.pick(opt.aliases) } else { opt.name };
        let value = if opt.no_log && value.is_string() { json!(CANARY) } else { value };
        m.insert(name.to_string(), value);
    }
    if rng.chance(10) {
        m.insert(nasty_string(rng), any_value(rng, 0));
    }
    if rng.chance(10) {
        m.insert("_ansible_check_mode".into(), any_value(rng, 1));
        m.insert("_ansible_verbosity".into(), any_value(rng, 1));
        m.insert("_ansible_future_key".into(), any_value(rng, 1));
    }
    if rng.chance(5) && !m.is_empty() {
        let key = m.keys().nth(rng.below(m.len())).cloned().unwrap_or_default();
        m.remove(&key);
    }
    let value = Value::Object(m);
    match rng.below(40) {
        0 => json!({"ANSIBLE_MODULE_ARGS": value}).to_string(),
        1 => any_value(rng, 0).to_string(),
        2 => {
            // Truncated JSON.
            let text = value.to_string();
            let cut = rng.below(text.len() + 1);
            text.char_indices()
                .map(|(i, _)| i)
                .take_while(|i| *i <= cut)
                .last()
                .map_or(String::new(), |i| text[..i].to_string())
        }
        3 => nasty_string(rng),
        _ => value.to_string(),
    }
}

fn value_for(rng: &mut Rng, kind: ValueType) -> String {
    if rng.chance(15) {
        return nasty_string(rng).replace([',', '\n'], "");
    }
    match kind {
        ValueType::Bool => rng.pick(&["1", "0", "yes", "OFF", "true", "2"]).to_string(),
        ValueType::Int { min, max } => {
            let edge = [min.unwrap_or(0), max.unwrap_or(100), min.unwrap_or(0) - 1, max.unwrap_or(100) + 1, 7];
            rng.pick(&edge).to_string()
        }
        ValueType::Number { .. } => rng.pick(&["10", "10.0", "1e3", ".5", "5.", "-1", "1e", "0"]).to_string(),
        ValueType::Size => rng
            .pick(&["32G", "32768M", "0.5G", "1025K", "512", "1T", "0T", "1.G", "3g", "18446744073709551615"])
            .to_string(),
        ValueType::Mac => rng
            .pick(&[
                "BC:24:11:00:00:01",
                "bc:24:11:aa:bb:cc",
                "01:00:00:00:00:00",
                "BC:24:11:00:00",
                "zz:zz:zz:zz:zz:zz",
            ])
            .to_string(),
        ValueType::Enum(values) => {
            if rng.chance(80) {
                rng.pick(values).to_string()
            } else {
                "bogus".into()
            }
        }
        ValueType::Str => rng
            .pick(&["local-lvm:vm-100-disk-0", "vmbr0", "local-lvm:32", "a%2Cb", "x y", "/dev/sdb", "a=b"])
            .to_string(),
        ValueType::Pattern(_) => rng.pick(&["10;20-30", "0x0123456789abcdef", "QEMU", "1-", "Ab_c d"]).to_string(),
        ValueType::Named(..) => rng
            .pick(&[
                "local-lvm:vm-100-disk-0",
                "vmbr0",
                "local-lvm:32",
                "a%2Cb",
                "x y",
                "/dev/sdb",
                "a=b",
                "none",
                "local:a=b",
            ])
            .to_string(),
    }
}

/// A property string for `format`: known keys with typed values, aliases, duplicates, junk.
pub fn propstring(rng: &mut Rng, format: &Format) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(dk) = format.default_key {
        if rng.chance(80) {
            let kind = format.key(dk).map_or(ValueType::Str, |k| k.kind);
            let value = value_for(rng, kind);
            match format.key_alias {
                Some(ka) if rng.chance(60) => {
                    let model = rng.pick(ka.keys);
                    let mac = value_for(rng, ValueType::Mac);
                    parts.push(format!("{model}={mac}"));
                }
                _ => parts.push(value),
            }
        }
    }
    for _ in 0..rng.below(6) {
        let choice = rng.below(10);
        let (key, kind) = if choice < 7 && !format.keys.is_empty() {
            let k = rng.pick(format.keys);
            (k.name.to_string(), k.kind)
        } else if choice < 8 && !format.aliases.is_empty() {
            let (a, target) = rng.pick(format.aliases);
            (a.to_string(), format.key(target).map_or(ValueType::Str, |k| k.kind))
        } else {
            (rng.pick(&["bogus", "", " ", "Size", "size ", "é"]).to_string(), ValueType::Str)
        };
        parts.push(format!("{key}={}", value_for(rng, kind)));
    }
    if rng.chance(10) {
        parts.push(String::new());
    }
    let n = parts.len();
    if n > 1 && rng.chance(30) {
        let (i, j) = (rng.below(n), rng.below(n));
        parts.swap(i, j);
    }
    let mut text = parts.join(",");
    if rng.chance(5) {
        text.push(*rng.pick(&[',', '=', ' ', '\n', 'é']));
    }
    text
}

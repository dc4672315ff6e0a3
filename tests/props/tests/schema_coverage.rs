//! Every option of every module against Proxmox VE's API schema (issue 17): an option that reaches PVE is mapped here to what it is sent as.
//!
//! For each module's `SPEC` (its own options and its option groups), every option is in `MAP`:
//! either the schema parameters (or property-string keys) it is sent as, or the reason it never
//! reaches PVE. The test fails for an option that is not mapped, for a mapping whose endpoint,
//! parameter or key the schema does not have, for a `choices` value PVE's schema refuses
//! (checked with `pve::schema::check_prop`, PVE's own rules), for a type that cannot be sent as
//! the parameter's type, and for a sub-option that maps to no key of the property string.
//! Known disagreements are listed in `KNOWN` with what to do about them: the test fails when the
//! list is wrong either way, so it only shrinks.

use module_utils::ansible::spec::{Kind, ModuleSpec, OptionSpec};
use module_utils::pve::request::Method;
use module_utils::pve::schema::{check_prop, Endpoint};
use serde_json::Value;

type Ep = (Method, &'static str);
/// Parameters of endpoints.
type Params = &'static [(Ep, &'static str)];
/// A choice and what it is sent as.
type SentAs = &'static [(&'static str, &'static str)];

const CREATE: Ep = (Method::Post, "/nodes/{node}/qemu");
const PUT_CONFIG: Ep = (Method::Put, "/nodes/{node}/qemu/{vmid}/config");
const POST_CONFIG: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/config");
const CLONE: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/clone");
const MIGRATE: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/migrate");
const DESTROY: Ep = (Method::Delete, "/nodes/{node}/qemu/{vmid}");
const SHUTDOWN: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/status/shutdown");
const STOP: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/status/stop");
const START: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/status/start");
const REBOOT: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/status/reboot");
const TEMPLATE: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/template");
const RESIZE: Ep = (Method::Put, "/nodes/{node}/qemu/{vmid}/resize");
const UNLINK: Ep = (Method::Put, "/nodes/{node}/qemu/{vmid}/unlink");
const MOVE: Ep = (Method::Post, "/nodes/{node}/qemu/{vmid}/move_disk");
const LOGIN: Ep = (Method::Post, "/access/ticket");

/// What an option becomes in a request.
#[derive(Clone, Copy)]
enum Sent {
    /// The value of these parameters (a path variable is a parameter too).
    As(&'static [(Ep, &'static str)]),
    /// The value of key `.2` of the property-string parameter `.1`.
    Key(&'static [(Ep, &'static str, &'static str)]),
    /// The names of these parameters (`interface: net1` sends the parameter `net1`), and the
    /// value of the `As` parameters.
    Names(&'static [(Ep, &'static str)], &'static [(Ep, &'static str)]),
    /// Never sent: why.
    Never(&'static str),
}
use Sent::*;

/// A config key of a VM: on create and on update.
const fn config(param: &'static str) -> [(Ep, &'static str); 2] {
    [(CREATE, param), (PUT_CONFIG, param)]
}

const ACPI: [(Ep, &str); 2] = config("acpi");
const AGENT: [(Ep, &str); 2] = config("agent");
const ARGS: [(Ep, &str); 2] = config("args");
const AUDIO: [(Ep, &str); 2] = config("audio0");
const AUTOSTART: [(Ep, &str); 2] = config("autostart");
const BALLOON: [(Ep, &str); 2] = config("balloon");
const BIOS: [(Ep, &str); 2] = config("bios");
const BOOT: [(Ep, &str); 2] = config("boot");
const BOOTDISK: [(Ep, &str); 2] = config("bootdisk");
const CICUSTOM: [(Ep, &str); 2] = config("cicustom");
const CIPASSWORD: [(Ep, &str); 2] = config("cipassword");
const CITYPE: [(Ep, &str); 2] = config("citype");
const CIUPGRADE: [(Ep, &str); 2] = config("ciupgrade");
const CIUSER: [(Ep, &str); 2] = config("ciuser");
const CORES: [(Ep, &str); 2] = config("cores");
const CPU: [(Ep, &str); 2] = config("cpu");
const CPULIMIT: [(Ep, &str); 2] = config("cpulimit");
const CPUUNITS: [(Ep, &str); 2] = config("cpuunits");
const DESCRIPTION: [(Ep, &str); 2] = config("description");
const EFIDISK0: [(Ep, &str); 2] = config("efidisk0");
const FREEZE: [(Ep, &str); 2] = config("freeze");
const HOOKSCRIPT: [(Ep, &str); 2] = config("hookscript");
const HOSTPCI: [(Ep, &str); 2] = config("hostpci[n]");
const HOTPLUG: [(Ep, &str); 2] = config("hotplug");
const HUGEPAGES: [(Ep, &str); 2] = config("hugepages");
const IDE: [(Ep, &str); 2] = config("ide[n]");
const IPCONFIG: [(Ep, &str); 2] = config("ipconfig[n]");
const KEYBOARD: [(Ep, &str); 2] = config("keyboard");
const KVM: [(Ep, &str); 2] = config("kvm");
const LOCALTIME: [(Ep, &str); 2] = config("localtime");
const LOCK: [(Ep, &str); 2] = config("lock");
const MACHINE: [(Ep, &str); 2] = config("machine");
const MEMORY: [(Ep, &str); 2] = config("memory");
const MIGRATE_DOWNTIME: [(Ep, &str); 2] = config("migrate_downtime");
const MIGRATE_SPEED: [(Ep, &str); 2] = config("migrate_speed");
const NAMESERVER: [(Ep, &str); 2] = config("nameserver");
const NET: [(Ep, &str); 2] = config("net[n]");
const NUMA_N: [(Ep, &str); 2] = config("numa[n]");
const NUMA: [(Ep, &str); 2] = config("numa");
const ONBOOT: [(Ep, &str); 2] = config("onboot");
const OSTYPE: [(Ep, &str); 2] = config("ostype");
const PARALLEL: [(Ep, &str); 2] = config("parallel[n]");
const PROTECTION: [(Ep, &str); 2] = config("protection");
const REBOOT_KEY: [(Ep, &str); 2] = config("reboot");
const RNG0: [(Ep, &str); 2] = config("rng0");
const SATA: [(Ep, &str); 2] = config("sata[n]");
const SCSI: [(Ep, &str); 2] = config("scsi[n]");
const SCSIHW: [(Ep, &str); 2] = config("scsihw");
const SEARCHDOMAIN: [(Ep, &str); 2] = config("searchdomain");
const SERIAL: [(Ep, &str); 2] = config("serial[n]");
const SHARES: [(Ep, &str); 2] = config("shares");
const SMBIOS1: [(Ep, &str); 2] = config("smbios1");
const SOCKETS: [(Ep, &str); 2] = config("sockets");
const SPICE: [(Ep, &str); 2] = config("spice_enhancements");
const SSHKEYS: [(Ep, &str); 2] = config("sshkeys");
const STARTDATE: [(Ep, &str); 2] = config("startdate");
const STARTUP: [(Ep, &str); 2] = config("startup");
const TABLET: [(Ep, &str); 2] = config("tablet");
const TAGS: [(Ep, &str); 2] = config("tags");
const TDF: [(Ep, &str); 2] = config("tdf");
const TEMPLATE_KEY: [(Ep, &str); 2] = config("template");
const TPMSTATE0: [(Ep, &str); 2] = config("tpmstate0");
const USB: [(Ep, &str); 2] = config("usb[n]");
const VCPUS: [(Ep, &str); 2] = config("vcpus");
const VGA: [(Ep, &str); 2] = config("vga");
const VIRTIO: [(Ep, &str); 2] = config("virtio[n]");
const VIRTIOFS: [(Ep, &str); 2] = config("virtiofs[n]");
const WATCHDOG: [(Ep, &str); 2] = config("watchdog");

const NEVER_LOOKUP: &str = "names the VM: looked up in /cluster/resources, its vmid is in the path";
const NEVER_STATE: &str = "chooses which calls are made; no value of its own";
const NEVER_WAIT: &str = "how long the module waits for PVE's tasks; not sent";
const NEVER_INFO: &str = "proxmox_vm_info only reads (GET)";
const NEVER_NODE: &str = "the node the VM is read on first (in the path), else /cluster/resources";

/// The connection options every module shares (`ansible::connection::CONNECTION`).
const CONNECTION: &[(&str, Sent)] = &[
    ("api_host", Never("the host of the HTTPS URL")),
    ("api_port", Never("the port of the HTTPS URL")),
    ("api_user", Names(&[], &[(LOGIN, "username")])),
    ("api_password", Names(&[], &[(LOGIN, "password")])),
    (
        "api_otp",
        Never("sent as password (with its type prefix, totp:...) at the login's second step, a value we build"),
    ),
    ("api_token_id", Never("part of the Authorization header, not a parameter")),
    ("api_token_secret", Never("part of the Authorization header, not a parameter")),
    ("api_timeout", Never("the HTTP client's timeout")),
    ("validate_certs", Never("the HTTP client's TLS verification")),
    ("ca_path", Never("the HTTP client's trusted CAs")),
];

const PATH_VMID: &[(Ep, &str)] = &[
    (PUT_CONFIG, "vmid"),
    (POST_CONFIG, "vmid"),
    (CLONE, "vmid"),
    (MIGRATE, "vmid"),
    (DESTROY, "vmid"),
    (SHUTDOWN, "vmid"),
    (STOP, "vmid"),
    (START, "vmid"),
    (REBOOT, "vmid"),
    (TEMPLATE, "vmid"),
    (RESIZE, "vmid"),
    (UNLINK, "vmid"),
    (MOVE, "vmid"),
];

const KVM_MAP: &[(&str, Sent)] = &[
    ("acpi", As(&ACPI)),
    ("agent", As(&AGENT)),
    ("archive", As(&[(CREATE, "archive")])),
    ("args", As(&ARGS)),
    ("audio", Names(&AUDIO, &AUDIO)),
    ("autostart", As(&AUTOSTART)),
    ("balloon", As(&BALLOON)),
    ("bios", As(&BIOS)),
    ("boot", As(&BOOT)),
    ("bootdisk", As(&BOOTDISK)),
    ("cicustom", As(&CICUSTOM)),
    ("cipassword", As(&CIPASSWORD)),
    ("citype", As(&CITYPE)),
    ("ciupgrade", As(&CIUPGRADE)),
    ("ciuser", As(&CIUSER)),
    ("clone", Never("names the source VM: looked up, its vmid is in the clone path")),
    ("cores", As(&CORES)),
    ("cpu", As(&CPU)),
    ("cpulimit", As(&CPULIMIT)),
    ("cpuunits", As(&CPUUNITS)),
    ("delete", As(&[(PUT_CONFIG, "delete")])),
    ("description", As(&DESCRIPTION)),
    ("destroy_unreferenced_disks", As(&[(DESTROY, "destroy-unreferenced-disks")])),
    ("digest", As(&[(PUT_CONFIG, "digest")])),
    ("efidisk0", As(&EFIDISK0)),
    ("force", As(&[(SHUTDOWN, "forceStop"), (CREATE, "force")])),
    ("format", As(&[(CLONE, "format")])),
    ("freeze", As(&FREEZE)),
    ("full", As(&[(CLONE, "full")])),
    ("hookscript", As(&HOOKSCRIPT)),
    ("hostpci", Names(&HOSTPCI, &HOSTPCI)),
    ("hotplug", As(&HOTPLUG)),
    ("hugepages", As(&HUGEPAGES)),
    ("ide", Names(&IDE, &IDE)),
    ("ipconfig", Names(&IPCONFIG, &IPCONFIG)),
    ("keyboard", As(&KEYBOARD)),
    ("kvm", As(&KVM)),
    ("localtime", As(&LOCALTIME)),
    ("lock", As(&LOCK)),
    ("machine", As(&MACHINE)),
    ("memory", As(&MEMORY)),
    ("migrate", Never("chooses whether POST .../migrate is called; its target is node")),
    ("migrate_downtime", As(&MIGRATE_DOWNTIME)),
    ("migrate_speed", As(&MIGRATE_SPEED)),
    ("name", As(&[(CREATE, "name"), (PUT_CONFIG, "name"), (CLONE, "name")])),
    ("nameservers", As(&NAMESERVER)),
    ("net", Names(&NET, &NET)),
    ("newid", As(&[(CLONE, "newid")])),
    ("node", As(&[(CREATE, "node"), (PUT_CONFIG, "node"), (CLONE, "node"), (MIGRATE, "target"), (DESTROY, "node")])),
    ("numa", Names(&NUMA_N, &NUMA_N)),
    ("numa_enabled", As(&NUMA)),
    ("onboot", As(&ONBOOT)),
    ("ostype", As(&OSTYPE)),
    ("parallel", Names(&PARALLEL, &PARALLEL)),
    ("pool", As(&[(CREATE, "pool"), (CLONE, "pool")])),
    ("protection", As(&PROTECTION)),
    ("purge", As(&[(DESTROY, "purge")])),
    ("reboot", As(&REBOOT_KEY)),
    ("revert", As(&[(PUT_CONFIG, "revert")])),
    ("rng0", As(&RNG0)),
    ("sata", Names(&SATA, &SATA)),
    ("scsi", Names(&SCSI, &SCSI)),
    ("scsihw", As(&SCSIHW)),
    ("searchdomains", As(&SEARCHDOMAIN)),
    ("serial", Names(&SERIAL, &SERIAL)),
    ("shares", As(&SHARES)),
    ("skiplock", As(&[(PUT_CONFIG, "skiplock"), (DESTROY, "skiplock"), (SHUTDOWN, "skiplock"), (STOP, "skiplock")])),
    ("smbios", As(&SMBIOS1)),
    ("snapname", As(&[(CLONE, "snapname")])),
    ("sockets", As(&SOCKETS)),
    ("spice_enhancements", As(&SPICE)),
    ("sshkeys", As(&SSHKEYS)),
    ("startdate", As(&STARTDATE)),
    ("startup", As(&STARTUP)),
    ("state", Never(NEVER_STATE)),
    ("storage", As(&[(CREATE, "storage"), (CLONE, "storage")])),
    ("tablet", As(&TABLET)),
    ("tags", As(&TAGS)),
    ("target", As(&[(CLONE, "target")])),
    ("tdf", As(&TDF)),
    ("template", As(&TEMPLATE_KEY)),
    ("timeout", As(&[(SHUTDOWN, "timeout"), (REBOOT, "timeout")])),
    ("tpmstate0", As(&TPMSTATE0)),
    ("update", Never(NEVER_STATE)),
    ("update_unsafe", Never("accepted for compatibility; has no effect")),
    ("usb", Names(&USB, &USB)),
    ("vcpus", As(&VCPUS)),
    ("vga", As(&VGA)),
    ("virtio", Names(&VIRTIO, &VIRTIO)),
    ("virtiofs", Names(&VIRTIOFS, &VIRTIOFS)),
    ("vmid", As(PATH_VMID)),
    ("watchdog", As(&WATCHDOG)),
    ("with_local_disks", As(&[(MIGRATE, "with-local-disks")])),
];

const DRIVES: &[(Ep, &str)] = &[
    (POST_CONFIG, "ide[n]"),
    (POST_CONFIG, "sata[n]"),
    (POST_CONFIG, "scsi[n]"),
    (POST_CONFIG, "virtio[n]"),
    (POST_CONFIG, "efidisk0"),
    (POST_CONFIG, "tpmstate0"),
    (PUT_CONFIG, "unused[n]"),
];

/// proxmox_disk's drive options: each is the key of the same name of the drive's property
/// string (scsi[n] has every one of them).
const DRIVE_KEYS: &[&str] = &[
    "aio",
    "backup",
    "bps_max_length",
    "bps_rd_max_length",
    "bps_wr_max_length",
    "cache",
    "cyls",
    "detect_zeroes",
    "discard",
    "heads",
    "iops",
    "iops_max",
    "iops_max_length",
    "iops_rd",
    "iops_rd_max",
    "iops_rd_max_length",
    "iops_wr",
    "iops_wr_max",
    "iops_wr_max_length",
    "iothread",
    "mbps",
    "mbps_max",
    "mbps_rd",
    "mbps_rd_max",
    "mbps_wr",
    "mbps_wr_max",
    "media",
    "queues",
    "replicate",
    "rerror",
    "ro",
    "scsiblock",
    "secs",
    "serial",
    "shared",
    "snapshot",
    "ssd",
    "trans",
    "werror",
    "wwn",
];

const DISK_MAP: &[(&str, Sent)] = &[
    ("vmid", As(PATH_VMID)),
    ("name", Never(NEVER_LOOKUP)),
    ("disk", Names(DRIVES, &[(RESIZE, "disk"), (MOVE, "disk"), (UNLINK, "idlist")])),
    ("state", Never(NEVER_STATE)),
    ("node", Never(NEVER_NODE)),
    ("create", Never(NEVER_STATE)),
    ("storage", Never("the storage part of the drive's file (STORAGE:SIZE), a value we build")),
    ("size", As(&[(RESIZE, "size")])),
    ("format", Key(&[(POST_CONFIG, "scsi[n]", "format"), (MOVE, "", "format")])),
    ("import_from", Key(&[(POST_CONFIG, "scsi[n]", "import-from")])),
    ("iso_image", Key(&[(POST_CONFIG, "ide[n]", "file")])),
    ("target_storage", As(&[(MOVE, "storage")])),
    ("target_vmid", As(&[(MOVE, "target-vmid")])),
    ("target_disk", As(&[(MOVE, "target-disk")])),
    ("delete_moved", As(&[(MOVE, "delete")])),
    ("bwlimit", As(&[(MOVE, "bwlimit")])),
    ("timeout", Never(NEVER_WAIT)),
];

const NIC_MAP: &[(&str, Sent)] = &[
    ("vmid", As(&[(PUT_CONFIG, "vmid")])),
    ("name", Never(NEVER_LOOKUP)),
    ("interface", Names(&[(PUT_CONFIG, "net[n]")], &[])),
    ("state", Never(NEVER_STATE)),
    ("node", Never(NEVER_NODE)),
    ("model", Key(&[(PUT_CONFIG, "net[n]", "model")])),
    ("mac", Key(&[(PUT_CONFIG, "net[n]", "macaddr")])),
    ("bridge", Key(&[(PUT_CONFIG, "net[n]", "bridge")])),
    ("tag", Key(&[(PUT_CONFIG, "net[n]", "tag")])),
    ("trunks", Key(&[(PUT_CONFIG, "net[n]", "trunks")])),
    ("firewall", Key(&[(PUT_CONFIG, "net[n]", "firewall")])),
    ("link_down", Key(&[(PUT_CONFIG, "net[n]", "link_down")])),
    ("mtu", Key(&[(PUT_CONFIG, "net[n]", "mtu")])),
    ("queues", Key(&[(PUT_CONFIG, "net[n]", "queues")])),
    ("rate", Key(&[(PUT_CONFIG, "net[n]", "rate")])),
];

const INFO_MAP: &[(&str, Sent)] = &[
    ("node", Never(NEVER_INFO)),
    ("type", Never(NEVER_INFO)),
    ("vmid", Never(NEVER_INFO)),
    ("name", Never(NEVER_INFO)),
    ("config", Never(NEVER_INFO)),
    ("network", Never(NEVER_INFO)),
];

/// The sub-options of dict options: (module, option, sub-option, the key it is sent as, what
/// each choice is sent as when not as itself; "" = not sent).
const SUBS: &[(&str, &str, &str, &str, SentAs)] = &[
    ("proxmox_kvm", "efidisk0", "storage", "file", &[]),
    ("proxmox_kvm", "efidisk0", "format", "format", &[]),
    ("proxmox_kvm", "efidisk0", "efitype", "efitype", &[]),
    ("proxmox_kvm", "efidisk0", "pre_enrolled_keys", "pre-enrolled-keys", &[]),
    ("proxmox_kvm", "tpmstate0", "storage", "file", &[]),
    ("proxmox_kvm", "tpmstate0", "version", "version", &[("2.0", "v2.0"), ("1.2", "v1.2")]),
];

/// What a choice is sent as, when not as itself ("" = not sent).
const SENT_AS: &[(&str, &str, &str, &str)] = &[("proxmox_kvm", "format", "unspecified", "")];

/// Disagreements between an option and PVE's schema that the module crates must settle (the
/// test fails when one disappears: then take it out of this list).
const KNOWN: &[&str] = &[
    // community.proxmox's list for a clone's format; PVE's clone takes raw, qcow2 and vmdk only.
    "proxmox_kvm.format: choice 'cloop' refused by POST /nodes/{node}/qemu/{vmid}/clone format: value 'cloop' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_kvm.format: choice 'cow' refused by POST /nodes/{node}/qemu/{vmid}/clone format: value 'cow' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_kvm.format: choice 'qcow' refused by POST /nodes/{node}/qemu/{vmid}/clone format: value 'qcow' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_kvm.format: choice 'qed' refused by POST /nodes/{node}/qemu/{vmid}/clone format: value 'qed' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    // The same for a moved disk: PVE's move_disk takes raw, qcow2 and vmdk only.
    "proxmox_disk.format: choice 'cloop' refused by POST /nodes/{node}/qemu/{vmid}/move_disk format: value 'cloop' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_disk.format: choice 'cow' refused by POST /nodes/{node}/qemu/{vmid}/move_disk format: value 'cow' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_disk.format: choice 'qcow' refused by POST /nodes/{node}/qemu/{vmid}/move_disk format: value 'qcow' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    "proxmox_disk.format: choice 'qed' refused by POST /nodes/{node}/qemu/{vmid}/move_disk format: value 'qed' does not have a value in the enumeration 'raw, qcow2, vmdk'",
    // A new disk's format: PVE 9.1's drive formats have no 'cow'.
    "proxmox_disk.format: choice 'cow' refused by POST /nodes/{node}/qemu/{vmid}/config scsi[n].format: value 'cow' does not have a value in the enumeration 'raw, qcow, qed, qcow2, vmdk, cloop'",
    // The drive geometry options (community.proxmox's): PVE 9.1's drive formats have no such
    // keys, so PVE refuses a drive that sets one (the client's schema check now refuses it
    // first, naming the key); the module should refuse them before any call.
    "proxmox_disk.cyls: POST /nodes/{node}/qemu/{vmid}/config scsi[n].cyls: no such key",
    "proxmox_disk.cyls: PUT /nodes/{node}/qemu/{vmid}/config scsi[n].cyls: no such key",
    "proxmox_disk.heads: POST /nodes/{node}/qemu/{vmid}/config scsi[n].heads: no such key",
    "proxmox_disk.heads: PUT /nodes/{node}/qemu/{vmid}/config scsi[n].heads: no such key",
    "proxmox_disk.secs: POST /nodes/{node}/qemu/{vmid}/config scsi[n].secs: no such key",
    "proxmox_disk.secs: PUT /nodes/{node}/qemu/{vmid}/config scsi[n].secs: no such key",
    "proxmox_disk.trans: POST /nodes/{node}/qemu/{vmid}/config scsi[n].trans: no such key",
    "proxmox_disk.trans: PUT /nodes/{node}/qemu/{vmid}/config scsi[n].trans: no such key",
];

fn endpoint(ep: Ep) -> Endpoint {
    Endpoint::by_template(ep.0, ep.1).unwrap_or_else(|| panic!("{} {} is not in the schema table", ep.0.as_str(), ep.1))
}

fn schema_type(schema: &Value) -> &str {
    schema.get("type").and_then(Value::as_str).unwrap_or("string")
}

/// The type of the default key of a property-string parameter, if it has one.
fn default_key_type(schema: &Value) -> Option<&str> {
    let keys = schema.get("keys")?.as_object()?;
    keys.values().find(|k| k.get("default_key").is_some()).map(schema_type)
}

/// Whether an option of `kind` can be sent as a value of `schema`.
fn compatible(kind: Kind, schema: &Value) -> bool {
    let ty = schema_type(schema);
    match kind {
        Kind::Bool => ty == "boolean" || default_key_type(schema) == Some("boolean"),
        Kind::Int => matches!(ty, "integer" | "number") || default_key_type(schema) == Some("integer"),
        Kind::Float => ty == "number",
        // A list is sent joined into one string; a dict as property strings or as keys.
        Kind::Str | Kind::Path | Kind::Raw | Kind::List(_) | Kind::Dict => ty == "string",
    }
}

struct Audit {
    problems: Vec<String>,
    mapped: usize,
    never: usize,
}

impl Audit {
    fn check_value(&mut self, module: &str, opt: &OptionSpec, what: &str, schema: &Value, sent_as: &[(&str, &str)]) {
        if !compatible(opt.kind, schema) {
            self.problems.push(format!(
                "{module}.{}: type {:?} cannot be sent as {what} of type {}",
                opt.name,
                opt.kind,
                schema_type(schema)
            ));
        }
        for choice in opt.choices {
            let sent = sent_as.iter().find(|(c, _)| c == choice).map(|(_, s)| *s).unwrap_or(choice);
            if sent.is_empty() {
                continue;
            }
            if let Err(e) = check_prop(schema, what, sent) {
                self.problems.push(format!("{module}.{}: choice '{choice}' refused by {what}: {e}", opt.name));
            }
        }
    }

    fn option(&mut self, module: &str, opt: &OptionSpec, sent: Sent) {
        let sent_as: Vec<(&str, &str)> =
            SENT_AS.iter().filter(|(m, o, _, _)| *m == module && *o == opt.name).map(|(_, _, c, s)| (*c, *s)).collect();
        let (names, values): (Params, Params) = match sent {
            Never(reason) => {
                assert!(!reason.is_empty());
                self.never += 1;
                return;
            }
            As(values) => (&[], values),
            Names(names, values) => (names, values),
            Key(keys) => {
                self.mapped += 1;
                for (ep, param, key) in keys {
                    let e = endpoint(*ep);
                    let what = format!("{} {}", e.name, if param.is_empty() { key } else { param });
                    let schema = if param.is_empty() { e.param(key) } else { e.param(param) };
                    let Some(schema) = schema else {
                        self.problems.push(format!("{module}.{}: {what} is not a parameter", opt.name));
                        continue;
                    };
                    let sub =
                        if param.is_empty() { Some(schema) } else { schema.get("keys").and_then(|k| k.get(*key)) };
                    let what = if param.is_empty() { what } else { format!("{what}.{key}") };
                    match sub {
                        Some(sub) => self.check_value(module, opt, &what, sub, &sent_as),
                        None => self.problems.push(format!("{module}.{}: {what}: no such key", opt.name)),
                    }
                }
                return;
            }
        };
        self.mapped += 1;
        for (ep, param) in names {
            if endpoint(*ep).param(param).is_none() {
                self.problems.push(format!("{module}.{}: {} has no parameter {param}", opt.name, endpoint(*ep).name));
            }
        }
        for (ep, param) in values {
            let e = endpoint(*ep);
            let Some(schema) = e.param(param) else {
                self.problems.push(format!("{module}.{}: {} has no parameter {param}", opt.name, e.name));
                continue;
            };
            let what = format!("{} {param}", e.name);
            self.check_value(module, opt, &what, schema, &sent_as);
            for sub in opt.suboptions {
                let Some((_, _, _, key, sub_sent_as)) =
                    SUBS.iter().find(|(m, o, s, _, _)| *m == module && *o == opt.name && *s == sub.name)
                else {
                    self.problems.push(format!("{module}.{}.{}: sub-option not mapped", opt.name, sub.name));
                    continue;
                };
                match schema.get("keys").and_then(|k| k.get(*key)) {
                    Some(key_schema) => {
                        let full = format!("{module}.{}", opt.name);
                        self.check_value(&full, sub, &format!("{what}.{key}"), key_schema, sub_sent_as)
                    }
                    None => self.problems.push(format!("{module}.{}.{}: {what} has no key {key}", opt.name, sub.name)),
                }
            }
        }
    }
}

#[test]
fn every_option_is_mapped_to_pves_schema_or_never_reaches_pve() {
    let modules: &[(&ModuleSpec, &[(&str, Sent)])] = &[
        (&proxmox_kvm::SPEC, KVM_MAP),
        (&proxmox_disk::SPEC, DISK_MAP),
        (&proxmox_nic::SPEC, NIC_MAP),
        (&proxmox_vm_info::SPEC, INFO_MAP),
    ];
    let mut audit = Audit { problems: Vec::new(), mapped: 0, never: 0 };
    let mut options = 0;
    for (spec, map) in modules {
        let drive_options: Vec<(&str, Sent)> = if spec.name == "proxmox_disk" {
            DRIVE_KEYS
                .iter()
                .map(|key| {
                    let sent: &'static [(Ep, &str, &str)] = Box::leak(
                        vec![(POST_CONFIG, "scsi[n]", *key), (PUT_CONFIG, "scsi[n]", *key)].into_boxed_slice(),
                    );
                    (*key, Key(sent))
                })
                .collect()
        } else {
            Vec::new()
        };
        let own = spec.options.iter();
        let shared = spec.option_groups.iter().flat_map(|g| g.options.iter());
        for opt in own.chain(shared) {
            options += 1;
            let found = map.iter().chain(drive_options.iter()).chain(CONNECTION.iter()).find(|(n, _)| *n == opt.name);
            match found {
                Some((_, sent)) => audit.option(spec.name, opt, *sent),
                None => {
                    audit.problems.push(format!("{}.{}: not mapped (add it to this test's map)", spec.name, opt.name))
                }
            }
        }
        for (name, _) in map.iter().chain(drive_options.iter()) {
            assert!(spec.options.iter().any(|o| o.name == *name), "{}.{name}: mapped but not an option", spec.name);
        }
    }
    println!(
        "schema coverage: {options} options of {} modules, {} sent to PVE and checked against its schema, {} never sent, {} known disagreements",
        modules.len(),
        audit.mapped,
        audit.never,
        KNOWN.len()
    );
    let unexpected: Vec<&String> = audit.problems.iter().filter(|p| !KNOWN.contains(&p.as_str())).collect();
    let gone: Vec<&&str> = KNOWN.iter().filter(|k| !audit.problems.iter().any(|p| p == *k)).collect();
    assert!(
        unexpected.is_empty(),
        "options that disagree with PVE's schema:\n{}",
        unexpected.iter().map(|s| s.as_str()).collect::<Vec<_>>().join("\n")
    );
    assert!(gone.is_empty(), "KNOWN lists disagreements that are gone (take them out): {gone:?}");
}

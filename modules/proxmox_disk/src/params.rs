//! proxmox_disk's validated task: what upstream leaves to PVE is checked here, before any call.

use module_utils::ansible::spec::Kind;
use module_utils::error::clip;
use module_utils::pve::devices::disk_bus;
use module_utils::pve::propstring::{parse_gib_or_size, DRIVE};
use module_utils::pve::pveformat::{check_option, PveFormat};
use module_utils::pve::resources::vmid_option;
use module_utils::{Error, Result};

use crate::spec::DRIVE_OPTIONS;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum State {
    Present,
    Resized,
    Detached,
    Moved,
    Absent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Create {
    Disabled,
    Regular,
    Forced,
}

/// A requested size, in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SizeRequest {
    Absolute(u64),
    /// `+N`: grow by `bytes`; `text` is N as the task wrote it (`0G`, `512M`, `2`), for messages.
    Grow {
        bytes: u64,
        text: String,
    },
}

/// The validated options of one task.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    pub vmid: Option<u64>,
    pub name: Option<String>,
    /// The VM's node, when the task names it (our addition): the one-read no-op (`World::on_node`).
    pub node: Option<String>,
    pub disk: String,
    /// `scsi`, `virtio`, `sata`, `ide`, `unused`, `efidisk`, `tpmstate`.
    pub bus: &'static str,
    pub state: State,
    pub create: Create,
    pub storage: Option<String>,
    pub size: Option<SizeRequest>,
    pub format: Option<String>,
    pub import_from: Option<String>,
    pub iso_image: Option<String>,
    pub target_storage: Option<String>,
    pub target_vmid: Option<u64>,
    pub target_disk: Option<String>,
    pub delete_moved: bool,
    pub bwlimit: Option<i64>,
    pub timeout: u64,
    /// The drive options the task names, as PVE keys and PVE text (`1`/`0` for booleans).
    pub options: Vec<(String, String)>,
}

/// A number as PVE keeps what we send: integral values without a fraction.
pub fn number_text(x: f64) -> String {
    if x.fract() == 0.0 && x.abs() < 1e15 {
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

/// Qemu.pm `move_vm_disk`: a reassign to the VM itself is a parameter error (not a rename of its
/// drive), in PVE's words under the task's option.
pub const SAME_VMID: &str = "target_vmid: must be different than source VMID to reassign disk";

/// Ranges of each bus, for upstream's messages.
fn bus_range(bus: &str) -> Option<(u32, u32)> {
    Some(match bus {
        "ide" => (0, 3),
        "sata" => (0, 5),
        "scsi" => (0, 30),
        "virtio" => (0, 15),
        "unused" => (0, 255),
        "efidisk" | "tpmstate" => (0, 0),
        _ => return None,
    })
}

fn check_disk_key(disk: &str) -> Result<&'static str> {
    let split = disk.find(|c: char| c.is_ascii_digit()).unwrap_or(disk.len());
    let (prefix, number) = disk.split_at(split);
    let well_formed = !prefix.is_empty()
        && prefix.bytes().all(|b| b.is_ascii_lowercase())
        && !number.is_empty()
        && number.bytes().all(|b| b.is_ascii_digit())
        && (number == "0" || !number.starts_with('0'));
    if !well_formed {
        return Err(Error::args(format!(
            "disk must be a drive key such as scsi1, virtio0, sata2, ide2, unused0, efidisk0 or tpmstate0, got '{}'",
            clip(disk, 40)
        )));
    }
    let Some((lo, hi)) = bus_range(prefix) else {
        return Err(Error::args(format!("Unsupported disk bus: {prefix}")));
    };
    let n: u32 = number.parse().unwrap_or(u32::MAX);
    if n < lo || n > hi {
        return Err(Error::args(format!("Disk {disk} number not in range {lo}..{hi}")));
    }
    disk_bus(disk).ok_or_else(|| Error::args(format!("Unsupported disk bus: {prefix}")))
}

fn parse_size_option(text: &str, state: State) -> Result<SizeRequest> {
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('+') {
        if state != State::Resized {
            return Err(Error::args(format!(
                "size '{text}': a relative size (+N) only makes sense with state: resized"
            )));
        }
        let bytes = parse_gib_or_size(rest).map_err(|e| Error::args(format!("size: {e}")))?;
        return Ok(SizeRequest::Grow { bytes, text: rest.to_string() });
    }
    let bytes = parse_gib_or_size(text).map_err(|e| Error::args(format!("size: {e}")))?;
    if bytes == 0 {
        return Err(Error::args("size must be larger than 0"));
    }
    if bytes % 1024 != 0 {
        return Err(Error::args(format!("size '{text}' must be a whole number of KiB")));
    }
    Ok(SizeRequest::Absolute(bytes))
}

impl Params {
    pub fn from_spec(p: &module_utils::ansible::spec::Args) -> Result<Params> {
        let disk = p.str("disk").unwrap_or_default().to_string();
        let bus = check_disk_key(&disk)?;
        let state = match p.str("state") {
            Some("resized") => State::Resized,
            Some("detached") => State::Detached,
            Some("moved") => State::Moved,
            Some("absent") => State::Absent,
            _ => State::Present,
        };
        let create = match p.str("create") {
            Some("disabled") => Create::Disabled,
            Some("forced") => Create::Forced,
            _ => Create::Regular,
        };
        let vmid = vmid_option("vmid", p.int("vmid"))?;
        let target_vmid = vmid_option("target_vmid", p.int("target_vmid"))?;
        if let Some(t) = p.str("target_disk") {
            check_disk_key(t).map_err(|e| Error::args(format!("target_disk: {e}")))?;
        }
        let format = p.str("format").map(str::to_string);
        if format.as_deref() == Some("cow") {
            return Err(Error::args(
                "format cow is not an image format Proxmox VE knows: use raw, qcow, qed, qcow2, vmdk or cloop",
            ));
        }
        let size = p.str("size").map(|s| parse_size_option(s, state)).transpose()?;
        if bus == "unused" && matches!(state, State::Present | State::Resized | State::Moved) {
            return Err(Error::args(format!(
                "{disk} holds a volume no drive uses: it can only be detached (already is) or absent (destroyed); attach the volume to a drive slot instead"
            )));
        }
        if state == State::Moved && p.str("target_storage").is_none() && target_vmid.is_none() {
            return Err(Error::args(
                "state is moved but any of the following are missing: target_storage, target_vmid",
            ));
        }
        if target_vmid.is_some() && target_vmid == vmid {
            return Err(Error::args(SAME_VMID));
        }
        let timeout = p.int("timeout").unwrap_or(600);
        if timeout <= 0 {
            return Err(Error::args(format!("timeout must be a positive number of seconds, got {timeout}")));
        }
        if let Some(wwn) = p.str("wwn") {
            let ok = wwn.len() == 18 && wwn.starts_with("0x") && wwn[2..].bytes().all(|b| b.is_ascii_hexdigit());
            if !ok {
                return Err(Error::args(format!("wwn must be 0x followed by 16 hex digits, got '{}'", clip(wwn, 40))));
            }
        }
        if p.str("iso_image").is_some() && p.str("media") != Some("cdrom") {
            return Err(Error::args("iso_image needs media: cdrom"));
        }
        let mut options = Vec::new();
        for (name, key, kind) in DRIVE_OPTIONS {
            let text = match kind {
                Kind::Bool => p.bool(name).map(|b| if b { "1" } else { "0" }.to_string()),
                Kind::Int => match p.int(name) {
                    Some(v) if v < 0 => return Err(Error::args(format!("{name} must be 0 or more, got {v}"))),
                    v => v.map(|v| v.to_string()),
                },
                Kind::Float => match p.float(name) {
                    Some(v) if v < 0.0 => return Err(Error::args(format!("{name} must be 0 or more, got {v}"))),
                    v => v.map(number_text),
                },
                _ => p.str(name).map(str::to_string),
            };
            if let Some(t) = text {
                // The value must be what PVE accepts for the key, and nothing more: no `,` that
                // would add `cache=unsafe` to a serial (property strings of every bus share
                // these keys' formats, so DRIVE is the one to check against).
                DRIVE.check_task_value(key, &t).map_err(|msg| Error::args(format!("{name}: {msg}")))?;
                options.push((key.to_string(), t));
            }
        }
        // Values that name objects: PVE's formats, before any call.
        for (option, format) in [
            ("storage", PveFormat::StorageId),
            ("target_storage", PveFormat::StorageId),
            ("import_from", PveFormat::VolumeIdOrAbsolutePath),
            ("iso_image", PveFormat::VolumeIdOrQmPath),
        ] {
            if let Some(v) = p.str(option) {
                check_option(option, format, v)?;
                if v.contains(',') {
                    return Err(Error::args(format!(
                        "{option}: a value must not contain ',' (it would start another key)"
                    )));
                }
            }
        }
        if let Some(node) = p.str("node") {
            check_option("node", PveFormat::Node, node)?;
        }
        Ok(Params {
            vmid,
            name: p.str("name").map(str::to_string),
            node: p.str("node").map(str::to_string),
            disk,
            bus,
            state,
            create,
            storage: p.str("storage").map(str::to_string),
            size,
            format,
            import_from: p.str("import_from").map(str::to_string),
            iso_image: p.str("iso_image").map(str::to_string),
            target_storage: p.str("target_storage").map(str::to_string),
            target_vmid,
            target_disk: p.str("target_disk").map(str::to_string),
            delete_moved: p.bool("delete_moved").unwrap_or(false),
            bwlimit: p.int("bwlimit"),
            timeout: timeout as u64,
            options,
        })
    }
}

impl module_utils::connect::Task for Params {
    fn vmid(&self) -> Option<u64> {
        self.vmid
    }
    fn wait(&self) -> Option<std::time::Duration> {
        Some(std::time::Duration::from_secs(self.timeout))
    }
}

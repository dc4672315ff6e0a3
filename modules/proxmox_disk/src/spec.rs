//! proxmox_disk's options and documentation: the source of plugins/modules/proxmox_disk.py.

use module_utils::ansible::connection::CONNECTION;
use module_utils::ansible::spec::{doc, DefaultValue, Kind, ModuleSpec, OptionSpec, RequiredIf, Support};

/// Drive options: (option name, PVE key, kind). The option names are community.proxmox's; the
/// PVE key is the same except where noted.
pub const DRIVE_OPTIONS: &[(&str, &str, Kind)] = &[
    ("aio", "aio", Kind::Str),
    ("backup", "backup", Kind::Bool),
    ("bps_max_length", "bps_max_length", Kind::Int),
    ("bps_rd_max_length", "bps_rd_max_length", Kind::Int),
    ("bps_wr_max_length", "bps_wr_max_length", Kind::Int),
    ("cache", "cache", Kind::Str),
    ("cyls", "cyls", Kind::Int),
    ("detect_zeroes", "detect_zeroes", Kind::Bool),
    ("discard", "discard", Kind::Str),
    ("heads", "heads", Kind::Int),
    ("iops", "iops", Kind::Int),
    ("iops_max", "iops_max", Kind::Int),
    ("iops_max_length", "iops_max_length", Kind::Int),
    ("iops_rd", "iops_rd", Kind::Int),
    ("iops_rd_max", "iops_rd_max", Kind::Int),
    ("iops_rd_max_length", "iops_rd_max_length", Kind::Int),
    ("iops_wr", "iops_wr", Kind::Int),
    ("iops_wr_max", "iops_wr_max", Kind::Int),
    ("iops_wr_max_length", "iops_wr_max_length", Kind::Int),
    ("iothread", "iothread", Kind::Bool),
    ("mbps", "mbps", Kind::Float),
    ("mbps_max", "mbps_max", Kind::Float),
    ("mbps_rd", "mbps_rd", Kind::Float),
    ("mbps_rd_max", "mbps_rd_max", Kind::Float),
    ("mbps_wr", "mbps_wr", Kind::Float),
    ("mbps_wr_max", "mbps_wr_max", Kind::Float),
    ("media", "media", Kind::Str),
    ("queues", "queues", Kind::Int),
    ("replicate", "replicate", Kind::Bool),
    ("rerror", "rerror", Kind::Str),
    ("ro", "ro", Kind::Bool),
    ("scsiblock", "scsiblock", Kind::Bool),
    ("secs", "secs", Kind::Int),
    ("serial", "serial", Kind::Str),
    ("shared", "shared", Kind::Bool),
    ("snapshot", "snapshot", Kind::Bool),
    ("ssd", "ssd", Kind::Bool),
    ("trans", "trans", Kind::Str),
    ("werror", "werror", Kind::Str),
    ("wwn", "wwn", Kind::Str),
];

const fn drive(name: &'static str, kind: Kind, what: &'static [&'static str]) -> OptionSpec {
    OptionSpec::new(name, kind, what)
}

const OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("vmid", Kind::Int, &["The id of the VM, 100 to 999999999. With O(name) too, both must name the same VM: the task fails before any write when the O(vmid)'s VM has another name, or when O(vmid) does not exist and another VM has that name."]),
    OptionSpec::new("name", Kind::Str, &["The name of the VM, when O(vmid) is not given. Several VMs with this name is an error that lists their vmids."]),
    OptionSpec::new("node", Kind::Str, &["The node the VM is on (an addition of ferro.proxmox; community.proxmox has no such option). With O(vmid), a task that changes nothing then costs one request, the VM's config read on that node; a VM that is not there is still found wherever it is (one C(/cluster/resources) read more)."]),
    OptionSpec::new("disk", Kind::Str, &[
        "The drive's config key: V(ide0)-V(ide3), V(sata0)-V(sata5), V(scsi0)-V(scsi30), V(virtio0)-V(virtio15), V(unused0)-V(unused255), V(efidisk0) or V(tpmstate0).",
    ])
    .required(),
    OptionSpec::new("state", Kind::Str, &[
        "V(present): the disk exists with the options the task names (see O(create)); options the task does not name, and the volume, are left as they are.",
        "V(resized): the disk has at least the size O(size) (absolute, idempotent) or grows by it (V(+N), never idempotent).",
        "V(detached): the disk is removed from the drive slot and its volume kept as C(unusedN) (returned as RV(unused)); no data is destroyed.",
        "V(moved): the disk is on O(target_storage), or reassigned to O(target_vmid) (as O(target_disk)).",
        "V(absent): the disk is removed and its volume destroyed. The only state that destroys data.",
    ])
    .default(DefaultValue::Str("present"))
    .choices(&["present", "resized", "detached", "moved", "absent"]),
    OptionSpec::new("create", Kind::Str, &[
        "With O(state=present): V(regular) creates the disk when it is missing; V(disabled) never creates; V(forced) creates a new disk even when one exists, and the old volume is kept as C(unusedN) (returned as RV(unused)), never destroyed.",
    ])
    .default(DefaultValue::Str("regular"))
    .choices(&["disabled", "regular", "forced"]),
    OptionSpec::new("storage", Kind::Str, &["The storage for a new disk."]),
    OptionSpec::new("size", Kind::Str, &[
        "A size: a bare number is GiB (V(200)), or a number with a V(K), V(M), V(G) or V(T) suffix (V(10G)), in every state.",
        "With O(state=present), the size of a new disk (an existing disk is not resized: use O(state=resized)). With O(state=resized), the size to grow to, or V(+N) to grow by N; shrinking is refused before any call.",
    ]),
    OptionSpec::new("format", Kind::Str, &["The image format of a new or moved disk."])
        .choices(&["raw", "cow", "qcow", "qed", "qcow2", "vmdk", "cloop"]),
    OptionSpec::new("import_from", Kind::Str, &["Create the disk as a copy of this volume (C(storage:volume)) or absolute path. Only when creating."]),
    OptionSpec::new("iso_image", Kind::Str, &["The ISO volume (C(storage:iso/file.iso)), V(cdrom) (the host's drive) or V(none) (empty drive) of a CD-ROM drive. Requires O(media)."]),
    OptionSpec::new("target_storage", Kind::Str, &["With O(state=moved): the storage to move the disk to."]),
    OptionSpec::new("target_vmid", Kind::Int, &["With O(state=moved): the VM to reassign the disk to."]),
    OptionSpec::new("target_disk", Kind::Str, &["With O(state=moved) and O(target_vmid): the drive slot in the target VM (default: the same key)."]),
    OptionSpec::new("delete_moved", Kind::Bool, &["With O(state=moved) to another storage: destroy the source volume after the copy. Not set or V(false): the source is kept as C(unusedN) (returned as RV(unused))."]),
    OptionSpec::new("bwlimit", Kind::Int, &["With O(state=moved): I/O bandwidth limit in KiB/s."]),
    OptionSpec::new("timeout", Kind::Int, &[
        "Seconds to wait for each Proxmox VE task (create, import, resize, move) to end.",
        "Also how long to wait for the VM when another task is still creating or cloning it (C(lock: create) or C(lock: clone)), in check mode too; past it the task fails before any write, naming that task's UPID. A lock that no running task holds (its task died) is stale: with C(Sys.Audit) on the node, which shows every task there, the task fails at once, naming C(qm unlock).",
    ])
        .default(DefaultValue::Int(600)),
    drive("aio", Kind::Str, &["AIO type."]).choices(&["native", "threads", "io_uring"]),
    drive("backup", Kind::Bool, &["Whether the drive is included in backups."]),
    drive("bps_max_length", Kind::Int, &["Maximum length of I/O bursts in seconds."]),
    drive("bps_rd_max_length", Kind::Int, &["Maximum length of read I/O bursts in seconds."]),
    drive("bps_wr_max_length", Kind::Int, &["Maximum length of write I/O bursts in seconds."]),
    drive("cache", Kind::Str, &["The drive's cache mode."]).choices(&["none", "writethrough", "writeback", "unsafe", "directsync"]),
    drive("cyls", Kind::Int, &["Force the drive's physical geometry to have a specific cylinder count."]),
    drive("detect_zeroes", Kind::Bool, &["Whether to detect and try to optimize writing zeroes."]),
    drive("discard", Kind::Str, &["Whether to pass discard/trim requests to the storage."]).choices(&["ignore", "on"]),
    drive("heads", Kind::Int, &["Force the drive's physical geometry to have a specific head count."]),
    drive("iops", Kind::Int, &["Maximum r/w I/O in operations per second."]),
    drive("iops_max", Kind::Int, &["Maximum unthrottled r/w I/O pool in operations per second."]),
    drive("iops_max_length", Kind::Int, &["Maximum length of I/O bursts in seconds."]),
    drive("iops_rd", Kind::Int, &["Maximum read I/O in operations per second."]),
    drive("iops_rd_max", Kind::Int, &["Maximum unthrottled read I/O pool in operations per second."]),
    drive("iops_rd_max_length", Kind::Int, &["Maximum length of read I/O bursts in seconds."]),
    drive("iops_wr", Kind::Int, &["Maximum write I/O in operations per second."]),
    drive("iops_wr_max", Kind::Int, &["Maximum unthrottled write I/O pool in operations per second."]),
    drive("iops_wr_max_length", Kind::Int, &["Maximum length of write I/O bursts in seconds."]),
    drive("iothread", Kind::Bool, &["Whether to use iothreads for this drive (V(scsi) with C(virtio-scsi-single), and V(virtio))."]),
    drive("mbps", Kind::Float, &["Maximum r/w speed in megabytes per second."]),
    drive("mbps_max", Kind::Float, &["Maximum unthrottled r/w pool in megabytes per second."]),
    drive("mbps_rd", Kind::Float, &["Maximum read speed in megabytes per second."]),
    drive("mbps_rd_max", Kind::Float, &["Maximum unthrottled read pool in megabytes per second."]),
    drive("mbps_wr", Kind::Float, &["Maximum write speed in megabytes per second."]),
    drive("mbps_wr_max", Kind::Float, &["Maximum unthrottled write pool in megabytes per second."]),
    drive("media", Kind::Str, &["The drive's media type."]).choices(&["cdrom", "disk"]),
    drive("queues", Kind::Int, &["Number of queues (SCSI only)."]),
    drive("replicate", Kind::Bool, &["Whether the drive is considered for replication jobs."]),
    drive("rerror", Kind::Str, &["Read error action."]).choices(&["ignore", "report", "stop"]),
    drive("ro", Kind::Bool, &["Whether the drive is read-only."]),
    drive("scsiblock", Kind::Bool, &["Whether to use scsi-block for full passthrough of a host block device."]),
    drive("secs", Kind::Int, &["Force the drive's physical geometry to have a specific sector count."]),
    drive("serial", Kind::Str, &["The drive's reported serial number, url-encoded, up to 20 bytes long."]),
    drive("shared", Kind::Bool, &["Mark this locally-managed volume as available on all nodes."]),
    drive("snapshot", Kind::Bool, &["Whether the drive's backing file's data is discarded when the VM is shut down (QEMU snapshot mode)."]),
    drive("ssd", Kind::Bool, &["Whether to expose this drive as an SSD, rather than a rotational hard disk."]),
    drive("trans", Kind::Str, &["Force disk geometry bios translation mode."]).choices(&["auto", "lba", "none"]),
    drive("werror", Kind::Str, &["Write error action."]).choices(&["enospc", "ignore", "report", "stop"]),
    drive("wwn", Kind::Str, &["The drive's worldwide name, encoded as 16 bytes hex string, prefixed by V(0x)."]),
];

pub static SPEC: ModuleSpec = ModuleSpec {
    name: "proxmox_disk",
    short_description: doc("Manage a disk of a Proxmox VE VM: create, update, resize, detach, move, remove", ""),
    description: doc(&[
        "Manages one drive of a QEMU VM through its whole lifecycle, without ever losing data by surprise: only O(state=absent) destroys a volume.",
        "The same options as community.proxmox.proxmox_disk. Differences: check mode is supported in every state and predicts the real run (including the volume name Proxmox VE will allocate, or null when that cannot be known without reading the storage); C(--diff) shows the drive and C(unusedN) lines before and after; updating a disk changes only the options the task names; O(size) means the same in every state; an absolute O(state=resized) is idempotent and a shrink is refused before any call; O(create=forced) and O(state=detached) keep the old volume as C(unusedN) and return it; moves are idempotent; every Proxmox VE task is waited for and its failure reported with its exit status and log; the volume, size and resulting drive string are returned.",
        "On a running VM, Proxmox VE applies some changes only at the next start (a new C(ide)/C(sata) disk, C(efidisk0), C(tpmstate0), or a change of C(cache), C(aio), C(discard), C(iothread), C(ssd), C(ro), C(queues); any disk change without C(disk) hotplug): the module then returns RV(pending) and RV(reboot_required) and warns.",
    ], &[]),
    options: OPTIONS,
    option_groups: &[&CONNECTION],
    mutually_exclusive: &[
        &["target_vmid", "target_storage"],
        &["mbps", "mbps_rd"],
        &["mbps", "mbps_wr"],
        &["iops", "iops_rd"],
        &["iops", "iops_wr"],
        &["import_from", "size"],
    ],
    required_together: &[],
    required_one_of: &[&["name", "vmid"]],
    required_if: &[
        RequiredIf { key: "create", value: "forced", requirements: &["storage"], any: false },
        RequiredIf { key: "state", value: "resized", requirements: &["size"], any: false },
    ],
    required_by: &[
        ("target_disk", &["target_vmid"]),
        ("mbps_max", &["mbps"]),
        ("mbps_rd_max", &["mbps_rd"]),
        ("mbps_wr_max", &["mbps_wr"]),
        ("bps_max_length", &["mbps_max"]),
        ("bps_rd_max_length", &["mbps_rd_max"]),
        ("bps_wr_max_length", &["mbps_wr_max"]),
        ("iops_max", &["iops"]),
        ("iops_rd_max", &["iops_rd"]),
        ("iops_wr_max", &["iops_wr"]),
        ("iops_max_length", &["iops_max"]),
        ("iops_rd_max_length", &["iops_rd_max"]),
        ("iops_wr_max_length", &["iops_wr_max"]),
        ("iso_image", &["media"]),
    ],
    check_mode: Support::Full,
    diff_mode: Support::Full,
    notes: doc(&[
        "Calls: with O(node) and O(vmid), a task that changes nothing makes one request, C(GET /nodes/{node}/qemu/{vmid}/pending); otherwise, or when the VM is not on that node, one C(/cluster/resources) read (the VM's node, and the storage types used to predict volume names), one C(GET .../pending) read of the VM's config, the write, the polls of its task, and one read back. A move to another VM also reads the target VM's config.",
        "Writes carry the config digest that was read. When another writer changed the VM in between (Proxmox VE's C(checksum mismatch)), the module reads the config again, plans again from it and writes again, a few times with random pauses; it fails with Proxmox VE's message only when the conflict persists.",
        "Once Proxmox VE has accepted a write or started a task, the result is C(changed), also when a later step fails (a task slower than O(timeout), a failed status read); the message then says what was accepted and what failed.",
        "Differences from community.proxmox that refuse a task to protect data, before any call: a shrink with O(state=resized); O(state=moved) of a drive with a change waiting for the next start (Proxmox VE would move the applied volume and put the old one back at that start); O(state=resized) of a drive whose pending change replaces or removes its volume (the volume grown would leave the drive at the next start). Restart the VM (or revert the pending change) first.",
        "O(state=resized) of a drive whose pending change only changes options resizes it as Proxmox VE does (the applied drive), then writes the pending value again with the new size, because Proxmox VE would otherwise bring the old size back at the next start (C(Qemu.pm) C(resize_vm), C(QemuServer.pm) C(vmconfig_apply_pending)); RV(pending) then lists the drive.",
        "Return values keep community.proxmox's meaning (RV(vmid), RV(msg)); RV(vmid) is returned on failure too once the VM is known. RV(disk), RV(volume), RV(size), RV(config), RV(pending), RV(reboot_required) and RV(unused) are added.",
    ], &[]),
    examples: doc(r#"
- name: The VM these examples work on (made by proxmox_kvm if it is missing)
  ferro.proxmox.proxmox_kvm:
    vmid: 101
    name: example-vm
    node: "{{ proxmox_node }}"
  delegate_to: localhost

- name: A 200 GiB data disk
  ferro.proxmox.proxmox_disk:
    vmid: 101
    disk: scsi1
    storage: "{{ proxmox_storage }}"
    size: 200
    discard: "on"
    iothread: true
  delegate_to: localhost
  register: disk

- name: Change the cache mode; the volume and every other option stay
  ferro.proxmox.proxmox_disk:
    vmid: 101
    disk: scsi1
    cache: writeback
  delegate_to: localhost

- name: Grow to 250G (idempotent)
  ferro.proxmox.proxmox_disk:
    vmid: 101
    disk: scsi1
    state: resized
    size: 250G
  delegate_to: localhost

- name: Move to another storage, keeping the old volume as unusedN
  ferro.proxmox.proxmox_disk:
    vmid: 101
    disk: scsi1
    state: moved
    target_storage: "{{ proxmox_move_storage }}"
  delegate_to: localhost

- name: Attach an installer ISO
  ferro.proxmox.proxmox_disk:
    vmid: 101
    disk: ide2
    iso_image: "{{ proxmox_iso }}"
    media: cdrom
  delegate_to: localhost
"#, ""),
    returns: doc(r#"
vmid:
  description: The id of the VM; on failure too once the VM is known (O(vmid), or the VM found by O(name)), as community.proxmox returns it.
  returned: always
  type: int
  sample: 101
disk:
  description: The drive's config key.
  returned: success
  type: str
  sample: scsi1
volume:
  description: The drive's volume after the run; null when the drive is gone, or in check mode when Proxmox VE's choice of name cannot be known.
  returned: success
  type: str
  sample: local-lvm:vm-101-disk-1
size:
  description: The drive's size after the run, as Proxmox VE wrote it and in bytes.
  returned: success
  type: dict
  contains:
    text: {description: "As in the drive string, for example C(200G).", type: str}
    bytes: {description: "In bytes.", type: int}
  sample: {text: 200G, bytes: 214748364800}
config:
  description: The resulting drive string as Proxmox VE shows it (including a pending change); null when the drive is gone.
  returned: success
  type: str
  sample: local-lvm:vm-101-disk-1,discard=on,iothread=1,size=200G
unused:
  description: The C(unusedN) key that holds a volume this run took out of use (detached, replaced, or the source of a move), when there is one.
  returned: when a volume was left unused
  type: str
  sample: unused0
reboot_required:
  description: Whether the VM must be restarted for the drive to be as described (RV(pending) is not empty).
  returned: success
  type: bool
msg:
  description: What happened, in community.proxmox's words.
  returned: always
  type: str
  sample: Disk scsi1 created in VM 101
"#, ""),
};

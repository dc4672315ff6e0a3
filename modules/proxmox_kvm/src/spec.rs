//! proxmox_kvm's options and documentation: the source of plugins/modules/proxmox_kvm.py.
//!
//! The options are community.proxmox 2.0.0's proxmox_kvm options with the same names, types,
//! choices, defaults and constraints; the deliberate differences (timeout, update_unsafe,
//! validate_certs) are documented on the options themselves.

use module_utils::ansible::connection::CONNECTION;
use module_utils::ansible::spec::{doc, DefaultValue, Elem, Kind, ModuleSpec, OptionSpec, RequiredIf, Support};

const STATES: &[&str] =
    &["present", "absent", "stopped", "started", "restarted", "current", "template", "paused", "hibernated"];
const OSTYPES: &[&str] =
    &["other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris"];
const SCSIHW: &[&str] = &["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"];
const FORMATS: &[&str] = &["cloop", "cow", "qcow", "qcow2", "qed", "raw", "vmdk", "unspecified"];

// The sub-options of efidisk0 and tpmstate0: community.proxmox 2.0.0's, which are the keys of
// Proxmox VE's efidisk and tpmstate property strings (qemu-server PVE/QemuServer/Drive.pm,
// $efidisk_fmt and $tpmstate_fmt) under Ansible names.
const EFIDISK0: &[OptionSpec] = &[
    OptionSpec::new("storage", Kind::Str, &[
        "The storage to allocate the disk on.",
        "Required here (community.proxmox does not mark it so): Proxmox VE cannot allocate the disk without it.",
    ])
    .required(),
    OptionSpec::new("format", Kind::Str, &["The image format (C(format)), e.g. V(raw) or V(qcow2); the storage's default when not set."]),
    OptionSpec::new("efitype", Kind::Str, &["The size and type of the OVMF EFI vars (C(efitype)); Proxmox VE's default is V(2m), V(4m) is needed for Secure Boot."])
        .choices(&["2m", "4m"]),
    OptionSpec::new("pre_enrolled_keys", Kind::Bool, &["Whether the EFI vars come with the distribution and Microsoft Secure Boot keys enrolled (C(pre-enrolled-keys)); Proxmox VE uses it with O(efidisk0.efitype=4m) only."]),
];

const TPMSTATE0: &[OptionSpec] = &[
    OptionSpec::new("storage", Kind::Str, &["The storage to allocate the TPM state on."]).required(),
    OptionSpec::new("version", Kind::Str, &["The TPM interface version (C(version), sent as C(v2.0) or C(v1.2))."])
        .default(DefaultValue::Str("2.0"))
        .choices(&["2.0", "1.2"]),
];

const OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("acpi", Kind::Bool, &["Whether ACPI is enabled (config key C(acpi); Proxmox VE's default is V(true))."]),
    OptionSpec::new("agent", Kind::Str, &["The QEMU guest agent: a boolean (V(true), V(1), ...) or a property string such as C(enabled=1,fstrim_cloned_disks=1). Compared semantically (C(1) equals C(enabled=1))."]),
    OptionSpec::new("archive", Kind::Str, &["A backup archive to restore instead of creating an empty VM (create only; sent as C(archive))."]),
    OptionSpec::new("args", Kind::Str, &["Extra arguments for KVM. Proxmox VE only accepts them from C(root@pam), so another O(api_user) fails before any call."]),
    OptionSpec::new("audio", Kind::Dict, &["Audio devices, C(audio0: device=ich9-intel-hda,driver=spice)."]),
    OptionSpec::new("autostart", Kind::Bool, &["Automatic restart after a crash (config key C(autostart), which Proxmox VE currently ignores)."]),
    OptionSpec::new("balloon", Kind::Int, &["The minimum memory in MiB for the balloon device; V(0) disables ballooning."]),
    OptionSpec::new("bios", Kind::Str, &["The BIOS implementation."]).choices(&["seabios", "ovmf"]),
    OptionSpec::new("boot", Kind::Str, &["The boot order, e.g. C(order=scsi0;net0)."]),
    OptionSpec::new("bootdisk", Kind::Str, &["The boot disk (deprecated in Proxmox VE in favour of O(boot))."]),
    OptionSpec::new("cicustom", Kind::Str, &["Cloud-init: custom files replacing the generated ones, e.g. C(user=local:snippets/user.yml)."]),
    OptionSpec::new("cipassword", Kind::Str, &[
        "Cloud-init: the password of the default user.",
        "Proxmox VE never returns it (it shows C(**********)), so on an existing VM it is only compared for presence: it is written when the VM has none, and a different password is not detected.",
    ]).no_log(),
    OptionSpec::new("citype", Kind::Str, &["Cloud-init: the configuration format."]).choices(&["nocloud", "configdrive2"]),
    OptionSpec::new("ciupgrade", Kind::Bool, &["Cloud-init: whether to upgrade packages on the first boot."]),
    OptionSpec::new("ciuser", Kind::Str, &["Cloud-init: the name of the default user."]),
    OptionSpec::new("clone", Kind::Str, &[
        "The name of the VM to clone. With O(vmid) set, O(vmid) is the source and this may be any value that is not the name of another VM (a name that some VM has must be the name of the O(vmid)'s VM, or the task fails before any write).",
        "The clone gets O(newid) (or the next free vmid), O(name), and then every other option of the task (cores, memory, NICs, cloud-init, tags, ...) in the same task, after the clone task has ended and the lock is gone.",
        "When the target already exists (a clone made by an earlier run: the VM O(newid) names, else the VM named O(name); given both, they must name the same VM, or the task fails before any write), it is an existing VM like any other: with O(update=false) (the default) nothing is written to it and its differences from the task's options are returned as RV(drift) and warned about; with O(update=true) they are written. Its vmid is returned, never the source's.",
    ]),
    OptionSpec::new("cores", Kind::Int, &["The number of CPU cores per socket."]),
    OptionSpec::new("cpu", Kind::Str, &["The emulated CPU type, e.g. C(host) or C(x86-64-v2-AES)."]),
    OptionSpec::new("cpulimit", Kind::Int, &["The limit of CPU usage (V(0) is no limit)."]),
    OptionSpec::new("cpuunits", Kind::Int, &["The CPU weight of the VM for the scheduler."]),
    OptionSpec::new("delete", Kind::Str, &["A comma-separated list of config keys to remove. Only keys that are set are removed, so a second run reports no change."]),
    OptionSpec::new("description", Kind::Str, &["The description (notes) of the VM."]),
    OptionSpec::new("destroy_unreferenced_disks", Kind::Bool, &["With O(state=absent): also destroy every disk on any enabled storage that is named for this vmid but not referenced in its config."])
        .default(DefaultValue::Bool(false)),
    OptionSpec::new("digest", Kind::Str, &["The config digest to guard writes with: a concurrent change then fails the task with Proxmox VE's C(checksum mismatch). Without it the module sends the digest of the config it read and, on a conflict, reads again, plans again and writes again (a few times), so it never overwrites a change it did not see."]),
    OptionSpec::new("efidisk0", Kind::Dict, &[
        "The EFI vars disk, allocated on create (needs O(bios=ovmf)); sent as C(STORAGE:1,...), Proxmox VE sizes it itself.",
        "On an existing VM a change of C(efitype) or C(pre_enrolled_keys) is written (the volume is kept; it applies at the next start); a different C(storage) is refused (use ferro.proxmox.proxmox_disk).",
    ])
    .suboptions(EFIDISK0),
    OptionSpec::new("force", Kind::Bool, &[
        "With O(state=stopped): stop the VM hard when it has not shut down within O(timeout). With O(state=restarted): reset instead of reboot. With O(state=absent) or O(state=template): stop a running VM first. With O(archive): overwrite an existing VM.",
    ]),
    OptionSpec::new("format", Kind::Str, &["The image format of a full clone's disks; V(unspecified) keeps the source format (not sent)."]).choices(FORMATS),
    OptionSpec::new("freeze", Kind::Bool, &["Whether to freeze the CPU at start (config key C(freeze))."]),
    OptionSpec::new("full", Kind::Bool, &["Whether a clone is a full copy (V(false): a linked clone, templates only)."]).default(DefaultValue::Bool(true)),
    OptionSpec::new("hookscript", Kind::Str, &["A hook script, e.g. C(local:snippets/hook.pl)."]),
    OptionSpec::new("hostpci", Kind::Dict, &["PCI passthrough devices, C(hostpci0: 0000:01:00.0,pcie=1)."]),
    OptionSpec::new("hotplug", Kind::Str, &["The hot-pluggable device types, C(network,disk,usb), V(0) or V(1). Compared as a set."]),
    OptionSpec::new("hugepages", Kind::Str, &["Huge pages."]).choices(&["any", "2", "1024"]),
    OptionSpec::new("ide", Kind::Dict, &[
        "IDE drives C(ide0) to C(ide3), values as Proxmox VE writes them: C(local-lvm:10) allocates a new 10 GiB disk, C(local:iso/debian.iso,media=cdrom) a CD-ROM, C(local-lvm:cloudinit) a cloud-init drive.",
        "See O(scsi) for how an existing drive is compared.",
    ]),
    OptionSpec::new("ipconfig", Kind::Dict, &["Cloud-init: IP settings per NIC, C(ipconfig0: ip=dhcp)."]),
    OptionSpec::new("keyboard", Kind::Str, &["The VNC keyboard layout."]),
    OptionSpec::new("kvm", Kind::Bool, &["Whether KVM hardware virtualisation is used."]),
    OptionSpec::new("localtime", Kind::Bool, &["Whether the real-time clock is set to local time."]),
    OptionSpec::new("lock", Kind::Str, &["The config lock to set (config key C(lock))."]).choices(&["migrate", "backup", "snapshot", "rollback"]),
    OptionSpec::new("machine", Kind::Str, &["The QEMU machine type, e.g. C(q35)."]),
    OptionSpec::new("memory", Kind::Int, &["The memory in MiB."]),
    OptionSpec::new("migrate", Kind::Bool, &["Whether to migrate the VM to O(node) when it is on another node."]).default(DefaultValue::Bool(false)),
    OptionSpec::new("migrate_downtime", Kind::Int, &["The maximum downtime of a live migration, in seconds."]),
    OptionSpec::new("migrate_speed", Kind::Int, &["The maximum speed of a migration, in MB/s (V(0) is no limit)."]),
    OptionSpec::new("name", Kind::Str, &[
        "The name of the VM. Identifies the VM when O(vmid) is not given; several VMs with this name is an error that lists their vmids.",
        "With O(vmid) too, both must name the same VM in every state: the task fails before any write when the O(vmid)'s VM has another name, or when O(vmid) does not exist and another VM has this name.",
        "With O(clone): the name of the new VM.",
        "A VM created or cloned by name alone (no O(vmid) or O(newid)) while an overlapping run does the same: once its task ended, the lowest vmid of that name keeps it, and a task whose VM has a higher vmid removes the VM it made itself (never another), reports no change with a warning and converges on the other. Give O(vmid) for Proxmox VE's own guarantee of one VM (README, Names under concurrency).",
    ]),
    OptionSpec::new("nameservers", Kind::List(Elem::Str), &["Cloud-init: DNS servers (config key C(nameserver)). Compared as a list."]),
    OptionSpec::new("net", Kind::Dict, &[
        "NICs, C(net0: virtio,bridge=vmbr0,tag=20).",
        "An existing NIC keeps its MAC unless the value gives one (C(virtio=BC:24:11:00:00:01,...)); NICs are compared semantically (MAC case, option order, C(1) vs C(on)). A new NIC gets a MAC from Proxmox VE, returned in RV(mac).",
    ]),
    OptionSpec::new("newid", Kind::Int, &["The vmid of the clone. When not given, the next free vmid is taken (retrying on a collision). A value outside 100 to 999999999, V(0) included, is refused (community.proxmox reads V(0) as unset)."]),
    OptionSpec::new("node", Kind::Str, &["The node to create the VM on (required with O(state=present)). An existing VM is found wherever it is."]),
    OptionSpec::new("numa", Kind::Dict, &["NUMA topology, C(numa0: cpus=0-1,memory=1024)."]),
    OptionSpec::new("numa_enabled", Kind::Bool, &["Whether NUMA is enabled (config key C(numa))."]),
    OptionSpec::new("onboot", Kind::Bool, &["Whether the VM starts when the node boots."]),
    OptionSpec::new("ostype", Kind::Str, &["The guest operating system."]).choices(OSTYPES),
    OptionSpec::new("parallel", Kind::Dict, &["Parallel ports, C(parallel0: /dev/parport0)."]),
    OptionSpec::new("pool", Kind::Str, &[
        "The resource pool of a new or cloned VM.",
        "On an existing VM with O(update=true), the VM is moved into this pool, out of the pool it is in (Proxmox VE 8.1 or later: C(PUT /pools) with C(allow-move)); C(--check) and C(--diff) show it as a C(pool:) line. A pool that does not exist is refused before any write, in check mode too. The move needs C(Pool.Allocate) on the pool (and on the pool the VM leaves) and C(VM.Allocate) or C(Permissions.Modify) on the VM. With O(update=false) the pool of an existing VM is not changed; a warning says so when it differs.",
    ]),
    OptionSpec::new("protection", Kind::Bool, &["Whether the VM is protected against removal."]),
    OptionSpec::new("purge", Kind::Bool, &["With O(state=absent): also remove the vmid from backup jobs, replication and HA."]).default(DefaultValue::Bool(false)),
    OptionSpec::new("reboot", Kind::Bool, &["Whether a reboot inside the guest restarts it (V(false): it stops)."]),
    OptionSpec::new("revert", Kind::Str, &["A comma-separated list of pending config changes to revert. Only keys with a pending change are reverted, so a second run reports no change."]),
    OptionSpec::new("rng0", Kind::Str, &["A VirtIO random number generator, e.g. C(source=/dev/urandom)."]),
    OptionSpec::new("sata", Kind::Dict, &["SATA drives C(sata0) to C(sata5). See O(ide) and O(scsi)."]),
    OptionSpec::new("scsi", Kind::Dict, &[
        "SCSI drives C(scsi0) to C(scsi30), C(scsi0: local-lvm:32,iothread=1,discard=on).",
        "A drive the VM does not have is created (C(STORAGE:N) allocates N GiB). On an existing drive the options are compared semantically and changed with the volume kept; C(size) and C(format) are informational. A different storage or size of an existing disk is refused: use ferro.proxmox.proxmox_disk (V(moved), V(resized)), which do it without data loss.",
    ]),
    OptionSpec::new("scsihw", Kind::Str, &["The SCSI controller model."]).choices(SCSIHW),
    OptionSpec::new("searchdomains", Kind::List(Elem::Str), &["Cloud-init: DNS search domains (config key C(searchdomain)). Compared as a list."]),
    OptionSpec::new("serial", Kind::Dict, &["Serial ports, C(serial0: socket)."]),
    OptionSpec::new("shares", Kind::Int, &["The memory shares for auto-ballooning."]),
    OptionSpec::new("skiplock", Kind::Bool, &["Ignore locks (C(root@pam) only; another O(api_user) fails before any call)."]),
    OptionSpec::new("smbios", Kind::Str, &["SMBIOS type 1 fields (config key C(smbios1))."]),
    OptionSpec::new("snapname", Kind::Str, &["The snapshot of the source to clone."]),
    OptionSpec::new("sockets", Kind::Int, &["The number of CPU sockets."]),
    OptionSpec::new("spice_enhancements", Kind::Str, &["SPICE enhancements, e.g. C(foldersharing=1,videostreaming=all)."]),
    OptionSpec::new("sshkeys", Kind::Str, &["Cloud-init: public SSH keys, one per line. Sent URL-encoded as Proxmox VE requires, and compared decoded (line by line), so a second run reports no change."])
        .not_secret(),
    OptionSpec::new("startdate", Kind::Str, &["The initial date of the real-time clock, C(now) or C(2006-06-17T16:01:21)."]),
    OptionSpec::new("startup", Kind::Str, &["Startup and shutdown behaviour, C(order=1,up=30,down=60)."]),
    OptionSpec::new("state", Kind::Str, &[
        "V(present): create the VM (or clone it with O(clone)) when it does not exist; an existing VM is compared with every option of the task: with O(update=false) differences are returned as RV(drift) and warned about, with O(update=true) exactly the differing keys are written.",
        "V(started), V(stopped) (graceful shutdown within O(timeout); then a hard stop only with O(force), else the task fails), V(restarted) (reboot, or reset with O(force)), V(paused), V(hibernated) (suspend to disk), V(template) (convert), V(current) (report the status), V(absent) (remove; a running VM needs O(force)).",
        "Every Proxmox VE task is waited for until it has ended, and its exit status decides success.",
    ])
    .default(DefaultValue::Str("present"))
    .choices(STATES),
    OptionSpec::new("storage", Kind::Str, &["The target storage of a full clone or a restore (and the default storage of a create)."]),
    OptionSpec::new("tablet", Kind::Bool, &["Whether a USB tablet device is enabled."]),
    OptionSpec::new("tags", Kind::List(Elem::Str), &["Tags of the VM, each matching C(^[a-zA-Z0-9_][a-zA-Z0-9_\\-\\+\\.]*$). Compared as a set, ignoring order and case (Proxmox VE stores them lower case and sorted)."]),
    OptionSpec::new("target", Kind::Str, &["The node to clone to (needs shared storage)."]),
    OptionSpec::new("tdf", Kind::Bool, &["Whether the time drift fix is enabled."]),
    OptionSpec::new("template", Kind::Bool, &["The config flag C(template). Use O(state=template) to convert a VM into a template."]),
    OptionSpec::new("timeout", Kind::Int, &[
        "How long to wait for each Proxmox VE task (create, clone, start, shutdown, ...), in seconds; also the shutdown timeout sent to Proxmox VE.",
        "Unlike community.proxmox (V(30)), the default is V(300): 30 seconds is known to be too short for full clones.",
        "Also how long to wait for a VM the task names that another task is still creating or cloning (C(lock: create) or C(lock: clone)), in check mode too; past it the task fails before any write, naming that task's UPID. A lock that no running task holds (its task died) is stale: with C(Sys.Audit) on the node, which shows every task there, the task fails at once, naming C(qm unlock).",
    ])
    .default(DefaultValue::Int(300)),
    OptionSpec::new("tpmstate0", Kind::Dict, &[
        "The TPM state disk, allocated on create; sent as C(STORAGE:1,version=vVERSION).",
        "Its version cannot change once created; a different version or storage on an existing VM is refused.",
    ])
    .suboptions(TPMSTATE0),
    OptionSpec::new("update", Kind::Bool, &[
        "Whether to change an existing VM to match the task. V(false) (the default, as upstream) writes nothing to an existing VM, whether it was created or cloned (O(clone)) by an earlier run, but returns every difference as RV(drift) and warns about each one.",
        "V(true) writes exactly the differing keys in one request: NICs keep their MAC unless one is given, an existing disk's options change with its volume kept, new disks and NICs are created. A second run reports no change.",
        "An empty value (an empty O(description) string, an empty O(tags) list, ...) removes that key from the VM (Proxmox VE's C(delete)); disks and NICs are removed only with O(delete) or the disk and NIC modules.",
    ])
    .default(DefaultValue::Bool(false)),
    OptionSpec::new("update_unsafe", Kind::Bool, &[
        "Accepted for compatibility with community.proxmox, where it allows NIC and disk changes on update at the risk of a recreated, empty disk. Here it has no effect but a warning: O(update=true) already changes NICs and disks safely, and nothing this module does can recreate a disk.",
    ])
    .default(DefaultValue::Bool(false)),
    OptionSpec::new("usb", Kind::Dict, &["USB devices, C(usb0: host=1234:5678)."]),
    OptionSpec::new("vcpus", Kind::Int, &["The number of hot-plugged vCPUs."]),
    OptionSpec::new("vga", Kind::Str, &["The display, e.g. C(std), C(serial0), C(virtio)."]),
    OptionSpec::new("virtio", Kind::Dict, &["VirtIO block drives C(virtio0) to C(virtio15). See O(scsi)."]),
    OptionSpec::new("virtiofs", Kind::Dict, &["virtiofs shares, C(virtiofs0: dirid=share1)."]),
    OptionSpec::new("vmid", Kind::Int, &[
        "The vmid of the VM. With O(name) too, both must name the same VM (see O(name)). With O(clone): the vmid of the source.",
        "A value outside Proxmox VE's range 100 to 999999999, V(0) included, is refused before any call (community.proxmox reads V(0) as unset and then acts on the VM O(name) finds).",
        "When creating without it, the next free vmid is taken from C(/cluster/nextid) and the create is retried with the next one when another run took it first, so parallel runs never collide. An explicit vmid from your source of truth is still the recommended way: it makes the task idempotent even when names change.",
    ]),
    OptionSpec::new("watchdog", Kind::Str, &["A virtual watchdog, e.g. C(model=i6300esb,action=reset)."]),
    OptionSpec::new("with_local_disks", Kind::Bool, &["With O(migrate): migrate local disks too."]).default(DefaultValue::Bool(false)),
];

pub static SPEC: ModuleSpec = ModuleSpec {
    name: "proxmox_kvm",
    short_description: doc("Create, clone, converge, power and remove Proxmox VE QEMU VMs", ""),
    description: doc(&[
        "Creates, clones, updates, starts, stops, restarts, pauses, hibernates, converts to a template and removes QEMU VMs, with the options of community.proxmox.proxmox_kvm.",
        "Differences from community.proxmox: check mode predicts every state and path without writing (a create predicts its vmid and config, and later ferro.proxmox tasks of the same C(--check) run see the predicted VM); C(--diff) shows the VM config before and after; an existing VM is compared with the task semantically instead of being reported as already existing; O(update=true) is idempotent and changes NICs (keeping their MAC) and disks (keeping their volume) safely; a clone gets the task's other options and an existing clone target is returned, never the source; every task is waited for and a failed task fails with its exit status; V(paused) and V(hibernated) work; RV(mac) is returned on every path.",
    ], &[]),
    options: OPTIONS,
    option_groups: &[&CONNECTION],
    // (delete|revert, update) are checked in params.rs for update=true only: the action
    // plugin hands the binary every default, so a defaulted update: false would count as set.
    mutually_exclusive: &[&["delete", "revert"], &["clone", "delete"], &["clone", "revert"]],
    required_together: &[],
    required_one_of: &[&["name", "vmid"]],
    required_if: &[RequiredIf { key: "state", value: "present", requirements: &["node"], any: false }],
    required_by: &[],
    check_mode: Support::Full,
    diff_mode: Support::Full,
    notes: doc(&[
        "Calls: with O(node) and O(vmid), a task that changes nothing makes one request, C(GET /nodes/{node}/qemu/{vmid}/pending); otherwise, or when the VM is not on that node, one C(/cluster/resources) read to find the VM; for an existing VM one C(GET .../pending) read of its config; C(GET .../status/current) before a power change. Reads are retried; a write is sent again only when Proxmox VE refused it for a digest conflict (it changed nothing), after reading the config again and planning again from it.",
        "Once Proxmox VE has accepted a write or started a task, the result is C(changed), also when a later step fails (a task slower than O(timeout), a failed read back, a removal whose stop succeeded but whose destroy task failed); the message then says what was accepted and what failed.",
        "A NIC in O(net) on a bridge the VM's node does not list (C(GET /nodes/{node}/network)) is refused before any write, in check mode too.",
        "Changes that Proxmox VE cannot apply to a running VM (not hot-pluggable) are returned in RV(pending) with RV(reboot_required) and a warning; check mode predicts them from the VM's status and its C(hotplug) setting.",
        "Differences from community.proxmox that can fail a task that used to pass: V(absent) on a running VM without O(force), and a power action on a locked VM, fail instead of reporting success.",
        "Stricter defaults than community.proxmox: O(timeout) defaults to V(300) instead of V(30); O(validate_certs) defaults to V(true) (as in community.proxmox 2.x, unlike 1.x). O(update_unsafe) only warns. O(efidisk0.storage) is required (the EFI disk cannot be allocated without it).",
        "Return values keep community.proxmox's meaning: RV(status) is the status B(before) the task and RV(msg) uses its words (V(stopped) says C(VM 101 is shutting down), though the shutdown is waited for); RV(vmid) is returned on failure too once the VM is known. Added keys: RV(power_state) (the state after the task), RV(name), RV(node), RV(mac), RV(devices), RV(pending), RV(reboot_required), RV(drift).",
    ], &[]),
    examples: doc(r#"
- name: Create web01 (automatic vmid), with a disk, a NIC and cloud-init
  ferro.proxmox.proxmox_kvm:
    node: "{{ proxmox_node }}"
    name: web01
    cores: 2
    memory: 4096
    scsihw: virtio-scsi-single
    scsi:
      scsi0: "{{ proxmox_storage }}:32,iothread=1,discard=on"
    ide:
      ide2: "{{ proxmox_storage }}:cloudinit"
    net:
      net0: "virtio,bridge={{ proxmox_bridge }},tag=20"
    ciuser: debian
    # Your public key, e.g. "{{ lookup('ansible.builtin.file', '~/.ssh/id_ed25519.pub') }}"
    sshkeys: ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIExampleKeyReplaceWithYoursExampleKeyReplace admin@example.org
    ipconfig:
      ipconfig0: ip=dhcp
    tags: [web, prod]
  delegate_to: localhost
  register: vm

- name: The MAC of net0, for DHCP reservations
  ansible.builtin.debug:
    msg: "{{ vm.mac.net0 }}"

- name: Clone the template and configure the clone in one task
  ferro.proxmox.proxmox_kvm:
    node: "{{ proxmox_node }}"
    clone: "{{ proxmox_template }}"
    name: app01
    newid: 120
    cores: 4
    ciuser: admin
    ipconfig:
      ipconfig0: ip=192.0.2.10/24,gw=192.0.2.1
  delegate_to: localhost

- name: Grow the memory of an existing VM (reported as drift unless update is true)
  ferro.proxmox.proxmox_kvm:
    node: "{{ proxmox_node }}"
    vmid: 120
    memory: 8192
    update: true
  delegate_to: localhost

- name: Start it
  ferro.proxmox.proxmox_kvm:
    vmid: 120
    state: started
  delegate_to: localhost

- name: Remove it, stopping it first
  ferro.proxmox.proxmox_kvm:
    vmid: 120
    state: absent
    force: true
    purge: true
  delegate_to: localhost
"#, ""),
    returns: doc(r#"
vmid:
  description:
    - The vmid of the VM (of the clone with O(clone), never of the source, as community.proxmox's successful clone). In check mode, for a create without O(vmid), the predicted one.
    - Also returned on failure once the VM is known (O(vmid), or the VM found by O(name); with O(clone), the source), as community.proxmox does.
  returned: always
  type: int
  sample: 105
name:
  description: The name of the VM.
  returned: success
  type: str
  sample: web01
node:
  description: The node of the VM.
  returned: success
  type: str
  sample: pve1
status:
  description:
    - As in community.proxmox, the status of the VM B(before) the task, as Proxmox VE reports it (V(running) or V(stopped); a paused VM is V(running), a hibernated one V(stopped)); null when the VM did not exist (create, clone, already absent).
    - The state after the task is RV(power_state).
  returned: success
  type: str
  sample: stopped
power_state:
  description: The power state of the VM B(after) the task (V(running), V(stopped), V(paused), V(hibernated)); null when the VM does not exist afterwards. Not returned by community.proxmox. Paths that do not read C(status/current) (V(present), O(delete), O(revert), O(migrate)) take it from C(/cluster/resources), which lists a paused VM as V(running).
  returned: success
  type: str
  sample: running
msg:
  description: What happened, in community.proxmox's words where they apply.
  returned: always
  type: str
  sample: VM web01 with vmid 105 deployed
mac:
  description: Every C(netN) of the VM and its MAC, on every path where the VM exists. In check mode, a new NIC without a given MAC (and every NIC of a clone) shows C((known after apply)), as Proxmox VE draws it when it writes the NIC.
  returned: success
  type: dict
  sample: {"net0": "BC:24:11:3A:5C:0F"}
devices:
  description: Every disk key of the VM and its volume.
  returned: success
  type: dict
  sample: {"scsi0": "local-lvm:vm-105-disk-0", "ide2": "local-lvm:vm-105-cloudinit"}
reboot_required:
  description: Whether the VM must be restarted for its config to be as described (RV(pending) is not empty).
  returned: success
  type: bool
drift:
  description: With O(update=false) on an existing VM, each key whose live value differs from the task, with the live (C(before)) and the task's (C(after)) value. Empty when the VM matches.
  returned: success
  type: dict
  sample: {"memory": {"before": "2048", "after": "4096"}}
"#, ""),
};

//! proxmox_vm_info's options and documentation: the source of plugins/modules/proxmox_vm_info.py.

use module_utils::ansible::connection::CONNECTION;
use module_utils::ansible::spec::{doc, DefaultValue, Kind, ModuleSpec, OptionSpec, Support};

const OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("node", Kind::Str, &["Only VMs on this cluster node. An unknown node is an error."]),
    OptionSpec::new("type", Kind::Str, &["Which kind of guests to list."])
        .default(DefaultValue::Str("all"))
        .choices(&["all", "qemu", "lxc"]),
    OptionSpec::new("vmid", Kind::Int, &["Only the VM with this id. An unknown vmid gives an empty list, not an error; a value outside 100 to 999999999 (V(0) included) is refused."]),
    OptionSpec::new("name", Kind::Str, &["Only VMs with exactly this name (names are not unique, so this may return several). An empty string matches unnamed VMs."]),
    OptionSpec::new("config", Kind::Str, &[
        "Whether to return each VM's configuration: V(none) does not read it, V(current) returns the running configuration without pending changes, V(pending) returns it with pending changes applied.",
        "With V(current) or V(pending), each QEMU VM also gets RV(proxmox_vms[].nics) and RV(proxmox_vms[].disks), parsed from that configuration.",
    ])
    .default(DefaultValue::Str("none"))
    .choices(&["none", "current", "pending"]),
    OptionSpec::new("network", Kind::Bool, &[
        "Whether to read each running VM's network interfaces from the QEMU guest agent.",
        "A VM that is stopped or has no running agent gets RV(proxmox_vms[].network_error) instead; the module does not fail for it.",
    ])
    .default(DefaultValue::Bool(false)),
];

pub static SPEC: ModuleSpec = ModuleSpec {
    name: "proxmox_vm_info",
    short_description: doc("Retrieve information about Proxmox VE virtual machines", ""),
    description: doc(&[
        "Lists QEMU VMs and LXC containers of a Proxmox VE cluster, optionally with their configuration, parsed NICs (with MAC addresses) and disks, and the guest agent's view of the network.",
        "A drop-in replacement for community.proxmox.proxmox_vm_info with the same options and return shape, plus RV(proxmox_vms[].nics) and RV(proxmox_vms[].disks).",
        "Makes one C(/cluster/resources) read, one VM list read per node with selected VMs, and one config read per selected VM when O(config) asks for it.",
    ], &[]),
    options: OPTIONS,
    option_groups: &[&CONNECTION],
    mutually_exclusive: &[],
    required_together: &[],
    required_one_of: &[],
    required_if: &[],
    required_by: &[],
    check_mode: Support::Full,
    diff_mode: Support::NotApplicable,
    notes: doc(&["Read-only: check mode returns the same information as a normal run."], &[]),
    examples: doc(r#"
- name: List every VM of the cluster
  ferro.proxmox.proxmox_vm_info:
  delegate_to: localhost
  register: cluster

- name: Read VM 100's config and MAC addresses; no VM 100 is an empty list, not a failure
  ferro.proxmox.proxmox_vm_info:
    vmid: 100
    config: current
  delegate_to: localhost
  register: vm

- name: Show the MAC of its net0, if it exists
  ansible.builtin.debug:
    msg: "{{ (vm.proxmox_vms[0].nics | selectattr('interface', 'eq', 'net0') | first).mac }}"
  when: vm.proxmox_vms | length > 0

- name: Look for a VM by name that may not exist (an empty list when it does not)
  ferro.proxmox.proxmox_vm_info:
    name: web01
  delegate_to: localhost
  register: found

- name: Say whether it exists
  ansible.builtin.debug:
    msg: "{{ 'web01 is VM %d' % found.proxmox_vms[0].vmid if found.proxmox_vms else 'there is no VM named web01' }}"

- name: Guest agent network of every VM named web (stopped ones get network_error)
  ferro.proxmox.proxmox_vm_info:
    name: web
    network: true
  delegate_to: localhost
"#, ""),
    returns: doc(r#"
vmid:
  description: The O(vmid) the task named, on failure only (so that a failed task says which VM it was about); a successful result lists it in RV(proxmox_vms).
  returned: failure, when O(vmid) is set
  type: int
  sample: 101
proxmox_vms:
  description: The selected guests, sorted by vmid. Each entry holds the fields of the VM in Proxmox VE's cluster resource list and in its node's VM list (qemu-server's vmstatus), as Proxmox VE gives them.
  returned: always
  type: list
  elements: dict
  contains:
    vmid:
      description: The VM id.
      type: int
      sample: 101
    name:
      description: The VM name.
      type: str
      sample: web01
    node:
      description: The node the VM is on.
      type: str
      sample: pve1
    type:
      description: V(qemu) or V(lxc).
      type: str
    status:
      description: V(running), V(stopped), ...
      type: str
    template:
      description: Whether the VM is a template.
      type: bool
    id:
      description: The cluster resource id, for example C(qemu/101).
      type: str
    maxcpu: {description: "The number of CPUs the VM may use, as the cluster resource list states it.", returned: "when Proxmox VE reports it", type: float}
    cpus: {description: "The number of CPUs the VM may use, as the node's VM list states it.", returned: "when Proxmox VE reports it", type: float}
    cpu: {description: "The CPU usage, as a fraction of its CPUs; 0 when stopped.", returned: "when Proxmox VE reports it", type: float}
    mem: {description: "The memory in use, in bytes.", returned: "when Proxmox VE reports it", type: int}
    maxmem: {description: "The memory configured, in bytes.", returned: "when Proxmox VE reports it", type: int}
    memhost: {description: "The memory the VM's process uses on the host, in bytes (Proxmox VE 9).", returned: "when Proxmox VE reports it", type: int}
    disk: {description: "The disk space in use, in bytes (0 for a QEMU VM: not measured).", returned: "when Proxmox VE reports it", type: int}
    maxdisk: {description: "The size of the VM's root disk, in bytes.", returned: "when Proxmox VE reports it", type: int}
    diskread: {description: "The bytes read from disks since the VM started.", returned: "when Proxmox VE reports it", type: int}
    diskwrite: {description: "The bytes written to disks since the VM started.", returned: "when Proxmox VE reports it", type: int}
    netin: {description: "The bytes received by the VM's NICs since it started.", returned: "when Proxmox VE reports it", type: int}
    netout: {description: "The bytes sent by the VM's NICs since it started.", returned: "when Proxmox VE reports it", type: int}
    uptime: {description: "The seconds since the VM started; 0 when stopped.", returned: "when Proxmox VE reports it", type: int}
    pid: {description: "The process id of the running VM on its node.", returned: "when Proxmox VE reports it", type: int}
    tags: {description: "The VM's tags, separated by C(;).", returned: "when Proxmox VE reports it", type: str}
    lock: {description: "The lock held on the VM's config (for example C(backup)), when there is one.", returned: "when Proxmox VE reports it", type: str}
    serial: {description: "Whether the VM has a serial console configured.", returned: "when Proxmox VE reports it", type: bool}
    pressurecpusome: {description: "The CPU pressure stall information (some), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    pressurecpufull: {description: "The CPU pressure stall information (full), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    pressureiosome: {description: "The I/O pressure stall information (some), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    pressureiofull: {description: "The I/O pressure stall information (full), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    pressurememorysome: {description: "The memory pressure stall information (some), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    pressurememoryfull: {description: "The memory pressure stall information (full), of the VM's process.", returned: "when Proxmox VE reports it", type: float}
    config:
      description: The raw PVE configuration, when O(config) is V(current) or V(pending).
      returned: when config is not none
      type: dict
    nics:
      description: One entry per C(netN) key of the configuration, parsed.
      returned: when config is not none, QEMU VMs only
      type: list
      elements: dict
      contains:
        interface: {description: "The config key, for example C(net0).", type: str}
        model: {description: "The NIC model, for example C(virtio).", type: str}
        mac: {description: "The MAC address, upper case.", type: str, sample: "BC:24:11:3A:5C:0F"}
        bridge: {description: "The bridge, null for user-mode networking.", type: str}
        tag: {description: "The VLAN tag, or null.", type: int}
        trunks: {description: "VLAN trunks, or null.", type: str}
        firewall: {description: "Whether the PVE firewall is on for this NIC.", type: bool}
        link_down: {description: "Whether the link is disconnected.", type: bool}
        mtu: {description: "The MTU, or null.", type: int}
        queues: {description: "The number of queues, or null.", type: int}
        rate: {description: "The rate limit in MB/s, or null.", type: float}
        other: {description: "Any other options of the NIC, as strings.", type: dict}
    disks:
      description: One entry per disk key (C(scsiN), C(virtioN), C(sataN), C(ideN), C(efidisk0), C(tpmstate0), C(unusedN)), parsed.
      returned: when config is not none, QEMU VMs only
      type: list
      elements: dict
      contains:
        key: {description: "The config key, for example C(scsi0).", type: str}
        bus: {description: "The bus, for example C(scsi) or C(unused).", type: str}
        storage: {description: "The storage of the volume, or null for C(none), C(cdrom) and paths.", type: str}
        volume: {description: "The volume as PVE wrote it, for example C(local-lvm:vm-101-disk-0).", type: str}
        size: {description: "The size as PVE wrote it, for example C(32G).", type: str}
        size_bytes: {description: "The size in bytes.", type: int}
        format: {description: "The image format, when PVE states it or the volume name shows it.", type: str}
        media: {description: "V(disk) or V(cdrom).", type: str}
        other: {description: "Any other options of the drive, as strings.", type: dict}
    network:
      description: The guest agent's C(network-get-interfaces) result.
      returned: when network is true and the agent answered
      type: list
      elements: dict
    network_error:
      description: Why the guest network could not be read (VM stopped, agent not running).
      returned: when network is true and the agent did not answer
      type: str
"#, ""),
};

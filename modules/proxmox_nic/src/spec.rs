//! proxmox_nic's options and documentation: the source of plugins/modules/proxmox_nic.py.

use module_utils::ansible::connection::CONNECTION;
use module_utils::ansible::spec::{doc, DefaultValue, Elem, Kind, ModuleSpec, OptionSpec, Support};

/// community.proxmox's model choices (PVE also knows `e1000e`, which upstream does not offer).
const MODELS: &[&str] = &[
    "e1000",
    "e1000-82540em",
    "e1000-82544gc",
    "e1000-82545em",
    "i82551",
    "i82557b",
    "i82559er",
    "ne2k_isa",
    "ne2k_pci",
    "pcnet",
    "rtl8139",
    "virtio",
    "vmxnet3",
];

const OPTIONS: &[OptionSpec] = &[
    OptionSpec::new("vmid", Kind::Int, &["The id of the VM, 100 to 999999999. With O(name) too, both must name the same VM: the task fails before any write when the O(vmid)'s VM has another name, or when O(vmid) does not exist and another VM has that name."]),
    OptionSpec::new("name", Kind::Str, &["The name of the VM, when O(vmid) is not given. Several VMs with this name is an error that lists their vmids."]),
    OptionSpec::new("node", Kind::Str, &["The node the VM is on (an addition of ferro.proxmox; community.proxmox has no such option). With O(vmid), a task that changes nothing then costs one request, the VM's config read on that node; a VM that is not there is still found wherever it is (one C(/cluster/resources) read more)."]),
    OptionSpec::new("interface", Kind::Str, &["The NIC's config key, V(net0) to V(net31)."]).required(),
    OptionSpec::new("state", Kind::Str, &["V(present) makes the NIC exist exactly as described; V(absent) removes it."])
        .default(DefaultValue::Str("present"))
        .choices(&["present", "absent"]),
    OptionSpec::new("model", Kind::Str, &["The NIC model."])
        .default(DefaultValue::Str("virtio"))
        .choices(MODELS),
    OptionSpec::new("mac", Kind::Str, &[
        "The MAC address (any case; compared case-insensitively, written upper case).",
        "When not given, an existing NIC keeps its MAC; a new NIC gets one from Proxmox VE, returned in RV(mac).",
    ]),
    OptionSpec::new("bridge", Kind::Str, &["The bridge to attach the NIC to. Not given means user-mode (NAT) networking, as in Proxmox VE."]),
    OptionSpec::new("tag", Kind::Int, &["The VLAN tag, 1 to 4094."]),
    OptionSpec::new("trunks", Kind::List(Elem::Int), &["VLAN ids to pass through the NIC, each 1 to 4094."]),
    OptionSpec::new("firewall", Kind::Bool, &["Whether the Proxmox VE firewall protects this NIC."]).default(DefaultValue::Bool(false)),
    OptionSpec::new("link_down", Kind::Bool, &["Whether the NIC's link is disconnected."]).default(DefaultValue::Bool(false)),
    OptionSpec::new("mtu", Kind::Int, &["The MTU: V(1) uses the bridge's MTU, else 576 to 65520. Only the V(virtio) model supports it; with another model it is ignored with a warning."]),
    OptionSpec::new("queues", Kind::Int, &["The number of packet queues, 0 to 64."]),
    OptionSpec::new("rate", Kind::Float, &["The rate limit in MB/s (a number, 0 or more); V(10) and V(10.0) are the same rate."]),
];

pub static SPEC: ModuleSpec = ModuleSpec {
    name: "proxmox_nic",
    short_description: doc("Add, change and remove a NIC of a Proxmox VE VM, keeping its MAC", ""),
    description: doc(&[
        "Makes one C(netN) of a QEMU VM exactly what the task describes, or removes it.",
        "The same options as community.proxmox.proxmox_nic. Differences: NICs are compared semantically (MAC case, V(10) vs V(10.0), option order, defaults), so a second run reports no change; out-of-range values are rejected before any call; options of the NIC that this module does not manage (for example C(host-tunnel)) are kept; the NIC's MAC, the resulting C(netN) value and whether the change waits for a reboot are returned; C(--diff) shows the C(netN) line before and after.",
        "The task describes the whole NIC: an option not given takes its default (for example, O(firewall=false) turns the firewall of an existing NIC off) and an optional setting not given (O(tag), O(mtu), ...) is removed. The MAC is the exception: it is kept unless O(mac) is given.",
        "On a running VM, Proxmox VE applies bridge, tag, trunks, firewall, rate and link changes live; a new NIC, a removal and a change of model, MAC, queues or MTU need C(network) hotplug, and otherwise wait for the next start: the module then returns RV(pending) and RV(reboot_required) and warns.",
    ], &[]),
    options: OPTIONS,
    option_groups: &[&CONNECTION],
    mutually_exclusive: &[],
    required_together: &[],
    required_one_of: &[&["name", "vmid"]],
    required_if: &[],
    required_by: &[],
    check_mode: Support::Full,
    diff_mode: Support::Full,
    notes: doc(&[
        "Calls: with O(node) and O(vmid), a task that changes nothing makes one request, C(GET /nodes/{node}/qemu/{vmid}/pending); otherwise, or when the VM is not on that node, one C(/cluster/resources) read to find the VM and its node, one C(GET .../pending) read of its config, and, when something changes, one C(GET /nodes/{node}/network) read of the node's bridges (when O(bridge) is given), one C(PUT .../config) and one read back.",
        "The write carries the config digest that was read. When another writer changed the VM in between (Proxmox VE's C(checksum mismatch)), the module reads the config again, plans again from it and writes again, a few times with random pauses; it fails with Proxmox VE's message only when the conflict persists.",
        "A O(bridge) the VM's node does not list (C(GET /nodes/{node}/network), SDN VNets included; a bridge the user may not use is not listed) is refused before any write, in check mode too. A NIC an earlier change left pending is reported as pending on every run, not as unchanged.",
        "Once Proxmox VE has accepted the write, the result is C(changed), also when a later step fails (a failed read back); the message then says what was accepted and what failed.",
        "Return values keep community.proxmox's meaning (RV(vmid), RV(msg)); RV(vmid) is returned on failure too once the VM is known.",
    ], &[]),
    examples: doc(r#"
- name: The VM these examples work on (made by proxmox_kvm if it is missing)
  ferro.proxmox.proxmox_kvm:
    vmid: 101
    name: example-vm
    node: "{{ proxmox_node }}"
  delegate_to: localhost

- name: Attach net0 to the bridge, VLAN 20
  ferro.proxmox.proxmox_nic:
    vmid: 101
    interface: net0
    bridge: "{{ proxmox_bridge }}"
    tag: 20
  delegate_to: localhost
  register: nic

- name: The MAC, for DHCP reservations
  ansible.builtin.debug:
    var: nic.mac

- name: Move net0 to another VLAN, naming the VM by name (the MAC stays)
  ferro.proxmox.proxmox_nic:
    name: example-vm
    interface: net0
    bridge: "{{ proxmox_bridge }}"
    tag: 30
    firewall: true
  delegate_to: localhost

- name: Add net1 on the same bridge, untagged
  ferro.proxmox.proxmox_nic:
    vmid: 101
    interface: net1
    bridge: "{{ proxmox_bridge }}"
  delegate_to: localhost

- name: Remove net1
  ferro.proxmox.proxmox_nic:
    vmid: 101
    interface: net1
    state: absent
  delegate_to: localhost
"#, ""),
    returns: doc(r#"
vmid:
  description: The id of the VM; on failure too once the VM is known (O(vmid), or the VM found by O(name)), as community.proxmox returns it.
  returned: always
  type: int
  sample: 101
interface:
  description: The NIC's config key.
  returned: success
  type: str
  sample: net0
mac:
  description: The NIC's MAC after the run (upper case); null when the NIC is absent. In check mode, a new NIC without O(mac) shows C((known after apply)), as Proxmox VE draws it when it writes the NIC.
  returned: success
  type: str
  sample: "BC:24:11:3A:5C:0F"
config:
  description: The resulting C(netN) value as Proxmox VE shows it (including a pending change); null when absent.
  returned: success
  type: str
  sample: "virtio=BC:24:11:3A:5C:0F,bridge=vmbr1,tag=20"
reboot_required:
  description: Whether the VM must be restarted for its NIC to be as described (RV(pending) is not empty).
  returned: success
  type: bool
msg:
  description: What happened, in community.proxmox's words.
  returned: always
  type: str
  sample: Nic net0 updated on VM with vmid 103
"#, ""),
};

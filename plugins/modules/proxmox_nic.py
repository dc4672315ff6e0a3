# -*- coding: utf-8 -*-
# GENERATED from the module's Rust spec (modules/proxmox_nic/src/spec.rs) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation and argument spec of ferro.proxmox.proxmox_nic.

The module itself is a native binary (native/<target-triple>/proxmox_nic) that the collection's
action plugin runs; this file exists for ansible-doc, ansible-test and the action plugin's
argument validation.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: proxmox_nic
short_description: "Add, change and remove a NIC of a Proxmox VE VM, keeping its MAC"
version_added: "0.1.0"
author: "ferro.proxmox contributors (@ferro-proxmox)"
description:
  - "Makes one C(netN) of a QEMU VM exactly what the task describes, or removes it."
  - "The same options as community.proxmox.proxmox_nic. Differences: NICs are compared semantically (MAC case, V(10) vs
      V(10.0), option order, defaults), so a second run reports no change; out-of-range values are rejected before any
      call; options of the NIC that this module does not manage (for example C(host-tunnel)) are kept; the NIC's MAC,
      the resulting C(netN) value and whether the change waits for a reboot are returned; C(--diff) shows the C(netN)
      line before and after."
  - "The task describes the whole NIC: an option not given takes its default (for example, O(firewall=false) turns the
      firewall of an existing NIC off) and an optional setting not given (O(tag), O(mtu), ...) is removed. The MAC is
      the exception: it is kept unless O(mac) is given."
  - "On a running VM, Proxmox VE applies bridge, tag, trunks, firewall, rate and link changes live; a new NIC, a removal
      and a change of model, MAC, queues or MTU need C(network) hotplug, and otherwise wait for the next start: the
      module then returns RV(pending) and RV(reboot_required) and warns."
options:
  vmid:
    description:
      - "The id of the VM, 100 to 999999999. With O(name) too, both must name the same VM: the task fails before any
          write when the O(vmid)'s VM has another name, or when O(vmid) does not exist and another VM has that name."
    type: int
  name:
    description:
      - "The name of the VM, when O(vmid) is not given. Several VMs with this name is an error that lists their vmids."
    type: str
  node:
    description:
      - "The node the VM is on (an addition of ferro.proxmox; community.proxmox has no such option). With O(vmid), a
          task that changes nothing then costs one request, the VM's config read on that node; a VM that is not there is
          still found wherever it is (one C(/cluster/resources) read more)."
    type: str
  interface:
    description:
      - "The NIC's config key, V(net0) to V(net31)."
    type: str
    required: true
  state:
    description:
      - "V(present) makes the NIC exist exactly as described; V(absent) removes it."
    type: str
    default: "present"
    choices: ["present", "absent"]
  model:
    description:
      - "The NIC model."
    type: str
    default: "virtio"
    choices: ["e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "i82551", "i82557b", "i82559er", "ne2k_isa",
      "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3"]
  mac:
    description:
      - "The MAC address (any case; compared case-insensitively, written upper case)."
      - "When not given, an existing NIC keeps its MAC; a new NIC gets one from Proxmox VE, returned in RV(mac)."
    type: str
  bridge:
    description:
      - "The bridge to attach the NIC to. Not given means user-mode (NAT) networking, as in Proxmox VE."
    type: str
  tag:
    description:
      - "The VLAN tag, 1 to 4094."
    type: int
  trunks:
    description:
      - "VLAN ids to pass through the NIC, each 1 to 4094."
    type: list
    elements: int
  firewall:
    description:
      - "Whether the Proxmox VE firewall protects this NIC."
    type: bool
    default: false
  link_down:
    description:
      - "Whether the NIC's link is disconnected."
    type: bool
    default: false
  mtu:
    description:
      - "The MTU: V(1) uses the bridge's MTU, else 576 to 65520. Only the V(virtio) model supports it; with another
          model it is ignored with a warning."
    type: int
  queues:
    description:
      - "The number of packet queues, 0 to 64."
    type: int
  rate:
    description:
      - "The rate limit in MB/s (a number, 0 or more); V(10) and V(10.0) are the same rate."
    type: float
attributes:
  check_mode:
    description: "Can run in check mode and return changed status prediction without modifying target."
    support: full
  diff_mode:
    description: "Will return details on what has changed (or possibly needs changing in check mode), when in diff
      mode."
    support: full
  async:
    description: "Supports being used with the C(async) action keyword."
    support: none
    details: "The action plugin refuses C(async): a module that waits for every Proxmox VE task it starts has nothing to
      poll; give the task a longer timeout instead."
  action_group:
    description: "Use C(group/ferro.proxmox.proxmox) in C(module_defaults) to set defaults for this module."
    support: full
    membership: ["ferro.proxmox.proxmox"]
  platform:
    description: "Target OS/families that can be operated against."
    support: full
    platforms: "posix"
seealso:
  - module: ferro.proxmox.proxmox_kvm
  - module: ferro.proxmox.proxmox_disk
  - module: ferro.proxmox.proxmox_vm_info
  - module: community.proxmox.proxmox_nic
    description: "The module this one re-implements with the same options; README.md, Migrating from community.proxmox,
      lists every difference."
  - name: "Saved plans: the real run does what --check showed, or nothing"
    description: "Set C(ferro_proxmox_plan) to save the check run's plan and apply exactly it (docs/saved-plans.md in
      the collection)."
    link: "https://github.com/ferro-proxmox/ferro.proxmox/blob/main/docs/saved-plans.md"
notes:
  - "Runs as a native binary on the Ansible controller; use it with C(delegate_to: localhost). The target VM needs no
      Python, SSH or network."
  - "Values that name an object or go into a device's property string (node, storage, bridge, volume, serial, ...) are
      checked against Proxmox VE's format for that option before any call and refused naming the option;
      community.proxmox sends them as they are, where a separator can reach another API path or add a key to a device."
  - "Calls: with O(node) and O(vmid), a task that changes nothing makes one request, C(GET
      /nodes/{node}/qemu/{vmid}/pending); otherwise, or when the VM is not on that node, one C(/cluster/resources) read
      to find the VM and its node, one C(GET .../pending) read of its config, and, when something changes, one C(GET
      /nodes/{node}/network) read of the node's bridges (when O(bridge) is given), one C(PUT .../config) and one read
      back."
  - "The write carries the config digest that was read. When another writer changed the VM in between (Proxmox VE's
      C(checksum mismatch)), the module reads the config again, plans again from it and writes again, a few times with
      random pauses; it fails with Proxmox VE's message only when the conflict persists."
  - "A O(bridge) the VM's node does not list (C(GET /nodes/{node}/network), SDN VNets included; a bridge the user may
      not use is not listed) is refused before any write, in check mode too. A NIC an earlier change left pending is
      reported as pending on every run, not as unchanged."
  - "Once Proxmox VE has accepted the write, the result is C(changed), also when a later step fails (a failed read
      back); the message then says what was accepted and what failed."
  - "Return values keep community.proxmox's meaning (RV(vmid), RV(msg)); RV(vmid) is returned on failure too once the VM
      is known."
extends_documentation_fragment:
  - ferro.proxmox.proxmox
'''

EXAMPLES = r'''
# These tasks set no connection: it comes from the play's module_defaults,
#   module_defaults:
#     group/ferro.proxmox.proxmox:
#       api_host: pve1.example.org
#       api_user: ansible@pve
#       api_token_id: automation
#       api_token_secret: "{{ lookup('ansible.builtin.env', 'PROXMOX_TOKEN_SECRET') }}"
#       ca_path: pve-root-ca.pem   # a copy of the cluster's /etc/pve/pve-root-ca.pem
# or from the environment ansible-playbook runs in: PROXMOX_HOST, PROXMOX_USER,
# PROXMOX_TOKEN_ID, PROXMOX_TOKEN_SECRET, PROXMOX_CA_PATH (README: The connection).
# The cluster's names are variables, set once in group_vars (the collection's
# playbooks/inventory/group_vars/all/cluster.yml): proxmox_node, proxmox_storage,
# proxmox_bridge, proxmox_template, proxmox_move_storage, proxmox_iso.

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
'''

RETURN = r'''
vmid:
  description: The id of the VM; on failure too once the VM is known (O(vmid), or the VM found by O(name)), as
    community.proxmox returns it.
  returned: always
  type: int
  sample: 101
interface:
  description: The NIC's config key.
  returned: success
  type: str
  sample: net0
mac:
  description: The NIC's MAC after the run (upper case); null when the NIC is absent. In check mode, a new NIC without
    O(mac) shows C((known after apply)), as Proxmox VE draws it when it writes the NIC.
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
pending:
  description:
    - The config keys with a change that waits for the next start of the VM (Proxmox VE's pending config); empty when
        nothing waits.
    - M(ferro.proxmox.proxmox_kvm) lists every such key of the VM; M(ferro.proxmox.proxmox_disk) the task's drive key
        and M(ferro.proxmox.proxmox_nic) the task's NIC key, when theirs waits.
    - The same type in every module (proxmox_disk and proxmox_nic returned a boolean before; a list is true in a
        condition when it is not empty).
  returned: success
  type: list
  elements: str
  sample: ["cores"]
saved_plan:
  description: How the task's real run went against the saved plan of the check run (the variable C(ferro_proxmox_plan)
    set; docs/saved-plans.md in the collection).
  returned: success and failure, in a real run that applies a saved plan
  type: dict
  contains:
    planned_changed:
      description: The C(changed) the check run planned for this task.
      type: bool
    bound:
      description: The values the plan knew only after apply (shown as C((known after apply)) in the check run), as this
        run bound them, by result key.
      type: dict
      sample: {"mac": "BC:24:11:3A:5C:0F"}
    preview:
      description: True when the task has C(check_mode) set, so the real run previewed it again and applied nothing.
      returned: when the task previews
      type: bool
    outside_plan:
      description: "True when the check run wrote this task (C(check_mode: false)): the plan holds its arguments only,
        which this run compares."
      returned: when the task is outside the plan
      type: bool
status_code:
  description: The HTTP status of the Proxmox VE API answer that failed the task (for example V(403) for a missing
    privilege).
  returned: failure, when an API call was answered with an error
  type: int
  sample: 403
upid:
  description: The Proxmox VE task (UPID) that failed, or was still running when the task timed out.
  returned: failure, when a Proxmox VE task failed or timed out
  type: str
  sample: "UPID:pve1:0000A1B2:00C3D4E5:66F0A1B2:qmstart:100:ansible@pve!automation:"
exitstatus:
  description: The exit status of the failed Proxmox VE task, as the task list shows it.
  returned: failure, when a Proxmox VE task failed
  type: str
  sample: "VM is locked (backup)"
task_log:
  description: The last lines of the failed Proxmox VE task's log.
  returned: failure, when a Proxmox VE task failed
  type: list
  elements: str
  sample: ["TASK ERROR: VM is locked (backup)"]
retries:
  description: The requests sent again after a transient refusal of a busy cluster (a lock Proxmox VE could not take in
    time before any change, a connection refused before the request was sent, a proxy hop that could not connect), and
    the writes whose answer was lost, reconciled from the task list or the VM before anything was sent again; one line
    each. README.md, Transient errors.
  returned: success and failure, when a request was tried again or an answer reconciled
  type: list
  elements: str
  sample: ["task UPID:pve1:... failed before any change: cfs-lock 'storage-nas' error: got lock request timeout; sent again after 250 ms"]
accepted_writes:
  description: The writes Proxmox VE applied (or accepted, for a task still running) before the task failed; the task is
    then C(changed). README.md, What changed means when a task fails.
  returned: failure, after Proxmox VE applied a write
  type: list
  elements: str
  sample: ["POST /nodes/pve1/qemu/100/status/stop"]
refused_writes:
  description: The Proxmox VE tasks that failed before their effect (read back unchanged), which changed nothing.
  returned: failure, when a Proxmox VE task was refused before its effect
  type: list
  elements: str
  sample: ["PUT /nodes/pve1/qemu/100/resize (task UPID:pve1:... ended: VM is locked (backup))"]
'''

from ansible.module_utils.basic import AnsibleModule, env_fallback

ARGUMENT_SPEC = {
    "vmid": {'type': 'int'},
    "name": {'type': 'str'},
    "node": {'type': 'str'},
    "interface": {'type': 'str', 'required': True},
    "state": {'type': 'str', 'default': "present", 'choices': ["present", "absent"]},
    "model": {
        'type': 'str',
        'default': "virtio",
        'choices': [
            "e1000", "e1000-82540em", "e1000-82544gc", "e1000-82545em", "i82551", "i82557b", "i82559er", "ne2k_isa",
            "ne2k_pci", "pcnet", "rtl8139", "virtio", "vmxnet3",
        ],
    },
    "mac": {'type': 'str'},
    "bridge": {'type': 'str'},
    "tag": {'type': 'int'},
    "trunks": {'type': 'list', 'elements': 'int'},
    "firewall": {'type': 'bool', 'default': False},
    "link_down": {'type': 'bool', 'default': False},
    "mtu": {'type': 'int'},
    "queues": {'type': 'int'},
    "rate": {'type': 'float'},
    "api_host": {'type': 'str', 'required': True, 'fallback': (env_fallback, ["PROXMOX_HOST"])},
    "api_port": {'type': 'int', 'fallback': (env_fallback, ["PROXMOX_PORT"])},
    "api_user": {'type': 'str', 'required': True, 'fallback': (env_fallback, ["PROXMOX_USER"])},
    "api_password": {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ["PROXMOX_PASSWORD"])},
    "api_otp": {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ["PROXMOX_OTP"])},
    "api_token_id": {'type': 'str', 'no_log': False, 'fallback': (env_fallback, ["PROXMOX_TOKEN_ID"])},
    "api_token_secret": {'type': 'str', 'no_log': True, 'fallback': (env_fallback, ["PROXMOX_TOKEN_SECRET"])},
    "api_timeout": {'type': 'int', 'default': 5, 'fallback': (env_fallback, ["PROXMOX_API_TIMEOUT"])},
    "validate_certs": {'type': 'bool', 'default': True, 'fallback': (env_fallback, ["PROXMOX_VALIDATE_CERTS"])},
    "ca_path": {'type': 'path', 'fallback': (env_fallback, ["PROXMOX_CA_PATH"])},
}
MUTUALLY_EXCLUSIVE = []
REQUIRED_TOGETHER = [["api_token_id", "api_token_secret"]]
REQUIRED_ONE_OF = [["name", "vmid"], ["api_password", "api_token_id"]]
REQUIRED_IF = []
REQUIRED_BY = {}


def main():
    module = AnsibleModule(
        argument_spec=ARGUMENT_SPEC,
        mutually_exclusive=MUTUALLY_EXCLUSIVE,
        required_together=REQUIRED_TOGETHER,
        required_one_of=REQUIRED_ONE_OF,
        required_if=REQUIRED_IF,
        required_by=REQUIRED_BY,
        supports_check_mode=True,
    )
    module.fail_json(msg="ferro.proxmox.proxmox_nic is a native module run by its action plugin; this Python file only documents it")


if __name__ == '__main__':
    main()

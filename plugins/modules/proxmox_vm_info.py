# -*- coding: utf-8 -*-
# GENERATED from the module's Rust spec (modules/proxmox_vm_info/src/spec.rs) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation and argument spec of ferro.proxmox.proxmox_vm_info.

The module itself is a native binary (native/<target-triple>/proxmox_vm_info) that the collection's
action plugin runs; this file exists for ansible-doc, ansible-test and the action plugin's
argument validation.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: proxmox_vm_info
short_description: "Retrieve information about Proxmox VE virtual machines"
version_added: "0.1.0"
author: "ferro.proxmox contributors (@ferro-proxmox)"
description:
  - "Lists QEMU VMs and LXC containers of a Proxmox VE cluster, optionally with their configuration, parsed NICs (with
      MAC addresses) and disks, and the guest agent's view of the network."
  - "A drop-in replacement for community.proxmox.proxmox_vm_info with the same options and return shape, plus
      RV(proxmox_vms[].nics) and RV(proxmox_vms[].disks)."
  - "Makes one C(/cluster/resources) read, one VM list read per node with selected VMs, and one config read per selected
      VM when O(config) asks for it."
options:
  node:
    description:
      - "Only VMs on this cluster node. An unknown node is an error."
    type: str
  type:
    description:
      - "Which kind of guests to list."
    type: str
    default: "all"
    choices: ["all", "qemu", "lxc"]
  vmid:
    description:
      - "Only the VM with this id. An unknown vmid gives an empty list, not an error; a value outside 100 to 999999999
          (V(0) included) is refused."
    type: int
  name:
    description:
      - "Only VMs with exactly this name (names are not unique, so this may return several). An empty string matches
          unnamed VMs."
    type: str
  config:
    description:
      - "Whether to return each VM's configuration: V(none) does not read it, V(current) returns the running
          configuration without pending changes, V(pending) returns it with pending changes applied."
      - "With V(current) or V(pending), each QEMU VM also gets RV(proxmox_vms[].nics) and RV(proxmox_vms[].disks),
          parsed from that configuration."
    type: str
    default: "none"
    choices: ["none", "current", "pending"]
  network:
    description:
      - "Whether to read each running VM's network interfaces from the QEMU guest agent."
      - "A VM that is stopped or has no running agent gets RV(proxmox_vms[].network_error) instead; the module does not
          fail for it."
    type: bool
    default: false
attributes:
  check_mode:
    description: "Can run in check mode and return changed status prediction without modifying target."
    support: full
  diff_mode:
    description: "Will return details on what has changed (or possibly needs changing in check mode), when in diff
      mode."
    support: N/A
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
  - module: ferro.proxmox.proxmox_nic
  - module: community.proxmox.proxmox_vm_info
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
  - "Read-only: check mode returns the same information as a normal run."
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
'''

RETURN = r'''
vmid:
  description: The O(vmid) the task named, on failure only (so that a failed task says which VM it was about); a
    successful result lists it in RV(proxmox_vms).
  returned: failure, when O(vmid) is set
  type: int
  sample: 101
proxmox_vms:
  description: The selected guests, sorted by vmid. Each entry holds the fields of the VM in Proxmox VE's cluster
    resource list and in its node's VM list (qemu-server's vmstatus), as Proxmox VE gives them.
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
      description: One entry per disk key (C(scsiN), C(virtioN), C(sataN), C(ideN), C(efidisk0), C(tpmstate0),
        C(unusedN)), parsed.
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
'''

from ansible.module_utils.basic import AnsibleModule, env_fallback

ARGUMENT_SPEC = {
    "node": {'type': 'str'},
    "type": {'type': 'str', 'default': "all", 'choices': ["all", "qemu", "lxc"]},
    "vmid": {'type': 'int'},
    "name": {'type': 'str'},
    "config": {'type': 'str', 'default': "none", 'choices': ["none", "current", "pending"]},
    "network": {'type': 'bool', 'default': False},
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
REQUIRED_ONE_OF = [["api_password", "api_token_id"]]
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
    module.fail_json(msg="ferro.proxmox.proxmox_vm_info is a native module run by its action plugin; this Python file only documents it")


if __name__ == '__main__':
    main()

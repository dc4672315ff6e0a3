# -*- coding: utf-8 -*-
# GENERATED from the module's Rust spec (modules/proxmox_disk/src/spec.rs) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation and argument spec of ferro.proxmox.proxmox_disk.

The module itself is a native binary (native/<target-triple>/proxmox_disk) that the collection's
action plugin runs; this file exists for ansible-doc, ansible-test and the action plugin's
argument validation.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: proxmox_disk
short_description: "Manage a disk of a Proxmox VE VM: create, update, resize, detach, move, remove"
version_added: "0.1.0"
author: "ferro.proxmox contributors (@ferro-proxmox)"
description:
  - "Manages one drive of a QEMU VM through its whole lifecycle, without ever losing data by surprise: only
      O(state=absent) destroys a volume."
  - "The same options as community.proxmox.proxmox_disk. Differences: check mode is supported in every state and
      predicts the real run (including the volume name Proxmox VE will allocate, or null when that cannot be known
      without reading the storage); C(--diff) shows the drive and C(unusedN) lines before and after; updating a disk
      changes only the options the task names; O(size) means the same in every state; an absolute O(state=resized) is
      idempotent and a shrink is refused before any call; O(create=forced) and O(state=detached) keep the old volume as
      C(unusedN) and return it; moves are idempotent; every Proxmox VE task is waited for and its failure reported with
      its exit status and log; the volume, size and resulting drive string are returned."
  - "On a running VM, Proxmox VE applies some changes only at the next start (a new C(ide)/C(sata) disk, C(efidisk0),
      C(tpmstate0), or a change of C(cache), C(aio), C(discard), C(iothread), C(ssd), C(ro), C(queues); any disk change
      without C(disk) hotplug): the module then returns RV(pending) and RV(reboot_required) and warns."
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
  disk:
    description:
      - "The drive's config key: V(ide0)-V(ide3), V(sata0)-V(sata5), V(scsi0)-V(scsi30), V(virtio0)-V(virtio15),
          V(unused0)-V(unused255), V(efidisk0) or V(tpmstate0)."
    type: str
    required: true
  state:
    description:
      - "V(present): the disk exists with the options the task names (see O(create)); options the task does not name,
          and the volume, are left as they are."
      - "V(resized): the disk has at least the size O(size) (absolute, idempotent) or grows by it (V(+N), never
          idempotent)."
      - "V(detached): the disk is removed from the drive slot and its volume kept as C(unusedN) (returned as
          RV(unused)); no data is destroyed."
      - "V(moved): the disk is on O(target_storage), or reassigned to O(target_vmid) (as O(target_disk))."
      - "V(absent): the disk is removed and its volume destroyed. The only state that destroys data."
    type: str
    default: "present"
    choices: ["present", "resized", "detached", "moved", "absent"]
  create:
    description:
      - "With O(state=present): V(regular) creates the disk when it is missing; V(disabled) never creates; V(forced)
          creates a new disk even when one exists, and the old volume is kept as C(unusedN) (returned as RV(unused)),
          never destroyed."
    type: str
    default: "regular"
    choices: ["disabled", "regular", "forced"]
  storage:
    description:
      - "The storage for a new disk."
    type: str
  size:
    description:
      - "A size: a bare number is GiB (V(200)), or a number with a V(K), V(M), V(G) or V(T) suffix (V(10G)), in every
          state."
      - "With O(state=present), the size of a new disk (an existing disk is not resized: use O(state=resized)). With
          O(state=resized), the size to grow to, or V(+N) to grow by N; shrinking is refused before any call."
    type: str
  format:
    description:
      - "The image format of a new or moved disk."
    type: str
    choices: ["raw", "cow", "qcow", "qed", "qcow2", "vmdk", "cloop"]
  import_from:
    description:
      - "Create the disk as a copy of this volume (C(storage:volume)) or absolute path. Only when creating."
    type: str
  iso_image:
    description:
      - "The ISO volume (C(storage:iso/file.iso)), V(cdrom) (the host's drive) or V(none) (empty drive) of a CD-ROM
          drive. Requires O(media)."
    type: str
  target_storage:
    description:
      - "With O(state=moved): the storage to move the disk to."
    type: str
  target_vmid:
    description:
      - "With O(state=moved): the VM to reassign the disk to."
    type: int
  target_disk:
    description:
      - "With O(state=moved) and O(target_vmid): the drive slot in the target VM (default: the same key)."
    type: str
  delete_moved:
    description:
      - "With O(state=moved) to another storage: destroy the source volume after the copy. Not set or V(false): the
          source is kept as C(unusedN) (returned as RV(unused))."
    type: bool
  bwlimit:
    description:
      - "With O(state=moved): I/O bandwidth limit in KiB/s."
    type: int
  timeout:
    description:
      - "Seconds to wait for each Proxmox VE task (create, import, resize, move) to end."
      - "Also how long to wait for the VM when another task is still creating or cloning it (C(lock: create) or C(lock:
          clone)), in check mode too; past it the task fails before any write, naming that task's UPID. A lock that no
          running task holds (its task died) is stale: with C(Sys.Audit) on the node, which shows every task there, the
          task fails at once, naming C(qm unlock)."
    type: int
    default: 600
  aio:
    description:
      - "AIO type."
    type: str
    choices: ["native", "threads", "io_uring"]
  backup:
    description:
      - "Whether the drive is included in backups."
    type: bool
  bps_max_length:
    description:
      - "Maximum length of I/O bursts in seconds."
    type: int
  bps_rd_max_length:
    description:
      - "Maximum length of read I/O bursts in seconds."
    type: int
  bps_wr_max_length:
    description:
      - "Maximum length of write I/O bursts in seconds."
    type: int
  cache:
    description:
      - "The drive's cache mode."
    type: str
    choices: ["none", "writethrough", "writeback", "unsafe", "directsync"]
  cyls:
    description:
      - "Force the drive's physical geometry to have a specific cylinder count."
    type: int
  detect_zeroes:
    description:
      - "Whether to detect and try to optimize writing zeroes."
    type: bool
  discard:
    description:
      - "Whether to pass discard/trim requests to the storage."
    type: str
    choices: ["ignore", "on"]
  heads:
    description:
      - "Force the drive's physical geometry to have a specific head count."
    type: int
  iops:
    description:
      - "Maximum r/w I/O in operations per second."
    type: int
  iops_max:
    description:
      - "Maximum unthrottled r/w I/O pool in operations per second."
    type: int
  iops_max_length:
    description:
      - "Maximum length of I/O bursts in seconds."
    type: int
  iops_rd:
    description:
      - "Maximum read I/O in operations per second."
    type: int
  iops_rd_max:
    description:
      - "Maximum unthrottled read I/O pool in operations per second."
    type: int
  iops_rd_max_length:
    description:
      - "Maximum length of read I/O bursts in seconds."
    type: int
  iops_wr:
    description:
      - "Maximum write I/O in operations per second."
    type: int
  iops_wr_max:
    description:
      - "Maximum unthrottled write I/O pool in operations per second."
    type: int
  iops_wr_max_length:
    description:
      - "Maximum length of write I/O bursts in seconds."
    type: int
  iothread:
    description:
      - "Whether to use iothreads for this drive (V(scsi) with C(virtio-scsi-single), and V(virtio))."
    type: bool
  mbps:
    description:
      - "Maximum r/w speed in megabytes per second."
    type: float
  mbps_max:
    description:
      - "Maximum unthrottled r/w pool in megabytes per second."
    type: float
  mbps_rd:
    description:
      - "Maximum read speed in megabytes per second."
    type: float
  mbps_rd_max:
    description:
      - "Maximum unthrottled read pool in megabytes per second."
    type: float
  mbps_wr:
    description:
      - "Maximum write speed in megabytes per second."
    type: float
  mbps_wr_max:
    description:
      - "Maximum unthrottled write pool in megabytes per second."
    type: float
  media:
    description:
      - "The drive's media type."
    type: str
    choices: ["cdrom", "disk"]
  queues:
    description:
      - "Number of queues (SCSI only)."
    type: int
  replicate:
    description:
      - "Whether the drive is considered for replication jobs."
    type: bool
  rerror:
    description:
      - "Read error action."
    type: str
    choices: ["ignore", "report", "stop"]
  ro:
    description:
      - "Whether the drive is read-only."
    type: bool
  scsiblock:
    description:
      - "Whether to use scsi-block for full passthrough of a host block device."
    type: bool
  secs:
    description:
      - "Force the drive's physical geometry to have a specific sector count."
    type: int
  serial:
    description:
      - "The drive's reported serial number, url-encoded, up to 20 bytes long."
    type: str
  shared:
    description:
      - "Mark this locally-managed volume as available on all nodes."
    type: bool
  snapshot:
    description:
      - "Whether the drive's backing file's data is discarded when the VM is shut down (QEMU snapshot mode)."
    type: bool
  ssd:
    description:
      - "Whether to expose this drive as an SSD, rather than a rotational hard disk."
    type: bool
  trans:
    description:
      - "Force disk geometry bios translation mode."
    type: str
    choices: ["auto", "lba", "none"]
  werror:
    description:
      - "Write error action."
    type: str
    choices: ["enospc", "ignore", "report", "stop"]
  wwn:
    description:
      - "The drive's worldwide name, encoded as 16 bytes hex string, prefixed by V(0x)."
    type: str
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
  - module: ferro.proxmox.proxmox_nic
  - module: ferro.proxmox.proxmox_vm_info
  - module: community.proxmox.proxmox_disk
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
      (the VM's node, and the storage types used to predict volume names), one C(GET .../pending) read of the VM's
      config, the write, the polls of its task, and one read back. A move to another VM also reads the target VM's
      config."
  - "Writes carry the config digest that was read. When another writer changed the VM in between (Proxmox VE's
      C(checksum mismatch)), the module reads the config again, plans again from it and writes again, a few times with
      random pauses; it fails with Proxmox VE's message only when the conflict persists."
  - "Once Proxmox VE has accepted a write or started a task, the result is C(changed), also when a later step fails (a
      task slower than O(timeout), a failed status read); the message then says what was accepted and what failed."
  - "Differences from community.proxmox that refuse a task to protect data, before any call: a shrink with
      O(state=resized); O(state=moved) of a drive with a change waiting for the next start (Proxmox VE would move the
      applied volume and put the old one back at that start); O(state=resized) of a drive whose pending change replaces
      or removes its volume (the volume grown would leave the drive at the next start). Restart the VM (or revert the
      pending change) first."
  - "O(state=resized) of a drive whose pending change only changes options resizes it as Proxmox VE does (the applied
      drive), then writes the pending value again with the new size, because Proxmox VE would otherwise bring the old
      size back at the next start (C(Qemu.pm) C(resize_vm), C(QemuServer.pm) C(vmconfig_apply_pending)); RV(pending)
      then lists the drive."
  - "Return values keep community.proxmox's meaning (RV(vmid), RV(msg)); RV(vmid) is returned on failure too once the VM
      is known. RV(disk), RV(volume), RV(size), RV(config), RV(pending), RV(reboot_required) and RV(unused) are added."
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
'''

RETURN = r'''
vmid:
  description: The id of the VM; on failure too once the VM is known (O(vmid), or the VM found by O(name)), as
    community.proxmox returns it.
  returned: always
  type: int
  sample: 101
disk:
  description: The drive's config key.
  returned: success
  type: str
  sample: scsi1
volume:
  description: The drive's volume after the run; null when the drive is gone, or in check mode when Proxmox VE's choice
    of name cannot be known.
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
  description: The resulting drive string as Proxmox VE shows it (including a pending change); null when the drive is
    gone.
  returned: success
  type: str
  sample: local-lvm:vm-101-disk-1,discard=on,iothread=1,size=200G
unused:
  description: The C(unusedN) key that holds a volume this run took out of use (detached, replaced, or the source of a
    move), when there is one.
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
    "disk": {'type': 'str', 'required': True},
    "state": {'type': 'str', 'default': "present", 'choices': ["present", "resized", "detached", "moved", "absent"]},
    "create": {'type': 'str', 'default': "regular", 'choices': ["disabled", "regular", "forced"]},
    "storage": {'type': 'str'},
    "size": {'type': 'str'},
    "format": {'type': 'str', 'choices': ["raw", "cow", "qcow", "qed", "qcow2", "vmdk", "cloop"]},
    "import_from": {'type': 'str'},
    "iso_image": {'type': 'str'},
    "target_storage": {'type': 'str'},
    "target_vmid": {'type': 'int'},
    "target_disk": {'type': 'str'},
    "delete_moved": {'type': 'bool'},
    "bwlimit": {'type': 'int'},
    "timeout": {'type': 'int', 'default': 600},
    "aio": {'type': 'str', 'choices': ["native", "threads", "io_uring"]},
    "backup": {'type': 'bool'},
    "bps_max_length": {'type': 'int'},
    "bps_rd_max_length": {'type': 'int'},
    "bps_wr_max_length": {'type': 'int'},
    "cache": {'type': 'str', 'choices': ["none", "writethrough", "writeback", "unsafe", "directsync"]},
    "cyls": {'type': 'int'},
    "detect_zeroes": {'type': 'bool'},
    "discard": {'type': 'str', 'choices': ["ignore", "on"]},
    "heads": {'type': 'int'},
    "iops": {'type': 'int'},
    "iops_max": {'type': 'int'},
    "iops_max_length": {'type': 'int'},
    "iops_rd": {'type': 'int'},
    "iops_rd_max": {'type': 'int'},
    "iops_rd_max_length": {'type': 'int'},
    "iops_wr": {'type': 'int'},
    "iops_wr_max": {'type': 'int'},
    "iops_wr_max_length": {'type': 'int'},
    "iothread": {'type': 'bool'},
    "mbps": {'type': 'float'},
    "mbps_max": {'type': 'float'},
    "mbps_rd": {'type': 'float'},
    "mbps_rd_max": {'type': 'float'},
    "mbps_wr": {'type': 'float'},
    "mbps_wr_max": {'type': 'float'},
    "media": {'type': 'str', 'choices': ["cdrom", "disk"]},
    "queues": {'type': 'int'},
    "replicate": {'type': 'bool'},
    "rerror": {'type': 'str', 'choices': ["ignore", "report", "stop"]},
    "ro": {'type': 'bool'},
    "scsiblock": {'type': 'bool'},
    "secs": {'type': 'int'},
    "serial": {'type': 'str'},
    "shared": {'type': 'bool'},
    "snapshot": {'type': 'bool'},
    "ssd": {'type': 'bool'},
    "trans": {'type': 'str', 'choices': ["auto", "lba", "none"]},
    "werror": {'type': 'str', 'choices': ["enospc", "ignore", "report", "stop"]},
    "wwn": {'type': 'str'},
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
MUTUALLY_EXCLUSIVE = [
    ["target_vmid", "target_storage"], ["mbps", "mbps_rd"], ["mbps", "mbps_wr"], ["iops", "iops_rd"],
    ["iops", "iops_wr"], ["import_from", "size"],
]
REQUIRED_TOGETHER = [["api_token_id", "api_token_secret"]]
REQUIRED_ONE_OF = [["name", "vmid"], ["api_password", "api_token_id"]]
REQUIRED_IF = [("create", "forced", ["storage"]), ("state", "resized", ["size"])]
REQUIRED_BY = {
    "target_disk": ["target_vmid"], "mbps_max": ["mbps"], "mbps_rd_max": ["mbps_rd"], "mbps_wr_max": ["mbps_wr"],
    "bps_max_length": ["mbps_max"], "bps_rd_max_length": ["mbps_rd_max"], "bps_wr_max_length": ["mbps_wr_max"],
    "iops_max": ["iops"], "iops_rd_max": ["iops_rd"], "iops_wr_max": ["iops_wr"], "iops_max_length": ["iops_max"],
    "iops_rd_max_length": ["iops_rd_max"], "iops_wr_max_length": ["iops_wr_max"], "iso_image": ["media"],
}


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
    module.fail_json(msg="ferro.proxmox.proxmox_disk is a native module run by its action plugin; this Python file only documents it")


if __name__ == '__main__':
    main()

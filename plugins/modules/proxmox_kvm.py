# -*- coding: utf-8 -*-
# GENERATED from the module's Rust spec (modules/proxmox_kvm/src/spec.rs) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Documentation and argument spec of ferro.proxmox.proxmox_kvm.

The module itself is a native binary (native/<target-triple>/proxmox_kvm) that the collection's
action plugin runs; this file exists for ansible-doc, ansible-test and the action plugin's
argument validation.
"""

from __future__ import annotations

DOCUMENTATION = r'''
module: proxmox_kvm
short_description: "Create, clone, converge, power and remove Proxmox VE QEMU VMs"
version_added: "0.1.0"
author: "ferro.proxmox contributors (@ferro-proxmox)"
description:
  - "Creates, clones, updates, starts, stops, restarts, pauses, hibernates, converts to a template and removes QEMU VMs,
      with the options of community.proxmox.proxmox_kvm."
  - "Differences from community.proxmox: check mode predicts every state and path without writing (a create predicts its
      vmid and config, and later ferro.proxmox tasks of the same C(--check) run see the predicted VM); C(--diff) shows
      the VM config before and after; an existing VM is compared with the task semantically instead of being reported as
      already existing; O(update=true) is idempotent and changes NICs (keeping their MAC) and disks (keeping their
      volume) safely; a clone gets the task's other options and an existing clone target is returned, never the source;
      every task is waited for and a failed task fails with its exit status; V(paused) and V(hibernated) work; RV(mac)
      is returned on every path."
options:
  acpi:
    description:
      - "Whether ACPI is enabled (config key C(acpi); Proxmox VE's default is V(true))."
    type: bool
  agent:
    description:
      - "The QEMU guest agent: a boolean (V(true), V(1), ...) or a property string such as
          C(enabled=1,fstrim_cloned_disks=1). Compared semantically (C(1) equals C(enabled=1))."
    type: str
  archive:
    description:
      - "A backup archive to restore instead of creating an empty VM (create only; sent as C(archive))."
    type: str
  args:
    description:
      - "Extra arguments for KVM. Proxmox VE only accepts them from C(root@pam), so another O(api_user) fails before any
          call."
    type: str
  audio:
    description:
      - "Audio devices, C(audio0: device=ich9-intel-hda,driver=spice)."
    type: dict
  autostart:
    description:
      - "Automatic restart after a crash (config key C(autostart), which Proxmox VE currently ignores)."
    type: bool
  balloon:
    description:
      - "The minimum memory in MiB for the balloon device; V(0) disables ballooning."
    type: int
  bios:
    description:
      - "The BIOS implementation."
    type: str
    choices: ["seabios", "ovmf"]
  boot:
    description:
      - "The boot order, e.g. C(order=scsi0;net0)."
    type: str
  bootdisk:
    description:
      - "The boot disk (deprecated in Proxmox VE in favour of O(boot))."
    type: str
  cicustom:
    description:
      - "Cloud-init: custom files replacing the generated ones, e.g. C(user=local:snippets/user.yml)."
    type: str
  cipassword:
    description:
      - "Cloud-init: the password of the default user."
      - "Proxmox VE never returns it (it shows C(**********)), so on an existing VM it is only compared for presence: it
          is written when the VM has none, and a different password is not detected."
    type: str
  citype:
    description:
      - "Cloud-init: the configuration format."
    type: str
    choices: ["nocloud", "configdrive2"]
  ciupgrade:
    description:
      - "Cloud-init: whether to upgrade packages on the first boot."
    type: bool
  ciuser:
    description:
      - "Cloud-init: the name of the default user."
    type: str
  clone:
    description:
      - "The name of the VM to clone. With O(vmid) set, O(vmid) is the source and this may be any value that is not the
          name of another VM (a name that some VM has must be the name of the O(vmid)'s VM, or the task fails before any
          write)."
      - "The clone gets O(newid) (or the next free vmid), O(name), and then every other option of the task (cores,
          memory, NICs, cloud-init, tags, ...) in the same task, after the clone task has ended and the lock is gone."
      - "When the target already exists (a clone made by an earlier run: the VM O(newid) names, else the VM named
          O(name); given both, they must name the same VM, or the task fails before any write), it is an existing VM
          like any other: with O(update=false) (the default) nothing is written to it and its differences from the
          task's options are returned as RV(drift) and warned about; with O(update=true) they are written. Its vmid is
          returned, never the source's."
    type: str
  cores:
    description:
      - "The number of CPU cores per socket."
    type: int
  cpu:
    description:
      - "The emulated CPU type, e.g. C(host) or C(x86-64-v2-AES)."
    type: str
  cpulimit:
    description:
      - "The limit of CPU usage (V(0) is no limit)."
    type: int
  cpuunits:
    description:
      - "The CPU weight of the VM for the scheduler."
    type: int
  delete:
    description:
      - "A comma-separated list of config keys to remove. Only keys that are set are removed, so a second run reports no
          change."
    type: str
  description:
    description:
      - "The description (notes) of the VM."
    type: str
  destroy_unreferenced_disks:
    description:
      - "With O(state=absent): also destroy every disk on any enabled storage that is named for this vmid but not
          referenced in its config."
    type: bool
    default: false
  digest:
    description:
      - "The config digest to guard writes with: a concurrent change then fails the task with Proxmox VE's C(checksum
          mismatch). Without it the module sends the digest of the config it read and, on a conflict, reads again, plans
          again and writes again (a few times), so it never overwrites a change it did not see."
    type: str
  efidisk0:
    description:
      - "The EFI vars disk, allocated on create (needs O(bios=ovmf)); sent as C(STORAGE:1,...), Proxmox VE sizes it
          itself."
      - "On an existing VM a change of C(efitype) or C(pre_enrolled_keys) is written (the volume is kept; it applies at
          the next start); a different C(storage) is refused (use ferro.proxmox.proxmox_disk)."
    type: dict
    suboptions:
      storage:
        description:
          - "The storage to allocate the disk on."
          - "Required here (community.proxmox does not mark it so): Proxmox VE cannot allocate the disk without it."
        type: str
        required: true
      format:
        description:
          - "The image format (C(format)), e.g. V(raw) or V(qcow2); the storage's default when not set."
        type: str
      efitype:
        description:
          - "The size and type of the OVMF EFI vars (C(efitype)); Proxmox VE's default is V(2m), V(4m) is needed for
              Secure Boot."
        type: str
        choices: ["2m", "4m"]
      pre_enrolled_keys:
        description:
          - "Whether the EFI vars come with the distribution and Microsoft Secure Boot keys enrolled
              (C(pre-enrolled-keys)); Proxmox VE uses it with O(efidisk0.efitype=4m) only."
        type: bool
  force:
    description:
      - "With O(state=stopped): stop the VM hard when it has not shut down within O(timeout). With O(state=restarted):
          reset instead of reboot. With O(state=absent) or O(state=template): stop a running VM first. With O(archive):
          overwrite an existing VM."
    type: bool
  format:
    description:
      - "The image format of a full clone's disks; V(unspecified) keeps the source format (not sent)."
    type: str
    choices: ["cloop", "cow", "qcow", "qcow2", "qed", "raw", "vmdk", "unspecified"]
  freeze:
    description:
      - "Whether to freeze the CPU at start (config key C(freeze))."
    type: bool
  full:
    description:
      - "Whether a clone is a full copy (V(false): a linked clone, templates only)."
    type: bool
    default: true
  hookscript:
    description:
      - "A hook script, e.g. C(local:snippets/hook.pl)."
    type: str
  hostpci:
    description:
      - "PCI passthrough devices, C(hostpci0: 0000:01:00.0,pcie=1)."
    type: dict
  hotplug:
    description:
      - "The hot-pluggable device types, C(network,disk,usb), V(0) or V(1). Compared as a set."
    type: str
  hugepages:
    description:
      - "Huge pages."
    type: str
    choices: ["any", "2", "1024"]
  ide:
    description:
      - "IDE drives C(ide0) to C(ide3), values as Proxmox VE writes them: C(local-lvm:10) allocates a new 10 GiB disk,
          C(local:iso/debian.iso,media=cdrom) a CD-ROM, C(local-lvm:cloudinit) a cloud-init drive."
      - "See O(scsi) for how an existing drive is compared."
    type: dict
  ipconfig:
    description:
      - "Cloud-init: IP settings per NIC, C(ipconfig0: ip=dhcp)."
    type: dict
  keyboard:
    description:
      - "The VNC keyboard layout."
    type: str
  kvm:
    description:
      - "Whether KVM hardware virtualisation is used."
    type: bool
  localtime:
    description:
      - "Whether the real-time clock is set to local time."
    type: bool
  lock:
    description:
      - "The config lock to set (config key C(lock))."
    type: str
    choices: ["migrate", "backup", "snapshot", "rollback"]
  machine:
    description:
      - "The QEMU machine type, e.g. C(q35)."
    type: str
  memory:
    description:
      - "The memory in MiB."
    type: int
  migrate:
    description:
      - "Whether to migrate the VM to O(node) when it is on another node."
    type: bool
    default: false
  migrate_downtime:
    description:
      - "The maximum downtime of a live migration, in seconds."
    type: int
  migrate_speed:
    description:
      - "The maximum speed of a migration, in MB/s (V(0) is no limit)."
    type: int
  name:
    description:
      - "The name of the VM. Identifies the VM when O(vmid) is not given; several VMs with this name is an error that
          lists their vmids."
      - "With O(vmid) too, both must name the same VM in every state: the task fails before any write when the O(vmid)'s
          VM has another name, or when O(vmid) does not exist and another VM has this name."
      - "With O(clone): the name of the new VM."
      - "A VM created or cloned by name alone (no O(vmid) or O(newid)) while an overlapping run does the same: once its
          task ended, the lowest vmid of that name keeps it, and a task whose VM has a higher vmid removes the VM it
          made itself (never another), reports no change with a warning and converges on the other. Give O(vmid) for
          Proxmox VE's own guarantee of one VM (README, Names under concurrency)."
    type: str
  nameservers:
    description:
      - "Cloud-init: DNS servers (config key C(nameserver)). Compared as a list."
    type: list
    elements: str
  net:
    description:
      - "NICs, C(net0: virtio,bridge=vmbr0,tag=20)."
      - "An existing NIC keeps its MAC unless the value gives one (C(virtio=BC:24:11:00:00:01,...)); NICs are compared
          semantically (MAC case, option order, C(1) vs C(on)). A new NIC gets a MAC from Proxmox VE, returned in
          RV(mac)."
    type: dict
  newid:
    description:
      - "The vmid of the clone. When not given, the next free vmid is taken (retrying on a collision). A value outside
          100 to 999999999, V(0) included, is refused (community.proxmox reads V(0) as unset)."
    type: int
  node:
    description:
      - "The node to create the VM on (required with O(state=present)). An existing VM is found wherever it is."
    type: str
  numa:
    description:
      - "NUMA topology, C(numa0: cpus=0-1,memory=1024)."
    type: dict
  numa_enabled:
    description:
      - "Whether NUMA is enabled (config key C(numa))."
    type: bool
  onboot:
    description:
      - "Whether the VM starts when the node boots."
    type: bool
  ostype:
    description:
      - "The guest operating system."
    type: str
    choices: ["other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26",
      "solaris"]
  parallel:
    description:
      - "Parallel ports, C(parallel0: /dev/parport0)."
    type: dict
  pool:
    description:
      - "The resource pool of a new or cloned VM."
      - "On an existing VM with O(update=true), the VM is moved into this pool, out of the pool it is in (Proxmox VE 8.1
          or later: C(PUT /pools) with C(allow-move)); C(--check) and C(--diff) show it as a C(pool:) line. A pool that
          does not exist is refused before any write, in check mode too. The move needs C(Pool.Allocate) on the pool
          (and on the pool the VM leaves) and C(VM.Allocate) or C(Permissions.Modify) on the VM. With O(update=false)
          the pool of an existing VM is not changed; a warning says so when it differs."
    type: str
  protection:
    description:
      - "Whether the VM is protected against removal."
    type: bool
  purge:
    description:
      - "With O(state=absent): also remove the vmid from backup jobs, replication and HA."
    type: bool
    default: false
  reboot:
    description:
      - "Whether a reboot inside the guest restarts it (V(false): it stops)."
    type: bool
  revert:
    description:
      - "A comma-separated list of pending config changes to revert. Only keys with a pending change are reverted, so a
          second run reports no change."
    type: str
  rng0:
    description:
      - "A VirtIO random number generator, e.g. C(source=/dev/urandom)."
    type: str
  sata:
    description:
      - "SATA drives C(sata0) to C(sata5). See O(ide) and O(scsi)."
    type: dict
  scsi:
    description:
      - "SCSI drives C(scsi0) to C(scsi30), C(scsi0: local-lvm:32,iothread=1,discard=on)."
      - "A drive the VM does not have is created (C(STORAGE:N) allocates N GiB). On an existing drive the options are
          compared semantically and changed with the volume kept; C(size) and C(format) are informational. A different
          storage or size of an existing disk is refused: use ferro.proxmox.proxmox_disk (V(moved), V(resized)), which
          do it without data loss."
    type: dict
  scsihw:
    description:
      - "The SCSI controller model."
    type: str
    choices: ["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"]
  searchdomains:
    description:
      - "Cloud-init: DNS search domains (config key C(searchdomain)). Compared as a list."
    type: list
    elements: str
  serial:
    description:
      - "Serial ports, C(serial0: socket)."
    type: dict
  shares:
    description:
      - "The memory shares for auto-ballooning."
    type: int
  skiplock:
    description:
      - "Ignore locks (C(root@pam) only; another O(api_user) fails before any call)."
    type: bool
  smbios:
    description:
      - "SMBIOS type 1 fields (config key C(smbios1))."
    type: str
  snapname:
    description:
      - "The snapshot of the source to clone."
    type: str
  sockets:
    description:
      - "The number of CPU sockets."
    type: int
  spice_enhancements:
    description:
      - "SPICE enhancements, e.g. C(foldersharing=1,videostreaming=all)."
    type: str
  sshkeys:
    description:
      - "Cloud-init: public SSH keys, one per line. Sent URL-encoded as Proxmox VE requires, and compared decoded (line
          by line), so a second run reports no change."
    type: str
  startdate:
    description:
      - "The initial date of the real-time clock, C(now) or C(2006-06-17T16:01:21)."
    type: str
  startup:
    description:
      - "Startup and shutdown behaviour, C(order=1,up=30,down=60)."
    type: str
  state:
    description:
      - "V(present): create the VM (or clone it with O(clone)) when it does not exist; an existing VM is compared with
          every option of the task: with O(update=false) differences are returned as RV(drift) and warned about, with
          O(update=true) exactly the differing keys are written."
      - "V(started), V(stopped) (graceful shutdown within O(timeout); then a hard stop only with O(force), else the task
          fails), V(restarted) (reboot, or reset with O(force)), V(paused), V(hibernated) (suspend to disk), V(template)
          (convert), V(current) (report the status), V(absent) (remove; a running VM needs O(force))."
      - "Every Proxmox VE task is waited for until it has ended, and its exit status decides success."
    type: str
    default: "present"
    choices: ["present", "absent", "stopped", "started", "restarted", "current", "template", "paused", "hibernated"]
  storage:
    description:
      - "The target storage of a full clone or a restore (and the default storage of a create)."
    type: str
  tablet:
    description:
      - "Whether a USB tablet device is enabled."
    type: bool
  tags:
    description:
      - "Tags of the VM, each matching C(^[a-zA-Z0-9_][a-zA-Z0-9_\\-\\+\\.]*$). Compared as a set, ignoring order and
          case (Proxmox VE stores them lower case and sorted)."
    type: list
    elements: str
  target:
    description:
      - "The node to clone to (needs shared storage)."
    type: str
  tdf:
    description:
      - "Whether the time drift fix is enabled."
    type: bool
  template:
    description:
      - "The config flag C(template). Use O(state=template) to convert a VM into a template."
    type: bool
  timeout:
    description:
      - "How long to wait for each Proxmox VE task (create, clone, start, shutdown, ...), in seconds; also the shutdown
          timeout sent to Proxmox VE."
      - "Unlike community.proxmox (V(30)), the default is V(300): 30 seconds is known to be too short for full clones."
      - "Also how long to wait for a VM the task names that another task is still creating or cloning (C(lock: create)
          or C(lock: clone)), in check mode too; past it the task fails before any write, naming that task's UPID. A
          lock that no running task holds (its task died) is stale: with C(Sys.Audit) on the node, which shows every
          task there, the task fails at once, naming C(qm unlock)."
    type: int
    default: 300
  tpmstate0:
    description:
      - "The TPM state disk, allocated on create; sent as C(STORAGE:1,version=vVERSION)."
      - "Its version cannot change once created; a different version or storage on an existing VM is refused."
    type: dict
    suboptions:
      storage:
        description:
          - "The storage to allocate the TPM state on."
        type: str
        required: true
      version:
        description:
          - "The TPM interface version (C(version), sent as C(v2.0) or C(v1.2))."
        type: str
        default: "2.0"
        choices: ["2.0", "1.2"]
  update:
    description:
      - "Whether to change an existing VM to match the task. V(false) (the default, as upstream) writes nothing to an
          existing VM, whether it was created or cloned (O(clone)) by an earlier run, but returns every difference as
          RV(drift) and warns about each one."
      - "V(true) writes exactly the differing keys in one request: NICs keep their MAC unless one is given, an existing
          disk's options change with its volume kept, new disks and NICs are created. A second run reports no change."
      - "An empty value (an empty O(description) string, an empty O(tags) list, ...) removes that key from the VM
          (Proxmox VE's C(delete)); disks and NICs are removed only with O(delete) or the disk and NIC modules."
    type: bool
    default: false
  update_unsafe:
    description:
      - "Accepted for compatibility with community.proxmox, where it allows NIC and disk changes on update at the risk
          of a recreated, empty disk. Here it has no effect but a warning: O(update=true) already changes NICs and disks
          safely, and nothing this module does can recreate a disk."
    type: bool
    default: false
  usb:
    description:
      - "USB devices, C(usb0: host=1234:5678)."
    type: dict
  vcpus:
    description:
      - "The number of hot-plugged vCPUs."
    type: int
  vga:
    description:
      - "The display, e.g. C(std), C(serial0), C(virtio)."
    type: str
  virtio:
    description:
      - "VirtIO block drives C(virtio0) to C(virtio15). See O(scsi)."
    type: dict
  virtiofs:
    description:
      - "virtiofs shares, C(virtiofs0: dirid=share1)."
    type: dict
  vmid:
    description:
      - "The vmid of the VM. With O(name) too, both must name the same VM (see O(name)). With O(clone): the vmid of the
          source."
      - "A value outside Proxmox VE's range 100 to 999999999, V(0) included, is refused before any call
          (community.proxmox reads V(0) as unset and then acts on the VM O(name) finds)."
      - "When creating without it, the next free vmid is taken from C(/cluster/nextid) and the create is retried with
          the next one when another run took it first, so parallel runs never collide. An explicit vmid from your source
          of truth is still the recommended way: it makes the task idempotent even when names change."
    type: int
  watchdog:
    description:
      - "A virtual watchdog, e.g. C(model=i6300esb,action=reset)."
    type: str
  with_local_disks:
    description:
      - "With O(migrate): migrate local disks too."
    type: bool
    default: false
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
  - module: ferro.proxmox.proxmox_disk
  - module: ferro.proxmox.proxmox_nic
  - module: ferro.proxmox.proxmox_vm_info
  - module: community.proxmox.proxmox_kvm
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
      to find the VM; for an existing VM one C(GET .../pending) read of its config; C(GET .../status/current) before a
      power change. Reads are retried; a write is sent again only when Proxmox VE refused it for a digest conflict (it
      changed nothing), after reading the config again and planning again from it."
  - "Once Proxmox VE has accepted a write or started a task, the result is C(changed), also when a later step fails (a
      task slower than O(timeout), a failed read back, a removal whose stop succeeded but whose destroy task failed);
      the message then says what was accepted and what failed."
  - "A NIC in O(net) on a bridge the VM's node does not list (C(GET /nodes/{node}/network)) is refused before any write,
      in check mode too."
  - "Changes that Proxmox VE cannot apply to a running VM (not hot-pluggable) are returned in RV(pending) with
      RV(reboot_required) and a warning; check mode predicts them from the VM's status and its C(hotplug) setting."
  - "Differences from community.proxmox that can fail a task that used to pass: V(absent) on a running VM without
      O(force), and a power action on a locked VM, fail instead of reporting success."
  - "Stricter defaults than community.proxmox: O(timeout) defaults to V(300) instead of V(30); O(validate_certs)
      defaults to V(true) (as in community.proxmox 2.x, unlike 1.x). O(update_unsafe) only warns. O(efidisk0.storage) is
      required (the EFI disk cannot be allocated without it)."
  - "Return values keep community.proxmox's meaning: RV(status) is the status B(before) the task and RV(msg) uses its
      words (V(stopped) says C(VM 101 is shutting down), though the shutdown is waited for); RV(vmid) is returned on
      failure too once the VM is known. Added keys: RV(power_state) (the state after the task), RV(name), RV(node),
      RV(mac), RV(devices), RV(pending), RV(reboot_required), RV(drift)."
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
'''

RETURN = r'''
vmid:
  description:
    - The vmid of the VM (of the clone with O(clone), never of the source, as community.proxmox's successful clone). In
        check mode, for a create without O(vmid), the predicted one.
    - Also returned on failure once the VM is known (O(vmid), or the VM found by O(name); with O(clone), the source), as
        community.proxmox does.
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
    - As in community.proxmox, the status of the VM B(before) the task, as Proxmox VE reports it (V(running) or
        V(stopped); a paused VM is V(running), a hibernated one V(stopped)); null when the VM did not exist (create,
        clone, already absent).
    - The state after the task is RV(power_state).
  returned: success
  type: str
  sample: stopped
power_state:
  description: The power state of the VM B(after) the task (V(running), V(stopped), V(paused), V(hibernated)); null when
    the VM does not exist afterwards. Not returned by community.proxmox. Paths that do not read C(status/current)
    (V(present), O(delete), O(revert), O(migrate)) take it from C(/cluster/resources), which lists a paused VM as
    V(running).
  returned: success
  type: str
  sample: running
msg:
  description: What happened, in community.proxmox's words where they apply.
  returned: always
  type: str
  sample: VM web01 with vmid 105 deployed
mac:
  description: Every C(netN) of the VM and its MAC, on every path where the VM exists. In check mode, a new NIC without
    a given MAC (and every NIC of a clone) shows C((known after apply)), as Proxmox VE draws it when it writes the NIC.
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
  description: With O(update=false) on an existing VM, each key whose live value differs from the task, with the live
    (C(before)) and the task's (C(after)) value. Empty when the VM matches.
  returned: success
  type: dict
  sample: {"memory": {"before": "2048", "after": "4096"}}
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
    "acpi": {'type': 'bool'},
    "agent": {'type': 'str'},
    "archive": {'type': 'str'},
    "args": {'type': 'str'},
    "audio": {'type': 'dict'},
    "autostart": {'type': 'bool'},
    "balloon": {'type': 'int'},
    "bios": {'type': 'str', 'choices': ["seabios", "ovmf"]},
    "boot": {'type': 'str'},
    "bootdisk": {'type': 'str'},
    "cicustom": {'type': 'str'},
    "cipassword": {'type': 'str', 'no_log': True},
    "citype": {'type': 'str', 'choices': ["nocloud", "configdrive2"]},
    "ciupgrade": {'type': 'bool'},
    "ciuser": {'type': 'str'},
    "clone": {'type': 'str'},
    "cores": {'type': 'int'},
    "cpu": {'type': 'str'},
    "cpulimit": {'type': 'int'},
    "cpuunits": {'type': 'int'},
    "delete": {'type': 'str'},
    "description": {'type': 'str'},
    "destroy_unreferenced_disks": {'type': 'bool', 'default': False},
    "digest": {'type': 'str'},
    "efidisk0": {
        'type': 'dict',
        'options': {
            "storage": {'type': 'str', 'required': True},
            "format": {'type': 'str'},
            "efitype": {'type': 'str', 'choices': ["2m", "4m"]},
            "pre_enrolled_keys": {'type': 'bool'},
        },
    },
    "force": {'type': 'bool'},
    "format": {'type': 'str', 'choices': ["cloop", "cow", "qcow", "qcow2", "qed", "raw", "vmdk", "unspecified"]},
    "freeze": {'type': 'bool'},
    "full": {'type': 'bool', 'default': True},
    "hookscript": {'type': 'str'},
    "hostpci": {'type': 'dict'},
    "hotplug": {'type': 'str'},
    "hugepages": {'type': 'str', 'choices': ["any", "2", "1024"]},
    "ide": {'type': 'dict'},
    "ipconfig": {'type': 'dict'},
    "keyboard": {'type': 'str'},
    "kvm": {'type': 'bool'},
    "localtime": {'type': 'bool'},
    "lock": {'type': 'str', 'choices': ["migrate", "backup", "snapshot", "rollback"]},
    "machine": {'type': 'str'},
    "memory": {'type': 'int'},
    "migrate": {'type': 'bool', 'default': False},
    "migrate_downtime": {'type': 'int'},
    "migrate_speed": {'type': 'int'},
    "name": {'type': 'str'},
    "nameservers": {'type': 'list', 'elements': 'str'},
    "net": {'type': 'dict'},
    "newid": {'type': 'int'},
    "node": {'type': 'str'},
    "numa": {'type': 'dict'},
    "numa_enabled": {'type': 'bool'},
    "onboot": {'type': 'bool'},
    "ostype": {
        'type': 'str',
        'choices': [
            "other", "wxp", "w2k", "w2k3", "w2k8", "wvista", "win7", "win8", "win10", "win11", "l24", "l26", "solaris",
        ],
    },
    "parallel": {'type': 'dict'},
    "pool": {'type': 'str'},
    "protection": {'type': 'bool'},
    "purge": {'type': 'bool', 'default': False},
    "reboot": {'type': 'bool'},
    "revert": {'type': 'str'},
    "rng0": {'type': 'str'},
    "sata": {'type': 'dict'},
    "scsi": {'type': 'dict'},
    "scsihw": {
        'type': 'str',
        'choices': ["lsi", "lsi53c810", "virtio-scsi-pci", "virtio-scsi-single", "megasas", "pvscsi"],
    },
    "searchdomains": {'type': 'list', 'elements': 'str'},
    "serial": {'type': 'dict'},
    "shares": {'type': 'int'},
    "skiplock": {'type': 'bool'},
    "smbios": {'type': 'str'},
    "snapname": {'type': 'str'},
    "sockets": {'type': 'int'},
    "spice_enhancements": {'type': 'str'},
    "sshkeys": {'type': 'str', 'no_log': False},
    "startdate": {'type': 'str'},
    "startup": {'type': 'str'},
    "state": {
        'type': 'str',
        'default': "present",
        'choices': [
            "present", "absent", "stopped", "started", "restarted", "current", "template", "paused", "hibernated",
        ],
    },
    "storage": {'type': 'str'},
    "tablet": {'type': 'bool'},
    "tags": {'type': 'list', 'elements': 'str'},
    "target": {'type': 'str'},
    "tdf": {'type': 'bool'},
    "template": {'type': 'bool'},
    "timeout": {'type': 'int', 'default': 300},
    "tpmstate0": {
        'type': 'dict',
        'options': {
            "storage": {'type': 'str', 'required': True},
            "version": {'type': 'str', 'default': "2.0", 'choices': ["2.0", "1.2"]},
        },
    },
    "update": {'type': 'bool', 'default': False},
    "update_unsafe": {'type': 'bool', 'default': False},
    "usb": {'type': 'dict'},
    "vcpus": {'type': 'int'},
    "vga": {'type': 'str'},
    "virtio": {'type': 'dict'},
    "virtiofs": {'type': 'dict'},
    "vmid": {'type': 'int'},
    "watchdog": {'type': 'str'},
    "with_local_disks": {'type': 'bool', 'default': False},
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
MUTUALLY_EXCLUSIVE = [["delete", "revert"], ["clone", "delete"], ["clone", "revert"]]
REQUIRED_TOGETHER = [["api_token_id", "api_token_secret"]]
REQUIRED_ONE_OF = [["name", "vmid"], ["api_password", "api_token_id"]]
REQUIRED_IF = [("state", "present", ["node"])]
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
    module.fail_json(msg="ferro.proxmox.proxmox_kvm is a native module run by its action plugin; this Python file only documents it")


if __name__ == '__main__':
    main()

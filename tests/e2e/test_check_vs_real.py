"""The check-versus-real table (issue 17): `--check --diff` must predict the real run, row by row.

Each row is one or a few tasks. From the same pvesim state (a seed written from the default one
plus the VMs the rows need), the rows' playbook runs once with `--check --diff`, pvesim is reset
to that state, and it runs again for real with `--diff`. For every task of every row the two runs
must agree: the same outcome (ok / changed / failed), the same `msg`, and the same diff line by
line, where a line of the check run that holds `(known after apply)` is read as a pattern in which
the marker stands for one value (a MAC, a volume id); everything else is compared exactly (MACs
and volume names too, no masking). A row may also name what the real run must show (the failure
PVE gives, a volume name), so that a row cannot agree for the wrong reason.

Independent rows share a playbook (one task per row, `ignore_errors`, each row on a VM of its
own, so that no row's prediction feeds another's): seven batches, fourteen playbook runs; two
of them run every task with `become: true` and through the connection (`FERRO_PROXMOX_EXEC=connection`),
where a row's later steps read what its first one predicted. The summary line (`check-versus-real: N rows, M agree`) is printed whatever the result.

PVE behaviour behind the expected failures, as pvesim follows it (tests/pvesim/tests/test_refusals.py,
test_permissions.py): pve-manager HTTPServer.pm `rest_handler` (unknown node), pve-storage
Storage.pm `storage_config` and qemu-server Qemu.pm `$check_storage_access` (storage missing,
without `images`, ISO missing), Qemu.pm `clone_vm` (target node), `move_vm_disk` (target storage),
`update_vm_api` (balloon above memory), pve-common JSONSchema.pm `check_prop` (cores, memory,
ipconfig0, a drive value `5`), pve-access-control RPCEnvironment.pm `check` (the 403 of the
read-only token). Volume names: Qemu.pm `create_disks`, Plugin.pm `find_free_diskname`
(lowest free `vm-<id>-disk-<n>`), `clone_image` (`base-<tid>-disk-N/<id>/vm-<id>-disk-M` on a
directory storage; LVM-thin names the clone `vm-<id>-disk-M`, LvmThinPlugin.pm), QemuServer.pm `vmconfig_register_unused_drive` (lowest free `unusedN`).
"""

import copy
import json
import os
import re
import shutil
from dataclasses import dataclass, field

from harness import add_canary_user

MARKER = '(known after apply)'
# What the marker may stand for: one value of a property string or of a `key: value` line.
ONE_VALUE = r'[^,\s"]+'
MAC_RE = r'[0-9A-F]{2}(?::[0-9A-F]{2}){5}'

SEED_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'pvesim', 'seeds')
READ_ONLY = {'PROXMOX_USER': 'auditor@pve', 'PROXMOX_TOKEN_ID': 'readonly',
             'PROXMOX_TOKEN_SECRET': '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0'}
# The 403 of a missing privilege. Its `(<path>, <privilege>)` is there where PVE names them
# (RPCEnvironment.pm `check`), not for a create without VM.Allocate (Qemu.pm create_vm, `raise_perm_exc()`).
FORBIDDEN = 'Permission check failed'


# ----------------------------------------------------------------------------- the world

def _vm(vmid, name, status='stopped', template=False, **config):
    base = {'cores': 1, 'memory': '1024', 'ostype': 'l26', 'scsihw': 'virtio-scsi-single',
            'net0': 'virtio=BC:24:11:00:%02X:%02X,bridge=vmbr0' % (vmid // 256, vmid % 256),
            'scsi0': 'local-lvm:%s-%d-disk-0,size=4G' % ('base' if template else 'vm', vmid),
            'boot': 'order=scsi0;net0'}
    base.update(config)
    return {'vmid': vmid, 'name': name, 'node': 'pve1', 'status': status, 'template': template, 'config': base}


# The VMs the rows act on, next to the default seed's 100 and 9000 (one VM per row).
ROW_VMS = [_vm(vmid, 'row-%d' % vmid) for vmid in range(111, 122)] + [
    _vm(122, 'row-122', unused0='local-lvm:vm-122-disk-1', scsi2='local-lvm:vm-122-disk-3,size=1G'),
    _vm(123, 'row-123', scsi1='local-lvm:vm-123-disk-1,size=2G', unused0='local-lvm:vm-123-disk-2'),
    _vm(124, 'row-124'),
    _vm(9001, 'lvm-template', template=True),
    _vm(125, 'row-125', ide2='isos:iso/debian-13-netinst.iso,media=cdrom,size=754M'),
    _vm(126, 'row-126', ide2='isos:iso/debian-13-netinst.iso,media=cdrom,size=754M'),
    _vm(127, 'row-127'),
] + [_vm(vmid, 'row-%d' % vmid) for vmid in range(160, 171)] + [
    # issue 24: a VM with a description, for the empty value that removes it
    _vm(171, 'row-171', description='old notes'),
    # issue 24: the VM's state (a backup's lock, protection, a template that a linked clone uses)
    _vm(130, 'row-130', lock='backup'),
    _vm(131, 'row-131', lock='backup'),
    _vm(132, 'row-132', lock='backup'),
    _vm(133, 'row-133', lock='backup', scsi1='local-lvm:vm-133-disk-1,size=1G'),
    _vm(134, 'row-134', lock='backup'),
    _vm(135, 'row-135', protection=1),
    _vm(136, 'row-136', protection=1, scsi1='local-lvm:vm-136-disk-1,size=1G'),
    _vm(9002, 'dir-template', template=True, scsi0='vmdata:9002/base-9002-disk-0.qcow2,size=4G'),
    _vm(140, 'row-linked', scsi0='vmdata:9002/base-9002-disk-0.qcow2/140/vm-140-disk-0.qcow2,size=4G'),
    _vm(137, 'row-137', status='running'),
    _vm(138, 'row-138', status='running'),
    _vm(139, 'row-139', status='running', scsi1='local-lvm:vm-139-disk-1,size=1G'),
    _vm(141, 'row-141'),
] + [_vm(vmid, 'row-%d' % vmid, lock='backup') for vmid in (142, 143, 144, 145, 146, 148)] + [
    _vm(147, 'row-147', status='running', lock='backup'),
    _vm(149, 'row-149', protection=1, unused0='local-lvm:vm-149-disk-1'),
    _vm(150, 'row-150', status='running', tpmstate0='local-lvm:vm-150-disk-1,size=4M,version=v2.0'),
    _vm(151, 'row-151', ide2='isos:iso/debian-13-netinst.iso,media=cdrom'),
    _vm(152, 'row-152'),
    _vm(153, 'row-153', lock='backup', scsi1='local-lvm:vm-153-disk-1,size=1G'),
    dict(_vm(154, 'row-154', status='running'), qmpstatus='paused'),
]


def write_seed(tmp_path, name, extra_vms=(), default_vms=True, **more):
    """A seed file: the default seed, with or without its VMs, plus `extra_vms` (and `more` keys:
    `pools`, or `users` added to the seed's)."""
    with open(os.path.join(SEED_DIR, 'default.json'), encoding='utf-8') as f:
        seed = json.load(f)
    seed['vms'] = (seed['vms'] if default_vms else []) + copy.deepcopy(list(extra_vms))
    seed['users'] = dict(seed.get('users', {}), **more.pop('users', {}))
    seed.update(more)
    path = tmp_path / (name + '.json')
    path.write_text(json.dumps(seed))
    return str(path)


def reset(sim, seed):
    sim.reset(seed)
    add_canary_user(sim)
    sim.clear_requests()


def vm_configs(sim):
    """Every VM with its config (pending included): what a write would change."""
    found = {}
    for res in sim.api('GET', '/cluster/resources', {'type': 'vm'}):
        found[int(res['vmid'])] = sim.api('GET', '/nodes/%s/qemu/%d/pending' % (res['node'], int(res['vmid'])))
    return found


def writes(sim):
    return [(r['method'], r['path'].replace('/api2/json', '')) for r in sim.requests()
            if r['method'] != 'GET' and not r['path'].endswith('/access/ticket')]


# ----------------------------------------------------------------------------- the rows

def _task(module, row, step, options):
    name = '%s: %s' % (row, step) if step else row
    return {'name': name, 'ferro.proxmox.' + module: options, 'delegate_to': 'localhost', 'ignore_errors': True}


def kvm(**options):
    return ('proxmox_kvm', options)


def disk(**options):
    return ('proxmox_disk', options)


def nic(**options):
    return ('proxmox_nic', options)


# A diff line of a drive or an unused volume: a volume name, which a check run can always know.
VOLUME_LINE = re.compile(r'^[-+ ]?\s*(scsi|sata|ide|virtio|efidisk|tpmstate|unused)\d+:')


@dataclass
class Row:
    name: str
    steps: list                    # [(step name or '', (module, options))], run in order
    real_failure: str = None       # the real run's last step must fail with a msg holding this
    real_changed: bool = None      # the real run's last step must (not) change
    exact: tuple = ()              # result keys of the last step that check and real must hold alike (as `matches`)
    unmarked: bool = False         # the `exact` keys are knowable: the check run may not mark any of them
                                   # (a clone's new MACs, smbios1 uuid and vmgenid stay marked: PVE draws
                                   # them in clone_vm, docs/pve-semantics.md §15)
    expect: object = None          # fn(check_result, real_result) -> list of problems, for what the issue names
    tasks: list = field(default_factory=list)

    def __post_init__(self):
        self.tasks = [_task(module, self.name, step, options) for step, (module, options) in self.steps]


def one(name, step, **kw):
    return Row(name, [('', step)], **kw)


def _mac_marked(check, real):
    problems = []
    if check.get('mac') != {'net0': MARKER}:
        problems.append('check mac is %r, want {"net0": "%s"}' % (check.get('mac'), MARKER))
    if not re.fullmatch(MAC_RE, str((real.get('mac') or {}).get('net0'))):
        problems.append('real mac is %r, want a MAC for net0' % real.get('mac'))
    problems += _net0_lines(check.get('diff'), real.get('diff'))
    return problems


def _net0_lines(check_diff, real_diff):
    """The new NIC's line: marked in the check run's diff, with the MAC PVE drew in the real run's."""
    problems = []
    if 'net0: virtio=%s,bridge=vmbr0' % MARKER not in _after_lines(check_diff):
        problems.append('check diff has no line "net0: virtio=%s,bridge=vmbr0"' % MARKER)
    if not any(re.fullmatch('net0: virtio=%s,bridge=vmbr0' % MAC_RE, line) for line in _after_lines(real_diff)):
        problems.append('real diff has no line "net0: virtio=<MAC>,bridge=vmbr0"')
    return problems


def _nic_mac_marked(check, real):
    problems = []
    if check.get('mac') != MARKER:
        problems.append('check mac is %r, want %r' % (check.get('mac'), MARKER))
    if not re.fullmatch(MAC_RE, str(real.get('mac'))):
        problems.append('real mac is %r, want a MAC' % real.get('mac'))
    return problems


def _volume_is(volume):
    def expect(check, real):
        return ['real volume is %r, want %r' % (real.get('volume'), volume)] if real.get('volume') != volume else []
    return expect


def _devices_hold(key, pattern):
    def expect(check, real):
        got = (real.get('devices') or {}).get(key)
        return [] if re.fullmatch(pattern, str(got)) else ['real devices.%s is %r, want %s' % (key, got, pattern)]
    return expect


def _unused_is(key):
    def expect(check, real):
        return [] if real.get('unused') == key else ['real unused is %r, want %r' % (real.get('unused'), key)]
    return expect


def _drive_line_is(key, value, real_value=None):
    """The drive as PVE stores it, in the check run's diff and (as `real_value`, if it differs) the
    real run's: a CD-ROM's `size=` goes with its medium (Qemu.pm create_disks, docs/pve-semantics.md §35.3)."""
    def expect(check, real):
        lines = (('check', check, value), ('real', real, real_value or value))
        return ['%s diff has no line %r' % (name, '%s: %s' % (key, v)) for name, result, v in lines
                if '%s: %s' % (key, v) not in _after_lines(result.get('diff'))]
    return expect


# What create_vm adds to every new VM (docs/pve-semantics.md §35.2): marked in the check run's
# diff, PVE's values in the real run's.
CREATE_ADDITIONS = {
    'meta': ('creation-qemu=%s,ctime=%s' % (MARKER, MARKER), r'creation-qemu=[0-9.]+,ctime=\d+'),
    'smbios1': ('uuid=%s' % MARKER, r'uuid=[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'),
    'vmgenid': (MARKER, r'[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}'),
}


def _create_additions_marked(check, real):
    problems = []
    for key, (marked, value) in CREATE_ADDITIONS.items():
        if '%s: %s' % (key, marked) not in _after_lines(check.get('diff')):
            problems.append('check diff has no line "%s: %s"' % (key, marked))
        if not any(re.fullmatch('%s: %s' % (key, value), line) for line in _after_lines(real.get('diff'))):
            problems.append('real diff has no line "%s: <%s>"' % (key, value))
    return problems


def _removed(line):
    """The real run's diff shows `line` before and not after: the key is gone from the VM."""
    def expect(check, real):
        lines = _diff_lines(real.get('diff'))
        before = [x[1:] for x in lines if x.startswith('-') and not x.startswith('--- ')]
        if line in before and line not in _after_lines(real.get('diff')):
            return []
        return ['real diff should remove %r: %r' % (line, lines)]
    return expect


PREFLIGHT = [
    one('node missing', kvm(node='pve9', vmid=201, name='row-node', cores=1),
        real_failure="hostname lookup 'pve9' failed"),
    one('storage missing', disk(vmid=111, disk='scsi1', storage='nosuch', size='4'),
        real_failure="storage 'nosuch' does not exist"),
    one('storage without images (disk)', disk(vmid=112, disk='scsi1', storage='isos', size='4'),
        real_failure="storage 'isos' does not support vm images"),
    one('storage without images (create)', kvm(node='pve1', vmid=202, name='row-isos', scsi={'scsi0': 'isos:4'}),
        real_failure="storage 'isos' does not support vm images"),
    one('ISO missing (create)', kvm(node='pve1', vmid=203, name='row-iso',
                                    ide={'ide2': 'isos:iso/nope.iso,media=cdrom'}),
        real_failure="volume 'isos:iso/nope.iso' does not exist"),
    one('ISO missing (disk)', disk(vmid=113, disk='ide2', iso_image='isos:iso/nope.iso', media='cdrom'),
        real_failure="volume 'isos:iso/nope.iso' does not exist"),
    one('move to a missing storage', disk(vmid=114, disk='scsi0', state='moved', target_storage='nosuch'),
        real_failure="storage 'nosuch' does not exist"),
    one('bridge the node lacks', nic(vmid=115, interface='net1', bridge='vmbr9'),
        real_failure='vmbr9'),
    one('bridge given as a dict', nic(vmid=121, interface='net1', bridge={'name': 'vmbr0'}),
        real_failure=''),
    one('cores 0', kvm(node='pve1', vmid=116, update=True, cores=0),
        real_failure='value must have a minimum value of 1'),
    one('memory 1', kvm(node='pve1', vmid=117, update=True, memory=1),
        real_failure='value must have a minimum value of 16'),
    one('balloon above memory', kvm(node='pve1', vmid=118, update=True, memory=1024, balloon=2048),
        real_failure='balloon value too large (must be smaller than assigned memory)'),
    one('ipconfig0 malformed', kvm(node='pve1', vmid=119, update=True, ipconfig={'ipconfig0': 'ip=10.0.0.300/24'}),
        real_failure='value does not look like a valid ipv4 network configuration'),
    one('scsi0 given as 5', kvm(node='pve1', vmid=204, name='row-scsi5', scsi={'scsi0': 5}),
        real_failure="unable to parse volume ID '5'"),
    one('clone to a missing node', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=205,
                                       name='row-clone-node', target='pve9'),
        real_failure="no such cluster node 'pve9'"),
    one('clone to a missing storage', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=206,
                                          name='row-clone-storage', full=True, storage='nosuch'),
        real_failure="storage 'nosuch' does not exist"),
    # issue 24: each named format qemu-server checks in code, refused before any write with PVE's words
    # (CPUConfig.pm validate_vm_cpu_conf, PCI.pm $hostpci_fmt, QemuServer.pm verify_bootdev, $smbios1_fmt,
    # $watchdog_fmt, parse_hotplug_features, $cicustom_fmt, RNG.pm $rng_fmt, Drive.pm verify_bootdisk,
    # AccessControl.pm verify_poolname; docs/pve-semantics.md §34)
    one('cpu flag outside the VM-specific set', kvm(node='pve1', vmid=160, update=True, cpu='host,flags=+judge'),
        real_failure='VM-specific CPU flags must be a subset of: aes, amd-no-ssb'),
    one('cpu model not defined', kvm(node='pve1', vmid=161, update=True, cpu='Skylake'),
        real_failure="Built-in cputype 'Skylake' is not defined (missing 'custom-' prefix?)"),
    one('hostpci id malformed', kvm(node='pve1', vmid=162, update=True, hostpci={'hostpci0': 'zz:zz.z'}),
        real_failure='hostpci0.host: value does not match the regex pattern'),
    one('boot order names no boot device', kvm(node='pve1', vmid=163, update=True, boot='order=judge0'),
        real_failure="boot.order: invalid format - invalid boot device 'judge0'"),
    one('boot order names a device the VM lacks', kvm(node='pve1', vmid=164, update=True, boot='order=scsi0;scsi5'),
        real_failure="invalid bootorder: device 'scsi5' does not exist'"),
    one('bootdisk not a drive', kvm(node='pve1', vmid=165, update=True, bootdisk='net0'),
        real_failure="invalid boot disk 'net0'"),
    one('smbios1 uuid malformed', kvm(node='pve1', vmid=166, update=True, smbios='uuid=judge'),
        real_failure='smbios1.uuid: value does not match the regex pattern'),
    one('watchdog model unknown', kvm(node='pve1', vmid=167, update=True, watchdog='model=judge'),
        real_failure="watchdog.model: value 'judge' does not have a value in the enumeration 'i6300esb, ib700'"),
    one('rng0 without source', kvm(node='pve1', vmid=168, update=True, rng0='max_bytes=1024'),
        real_failure='rng0.source: property is missing and it is not optional'),
    one('cicustom not a volume', kvm(node='pve1', vmid=169, update=True, cicustom='user=user.yaml'),
        real_failure="cicustom.user: invalid format - unable to parse volume ID 'user.yaml'"),
    one('hotplug feature unknown', kvm(node='pve1', vmid=170, update=True, hotplug='network,floppy'),
        real_failure="invalid hotplug feature 'floppy'"),
    one('pool name malformed (create)', kvm(node='pve1', vmid=241, name='row-pool', pool='a b'),
        real_failure="pool name 'a b' contains invalid characters"),
]

UNKNOWN_AND_PREDICTED = [
    one('new NIC MAC (create)', kvm(node='pve1', vmid=210, name='row-mac', net={'net0': 'virtio,bridge=vmbr0'}),
        real_changed=True, exact=('mac', 'devices'), expect=_mac_marked),
    one('new NIC MAC (nic)', nic(vmid=120, interface='net1', bridge='vmbr0'),
        real_changed=True, exact=('mac', 'config'), expect=_nic_mac_marked),
    Row('data disk on a VM created in the same run', [
        ('create', kvm(node='pve1', vmid=211, name='row-disk2', bios='ovmf', efidisk0={'storage': 'local-lvm'},
                       scsi={'scsi0': 'local-lvm:4'})),
        ('data disk', disk(vmid=211, disk='scsi1', storage='local-lvm', size='2')),
    ], real_changed=True, exact=('volume', 'config'), unmarked=True, expect=_volume_is('local-lvm:vm-211-disk-2')),
    one('data disk takes the lowest free name', disk(vmid=122, disk='scsi1', storage='local-lvm', size='1'),
        real_changed=True, exact=('volume', 'config'), unmarked=True, expect=_volume_is('local-lvm:vm-122-disk-2')),
    one('full clone volumes', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=212, name='row-full',
                                  full=True, storage='local-lvm'),
        real_changed=True, exact=('devices',), unmarked=True,
        expect=_devices_hold('scsi0', r'local-lvm:vm-212-disk-\d+')),
    one('linked clone volumes (dir, qcow2)', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=213,
                                                 name='row-linked-dir', full=False),
        real_changed=True, exact=('devices',), unmarked=True,
        expect=_devices_hold('scsi0', r'vmdata:9000/base-9000-disk-0\.qcow2/213/vm-213-disk-\d+\.qcow2')),
    one('linked clone volumes (lvmthin)', kvm(node='pve1', vmid=9001, clone='lvm-template', newid=214,
                                              name='row-linked-lvm', full=False),
        real_changed=True, exact=('devices',), unmarked=True,
        # LVM-thin links a clone without naming its base in the volume id (LvmThinPlugin.pm clone_image).
        expect=_devices_hold('scsi0', r'local-lvm:vm-214-disk-\d+')),
    one('cloud-init volume (dir)', kvm(node='pve1', vmid=215, name='row-ci', scsi={'scsi0': 'vmdata:4'},
                                       ide={'ide2': 'vmdata:cloudinit'}),
        real_changed=True, exact=('devices',), unmarked=True,
        expect=_devices_hold('ide2', r'vmdata:215/vm-215-cloudinit\.qcow2')),
    one('cloud-init volume (lvmthin)', kvm(node='pve1', vmid=216, name='row-ci-lvm', scsi={'scsi0': 'local-lvm:4'},
                                           ide={'ide2': 'local-lvm:cloudinit'}),
        real_changed=True, exact=('devices',), unmarked=True,
        expect=_devices_hold('ide2', r'local-lvm:vm-216-cloudinit')),
    one('unusedN after a detach', disk(vmid=123, disk='scsi1', state='detached'),
        real_changed=True, exact=('unused',), unmarked=True, expect=_unused_is('unused1')),
    one('CD-ROM eject (disk)', disk(vmid=125, disk='ide2', iso_image='none', media='cdrom'),
        real_changed=True, expect=_drive_line_is('ide2', 'none,media=cdrom')),
    one('CD-ROM eject (kvm)', kvm(node='pve1', vmid=126, update=True, ide={'ide2': 'none,media=cdrom'}),
        real_changed=True, expect=_drive_line_is('ide2', 'none,media=cdrom')),
    one('CD-ROM insert (kvm)', kvm(node='pve1', vmid=127, update=True,
                                   ide={'ide2': 'isos:iso/debian-13-netinst.iso,media=cdrom'}),
        real_changed=True, expect=_drive_line_is('ide2', 'isos:iso/debian-13-netinst.iso,media=cdrom,size=' + MARKER,
                                                 'isos:iso/debian-13-netinst.iso,media=cdrom,size=754M')),
    one('what PVE adds on create', kvm(node='pve1', vmid=217, name='row-create-adds', cores=1),
        real_changed=True, expect=_create_additions_marked),
    # issue 24: an empty value removes the key (sent as delete=description; docs/pve-semantics.md §34.4)
    one('empty description removes it', kvm(node='pve1', vmid=171, update=True, description=''),
        real_changed=True, expect=_removed('description: old notes')),
]

READ_ONLY_TOKEN = [
    one('read-only: kvm create', kvm(node='pve1', vmid=230, name='ro-create', cores=1), real_failure=FORBIDDEN),
    one('read-only: kvm update', kvm(node='pve1', vmid=100, update=True, cores=4), real_failure=FORBIDDEN),
    one('read-only: disk add', disk(vmid=100, disk='scsi1', storage='local-lvm', size='4'), real_failure=FORBIDDEN),
    one('read-only: nic add', nic(vmid=100, interface='net1', bridge='vmbr1'), real_failure=FORBIDDEN),
    one('read-only: power start', kvm(node='pve1', vmid=124, state='started'), real_failure=FORBIDDEN),
]

# issue 24: what the VM's state makes PVE refuse (pve::state, docs/pve-semantics.md §33), and composite
# operations checked whole before their first write. Each refusal is checked in both runs before any write.
LOCKED = "VM is locked (backup)"
STATE_AND_COMPOSITE = [
    one('lock backup: kvm update', kvm(node='pve1', vmid=130, update=True, cores=4), real_failure=LOCKED),
    one('lock backup: state started', kvm(node='pve1', vmid=131, state='started'), real_failure=LOCKED),
    one('lock backup: disk create', disk(vmid=132, disk='scsi1', storage='local-lvm', size='1'), real_failure=LOCKED),
    one('lock backup: disk remove', disk(vmid=133, disk='scsi1', state='absent'), real_failure=LOCKED),
    one('lock backup: nic add', nic(vmid=134, interface='net1', bridge='vmbr0'), real_failure=LOCKED),
    one('protection: absent', kvm(node='pve1', vmid=135, state='absent'),
        real_failure="can't remove VM 135 - protection mode enabled"),
    one('protection: disk remove', disk(vmid=136, disk='scsi1', state='absent'),
        real_failure="can't remove drive 'scsi1' - protection mode enabled"),
    one('linked clone dependents: template absent', kvm(node='pve1', vmid=9002, state='absent'),
        real_failure="base volume 'vmdata:9002/base-9002-disk-0.qcow2' is still in use by linked cloned"),
    one('linked clone dependents: template base disk remove', disk(vmid=9002, disk='scsi0', state='absent'),
        real_failure="base volume '9002/base-9002-disk-0.qcow2' is still in use by linked clones"),
    one('clone + bad value', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=240, name='row-clone-bad',
                                 ipconfig={'ipconfig0': 'ip=10.0.0.300/24'}),
        real_failure='value does not look like a valid ipv4 network configuration'),
    one('linked clone + format', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=241,
                                     name='row-linked-format', full=False, format='raw'),
        real_failure="parameter 'format' not allowed for linked clones"),
    one('linked clone + storage', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=242,
                                      name='row-linked-storage', full=False, storage='local-lvm'),
        real_failure="parameter 'storage' not allowed for linked clones"),
    one('lock backup: clone', kvm(node='pve1', vmid=142, clone='row-142', newid=243, name='row-clone-locked'),
        real_failure=LOCKED),
    one('lock backup: migrate', kvm(node='pve2', vmid=143, migrate=True), real_failure=LOCKED),
    one('lock backup: template', kvm(node='pve1', vmid=144, state='template'), real_failure=LOCKED),
    one('lock backup: disk resize', disk(vmid=145, disk='scsi0', state='resized', size='+1G'), real_failure=LOCKED),
    one('lock backup: disk move', disk(vmid=146, disk='scsi0', state='moved', target_storage='nvme-pool'),
        real_failure=LOCKED),
    one('lock backup: state stopped', kvm(node='pve1', vmid=147, state='stopped', force=True), real_failure=LOCKED),
    one('lock backup: absent', kvm(node='pve1', vmid=148, state='absent'), real_failure='is locked (backup)'),
    one('protection: unused disk remove', disk(vmid=149, disk='unused0', state='absent'),
        real_failure="can't remove unused disk 'local-lvm:vm-149-disk-1' - protection mode enabled"),
    one('running: template', kvm(node='pve1', vmid=137, state='template'), real_failure='is running'),
    one('running: absent', kvm(node='pve1', vmid=138, state='absent'), real_failure='is running'),
    one('running: disk to another VM', disk(vmid=139, disk='scsi1', state='moved', target_vmid=141),
        real_failure='Cannot move disk to another VM while the source VM is running - detach first'),
    one('running: full clone with TPM state', kvm(node='pve1', vmid=150, clone='row-150', newid=244,
                                                  name='row-clone-tpm', full=True),
        real_failure='cannot clone TPM state while VM is running'),
    one('template: start', kvm(node='pve1', vmid=9001, state='started'),
        real_failure="you can't start a vm if it's a template"),
    one('CD-ROM: resize', disk(vmid=151, disk='ide2', state='resized', size='+1G'), real_failure='CD-ROM'),
    one('CD-ROM: move', disk(vmid=151, disk='ide2', state='moved', target_storage='nvme-pool'),
        real_failure='CD-ROM'),
    one('shrink', disk(vmid=152, disk='scsi0', state='resized', size='1G'), real_failure=''),
    one('lock backup: disk to another VM', disk(vmid=153, disk='scsi1', state='moved', target_vmid=141,
                                                 target_disk='scsi3'), real_failure=LOCKED),
    one('skiplock without root', kvm(node='pve1', vmid=152, update=True, cores=2, skiplock=True),
        real_failure='skiplock parameter require root@pam user'),
    one('storage missing (create)', kvm(node='pve1', vmid=245, name='row-nosuch', scsi={'scsi0': 'nosuch:4'}),
        real_failure="storage 'nosuch' does not exist"),
    one('paused: state stopped', kvm(node='pve1', vmid=154, state='stopped'),
        real_failure='VM is paused - cannot shutdown'),
    # issue 28: refused before the clone, so no clone is left behind (docs/pve-semantics.md §37.2)
    one('clone + boot order naming a missing device',
        kvm(node='pve1', clone='row-124', newid=246, name='row-clone-boot', boot='order=scsi0;virtio5'),
        real_failure="invalid bootorder: device 'virtio5' does not exist"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py: every row marked
# predicted there has a case in the CENSUS of a test_check_*.py file), and the rows those cases are.
CENSUS_ROWS = PREFLIGHT + UNKNOWN_AND_PREDICTED + READ_ONLY_TOKEN + STATE_AND_COMPOSITE
CENSUS = {
    'node missing': ('R-any-01',),
    'storage missing': ('R-config-12',),
    'storage without images (disk)': ('R-config-13',),
    'storage without images (create)': ('R-create-05',),
    'ISO missing (create)': ('R-create-06',),
    'ISO missing (disk)': ('R-config-14',),
    'move to a missing storage': ('R-move-04',),
    'bridge the node lacks': ('R-config-15',),
    'cores 0': ('R-any-04',),
    'memory 1': ('R-any-04',),
    'balloon above memory': ('R-config-06',),
    'ipconfig0 malformed': ('R-any-04',),
    'scsi0 given as 5': ('R-any-04',),
    'clone to a missing node': ('R-clone-01',),
    'clone to a missing storage': ('R-clone-02',),
    'read-only: kvm create': ('R-any-03', 'R-create-01'),
    'read-only: kvm update': ('R-any-03',),
    'read-only: disk add': ('R-any-03',),
    'read-only: nic add': ('R-any-03',),
    'read-only: power start': ('R-any-03',),
    'lock backup: kvm update': ('R-config-05',),
    'lock backup: state started': ('R-power-02',),
    'lock backup: disk create': ('R-config-05',),
    'lock backup: disk remove': ('R-config-05',),
    'lock backup: nic add': ('R-config-05',),
    'protection: absent': ('R-destroy-01',),
    'protection: disk remove': ('R-config-07',),
    'linked clone dependents: template absent': ('R-destroy-06',),
    'linked clone dependents: template base disk remove': ('R-config-11',),
    'clone + bad value': ('R-clone-13',),
    'linked clone + format': ('R-clone-08',),
    'linked clone + storage': ('R-clone-07',),
    'lock backup: clone': ('R-clone-04',),
    'lock backup: migrate': ('R-migrate-02',),
    'lock backup: template': ('R-template-01',),
    'lock backup: disk resize': ('R-resize-02',),
    'lock backup: disk move': ('R-move-01',),
    'lock backup: state stopped': ('R-power-05',),
    'lock backup: absent': ('R-destroy-05',),
    'protection: unused disk remove': ('R-config-08',),
    'running: template': ('R-template-04',),
    'running: absent': ('R-destroy-04',),
    'running: disk to another VM': ('R-move-09',),
    'running: full clone with TPM state': ('R-clone-10',),
    'template: start': ('R-power-01',),
    'CD-ROM: resize': ('R-resize-04',),
    'CD-ROM: move': ('R-move-02',),
    'shrink': ('R-resize-05',),
    'lock backup: disk to another VM': ('R-move-07',),
    'skiplock without root': ('R-any-05',),
    'storage missing (create)': ('R-create-04',),
    'paused: state stopped': ('R-power-06',),
    'clone + boot order naming a missing device': ('R-config-16',),
}



def _build_and_update(name, vmid):
    """README's first playbook on one VM (create, system disk, NIC), then an update of the VM the
    check run only predicts: every step after the first reads what the earlier ones predicted."""
    return Row(name, [
        ('create', kvm(node='pve1', vmid=vmid, name='row-%d' % vmid, cores=1, memory=1024)),
        ('system disk', disk(vmid=vmid, disk='scsi0', storage='local-lvm', size='4')),
        ('nic', nic(vmid=vmid, interface='net0', bridge='vmbr0', tag=10)),
        ('update', kvm(node='pve1', vmid=vmid, update=True, cores=2)),
    ], real_changed=True, exact=('devices',), unmarked=True,
        expect=_devices_hold('scsi0', r'local-lvm:vm-%d-disk-0' % vmid))


def _with_become(row):
    """The row's tasks with `become: true` (become_user root; su, which root runs without a
    password where sudo is not installed), as a site's ansible.cfg would set it."""
    for task in row.tasks:
        task.update(become=True, become_method='sudo' if shutil.which('sudo') else 'su')
    return row


# How Ansible runs the task (issue 24): the module runs as the become user, or is copied and run
# through the connection; the action plugin hands it the run's predictions either way.
BECOME = [_with_become(_build_and_update('become: build then update', 240))]
CONNECTION_PATH = [_build_and_update('connection path: build then update', 241)]



# `pool` on an existing VM with update: true (issue 27; pve-manager Pool.pm update_pool and index,
# tests/pvesim/tests/test_pools.py), run as a user that holds Pool.Allocate: the VMs 131-134 of
# POOL_SEED, 131 in pool `db`, 133 in `web`.
POOL_VMS = [_vm(vmid, 'row-%d' % vmid) for vmid in range(131, 135)]
POOL_SEED = {'pools': {'db': {'vms': [131]}, 'web': {'vms': [133]}},
             'users': {'pooler@pve': {'tokens': {'rows': '7c1d9e2a-pool-rows'},
                                      'acl': {'/': ['Pool.Allocate', 'Pool.Audit', 'VM.Allocate', 'VM.Audit',
                                                    'VM.Config.CPU', 'Datastore.Audit', 'Sys.Audit']}}}}
POOLER = {'PROXMOX_USER': 'pooler@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '7c1d9e2a-pool-rows'}


def _pool_lines(before, after):
    def expect(check, real):
        diff = real.get('diff') or {}
        return [] if (before in diff.get('before', '') and after in diff.get('after', '')) else [
            'real diff has no %r -> %r: %r' % (before, after, diff)]
    return expect


POOLS = [
    one('pool: move to another pool', kvm(node='pve1', vmid=131, update=True, pool='web'),
        real_changed=True, expect=_pool_lines('pool: db\n', 'pool: web\n')),
    one('pool: join a pool', kvm(node='pve1', vmid=132, update=True, pool='web', cores=2),
        real_changed=True, expect=_pool_lines('', 'pool: web\n')),
    one('pool: already in it', kvm(node='pve1', vmid=133, update=True, pool='web'), real_changed=False),
    one('pool: missing pool', kvm(node='pve1', vmid=134, update=True, pool='nope', cores=2),
        real_failure="pool: pool 'nope' does not exist"),
]


# ----------------------------------------------------------------------------- comparing

def outcome(result_row):
    if result_row['status'] == 'failed':
        return 'failed'
    return 'changed' if result_row['changed'] else 'ok'


def _diff_lines(diff):
    """A diff (one dict or a list of them) as lines: the headers, `-` before lines, `+` after lines."""
    lines = []
    for part in (diff if isinstance(diff, list) else [diff] if diff else []):
        lines.append('--- %s' % part.get('before_header', ''))
        lines.append('+++ %s' % part.get('after_header', ''))
        lines += ['-' + line for line in str(part.get('before', '')).splitlines()]
        lines += ['+' + line for line in str(part.get('after', '')).splitlines()]
    return lines


def _after_lines(diff):
    return [line[1:] for line in _diff_lines(diff) if line.startswith('+') and not line.startswith('+++ ')]


def matches(check_text, real_text):
    """A check value against the real one: exact, except that the marker stands for one value."""
    check_text, real_text = str(check_text), str(real_text)
    if MARKER not in check_text:
        return check_text == real_text
    pattern = ONE_VALUE.join(re.escape(part) for part in check_text.split(MARKER))
    return re.fullmatch(pattern, real_text) is not None


def first_diff_difference(check_diff, real_diff):
    check_lines, real_lines = _diff_lines(check_diff), _diff_lines(real_diff)
    for i in range(max(len(check_lines), len(real_lines))):
        c = check_lines[i] if i < len(check_lines) else '<no line>'
        r = real_lines[i] if i < len(real_lines) else '<no line>'
        if not matches(c, r):
            return 'diff line %d: check %r, real %r' % (i + 1, c, r)
    return None


def _by_task(run):
    return dict((r['task'], r) for r in run.results if r['status'] in ('ok', 'failed', 'skipped'))


def compare_row(row, check_run, real_run):
    """The problems of one row (empty: the row agrees)."""
    problems = []
    check_tasks, real_tasks = _by_task(check_run), _by_task(real_run)
    for n, task in enumerate(row.tasks):
        name, last = task['name'], n == len(row.tasks) - 1
        c, r = check_tasks.get(name), real_tasks.get(name)
        if c is None or r is None:
            problems.append('%s: no result in the %s run' % (name, 'check' if c is None else 'real'))
            continue
        cres, rres = c['result'], r['result']
        if outcome(c) != outcome(r):
            problems.append('%s: outcome check %s, real %s' % (name, outcome(c), outcome(r)))
        if not matches(cres.get('msg'), rres.get('msg')):
            problems.append('%s: msg check %r, real %r' % (name, cres.get('msg'), rres.get('msg')))
        first = first_diff_difference(cres.get('diff'), rres.get('diff'))
        if first:
            problems.append('%s: %s' % (name, first))
        knowable = dict((key, cres.get(key)) for key in row.exact)
        volume_lines = [line for line in _diff_lines(cres.get('diff')) if VOLUME_LINE.match(line) and MARKER in line]
        if row.unmarked and (MARKER in json.dumps(knowable) or volume_lines):
            problems.append('%s: the check run marks a value it can know: %s' % (name, volume_lines or knowable))
        if not last:
            continue
        if row.real_failure is not None and (outcome(r) != 'failed' or row.real_failure not in str(rres.get('msg'))):
            problems.append('%s: the real run should fail with %r, got %s %r' % (
                name, row.real_failure, outcome(r), rres.get('msg')))
        if row.real_changed is not None and outcome(r) != ('changed' if row.real_changed else 'ok'):
            problems.append('%s: the real run should be %s, got %s %r' % (
                name, 'changed' if row.real_changed else 'ok', outcome(r), rres.get('msg')))
        for key in row.exact:
            if not matches(json.dumps(cres.get(key), sort_keys=True), json.dumps(rres.get(key), sort_keys=True)):
                problems.append('%s: %s check %r, real %r' % (name, key, cres.get(key), rres.get(key)))
        if row.expect and outcome(r) != 'failed':
            problems += ['%s: %s' % (name, p) for p in row.expect(cres, rres)]
    return problems


def run_batch(ansible, sim, seed, rows, env=None, writes_nothing=False):
    """Check run then real run of the rows from the same state; returns {row name: problems}."""
    book = [{'name': 'check versus real', 'hosts': 'localhost', 'gather_facts': False,
             'tasks': [task for row in rows for task in row.tasks]}]
    reset(sim, seed)
    before = vm_configs(sim)
    check = ansible.run_playbook(book, check=True, diff=True, env=env)
    problems = {}
    sent = writes(sim)
    if sent:
        # Which row sent it is not known; every row of the batch is charged with it.
        for row in rows:
            problems.setdefault(row.name, []).append('the check run wrote: %s' % sent)
    reset(sim, seed)
    real = ansible.run_playbook(book, diff=True, env=env)
    after = vm_configs(sim) if writes_nothing else before
    if after != before:
        changed = sorted(vmid for vmid in set(before) | set(after) if before.get(vmid) != after.get(vmid))
        for row in rows:
            problems.setdefault(row.name, []).append('the real run changed VMs %s' % changed)
    for row in rows:
        problems.setdefault(row.name, []).extend(compare_row(row, check, real))
    return problems


def assert_rows_agree(summary, label, rows, problems):
    """Print `<label>: N rows, M agree` and fail naming each row whose check run did not predict its real run
    (`problems` is run_batch's answer for `rows`)."""
    disagree = [(row.name, problems[row.name]) for row in rows if problems[row.name]]
    summary('%s: %d rows, %d agree' % (label, len(rows), len(rows) - len(disagree)))
    assert not disagree, 'rows where the check run did not predict the real run:\n' + '\n'.join(
        '- %s:\n    %s' % (name, '\n    '.join(p)) for name, p in disagree)


def test_check_run_predicts_the_real_run_row_by_row(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'rows', ROW_VMS)
    problems = {}
    problems.update(run_batch(ansible, sim, seed, PREFLIGHT, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, UNKNOWN_AND_PREDICTED))
    problems.update(run_batch(ansible, sim, seed, READ_ONLY_TOKEN, env=READ_ONLY, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, BECOME))
    problems.update(run_batch(ansible, sim, seed, CONNECTION_PATH, env={'FERRO_PROXMOX_EXEC': 'connection'}))
    problems.update(run_batch(ansible, sim, seed, STATE_AND_COMPOSITE, writes_nothing=True))
    problems.update(run_batch(ansible, sim, write_seed(tmp_path, 'pools', POOL_VMS, **POOL_SEED), POOLS, env=POOLER))
    rows = PREFLIGHT + UNKNOWN_AND_PREDICTED + READ_ONLY_TOKEN + BECOME + CONNECTION_PATH + STATE_AND_COMPOSITE + POOLS
    assert_rows_agree(summary, 'check-versus-real', rows, problems)


# ----------------------------------------------------------------------------- the first seed

PLAYBOOKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'playbooks')


def failures(run):
    return '\n'.join('%s, %s: %s' % (r['host'], r['task'], r['result'].get('msg')) for r in run.results
                     if r['status'] in ('failed', 'item_failed'))


def test_first_seed_build_playbook_check_predicts_the_real_run(ansible, sim, tmp_path):
    """The first seed's build playbook on an empty cluster: `--check --diff` runs cleanly (the
    MAC-parsing task reads `(known after apply)`), writes nothing, and predicts the real run task by
    task; the MAC is a real one only in the real run, the data disk's volume is known in both."""
    seed = write_seed(tmp_path, 'empty', default_vms=False)
    book = os.path.join(PLAYBOOKS, 'first_seed_build.yml')
    inventory = os.path.join(PLAYBOOKS, 'first_seed_inventory.yml')
    reset(sim, seed)
    check = ansible.run_playbook(book, check=True, diff=True, inventory=inventory)
    assert check.rc == 0 and check.failed_tasks == [], 'the check run failed:\n%s\n%s' % (
        failures(check), check.stdout[-2000:])
    assert writes(sim) == [], 'the check run wrote: %s' % writes(sim)
    reset(sim, seed)
    real = ansible.run_playbook(book, diff=True, inventory=inventory)
    assert real.rc == 0 and real.failed_tasks == [], 'the real run failed:\n%s\n%s' % (
        failures(real), real.stdout[-2000:])

    def by_host_task(run):
        return dict(((r['host'], r['task']), r) for r in run.results if r['status'] in ('ok', 'failed', 'skipped'))

    checked, done = by_host_task(check), by_host_task(real)
    assert sorted(checked) == sorted(done)
    problems = []
    for key in sorted(done, key=lambda k: (k[0], [r['task'] for r in real.results].index(k[1]))):
        c, r = checked[key], done[key]
        if outcome(c) != outcome(r):
            problems.append('%s: outcome check %s, real %s' % (key, outcome(c), outcome(r)))
        if not matches(c['result'].get('msg'), r['result'].get('msg')):
            problems.append('%s: msg check %r, real %r' % (key, c['result'].get('msg'), r['result'].get('msg')))
        first = first_diff_difference(c['result'].get('diff'), r['result'].get('diff'))
        if first:
            problems.append('%s: %s' % (key, first))
    for host, vmid in (('seed-web01', 301), ('seed-db01', 302)):
        check_mac = checked[(host, 'Parse the MAC of net0')]['result']['ansible_facts']['vm_mac']
        real_mac = done[(host, 'Parse the MAC of net0')]['result']['ansible_facts']['vm_mac']
        if check_mac != MARKER or not re.fullmatch(MAC_RE, real_mac):
            problems.append('%s: vm_mac check %r (want %r), real %r (want a MAC)' % (host, check_mac, MARKER, real_mac))
        problems += ['%s, Create the VM: %s' % (host, p) for p in _net0_lines(
            checked[(host, 'Create the VM')]['result'].get('diff'), done[(host, 'Create the VM')]['result'].get('diff'))]
        volumes = [run[(host, 'Add the data disk')]['result'].get('volume') for run in (checked, done)]
        if volumes != ['local-lvm:vm-%d-disk-2' % vmid] * 2:
            problems.append('%s: data disk volume check %r, real %r, want local-lvm:vm-%d-disk-2 in both' % (
                host, volumes[0], volumes[1], vmid))
    assert not problems, 'the check run did not predict the real run:\n' + '\n'.join(problems)

"""Check versus real, issue 32 (B3): the privileges PVE checks inside its handlers and workers, and the auth id.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, as a token that holds a
subset of the privileges, and the two must agree task by task (test_check_vs_real.py's `run_batch` and
`compare_row`); nothing may be written. The rules (docs/pve-semantics.md §44, module_utils
src/pve/permissions/handlers.rs):

1. a token without `Datastore.AllocateSpace`: resize (Qemu.pm `resize_vm`), removing an `unusedN` the VM owns
   (QemuServer.pm `try_deallocate_drive`), hibernation (Qemu.pm `vm_suspend`, QemuConfig.pm `find_vmstate_storage`);
   without `VM.Config.Options`: tags (GuestHelpers.pm `assert_tag_permissions`); without `Mapping.Use`: the host's
   hardware RNG (Qemu.pm `check_rng_perm`);
2. a token of root@pam, `root@pam!ci`, which PVE does not take for root@pam (`$authuser eq 'root@pam'`): skiplock,
   and a real serial device at create ("set") and update ("modify");
3. the privileges of the census rows split out of R-any-90 (docs/refusals.md, docs/pve-semantics.md §52), each
   decided by the one read of what the token holds: an option's class (Qemu.pm `$check_vm_modify_config_perm`),
   SDN.Use on a bridge (GuestHelpers.pm `check_vnet_access`), another VM's volume (Storage.pm
   `check_volume_access`), a new disk's storage (Qemu.pm `$check_storage_access`), a full clone's target storage
   (`$check_storage_access_clone`), a move's target storage (`move_vm_disk`), a pool move of a VM the token may not
   modify (Pool.pm `update_pool`);
4. a create or a clone by a token that may not read the new VM back (`VM.Audit` on it, Qemu.pm `vm_pending`, which
   the module's read-back after the write needs): PVE would make the VM and the read-back fail; the module refuses
   before the write (proxmox_kvm checks/read_back.rs), in check and real runs alike.
"""

from test_check_vs_real import FORBIDDEN, _vm, assert_rows_agree, disk, kvm, nic, one, run_batch, write_seed

VMS = [
    _vm(260, 'row-260'),
    _vm(261, 'row-261', unused0='local-lvm:vm-261-disk-1'),
    _vm(262, 'row-262', status='running'),
    _vm(263, 'row-263', tags='old'),
    _vm(264, 'row-264'),
    _vm(265, 'row-265'),
    _vm(267, 'row-267'),
    _vm(268, 'row-268', tags='web'),
    _vm(269, 'row-269', tags='web'),
] + [_vm(vmid, 'row-%d' % vmid) for vmid in (280, 281, 282, 283, 285)]

# The datacenter's tag policy (datacenter.cfg `user-tag-access`, `registered-tags`): only the listed tags, and
# `prod` only for Sys.Modify on / (pve-guest-common GuestHelpers.pm get_allowed_tags).
DATACENTER = {'user-tag-access': {'user-allow': 'list', 'user-allow-list': ['web', 'db']}, 'registered-tags': ['prod']}

# Every VM privilege but VM.Config.Options; storages readable, no space on any (no Datastore.AllocateSpace); no
# Mapping.Use.
SUBSET_ACL = ['VM.Allocate', 'VM.Audit', 'VM.Clone', 'VM.Config.CDROM', 'VM.Config.CPU', 'VM.Config.Cloudinit',
              'VM.Config.Disk', 'VM.Config.HWType', 'VM.Config.Memory', 'VM.Config.Network', 'VM.PowerMgmt',
              'VM.Migrate', 'Datastore.Audit', 'Sys.Audit', 'SDN.Use', 'SDN.Audit', 'Pool.Audit']
USERS = {'subset@pve': {'tokens': {'rows': '3e5d7c9a-subset-rows'}, 'acl': {'/': SUBSET_ACL}},
         # every VM privilege, and Sys.Audit on / (so the whole tag policy can be read), but not Sys.Modify
         'tagger@pve': {'tokens': {'rows': '8d2c4e6f-tagger-rows'},
                        'acl': {'/': SUBSET_ACL + ['VM.Config.Options', 'Datastore.AllocateSpace']}},
         # the same without Sys.Audit: only `allowed-tags` of the policy can be read
         'blind@pve': {'tokens': {'rows': '1f3e5d7c-blind-rows'},
                       'acl': {'/vms': [p for p in SUBSET_ACL if p.startswith('VM.')] + ['VM.Config.Options'],
                               '/storage': ['Datastore.Audit'], '/sdn': ['SDN.Use', 'SDN.Audit']}},
         # a token of root@pam without privilege separation: every privilege of root@pam, but not root@pam
         'root@pam': {'password': 'secret', 'tokens': {'ci': '6b4f2a1c-root-token'}}}
# Most VM privileges on /vms (not VM.Config.Memory, not on VM 100, whose own ACL leaves only VM.Audit), storages
# readable and space on local-lvm only, SDN readable but not usable, Pool.Allocate on the pool `web`.
NARROW_ACL = {'/vms': ['VM.Audit', 'VM.Allocate', 'VM.Clone', 'VM.Config.CPU', 'VM.Config.Disk', 'VM.Config.CDROM',
                       'VM.Config.HWType', 'VM.Config.Network', 'VM.Config.Options', 'VM.PowerMgmt'],
              '/vms/100': ['VM.Audit'],
              '/storage': ['Datastore.Audit'], '/storage/local-lvm': ['Datastore.Audit', 'Datastore.AllocateSpace'],
              '/sdn': ['SDN.Audit'], '/pool/web': ['Pool.Audit', 'Pool.Allocate'], '/': ['Sys.Audit']}
USERS['narrow@pve'] = {'tokens': {'rows': '7c1a3e5b-narrow-rows'}, 'acl': NARROW_ACL}
# Every privilege a create or clone needs on /vms but VM.Audit; the template 9000 readable and clonable.
NO_AUDIT_ACL = {'/vms': ['VM.Allocate', 'VM.Clone', 'VM.Config.CPU', 'VM.Config.Disk', 'VM.Config.CDROM',
                         'VM.Config.HWType', 'VM.Config.Network', 'VM.Config.Options', 'VM.Config.Memory',
                         'VM.PowerMgmt'],
                '/vms/9000': ['VM.Audit', 'VM.Clone'],
                '/storage': ['Datastore.Audit', 'Datastore.AllocateSpace'], '/sdn': ['SDN.Audit', 'SDN.Use'],
                '/': ['Sys.Audit']}
USERS['noaudit@pve'] = {'tokens': {'rows': '5a7c9e1b-noaudit-rows'}, 'acl': NO_AUDIT_ACL}
NO_AUDIT = {'PROXMOX_USER': 'noaudit@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '5a7c9e1b-noaudit-rows'}
NARROW = {'PROXMOX_USER': 'narrow@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '7c1a3e5b-narrow-rows'}
SUBSET = {'PROXMOX_USER': 'subset@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '3e5d7c9a-subset-rows'}
TAGGER = {'PROXMOX_USER': 'tagger@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '8d2c4e6f-tagger-rows'}
BLIND = {'PROXMOX_USER': 'blind@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '1f3e5d7c-blind-rows'}
ROOT_TOKEN = {'PROXMOX_USER': 'root@pam', 'PROXMOX_TOKEN_ID': 'ci', 'PROXMOX_TOKEN_SECRET': '6b4f2a1c-root-token'}

NO_SPACE = FORBIDDEN + ' (/storage/local-lvm, Datastore.AllocateSpace)'

SUBSET_ROWS = [
    one('no space: resize', disk(vmid=260, disk='scsi0', state='resized', size='+1G'), real_failure=NO_SPACE),
    one('no space: unused volume removed', disk(vmid=261, disk='unused0', state='absent'), real_failure=NO_SPACE),
    one('no space: hibernation', kvm(node='pve1', vmid=262, state='hibernated'), real_failure=NO_SPACE),
    one('no options: tags', kvm(node='pve1', vmid=263, update=True, tags=['new']),
        real_failure=FORBIDDEN + ' (/vms/263, VM.Config.Options)'),
    one('no mapping: hardware rng', kvm(node='pve1', vmid=267, update=True, rng0='source=/dev/hwrng'),
        real_failure=FORBIDDEN + ' (/mapping/hwrng, Mapping.Use)'),
]

ROOT_TOKEN_ROWS = [
    one('root token: skiplock', kvm(node='pve1', vmid=264, update=True, cores=2, skiplock=True),
        real_failure='Only root may use this option.'),
    one('root token: real serial device (update)', kvm(node='pve1', vmid=265, update=True,
                                                       serial={'serial0': '/dev/ttyS0'}),
        real_failure="only root can modify 'serial0' config for real devices"),
    one('root token: real serial device (create)', kvm(node='pve1', vmid=266, name='row-266',
                                                       serial={'serial0': '/dev/ttyS0'}),
        real_failure="only root can set 'serial0' config for real devices"),
]

TAG_POLICY_ROWS = [
    one('tag policy: a tag outside the list', kvm(node='pve1', vmid=268, update=True, tags=['web', 'other']),
        real_failure=FORBIDDEN + " (/, Sys.Modify for modifying tag 'other')"),
    one('tag policy: a registered tag', kvm(node='pve1', vmid=268, update=True, tags=['prod']),
        real_failure=FORBIDDEN + " (/, Sys.Modify for modifying tag 'prod')"),
    one('tag policy: a listed tag', kvm(node='pve1', vmid=269, update=True, tags=['web', 'db']), real_changed=True),
]

NARROW_ROWS = [
    one('narrow: an option class', kvm(node='pve1', vmid=280, update=True, memory=2048),
        real_failure=FORBIDDEN + ' (/vms/280, VM.Config.Memory)'),
    one('narrow: a bridge without SDN.Use', nic(vmid=281, interface='net1', bridge='vmbr1'),
        real_failure=FORBIDDEN + ' (/sdn/zones/localnetwork/vmbr1, SDN.Use)'),
    one('narrow: a new disk on a storage without space', disk(vmid=282, disk='scsi1', storage='vmdata', size='2'),
        real_failure=FORBIDDEN + ' (/storage/vmdata, Datastore.AllocateSpace)'),
    one("narrow: another VM's volume", kvm(node='pve1', vmid=283, update=True,
                                             scsi={'scsi1': 'local-lvm:vm-100-disk-0'}),
        real_failure=FORBIDDEN + ' (/vms/100, VM.Config.Disk)'),
    one('narrow: a full clone to a storage without space', kvm(node='pve1', vmid=9000, clone='debian-13-template',
                                                              newid=284, name='row-clone-284', full=True,
                                                              storage='vmdata'),
        real_failure=FORBIDDEN + ' (/storage/vmdata, Datastore.AllocateSpace)'),
    one('narrow: a move to a storage without space', disk(vmid=285, disk='scsi0', state='moved',
                                                          target_storage='vmdata'),
        real_failure=FORBIDDEN + ' (/storage/vmdata, Datastore.AllocateSpace)'),
    one("narrow: a pool move without the VM's privileges", kvm(node='pve1', vmid=100, update=True, pool='web'),
        real_failure=FORBIDDEN + ' (/vms/100, Permissions.Modify|VM.Allocate)'),
]

NO_AUDIT_ROWS = [
    one('no read-back: a create', kvm(node='pve1', vmid=290, name='row-290'),
        real_failure=FORBIDDEN + ' (/vms/290, VM.Audit)'),
    one('no read-back: a clone', kvm(node='pve1', vmid=9000, clone='debian-13-template', newid=291,
                                     name='row-clone-291'),
        real_failure=FORBIDDEN + ' (/vms/291, VM.Audit)'),
]

CENSUS_ROWS = SUBSET_ROWS + ROOT_TOKEN_ROWS + TAG_POLICY_ROWS + NARROW_ROWS + NO_AUDIT_ROWS
CENSUS = {
    'no space: resize': ('R-resize-60',),
    'no space: unused volume removed': ('R-config-60',),
    'no space: hibernation': ('R-power-60',),
    'no options: tags': ('R-config-61',),
    'no mapping: hardware rng': ('R-config-63',),
    'root token: skiplock': ('R-any-60',),
    'root token: real serial device (update)': ('R-config-17',),
    'root token: real serial device (create)': ('R-create-12',),
    'tag policy: a tag outside the list': ('R-config-62',),
    'tag policy: a registered tag': ('R-config-62',),
    'tag policy: a listed tag': ('R-config-62',),
    'narrow: an option class': ('R-config-130',),
    'narrow: a bridge without SDN.Use': ('R-any-131',),
    'narrow: a new disk on a storage without space': ('R-any-133',),
    "narrow: another VM's volume": ('R-any-132',),
    'narrow: a full clone to a storage without space': ('R-clone-130',),
    'narrow: a move to a storage without space': ('R-move-130',),
    "narrow: a pool move without the VM's privileges": ('R-pool-130',),
    'no read-back: a create': ('R-create-133',),
    'no read-back: a clone': ('R-create-133',),
}


def test_privileges_checked_inside_handlers_are_predicted(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'privileges', VMS, users=USERS, datacenter=DATACENTER, pools={'web': {}})
    problems = {}
    problems.update(run_batch(ansible, sim, seed, SUBSET_ROWS, env=SUBSET, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, ROOT_TOKEN_ROWS, env=ROOT_TOKEN, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, TAG_POLICY_ROWS, env=TAGGER))
    problems.update(run_batch(ansible, sim, seed, NARROW_ROWS, env=NARROW, writes_nothing=True))
    problems.update(run_batch(ansible, sim, seed, NO_AUDIT_ROWS, env=NO_AUDIT, writes_nothing=True))
    rows = CENSUS_ROWS
    assert_rows_agree(summary, 'check-versus-real (issue 32, privileges)', rows, problems)


def test_a_tag_the_policy_may_refuse_is_a_warning_without_sys_audit(ansible, sim, tmp_path):
    """Without Sys.Audit on / a user reads only `allowed-tags` of the policy (pve-manager Cluster.pm get_options):
    whether a tag outside it is refused (registered, or `user-allow` not `free`) is not known, so the check run
    says so in a warning and does not guess (docs/pve-semantics.md §44.3); the real run shows PVE's answer."""
    seed = write_seed(tmp_path, 'privileges', VMS, users=USERS, datacenter=DATACENTER)
    task = {'name': 'tags', 'delegate_to': 'localhost', 'ignore_errors': True,
            'ferro.proxmox.proxmox_kvm': {'node': 'pve1', 'vmid': 269, 'update': True, 'tags': ['web', 'other']}}
    play = [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [task]}]
    results = {}
    for mode in ('check', 'real'):
        sim.reset(seed)
        run = ansible.run_playbook(play, check=mode == 'check', env=BLIND)
        results[mode] = run.task('tags')['result']
    warnings = ' '.join(results['check'].get('warnings') or [])
    assert "the tag 'other' is not known" in warnings and 'Sys.Audit on /' in warnings, results['check']
    # the warning names PVE's words for the refusal, which the real run gives
    assert "PVE may refuse it: Permission check failed (/, Sys.Modify for modifying tag 'other')" in warnings, warnings
    assert results['check'].get('changed') is True and not results['check'].get('failed'), results['check']
    assert "Sys.Modify for modifying tag 'other'" in str(results['real'].get('msg')), results['real']

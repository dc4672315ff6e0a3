"""Check versus real, issue 32 (mappings, restore hints): what PVE refuses of a VM whose config names a mapped PCI or
USB device or a virtio-fs directory, decided from the cluster's mappings (`GET /cluster/mapping/pci`, `/usb`, `/dir`),
which a task reads only when the config names one; and what a restore's task refuses of the archive's hints.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch`); every row is a refusal, so the real run writes nothing. pvesim
refuses each as PVE does (tests/pvesim/pvesim/mappings.py, tests/pvesim/tests/test_mappings.py; docs/pve-semantics.md
§64):

1. A start: qemu-server QemuServer/PCI.pm `parse_hostpci` (no entry for the node), QemuServer/USB.pm `parse_usb_device`
   (two entries for the node), QemuServer/Virtiofs.pm `assert_virtiofs_config` (pve-guest-common Mapping/Dir.pm
   `find_on_current_node`); the module predicts them in `pve::mappings::pci_on_node`, `start_usb` and `start_dirs`.
   `legacy-igd` on a mapping with several entries for the node: PCI.pm `parse_hostpci_devices` (`alternate devices`),
   predicted in `pve::values::devices::hostpci` with the mapping's entries (docs/pve-semantics.md §70).
   Each entry for the node is checked against the node's hardware and directories (pve-guest-common Mapping/PCI.pm,
   USB.pm, Dir.pm `assert_valid`), which the lists give with `check-node` and pvesim models with `node_devices`.
2. A migration: QemuMigrate.pm `prepare` with QemuMigrate/Helpers.pm `check_local_resources` (a mapping with no entry
   for the target; a running VM's mapped device that is not `live-migration-capable`); `pve::mappings::migrate`.
3. A restore: QemuServer.pm `$parse_backup_hints` in create_vm's restore task, each storage the archive's config names
   (`GET /nodes/{node}/vzdump/extractconfig`, read only for a restore without `storage`); `pve::restore::hint_storages`
   (tests/pvesim/tests/test_restore_hints.py).
4. A start with a `hostpciN` `host` id the node lacks: PCI.pm `parse_hostpci` (pve-common SysFSTools.pm `lspci`), read
   from `GET /nodes/{node}/hardware/pci` (Sys.Audit on /); `pve::values::devices::hostpci` (§72, node_pci.py).
"""

from harness import CANARY_PRIVILEGES
from test_check_vs_real import _vm, assert_rows_agree, kvm, one, run_batch, write_seed

MAPPINGS = {
    'pci': [{'id': 'gpu', 'map': ['node=pve2,path=0000:01:00.0,id=10de:2204']},
            {'id': 'gpu2', 'map': ['node=pve1,path=0000:02:00.0', 'node=pve2,path=0000:02:00.0']}],
    'usb': [{'id': 'keys', 'map': ['node=pve1,id=1234:5678', 'node=pve1,path=1-2']},
            {'id': 'dongle', 'map': ['node=pve1,id=abcd:0001']}],
    'dir': [{'id': 'docs', 'map': ['node=pve2,path=/srv/docs']},
            {'id': 'gone', 'map': ['node=pve1,path=/srv/gone']}],
}
MAPPINGS['pci'].append({'id': 'igds', 'map': ['node=pve1,path=0000:00:02.0,id=8086:3e92',
                                               'node=pve1,path=0000:01:00.0,id=8086:3e92']})
MAPPINGS['pci'].append({'id': 'moved', 'map': ['node=pve1,path=0000:05:00.0,id=10de:2204,iommugroup=12']})
# pve1's hardware and directories, which `check-node` compares the entries with (Mapping/*.pm assert_valid)
NODE_DEVICES = {'pve1': {'pci': {'0000:04:00.0': {'id': '10de:2204', 'iommugroup': 12},
                                  '0000:00:02.0': {'id': '8086:3e92'}, '0000:01:00.0': {'id': '8086:3e92'}},
                         'dirs': ['/srv/here']}}

# Rows' VMs: 789-797 and 799 on pve1.
VMS = [
    _vm(790, 'row-790', hostpci0='mapping=gpu,pcie=1', machine='q35'),
    _vm(791, 'row-791', usb0='mapping=keys'),
    _vm(792, 'row-792', virtiofs0='dirid=docs'),
    _vm(793, 'row-793', usb0='mapping=dongle'),
    _vm(794, 'row-794', status='running', hostpci0='mapping=gpu2', machine='q35'),
    _vm(795, 'row-795'),
    _vm(796, 'row-796', hostpci0='mapping=moved'),
    _vm(797, 'row-797', virtiofs0='dirid=gone'),
    _vm(799, 'row-799', vga='none', hostpci0='mapping=igds,legacy-igd=1'),
    _vm(789, 'row-789', hostpci0='host=0000:04:00.0', hostpci1='03:00,pcie=1'),
]

# The canary's privileges and Mapping.Audit (and Use) on /mapping: the lists show this token the mappings (without
# it, each run warns that what PVE decides from a mapping is not known).
USERS = {'mapview@pve': {'tokens': {'rows': '3b5d7f9a-mapview-rows'},
                         'acl': {'/': CANARY_PRIVILEGES, '/mapping': ['Mapping.Audit', 'Mapping.Use']}}}
MAPVIEW = {'PROXMOX_USER': 'mapview@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '3b5d7f9a-mapview-rows'}

BACKUP = 'local:backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst'
BACKUPS = {BACKUP: ('#qmdump#map:scsi0:drive-scsi0:vmdata:raw:\nmemory: 1024\n'
                   'scsi0: vmdata:100/vm-100-disk-0.raw,size=4G\n')}
# the canary's privileges, with space on `local` (the backup's) only
USERS['hinted@pve'] = {'tokens': {'rows': '6d8f0a2c-hinted-rows'},
                       'acl': {'/': [p for p in CANARY_PRIVILEGES if p != 'Datastore.AllocateSpace'],
                               '/storage/local': ['Datastore.AllocateSpace']}}
HINTED = {'PROXMOX_USER': 'hinted@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '6d8f0a2c-hinted-rows'}
HINTED_ROWS = [
    one("restore: a hint's storage without space", kvm(node='pve1', vmid=798, name='row-798', archive=BACKUP),
        real_failure='Permission check failed (/storage/vmdata, Datastore.AllocateSpace)'),
]


ROWS = [
    one('pci mapping not on the node: start', kvm(node='pve1', vmid=790, state='started'),
        real_failure="PCI device mapping not found for 'gpu'"),
    one('two usb entries on the node: start', kvm(node='pve1', vmid=791, state='started'),
        real_failure='More than one USB mapping per host not supported'),
    one('directory mapping not on the node: start', kvm(node='pve1', vmid=792, state='started'),
        real_failure='No directory mapping for node pve1.'),
    one('mapping missing on the target: migrate', kvm(node='pve2', vmid=793, migrate=True),
        real_failure="can't migrate to 'pve2': missing mapped devices usb0"),
    one('mapped pci device not live-capable: migrate', kvm(node='pve2', vmid=794, migrate=True, with_local_disks=True),
        real_failure="can't live migrate running VM which uses following mapped devices: hostpci0:gpu2"),
    one('pci device without host or mapping: update', kvm(node='pve1', vmid=795, update=True,
                                                          hostpci={'hostpci0': 'pcie=1'}),
        real_failure="either 'host' or 'mapping' must be set."),
    one('pci device changed on the node: start', kvm(node='pve1', vmid=796, state='started'),
        real_failure="PCI device mapping invalid (hardware probably changed): pci device '0000:05:00.0' not found"),
    one('mapped directory missing on the node: start', kvm(node='pve1', vmid=797, state='started'),
        real_failure='directory mapping invalid: Path /srv/gone does not exist'),
    one('legacy igd on a mapping with two devices on the node: start', kvm(node='pve1', vmid=799, state='started'),
        real_failure='legacy IGD assignment is not compatible with alternate devices'),
    one('pci host id the node lacks: start', kvm(node='pve1', vmid=789, state='started'),
        real_failure="no PCI device found for '03:00'"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS + HINTED_ROWS
CENSUS = {
    'pci mapping not on the node: start': ('R-power-160',),
    'two usb entries on the node: start': ('R-power-160',),
    'directory mapping not on the node: start': ('R-power-160',),
    'mapping missing on the target: migrate': ('R-migrate-102',),
    'mapped pci device not live-capable: migrate': ('R-migrate-160',),
    'pci device without host or mapping: update': ('R-config-160',),
    'pci device changed on the node: start': ('R-power-161',),
    'mapped directory missing on the node: start': ('R-power-96',),
    'legacy igd on a mapping with two devices on the node: start': ('R-power-157',),
    "restore: a hint's storage without space": ('R-create-130',),
    'pci host id the node lacks: start': ('R-power-172',),
}


def test_check_run_predicts_refusals_of_mapped_devices_and_restore_hints(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'mappings', VMS, mappings=MAPPINGS, node_devices=NODE_DEVICES,
                      users=USERS, vzdump_configs=BACKUPS)
    problems = run_batch(ansible, sim, seed, ROWS, env=MAPVIEW, writes_nothing=True)
    problems.update(run_batch(ansible, sim, seed, HINTED_ROWS, env=HINTED, writes_nothing=True))
    assert_rows_agree(summary, 'check-versus-real (issue 32, mappings and restore hints)', ROWS + HINTED_ROWS,
                      problems)


# The canary's privileges and none on /mapping: the lists hide every mapping from this token.
USERS['mapblind@pve'] = {'tokens': {'rows': '8e1a3c5f-mapblind-rows'}, 'acl': {'/': CANARY_PRIVILEGES}}
MAPBLIND = {'PROXMOX_USER': 'mapblind@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '8e1a3c5f-mapblind-rows'}
# (task name, the task's options, PVE's words for the mapping's missing entry) for a token that cannot see the mapping
HIDDEN = [
    ('hidden pci mapping: start', {'node': 'pve1', 'vmid': 790, 'state': 'started'},
     "PCI device mapping not found for 'gpu'"),
    ('hidden dir mapping: start', {'node': 'pve1', 'vmid': 792, 'state': 'started'}, 'No directory mapping for node pve1.'),
    ('hidden usb mapping: migrate', {'node': 'pve2', 'vmid': 793, 'migrate': True},
     "can't migrate to 'pve2': missing mapped devices usb0"),
]


def test_a_mapping_the_token_cannot_see_is_a_warning_naming_pve_s_refusal(ansible, sim, tmp_path):
    """A mapping this token holds none of Mapping.Modify, Use or Audit on is left out of its list (API2/Cluster/Mapping/
    *.pm `index`): whether the start or migration passes is not known, so the check run goes on and warns, in the
    form every such warning has (`PVE may refuse it: <PVE's words>`, docs/pve-semantics.md §52), with the words PVE
    gives for a mapping with no entry for the node (PCI.pm `parse_hostpci`, Dir.pm `find_on_current_node`,
    QemuMigrate.pm `prepare`); here the mappings have none, and the real run fails with those words."""
    seed = write_seed(tmp_path, 'mappings', VMS, mappings=MAPPINGS, node_devices=NODE_DEVICES, users=USERS)
    tasks = [{'name': name, 'delegate_to': 'localhost', 'ignore_errors': True, 'ferro.proxmox.proxmox_kvm': options}
             for name, options, _ in HIDDEN]
    play = [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': tasks}]
    runs = {}
    for mode in ('check', 'real'):
        sim.reset(seed)
        runs[mode] = ansible.run_playbook(play, check=mode == 'check', env=MAPBLIND)
    for name, _, words in HIDDEN:
        check, real = runs['check'].task(name)['result'], runs['real'].task(name)['result']
        assert check.get('changed') is True and not check.get('failed'), (name, check)
        assert any(w.endswith('PVE may refuse it: ' + words) for w in check.get('warnings') or ()), (name, check)
        assert not real.get('changed') and words in str(real.get('msg')), (name, real)


# The canary's privileges without VM.Backup (extractconfig's), with space on `local` only: a restore
# as VM 777 of VM 777's backup (its own, which check_volume_access lets this user restore) whose config this user
# cannot read.
OWN_BACKUP = 'local:backup/vzdump-qemu-777-2026_12_01-00_00_00.vma.zst'
OWN_BACKUPS = {OWN_BACKUP: BACKUPS[BACKUP].replace('100', '777')}
USERS['unhinted@pve'] = {'tokens': {'rows': '2c4e6a8b-unhinted-rows'},
                         'acl': {'/': [p for p in CANARY_PRIVILEGES if p not in ('VM.Backup', 'Datastore.AllocateSpace')],
                                 '/storage/local': ['Datastore.AllocateSpace']}}
UNHINTED = {'PROXMOX_USER': 'unhinted@pve', 'PROXMOX_TOKEN_ID': 'rows', 'PROXMOX_TOKEN_SECRET': '2c4e6a8b-unhinted-rows'}


def test_a_restore_whose_hints_cannot_be_read_is_a_warning_naming_pve_s_refusal(ansible, sim, tmp_path):
    """Without VM.Backup on the backup's VM this user cannot read the archive's config (VZDump.pm extractconfig), so
    the storages the restore task allocates on are not known: the check run goes on and warns, naming (§52) the
    refusal of `$parse_backup_hints` this user's privileges leave possible, here Datastore.AllocateSpace on a storage
    it lacks it on; the real run is refused so on the archive's `vmdata`."""
    seed = write_seed(tmp_path, 'mappings', VMS, mappings=MAPPINGS, users=USERS, vzdump_configs=OWN_BACKUPS)
    task = {'name': 'restore', 'delegate_to': 'localhost', 'ignore_errors': True,
            'ferro.proxmox.proxmox_kvm': {'node': 'pve1', 'vmid': 777, 'name': 'own-777', 'archive': OWN_BACKUP}}
    play = [{'name': 'e2e', 'hosts': 'localhost', 'gather_facts': False, 'tasks': [task]}]
    results = {}
    for mode in ('check', 'real'):
        sim.reset(seed)
        results[mode] = ansible.run_playbook(play, check=mode == 'check', env=UNHINTED).task('restore')['result']
    check, real = results['check'], results['real']
    assert check.get('changed') is True and not check.get('failed'), check
    words = 'PVE may refuse it: Permission check failed (/storage/(known after apply), Datastore.AllocateSpace)'
    assert any('allocates on are not known' in w and w.endswith(words) for w in check.get('warnings') or ()), check
    assert not real.get('changed'), real
    assert 'Permission check failed (/storage/vmdata, Datastore.AllocateSpace)' in str(real.get('msg')), real

"""Check versus real, issue 32 (runtime): refusals PVE meets only when it builds QEMU's command line or runs the
migration task, but that the config, the snapshots and the replication jobs tell before any write.

Each row runs the same play with `--check --diff` and for real, from the same pvesim state, and the two must agree
task by task (test_check_vs_real.py's `run_batch`); every row is a refusal, so the real run writes nothing. pvesim
refuses each as PVE does (tests/pvesim/tests/test_qemu_command.py, test_migrate_task.py; docs/pve-semantics.md §59):

1. A start: qemu-server QemuServer.pm `config_to_command` with QemuServer/USB.pm `get_usb_devices` (usb5 and above), QemuServer/Memory.pm `config`
   (hugepages need NUMA, a custom NUMA topology), `print_netdevice_full` (a virtio NIC's MTU), QemuServer/Virtiofs.pm
   `assert_virtiofs_config` (ACLs on Windows); the module predicts them in `pve::values::start`.
2. A migration: QemuMigrate.pm `prepare` (a job to the target marked for removal, local devices) and
   `scan_local_volumes` (a snapshot of a local volume); the module predicts them in `pve::migration`.
"""

from test_check_vs_real import _vm, assert_rows_agree, kvm, one, run_batch, write_seed

SNAP = {'s1': {'scsi0': 'local-lvm:vm-786-disk-0,size=4G', 'memory': '1024'}}

# Rows' VMs: 780-788 (stopped, their disks on local-lvm).
VMS = [
    _vm(780, 'row-780', hugepages='2'),
    _vm(781, 'row-781', numa=1, numa0='cpus=0,memory=512', numa1='cpus=1,memory=256'),
    _vm(782, 'row-782', net0='virtio=BC:24:11:00:07:82,bridge=vmbr0,mtu=500'),
    _vm(783, 'row-783', ostype='win11', virtiofs0='dirid=share,expose-acl=1'),
    _vm(784, 'row-784', usb0='host=1234:5678', serial0='/dev/ttyS0'),
    _vm(785, 'row-785'),
    dict(_vm(786, 'row-786', parent='s1'), snapshots=SNAP),
    _vm(787, 'row-787', numa=1, numa0='memory=1024'),
    _vm(788, 'row-788', ostype='other', usb5='spice'),
]
JOBS = [{'id': '785-0', 'guest': 785, 'type': 'local', 'target': 'pve2', 'schedule': '*/15', 'remove_job': 'full'}]

ROWS = [
    one('hugepages without numa: start', kvm(node='pve1', vmid=780, state='started'),
        real_failure='numa needs to be enabled to use hugepages'),
    one('numa nodes not adding up: start', kvm(node='pve1', vmid=781, state='started'),
        real_failure='total memory for NUMA nodes must be equal to vm static memory'),
    one('numa node without cpus: start', kvm(node='pve1', vmid=787, state='started'),
        real_failure='missing NUMA node0 cpus'),
    one('usb5 without qemu-xhci: start', kvm(node='pve1', vmid=788, state='started'),
        real_failure='using usb5 is only possible with machine type >= 7.1 and ostype l26 or windows > 7'),
    one('mtu below 576: start', kvm(node='pve1', vmid=782, state='started'),
        real_failure="netdev net0: MTU '500' is smaller than the IP minimum MTU '576'"),
    one('virtiofs acl on windows: start', kvm(node='pve1', vmid=783, state='started'),
        real_failure='Please disable ACLs for virtiofs on Windows VMs'),
    one('local devices: migrate', kvm(node='pve2', vmid=784, migrate=True),
        real_failure="can't migrate VM which uses local devices: serial0, usb0"),
    one('job marked for removal: migrate', kvm(node='pve2', vmid=785, migrate=True),
        real_failure='refusing to migrate replicated VM whose replication job is marked for removal'),
    one('snapshot on lvm-thin: migrate', kvm(node='pve2', vmid=786, migrate=True),
        real_failure="can't migrate local disk 'local-lvm:vm-786-disk-0': non-migratable snapshot exists"),
]

# Which rows of docs/refusals.md each case covers (tests/e2e/test_census.py).
CENSUS_ROWS = ROWS
CENSUS = {
    'hugepages without numa: start': ('R-power-93',),
    'numa nodes not adding up: start': ('R-power-93',),
    'numa node without cpus: start': ('R-power-93',),
    'usb5 without qemu-xhci: start': ('R-power-95',),
    'mtu below 576: start': ('R-power-94',),
    'virtiofs acl on windows: start': ('R-power-92',),
    'local devices: migrate': ('R-migrate-91',),
    'job marked for removal: migrate': ('R-migrate-100',),
    'snapshot on lvm-thin: migrate': ('R-migrate-91',),
}


def test_check_run_predicts_refusals_of_the_start_and_the_migration_task(ansible, sim, tmp_path, summary):
    seed = write_seed(tmp_path, 'runtime', VMS, replication=JOBS,
                      mappings={'dir': [{'id': 'share', 'map': ['node=pve1,path=/srv/share']}]})  # 783's (§64)
    problems = run_batch(ansible, sim, seed, ROWS, writes_nothing=True)
    assert_rows_agree(summary, 'check-versus-real (issue 32, runtime)', ROWS, problems)

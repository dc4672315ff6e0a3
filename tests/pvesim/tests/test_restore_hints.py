"""A backup's config and a restore's hints (docs/pve-semantics.md §64), as pvesim/restore_hints.py follows pve-manager
9.2.11 PVE/API2/VZDump.pm `extractconfig` (check_volume_access of the backup, then VM.Backup on the VM it is of) and
qemu-server 9.2.6 src/PVE/QemuServer.pm `$parse_backup_hints` (each storage the archive's `#qmdump#map:` lines or
cloud-init drives name, or the request's `storage`: `images` content, then Datastore.AllocateSpace but for root@pam)."""

import pytest

from pvesim.testing import PvesimError
from test_values import seed

from conftest import Q

BACKUP = 'local:backup/vzdump-qemu-100-2026_12_01-00_00_00.vma.zst'
CONFIG = ('#qmdump#map:scsi0:drive-scsi0:vmdata:raw:\n#qmdump#map:scsi1:drive-scsi1:isos:raw:\n'
          'memory: 1024\nscsi0: vmdata:100/vm-100-disk-0.raw,size=4G\nscsi1: isos:100/vm-100-disk-1.raw,size=1G\n')
PRIVS = ['VM.Allocate', 'VM.Audit', 'VM.Backup', 'VM.Config.Disk', 'Datastore.Audit']
TOKEN = 'restorer@pve!t=r-secret'


def _seed(sim, tmp_path):
    seed(sim, tmp_path, [], vzdump_configs={BACKUP: CONFIG})
    sim.add_user('restorer@pve', tokens={'t': 'r-secret'},
                 acl={'/': PRIVS, '/storage/local': ['Datastore.AllocateSpace']})


def test_extractconfig_gives_the_backup_s_config_to_whom_may_back_up_its_vm(sim, tmp_path):
    _seed(sim, tmp_path)
    assert sim.api('GET', '/nodes/pve1/vzdump/extractconfig', {'volume': BACKUP}, token=TOKEN) == CONFIG
    sim.add_user('nobackup@pve', tokens={'t': 'n-secret'},
                 acl={'/': ['VM.Audit', 'Datastore.Audit'], '/storage/local': ['Datastore.AllocateSpace']})
    with pytest.raises(PvesimError) as err:
        sim.api('GET', '/nodes/pve1/vzdump/extractconfig', {'volume': BACKUP}, token='nobackup@pve!t=n-secret')
    assert err.value.message == 'Permission check failed (/vms/100, VM.Backup)'


def test_a_restore_needs_space_on_every_storage_its_hints_name(sim, tmp_path):
    _seed(sim, tmp_path)
    with pytest.raises(PvesimError) as err:
        sim.api('POST', Q, {'vmid': 730, 'archive': BACKUP}, token=TOKEN)
    assert err.value.message == 'Permission check failed (/storage/vmdata, Datastore.AllocateSpace)'
    # the request's storage takes every drive; `isos` holds no images even for root@pam
    with pytest.raises(PvesimError) as err:
        sim.api('POST', Q, {'vmid': 730, 'archive': BACKUP, 'storage': 'isos'})
    assert err.value.message == "Content type 'images' is not available on storage 'isos'"

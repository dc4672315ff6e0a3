"""Pvesim: fakepve's FakePve with the qemu config, disk and power paths made faithful to PVE 9.2, put
together from one mixin per concern.

Everything in the mixins overrides or extends fakepve 0.5.0 (never copies it). Their docstrings refer to
docs/pve-semantics.md (§N) and to the PVE sources it cites: qemu-server 9.2.6 src/PVE/API2/Qemu.pm
(Qemu.pm) and src/PVE/QemuServer.pm (QemuServer.pm), pve-guest-common 6.0.2 src/PVE/AbstractConfig.pm,
pve-manager 9.2.11 PVE/API2/Cluster.pm and PVE/API2/Tasks.pm.
"""

from fakepve.server import FakePve

from .activation import ActivationMixin
from .admin import AdminMixin
from .agent import AgentMixin
from .base_volumes import BaseVolumesMixin
from .clone_migrate import CloneMigrateMixin
from .cluster import ClusterMixin
from .config_state import ConfigStateMixin
from .config_update import ConfigUpdateMixin
from .disk_calls import DiskCallsMixin
from .drive_rules import DriveRulesMixin
from .empty_values import EmptyValuesMixin
from .handler_perms import HandlerPermsMixin
from .hook_scsi import HookScsiMixin
from .hotplug import HotplugMixin
from . import key_order
from .key_order import KeyOrderMixin
from .lifecycle import LifecycleMixin
from .mappings import MappingsMixin
from .network import NetworkMixin
from .node_pci import NodePciMixin
from .node_qemu import NodeQemuMixin
from .permissions import PermissionsMixin
from .qemu_cpu import CpuModelsMixin
from .profile import ProfileMixin, ProfileTasksMixin
from .qemu_devices import QemuFormatMixin
from .replication import ReplicationMixin
from .restore_hints import RestoreHintsMixin, RestoreTaskMixin
from .run_state import RunStateMixin
from .snapshots import SnapshotsMixin
from .stale_lock import StaleLockMixin
from .storage_features import StorageFeaturesMixin
from .storage_types import StorageTypesMixin
from .tasks import TasksMixin
from .tfa import TfaMixin
from .validation import ValidationMixin, register_formats
from .values import ValuesMixin
from .volume_access import VolumeAccessMixin
from .volumes import VolumesMixin

register_formats()  # fakepve's check reads the formats it lacks from pve_formats.py


class Pvesim(HookScsiMixin, ActivationMixin, ProfileMixin, DriveRulesMixin, ReplicationMixin, MappingsMixin, NodePciMixin, NodeQemuMixin, RestoreHintsMixin, CpuModelsMixin, ValuesMixin, TasksMixin, ProfileTasksMixin, QemuFormatMixin, VolumeAccessMixin, VolumesMixin, BaseVolumesMixin, StorageTypesMixin, ConfigStateMixin, ConfigUpdateMixin, HotplugMixin,
             DiskCallsMixin, HandlerPermsMixin, LifecycleMixin, CloneMigrateMixin, NetworkMixin, AgentMixin, ClusterMixin,
             ValidationMixin, EmptyValuesMixin, TfaMixin, StaleLockMixin, SnapshotsMixin, KeyOrderMixin, AdminMixin,
             PermissionsMixin, RunStateMixin, StorageFeaturesMixin, RestoreTaskMixin, FakePve):
    """The simulated PVE: fakepve's server with PVE 9.2's qemu semantics, two-factor login (tfa.py)
    and the /_sim admin API. The mixins define disjoint methods; those that call super() reach
    fakepve's own."""

    def __init__(self, host='127.0.0.1', port=8006, seed=None, time_scale=0.05, key_order_seed=None, profile=None):
        super().__init__(user='root@pam', password='secret', host=host, port=port)
        self.time_scale = time_scale
        self.key_order_seed = key_order.initial_seed(key_order_seed)
        self._sim_init()
        self.profile_init(profile)  # profile.py: `none` unless the flag or the seed says `realistic`
        self.load_seed(seed)

    def _routes_pvesim(self):
        one = '/nodes/{node}/qemu/{vmid}'
        return [('PUT', one + '/resize', self._sim_resize), ('POST', one + '/move_disk', self._sim_move_disk),
                ('PUT', one + '/unlink', self._sim_unlink), ('GET', '/nodes/{node}/network', self._sim_network),
                ('POST', one + '/migrate', self._sim_migrate), ('GET', one + '/cloudinit/dump', self._sim_cloudinit_dump)]

"""The differential test's tasks: one module call drawn from a random number generator and a world.

Every module's options come from its spec as the stub renders it (plugins/modules/<name>.py
ARGUMENT_SPEC): `task(rng, world)` picks a module, a VM of the world (or a free vmid, or a name),
a state from the option's choices and a few more options, each with a plausible value for that
option (a storage of the world, a bridge it has, an ISO it holds, a size) or, less often, an
edge value (0, out of range, unknown storage, an empty string). An option the drawers below do
not know gets a value of its spec type, so a new option is exercised without a change here.
"""

import importlib.util
import os

from world import HOSTPCI, image_storages, interesting, iso_volumes, machine_type, vm_ids

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULES = ['proxmox_kvm', 'proxmox_disk', 'proxmox_nic', 'proxmox_vm_info']
WEIGHTS = [40, 28, 24, 8]
CONNECTION = {'api_host', 'api_port', 'api_user', 'api_password', 'api_otp', 'api_token_id', 'api_token_secret',
              'api_timeout', 'validate_certs', 'ca_path'}
# Options a scenario never draws: connection settings (the token comes from the world) and
# timeouts (a short one makes a task's outcome depend on the machine's speed, not on the plan).
NEVER = CONNECTION | {'timeout'}


def load_stub(name):
    spec = importlib.util.spec_from_file_location('ferro_stub_' + name, os.path.join(ROOT, 'plugins', 'modules',
                                                                                      name + '.py'))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


STUBS = dict((name, load_stub(name)) for name in MODULES)


def pick(rng, plausible, edge=(), p_edge=0.1):
    if edge and rng.random() < p_edge:
        return rng.choice(list(edge))
    return rng.choice(list(plausible))


class Drawer:
    """Values for one task's options, knowing the world."""

    def __init__(self, rng, world):
        self.rng, self.world = rng, world
        self.stores = image_storages(world) + ['nope-store']
        self.isos = iso_volumes(world) or ['local:iso/missing.iso']
        self.vmids = vm_ids(world)
        self.names = [v['name'] for v in world['vms']]
        self.interesting = interesting(world)

    def storage(self):
        return pick(self.rng, self.stores[:-1], ['nope-store', 'isos', 'local'], 0.08)

    def size(self):
        return pick(self.rng, ['1G', '2G', '4G', '8G', '+1G', '512M', '32G'], ['0', '1T', '-1G', '10X', '3'])

    def vmid(self):
        if self.interesting and self.rng.random() < 0.4:
            return self.rng.choice(self.interesting)
        return pick(self.rng, self.vmids, [150, 777, 99, 1000000000], 0.08)

    def value(self, module, option, spec):
        """A value for `option` of `module`, or its spec type's."""
        r = self.rng
        special = getattr(self, '%s_%s' % (module.replace('proxmox_', ''), option), None) or \
            getattr(self, 'any_' + option, None)
        if special is not None:
            return special()
        if spec.get('choices'):
            return r.choice(spec['choices'])
        kind = spec.get('type', 'str')
        if kind == 'bool':
            return r.random() < 0.5
        if kind == 'int':
            return pick(r, [0, 1, 2, 4, 64, 1024], [-1, 100000])
        if kind == 'float':
            return pick(r, [0.0, 1.5, 10.0], [-1.0])
        if kind == 'list':
            return pick(r, [['a'], ['a', 'b']], [[]])
        if kind == 'dict':
            return {}
        return pick(r, ['gen', '1', 'x=y'], [''])

    # --- options every module shares
    def any_vmid(self):
        return self.vmid()

    def any_name(self):
        return pick(self.rng, self.names + ['gen-new'], ['', 'bad name!', 'gen-twin'], 0.1)

    def any_node(self):
        return pick(self.rng, self.world['nodes'], ['pve9'], 0.1)

    def any_storage(self):
        return self.storage()

    def any_format(self):
        return pick(self.rng, ['raw', 'qcow2'], ['vmdk', 'qed', 'cloop', 'cow', 'qcow'], 0.2)

    # --- proxmox_kvm
    def kvm_state(self):
        return self.rng.choice(['present'] * 5 + ['absent', 'stopped', 'started', 'started', 'restarted', 'current',
                                                  'template', 'paused', 'hibernated'])

    def kvm_cores(self):
        return pick(self.rng, [1, 2, 4, 8], [0, 1025])

    def kvm_sockets(self):
        return pick(self.rng, [1, 2], [0, 5])

    def kvm_vcpus(self):
        return pick(self.rng, [1, 2, 4], [0, 64])

    def kvm_memory(self):
        return pick(self.rng, [512, 1024, 2048, 4096], [0, 16, 8388609])

    def kvm_balloon(self):
        return pick(self.rng, [0, 256, 1024, 2048], [8192, -1])

    def kvm_cpu(self):
        return pick(self.rng, ['host', 'x86-64-v2-AES', 'kvm64'], ['nope-cpu'])

    def kvm_tags(self):
        return pick(self.rng, [['web'], ['db', 'prod'], []], [['bad tag']])

    def kvm_description(self):
        return pick(self.rng, ['notes', 'generated', ''])

    def kvm_net(self):
        key = self.rng.choice(['net0', 'net1', 'net2'])
        plausible = ['virtio,bridge=vmbr0', 'e1000,bridge=vmbr1,tag=10', 'virtio,bridge=vmbr0,firewall=1']
        return {key: pick(self.rng, plausible, ['virtio,bridge=nope', 'virtio=zz,bridge=vmbr0'])}

    def kvm_scsi(self):
        key = self.rng.choice(['scsi0', 'scsi1', 'scsi2'])
        return {key: '%s:%d' % (self.storage(), self.rng.choice([1, 2, 4]))}

    def kvm_virtio(self):
        return {self.rng.choice(['virtio0', 'virtio1']): '%s:%d' % (self.storage(), self.rng.choice([1, 2]))}

    def kvm_sata(self):
        return {'sata%d' % self.rng.randrange(3): '%s:%d' % (self.storage(), 1)}

    def kvm_ide(self):
        plausible = [self.rng.choice(self.isos) + ',media=cdrom', 'none,media=cdrom', 'cdrom,media=cdrom']
        return {'ide2': pick(self.rng, plausible, ['isos:iso/missing.iso,media=cdrom'])}

    def kvm_boot(self):
        return pick(self.rng, ['order=scsi0;net0', 'order=ide2;scsi0', 'order=net0', 'cdn'], ['order=nope0'])

    def kvm_clone(self):
        templates = [v['name'] for v in self.world['vms'] if v.get('template')]
        return pick(self.rng, templates or self.names, self.names + ['no-such-vm'], 0.25)

    def kvm_newid(self):
        return pick(self.rng, [300, 301, 205], self.vmids, 0.2)

    def kvm_target(self):
        return self.any_node()

    def kvm_pool(self):
        return pick(self.rng, ['gen-pool'], ['nope-pool'], 0.3)

    def kvm_agent(self):
        return pick(self.rng, ['1', 'enabled=1', '0', 'enabled=1,fstrim_cloned_disks=1'], ['maybe'])

    def kvm_hotplug(self):
        return pick(self.rng, ['disk,network,usb', 'network', '0', '1'], ['nope'])

    def kvm_vga(self):
        return pick(self.rng, ['std', 'serial0', 'qxl'], ['nope'])

    def kvm_delete(self):
        return pick(self.rng, ['description', 'tags', 'onboot', 'net1', 'scsi1'], ['nope'])

    def kvm_efidisk0(self):
        return {'storage': self.storage(), 'efitype': self.rng.choice(['2m', '4m'])}

    def kvm_tpmstate0(self):
        return {'storage': self.storage()}

    def kvm_ipconfig(self):
        return {'ipconfig0': pick(self.rng, ['ip=dhcp', 'ip=10.0.0.5/24,gw=10.0.0.1'], ['ip=nope'])}

    def kvm_nameservers(self):
        return ['1.1.1.1']

    def kvm_searchdomains(self):
        return ['example.org']

    def kvm_revert(self):
        return pick(self.rng, ['description', 'memory', 'cores'], ['nope'])

    def kvm_snapname(self):
        return pick(self.rng, ['before-upgrade'], ['nope'], 0.3)

    def kvm_args(self):
        return '-no-reboot'

    def kvm_startup(self):
        return pick(self.rng, ['order=1', 'order=2,up=30'], ['nope'])

    def kvm_digest(self):
        return '0' * 40

    def kvm_ciuser(self):
        return 'admin'

    def kvm_cipassword(self):
        return 'gen-secret'

    def kvm_sshkeys(self):
        return 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGen gen@example'

    def kvm_cpulimit(self):
        return pick(self.rng, [0, 1, 2], [200])

    def kvm_cpuunits(self):
        return pick(self.rng, [100, 1024], [0, 300000])

    def kvm_shares(self):
        return pick(self.rng, [0, 1000], [60000])

    def kvm_migrate_downtime(self):
        return 1

    def kvm_migrate_speed(self):
        return 0

    def kvm_smbios(self):
        return 'uuid=5b0c2f4e-1111-4d3a-8a61-3c2f1e0d1111'

    def kvm_machine(self):
        return machine_type(self.rng) if self.rng.random() < 0.95 else 'nope'

    def kvm_keyboard(self):
        return 'en-us'

    def kvm_rng0(self):
        return 'source=/dev/urandom'

    def kvm_watchdog(self):
        return 'model=i6300esb'

    def kvm_archive(self):
        return 'local:backup/none.vma.zst'

    def kvm_hookscript(self):
        return 'local:snippets/hook.pl'

    def kvm_cicustom(self):
        return 'user=local:snippets/user.yml'

    def kvm_startdate(self):
        return 'now'

    def kvm_spice_enhancements(self):
        return 'foldersharing=1'

    def kvm_numa(self):
        return {'numa0': 'cpus=0,memory=512'}

    def kvm_serial(self):
        return {'serial0': 'socket'}

    def kvm_usb(self):
        return {'usb0': 'host=1234:5678'}

    def kvm_hostpci(self):
        return {self.rng.choice(['hostpci0', 'hostpci1']): self.rng.choice(HOSTPCI + ['0000:01:00.0'])}

    def kvm_parallel(self):
        return {'parallel0': '/dev/parport0'}

    def kvm_audio(self):
        return {'audio0': 'device=ich9-intel-hda,driver=none'}

    def kvm_virtiofs(self):
        return {'virtiofs0': 'share'}

    # --- proxmox_disk
    def disk_disk(self):
        return pick(self.rng, ['scsi0', 'scsi1', 'scsi2', 'virtio0', 'virtio1', 'sata0', 'ide2', 'ide0', 'efidisk0',
                               'unused0', 'tpmstate0'], ['scsi31', 'ide4', 'net0', 'unused1'])

    def disk_state(self):
        return self.rng.choice(['present'] * 4 + ['resized', 'resized', 'detached', 'moved', 'moved', 'absent'])

    def disk_create(self):
        return pick(self.rng, ['regular', 'regular', 'forced', 'disabled'])

    def disk_size(self):
        return self.size()

    def disk_iso_image(self):
        return pick(self.rng, self.isos + ['cdrom'], ['isos:iso/missing.iso'])

    def disk_media(self):
        return pick(self.rng, ['disk', 'cdrom'])

    def disk_import_from(self):
        return pick(self.rng, ['local:import/debian-13-genericcloud-amd64.qcow2'], ['local:import/missing.qcow2'])

    def disk_target_storage(self):
        return self.storage()

    def disk_target_vmid(self):
        return self.vmid()

    def disk_target_disk(self):
        return pick(self.rng, ['scsi3', 'scsi1', 'virtio2'], ['net0'])

    def disk_serial(self):
        return pick(self.rng, ['GEN0001'], ['bad serial!'])

    def disk_wwn(self):
        return pick(self.rng, ['0x5000c500a1b2c3d4'], ['nope'])

    def disk_bwlimit(self):
        return pick(self.rng, [0, 10240])

    def disk_queues(self):
        return pick(self.rng, [1, 4], [0, 17])

    # --- proxmox_nic
    def nic_interface(self):
        return pick(self.rng, ['net0', 'net1', 'net2'], ['net31', 'net32', 'eth0'])

    def nic_mac(self):
        return pick(self.rng, ['BC:24:11:AA:BB:CC', 'bc:24:11:aa:bb:cd'], ['zz:zz', '01:00:00:00:00:00'])

    def nic_bridge(self):
        return pick(self.rng, self.world['bridges'], ['vmbr9'])

    def nic_tag(self):
        return pick(self.rng, [1, 10, 4094], [0, 4095])

    def nic_trunks(self):
        return pick(self.rng, [[10, 20], [1]], [[0], [5000]])

    def nic_mtu(self):
        return pick(self.rng, [1, 1500, 9000], [100, 70000])

    def nic_queues(self):
        return pick(self.rng, [0, 2, 8], [65])

    def nic_rate(self):
        return pick(self.rng, [0.0, 10.0, 12.5], [-1.0])


# The options a module's tasks draw often (the rest of the spec is drawn now and then).
OFTEN = {
    'proxmox_kvm': ['cores', 'memory', 'balloon', 'sockets', 'cpu', 'onboot', 'protection', 'tags', 'description',
                    'net', 'scsi', 'ide', 'boot', 'node', 'update', 'clone', 'newid', 'full', 'storage', 'pool',
                    'agent', 'template', 'force', 'purge', 'vga', 'delete', 'ostype', 'bios', 'efidisk0',
                    'tpmstate0', 'ipconfig', 'ciuser', 'hotplug', 'revert', 'lock', 'target', 'migrate', 'skiplock',
                    'format', 'virtio', 'sata', 'vcpus', 'scsihw', 'machine'],
    'proxmox_disk': ['storage', 'size', 'format', 'create', 'iso_image', 'media', 'target_storage', 'target_vmid',
                     'target_disk', 'delete_moved', 'import_from', 'cache', 'discard', 'iothread', 'ssd', 'backup',
                     'ro', 'serial', 'replicate', 'aio'],
    'proxmox_nic': ['model', 'mac', 'bridge', 'tag', 'trunks', 'firewall', 'link_down', 'mtu', 'queues', 'rate'],
    'proxmox_vm_info': ['node', 'type', 'config', 'network', 'name'],
}
REQUIRED = {'proxmox_kvm': ['state'], 'proxmox_disk': ['disk', 'state'], 'proxmox_nic': ['interface', 'state'],
            'proxmox_vm_info': []}

NEEDS = {
    ('proxmox_kvm', 'present'): [('node', 0.85)],
    ('proxmox_disk', 'present'): [('storage', 0.6), ('size', 0.6)],
    ('proxmox_disk', 'resized'): [('size', 0.9)],
    ('proxmox_disk', 'moved'): [('target_storage', 0.6), ('target_vmid', 0.35)],
    ('proxmox_nic', 'present'): [('bridge', 0.7)],
}


def task(rng, world):
    """One task: {'module': name, 'args': {...}} (the task's arguments as a playbook would give them)."""
    module = rng.choices(MODULES, WEIGHTS)[0]
    spec = STUBS[module].ARGUMENT_SPEC
    d = Drawer(rng, world)
    args = {}
    who = rng.random()
    if module == 'proxmox_vm_info':
        if who < 0.5:
            args['vmid'] = d.vmid()
    elif who < 0.8:
        args['vmid'] = d.vmid()
    elif who < 0.92:
        args['name'] = d.any_name()
    else:
        args['vmid'] = d.vmid()
        args['name'] = d.any_name()
    if module == 'proxmox_kvm' and 'vmid' not in args and 'name' not in args:
        args['name'] = d.any_name()
    for option in REQUIRED[module]:
        args[option] = d.value(module, option, spec[option])
    if module == 'proxmox_kvm' and args.get('vmid') in d.interesting and rng.random() < 0.25:
        args['state'] = 'started'  # what these VMs hold is checked by a start (R-power-171, R-power-172, ...)
    # What the drawn state needs most of the time (a task a user would write), so that most
    # scenarios get past argument checking to the plan.
    state = args.get('state')
    for option, p in NEEDS.get((module, state), ()):
        if rng.random() < p and option not in args:
            args[option] = d.value(module, option, spec[option])
    if args.get('iso_image') is not None and rng.random() < 0.9:
        args['media'] = 'cdrom'
    others = [o for o in spec if o not in NEVER and o not in args]
    often = [o for o in OFTEN[module] if o in others]
    for _ in range(rng.choice([0, 1, 1, 2, 2, 3, 4])):
        pool = often if rng.random() < 0.85 else others
        option = rng.choice(pool)
        if option not in args:
            args[option] = d.value(module, option, spec[option])
    return {'module': module, 'args': args}

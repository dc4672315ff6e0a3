"""A stored drive parsed strictly, as qemu-server does before a clone or a disk move (docs/pve-semantics.md §65.1).

Sources: qemu-server 9.2.6 src/PVE/QemuServer/Drive.pm `parse_drive` (the config's drive schema
`$drivedesc_hash`, `$DROPPED_PROPERTIES` skipped, then its own checks of the throttling limits and of a CD-ROM);
pve-common src/PVE/JSONSchema.pm `parse_property_string`. The drive schema is PVE's published one
(schema_data.json, the config endpoint's `scsi[n]`, ...) without `import-from`, which only the API's
`$drivedesc_hash_with_alloc` has. Written from those sources, not from module_utils.
"""

from . import validation
from .pve_formats import FormatError

DROPPED = ('cyls', 'heads', 'secs', 'trans')
REQUIRES = (('mbps_max', 'mbps'), ('mbps_rd_max', 'mbps_rd'), ('mbps_wr_max', 'mbps_wr'), ('miops_max', 'miops'),
            ('miops_rd_max', 'miops_rd'), ('miops_wr_max', 'miops_wr'), ('bps_max_length', 'mbps_max'),
            ('bps_rd_max_length', 'mbps_rd_max'), ('bps_wr_max_length', 'mbps_wr_max'),
            ('iops_max_length', 'iops_max'), ('iops_rd_max_length', 'iops_rd_max'),
            ('iops_wr_max_length', 'iops_wr_max'))
EXCLUSIVE = (('mbps_rd', 'mbps'), ('mbps_wr', 'mbps'), ('iops_rd', 'iops'), ('iops_wr', 'iops'))


def _true(val):
    """Perl truth of a string."""
    return val is not None and val not in ('', '0')


def parse_drive(key, value):
    """Drive.pm parse_drive: (parsed dict or None, the `$@` a caller quotes: '' where it returns without dying)."""
    sch = validation._expanded('PUT /nodes/{node}/qemu/{vmid}/config').get(key)
    if not sch or 'keys' not in sch:
        return None, ''  # "invalid drive key"
    keys = {k: s for k, s in sch['keys'].items() if k != 'import-from'}
    parts = [p for p in str(value).split(',') if p.split('=', 1)[0] not in DROPPED or '=' not in p]
    try:
        res = validation.parse_property_string(keys, None, ','.join(parts), key)
    except FormatError as exc:
        return None, str(exc).rstrip('\n')
    for opt in ('bps', 'bps_rd', 'bps_wr'):
        if opt in res:
            if 'm' + opt in res:
                return None, ''  # "both $opt and m$opt specified"
            res['m' + opt] = '%.3f' % (int(res.pop(opt)) / (1024 * 1024.0))
    if any(_true(res.get(o)) and not _true(res.get(r)) for o, r in REQUIRES):
        return None, ''
    if any(_true(res.get(a)) and _true(res.get(b)) for a, b in EXCLUSIVE):
        return None, ''
    if res.get('media') == 'cdrom' and (_true(res.get('snapshot')) or _true(res.get('format'))
                                        or key.startswith('virtio')):
        return None, ''
    return res, ''

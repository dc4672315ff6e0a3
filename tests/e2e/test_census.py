"""docs/refusals.md, the census of PVE's refusals (issues 24 and 32): every row is marked predicted,
decidable or explained, ids are unique, every row marked predicted has a check-versus-real case (a
`CENSUS` dict of a `test_check_*.py` file, each case naming the ids it covers, whose names are
rows of that file's `CENSUS_ROWS`), every explained row says which class of condition no read can
tell, and every refusal site of the inventory (docs/refusals/sites.json, tools/refusals/inventory.py)
has a row while every row names a site (docs/refusals/map.json). Reads files only: no pvesim, no
playbook; the inventory is regenerated from the upstream sources only where they are (`PVE_SOURCES`,
default build/pve-sources)."""

import glob
import importlib
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, 'docs', 'refusals.md')
ROW = re.compile(r'^\| (R-[a-z]+-\d{2,3}) \|')
MARKS = ('predicted', 'decidable', 'explained')
# what an explained row's reason starts with (docs/refusals.md, "How to read the table")
CLASSES = ('runtime', 'storage-io', 'race', 'host', 'never-sent', 'handled', 'internal')
TOOLS = os.path.join(ROOT, 'tools', 'refusals')
SOURCES = os.environ.get('PVE_SOURCES') or os.path.join(ROOT, 'build', 'pve-sources')

sys.path.insert(0, TOOLS)
import mapping  # noqa: E402  (tools/refusals/mapping.py)
import inventory  # noqa: E402  (tools/refusals/inventory.py)


def census_rows(cell=5):
    """{id: a cell (the `--check` one unless told)} of every row of the census's tables."""
    rows, seen = {}, []
    with open(DOC, encoding='utf-8') as f:
        for line in f:
            found = ROW.match(line)
            if not found:
                continue
            cells = [c.strip() for c in line.strip().strip('|').split(' | ')]
            assert len(cells) == 7, 'row %s has %d cells, want 7: %r' % (found.group(1), len(cells), line)
            seen.append(found.group(1))
            rows[found.group(1)] = cells[cell]
    duplicates = sorted(set(i for i in seen if seen.count(i) > 1))
    assert not duplicates, 'census ids used twice: %s' % duplicates
    return rows


def test_every_census_row_is_predicted_decidable_or_explained(summary):
    rows = census_rows()
    assert rows, 'no census rows found in %s' % DOC
    odd = dict((i, mark) for i, mark in rows.items() if mark not in MARKS)
    assert not odd, 'rows neither predicted, decidable nor explained: %s' % odd
    count = dict((m, sum(1 for mark in rows.values() if mark == m)) for m in MARKS)
    data, _ = mapping.load()
    summary('census: %d rows, %d predicted, %d explained, %d decidable (not yet predicted); %d sites from the inventory'
            % (len(rows), count['predicted'], count['explained'], count['decidable'], len(data['sites'])))


def test_every_explained_row_says_which_condition_no_read_can_tell():
    how = census_rows(cell=6)
    bad = sorted(i for i, mark in census_rows().items()
                 if mark == 'explained' and not how[i].startswith(tuple(c + ':' for c in CLASSES)))
    assert not bad, 'explained rows whose reason starts with none of %s: %s' % (
        ', '.join(c + ':' for c in CLASSES), bad)


def test_every_refusal_site_has_a_row_and_every_row_a_site():
    rows = census_rows()
    data, rules = mapping.load()
    assert data['sites'], 'docs/refusals/sites.json lists no site'
    found, unmapped, used = mapping.assign(data, rules)
    by_id = dict((s['id'], s) for s in data['sites'])
    assert not unmapped, 'refusal sites no rule of docs/refusals/map.json maps to a census row:\n%s' % '\n'.join(
        '%s (%s:%d %s)' % (i, by_id[i]['file'], by_id[i]['line'], by_id[i]['template'][:80]) for i in unmapped)
    stale = [rule for k, rule in enumerate(rules['rules']) if k not in used]
    assert not stale, 'rules of docs/refusals/map.json that match no site: %s' % stale
    named = mapping.rows_to_sites(found)
    unknown = sorted((set(named) | set(rules['outside'])) - set(rows))
    assert not unknown, 'docs/refusals/map.json names ids docs/refusals.md does not have: %s' % unknown
    siteless = sorted(set(rows) - set(named) - set(rules['outside']))
    assert not siteless, 'census rows that name no refusal site of the inventory: %s' % siteless
    both = sorted(set(named) & set(rules['outside']))
    assert not both, 'rows both mapped to sites and listed as outside the sources: %s' % both


def test_the_inventory_was_read_at_the_census_commits():
    data, _ = mapping.load()
    commits = dict((s['repo'], s['commit']) for s in data['sources'])
    with open(DOC, encoding='utf-8') as f:
        text = f.read()
    for repo, commit in sorted(commits.items()):
        assert '| proxmox/%s |' % repo in text and '`%s`' % commit in text, \
            'sites.json was read from %s at %s, which docs/refusals.md does not name' % (repo, commit)


def test_the_inventory_covers_every_write_of_security_md():
    data, _ = mapping.load()
    wanted = set(inventory.write_endpoints(os.path.join(ROOT, 'SECURITY.md'))) - set(inventory.NOT_WRITES)
    covered = set((w['method'], w['path']) for w in data['writes'])
    missing = data['writes_without_handler']
    assert not missing, 'writes with no handler in the sources: %s' % missing
    assert covered == wanted, 'SECURITY.md\'s writes and the inventory\'s differ (run inventory.py --write): ' \
        'missing %s, extra %s' % (sorted(wanted - covered), sorted(covered - wanted))


def test_the_inventory_regenerates_exactly_from_the_sources():
    if not os.path.isdir(os.path.join(SOURCES, 'proxmox+qemu-server', 'repo')):
        pytest.skip('the upstream git mirrors are not here (%s; set PVE_SOURCES): the committed '
                    'docs/refusals/sites.json is checked against the census, not regenerated' % SOURCES)
    run = subprocess.run([sys.executable, os.path.join(TOOLS, 'inventory.py'), '--sources', SOURCES, '--check'],
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
    assert run.returncode == 0, run.stdout


def census_cases():
    """{module name: (its CENSUS, the names of its CENSUS_ROWS)} of every check-versus-real file that
    declares a CENSUS."""
    found = {}
    here = os.path.dirname(os.path.abspath(__file__))
    for path in sorted(glob.glob(os.path.join(here, 'test_check_*.py'))):
        module = importlib.import_module(os.path.basename(path)[:-3])
        if hasattr(module, 'CENSUS'):
            found[module.__name__] = (module.CENSUS, set(row.name for row in module.CENSUS_ROWS))
    return found


def test_every_predicted_row_has_a_check_versus_real_case():
    rows = census_rows()
    modules = census_cases()
    assert 'test_check_vs_real' in modules, 'the check-versus-real table declares no CENSUS: %s' % sorted(modules)
    covered = set()
    for name, (census, cases) in modules.items():
        unknown_cases = sorted(set(census) - cases)
        assert not unknown_cases, '%s: CENSUS names cases its CENSUS_ROWS do not have: %s' % (name, unknown_cases)
        covered.update(i for ids in census.values() for i in ids)
    unknown_ids = sorted(covered - set(rows))
    assert not unknown_ids, 'CENSUS names ids docs/refusals.md does not have: %s' % unknown_ids
    missing = sorted(i for i, mark in rows.items() if mark == 'predicted' and i not in covered)
    assert not missing, 'rows marked predicted without a check-versus-real case: %s' % missing
    not_predicted = sorted(i for i in covered if rows[i] != 'predicted')
    assert not not_predicted, 'check-versus-real cases name rows not marked predicted: %s' % not_predicted


PERL = r"""package PVE::Demo;
use base qw(PVE::Base);
use PVE::Exception qw(raise_param_exc);

my $helper = sub {
    my ($x) = @_;
    die "helper refuses $x\n" if $x =~ m/^\{die/;  # die "in a comment"
    return 1;
};

my sub lexical {
    my $doc = {
        description => <<EODESCR,
die "inside a heredoc"
EODESCR
    };
    raise_param_exc({ size => "too small" }) if $_[0] < 1;
}

sub outer {
    my ($class, $v) = @_;
    my @w = qw(die sub);
    $helper->($v);
    lexical($v);
    $class->inherited();
    die $@ if $@;
    my $msg = "set, then raised\n";
    die $msg if $v;
}
"""


def test_the_inventory_reads_perl_as_written():
    src = inventory.Sources(None, texts={('demo', 'Demo.pm'): PERL, ('demo', 'Base.pm'): (
        'package PVE::Base;\n\nsub inherited {\n    die "base refuses\\n";\n}\n')})
    assert sorted(src.by_package['PVE::Demo']) == ['$helper', 'lexical', 'outer']
    graph = inventory.Graph(src)
    outer = src.functions['PVE::Demo::outer']
    targets = sorted(t.qname for _, _, ts, _ in graph.resolve_calls(outer) for t in ts or [])
    assert targets == ['PVE::Base::inherited', 'PVE::Demo::$helper', 'PVE::Demo::lexical']
    found = dict((q, graph.sites(src.functions[q])) for q in src.functions)
    words = sorted((q, kind, t) for q, (sites, _) in found.items() for _, kind, t in sites)
    assert words == [('PVE::Base::inherited', 'die', 'base refuses\\n'),
                     ('PVE::Demo::$helper', 'die', 'helper refuses $x\\n'),
                     ('PVE::Demo::lexical', 'raise_param_exc', '{ size => "too small" }'),
                     ('PVE::Demo::outer', 'die', 'set, then raised\\n')]
    assert [t for _, t in found['PVE::Demo::outer'][1]] == ['$@']  # a re-raise, not a site

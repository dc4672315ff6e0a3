"""docs/refusals.md, the census of PVE's refusals (issue 24): every row is marked predicted or explained,
ids are unique, and every row marked predicted has a check-versus-real case: a `CENSUS` dict of a
`test_check_*.py` file (each case naming the ids it covers), whose names are rows of that file's
`CENSUS_ROWS`. Reads files only: no pvesim, no playbook."""

import glob
import importlib
import os
import re

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   'docs', 'refusals.md')
ROW = re.compile(r'^\| (R-[a-z]+-\d{2}) \|')


def census_rows():
    """{id: the `--check` cell} of every row of the census's tables."""
    rows, seen = {}, []
    with open(DOC, encoding='utf-8') as f:
        for line in f:
            found = ROW.match(line)
            if not found:
                continue
            cells = [c.strip() for c in line.strip().strip('|').split(' | ')]
            assert len(cells) == 7, 'row %s has %d cells, want 7: %r' % (found.group(1), len(cells), line)
            seen.append(found.group(1))
            rows[found.group(1)] = cells[5]
    duplicates = sorted(set(i for i in seen if seen.count(i) > 1))
    assert not duplicates, 'census ids used twice: %s' % duplicates
    return rows


def test_every_census_row_is_predicted_or_explained(summary):
    rows = census_rows()
    assert rows, 'no census rows found in %s' % DOC
    odd = dict((i, mark) for i, mark in rows.items() if mark not in ('predicted', 'explained'))
    assert not odd, 'rows neither predicted nor explained: %s' % odd
    predicted = sum(1 for mark in rows.values() if mark == 'predicted')
    summary('census: %d rows, %d predicted, %d explained' % (len(rows), predicted, len(rows) - predicted))


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

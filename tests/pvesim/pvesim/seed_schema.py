"""Seed files: where pvesim finds them (`seed_path`), and their check against seed.schema.json, at start and at
every reset: the first errors, each naming its field.

A small JSON Schema validator (standard library only) for the keywords seed.schema.json uses: type, properties,
patternProperties, additionalProperties, propertyNames, required, items, minItems, enum, pattern, minimum,
maximum, minLength, anyOf and local $ref. Users validate their seeds with `pvesim check-seed FILE`, or with any
JSON Schema tool against the same file (`pvesim schema` prints it).
"""

import json
import os
import re

SCHEMA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seed.schema.json')
# The seeds: tests/pvesim/seeds in a checkout, package data (pvesim/seeds) in an installed wheel (_build/backend.py).
SEEDS = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'seeds')
if not os.path.isdir(SEEDS):
    SEEDS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), 'seeds')
DEFAULT_SEED = os.path.join(SEEDS, 'default.json')
TYPES = {'object': dict, 'array': list, 'string': str, 'boolean': bool, 'null': type(None)}
MAX_ERRORS = 10


class SeedError(ValueError):
    """A seed that does not match the schema: `errors` is a list of (field, message)."""

    def __init__(self, source, errors):
        self.source = source
        self.errors = errors
        super().__init__('seed {0}: {1}'.format(source, '; '.join('{0}: {1}'.format(f, m) for f, m in errors)))


def seed_path(name):
    """'default' (or another name in seeds/), an absolute path or a seed file relative to the working directory."""
    if not name:
        return DEFAULT_SEED
    if os.path.isabs(name):
        return name
    if os.path.isfile(name):
        return os.path.abspath(name)
    candidate = os.path.join(SEEDS, name if name.endswith('.json') else name + '.json')
    return candidate


def schema():
    with open(SCHEMA_PATH, encoding='utf-8') as fh:
        return json.load(fh)


def _is_type(value, name):
    if name == 'integer':
        return isinstance(value, int) and not isinstance(value, bool)
    if name == 'number':
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, TYPES[name])


def _key(field, key):
    return '{0}.{1}'.format(field, key) if field and re.match(r'^[A-Za-z_][A-Za-z0-9_-]*$', key) else \
        '{0}[{1}]'.format(field, json.dumps(key)) if field else key


def _check(value, rule, field, root, errors):
    if '$ref' in rule:
        target = root
        for part in rule['$ref'].lstrip('#/').split('/'):
            target = target[part]
        rule = dict(target, **dict((k, v) for k, v in rule.items() if k != '$ref'))
    if 'anyOf' in rule:
        for option in rule['anyOf']:
            trial = []
            _check(value, option, field, root, trial)
            if not trial:
                break
        else:
            kinds = ' or '.join(o.get('type', '?') for o in rule['anyOf'])
            errors.append((field, 'expected {0}, got {1}'.format(kinds, json.dumps(value)[:60])))
            return
    if 'type' in rule and not _is_type(value, rule['type']):
        errors.append((field, 'expected {0}, got {1}'.format(rule['type'], json.dumps(value)[:60])))
        return
    if 'enum' in rule and value not in rule['enum']:
        errors.append((field, '{0} is not one of {1}'.format(json.dumps(value), ', '.join(map(json.dumps, rule['enum'])))))
    if isinstance(value, str):
        if 'minLength' in rule and len(value) < rule['minLength']:
            errors.append((field, 'must not be empty'))
        if 'pattern' in rule and not re.search(rule['pattern'], value):
            errors.append((field, '{0} does not match {1}'.format(json.dumps(value), rule['pattern'])))
    if _is_type(value, 'number'):
        if 'minimum' in rule and value < rule['minimum']:
            errors.append((field, '{0} is less than {1}'.format(value, rule['minimum'])))
        if 'maximum' in rule and value > rule['maximum']:
            errors.append((field, '{0} is more than {1}'.format(value, rule['maximum'])))
    if isinstance(value, list):
        if 'minItems' in rule and len(value) < rule['minItems']:
            errors.append((field, 'needs at least {0} item(s)'.format(rule['minItems'])))
        for i, item in enumerate(value):
            _check(item, rule.get('items', {}), '{0}[{1}]'.format(field, i), root, errors)
    if isinstance(value, dict):
        for name in rule.get('required', ()):
            if name not in value:
                errors.append((_key(field, name), 'is required'))
        props, patterns = rule.get('properties', {}), rule.get('patternProperties', {})
        for key, item in value.items():
            sub = _key(field, key)
            if 'propertyNames' in rule:
                _check(key, rule['propertyNames'], sub, root, errors)
            if key in props:
                _check(item, props[key], sub, root, errors)
                continue
            matched = [p for p in patterns if re.search(p, key)]
            for pattern in matched:
                _check(item, patterns[pattern], sub, root, errors)
            if matched:
                continue
            extra = rule.get('additionalProperties', True)
            if extra is False:
                known = ', '.join(sorted(props))
                errors.append((sub, 'unknown key (known here: {0})'.format(known)))
            elif isinstance(extra, dict):
                _check(item, extra, sub, root, errors)


def errors_of(seed):
    """The seed's errors as (field, message) pairs: the schema's, then the ones between fields."""
    root = schema()
    errors = []
    _check(seed, root, '', root, errors)
    if not errors:
        seen = {}
        for i, vm in enumerate(seed.get('vms', [])):
            if vm['vmid'] in seen:
                errors.append(('vms[{0}].vmid'.format(i), '{0} is already vms[{1}]'.format(vm['vmid'], seen[vm['vmid']])))
            seen.setdefault(vm['vmid'], i)
    return errors[:MAX_ERRORS]


def check_seed(seed, source):
    """Raise SeedError naming the fields of a seed that does not match seed.schema.json."""
    errors = errors_of(seed)
    if errors:
        raise SeedError(source, errors)
    return seed

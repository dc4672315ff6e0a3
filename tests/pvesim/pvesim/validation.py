"""The request check: every call to an endpoint in schema_data.json is checked against PVE's published API
schema as PVE checks it, before any effect (docs/pve-semantics.md §32).

PVE's order, which this follows: pve-http-server AnyEvent.pm `extract_params` / `decode_urlencoded` read
the form and the query (`name=` is the empty string, a bare `name` arrives without a value, i.e. undefined:
§74); pve-manager HTTPServer.pm `rest_handler` merges the URI's parameters (a differing
duplicate is refused) and proxies to the node; PVE::RESTHandler `handle` runs pve-common JSONSchema.pm
`validate` (check_object, check_prop, check_type, check_format, parse_property_string), whose failure is
HTTP 400 `Parameter verification failed.` with `errors: {param: message}`.

Independent of module_utils' checks (module_utils/src/pve/schema.rs, pveformat.rs) and of fakepve's:
written from the data file and PVE's sources, so one misreading cannot hide in both.
"""

import functools
import json
import os
import re
import urllib.parse

from fakepve import formats as fakepve_formats
from fakepve import schema as fakepve_schema
from fakepve.model import PveError
from fakepve.server import USER, error

from . import pve_formats
from .pve_formats import FormatError

DATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'schema_data.json')
API = '/api2/json'
NOT_ALLOWED = 'property is not defined in schema and the schema does not allow additional properties'
MISSING = 'property is missing and it is not optional'


@functools.lru_cache(maxsize=None)
def schema():
    """{'METHOD /path/{template}': method schema} from schema_data.json."""
    with open(DATA, encoding='utf-8') as fh:
        return json.load(fh)['methods']


def route(method, path):
    """(method schema, URI parameters) of a request path under /api2/json, or (None, None)."""
    segs = path.strip('/').split('/')
    for key, spec in schema().items():
        verb, template = key.split(' ', 1)
        tsegs = template.strip('/').split('/')
        if verb != method or len(tsegs) != len(segs):
            continue
        uri = {}
        for t, s in zip(tsegs, segs):
            if t.startswith('{'):
                uri[t[1:-1]] = urllib.parse.unquote(s)
            elif t != s:
                break
        else:
            return spec, uri
    return None, None


def template_of(method, path):
    """The path template of a request path whose endpoint is in schema_data.json."""
    spec, _uri = route(method, path)
    return next(k for k, v in schema().items() if v is spec).split(' ', 1)[1]


def decode_urlencoded(data):
    """AnyEvent.pm decode_urlencoded: pairs split on & or ; (empty pairs dropped); a repeated name becomes a list.
    Its `my ($k, $v) = split(/=/, $kv)` assigns to two variables, so Perl gives split a limit of 3, which keeps
    trailing empty fields (perlfunc `split`): `k=` is the empty string, `k=a=b` is `a`, and only a bare `k` is
    undefined (None). Checked by running the function under Perl 5.36, PVE 8's (docs/pve-semantics.md §74)."""
    out = {}
    for pair in re.split('[&;]', data or ''):
        if pair == '':
            continue  # the outer split: an empty pair names nothing
        fields = pair.split('=', 2)
        key = urllib.parse.unquote_plus(fields[0])
        val = urllib.parse.unquote_plus(fields[1]) if len(fields) > 1 else None
        if val is not None and key in out and out[key] is not None:
            old = out[key]
            val = (old if isinstance(old, list) else [old]) + [val]
        out[key] = val
    return out


def extract_params(method, query, content_type, body):
    """AnyEvent.pm extract_params: a PUT/POST body (JSON or form), then the query over it."""
    params = {}
    if method in ('PUT', 'POST') and body:
        if content_type == 'application/json':
            params = json.loads(body)
            if not isinstance(params, dict):
                raise ValueError('not an object')
        else:
            params = decode_urlencoded(body.decode('utf-8'))
    params.update(decode_urlencoded(query))
    params.pop('_dc', None)
    return params


def _perl_str(val):
    if isinstance(val, bool):
        return '1' if val else ''
    if isinstance(val, float) and val == int(val):
        return str(int(val))
    return str(val)


@functools.lru_cache(maxsize=None)
def pattern(perl):
    """JSONSchema.pm check_prop's `m/^$pattern$/` in Python: a qr// printed into the schema carries Perl's
    `(?^:...)` / `(?^i:...)`, which Python spells `(?:...)` / `(?i:...)`; `$` matches before a final
    newline in both."""
    return re.compile('^(?:' + re.sub(r'\(\?\^(\w*):', lambda m: '(?{0}:'.format(m.group(1)) if m.group(1)
                                      else '(?:', perl) + ')$')


def is_number(text):
    return re.fullmatch(r'[+-]?(\d+\.\d+|\d+\.|\.\d+|\d+)([eE][+-]?\d+)?', text) is not None


def check_type(kind, val):
    """JSONSchema.pm check_type: None when val is of the type, else PVE's message."""
    if not kind or kind == 'any':
        return None
    if kind in ('array', 'object'):
        ok = isinstance(val, list) if kind == 'array' else isinstance(val, dict)
        return None if ok else "type check ('{0}') failed".format(kind)
    if isinstance(val, (list, dict)):
        return "type check ('{0}') failed - got {1}".format(kind, 'ARRAY' if isinstance(val, list) else 'HASH')
    if isinstance(val, bool):
        # A JSON true/false is a JSON::PP::Boolean object: only a boolean takes it.
        return None if kind == 'boolean' else "type check ('{0}') failed - got JSON::PP::Boolean".format(kind)
    text = _perl_str(val)
    if kind == 'boolean':
        ok = text in ('0', '1')
    elif kind == 'integer':
        ok = re.fullmatch(r'[+-]?\d+', text) is not None
    elif kind == 'number':
        ok = is_number(text)
    else:
        ok = True
    return None if ok else "type check ('{0}') failed - got '{1}'".format(kind, text)


def check_format(fmt, text, path):
    """JSONSchema.pm check_format; raises FormatError. An unknown name is not checked (§32)."""
    if isinstance(fmt, dict):
        return parse_property_string(fmt, None, text, path)
    found = re.fullmatch(r'(.*?)(?:-(list|opt))?', fmt)
    name, kind = found.group(1), found.group(2)
    if name in pve_formats.HASH and kind is None:
        keys, validator = pve_formats.HASH[name]
        return parse_property_string(keys, validator, text, path)
    check = pve_formats.CODE.get(name)
    if check is None:
        return None
    if kind == 'list':
        for item in pve_formats.split_list(text):
            check(item)
    elif kind == 'opt':
        if text:
            check(text)
    else:
        check(text)
    return None


# The parameter a validated property-string format belongs to: fakepve's named checks are given no path, and
# PVE names a key's error under it (qemu-server QemuServer.pm $confdesc: `cpu` is the one pve-vm-cpu-conf).
FORMAT_PARAMETER = {'pve-vm-cpu-conf': 'cpu'}


def _fakepve_check(check):
    """A check that raises FormatError as fakepve's named checks answer: the message without the newline
    fakepve's schema adds back."""
    def named(text):
        try:
            check(text)
        except FormatError as exc:
            why = str(exc)
            return why[:-1] if why.endswith('\n') else why
        return None
    return named


def register_formats():
    """Put the formats of pve_formats.py that fakepve 0.5.0 does not define into fakepve's tables (idempotent;
    before fakepve first looks one up), so that fakepve's own check of a request (the endpoints outside
    schema_data.json, and again after this module's) reads them from the same definitions. A key schema
    without a validator goes in as one (fakepve parses it and makes its sample values from it); a validated
    one and a code format as a named check."""
    for name, (keys, validator) in pve_formats.HASH.items():
        if name in fakepve_formats.REGISTERED or name in fakepve_formats.NAMED:
            continue
        if validator is None:
            fakepve_formats.REGISTERED[name] = keys
        else:
            fakepve_formats.NAMED[name] = _fakepve_check(functools.partial(
                parse_property_string, keys, validator, path=FORMAT_PARAMETER.get(name, '')))
    for name, check in pve_formats.CODE.items():
        fakepve_formats.NAMED.setdefault(name, _fakepve_check(check))
    fakepve_schema.registered.cache_clear()


def parse_boolean(text):
    low = text.lower()
    return '1' if low in ('1', 'on', 'yes', 'true') else '0' if low in ('0', 'off', 'no', 'false') else None


def parse_property_string(keys, validator, text, path):
    """JSONSchema.pm parse_property_string: raises FormatError with `format error` and the key errors."""
    res = {}
    default_key = None
    for part in text.split(','):
        if re.fullmatch(r'\s*', part):
            continue
        pair = re.fullmatch(r'([^=]+)=(.+)', part, re.S)
        if pair:
            key, val = pair.group(1), pair.group(2)
            if key in res:
                raise FormatError('duplicate key in comma-separated list property: {0}\n'.format(key))
            sub = keys.get(key) or {}
            if sub.get('alias'):
                if sub.get('keyAlias'):
                    if sub['keyAlias'] in res:
                        raise FormatError("key alias '{0}' is already defined\n".format(sub['keyAlias']))
                    res[sub['keyAlias']] = key
                key = sub['alias']
                sub = keys.get(key) or {}
                if key in res:
                    raise FormatError("key '{0}' is already defined (via alias)\n".format(key))
            if not sub:
                raise FormatError('invalid key in comma-separated list property: {0}\n'.format(key))
            if sub.get('type') == 'boolean':
                val = parse_boolean(val) or val
            res[key] = val
        elif '=' not in part:
            if default_key:
                raise FormatError('duplicate key in comma-separated list property: {0}\n'.format(default_key))
            default_key = next((k for k, s in keys.items() if s.get('default_key')), None)
            if default_key is None:
                raise FormatError('value without key, but schema does not define a default key\n')
            if res.get(default_key):
                raise FormatError('duplicate key in comma-separated list property: {0}\n'.format(default_key))
            res[default_key] = (parse_boolean(part) or part) if keys[default_key].get('type') == 'boolean' else part
        else:
            raise FormatError('missing key in comma-separated list property\n')
    errors = {}
    check_object(path, keys, res, 0, errors)
    if errors:
        raise FormatError('format error\n' + ''.join('{0}: {1}\n'.format(k, errors[k]) for k in sorted(errors)))
    if validator:
        validator(res)
    return res


# check_prop's length and range steps, in its order: (field, broken(text, limit), words); a range applies
# only to a value that looks like a number.
LIMITS = (
    ('maxLength', lambda text, n: len(text) > int(n), 'value may only be {0} characters long'),
    ('minLength', lambda text, n: len(text) < int(n), 'value must be at least {0} characters long'),
    ('maximum', lambda text, n: is_number(text) and float(text) > float(n), 'value must have a maximum value of {0}'),
    ('minimum', lambda text, n: is_number(text) and float(text) < float(n), 'value must have a minimum value of {0}'),
)


def check_prop(val, sch, path, errors):
    """JSONSchema.pm check_prop, for the schema fields schema_data.json keeps."""
    if sch.get('alias'):
        return
    if val is None:
        if not sch.get('optional'):
            errors.setdefault(path, MISSING)
        return
    why = check_type(sch.get('type'), val)
    if why:
        errors.setdefault(path, why)
        return
    if isinstance(val, list):
        for n, item in enumerate(val):
            if 'items' in sch:
                check_prop(item, sch['items'], '{0}[{1}]'.format(path, n), errors)
        return
    if isinstance(val, dict):
        return
    text = _perl_str(val)
    fmt = sch.get('keys') or sch.get('format')
    if fmt:
        try:
            check_format(fmt, text, path)
        except FormatError as exc:
            errors.setdefault(path, 'invalid format - ' + str(exc))
            return
    if sch.get('pattern') and not pattern(sch['pattern']).search(text):
        errors.setdefault(path, 'value does not match the regex pattern')
        return
    for field, broken, words in LIMITS:
        if field in sch and broken(text, sch[field]):
            errors.setdefault(path, words.format(sch[field]))
            return
    if 'enum' in sch and text not in [str(e) for e in sch['enum']]:
        errors.setdefault(path, "value '{0}' does not have a value in the enumeration '{1}'".format(
            text, ', '.join(str(e) for e in sch['enum'])))


def expand(props):
    """The parameter schemas by name, `net[n]` as net0 .. net<count-1> (PVE's schema has each one)."""
    out = {}
    for name, sch in props.items():
        if name.endswith('[n]'):
            for n in range(sch.get('count', 0)):
                out['{0}{1}'.format(name[:-3], n)] = sch
        else:
            out[name] = sch
    return out


def check_object(path, props, values, additional, errors):
    """JSONSchema.pm check_object: each schema key, then `requires` and the keys the schema lacks."""
    for key, sch in props.items():
        check_prop(values.get(key), sch, '{0}.{1}'.format(path, key) if path else key, errors)
    for key in values:
        where = '{0}.{1}'.format(path, key) if path else key
        sch = props.get(key)
        if sch is not None:
            need = sch.get('requires')
            if need and values.get(need) is None:
                errors.setdefault('{0}.{1}'.format(path, need) if path else need,
                                  "missing property required by '{0}'".format(where))
        elif not additional:
            errors.setdefault(where, NOT_ALLOWED)


@functools.lru_cache(maxsize=None)
def _expanded(key):
    return expand(schema()[key]['properties'])


def validate(method, path, values):
    """{param: message} for a request (values include the URI's), {} when PVE's schema takes it; None when
    the endpoint is not in schema_data.json."""
    spec, uri = route(method, path)
    if spec is None:
        return None
    key = next(k for k, v in schema().items() if v is spec)
    props = _expanded(key)
    for name, val in list(values.items()):
        # RESTHandler.pm $normalize_legacy_param_formats: a repeated `-list` string is joined with commas
        sch = props.get(name) or {}
        if isinstance(val, list) and sch.get('type') == 'string' and str(sch.get('format', '')).endswith('-list'):
            values[name] = ','.join(_perl_str(v) for v in val)
    errors = {}
    check_object('', props, values, spec['additionalProperties'], errors)
    return errors


async def _as_pve_reads_the_form(request):
    """The request with its form body as decode_urlencoded reads it, for the handlers: fakepve's `params` reads a
    form with parse_qsl, which drops `name=`, where PVE's handler gets the empty string (§74). Given to them as
    the equivalent JSON body (extract_params reads both alike); an undefined value (a bare `name`), which the
    handlers read as absent (§32.3), is left out."""
    if request.method not in ('PUT', 'POST') or request.content_type in ('application/json', 'multipart/form-data'):
        return request
    body = await request.read()
    if not body:
        return request
    try:
        values = decode_urlencoded(body.decode('utf-8'))
    except UnicodeDecodeError:
        return request  # fakepve answers a malformed body itself
    as_json = json.dumps(dict((k, v) for k, v in values.items() if v is not None)).encode()
    headers = dict(request.headers)
    headers['Content-Type'] = 'application/json'
    headers['Content-Length'] = str(len(as_json))
    # aiohttp's `_read_bytes` caches the body `read()` answers from; `clone` refuses a request whose body was read
    read, request._read_bytes = request._read_bytes, None
    clone = request.clone(headers=headers)
    request._read_bytes, clone._read_bytes = read, as_json
    return clone


class ValidationMixin(object):
    """Mixin for Pvesim (after ClusterMixin, so an unknown node's address lookup fails first, as PVE's proxy
    does): runs `validate` on every request to an endpoint of schema_data.json before its handler."""

    async def _answer(self, request, handler, generic, path_node):
        if request.path.startswith(API + '/'):
            rel = request.path[len(API):]
            spec, uri = route(request.method, rel)
            if spec is not None:
                try:
                    refused = await self._schema_refusal(request, rel, uri)
                except PveError as exc:
                    return error(exc.status, exc.message, exc.errors)
                if refused is not None:
                    return refused
                request = await _as_pve_reads_the_form(request)
        return await super()._answer(request, handler, generic, path_node)

    def _method_permissions(self, request, values):
        """pve-manager HTTPServer.pm rest_handler checks the method's `permissions` (check_api2_permissions)
        before RESTHandler handle validates the parameters: a caller without them gets the 403 first. Done here
        for the config updates (§27.1), whose handlers do it first too; elsewhere the handler's own checks
        follow the schema's (docs/pve-semantics.md §32.1, not modelled)."""
        match = self.resolve(request, API)
        perms = (match.methods.get(request.method) or {}).get('permissions') if match else None
        if request.get(USER) is not None and perms and 'check' in perms and match.template.endswith('/config') \
                and request.method in ('PUT', 'POST'):
            self.check_permissions(request[USER], perms, dict((k, v) for k, v in values.items() if v is not None))

    async def _schema_refusal(self, request, rel, uri):
        """PVE's 400 for a request its schema refuses; else what an undefined value makes of it (empty_values.py),
        or None to let the handler run."""
        try:
            values = extract_params(request.method, request.query_string, request.content_type,
                                    await request.read())
        except (ValueError, UnicodeDecodeError):
            return None  # fakepve answers a malformed body itself
        for name, val in values.items():
            if name in uri and val is not None and uri[name] != _perl_str(val):
                return error(400, 'Parameter verification failed.', {
                    name: 'duplicate parameter (already defined in URI) with conflicting values!'})
        values.update(uri)
        self._method_permissions(request, values)
        errors = validate(request.method, rel, values)
        if errors:
            return error(400, 'Parameter verification failed.', errors)
        return await self._empty_value_answer(request, template_of(request.method, rel), uri, values)

"""The action plugin's handling of task arguments before validation (plugins/plugin_utils/native.py,
issue 27): the one rule for empty connection values, and plain values from ansible-core's types.
The same rule in the binary: module_utils/src/ansible/validate.rs `empty_is_unset`, and the e2e
runs of tests/e2e/test_vault_matrix.py on every supported ansible-core."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location('ferro_native', ROOT / 'plugins' / 'plugin_utils' / 'native.py')
native = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(native)

FALLBACKS = {'api_host': ['PROXMOX_HOST'], 'api_token_secret': ['PROXMOX_TOKEN_SECRET'], 'ca_path': ['PROXMOX_CA_PATH']}
KEYS = dict((k, k) for k in list(FALLBACKS) + ['name'])


def resolved(args, defaults, environ):
    asked = []

    def module_defaults():
        asked.append(True)
        return defaults
    args = native.empty_is_unset(FALLBACKS, KEYS, args, module_defaults)
    return native.resolve_env_fallbacks(FALLBACKS, args, environ), bool(asked)


def test_an_empty_connection_option_takes_module_defaults_then_the_environment():
    env = {'PROXMOX_HOST': 'from-env', 'PROXMOX_TOKEN_SECRET': 's-env'}
    args, asked = resolved({'api_host': '', 'api_token_secret': '', 'name': ''},
                           {'api_host': 'from-defaults', 'api_token_secret': ''}, env)
    # module_defaults' value wins over the environment; an empty default is unset too; a module
    # option without an environment fallback keeps ''.
    assert args == {'api_host': 'from-defaults', 'api_token_secret': 's-env', 'name': ''} and asked


def test_module_defaults_are_asked_only_for_an_empty_option_and_empty_variables_are_unset():
    args, asked = resolved({'api_host': 'h'}, {}, {'PROXMOX_CA_PATH': '', 'PROXMOX_TOKEN_SECRET': 's'})
    assert args == {'api_host': 'h', 'api_token_secret': 's'} and not asked


def test_plain_gives_json_types():
    assert native.plain({'a': ('x', 1), 'b': {'c': None}}) == {'a': ['x', 1], 'b': {'c': None}}

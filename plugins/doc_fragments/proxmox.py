# -*- coding: utf-8 -*-
# GENERATED from the option group's Rust spec (module_utils/src/ansible/) by `make stubs`; do not edit.
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Doc fragment ferro.proxmox.proxmox: the options every module that extends it shares, documented once."""

from __future__ import annotations


class ModuleDocFragment(object):

    DOCUMENTATION = r'''
options:
  api_host:
    description:
      - "The Proxmox VE host (name or address) to connect to. A port may follow as C(host:port). A URL such as
          C(https://pve1:8006/) is accepted too (scheme C(https) only, no path but C(/api2/json))."
      - "If not set, E(PROXMOX_HOST) is used: from the task's C(environment) (play, role, block or task, the innermost
          winning), else from the environment of C(ansible-playbook) when the module runs on the controller. An empty
          value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an empty
          variable): C(module_defaults), then the environment, then the default apply."
    type: str
    required: true
  api_port:
    description:
      - "The port of the Proxmox VE API. Defaults to 8006."
      - "If not set, E(PROXMOX_PORT) is used: from the task's C(environment) (play, role, block or task, the innermost
          winning), else from the environment of C(ansible-playbook) when the module runs on the controller. An empty
          value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an empty
          variable): C(module_defaults), then the environment, then the default apply."
    type: int
  api_user:
    description:
      - "The user to authenticate as, C(user@realm)."
      - "If not set, E(PROXMOX_USER) is used: from the task's C(environment) (play, role, block or task, the innermost
          winning), else from the environment of C(ansible-playbook) when the module runs on the controller. An empty
          value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an empty
          variable): C(module_defaults), then the environment, then the default apply."
    type: str
    required: true
  api_password:
    description:
      - "The user's password. When set, password (ticket) authentication is used instead of an API token."
      - "If not set, E(PROXMOX_PASSWORD) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: str
  api_otp:
    description:
      - "The current one-time password of O(api_user)'s second factor, for a password login (O(api_password)) of a user
          with two-factor authentication: Proxmox VE then answers the password with a challenge, which the module
          completes with this code."
      - "A bare TOTP code such as C(123456) is sent as C(totp:123456); a value with a type prefix (C(totp:),
          C(recovery:) for a recovery key) is sent as it is."
      - "Proxmox VE accepts a TOTP code for one login only, and every task logs in: a code an earlier task used is
          refused. For more than one task, use an API token (O(api_token_id)), which has no second factor."
      - "Not used with an API token, nor when the user has no second factor."
      - "If not set, E(PROXMOX_OTP) is used: from the task's C(environment) (play, role, block or task, the innermost
          winning), else from the environment of C(ansible-playbook) when the module runs on the controller. An empty
          value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an empty
          variable): C(module_defaults), then the environment, then the default apply."
    type: str
  api_token_id:
    description:
      - "The id of the API token (the part after C(!)), for token authentication."
      - "If not set, E(PROXMOX_TOKEN_ID) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: str
  api_token_secret:
    description:
      - "The secret of the API token."
      - "If not set, E(PROXMOX_TOKEN_SECRET) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: str
  api_timeout:
    description:
      - "Timeout of each HTTP request to the API, in seconds (not of Proxmox tasks: see the module's own C(timeout)
          where it has one)."
      - "If not set, E(PROXMOX_API_TIMEOUT) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: int
    default: 5
  validate_certs:
    description:
      - "Whether to verify the API's TLS certificate. Unlike community.proxmox 1.x, the default is C(true); set
          O(ca_path) for a private CA."
      - "If not set, E(PROXMOX_VALIDATE_CERTS) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: bool
    default: true
  ca_path:
    description:
      - "A PEM file with the CA certificate(s) to trust when O(validate_certs=true), for a Proxmox VE with a self-signed
          or private CA."
      - "If not set, E(PROXMOX_CA_PATH) is used: from the task's C(environment) (play, role, block or task, the
          innermost winning), else from the environment of C(ansible-playbook) when the module runs on the controller.
          An empty value counts as not set, wherever it comes from (a C(lookup('env', ...)) of an unset variable, an
          empty variable): C(module_defaults), then the environment, then the default apply."
    type: path
notes:
  - "Difference from community.proxmox: O(api_otp) is sent only when Proxmox VE asks for a second factor after the
      password, and a bare code is sent as C(totp:<code>) (community.proxmox sends it as it is with the password, which
      Proxmox VE 8 and 9 refuse). Proxmox VE accepts a TOTP code once, so each task needs a current code: use an API
      token for plays of more than one task."
'''

# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""ferro.proxmox.saved_plan: the end of a run with a saved plan, checked per host (docs/saved-plans.md)."""

from __future__ import annotations

DOCUMENTATION = r'''
name: saved_plan
author: "ferro.proxmox contributors (@ferro-proxmox)"
short_description: Check at the end of a run that the host applied its whole saved plan
description:
  - The last task of a playbook that saves and applies a ferro.proxmox plan (C(ferro_proxmox_plan) or
    C(FERRO_PROXMOX_PLAN) set). In the C(--check) run it notes that the playbook ends with this check and
    returns what the plan holds for the host.
  - In the real run it fails (so does the run) when a planned task of the host did not run or failed,
    naming them; otherwise it marks the host's part of the plan applied. A plan whose every host ran
    this check with nothing missing is used, and a later run refuses to apply it again.
  - Without a saved plan in the run it returns a message and checks nothing.
options: {}
'''

EXAMPLES = r'''
- name: The saved plan ran whole
  ansible.builtin.debug:
    msg: "{{ lookup('ferro.proxmox.saved_plan') }}"
'''

RETURN = r'''
_raw:
  description: One line saying what was checked.
  type: list
  elements: str
'''

import os

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase
from ansible_collections.ferro.proxmox.plugins.plugin_utils import plan_run, saved_plan


class LookupModule(LookupBase):

    def run(self, terms, variables=None, **kwargs):
        variables = variables or {}
        plan_dir = saved_plan.plan_location(variables, self._templar)
        host = str(variables.get('inventory_hostname'))
        if not plan_dir:
            return ['no ferro.proxmox saved plan in this run: nothing to check']
        try:
            if not plan_run.real_run():
                plan_run.mark_closing(plan_dir, host)
                host_dir = os.path.join(plan_dir, 'tasks', plan_run.host_digest(host))
                count = len([n for n in os.listdir(host_dir) if n.endswith('.json')]) if os.path.isdir(host_dir) else 0
                return ['ferro.proxmox saved plan %s: %d planned tasks for host %s' % (plan_dir, count, host)]
            missing, _applied = plan_run.close_host(plan_dir, host)
        except (saved_plan.PlanError, OSError) as e:
            raise AnsibleLookupError('ferro.proxmox saved plan %s: %s' % (plan_dir, e))
        if missing:
            raise AnsibleLookupError(
                'the saved plan at %s was not applied whole: planned tasks of host %s did not run or failed: %s. '
                'The plan cannot be applied again: make and approve a new plan' % (plan_dir, host, '; '.join(missing)))
        return ['ferro.proxmox saved plan %s: every planned task of host %s ran; the plan is used' % (plan_dir, host)]

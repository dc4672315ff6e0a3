# -*- coding: utf-8 -*-
# Copyright: ferro.proxmox contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Action plugin of ferro.proxmox.proxmox_disk: runs its native binary (see plugin_utils/native.py)."""

from __future__ import annotations

from ansible_collections.ferro.proxmox.plugins.plugin_utils.native import argument_check_main, native_action

ActionModule = native_action('proxmox_disk')
# For ansible-lint's `args` rule, which checks a task's options by calling this (see native.py).
main = argument_check_main('proxmox_disk')

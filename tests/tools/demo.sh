#!/usr/bin/env bash
# The steps of `make demo`, run by with_pvesim.py against a fresh simulated Proxmox VE: the whole
# life of three VMs from an inventory, each change previewed with --check --diff first.
set -euo pipefail
cd "$(dirname "$0")/../../playbooks"
playbook() { "$VENV_BIN/ansible-playbook" -i inventory/hosts.yml "$@"; }
step() { printf '\n\033[1m==> %s\033[0m\n' "$*"; }

step "1/7 Dry run of create_vms.yml on a cluster without the VMs: every change is predicted, nothing is written"
playbook create_vms.yml --check --diff
step "2/7 create_vms.yml for real: the same changes, now made (and every Proxmox task waited for)"
playbook create_vms.yml --diff
step "3/7 create_vms.yml again: nothing to do (changed=0)"
playbook create_vms.yml
step "4/7 Dry run of day2.yml: retag a VLAN (same MAC), grow a disk, move it to another storage, change a drive option"
playbook day2.yml --check --diff
step "5/7 day2.yml for real"
playbook day2.yml --diff
step "6/7 remove_vms.yml: stop (graceful, then forced) and remove, waiting until the VMs are gone"
playbook remove_vms.yml
step "7/7 The cluster afterwards, with each VM's MACs (demo.yml)"
playbook demo.yml

"""ansible-lint's `args` rule checks ferro.proxmox options (plugins/plugin_utils/native.py
argument_check_main): tests/lint/misspelled_options.yml has one mistake per task, each must be
reported on its line and name its option, and the valid task must not be."""

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VENV_BIN = Path(sys.executable).parent
PLAYBOOK = ROOT / 'tests/lint/misspelled_options.yml'


def lint(playbook):
    env = dict(os.environ, ANSIBLE_COLLECTIONS_PATH=str(ROOT / 'build/collections'), NO_COLOR='1')
    return subprocess.run(
        # As `make lint` runs it on playbooks/.
        [str(VENV_BIN / 'ansible-lint'), '--profile', 'production', '--offline', '--nocolor', '--format=pep8',
         '-c', str(ROOT / 'tests/lint/ansible-lint.yml'), '--project-dir', str(playbook.parent), str(playbook)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300, check=False)


def task_line(name):
    lines = PLAYBOOK.read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip() == '- name: %s' % name)


def test_args_rule_reports_each_mistake_naming_the_option():
    run = lint(PLAYBOOK)
    findings = {int(m.group(1)): m.group(2) for m in re.finditer(r'misspelled_options\.yml:(\d+): args\[module\](?:\[/\])?: (.*)', run.stdout)}
    print(run.stdout[-3000:], run.stderr[-2000:])
    assert run.returncode != 0
    expected = {
        'A misspelled option': 'Unsupported parameters for (basic.py) module: memroy.',
        'A value outside the choices': 'value of model must be one of:',
        'A misspelled sub-option': 'Unsupported parameters for (basic.py) module: efidisk0.eftype.',
        'A value that is not a number': "argument 'iops' is of type str and we were unable to convert to int",
    }
    for name, message in expected.items():
        line = task_line(name)
        assert line in findings, 'no args finding for task %r (line %d): %s' % (name, line, findings)
        assert message in findings[line], findings[line]
    assert task_line('A valid task') not in findings
    assert len(findings) == len(expected), findings

# Entry points for users, contributors and CI. `make demo` is the main job; `make test` is what CI runs.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
VENV_STAMP := $(VENV)/.installed

.PHONY: venv test test-pvesim

venv: $(VENV_STAMP)

$(VENV_STAMP): tests/requirements.txt tests/pvesim/pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e tests/pvesim
	touch $@

test-pvesim: venv
	$(VENV)/bin/python -m pytest -q tests/pvesim/tests

test: test-pvesim

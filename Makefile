# Entry points for users, contributors and CI. `make demo` is the main job; `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
VENV_STAMP := $(VENV)/.installed
VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
HOST_TRIPLE := $(shell rustc -vV | sed -n 's/^host: //p')
MODULES := $(notdir $(wildcard modules/*))
TARBALL := dist/ferro-proxmox-$(VERSION).tar.gz
COLLECTIONS_DIR := build/collections
PYTEST := $(VENV)/bin/python -m pytest
# The wheels of ansible-test's sanity virtualenvs (tests/sanity/requirements.txt), so that
# `make sanity` needs no network once `make venv` has run.
SANITY_WHEELS := $(VENV)/sanity-wheels

.PHONY: venv build stubs collection install test test-rust test-pvesim test-e2e lint lint-rust sanity test-collection changelog-lint demo clean

## venv: the pinned Python test environment (ansible-core, fakepve, pytest) and pvesim
venv: $(VENV_STAMP)

$(VENV_STAMP): tests/requirements.txt tests/sanity/requirements.txt tests/pvesim/pyproject.toml tests/pvesim/_build/backend.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e tests/pvesim
	rm -rf $(SANITY_WHEELS)
	$(VENV)/bin/pip download --quiet --disable-pip-version-check --no-deps -r tests/sanity/requirements.txt -d $(SANITY_WHEELS)
	touch $@

## build: the module binaries for this machine (target/release/<module>)
build:
	cargo build --release --locked --quiet

## stubs: regenerate plugins/modules/<name>.py from the Rust specs
stubs:
	FERRO_BLESS=1 cargo test --quiet --locked stub_matches_spec

## collection: the binaries for this machine and dist/ferro-proxmox-<version>.tar.gz
collection: build venv
	rm -rf build/collection && mkdir -p build/collection/native/$(HOST_TRIPLE) dist
	cp -r galaxy.yml README.md CHANGELOG.md changelogs meta plugins playbooks build/collection/
	rm -rf build/collection/changelogs/fragments build/collection/changelogs/.plugin-cache.yaml
	@# The sanity ignore files ship, as Galaxy's importer reads them (none today: tests/sanity/run.sh).
	@if ls tests/sanity/ignore-*.txt >/dev/null 2>&1; then \
	  mkdir -p build/collection/tests/sanity && cp tests/sanity/ignore-*.txt build/collection/tests/sanity/; fi
	find build/collection -name __pycache__ -prune -exec rm -rf {} +
	for m in $(MODULES); do install -m 0755 target/release/$$m build/collection/native/$(HOST_TRIPLE)/$$m; done
	$(VENV)/bin/ansible-galaxy collection build build/collection --output-path dist --force >/dev/null
	@echo "built $(TARBALL) ($$(du -h $(TARBALL) | cut -f1)) with binaries for $(HOST_TRIPLE)"

## install: the collection into build/collections (what the e2e tests and the demo use)
install: collection
	ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS_DIR) $(VENV)/bin/ansible-galaxy collection install $(TARBALL) -p $(COLLECTIONS_DIR) --force >/dev/null

## test: everything CI runs
test: lint-rust test-rust test-pvesim test-e2e lint sanity test-collection changelog-lint

test-rust:
	cargo test --locked --quiet --workspace

test-pvesim: venv
	$(PYTEST) -q tests/pvesim/tests

test-e2e: install
	$(PYTEST) -q tests/e2e

## test-collection: the collection as Galaxy and tools see it (tests/collection): metadata,
## build_ignore, ansible-lint's args rule on our options
test-collection: install
	$(PYTEST) -q tests/collection

## changelog-lint: the changelog fragments (changelogs/fragments, antsibull-changelog)
changelog-lint: venv
	$(VENV)/bin/antsibull-changelog lint

## demo: start pvesim on its default seed, walk three VMs through their life (tests/tools/demo.sh), stop it
demo: install
	VENV_BIN=$(abspath $(VENV)/bin) ANSIBLE_COLLECTIONS_PATH=$(abspath $(COLLECTIONS_DIR)) \
	  $(VENV)/bin/python tests/tools/with_pvesim.py -- tests/tools/demo.sh

## lint-rust: rustfmt (rustfmt.toml) and clippy with every warning an error, on the whole workspace
lint-rust:
	cargo fmt --all --check
	cargo clippy --workspace --all-targets --locked --quiet -- -D warnings

## lint: ansible-lint (production profile) on playbooks/; every finding fails it, the `args` rule's
## too (a task's options checked against the module's spec: tests/lint/ansible-lint.yml)
lint: install
	cd playbooks && ANSIBLE_COLLECTIONS_PATH=$(abspath $(COLLECTIONS_DIR)) ../$(VENV)/bin/ansible-lint --profile production --offline \
	  -c ../tests/lint/ansible-lint.yml --project-dir . .

## sanity: `ansible-test sanity` on the collection tarball, offline (tests/sanity/run.sh); ignore
## entries, each with its reason, in tests/sanity/ignore-<ansible-core minor>.txt
sanity: collection
	tests/sanity/run.sh $(TARBALL) $(VENV) $(SANITY_WHEELS) build/sanity

clean:
	rm -rf build dist target

# Release builds for every controller platform (make dist, make dist-test).
include mk/dist.mk
include mk/bench.mk
include mk/reliability.mk

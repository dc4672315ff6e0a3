# Entry points for users, contributors and CI. `make demo` is the main job; `make test` is what CI runs.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
PYTHON ?= python3
VENV := .venv
VENV_STAMP := $(VENV)/.installed
VERSION := $(shell sed -n 's/^version: *//p' galaxy.yml)
HOST_TRIPLE := $(shell rustc -vV | sed -n 's/^host: //p')
# The release tarball (make dist, mk/dist.mk).
TARBALL := dist/ferro-proxmox-$(VERSION).tar.gz
# The development tarball of `make collection` (install, sanity, bench, tests): its version says
# dev and which commit, <version>-dev+<git sha> (semver: a pre-release of <version>), in its name
# and in its MANIFEST.json, so that it cannot pass for the release.
GIT_SHA := $(shell git rev-parse --short HEAD 2>/dev/null || echo unknown)
DEV_VERSION := $(VERSION)-dev+$(GIT_SHA)
DEV_TARBALL := dist/ferro-proxmox-$(DEV_VERSION).tar.gz
COLLECTIONS_DIR := build/collections
PYTEST := $(VENV)/bin/python -m pytest
# The wheels of ansible-test's sanity virtualenvs (tests/sanity/requirements.txt), so that
# `make sanity` needs no network once `make venv` has run.
SANITY_WHEELS := $(VENV)/sanity-wheels
# pvesim's runtime wheels (its dependencies, pinned in tests/requirements.txt) and ansible-core's, so that the
# tests of the pvesim wheel install it into a fresh virtualenv with `pip install --no-index`, as a user's CI
# would (tests/pvesim/tests/test_user_package.py, tests/e2e/test_user_guide.py).
PVESIM_WHEELS := $(VENV)/pvesim-wheels
PVESIM_RUNTIME := fakepve aiohttp aiohappyeyeballs aiosignal attrs frozenlist multidict propcache yarl idna \
  cryptography cffi pycparser typing_extensions ansible-core Jinja2 MarkupSafe PyYAML packaging resolvelib
# The pytest-xdist workers of make test-pvesim and test-e2e, each with its own pvesim: one per
# core plus two, as the tests spend much of their time waiting (measured in bench/README.md).
TEST_WORKERS ?= $(shell echo $$(( $$(nproc) + 2 )))

.PHONY: help venv pvesim-dist build stubs collection install upstream-venv test test-beside-e2e test-rust test-meta test-pvesim test-pvesim-suite test-pvesim-cargo test-e2e lint lint-rust sanity test-collection changelog-lint demo clean

## help: this list: every target with a `## target: what it does` line in Makefile and mk/*.mk
help:
	@sed -n 's/^## \([A-Za-z0-9_-]*\): \(.*\)/\1\t\2/p' $(MAKEFILE_LIST) | \
	  while IFS=$$'\t' read -r target what; do printf '  make %-14s %s\n' "$$target" "$$what"; done

## venv: the pinned Python test environment (ansible-core, fakepve, pytest) and pvesim
venv: $(VENV_STAMP)

empty :=
space := $(empty) $(empty)

$(VENV_STAMP): tests/requirements.txt tests/sanity/requirements.txt tests/pvesim/pyproject.toml tests/pvesim/_build/backend.py
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	$(VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -e tests/pvesim
	rm -rf $(SANITY_WHEELS)
	$(VENV)/bin/pip download --quiet --disable-pip-version-check --no-deps -r tests/sanity/requirements.txt -d $(SANITY_WHEELS)
	rm -rf $(PVESIM_WHEELS)
	grep -iE '^($(subst $(space),|,$(strip $(PVESIM_RUNTIME))))==' tests/requirements.txt | \
	  $(VENV)/bin/pip download --quiet --disable-pip-version-check --no-deps -r /dev/stdin -d $(PVESIM_WHEELS)
	touch $@

## pvesim-dist: pvesim's wheel and sdist in dist/ (pvesim-<collection version>), for users' CI (docs/testing-with-pvesim.md)
PVESIM_WHEEL := dist/pvesim-$(VERSION)-py3-none-any.whl
PVESIM_SDIST := dist/pvesim-$(VERSION).tar.gz
pvesim-dist:
	mkdir -p dist && rm -f dist/pvesim-*.whl dist/pvesim-*.tar.gz
	cd tests/pvesim && $(PYTHON) -c 'import sys; sys.path.insert(0, "_build"); import backend; \
	  print("built dist/" + backend.build_wheel("../../dist")); print("built dist/" + backend.build_sdist("../../dist"))'

## build: the collection's one binary for this machine (target/release/ferro_proxmox, every module)
build:
	cargo build --release --locked --quiet -p ferro_proxmox

## stubs: regenerate plugins/modules/<name>.py from the Rust specs
stubs:
	FERRO_BLESS=1 cargo test --quiet --locked stub_matches_spec

## collection: dist/ferro-proxmox-<version>-dev+<git sha>.tar.gz, a development build with this machine's binary (the recipe of make dist: tools/dist/collection.sh)
collection: build venv
	rm -f dist/ferro-proxmox-*-dev+*.tar.gz
	@built=$$(COLLECTION_VERSION=$(DEV_VERSION) PYTHON=$(PYTHON) tools/dist/collection.sh build/collection dist $(HOST_TRIPLE)=target/release/ferro_proxmox); \
	set -- $$built; echo "built $$1 ($$2 bytes) with the binary for $(HOST_TRIPLE)"

## install: the collection into build/collections (what the e2e tests and the demo use)
install: collection
	ANSIBLE_COLLECTIONS_PATH=$(COLLECTIONS_DIR) $(VENV)/bin/ansible-galaxy collection install $(DEV_TARBALL) -p $(COLLECTIONS_DIR) --force >/dev/null

## test: everything CI runs: first the release build beside the Python environments (the test
## venv, community.proxmox's, the matrix edges'), which mostly wait on the package index while cargo
## keeps both cores busy; then the collection installed once; then the e2e suite, which spends much
## of its time waiting (pvesim's task times, slowed tasks, ansible-playbook's start), side by side
## with every other check in order (rustfmt, clippy, cargo test, the other suites, lint, sanity),
## niced so that the e2e suite's timing-sensitive tests keep the CPU they need (bench/README.md,
## "Where make test's time goes")
test: test-prepare
	$(MAKE) --no-print-directory -j1 install
	$(MAKE) --no-print-directory -j2 --output-sync=recurse $(TEST_BUILT) test-e2e test-beside-e2e

# What test-prepare and the line after it built: not rebuilt by the phases that name them (make -o)
TEST_BUILT := -o venv -o build -o collection -o install -o upstream-venv

# pvesim's own suite first and not niced: a few of its tests read a task while it runs (0.05 of
# its time), which a niced client on a busy machine may miss; then the rest, niced, one at a time
# (two at a time ended 35 s sooner, but starved the e2e suite's timing-sensitive tests: bench/README.md,
# "Where make test's time goes")
test-beside-e2e:
	$(MAKE) --no-print-directory -j1 $(TEST_BUILT) test-pvesim-suite
	nice -n 10 $(MAKE) --no-print-directory -j1 $(TEST_BUILT) lint-rust test-rust test-meta test-pvesim-cargo \
	  test-differential-short test-matrix-edges lint sanity test-collection changelog-lint

## test-prepare: the two preparation lines of make test side by side: the release build, the environments
test-prepare:
	$(MAKE) --no-print-directory -j2 --output-sync=recurse build test-prepare-envs

test-prepare-envs:
	$(MAKE) --no-print-directory -j1 venv upstream-venv test-matrix-edges-venvs

## test-rust: cargo test on the whole workspace
test-rust:
	cargo test --locked --quiet --workspace

## test-meta: the tests about the tests (tests/meta): every Python test function can fail
test-meta: venv
	$(PYTEST) -q tests/meta

## test-pvesim: the simulator's own tests (tests/pvesim/tests, on TEST_WORKERS pytest-xdist workers,
## one pvesim each), then against one pvesim: the preflight library's refusals compared with the
## ones pvesim gives for the same write sent for real, and each write of a real run schema-checked once
test-pvesim: test-pvesim-suite test-pvesim-cargo

test-pvesim-suite: venv
	$(PYTEST) -q -n $(TEST_WORKERS) tests/pvesim/tests

test-pvesim-cargo: venv
	$(VENV)/bin/python tests/tools/with_pvesim.py -- cargo test --locked --quiet -p module_utils -p ferro_proxmox \
	  --test preflight_pvesim --test schema_once_pvesim -- --ignored

## upstream-venv: community.proxmox 2.0.0's virtualenv under build/bench (bench/venv.sh: Python 3.12
## and every package pinned; fails rather than building another version), the baseline of the
## upstream scenario (tests/e2e) and of make bench
upstream-venv:
	bench/venv.sh build/bench >/dev/null

## test-e2e: the ansible-playbook runs of the installed collection against pvesim (tests/e2e), the
## tests spread over TEST_WORKERS pytest-xdist workers (one pvesim each; conftest.py keeps a few files
## on one worker), then the whole-suite audits alone (endpoints called, keys returned), over the
## request logs the workers left in build/e2e-requests
E2E_REQUEST_LOG := build/e2e-requests
E2E_AUDIT_NAME := test_whole_suite_
E2E_AUDIT := tests/e2e/test_hostile_paths.py::$(E2E_AUDIT_NAME)calls_only_documented_endpoints \
  tests/e2e/test_returns_documented.py::$(E2E_AUDIT_NAME)returns_only_documented_keys
test-e2e: install upstream-venv
	rm -rf $(E2E_REQUEST_LOG)
	FERRO_TARBALL=$(DEV_TARBALL) FERRO_E2E_REQUEST_LOG=$(abspath $(E2E_REQUEST_LOG)) \
	  $(PYTEST) -q -n $(TEST_WORKERS) -k "not $(E2E_AUDIT_NAME)" tests/e2e
	FERRO_E2E_REQUEST_LOG=$(abspath $(E2E_REQUEST_LOG)) $(PYTEST) -q $(E2E_AUDIT)

## test-collection: the collection as Galaxy and tools see it (tests/collection): metadata,
## build_ignore, ansible-lint's args rule on our options
test-collection: install
	FERRO_TARBALL=$(DEV_TARBALL) $(PYTEST) -q tests/collection

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
	tests/sanity/run.sh $(DEV_TARBALL) $(VENV) $(SANITY_WHEELS) build/sanity

## clean: remove build/, dist/ and target/
clean:
	rm -rf build dist target

# Release builds for every controller platform (make dist, make dist-test).
include mk/dist.mk
include mk/bench.mk
include mk/reliability.mk
include mk/matrix.mk
include mk/differential.mk

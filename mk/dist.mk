# Release builds for every supported controller platform: `make dist`, `make dist-test` (issue 10).
#
#   make dist-tools   the cross toolchain: the Rust std of each target (rustup), and Zig with
#                     cargo-zigbuild (PyPI, pinned in tools/dist/requirements.txt) in build/tools/venv
#   make dist         every module, release and static, for each of DIST_TRIPLES, laid out as
#                     native/<triple>/<module> in build/dist/collection, packed into $(TARBALL)
#   make dist-sizes   the size of each shipped binary and of the tarball
#   make dist-test    that tarball: layout and binary headers, the aarch64 binary under
#                     qemu-aarch64 against pvesim, then the e2e suite with the x86_64 musl binary,
#                     and an execution-environment build context from it with ansible-builder
#                     (tools/ee/check.sh; ansible-builder pinned in tools/ee/requirements.txt,
#                     installed into $(EE_VENV))
#
# `make collection` (make test, make demo) writes a tarball for this machine only to the same
# path, $(TARBALL): run `make dist` again after it before publishing or `make dist-test`.
# DIST_TRIPLES can be narrowed (`make dist DIST_TRIPLES=aarch64-unknown-linux-musl`) or use the two
# macOS triples instead of universal2; any triple in tools/dist/binfmt.py's EXPECTED table works.

DIST_TRIPLES ?= x86_64-unknown-linux-musl aarch64-unknown-linux-musl universal2-apple-darwin
DIST_TOOLS := build/tools
DIST_TREE := build/dist/collection
# Galaxy rejects collections larger than 20 MB; `make dist` warns from 85% of that on.
DIST_MAX_BYTES := 20000000
DIST_WARN_BYTES := 17000000
# The dist build that runs on this machine (x86_64-unknown-linux-musl on an x86_64 Linux one).
DIST_HOST_TRIPLE := $(subst -linux-gnu,-linux-musl,$(HOST_TRIPLE))
# The oldest macOS the binaries run on (Apple silicon's first); without it Zig stamps macOS 15.
# tools/dist/binfmt.py's MACOS_MIN checks it.
DIST_MACOS_MIN := 11.0
# cargo-zigbuild runs `python -m ziglang` from the tools venv, never a zig found elsewhere. (The
# macOS builds warn that `xcrun` is missing: Zig brings the macOS libc stubs, no SDK is needed.)
DIST_ENV := PATH="$(CURDIR)/$(DIST_TOOLS)/venv/bin:$$PATH" \
  CARGO_ZIGBUILD_PYTHON_PATH="$(CURDIR)/$(DIST_TOOLS)/venv/bin/python" \
  MACOSX_DEPLOYMENT_TARGET=$(DIST_MACOS_MIN)

EE_VENV := $(DIST_TOOLS)/ee-venv

.PHONY: dist-tools dist dist-sizes dist-test

$(EE_VENV)/.installed: tools/ee/requirements.txt
	rm -rf $(EE_VENV) && $(PYTHON) -m venv $(EE_VENV)
	$(EE_VENV)/bin/pip install --quiet --disable-pip-version-check --no-deps -r tools/ee/requirements.txt
	touch $@

dist-tools:
	PYTHON=$(PYTHON) tools/dist/toolchain.sh build $(DIST_TRIPLES)

dist: dist-tools venv
	@[ -n "$(strip $(MODULES))" ] || { echo "make dist: no modules under modules/" >&2; exit 1; }
	rm -f $(TARBALL)
	@for t in $(DIST_TRIPLES); do \
	  echo "dist: cargo zigbuild --release --target $$t ($(MODULES))"; \
	  $(DIST_ENV) cargo zigbuild --release --locked --target $$t $(addprefix -p ,$(MODULES)) \
	    || { echo "make dist: the build for $$t failed (see above). 'make dist-tools' installs its toolchain." >&2; exit 1; }; \
	done
	rm -rf $(DIST_TREE) && mkdir -p $(DIST_TREE) dist
	cp -r galaxy.yml README.md CHANGELOG.md meta plugins playbooks $(DIST_TREE)/
	find $(DIST_TREE) -name __pycache__ -prune -exec rm -rf {} +
	@for t in $(DIST_TRIPLES); do for m in $(MODULES); do \
	  [ -f target/$$t/release/$$m ] || { echo "make dist: cargo built no target/$$t/release/$$m" >&2; exit 1; }; \
	  install -D -m 0755 target/$$t/release/$$m $(DIST_TREE)/native/$$t/$$m; \
	done; done
	$(PYTHON) tools/dist/binfmt.py check $(DIST_TREE)/native
	$(VENV)/bin/ansible-galaxy collection build $(DIST_TREE) --output-path dist --force >/dev/null
	@$(MAKE) --no-print-directory dist-sizes
	@size=$$(stat -c %s $(TARBALL)); [ $$size -lt $(DIST_MAX_BYTES) ] || \
	  { echo "make dist: $(TARBALL) is $$size bytes, over Galaxy's limit of $(DIST_MAX_BYTES)" >&2; exit 1; }; \
	[ $$size -lt $(DIST_WARN_BYTES) ] || echo "make dist: warning: $(TARBALL) is $$size bytes," \
	  "$$((size * 100 / $(DIST_MAX_BYTES)))% of Galaxy's limit of $(DIST_MAX_BYTES) bytes" >&2
	@echo "built $(TARBALL) for: $(DIST_TRIPLES)"

dist-sizes:
	@[ -f $(TARBALL) ] && [ -d $(DIST_TREE)/native ] || { echo "make dist-sizes: run 'make dist' first" >&2; exit 1; }
	@$(PYTHON) tools/dist/binfmt.py sizes $(DIST_TREE)/native
	@printf '%9d  %s\n' $$(stat -c %s $(TARBALL)) $(TARBALL)

dist-test: venv $(EE_VENV)/.installed
	tools/dist/toolchain.sh test
	@[ -f $(TARBALL) ] || { echo "make dist-test: no $(TARBALL): run 'make dist' first" >&2; exit 1; }
	@others=$$(ls dist/ferro-proxmox-*.tar.gz | grep -vxF $(TARBALL) || true); [ -z "$$others" ] || \
	  { echo "make dist-test: tests/e2e installs the newest dist/ferro-proxmox-*.tar.gz; remove $$others" >&2; exit 1; }
	FERRO_DIST_TARBALL=$(TARBALL) FERRO_DIST_TRIPLES="$(DIST_TRIPLES)" $(PYTEST) -q tests/dist
	@# tests/e2e installs $(TARBALL) (its conftest takes the newest dist/ferro-proxmox-*.tar.gz), and
	@# test_vm_info.py also runs the bare binary from build/collection/native/ (the `make collection`
	@# tree, rebuilt from scratch by every `make collection`): give it this machine's dist binaries.
	@[ -d $(DIST_TREE)/native/$(DIST_HOST_TRIPLE) ] || { echo "make dist-test: no $(DIST_TREE)/native/$(DIST_HOST_TRIPLE): run 'make dist' first" >&2; exit 1; }
	rm -rf build/collection && mkdir -p build/collection/native
	cp -a $(DIST_TREE)/native/$(DIST_HOST_TRIPLE) build/collection/native/
	$(PYTEST) -q tests/e2e
	tools/ee/check.sh $(EE_VENV) $(VENV) $(TARBALL) build/ee

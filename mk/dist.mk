# Release builds for every supported controller platform: `make dist`, `make dist-test` (issue 10).
#
#   make dist-tools   the cross toolchain: the Rust std of each target (rustup), and Zig with
#                     cargo-zigbuild (PyPI, pinned in tools/dist/requirements.txt) in build/tools/venv
#   make dist         the multi-call binary (crate multicall/, every module in one), release and
#                     static, for each of DIST_TRIPLES; tools/dist/collection.sh lays it out as
#                     native/<triple>/ferro_proxmox plus a link per module in build/dist/collection
#                     and packs $(TARBALL); fails, removing it, when it is over DIST_MAX_BYTES;
#                     then pvesim's wheel and sdist next to it (make pvesim-dist), for users who test
#                     their playbooks without a cluster (docs/testing-with-pvesim.md)
#   make dist-sizes   the size of each shipped binary and of the tarball
#   make dist-test    that tarball: layout and binary headers, the aarch64 binary under
#                     qemu-aarch64 against pvesim, then the e2e suite with the x86_64 musl binary,
#                     and an execution-environment build context from it with ansible-builder
#                     (tools/ee/check.sh; ansible-builder pinned in tools/ee/requirements.txt,
#                     installed into $(EE_VENV))
#
# `make collection` (make test, make demo) packs a tarball for this machine only with the same
# recipe, as a development build: version $(DEV_VERSION), $(DEV_TARBALL) (Makefile); remove it
# before `make dist-test`. DIST_TRIPLES can be narrowed (`make dist DIST_TRIPLES=aarch64-unknown-linux-musl`)
# or use the two macOS triples instead of universal2; any triple in tools/dist/binfmt.py's
# EXPECTED table works.

DIST_TRIPLES ?= x86_64-unknown-linux-musl aarch64-unknown-linux-musl universal2-apple-darwin
DIST_TOOLS := build/tools
DIST_TREE := build/dist/collection
# The size budget: half of Galaxy's 20 MB limit on a collection, so that more modules and
# platforms still fit. `make dist` fails above it; tests/dist checks it again.
DIST_MAX_BYTES := 10000000
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

## dist-tools: the cross toolchain of make dist (rustup targets, Zig and cargo-zigbuild)
dist-tools:
	PYTHON=$(PYTHON) tools/dist/toolchain.sh build $(DIST_TRIPLES)

## dist: the release tarball, every platform of DIST_TRIPLES; fails over the size budget
dist: dist-tools venv
	rm -f $(TARBALL)
	@for t in $(DIST_TRIPLES); do \
	  echo "dist: cargo zigbuild --release --target $$t -p ferro_proxmox"; \
	  $(DIST_ENV) cargo zigbuild --release --locked --target $$t -p ferro_proxmox \
	    || { echo "make dist: the build for $$t failed (see above). 'make dist-tools' installs its toolchain." >&2; exit 1; }; \
	done
	PYTHON=$(PYTHON) tools/dist/collection.sh $(DIST_TREE) dist \
	  $(foreach t,$(DIST_TRIPLES),$(t)=target/$(t)/release/ferro_proxmox)
	@$(MAKE) --no-print-directory dist-sizes
	@size=$$(stat -c %s $(TARBALL)); \
	if [ $$size -gt $(DIST_MAX_BYTES) ]; then \
	  rm -f $(TARBALL); \
	  echo "make dist: $(TARBALL) was $$size bytes, over the size budget of $(DIST_MAX_BYTES) bytes" \
	    "(half of Galaxy's 20 MB limit; DIST_MAX_BYTES in mk/dist.mk): removed it, see the sizes above" >&2; exit 1; \
	fi; \
	echo "built $(TARBALL): $$size bytes, $$((size * 100 / $(DIST_MAX_BYTES)))% of the $(DIST_MAX_BYTES)-byte budget, for: $(DIST_TRIPLES)"
	@$(MAKE) --no-print-directory pvesim-dist

## dist-sizes: each shipped binary's size and the tarball's, in bytes
dist-sizes:
	@[ -f $(TARBALL) ] && [ -d $(DIST_TREE)/native ] || { echo "make dist-sizes: run 'make dist' first" >&2; exit 1; }
	@$(PYTHON) tools/dist/binfmt.py sizes $(DIST_TREE)/native
	@printf '%9d  %s\n' $$(stat -c %s $(TARBALL)) $(TARBALL)

## dist-test: the release tests on the dist tarball (layout, headers, aarch64 under qemu, e2e, execution environment)
dist-test: venv $(EE_VENV)/.installed
	tools/dist/toolchain.sh test
	@[ -f $(TARBALL) ] || { echo "make dist-test: no $(TARBALL): run 'make dist' first" >&2; exit 1; }
	@others=$$(ls dist/ferro-proxmox-*.tar.gz | grep -vxF $(TARBALL) || true); [ -z "$$others" ] || \
	  { echo "make dist-test: tests/e2e installs the newest dist/ferro-proxmox-*.tar.gz; remove $$others" >&2; exit 1; }
	FERRO_DIST_TARBALL=$(TARBALL) FERRO_DIST_TRIPLES="$(DIST_TRIPLES)" FERRO_DIST_MAX_BYTES=$(DIST_MAX_BYTES) $(PYTEST) -q tests/dist
	@# tests/e2e installs $(TARBALL) (its conftest takes the newest dist/ferro-proxmox-*.tar.gz), and
	@# test_vm_info.py also runs the bare binary from build/collection/native/ (the `make collection`
	@# tree, rebuilt from scratch by every `make collection`): give it this machine's dist binaries.
	@[ -d $(DIST_TREE)/native/$(DIST_HOST_TRIPLE) ] || { echo "make dist-test: no $(DIST_TREE)/native/$(DIST_HOST_TRIPLE): run 'make dist' first" >&2; exit 1; }
	rm -rf build/collection && mkdir -p build/collection/native
	cp -a $(DIST_TREE)/native/$(DIST_HOST_TRIPLE) build/collection/native/
	$(PYTEST) -q tests/e2e
	tools/ee/check.sh $(EE_VENV) $(VENV) $(TARBALL) build/ee

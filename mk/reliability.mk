# Reliability (issue 9): property tests, fuzzing, and the e2e bad-input and fault tables.
#
#   make test        runs the property tests (cargo test -p ferro_props: tests/props, part of
#                    `cargo test --workspace`), which also replay every input kept under
#                    tests/fuzz/corpus and tests/fuzz/regressions, and the e2e tables
#                    (tests/e2e/test_bad_input.py, test_faults.py). Each prints its counts.
#   make fuzz        runs each cargo-fuzz target for FUZZ_SECONDS (default 60) and minimises
#                    the corpus into tests/fuzz/corpus/<target> (commit it). Not part of make test.
#                    It installs its tools on first use (make fuzz-tools): a nightly Rust toolchain
#                    through rustup if none is installed, and cargo-fuzz $(CARGO_FUZZ_VERSION)
#                    (cargo install --locked from crates.io) into build/tools/fuzz. A crash leaves
#                    its input in tests/fuzz/artifacts/<target>/ and fails; once fixed, copy that
#                    input to tests/fuzz/regressions/<target>/ so `make test` keeps replaying it.
#   make fuzz FUZZ_TARGETS=propstring FUZZ_SECONDS=600   one target, longer

FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= args_proxmox_vm_info args_proxmox_nic args_proxmox_disk args_proxmox_kvm propstring
FUZZ_TOOLCHAIN ?= nightly
CARGO_FUZZ_VERSION := 0.13.1
FUZZ_DIR := tests/fuzz
FUZZ_TOOLS := build/tools/fuzz
CARGO_FUZZ := $(FUZZ_TOOLS)/bin/cargo-fuzz
# cargo-fuzz calls `cargo`, which rustup resolves to this toolchain.
FUZZ_ENV := RUSTUP_TOOLCHAIN=$(FUZZ_TOOLCHAIN)
# -timeout: an input that takes longer is a hang, reported like a crash.
FUZZ_FLAGS := -timeout=10 -rss_limit_mb=4096 -max_len=16384

.PHONY: fuzz fuzz-tools fuzz-seed

fuzz-tools: $(CARGO_FUZZ)

$(CARGO_FUZZ):
	@command -v rustup >/dev/null || { echo "make fuzz: needs rustup (https://rustup.rs) to get a nightly toolchain" >&2; exit 1; }
	@rustup toolchain list | grep -q '^$(FUZZ_TOOLCHAIN)' || { \
	  echo "make fuzz: installing the $(FUZZ_TOOLCHAIN) Rust toolchain (rustup)"; \
	  rustup toolchain install $(FUZZ_TOOLCHAIN) --profile minimal; }
	@echo "make fuzz: installing cargo-fuzz $(CARGO_FUZZ_VERSION) into $(FUZZ_TOOLS) (cargo install --locked, from crates.io)"
	cargo install cargo-fuzz --version $(CARGO_FUZZ_VERSION) --locked --root $(FUZZ_TOOLS)

fuzz-seed:
	cargo run --locked --quiet -p ferro_props --bin fuzz_seed

## fuzz: each cargo-fuzz target for FUZZ_SECONDS (not part of make test)
fuzz: fuzz-tools fuzz-seed
	@mkdir -p build/fuzz
	@for t in $(FUZZ_TARGETS); do \
	  echo "fuzz: $$t for $(FUZZ_SECONDS)s (log: build/fuzz/$$t.log)"; \
	  if ! $(FUZZ_ENV) $(CARGO_FUZZ) fuzz run --fuzz-dir $(FUZZ_DIR) $$t -- -max_total_time=$(FUZZ_SECONDS) $(FUZZ_FLAGS) \
	      > build/fuzz/$$t.log 2>&1; then \
	    grep -E 'panicked|violat|ERROR|SUMMARY|Test unit written|error' build/fuzz/$$t.log | head -20 >&2 || tail -30 build/fuzz/$$t.log >&2; \
	    echo "make fuzz: $$t failed: see build/fuzz/$$t.log and $(FUZZ_DIR)/artifacts/$$t/" >&2; exit 1; \
	  fi; \
	  grep -E '^Done [0-9]+ runs' build/fuzz/$$t.log | tail -1 | sed "s/^/fuzz: $$t: /" || true; \
	  $(FUZZ_ENV) $(CARGO_FUZZ) fuzz cmin --fuzz-dir $(FUZZ_DIR) $$t -- $(FUZZ_FLAGS) >> build/fuzz/$$t.log 2>&1 \
	    || { echo "make fuzz: cargo fuzz cmin $$t failed: see build/fuzz/$$t.log" >&2; exit 1; }; \
	  echo "fuzz: $$t: no crash in $(FUZZ_SECONDS)s; corpus: $$(ls $(FUZZ_DIR)/corpus/$$t | wc -l) inputs"; \
	done

# The benchmark against community.proxmox (issues 8 and 18): `make bench`, `make bench-micro`. Not part of `make test`.
#
#   make bench         bench-micro, then bench/run.py: one pvesim seeded with BENCH_VMS VMs, the same
#                      workloads with ferro.proxmox (from $(DEV_TARBALL)) and community.proxmox (from the
#                      `ansible` package, in its own virtualenv under build/bench), BENCH_ROUNDS rounds
#                      alternating the two; then the fleet: BENCH_FLEET VMs cloned from one template,
#                      grown and started, by each collection, each on a fresh pvesim; prints the table
#                      and the fleet's lines and writes build/bench/results.json
#   make bench-micro   the Rust micro-benchmarks of the hot pure functions (ns/iter)
#   make bench-requests API requests per task of each workload (bench/requests.py), ferro.proxmox beside
#                      community.proxmox; fails when ferro.proxmox's rise above bench/requests-baseline.json
#
# See bench/README.md for how to read the output.

BENCH_DIR := build/bench
BENCH_VMS ?= 50
BENCH_ROUNDS ?= 3
BENCH_BUILD_ROUNDS ?= 1
BENCH_FLEET ?= 12
BENCH_SKIP ?=

.PHONY: bench bench-micro bench-requests

## bench-micro: the Rust micro-benchmarks of the hot pure functions
bench-micro:
	cargo bench --locked --quiet -p ferro_bench --bench hot

## bench-requests: API requests per task of each workload, ferro.proxmox beside community.proxmox; fails when
## ferro.proxmox's rise above bench/requests-baseline.json (BENCH_REQUESTS_ARGS=--write-baseline writes it anew)
bench-requests: collection upstream-venv
	@venv=$$(bench/venv.sh $(BENCH_DIR)) && \
	  $(VENV)/bin/python bench/requests.py --ferro-tarball $(DEV_TARBALL) --ansible-venv "$$venv" \
	    --json $(BENCH_DIR)/requests.json $(BENCH_REQUESTS_ARGS)

## bench: ferro.proxmox against community.proxmox on one pvesim (bench/README.md)
bench: collection bench-micro upstream-venv bench-requests
	@venv=$$(bench/venv.sh $(BENCH_DIR)) && \
	  $(VENV)/bin/python bench/run.py --ferro-tarball $(DEV_TARBALL) --ansible-venv "$$venv" \
	    --vms $(BENCH_VMS) --rounds $(BENCH_ROUNDS) --build-rounds $(BENCH_BUILD_ROUNDS) --fleet $(BENCH_FLEET) \
	    --workdir $(BENCH_DIR)/run --json $(BENCH_DIR)/results.json --skip "$(BENCH_SKIP)"

.PHONY: bench-realistic test-contention

## bench-realistic: make bench's per-task run and fleets of 12 and 40 (forks 12 and 40) on pvesim's realistic profile (bench/README.md)
bench-realistic: collection upstream-venv
	@venv=$$(bench/venv.sh $(BENCH_DIR)) && \
	  $(VENV)/bin/python bench/run.py --profile realistic --ferro-tarball $(DEV_TARBALL) --ansible-venv "$$venv" \
	    --vms $(BENCH_VMS) --rounds $(BENCH_ROUNDS) --build-rounds $(BENCH_BUILD_ROUNDS) --fleet 12 \
	    --workdir $(BENCH_DIR)/run-realistic --json $(BENCH_DIR)/results-realistic.json --skip "plan,forks,waiter,$(BENCH_SKIP)" && \
	  $(VENV)/bin/python bench/run.py --profile realistic --ferro-tarball $(DEV_TARBALL) --ansible-venv "$$venv" \
	    --vms $(BENCH_VMS) --rounds 1 --fleet 40 --workdir $(BENCH_DIR)/run-realistic \
	    --json $(BENCH_DIR)/results-realistic-40.json --skip converge,build,plan,forks,waiter

## test-contention: the ceph seed's 24 clones of one template on pvesim's realistic profile (tests/e2e/test_contention.py)
test-contention: install
	FERRO_CONTENTION=1 FERRO_TARBALL=$(DEV_TARBALL) $(PYTEST) -q -n 0 tests/e2e/test_contention.py

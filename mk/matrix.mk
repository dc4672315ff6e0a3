# The ansible-core matrix (issue 27): the four modules on every ansible-core minor that
# meta/runtime.yml's requires_ansible admits, through options, module_defaults, environment: and
# inline vault values (tests/e2e/test_vault_matrix.py, check → real → again against pvesim).
#
#   make test-matrix         every minor in MATRIX_VERSIONS
#   make test-matrix-edges   the oldest and the newest (part of make test)
#   make test-matrix MATRIX_VERSIONS=2.18   one
#
# Each minor gets its own virtualenv, build/matrix/<minor>, built by pip from PyPI with the pins of
# tests/matrix/requirements-<minor>.txt (ansible-core at the minor's latest patch, every
# dependency pinned), by a Python that minor supports as a controller (its requires-python):
# MATRIX_PYTHON_<minor> if set, else the first of MATRIX_PYTHONS_<minor> that runs, as
# python3.x on PATH or a pyenv install ($(PYENV_ROOT)/versions/3.x.*). 2.17 needs 3.10 to 3.12,
# 2.18 and 2.19 3.11 to 3.13, 2.20 and 2.21 3.12 or later: a machine with only its system 3.11
# needs a 3.12 or 3.13 for those two (e.g. pyenv install 3.13). pytest and pvesim stay in .venv;
# only ansible-playbook (and ansible-vault) come from the minor's virtualenv.

MATRIX_VERSIONS ?= 2.17 2.18 2.19 2.20 2.21
MATRIX_EDGES := $(firstword $(MATRIX_VERSIONS)) $(lastword $(MATRIX_VERSIONS))
MATRIX_DIR := build/matrix
PYENV_ROOT ?= $(HOME)/.pyenv
MATRIX_PYTHONS_2.17 := 3.11 3.12 3.10
MATRIX_PYTHONS_2.18 := 3.11 3.12 3.13
MATRIX_PYTHONS_2.19 := 3.11 3.12 3.13
MATRIX_PYTHONS_2.20 := 3.12 3.13 3.14
MATRIX_PYTHONS_2.21 := 3.13 3.12 3.14

.PHONY: test-matrix test-matrix-edges test-matrix-edges-venvs $(addprefix test-matrix-,$(MATRIX_VERSIONS))

## test-matrix: the four modules with inline vault on every supported ansible-core (2.17 to 2.21), one pinned venv each
test-matrix: $(addprefix test-matrix-,$(MATRIX_VERSIONS))

## test-matrix-edges: the same on the oldest and the newest supported ansible-core (part of make test)
test-matrix-edges: $(addprefix test-matrix-,$(MATRIX_EDGES))

# The edges' virtualenvs alone (make test builds them beside the Rust compile)
test-matrix-edges-venvs: $(foreach v,$(MATRIX_EDGES),$(MATRIX_DIR)/$(v)/.installed)

$(addprefix test-matrix-,$(MATRIX_VERSIONS)): test-matrix-%: $(MATRIX_DIR)/%/.installed install
	FERRO_MATRIX_VENV=$(abspath $(MATRIX_DIR)/$*) $(PYTEST) -q -p no:cacheprovider tests/e2e/test_vault_matrix.py

$(MATRIX_DIR)/%/.installed: tests/matrix/requirements-%.txt
	@py='$(MATRIX_PYTHON_$*)'; \
	if [ -z "$$py" ]; then for v in $(MATRIX_PYTHONS_$*); do \
	  for c in python$$v $(PYENV_ROOT)/versions/$$v.*/bin/python$$v; do \
	    if "$$c" -c '' 2>/dev/null; then py=$$c; break 2; fi; done; done; fi; \
	[ -n "$$py" ] || { echo "ansible-core $* needs Python $(MATRIX_PYTHONS_$*) (one of them): none found; set MATRIX_PYTHON_$*=<path>" >&2; exit 1; }; \
	echo "ansible-core $*: $$py ($$("$$py" -V))"; \
	rm -rf $(MATRIX_DIR)/$*; \
	"$$py" -m venv $(MATRIX_DIR)/$*
	$(MATRIX_DIR)/$*/bin/pip install --quiet --disable-pip-version-check -r $<
	touch $@

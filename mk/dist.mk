# Release builds for every supported controller platform: `make dist`, `make dist-test` (issue 10).
.PHONY: dist dist-test
dist:
	@echo "make dist: not built yet" >&2; exit 1
dist-test:
	@echo "make dist-test: not built yet" >&2; exit 1

# Two commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
LINT_STAMP := $(VENV)/.installed-lint
# Test processes: more than the two cores, to fill the time tests wait on sshd, the agents and the clock
# (docs/performance.md: 3, 4 and 5 measured on clean clones). `make test WORKERS=2` for a quieter machine.
WORKERS ?= 4

.PHONY: demo test test-fast venv lint bench clean

$(STAMP): pyproject.toml man/git-balanced.1 scripts/install-python.sh
	# The venv, and the wheels from .cache/wheels (fetched there once), installed by uv (kept in .cache/uv).
	PY=$(PY) bash scripts/install-python.sh $(VENV) test
	# An editable install skips data files: put the man page where `git balanced --help` finds it.
	install -D -m 644 man/git-balanced.1 $(VENV)/share/man/man1/git-balanced.1
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/git-balanced demo

test: $(STAMP)
	bash scripts/ensure-sshd.sh
	bash scripts/ensure-podman.sh
	bash scripts/install-agents.sh
	bash scripts/rewrite-tests.sh $(VENV)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n $(WORKERS) --dist loadfile --no-loadscope-reorder

# The edit-test loop: every test but those that start sshd machines or run the real agent CLIs.
test-fast: $(STAMP)
	bash scripts/rewrite-tests.sh $(VENV)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n $(WORKERS) --dist loadfile --no-loadscope-reorder -m "not sshd and not agents and not boxes"

# The linters are installed only for `make lint`: `make test` on a clean clone does not wait for them.
$(LINT_STAMP): $(STAMP)
	PY=$(PY) bash scripts/install-python.sh $(VENV) test,lint
	touch $(LINT_STAMP)

lint: $(LINT_STAMP)
	$(BIN)/ruff check git_balanced tests bench
	$(BIN)/mypy git_balanced

# Every benchmark, each printing its PASS and MISS lines whatever the ones before did; then the table of the
# figures now, written at the top of docs/performance.md (bench/all.py). Exit 1 when a goal was missed.
bench: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/all.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

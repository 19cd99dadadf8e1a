# Two commands on a fresh machine: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast venv lint bench clean

$(STAMP): pyproject.toml man/git-balanced.1
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[test]'
	# An editable install skips data files: put the man page where `git balanced --help` finds it.
	install -D -m 644 man/git-balanced.1 $(VENV)/share/man/man1/git-balanced.1
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/git-balanced demo

test: $(STAMP)
	bash scripts/ensure-sshd.sh
	bash scripts/install-agents.sh
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n 3 --dist loadfile --no-loadscope-reorder

# The edit-test loop: every test but those that start sshd machines or run the real agent CLIs.
test-fast: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/pytest -q -n 3 --dist loadfile --no-loadscope-reorder -m "not sshd and not agents"

lint: $(STAMP)
	$(BIN)/ruff check git_balanced tests bench
	$(BIN)/mypy git_balanced

bench: $(STAMP)
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/state.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/landing.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/engine.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/ssh_connect.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/dispatch.py
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python bench/board.py

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

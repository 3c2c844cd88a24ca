# Two entry points for a fresh clone: `make release` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SOURCES := $(shell find attn_ref -name '*.py') pyproject.toml
STAMP  := autograder/.built

.PHONY: release test bench clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

# Rebuilds only when a source changed: the same sources give the same release.
$(STAMP): $(SOURCES) $(VENV)/.installed
	$(BIN)/attn-ref build
	touch $@

release: $(STAMP)
	@echo "release: assignments/ solutions/ autograder/ are up to date"

test: $(VENV)/.installed-test
	$(BIN)/python -m pytest

bench: $(VENV)/.installed
	$(BIN)/python benchmarks/reference.py
	$(BIN)/python benchmarks/grade.py
	$(BIN)/python benchmarks/regrade.py

clean:
	rm -rf $(VENV) build *.egg-info $(STAMP)

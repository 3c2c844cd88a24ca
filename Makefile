# Two entry points for a fresh clone: `make release` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SOURCES := $(shell find attn_ref course -name '*.py' -o -name '*.md') pyproject.toml locks/student.txt locks/grader.txt
STAMP  := autograder/.built
# The students' environment the grader runs kernels in (numpy, torch, otter; never attn_ref). As root,
# kernels run as fresh uids, so it lives where every user can read it, on an interpreter they can run.
STUDENT_ENV    ?= $(if $(filter 0,$(shell id -u)),/opt/attn-ref/student,.venv-student)
STUDENT_PYTHON ?= $(if $(filter 0,$(shell id -u)),$(firstword $(wildcard /usr/bin/python3) $(PYTHON)),$(PYTHON))

.PHONY: release test docs bench clean student-env sandbox-tools browser-tools lock

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e .
	touch $@

$(VENV)/.installed-docs: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[docs]'
	touch $@ $(VENV)/.installed

$(VENV)/.installed-test: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $@ $(VENV)/.installed

# Exactly the lock (locks/student.txt): the versions Gradescope's kernels and students install.
$(STUDENT_ENV)/.installed: locks/student.txt
	$(STUDENT_PYTHON) -m venv $(STUDENT_ENV)
	$(STUDENT_ENV)/bin/python -m pip install -q -r locks/student.txt
	chmod -R a+rX $(STUDENT_ENV)
	touch $@

student-env: $(STUDENT_ENV)/.installed

# Re-resolve both environments' exact pins for every platform (needs the network); then rebuild and check.
lock: $(VENV)/.installed
	$(BIN)/python -m pip install -q uv
	$(BIN)/attn-ref lock

# bubblewrap gives kernels their own namespaces where the machine allows (the grader probes at run time).
sandbox-tools:
	@command -v bwrap >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get install -y -qq bubblewrap >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null; }; }; } || \
	  echo "note: bubblewrap is not installed; kernels run without namespaces (docs/security.md)"

# Headless Chromium renders report.html and a written page in tests/grade/classroom/test_browser.py; where it cannot be
# installed (no apt, not root, offline) those tests are skipped, saying why.
browser-tools:
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
	  { apt-get install -y -qq chromium >/dev/null 2>&1 || { apt-get update -qq && apt-get install -y -qq chromium >/dev/null 2>&1; }; }; } || \
	  echo "note: chromium could not be installed; the browser layout tests are skipped"

# Rebuilds only when a source changed: the same sources give the same release. The build checks itself
# (attn-ref check: grading needs the students' environment) before it moves anything into place.
$(STAMP): $(SOURCES) $(VENV)/.installed $(STUDENT_ENV)/.installed | sandbox-tools
	$(BIN)/attn-ref build
	touch $@

release: $(STAMP)
	@echo "release: assignments/ solutions/ autograder/ are up to date; students' environment: $(STUDENT_ENV)"

# Three workers on two cores: about half the suite's wall time is spent waiting (kernels starting, timeouts,
# pip), so a third worker fills the gaps; tests that assert on machine-wide state tolerate other graders.
# worksteal: a worker that runs out takes queued tests from the others, so a few long tests (minutes each)
# do not leave it idle at the end.
TEST_WORKERS ?= 3
test: $(VENV)/.installed-test student-env sandbox-tools browser-tools
	$(BIN)/python -m pytest -n $(TEST_WORKERS) --dist worksteal

# The README and the guides (docs/) as a site in site/; --strict (mkdocs.yml): a broken link or anchor fails.
# The suite builds it too (tests/docs/test_docs.py), and runs or checks every block the pages show.
docs: $(VENV)/.installed-docs
	$(BIN)/mkdocs build --strict

bench: $(VENV)/.installed student-env
	$(BIN)/python benchmarks/reference.py
	$(BIN)/python benchmarks/grade.py
	$(BIN)/python benchmarks/regrade.py

clean:
	rm -rf $(VENV) .venv-student build site *.egg-info $(STAMP)

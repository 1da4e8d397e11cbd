# The project's commands. `make test` is what CI runs (.ci/run).
VENV ?= .venv
PYTHON := $(VENV)/bin/python

.PHONY: install test bench

# The venv is (re)built when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[test,dist]'
	touch $@

install: $(VENV)/.installed

test: install
	$(PYTHON) -m pytest

bench: install
	$(PYTHON) -m benchmarks.kernels

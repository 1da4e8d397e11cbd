# The project's commands. `make test` is what CI runs (.ci/run).
VENV ?= .venv
PYTHON := $(VENV)/bin/python

.PHONY: install test demo bench

# The venv is (re)built when pyproject.toml changes.
$(VENV)/.installed: pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[test,dist,data,plot,onednn]'
	touch $@

install: $(VENV)/.installed

test: install
	$(PYTHON) -m pytest

# Trains a small CNN on the digits set, saves it and plots its curves (demo_output/).
demo: install
	$(PYTHON) tutorials/01_lenet_digits.py demo_output

bench: install
	$(PYTHON) -m benchmarks

# The project's commands. `make test` is what CI runs (.ci/run).
VENV ?= .venv
PYTHON := $(VENV)/bin/python

.PHONY: install test demo bench

# The venv is (re)built when pyproject.toml changes: the demo's part first
# (what the tutorials need), then everything the tests need.
$(VENV)/.demo-installed: pyproject.toml
	test -x $(PYTHON) || python3 -m venv $(VENV)
	$(PYTHON) -m pip install --quiet --upgrade pip
	$(PYTHON) -m pip install --quiet -e '.[data,plot,onednn]'
	touch $@

$(VENV)/.installed: $(VENV)/.demo-installed
	$(PYTHON) -m pip install --quiet -e '.[test,dist,data,plot,onednn]'
	touch $@

install: $(VENV)/.installed

# The whole suite runs the vendor kernels (oneDNN, the default); the Functions
# with a vendor branch run once more on the reference code alone.
REFERENCE_TESTS := tests/minidl/functions/test_conv.py tests/minidl/functions/test_conv_relu.py \
	tests/minidl/functions/test_pooling.py \
	tests/minidl/functions/test_conv_transpose.py tests/minidl/functions/test_normalization.py \
	tests/minidl/functions/test_depthwise.py tests/minidl/functions/test_lstm.py \
	tests/minidl/functions/test_gru.py tests/minidl/test_determinism.py

# --durations: the slowest tests, so that a suite growing slow shows where.
# (A quick local run: $(PYTHON) -m pytest -m 'not mpi' skips the mpirun launches.)
test: install
	$(PYTHON) -m ruff check .
	$(PYTHON) -m pytest --durations=15
	MINIDL_USE_ONEDNN=never $(PYTHON) -m pytest $(REFERENCE_TESTS)

# Trains a small CNN on the digits set, saves it and plots its curves (demo_output/).
demo: $(VENV)/.demo-installed
	$(PYTHON) tutorials/01_lenet_digits.py demo_output

bench: install
	$(PYTHON) -m benchmarks

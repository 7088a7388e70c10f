# Two-command quick start: `make demo` and `make test`. Both create .venv when
# missing and (re)install only when pyproject.toml changed since the last install.
# The install also compiles the numba kernels into numba's on-disk cache
# (__pycache__ beside each kernel of this editable install), so no command
# compiles on first use; that warm-up runs again when a kernel's source changes.
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pswitch-installed
WARM := $(VENV)/.pswitch-warm

.PHONY: demo test test-all lint bench docs clean

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev,layout]'
	@touch $@

$(WARM): $(STAMP) $(wildcard photonics/*/_*kernel*.py) pswitch/warm.py
	@echo "compiling the numba kernels once, into numba's on-disk cache (up to a minute):"
	$(BIN)/python -m pswitch.warm
	@touch $@

demo: $(WARM)
	$(BIN)/pswitch demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/lint-imports

# The suite on every core (pytest-xdist; an idle worker takes tests from a busy one), one BLAS
# thread per worker: the emulator's matrices are small, and threads of two workers would only
# contend for the same cores.
PYTEST := OPENBLAS_NUM_THREADS=1 HYPOTHESIS_PROFILE=$${HYPOTHESIS_PROFILE:-ci} $(BIN)/pytest -q -n auto --dist worksteal --durations=10

test: lint $(WARM)
	$(PYTEST)

# Everything, the tests marked slow included (longer fuzzing, whole-bench runs).
test-all: lint $(WARM)
	$(PYTEST) -m ""

# The command references are generated from the grammars, and every transcript, table, value
# and picture marked in the README and docs/ from seeded runs (pswitch.figures, the slow ones
# included); tests check that they are current.
docs: $(WARM)
	$(BIN)/python -m firmware.reference docs/commands.md
	$(BIN)/python -m pswitch.reference docs/cli.md
	OPENBLAS_NUM_THREADS=1 $(BIN)/python -m pswitch.figures

# Peers for the side-by-side benchmarks live in the optional `bench` extra.
$(VENV)/.pswitch-bench: $(WARM)
	$(BIN)/python -m pip install --quiet -e '.[dev,layout,bench]'
	@touch $@

bench: $(VENV)/.pswitch-bench
	$(BIN)/pswitch bench

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis .ruff_cache

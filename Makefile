# Two commands matter: `make demo` and `make test`. Both build .venv themselves, so a fresh
# machine needs only python3 and make.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin

.PHONY: demo test test-compat lint typecheck pytest bench bench-jobs fuzz schemas format clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(VENV)/.stamp-install: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e .
	touch $@

$(VENV)/.stamp-dev: pyproject.toml | $(BIN)/python
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $@ $(VENV)/.stamp-install

$(VENV)/.stamp-bench: pyproject.toml $(VENV)/.stamp-dev
	$(BIN)/python -m pip install --quiet -e '.[dev,bench]'
	touch $@

## demo: validate the bundled example messages and print each verdict (invalid ones included
## on purpose, so exit status 1 from the validator is the expected outcome here).
demo: $(VENV)/.stamp-install
	@$(BIN)/envelopekit validate examples/messages; status=$$?; \
	  if [ $$status -gt 1 ]; then exit $$status; fi

## test: lint, type-check (mypy --strict, basedpyright strict) and run the test suite on every core.
test: lint typecheck pytest

lint: $(VENV)/.stamp-dev
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(VENV)/.stamp-dev
	$(BIN)/mypy
	$(BIN)/basedpyright

# On every core the process may use (pytest-xdist); each worker starts its own Redis server.
pytest: $(VENV)/.stamp-dev
	$(BIN)/pytest -q -n auto

## test-compat: the test suite under another interpreter, in its own venv, e.g.
##   make test-compat PYTHON_COMPAT=/path/to/python3.10
test-compat:
	@test -n "$(PYTHON_COMPAT)" || { echo "set PYTHON_COMPAT to a python executable"; exit 2; }
	rm -rf .venv-compat
	$(PYTHON_COMPAT) -m venv .venv-compat
	.venv-compat/bin/python -m pip install --quiet --upgrade pip
	.venv-compat/bin/python -m pip install --quiet -e '.[dev]'
	.venv-compat/bin/pytest -q -n auto -p no:cacheprovider

bench: $(VENV)/.stamp-bench
	$(BIN)/python bench/run.py
	$(BIN)/python bench/hostile.py
	$(BIN)/python bench/fleet.py

# `validate --jobs N` alone (1, 2 and up to the cores): for a quiet machine, about 2 minutes.
bench-jobs: $(VENV)/.stamp-bench
	$(BIN)/python bench/run.py --jobs-only

## fuzz: the check and Router oracles under atheris, for long runs outside CI and `make test`
## (FUZZ_SECONDS, 600 by default; a crash is written as crash-<sha1>).
FUZZ_SECONDS ?= 600
fuzz: $(VENV)/.stamp-dev
	$(BIN)/python -m pip install --quiet -e '.[dev,fuzz]'
	$(BIN)/python fuzz/check_fuzz.py -max_total_time=$(FUZZ_SECONDS)

schemas: $(VENV)/.stamp-install
	$(BIN)/envelopekit schema --out src/envelopekit/schemas
	$(BIN)/envelopekit schema --draft 07 --out src/envelopekit/schemas/draft-07
	$(BIN)/envelopekit asyncapi --out src/envelopekit/asyncapi

format: $(VENV)/.stamp-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) .venv-compat .mypy_cache .pytest_cache .ruff_cache .hypothesis

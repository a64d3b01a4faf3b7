# kubeinformers — every target creates or reuses .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
DOCS_STAMP := $(VENV)/.installed-docs
# A second environment with the lowest runtime dependencies pyproject.toml declares.
LOWEST := .venv-lowest
LOWEST_STAMP := $(LOWEST)/.installed
CRDS ?= crds
OUT ?= examples/informers
# Empty: the generator derives the package from OUT (see `kubeinformers generate --help`).
PACKAGE ?=
OPENAPI ?= ../shared/data/openapi/v3

.PHONY: help venv demo test test-lowest test-newest-python lint typecheck pytest generate generate-builtins generate-crds verify bench bench-shards soak docs clean

help:
	@echo "make demo     generate from crds/ and run the example controllers against a local API server"
	@echo "make test     ruff, mypy --strict, make verify, pytest (2 worker processes; PYTEST_WORKERS=0: one), make test-lowest"
	@echo "make test-lowest  the real-server typed path with the lowest declared kubernetes, pydantic, msgspec, urllib3, PyYAML"
	@echo "make test-newest-python  make verify and the CPython-internals tests on the newest other Python installed"
	@echo "make generate regenerate the example CRD informers, or yours: CRDS=path OUT=dir [PACKAGE=name]"
	@echo "make verify   regenerate in memory and fail on any difference from the files"
	@echo "make bench    informers beside client-go and the official client on a real kube-apiserver (BIG=1: 100,000 pods; ARGS='--server local --pods N')"
	@echo "make bench-shards  per-replica RSS and sync time of 1, 2, 4 static shards or ring replicas (ARGS='--pods N --replicas 1,2,4 --gate on|off --layouts static,ring')"
	@echo "make soak     fault-injection soak (SEED=n FAULTS=n SERVER=real|local; real when its binaries are found)"
	@echo "make docs     build the user guide and API reference into site/ (mkdocs build --strict)"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kubeinformers needs Python 3.11 or newer (found %s)" % sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

# The docs tools are installed only for `make docs`, never for `make test`.
$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e '.[dev,docs]'
	@touch $(DOCS_STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy kubeinformers examples tests/typing tools

# Two worker processes, each taking whole test files (their module fixtures, such as the CRD
# corpus or a private API server, are made once): about half the serial time on two cores.
# PYTEST_WORKERS=0 runs the suite in one process.
PYTEST_WORKERS ?= 2
pytest: $(STAMP)
	$(BIN)/pytest -q -n $(PYTEST_WORKERS) --dist loadfile

test: lint typecheck verify pytest test-lowest test-newest-python

# Declared lower bounds are promises: install exactly them (tools/lowest_deps.py reads
# pyproject.toml) beside the generator extra and pytest, check pip kept them, and run there the
# typed path (LocalApiServer and one real-server variant) and the tests that once found a bound
# too low: async stop (urllib3), camelCase dumps (pydantic), Lease objects and the auth call
# of the typed client (kubernetes), and how models are held (pydantic's slots and the order
# pydantic-core sets them: K15, K21, K22, K24, K25, and K27's models assembled as validation
# leaves them; pydantic-core 2.33 made a tzinfo per time).
# How models are held (pydantic's slots, key-sharing dicts, the direct builds, times): what
# depends most on the exact pydantic and CPython in use.
MODEL_TESTS := tests/runtime/test_shared_fields_sets.py tests/runtime/test_key_sharing_dicts.py \
	tests/runtime/test_free_form_models.py tests/runtime/test_no_extra_fields.py \
	tests/runtime/test_protobuf_direct.py tests/generated/test_timestamps.py

$(LOWEST_STAMP): pyproject.toml tools/lowest_deps.py
	@test -x $(LOWEST)/bin/python || $(PYTHON) -m venv $(LOWEST)
	$(LOWEST)/bin/python -m pip install --quiet --upgrade pip
	$(LOWEST)/bin/python -m pip install --quiet -e '.[generator]' pytest pytest-timeout $$($(LOWEST)/bin/python tools/lowest_deps.py)
	@touch $(LOWEST_STAMP)

test-lowest: $(LOWEST_STAMP)
	$(LOWEST)/bin/python tools/lowest_deps.py --check
	$(LOWEST)/bin/python -m pytest -q -p no:cacheprovider tests/e2e/test_typed_path.py -k "local or real-delta"
	$(LOWEST)/bin/python -m pytest -q -p no:cacheprovider tests/runtime/test_async_api.py \
		tests/runtime/test_transforms.py tests/runtime/test_leaderelection.py tests/runtime/test_transport.py \
		tests/runtime/test_client_core.py tests/runtime/test_credentials.py $(MODEL_TESTS)

# One supported Python is not all of them: the newest other one installed (tools/newest_python.py:
# python3.N on PATH, pyenv's versions) regenerates everything in memory (H35: the generated code
# must not depend on the Python that runs the generator: `type` is a soft keyword since 3.12) and
# runs the tests of the CPython internals the runtime leans on (key-sharing dicts, pydantic's
# slots, the direct builds). Skipped with one line where there is none.
test-newest-python:
	@found=$$($(PYTHON) tools/newest_python.py) || exit 1; \
	if [ -z "$$found" ]; then echo "test-newest-python: skipped: no Python other than $$($(PYTHON) -V 2>&1) is installed"; exit 0; fi; \
	set -- $$found; v=$$1; py=$$2; env=.venv-$$v; \
	if [ ! -f $$env/.installed ] || [ pyproject.toml -nt $$env/.installed ]; then \
		rm -rf $$env && $$py -m venv $$env && \
		$$env/bin/python -m pip install --quiet --upgrade pip && \
		$$env/bin/python -m pip install --quiet -e '.[generator]' pytest pytest-timeout && \
		touch $$env/.installed || exit 1; \
	fi; \
	echo "test-newest-python: Python $$v ($$py)"; \
	$$env/bin/python -m kubeinformers.generator.verify && \
	$$env/bin/python -m pytest -q -p no:cacheprovider tests/generator/test_naming.py $(MODEL_TESTS)

# The project's own run (no CRDS= or OUT= given) also regenerates the built-ins when the
# OpenAPI spec is at hand; a run for your CRDs generates only them.
generate: $(STAMP)
ifeq ($(origin CRDS)$(origin OUT),filefile)
	@if [ -d "$(OPENAPI)" ]; then $(MAKE) --no-print-directory generate-builtins; \
	else echo "make generate: no OpenAPI spec at $(OPENAPI) (set OPENAPI=); built-ins left as committed"; fi
endif
	$(BIN)/kubeinformers generate --crd $(CRDS) --out $(OUT)$(if $(PACKAGE), --package $(PACKAGE),)

generate-builtins: $(STAMP)
	$(BIN)/kubeinformers generate --openapi $(OPENAPI) --out kubeinformers/generated --package kubeinformers.generated

verify: $(STAMP)
	$(BIN)/python -m kubeinformers.generator.verify

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(BIG),--big,) $(ARGS)

bench-shards: $(STAMP)
	$(BIN)/python -m bench.shards $(ARGS)

soak: $(STAMP)
	$(BIN)/python -m tests.soak $(if $(SEED),--seed $(SEED),) $(if $(FAULTS),--faults $(FAULTS),) $(if $(SERVER),--server $(SERVER),)

# Fails on any warning: a broken link, a missing page in the nav, an API reference that does
# not resolve. Not part of `make test` (it needs the docs extra and takes a while).
docs: $(DOCS_STAMP)
	$(BIN)/mkdocs build --strict --site-dir site

clean:
	rm -rf $(VENV) $(LOWEST) .venv-3.* .mypy_cache .ruff_cache .pytest_cache site

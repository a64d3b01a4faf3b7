# kubeinformers — every target creates or reuses .venv itself.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CRDS ?= crds
OUT ?= examples/informers
PACKAGE ?= $(subst /,.,$(OUT))
OPENAPI ?= ../shared/data/openapi/v3

.PHONY: help venv demo test lint typecheck pytest generate generate-builtins generate-crds verify bench soak clean

help:
	@echo "make demo     generate from crds/ and run the example controllers against a local API server"
	@echo "make test     ruff, mypy --strict, make verify, pytest"
	@echo "make generate regenerate the example CRD informers (CRDS=dir OUT=dir PACKAGE=name)"
	@echo "make verify   regenerate into a temporary folder and fail on any difference"
	@echo "make bench    benchmarks against the peers (BIG=1 for 100,000 objects)"
	@echo "make soak     fault-injection soak (SEED=n FAULTS=n SERVER=real|local; real when its binaries are found)"

$(STAMP): pyproject.toml
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "kubeinformers needs Python 3.11 or newer (found %s)" % sys.version.split()[0])'
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(BIN)/python -m examples.demo

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy kubeinformers examples tests/typing

pytest: $(STAMP)
	$(BIN)/pytest -q

test: lint typecheck verify pytest

# Regenerates the built-ins (when the OpenAPI spec is at hand) and the CRD informers.
generate: $(STAMP)
	@if [ -d "$(OPENAPI)" ]; then $(MAKE) --no-print-directory generate-builtins; \
	else echo "make generate: no OpenAPI spec at $(OPENAPI) (set OPENAPI=); built-ins left as committed"; fi
	$(BIN)/kubeinformers generate --crd $(CRDS) --out $(OUT) --package $(PACKAGE)

generate-builtins: $(STAMP)
	$(BIN)/kubeinformers generate --openapi $(OPENAPI) --out kubeinformers/generated --package kubeinformers.generated

verify: $(STAMP)
	$(BIN)/python -m kubeinformers.generator.verify

bench: $(STAMP)
	$(BIN)/python -m bench $(if $(BIG),--big,)

soak: $(STAMP)
	$(BIN)/python -m tests.soak $(if $(SEED),--seed $(SEED),) $(if $(FAULTS),--faults $(FAULTS),) $(if $(SERVER),--server $(SERVER),)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

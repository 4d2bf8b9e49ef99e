# Two entry points for a fresh machine: `make serve` and `make test`.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
WORKSPACE ?= sample-workspace
PORT ?= 8001

.PHONY: install serve test check bench browser

# torch comes first and pinned: 2.13.0 is the CPU build; any other resolution
# would pull gigabytes of CUDA packages. The package is installed editable as a path
# (compat mode): setuptools' default import finder costs every process 25-30 ms at start.
$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check torch==2.13.0
	$(BIN)/pip install --quiet --disable-pip-version-check -e '.[test]' --config-settings editable_mode=compat
	HF_HUB_OFFLINE=1 $(BIN)/python -m archivist.semantic.onnx_model
	touch $(STAMP)

install: $(STAMP)

# The official MCP clients the tests drive the server with (inspector CLI, conformance).
CLIENTS := mcp-clients/node_modules/.installed
$(CLIENTS): mcp-clients/package.json mcp-clients/package-lock.json
	cd mcp-clients && npm ci --no-audit --no-fund --loglevel=error
	touch $(CLIENTS)

# Debian's Chromium and ChromeDriver for the browser tests, when they are missing
# (Playwright drives /usr/bin/chromium; nothing downloads a browser).
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@if [ ! -x /usr/bin/chromium ] || [ ! -x /usr/bin/chromedriver ]; then \
		echo "Installing Debian's chromium and chromium-driver for the browser tests"; \
		$(SUDO) apt-get update -qq && \
		$(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium chromium-driver; \
	fi

# Beside the sample workspace, the sample agent logs: one source of every kind, each kind's
# `sample` in the registry (archivist/agents/*/kind.toml).
SAMPLE_SOURCES = $(shell $(BIN)/python -m archivist.agents.registry)
SOURCES ?= $(if $(filter sample-workspace,$(WORKSPACE)),$(SAMPLE_SOURCES),)
# The repository's top level is the sample's Datasette configuration folder (its title, licence
# and source are the sample's): another workspace gets the package's defaults, or CONFIG_DIR=DIR.
CONFIG_DIR ?= $(if $(filter sample-workspace,$(WORKSPACE)),.,)

serve: install
	HF_HUB_OFFLINE=1 $(BIN)/archivist serve $(WORKSPACE) --embed --port $(PORT) $(SOURCES) \
		$(if $(CONFIG_DIR),--config-dir $(CONFIG_DIR),)

# Lint, format, types and the layer contract, then the tests.
check: install
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	$(BIN)/lint-imports

test: install $(CLIENTS) browser check
	HF_HUB_OFFLINE=1 $(BIN)/pytest --durations=15

bench: install
	$(BIN)/python bench/index_eval.py
	$(BIN)/python bench/search_speed.py
	$(BIN)/python bench/vector_speed.py
	$(BIN)/python bench/semantic_speed.py
	$(BIN)/python bench/retrieval_quality.py --collection scifact
	$(BIN)/python bench/faceted_speed.py
	$(BIN)/python bench/mcp_startup.py
	$(BIN)/python bench/page_speed.py

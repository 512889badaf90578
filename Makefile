# olm-py: the two commands a newcomer needs are `make demo` and `make test`.
# Both call `make setup`, which makes .venv/ (editable install) and builds or reuses the
# control-plane binaries in a versioned cache outside the repo (see `olm dev build --help`).

PYTHON ?= python3.11
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: setup venv binaries tools image release test test-busy lint typecheck contracts unit integration e2e demo bench soak clean down reference-olm parity parity-corpus kubectl-operator olm-e2e-suite olm-e2e olm-e2e-reference browser console-screenshots

setup: venv binaries

venv: $(STAMP)

$(STAMP): pyproject.toml
	@echo "==> creating $(VENV) with $(PYTHON)"
	@command -v $(PYTHON) >/dev/null || { echo "error: $(PYTHON) not found; install Python 3.11 or run 'make PYTHON=/path/to/python3.11'"; exit 1; }
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --upgrade pip
	@$(BIN)/python -m pip install --quiet -e '.[dev]'
	@touch $(STAMP)

binaries: venv
	@$(BIN)/olm dev build

# Every pinned tool, built once into ~/.cache/olm-py/tools (minutes each when cold) and reused
# in seconds after: Helm (for `helm install` of the chart), the `kubectl operator` plugin and
# the real OLM v0.38.0. Prints their paths and the PATH line for helm and kubectl-operator.
tools: venv
	@$(BIN)/olm dev tools

# The real OLM v0.38.0 (olm, catalog, package-server, OLM's CRDs), built once into the cache
# for the parity suite and `olm dev up --reference-olm` (docs/parity.md); about 7 minutes cold.
reference-olm: venv
	@$(BIN)/python -m olm.devcluster.reference_build

# The `kubectl operator` plugin v0.6.0 (kubectl-operator), built once into the cache for the
# tests that drive olm-py as OLM users do (docs/kubectl-operator.md).
kubectl-operator: venv
	@$(BIN)/python -m olm.devcluster.tools kubectl-operator

# Debian's Chromium, the headless browser of the console's e2e tests and screenshots
# (docs/console.md): found on PATH, else installed once with apt-get.
browser: venv
	@$(BIN)/python -m olm.devcluster.browser

# Screenshots of every console page (docs/console/*.png), taken by the console's browser story
# on a local cluster of its own (docs/console.md).
console-screenshots: setup browser
	OLM_CONSOLE_SCREENSHOTS=docs/console $(BIN)/pytest tests/e2e/test_console.py -k install_approve -q -p no:cacheprovider

# OLM v0.38's own e2e suite (olm-e2e.test, Ginkgo), built once into the cache (docs/olm-e2e.md).
olm-e2e-suite: venv
	@$(BIN)/python -m olm.devcluster.olm_e2e build

# The suite against olm-py: five shards at once, each on a fresh local cluster of its own (a
# FOCUS runs on one); FOCUS/SKIP are Ginkgo regexes, BUDGET each run's time budget (default
# 90m); reports and logs in olm-e2e-results/. olm-e2e-reference: the same against the real
# OLM v0.38 (one cluster: OLM's health ports are fixed), in olm-e2e-results-reference/.
olm-e2e: setup olm-e2e-suite
	@$(BIN)/python -m olm.devcluster.olm_e2e run $(if $(FOCUS),--focus '$(FOCUS)') $(if $(SKIP),--skip '$(SKIP)') $(if $(BUDGET),--budget '$(BUDGET)')

olm-e2e-reference: setup olm-e2e-suite reference-olm
	@$(BIN)/python -m olm.devcluster.olm_e2e run --reference --out olm-e2e-results-reference $(if $(FOCUS),--focus '$(FOCUS)') $(if $(SKIP),--skip '$(SKIP)') $(if $(BUDGET),--budget '$(BUDGET)')

# The container image localhost/olm-py:dev, built offline with podman (docs/image.md).
image: venv
	@$(BIN)/olm dev image

# Publish olm-py (docs/in-cluster.md): the image as $(REGISTRY)/olm-py:<version> and the chart,
# whose values name that image, as oci://$(REGISTRY)/charts/olm-py. VERSION defaults to
# olm-py's; PLAIN_HTTP=1 (automatic for 127.0.0.1) or INSECURE=1 for a test registry.
release: venv
	@$(BIN)/olm dev release --registry '$(REGISTRY)' $(if $(VERSION),--version '$(VERSION)') $(if $(PLAIN_HTTP),--plain-http) $(if $(INSECURE),--insecure)

lint: venv
	$(BIN)/ruff check olm tests benchmarks
	$(BIN)/ruff format --check olm tests benchmarks
	$(BIN)/hadolint Dockerfile

typecheck: venv
	$(BIN)/mypy olm

contracts: venv
	$(BIN)/lint-imports

unit: venv
	HYPOTHESIS_PROFILE=thorough $(BIN)/pytest tests/unit -q

integration: setup image reference-olm kubectl-operator
	$(BIN)/pytest tests/integration -q

e2e: setup kubectl-operator olm-e2e-suite browser
	$(BIN)/pytest tests/e2e -q

test: setup lint typecheck contracts image reference-olm kubectl-operator olm-e2e-suite browser
	HYPOTHESIS_PROFILE=thorough $(BIN)/pytest tests -q

# `make test` with one CPU burner per core beside it, as a loaded CI machine runs it
# (tests/busy.py): waits too short for a cluster step or races show here first.
test-busy: venv
	$(BIN)/python -m tests.busy -- $(MAKE) test

demo: setup
	@$(BIN)/python -m olm.demo

# The parity suite (docs/parity.md): every scenario on the real OLM v0 and on olm-py, diffed;
# fails on any difference not in tests/parity/known_differences.yaml.
parity: setup reference-olm
	$(BIN)/pytest tests/parity -m parity -q

# Every package of ../shared/corpus/community-operators on the real OLM v0, then on olm-py
# (tests/parity/corpus.py); writes docs/parity-corpus.md. Not part of `make test` (~30-45 min).
parity-corpus: setup reference-olm
	$(BIN)/python -m tests.parity.corpus --report docs/parity-corpus.md

bench: setup
	$(BIN)/python -m benchmarks.run

# Soak under faults (issue 30): MINUTES=60 NAMESPACES=60 by default; `make soak MINUTES=5
# NAMESPACES=20` is the quick look. Not part of `make test` or `make bench`.
MINUTES ?= 60
NAMESPACES ?= 60
soak: setup
	$(BIN)/python -m benchmarks.soak --minutes $(MINUTES) --namespaces $(NAMESPACES)

down: venv
	$(BIN)/olm dev down

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache

# codeplane: `make help` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

# The project runs on the Node 24 that npm installs into node_modules (the
# `node` package), whatever Node the machine has.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

STAMP := node_modules/.install-stamp
# Where pods of the local cluster reach this machine (hack/cluster/lib.sh POD_GATEWAY): make dev serves checkouts
# there, and runs install through the package mirror there (`hack/cluster/mirror.sh env` prints the settings:
# CODEPLANE_RUN_EGRESS_ALLOW and CODEPLANE_RUN_PREPROCESS_ENV, each kept when already set).
CLUSTER_NODE_ADDRESS ?= 10.244.0.1

.PHONY: help install run dev test screenshots test-unit test-integration test-chart test-e2e test-helm fuzz typecheck verify format lint build bench bench-runs bench-burst bench-burst-scenario bench-burst-kueue bench-sse bench-analyze bench-memory bench-cli crds clean

help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN {FS = ":.*## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(STAMP): package.json package-lock.json $(wildcard packages/*/package.json)
	npm ci --no-audit --no-fund
	@touch $@

install: $(STAMP) ## Install dependencies (including Node 24) into node_modules

run: $(STAMP) ## Serve the API on :8080 (embedded database unless DATABASE_URL is set)
	node bin/codeplane.mjs serve

dev: $(STAMP) ## Serve API and controller on a cluster: KUBECONFIG's, or the local one (booted if needed; its catalog images, runs install through its package mirror)
	@set -e; \
	if [ -z "$${KUBECONFIG:-}" ]; then \
	  $(MAKE) --no-print-directory cluster-up images; export KUBECONFIG=$(CLUSTER_KUBECONFIG); \
	  export CODEPLANE_ENVIRONMENT_IMAGES="$${CODEPLANE_ENVIRONMENT_IMAGES:-$$(node hack/cluster/catalog.mjs)}"; \
	  export CODEPLANE_GIT_HOST=$${CODEPLANE_GIT_HOST:-$(CLUSTER_NODE_ADDRESS)} CODEPLANE_GIT_PORT=$${CODEPLANE_GIT_PORT:-8081}; \
	  eval "$$(hack/cluster/mirror.sh env $(CLUSTER_NODE_ADDRESS))"; \
	fi; \
	node bin/codeplane.mjs install; \
	CODEPLANE_ALLOW_LOCAL_REPOSITORIES=$${CODEPLANE_ALLOW_LOCAL_REPOSITORIES:-true} node bin/codeplane.mjs serve

test: $(STAMP) ## Run every suite: unit, integration (throw-away Postgres), the Helm chart, the API fuzzer, then cluster, end-to-end and Helm end-to-end
	npm run test:unit
	npm run test:integration
	$(MAKE) --no-print-directory test-chart
	$(MAKE) --no-print-directory fuzz
	$(MAKE) --no-print-directory test-e2e

test-e2e: $(STAMP) ## Cluster smoke, end-to-end and Helm end-to-end tests (boots the local cluster unless KUBECONFIG is set; installs Kueue for the Kueue fair-share test unless CODEPLANE_E2E_KUEUE=0)
	@set -e; \
	if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; export KUBECONFIG=$(CLUSTER_KUBECONFIG); fi; \
	if [ "$${CODEPLANE_E2E_KUEUE:-1}" = 1 ]; then $(MAKE) --no-print-directory kueue; export CODEPLANE_E2E_KUEUE=1; fi; \
	npx vitest run --config test/cluster/vitest.config.ts; \
	npx vitest run --config test/e2e/vitest.config.ts; \
	$(MAKE) --no-print-directory test-helm

test-helm: $(STAMP) ## The chart installed on the local cluster as docs/operators/helm.md says: helm test, a streamed run, upgrade under load, failover, uninstall (boots the cluster unless KUBECONFIG is set)
	@set -e; \
	if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; export KUBECONFIG=$(CLUSTER_KUBECONFIG); fi; \
	npx vitest run --config test/helm/vitest.config.ts

screenshots: $(STAMP) ## Photograph the dashboard's main pages into docs/screenshots (for the README), in Chromium against a throw-away Postgres
	mkdir -p docs/screenshots
	UI_SCREENSHOTS=$(CURDIR)/docs/screenshots npx vitest run --config test/vitest.config.ts test/ui/pages.test.ts test/ui/results.test.ts

test-unit: $(STAMP) ## Run the unit tests only
	npm run test:unit

test-integration: $(STAMP) ## Run the integration tests only
	npm run test:integration

test-chart: $(STAMP) ## helm lint and helm template the chart, checked against the TypeScript builders (builds Helm once: hack/tools/helm.sh)
	npx vitest run --config test/chart/vitest.config.ts

fuzz: $(STAMP) ## Fuzz the API from its OpenAPI document with schemathesis (FUZZ_SECONDS=150, FUZZ_SEED; no cluster)
	test/fuzz/fuzz.sh

typecheck: $(STAMP) ## Type-check the whole project
	npm run typecheck

verify: $(STAMP) ## The static gate (CI runs it before the tests): type-check, typed ESLint and Prettier's check, side by side
	@npm run --silent typecheck & typecheck=$$!; \
	npm run --silent lint & lint=$$!; \
	failed=; \
	npm run --silent format:check || failed="$$failed format (make format fixes it)"; \
	wait $$typecheck || failed="$$failed types"; \
	wait $$lint || failed="$$failed lint"; \
	if [ -n "$$failed" ]; then echo "verify failed:$$failed" >&2; exit 1; fi; \
	echo "verify: types, lint and format are clean"

lint: $(STAMP) ## Typed ESLint over src, test, bench and packages (eslint.config.js)
	npm run lint

format: $(STAMP) ## Format the code with Prettier (.prettierrc.json; prose, YAML and generated files are left alone)
	npm run format

build: $(STAMP) ## Compile to dist/
	npm run build

bench: $(STAMP) ## Run the API benchmark (bench/api.ts)
	npm run bench

bench-analyze: $(STAMP) ## Run the analyzer benchmark (packages/analyzer/bench/analyze.ts; 20k generated files and this project)
	npm run bench:analyze

bench-runs: $(STAMP) ## Run the run benchmark (bench/run-latency.ts; needs a cluster)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	npm run bench:runs

bench-burst: $(STAMP) ## Run the burst benchmark (bench/burst.ts: several accounts' runs under the built-in limiter against plain Jobs; needs a cluster)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	npm run bench:burst

bench-burst-scenario: $(STAMP) ## Issue 32's done-means scenario at full size on the built-in limiter (bench/burst-scenario.ts: A 60 runs, then B 5; needs a cluster)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	node bench/burst-scenario.ts builtin

bench-burst-kueue: $(STAMP) ## The same scenario on Kueue, with a ClusterQueue of 4 CPUs the benchmark makes and removes (needs a cluster with Kueue: make kueue)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	node bench/burst-scenario.ts kueue

bench-environments: $(STAMP) ## Run the environment benchmark (bench/environments.ts: first run vs cached runs, key changes, one build for concurrent runs; needs a cluster)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	npm run bench:environments

bench-sse: $(STAMP) ## Run the SSE fan-out benchmark (bench/sse-fanout.ts; needs a cluster)
	@if [ -z "$${KUBECONFIG:-}" ]; then $(MAKE) --no-print-directory cluster-up images; fi
	npm run bench:sse

bench-memory: $(STAMP) ## Run the idle memory benchmark (bench/idle-memory.ts; with the controller too when a cluster is up)
	npm run bench:memory

bench-cli: $(STAMP) ## Time the user CLI's start-up against a bare node (bench/cli-startup.ts; no server needed)
	npm run bench:cli

crds: $(STAMP) ## Regenerate crds/ from the zod schemas in src/resources
	npm run crds

clean: ## Remove build output and local data
	rm -rf dist .codeplane

-include hack/cluster.mk

# codeplane: `make help` lists the targets.
SHELL := /usr/bin/env bash
.DEFAULT_GOAL := help

# The project runs on the Node 24 that npm installs into node_modules (the
# `node` package), whatever Node the machine has.
export PATH := $(CURDIR)/node_modules/.bin:$(PATH)

STAMP := node_modules/.install-stamp

.PHONY: help install run test test-unit test-integration typecheck build bench clean

help: ## List the targets
	@grep -hE '^[a-zA-Z_-]+:.*## ' $(MAKEFILE_LIST) | sort | awk 'BEGIN {FS = ":.*## "}; {printf "  \033[36m%-18s\033[0m %s\n", $$1, $$2}'

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(STAMP) ## Install dependencies (including Node 24) into node_modules

run: $(STAMP) ## Serve the API on :8080 (embedded database unless DATABASE_URL is set)
	node src/main.ts serve

test: $(STAMP) ## Run every test suite (unit, then integration against a throw-away Postgres)
	npm test

test-unit: $(STAMP) ## Run the unit tests only
	npm run test:unit

test-integration: $(STAMP) ## Run the integration tests only
	npm run test:integration

typecheck: $(STAMP) ## Type-check the whole project
	npm run typecheck

build: $(STAMP) ## Compile to dist/
	npm run build

bench: $(STAMP) ## Run the API benchmark (bench/api.ts)
	npm run bench

clean: ## Remove build output and local data
	rm -rf dist .codeplane

-include hack/cluster.mk

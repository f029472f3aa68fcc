# Front door: `make run` and `make test`. Narrower targets serve one layer.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.package-lock.json
TSC := node_modules/.bin/tsc
MOCHA := node_modules/.bin/mocha
REPORTER := dist/test/support/summary-reporter.js

.PHONY: all install build test run sim soak bench bench-raft clean

all: build

# npm ci installs exactly what package-lock.json pins; it runs again only when the lock changes.
$(NODE_MODULES_STAMP): package-lock.json package.json
	@command -v node >/dev/null || { echo "node (>= 20) is required" >&2; exit 1; }
	npm ci --no-fund --no-audit
	@touch $(NODE_MODULES_STAMP)

install: $(NODE_MODULES_STAMP)

build: install
	$(TSC) -p tsconfig.json

# The whole suite; ends with the plain line "N passed, M failed".
test: build
	$(MOCHA) --reporter $(REPORTER)

# Only the deterministic Raft simulation (SEED=n replays one run, SEEDS=n sets the count).
sim: build
	$(MOCHA) --reporter $(REPORTER) 'dist/test/sim/**/*.test.js'

# A long simulation soak: SEEDS (default 50000) seeds, split over the machine's cores.
soak: build
	node dist/test/sim/soak.js

bench: bench-raft

bench-raft: build
	node dist/bench/raft/raft-bench.js

run: build
	@echo "carina: the Kubernetes API server is not built yet (issue 4); 'make test' runs what exists."

clean:
	rm -rf dist

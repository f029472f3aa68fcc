# Front door: `make run` and `make test`. Narrower targets serve one layer.
SHELL := /bin/bash
NODE_MODULES_STAMP := node_modules/.package-lock.json
TSC := node_modules/.bin/tsc
MOCHA := node_modules/.bin/mocha
REPORTER := dist/test/support/summary-reporter.js

.PHONY: all install build test test-deps run sim soak bench bench-raft bench-kv bench-api bench-api-tracing bench-api-scale bench-api-workers bench-api-proxy bench-api-overload bench-security bench-cluster cluster cluster-down clean

all: build

# npm ci installs exactly what package-lock.json pins; it runs again only when the lock changes.
$(NODE_MODULES_STAMP): package-lock.json package.json
	@command -v node >/dev/null || { echo "node (>= 20) is required" >&2; exit 1; }
	npm ci --no-fund --no-audit
	@touch $(NODE_MODULES_STAMP)

install: $(NODE_MODULES_STAMP)

# tsc runs only when a TypeScript file or the compiler's configuration is newer than the last
# build (an incremental tsc that finds nothing to do still takes seconds): `make run` on a built
# tree starts the server at once.
TS_SOURCES := $(shell find src raft test bench -name '*.ts' -not -path '*/node_modules/*' 2>/dev/null)
BUILD_STAMP := dist/.build-stamp

$(BUILD_STAMP): $(NODE_MODULES_STAMP) tsconfig.json $(TS_SOURCES)
	$(TSC) -p tsconfig.json
	@touch $(BUILD_STAMP)

build: $(BUILD_STAMP)

# etcd and etcdctl 3.4 (interop and conformance tests, the benchmark's anchor) and HAProxy,
# installed from Debian's packages when missing.
test-deps:
	bash test/support/install-test-deps.sh

# The whole suite; ends with the plain line "N passed, M failed, K skipped".
test: build test-deps
	$(MOCHA) --reporter $(REPORTER)

# Only the deterministic Raft simulation (SEED=n replays one run, SEEDS=n sets the count).
sim: build
	$(MOCHA) --no-config --timeout 20000 --exit --forbid-only --reporter $(REPORTER) 'dist/test/sim/**/*.test.js'

# A long simulation soak: SEEDS (default 50000) seeds, split over the machine's cores.
soak: build
	node dist/test/sim/soak.js

bench: bench-raft bench-kv bench-api

bench-raft: build
	node dist/bench/raft/raft-bench.js

# Carina and etcd 3.4, three members each on loopback with fsync on, side by side.
bench-kv: build test-deps
	node dist/bench/kv/kv-bench.js

# The Kubernetes API layer of one replica against its own store, side by side; then the watch
# fan-out in three connection patterns (bench/api/fan-out-bench.ts; --fan-out runs only that).
bench-api: build
	node dist/bench/api/api-bench.js

# What tracing costs (issue 34): creates and GETs with tracing off, at sampling 0, 1% and full,
# interleaved rounds; CONTROL=1 adds an identical untraced replica, BASELINE_MAIN another build.
bench-api-tracing: build
	node dist/bench/api/api-bench.js --tracing

# Issue 19: one replica with --api-workers 1 against 2: the 2 KiB watch fan-out (1,000 watchers,
# 100 writes/s), GET at 16 in flight, ~2.2 KiB Pods beside ConfigMaps. ROUNDS, FAN_OUT_SECONDS and
# more knobs in bench/api/workers-bench.ts. Ports 24300-24302.
bench-api-workers: build
	node dist/bench/api/api-bench.js --workers

# What authentication and authorization cost a request: GET per credential kind, and a RoleBinding
# user among 1,000 Roles and 10,000 RoleBindings against system:masters. Ports 24310-24312.
bench-security: build
	node dist/bench/api/security-bench.js

# A large collection on one replica: Pods of ~2.2 KiB filled to 10,000, 50,000 and 150,000
# (SCALE_SIZES), with LIST times and memory per object at each size. Ports 24320-24322.
bench-api-scale: build
	node dist/bench/api/scale-bench.js

# Issue 33: one replica under a noisy user at 4x its LIST capacity beside 1,000 kubelets' Lease
# renewals (100 PUTs/s) and a system:masters GET loop, API Priority and Fairness on and off side by
# side. ROUNDS, FLOOD_SECONDS and more knobs in bench/api/overload-bench.ts. Ports 24330-24332.
bench-api-overload: build
	node dist/bench/api/overload-bench.js

# Issue 31: the connect subresources against the node agent directly (a kubelet stand-in in a
# network namespace; needs root): pods/log MB/s, exec 1-byte echo p50/p99, port-forward MB/s.
# ROUNDS, LOG_MB and ECHOES are described in bench/api/proxy-bench.ts.
bench-api-proxy: build test-deps
	node dist/bench/api/proxy-bench.js

# Three replicas behind HAProxy against one replica: create/get, watch fan-out (1,000 and 10,000
# watchers), leader kill -9 and recovery. ROUNDS, WATCHERS (e.g. WATCHERS=100 ROUNDS=1) and more
# knobs are listed in bench/cluster/cluster-bench.ts. Ports 24100-24202.
bench-cluster: build test-deps
	node dist/bench/cluster/cluster-bench.js

# One replica with its data in ./data: the Kubernetes API on https://127.0.0.1:6443 (admin
# kubeconfig in ./data/admin.kubeconfig) and the store's etcd v3 API on 127.0.0.1:2379.
run: build
	bin/carina server --data-dir ./data

# Three replicas and HAProxy on loopback; the admin kubeconfig is ./data/cluster/admin.kubeconfig.
cluster: build test-deps
	bin/carina local-cluster up --dir ./data/cluster

cluster-down:
	bin/carina local-cluster down --dir ./data/cluster

clean:
	rm -rf dist

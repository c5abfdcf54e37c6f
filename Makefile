# Two commands on a fresh machine: `make run` and `make test`. Both install
# what they need: Go modules, libchdb from its npm package, and (for the
# tests) versitygw, a real S3 server, built from the Go module proxy,
# Debian's Chromium for the UI's browser tests, and Node.js with the
# instrumentation libraries of the conformance suite, from npm.

GO          ?= go
CHDB_DIR    := $(CURDIR)/.cache/chdb
export CHDB_LIB_PATH := $(CHDB_DIR)/libchdb.so
DATA        ?= data
TEST_TIMEOUT ?= 25m
VERSION     ?= $(shell git describe --always --dirty 2>/dev/null || echo dev)

NODE_DIR    := $(CURDIR)/.cache/node
CONFORMANCE_JS := conformance/js

.PHONY: all deps build run browser node test test-unit race lint generate demo bench release clean

all: build

deps: $(CHDB_LIB_PATH).ok
	$(GO) mod download

$(CHDB_LIB_PATH).ok: scripts/install-libchdb.sh
	scripts/install-libchdb.sh $(CHDB_DIR)

build: deps
	$(GO) build -ldflags "-X main.version=$(VERSION)" -o bin/docket ./cmd/docket

run: build
	bin/docket dev --data $(DATA)

bin/versitygw: scripts/install-versitygw.sh
	GO=$(GO) scripts/install-versitygw.sh

browser:
	scripts/install-chromium.sh

# Node.js and the pinned npm packages the conformance suite runs (the
# script does nothing when both are in place).
node:
	scripts/install-node.sh $(NODE_DIR) $(CONFORMANCE_JS)

test: deps bin/versitygw browser node
	$(GO) vet ./...
	$(GO) test -count=1 -timeout $(TEST_TIMEOUT) ./...

# Day-to-day tests: -short, hermetic. No chDB, S3 server, Chromium or Node:
# the tests that need them skip and say so (internal/shorttest); the library
# path points nowhere so that a test that opens chDB anyway fails.
test-unit:
	CHDB_LIB_PATH=/nonexistent/test-unit-is-hermetic/libchdb.so $(GO) test -short ./...

# The race detector on the packages that run goroutines over shared state:
# the content-ref processor, the content store (on the real S3 server), the
# ledger exporter (on chDB), the reconcile extension, and the sign-in
# throttle and session tests of ui/auth (its other tests hash passwords with
# argon2, slow under -race and without goroutines of their own).
RACE_PKGS := ./processors/contentrefprocessor/ ./contentstore/ ./ledger/ledgerexporter/ ./reconcile/reconcileextension/
race: deps bin/versitygw
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) $(RACE_PKGS)
	$(GO) test -race -count=1 -timeout $(TEST_TIMEOUT) -run 'TestParallelGuessesFromOneAddress|TestFloodDoesNotDelayAnotherAddress|TestSessionExpiry|TestAccountsAddedElsewhereAreSeen' ./ui/auth/

# Static checks (.golangci.yml): staticcheck, errcheck, errorlint, govet
# with shadow on err, gosec.
lint: bin/golangci-lint
	bin/golangci-lint run ./...

bin/golangci-lint: scripts/install-golangci-lint.sh scripts/install-go-tool.sh
	GO=$(GO) scripts/install-golangci-lint.sh

# Component scaffolding from each component's metadata.yaml (its
# `//go:generate mdatagen metadata.yaml` line): internal/metadata (status,
# telemetry builder), documentation.md and the generated tests. CI fails
# when the committed files differ from what this writes.
generate: bin/mdatagen
	PATH="$(CURDIR)/bin:$$PATH" $(GO) generate -run '^//go:generate mdatagen ' ./...

bin/mdatagen: scripts/install-mdatagen.sh scripts/mdatagen/go.mod scripts/mdatagen/go.sum
	GO=$(GO) scripts/install-mdatagen.sh

# Ratios against baselines measured in the same run.
bench: build
	$(GO) run ./bench/ledger
	$(GO) run ./bench/lookup
	@if [ -d bench/sqlsanitizer ]; then $(GO) run ./bench/sqlsanitizer; fi

# Needs `make run` in another terminal.
demo: build
	$(GO) build -o bin/llmapp ./examples/llmapp
	$(GO) build -o bin/loaddriver ./examples/loaddriver
	scripts/demo.sh

# Static binaries, SBOMs, SHA256SUMS and its signature in dist/VERSION/;
# needs DOCKET_RELEASE_KEY (README, Releases). Not part of `make test`.
release: bin/cyclonedx-gomod
	GO=$(GO) VERSION=$(VERSION) scripts/release.sh

bin/cyclonedx-gomod: scripts/install-cyclonedx-gomod.sh scripts/install-go-tool.sh
	GO=$(GO) scripts/install-cyclonedx-gomod.sh

clean:
	rm -rf bin

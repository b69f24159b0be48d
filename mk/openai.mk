# OpenAI's npm SDKs, 4.x and 7.x, for the compatibility test (internal/openaiapi/npm_test.go): installed from the
# lockfile in internal/openaiapi/testdata/npm. Without npm the test skips and says why. Included from the top
# Makefile.

OPENAI_NPM = internal/openaiapi/testdata/npm
OPENAI_NPM_MODULES = $(OPENAI_NPM)/node_modules/.package-lock.json

.PHONY: openai-npm-deps

$(OPENAI_NPM_MODULES): $(OPENAI_NPM)/package-lock.json
	cd $(OPENAI_NPM) && npm ci --no-audit --no-fund --loglevel=error

openai-npm-deps:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(OPENAI_NPM_MODULES); \
	else echo "npm not found: the OpenAI npm SDK compatibility test will skip and say so"; fi

deps: openai-npm-deps

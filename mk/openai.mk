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

# openai 7.x's Responses helpers and the OpenAI Agents SDK, for internal/openaiapi/responses_npm_test.go.
AGENTS_NPM = internal/openaiapi/testdata/agents
AGENTS_NPM_MODULES = $(AGENTS_NPM)/node_modules/.package-lock.json

.PHONY: agents-npm-deps

$(AGENTS_NPM_MODULES): $(AGENTS_NPM)/package-lock.json
	cd $(AGENTS_NPM) && npm ci --no-audit --no-fund --loglevel=error

agents-npm-deps:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(AGENTS_NPM_MODULES); \
	else echo "npm not found: the Agents SDK compatibility test will skip and say so"; fi

deps: agents-npm-deps

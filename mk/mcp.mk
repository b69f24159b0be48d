# The official MCP npm SDK for the compatibility test of /mcp (internal/mcp/server/npm_test.go): installed from the
# lockfile in internal/mcp/server/testdata/npm. Without npm the test skips and says why. Included from the top Makefile.

MCP_NPM = internal/mcp/server/testdata/npm
# npm ci writes this file; it is newer than the lockfile once the packages are what the lockfile says.
MCP_NPM_MODULES = $(MCP_NPM)/node_modules/.package-lock.json

.PHONY: mcp-npm-deps

$(MCP_NPM_MODULES): $(MCP_NPM)/package-lock.json
	cd $(MCP_NPM) && npm ci --no-audit --no-fund --loglevel=error

mcp-npm-deps:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(MCP_NPM_MODULES); \
	else echo "npm not found: the MCP npm SDK compatibility test will skip and say so"; fi

deps: mcp-npm-deps

.PHONY: bench-mcp

## bench-mcp: issue 33's figures: an MCP call's round trip beyond the tool's own time (p50, p99), and /mcp's
## ask-agent latency on the offline model
bench-mcp:
	$(GO) test -run '^$$' -bench 'RoundTrip' -benchtime 2000x ./internal/mcp/client/
	$(GO) test -run '^$$' -bench 'AskAgent' -benchtime 200x ./internal/mcp/server/

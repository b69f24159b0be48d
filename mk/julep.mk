# Julep's npm SDK for the compatibility test (internal/julepapi/sdk_test.go): installed from the lockfile in
# internal/julepapi/testdata/sdk. Without npm the test skips and says why. Included from the top Makefile.

JULEP_SDK = internal/julepapi/testdata/sdk
# npm ci writes this file; it is newer than the lockfile once the packages are what the lockfile says.
JULEP_SDK_MODULES = $(JULEP_SDK)/node_modules/.package-lock.json

.PHONY: julep-sdk-deps

$(JULEP_SDK_MODULES): $(JULEP_SDK)/package-lock.json
	cd $(JULEP_SDK) && npm ci --no-audit --no-fund --loglevel=error

julep-sdk-deps:
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(JULEP_SDK_MODULES); \
	else echo "npm not found: the Julep SDK compatibility test will skip and say so"; fi

deps: julep-sdk-deps

.PHONY: bench-julep

## bench-julep: issue 12's figures (doc create to first search hit, search among 10,000 docs, chat overhead on the
## offline model, prompt sizes over a 200-turn session with and without adaptive); a few minutes
bench-julep: models
	$(GO) test -run '^$$' -bench 'Julep' -benchtime 300x -timeout 30m ./internal/julepapi/

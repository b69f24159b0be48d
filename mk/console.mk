# The web console (internal/console). Its front end is built from web/package-lock.json with esbuild; the build
# (internal/console/dist and assets.sum) is committed, so `go build` alone serves a working console and only a
# change to internal/console/web needs `make console`. Included from the top Makefile.

CONSOLE_WEB = internal/console/web
# npm ci writes this file; it is newer than the lockfile once the packages are what the lockfile says.
CONSOLE_MODULES = $(CONSOLE_WEB)/node_modules/.package-lock.json

.PHONY: console console-deps chromium

## console: rebuild the console's assets (then commit internal/console/dist and internal/console/assets.sum)
console: $(CONSOLE_MODULES)
	cd $(CONSOLE_WEB) && node build.mjs

$(CONSOLE_MODULES): $(CONSOLE_WEB)/package-lock.json
	cd $(CONSOLE_WEB) && npm ci --no-audit --no-fund --loglevel=error

# What the browser test needs: the npm packages (playwright-core among them) and Debian's chromium. Without npm or
# when apt cannot install chromium, the test skips and says why.
console-deps: chromium
	@if command -v npm >/dev/null 2>&1; then $(MAKE) --no-print-directory $(CONSOLE_MODULES); \
	else echo "npm not found: the console's browser test will skip and say so"; fi

chromium:
	@if ! command -v chromium >/dev/null 2>&1; then \
		echo "installing chromium (Debian) for the console's browser test"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null || \
			echo "chromium could not be installed: the console's browser test will skip and say so"; \
	fi

deps: console-deps

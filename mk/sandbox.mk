# The code_interpreter sandbox (internal/sandbox): bubblewrap, and Debian's python3 with numpy, pandas and
# matplotlib. Included from the top Makefile; `make run` and `make deps` run deps-sandbox.
#
# The sandbox mounts only /usr, so it is Debian's /usr/bin/python3 these go with, never a python3 found on the
# PATH (a pyenv shim, say). Without them, code_interpreter is unavailable (the node's /readyz says why) and
# internal/sandbox's tests skip or fail saying what is missing.

SANDBOX_PACKAGES = bubblewrap python3 python3-numpy python3-pandas python3-matplotlib

.PHONY: deps-sandbox

## deps-sandbox: install bubblewrap and Debian's python3 with numpy, pandas and matplotlib when missing, best
## effort: it says what it did, and never fails (code_interpreter is then unavailable, and /readyz says why)
deps-sandbox:
	@if [ -x /usr/bin/bwrap ] && /usr/bin/python3 -c 'import numpy, pandas, matplotlib' >/dev/null 2>&1; then \
		echo "code_interpreter sandbox: bubblewrap and python3 with numpy, pandas and matplotlib are installed"; \
	elif ! command -v apt-get >/dev/null 2>&1; then \
		echo "code_interpreter sandbox: $(SANDBOX_PACKAGES) are Debian packages and there is no apt-get here;" \
			"code_interpreter will be unavailable (/readyz says why)"; \
	else \
		echo "code_interpreter sandbox: installing $(SANDBOX_PACKAGES) (Debian)"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		if $$SUDO apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(SANDBOX_PACKAGES) >/dev/null; then \
			echo "code_interpreter sandbox: installed $(SANDBOX_PACKAGES)"; \
		else \
			echo "code_interpreter sandbox: $(SANDBOX_PACKAGES) could not be installed: code_interpreter will be" \
				"unavailable (/readyz says why), and the sandbox tests skip saying what is missing"; \
		fi; \
	fi

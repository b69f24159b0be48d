# The code_interpreter sandbox (internal/sandbox): bubblewrap, and Debian's python3 with numpy, pandas and
# matplotlib. Included from the top Makefile; `make deps` runs deps-sandbox.
#
# The sandbox mounts only /usr, so it is Debian's /usr/bin/python3 these go with, never a python3 found on the
# PATH (a pyenv shim, say). Without them, internal/sandbox's tests skip or fail saying what is missing.

SANDBOX_PACKAGES = bubblewrap python3 python3-numpy python3-pandas python3-matplotlib

.PHONY: deps-sandbox

## deps-sandbox: install bubblewrap and Debian's python3 with numpy, pandas and matplotlib, when missing
deps-sandbox:
	@if ! [ -x /usr/bin/bwrap ] || ! /usr/bin/python3 -c 'import numpy, pandas, matplotlib' >/dev/null 2>&1; then \
		echo "installing $(SANDBOX_PACKAGES) (Debian) for the code_interpreter sandbox"; \
		if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
		$$SUDO apt-get update -qq && \
			DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $(SANDBOX_PACKAGES) >/dev/null || \
			{ echo "$(SANDBOX_PACKAGES) could not be installed: the sandbox tests will skip and say what is missing"; }; \
	fi

# make demo: install what is needed, then a time-compressed PTS run of all four tests on a
#            scratch loop device, ending in a report.
# make test: install what is needed, then the test suite CI runs (unit, FakeExecutor runner, real
#            fio on loop and zram devices as root, faults, report rendering), without the tests
#            marked slow; make test-full runs every test (signals at every point of a run).
SHELL := /bin/bash
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_PACKAGES := fio util-linux e2fsprogs procps chromium poppler-utils
.PHONY: install deps demo test test-full test-fast bench

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

install: deps
	$(PYTHON) -m pip install -q -e '.[test]'

demo: install
	ssdpts demo

test: install
	$(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow"

test-full: install
	$(PYTHON) -m pytest -q -p no:cacheprovider

# Unit tests only (no devices, no fio runs): seconds.
test-fast: install
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/unit

bench: install
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test lat --schedule all
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test iops
	$(SUDO) $(PYTHON) benchmarks/zram_iops.py
	$(PYTHON) benchmarks/report_render.py

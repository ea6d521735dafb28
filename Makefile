# make demo: install what is needed, then a time-compressed PTS run of all four tests on a
#            scratch loop device, ending in a report.
# make demo-ssd: the same four tests on the reference SSD (refssd/, a simulated drive with real
#            FTL dynamics served as a loop device), ending in a report; see docs/reference-ssd.md.
# make test: install what is needed, the duplicate-code check (make lint), then the test suite CI
#            runs (unit, FakeExecutor runner, real fio on loop and zram devices as root, faults, report
#            rendering, WSAT and purge proofs on the reference SSD), without the tests marked slow;
#            make test-full runs every test (signals at every point of a run, the IOPS and LAT proofs
#            on the reference SSD).
SHELL := /bin/bash
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# rustup puts cargo in ~/.cargo/bin, which a non-login shell may not have on its PATH
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
DEB_PACKAGES := fio util-linux e2fsprogs procps chromium poppler-utils fuse3
.PHONY: install deps refssd demo demo-ssd lint test test-full test-fast bench

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null; \
	fi

install: deps
	$(PYTHON) -m pip install -q -e '.[test]'

# The reference SSD is a Rust program (cargo from rustup; crates from crates.io, pinned by Cargo.lock).
refssd:
	$(CARGO) build --release --locked -q --manifest-path refssd/Cargo.toml

demo: install
	ssdpts demo

# No block of six or more lines written twice in src/ssdpts (pylint's duplicate-code check,
# configured in pyproject.toml); seconds. Module sizes and layering are tests (tests/unit/test_layout.py).
lint: install
	$(PYTHON) -m pylint src/ssdpts

demo-ssd: install refssd
	$(PYTHON) refssd/demo.py

test: install lint refssd
	$(CARGO) test --release --locked -q --manifest-path refssd/Cargo.toml
	$(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow"

test-full: install refssd
	$(PYTHON) -m pytest -q -p no:cacheprovider

# Unit tests only (no devices, no fio runs): seconds.
test-fast: install
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/unit

bench: install refssd
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test lat --schedule all
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test iops
	$(SUDO) $(PYTHON) benchmarks/zram_iops.py
	$(SUDO) $(PYTHON) benchmarks/guard_cost.py
	$(PYTHON) benchmarks/report_render.py
	$(SUDO) $(PYTHON) benchmarks/refssd_serving.py

# make demo: install what is needed, then a time-compressed PTS run of all four tests on a
#            scratch loop device, ending in a report.
# make demo-ssd: the same four tests on the reference SSD (refssd/, a simulated drive with real
#            FTL dynamics served as a loop device), ending in a report; see docs/reference-ssd.md.
# make demo-sprandom: the IOPS test on the reference SSD preconditioned both ways (the PTS's WIPC, and
#            fio's sprandom fill at the OP a WSAT run's drive model gives), their time to result side
#            by side; builds fio 3.41 first (docs/methodology.md#preconditioning-by-sprandom).
# make test: install what is needed, the duplicate-code check (make lint), then the test suite CI
#            runs (unit, FakeExecutor runner, real fio on loop and zram devices as root, faults, report
#            rendering, WSAT and purge proofs on the reference SSD, the device lab's CI subset:
#            emulated NVMe/SATA/SCSI drives in a QEMU guest), without the tests marked slow;
#            make test-full runs every test (signals at every point of a run, the IOPS and LAT proofs
#            on the reference SSD, the whole lab).
# make test-lab: the whole device lab only (docs/lab.md).
# make fio: fio 3.41 or later (sprandom) for ssdpts's own use in build/fio/bin/fio, built from Debian's
#            upstream source tarball; ssdpts runs it unless --fio PATH names another (docs/methodology.md#fio).
SHELL := /bin/bash
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# rustup puts cargo in ~/.cargo/bin, which a non-login shell may not have on its PATH
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
# Each target installs what it uses (make demo needs neither QEMU nor the lab's drive tools).
# ssdpts and its demo: fio; chromium prints the reports' PDF; fonts-dejavu-core is the font the
# report's HTML and plots name.
DEB_PACKAGES := fio util-linux procps chromium fonts-dejavu-core
# The tests add: e2fsprogs (filesystems on their loop devices), poppler-utils (checks the printed
# pages); the reference SSD (make refssd) is served through fuse3.
TEST_PACKAGES := e2fsprogs poppler-utils
REFSSD_PACKAGES := fuse3
# make test-full adds the Prometheus server: it scrapes 'ssdpts status --serve' during a real run
# (tests/integration/test_metrics_prometheus.py, about a minute).
FULL_PACKAGES := prometheus
# The device lab (tests/lab, docs/lab.md): QEMU, a static busybox for the guest's initramfs and the
# drive tools the guest runs from the host's root filesystem. Its guest kernel is not installed:
# the lab downloads Debian's linux-image-amd64 package itself and caches it (SSDPTS_LAB_CACHE).
# blktrace records traces in the guest, whose kernel allows it; its blkparse is the reference the
# tests hold ssdpts's blktrace reader to.
LAB_PACKAGES := qemu-system-x86 busybox-static nvme-cli smartmontools hdparm sdparm sg3-utils pciutils blktrace
.PHONY: install install-test deps deps-test rust refssd fio demo demo-ssd demo-sprandom lint test test-full test-fast test-lab bench

# $(call apt,PACKAGES[,apt-get options]): install those of PACKAGES that are missing.
define apt
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  $(SUDO) apt-get update -qq || exit 1; \
	  DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $(2) $$missing >/dev/null || exit 1; \
	fi
endef

deps:
	$(call apt,$(DEB_PACKAGES))

deps-test: deps
	$(call apt,$(TEST_PACKAGES))
	$(call apt,$(LAB_PACKAGES),--no-install-recommends)

install: deps
	$(PYTHON) -m pip install -q -e .

install-test: deps-test
	$(PYTHON) -m pip install -q -e '.[test,parquet]'

# The reference SSD is a Rust program; its crates (crates.io, pinned by Cargo.lock, a version-4 lock
# file) need Rust $(RUST_MIN) or later. cargo from PATH or rustup; where there is none, Debian's
# cargo-web (Debian 12: Rust 1.85 or later; its plain 'cargo' package is 1.63, too old for them).
RUST_MIN := 1.78
rust:
	@v=$$($(CARGO) --version 2>/dev/null | cut -d' ' -f2); \
	if [ -n "$$v" ] && ! printf '%s\n' $(RUST_MIN) "$$v" | sort -V -C; then \
	  echo "make: refssd needs Rust $(RUST_MIN) or later, but $(CARGO) is $$v: update it (rustup update), then make again" >&2; exit 1; \
	elif [ -z "$$v" ]; then \
	  if command -v apt-get >/dev/null && { apt-cache show cargo-web >/dev/null 2>&1 || \
	       { $(SUDO) apt-get update -qq && apt-cache show cargo-web >/dev/null 2>&1; }; }; then \
	    echo "installing Debian package: cargo-web (Rust for the reference SSD)"; \
	    DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq cargo-web >/dev/null || exit 1; \
	  else \
	    echo "make: refssd needs Rust $(RUST_MIN) or later and there is no cargo: install it with rustup (https://rustup.rs) or your distribution's package, then make again" >&2; exit 1; \
	  fi; \
	fi

refssd: rust
	$(call apt,$(REFSSD_PACKAGES))
	$(CARGO) build --release --locked -q --manifest-path refssd/Cargo.toml

demo: install
	ssdpts demo

# What scripts/build-fio.sh needs to fetch, check and build fio: a C toolchain, libaio (fio's libaio
# engine, ssdpts's fallback from io_uring), zlib, and the tools that check Debian's signed Sources.
FIO_BUILD_PACKAGES := build-essential libaio-dev zlib1g-dev curl xz-utils gpgv debian-archive-keyring
# Quick when built (nothing fetched); else about half a minute on two CPUs.
fio:
	$(call apt,$(FIO_BUILD_PACKAGES))
	@scripts/build-fio.sh

# No block of six or more lines written twice in src/ssdpts (pylint's duplicate-code check,
# configured in pyproject.toml); seconds. Module sizes and layering are tests (tests/unit/test_layout.py).
lint: install-test
	$(PYTHON) -m pylint src/ssdpts

demo-ssd: install refssd
	$(PYTHON) refssd/demo.py

demo-sprandom: install refssd fio
	$(PYTHON) refssd/demo_precondition.py

test: install-test lint refssd
	$(CARGO) test --release --locked -q --manifest-path refssd/Cargo.toml
	$(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" --durations=30

test-full: install-test refssd fio
	$(call apt,$(FULL_PACKAGES),--no-install-recommends)
	$(PYTHON) -m pytest -q -p no:cacheprovider

# The whole device lab: one QEMU guest, every emulated drive, every lab test (about half an hour under TCG).
test-lab: install-test
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/lab

# Unit tests only (no devices, no fio runs): seconds.
test-fast: install-test
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/unit

bench: install-test refssd
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test lat --schedule all
	$(SUDO) $(PYTHON) benchmarks/boundaries.py --test iops
	$(SUDO) $(PYTHON) benchmarks/zram_iops.py
	$(SUDO) $(PYTHON) benchmarks/guard_cost.py
	$(SUDO) $(PYTHON) benchmarks/verify_cost.py
	$(SUDO) $(PYTHON) benchmarks/devtrace_cost.py
	$(PYTHON) benchmarks/report_render.py
	$(SUDO) $(PYTHON) benchmarks/refssd_serving.py

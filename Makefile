# make demo: install what is needed, then a time-compressed PTS run of all four tests on a
#            scratch loop device, ending in a report.
# make demo-ssd: the same four tests on the reference SSD (refssd/, a simulated drive with real
#            FTL dynamics served as a loop device), ending in a report; see docs/reference-ssd.md.
# make test: install what is needed, the duplicate-code check (make lint), then the test suite CI
#            runs (unit, FakeExecutor runner, real fio on loop and zram devices as root, faults, report
#            rendering, WSAT and purge proofs on the reference SSD, the device lab's CI subset:
#            emulated NVMe/SATA/SCSI drives in a QEMU guest), without the tests marked slow;
#            make test-full runs every test (signals at every point of a run, the IOPS and LAT proofs
#            on the reference SSD, the whole lab).
# make test-lab: the whole device lab only (docs/lab.md).
SHELL := /bin/bash
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
# rustup puts cargo in ~/.cargo/bin, which a non-login shell may not have on its PATH
CARGO ?= $(shell command -v cargo || echo $(HOME)/.cargo/bin/cargo)
# chromium prints the reports' PDF (and renders them in the report tests); fonts-dejavu-core is the
# font the report's HTML and plots name; poppler-utils checks the printed pages.
DEB_PACKAGES := fio util-linux e2fsprogs procps chromium fonts-dejavu-core poppler-utils fuse3
# The device lab (tests/lab, docs/lab.md): QEMU, a static busybox for the guest's initramfs and the
# drive tools the guest runs from the host's root filesystem. Its guest kernel is not installed:
# the lab downloads Debian's linux-image-amd64 package itself and caches it (SSDPTS_LAB_CACHE).
# blktrace records traces in the guest, whose kernel allows it; its blkparse is the reference the
# tests hold ssdpts's blktrace reader to.
LAB_PACKAGES := qemu-system-x86 busybox-static nvme-cli smartmontools hdparm sdparm sg3-utils pciutils blktrace
.PHONY: install deps refssd demo demo-ssd lint test test-full test-fast test-lab bench

deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	lab=""; for p in $(LAB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || lab="$$lab $$p"; done; \
	if [ -n "$$missing$$lab" ]; then \
	  echo "installing Debian packages:$$missing$$lab"; \
	  $(SUDO) apt-get update -qq || exit 1; \
	  if [ -n "$$missing" ]; then DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing >/dev/null || exit 1; fi; \
	  if [ -n "$$lab" ]; then DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq --no-install-recommends $$lab >/dev/null || exit 1; fi; \
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
	$(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow" --durations=30

test-full: install refssd
	$(PYTHON) -m pytest -q -p no:cacheprovider

# The whole device lab: one QEMU guest, every emulated drive, every lab test (about half an hour under TCG).
test-lab: install
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/lab

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

# make demo: install what is needed, then a time-compressed PTS run of all four tests on a
#            scratch loop device, ending in a report.
# make test: install what is needed, then the test suite CI runs (unit, FakeExecutor runner, real
#            fio on loop and zram devices as root, faults, report rendering, the device lab's CI
#            subset: emulated NVMe/SATA/SCSI drives in a QEMU guest), without the tests marked slow;
#            make test-full runs every test (signals at every point of a run, the whole lab).
# make test-lab: the whole device lab only (docs/lab.md).
SHELL := /bin/bash
PYTHON ?= python3
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
DEB_PACKAGES := fio util-linux e2fsprogs procps chromium poppler-utils
# The device lab (tests/lab, docs/lab.md): QEMU, a static busybox for the guest's initramfs and the
# drive tools the guest runs from the host's root filesystem. Its guest kernel is not installed:
# the lab downloads Debian's linux-image-amd64 package itself and caches it (SSDPTS_LAB_CACHE).
LAB_PACKAGES := qemu-system-x86 busybox-static nvme-cli smartmontools hdparm sdparm sg3-utils pciutils
.PHONY: install deps demo test test-full test-fast test-lab bench

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

demo: install
	ssdpts demo

test: install
	$(PYTHON) -m pytest -q -p no:cacheprovider -m "not slow"

test-full: install
	$(PYTHON) -m pytest -q -p no:cacheprovider

# The whole device lab: one QEMU guest, every emulated drive, every lab test (about half an hour under TCG).
test-lab: install
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/lab

# Unit tests only (no devices, no fio runs): seconds.
test-fast: install
	$(PYTHON) -m pytest -q -p no:cacheprovider tests/unit

bench: install
	$(SUDO) $(PYTHON) benchmarks/round_overhead.py --alternatives
	$(SUDO) $(PYTHON) benchmarks/zram_iops.py
	$(PYTHON) benchmarks/report_render.py

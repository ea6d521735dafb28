#!/bin/busybox sh
# /init of the lab guest's initramfs (tests/lab/guest.py builds it): load the drivers under test,
# mount the host's root filesystem read-only over 9p and the scratch share read-write, start udev
# so the guest looks like an ordinary Linux host to lsblk and the tools, then hand over to the
# agent (tests/lab/agent.py, run by the host's own python) that executes the tests' commands.
/bin/busybox mkdir -p /bin /proc /sys /dev /host
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev

say() { echo "lab-init [$(cut -d" " -f1 /proc/uptime) s]: $*" >/dev/ttyS0; }
fail() { say "FAILED: $*"; echo o >/proc/sysrq-trigger; sleep 30; }

for m in $(cat /modules.load); do
    insmod "/lib/modules/$(uname -r)/$m" || say "insmod $m failed"
done

scratch=""
for arg in $(cat /proc/cmdline); do
    case "$arg" in ssdpts.scratch=*) scratch="${arg#ssdpts.scratch=}" ;; esac
done
[ -n "$scratch" ] || fail "no ssdpts.scratch= on the kernel command line"

# msize: 9p's per-message payload; the default (8 KiB) makes every python import a crawl.
# cache=loose on the read-only root lets the guest page cache keep what it has read.
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host \
    || fail "cannot mount the host root over 9p"
mount -t proc proc /host/proc
mount -t sysfs sys /host/sys
mount -t devtmpfs dev /host/dev
mkdir -p /host/dev/pts /host/dev/shm 2>/dev/null
mount -t devpts devpts /host/dev/pts
# The host's own copy of each directory the guest gets a fresh tmpfs for stays reachable under
# /keep: the checkout and its python may lie there (a clone in /tmp), see below.
for d in /dev/shm /tmp /run /var/tmp /var/lib/smartmontools /var/log; do
    [ -d "/host$d" ] || continue
    mkdir -p "/keep$d" && mount -o bind "/host$d" "/keep$d"
    mount -t tmpfs -o mode=1777 tmpfs "/host$d"
done
[ -d /host/sys/kernel/tracing ] && mount -t tracefs nodev /host/sys/kernel/tracing 2>/dev/null
# Under multi-threaded TCG, kernel text patched while the other vCPU runs can lock both up
# (text_poke_bp: one vCPU loops in the int3 handler with interrupts off, the other waits for it to
# answer an IPI). ssdpts enabling its block events mid-run did this: a soft lockup, the run stalled
# for good (docs/lab.md). A tracepoint's code is patched only when its probes go 0->1->2 (and back);
# two idle instances, set up before anything else runs, hold each block event at two probes, so
# the instance ssdpts adds is a third and patches nothing. They record nothing (tracing off, a
# filter no device matches).
t=/host/sys/kernel/tracing/instances
if [ -d "$t" ]; then
    for i in lab-hold-1 lab-hold-2; do
        mkdir "$t/$i" && echo 0 > "$t/$i/tracing_on" || { say "cannot create tracefs instance $i"; break; }
        for ev in block_rq_issue block_rq_complete block_rq_requeue block_bio_queue block_bio_complete; do
            echo "dev == 0" > "$t/$i/events/block/$ev/filter" && echo 1 > "$t/$i/events/block/$ev/enable" \
                || say "cannot hold block/$ev in $i"
        done
    done
fi
# After the tmpfs mounts: the scratch directory may lie under one of them (/tmp, /var/tmp).
mkdir -p "/host$scratch" 2>/dev/null
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 scratch "/host$scratch" \
    || fail "cannot mount the scratch share at $scratch"

. "/host$scratch/guest.env"  # LAB_PYTHON, LAB_AGENT, LAB_PATH, LAB_UDEVD

# A checkout (tests/lab/agent.py's tree) or a python (a venv) under one of those directories:
# bind the host's copy back at its own path over the guest's tmpfs, read-only as the rest.
for p in "${LAB_AGENT%/tests/lab/agent.py}" "${LAB_PYTHON%/bin/*}"; do
    [ -e "/host$p" ] && continue
    [ -e "/keep$p" ] || continue
    mkdir -p "/host$p" && mount -o bind "/keep$p" "/host$p" || say "cannot reach $p in the guest"
done

env="PATH=$LAB_PATH HOME=/tmp/home LANG=C.UTF-8 PYTHONDONTWRITEBYTECODE=1"
if [ -n "$LAB_UDEVD" ]; then
    say "starting udev"
    chroot /host /usr/bin/env -i $env "$LAB_UDEVD" --daemon >/dev/null 2>&1
    # udevd forks before it listens: uevents triggered before that are lost.
    n=0; while [ ! -S /host/run/udev/control ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n+1)); done
    chroot /host /usr/bin/env -i $env udevadm trigger --action=add >/dev/null 2>&1 \
        && chroot /host /usr/bin/env -i $env udevadm settle --timeout=120 >/dev/null 2>&1 \
        || say "udev did not start: lsblk and by-id links will lack udev's fields"
fi
say "starting the agent"
exec chroot /host /usr/bin/env -i $env "$LAB_PYTHON" "$LAB_AGENT" --scratch "$scratch"

#!/bin/bash
# --realtime against normal priority (docs/methodology.md "Step boundaries"): LAT and IOPS on a loop
# device and zram, two busy loops at normal priority beside every run, normal and SCHED_FIFO 1
# (what --realtime gives a run) taking turns. As root: bash benchmarks/boundaries_realtime.sh
cd "$(dirname "$0")/.."
for t in lat iops; do for dev in loop zram; do for mode in normal rt; do
  sh -c 'while :; do :; done' & b1=$!; sh -c 'while :; do :; done' & b2=$!
  echo "=== $t $dev $mode +2 busy loops $(date -u +%T) $(cut -d' ' -f1 /proc/loadavg)"
  if [ $mode = rt ]; then pre="chrt -f 1"; else pre=""; fi
  timeout 600 $pre python benchmarks/boundaries.py --device $dev --test $t --schedule gate --load 0 2>&1 | grep -E 'within|between|QD > 1|stalls|load average'
  kill $b1 $b2; wait $b1 $b2 2>/dev/null
done; done; done
echo DONE

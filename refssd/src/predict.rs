//! The model's own prediction of a workload, in virtual time: a closed loop that keeps `qd`
//! commands outstanding (as fio does at iodepth qd) and prints one ground-truth line per
//! interval. No FUSE, no clock: what the drive would deliver if the host added nothing.

use crate::config::Config;
use crate::model::Model;
use crate::truth::interval_json;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::io::Write;

pub struct Workload {
    pub pattern: String, // randwrite | seqwrite | randread
    pub block_bytes: u64,
    pub qd: u32,
    pub total_bytes: u64,
    pub seed: u64,
}

pub fn run(cfg: Config, w: &Workload, interval_ns: u64, out: &mut dyn Write) -> Result<(), String> {
    let mut m = Model::new(cfg, interval_ns)?;
    let cap = m.cfg.capacity_bytes;
    let blocks = cap / w.block_bytes;
    if blocks == 0 {
        return Err("block size larger than the capacity".into());
    }
    let mut s = w.seed | 1;
    let mut rnd = move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        s
    };
    let mut seq = 0u64;
    let mut heap: BinaryHeap<Reverse<u64>> = BinaryHeap::new();
    let mut issued = 0u64;
    let mut now = 0u64;
    let mut prev = m.counters.clone();
    let mut last_emit = 0u64;
    let mut issue = |m: &mut Model, now: u64| -> u64 {
        let off = match w.pattern.as_str() {
            "seqwrite" => {
                let o = (seq % blocks) * w.block_bytes;
                seq += 1;
                o
            }
            _ => (rnd() % blocks) * w.block_bytes,
        };
        if w.pattern == "randread" { m.read(now, off, w.block_bytes) } else { m.write(now, off, w.block_bytes) }
    };
    while issued < w.qd as u64 {
        heap.push(Reverse(issue(&mut m, 0)));
        issued += 1;
    }
    while issued * w.block_bytes < w.total_bytes {
        let Reverse(t) = heap.pop().unwrap();
        now = now.max(t);
        heap.push(Reverse(issue(&mut m, now)));
        issued += 1;
        if now / interval_ns > last_emit {
            last_emit = now / interval_ns;
            for (bin, b) in m.take_bins_before(now) {
                let line = interval_json(bin * interval_ns, (bin + 1) * interval_ns, &b, &m, &mut prev, 0);
                writeln!(out, "{line}").map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

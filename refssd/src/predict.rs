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

/// The xorshift generator's state for a seed: every seed its own run. (`seed | 1` made seeds 2k and
/// 2k + 1 one run, and xorshift's state must not be zero.) SplitMix64's finaliser spreads the seed
/// over all 64 bits; the one seed it maps to zero gets another fixed nonzero state.
fn xorshift_state(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    if z == 0 { 0x9E37_79B9_7F4A_7C15 } else { z }
}

pub fn run(cfg: Config, w: &Workload, interval_ns: u64, out: &mut dyn Write) -> Result<(), String> {
    let mut m = Model::new(cfg, interval_ns)?;
    let cap = m.cfg.capacity_bytes;
    let blocks = cap / w.block_bytes;
    if blocks == 0 {
        return Err("block size larger than the capacity".into());
    }
    let mut s = xorshift_state(w.seed);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn predict(seed: u64) -> String {
        let cfg = Config { capacity_bytes: 8 << 20, op: 0.25, channels: 1, dies_per_channel: 2, ..Config::default() };
        let w = Workload { pattern: "randwrite".into(), block_bytes: 4096, qd: 4, total_bytes: 16 << 20, seed };
        let mut out = Vec::new();
        run(cfg, &w, 10_000_000, &mut out).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn seeds_2k_and_2k_plus_1_are_different_runs() {
        for k in [0u64, 1, 2, 1000] {
            let (a, b) = (predict(2 * k), predict(2 * k + 1));
            assert!(!a.is_empty());
            assert_ne!(a, b, "seeds {} and {} gave the same run", 2 * k, 2 * k + 1);
        }
        assert_eq!(predict(7), predict(7), "a seed is one run");
    }

    #[test]
    fn every_seed_a_nonzero_state() {
        for seed in [0u64, 1, 2, 3, u64::MAX, 0x61C8_8646_80B5_83EB] {
            assert_ne!(xorshift_state(seed), 0);
        }
        assert_ne!(xorshift_state(2), xorshift_state(3));
    }
}

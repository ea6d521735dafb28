//! The reference: what the drive must do, from its geometry and timings alone. ssdpts's figures
//! and the simulator's ground truth are judged against these numbers (docs/reference-ssd.md,
//! "The reference"), so none of them is measured from the model: each follows from the
//! parameters by a formula.
//!
//! * Steady-state write amplification of greedy GC under uniform random single-page overwrites
//!   of the whole logical space: the fixed point of the mean-field model of greedy GC for blocks
//!   of finitely many pages (Van Houdt, "A mean field model for a class of garbage collection
//!   algorithms in flash-based solid state drives", SIGMETRICS 2013: greedy is its d-choices
//!   policy as d grows without bound), evaluated at the drive's effective spare. It tends to
//!   the Lambert-W form a / (a + W0(-a e^-a)) as the pages per block grow.
//! * The effective spare: each die keeps `gc_free_blocks` erased blocks in reserve, and its
//!   write frontier and the victim being collected together hold one block's worth of pages in
//!   transit (the frontier fills as the victim empties). Neither holds data in the sense of the
//!   model, whose blocks all hold valid pages: the blocks that can are
//!   `blocks_per_die - gc_free_blocks - 1` per die.
//! * GC onset on a fresh drive: a die starts collecting when its free list is down to the reserve,
//!   after it has opened `blocks_per_die - gc_free_blocks` blocks; host pages are spread over the
//!   dies one at a time.
//! * Rates: FOB 4 KiB random writes keep every die programming; in steady state each die spends,
//!   per host page, A programs, A - 1 copy reads and A / N of an erase.
//! * The SLC cache (off by default; docs/reference-ssd.md "SLC cache"): on a fresh drive every
//!   host page goes to SLC blocks (tPROG_SLC) until each die holds as many SLC blocks as it may
//!   (the cache's size; for a dynamic cache no more than the user space without valid data can
//!   hold, which under uniform random writes shrinks as e^(-written / L)), and then to normal
//!   blocks (tPROG): the cliff. A static cache's blocks are reserved from the spare, so they
//!   leave the effective spare and the steady state; a dynamic cache is gone from the steady
//!   state (the drive is full of valid data). GC onset comes earlier by what the SLC blocks do
//!   not hold.

use crate::config::{Config, Geometry};

#[derive(Clone, Debug)]
pub struct Reference {
    /// Blocks per die that hold valid data in steady state (the reserve and one block in
    /// transit taken out).
    pub effective_blocks_per_die: u32,
    /// Effective physical pages / logical pages.
    pub effective_spare_factor: f64,
    /// Steady-state WA of greedy GC, mean field for N pages per block, at the effective spare.
    pub reference_wa: f64,
    /// Mean valid pages of a greedy victim in steady state (reference_wa = N / (N - this)).
    pub victim_valid_pages: f64,
    /// The Lambert-W form (infinitely many pages per block) at the effective spare.
    pub wa_large_block_limit: f64,
    /// The Lambert-W form at the nominal spare factor: the figure the proofs used to compare with.
    pub wa_nominal_closed_form: f64,
    /// Host pages written to a fresh drive before garbage collection starts: after this many
    /// (uniform random, one page each), the next page makes the first die choose a victim
    /// (with a dynamic SLC cache: an SLC block to fold, or a normal victim).
    pub gc_start_host_pages: u64,
    /// 4 KiB random-write IOPS fresh out of box (every die programming).
    pub fob_write_iops: f64,
    /// 4 KiB random-write IOPS in steady state (every die busy with its share of GC).
    pub steady_write_iops: f64,
    /// SLC cache: host pages of uniform random single-page writes a fresh drive takes in SLC
    /// mode before its cache is full (the cliff; 0 without a cache). Every SLC page written
    /// counts, overwritten or not: an overwrite takes a new SLC page.
    pub slc_cliff_host_pages: u64,
    /// (the page size, for the cliff in bytes: slc_cliff_host_pages x page_bytes)
    pub page_bytes: u64,
    /// 4 KiB random-write IOPS into the SLC cache (every die programming in SLC mode, unless the
    /// channels or the host link carry fewer pages), and after the cliff (every die programming
    /// normal blocks: fob_write_iops, until GC starts). NaN (null) without a cache.
    pub slc_write_iops: f64,
    pub post_cliff_write_iops: f64,
}

/// SLC blocks each die of a fresh drive opens under uniform random single-page writes: the
/// cache's size in blocks, and for a dynamic cache the last block k for which k N dies is no more
/// than the unmapped logical pages when the die opens it. Die d opens its k-th block after
/// (k - 1) n_slc pages of every die and d pages more (the dies take pages in turn); w host pages
/// of uniform random writes leave L (1 - 1/L)^w pages unmapped, in expectation.
pub fn slc_fob_blocks(cfg: &Config, g: &Geometry) -> Vec<u32> {
    let cap = g.slc_blocks_per_die;
    let dies = g.dies as u64;
    if !cfg.slc_dynamic || cap == 0 {
        return vec![cap; g.dies as usize];
    }
    let l = g.logical_pages as f64;
    let unmapped = |w: u64| l * (w as f64 * (-1.0 / l).ln_1p()).exp();
    (0..dies)
        .map(|d| {
            (1..=cap)
                .take_while(|&k| {
                    let w = dies * (k as u64 - 1) * g.slc_pages_per_block as u64 + d;
                    (k as u64 * cfg.pages_per_block as u64 * dies) as f64 <= unmapped(w).floor()
                })
                .count() as u32
        })
        .collect()
}

/// Principal branch of Lambert's W on [-1/e, 0), by Newton's method.
pub fn lambert_w0(x: f64) -> f64 {
    let mut w: f64 = -0.5;
    for _ in 0..200 {
        let e = w.exp();
        let step = (w * e - x) / (e * (w + 1.0));
        w -= step;
        if step.abs() < 1e-15 {
            break;
        }
    }
    w
}

/// Steady-state WA of greedy GC under uniform random writes with infinitely many pages per
/// block: A = a / (a + W0(-a e^-a)), a = physical / logical pages (Hu et al. 2009; Desnoyers
/// 2012; Xiang & Kurkoski 2012).
pub fn wa_lambert(a: f64) -> f64 {
    a / (a + lambert_w0(-a * (-a).exp()))
}

/// Mean-field steady state of greedy GC with `b` pages per block, a fraction `rho` of the pages
/// valid (rho = logical / physical pages): (write amplification, mean valid pages of a victim).
///
/// In the mean-field limit (many blocks) a block closes with b valid pages and loses each at the
/// same rate; x_j, the fraction of blocks with j valid pages, carries the whole flow of closed
/// blocks (lambda) down from b, so x_j = (lambda / mu) / j. Greedy takes every block that reaches
/// level k (x_k = 0) and the rest of its victims from level k + 1, a fraction p of them at k:
/// the victim holds m = k + 1 - p valid pages, WA = b / (b - m). The block count and the valid
/// pages fix lambda / mu and m:
///     sum_j x_j = (lambda/mu) (H_b - H_{k+1} + p / (k+1)) = 1,
///     sum_j j x_j / b = (lambda/mu) (b - m) / b = rho,
/// so rho b S(m) = b - m with S(m) = H_b - H_{k+1} + (k + 1 - m) / (k + 1), piecewise linear
/// and decreasing in m. Its root in (0, b) is the steady state (m = b is the trivial one, where
/// nothing is ever reclaimed); as b grows, S(m) -> -ln(m / b) and the root gives the Lambert-W
/// form.
pub fn greedy_mean_field(b: u32, rho: f64) -> (f64, f64) {
    assert!(b >= 2 && rho > 0.0 && rho < 1.0, "mean field needs b >= 2 and 0 < rho < 1");
    let bf = b as f64;
    let mut h = vec![0.0f64; b as usize + 1];
    for j in 1..=b as usize {
        h[j] = h[j - 1] + 1.0 / j as f64;
    }
    // g(m) = rho b S(m) - (b - m) is convex, zero at m = b and negative just below it; where it
    // is positive at m = 0 (rho H_b > 1) its root is where it first crosses zero.
    let g = |k: usize, m: f64| rho * bf * (h[b as usize] - h[k + 1] + (k as f64 + 1.0 - m) / (k as f64 + 1.0)) - (bf - m);
    for k in 0..b as usize {
        let (g0, g1) = (g(k, k as f64), g(k, k as f64 + 1.0));
        if g0 > 0.0 && g1 <= 0.0 {
            let m = k as f64 + g0 / (g0 - g1); // g is linear on [k, k + 1]
            return (bf / (bf - m), m);
        }
    }
    // g(0) <= 0 (rho H_b <= 1: tiny blocks, ample spare): blocks empty out before greedy needs
    // them, every victim holds nothing and nothing is copied
    (1.0, 0.0)
}

impl Reference {
    pub fn of(cfg: &Config, g: &Geometry) -> Reference {
        let n = cfg.pages_per_block;
        // a static SLC cache's blocks hold no valid data in steady state (sustained writes, no
        // idle time): the cache filled once, its pages have since been overwritten in the normal
        // blocks, and it is folded and refilled only in idle time
        let eff = g.blocks_per_die - g.slc_static_blocks_per_die - cfg.gc_free_blocks - 1;
        let eff_pages = eff as u64 * g.dies as u64 * n as u64;
        let a_eff = eff_pages as f64 / g.logical_pages as f64;
        let (wa, m) = greedy_mean_field(n, 1.0 / a_eff);
        let per_page_ns = wa * cfg.t_prog_ns as f64 + (wa - 1.0) * cfg.t_read_ns as f64
            + wa / n as f64 * cfg.t_erase_ns as f64;
        let slc = slc_fob_blocks(cfg, g);
        let n_slc = g.slc_pages_per_block as u64;
        // GC onset: a die that opened k SLC blocks (n_slc host pages each) opens
        // blocks_per_die - k - gc_free_blocks normal blocks before its free list is at the
        // reserve; the first die there (the most SLC blocks) decides
        let gc_start_per_die = slc
            .iter()
            .map(|&k| k as u64 * n_slc + (g.blocks_per_die - k - cfg.gc_free_blocks - 1) as u64 * n as u64 + 1)
            .min()
            .unwrap();
        let ns_per_page = |mb_s: f64| cfg.page_bytes as f64 * 1000.0 / mb_s;
        let chan_ns = (ns_per_page(cfg.channel_mb_s)).round();
        let slc_iops = (g.dies as f64 * 1e9 / cfg.t_prog_slc_ns as f64)
            .min(cfg.channels as f64 * 1e9 / chan_ns)
            .min(1e9 / ns_per_page(cfg.host_mb_s));
        let on = g.slc_blocks_per_die > 0;
        Reference {
            effective_blocks_per_die: eff,
            effective_spare_factor: a_eff,
            reference_wa: wa,
            victim_valid_pages: m,
            wa_large_block_limit: wa_lambert(a_eff),
            wa_nominal_closed_form: wa_lambert(g.physical_pages as f64 / g.logical_pages as f64),
            // each die opens blocks_per_die - gc_free_blocks blocks before its free list is at the
            // reserve: the first page of the last of them is its ((bpd - g - 1) N + 1)-th
            // (without a cache: dies x ((blocks_per_die - gc_free_blocks - 1) N + 1))
            gc_start_host_pages: g.dies as u64 * gc_start_per_die,
            fob_write_iops: g.dies as f64 * 1e9 / cfg.t_prog_ns as f64,
            steady_write_iops: g.dies as f64 * 1e9 / per_page_ns,
            page_bytes: cfg.page_bytes as u64,
            slc_cliff_host_pages: slc.iter().map(|&k| k as u64).sum::<u64>() * n_slc,
            slc_write_iops: if on { slc_iops } else { f64::NAN },
            post_cliff_write_iops: if on { g.dies as f64 * 1e9 / cfg.t_prog_ns as f64 } else { f64::NAN },
        }
    }

    /// The fields as JSON members (no braces), for `refssd params` and the truth's config line.
    pub fn json_members(&self) -> String {
        let num = |x: f64| if x.is_finite() { format!("{x}") } else { "null".into() };
        format!(
            "\"effective_blocks_per_die\":{},\"effective_spare_factor\":{},\"reference_wa\":{},\
             \"victim_valid_pages\":{},\"wa_large_block_limit\":{},\"wa_nominal_closed_form\":{},\
             \"gc_start_host_pages\":{},\"fob_write_iops\":{},\"steady_write_iops\":{},\
             \"slc_cliff_host_pages\":{},\"slc_cliff_bytes\":{},\"slc_write_iops\":{},\"post_cliff_write_iops\":{}",
            self.effective_blocks_per_die, num(self.effective_spare_factor), num(self.reference_wa),
            num(self.victim_valid_pages), num(self.wa_large_block_limit), num(self.wa_nominal_closed_form),
            self.gc_start_host_pages, num(self.fob_write_iops), num(self.steady_write_iops),
            self.slc_cliff_host_pages, self.slc_cliff_host_pages * self.page_bytes, num(self.slc_write_iops),
            num(self.post_cliff_write_iops),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_field_tends_to_the_lambert_w_form_as_blocks_grow() {
        for a in [1.07, 1.25, 1.28, 1.5, 2.0] {
            let lw = wa_lambert(a);
            let mut prev_gap = f64::INFINITY;
            for b in [8u32, 32, 64, 256, 1024, 4096] {
                let (wa, m) = greedy_mean_field(b, 1.0 / a);
                assert!((wa - b as f64 / (b as f64 - m)).abs() < 1e-12);
                // greedy does better with small blocks, and the gap closes as 1/b
                let gap = lw / wa - 1.0;
                assert!(gap > 0.0 && gap < prev_gap, "a {a} b {b}: {wa} vs {lw}");
                prev_gap = gap;
            }
            assert!(prev_gap < 0.002, "a {a}: b = 4096 still {prev_gap} from the Lambert-W form");
        }
    }

    #[test]
    fn mean_field_fixed_point_satisfies_both_balances() {
        // recompute the level populations from the root and check the two constraints directly
        for (b, rho) in [(32u32, 0.8), (64, 1.0 / 1.07), (256, 1.0 / 1.28), (4, 0.5)] {
            let (wa, m) = greedy_mean_field(b, rho);
            let k = m.floor() as usize;
            let p = k as f64 + 1.0 - m;
            let c = rho * wa; // lambda / mu
            let mut blocks = c * p / (k as f64 + 1.0);
            let mut valid = c * p;
            for j in k + 2..=b as usize {
                blocks += c / j as f64;
                valid += c;
            }
            assert!((blocks - 1.0).abs() < 1e-9, "b {b} rho {rho}: blocks {blocks}");
            assert!((valid / b as f64 - rho).abs() < 1e-9, "b {b} rho {rho}: valid {valid}");
        }
    }

    #[test]
    fn lambert_w_matches_a_known_value() {
        // W0(-1/e) = -1; W0(-0.2) = -0.25917110181907...
        assert!((lambert_w0(-0.2) + 0.259_171_101_819_074).abs() < 1e-12);
        assert!((wa_lambert(1.25) - 2.6927).abs() < 1e-3);
    }
}

//! Ground truth: what the drive did, one JSON line per interval, in a file that only the
//! simulator writes (ssdpts never sees it). Host commands are counted in the interval in which
//! they completed; flash work (programs, GC copies, erases) in the interval in which it was
//! scheduled. Times are Unix epoch seconds, so they can be set beside ssdpts's step times.

use crate::model::{Bin, Counters, Model, WORK_BG_GC, WORK_DEALLOC, WORK_HOST};
use std::fmt::Write as _;

pub fn interval_json(t0_ns: u64, t1_ns: u64, b: &Bin, m: &Model, prev: &mut Counters, epoch_ns: u64) -> String {
    let c = m.counters.clone();
    let d = |a: u64, b: u64| a.saturating_sub(b);
    let host_pages = d(c.host_write_pages, prev.host_write_pages);
    let prog = d(c.flash_prog_pages, prev.flash_prog_pages);
    let ratio = |a: u64, b: u64| if b > 0 { format!("{:.4}", a as f64 / b as f64) } else { "null".into() };
    let mean_us = |sum: u64, n: u64| if n > 0 { format!("{:.3}", sum as f64 / n as f64 / 1e3) } else { "null".into() };
    let secs = |ns: u64| (epoch_ns + ns) as f64 / 1e9;
    let mut s = String::with_capacity(512);
    let _ = write!(
        s,
        "{{\"type\":\"interval\",\"t0\":{:.6},\"t1\":{:.6},\"host_write_ios\":{},\"host_read_ios\":{},\
         \"host_trim_ios\":{},\"host_flush_ios\":{},\"write_bytes\":{},\"read_bytes\":{},\
         \"write_lat_mean_us\":{},\"write_lat_max_us\":{:.3},\"read_lat_mean_us\":{},\"read_lat_max_us\":{:.3},\
         \"host_write_pages\":{},\"flash_prog_pages\":{},\"gc_copy_pages\":{},\"flash_read_pages\":{},\"erases\":{},\
         \"fg_gc_blocks\":{},\"bg_gc_blocks\":{},\"wa\":{},\"free_blocks\":{},\"valid_pages\":{},\
         \"host_write_pages_total\":{},\"flash_prog_pages_total\":{},\"wa_total\":{},\
         \"read_wait_host_us\":{:.3},\"read_wait_bg_gc_us\":{:.3},\"read_wait_dealloc_us\":{:.3},\
         \"reads_waited_bg_gc\":{},\"reads_waited_dealloc\":{},\"dealloc_die_us\":{:.3}}}",
        secs(t0_ns), secs(t1_ns), b.write_ios, b.read_ios, b.trim_ios, b.flush_ios, b.write_bytes, b.read_bytes,
        mean_us(b.write_lat_sum_ns, b.write_ios), b.write_lat_max_ns as f64 / 1e3,
        mean_us(b.read_lat_sum_ns, b.read_ios), b.read_lat_max_ns as f64 / 1e3,
        host_pages, prog, d(c.gc_copy_pages, prev.gc_copy_pages), d(c.flash_read_pages, prev.flash_read_pages),
        d(c.erases, prev.erases), d(c.fg_gc_blocks, prev.fg_gc_blocks), d(c.bg_gc_blocks, prev.bg_gc_blocks),
        ratio(prog, host_pages), m.free_blocks(), m.valid_pages(), c.host_write_pages, c.flash_prog_pages,
        ratio(c.flash_prog_pages, c.host_write_pages),
        b.read_wait_ns[WORK_HOST] as f64 / 1e3, b.read_wait_ns[WORK_BG_GC] as f64 / 1e3,
        b.read_wait_ns[WORK_DEALLOC] as f64 / 1e3, b.read_waited[WORK_BG_GC], b.read_waited[WORK_DEALLOC],
        d(c.dealloc_die_ns, prev.dealloc_die_ns) as f64 / 1e3,
    );
    if m.geo.slc_blocks_per_die > 0 {
        // the SLC cache (only with one, so that a drive without it writes the lines it always did):
        // host pages programmed in SLC mode and folded in the interval, and at its end the
        // cache's occupancy (pages programmed in SLC blocks not yet erased), its valid pages and
        // what it may hold now (a dynamic cache shrinks as the drive fills)
        s.pop();
        let _ = write!(
            s,
            ",\"slc_prog_pages\":{},\"slc_fold_pages\":{},\"slc_fold_blocks\":{},\"slc_used_pages\":{},\
             \"slc_valid_pages\":{},\"slc_capacity_pages\":{},\"slc_prog_pages_total\":{},\"slc_fold_pages_total\":{}}}",
            d(c.slc_prog_pages, prev.slc_prog_pages), d(c.slc_fold_pages, prev.slc_fold_pages),
            d(c.slc_fold_blocks, prev.slc_fold_blocks), m.slc_used_pages(), m.slc_valid_pages(),
            m.slc_capacity_pages(), c.slc_prog_pages, c.slc_fold_pages,
        );
    }
    *prev = c;
    s
}

pub fn counters_json(m: &Model) -> String {
    let c = &m.counters;
    let mut s = format!(
        "{{\"host_read_ios\":{},\"host_write_ios\":{},\"host_trim_ios\":{},\"host_read_pages\":{},\"host_write_pages\":{},\
         \"host_trim_pages\":{},\"flash_read_pages\":{},\"flash_prog_pages\":{},\"gc_copy_pages\":{},\"erases\":{},\
         \"fg_gc_blocks\":{},\"bg_gc_blocks\":{},\"formats\":{},\"free_blocks\":{},\"valid_pages\":{},\
         \"page_bytes\":{}}}",
        c.host_read_ios, c.host_write_ios, c.host_trim_ios, c.host_read_pages, c.host_write_pages, c.host_trim_pages,
        c.flash_read_pages, c.flash_prog_pages, c.gc_copy_pages, c.erases, c.fg_gc_blocks, c.bg_gc_blocks,
        c.formats, m.free_blocks(), m.valid_pages(), m.cfg.page_bytes
    );
    if m.geo.slc_blocks_per_die > 0 {
        s.pop();
        s += &format!(
            ",\"slc_prog_pages\":{},\"slc_fold_pages\":{},\"slc_fold_blocks\":{},\"slc_used_pages\":{},\"slc_valid_pages\":{}}}",
            c.slc_prog_pages, c.slc_fold_pages, c.slc_fold_blocks, m.slc_used_pages(), m.slc_valid_pages()
        );
    }
    s
}

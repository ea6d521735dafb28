//! The drive's parameters: geometry, timings, cache and GC policy. One place knows each one,
//! its unit and its default; `to_json` writes them into the ground-truth file.

use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub struct Config {
    pub capacity_bytes: u64,   // user capacity (what the host sees)
    pub op: f64,               // over-provisioning: (physical - user) / user
    pub page_bytes: u32,       // flash page = mapping unit
    pub pages_per_block: u32,  // erase block
    pub channels: u32,
    pub dies_per_channel: u32,
    pub t_read_ns: u64,        // tR: page read, cell array to die register
    pub t_prog_ns: u64,        // tPROG: page program
    pub t_erase_ns: u64,       // tBERS: block erase
    pub channel_mb_s: f64,     // die <-> controller bus (10^6 bytes/s)
    pub host_mb_s: f64,        // host link (10^6 bytes/s)
    pub t_cmd_ns: u64,         // controller overhead per command
    pub t_trim_page_ns: u64,   // mapping-table work per deallocated page
    pub write_cache_pages: u32, // volatile write cache; 0 = disabled (writes complete at program)
    pub gc_free_blocks: u32,   // foreground GC keeps this many free blocks per die
    pub bg_gc_idle_ns: u64,    // idle time before background GC starts
    pub bg_gc_free_fraction: f64, // background GC refills this fraction of each die's spare blocks
    pub store_data: bool,      // keep the data (reads return what was written)
    // The OCP tests' interference (docs/ocp.md), both off by default:
    pub dealloc_die_ns_per_page: u64, // deallocation processing: die time per mapped page deallocated, after the trim completes
    pub bg_gc_during_reads: bool,     // reads do not end the idle time: idle GC goes on while the host only reads
    // The SLC cache of a client drive (docs/reference-ssd.md "SLC cache"), off by default:
    pub slc_cache_bytes: u64, // host data the cache holds at most; 0 = no cache
    pub t_prog_slc_ns: u64,   // page program in SLC mode
    pub slc_dynamic: bool,    // the cache lives in the user space holding no valid data (shrinks as the drive fills); else reserved from the spare
    pub cell_bits: u32,       // bits per cell of the normal blocks (3: TLC): an SLC block holds pages_per_block / cell_bits pages
}

impl Default for Config {
    fn default() -> Self {
        Config {
            capacity_bytes: 256 << 20,
            op: 0.25,
            page_bytes: 4096,
            pages_per_block: 64,
            channels: 4,
            dies_per_channel: 2,
            t_read_ns: 60_000,
            t_prog_ns: 1_000_000,
            t_erase_ns: 3_000_000,
            channel_mb_s: 800.0,
            host_mb_s: 1500.0,
            t_cmd_ns: 5_000,
            t_trim_page_ns: 2,
            write_cache_pages: 0,
            gc_free_blocks: 1,
            bg_gc_idle_ns: 200_000_000,
            bg_gc_free_fraction: 0.5,
            store_data: true,
            dealloc_die_ns_per_page: 0,
            bg_gc_during_reads: false,
            slc_cache_bytes: 0,
            t_prog_slc_ns: 200_000,
            slc_dynamic: true,
            cell_bits: 3,
        }
    }
}

/// Derived geometry.
#[derive(Clone, Debug)]
pub struct Geometry {
    pub dies: u32,
    pub logical_pages: u64,
    pub blocks_per_die: u32,
    pub physical_pages: u64,
    pub spare_blocks_per_die: u32,
    /// SLC cache: pages of host data an SLC block holds (pages_per_block / cell_bits), the most
    /// SLC blocks a die holds (the cache size in whole SLC blocks on every die; 0 = no cache), and
    /// of those the blocks reserved from the spare (a static cache; 0 when dynamic).
    pub slc_pages_per_block: u32,
    pub slc_blocks_per_die: u32,
    pub slc_static_blocks_per_die: u32,
}

impl Geometry {
    /// The SLC cache's size in host pages (whole SLC blocks on every die; 0 = no cache).
    pub fn slc_cache_pages(&self) -> u64 {
        self.dies as u64 * self.slc_blocks_per_die as u64 * self.slc_pages_per_block as u64
    }
}

impl Config {
    pub fn geometry(&self) -> Result<Geometry, String> {
        if self.page_bytes < 512 || !self.page_bytes.is_power_of_two() {
            return Err(format!("page size {} must be a power of two >= 512", self.page_bytes));
        }
        if self.capacity_bytes == 0 || self.capacity_bytes % self.page_bytes as u64 != 0 {
            return Err(format!("capacity {} must be a positive multiple of the page size {}", self.capacity_bytes, self.page_bytes));
        }
        if !(self.op > 0.0 && self.op < 10.0) {
            return Err(format!("over-provisioning {} must be in (0, 10)", self.op));
        }
        if self.pages_per_block < 2 || self.pages_per_block > 4096 {
            return Err(format!("pages per block {} must be in 2..4096", self.pages_per_block));
        }
        if self.channels == 0 || self.dies_per_channel == 0 {
            return Err("channels and dies per channel must be at least 1".into());
        }
        if !(0.0..=1.0).contains(&self.bg_gc_free_fraction) {
            return Err(format!("background GC free fraction {} must be in [0, 1]", self.bg_gc_free_fraction));
        }
        let dies = self.channels * self.dies_per_channel;
        let logical_pages = self.capacity_bytes / self.page_bytes as u64;
        let physical_target = (logical_pages as f64 * (1.0 + self.op)).ceil() as u64;
        let blocks = physical_target.div_ceil(self.pages_per_block as u64);
        let blocks_per_die = blocks.div_ceil(dies as u64) as u32;
        let physical_pages = blocks_per_die as u64 * dies as u64 * self.pages_per_block as u64;
        let used_per_die = (logical_pages.div_ceil(dies as u64)).div_ceil(self.pages_per_block as u64) as u32;
        let spare = blocks_per_die.saturating_sub(used_per_die);
        let (mut slc_pages_per_block, mut slc_blocks_per_die, mut slc_static) = (0, 0, 0);
        if self.slc_cache_bytes > 0 {
            if !(2..=4).contains(&self.cell_bits) || self.pages_per_block / self.cell_bits == 0 {
                return Err(format!("--cell-bits {} must be 2, 3 or 4 and at most the pages per block", self.cell_bits));
            }
            if self.slc_cache_bytes > self.capacity_bytes {
                return Err(format!("SLC cache {} larger than the capacity {}", self.slc_cache_bytes, self.capacity_bytes));
            }
            // the cache in whole SLC blocks, the same number on every die (rounded up)
            slc_pages_per_block = self.pages_per_block / self.cell_bits;
            let per_die = self.slc_cache_bytes.div_ceil(self.page_bytes as u64).div_ceil(dies as u64);
            slc_blocks_per_die = per_die.div_ceil(slc_pages_per_block as u64) as u32;
            if !self.slc_dynamic {
                slc_static = slc_blocks_per_die;
                if spare < slc_static + self.gc_free_blocks + 2 {
                    return Err(format!(
                        "a static SLC cache of {slc_static} blocks per die leaves {} of the {spare} spare blocks per die: \
                         lower --slc-cache-bytes or raise --op",
                        spare.saturating_sub(slc_static)
                    ));
                }
            }
        }
        // One open block plus the foreground reserve must leave spare blocks to garbage-collect into.
        if spare < self.gc_free_blocks + 2 {
            return Err(format!(
                "only {spare} spare blocks per die: raise --op or the capacity, or lower --pages-per-block"
            ));
        }
        if blocks_per_die as u64 * self.pages_per_block as u64 > u32::MAX as u64 / dies as u64 {
            return Err("too many physical pages for 32-bit page numbers".into());
        }
        Ok(Geometry {
            dies, logical_pages, blocks_per_die, physical_pages, spare_blocks_per_die: spare,
            slc_pages_per_block, slc_blocks_per_die, slc_static_blocks_per_die: slc_static,
        })
    }

    pub fn to_json(&self, g: &Geometry) -> String {
        let mut s = String::new();
        let _ = write!(
            s,
            "{{\"capacity_bytes\":{},\"op\":{},\"page_bytes\":{},\"pages_per_block\":{},\"channels\":{},\
             \"dies_per_channel\":{},\"dies\":{},\"t_read_ns\":{},\"t_prog_ns\":{},\"t_erase_ns\":{},\
             \"channel_mb_s\":{},\"host_mb_s\":{},\"t_cmd_ns\":{},\"t_trim_page_ns\":{},\"write_cache_pages\":{},\
             \"gc_free_blocks\":{},\"bg_gc_idle_ns\":{},\"bg_gc_free_fraction\":{},\"store_data\":{},\
             \"dealloc_die_ns_per_page\":{},\"bg_gc_during_reads\":{},\
             \"slc_cache_bytes\":{},\"t_prog_slc_ns\":{},\"slc_dynamic\":{},\"cell_bits\":{},\
             \"logical_pages\":{},\"physical_pages\":{},\"blocks_per_die\":{},\"spare_blocks_per_die\":{},\
             \"spare_factor\":{},\"slc_pages_per_block\":{},\"slc_blocks_per_die\":{},\
             \"slc_static_blocks_per_die\":{},\"slc_cache_pages\":{}}}",
            self.capacity_bytes, self.op, self.page_bytes, self.pages_per_block, self.channels,
            self.dies_per_channel, g.dies, self.t_read_ns, self.t_prog_ns, self.t_erase_ns,
            self.channel_mb_s, self.host_mb_s, self.t_cmd_ns, self.t_trim_page_ns, self.write_cache_pages,
            self.gc_free_blocks, self.bg_gc_idle_ns, self.bg_gc_free_fraction, self.store_data,
            self.dealloc_die_ns_per_page, self.bg_gc_during_reads,
            self.slc_cache_bytes, self.t_prog_slc_ns, self.slc_dynamic, self.cell_bits,
            g.logical_pages, g.physical_pages, g.blocks_per_die, g.spare_blocks_per_die,
            g.physical_pages as f64 / g.logical_pages as f64,
            g.slc_pages_per_block, g.slc_blocks_per_die, g.slc_static_blocks_per_die, g.slc_cache_pages(),
        );
        // what the geometry and timings imply (reference.rs): the figures everything is judged by
        s.pop();
        let _ = write!(s, ",{}}}", crate::reference::Reference::of(self, g).json_members());
        s
    }

    /// Set one parameter from its command-line name (without the leading dashes).
    pub fn set(&mut self, key: &str, val: &str) -> Result<(), String> {
        let f = || val.parse::<f64>().map_err(|_| format!("--{key}: {val:?} is not a number"));
        let u = || val.parse::<u64>().map_err(|_| format!("--{key}: {val:?} is not a whole number"));
        let us = |x: f64| (x * 1000.0).round() as u64;
        match key {
            "capacity" => self.capacity_bytes = parse_size(val).ok_or(format!("--capacity: {val:?} is not a size like 256M"))?,
            "op" => self.op = f()?,
            "page-bytes" => self.page_bytes = u()? as u32,
            "pages-per-block" => self.pages_per_block = u()? as u32,
            "channels" => self.channels = u()? as u32,
            "dies-per-channel" => self.dies_per_channel = u()? as u32,
            "t-read-us" => self.t_read_ns = us(f()?),
            "t-prog-us" => self.t_prog_ns = us(f()?),
            "t-erase-us" => self.t_erase_ns = us(f()?),
            "channel-mb-s" => self.channel_mb_s = f()?,
            "host-mb-s" => self.host_mb_s = f()?,
            "t-cmd-us" => self.t_cmd_ns = us(f()?),
            "write-cache-pages" => self.write_cache_pages = u()? as u32,
            "gc-free-blocks" => self.gc_free_blocks = u()? as u32,
            "bg-gc-idle-ms" => self.bg_gc_idle_ns = (f()? * 1e6).round() as u64,
            "bg-gc-free-fraction" => self.bg_gc_free_fraction = f()?,
            "store-data" => self.store_data = matches!(val, "yes" | "true" | "1"),
            "dealloc-die-us-per-page" => self.dealloc_die_ns_per_page = us(f()?),
            "bg-gc-during-reads" => self.bg_gc_during_reads = matches!(val, "yes" | "true" | "1"),
            "slc-cache-bytes" => self.slc_cache_bytes = parse_size(val).ok_or(format!("--slc-cache-bytes: {val:?} is not a size like 16M"))?,
            "t-prog-slc-us" => self.t_prog_slc_ns = us(f()?),
            "slc-dynamic" => self.slc_dynamic = matches!(val, "yes" | "true" | "1"),
            "cell-bits" => self.cell_bits = u()? as u32,
            _ => return Err(format!("unknown parameter --{key}")),
        }
        Ok(())
    }

    /// Every timing multiplied by `k` (0 gives a zero-latency drive: the serving overhead alone).
    pub fn scale_times(&mut self, k: f64) {
        let m = |x: u64| (x as f64 * k).round() as u64;
        self.t_read_ns = m(self.t_read_ns);
        self.t_prog_ns = m(self.t_prog_ns);
        self.t_prog_slc_ns = m(self.t_prog_slc_ns);
        self.t_erase_ns = m(self.t_erase_ns);
        self.t_cmd_ns = m(self.t_cmd_ns);
        self.t_trim_page_ns = m(self.t_trim_page_ns);
        self.dealloc_die_ns_per_page = m(self.dealloc_die_ns_per_page);
        if k == 0.0 {
            self.channel_mb_s = f64::INFINITY;
            self.host_mb_s = f64::INFINITY;
        } else {
            self.channel_mb_s /= k;
            self.host_mb_s /= k;
        }
    }
}

pub fn parse_size(s: &str) -> Option<u64> {
    let s = s.trim();
    let (num, mult) = match s.chars().last()? {
        'K' | 'k' => (&s[..s.len() - 1], 1u64 << 10),
        'M' | 'm' => (&s[..s.len() - 1], 1 << 20),
        'G' | 'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    num.parse::<u64>().ok().map(|n| n * mult)
}

//! refssd — the reference SSD.
//!
//!   refssd serve --mount DIR [--truth FILE] [--io-log FILE] [--interval-ms MS] [DRIVE OPTIONS]
//!   refssd predict --pattern randwrite|seqwrite|randread --bs BYTES --qd N --write-multiple X [DRIVE OPTIONS]
//!   refssd params [DRIVE OPTIONS]        the drive's parameters, derived geometry and reference
//!                                        figures (reference.rs) as JSON
//!
//! DRIVE OPTIONS (defaults in config.rs): --capacity 256M --op 0.25 --page-bytes 4096
//! --pages-per-block 64 --channels 4 --dies-per-channel 2 --t-read-us 60 --t-prog-us 1000
//! --t-erase-us 3000 --channel-mb-s 800 --host-mb-s 1500 --t-cmd-us 5 --write-cache-pages 0
//! --gc-free-blocks 1 --bg-gc-idle-ms 200 --bg-gc-free-fraction 0.5 --store-data yes
//! --dealloc-die-us-per-page 0 --bg-gc-during-reads no
//! --slc-cache-bytes 0 (an SLC cache of this much host data, e.g. 16M; 0 = none) --t-prog-slc-us 200
//! --slc-dynamic yes (the cache shrinks as the drive fills; no = reserved from the spare) --cell-bits 3
//! --time-scale K (multiply every timing by K; 0 = a drive with no latency, to measure the
//! serving overhead alone)

mod config;
mod model;
mod predict;
mod reference;
mod serve;
mod truth;

use config::Config;

fn usage() -> ! {
    eprintln!("usage: refssd serve --mount DIR [--truth FILE] [--io-log FILE] [--interval-ms MS] [drive options]\n       refssd predict --pattern randwrite|seqwrite|randread --bs BYTES --qd N --write-multiple X [--interval-ms MS] [drive options]\n       refssd params [drive options]");
    std::process::exit(2);
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(cmd) = args.first().cloned() else { usage() };
    let mut cfg = Config::default();
    let mut rest: Vec<(String, String)> = Vec::new();
    let mut scale = 1.0;
    let mut i = 1;
    while i < args.len() {
        let k = args[i].strip_prefix("--").unwrap_or_else(|| {
            eprintln!("refssd: unexpected argument {:?}", args[i]);
            std::process::exit(2)
        });
        let Some(v) = args.get(i + 1) else {
            eprintln!("refssd: --{k} needs a value");
            std::process::exit(2)
        };
        if k == "time-scale" {
            scale = v.parse().unwrap_or_else(|_| {
                eprintln!("refssd: --time-scale {v:?} is not a number");
                std::process::exit(2)
            });
        } else if let Err(e) = cfg.set(k, v) {
            if e.starts_with("unknown parameter") {
                rest.push((k.to_string(), v.clone()));
            } else {
                eprintln!("refssd: {e}");
                std::process::exit(2)
            }
        }
        i += 2;
    }
    if scale != 1.0 {
        cfg.scale_times(scale);
    }
    let get = |k: &str| rest.iter().find(|(a, _)| a == k).map(|(_, v)| v.clone());
    let unknown: Vec<&String> = rest
        .iter()
        .map(|(k, _)| k)
        .filter(|k| !["mount", "truth", "io-log", "interval-ms", "pattern", "bs", "qd", "write-multiple", "seed"].contains(&k.as_str()))
        .collect();
    if let Some(k) = unknown.first() {
        eprintln!("refssd: unknown option --{k}");
        std::process::exit(2);
    }
    let interval_ns = get("interval-ms").map(|v| (v.parse::<f64>().unwrap_or(100.0) * 1e6) as u64).unwrap_or(100_000_000).max(1_000_000);
    let res = match cmd.as_str() {
        "serve" => {
            let Some(mount) = get("mount") else { usage() };
            serve::run(cfg, serve::Options { mount, truth: get("truth"), io_log: get("io-log"), interval_ns })
        }
        "predict" => {
            let num = |k: &str, d: f64| get(k).map(|v| v.parse::<f64>().unwrap_or(d)).unwrap_or(d);
            let w = predict::Workload {
                pattern: get("pattern").unwrap_or_else(|| "randwrite".into()),
                block_bytes: num("bs", 4096.0) as u64,
                qd: num("qd", 32.0) as u32,
                total_bytes: (num("write-multiple", 4.0) * cfg.capacity_bytes as f64) as u64,
                seed: num("seed", 1.0) as u64,
            };
            let stdout = std::io::stdout();
            let mut out = std::io::BufWriter::new(stdout.lock());
            predict::run(cfg, &w, interval_ns, &mut out)
        }
        "params" => cfg.geometry().map(|g| println!("{}", cfg.to_json(&g))),
        _ => usage(),
    };
    if let Err(e) = res {
        eprintln!("refssd: {e}");
        std::process::exit(2);
    }
}

//! Serving the model in real time as a FUSE file system with two files:
//!
//! * `disk` — the drive, `capacity` bytes, opened with direct I/O. A loop device with direct I/O
//!   over it is a real block device whose reads, writes, discards (fallocate PUNCH_HOLE) and
//!   flushes (fsync) reach the model. QEMU can back an emulated drive with the same file.
//! * `ctl` — write `format` (or `sanitize`) to return the drive to fresh-out-of-box, as a Format
//!   NVM / Sanitize would; read it for the drive's counters as JSON.
//!
//! Every command is handed to the model when it arrives; the model says when it completes, and
//! the reply is held until then by one completion thread (a min-heap of deadlines), so the host
//! sees the modeled service time plus the serving overhead, and the FUSE reader never sleeps.

use crate::config::Config;
use crate::model::Model;
use crate::truth::{counters_json, interval_json};
use fuser::{
    FileAttr, FileType, Filesystem, KernelConfig, MountOption, ReplyAttr, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyWrite, Request, Session,
};
use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::OsStr;
use std::fs::File;
use std::io::{BufWriter, Write};
use std::sync::atomic::{AtomicBool, Ordering as AO};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

const ROOT: u64 = 1;
const DISK: u64 = 2;
const CTL: u64 = 3;
const FALLOC_FL_PUNCH_HOLE: i32 = 0x02;
const FALLOC_FL_ZERO_RANGE: i32 = 0x10;
const TTL: Duration = Duration::from_secs(3600);
// Without it the kernel holds the inode lock across each direct write: one write at a time.
const FOPEN_PARALLEL_DIRECT_WRITES: u32 = 1 << 6;

pub struct Options {
    pub mount: String,
    pub truth: Option<String>,
    pub io_log: Option<String>,
    pub interval_ns: u64,
}

/// The drive's data: an anonymous mapping, zero until written; deallocated ranges are returned
/// to the kernel (they read as zeros, as a drive that reports deterministic zeros after TRIM).
struct Data {
    ptr: *mut u8,
    len: usize,
    keep: bool,
}
unsafe impl Send for Data {}

impl Data {
    fn new(len: usize, keep: bool) -> Data {
        if !keep {
            return Data { ptr: std::ptr::null_mut(), len, keep };
        }
        let p = unsafe {
            libc::mmap(std::ptr::null_mut(), len, libc::PROT_READ | libc::PROT_WRITE,
                       libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE, -1, 0)
        };
        assert!(p != libc::MAP_FAILED, "cannot map {len} bytes for the drive's data");
        Data { ptr: p as *mut u8, len, keep }
    }
    fn read(&self, off: usize, n: usize) -> Vec<u8> {
        let mut v = vec![0u8; n];
        if self.keep {
            unsafe { std::ptr::copy_nonoverlapping(self.ptr.add(off), v.as_mut_ptr(), n) };
        }
        v
    }
    fn write(&mut self, off: usize, src: &[u8]) {
        if self.keep {
            unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(off), src.len()) };
        }
    }
    fn zero(&mut self, off: usize, n: usize) {
        if !self.keep || n == 0 {
            return;
        }
        let pg = 4096usize;
        let a = off.div_ceil(pg) * pg;
        let b = ((off + n) / pg) * pg;
        unsafe {
            if a < b {
                std::ptr::write_bytes(self.ptr.add(off), 0, a - off);
                libc::madvise(self.ptr.add(a) as *mut libc::c_void, b - a, libc::MADV_DONTNEED);
                std::ptr::write_bytes(self.ptr.add(b), 0, off + n - b);
            } else {
                std::ptr::write_bytes(self.ptr.add(off), 0, n);
            }
        }
    }
    fn clear(&mut self) {
        let n = self.len;
        self.zero(0, n);
    }
}

struct Drive {
    model: Model,
    data: Data,
}

enum Reply {
    Write(ReplyWrite, u32),
    Data(ReplyData, Vec<u8>),
    Empty(ReplyEmpty),
}

struct Pending {
    at_ns: u64,
    seq: u64,
    reply: Reply,
}
impl PartialEq for Pending {
    fn eq(&self, o: &Self) -> bool {
        (self.at_ns, self.seq) == (o.at_ns, o.seq)
    }
}
impl Eq for Pending {}
impl PartialOrd for Pending {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Pending {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.at_ns, o.seq).cmp(&(self.at_ns, self.seq)) // min-heap
    }
}

struct Shared {
    drive: Mutex<Drive>,
    queue: Mutex<(BinaryHeap<Pending>, u64)>,
    wake: Condvar,
    start: Instant,
    stop: AtomicBool,
}

impl Shared {
    fn now(&self) -> u64 {
        self.start.elapsed().as_nanos() as u64
    }
    fn complete_at(&self, at_ns: u64, reply: Reply) {
        let mut q = self.queue.lock().unwrap();
        let seq = q.1;
        q.1 += 1;
        let earliest = q.0.peek().map(|p| p.at_ns).unwrap_or(u64::MAX);
        q.0.push(Pending { at_ns, seq, reply });
        if at_ns < earliest {
            self.wake.notify_one();
        }
    }
}

fn set_timer_slack_1ns() {
    // The default 50 µs timer slack would be added to every modeled latency.
    unsafe {
        libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
    }
}

fn completer(sh: Arc<Shared>) {
    set_timer_slack_1ns();
    let mut q = sh.queue.lock().unwrap();
    loop {
        if sh.stop.load(AO::Relaxed) && q.0.is_empty() {
            return;
        }
        let Some(first) = q.0.peek() else {
            q = sh.wake.wait_timeout(q, Duration::from_millis(50)).unwrap().0;
            continue;
        };
        let now = sh.now();
        if first.at_ns > now {
            let wait = Duration::from_nanos(first.at_ns - now);
            q = sh.wake.wait_timeout(q, wait).unwrap().0;
            continue;
        }
        let p = q.0.pop().unwrap();
        drop(q);
        match p.reply {
            Reply::Write(r, n) => r.written(n),
            Reply::Data(r, v) => r.data(&v),
            Reply::Empty(r) => r.ok(),
        }
        q = sh.queue.lock().unwrap();
    }
}

fn epoch_ns_at(start: Instant) -> u64 {
    let wall = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_nanos() as u64;
    wall - start.elapsed().as_nanos() as u64
}

/// One line per interval into the truth file, and the per-command log, until stopped.
fn recorder(sh: Arc<Shared>, mut truth: Option<BufWriter<File>>, mut io_log: Option<BufWriter<File>>, interval_ns: u64) {
    let epoch = epoch_ns_at(sh.start);
    let mut prev = sh.drive.lock().unwrap().model.counters.clone();
    let mut next_bin = 0u64;
    loop {
        let stopping = sh.stop.load(AO::Relaxed);
        std::thread::sleep(Duration::from_nanos(interval_ns.min(100_000_000)));
        let mut lines = Vec::new();
        let ios;
        {
            let mut d = sh.drive.lock().unwrap();
            let now = sh.now();
            d.model.idle_until(now);
            let cut = now / interval_ns;
            let mut bins = d.model.take_bins_before(now).into_iter().peekable();
            while next_bin < cut {
                let b = match bins.peek() {
                    Some((i, _)) if *i == next_bin => bins.next().unwrap().1,
                    _ => Default::default(),
                };
                lines.push(interval_json(next_bin * interval_ns, (next_bin + 1) * interval_ns, &b, &d.model, &mut prev, epoch));
                next_bin += 1;
            }
            ios = d.model.io_log.as_mut().map(std::mem::take);
        }
        if let Some(t) = truth.as_mut() {
            for l in &lines {
                let _ = writeln!(t, "{l}");
            }
            let _ = t.flush();
        }
        if let (Some(w), Some(v)) = (io_log.as_mut(), ios) {
            for (at, op, off, len, lat) in v {
                let _ = writeln!(w, "{},{},{},{},{}", epoch + at, op as char, off, len, lat);
            }
            let _ = w.flush();
        }
        if stopping {
            if let Some(t) = truth.as_mut() {
                let d = sh.drive.lock().unwrap();
                let _ = writeln!(t, "{{\"type\":\"totals\",\"at\":{:.6},\"counters\":{}}}",
                                 (epoch + sh.now()) as f64 / 1e9, counters_json(&d.model));
                let _ = t.flush();
            }
            return;
        }
    }
}

struct Fs {
    sh: Arc<Shared>,
    size: u64,
    ctl_out: Vec<u8>,
}

impl Fs {
    fn attr(&self, ino: u64) -> Option<FileAttr> {
        let (kind, perm, size, nlink) = match ino {
            ROOT => (FileType::Directory, 0o755, 0, 2),
            DISK => (FileType::RegularFile, 0o600, self.size, 1),
            CTL => (FileType::RegularFile, 0o600, 0, 1),
            _ => return None,
        };
        let t = UNIX_EPOCH;
        Some(FileAttr { ino, size, blocks: size / 512, atime: t, mtime: t, ctime: t, crtime: t, kind, perm, nlink,
                        uid: 0, gid: 0, rdev: 0, blksize: 4096, flags: 0 })
    }

    fn event(&self, what: &str, at_ns: u64) {
        eprintln!("refssd: {what} at {:.3} s", at_ns as f64 / 1e9);
    }
}

impl Filesystem for Fs {
    fn init(&mut self, _req: &Request<'_>, config: &mut KernelConfig) -> Result<(), libc::c_int> {
        // The kernel's default of 12 background requests would cap the loop device's queue
        // depth at 12: let QD32 x 4 threads through.
        // Asynchronous direct I/O: without it each direct write from the loop device waits for the
        // previous one (queue depth 1 whatever the host asks).
        let _ = config.add_capabilities(fuser::consts::FUSE_ASYNC_DIO);
        let _ = config.set_max_background(512);
        let _ = config.set_congestion_threshold(384);
        let _ = config.set_max_write(1 << 20);
        Ok(())
    }

    fn lookup(&mut self, _req: &Request<'_>, parent: u64, name: &OsStr, reply: ReplyEntry) {
        let ino = match (parent, name.to_str()) {
            (ROOT, Some("disk")) => DISK,
            (ROOT, Some("ctl")) => CTL,
            _ => return reply.error(libc::ENOENT),
        };
        reply.entry(&TTL, &self.attr(ino).unwrap(), 0);
    }

    fn getattr(&mut self, _req: &Request<'_>, ino: u64, _fh: Option<u64>, reply: ReplyAttr) {
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    fn setattr(&mut self, _req: &Request<'_>, ino: u64, _mode: Option<u32>, _uid: Option<u32>, _gid: Option<u32>,
               size: Option<u64>, _a: Option<fuser::TimeOrNow>, _m: Option<fuser::TimeOrNow>, _c: Option<SystemTime>,
               _fh: Option<u64>, _cr: Option<SystemTime>, _chg: Option<SystemTime>, _bk: Option<SystemTime>,
               _flags: Option<u32>, reply: ReplyAttr) {
        if ino == DISK && size.is_some_and(|s| s != self.size) {
            return reply.error(libc::EPERM); // a drive's capacity is fixed
        }
        match self.attr(ino) {
            Some(a) => reply.attr(&TTL, &a),
            None => reply.error(libc::ENOENT),
        }
    }

    fn readdir(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, mut reply: ReplyDirectory) {
        if ino != ROOT {
            return reply.error(libc::ENOTDIR);
        }
        let entries = [(ROOT, FileType::Directory, "."), (ROOT, FileType::Directory, ".."),
                       (DISK, FileType::RegularFile, "disk"), (CTL, FileType::RegularFile, "ctl")];
        for (i, (ino, kind, name)) in entries.iter().enumerate().skip(offset as usize) {
            if reply.add(*ino, (i + 1) as i64, *kind, name) {
                break;
            }
        }
        reply.ok();
    }

    fn open(&mut self, _req: &Request<'_>, ino: u64, _flags: i32, reply: ReplyOpen) {
        match ino {
            DISK | CTL => {
                if ino == CTL {
                    let d = self.sh.drive.lock().unwrap();
                    self.ctl_out = (counters_json(&d.model) + "\n").into_bytes();
                }
                reply.opened(0, fuser::consts::FOPEN_DIRECT_IO | FOPEN_PARALLEL_DIRECT_WRITES)
            }
            _ => reply.error(libc::EISDIR),
        }
    }

    fn read(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, size: u32, _flags: i32,
            _lock: Option<u64>, reply: ReplyData) {
        let off = offset.max(0) as u64;
        if ino == CTL {
            let s = (off as usize).min(self.ctl_out.len());
            let e = (s + size as usize).min(self.ctl_out.len());
            return reply.data(&self.ctl_out[s..e]);
        }
        if off >= self.size {
            return reply.data(&[]);
        }
        let n = (size as u64).min(self.size - off);
        let now = self.sh.now();
        let (done, buf) = {
            let mut d = self.sh.drive.lock().unwrap();
            let done = d.model.read(now, off, n);
            (done, d.data.read(off as usize, n as usize))
        };
        self.sh.complete_at(done, Reply::Data(reply, buf));
    }

    fn write(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, data: &[u8], _wf: u32, _flags: i32,
             _lock: Option<u64>, reply: ReplyWrite) {
        let off = offset.max(0) as u64;
        let now = self.sh.now();
        if ino == CTL {
            let cmd = String::from_utf8_lossy(data).trim().to_string();
            if cmd != "format" && cmd != "sanitize" {
                return reply.error(libc::EINVAL);
            }
            let done = {
                let mut d = self.sh.drive.lock().unwrap();
                d.data.clear();
                d.model.format(now)
            };
            self.event(&cmd, now);
            return self.sh.complete_at(done, Reply::Write(reply, data.len() as u32));
        }
        if off + data.len() as u64 > self.size {
            return reply.error(libc::ENOSPC);
        }
        let done = {
            let mut d = self.sh.drive.lock().unwrap();
            d.data.write(off as usize, data);
            d.model.write(now, off, data.len() as u64)
        };
        self.sh.complete_at(done, Reply::Write(reply, data.len() as u32));
    }

    fn fallocate(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, offset: i64, length: i64, mode: i32,
                 reply: ReplyEmpty) {
        if ino != DISK {
            return reply.error(libc::EOPNOTSUPP);
        }
        let (off, len) = (offset.max(0) as u64, length.max(0) as u64);
        if mode & (FALLOC_FL_PUNCH_HOLE | FALLOC_FL_ZERO_RANGE) == 0 {
            return reply.ok(); // plain allocation: the whole drive is always "allocated"
        }
        let len = len.min(self.size.saturating_sub(off));
        let now = self.sh.now();
        // PUNCH_HOLE is the loop device's discard; ZERO_RANGE its write-zeroes: both deallocate,
        // as an NVMe drive with deterministic zeros after Deallocate does.
        let done = {
            let mut d = self.sh.drive.lock().unwrap();
            d.data.zero(off as usize, len as usize);
            d.model.trim(now, off, len)
        };
        self.sh.complete_at(done, Reply::Empty(reply));
    }

    fn fsync(&mut self, _req: &Request<'_>, ino: u64, _fh: u64, _datasync: bool, reply: ReplyEmpty) {
        if ino != DISK {
            return reply.ok();
        }
        let now = self.sh.now();
        let done = self.sh.drive.lock().unwrap().model.flush(now);
        self.sh.complete_at(done, Reply::Empty(reply));
    }

    fn flush(&mut self, _req: &Request<'_>, _ino: u64, _fh: u64, _lock: u64, reply: ReplyEmpty) {
        reply.ok();
    }
}

static SIGNALLED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    SIGNALLED.store(true, AO::Relaxed);
}

pub fn run(cfg: Config, opts: Options) -> Result<(), String> {
    let geo = cfg.geometry()?;
    let mut model = Model::new(cfg.clone(), opts.interval_ns)?;
    let open = |p: &String| File::create(p).map(BufWriter::new).map_err(|e| format!("cannot create {p}: {e}"));
    let mut truth = opts.truth.as_ref().map(open).transpose()?;
    let io_log = opts.io_log.as_ref().map(open).transpose()?;
    if io_log.is_some() {
        model.io_log = Some(Vec::new());
    }
    let start = Instant::now();
    if let Some(t) = truth.as_mut() {
        let _ = writeln!(t, "{{\"type\":\"config\",\"started\":{:.6},\"interval_s\":{},\"drive\":{}}}",
                         epoch_ns_at(start) as f64 / 1e9, opts.interval_ns as f64 / 1e9, cfg.to_json(&geo));
        let _ = t.flush();
    }
    let size = cfg.capacity_bytes;
    let data = Data::new(size as usize, cfg.store_data);
    let sh = Arc::new(Shared {
        drive: Mutex::new(Drive { model, data }),
        queue: Mutex::new((BinaryHeap::new(), 0)),
        wake: Condvar::new(),
        start,
        stop: AtomicBool::new(false),
    });
    let fs = Fs { sh: sh.clone(), size, ctl_out: Vec::new() };
    let options = [MountOption::FSName("refssd".into()), MountOption::Subtype("refssd".into())];
    let mut session = Session::new(fs, &opts.mount, &options).map_err(|e| format!("cannot mount on {}: {e}", opts.mount))?;
    unsafe {
        libc::signal(libc::SIGTERM, on_signal as *const () as usize);
        libc::signal(libc::SIGINT, on_signal as *const () as usize);
    }
    let mut unmounter = session.unmount_callable();
    std::thread::spawn(move || {
        while !SIGNALLED.load(AO::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = unmounter.unmount();
    });
    let c = {
        let sh = sh.clone();
        std::thread::spawn(move || completer(sh))
    };
    let r = {
        let sh = sh.clone();
        let iv = opts.interval_ns;
        std::thread::spawn(move || recorder(sh, truth, io_log, iv))
    };
    eprintln!("refssd: serving {} bytes at {}/disk", size, opts.mount);
    let res = session.run();
    sh.stop.store(true, AO::Relaxed);
    sh.wake.notify_all();
    let _ = c.join();
    let _ = r.join();
    drop(session);
    res.map_err(|e| format!("FUSE session ended with an error: {e}"))
}

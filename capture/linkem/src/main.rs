//! linkem — a user-space link emulator between two interfaces (AF_PACKET).

mod config;
mod core;
mod log;
mod net;
mod rng;
mod trace;
#[cfg(test)]
mod core_tests;

use crate::core::{Counters, DirectionCore, Verdict};
use crate::log::{Batcher, Record};
use crate::net::{mono_ns, PacketSocket, VNET_HDR_LEN};
use std::collections::BinaryHeap;
use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::Duration;

const HELP: &str = "\
linkem — user-space link emulator for one path of the testbed

USAGE:
  linkem --client-if IFNAME --server-if IFNAME --config CONFIG.json --log LOG.csv
         [--ready-file PATH] [--rt-prio N] [--spin-us N]

It opens both interfaces with AF_PACKET raw sockets (promiscuous, outgoing
frames ignored) and forwards every Ethernet frame from one to the other,
applying per-direction impairments:
  down = frames arriving on --server-if, leaving on --client-if
  up   = frames arriving on --client-if, leaving on --server-if

OPTIONS:
  --client-if IFNAME   interface toward the client
  --server-if IFNAME   interface toward the server
  --config PATH        JSON configuration (below)
  --log PATH           per-packet CSV log (written buffered, flushed at exit)
  --ready-file PATH    created (empty) once both sockets are open and forwarding
  --rt-prio N          SCHED_FIFO priority of the forwarding threads (default 20;
                       0 = normal scheduling). Falls back with a warning.
  --spin-us N          busy-wait this long before each departure after a coarse
                       sleep (default 20); 0 = sleep only (less CPU, less precise)
  -h, --help           this text
  -V, --version        version

CONFIG (every field optional):
  {\"seed\": 1,                       RNG seed (default 1); runs are deterministic
   \"down\": {...}, \"up\": {...}}      per direction, fields:
     delay_ms      propagation delay after the bottleneck (default 0)
     jitter_ms     jitter amplitude (default 0)
     jitter_dist   \"uniform\" (delay ± jitter_ms, default) or \"normal\" (sd jitter_ms);
                   the delay is clamped at >= 0
     reorder       false (default): departure = max(computed, previous departure),
                   so jitter never reorders; true: packets may overtake
     loss          {\"model\": \"bernoulli\", \"p\": P}
                   {\"model\": \"gilbert_elliott\", \"p_gb\": P, \"p_bg\": P,
                    \"loss_good\": P (default 0), \"loss_bad\": P (default 1)}
                   {\"model\": \"none\"}
     rate_mbit     fixed bottleneck rate in Mbit/s (of IP bytes)
     trace         Mahimahi delivery trace file (one ms timestamp per 1500-byte
                   opportunity, looping with period = last timestamp); the path is
                   taken as given, else relative to the config file's directory.
                   rate_mbit and trace are mutually exclusive; neither = unlimited.
     queue_bytes   drop-tail limit of the bottleneck queue in IP bytes
     queue_packets drop-tail limit in packets (default 1000 when neither is given;
                   both may be given, then both apply)
     outages       [[down_s, up_s], ...] seconds since linkem start; frames arriving
                   inside a window are dropped

  Order on arrival: outage -> loss -> queue -> bottleneck -> delay/jitter.
  Rate and queue count the IP bytes (frame length - 14).

LOG (CSV with header):
  direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason
  direction down/up; packet_id counts arrivals per direction from 0; size_bytes is
  the Ethernet frame length; arrival_s (kernel receive time) and departure_s (time
  of the send call) are Unix epoch seconds with microsecond precision; departure_s
  empty when dropped; dropped 0/1; reason empty or loss/queue/outage. Rows are in
  completion order, not sorted.

EXIT: 0 after SIGINT/SIGTERM (log flushed), 2 on a bad command line or config
(one line naming the field), 1 on a runtime error (e.g. missing interface).
";

static STOP: AtomicBool = AtomicBool::new(false);
static STOP_AT: AtomicI64 = AtomicI64::new(0);
/// Packets still queued this long after the stop signal are discarded unlogged.
const DRAIN_NS: i64 = 1_000_000_000;

struct Args {
    client_if: String,
    server_if: String,
    config: String,
    log: String,
    ready_file: Option<String>,
    rt_prio: i32,
    spin_us: i64,
}

fn usage_error(msg: &str) -> ! {
    eprintln!("linkem: {} (see linkem --help)", msg);
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let (mut c, mut s, mut cfg, mut log, mut ready) = (None, None, None, None, None);
    let (mut rt_prio, mut spin_us) = (20, 20);
    while let Some(a) = it.next() {
        let mut val = |name: &str| it.next().unwrap_or_else(|| usage_error(&format!("{} needs a value", name)));
        match a.as_str() {
            "-h" | "--help" => {
                print!("{}", HELP);
                std::process::exit(0);
            }
            "-V" | "--version" => {
                println!("linkem {}", env!("CARGO_PKG_VERSION"));
                std::process::exit(0);
            }
            "--client-if" => c = Some(val(&a)),
            "--server-if" => s = Some(val(&a)),
            "--config" => cfg = Some(val(&a)),
            "--log" => log = Some(val(&a)),
            "--ready-file" => ready = Some(val(&a)),
            "--rt-prio" => rt_prio = val(&a).parse().unwrap_or_else(|_| usage_error("--rt-prio: not an integer")),
            "--spin-us" => spin_us = val(&a).parse().unwrap_or_else(|_| usage_error("--spin-us: not an integer")),
            other => usage_error(&format!("unknown argument {:?}", other)),
        }
    }
    Args {
        client_if: c.unwrap_or_else(|| usage_error("--client-if is required")),
        server_if: s.unwrap_or_else(|| usage_error("--server-if is required")),
        config: cfg.unwrap_or_else(|| usage_error("--config is required")),
        log: log.unwrap_or_else(|| usage_error("--log is required")),
        ready_file: ready,
        rt_prio: rt_prio.clamp(0, 99),
        spin_us: spin_us.max(0),
    }
}

struct Item {
    deadline: i64,
    id: u64,
    arrival: i64,
    /// When the reader handed it over (for the lateness statistics).
    pushed: i64,
    data: Vec<u8>,
}
impl PartialEq for Item {
    fn eq(&self, o: &Self) -> bool {
        (self.deadline, self.id) == (o.deadline, o.id)
    }
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    // Reversed: BinaryHeap is a max-heap, we want the earliest deadline on top.
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (o.deadline, o.id).cmp(&(self.deadline, self.id))
    }
}

#[derive(Default)]
struct Inner {
    heap: BinaryHeap<Item>,
    closed: bool,
}

/// Frames waiting for their departure time, for one direction.
#[derive(Default)]
struct Sched {
    m: Mutex<Inner>,
    cv: Condvar,
}

impl Sched {
    fn push(&self, it: Item) {
        let mut g = self.m.lock().unwrap();
        let head = g.heap.peek().map_or(true, |h| it.deadline < h.deadline);
        g.heap.push(it);
        drop(g);
        if head {
            self.cv.notify_one();
        }
    }
    fn close(&self) {
        self.m.lock().unwrap().closed = true;
        self.cv.notify_one();
    }
}

fn set_rt(prio: i32, what: &str) {
    if prio <= 0 {
        return;
    }
    let p = libc::sched_param { sched_priority: prio };
    if unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &p) } != 0 {
        static WARNED: AtomicBool = AtomicBool::new(false);
        if !WARNED.swap(true, Ordering::Relaxed) {
            eprintln!("linkem: warning: cannot set SCHED_FIFO for {} ({}); timing will be less precise", what, std::io::Error::last_os_error());
        }
    }
}

fn fatal_stop(msg: String) {
    eprintln!("linkem: {}", msg);
    STOP_AT.store(mono_ns(), Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
    unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
}

struct Clock {
    start: i64,  // monotonic ns at start
    offset: i64, // realtime - monotonic
}

fn reader(sock: Arc<PacketSocket>, mut core: DirectionCore, sched: Arc<Sched>, tx: mpsc::Sender<Vec<Record>>, up: bool, clk: Arc<Clock>, rt: i32) -> Counters {
    set_rt(rt, "the reader threads");
    let mut logb = Batcher::new(tx);
    let mut buf = vec![0u8; VNET_HDR_LEN + 65536 + 256];
    let mut id: u64 = 0;
    while !STOP.load(Ordering::Relaxed) {
        let r = match sock.recv(&mut buf) {
            Ok(Some(r)) => r,
            Ok(None) => {
                logb.flush_if_old(mono_ns(), 0);
                continue;
            }
            Err(e) => {
                fatal_stop(format!("receive on {} failed: {}", sock.ifname, e));
                break;
            }
        };
        let now = mono_ns();
        let arrival = match r.kernel_ts {
            Some(ts) => {
                let m = ts - clk.offset;
                if m > now || now - m > 1_000_000_000 {
                    now
                } else {
                    m
                }
            }
            None => now,
        };
        if r.len < VNET_HDR_LEN {
            continue;
        }
        net::complete_checksum(&mut buf[..r.len]);
        let frame_len = r.len - VNET_HDR_LEN;
        match core.on_arrival(arrival - clk.start, frame_len) {
            Verdict::Drop(reason) => logb.push(
                Record { up, id, size: frame_len as u32, arrival: arrival + clk.offset, departure: None, reason: Some(reason.as_str()) },
                now,
            ),
            Verdict::Forward(d) => sched.push(Item { deadline: d + clk.start, id, arrival, pushed: mono_ns(), data: buf[..r.len].to_vec() }),
        }
        id += 1;
        logb.flush_if_old(now, 200_000_000);
    }
    sched.close();
    logb.flush();
    core.counters.clone()
}

fn sender(sock: Arc<PacketSocket>, sched: Arc<Sched>, tx: mpsc::Sender<Vec<Record>>, up: bool, clk: Arc<Clock>, rt: i32, spin_ns: i64, errors: Arc<AtomicU64>) -> u64 {
    set_rt(rt, "the sender threads");
    let mut logb = Batcher::new(tx);
    let mut due: Vec<Item> = Vec::with_capacity(64);
    let mut discarded = 0u64;
    let (mut send_ns, mut sends, mut max_send) = (0u64, 0u64, 0i64);
    let (mut late_n, mut lag_n) = ([0u64; 3], [0u64; 3]);
    'outer: loop {
        let deadline;
        {
            let mut g = sched.m.lock().unwrap();
            loop {
                let now = mono_ns();
                if STOP.load(Ordering::Relaxed) && now > STOP_AT.load(Ordering::Relaxed) + DRAIN_NS {
                    discarded += g.heap.len() as u64;
                    g.heap.clear();
                    break 'outer;
                }
                match g.heap.peek() {
                    None => {
                        if g.closed {
                            break 'outer;
                        }
                        logb.flush();
                        g = sched.cv.wait_timeout(g, Duration::from_millis(100)).unwrap().0;
                    }
                    Some(h) => {
                        let wait = h.deadline - spin_ns - now;
                        if wait <= 0 {
                            deadline = h.deadline;
                            break;
                        }
                        if wait > 2_000_000 {
                            logb.flush_if_old(now, 100_000_000);
                        }
                        g = sched.cv.wait_timeout(g, Duration::from_nanos(wait as u64)).unwrap().0;
                    }
                }
            }
        }
        while mono_ns() < deadline {
            std::hint::spin_loop();
        }
        {
            let mut g = sched.m.lock().unwrap();
            let now = mono_ns();
            while let Some(h) = g.heap.peek() {
                if h.deadline > now {
                    break;
                }
                due.push(g.heap.pop().unwrap());
            }
        }
        for it in due.drain(..) {
            let t = mono_ns();
            if sock.send(&it.data).is_err() {
                errors.fetch_add(1, Ordering::Relaxed);
            }
            let t2 = mono_ns();
            send_ns += (t2 - t) as u64;
            sends += 1;
            max_send = max_send.max(t2 - t);
            let late = t - it.deadline;
            let lag = it.pushed - it.arrival;
            for (k, th) in [50_000, 200_000, 1_000_000].iter().enumerate() {
                if late > *th {
                    late_n[k] += 1;
                }
                if lag > *th {
                    lag_n[k] += 1;
                }
            }
            logb.push(
                Record {
                    up,
                    id: it.id,
                    size: (it.data.len() - VNET_HDR_LEN) as u32,
                    arrival: it.arrival + clk.offset,
                    departure: Some(t + clk.offset),
                    reason: None,
                },
                t,
            );
        }
    }
    logb.flush();
    if sends > 0 {
        eprintln!(
            "linkem: {}: send() took {:.1} us on average, {:.1} us at most; sent later than scheduled by >50us/>200us/>1ms: {}/{}/{}; reader lag >50us/>200us/>1ms: {}/{}/{} of {}",
            if up { "up" } else { "down" },
            send_ns as f64 / sends as f64 / 1e3,
            max_send as f64 / 1e3,
            late_n[0], late_n[1], late_n[2], lag_n[0], lag_n[1], lag_n[2], sends
        );
    }
    discarded
}

fn main() {
    let args = parse_args();
    let start = mono_ns();
    let offset = net::realtime_offset_ns();
    let cfg = config::load(std::path::Path::new(&args.config)).unwrap_or_else(|e| {
        eprintln!("linkem: config error: {}", e);
        std::process::exit(2);
    });
    let fail = |msg: String| -> ! {
        eprintln!("linkem: {}", msg);
        std::process::exit(1);
    };
    let log_file = std::fs::File::create(&args.log).unwrap_or_else(|e| fail(format!("cannot create log {}: {}", args.log, e)));
    let sock_c = Arc::new(PacketSocket::open(&args.client_if).unwrap_or_else(|e| fail(format!("cannot open {}: {}", args.client_if, e))));
    let sock_s = Arc::new(PacketSocket::open(&args.server_if).unwrap_or_else(|e| fail(format!("cannot open {}: {}", args.server_if, e))));

    // Signals are taken by sigwait in this thread only; timer slack 1 ns for
    // precise wake-ups (inherited by the threads).
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
    }

    let clk = Arc::new(Clock { start, offset });
    let (tx, rx) = mpsc::channel::<Vec<Record>>();
    let logger = std::thread::Builder::new().name("log".into()).spawn(move || log::run(log_file, rx)).unwrap();
    let spin_ns = args.spin_us * 1000;
    let mut readers = Vec::new();
    let mut senders = Vec::new();
    let mut errs = Vec::new();
    // (name, ingress, egress, config, stream)
    let dirs = [("down", sock_s.clone(), sock_c.clone(), cfg.down.clone(), 0u64), ("up", sock_c.clone(), sock_s.clone(), cfg.up.clone(), 1u64)];
    for (name, ing, eg, dcfg, stream) in dirs {
        let up = name == "up";
        let sched = Arc::new(Sched::default());
        let core = DirectionCore::new(dcfg, cfg.seed, stream);
        let (s1, t1, c1) = (sched.clone(), tx.clone(), clk.clone());
        let rt = args.rt_prio;
        readers.push((name, std::thread::Builder::new().name(format!("rx-{}", name)).spawn(move || reader(ing, core, s1, t1, up, c1, rt)).unwrap()));
        let err = Arc::new(AtomicU64::new(0));
        errs.push(err.clone());
        let (t2, c2) = (tx.clone(), clk.clone());
        senders.push(std::thread::Builder::new().name(format!("tx-{}", name)).spawn(move || sender(eg, sched, t2, up, c2, rt, spin_ns, err)).unwrap());
    }
    drop(tx);

    if let Some(p) = &args.ready_file {
        if let Err(e) = std::fs::File::create(p) {
            fatal_stop(format!("cannot create ready file {}: {}", p, e));
        }
    }

    let mut sig: libc::c_int = 0;
    unsafe { libc::sigwait(&set, &mut sig) };
    if !STOP.load(Ordering::SeqCst) {
        STOP_AT.store(mono_ns(), Ordering::SeqCst);
        STOP.store(true, Ordering::SeqCst);
    }
    let counters: Vec<(&str, Counters)> = readers.into_iter().map(|(n, h)| (n, h.join().unwrap())).collect();
    let discarded: Vec<u64> = senders.into_iter().map(|h| h.join().unwrap()).collect();
    let written = match logger.join().unwrap() {
        Ok(n) => n,
        Err(e) => fail(format!("writing the log failed: {}", e)),
    };
    let (_, drops_s) = sock_s.stats();
    let (_, drops_c) = sock_c.stats();
    for (i, (name, c)) in counters.iter().enumerate() {
        let sock_drops = if *name == "down" { drops_s } else { drops_c };
        eprintln!(
            "linkem: {}: arrived {} forwarded {} dropped loss {} queue {} outage {}; send errors {}; socket drops {}; unsent at exit {}",
            name,
            c.arrived,
            c.forwarded,
            c.loss,
            c.queue,
            c.outage,
            errs[i].load(Ordering::Relaxed),
            sock_drops,
            discarded[i]
        );
    }
    eprintln!("linkem: {} log rows written to {}", written, args.log);
}

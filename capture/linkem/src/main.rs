//! linkem — a user-space link emulator between two interfaces (AF_PACKET).

mod config;
mod core;
mod forward;
mod log;
mod net;
mod rng;
mod stalls;
mod trace;
#[cfg(test)]
mod core_tests;

use crate::core::DirectionCore;
use crate::forward::{Clock, Direction, Path, STOP, STOP_AT};
use crate::log::{Batcher, Record};
use crate::net::{mono_ns, PacketSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;

const HELP: &str = "\
linkem — user-space link emulator for one path of the testbed

USAGE:
  linkem --client-if IFNAME --server-if IFNAME --config CONFIG.json --log LOG.csv
         [--stats PATH] [--ready-file PATH] [--rt-prio N] [--spin-us N]

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
  --stats PATH         JSON summary written at exit: per direction the counters,
                       the late departures (left > 1 ms after their scheduled
                       time) and the reader's lag (read > 1 ms after the kernel
                       received the frame), each as count, worst, when, and the
                       list of intervals; linkem's own CPU time. The counters:
                       arrived, forwarded, dropped {loss, queue, outage},
                       retransmissions (llr attempts beyond the first, of the
                       frames forwarded or lost), retransmitted (forwarded frames
                       that needed one or more)
  --ready-file PATH    created (empty) once both sockets are open and forwarding
  --rt-prio N          SCHED_FIFO priority of the forwarding thread (default 20;
                       0 = normal scheduling). Falls back with a warning.
  --spin-us N          busy-wait at most this long before a departure (default
                       10): the loop wakes twice as much before a departure as
                       its recent wake-ups were late (capped here, or at 1/32
                       of a longer sleep, at most 200) and spins the rest;
                       0 = sleep only (less CPU, later departures)
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
     llr           link-layer retransmission {\"delay_ms\": D, \"retries\": N}
                   (needs a loss model; retries 1-1000, delay_ms >= 0): the loss
                   model is then the radio's loss per transmission attempt; a frame
                   is tried up to 1 + N times, each attempt drawing loss; lost on
                   every attempt -> dropped (reason loss), else forwarded with
                   (attempts - 1) * D added to its delay. Each attempt is serialised
                   at the bottleneck (air time); the waits do not hold it. Without
                   reorder, frames behind a retransmitted one wait for it (in order).
     rate_mbit     fixed bottleneck rate in Mbit/s (of IP bytes)
     trace         Mahimahi delivery trace file (one ms timestamp per 1500-byte
                   opportunity, looping with period = last timestamp); the path is
                   taken as given, else relative to the config file's directory.
                   rate_mbit and trace are mutually exclusive; neither = unlimited.
     trace_offset_ms  the trace time at linkem's start (integer ms >= 0, taken
                   modulo the period; default 0): the trace starts at that phase,
                   so a frame leaves when it would without an offset had it
                   arrived trace_offset_ms later, minus that. Needs a trace.
     queue_bytes   drop-tail limit of the bottleneck queue in IP bytes
     queue_packets drop-tail limit in packets (default 1000 when neither is given;
                   both may be given, then both apply)
     outages       [[down_s, up_s], ...] seconds since linkem start; frames arriving
                   inside a window are dropped

  Order on arrival: outage -> loss (llr attempts) -> queue -> bottleneck
  -> llr waits + delay/jitter.
  Idle link: departure = arrival + attempts * serialisation
                         + (attempts - 1) * llr delay_ms + delay_ms (+ jitter).
  Rate and queue count the IP bytes (frame length - 14).

LOG (CSV with header):
  direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason,attempts
  direction down/up; packet_id counts arrivals per direction from 0; size_bytes is
  the Ethernet frame length; arrival_s (kernel receive time) and departure_s (time
  of the send call) are Unix epoch seconds with microsecond precision; departure_s
  empty when dropped; dropped 0/1; reason empty or loss/queue/outage; attempts =
  transmissions on the emulated link: 1 + retransmissions for a forwarded frame
  (1 = none), 1 + retries for a loss drop with llr (1 without), 0 for queue and
  outage drops (never sent). Rows are in completion order, not sorted.

THREADS: one forwarding thread for both directions (receive rings, departure
  heap, sends), one that writes the log, and the main thread waiting for signals.

EXIT: 0 after SIGINT/SIGTERM (log flushed), 2 on a bad command line or config
(one line naming the field), 1 on a runtime error (e.g. missing interface).
";

struct Args {
    client_if: String,
    server_if: String,
    config: String,
    log: String,
    ready_file: Option<String>,
    stats: Option<String>,
    rt_prio: i32,
    spin_us: i64,
}

fn usage_error(msg: &str) -> ! {
    eprintln!("linkem: {} (see linkem --help)", msg);
    std::process::exit(2);
}

fn parse_args() -> Args {
    let mut it = std::env::args().skip(1);
    let (mut c, mut s, mut cfg, mut log, mut ready, mut stats) = (None, None, None, None, None, None);
    let (mut rt_prio, mut spin_us) = (20, 10);
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
            "--stats" => stats = Some(val(&a)),
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
        stats,
        rt_prio: rt_prio.clamp(0, 99),
        spin_us: spin_us.max(0),
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

fn cpu_seconds() -> (f64, f64) {
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    let s = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    (s(ru.ru_utime), s(ru.ru_stime))
}

fn fail(msg: String) -> ! {
    eprintln!("linkem: {}", msg);
    std::process::exit(1);
}

/// Ask every thread to stop now (the forwarding loop reads STOP; STOP_AT is when).
fn request_stop() {
    STOP_AT.store(mono_ns(), Ordering::SeqCst);
    STOP.store(true, Ordering::SeqCst);
}

/// Signals are taken by sigwait in this thread only; timer slack 1 ns for
/// precise wake-ups (inherited by the threads). Returns the blocked set.
fn block_signals() -> libc::sigset_t {
    let mut set: libc::sigset_t = unsafe { std::mem::zeroed() };
    unsafe {
        libc::sigemptyset(&mut set);
        for s in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            libc::sigaddset(&mut set, s);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        libc::prctl(libc::PR_SET_TIMERSLACK, 1, 0, 0, 0);
    }
    set
}

/// The forwarding thread: runs the path until STOP; a failure stops linkem too
/// (SIGTERM to itself ends the main thread's sigwait). Gives the path back with
/// whether it ended without error.
fn spawn_forwarder(mut path: Path, rt: i32) -> std::thread::JoinHandle<(Path, bool)> {
    std::thread::Builder::new()
        .name("fwd".into())
        .spawn(move || {
            set_rt(rt, "the forwarding thread");
            let r = path.run();
            if let Err(e) = &r {
                eprintln!("linkem: {}", e);
                request_stop();
                unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
            }
            (path, r.is_ok())
        })
        .unwrap()
}

/// Wait for a stop signal (unless a stop was already asked for), then wake the
/// forwarding loop so it sees STOP.
fn wait_for_stop(set: &libc::sigset_t, wake_fd: i32) {
    let mut sig: libc::c_int = 0;
    if !STOP.load(Ordering::SeqCst) {
        unsafe { libc::sigwait(set, &mut sig) };
    }
    if !STOP.load(Ordering::SeqCst) {
        request_stop();
    }
    unsafe { libc::eventfd_write(wake_fd, 1) };
}

/// The --stats JSON of a stopped path, and the same figures on stderr: per direction
/// the counters, the late departures and the reader's lag; the loop's wake-ups;
/// linkem's CPU time over ``wall_s``.
fn summary(path: &Path, args: &Args, wall_s: f64) -> serde_json::Map<String, serde_json::Value> {
    eprintln!("linkem: sleeps ended by an arrival {}, by the timeout {}; spin turns {}", path.wakes[0], path.wakes[1], path.wakes[2]);
    let (user_s, system_s) = cpu_seconds();
    let sock_names = [&args.server_if, &args.client_if];
    let mut js = serde_json::Map::new();
    js.insert("late_threshold_ms".into(), serde_json::json!(stalls::LATE_NS as f64 / 1e6));
    for d in path.dirs.iter() {
        let (c, io) = (&d.core.counters, &d.io);
        if io.sends > 0 {
            eprintln!(
                "linkem: {}: send() took {:.1} us on average, {:.1} us at most; sent later than scheduled by >50us/>200us/>1ms: {}/{}/{}; reader lag >50us/>200us/>1ms: {}/{}/{} of {}",
                d.name,
                io.send_ns as f64 / io.sends as f64 / 1e3,
                io.max_send_ns as f64 / 1e3,
                io.late_hist[0], io.late_hist[1], io.late_hist[2], io.lag_hist[0], io.lag_hist[1], io.lag_hist[2], io.sends
            );
        }
        eprintln!(
            "linkem: {}: late > 1 ms: {} packets in {} intervals, worst {:.3} ms; reader lag > 1 ms: {} packets in {} intervals, worst {:.3} ms",
            d.name,
            d.core.late.late,
            d.core.late.n_intervals(),
            d.core.late.worst_ns.max(0) as f64 / 1e6,
            d.core.lag.late,
            d.core.lag.n_intervals(),
            d.core.lag.worst_ns.max(0) as f64 / 1e6
        );
        eprintln!(
            "linkem: {}: arrived {} forwarded {} dropped loss {} queue {} outage {}; link-layer retransmissions {} (of {} forwarded frames); send errors {}; socket drops {}; unsent at exit {}",
            d.name, c.arrived, c.forwarded, c.loss, c.queue, c.outage, c.retransmissions, c.retransmitted, io.send_errors, io.kernel_drops, io.unsent_at_exit
        );
        js.insert(
            d.name.into(),
            serde_json::json!({
                "ingress_if": sock_names[if d.name == "down" { 0 } else { 1 }],
                "arrived": c.arrived, "forwarded": c.forwarded,
                "dropped": {"loss": c.loss, "queue": c.queue, "outage": c.outage},
                "retransmissions": c.retransmissions, "retransmitted": c.retransmitted,
                "send_errors": io.send_errors, "socket_drops": io.kernel_drops, "unsent_at_exit": io.unsent_at_exit,
                "send_us": {"mean": if io.sends > 0 { io.send_ns as f64 / io.sends as f64 / 1e3 } else { 0.0 },
                            "max": io.max_send_ns as f64 / 1e3},
                "late": d.core.late.to_json(path.clk.offset),
                "reader_lag": d.core.lag.to_json(path.clk.offset),
            }),
        );
    }
    js.insert("loop".into(), serde_json::json!({"sleeps_ended_by_arrival": path.wakes[0], "sleeps_timed": path.wakes[1],
        "spin_turns": path.wakes[2], "wake_late_us": path.wake_late_ns() as f64 / 1e3}));
    js.insert("cpu".into(), serde_json::json!({"user_s": user_s, "system_s": system_s, "wall_s": wall_s,
        "pct_of_one_core": if wall_s > 0.0 { (user_s + system_s) / wall_s * 100.0 } else { 0.0 }}));
    js
}

fn main() {
    let args = parse_args();
    let start = mono_ns();
    let offset = net::realtime_offset_ns();
    let cfg = config::load(std::path::Path::new(&args.config)).unwrap_or_else(|e| {
        eprintln!("linkem: config error: {}", e);
        std::process::exit(2);
    });
    let log_file = std::fs::File::create(&args.log).unwrap_or_else(|e| fail(format!("cannot create log {}: {}", args.log, e)));
    let sock_s = PacketSocket::open(&args.server_if).unwrap_or_else(|e| fail(format!("cannot open {}: {}", args.server_if, e)));
    let sock_c = PacketSocket::open(&args.client_if).unwrap_or_else(|e| fail(format!("cannot open {}: {}", args.client_if, e)));
    let wake_fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
    if wake_fd < 0 {
        fail(format!("eventfd: {}", std::io::Error::last_os_error()));
    }
    let set = block_signals();

    let (tx, rx) = mpsc::channel::<Vec<Record>>();
    let logger = std::thread::Builder::new().name("log".into()).spawn(move || log::run(log_file, rx)).unwrap();
    let dirs = [
        Direction::new("down", DirectionCore::new(cfg.down.clone(), cfg.seed, 0)),
        Direction::new("up", DirectionCore::new(cfg.up.clone(), cfg.seed, 1)),
    ];
    let path = Path::new([sock_s, sock_c], dirs, Clock { start, offset }, args.spin_us * 1000, wake_fd, Batcher::new(tx)).unwrap_or_else(|e| fail(e));
    let fwd = spawn_forwarder(path, args.rt_prio);

    if let Some(p) = &args.ready_file {
        if let Err(e) = std::fs::File::create(p) {
            eprintln!("linkem: cannot create ready file {}: {}", p, e);
            request_stop();
        }
    }

    wait_for_stop(&set, wake_fd);
    let (path, ok) = fwd.join().unwrap();
    let wall_s = (mono_ns() - start) as f64 / 1e9;
    let js = summary(&path, &args, wall_s);
    drop(path);
    let written = match logger.join().unwrap() {
        Ok(n) => n,
        Err(e) => fail(format!("writing the log failed: {}", e)),
    };
    if let Some(p) = &args.stats {
        let text = serde_json::to_string_pretty(&serde_json::Value::Object(js)).unwrap() + "\n";
        if let Err(e) = std::fs::write(p, text) {
            fail(format!("cannot write stats {}: {}", p, e));
        }
    }
    eprintln!("linkem: {} log rows written to {}", written, args.log);
    if !ok {
        std::process::exit(1);
    }
}

//! The forwarding loop of one path: both directions in one thread.
//!
//! Each turn it sends every frame whose departure time has come (earliest
//! first, across both directions), reads every frame waiting in the two
//! receive rings (no system call per frame) and runs each through its
//! direction's core, and then either spins (the next departure is less than
//! the time a wake-up takes here, at most `spin_ns`) or sleeps until that
//! much before the next departure: it busy-waits only near a departure.
//!
//! Sleeping costs a few microseconds of CPU per wake-up here, so wake-ups are
//! few: when no frame can leave sooner than `lazy_ns` after it arrived (the
//! path's delay), a sleep does not end on an arrival; frames that arrive
//! meanwhile wait in the ring, with their kernel timestamps, and are read at
//! the latest `lazy_ns` later, still before they can be due. One thread, no
//! locks, no hand-over between threads.

use crate::core::{DirectionCore, Verdict};
use crate::log::{Batcher, Record};
use crate::net::{self, mono_ns, PacketSocket, VNET_HDR_LEN};
use std::collections::{BinaryHeap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};

pub static STOP: AtomicBool = AtomicBool::new(false);
pub static STOP_AT: AtomicI64 = AtomicI64::new(0);
/// Frames still queued this long after the stop signal are discarded unlogged.
const DRAIN_NS: i64 = 1_000_000_000;
/// Longest sleep without a departure pending (the stop signal also wakes us).
const IDLE_NS: i64 = 200_000_000;

pub struct Clock {
    pub start: i64,  // monotonic ns at start
    pub offset: i64, // realtime - monotonic
}

struct Item {
    deadline: i64,
    id: u64,
    arrival: i64,
    attempts: u32,
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

/// Frames waiting for their departure. Without reordering the core's
/// departures never decrease, so a FIFO is enough (and much cheaper than a
/// heap of a thousand frames); with reordering, a heap.
enum Waiting {
    Fifo(VecDeque<Item>),
    Heap(BinaryHeap<Item>),
}

impl Waiting {
    fn push(&mut self, it: Item) {
        match self {
            Waiting::Fifo(q) => q.push_back(it),
            Waiting::Heap(h) => h.push(it),
        }
    }
    fn next_deadline(&self) -> Option<i64> {
        match self {
            Waiting::Fifo(q) => q.front().map(|i| i.deadline),
            Waiting::Heap(h) => h.peek().map(|i| i.deadline),
        }
    }
    fn pop(&mut self) -> Option<Item> {
        match self {
            Waiting::Fifo(q) => q.pop_front(),
            Waiting::Heap(h) => h.pop(),
        }
    }
    fn len(&self) -> usize {
        match self {
            Waiting::Fifo(q) => q.len(),
            Waiting::Heap(h) => h.len(),
        }
    }
    fn clear(&mut self) {
        match self {
            Waiting::Fifo(q) => q.clear(),
            Waiting::Heap(h) => h.clear(),
        }
    }
}

/// Counters of one direction's I/O (the core keeps the impairment counters).
#[derive(Default, Clone)]
pub struct IoStats {
    pub sends: u64,
    pub send_ns: u64,
    pub max_send_ns: i64,
    pub send_errors: u64,
    /// Departures later than 50 us / 200 us / 1 ms, reads later than the same.
    pub late_hist: [u64; 3],
    pub lag_hist: [u64; 3],
    pub unsent_at_exit: u64,
    pub kernel_drops: u32,
}

pub struct Direction {
    pub name: &'static str,
    up: bool,
    pub core: DirectionCore,
    waiting: Waiting,
    next_id: u64,
    pub io: IoStats,
}

impl Direction {
    pub fn new(name: &'static str, core: DirectionCore) -> Direction {
        let waiting = if core.config().reorder { Waiting::Heap(BinaryHeap::new()) } else { Waiting::Fifo(VecDeque::with_capacity(4096)) };
        Direction { name, up: name == "up", core, waiting, next_id: 0, io: IoStats::default() }
    }
}

const THRESHOLDS: [i64; 3] = [50_000, 200_000, 1_000_000];

fn count(hist: &mut [u64; 3], late: i64) {
    for (k, th) in THRESHOLDS.iter().enumerate() {
        if late > *th {
            hist[k] += 1;
        }
    }
}

pub struct Path {
    /// [0] faces the server (down's ingress, up's egress), [1] the client.
    pub socks: [PacketSocket; 2],
    /// [0] down, [1] up.
    pub dirs: [Direction; 2],
    pub clk: Clock,
    pub spin_ns: i64,
    /// How late timed wake-ups end (moving average): the loop wakes that much
    /// before a departure, so it neither spins long nor wakes up late.
    wake_late_ns: i64,
    /// Longest sleep that ignores arrivals (0: every arrival wakes the loop).
    lazy_ns: i64,
    /// Sleeps that end on an arrival wait on this epoll set (both sockets and the stop event).
    ep_all: i32,
    /// A frame that arrived while the loop slept on purpose is due to be read
    /// at the planned end of that sleep (for the reader's lag).
    read_floor: i64,
    log: Batcher,
    pool: Vec<Vec<u8>>,
    /// Sleeps ended by an arrival / by the timeout, and turns spent spinning.
    pub wakes: [u64; 3],
}

/// Direction index -> (ingress socket, egress socket).
const WIRES: [(usize, usize); 2] = [(0, 1), (1, 0)];

impl Path {
    pub fn new(socks: [PacketSocket; 2], dirs: [Direction; 2], clk: Clock, spin_ns: i64, wake_fd: i32, log: Batcher) -> Result<Path, String> {
        let min_latency = dirs.iter().map(|d| d.core.min_latency_ns()).min().unwrap_or(0);
        // Lazy reading only where it saves wake-ups and a late wake-up (a few
        // hundred microseconds on a busy VM) still leaves room before a departure.
        let lazy_ns = if min_latency >= 2_000_000 { (min_latency / 2).min(50_000_000) } else { 0 };
        let ep = || {
            let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
            if fd < 0 {
                Err(format!("epoll_create1: {}", std::io::Error::last_os_error()))
            } else {
                Ok(fd)
            }
        };
        let add = |ep: i32, fd: i32| {
            let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: fd as u64 };
            if unsafe { libc::epoll_ctl(ep, libc::EPOLL_CTL_ADD, fd, &mut ev) } < 0 {
                Err(format!("epoll_ctl: {}", std::io::Error::last_os_error()))
            } else {
                Ok(())
            }
        };
        let ep_all = ep()?;
        for fd in [socks[0].fd, socks[1].fd, wake_fd] {
            add(ep_all, fd)?;
        }
        Ok(Path { socks, dirs, clk, spin_ns, wake_late_ns: spin_ns / 2, lazy_ns, ep_all, read_floor: 0, log, pool: Vec::with_capacity(4096), wakes: [0; 3] })
    }

    /// Runs until the stop signal (plus the drain time); returns Err on a socket failure.
    pub fn run(&mut self) -> Result<(), String> {
        let mut now = mono_ns();
        loop {
            let stopping = STOP.load(Ordering::Relaxed);
            now = self.send_due(now);
            if !stopping {
                self.read_all()?;
            }
            if stopping && now > STOP_AT.load(Ordering::Relaxed) + DRAIN_NS {
                break;
            }
            match self.next_deadline() {
                None if stopping => break,
                None => {
                    self.log.flush_if_old(now, 0);
                    self.wait(now + IDLE_NS, true);
                    now = mono_ns();
                }
                Some(d) => {
                    let wake = d - self.anticipation(d - now);
                    if wake > now {
                        if wake - now > 2_000_000 {
                            self.log.flush_if_old(now, 100_000_000);
                        }
                        if self.lazy_ns > 0 && !stopping {
                            let until = wake.min(now + self.lazy_ns);
                            self.read_floor = until;
                            self.wait(until, false)
                        } else {
                            self.wait(wake, true)
                        }
                    } else {
                        self.wakes[2] += 1;
                        std::hint::spin_loop();
                    }
                    now = mono_ns();
                }
            }
        }
        for d in self.dirs.iter_mut() {
            d.io.unsent_at_exit += d.waiting.len() as u64;
            d.waiting.clear();
            d.core.late.close();
            d.core.lag.close();
        }
        for (i, d) in self.dirs.iter_mut().enumerate() {
            d.io.kernel_drops = self.socks[WIRES[i].0].stats().1;
        }
        self.log.flush();
        Ok(())
    }

    fn next_deadline(&self) -> Option<i64> {
        self.dirs.iter().filter_map(|d| d.waiting.next_deadline()).min()
    }

    /// Sleeps until `until` (monotonic ns) or the stop signal, and, with
    /// `arrivals`, until a frame arrives on either socket.
    fn wait(&mut self, until: i64, arrivals: bool) {
        if !arrivals {
            // nothing but the clock can end it: the stop signal is seen at its end
            let ts = libc::timespec { tv_sec: until / 1_000_000_000, tv_nsec: until % 1_000_000_000 };
            unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, libc::TIMER_ABSTIME, &ts, std::ptr::null_mut()) };
            self.wakes[1] += 1;
            self.learn_wake_late(mono_ns() - until);
            return;
        }
        self.read_floor = 0;
        let ns = (until - mono_ns()).max(0);
        let ts = libc::timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 };
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 3];
        let ep = self.ep_all;
        // epoll_pwait2: a nanosecond timeout (epoll_wait has milliseconds)
        let n = unsafe { libc::syscall(libc::SYS_epoll_pwait2, ep, evs.as_mut_ptr(), evs.len() as libc::c_int, &ts, std::ptr::null::<libc::sigset_t>(), 0usize) };
        if n > 0 {
            self.wakes[0] += 1;
        } else {
            self.wakes[1] += 1;
            self.learn_wake_late(mono_ns() - until);
        }
    }

    /// How long before a departure `ahead_ns` away the loop should wake.
    /// Twice the mean lateness covers most wake-ups, not half of them. Near
    /// departures (a loaded path) spinning is capped at `spin_ns`; before a
    /// long sleep the cap grows to 1/32 of the sleep (at most 0.2 ms): an idle
    /// host or a busy hypervisor wakes 0.05-0.15 ms late, and spinning that
    /// long once per sleep of several ms costs little CPU.
    fn anticipation(&self, ahead_ns: i64) -> i64 {
        if self.spin_ns == 0 {
            return 0;
        }
        let cap = self.spin_ns.max((ahead_ns / 32).min(200_000));
        (2 * self.wake_late_ns + 2_000).min(cap)
    }

    pub fn wake_late_ns(&self) -> i64 {
        self.wake_late_ns
    }

    fn learn_wake_late(&mut self, late: i64) {
        // a stall is not a wake-up time: clamp before averaging (1/16 weight)
        let late = late.clamp(0, 200_000);
        self.wake_late_ns += (late - self.wake_late_ns) / 16;
    }

    /// Every frame waiting in both rings through its direction's core.
    fn read_all(&mut self) -> Result<(), String> {
        for di in 0..2 {
            let ing = WIRES[di].0;
            loop {
                let mut buf = self.pool.pop().unwrap_or_else(|| Vec::with_capacity(2048));
                let r = match self.socks[ing].next_frame(&mut buf) {
                    Ok(Some(r)) => r,
                    Ok(None) => {
                        self.pool.push(buf);
                        break;
                    }
                    Err(e) => return Err(format!("receive on {} failed: {}", self.socks[ing].ifname, e)),
                };
                self.on_frame(di, buf, r.kernel_ts);
            }
        }
        Ok(())
    }

    fn on_frame(&mut self, di: usize, mut buf: Vec<u8>, kernel_ts: Option<i64>) {
        let now = mono_ns();
        let clk = &self.clk;
        let arrival = match kernel_ts {
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
        if buf.len() < VNET_HDR_LEN {
            self.pool.push(buf);
            return;
        }
        let d = &mut self.dirs[di];
        let read_due = arrival.max(self.read_floor);
        d.core.on_read(read_due, now);
        count(&mut d.io.lag_hist, now - read_due);
        net::complete_checksum(&mut buf);
        let frame_len = buf.len() - VNET_HDR_LEN;
        let id = d.next_id;
        d.next_id += 1;
        match d.core.on_arrival(arrival - clk.start, frame_len) {
            Verdict::Drop(reason, attempts) => {
                let rec = Record { up: d.up, id, size: frame_len as u32, arrival: arrival + clk.offset, departure: None, reason: Some(reason.as_str()), attempts };
                self.pool.push(buf);
                self.log.push(rec, now);
            }
            Verdict::Forward(dep, attempts) => d.waiting.push(Item { deadline: dep + clk.start, id, arrival, attempts, data: buf }),
        }
    }

    /// Sends every frame whose departure time has come, earliest first; takes
    /// and returns the current time (one clock reading per send).
    fn send_due(&mut self, mut now: i64) -> i64 {
        loop {
            let mut pick = None;
            for (i, d) in self.dirs.iter().enumerate() {
                if let Some(dl) = d.waiting.next_deadline() {
                    if dl <= now && pick.map_or(true, |(_, p)| dl < p) {
                        pick = Some((i, dl));
                    }
                }
            }
            let Some((di, _)) = pick else { return now };
            let it = self.dirs[di].waiting.pop().unwrap();
            let eg = WIRES[di].1;
            let t = now;
            let ok = self.socks[eg].send(&it.data).is_ok();
            let t2 = mono_ns();
            now = t2;
            let d = &mut self.dirs[di];
            if !ok {
                d.io.send_errors += 1;
            }
            d.io.sends += 1;
            d.io.send_ns += (t2 - t) as u64;
            d.io.max_send_ns = d.io.max_send_ns.max(t2 - t);
            count(&mut d.io.late_hist, t - it.deadline);
            d.core.on_departure(it.deadline, t);
            let rec = Record {
                up: d.up,
                id: it.id,
                size: (it.data.len() - VNET_HDR_LEN) as u32,
                arrival: it.arrival + self.clk.offset,
                departure: Some(t + self.clk.offset),
                reason: None,
                attempts: it.attempts,
            };
            self.pool.push(it.data);
            self.log.push(rec, t);
        }
    }
}

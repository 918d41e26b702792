//! The forwarding loop of one path: both directions in one thread.
//!
//! Each turn it reads every frame waiting in the two receive rings (no system
//! call per frame), runs each through its direction's core, sends every frame
//! whose departure time has come (earliest first, across both directions),
//! and then either spins (the next departure is less than `spin_ns` away) or
//! sleeps in `ppoll` on both sockets until shortly before the next departure
//! or the next arrival. One thread, no locks, no hand-over between threads.

use crate::core::{DirectionCore, Verdict};
use crate::log::{Batcher, Record};
use crate::net::{self, mono_ns, PacketSocket, VNET_HDR_LEN};
use std::collections::BinaryHeap;
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
    heap: BinaryHeap<Item>,
    next_id: u64,
    pub io: IoStats,
}

impl Direction {
    pub fn new(name: &'static str, core: DirectionCore) -> Direction {
        Direction { name, up: name == "up", core, heap: BinaryHeap::new(), next_id: 0, io: IoStats::default() }
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
    pub wake_fd: i32,
    log: Batcher,
    pool: Vec<Vec<u8>>,
}

/// Direction index -> (ingress socket, egress socket).
const WIRES: [(usize, usize); 2] = [(0, 1), (1, 0)];

impl Path {
    pub fn new(socks: [PacketSocket; 2], dirs: [Direction; 2], clk: Clock, spin_ns: i64, wake_fd: i32, log: Batcher) -> Path {
        Path { socks, dirs, clk, spin_ns, wake_fd, log, pool: Vec::with_capacity(4096) }
    }

    /// Runs until the stop signal (plus the drain time); returns Err on a socket failure.
    pub fn run(&mut self) -> Result<(), String> {
        loop {
            let stopping = STOP.load(Ordering::Relaxed);
            if !stopping {
                self.read_all()?;
            }
            self.send_due();
            let now = mono_ns();
            if stopping && now > STOP_AT.load(Ordering::Relaxed) + DRAIN_NS {
                break;
            }
            match self.next_deadline() {
                None if stopping => break,
                None => {
                    self.log.flush_if_old(now, 0);
                    self.wait(now + IDLE_NS)
                }
                Some(d) => {
                    let wake = d - self.spin_ns;
                    if wake > now {
                        if wake - now > 2_000_000 {
                            self.log.flush_if_old(now, 100_000_000);
                        }
                        self.wait(wake)
                    } else {
                        std::hint::spin_loop();
                    }
                }
            }
        }
        for d in self.dirs.iter_mut() {
            d.io.unsent_at_exit += d.heap.len() as u64;
            d.heap.clear();
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
        self.dirs.iter().filter_map(|d| d.heap.peek().map(|h| h.deadline)).min()
    }

    /// Sleeps until `until` (monotonic ns), an arrival on either socket, or the stop signal.
    fn wait(&self, until: i64) {
        let mut fds = [
            libc::pollfd { fd: self.socks[0].fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.socks[1].fd, events: libc::POLLIN, revents: 0 },
            libc::pollfd { fd: self.wake_fd, events: libc::POLLIN, revents: 0 },
        ];
        let ns = (until - mono_ns()).max(0);
        let ts = libc::timespec { tv_sec: ns / 1_000_000_000, tv_nsec: ns % 1_000_000_000 };
        unsafe { libc::ppoll(fds.as_mut_ptr(), fds.len() as libc::nfds_t, &ts, std::ptr::null()) };
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
        d.core.on_read(arrival, now);
        count(&mut d.io.lag_hist, now - arrival);
        net::complete_checksum(&mut buf);
        let frame_len = buf.len() - VNET_HDR_LEN;
        let id = d.next_id;
        d.next_id += 1;
        match d.core.on_arrival(arrival - clk.start, frame_len) {
            Verdict::Drop(reason) => {
                let rec = Record { up: d.up, id, size: frame_len as u32, arrival: arrival + clk.offset, departure: None, reason: Some(reason.as_str()) };
                self.pool.push(buf);
                self.log.push(rec, now);
            }
            Verdict::Forward(dep) => d.heap.push(Item { deadline: dep + clk.start, id, arrival, data: buf }),
        }
    }

    /// Sends every frame whose departure time has come, earliest first.
    fn send_due(&mut self) {
        loop {
            let now = mono_ns();
            let mut pick = None;
            for (i, d) in self.dirs.iter().enumerate() {
                if let Some(h) = d.heap.peek() {
                    if h.deadline <= now && pick.map_or(true, |(_, dl)| h.deadline < dl) {
                        pick = Some((i, h.deadline));
                    }
                }
            }
            let Some((di, _)) = pick else { return };
            let it = self.dirs[di].heap.pop().unwrap();
            let eg = WIRES[di].1;
            let t = mono_ns();
            let ok = self.socks[eg].send(&it.data).is_ok();
            let t2 = mono_ns();
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
            };
            self.pool.push(it.data);
            self.log.push(rec, t);
        }
    }
}

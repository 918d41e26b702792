//! The impairment logic of one direction, as a pure state machine: time is
//! passed in (nanoseconds since the emulator start), never read from a clock,
//! so every behaviour can be unit-tested deterministically.
//!
//! On each arrival, in this order:
//!   1. outage: arriving inside an outage window -> drop "outage";
//!   2. loss: Bernoulli or Gilbert–Elliott draw -> drop "loss". With
//!      link-layer retransmission (`llr`) the loss model is the radio's loss
//!      per transmission attempt: the frame is tried up to 1 + retries times,
//!      each attempt drawing loss (a Gilbert–Elliott chain moves once per
//!      attempt); lost on every attempt -> drop "loss" (residual loss), else
//!      it goes on with its number of attempts k;
//!   3. drop-tail queue: if the bottleneck queue (packets that arrived and
//!      have not yet left the bottleneck) would exceed its byte or packet
//!      limit -> drop "queue";
//!   4. bottleneck: the packet leaves the bottleneck after serialisation at a
//!      fixed rate (FIFO, work-conserving), or at the trace delivery
//!      opportunity that carries its last byte; unlimited rate = at once.
//!      A frame tried k times is serialised k times (radio retransmissions
//!      use air time, so radio loss costs capacity), all at its turn in the
//!      FIFO; it counts once (its bytes, one packet) in the queue until then;
//!   5. the k - 1 retransmission waits (`llr.delay_ms` each: the RLC/HARQ
//!      round) + propagation delay + jitter. The waits do not hold the
//!      bottleneck: it serves the next frames meanwhile (LTE runs parallel
//!      HARQ processes). Without `reorder` the departure is
//!      max(computed, previous departure), so packets never overtake: frames
//!      behind a retransmitted one wait for it (in-sequence delivery, as RLC
//!      acknowledged mode does).
//! So on an idle link a frame tried k times leaves at
//! arrival + k * serialisation + (k - 1) * llr delay + delay (+ jitter).
//! A frame lost on every attempt is dropped on arrival like a plain loss: it
//! takes no queue place and no bottleneck time (the air time of its failed
//! attempts is not charged; residual loss is p^(1 + retries), rare).
//! Rate and queue accounting use the L3 size (frame length minus the 14-byte
//! Ethernet header), so a 1500-byte IP packet uses exactly one trace
//! opportunity, as in Mahimahi.

use crate::rng::Rng;
use crate::stalls::Lateness;
use crate::trace::{Trace, OPPORTUNITY_BYTES};
use std::collections::VecDeque;

pub const ETH_HLEN: usize = 14;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reason {
    Loss,
    Queue,
    Outage,
}

impl Reason {
    pub fn as_str(self) -> &'static str {
        match self {
            Reason::Loss => "loss",
            Reason::Queue => "queue",
            Reason::Outage => "outage",
        }
    }
}

/// What became of a frame, with its number of transmission attempts on the
/// emulated link: 0 for queue and outage drops (never sent), 1 + retries for
/// a loss drop with `llr` (1 without), k >= 1 for a forwarded frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    Drop(Reason, u32),
    /// Departure time from the emulator (ns since start), attempts.
    Forward(i64, u32),
}

/// Link-layer retransmission: a frame the loss model loses is resent
/// `delay_ns` later, up to `retries` times.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Llr {
    pub delay_ns: i64,
    pub retries: u32,
}

#[derive(Clone, Debug)]
pub enum LossModel {
    None,
    Bernoulli { p: f64 },
    GilbertElliott { p_gb: f64, p_bg: f64, loss_good: f64, loss_bad: f64 },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitterDist {
    Uniform,
    Normal,
}

#[derive(Clone, Debug)]
pub enum Rate {
    Unlimited,
    /// Bits per second.
    Fixed(f64),
    Trace(Trace),
}

#[derive(Clone, Debug)]
pub struct DirConfig {
    pub delay_ns: i64,
    pub jitter_ns: i64,
    pub jitter_dist: JitterDist,
    pub reorder: bool,
    pub loss: LossModel,
    /// Link-layer retransmission of frames the loss model loses (None: they are dropped).
    pub llr: Option<Llr>,
    pub rate: Rate,
    pub queue_bytes: Option<u64>,
    pub queue_packets: Option<u64>,
    /// [start, end) in ns since the emulator start.
    pub outages: Vec<(i64, i64)>,
}

pub const DEFAULT_QUEUE_PACKETS: u64 = 1000;

impl Default for DirConfig {
    fn default() -> Self {
        DirConfig {
            delay_ns: 0,
            jitter_ns: 0,
            jitter_dist: JitterDist::Uniform,
            reorder: false,
            loss: LossModel::None,
            llr: None,
            rate: Rate::Unlimited,
            queue_bytes: None,
            queue_packets: None,
            outages: Vec::new(),
        }
    }
}

#[derive(Default, Clone, Debug)]
pub struct Counters {
    pub arrived: u64,
    pub forwarded: u64,
    pub loss: u64,
    pub queue: u64,
    pub outage: u64,
    /// Link-layer retransmissions: attempts beyond the first, of the frames
    /// forwarded and of those lost on every attempt.
    pub retransmissions: u64,
    /// Forwarded frames that needed at least one retransmission.
    pub retransmitted: u64,
}

pub struct DirectionCore {
    cfg: DirConfig,
    loss_rng: Rng,
    jitter_rng: Rng,
    ge_bad: bool,
    /// (bottleneck departure ns, L3 bytes) of packets still in the bottleneck queue.
    inflight: VecDeque<(i64, u64)>,
    q_bytes: u64,
    /// Fixed rate: when the bottleneck is next free (ns).
    tail_ns: i64,
    /// Trace: current opportunity and bytes left in it.
    opp: u64,
    opp_left: u32,
    opp_valid: bool,
    last_departure: i64,
    pub counters: Counters,
    /// Departures that left more than 1 ms after their scheduled time.
    pub late: Lateness,
    /// Frames read more than 1 ms after the kernel received them.
    pub lag: Lateness,
}

impl DirectionCore {
    /// `stream` distinguishes the directions (0 = down, 1 = up) so that they
    /// draw from independent random streams of the same seed.
    pub fn new(cfg: DirConfig, seed: u64, stream: u64) -> DirectionCore {
        DirectionCore {
            cfg,
            loss_rng: Rng::new(seed, stream * 2),
            jitter_rng: Rng::new(seed, stream * 2 + 1),
            ge_bad: false,
            inflight: VecDeque::new(),
            q_bytes: 0,
            tail_ns: i64::MIN,
            opp: 0,
            opp_left: 0,
            opp_valid: false,
            last_departure: i64::MIN,
            counters: Counters::default(),
            late: Lateness::default(),
            lag: Lateness::default(),
        }
    }

    /// A lower bound of (departure - arrival) for any frame: the delay minus
    /// the most the jitter can take off (normal jitter is unbounded: 0).
    pub fn min_latency_ns(&self) -> i64 {
        let off = match self.cfg.jitter_dist {
            _ if self.cfg.jitter_ns <= 0 => 0,
            JitterDist::Uniform => self.cfg.jitter_ns,
            JitterDist::Normal => i64::MAX,
        };
        self.cfg.delay_ns.saturating_sub(off).max(0)
    }

    /// A frame scheduled to leave at `scheduled_ns` (from `on_arrival`) left at `sent_ns`.
    pub fn on_departure(&mut self, scheduled_ns: i64, sent_ns: i64) {
        self.late.record(scheduled_ns, sent_ns);
    }

    /// A frame the kernel received at `arrival_ns` was read by the emulator at `read_ns`.
    pub fn on_read(&mut self, arrival_ns: i64, read_ns: i64) {
        self.lag.record(arrival_ns, read_ns);
    }

    pub fn config(&self) -> &DirConfig {
        &self.cfg
    }

    /// Bytes and packets in the bottleneck queue at time `t_ns` (after
    /// `on_arrival` calls up to that time).
    #[allow(dead_code)]
    pub fn queue_len(&mut self, t_ns: i64) -> (u64, usize) {
        self.expire(t_ns);
        (self.q_bytes, self.inflight.len())
    }

    fn expire(&mut self, t_ns: i64) {
        while let Some(&(dep, b)) = self.inflight.front() {
            if dep <= t_ns {
                self.inflight.pop_front();
                self.q_bytes -= b;
            } else {
                break;
            }
        }
    }

    fn in_outage(&self, t_ns: i64) -> bool {
        self.cfg.outages.iter().any(|&(a, b)| t_ns >= a && t_ns < b)
    }

    fn lost(&mut self) -> bool {
        match self.cfg.loss {
            LossModel::None => false,
            LossModel::Bernoulli { p } => self.loss_rng.chance(p),
            LossModel::GilbertElliott { p_gb, p_bg, loss_good, loss_bad } => {
                // The loss is drawn in the current state, then the state moves.
                let lost = self.loss_rng.chance(if self.ge_bad { loss_bad } else { loss_good });
                if self.ge_bad {
                    if self.loss_rng.chance(p_bg) {
                        self.ge_bad = false;
                    }
                } else if self.loss_rng.chance(p_gb) {
                    self.ge_bad = true;
                }
                lost
            }
        }
    }

    /// Transmission attempts until one is not lost: Ok(k), or Err(attempts)
    /// when every attempt allowed was lost. Without `llr` one attempt.
    fn attempts(&mut self) -> Result<u32, u32> {
        let tries = self.cfg.llr.map_or(1, |l| 1 + l.retries);
        for k in 1..=tries {
            if !self.lost() {
                return Ok(k);
            }
        }
        Err(tries)
    }

    /// When a frame of `bytes` arriving at `t_ns` and sent `attempts` times
    /// (back to back, at its turn) leaves the bottleneck.
    fn bottleneck(&mut self, t_ns: i64, bytes: u64, attempts: u32) -> i64 {
        match &self.cfg.rate {
            Rate::Unlimited => t_ns,
            Rate::Fixed(bps) => {
                let ser = ((bytes as f64) * 8.0 * 1e9 / bps).round() as i64;
                let start = self.tail_ns.max(t_ns);
                self.tail_ns = start + ser * attempts as i64;
                self.tail_ns
            }
            Rate::Trace(tr) => {
                // The opportunity in hand is usable only if it has not yet
                // happened (otherwise the queue was empty and it went unused).
                if !self.opp_valid || self.opp_left == 0 || tr.opp_ns(self.opp) < t_ns {
                    if self.opp_valid && self.opp_left == 0 && tr.opp_ns(self.opp + 1) >= t_ns {
                        self.opp += 1;
                    } else {
                        self.opp = tr.first_at_or_after(t_ns);
                    }
                    self.opp_left = OPPORTUNITY_BYTES;
                    self.opp_valid = true;
                }
                let mut rem = bytes * attempts as u64;
                loop {
                    let take = rem.min(self.opp_left as u64);
                    rem -= take;
                    self.opp_left -= take as u32;
                    if rem == 0 {
                        break;
                    }
                    self.opp += 1;
                    self.opp_left = OPPORTUNITY_BYTES;
                }
                tr.opp_ns(self.opp)
            }
        }
    }

    fn jitter(&mut self) -> i64 {
        let j = self.cfg.jitter_ns;
        if j <= 0 {
            return 0;
        }
        match self.cfg.jitter_dist {
            JitterDist::Uniform => ((self.jitter_rng.f64() * 2.0 - 1.0) * j as f64).round() as i64,
            JitterDist::Normal => (self.jitter_rng.normal() * j as f64).round() as i64,
        }
    }

    /// A frame of `frame_len` bytes (Ethernet, without FCS) arrives at `t_ns`.
    pub fn on_arrival(&mut self, t_ns: i64, frame_len: usize) -> Verdict {
        self.counters.arrived += 1;
        if self.in_outage(t_ns) {
            self.counters.outage += 1;
            return Verdict::Drop(Reason::Outage, 0);
        }
        let k = match self.attempts() {
            Ok(k) => k,
            Err(tries) => {
                self.counters.loss += 1;
                self.counters.retransmissions += tries as u64 - 1;
                return Verdict::Drop(Reason::Loss, tries);
            }
        };
        let bytes = frame_len.saturating_sub(ETH_HLEN).max(1) as u64;
        self.expire(t_ns);
        let qp = self.cfg.queue_packets.or(if self.cfg.queue_bytes.is_none() { Some(DEFAULT_QUEUE_PACKETS) } else { None });
        let over_p = qp.map_or(false, |l| self.inflight.len() as u64 + 1 > l);
        let over_b = self.cfg.queue_bytes.map_or(false, |l| self.q_bytes + bytes > l);
        if over_p || over_b {
            self.counters.queue += 1;
            return Verdict::Drop(Reason::Queue, 0);
        }
        let b = self.bottleneck(t_ns, bytes, k);
        if b > t_ns {
            self.inflight.push_back((b, bytes));
            self.q_bytes += bytes;
        }
        let waits = self.cfg.llr.map_or(0, |l| l.delay_ns * (k as i64 - 1));
        let mut d = b + waits + (self.cfg.delay_ns + self.jitter()).max(0);
        if !self.cfg.reorder {
            d = d.max(self.last_departure);
            self.last_departure = d;
        }
        self.counters.forwarded += 1;
        if k > 1 {
            self.counters.retransmissions += k as u64 - 1;
            self.counters.retransmitted += 1;
        }
        Verdict::Forward(d, k)
    }
}

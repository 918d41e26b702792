//! Unit tests of the pure impairment core (time passed in).

use crate::core::*;
use crate::trace::Trace;

const MS: i64 = 1_000_000;
const FULL: usize = 1514; // 1500-byte IP packet in an Ethernet frame

fn core(cfg: DirConfig) -> DirectionCore {
    DirectionCore::new(cfg, 42, 0)
}

fn fwd(v: Verdict) -> i64 {
    match v {
        Verdict::Forward(d, 1) => d,
        other => panic!("expected forward, got {:?}", other),
    }
}

#[test]
fn pure_delay() {
    let mut c = core(DirConfig { delay_ns: 20 * MS, ..Default::default() });
    for i in 0..100 {
        let t = i * 137_000;
        assert_eq!(fwd(c.on_arrival(t, FULL)), t + 20 * MS);
    }
}

#[test]
fn fixed_rate_serialisation() {
    // 12 Mbit/s: 1500 bytes = 1 ms.
    let mut c = core(DirConfig { delay_ns: 5 * MS, rate: Rate::Fixed(12e6), ..Default::default() });
    // A burst of 10 at t=0 leaves 1 ms apart.
    for i in 0..10 {
        assert_eq!(fwd(c.on_arrival(0, FULL)), (i + 1) * MS + 5 * MS);
    }
    // Idle link: a later packet is serialised from its arrival.
    assert_eq!(fwd(c.on_arrival(100 * MS, FULL)), 101 * MS + 5 * MS);
    // Small packet: 100 L3 bytes = 1/15 ms.
    assert_eq!(fwd(c.on_arrival(200 * MS, 114)), 200 * MS + 66_667 + 5 * MS);
}

#[test]
fn queue_packet_limit() {
    let mut c = core(DirConfig { rate: Rate::Fixed(12e6), queue_packets: Some(5), ..Default::default() });
    let v: Vec<Verdict> = (0..8).map(|_| c.on_arrival(0, FULL)).collect();
    assert!(v[..5].iter().all(|x| matches!(x, Verdict::Forward(_, 1))));
    assert!(v[5..].iter().all(|x| *x == Verdict::Drop(Reason::Queue, 0)));
    assert_eq!(c.queue_len(0), (7500, 5));
    // After 1 ms one packet has left: room for exactly one more.
    assert!(matches!(c.on_arrival(MS, FULL), Verdict::Forward(_, 1)));
    assert_eq!(c.on_arrival(MS, FULL), Verdict::Drop(Reason::Queue, 0));
    // Everything drains by 6 ms.
    assert_eq!(c.queue_len(6 * MS), (0, 0));
    assert_eq!(c.counters.queue, 4);
}

#[test]
fn queue_byte_limit() {
    let mut c = core(DirConfig { rate: Rate::Fixed(12e6), queue_bytes: Some(4000), ..Default::default() });
    assert!(matches!(c.on_arrival(0, FULL), Verdict::Forward(_, 1))); // 1500
    assert!(matches!(c.on_arrival(0, FULL), Verdict::Forward(_, 1))); // 3000
    assert_eq!(c.on_arrival(0, FULL), Verdict::Drop(Reason::Queue, 0)); // 4500 > 4000
    assert!(matches!(c.on_arrival(0, 1014), Verdict::Forward(_, 1))); // 3000 + 1000 = 4000 fits
    assert_eq!(c.on_arrival(0, 15), Verdict::Drop(Reason::Queue, 0));
    assert_eq!(c.queue_len(0), (4000, 3));
}

#[test]
fn default_queue_is_1000_packets() {
    let mut c = core(DirConfig { rate: Rate::Fixed(1e6), ..Default::default() });
    let fwd_n = (0..1100).filter(|_| matches!(c.on_arrival(0, 100), Verdict::Forward(_, 1))).count();
    assert_eq!(fwd_n, DEFAULT_QUEUE_PACKETS as usize);
}

#[test]
fn unlimited_rate_never_queues() {
    let mut c = core(DirConfig { queue_packets: Some(1), ..Default::default() });
    for _ in 0..100 {
        assert_eq!(fwd(c.on_arrival(0, FULL)), 0);
    }
}

#[test]
fn jitter_without_reordering() {
    for dist in [JitterDist::Uniform, JitterDist::Normal] {
        let mut c = core(DirConfig { delay_ns: 20 * MS, jitter_ns: 5 * MS, jitter_dist: dist, ..Default::default() });
        let mut prev = i64::MIN;
        let mut delays = Vec::new();
        for i in 0..20_000 {
            let t = i * 100_000; // 0.1 ms apart, much closer than the jitter
            let d = fwd(c.on_arrival(t, FULL));
            assert!(d >= prev, "reordered");
            assert!(d >= t);
            prev = d;
            delays.push(d - t);
        }
        let mean = delays.iter().sum::<i64>() as f64 / delays.len() as f64 / MS as f64;
        // max(.) with the previous departure pushes the mean up, but it stays in range.
        assert!(mean > 20.0 && mean < 30.0, "{:?} mean {}", dist, mean);
    }
}

#[test]
fn jitter_with_reordering_is_unbiased() {
    let mut c = core(DirConfig { delay_ns: 20 * MS, jitter_ns: 5 * MS, reorder: true, ..Default::default() });
    let mut prev = i64::MIN;
    let mut reordered = 0;
    let mut sum = 0i64;
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    let n = 20_000;
    for i in 0..n {
        let t = i * 100_000;
        let d = fwd(c.on_arrival(t, FULL));
        if d < prev {
            reordered += 1;
        }
        prev = d;
        sum += d - t;
        lo = lo.min(d - t);
        hi = hi.max(d - t);
    }
    let mean = sum as f64 / n as f64 / MS as f64;
    assert!((mean - 20.0).abs() < 0.1, "mean {mean}");
    assert!(lo >= 15 * MS && hi <= 25 * MS);
    assert!(reordered > n / 10);
}

#[test]
fn bernoulli_loss_rate() {
    for p in [0.01, 0.1, 0.5] {
        let mut c = core(DirConfig { loss: LossModel::Bernoulli { p }, ..Default::default() });
        let n = 200_000;
        let lost = (0..n).filter(|&i| c.on_arrival(i, 100) == Verdict::Drop(Reason::Loss, 1)).count();
        let rate = lost as f64 / n as f64;
        let sd = (p * (1.0 - p) / n as f64).sqrt();
        assert!((rate - p).abs() < 5.0 * sd, "p={p} rate={rate}");
    }
}

#[test]
fn loss_is_deterministic_given_seed() {
    let run = |seed| {
        let mut c = DirectionCore::new(DirConfig { loss: LossModel::Bernoulli { p: 0.3 }, ..Default::default() }, seed, 0);
        (0..1000).map(|i| c.on_arrival(i, 100)).collect::<Vec<_>>()
    };
    assert_eq!(run(5), run(5));
    assert_ne!(run(5), run(6));
}

#[test]
fn gilbert_elliott_loss_rate_and_burstiness() {
    let (p_gb, p_bg, lg, lb) = (0.01, 0.3, 0.0, 0.5);
    let mut c = core(DirConfig {
        loss: LossModel::GilbertElliott { p_gb, p_bg, loss_good: lg, loss_bad: lb },
        ..Default::default()
    });
    let n = 500_000;
    let lost: Vec<bool> = (0..n).map(|i| c.on_arrival(i, 100) == Verdict::Drop(Reason::Loss, 1)).collect();
    let rate = lost.iter().filter(|&&x| x).count() as f64 / n as f64;
    let pi_bad = p_gb / (p_gb + p_bg);
    let expect = pi_bad * lb + (1.0 - pi_bad) * lg; // 0.01613
    assert!((rate - expect).abs() < 0.1 * expect, "rate {rate} expect {expect}");
    // Bursty: P(loss | previous lost) is far above the mean rate.
    let pairs = lost.windows(2).filter(|w| w[0]).count() as f64;
    let both = lost.windows(2).filter(|w| w[0] && w[1]).count() as f64;
    let cond = both / pairs;
    // In the bad state the next packet stays bad w.p. 0.7 and is lost w.p. 0.5: ~0.35.
    assert!(cond > 0.25 && cond < 0.45, "conditional {cond}");
}

#[test]
fn outages_drop_arrivals() {
    let mut c = core(DirConfig { delay_ns: MS, outages: vec![(10 * MS, 20 * MS), (30 * MS, 31 * MS)], ..Default::default() });
    let verdicts: Vec<(i64, Verdict)> = (0..40).map(|i| (i * MS, c.on_arrival(i * MS, FULL))).collect();
    for (t, v) in verdicts {
        let down = (t >= 10 * MS && t < 20 * MS) || (t >= 30 * MS && t < 31 * MS);
        if down {
            assert_eq!(v, Verdict::Drop(Reason::Outage, 0), "t={t}");
        } else {
            assert_eq!(v, Verdict::Forward(t + MS, 1), "t={t}");
        }
    }
    assert_eq!(c.counters.outage, 11);
}

#[test]
fn trace_delivery_matches_opportunities() {
    // Opportunities at 2, 2, 5, 9 ms; period 9 ms.
    let tr = Trace::from_ms(vec![2, 2, 5, 9]).unwrap();
    let mut c = core(DirConfig { delay_ns: 10 * MS, rate: Rate::Trace(tr), ..Default::default() });
    // Burst of 6 full packets at t=0: two at 2 ms, one at 5, one at 9, then
    // the loop: 11, 11 ms.
    let d: Vec<i64> = (0..6).map(|_| fwd(c.on_arrival(0, FULL)) - 10 * MS).collect();
    assert_eq!(d, vec![2 * MS, 2 * MS, 5 * MS, 9 * MS, 11 * MS, 11 * MS]);
    // Queue empty, opportunity at 14 ms; a packet arriving at 12 ms waits for it.
    assert_eq!(fwd(c.on_arrival(12 * MS, FULL)) - 10 * MS, 14 * MS);
    // Arriving exactly at an opportunity uses it (18 ms = 9 + 9).
    assert_eq!(fwd(c.on_arrival(18 * MS, FULL)) - 10 * MS, 18 * MS);
    // Far into the loop: cycle 100 starts at 900 ms; arrival at 903 -> 905.
    assert_eq!(fwd(c.on_arrival(903 * MS, FULL)) - 10 * MS, 905 * MS);
}

#[test]
fn trace_offset_starts_the_trace_at_that_phase() {
    // Opportunities at 2, 2, 5, 9 ms; period 9 ms. Offset 3: emulator time t is
    // trace time t + 3, so the raw opportunities 5, 9, 11, 11, 14, 18, 20, 20
    // happen at 2, 6, 8, 8, 11, 15, 17, 17 ms.
    for offset in [3u64, 12, 9 * 7 + 3] {
        let tr = Trace::from_ms(vec![2, 2, 5, 9]).unwrap().with_offset(offset);
        let mut c = core(DirConfig { delay_ns: 10 * MS, rate: Rate::Trace(tr), ..Default::default() });
        let d: Vec<i64> = (0..6).map(|_| fwd(c.on_arrival(0, FULL)) - 10 * MS).collect();
        assert_eq!(d, vec![2 * MS, 6 * MS, 8 * MS, 8 * MS, 11 * MS, 15 * MS], "offset {offset}");
        // queue empty again: a packet arriving at 16 ms takes the opportunity at 17
        assert_eq!(fwd(c.on_arrival(16 * MS, FULL)) - 10 * MS, 17 * MS, "offset {offset}");
    }
}

/// Departures (or drops) of a seeded random arrival sequence, the arrivals
/// shifted by `shift_ns`, through a trace started at `offset_ms`.
fn traced_run(tr: &Trace, offset_ms: u64, shift_ns: i64) -> Vec<Verdict> {
    let cfg = DirConfig {
        delay_ns: 7 * MS,
        jitter_ns: MS,
        loss: LossModel::Bernoulli { p: 0.1 },
        llr: Some(Llr { delay_ns: 3 * MS, retries: 2 }),
        rate: Rate::Trace(tr.clone().with_offset(offset_ms)),
        queue_packets: Some(40),
        ..Default::default()
    };
    let mut c = core(cfg);
    let mut arr = crate::rng::Rng::new(5, 9);
    let mut t = 0i64;
    (0..3000)
        .map(|_| {
            t += (arr.f64() * 1.5 * MS as f64) as i64; // bursts and gaps around the trace's rate
            let len = if arr.chance(0.7) { FULL } else { 60 + (arr.f64() * 1400.0) as usize };
            match c.on_arrival(t + shift_ns, len) {
                Verdict::Forward(d, k) => Verdict::Forward(d - shift_ns, k),
                v => v,
            }
        })
        .collect()
}

#[test]
fn trace_offset_equals_the_trace_shifted_in_time() {
    // An irregular trace (seeded): 1-3 opportunities in some milliseconds, none
    // in others; period 997 ms.
    let mut g = crate::rng::Rng::new(11, 0);
    let mut ms = Vec::new();
    for m in 1..=997u64 {
        let k = (g.f64() * 4.0 * if (m / 100) % 2 == 0 { 1.0 } else { 0.3 }) as usize;
        ms.extend(std::iter::repeat(m).take(k));
    }
    if ms.last() != Some(&997) {
        ms.push(997);
    }
    let tr = Trace::from_ms(ms).unwrap();
    let base = traced_run(&tr, 0, 0);
    // By construction: with offset k a frame leaves when it would have left
    // without an offset had it arrived k later, minus k; k and k + n * period
    // are the same phase.
    for k in [1u64, 137, 500, 996, 997, 997 + 250, 5 * 997 + 13] {
        let shifted = traced_run(&tr, 0, k as i64 * MS);
        assert_eq!(traced_run(&tr, k, 0), shifted, "offset {k}");
        assert_eq!(traced_run(&tr, k % 997, 0), shifted, "offset {k} modulo the period");
        if k % 997 != 0 {
            assert_ne!(traced_run(&tr, k, 0), base, "offset {k} changes nothing");
        }
    }
}

#[test]
fn trace_shares_opportunities_between_small_packets() {
    let tr = Trace::from_ms(vec![1, 2, 3, 4]).unwrap(); // 1500 B per ms = 12 Mbit/s
    let mut c = core(DirConfig { rate: Rate::Trace(tr), ..Default::default() });
    // 3 x 500-byte packets share the opportunity at 1 ms; the 4th goes at 2 ms.
    let d: Vec<i64> = (0..4).map(|_| fwd(c.on_arrival(0, 514))).collect();
    assert_eq!(d, vec![MS, MS, MS, 2 * MS]);
    // A 2000-byte packet spans two opportunities: 1000 B left at 2 ms, then 3 ms.
    assert_eq!(fwd(c.on_arrival(0, 2014)), 3 * MS);
    // Leftover of an opportunity that has passed is wasted.
    assert_eq!(fwd(c.on_arrival(3 * MS + 1, 514)), 4 * MS);
}

#[test]
fn trace_rate_long_run_matches_trace() {
    // Saturated queue: delivered bytes over 10 loops equal the opportunities.
    let tr = Trace::from_ms((1..=100).map(|i| i * 2).collect()).unwrap(); // 1 opp / 2 ms, period 200 ms
    let mut c = core(DirConfig { rate: Rate::Trace(tr), queue_packets: Some(100_000), ..Default::default() });
    let mut last = 0;
    for _ in 0..1000 {
        last = fwd(c.on_arrival(0, FULL));
    }
    assert_eq!(last, 2000 * MS); // 1000th opportunity = 10 loops of 200 ms
}

#[test]
fn trace_queue_limit() {
    let tr = Trace::from_ms(vec![10]).unwrap();
    let mut c = core(DirConfig { rate: Rate::Trace(tr), queue_packets: Some(3), ..Default::default() });
    let v: Vec<Verdict> = (0..5).map(|_| c.on_arrival(0, FULL)).collect();
    assert_eq!(v[..3], [Verdict::Forward(10 * MS, 1), Verdict::Forward(20 * MS, 1), Verdict::Forward(30 * MS, 1)]);
    assert_eq!(v[3], Verdict::Drop(Reason::Queue, 0));
    assert_eq!(c.on_arrival(10 * MS, FULL), Verdict::Forward(40 * MS, 1));
}

#[test]
fn late_departure_is_recorded_as_a_stall_interval() {
    let mut c = core(DirConfig { delay_ns: 10 * MS, rate: Rate::Fixed(12e6), ..Default::default() });
    let d: Vec<i64> = (0..6).map(|i| fwd(c.on_arrival(i * MS, FULL))).collect();
    // on time, then a host stall delays two departures by 3 and 2.5 ms, then on time again
    c.on_departure(d[0], d[0] + 20_000);
    c.on_departure(d[1], d[1] + 3 * MS);
    c.on_departure(d[2], d[2] + 5 * MS / 2);
    c.on_departure(d[3], d[3] + 900_000); // 0.9 ms: not late (> 1 ms is)
    c.on_departure(d[4], d[4] + 7 * MS);
    c.late.close();
    assert_eq!(c.late.events, 5);
    assert_eq!(c.late.late, 3);
    assert_eq!(c.late.worst_ns, 7 * MS);
    assert_eq!(c.late.worst_at_ns, d[4]);
    assert_eq!(c.late.n_intervals(), 2);
    assert_eq!(c.late.intervals[0], crate::stalls::Interval { start_ns: d[1], end_ns: d[2] + 5 * MS / 2, events: 2, worst_ns: 3 * MS });
    assert_eq!(c.late.intervals[1].events, 1);
    // the reader's lag is kept the same way, separately
    c.on_read(100 * MS, 100 * MS + 50_000);
    c.on_read(200 * MS, 202 * MS);
    assert_eq!((c.lag.late, c.lag.worst_ns, c.lag.worst_at_ns, c.lag.n_intervals()), (1, 2 * MS, 200 * MS, 1));
}

#[test]
fn stall_intervals_are_bounded() {
    let mut l = crate::stalls::Lateness::new(MS);
    for i in 0..(crate::stalls::MAX_INTERVALS as i64 + 5) {
        l.record(i * 10 * MS, i * 10 * MS + 2 * MS); // late
        l.record(i * 10 * MS + 5 * MS, i * 10 * MS + 5 * MS); // on time: closes it
    }
    assert_eq!(l.intervals.len(), crate::stalls::MAX_INTERVALS);
    assert_eq!(l.n_intervals(), crate::stalls::MAX_INTERVALS as u64 + 5);
    assert_eq!(l.late, crate::stalls::MAX_INTERVALS as u64 + 5);
}

#[test]
fn min_latency_bounds_every_departure() {
    for (jitter, dist, reorder) in [(0, JitterDist::Uniform, false), (3 * MS, JitterDist::Uniform, true), (3 * MS, JitterDist::Normal, true)] {
        let mut c = core(DirConfig { delay_ns: 10 * MS, jitter_ns: jitter, jitter_dist: dist, reorder, rate: Rate::Fixed(50e6), ..Default::default() });
        let m = c.min_latency_ns();
        assert_eq!(m, match (jitter, dist) { (0, _) => 10 * MS, (_, JitterDist::Uniform) => 7 * MS, _ => 0 });
        for i in 0..2000 {
            let t = i * 300_000;
            assert!(fwd(c.on_arrival(t, FULL)) - t >= m);
        }
    }
}

// ---- link-layer retransmission (llr) ----

const LLR_D: i64 = 8 * MS; // retransmission round
const PROP: i64 = 5 * MS;

fn llr_cfg(loss: LossModel, retries: u32, rate: Rate) -> DirConfig {
    DirConfig { delay_ns: PROP, loss, llr: Some(Llr { delay_ns: LLR_D, retries }), rate, queue_packets: Some(100_000), ..Default::default() }
}

/// The attempts of `n` frames, recomputed from the loss stream the core draws
/// from (seed 42, stream 0, as `core()`): each attempt is lost with
/// probability p; Some(k) = the k-th attempt got through, None = all 1 + retries lost.
fn bernoulli_attempts(p: f64, retries: u32, n: usize) -> Vec<Option<u32>> {
    let mut rng = crate::rng::Rng::new(42, 0);
    (0..n).map(|_| (1..=1 + retries).find(|_| !rng.chance(p))).collect()
}

#[test]
fn llr_without_loss_never_retransmits() {
    let mut c = core(llr_cfg(LossModel::Bernoulli { p: 0.0 }, 4, Rate::Fixed(12e6)));
    for i in 0..10 {
        assert_eq!(c.on_arrival(0, FULL), Verdict::Forward((i + 1) * MS + PROP, 1));
    }
    assert_eq!((c.counters.forwarded, c.counters.retransmissions, c.counters.retransmitted), (10, 0, 0));
}

#[test]
fn llr_certain_loss_drops_after_every_attempt() {
    let mut c = core(llr_cfg(LossModel::Bernoulli { p: 1.0 }, 4, Rate::Fixed(12e6)));
    for _ in 0..20 {
        assert_eq!(c.on_arrival(0, FULL), Verdict::Drop(Reason::Loss, 5));
    }
    assert_eq!(c.queue_len(0), (0, 0)); // residual losses take no queue place
    let k = &c.counters;
    assert_eq!((k.arrived, k.forwarded, k.loss, k.retransmissions, k.retransmitted), (20, 0, 20, 80, 0));
    // Gilbert–Elliott stuck in bad after the first draw: the first frame passes
    // on its first attempt (good), every later one is lost on all 1 + 2 attempts.
    let ge = LossModel::GilbertElliott { p_gb: 1.0, p_bg: 0.0, loss_good: 0.0, loss_bad: 1.0 };
    let mut c = core(llr_cfg(ge, 2, Rate::Unlimited));
    assert_eq!(c.on_arrival(0, FULL), Verdict::Forward(PROP, 1));
    for i in 1..5 {
        assert_eq!(c.on_arrival(i * MS, FULL), Verdict::Drop(Reason::Loss, 3));
    }
    assert_eq!((c.counters.loss, c.counters.retransmissions), (4, 8));
}

#[test]
fn llr_idle_link_delay_is_attempts_times_serialisation_plus_waits() {
    let (p, retries, n) = (0.4, 3, 3000);
    let want = bernoulli_attempts(p, retries, n);
    for rate in [Rate::Fixed(12e6), Rate::Unlimited] {
        let ser = if matches!(rate, Rate::Unlimited) { 0 } else { MS }; // 1500 B at 12 Mbit/s
        let mut c = core(llr_cfg(LossModel::Bernoulli { p }, retries, rate));
        // 100 ms apart: the link is idle at every arrival (at most 4 ms + 3 x 8 ms + 5 ms per frame)
        for (i, w) in want.iter().enumerate() {
            let t = i as i64 * 100 * MS;
            let expect = match *w {
                Some(k) => Verdict::Forward(t + k as i64 * ser + (k as i64 - 1) * LLR_D + PROP, k),
                None => Verdict::Drop(Reason::Loss, 1 + retries),
            };
            assert_eq!(c.on_arrival(t, FULL), expect, "frame {i}");
        }
        // every case occurs: 1..=4 attempts and residual losses
        for k in 1..=1 + retries {
            assert!(want.contains(&Some(k)), "no frame with {k} attempts");
        }
        let residual = want.iter().filter(|w| w.is_none()).count() as u64;
        assert!(residual > 0);
        let extra: u64 = want.iter().map(|w| w.map_or(retries, |k| k - 1) as u64).sum();
        let k = &c.counters;
        assert_eq!((k.loss, k.retransmissions), (residual, extra));
        assert_eq!(k.retransmitted, want.iter().filter(|w| matches!(w, Some(k) if *k > 1)).count() as u64);
    }
}

#[test]
fn llr_burst_in_order_and_queue_accounting() {
    let (p, retries, n) = (0.5, 6, 40);
    let want = bernoulli_attempts(p, retries, n);
    for reorder in [false, true] {
        let mut c = core(DirConfig { reorder, ..llr_cfg(LossModel::Bernoulli { p }, retries, Rate::Fixed(12e6)) });
        // By hand: the frames are serialised k times each, back to back (1 ms
        // per attempt); each then waits (k - 1) rounds and the propagation
        // delay; without reorder nobody leaves before the frame ahead of it.
        let (mut tail, mut last, mut held, mut overtook) = (0, i64::MIN, 0, 0);
        let mut exits = Vec::new();
        for (i, w) in want.iter().enumerate() {
            let v = c.on_arrival(0, FULL);
            let Some(k) = *w else {
                assert_eq!(v, Verdict::Drop(Reason::Loss, 1 + retries), "frame {i}");
                continue;
            };
            tail += k as i64 * MS;
            exits.push(tail);
            let raw = tail + (k as i64 - 1) * LLR_D + PROP;
            let dep = if reorder { raw } else { raw.max(last) };
            held += (raw < last) as u32;
            overtook += (reorder && raw < last) as u32;
            last = last.max(dep);
            assert_eq!(v, Verdict::Forward(dep, k), "frame {i} reorder {reorder}");
        }
        // the seed gives frames that would overtake a retransmitted one
        assert!(held > 0 && (overtook > 0) == reorder);
        // The queue holds each frame once (1500 B) until its last attempt is serialised.
        for (i, &b) in exits.iter().enumerate() {
            let left = (exits.len() - i) as u64;
            assert_eq!(c.queue_len(b - 1), (1500 * left, left as usize), "before exit {i}");
        }
        assert_eq!(c.queue_len(*exits.last().unwrap()), (0, 0));
    }
}

#[test]
fn llr_attempts_use_trace_opportunities() {
    // Gilbert–Elliott forced to alternate: good (passes, moves to bad), bad
    // (lost, moves to good), ... so attempt outcomes are pass, lost, pass, lost, ...:
    // the first frame takes 1 attempt, every later one 2.
    let ge = LossModel::GilbertElliott { p_gb: 1.0, p_bg: 1.0, loss_good: 0.0, loss_bad: 1.0 };
    let tr = Trace::from_ms((1..=100).collect()).unwrap(); // one 1500-byte opportunity per ms
    let mut c = core(DirConfig { queue_packets: Some(3), ..llr_cfg(ge, 3, Rate::Trace(tr)) });
    // frame 1: opportunity 1; frame 2: 2 and 3; frame 3: 4 and 5; frame 4: queue full
    // (its attempts were drawn, as for any frame that reaches the queue: lost, pass)
    assert_eq!(c.on_arrival(0, FULL), Verdict::Forward(MS + PROP, 1));
    assert_eq!(c.on_arrival(0, FULL), Verdict::Forward(3 * MS + LLR_D + PROP, 2));
    assert_eq!(c.on_arrival(0, FULL), Verdict::Forward(5 * MS + LLR_D + PROP, 2));
    assert_eq!(c.on_arrival(0, FULL), Verdict::Drop(Reason::Queue, 0));
    assert_eq!(c.queue_len(0), (4500, 3));
    // at 1 ms frame 1 has left: room for one, which takes opportunities 6 and 7
    assert_eq!(c.on_arrival(MS, FULL), Verdict::Forward(7 * MS + LLR_D + PROP, 2));
    // a queue drop is no retransmission: 2 + 2 + 1
    let k = &c.counters;
    assert_eq!((k.forwarded, k.queue, k.retransmissions, k.retransmitted), (4, 1, 3, 3));
}

#[test]
fn llr_keeps_the_latency_bound() {
    let mut c = core(DirConfig { jitter_ns: 2 * MS, ..llr_cfg(LossModel::Bernoulli { p: 0.3 }, 3, Rate::Fixed(50e6)) });
    let m = c.min_latency_ns();
    assert_eq!(m, PROP - 2 * MS); // llr only adds delay: the reader may still sleep this long
    for i in 0..2000 {
        let t = i * 300_000;
        if let Verdict::Forward(d, _) = c.on_arrival(t, FULL) {
            assert!(d - t >= m);
        }
    }
}

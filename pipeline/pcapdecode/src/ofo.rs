//! When each data packet's bytes became in order at the receiver (Chen et al., IMC
//! 2013, §3.3, out-of-order delay): the metric's per-packet loop, which in Python took
//! ~0.06-0.09 s of a 180k-packet client trace. `pipeline/metrics.py` (`ofo_delays`)
//! defines the metric and keeps a Python version for a decoder-less install.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Time each packet's first byte became in order (None if never), packets in arrival
/// order: `times` (s), `starts` (relative DSN of the first byte), `lengths` (bytes).
///
/// The in-order point starts at the lowest DSN of the connection's data (byte 1 when
/// the IDSN is known). A packet at or below it is in order on arrival and moves it
/// forward; others wait in a heap until it reaches them.
pub fn in_order_times(times: &[f64], starts: &[i64], lengths: &[i64]) -> Vec<Option<f64>> {
    let n = times.len().min(starts.len()).min(lengths.len());
    let mut ready = vec![None; n];
    let Some(&lowest) = starts[..n].iter().min() else { return ready };
    let mut order = InOrder::new(lowest);
    for (j, t) in order.feed(&times[..n], &starts[..n], &lengths[..n]) {
        ready[j] = Some(t);
    }
    ready
}

/// One connection's in-order point as a state fed with its packets in arrival order,
/// one piece after another (a trace read in chunks): each packet's index (counted from
/// the connection's first) and the time it became in order, as they become so. A
/// packet still waiting when the last piece is in never became in order.
pub struct InOrder {
    frontier: i64,
    /// (first byte, index, one past the last byte) of the packets waiting for a hole
    waiting: BinaryHeap<Reverse<(i64, usize, i64)>>,
    seen: usize,
}

impl InOrder {
    /// `lowest`: the lowest DSN of the connection's data (known before its first piece,
    /// from a first read): the in-order point starts there, or at byte 1 if lower.
    pub fn new(lowest: i64) -> Self {
        InOrder { frontier: lowest.min(1), waiting: BinaryHeap::new(), seen: 0 }
    }

    pub fn feed(&mut self, times: &[f64], starts: &[i64], lengths: &[i64]) -> Vec<(usize, f64)> {
        let ids: Vec<usize> = (self.seen..self.seen + times.len()).collect();
        self.feed_ids(&ids, times, starts, lengths)
    }

    /// `feed` with the packets named by the caller (`ids`, increasing: a trace's rows,
    /// when several connections' packets are fed in one arrival order).
    pub fn feed_ids(&mut self, ids: &[usize], times: &[f64], starts: &[i64], lengths: &[i64]) -> Vec<(usize, f64)> {
        let mut out = Vec::with_capacity(times.len());
        for i in 0..times.len() {
            let at = ids[i];
            if starts[i] <= self.frontier {
                out.push((at, times[i]));
                self.frontier = self.frontier.max(starts[i] + lengths[i]);
                while let Some(&Reverse((s, j, e))) = self.waiting.peek() {
                    if s > self.frontier {
                        break;
                    }
                    self.waiting.pop();
                    out.push((j, times[i]));
                    self.frontier = self.frontier.max(e);
                }
            } else {
                self.waiting.push(Reverse((starts[i], at, starts[i] + lengths[i])));
            }
        }
        self.seen += times.len();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition itself: a packet is in order at the first arrival time by which
    /// every byte from the start point up to its first byte has arrived.
    fn by_bytes(times: &[f64], starts: &[i64], lengths: &[i64]) -> Vec<Option<f64>> {
        let base = starts.iter().min().copied().unwrap_or(1).min(1);
        let end = starts.iter().zip(lengths).map(|(s, l)| s + l).max().unwrap_or(base);
        let mut first = vec![f64::INFINITY; (end - base) as usize]; // first arrival of each byte
        for i in 0..times.len() {
            for b in starts[i]..starts[i] + lengths[i] {
                let k = (b - base) as usize;
                first[k] = first[k].min(times[i]);
            }
        }
        (0..times.len())
            .map(|i| {
                let need = first[..(starts[i] - base) as usize].iter().fold(times[i], |m, &t| m.max(t));
                need.is_finite().then_some(need)
            })
            .collect()
    }

    #[test]
    fn pieces_fed_one_after_another_give_the_times_of_one() {
        let mut rng = crate::testgen::XorShift(0x51af_d7ed_558c_cd1d);
        let mut next = |m: u64| rng.below(m);
        for _ in 0..300 {
            let n = 1 + next(40) as usize;
            let times: Vec<f64> = (0..n).map(|i| i as f64).collect();
            let starts: Vec<i64> = (0..n).map(|_| next(60) as i64 - 3).collect();
            let lengths: Vec<i64> = (0..n).map(|_| 1 + next(8) as i64).collect();
            let want = in_order_times(&times, &starts, &lengths);
            let mut order = InOrder::new(*starts.iter().min().unwrap());
            let mut got = vec![None; n];
            let mut at = 0;
            while at < n {
                let to = (at + 1 + next(5) as usize).min(n);
                for (j, t) in order.feed(&times[at..to], &starts[at..to], &lengths[at..to]) {
                    assert!(got[j].is_none());
                    got[j] = Some(t);
                }
                at = to;
            }
            assert_eq!(got, want);
        }
    }

    #[test]
    fn in_order_waiting_and_never() {
        // bytes 1-10 arrive at t=1, 21-30 at t=2 (waits), 11-20 at t=3 (frees it), 41-50 never in order
        let t = [1.0, 2.0, 3.0, 4.0];
        let s = [1, 21, 11, 41];
        let l = [10, 10, 10, 10];
        assert_eq!(in_order_times(&t, &s, &l), vec![Some(1.0), Some(3.0), Some(3.0), None]);
        assert_eq!(in_order_times(&[], &[], &[]), vec![]);
    }

    #[test]
    fn equals_the_byte_by_byte_definition_on_shuffled_overlapping_packets() {
        // A small deterministic generator: segments of two "subflows", duplicated,
        // overlapping (repacketised), shuffled within a window, some never sent.
        let mut rng = crate::testgen::XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.below(m);
        for case in 0..300 {
            let mut segs: Vec<(i64, i64)> = Vec::new();
            let mut at = if case % 3 == 0 { 1 } else { 1 + next(5) as i64 };
            for _ in 0..(1 + next(40)) {
                let len = 1 + next(8) as i64;
                if next(10) > 0 {
                    segs.push((at, len));
                }
                if next(6) == 0 {
                    segs.push((at + next(len as u64) as i64, 1 + next(10) as i64)); // overlap
                }
                at += len;
            }
            for k in (1..segs.len()).rev() {
                let j = k.saturating_sub(next(4) as usize);
                segs.swap(k, j);
            }
            let times: Vec<f64> = (0..segs.len()).map(|i| i as f64 * 0.5).collect();
            let starts: Vec<i64> = segs.iter().map(|s| s.0).collect();
            let lengths: Vec<i64> = segs.iter().map(|s| s.1).collect();
            assert_eq!(in_order_times(&times, &starts, &lengths), by_bytes(&times, &starts, &lengths), "case {case}: {segs:?}");
        }
    }
}

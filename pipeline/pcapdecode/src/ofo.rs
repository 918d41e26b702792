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
    let mut frontier = lowest.min(1);
    let mut waiting: BinaryHeap<Reverse<(i64, usize)>> = BinaryHeap::new();
    for i in 0..n {
        if starts[i] <= frontier {
            ready[i] = Some(times[i]);
            frontier = frontier.max(starts[i] + lengths[i]);
            while let Some(&Reverse((s, j))) = waiting.peek() {
                if s > frontier {
                    break;
                }
                waiting.pop();
                ready[j] = Some(times[i]);
                frontier = frontier.max(starts[j] + lengths[j]);
            }
        } else {
            waiting.push(Reverse((starts[i], i)));
        }
    }
    ready
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

//! Per-ACK RTT samples (tshark's `tcp.analysis.ack_rtt`): one per ACK that moves its
//! subflow's cumulative ACK forward to the end of a segment not yet acked, timing the
//! first sent of the segments ending there. `pipeline/metrics.py` (`ack_rtt_samples`) defines the metric
//! and keeps the polars version (its window functions and join took ~5 s of a 5M-packet
//! trace, and seconds on 200,000 short subflows); the tests hold this one equal to it.

use crate::rtt::{dense_streams, key, slots};

/// Data segments, retransmissions too (and SYNs and FINs), of the sending directions:
/// where each ends (one past its last byte). Any order.
pub struct Segments<'a> {
    pub stream: &'a [u32],
    pub down: &'a [bool],
    pub frame: &'a [u32],
    pub end: &'a [i64],
}

/// The packets carrying a cumulative ACK, each with the direction of the data it
/// acknowledges (`down`: the ACK travels up). Any order: they are taken by frame.
pub struct Acks<'a> {
    pub stream: &'a [u32],
    pub down: &'a [bool],
    pub frame: &'a [u32],
    pub ack: &'a [i64],
}

/// The samples as (row of `acks`, row of `segs`), in the ACKs' frame order.
///
/// Per subflow and direction, of the segments with one end only the first sent (by
/// frame) counts. An ACK whose value is higher than every earlier ACK of its subflow
/// direction (by frame), or that is the first, times the segment ending exactly at that
/// value, if there is one and it was sent before the ACK (by frame). As tshark: its list
/// of unacknowledged segments, from which an ACK removes those it covers and times the
/// (first sent) one it ends on; an ACK ending inside a segment times none, not a segment
/// an earlier ACK covered.
pub fn ack_rtt_samples(segs: &Segments, acks: &Acks) -> (Vec<u32>, Vec<u32>) {
    // Per-subflow state in vectors indexed by `key`, as in `rtt.rs`.
    if let Some((seg_streams, ack_streams)) = dense_streams(segs.stream, acks.stream, segs.frame.len() + acks.frame.len()) {
        return ack_rtt_samples(&Segments { stream: &seg_streams, ..*segs }, &Acks { stream: &ack_streams, ..*acks });
    }
    let slots = slots(segs.stream, acks.stream);
    // Per subflow and direction: (end, frame, row), sorted, one per end.
    let mut ends: Vec<Vec<(i64, u32, u32)>> = vec![Vec::new(); slots];
    for i in 0..segs.frame.len() {
        ends[key(segs.stream[i], segs.down[i]) as usize].push((segs.end[i], segs.frame[i], i as u32));
    }
    for e in ends.iter_mut().filter(|e| !e.is_empty()) {
        e.sort_unstable();
        e.dedup_by_key(|x| x.0); // keeps the first of each end: the earliest frame (then row)
    }
    let mut order: Vec<u32> = (0..acks.frame.len() as u32).collect();
    if !acks.frame.is_sorted() {
        order.sort_by_key(|&i| acks.frame[i as usize]);
    }
    let mut cum: Vec<Option<i64>> = vec![None; slots];
    let (mut ack_rows, mut seg_rows) = (Vec::new(), Vec::new());
    for i in order.into_iter().map(|i| i as usize) {
        let k = key(acks.stream[i], acks.down[i]) as usize;
        let a = acks.ack[i];
        if cum[k].is_some_and(|c| a <= c) {
            continue; // the cumulative ACK did not move
        }
        cum[k] = Some(a);
        let e = &ends[k];
        if let Ok(j) = e.binary_search_by_key(&a, |x| x.0) {
            if e[j].1 < acks.frame[i] {
                ack_rows.push(i as u32);
                seg_rows.push(e[j].2);
            }
        }
    }
    (ack_rows, seg_rows)
}

/// A sample of a streamed trace: the ACK's frame and time, its subflow direction
/// (`key`), and the time of the segment it times.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AckSample {
    pub ack_frame: u32,
    pub ack_time: f64,
    pub k: usize,
    pub seg_time: f64,
}

/// One subflow direction of `AckRtt`.
#[derive(Default)]
struct Way {
    /// the cumulative ACK
    cum: Option<i64>,
    /// segments ending above it, by end: the first sent of each (frame, time)
    above: std::collections::BTreeMap<i64, (u32, f64)>,
}

/// `ack_rtt_samples` as a state fed with a trace's packets in frame order (a trace read
/// in chunks): `segment` for each data segment (and SYN and FIN), `ack` for each
/// packet carrying a cumulative ACK. An ACK's sample is its segment's, sent before it: it
/// is final at once (a segment sent later cannot give it one).
#[derive(Default)]
pub struct AckRtt {
    ways: Vec<Way>,
    ready: Vec<AckSample>,
}

impl AckRtt {
    fn way(&mut self, k: usize) -> &mut Way {
        if k >= self.ways.len() {
            self.ways.resize_with(k + 1, Way::default);
        }
        &mut self.ways[k]
    }

    pub fn segment(&mut self, k: usize, frame: u32, time: f64, end: i64) {
        let w = self.way(k);
        if w.cum.is_some_and(|c| end <= c) {
            return; // sent after ACKs already past it: a later ACK, higher, cannot end on it
        }
        w.above.entry(end).or_insert((frame, time));
    }

    pub fn ack(&mut self, k: usize, frame: u32, time: f64, ack: i64) {
        let w = self.way(k);
        if w.cum.is_some_and(|c| ack <= c) {
            return; // the cumulative ACK did not move
        }
        w.cum = Some(ack);
        let higher = w.above.split_off(&(ack + 1));
        let covered = std::mem::replace(&mut w.above, higher);
        if let Some(&(f, t)) = covered.get(&ack) {
            if f < frame {
                self.ready.push(AckSample { ack_frame: frame, ack_time: time, k, seg_time: t });
            }
        }
    }

    /// The samples final since the last call.
    pub fn ready(&mut self) -> Vec<AckSample> {
        std::mem::take(&mut self.ready)
    }

    /// After the last packet: the samples not handed out yet.
    pub fn close(&mut self) -> Vec<AckSample> {
        self.ready()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition, ACK by ACK, without sorting or maps.
    fn by_definition(segs: &Segments, acks: &Acks) -> (Vec<u32>, Vec<u32>) {
        let mut order: Vec<usize> = (0..acks.frame.len()).collect();
        order.sort_by_key(|&i| acks.frame[i]);
        let mut out = (vec![], vec![]);
        for (n, &i) in order.iter().enumerate() {
            let k = key(acks.stream[i], acks.down[i]);
            let before: Vec<i64> = order[..n].iter().filter(|&&a| key(acks.stream[a], acks.down[a]) == k).map(|&a| acks.ack[a]).collect();
            let cum = before.iter().copied().chain([acks.ack[i]]).max().unwrap();
            if before.iter().max().is_some_and(|&b| cum <= b) {
                continue;
            }
            // the first-sent segment ending exactly at cum
            let best = (0..segs.frame.len())
                .filter(|&r| key(segs.stream[r], segs.down[r]) == k && segs.end[r] == cum)
                .min_by_key(|&r| (segs.frame[r], r));
            if let Some(r) = best {
                if segs.frame[r] < acks.frame[i] {
                    out.0.push(i as u32);
                    out.1.push(r as u32);
                }
            }
        }
        out
    }

    /// The state fed in frame order, whatever the pieces, gives the whole-trace samples.
    fn streamed(segs: &Segments, acks: &Acks, times: &[f64], ack_times: &[f64]) -> Vec<(u32, u32)> {
        let mut ev: Vec<(u32, bool, usize)> = (0..segs.frame.len()).map(|i| (segs.frame[i], false, i))
            .chain((0..acks.frame.len()).map(|i| (acks.frame[i], true, i))).collect();
        // a frame's ACK after its segments: a packet's data and ACK are of two ways
        ev.sort_by_key(|e| (e.0, e.1, e.2));
        let mut st = AckRtt::default();
        let mut out = Vec::new();
        for (n, &(_, is_ack, i)) in ev.iter().enumerate() {
            if is_ack {
                st.ack(key(acks.stream[i], acks.down[i]) as usize, acks.frame[i], ack_times[i], acks.ack[i]);
            } else {
                st.segment(key(segs.stream[i], segs.down[i]) as usize, segs.frame[i], times[i], segs.end[i]);
            }
            if n % 3 == 0 {
                out.extend(st.ready());
            }
        }
        out.extend(st.close());
        // (ACK row, segment row) from the times, which name them here
        let mut got: Vec<(u32, u32)> = out.iter().map(|s| (s.ack_time as u32, s.seg_time as u32)).collect();
        got.sort_unstable();
        got
    }

    #[test]
    fn equals_the_definition_on_generated_traces() {
        let mut rng = crate::testgen::XorShift(0x9e37_79b9_7f4a_7c15);
        let mut next = |m: u64| rng.below(m);
        let mut samples = 0;
        for case in 0..400 {
            let (mut st, mut dn, mut fr, mut en) = (vec![], vec![], vec![], vec![]);
            let (mut ast, mut adn, mut afr, mut aa) = (vec![], vec![], vec![], vec![]);
            let mut frame = 1u32;
            for _ in 0..(1 + next(60)) {
                let (s, d) = (next(2) as u32 * 1000, next(2) == 0);
                frame += 1 + next(2) as u32;
                if next(3) == 0 {
                    ast.push(s);
                    adn.push(d);
                    afr.push(frame);
                    aa.push(next(18) as i64 - 2);
                } else {
                    st.push(s);
                    dn.push(d);
                    fr.push(if next(6) == 0 { frame + 5 } else { frame }); // some sent "after" later ACKs
                    en.push(next(16) as i64); // few ends: ACKs often end on one
                }
            }
            if case % 2 == 1 {
                afr.reverse();
                ast.reverse();
                adn.reverse();
                aa.reverse();
            }
            let segs = Segments { stream: &st, down: &dn, frame: &fr, end: &en };
            let acks = Acks { stream: &ast, down: &adn, frame: &afr, ack: &aa };
            let got = ack_rtt_samples(&segs, &acks);
            samples += got.0.len();
            assert_eq!(got, by_definition(&segs, &acks), "case {case}");
            // the streamed state: each sample named by its rows, carried in its times
            let seg_times: Vec<f64> = (0..fr.len()).map(|r| r as f64).collect();
            let ack_times: Vec<f64> = (0..afr.len()).map(|r| r as f64).collect();
            let mut want: Vec<(u32, u32)> = got.0.iter().copied().zip(got.1.iter().copied()).collect();
            want.sort_unstable();
            assert_eq!(streamed(&segs, &acks, &seg_times, &ack_times), want, "case {case}, streamed");
        }
        assert!(samples > 200, "the generated traces give few samples ({samples})");
    }
}

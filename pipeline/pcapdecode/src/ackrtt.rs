//! Per-ACK RTT samples (tshark's `tcp.analysis.ack_rtt`): one per ACK that moves its
//! subflow's cumulative ACK forward, timing the segment ending highest at or below it.
//! `pipeline/metrics.py` (`ack_rtt_samples`) defines the metric and keeps the polars
//! version (its window functions and as-of join took ~5 s of a 5M-packet trace, and
//! seconds on 200,000 short subflows); the tests hold this one equal to it.

use crate::rtt::{dense_streams, key, slots};

/// First transmissions (and SYNs) of the sending directions: where each ends (one past
/// its last byte). Any order.
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
/// frame) counts. An ACK whose running-maximum value (over the subflow's ACKs in frame
/// order) is higher than the ACK before it (or that is the subflow's first) times the
/// segment with the highest end at or below that value, if that segment was sent
/// before it (by frame).
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
    // per subflow, how many of its ends are at or below its cumulative ACK: that only
    // grows, so the search steps forward from the last answer instead of bisecting
    let mut covered = vec![0usize; slots];
    let (mut ack_rows, mut seg_rows) = (Vec::new(), Vec::new());
    for i in order.into_iter().map(|i| i as usize) {
        let k = key(acks.stream[i], acks.down[i]) as usize;
        let a = acks.ack[i];
        if cum[k].is_some_and(|c| a <= c) {
            continue; // the cumulative ACK did not move
        }
        cum[k] = Some(a);
        let e = &ends[k];
        let mut j = covered[k];
        while j < e.len() && e[j].0 <= a {
            if j - covered[k] == 8 {
                j += e[j..].partition_point(|x| x.0 <= a); // a long way: bisect the rest
                break;
            }
            j += 1;
        }
        covered[k] = j;
        if j > 0 && e[j - 1].1 < acks.frame[i] {
            ack_rows.push(i as u32);
            seg_rows.push(e[j - 1].2);
        }
    }
    (ack_rows, seg_rows)
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
            // the first-sent segment of each end, then the highest end at or below cum
            let best = (0..segs.frame.len())
                .filter(|&r| key(segs.stream[r], segs.down[r]) == k && segs.end[r] <= cum)
                .min_by_key(|&r| (std::cmp::Reverse(segs.end[r]), segs.frame[r], r));
            if let Some(r) = best {
                if segs.frame[r] < acks.frame[i] {
                    out.0.push(i as u32);
                    out.1.push(r as u32);
                }
            }
        }
        out
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
                    aa.push(next(40) as i64 - 2);
                } else {
                    st.push(s);
                    dn.push(d);
                    fr.push(if next(6) == 0 { frame + 5 } else { frame }); // some sent "after" later ACKs
                    en.push(next(40) as i64);
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
        }
        assert!(samples > 500, "the generated traces give few samples ({samples})");
    }
}

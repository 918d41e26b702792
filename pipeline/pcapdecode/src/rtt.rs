//! RTT samples (Chen et al., IMC 2013, §3.3, with Karn's rule as tcptrace applies it):
//! the metric's sorts and as-of joins as one pass per subflow and direction, which in
//! polars took ~0.07-0.13 s of the bench's 270k-packet server trace.
//! `pipeline/metrics.py` (`rtt_samples`) defines the metric and keeps the polars
//! version, which the tests hold this one equal to.

use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// The data packets of the sending directions (any order).
pub struct Sent<'a> {
    pub stream: &'a [u32],
    pub down: &'a [bool],
    pub frame: &'a [u32],
    /// relative subflow sequence number of the first byte, and one past the last
    pub seq: &'a [i64],
    pub end: &'a [i64],
    /// a retransmission (`metrics.retransmissions`)
    pub retx: &'a [bool],
}

/// The packets carrying a cumulative ACK, each with the direction of the data it
/// acknowledges (`down`: the ACK travels up). Any order: they are taken by frame.
pub struct Acks<'a> {
    pub stream: &'a [u32],
    pub down: &'a [bool],
    pub frame: &'a [u32],
    pub time: &'a [f64],
    pub ack: &'a [i64],
}

/// One subflow's data in one direction: an index into per-subflow vectors (a decoder
/// numbers streams from 0, so it stays below twice the packet count).
pub(crate) fn key(stream: u32, down: bool) -> u64 {
    (stream as u64) << 1 | down as u64
}

/// The two stream columns numbered densely from 0 (in order of appearance), when their
/// numbers run beyond `packets` (not a decoder's numbering): per-subflow vectors indexed
/// by `key` would otherwise be as long as the largest number. None: keep them.
pub(crate) fn dense_streams(a: &[u32], b: &[u32], packets: usize) -> Option<(Vec<u32>, Vec<u32>)> {
    let most = a.iter().chain(b).max().map_or(0, |&s| s as usize);
    if most <= packets {
        return None;
    }
    let mut ids = std::collections::HashMap::new();
    let mut dense = |s: &u32| {
        let next = ids.len() as u32;
        *ids.entry(*s).or_insert(next)
    };
    let a: Vec<u32> = a.iter().map(&mut dense).collect();
    let b: Vec<u32> = b.iter().map(&mut dense).collect();
    Some((a, b))
}

/// How many per-subflow slots the streams of `a` and `b` need.
pub(crate) fn slots(a: &[u32], b: &[u32]) -> usize {
    2 * a.iter().chain(b).max().map_or(0, |&s| s as usize) + 2
}

/// The samples, as (row of `sent`, time of the ACK that gives it), in frame order.
///
/// A data packet that is not a retransmission, and none of whose bytes was ever
/// retransmitted on its subflow, gets a sample from the first cumulative ACK value
/// covering all of it, when that value was reached after the packet (by frame); the
/// value's time is the earliest of the ACKs carrying it (timestamps may go backwards).
pub fn rtt_samples(sent: &Sent, acks: &Acks) -> (Vec<u32>, Vec<f64>) {
    let n = sent.frame.len();
    // Per-subflow state in vectors indexed by `key`: a hash lookup per packet was most of
    // this function's time.
    if let Some((sent_streams, ack_streams)) = dense_streams(sent.stream, acks.stream, n + acks.frame.len()) {
        return rtt_samples(&Sent { stream: &sent_streams, ..*sent }, &Acks { stream: &ack_streams, ..*acks });
    }
    // both in frame order, one event at a time
    let by_frame = |frames: &[u32]| {
        let mut order: Vec<u32> = (0..frames.len() as u32).collect();
        if !frames.is_sorted() {
            order.sort_by_key(|&i| frames[i as usize]);
        }
        order
    };
    let (data, ack) = (by_frame(sent.frame), by_frame(acks.frame));
    let mut rtt = Rtt::new(slots(sent.stream, acks.stream));
    let (mut d, mut a) = (0, 0);
    while d < data.len() || a < ack.len() {
        let take_ack = d == data.len() || (a < ack.len() && acks.frame[ack[a] as usize] < sent.frame[data[d] as usize]);
        if take_ack {
            let i = ack[a] as usize;
            rtt.ack(key(acks.stream[i], acks.down[i]), acks.frame[i], acks.time[i], acks.ack[i]);
            a += 1;
        } else {
            let i = data[d] as usize;
            rtt.sent(key(sent.stream[i], sent.down[i]), i as u32, sent.frame[i], sent.seq[i], sent.end[i], sent.retx[i], 0.0);
            d += 1;
        }
    }
    rtt.finish()
}

/// A data packet waiting for its sample: (end, frame, row, first byte, its time's bits;
/// frames are unique, so the time never decides the order).
type Waiting = (i64, u32, u32, i64, u64);

/// A sample: the data packet (frame, row), the time of the ACK that gives it, its
/// subflow direction (`key`), its bytes, and its own time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Sample {
    pub frame: u32,
    pub row: u32,
    pub ack_time: f64,
    pub k: usize,
    pub seq: i64,
    pub end: i64,
    pub sent_time: f64,
}

/// Chen's RTT as a state fed with a trace's packets in frame order (a trace read in
/// chunks): `sent` for each data packet of the sending directions, `ack` for each
/// cumulative ACK (keyed by the direction of the data it acknowledges). A sample waits
/// for the ACK value covering its packet, then for that value's last ACK (its time is
/// the earliest of them); Karn's rule can void it until the trace ends (a later
/// retransmission of its bytes): `finish` hands the samples out, or a streamed trace
/// takes them as they settle (`drain`), then `close`s the state and keeps those that
/// `karn_keeps`. Subflows are numbered densely (`key`; `dense_streams` renumbers others).
pub struct Rtt {
    /// per subflow direction: the cumulative ACK, and when its value was first reached
    cum: Vec<Option<i64>>,
    reached_time: Vec<f64>,
    reached_frame: Vec<u32>,
    /// packets not yet covered, the lowest end first
    pending: Vec<BinaryHeap<Reverse<Waiting>>>,
    /// packets covered by the current value, waiting for its time to be final
    covered: Vec<Vec<Waiting>>,
    samples: Vec<Sample>,
    /// per subflow direction: the retransmitted byte ranges (merged by `close`)
    retransmitted: Vec<Vec<(i64, i64)>>,
}

impl Rtt {
    pub fn new(slots: usize) -> Self {
        Rtt {
            cum: vec![None; slots],
            reached_time: vec![0.0; slots],
            reached_frame: vec![0; slots],
            pending: (0..slots).map(|_| BinaryHeap::new()).collect(),
            covered: vec![Vec::new(); slots],
            samples: Vec::new(),
            retransmitted: vec![Vec::new(); slots],
        }
    }

    /// How many subflow directions the state has room for (`key` below it).
    pub fn slots(&self) -> usize {
        self.cum.len()
    }

    pub fn sent(&mut self, k: u64, row: u32, frame: u32, seq: i64, end: i64, retx: bool, time: f64) {
        let k = k as usize;
        if retx {
            self.retransmitted[k].push((seq, end));
        } else if self.cum[k].is_none_or(|c| c < end) {
            // (already covered: by a value reached before it, so no sample)
            self.pending[k].push(Reverse((end, frame, row, seq, time.to_bits())));
        }
    }

    pub fn ack(&mut self, k: u64, frame: u32, time: f64, ack: i64) {
        let k = k as usize;
        let c = self.cum[k].map_or(ack, |c| c.max(ack));
        if self.cum[k] == Some(c) {
            // the same value again: its time is the earliest of its ACKs'
            self.reached_time[k] = self.reached_time[k].min(time);
            return;
        }
        self.settle(k);
        (self.cum[k], self.reached_time[k], self.reached_frame[k]) = (Some(c), time, frame);
        while let Some(&Reverse(w)) = self.pending[k].peek() {
            if w.0 > c {
                break;
            }
            self.pending[k].pop();
            if w.1 < frame {
                self.covered[k].push(w);
            }
        }
    }

    /// The packets covered by a subflow's current value get its time (now final).
    fn settle(&mut self, k: usize) {
        let t = self.reached_time[k];
        for (end, frame, row, seq, sent) in self.covered[k].drain(..) {
            self.samples.push(Sample { frame, row, ack_time: t, k, seq, end, sent_time: f64::from_bits(sent) });
        }
    }

    /// The samples settled since the last call, before Karn's rule (`karn_keeps`).
    pub fn drain(&mut self) -> Vec<Sample> {
        std::mem::take(&mut self.samples)
    }

    /// After the last packet: the samples still to settle (as `drain`), and the
    /// retransmitted ranges merged for `karn_keeps`.
    pub fn close(&mut self) -> Vec<Sample> {
        for k in 0..self.covered.len() {
            self.settle(k);
        }
        // Karn: retransmitted byte ranges merged per subflow direction (touching ones too)
        for ranges in self.retransmitted.iter_mut().filter(|r| !r.is_empty()) {
            ranges.sort_unstable();
            let mut merged: Vec<(i64, i64)> = Vec::with_capacity(ranges.len());
            for &(s, e) in ranges.iter() {
                match merged.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => merged.push((s, e)),
                }
            }
            *ranges = merged;
        }
        self.drain()
    }

    /// Karn's rule, once `close`d: does a sample of `k`'s bytes `seq..end` stand (none
    /// of its bytes was retransmitted)? The last merged range starting before its end is
    /// the only one that can hold some of them.
    pub fn karn_keeps(&self, k: usize, seq: i64, end: i64) -> bool {
        let Some(r) = self.retransmitted.get(k) else { return true };
        let j = r.partition_point(|x| x.0 < end);
        !(j > 0 && r[j - 1].1 > seq)
    }

    /// The samples, as `rtt_samples` gives them, once every packet has been fed.
    pub fn finish(mut self) -> (Vec<u32>, Vec<f64>) {
        let mut samples = self.close();
        samples.retain(|s| self.karn_keeps(s.k, s.seq, s.end));
        if !samples.is_sorted_by_key(|s| (s.frame, s.row)) {
            samples.sort_unstable_by_key(|s| (s.frame, s.row));
        }
        samples.into_iter().map(|s| (s.row, s.ack_time)).unzip()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// The definition, pair by pair: a packet is excluded when a retransmitted packet
    /// of its subflow and direction shares a byte with it; otherwise its ACK is the set
    /// of ACKs carrying the smallest running-maximum value that covers it.
    fn by_definition(sent: &Sent, acks: &Acks) -> (Vec<u32>, Vec<f64>) {
        let mut order: Vec<usize> = (0..acks.frame.len()).collect();
        order.sort_by_key(|&i| acks.frame[i]);
        let mut cum_of = vec![0i64; acks.frame.len()];
        let mut run: HashMap<u64, i64> = HashMap::new();
        for &i in &order {
            let c = run.entry(key(acks.stream[i], acks.down[i])).or_insert(i64::MIN);
            *c = (*c).max(acks.ack[i]);
            cum_of[i] = *c;
        }
        let mut out: Vec<(u32, u32, f64)> = Vec::new();
        for i in 0..sent.frame.len() {
            let k = key(sent.stream[i], sent.down[i]);
            if sent.retx[i] {
                continue;
            }
            let hit = (0..sent.frame.len()).any(|r| {
                sent.retx[r] && key(sent.stream[r], sent.down[r]) == k && sent.seq[r] < sent.end[i] && sent.end[r] > sent.seq[i]
            });
            if hit {
                continue;
            }
            let mine: Vec<usize> = (0..acks.frame.len()).filter(|&a| key(acks.stream[a], acks.down[a]) == k).collect();
            let Some(c) = mine.iter().map(|&a| cum_of[a]).filter(|&c| c >= sent.end[i]).min() else { continue };
            let at = mine.iter().copied().filter(|&a| cum_of[a] == c);
            let frame = at.clone().map(|a| acks.frame[a]).min().unwrap();
            let time = at.map(|a| acks.time[a]).fold(f64::INFINITY, f64::min);
            if frame > sent.frame[i] {
                out.push((sent.frame[i], i as u32, time));
            }
        }
        out.sort_unstable_by_key(|s| (s.0, s.1));
        out.into_iter().map(|(_, r, t)| (r, t)).unzip()
    }

    #[test]
    fn one_subflow_with_a_retransmission() {
        // data 1-100 (frame 1), 101-200 (2), 201-300 (3), 101-200 again (5);
        // ACKs: 101 (frame 4), 301 (frame 6) travelling up
        let sent = Sent {
            stream: &[0; 4],
            down: &[true; 4],
            frame: &[1, 2, 3, 5],
            seq: &[1, 101, 201, 101],
            end: &[101, 201, 301, 201],
            retx: &[false, false, false, true],
        };
        let acks = Acks { stream: &[0, 0], down: &[true, true], frame: &[4, 6], time: &[0.04, 0.06], ack: &[101, 301] };
        // frame 2 is Karn-excluded; frame 3 is acknowledged by the ACK of frame 6
        assert_eq!(rtt_samples(&sent, &acks), (vec![0, 2], vec![0.04, 0.06]));
        // the same with a stream number far above the packet count
        let far = [u32::MAX; 4];
        let sent = Sent { stream: &far, ..sent };
        let acks = Acks { stream: &far[..2], ..acks };
        assert_eq!(rtt_samples(&sent, &acks), (vec![0, 2], vec![0.04, 0.06]));
    }

    #[test]
    fn equals_the_definition_on_generated_traces() {
        let mut rng = crate::testgen::XorShift(0x2545_f491_4f6c_dd1d);
        let mut next = |m: u64| rng.below(m);
        let mut samples = 0;
        for case in 0..400 {
            let (mut st, mut dn, mut fr, mut sq, mut en, mut rx) = (vec![], vec![], vec![], vec![], vec![], vec![]);
            let (mut ast, mut adn, mut afr, mut at, mut aa) = (vec![], vec![], vec![], vec![], vec![]);
            let mut frame = 1u32;
            let mut next_seq: HashMap<u64, i64> = HashMap::new();
            for _ in 0..(1 + next(80)) {
                let (s, d) = (next(2) as u32, next(2) == 0);
                let k = key(s, d);
                let top = *next_seq.entry(k).or_insert(1);
                frame += 1 + next(2) as u32; // gaps: frames of other traffic
                if next(4) == 0 {
                    // an ACK, sometimes below an earlier one (reordered), times sometimes backwards
                    ast.push(s);
                    adn.push(d);
                    afr.push(frame);
                    at.push(frame as f64 * 0.01 - next(3) as f64 * 0.015);
                    aa.push(if next(3) == 0 { top } else { 1 + next(top as u64 + 5) as i64 });
                } else {
                    let retransmit = top > 1 && next(5) == 0;
                    let begin = if retransmit { 1 + next(top as u64 - 1) as i64 } else { top };
                    let len = 1 + next(20) as i64;
                    st.push(s);
                    dn.push(d);
                    fr.push(frame);
                    sq.push(begin);
                    en.push(begin + len);
                    rx.push(retransmit);
                    if !retransmit {
                        next_seq.insert(k, begin + len);
                    }
                }
            }
            if case % 2 == 1 {
                // the ACKs handed over out of frame order
                afr.reverse();
                ast.reverse();
                adn.reverse();
                at.reverse();
                aa.reverse();
            }
            if case % 3 == 2 {
                // the data handed over in reverse: each packet's ACK is searched backwards
                for v in [&mut sq, &mut en] {
                    v.reverse();
                }
                st.reverse();
                dn.reverse();
                fr.reverse();
                rx.reverse();
            }
            let sent = Sent { stream: &st, down: &dn, frame: &fr, seq: &sq, end: &en, retx: &rx };
            let acks = Acks { stream: &ast, down: &adn, frame: &afr, time: &at, ack: &aa };
            let got = rtt_samples(&sent, &acks);
            samples += got.0.len();
            assert_eq!(got, by_definition(&sent, &acks), "case {case}");
        }
        assert!(samples > 1000, "the generated traces give few samples ({samples})");
    }
}

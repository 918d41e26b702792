//! Sequence and acknowledgement numbers relative to each side's base, unwrapped: the
//! per-packet part of `flows.annotate_packets` as one pass in frame order with a few
//! numbers of state per subflow direction (in polars, lookups and a window over every
//! packet: ~2 s of a 10M-packet trace). `pipeline/flows.py` keeps the polars version as
//! the definition, and the tests hold this one equal to it.

use crate::rtt::{dense_streams, key, slots};

/// The packets, in frame order. `down`: sent by the subflow's server.
pub struct Packets<'a> {
    pub stream: &'a [u32],
    pub down: &'a [bool],
    pub seq: &'a [u32],
    pub ack: &'a [u32],
    /// the ACK flag: `rel_ack` is null without it
    pub ackf: &'a [bool],
}

/// Each stream's initial sequence numbers, where its SYN or SYN/ACK was captured.
pub struct Isns<'a> {
    pub stream: &'a [u32],
    pub server: &'a [Option<u32>],
    pub client: &'a [Option<u32>],
}

pub struct Numbered {
    /// per packet: its first byte's sequence number relative to its sender's base
    pub rel_seq: Vec<i64>,
    /// per packet: the ACK relative to the other side's base; meaningful where
    /// `has_ack` (the ACK flag is set and the other side sent something)
    pub rel_ack: Vec<i64>,
    pub has_ack: Vec<bool>,
    /// per subflow direction that sent a packet: (stream, down, base), where the base
    /// is the sender's ISN when captured, else its first sequence number - 1
    pub bases: Vec<(u32, bool, i64)>,
}

const TWO32: i64 = 1 << 32;
const HALF: i64 = 1 << 31;

/// Unwraps one subflow direction's numbers in order: a step of more than 2^31
/// backwards is a wrap forwards, and vice versa (as `flows._unwrap_expr`).
#[derive(Clone, Copy, Default)]
struct Unwrap {
    prev: Option<i64>,
    wraps: i64,
}

impl Unwrap {
    fn next(&mut self, v: i64) -> i64 {
        if let Some(p) = self.prev {
            let d = v - p;
            if d < -HALF {
                self.wraps += 1;
            } else if d > HALF {
                self.wraps -= 1;
            }
        }
        self.prev = Some(v);
        v + self.wraps * TWO32
    }
}

pub fn relative_numbers(p: &Packets, isns: &Isns) -> Numbered {
    let n = p.stream.len();
    if let Some((streams, isn_streams)) = dense_streams(p.stream, isns.stream, n + isns.stream.len()) {
        // the bases name the streams as given
        let mut original = vec![0u32; streams.iter().chain(&isn_streams).max().map_or(0, |&s| s as usize) + 1];
        for (d, s) in streams.iter().zip(p.stream).chain(isn_streams.iter().zip(isns.stream)) {
            original[*d as usize] = *s;
        }
        let mut out = relative_numbers(&Packets { stream: &streams, ..*p }, &Isns { stream: &isn_streams, ..*isns });
        for b in out.bases.iter_mut() {
            b.0 = original[b.0 as usize];
        }
        return out;
    }
    let slots = slots(p.stream, isns.stream);
    let mut isn: Vec<Option<u32>> = vec![None; slots];
    for i in 0..isns.stream.len() {
        isn[key(isns.stream[i], true) as usize] = isns.server[i];
        isn[key(isns.stream[i], false) as usize] = isns.client[i];
    }
    // each side's base: its ISN, else the first sequence number it sent - 1
    let mut base: Vec<Option<i64>> = vec![None; slots];
    let mut order = Vec::new(); // the bases in order of first appearance
    for i in 0..n {
        let k = key(p.stream[i], p.down[i]) as usize;
        if base[k].is_none() {
            base[k] = Some(isn[k].map_or(p.seq[i] as i64 - 1, |s| s as i64));
            order.push((p.stream[i], p.down[i], k));
        }
    }
    let mut numbering = Numbering::new(base.clone());
    let (rel_seq, rel_ack, has_ack) = numbering.feed(p);
    let bases = order.into_iter().map(|(s, d, k)| (s, d, base[k].unwrap())).collect();
    Numbered { rel_seq, rel_ack, has_ack, bases }
}

/// The numbering as a state fed with a trace's packets in frame order, one piece after
/// another (a trace read in chunks): the same numbers as one piece holding them all,
/// given each side's base (`relative_numbers` finds them in a first pass; a streamed
/// trace, in its first read).
pub struct Numbering {
    /// per subflow direction (`key`): its base, if it sent anything
    base: Vec<Option<i64>>,
    seq_unwrap: Vec<Unwrap>,
    ack_unwrap: Vec<Unwrap>,
}

impl Numbering {
    pub fn new(base: Vec<Option<i64>>) -> Self {
        let n = base.len();
        Numbering { base, seq_unwrap: vec![Unwrap::default(); n], ack_unwrap: vec![Unwrap::default(); n] }
    }

    /// The next piece's numbers: (rel_seq, rel_ack, has_ack), as in `Numbered`.
    pub fn feed(&mut self, p: &Packets) -> (Vec<i64>, Vec<i64>, Vec<bool>) {
        let n = p.stream.len();
        let mut rel_seq = Vec::with_capacity(n);
        let mut rel_ack = Vec::with_capacity(n);
        let mut has_ack = Vec::with_capacity(n);
        for i in 0..n {
            let k = key(p.stream[i], p.down[i]) as usize;
            let b = self.base[k].expect("every sender has a base");
            rel_seq.push(self.seq_unwrap[k].next((p.seq[i] as i64 - b).rem_euclid(TWO32)));
            // the ACK counts the other side's bytes: from its base
            match self.base.get(k ^ 1).copied().flatten() {
                Some(a) if p.ackf[i] => {
                    rel_ack.push(self.ack_unwrap[k].next((p.ack[i] as i64 - a).rem_euclid(TWO32)));
                    has_ack.push(true);
                }
                _ => {
                    rel_ack.push(0);
                    has_ack.push(false);
                }
            }
        }
        (rel_seq, rel_ack, has_ack)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The definition: the whole trace's numbers relative to each side's base, then each
    /// side's column unwrapped as a forward-filled series.
    fn by_definition(p: &Packets, isns: &Isns) -> (Vec<i64>, Vec<Option<i64>>) {
        let n = p.stream.len();
        let base_of = |s: u32, d: bool| -> Option<i64> {
            let first = (0..n).find(|&i| p.stream[i] == s && p.down[i] == d)?;
            let isn = isns.stream.iter().position(|&x| x == s).and_then(|j| if d { isns.server[j] } else { isns.client[j] });
            Some(isn.map_or(p.seq[first] as i64 - 1, |v| v as i64))
        };
        let raw_seq: Vec<i64> = (0..n).map(|i| (p.seq[i] as i64 - base_of(p.stream[i], p.down[i]).unwrap()).rem_euclid(TWO32)).collect();
        let raw_ack: Vec<Option<i64>> = (0..n)
            .map(|i| if p.ackf[i] { base_of(p.stream[i], !p.down[i]).map(|a| (p.ack[i] as i64 - a).rem_euclid(TWO32)) } else { None })
            .collect();
        let unwrap = |col: &[Option<i64>]| -> Vec<Option<i64>> {
            let mut out = vec![None; n];
            for i in 0..n {
                let Some(v) = col[i] else { continue };
                let same: Vec<usize> = (0..=i).filter(|&j| p.stream[j] == p.stream[i] && p.down[j] == p.down[i]).collect();
                let filled: Vec<Option<i64>> = same.iter().map(|&j| col[j]).collect();
                let mut last = None;
                let mut wraps = 0;
                for f in filled {
                    if let (Some(a), Some(b)) = (last, f) {
                        let d: i64 = b - a;
                        wraps += (d < -HALF) as i64 - (d > HALF) as i64;
                    }
                    last = f.or(last);
                }
                out[i] = Some(v + wraps * TWO32);
            }
            out
        };
        let seq = unwrap(&raw_seq.iter().map(|&v| Some(v)).collect::<Vec<_>>()).into_iter().map(Option::unwrap).collect();
        (seq, unwrap(&raw_ack))
    }

    #[test]
    fn pieces_fed_one_after_another_number_as_one() {
        let mut rng = crate::testgen::XorShift(0x51afd7ed558ccd1u64);
        let mut rnd = |m: u64| rng.below(m);
        for _ in 0..200 {
            let n = 1 + rnd(60) as usize;
            let stream: Vec<u32> = (0..n).map(|_| rnd(3) as u32).collect();
            let down: Vec<bool> = (0..n).map(|_| rnd(2) == 1).collect();
            let mut at = [0u32; 6];
            let seq: Vec<u32> = (0..n).map(|i| {
                let k = 2 * stream[i] as usize + down[i] as usize;
                at[k] = at[k].wrapping_add(rnd(1 << 31) as u32);
                at[k]
            }).collect();
            let ack: Vec<u32> = (0..n).map(|_| rnd(1 << 32) as u32).collect();
            let ackf: Vec<bool> = (0..n).map(|_| rnd(3) != 0).collect();
            let p = Packets { stream: &stream, down: &down, seq: &seq, ack: &ack, ackf: &ackf };
            let whole = relative_numbers(&p, &Isns { stream: &[], server: &[], client: &[] });
            let mut base = vec![None; 6];
            for &(s, d, b) in &whole.bases {
                base[key(s, d) as usize] = Some(b);
            }
            let mut numbering = Numbering::new(base);
            let (mut got_seq, mut got_ack, mut got_has) = (vec![], vec![], vec![]);
            let mut at = 0;
            while at < n {
                let to = (at + 1 + rnd(7) as usize).min(n);
                let piece = Packets { stream: &stream[at..to], down: &down[at..to], seq: &seq[at..to], ack: &ack[at..to], ackf: &ackf[at..to] };
                let (s, a, h) = numbering.feed(&piece);
                got_seq.extend(s);
                got_ack.extend(a);
                got_has.extend(h);
                at = to;
            }
            assert_eq!(got_seq, whole.rel_seq);
            assert_eq!(got_has, whole.has_ack);
            let masked = |v: &[i64], h: &[bool]| v.iter().zip(h).map(|(x, h)| h.then_some(*x)).collect::<Vec<_>>();
            assert_eq!(masked(&got_ack, &got_has), masked(&whole.rel_ack, &whole.has_ack));
        }
    }

    #[test]
    fn equals_the_definition_with_wraps_and_missing_isns() {
        let mut rng = crate::testgen::XorShift(0x9e3779b97f4a7c15u64);
        let mut rnd = |m: u64| rng.below(m);
        for _ in 0..300 {
            let n = 1 + rnd(40) as usize;
            let (mut stream, mut down, mut seq, mut ack, mut ackf) = (vec![], vec![], vec![], vec![], vec![]);
            let mut at = [[rnd(1 << 32) as u32; 2]; 3];
            for _ in 0..n {
                let s = rnd(3) as usize;
                let d = rnd(2) == 1;
                // steps of up to 2^30 forward, sometimes back: numbers wrap past 2^32
                let step = rnd(1 << 30) as u32;
                at[s][d as usize] = if rnd(5) == 0 { at[s][d as usize].wrapping_sub(step / 4) } else { at[s][d as usize].wrapping_add(step) };
                stream.push(if s == 2 { 70_000 } else { s as u32 });
                down.push(d);
                seq.push(at[s][d as usize]);
                ack.push(at[s][!d as usize].wrapping_add(rnd(100) as u32));
                ackf.push(rnd(4) != 0);
            }
            let isn_streams = [0u32, 1, 70_000];
            let server: Vec<Option<u32>> = (0..3).map(|_| if rnd(2) == 0 { Some(rnd(1 << 32) as u32) } else { None }).collect();
            let client: Vec<Option<u32>> = (0..3).map(|_| if rnd(2) == 0 { Some(rnd(1 << 32) as u32) } else { None }).collect();
            let p = Packets { stream: &stream, down: &down, seq: &seq, ack: &ack, ackf: &ackf };
            let isns = Isns { stream: &isn_streams, server: &server, client: &client };
            let got = relative_numbers(&p, &isns);
            let (want_seq, want_ack) = by_definition(&p, &isns);
            assert_eq!(got.rel_seq, want_seq);
            let got_ack: Vec<Option<i64>> = (0..n).map(|i| got.has_ack[i].then_some(got.rel_ack[i])).collect();
            assert_eq!(got_ack, want_ack);
            for &(s, d, b) in &got.bases {
                let first = (0..n).find(|&i| stream[i] == s && down[i] == d).unwrap();
                let j = isn_streams.iter().position(|&x| x == s).unwrap();
                let isn = if d { server[j] } else { client[j] };
                assert_eq!(b, isn.map_or(seq[first] as i64 - 1, |v| v as i64));
            }
        }
    }
}

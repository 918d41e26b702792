//! Each data packet's data sequence number from the DSS mappings of its subflow: the
//! sorts and as-of join of `dsnmap._map_dsn_one_way` as a sort of each subflow's
//! mappings and a binary search per packet. `pipeline/dsnmap.py` (`_dsn_of_mappings`)
//! keeps the polars version as the definition; the tests hold this one equal to it.

use crate::rtt::dense_streams;
use crate::seqrows::Nullable;

/// Data packets of one direction (any order): subflow and sequence number of the first
/// byte (relative to the sender's ISN, unwrapped).
pub struct Data<'a> {
    pub stream: &'a [u32],
    pub seq: &'a [i64],
}

/// DSS mappings of that direction (any order): the subflow sequence number they start
/// at, how many bytes they map, and the DSN of the first (relative; null: unknown).
pub struct Maps<'a> {
    pub stream: &'a [u32],
    pub ssn: &'a [i64],
    pub len: &'a [i64],
    pub dsn: Nullable<'a, i64>,
}

/// Per data packet: its DSN (`values`, meaningful where `valid`).
///
/// A packet takes the mapping of its subflow that starts last at or before its first
/// byte; of mappings starting at one SSN, the last in (length, DSN) order, so the
/// longest (a segment sent again re-sends its mapping, or a shorter one). The DSN is
/// the mapping's plus the packet's offset into it, when the mapping covers that byte.
pub fn map_dsn(data: &Data, maps: &Maps) -> (Vec<i64>, Vec<bool>) {
    if let Some((ds, ms)) = dense_streams(data.stream, maps.stream, data.seq.len() + maps.ssn.len()) {
        return map_dsn(&Data { stream: &ds, ..*data }, &Maps { stream: &ms, ..*maps });
    }
    Mappings::new(maps).feed(data)
}

/// A trace's mappings, each subflow's sorted once, and the data packets' DSNs found
/// piece by piece (a trace read in chunks; the mappings all known first, since a
/// mapping may come after the packets it maps). Streams are numbered densely
/// (`rtt::dense_streams` renumbers others): the state is indexed by them.
#[derive(Default)]
pub struct Mappings {
    /// per stream: (ssn, length, DSN), sorted
    by_stream: Vec<Vec<(i64, i64, Option<i64>)>>,
    /// per stream, the last answer: a subflow's packets mostly take its mappings one
    /// after another, so the next answer is checked there first (a binary search over
    /// millions of mappings was most of this search's time)
    cursor: Vec<usize>,
    /// mappings added since the last sort
    unsorted: bool,
}

impl Mappings {
    pub fn new(maps: &Maps) -> Self {
        let mut m = Mappings::default();
        m.add(maps);
        m
    }

    /// More of the trace's mappings (a trace read in pieces gives them piece by piece);
    /// all before the first `feed`.
    pub fn add(&mut self, maps: &Maps) {
        let streams = maps.stream.iter().max().map_or(0, |&s| s as usize + 1);
        if streams > self.by_stream.len() {
            self.by_stream.resize_with(streams, Vec::new);
            self.cursor.resize(streams, 0);
        }
        for i in 0..maps.ssn.len() {
            self.by_stream[maps.stream[i] as usize].push((maps.ssn[i], maps.len[i], maps.dsn.get(i)));
        }
        self.unsorted |= !maps.ssn.is_empty();
    }

    /// Sorts and compacts the mappings added (`feed` does it first otherwise).
    pub fn seal(&mut self) {
        if self.unsorted {
            self.sort();
        }
    }

    fn sort(&mut self) {
        for m in self.by_stream.iter_mut().filter(|m| m.len() > 1) {
            if !m.is_sorted() {
                m.sort_unstable(); // (ssn, length, DSN), an unknown DSN first, as polars sorts
            }
            compact(m);
        }
        self.unsorted = false;
    }

    /// The next piece's DSNs (`values`, meaningful where `valid`).
    pub fn feed(&mut self, data: &Data) -> (Vec<i64>, Vec<bool>) {
        self.seal();
        let n = data.seq.len();
        let (mut values, mut valid) = (vec![0i64; n], vec![false; n]);
        let none = Vec::new();
        for i in 0..n {
            let k = data.stream[i] as usize;
            let (m, s) = (self.by_stream.get(k).unwrap_or(&none), data.seq[i]);
            // j: how many mappings start at or before s
            let fits = |j: usize| (j == 0 || m[j - 1].0 <= s) && (j == m.len() || m[j].0 > s);
            let c = self.cursor.get(k).copied().unwrap_or(0);
            let j = if fits(c) {
                c
            } else if c < m.len() && fits(c + 1) {
                c + 1
            } else {
                m.partition_point(|x| x.0 <= s)
            };
            if let Some(cur) = self.cursor.get_mut(k) {
                *cur = j;
            }
            if j == 0 {
                continue;
            }
            let (ssn, len, dsn) = m[j - 1];
            if let (true, Some(d)) = (s < ssn + len, dsn) {
                values[i] = d + (s - ssn);
                valid[i] = true;
            }
        }
        (values, valid)
    }
}

/// A subflow's sorted mappings with the same answers and fewer entries (a trace's
/// mappings are ~30 bytes each, one per data segment: 160 MB at 10M packets). A search
/// takes the last mapping starting at or before a byte, so of mappings starting at one
/// SSN only the last is ever taken: the others go. A mapping that starts where the one
/// before ends, at the DSN where that one ends, extends it: the merged one gives each
/// byte the same DSN. Only once all are known, since a mapping added later at a merged
/// one's SSN would take the bytes of the mapping merged into it.
fn compact(m: &mut Vec<(i64, i64, Option<i64>)>) {
    let mut out: Vec<(i64, i64, Option<i64>)> = Vec::new();
    for (i, &e) in m.iter().enumerate() {
        if m.get(i + 1).is_some_and(|n| n.0 == e.0) {
            continue;
        }
        match out.last_mut() {
            Some((ssn, len, Some(dsn))) if *ssn + *len == e.0 && e.2 == Some(*dsn + *len) && e.1 > 0 => *len += e.1,
            _ => out.push(e),
        }
    }
    out.shrink_to_fit();
    *m = out;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_looked_up_one_after_another_find_the_dsns_of_one() {
        let mut rng = crate::testgen::XorShift(0x2545f4914f6cdd1du64);
        let mut rnd = |m: u64| rng.below(m);
        for _ in 0..300 {
            let (n, k) = (1 + rnd(50) as usize, rnd(30) as usize);
            let stream: Vec<u32> = (0..n).map(|_| rnd(3) as u32).collect();
            let seq: Vec<i64> = (0..n).map(|_| 10 * rnd(60) as i64 - 20).collect();
            let m_stream: Vec<u32> = (0..k).map(|_| rnd(2) as u32).collect();
            let ssn: Vec<i64> = (0..k).map(|_| 10 * rnd(50) as i64).collect();
            let len: Vec<i64> = (0..k).map(|_| 10 * (1 + rnd(12) as i64)).collect();
            let dsn: Vec<i64> = (0..k).map(|_| rnd(1_000_000) as i64).collect();
            let valid = arrow_buffer::NullBuffer::from((0..k).map(|_| rnd(5) != 0).collect::<Vec<bool>>());
            let maps = Maps { stream: &m_stream, ssn: &ssn, len: &len, dsn: Nullable { values: &dsn, valid: Some(&valid) } };
            let want = map_dsn(&Data { stream: &stream, seq: &seq }, &maps);
            let mut m = Mappings::new(&maps);
            let (mut v, mut ok) = (vec![], vec![]);
            let mut at = 0;
            while at < n {
                let to = (at + 1 + rnd(6) as usize).min(n);
                let (a, b) = m.feed(&Data { stream: &stream[at..to], seq: &seq[at..to] });
                v.extend(a);
                ok.extend(b);
                at = to;
            }
            assert_eq!(ok, want.1);
            assert_eq!((0..n).filter(|&i| ok[i]).map(|i| v[i]).collect::<Vec<_>>(), (0..n).filter(|&i| want.1[i]).map(|i| want.0[i]).collect::<Vec<_>>());
        }
    }

    /// The definition, one packet at a time: the mapping of its subflow that starts last
    /// at or before its first byte, the last of those in (length, DSN) order.
    fn by_definition(stream: u32, s: i64, maps: &[(u32, i64, i64, Option<i64>)]) -> Option<i64> {
        let m = maps.iter().filter(|m| m.0 == stream && m.1 <= s).max_by_key(|m| (m.1, m.2, m.3))?;
        (s < m.1 + m.2).then_some(m.3? + (s - m.1))
    }

    #[test]
    fn merged_mappings_give_each_byte_the_dsn_of_the_definition() {
        // chains of mappings that continue each other (merged), with others at their
        // starts and ends (longer, shorter, other DSNs, unknown DSNs, empty), added in
        // pieces in any order
        let mut rng = crate::testgen::XorShift(0x9e3779b97f4a7c15u64);
        let mut rnd = |m: u64| rng.below(m);
        for _ in 0..400 {
            let mut maps: Vec<(u32, i64, i64, Option<i64>)> = Vec::new();
            for stream in 0..2u32 {
                let (mut ssn, mut dsn) = (rnd(5) as i64 * 10, 1 + rnd(1000) as i64);
                for _ in 0..rnd(12) {
                    let len = 10 * rnd(4) as i64;
                    maps.push((stream, ssn, len, Some(dsn)));
                    match rnd(6) {
                        0 => maps.push((stream, ssn, len + 10 * rnd(5) as i64, Some(dsn + rnd(3) as i64 * 7))),
                        1 => maps.push((stream, ssn, len, None)),
                        2 => maps.push((stream, ssn + len, 10, Some(dsn + 500))),
                        _ => {}
                    }
                    ssn += len;
                    dsn += len + if rnd(8) == 0 { 3 } else { 0 };
                    if rnd(8) == 0 {
                        ssn += 10;
                    }
                }
            }
            for i in (1..maps.len()).rev() {
                maps.swap(i, rnd(i as u64 + 1) as usize);
            }
            let mut m = Mappings::default();
            let mut at = 0;
            while at < maps.len() {
                let to = (at + 1 + rnd(5) as usize).min(maps.len());
                let part = &maps[at..to];
                let (st, ssn): (Vec<u32>, Vec<i64>) = part.iter().map(|x| (x.0, x.1)).unzip();
                let len: Vec<i64> = part.iter().map(|x| x.2).collect();
                let dsn: Vec<i64> = part.iter().map(|x| x.3.unwrap_or(0)).collect();
                let valid = arrow_buffer::NullBuffer::from(part.iter().map(|x| x.3.is_some()).collect::<Vec<bool>>());
                m.add(&Maps { stream: &st, ssn: &ssn, len: &len, dsn: Nullable { values: &dsn, valid: Some(&valid) } });
                at = to;
            }
            let stream: Vec<u32> = (0..200).map(|i| (i % 2) as u32).collect();
            let seq: Vec<i64> = (0..200).map(|i| i as i64 * 3 - 10).collect();
            let (v, ok) = m.feed(&Data { stream: &stream, seq: &seq });
            for i in 0..stream.len() {
                assert_eq!(ok[i].then_some(v[i]), by_definition(stream[i], seq[i], &maps), "byte {} of stream {}", seq[i], stream[i]);
            }
        }
    }

    #[test]
    fn the_longest_mapping_of_a_start_covers_whatever_order_they_came_in() {
        let data = Data { stream: &[0, 0, 0, 1, 0], seq: &[1, 1001, 2001, 1, 500] };
        for (ssn, len, dsn) in [([1, 1, 2001], [1000, 2000, 10], [100, 100, 5000]), ([1, 1, 2001], [2000, 1000, 10], [100, 100, 5000])] {
            let maps = Maps { stream: &[0, 0, 0], ssn: &ssn, len: &len, dsn: Nullable { values: &dsn, valid: None } };
            let (v, ok) = map_dsn(&data, &maps);
            // stream 1 has no mapping; byte 2001 is past the 2000-byte mapping's end but
            // in the third one
            assert_eq!(ok, [true, true, true, false, true]);
            assert_eq!([v[0], v[1], v[2], v[4]], [100, 1100, 5000, 599]);
        }
    }
}

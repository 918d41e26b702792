//! Each data packet's data sequence number from the DSS mappings of its subflow: the
//! sorts and as-of join of `flows._map_dsn_one_way` as a sort of each subflow's
//! mappings and a binary search per packet. `pipeline/flows.py` (`_dsn_of_mappings`)
//! keeps the polars version as the definition; the tests hold this one equal to it.

use crate::rtt::{dense_streams, slots};
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
    // one slot per stream (`slots` counts two directions per stream: half are unused)
    let mut by_stream: Vec<Vec<(i64, i64, Option<i64>)>> = vec![Vec::new(); slots(data.stream, maps.stream) / 2];
    for i in 0..maps.ssn.len() {
        by_stream[maps.stream[i] as usize].push((maps.ssn[i], maps.len[i], maps.dsn.get(i)));
    }
    for m in by_stream.iter_mut().filter(|m| m.len() > 1) {
        if !m.is_sorted() {
            m.sort_unstable(); // (ssn, length, DSN), an unknown DSN first, as polars sorts
        }
    }
    let n = data.seq.len();
    let (mut values, mut valid) = (vec![0i64; n], vec![false; n]);
    // per subflow, the last answer: a subflow's packets mostly take its mappings one after
    // another, so the next answer is checked there first (a binary search over millions of
    // mappings was most of this function's time)
    let mut cursor = vec![0usize; by_stream.len()];
    for i in 0..n {
        let k = data.stream[i] as usize;
        let (m, s) = (&by_stream[k], data.seq[i]);
        // j: how many mappings start at or before s
        let fits = |j: usize| (j == 0 || m[j - 1].0 <= s) && (j == m.len() || m[j].0 > s);
        let c = cursor[k];
        let j = if fits(c) {
            c
        } else if c < m.len() && fits(c + 1) {
            c + 1
        } else {
            m.partition_point(|x| x.0 <= s)
        };
        cursor[k] = j;
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

#[cfg(test)]
mod tests {
    use super::*;

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

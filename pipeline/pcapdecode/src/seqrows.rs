//! The rows of a time-sequence graph (`seq_packets`) as one pass over a trace's packets
//! in frame order, with a running maximum per subflow and per connection direction and
//! the byte ranges each subflow carried (in polars, windows over every ACK and a sort
//! of every data packet: ~2 s of a 5M-packet trace). `pipeline/seqgraph.py` defines the
//! rows and keeps the polars version; the tests hold this one equal to it.

use std::collections::HashMap;

use arrow_buffer::NullBuffer;

use crate::rtt::{dense_streams, key, slots};

/// A column with nulls, as Arrow holds it: the values and a bitmap of the valid ones
/// (None: all valid), borrowed from the caller's arrays.
#[derive(Clone, Copy)]
pub struct Nullable<'a, T> {
    pub values: &'a [T],
    pub valid: Option<&'a NullBuffer>,
}

impl<T: Copy> Nullable<'_, T> {
    #[inline]
    pub fn get(&self, i: usize) -> Option<T> {
        match self.valid {
            Some(v) if v.is_null(i) => None,
            _ => Some(self.values[i]),
        }
    }
}

/// An annotated trace's packets, in frame order (`flows.TRACE_PACKETS`).
pub struct Packets<'a> {
    pub stream: &'a [u32],
    pub conn: Nullable<'a, i32>,
    /// sent by the subflow's server (the data's direction is "down")
    pub down: &'a [bool],
    pub payload: &'a [u32],
    pub dsn: Nullable<'a, i64>,
    pub ack: Nullable<'a, i64>,
    pub dack: Nullable<'a, i64>,
}

/// One output row: a data row (the packet's data, its own direction) or an ACK row
/// (the ACK of the other direction's data), in (frame, direction "down" first) order.
pub struct Rows {
    pub row: Vec<u32>,
    pub data: Vec<bool>,
    /// the new cumulative ACK and DATA_ACK (meaningful where the flag beside says it moved)
    pub ack_rel: Vec<i64>,
    pub ack_moved: Vec<bool>,
    pub data_ack_rel: Vec<i64>,
    pub data_ack_moved: Vec<bool>,
    /// data rows: some of its DSN bytes were carried earlier by another subflow of the
    /// connection, that direction (false on ACK rows)
    pub reinjection: Vec<bool>,
}

/// Disjoint, sorted half-open byte ranges (a subflow's data so far).
#[derive(Default)]
struct Intervals(Vec<(i64, i64)>);

impl Intervals {
    fn overlaps(&self, s: i64, e: i64) -> bool {
        let i = self.0.partition_point(|r| r.0 < e); // the ranges starting before e
        i > 0 && self.0[i - 1].1 > s
    }

    fn add(&mut self, s: i64, e: i64) {
        let r = &mut self.0;
        match r.last_mut() {
            None => r.push((s, e)),
            Some(last) if s > last.1 => r.push((s, e)), // the usual case: past everything so far
            _ => {
                let lo = r.partition_point(|x| x.1 < s); // the first range reaching s
                let hi = r.partition_point(|x| x.0 <= e); // past the last one starting by e
                if lo == hi {
                    r.insert(lo, (s, e));
                } else {
                    let merged = (r[lo].0.min(s), r[hi - 1].1.max(e));
                    r.splice(lo..hi, [merged]);
                }
            }
        }
    }
}

pub fn seq_rows(p: &Packets) -> Rows {
    let n = p.stream.len();
    if let Some((streams, _)) = dense_streams(p.stream, &[], n) {
        return seq_rows(&Packets { stream: &streams, ..*p });
    }
    let slots = slots(p.stream, &[]);
    // Connections as dense numbers (a lookup per packet, not a hash), NONE for none: as
    // they are when `flows.assign_connections` numbered them from 0.
    const NONE: u32 = u32::MAX;
    let conn: Vec<u32> = if (0..n).filter_map(|i| p.conn.get(i)).all(|c| c >= 0 && (c as usize) < n) {
        (0..n).map(|i| p.conn.get(i).map_or(NONE, |c| c as u32)).collect()
    } else {
        let mut ids: HashMap<i32, u32> = HashMap::new();
        (0..n).map(|i| p.conn.get(i).map_or(NONE, |c| { let next = ids.len() as u32; *ids.entry(c).or_insert(next) })).collect()
    };
    let conn_of = |i: usize| (conn[i] != NONE).then_some(conn[i]);
    let conn_slots = 2 * conn.iter().filter(|&&c| c != NONE).max().map_or(0, |&c| c as usize) + 2;
    let conn_key = |c: u32, up: bool| (c as usize) << 1 | up as usize;
    // Which subflows and connections carried data which way: only they get ACK rows.
    let mut carried = vec![false; slots];
    let mut conns = vec![false; conn_slots];
    for i in (0..n).filter(|&i| p.payload[i] > 0) {
        let up = !p.down[i];
        carried[key(p.stream[i], up) as usize] = true;
        if let Some(c) = conn_of(i) {
            conns[conn_key(c, up)] = true;
        }
    }
    let mut ack_max: Vec<Option<i64>> = vec![None; slots];
    let mut dack_max: Vec<Option<i64>> = vec![None; conn_slots];
    // per connection direction: the byte ranges each of its subflows carried
    let mut carried_by: Vec<Vec<(u32, Intervals)>> = (0..conn_slots).map(|_| Vec::new()).collect();
    // at most a row per data packet and one per ACK: room made once, not grown
    let most = (0..n).filter(|&i| p.payload[i] > 0).count() + (0..n).filter(|&i| p.ack.get(i).is_some() || p.dack.get(i).is_some()).count();
    let mut out = Rows {
        row: Vec::with_capacity(most),
        data: Vec::with_capacity(most),
        ack_rel: Vec::with_capacity(most),
        ack_moved: Vec::with_capacity(most),
        data_ack_rel: Vec::with_capacity(most),
        data_ack_moved: Vec::with_capacity(most),
        reinjection: Vec::with_capacity(most),
    };
    let push = |out: &mut Rows, i: usize, data: bool, a: Option<i64>, d: Option<i64>, r: bool| {
        out.row.push(i as u32);
        out.data.push(data);
        out.ack_rel.push(a.unwrap_or(0));
        out.ack_moved.push(a.is_some());
        out.data_ack_rel.push(d.unwrap_or(0));
        out.data_ack_moved.push(d.is_some());
        out.reinjection.push(r);
    };
    for i in 0..n {
        // the ACK row: of the data travelling the other way (an ACK going down acknowledges "up" data)
        let up = p.down[i];
        let mut ack_row = None;
        let (ack, dack) = (p.ack.get(i), p.dack.get(i));
        if ack.is_some() || dack.is_some() {
            let k = key(p.stream[i], up) as usize;
            let moved = carried[k]
                .then(|| ack.filter(|&a| ack_max[k].is_none_or(|m| a > m)))
                .flatten();
            if let Some(a) = ack {
                ack_max[k] = Some(ack_max[k].map_or(a, |m| m.max(a)));
            }
            let c = conn_of(i).map(|c| conn_key(c, up)).filter(|&c| conns[c]);
            let dmoved = c.and_then(|c| {
                let d = dack?;
                let m = dack_max[c];
                dack_max[c] = Some(m.map_or(d, |m| m.max(d)));
                m.is_none_or(|m| d > m).then_some(d)
            });
            if moved.is_some() || dmoved.is_some() {
                ack_row = Some((moved, dmoved));
            }
        }
        let data_row = (p.payload[i] > 0).then(|| {
            let (Some(c), Some(s)) = (conn_of(i), p.dsn.get(i)) else { return false };
            let e = s + p.payload[i] as i64;
            let group = &mut carried_by[conn_key(c, !p.down[i])];
            let again = group.iter().any(|(st, iv)| *st != p.stream[i] && iv.overlaps(s, e));
            match group.iter_mut().find(|(st, _)| *st == p.stream[i]) {
                Some((_, iv)) => iv.add(s, e),
                None => {
                    let mut iv = Intervals::default();
                    iv.add(s, e);
                    group.push((p.stream[i], iv));
                }
            }
            again
        });
        // "down" first: the data row when the packet travels down, else the ACK row
        if p.down[i] {
            if let Some(r) = data_row {
                push(&mut out, i, true, None, None, r);
            }
        }
        if let Some((a, d)) = ack_row {
            push(&mut out, i, false, a, d, false);
        }
        if !p.down[i] {
            if let Some(r) = data_row {
                push(&mut out, i, true, None, None, r);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn intervals_answer_as_a_set_of_bytes() {
        let mut state = 0x2545f4914f6cdd1du64;
        let mut rnd = |m: u64| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state % m
        };
        for _ in 0..2000 {
            let mut iv = Intervals::default();
            let mut bytes = vec![false; 80];
            for _ in 0..rnd(12) {
                let s = rnd(60) as i64;
                let e = s + 1 + rnd(6) as i64;
                let qs = rnd(60) as i64;
                let qe = qs + 1 + rnd(8) as i64;
                let want = (qs..qe).any(|b| bytes[b as usize]);
                assert_eq!(iv.overlaps(qs, qe), want);
                iv.add(s, e);
                (s..e).for_each(|b| bytes[b as usize] = true);
                assert!(iv.0.windows(2).all(|w| w[0].1 < w[1].0), "disjoint, sorted, not touching");
            }
        }
    }
}

//! The rows of a time-sequence graph (`seq_packets`) as one pass over a trace's packets
//! in frame order, with a running maximum per subflow and per connection direction and
//! the byte ranges each subflow carried (in polars, windows over every ACK and a sort
//! of every data packet: ~2 s of a 5M-packet trace). `pipeline/seqgraph.py` defines the
//! rows and keeps the polars version; the tests hold this one equal to it.

use std::collections::HashMap;

use arrow_buffer::NullBuffer;

use crate::rtt::{dense_streams, key};

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

/// Connections as dense numbers, NONE for none (`SeqRows` takes them so).
pub const NONE: u32 = u32::MAX;

/// The rows of a trace held whole (one piece).
pub fn seq_rows(p: &Piece) -> Rows {
    let n = p.stream.len();
    if let Some((streams, _)) = dense_streams(p.stream, &[], n) {
        return seq_rows(&Piece { stream: &streams, ..*p });
    }
    let (subflows, conns) = SeqRows::carried(&[*p]);
    SeqRows::new(&subflows, &conns).feed(p)
}

/// Connections as dense numbers, NONE for none (`Piece`): as they are when
/// `flows.assign_connections` numbered them from 0, else renumbered.
pub fn dense_conns(conn: Nullable<i32>) -> Vec<u32> {
    let n = conn.values.len();
    if (0..n).filter_map(|i| conn.get(i)).all(|c| c >= 0 && (c as usize) < n) {
        (0..n).map(|i| conn.get(i).map_or(NONE, |c| c as u32)).collect()
    } else {
        let mut ids: HashMap<i32, u32> = HashMap::new();
        (0..n).map(|i| conn.get(i).map_or(NONE, |c| { let next = ids.len() as u32; *ids.entry(c).or_insert(next) })).collect()
    }
}

/// An annotated trace's packets (`flows.TRACE_PACKETS`), or a piece of them, in frame
/// order, connections as dense numbers (`dense_conns`).
#[derive(Clone, Copy)]
pub struct Piece<'a> {
    pub stream: &'a [u32],
    pub conn: &'a [u32],
    pub down: &'a [bool],
    pub payload: &'a [u32],
    pub dsn: Nullable<'a, i64>,
    pub ack: Nullable<'a, i64>,
    pub dack: Nullable<'a, i64>,
}

/// The rows as a state fed with a trace's pieces in frame order (a trace read in
/// chunks): the same rows as one piece holding them all, `row` counting from the
/// trace's first packet.
pub struct SeqRows {
    /// per subflow direction (`key`) and per connection direction: carried data (only
    /// they get ACK rows), known before the first piece
    carried: Vec<bool>,
    conns: Vec<bool>,
    ack_max: Vec<Option<i64>>,
    dack_max: Vec<Option<i64>>,
    /// per connection direction: the byte ranges each of its subflows carried
    carried_by: Vec<Vec<(u32, Intervals)>>,
    rows_before: usize,
}

fn conn_key(c: u32, up: bool) -> usize {
    (c as usize) << 1 | up as usize
}

impl SeqRows {
    /// The state for a trace whose subflows (`stream`, `up`) and connections (`conn`,
    /// `up`) carried data those ways: known before its first piece (from a first read).
    pub fn new(subflows: &[(u32, bool)], conns: &[(u32, bool)]) -> Self {
        let slots = subflows.iter().map(|&(s, u)| key(s, u) as usize + 1).max().unwrap_or(0);
        let conn_slots = conns.iter().map(|&(c, u)| conn_key(c, u) + 1).max().unwrap_or(0);
        let mut carried = vec![false; slots];
        let mut conn_carried = vec![false; conn_slots];
        subflows.iter().for_each(|&(s, u)| carried[key(s, u) as usize] = true);
        conns.iter().for_each(|&(c, u)| conn_carried[conn_key(c, u)] = true);
        SeqRows {
            carried,
            conns: conn_carried,
            ack_max: vec![None; slots],
            dack_max: vec![None; conn_slots],
            carried_by: (0..conn_slots).map(|_| Vec::new()).collect(),
            rows_before: 0,
        }
    }

    /// Which subflows and connections carried data which way, in `pieces` (`new`'s
    /// arguments, from a trace held whole).
    pub fn carried(pieces: &[Piece]) -> (Vec<(u32, bool)>, Vec<(u32, bool)>) {
        let (mut subflows, mut conns) = (Vec::new(), Vec::new());
        for p in pieces {
            for i in (0..p.stream.len()).filter(|&i| p.payload[i] > 0) {
                subflows.push((p.stream[i], !p.down[i]));
                if p.conn[i] != NONE {
                    conns.push((p.conn[i], !p.down[i]));
                }
            }
        }
        for v in [&mut subflows, &mut conns] {
            v.sort_unstable();
            v.dedup();
        }
        (subflows, conns)
    }

    /// How many packets were fed before (`Rows.row` counts from the trace's first).
    pub fn rows_before(&self) -> usize {
        self.rows_before
    }

    pub fn feed(&mut self, p: &Piece) -> Rows {
        let n = p.stream.len();
        let conn_of = |i: usize| (p.conn[i] != NONE).then_some(p.conn[i]);
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
        let before = self.rows_before;
        let push = |out: &mut Rows, i: usize, data: bool, a: Option<i64>, d: Option<i64>, r: bool| {
            out.row.push((before + i) as u32);
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
                let moved = self.carried.get(k).copied().unwrap_or(false)
                    .then(|| ack.filter(|&a| self.ack_max[k].is_none_or(|m| a > m)))
                    .flatten();
                if let (Some(a), Some(m)) = (ack, self.ack_max.get_mut(k)) {
                    *m = Some(m.map_or(a, |m| m.max(a)));
                }
                let c = conn_of(i).map(|c| conn_key(c, up)).filter(|&c| self.conns.get(c).copied().unwrap_or(false));
                let dmoved = c.and_then(|c| {
                    let d = dack?;
                    let m = self.dack_max[c];
                    self.dack_max[c] = Some(m.map_or(d, |m| m.max(d)));
                    m.is_none_or(|m| d > m).then_some(d)
                });
                if moved.is_some() || dmoved.is_some() {
                    ack_row = Some((moved, dmoved));
                }
            }
            let data_row = (p.payload[i] > 0).then(|| self.reinjected(p, i, conn_of(i)));
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
        self.rows_before += n;
        out
    }

    /// Whether data packet `i` (on connection `conn`) carries bytes another subflow of its
    /// connection carried before (a reinjection); its bytes are recorded as its subflow's.
    fn reinjected(&mut self, p: &Piece, i: usize, conn: Option<u32>) -> bool {
        let (Some(c), Some(s)) = (conn, p.dsn.get(i)) else { return false };
        let e = s + p.payload[i] as i64;
        let g = conn_key(c, !p.down[i]);
        if g >= self.carried_by.len() {
            self.carried_by.resize_with(g + 1, Vec::new); // data the first read did not announce
        }
        let group = &mut self.carried_by[g];
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
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_fed_one_after_another_give_the_rows_of_one() {
        let mut rng = crate::testgen::XorShift(0x9e3779b97f4a7c15u64);
        let mut rnd = |m: u64| rng.below(m);
        let (mut reinjections, mut ack_rows) = (0, 0);
        for _ in 0..300 {
            let n = 1 + rnd(60) as usize;
            let stream: Vec<u32> = (0..n).map(|_| rnd(4) as u32).collect();
            let conn: Vec<u32> = stream.iter().map(|&s| if s == 3 { NONE } else { s / 2 }).collect();
            let down: Vec<bool> = (0..n).map(|_| rnd(2) == 1).collect();
            let payload: Vec<u32> = (0..n).map(|_| [0, 0, 100, 1000][rnd(4) as usize]).collect();
            let opt = |v: Vec<Option<i64>>| -> (Vec<i64>, NullBuffer) {
                (v.iter().map(|x| x.unwrap_or(0)).collect(), NullBuffer::from(v.iter().map(Option::is_some).collect::<Vec<_>>()))
            };
            let mut column = || opt((0..n).map(|_| (rnd(3) != 0).then(|| 1 + 100 * rnd(30) as i64)).collect());
            let (dsn, dsn_n) = column();
            let (ack, ack_n) = column();
            let (dack, dack_n) = column();
            let whole = Piece {
                stream: &stream,
                conn: &conn,
                down: &down,
                payload: &payload,
                dsn: Nullable { values: &dsn, valid: Some(&dsn_n) },
                ack: Nullable { values: &ack, valid: Some(&ack_n) },
                dack: Nullable { values: &dack, valid: Some(&dack_n) },
            };
            let (subflows, conns) = SeqRows::carried(&[whole]);
            let want = SeqRows::new(&subflows, &conns).feed(&whole);
            let mut rows = SeqRows::new(&subflows, &conns);
            let mut got: Vec<(u32, bool, i64, bool, i64, bool, bool)> = Vec::new();
            let mut at = 0;
            while at < n {
                let to = (at + 1 + rnd(9) as usize).min(n);
                let cut = |c: Nullable<'_, i64>, nulls: &NullBuffer| (c.values[at..to].to_vec(), nulls.slice(at, to - at));
                let ((d, dn), (a, an), (da, dan)) = (cut(whole.dsn, &dsn_n), cut(whole.ack, &ack_n), cut(whole.dack, &dack_n));
                let piece = Piece {
                    stream: &stream[at..to],
                    conn: &conn[at..to],
                    down: &down[at..to],
                    payload: &payload[at..to],
                    dsn: Nullable { values: &d, valid: Some(&dn) },
                    ack: Nullable { values: &a, valid: Some(&an) },
                    dack: Nullable { values: &da, valid: Some(&dan) },
                };
                let r = rows.feed(&piece);
                got.extend((0..r.row.len()).map(|j| (r.row[j], r.data[j], r.ack_rel[j], r.ack_moved[j], r.data_ack_rel[j], r.data_ack_moved[j], r.reinjection[j])));
                at = to;
            }
            let want: Vec<_> = (0..want.row.len())
                .map(|j| (want.row[j], want.data[j], want.ack_rel[j], want.ack_moved[j], want.data_ack_rel[j], want.data_ack_moved[j], want.reinjection[j]))
                .collect();
            assert_eq!(got, want);
            reinjections += want.iter().filter(|r| r.6).count();
            ack_rows += want.iter().filter(|r| !r.1).count();
        }
        assert!(reinjections > 50 && ack_rows > 500, "{reinjections} reinjections, {ack_rows} ACK rows");
    }

    #[test]
    fn intervals_answer_as_a_set_of_bytes() {
        let mut rng = crate::testgen::XorShift(0x2545f4914f6cdd1du64);
        let mut rnd = |m: u64| rng.below(m);
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

//! The pipeline's per-packet passes as Python sees them piece by piece: one state per
//! pass (`Numbering`, `Mappings`, `Retransmissions`, `SeqRows`, `Rtt`, `AckRtt`,
//! `InOrder`), fed the next piece of a trace and returning what it settled.

use super::*;

/// Numbering(bases): `relative_numbers` for a trace read piece by piece (see
/// `seqnum::Numbering`). `bases`: stream u32, down bool, base i64, one row per subflow
/// direction that sends anything (`relative_numbers`' second output).
#[pyclass(module = "pcapdecode")]
pub(super) struct Numbering(crate::seqnum::Numbering, Vec<bool>);

#[pymethods]
impl Numbering {
    #[new]
    fn new(bases: Bound<'_, PyAny>) -> PyResult<Self> {
        let b = import_batches(&bases)?;
        let (stream, down, base) = (values::<UInt32Type>(&b, "stream")?, flags(&b, "down")?, values::<Int64Type>(&b, "base")?);
        let slots = crate::rtt::slots(&stream, &[]);
        let mut per_key = vec![None; slots];
        for i in 0..stream.len() {
            per_key[crate::rtt::key(stream[i], down[i]) as usize] = Some(base[i]);
        }
        let known = per_key.iter().map(Option::is_some).collect();
        Ok(Numbering(crate::seqnum::Numbering::new(per_key), known))
    }

    /// feed(packets) -> Arrow C stream of (rel_seq i64, rel_ack i64 with nulls), one
    /// row per packet. `packets`, the next piece in frame order: stream u32, down bool,
    /// seq u32, ack u32, ackf bool, no nulls; each sender among the bases.
    fn feed(&mut self, py: Python<'_>, packets: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let p = import_batches(&packets)?;
        let (stream, down, seq) = (values::<UInt32Type>(&p, "stream")?, flags(&p, "down")?, values::<UInt32Type>(&p, "seq")?);
        let (ack, ackf) = (values::<UInt32Type>(&p, "ack")?, flags(&p, "ackf")?);
        if let Some(i) = (0..stream.len()).find(|&i| !self.1.get(crate::rtt::key(stream[i], down[i]) as usize).copied().unwrap_or(false)) {
            return Err(PyValueError::new_err(format!("Numbering.feed: stream {} (down: {}) has no base", stream[i], down[i])));
        }
        let state = &mut self.0;
        let (rel_seq, rel_ack, has_ack) = py.detach(|| {
            state.feed(&crate::seqnum::Packets { stream: &stream, down: &down, seq: &seq, ack: &ack, ackf: &ackf })
        });
        one_batch(vec![
            ("rel_seq", false, Arc::new(Int64Array::from(rel_seq))),
            ("rel_ack", true, Arc::new(Int64Array::new(rel_ack.into(), Some(NullBuffer::from(has_ack))))),
        ])
    }
}

/// Mappings(): `map_dsn` for a trace read piece by piece (see `dsnmap::Mappings`):
/// all of the trace's mappings `add`ed, then the pieces `feed`.
#[pyclass(module = "pcapdecode")]
pub(super) struct Mappings(crate::dsnmap::Mappings);

#[pymethods]
impl Mappings {
    #[new]
    fn new() -> Self {
        Mappings(crate::dsnmap::Mappings::default())
    }

    /// add(maps): more mappings, as `map_dsn` takes them.
    fn add(&mut self, maps: Bound<'_, PyAny>) -> PyResult<()> {
        let m = import_batches(&maps)?;
        let (stream, ssn, len) = (values::<UInt32Type>(&m, "stream")?, values::<Int64Type>(&m, "map_ssn")?, values::<Int64Type>(&m, "mp_map_len")?);
        let dsn = nullable::<Int64Type>(&m, "map_dsn")?;
        self.0.add(&crate::dsnmap::Maps { stream: &stream, ssn: &ssn, len: &len, dsn: crate::seqrows::Nullable { values: &dsn.0, valid: dsn.1.as_ref() } });
        Ok(())
    }

    /// seal(): once all are added, each subflow's mappings sorted and compacted now
    /// (else at the first `feed`), so that the memory of the ones dropped can be
    /// given back before the pieces are read.
    fn seal(&mut self) {
        self.0.seal()
    }

    /// feed(data) -> Arrow C stream of dsn_rel i64 (nulls: no mapping covers the
    /// byte), one row per row of `data` (the next piece's: stream u32, rel_seq i64, no
    /// nulls).
    fn feed(&mut self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let d = import_batches(&data)?;
        let (stream, seq) = (values::<UInt32Type>(&d, "stream")?, values::<Int64Type>(&d, "rel_seq")?);
        let state = &mut self.0;
        let (v, ok) = py.detach(|| state.feed(&crate::dsnmap::Data { stream: &stream, seq: &seq }));
        one_batch(vec![("dsn_rel", true, Arc::new(Int64Array::new(v.into(), Some(NullBuffer::from(ok)))))])
    }
}

/// Retransmissions(): `retransmitted` for a trace read piece by piece.
#[pyclass(module = "pcapdecode")]
pub(super) struct Retransmissions(crate::retx::Retransmissions);

#[pymethods]
impl Retransmissions {
    #[new]
    fn new() -> Self {
        Retransmissions(crate::retx::Retransmissions::default())
    }

    /// feed(data) -> Arrow C stream of retx bool: `retransmitted` of the next piece.
    fn feed(&mut self, py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let d = import_batches(&data)?;
        let (stream, down) = (values::<UInt32Type>(&d, "stream")?, flags(&d, "down")?);
        let (seq, end) = (values::<Int64Type>(&d, "rel_seq")?, values::<Int64Type>(&d, "end")?);
        let state = &mut self.0;
        let retx = py.detach(|| state.feed(&stream, &down, &seq, &end));
        one_batch(vec![("retx", false, Arc::new(BooleanArray::from(retx)))])
    }
}

/// SeqRows(subflows, conns): `seq_rows` for a trace read piece by piece (see
/// `seqrows::SeqRows`). `subflows`: stream u32, up bool; `conns`: conn u32, up bool:
/// which carried data which way (`up`: the data's direction is "up").
#[pyclass(module = "pcapdecode")]
pub(super) struct SeqRows(crate::seqrows::SeqRows);

#[pymethods]
impl SeqRows {
    #[new]
    fn new(subflows: Bound<'_, PyAny>, conns: Bound<'_, PyAny>) -> PyResult<Self> {
        let (s, c) = (import_batches(&subflows)?, import_batches(&conns)?);
        let (stream, up) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "up")?);
        let (conn, cup) = (values::<UInt32Type>(&c, "conn")?, flags(&c, "up")?);
        let subflows: Vec<(u32, bool)> = stream.iter().copied().zip(up).collect();
        let conns: Vec<(u32, bool)> = conn.iter().copied().zip(cup).collect();
        Ok(SeqRows(crate::seqrows::SeqRows::new(&subflows, &conns)))
    }

    /// feed(packets) -> `seq_rows`' output for the next piece, `row` counting from
    /// the piece's first packet. `packets` as `seq_rows` takes them; `conn_id` the
    /// trace's connection numbers (from 0; null: none).
    fn feed(&mut self, py: Python<'_>, packets: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let p = import_batches(&packets)?;
        let (stream, down, payload) = (values::<UInt32Type>(&p, "stream")?, flags(&p, "down")?, values::<UInt32Type>(&p, "payload_bytes")?);
        let conn = nullable::<Int32Type>(&p, "conn_id")?;
        let (dsn, ack, dack) = (nullable::<Int64Type>(&p, "dsn_rel")?, nullable::<Int64Type>(&p, "rel_ack")?, nullable::<Int64Type>(&p, "dack_rel")?);
        use crate::seqrows::Nullable;
        let conn_of = Nullable { values: &conn.0, valid: conn.1.as_ref() };
        if (0..conn.0.len()).any(|i| conn_of.get(i).is_some_and(|c| c < 0)) {
            return Err(PyValueError::new_err("SeqRows.feed: a negative connection number"));
        }
        let state = &mut self.0;
        let got = py.detach(|| {
            let conns: Vec<u32> = (0..conn.0.len()).map(|i| conn_of.get(i).map_or(crate::seqrows::NONE, |c| c as u32)).collect();
            let before = state.rows_before();
            let mut rows = state.feed(&crate::seqrows::Piece {
                stream: &stream,
                conn: &conns,
                down: &down,
                payload: &payload,
                dsn: Nullable { values: &dsn.0, valid: dsn.1.as_ref() },
                ack: Nullable { values: &ack.0, valid: ack.1.as_ref() },
                dack: Nullable { values: &dack.0, valid: dack.1.as_ref() },
            });
            rows.row.iter_mut().for_each(|r| *r -= before as u32);
            rows
        });
        one_batch(vec![
            ("row", false, Arc::new(UInt32Array::from(got.row))),
            ("data", false, Arc::new(BooleanArray::from(got.data))),
            ("ack_rel", true, Arc::new(Int64Array::new(got.ack_rel.into(), Some(NullBuffer::from(got.ack_moved))))),
            ("data_ack_rel", true, Arc::new(Int64Array::new(got.data_ack_rel.into(), Some(NullBuffer::from(got.data_ack_moved))))),
            ("reinjection", false, Arc::new(BooleanArray::from(got.reinjection))),
        ])
    }
}

/// The data packets and ACKs of a piece as one frame-ordered list of events (a
/// frame's data first): (is an ACK, row).
fn by_frame(data_frames: &[u32], ack_frames: &[u32]) -> Vec<(bool, usize)> {
    let (mut d, mut a) = (0, 0);
    let mut out = Vec::with_capacity(data_frames.len() + ack_frames.len());
    while d < data_frames.len() || a < ack_frames.len() {
        if d == data_frames.len() || (a < ack_frames.len() && ack_frames[a] < data_frames[d]) {
            out.push((true, a));
            a += 1;
        } else {
            out.push((false, d));
            d += 1;
        }
    }
    out
}

fn check_slots(streams: &[u32], slots: usize) -> PyResult<()> {
    match streams.iter().max() {
        Some(&s) if crate::rtt::key(s, true) as usize >= slots => {
            Err(PyValueError::new_err(format!("stream {s} is beyond the streams the state was made for")))
        }
        _ => Ok(()),
    }
}

fn frames_sorted(frames: &[u32], what: &str) -> PyResult<()> {
    if frames.is_sorted() { Ok(()) } else { Err(PyValueError::new_err(format!("{what}: not in frame order"))) }
}

/// Rtt(streams): Chen's RTT for a trace read piece by piece (see `rtt::Rtt`), for
/// stream numbers below `streams`.
#[pyclass(module = "pcapdecode")]
pub(super) struct Rtt(crate::rtt::Rtt);

fn rtt_batch(samples: Vec<crate::rtt::Sample>) -> PyResult<BatchStream> {
    let col_u32 = |f: &dyn Fn(&crate::rtt::Sample) -> u32| -> ArrayRef { Arc::new(UInt32Array::from_iter_values(samples.iter().map(f))) };
    let col_f64 = |f: &dyn Fn(&crate::rtt::Sample) -> f64| -> ArrayRef { Arc::new(Float64Array::from_iter_values(samples.iter().map(f))) };
    let col_i64 = |f: &dyn Fn(&crate::rtt::Sample) -> i64| -> ArrayRef { Arc::new(Int64Array::from_iter_values(samples.iter().map(f))) };
    one_batch(vec![
        ("frame", false, col_u32(&|s| s.frame)),
        ("stream", false, col_u32(&|s| (s.k >> 1) as u32)),
        ("down", false, Arc::new(BooleanArray::from(samples.iter().map(|s| s.k & 1 == 1).collect::<Vec<_>>()))),
        ("sent_s", false, col_f64(&|s| s.sent_time)),
        ("ack_s", false, col_f64(&|s| s.ack_time)),
        ("seq", false, col_i64(&|s| s.seq)),
        ("end", false, col_i64(&|s| s.end)),
    ])
}

#[pymethods]
impl Rtt {
    #[new]
    fn new(streams: usize) -> Self {
        Rtt(crate::rtt::Rtt::new(2 * streams + 2))
    }

    /// feed(sent, acks) -> Arrow C stream of the samples settled (frame u32, stream
    /// u32, down bool, sent_s f64, ack_s f64, seq i64, end i64), before Karn's rule
    /// (`karn`). `sent` and `acks` as `rtt_samples` takes them (`sent` with its
    /// packets' time_s f64), the next piece's, each in frame order.
    fn feed(&mut self, py: Python<'_>, sent: Bound<'_, PyAny>, acks: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let (s, a) = (import_batches(&sent)?, import_batches(&acks)?);
        let (s_stream, s_down, s_frame) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "down")?, values::<UInt32Type>(&s, "frame")?);
        let (seq, end, retx) = (values::<Int64Type>(&s, "seq")?, values::<Int64Type>(&s, "end")?, flags(&s, "retx")?);
        let s_time = values::<Float64Type>(&s, "time_s")?;
        let (a_stream, a_down, a_frame) = (values::<UInt32Type>(&a, "stream")?, flags(&a, "down")?, values::<UInt32Type>(&a, "frame")?);
        let (time, ack) = (values::<Float64Type>(&a, "time_s")?, values::<Int64Type>(&a, "ack")?);
        let slots = self.0.slots();
        check_slots(&s_stream, slots)?;
        check_slots(&a_stream, slots)?;
        frames_sorted(&s_frame, "Rtt.feed's sent")?;
        frames_sorted(&a_frame, "Rtt.feed's acks")?;
        let state = &mut self.0;
        let got = py.detach(|| {
            for (is_ack, i) in by_frame(&s_frame, &a_frame) {
                if is_ack {
                    state.ack(crate::rtt::key(a_stream[i], a_down[i]), a_frame[i], time[i], ack[i]);
                } else {
                    state.sent(crate::rtt::key(s_stream[i], s_down[i]), 0, s_frame[i], seq[i], end[i], retx[i], s_time[i]);
                }
            }
            state.drain()
        });
        rtt_batch(got)
    }

    /// close() -> the samples still to settle, as `feed` gives them; then `karn` applies.
    fn close(&mut self) -> PyResult<BatchStream> {
        rtt_batch(self.0.close())
    }

    /// karn(samples) -> Arrow C stream of keep bool: Karn's rule on samples (stream
    /// u32, down bool, seq i64, end i64), once closed.
    fn karn(&self, samples: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let s = import_batches(&samples)?;
        let (stream, down) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "down")?);
        let (seq, end) = (values::<Int64Type>(&s, "seq")?, values::<Int64Type>(&s, "end")?);
        let keep: Vec<bool> = (0..seq.len())
            .map(|i| self.0.karn_keeps(crate::rtt::key(stream[i], down[i]) as usize, seq[i], end[i]))
            .collect();
        one_batch(vec![("keep", false, Arc::new(BooleanArray::from(keep)))])
    }
}

/// AckRtt(): `ack_rtt_samples` for a trace read piece by piece (see `ackrtt::AckRtt`).
#[pyclass(module = "pcapdecode")]
pub(super) struct AckRtt(crate::ackrtt::AckRtt);

fn ack_rtt_batch(samples: Vec<crate::ackrtt::AckSample>) -> PyResult<BatchStream> {
    one_batch(vec![
        ("ack_frame", false, Arc::new(UInt32Array::from_iter_values(samples.iter().map(|s| s.ack_frame)))),
        ("stream", false, Arc::new(UInt32Array::from_iter_values(samples.iter().map(|s| (s.k >> 1) as u32)))),
        ("down", false, Arc::new(BooleanArray::from(samples.iter().map(|s| s.k & 1 == 1).collect::<Vec<_>>()))),
        ("ack_s", false, Arc::new(Float64Array::from_iter_values(samples.iter().map(|s| s.ack_time)))),
        ("time_s", false, Arc::new(Float64Array::from_iter_values(samples.iter().map(|s| s.seg_time)))),
    ])
}

#[pymethods]
impl AckRtt {
    #[new]
    fn new() -> Self {
        AckRtt(crate::ackrtt::AckRtt::default())
    }

    /// feed(segs, acks) -> Arrow C stream of the samples now final (ack_frame u32,
    /// stream u32, down bool, ack_s f64, time_s f64: the segment's). `segs` as
    /// `ack_rtt_samples` takes them, with time_s f64; `acks` with time_s f64; the next
    /// piece's, each in frame order.
    fn feed(&mut self, py: Python<'_>, segs: Bound<'_, PyAny>, acks: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let (s, a) = (import_batches(&segs)?, import_batches(&acks)?);
        let (s_stream, s_down, s_frame) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "down")?, values::<UInt32Type>(&s, "frame")?);
        let (end, s_time) = (values::<Int64Type>(&s, "end")?, values::<Float64Type>(&s, "time_s")?);
        let (a_stream, a_down, a_frame) = (values::<UInt32Type>(&a, "stream")?, flags(&a, "down")?, values::<UInt32Type>(&a, "frame")?);
        let (time, ack) = (values::<Float64Type>(&a, "time_s")?, values::<Int64Type>(&a, "ack")?);
        frames_sorted(&s_frame, "AckRtt.feed's segs")?;
        frames_sorted(&a_frame, "AckRtt.feed's acks")?;
        let state = &mut self.0;
        let got = py.detach(|| {
            for (is_ack, i) in by_frame(&s_frame, &a_frame) {
                if is_ack {
                    state.ack(crate::rtt::key(a_stream[i], a_down[i]) as usize, a_frame[i], time[i], ack[i]);
                } else {
                    state.segment(crate::rtt::key(s_stream[i], s_down[i]) as usize, s_frame[i], s_time[i], end[i]);
                }
            }
            state.ready()
        });
        ack_rtt_batch(got)
    }

    /// close() -> the samples left open, as `feed` gives them.
    fn close(&mut self) -> PyResult<BatchStream> {
        ack_rtt_batch(self.0.close())
    }
}

/// InOrder(lowest): the out-of-order loop (`ofo::InOrder`) for a trace read piece by
/// piece, one state per group (a connection's direction, numbered from 0), `lowest`
/// the lowest DSN of each group's data.
#[pyclass(module = "pcapdecode")]
pub(super) struct InOrder(Vec<crate::ofo::InOrder>);

#[pymethods]
impl InOrder {
    #[new]
    fn new(lowest: Vec<i64>) -> Self {
        InOrder(lowest.into_iter().map(crate::ofo::InOrder::new).collect())
    }

    /// feed(packets) -> Arrow C stream of (id u64, in_order_s f64): the packets that
    /// became in order with this piece, earlier pieces' included. `packets`, in
    /// arrival order: id u64 (increasing), group u32, time_s f64, dsn_rel i64,
    /// payload_bytes i64.
    fn feed(&mut self, py: Python<'_>, packets: Bound<'_, PyAny>) -> PyResult<BatchStream> {
        let p = import_batches(&packets)?;
        let (id, group) = (values::<arrow_array::types::UInt64Type>(&p, "id")?, values::<UInt32Type>(&p, "group")?);
        let (time, start, len) = (values::<Float64Type>(&p, "time_s")?, values::<Int64Type>(&p, "dsn_rel")?, values::<Int64Type>(&p, "payload_bytes")?);
        if group.iter().any(|&g| g as usize >= self.0.len()) {
            return Err(PyValueError::new_err("InOrder.feed: a group beyond those the state was made for"));
        }
        let states = &mut self.0;
        let got = py.detach(|| {
            let mut out = Vec::new();
            for i in 0..id.len() {
                let g = group[i] as usize;
                out.extend(states[g].feed_ids(&[id[i] as usize], &time[i..=i], &start[i..=i], &len[i..=i]));
            }
            out
        });
        one_batch(vec![
            ("id", false, Arc::new(arrow_array::UInt64Array::from_iter_values(got.iter().map(|x| x.0 as u64)))),
            ("in_order_s", false, Arc::new(Float64Array::from_iter_values(got.iter().map(|x| x.1)))),
        ])
    }
}

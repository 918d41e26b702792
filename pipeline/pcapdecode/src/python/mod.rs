//! The Python extension (feature "python"): `PacketReader` and `BatchStream`, the
//! passes as functions, their piece-by-piece states (`states`), and the module.

use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::mpsc::{sync_channel, Receiver};
use std::sync::{Arc, Mutex};
use std::thread;

use arrow_array::cast::AsArray;
use arrow_array::ffi_stream::{FFI_ArrowArrayStream, RecordBatchStreamReader};
use arrow_array::types::{ArrowPrimitiveType, Float64Type, Int32Type, Int64Type, UInt32Type};
use arrow_array::{Array, ArrayRef, BooleanArray, PrimitiveArray, Float64Array, Int64Array, RecordBatch, RecordBatchIterator, RecordBatchReader, UInt32Array};
use arrow_buffer::NullBuffer;
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};
use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use crate::capture::{End, OpenError};
use crate::decoder::{ColumnSpec, DecodeError, Decoder, Stats};

mod arrow_io;
mod prefetch;
mod states;

use arrow_io::{flags, import_batches, nullable, values};
use prefetch::{spawn_prefetch, Batches, Piece, Shared, PREFETCH_BATCHES};
use states::{AckRtt, InOrder, Mappings, Numbering, Retransmissions, Rtt, SeqRows};

create_exception!(pcapdecode, FormatError, PyException, "The file is not a pcap or pcapng capture.");

/// Record batches handed to Python once, as an Arrow C stream: the next piece of a
/// PacketReader (`PacketReader.piece`), or a result of a metric's loop
/// (`rtt_samples`).
#[pyclass(module = "pcapdecode")]
struct BatchStream {
    reader: Mutex<Option<Box<dyn RecordBatchReader + Send>>>,
}

impl BatchStream {
    fn new(reader: impl RecordBatchReader + Send + 'static) -> BatchStream {
        BatchStream { reader: Mutex::new(Some(Box::new(reader))) }
    }
}

#[pymethods]
impl BatchStream {
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let reader = self
            .reader
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this stream was already read"))?;
        let stream = FFI_ArrowArrayStream::new(reader);
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }
}

/// PacketReader(path, fields, chunk_rows=65536)
///
/// `fields`: (tshark field, column, type, occurrence) per column, from
/// `pipeline.schema.PACKET_FIELDS`. Iterate it once, through
/// `__arrow_c_stream__` (e.g. `polars.DataFrame(reader)`) or `drain()`.
#[pyclass(module = "pcapdecode")]
struct PacketReader {
    decoder: Arc<Mutex<Option<Decoder>>>,
    stats: Arc<Mutex<Stats>>,
    /// read piece by piece (`piece`): the decoder thread's batches; the
    /// whole-stream readers are then refused
    batches: Mutex<Option<(Arc<Mutex<Batches>>, SchemaRef)>>,
}

#[pymethods]
impl PacketReader {
    #[new]
    #[pyo3(signature = (path, fields, chunk_rows = 65536))]
    fn new(path: PathBuf, fields: Vec<(String, String, String, String)>, chunk_rows: usize) -> PyResult<Self> {
        let specs: Vec<ColumnSpec> = fields
            .into_iter()
            .map(|(tshark, column, dtype, occurrence)| ColumnSpec { tshark, column, dtype, occurrence })
            .collect();
        let decoder = Decoder::open(&path, &specs, chunk_rows).map_err(|e| match e {
            DecodeError::Open(OpenError::NotACapture) => {
                FormatError::new_err("not a pcap or pcapng capture (unknown file format)")
            }
            DecodeError::Open(OpenError::Io(msg)) => PyOSError::new_err(msg),
            DecodeError::Field(msg) => PyValueError::new_err(msg),
        })?;
        Ok(PacketReader {
            decoder: Arc::new(Mutex::new(Some(decoder))),
            stats: Arc::new(Mutex::new(Stats::default())),
            batches: Mutex::new(None),
        })
    }

    /// Arrow C stream of the packets table (consumes the reader).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema; // the schema is the packets table's; no casting offered
        let decoder = self.take()?;
        let shared = Shared { decoder, stats: self.stats.clone() };
        let stream = FFI_ArrowArrayStream::new(Box::new(shared));
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    /// Decodes the whole file, dropping each batch once built; returns the row
    /// count. Memory stays at one chunk: what the benchmark's bounded-memory mode uses.
    fn drain(&self, py: Python<'_>) -> PyResult<u64> {
        let decoder = self.take()?;
        let stats = self.stats.clone();
        py.detach(move || {
            let mut shared = Shared { decoder, stats };
            let mut rows = 0u64;
            for b in &mut shared {
                rows += b.map_err(|e| PyRuntimeError::new_err(e.to_string()))?.num_rows() as u64;
            }
            Ok(rows)
        })
    }

    /// The next `batches` batches (of `chunk_rows` rows each) as an Arrow C stream,
    /// so a caller can turn each piece into something smaller before decoding the
    /// next: memory then holds one piece of the decoder's columns at a time. A piece
    /// with no rows means the file is done. Not to be mixed with the whole-stream readers.
    fn piece(&self, batches: usize) -> PyResult<BatchStream> {
        self.start(PREFETCH_BATCHES)?;
        let started = self.batches.lock().unwrap();
        let (rx, schema) = started.as_ref().unwrap();
        let piece = Piece { batches: rx.clone(), schema: schema.clone(), left: batches.max(1) };
        Ok(BatchStream::new(piece))
    }

    /// Start decoding now, in the decoder thread, up to `batches` batches ahead of
    /// the reader (e.g. while the caller's interpreter is still importing); then read
    /// it with `piece`. Does nothing once started.
    fn prefetch(&self, batches: usize) -> PyResult<()> {
        self.start(batches)
    }

    /// What was decoded so far: frames, TCP packets, skipped frames by reason,
    /// streams, how the file ended ("ok", "truncated", "damaged" with `damage` saying
    /// why), and for a classic pcap its record walk (`format` "pcap": `records`,
    /// `size`, `damaged_at`, `tail_missing`, `snaplen`, as `capfile.Scan`).
    fn stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let s = self.stats.lock().unwrap().clone();
        let d = PyDict::new(py);
        d.set_item("frames", s.frames)?;
        d.set_item("tcp_packets", s.tcp_packets)?;
        d.set_item("not_tcp", s.not_tcp)?;
        d.set_item("fragments", s.fragments)?;
        d.set_item("malformed", s.malformed)?;
        d.set_item("cut_short", s.cut_short)?;
        d.set_item("unsupported_link_types", s.unsupported_link_types.into_iter().collect::<Vec<_>>())?;
        d.set_item("streams", s.streams)?;
        let (end, damage) = match s.end {
            None => ("not finished", None),
            Some(End::Clean) => ("ok", None),
            Some(End::Truncated) => ("truncated", None),
            Some(End::Corrupt(msg)) => ("damaged", Some(msg)),
        };
        d.set_item("end", end)?;
        d.set_item("damage", damage)?;
        // A classic pcap's record walk, in pipeline/capfile.py's terms (Scan).
        d.set_item("format", if s.pcap.is_some() { "pcap" } else { "pcapng" })?;
        let w = s.pcap.unwrap_or_default();
        d.set_item("records", w.records)?;
        d.set_item("size", w.size)?;
        d.set_item("damaged_at", w.damaged_at)?;
        d.set_item("tail_missing", w.tail_missing)?;
        d.set_item("snaplen", w.snaplen)?;
        Ok(d)
    }
}

impl PacketReader {
    fn start(&self, ahead: usize) -> PyResult<()> {
        let mut started = self.batches.lock().unwrap();
        if started.is_none() {
            // not `take`, which would wait for the lock held here
            let decoder = self.decoder.lock().unwrap().take().ok_or_else(|| {
                PyRuntimeError::new_err("this PacketReader was already read; open a new one")
            })?;
            let schema = decoder.schema();
            let rx = spawn_prefetch(decoder, self.stats.clone(), ahead);
            *started = Some((Arc::new(Mutex::new(rx)), schema));
        }
        Ok(())
    }

    fn take(&self) -> PyResult<Decoder> {
        if self.batches.lock().unwrap().is_some() {
            return Err(PyRuntimeError::new_err("this PacketReader is being read piece by piece"));
        }
        self.decoder
            .lock()
            .unwrap()
            .take()
            .ok_or_else(|| PyRuntimeError::new_err("this PacketReader was already read; open a new one"))
    }
}

/// in_order_times(times, starts, lengths) -> list[float | None]: when each packet
/// (arrival order) became in order at the receiver (see `ofo.rs`).
#[pyfunction]
fn in_order_times(py: Python<'_>, times: Vec<f64>, starts: Vec<i64>, lengths: Vec<i64>) -> PyResult<Vec<Option<f64>>> {
    if times.len() != starts.len() || times.len() != lengths.len() {
        return Err(PyValueError::new_err("in_order_times: times, starts and lengths differ in length"));
    }
    Ok(py.detach(|| crate::ofo::in_order_times(&times, &starts, &lengths)))
}

/// rtt_samples(sent, acks) -> Arrow C stream of (row u32, ack_s f64), in frame order
/// (see `rtt.rs`). `sent`: stream u32, down bool, frame u32, seq i64, end i64, retx
/// bool; `acks`: stream u32, down bool (of the data acknowledged), frame u32, time_s
/// f64, ack i64; no nulls. `row` indexes `sent`.
#[pyfunction]
fn rtt_samples(py: Python<'_>, sent: Bound<'_, PyAny>, acks: Bound<'_, PyAny>) -> PyResult<BatchStream> {
    let (s, a) = (import_batches(&sent)?, import_batches(&acks)?);
    let (s_stream, s_down, s_frame) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "down")?, values::<UInt32Type>(&s, "frame")?);
    let (seq, end, retx) = (values::<Int64Type>(&s, "seq")?, values::<Int64Type>(&s, "end")?, flags(&s, "retx")?);
    let (a_stream, a_down, a_frame) = (values::<UInt32Type>(&a, "stream")?, flags(&a, "down")?, values::<UInt32Type>(&a, "frame")?);
    let (time, ack) = (values::<Float64Type>(&a, "time_s")?, values::<Int64Type>(&a, "ack")?);
    let (rows, ack_s) = py.detach(|| {
        crate::rtt::rtt_samples(
            &crate::rtt::Sent { stream: &s_stream, down: &s_down, frame: &s_frame, seq: &seq, end: &end, retx: &retx },
            &crate::rtt::Acks { stream: &a_stream, down: &a_down, frame: &a_frame, time: &time, ack: &ack },
        )
    });
    let schema = Arc::new(Schema::new(vec![Field::new("row", DataType::UInt32, false), Field::new("ack_s", DataType::Float64, false)]));
    let columns: Vec<ArrayRef> = vec![Arc::new(UInt32Array::from(rows)), Arc::new(Float64Array::from(ack_s))];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// ack_rtt_samples(segs, acks) -> Arrow C stream of (ack_row u32, seg_row u32), in the
/// ACKs' frame order (see `ackrtt.rs`). `segs`: stream u32, down bool, frame u32, end
/// i64; `acks`: stream u32, down bool (of the data acknowledged), frame u32, ack i64;
/// no nulls. The rows index the two inputs.
#[pyfunction]
fn ack_rtt_samples(py: Python<'_>, segs: Bound<'_, PyAny>, acks: Bound<'_, PyAny>) -> PyResult<BatchStream> {
    let (s, a) = (import_batches(&segs)?, import_batches(&acks)?);
    let (s_stream, s_down, s_frame) = (values::<UInt32Type>(&s, "stream")?, flags(&s, "down")?, values::<UInt32Type>(&s, "frame")?);
    let end = values::<Int64Type>(&s, "end")?;
    let (a_stream, a_down, a_frame) = (values::<UInt32Type>(&a, "stream")?, flags(&a, "down")?, values::<UInt32Type>(&a, "frame")?);
    let ack = values::<Int64Type>(&a, "ack")?;
    let (ack_rows, seg_rows) = py.detach(|| {
        crate::ackrtt::ack_rtt_samples(
            &crate::ackrtt::Segments { stream: &s_stream, down: &s_down, frame: &s_frame, end: &end },
            &crate::ackrtt::Acks { stream: &a_stream, down: &a_down, frame: &a_frame, ack: &ack },
        )
    });
    let schema = Arc::new(Schema::new(vec![Field::new("ack_row", DataType::UInt32, false), Field::new("seg_row", DataType::UInt32, false)]));
    let columns: Vec<ArrayRef> = vec![Arc::new(UInt32Array::from(ack_rows)), Arc::new(UInt32Array::from(seg_rows))];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// relative_numbers(packets, isns) -> (Arrow C stream of (rel_seq i64, rel_ack i64
/// with nulls), one row per packet; Arrow C stream of (stream u32, down bool, base
/// i64), one row per subflow direction that sent a packet) (see `seqnum.rs`).
/// `packets`, in frame order: stream u32, down bool, seq u32, ack u32, ackf bool, no
/// nulls; `isns`: stream u32, isn_server u32, isn_client u32 (nulls: not captured).
#[pyfunction]
fn relative_numbers(py: Python<'_>, packets: Bound<'_, PyAny>, isns: Bound<'_, PyAny>) -> PyResult<(BatchStream, BatchStream)> {
    let (p, i) = (import_batches(&packets)?, import_batches(&isns)?);
    let (stream, down, seq) = (values::<UInt32Type>(&p, "stream")?, flags(&p, "down")?, values::<UInt32Type>(&p, "seq")?);
    let (ack, ackf) = (values::<UInt32Type>(&p, "ack")?, flags(&p, "ackf")?);
    let i_stream = values::<UInt32Type>(&i, "stream")?;
    let isn = |name: &str| -> PyResult<Vec<Option<u32>>> {
        let (v, n) = nullable::<UInt32Type>(&i, name)?;
        Ok(v.iter().enumerate().map(|(j, &x)| n.as_ref().is_none_or(|n| n.is_valid(j)).then_some(x)).collect())
    };
    let (server, client) = (isn("isn_server")?, isn("isn_client")?);
    let got = py.detach(|| {
        crate::seqnum::relative_numbers(
            &crate::seqnum::Packets { stream: &stream, down: &down, seq: &seq, ack: &ack, ackf: &ackf },
            &crate::seqnum::Isns { stream: &i_stream, server: &server, client: &client },
        )
    });
    drop((stream, down, seq, ack, ackf));
    drop(p);
    let err = |e: ArrowError| PyRuntimeError::new_err(e.to_string());
    let schema = Arc::new(Schema::new(vec![Field::new("rel_seq", DataType::Int64, false), Field::new("rel_ack", DataType::Int64, true)]));
    let rel_ack = Int64Array::new(got.rel_ack.into(), Some(NullBuffer::from(got.has_ack)));
    let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::from(got.rel_seq)), Arc::new(rel_ack)];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(err)?;
    let numbers = BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema));
    let schema = Arc::new(Schema::new(vec![
        Field::new("stream", DataType::UInt32, false),
        Field::new("down", DataType::Boolean, false),
        Field::new("base", DataType::Int64, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from_iter_values(got.bases.iter().map(|b| b.0))),
        Arc::new(BooleanArray::from(got.bases.iter().map(|b| b.1).collect::<Vec<_>>())),
        Arc::new(Int64Array::from_iter_values(got.bases.iter().map(|b| b.2))),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(err)?;
    Ok((numbers, BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema))))
}

/// seq_rows(packets) -> Arrow C stream of the rows of a time-sequence graph (see
/// `seqrows.rs`): row u32 (of `packets`), data bool (a data row, else an ACK row),
/// ack_rel i64, data_ack_rel i64 (nulls: did not move), reinjection bool. `packets`,
/// in frame order: stream u32, conn_id i32, down bool, payload_bytes u32, dsn_rel
/// i64, rel_ack i64, dack_rel i64 (nulls only in conn_id and the last three).
#[pyfunction]
fn seq_rows(py: Python<'_>, packets: Bound<'_, PyAny>) -> PyResult<BatchStream> {
    let p = import_batches(&packets)?;
    let (stream, down, payload) = (values::<UInt32Type>(&p, "stream")?, flags(&p, "down")?, values::<UInt32Type>(&p, "payload_bytes")?);
    let conn = nullable::<Int32Type>(&p, "conn_id")?;
    let (dsn, ack, dack) = (nullable::<Int64Type>(&p, "dsn_rel")?, nullable::<Int64Type>(&p, "rel_ack")?, nullable::<Int64Type>(&p, "dack_rel")?);
    use crate::seqrows::Nullable;
    let got = py.detach(|| {
        let conn = crate::seqrows::dense_conns(Nullable { values: &conn.0, valid: conn.1.as_ref() });
        crate::seqrows::seq_rows(&crate::seqrows::Piece {
            stream: &stream,
            conn: &conn,
            down: &down,
            payload: &payload,
            dsn: Nullable { values: &dsn.0, valid: dsn.1.as_ref() },
            ack: Nullable { values: &ack.0, valid: ack.1.as_ref() },
            dack: Nullable { values: &dack.0, valid: dack.1.as_ref() },
        })
    });
    drop((stream, down, payload, conn, dsn, ack, dack));
    drop(p);
    let schema = Arc::new(Schema::new(vec![
        Field::new("row", DataType::UInt32, false),
        Field::new("data", DataType::Boolean, false),
        Field::new("ack_rel", DataType::Int64, true),
        Field::new("data_ack_rel", DataType::Int64, true),
        Field::new("reinjection", DataType::Boolean, false),
    ]));
    let columns: Vec<ArrayRef> = vec![
        Arc::new(UInt32Array::from(got.row)),
        Arc::new(BooleanArray::from(got.data)),
        Arc::new(Int64Array::new(got.ack_rel.into(), Some(NullBuffer::from(got.ack_moved)))),
        Arc::new(Int64Array::new(got.data_ack_rel.into(), Some(NullBuffer::from(got.data_ack_moved)))),
        Arc::new(BooleanArray::from(got.reinjection)),
    ];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// map_dsn(data, maps) -> Arrow C stream of dsn_rel i64 (nulls: no mapping covers
/// the byte), one row per row of `data` (see `dsnmap.rs`). `data`: stream u32, rel_seq
/// i64; `maps`: stream u32, map_ssn i64, mp_map_len i64, map_dsn i64 (nulls: unknown);
/// no other nulls.
#[pyfunction]
fn map_dsn(py: Python<'_>, data: Bound<'_, PyAny>, maps: Bound<'_, PyAny>) -> PyResult<BatchStream> {
    let (d, m) = (import_batches(&data)?, import_batches(&maps)?);
    let (stream, seq) = (values::<UInt32Type>(&d, "stream")?, values::<Int64Type>(&d, "rel_seq")?);
    let (m_stream, ssn, len) = (values::<UInt32Type>(&m, "stream")?, values::<Int64Type>(&m, "map_ssn")?, values::<Int64Type>(&m, "mp_map_len")?);
    let dsn = nullable::<Int64Type>(&m, "map_dsn")?;
    let (v, ok) = py.detach(|| {
        crate::dsnmap::map_dsn(
            &crate::dsnmap::Data { stream: &stream, seq: &seq },
            &crate::dsnmap::Maps { stream: &m_stream, ssn: &ssn, len: &len, dsn: crate::seqrows::Nullable { values: &dsn.0, valid: dsn.1.as_ref() } },
        )
    });
    let schema = Arc::new(Schema::new(vec![Field::new("dsn_rel", DataType::Int64, true)]));
    let columns: Vec<ArrayRef> = vec![Arc::new(Int64Array::new(v.into(), Some(NullBuffer::from(ok))))];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// retransmitted(data) -> Arrow C stream of retx bool, one per row of `data` (see
/// `retx.rs`). `data`, the data packets in frame order: stream u32, down bool, rel_seq
/// i64, end i64, no nulls.
#[pyfunction]
fn retransmitted(py: Python<'_>, data: Bound<'_, PyAny>) -> PyResult<BatchStream> {
    let d = import_batches(&data)?;
    let (stream, down) = (values::<UInt32Type>(&d, "stream")?, flags(&d, "down")?);
    let (seq, end) = (values::<Int64Type>(&d, "rel_seq")?, values::<Int64Type>(&d, "end")?);
    let retx = py.detach(|| {
        // per-subflow state indexed by stream: numbers beyond the packet count renumbered
        let dense = crate::rtt::dense_streams(&stream, &[], seq.len());
        let stream = dense.as_ref().map_or(&stream[..], |(d, _)| &d[..]);
        crate::retx::Retransmissions::default().feed(stream, &down, &seq, &end)
    });
    let schema = Arc::new(Schema::new(vec![Field::new("retx", DataType::Boolean, false)]));
    let columns: Vec<ArrayRef> = vec![Arc::new(BooleanArray::from(retx))];
    let batch = RecordBatch::try_new(schema.clone(), columns).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

/// One record batch of `columns` (name, nullable, array) as an Arrow C stream.
fn one_batch(columns: Vec<(&str, bool, ArrayRef)>) -> PyResult<BatchStream> {
    let schema = Arc::new(Schema::new(
        columns.iter().map(|(name, nullable, a)| Field::new(*name, a.data_type().clone(), *nullable)).collect::<Vec<_>>(),
    ));
    let batch = RecordBatch::try_new(schema.clone(), columns.into_iter().map(|c| c.2).collect())
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(BatchStream::new(RecordBatchIterator::new([Ok(batch)], schema)))
}

#[pymodule]
fn pcapdecode(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(in_order_times, m)?)?;
    m.add_class::<PacketReader>()?;
    m.add_class::<BatchStream>()?;
    m.add_function(wrap_pyfunction!(rtt_samples, m)?)?;
    m.add_function(wrap_pyfunction!(ack_rtt_samples, m)?)?;
    m.add_function(wrap_pyfunction!(relative_numbers, m)?)?;
    m.add_function(wrap_pyfunction!(seq_rows, m)?)?;
    m.add_function(wrap_pyfunction!(map_dsn, m)?)?;
    m.add_function(wrap_pyfunction!(retransmitted, m)?)?;
    m.add_class::<Numbering>()?;
    m.add_class::<Mappings>()?;
    m.add_class::<Retransmissions>()?;
    m.add_class::<SeqRows>()?;
    m.add_class::<Rtt>()?;
    m.add_class::<AckRtt>()?;
    m.add_class::<InOrder>()?;
    m.add("FormatError", m.py().get_type::<FormatError>())?;
    Ok(())
}

//! mptcp-lab's native pcap decoder: pcap/pcapng -> Arrow record batches holding the
//! packets table (`pipeline/schema.py`), with the same values, row order and stream
//! numbers as `tshark -T fields`, which the tests keep as the oracle.
//!
//! Python sees one class, `PacketReader`, which exports its batches through the Arrow
//! C stream interface (`__arrow_c_stream__`), so polars takes them without a copy.
//! It also holds the pipeline's per-packet passes, each the native copy of a polars
//! definition the tests hold it equal to: for `pipeline/metrics.py`, `in_order_times`
//! (`ofo.rs`), `rtt_samples` (`rtt.rs`), `ack_rtt_samples` (`ackrtt.rs`) and
//! `retransmitted` (`retx.rs`); for `pipeline/flows.py`, `relative_numbers` (`seqnum.rs`);
//! for `pipeline/dsnmap.py`, `map_dsn` (`dsnmap.rs`); for `pipeline/seqgraph.py`, `seq_rows` (`seqrows.rs`). All
//! but the first take and return Arrow, reading a one-chunk frame's arrays in place.

pub mod ackrtt;
pub mod capture;
pub mod decoder;
pub mod dsnmap;
pub mod mptcp;
pub mod ofo;
pub mod packet;
pub mod retx;
pub mod rtt;
pub mod seqnum;
pub mod seqrows;
pub mod streams;
#[cfg(test)]
mod testgen;

#[cfg(feature = "python")]
mod python {
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

    create_exception!(pcapdecode, FormatError, PyException, "The file is not a pcap or pcapng capture.");

    /// Decoder whose progress (`stats`) stays readable while polars consumes it.
    struct Shared {
        decoder: Decoder,
        stats: Arc<Mutex<Stats>>,
    }

    impl Iterator for Shared {
        type Item = Result<RecordBatch, ArrowError>;
        fn next(&mut self) -> Option<Self::Item> {
            let out = self.decoder.next_batch();
            *self.stats.lock().unwrap() = self.decoder.stats();
            out
        }
    }

    impl RecordBatchReader for Shared {
        fn schema(&self) -> SchemaRef {
            self.decoder.schema()
        }
    }

    /// Batches decoded ahead by a thread of their own (`PacketReader.piece`), so that
    /// decoding the next piece overlaps the caller's work on this one (on two cores the
    /// decoder's time then mostly disappears from the pipeline's wall time). At most
    /// `ahead` batches wait in the channel (`PREFETCH_BATCHES` unless `prefetch` said
    /// otherwise): memory stays bounded.
    type Batches = Receiver<Result<RecordBatch, ArrowError>>;
    const PREFETCH_BATCHES: usize = 8;

    fn spawn_prefetch(mut decoder: Decoder, stats: Arc<Mutex<Stats>>, ahead: usize) -> Batches {
        let (tx, rx) = sync_channel(ahead.max(1));
        thread::Builder::new()
            .name("pcapdecode".into())
            .spawn(move || {
                while let Some(batch) = decoder.next_batch() {
                    *stats.lock().unwrap() = decoder.stats();
                    if tx.send(batch).is_err() {
                        return; // the reader was dropped
                    }
                }
                // before `tx` is dropped: a caller that saw the end reads the final stats
                *stats.lock().unwrap() = decoder.stats();
            })
            .expect("cannot start the decoder thread");
        rx
    }

    /// At most `left` more batches of a decoder that later pieces go on reading.
    struct Piece {
        batches: Arc<Mutex<Batches>>,
        schema: SchemaRef,
        left: usize,
    }

    impl Iterator for Piece {
        type Item = Result<RecordBatch, ArrowError>;
        fn next(&mut self) -> Option<Self::Item> {
            if self.left == 0 {
                return None;
            }
            self.left -= 1;
            self.batches.lock().unwrap().recv().ok() // Err: the decoder thread is done
        }
    }

    impl RecordBatchReader for Piece {
        fn schema(&self) -> SchemaRef {
            self.schema.clone()
        }
    }

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

    /// The record batches of a Python object that exports an Arrow C stream (a polars
    /// DataFrame).
    fn import_batches(obj: &Bound<'_, PyAny>) -> PyResult<Vec<RecordBatch>> {
        let capsule = obj.call_method0("__arrow_c_stream__")?;
        let capsule = capsule.cast::<PyCapsule>().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let ptr = capsule.pointer_checked(Some(c"arrow_array_stream"))?;
        // SAFETY: the capsule holds an Arrow C stream (its name says so); from_raw moves
        // it out, leaving a released stream for the capsule's destructor.
        let reader = unsafe { RecordBatchStreamReader::from_raw(ptr.as_ptr() as *mut FFI_ArrowArrayStream) }
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        reader.collect::<Result<Vec<_>, _>>().map_err(|e| PyValueError::new_err(e.to_string()))
    }

    /// One column of `batches`, of type `T`, without nulls: borrowed from the caller's
    /// array when it is one batch (polars exports a rechunked frame so), else copied into
    /// one vector.
    fn values<'a, T: ArrowPrimitiveType>(batches: &'a [RecordBatch], name: &str) -> PyResult<Cow<'a, [T::Native]>> {
        let (values, nulls) = nullable::<T>(batches, name)?;
        if nulls.is_some() {
            return Err(PyValueError::new_err(format!("column {name:?}: {} with nulls, not {} without", T::DATA_TYPE, T::DATA_TYPE)));
        }
        Ok(values)
    }

    /// One column of `batches` that may hold nulls: its values (borrowed as `values` does)
    /// and which are valid (None: all).
    fn nullable<'a, T: ArrowPrimitiveType>(batches: &'a [RecordBatch], name: &str) -> PyResult<(Cow<'a, [T::Native]>, Option<NullBuffer>)> {
        let mut arrays = Vec::with_capacity(batches.len());
        for b in batches {
            let col = b.column_by_name(name).ok_or_else(|| PyValueError::new_err(format!("no column {name:?}")))?;
            let a = col.as_primitive_opt::<T>().ok_or_else(|| {
                PyValueError::new_err(format!("column {name:?}: {}, not {}", col.data_type(), T::DATA_TYPE))
            })?;
            arrays.push(a);
        }
        let nulls = |a: &PrimitiveArray<T>| a.nulls().filter(|n| n.null_count() > 0).cloned();
        if let [a] = arrays[..] {
            return Ok((Cow::Borrowed(a.values().as_ref()), nulls(a)));
        }
        let values: Vec<T::Native> = arrays.iter().flat_map(|a| a.values().iter().copied()).collect();
        let valid = arrays.iter().any(|a| nulls(a).is_some()).then(|| {
            NullBuffer::from(arrays.iter().flat_map(|a| (0..a.len()).map(move |i| a.is_valid(i))).collect::<Vec<bool>>())
        });
        Ok((Cow::Owned(values), valid))
    }

    fn flags(batches: &[RecordBatch], name: &str) -> PyResult<Vec<bool>> {
        let mut out = Vec::new();
        for b in batches {
            let col = b.column_by_name(name).ok_or_else(|| PyValueError::new_err(format!("no column {name:?}")))?;
            let a = col.as_boolean_opt().filter(|a| a.null_count() == 0).ok_or_else(|| {
                PyValueError::new_err(format!("column {name:?}: {} with nulls, not Boolean without", col.data_type()))
            })?;
            out.extend(a.values().iter());
        }
        Ok(out)
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

    /// Numbering(bases): `relative_numbers` for a trace read piece by piece (see
    /// `seqnum::Numbering`). `bases`: stream u32, down bool, base i64, one row per subflow
    /// direction that sends anything (`relative_numbers`' second output).
    #[pyclass(module = "pcapdecode")]
    struct Numbering(crate::seqnum::Numbering, Vec<bool>);

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
    struct Mappings(crate::dsnmap::Mappings);

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
    struct Retransmissions(crate::retx::Retransmissions);

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
    struct SeqRows(crate::seqrows::SeqRows);

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
    struct Rtt(crate::rtt::Rtt);

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
    struct AckRtt(crate::ackrtt::AckRtt);

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
    struct InOrder(Vec<crate::ofo::InOrder>);

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
}

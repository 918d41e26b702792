//! mptcp-lab's native pcap decoder: pcap/pcapng -> Arrow record batches holding the
//! packets table (`pipeline/schema.py`), with the same values, row order and stream
//! numbers as `tshark -T fields`, which the tests keep as the oracle.
//!
//! Python sees one class, `PacketReader`, which exports its batches through the Arrow
//! C stream interface (`__arrow_c_stream__`), so polars takes them without a copy.
//! It also holds one metric's per-packet loop, `in_order_times` (`ofo.rs`), for
//! `pipeline/metrics.py`.

pub mod capture;
pub mod decoder;
pub mod mptcp;
pub mod ofo;
pub mod packet;
pub mod streams;

#[cfg(feature = "python")]
mod python {
    use std::path::PathBuf;
    use std::sync::mpsc::{sync_channel, Receiver};
    use std::sync::{Arc, Mutex};
    use std::thread;

    use arrow_array::ffi_stream::FFI_ArrowArrayStream;
    use arrow_array::{RecordBatch, RecordBatchReader};
    use arrow_schema::{ArrowError, SchemaRef};
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

    /// The next `batches` batches of a PacketReader as one Arrow C stream (from
    /// `PacketReader.piece`); consumed once.
    #[pyclass(module = "pcapdecode")]
    struct PieceStream {
        piece: Mutex<Option<Piece>>,
    }

    #[pymethods]
    impl PieceStream {
        #[pyo3(signature = (requested_schema = None))]
        fn __arrow_c_stream__<'py>(
            &self,
            py: Python<'py>,
            requested_schema: Option<Bound<'py, PyAny>>,
        ) -> PyResult<Bound<'py, PyCapsule>> {
            let _ = requested_schema;
            let piece = self
                .piece
                .lock()
                .unwrap()
                .take()
                .ok_or_else(|| PyRuntimeError::new_err("this piece was already read"))?;
            let stream = FFI_ArrowArrayStream::new(Box::new(piece));
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
        fn piece(&self, batches: usize) -> PyResult<PieceStream> {
            self.start(PREFETCH_BATCHES)?;
            let started = self.batches.lock().unwrap();
            let (rx, schema) = started.as_ref().unwrap();
            let piece = Piece { batches: rx.clone(), schema: schema.clone(), left: batches.max(1) };
            Ok(PieceStream { piece: Mutex::new(Some(piece)) })
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

    #[pymodule]
    fn pcapdecode(m: &Bound<'_, PyModule>) -> PyResult<()> {
        m.add_function(wrap_pyfunction!(in_order_times, m)?)?;
        m.add_class::<PacketReader>()?;
        m.add_class::<PieceStream>()?;
        m.add("FormatError", m.py().get_type::<FormatError>())?;
        Ok(())
    }
}

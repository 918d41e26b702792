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
//! The Python side (feature "python") is `python/`: the reader and the pass functions in
//! `python/mod.rs`, their piece-by-piece states in `python/states.rs`.

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
mod python;

//! pcap -> Arrow record batches of the packets table, in chunks of bounded size.
//!
//! The columns are not declared here: the caller passes the packets table's field
//! list (`pipeline/schema.py`: tshark field name, column, type, occurrence rule), and
//! each tshark field name maps to one value the decoder knows how to produce. Only
//! the conversation table (one entry per TCP connection) outlives a chunk.

use std::cell::OnceCell;
use std::collections::BTreeMap;
use std::net::Ipv6Addr;
use std::path::Path;
use std::sync::Arc;

use arrow_array::types::{ArrowPrimitiveType, Float64Type, UInt16Type, UInt32Type, UInt64Type, UInt8Type};
use arrow_array::{new_null_array, ArrayRef, PrimitiveArray, RecordBatch, StringViewArray};
use arrow_buffer::{BooleanBuffer, Buffer, NullBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use crate::capture::{epoch_f64, End, OpenError, PcapWalk, Reader, Record};
use crate::packet::{decode, Segment, Skip};
use crate::streams::{Streams, TcpMeta};

mod columns;

use columns::{column, data_type};
pub use columns::ipv6_text;

/// The values the decoder produces, by the tshark field that names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    FrameNumber,
    TimeEpoch,
    FrameLen,
    CapLen,
    IpSrc,
    IpDst,
    Ip6Src,
    Ip6Dst,
    IpId,
    Stream,
    SrcPort,
    DstPort,
    Flags,
    Seq,
    Ack,
    Len,
    Checksum,
    MpSubtype,
    MpVersion,
    MpSendkey,
    MpRecvkey,
    MpRecvtok,
    MpMapPresent,
    MpDsn64,
    MpDsnRaw,
    MpSsn,
    MpMapLen,
    MpDataFin,
    MpBackup,
    MpDack64,
    MpDackRaw,
}

const SOURCES: &[(&str, Source)] = &[
    ("frame.number", Source::FrameNumber),
    ("frame.time_epoch", Source::TimeEpoch),
    ("frame.len", Source::FrameLen),
    ("frame.cap_len", Source::CapLen),
    ("ip.src", Source::IpSrc),
    ("ip.dst", Source::IpDst),
    ("ipv6.src", Source::Ip6Src),
    ("ipv6.dst", Source::Ip6Dst),
    ("ip.id", Source::IpId),
    ("tcp.stream", Source::Stream),
    ("tcp.srcport", Source::SrcPort),
    ("tcp.dstport", Source::DstPort),
    ("tcp.flags", Source::Flags),
    ("tcp.seq", Source::Seq),
    ("tcp.ack", Source::Ack),
    ("tcp.len", Source::Len),
    ("tcp.checksum", Source::Checksum),
    ("tcp.options.mptcp.subtype", Source::MpSubtype),
    ("tcp.options.mptcp.version", Source::MpVersion),
    ("tcp.options.mptcp.sendkey", Source::MpSendkey),
    ("tcp.options.mptcp.recvkey", Source::MpRecvkey),
    ("tcp.options.mptcp.recvtok", Source::MpRecvtok),
    ("tcp.options.mptcp.dseqnpresent.flag", Source::MpMapPresent),
    ("tcp.options.mptcp.dseqn8.flag", Source::MpDsn64),
    ("tcp.options.mptcp.rawdataseqno", Source::MpDsnRaw),
    ("tcp.options.mptcp.subflowseqno", Source::MpSsn),
    ("tcp.options.mptcp.datalvllen", Source::MpMapLen),
    ("tcp.options.mptcp.datafin.flag", Source::MpDataFin),
    ("tcp.options.mptcp.backup.flag", Source::MpBackup),
    ("tcp.options.mptcp.dataack8.flag", Source::MpDack64),
    ("tcp.options.mptcp.rawdataack", Source::MpDackRaw),
];

/// One column the caller asks for.
#[derive(Clone, Debug)]
pub struct ColumnSpec {
    pub tshark: String,
    pub column: String,
    /// u8, u16, u32, u64, f64 or str
    pub dtype: String,
    /// "first" (the first occurrence in the frame), "last" (IP fields: the innermost header) or "all" (comma-joined)
    pub occurrence: String,
}

#[derive(Clone, Debug)]
struct Column {
    source: Source,
    all: bool,
}

#[derive(Clone, Debug, Default)]
pub struct Stats {
    pub frames: u64,
    pub tcp_packets: u64,
    pub not_tcp: u64,
    pub fragments: u64,
    pub malformed: u64,
    /// frames whose headers the snap length cut before the TCP ports (as tshark, no row, no note:
    /// the packets that do have rows tell of the snap length)
    pub cut_short: u64,
    /// frames of link types the decoder does not read, by link type
    pub unsupported_link_types: BTreeMap<i32, u64>,
    pub streams: u64,
    pub end: Option<End>,
    /// a classic pcap's record walk (None for pcapng)
    pub pcap: Option<PcapWalk>,
}

/// Declares the chunk: one vector per decoded value, so that building a column reads
/// one contiguous vector (a strided pass over ~200-byte rows per column cost a fifth
/// of the decoder's time). The dense vectors hold a value for every row and are
/// written by row (a `push` per value, with its capacity check and length update, was
/// ~10 % of decoding); only their first `rows` count. They grow together, by doubling
/// up to the chunk's size, so a small file or a large `chunk_rows` costs no more than
/// the rows decoded. The sparse ones hold (row, value) pairs for the rows that have them.
macro_rules! chunk {
    (dense { $($name:ident: $t:ty),* $(,)? } sparse { $($sname:ident: $st:ty),* $(,)? }) => {
        /// The decoded TCP segments of one chunk, a vector per value, kept until the
        /// chunk is turned into columns.
        struct Chunk {
            rows: usize,
            $($name: Vec<$t>,)*
            $($sname: Vec<$st>,)*
        }
        impl Chunk {
            fn new() -> Chunk {
                Chunk { rows: 0, $($name: Vec::new(),)* $($sname: Vec::new(),)* }
            }
            /// Room for row `self.rows` in every dense vector (`limit`: the chunk's size).
            fn grow(&mut self, limit: usize) {
                let n = (self.rows * 2).max(1024).min(limit).max(self.rows + 1);
                $(self.$name.resize(n, <$t>::default());)*
            }
            fn clear(&mut self) {
                self.rows = 0;
                $(self.$sname.clear();)*
            }
        }
    };
}

/// What only some packets carry (the MPTCP handshake's fields, IPv6 addresses): kept
/// per packet that has them, as (row, values), and spread into columns at the flush.
/// Six fewer values to store per packet than a vector each (~8 % of the decoder's time
/// on an IPv4 capture).
#[derive(Clone, Copy, Default)]
struct Handshake {
    version: Option<u8>,
    sendkey: Option<u64>,
    recvkey: Option<u64>,
    recvtok: Option<u32>,
    backup: Option<u8>,
}

impl Handshake {
    /// The value of one of its fields, for the columns asked in another type.
    fn get(&self, source: Source) -> Option<u64> {
        match source {
            Source::MpVersion => self.version.map(u64::from),
            Source::MpSendkey => self.sendkey,
            Source::MpRecvkey => self.recvkey,
            Source::MpRecvtok => self.recvtok.map(u64::from),
            Source::MpBackup => self.backup.map(u64::from),
            _ => None,
        }
    }
}

type Ip6Pair = ([u8; 16], [u8; 16]);

/// A segment whose header tshark shows only in part (kept per such row, like
/// `Handshake`): without any in a chunk, the masked columns are the vectors as they are.
#[derive(Clone, Copy, Default)]
struct Odd {
    /// the data offset is below 20 bytes: no flags, ack or options
    bogus_header: bool,
    /// the snap length left only the ports
    ports_only: bool,
}

chunk! {
    dense {
        time: f64,
        frame: u32,
        orig_len: u32,
        cap_len: u32,
        stream: u32,
        seq: u32,
        ack: u32,
        payload_len: Option<u32>,
        sport: u16,
        dport: u16,
        flags: u16,
        ip_id: Option<u16>,
        checksum: Option<u16>,
        ip4: Option<([u8; 4], [u8; 4])>,
        mp_subtypes: crate::mptcp::SubtypeKey,
        mp_map_present: Option<u8>,
        mp_dsn64: Option<u8>,
        mp_dsn_raw: Option<u64>,
        mp_ssn: Option<u32>,
        mp_map_len: Option<u16>,
        mp_data_fin: Option<u8>,
        mp_dack64: Option<u8>,
        mp_dack_raw: Option<u64>,
    }
    sparse {
        odd: (u32, Odd),
        ip6: (u32, Ip6Pair),
        handshake: (u32, Handshake),
    }
}

impl Chunk {
    fn len(&self) -> usize {
        self.rows
    }

    /// Per row: (bogus header, ports only).
    fn odd_rows(&self) -> (Vec<bool>, Vec<bool>) {
        let n = self.len();
        let (mut bogus, mut ports) = (vec![false; n], vec![false; n]);
        for &(row, o) in &self.odd {
            bogus[row as usize] = o.bogus_header;
            ports[row as usize] = o.ports_only;
        }
        (bogus, ports)
    }
}

pub struct Decoder {
    reader: Reader,
    state: State,
}

struct State {
    columns: Vec<Column>,
    dtypes: Vec<String>,
    schema: SchemaRef,
    streams: Streams,
    seg: Segment,
    stats: Stats,
    rows: Chunk,
    chunk_rows: usize,
}

#[derive(Debug)]
pub enum DecodeError {
    Open(OpenError),
    Field(String),
}

impl Decoder {
    pub fn open(path: &Path, specs: &[ColumnSpec], chunk_rows: usize) -> Result<Decoder, DecodeError> {
        let mut columns = Vec::new();
        let mut fields = Vec::new();
        let mut dtypes = Vec::new();
        for s in specs {
            let source = SOURCES
                .iter()
                .find(|(name, _)| *name == s.tshark)
                .map(|(_, src)| *src)
                .ok_or_else(|| DecodeError::Field(format!("the native decoder does not produce field {:?}", s.tshark)))?;
            let all = match s.occurrence.as_str() {
                "first" => false,
                // the decoder keeps the innermost IP header's fields (packet.rs): the last
                "last" if matches!(source, Source::IpSrc | Source::IpDst | Source::Ip6Src | Source::Ip6Dst | Source::IpId) => false,
                "all" if source == Source::MpSubtype && s.dtype == "str" => true,
                // the DSS mapping's DSN, not an MP_FAIL's before it: mptcp.rs picks it
                "dss" if source == Source::MpDsnRaw => false,
                other => {
                    return Err(DecodeError::Field(format!(
                        "occurrence {other:?} of {:?} as {}: only the MPTCP subtypes are kept comma-joined (as text)",
                        s.tshark, s.dtype
                    )))
                }
            };
            let Some(dt) = data_type(&s.dtype) else {
                return Err(DecodeError::Field(format!("unknown column type {:?} for {:?}", s.dtype, s.column)));
            };
            columns.push(Column { source, all });
            fields.push(Field::new(&s.column, dt, true));
            dtypes.push(s.dtype.clone());
        }
        let reader = Reader::open(path).map_err(DecodeError::Open)?;
        let chunk_rows = chunk_rows.max(1);
        Ok(Decoder {
            reader,
            state: State {
                columns,
                dtypes,
                schema: Arc::new(Schema::new(fields)),
                streams: Streams::default(),
                seg: Segment::default(),
                stats: Stats::default(),
                rows: Chunk::new(),
                chunk_rows,
            },
        })
    }

    pub fn schema(&self) -> SchemaRef {
        self.state.schema.clone()
    }

    pub fn stats(&self) -> Stats {
        let mut s = self.state.stats.clone();
        s.streams = self.state.streams.count() as u64;
        s.end = self.reader.end.clone();
        s.pcap = self.reader.walk.clone();
        s
    }

    /// The next chunk of at most `chunk_rows` rows; `None` once the file is done.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        let state = &mut self.state;
        self.reader.for_each(|rec| state.push(rec));
        if self.state.rows.len() == 0 {
            return None;
        }
        Some(self.state.flush())
    }
}

impl Iterator for Decoder {
    type Item = Result<RecordBatch, ArrowError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_batch()
    }
}

impl arrow_array::RecordBatchReader for Decoder {
    fn schema(&self) -> SchemaRef {
        self.state.schema.clone()
    }
}

impl State {
    fn flush(&mut self) -> Result<RecordBatch, ArrowError> {
        let odd = OnceCell::new();
        let arrays: Vec<ArrayRef> =
            self.columns.iter().zip(&self.dtypes).map(|(c, d)| column(&self.rows, c, d, &odd)).collect();
        self.rows.clear();
        RecordBatch::try_new(self.schema.clone(), arrays)
    }

    /// Decodes one record; false once the chunk is full.
    fn push(&mut self, rec: &Record) -> bool {
        self.stats.frames += 1;
        let frame = self.stats.frames;
        if let Err(skip) = decode(rec.linktype, rec.data, rec.orig_len, &mut self.seg) {
            match skip {
                Skip::NotTcp => self.stats.not_tcp += 1,
                Skip::Fragment => self.stats.fragments += 1,
                Skip::Malformed if rec.data.len() < rec.orig_len as usize => self.stats.cut_short += 1,
                Skip::Malformed => self.stats.malformed += 1,
                Skip::LinkType => *self.stats.unsupported_link_types.entry(rec.linktype).or_insert(0) += 1,
            }
            return true;
        }
        self.stats.tcp_packets += 1;
        let seg = &self.seg;
        let ip4 = seg.ip4_src.zip(seg.ip4_dst);
        let ip6 = seg.ip6_src.zip(seg.ip6_dst);
        // The conversation key uses the innermost addresses (tshark's pinfo->src/dst): with
        // a tunnel of both families (4in6, 6in4, GRE over IPv6), the innermost header's.
        let v6 = match (&ip6, &ip4) {
            (Some(_), Some(_)) => seg.inner_v6,
            (v6, _) => v6.is_some(),
        };
        let (src, dst): (&[u8], &[u8]) = match (v6, &ip6, &ip4) {
            (true, Some((s, d)), _) => (s, d),
            (false, _, Some((s, d))) => (s, d),
            _ => unreachable!("a TCP segment without an IP header"),
        };
        let stream = if seg.ports_only { u32::MAX } else { self.streams.stream(
            src,
            dst,
            seg.sport,
            seg.dport,
            &TcpMeta { flags: seg.flags, seq: seg.seq, ack: seg.ack, has_seglen: seg.payload_len.is_some() },
        ) };
        let c = &mut self.rows;
        let r = c.rows;
        if r == c.frame.len() {
            c.grow(self.chunk_rows);
        }
        let row = r as u32;
        c.time[r] = epoch_f64(rec.ts_sec, rec.ts_nsec);
        c.frame[r] = u32::try_from(frame).unwrap_or(u32::MAX);
        c.orig_len[r] = rec.orig_len;
        c.cap_len[r] = rec.data.len() as u32;
        c.stream[r] = stream;
        c.seq[r] = seg.seq;
        c.ack[r] = seg.ack;
        c.payload_len[r] = seg.payload_len;
        if seg.bogus_header || seg.ports_only {
            c.odd.push((row, Odd { bogus_header: seg.bogus_header, ports_only: seg.ports_only }));
        }
        c.sport[r] = seg.sport;
        c.dport[r] = seg.dport;
        c.flags[r] = seg.flags;
        c.ip_id[r] = seg.ip_id;
        c.checksum[r] = seg.checksum;
        // With a tunnel of both families (6in4, Teredo, 4in6) the row keeps only the
        // innermost header's addresses, the connection's: the outer ones are the tunnel's.
        c.ip4[r] = if v6 { None } else { ip4 };
        if let (true, Some(pair)) = (v6, ip6) {
            c.ip6.push((row, pair));
        }
        let mp = &seg.mptcp;
        c.mp_subtypes[r] = mp.subtype_key();
        let h = Handshake { version: mp.version, sendkey: mp.sendkey, recvkey: mp.recvkey, recvtok: mp.recvtok, backup: mp.backup };
        if h.version.is_some() || h.sendkey.is_some() || h.recvkey.is_some() || h.recvtok.is_some() || h.backup.is_some() {
            c.handshake.push((row, h));
        }
        c.mp_map_present[r] = mp.map_present;
        c.mp_dsn64[r] = mp.dsn64;
        c.mp_dsn_raw[r] = mp.dsn_raw;
        c.mp_ssn[r] = mp.ssn;
        c.mp_map_len[r] = mp.map_len;
        c.mp_data_fin[r] = mp.data_fin;
        c.mp_dack64[r] = mp.dack64;
        c.mp_dack_raw[r] = mp.dack_raw;
        c.rows += 1;
        self.rows.len() < self.chunk_rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use super::columns::ipv4_text;

    #[test]
    fn address_text() {
        let mut buf = [0u8; 15];
        assert_eq!(ipv4_text([10, 100, 0, 1], &mut buf), "10.100.0.1");
        assert_eq!(ipv4_text([255, 0, 99, 200], &mut buf), "255.0.99.200");
        let mut a = [0u8; 16];
        a[0] = 0xfd;
        a[15] = 1;
        assert_eq!(ipv6_text(a), "fd00::1");
        let mut m = [0u8; 16];
        m[10] = 0xff;
        m[11] = 0xff;
        m[12..].copy_from_slice(&[1, 2, 3, 4]);
        assert_eq!(ipv6_text(m), "::ffff:1.2.3.4");
    }
}

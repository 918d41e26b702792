//! pcap -> Arrow record batches of the packets table, in chunks of bounded size.
//!
//! The columns are not declared here: the caller passes the packets table's field
//! list (`pipeline/schema.py`: tshark field name, column, type, occurrence rule), and
//! each tshark field name maps to one value the decoder knows how to produce. Only
//! the conversation table (one entry per TCP connection) outlives a chunk.

use std::collections::BTreeMap;
use std::net::Ipv6Addr;
use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{Float64Builder, StringViewBuilder, UInt16Builder, UInt32Builder, UInt64Builder, UInt8Builder};
use arrow_array::{ArrayRef, RecordBatch};
use arrow_schema::{ArrowError, DataType, Field, Schema, SchemaRef};

use crate::capture::{epoch_f64, End, OpenError, Reader, Record};
use crate::packet::{decode, Segment, Skip};
use crate::streams::{Streams, TcpMeta};

/// The values the decoder produces, by the tshark field that names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    FrameNumber,
    TimeEpoch,
    FrameLen,
    IpSrc,
    IpDst,
    Ip6Src,
    Ip6Dst,
    Stream,
    SrcPort,
    DstPort,
    Flags,
    Seq,
    Ack,
    Len,
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
}

const SOURCES: &[(&str, Source)] = &[
    ("frame.number", Source::FrameNumber),
    ("frame.time_epoch", Source::TimeEpoch),
    ("frame.len", Source::FrameLen),
    ("ip.src", Source::IpSrc),
    ("ip.dst", Source::IpDst),
    ("ipv6.src", Source::Ip6Src),
    ("ipv6.dst", Source::Ip6Dst),
    ("tcp.stream", Source::Stream),
    ("tcp.srcport", Source::SrcPort),
    ("tcp.dstport", Source::DstPort),
    ("tcp.flags", Source::Flags),
    ("tcp.seq", Source::Seq),
    ("tcp.ack", Source::Ack),
    ("tcp.len", Source::Len),
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
];

/// One column the caller asks for.
#[derive(Clone, Debug)]
pub struct ColumnSpec {
    pub tshark: String,
    pub column: String,
    /// u8, u16, u32, u64, f64 or str
    pub dtype: String,
    /// "first" (the first occurrence in the frame) or "all" (comma-joined)
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
    /// frames of link types the decoder does not read, by link type
    pub unsupported_link_types: BTreeMap<i32, u64>,
    pub streams: u64,
    pub end: Option<End>,
}

enum Builder {
    U8(UInt8Builder),
    U16(UInt16Builder),
    U32(UInt32Builder),
    U64(UInt64Builder),
    F64(Float64Builder),
    Str(StringViewBuilder),
}

impl Builder {
    fn new(dtype: &str, cap: usize) -> Option<Builder> {
        Some(match dtype {
            "u8" => Builder::U8(UInt8Builder::with_capacity(cap)),
            "u16" => Builder::U16(UInt16Builder::with_capacity(cap)),
            "u32" => Builder::U32(UInt32Builder::with_capacity(cap)),
            "u64" => Builder::U64(UInt64Builder::with_capacity(cap)),
            "f64" => Builder::F64(Float64Builder::with_capacity(cap)),
            "str" => Builder::Str(StringViewBuilder::with_capacity(cap)),
            _ => return None,
        })
    }

    fn data_type(dtype: &str) -> DataType {
        match dtype {
            "u8" => DataType::UInt8,
            "u16" => DataType::UInt16,
            "u32" => DataType::UInt32,
            "u64" => DataType::UInt64,
            "f64" => DataType::Float64,
            _ => DataType::Utf8View,
        }
    }

    /// An unsigned value, null when absent or out of the column's range (as the
    /// tshark path's non-strict cast gives).
    #[inline]
    fn uint(&mut self, v: Option<u64>) {
        match self {
            Builder::U8(b) => b.append_option(v.and_then(|x| u8::try_from(x).ok())),
            Builder::U16(b) => b.append_option(v.and_then(|x| u16::try_from(x).ok())),
            Builder::U32(b) => b.append_option(v.and_then(|x| u32::try_from(x).ok())),
            Builder::U64(b) => b.append_option(v),
            Builder::F64(b) => b.append_option(v.map(|x| x as f64)),
            Builder::Str(b) => match v {
                Some(x) => b.append_value(x.to_string()),
                None => b.append_null(),
            },
        }
    }

    #[inline]
    fn float(&mut self, v: f64) {
        match self {
            Builder::F64(b) => b.append_value(v),
            Builder::Str(b) => b.append_value(format!("{v:.9}")),
            other => other.uint(None),
        }
    }

    #[inline]
    fn text(&mut self, v: Option<&str>) {
        match self {
            Builder::Str(b) => b.append_option(v),
            other => other.uint(v.and_then(|s| s.parse().ok())),
        }
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::U8(b) => Arc::new(b.finish()),
            Builder::U16(b) => Arc::new(b.finish()),
            Builder::U32(b) => Arc::new(b.finish()),
            Builder::U64(b) => Arc::new(b.finish()),
            Builder::F64(b) => Arc::new(b.finish()),
            Builder::Str(b) => Arc::new(b.finish()),
        }
    }
}

/// Dotted quad without going through `fmt` (this runs twice per packet).
fn ipv4_text(a: [u8; 4], buf: &mut [u8; 15]) -> &str {
    let mut n = 0;
    for (i, &o) in a.iter().enumerate() {
        if i > 0 {
            buf[n] = b'.';
            n += 1;
        }
        if o >= 100 {
            buf[n] = b'0' + o / 100;
            n += 1;
        }
        if o >= 10 {
            buf[n] = b'0' + (o / 10) % 10;
            n += 1;
        }
        buf[n] = b'0' + o % 10;
        n += 1;
    }
    std::str::from_utf8(&buf[..n]).unwrap()
}

/// IPv6 text as Wireshark prints it (RFC 5952; the IPv4-mapped and deprecated
/// IPv4-compatible forms end in a dotted quad, as inet_ntop writes them).
pub fn ipv6_text(a: [u8; 16]) -> String {
    let ip = Ipv6Addr::from(a);
    let w = ip.segments();
    if w[..6] == [0, 0, 0, 0, 0, 0] && w[6] != 0 {
        return format!("::{}.{}.{}.{}", a[12], a[13], a[14], a[15]);
    }
    ip.to_string()
}

pub struct Decoder {
    reader: Reader,
    state: State,
}

struct State {
    columns: Vec<Column>,
    builders: Vec<Builder>,
    dtypes: Vec<String>,
    schema: SchemaRef,
    streams: Streams,
    seg: Segment,
    stats: Stats,
    rows: usize,
    chunk_rows: usize,
    text: String,
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
                "all" if source == Source::MpSubtype && s.dtype == "str" => true,
                other => {
                    return Err(DecodeError::Field(format!(
                        "occurrence {other:?} of {:?} as {}: only the MPTCP subtypes are kept comma-joined (as text)",
                        s.tshark, s.dtype
                    )))
                }
            };
            if Builder::new(&s.dtype, 0).is_none() {
                return Err(DecodeError::Field(format!("unknown column type {:?} for {:?}", s.dtype, s.column)));
            }
            columns.push(Column { source, all });
            fields.push(Field::new(&s.column, Builder::data_type(&s.dtype), true));
            dtypes.push(s.dtype.clone());
        }
        let reader = Reader::open(path).map_err(DecodeError::Open)?;
        let chunk_rows = chunk_rows.max(1);
        let builders = dtypes.iter().map(|d| Builder::new(d, chunk_rows).unwrap()).collect();
        Ok(Decoder {
            reader,
            state: State {
                columns,
                builders,
                dtypes,
                schema: Arc::new(Schema::new(fields)),
                streams: Streams::default(),
                seg: Segment::default(),
                stats: Stats::default(),
                rows: 0,
                chunk_rows,
                text: String::with_capacity(32),
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
        s
    }

    /// The next chunk of at most `chunk_rows` rows; `None` once the file is done.
    pub fn next_batch(&mut self) -> Option<Result<RecordBatch, ArrowError>> {
        let state = &mut self.state;
        self.reader.for_each(|rec| state.push(rec));
        if self.state.rows == 0 {
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
        let arrays: Vec<ArrayRef> = self.builders.iter_mut().map(|b| b.finish()).collect();
        // Builders keep no capacity after finish(): size them for the next chunk.
        for (b, d) in self.builders.iter_mut().zip(&self.dtypes) {
            *b = Builder::new(d, self.chunk_rows).unwrap();
        }
        self.rows = 0;
        RecordBatch::try_new(self.schema.clone(), arrays)
    }

    /// Decodes one record; false once the chunk is full.
    fn push(&mut self, rec: &Record) -> bool {
        self.stats.frames += 1;
        let frame = self.stats.frames;
        match decode(rec.linktype, rec.data, rec.orig_len, &mut self.seg) {
            Ok(()) => {}
            Err(skip) => {
                match skip {
                    Skip::NotTcp => self.stats.not_tcp += 1,
                    Skip::Fragment => self.stats.fragments += 1,
                    Skip::Malformed => self.stats.malformed += 1,
                    Skip::LinkType => *self.stats.unsupported_link_types.entry(rec.linktype).or_insert(0) += 1,
                }
                return true;
            }
        }
        self.stats.tcp_packets += 1;
        let seg = &self.seg;
        // The conversation key uses the innermost addresses (tshark's pinfo->src/dst).
        let (src, dst): (&[u8], &[u8]) = match (&seg.ip6_src, &seg.ip4_src) {
            (Some(s6), None) => (s6, seg.ip6_dst.as_ref().unwrap()),
            (None, Some(s4)) => (s4, seg.ip4_dst.as_ref().unwrap()),
            (Some(s6), Some(_)) => (s6, seg.ip6_dst.as_ref().unwrap()),
            (None, None) => unreachable!("a TCP segment without an IP header"),
        };
        let stream = self.streams.stream(
            src,
            dst,
            seg.sport,
            seg.dport,
            &TcpMeta { flags: seg.flags, seq: seg.seq, ack: seg.ack, has_seglen: seg.payload_len.is_some() },
        );
        let time = epoch_f64(rec.ts_sec, rec.ts_nsec);
        let mp = &seg.mptcp;
        let mut buf = [0u8; 15];
        for (col, b) in self.columns.iter().zip(self.builders.iter_mut()) {
            match col.source {
                Source::FrameNumber => b.uint(Some(frame)),
                Source::TimeEpoch => b.float(time),
                Source::FrameLen => b.uint(Some(rec.orig_len as u64)),
                Source::IpSrc => b.text(seg.ip4_src.map(|a| ipv4_text(a, &mut buf))),
                Source::IpDst => b.text(seg.ip4_dst.map(|a| ipv4_text(a, &mut buf))),
                Source::Ip6Src => b.text(seg.ip6_src.map(ipv6_text).as_deref()),
                Source::Ip6Dst => b.text(seg.ip6_dst.map(ipv6_text).as_deref()),
                Source::Stream => b.uint(Some(stream as u64)),
                Source::SrcPort => b.uint(Some(seg.sport as u64)),
                Source::DstPort => b.uint(Some(seg.dport as u64)),
                Source::Flags => b.uint((!seg.bogus_header).then_some(seg.flags as u64)),
                Source::Seq => b.uint(Some(seg.seq as u64)),
                Source::Ack => b.uint((!seg.bogus_header).then_some(seg.ack as u64)),
                Source::Len => b.uint(seg.payload_len.map(u64::from)),
                Source::MpSubtype => {
                    if mp.subtypes.is_empty() {
                        b.text(None);
                    } else if col.all {
                        self.text.clear();
                        for (i, &s) in mp.subtypes.iter().enumerate() {
                            if i > 0 {
                                self.text.push(',');
                            }
                            if s >= 10 {
                                self.text.push('1');
                            }
                            self.text.push((b'0' + s % 10) as char); // a subtype is 4 bits
                        }
                        b.text(Some(&self.text));
                    } else {
                        b.uint(Some(mp.subtypes[0] as u64));
                    }
                }
                Source::MpVersion => b.uint(mp.version.map(u64::from)),
                Source::MpSendkey => b.uint(mp.sendkey),
                Source::MpRecvkey => b.uint(mp.recvkey),
                Source::MpRecvtok => b.uint(mp.recvtok.map(u64::from)),
                Source::MpMapPresent => b.uint(mp.map_present.map(u64::from)),
                Source::MpDsn64 => b.uint(mp.dsn64.map(u64::from)),
                Source::MpDsnRaw => b.uint(mp.dsn_raw),
                Source::MpSsn => b.uint(mp.ssn.map(u64::from)),
                Source::MpMapLen => b.uint(mp.map_len.map(u64::from)),
                Source::MpDataFin => b.uint(mp.data_fin.map(u64::from)),
                Source::MpBackup => b.uint(mp.backup.map(u64::from)),
            }
        }
        self.rows += 1;
        self.rows < self.chunk_rows
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

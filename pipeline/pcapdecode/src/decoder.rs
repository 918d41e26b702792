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

fn data_type(dtype: &str) -> Option<DataType> {
    Some(match dtype {
        "u8" => DataType::UInt8,
        "u16" => DataType::UInt16,
        "u32" => DataType::UInt32,
        "u64" => DataType::UInt64,
        "f64" => DataType::Float64,
        "str" => DataType::Utf8View,
        _ => return None,
    })
}

/// A primitive column of `n` rows, row `i`'s value `f(i)`.
fn primitive<T: ArrowPrimitiveType>(n: usize, f: impl Fn(usize) -> Option<T::Native>) -> ArrayRef {
    let mut missing = 0usize;
    let values: Vec<T::Native> = (0..n)
        .map(|i| {
            let v = f(i);
            missing += v.is_none() as usize;
            v.unwrap_or_default()
        })
        .collect();
    // The validity bitmap only for a column with nulls (most are all or nothing).
    let nulls = (missing > 0).then(|| NullBuffer::new(BooleanBuffer::collect_bool(n, |i| f(i).is_some())));
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls))
}

/// A column of the chunk's own values, in their own type: a copy of the vector.
fn plain<T: ArrowPrimitiveType>(v: &[T::Native]) -> ArrayRef {
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(v.to_vec()), None))
}

/// A column of the chunk's own optional values, in their own type.
/// One pass per 64 rows (in cache) gives both the values and that word of the
/// validity bitmap (three passes over the column were ~6 % of decoding).
fn optional<T: ArrowPrimitiveType>(v: &[Option<T::Native>]) -> ArrayRef {
    let n = v.len();
    let mut values: Vec<T::Native> = Vec::with_capacity(n);
    let mut words: Vec<u64> = Vec::with_capacity(n.div_ceil(64));
    let mut valid = 0usize;
    for rows in v.chunks(64) {
        values.extend(rows.iter().map(|x| x.unwrap_or_default()));
        let word = rows.iter().enumerate().fold(0u64, |w, (j, x)| w | (x.is_some() as u64) << j);
        valid += word.count_ones() as usize;
        words.push(word);
    }
    let nulls = (valid < n).then(|| NullBuffer::new(BooleanBuffer::new(Buffer::from_vec(words), 0, n)));
    Arc::new(PrimitiveArray::<T>::new(ScalarBuffer::from(values), nulls))
}

/// The values of (row, value) pairs spread over `n` rows, `None` elsewhere.
fn spread<T: Copy, V: Copy>(n: usize, pairs: &[(u32, T)], get: impl Fn(&T) -> Option<V>) -> Vec<Option<V>> {
    let mut out = vec![None; n];
    for (row, v) in pairs {
        out[*row as usize] = get(v);
    }
    out
}

/// A column of (row, value) pairs' values in their own type, null elsewhere.
fn sparse<T: ArrowPrimitiveType, S: Copy>(n: usize, pairs: &[(u32, S)], get: impl Fn(&S) -> Option<T::Native>) -> ArrayRef {
    if pairs.is_empty() {
        return new_null_array(&T::DATA_TYPE, n); // most chunks: no handshake in them
    }
    optional::<T>(&spread(n, pairs, get))
}

/// Arrow string views built by hand, so that a value repeated from the row before
/// (an address, the subtypes of a data segment) costs one copy of its 16-byte view.
struct Views {
    views: Vec<u128>,
    data: Vec<u8>,
    valid: Vec<bool>,
    nulls: usize,
}

impl Views {
    fn new(n: usize) -> Views {
        Views { views: Vec::with_capacity(n), data: Vec::new(), valid: Vec::with_capacity(n), nulls: 0 }
    }

    fn view_of(&mut self, s: &[u8]) -> u128 {
        let len = s.len() as u128;
        if s.len() <= 12 {
            let mut inline = [0u8; 16];
            inline[4..4 + s.len()].copy_from_slice(s);
            return u128::from_le_bytes(inline) | len;
        }
        let offset = self.data.len() as u128;
        self.data.extend_from_slice(s);
        let prefix = u32::from_le_bytes([s[0], s[1], s[2], s[3]]) as u128;
        len | prefix << 32 | offset << 96 // buffer index 0 in bits 64..96
    }

    fn push_view(&mut self, v: Option<u128>) {
        self.views.push(v.unwrap_or(0));
        self.valid.push(v.is_some());
        self.nulls += v.is_none() as usize;
    }

    fn finish(self) -> ArrayRef {
        let nulls = (self.nulls > 0).then(|| NullBuffer::from(self.valid));
        // SAFETY: every view is either inline (<= 12 bytes) or points into `data` at an
        // offset and length written by `view_of`, and all bytes are UTF-8 text.
        let buffers: Arc<[Buffer]> = if self.data.is_empty() { Arc::new([]) } else { Arc::new([Buffer::from_vec(self.data)]) };
        Arc::new(unsafe { StringViewArray::new_unchecked(ScalarBuffer::from(self.views), buffers, nulls) })
    }
}

/// A text column whose value is a function of a small key (an address, a subtype
/// list): formatted once per key in a small cache (subflows interleave), not per row.
fn text_by_key<K: Copy + PartialEq>(
    n: usize,
    key: impl Fn(usize) -> Option<K>,
    slot: impl Fn(&K) -> usize,
    fmt: impl Fn(K, &mut String),
) -> ArrayRef {
    let mut out = Views::new(n);
    let mut cache: [Option<(K, u128)>; 16] = [None; 16];
    let mut buf = String::with_capacity(48);
    for i in 0..n {
        let v = key(i).map(|k| {
            let i = slot(&k) & 15;
            match cache[i] {
                Some((ck, cv)) if ck == k => cv,
                _ => {
                    buf.clear();
                    fmt(k, &mut buf);
                    let v = out.view_of(buf.as_bytes());
                    cache[i] = Some((k, v));
                    v
                }
            }
        });
        out.push_view(v);
    }
    out.finish()
}

/// An unsigned value in the column's type: null when absent or out of range (as the
/// tshark path's non-strict cast gives).
fn unsigned(n: usize, dtype: &str, f: impl Fn(usize) -> Option<u64>) -> ArrayRef {
    match dtype {
        "u8" => primitive::<UInt8Type>(n, |i| f(i).and_then(|v| u8::try_from(v).ok())),
        "u16" => primitive::<UInt16Type>(n, |i| f(i).and_then(|v| u16::try_from(v).ok())),
        "u32" => primitive::<UInt32Type>(n, |i| f(i).and_then(|v| u32::try_from(v).ok())),
        "u64" => primitive::<UInt64Type>(n, f),
        "f64" => primitive::<Float64Type>(n, |i| f(i).map(|v| v as f64)),
        _ => text(n, |i, out| match f(i) {
            Some(v) => {
                out.push_str(&v.to_string());
                true
            }
            None => false,
        }),
    }
}

/// A text column: `f` writes the row's value into the buffer, or says it has none.
fn text(n: usize, f: impl Fn(usize, &mut String) -> bool) -> ArrayRef {
    let mut out = Views::new(n);
    let mut buf = String::with_capacity(48);
    for i in 0..n {
        buf.clear();
        let v = f(i, &mut buf).then(|| out.view_of(buf.as_bytes()));
        out.push_view(v);
    }
    out.finish()
}

/// A column asked for in the type the chunk holds it in (the packets table's types):
/// the whole vector, no conversion per row; None for any other.
fn as_held(c: &Chunk, col: &Column, dtype: &str) -> Option<ArrayRef> {
    let n = c.len();
    match (col.source, dtype) {
        (Source::FrameNumber, "u32") => Some(plain::<UInt32Type>(&c.frame[..n])),
        (Source::TimeEpoch, "f64") => Some(plain::<Float64Type>(&c.time[..n])),
        (Source::FrameLen, "u32") => Some(plain::<UInt32Type>(&c.orig_len[..n])),
        (Source::CapLen, "u32") => Some(plain::<UInt32Type>(&c.cap_len[..n])),
        (Source::SrcPort, "u16") => Some(plain::<UInt16Type>(&c.sport[..n])),
        (Source::Stream, "u32") if c.odd.is_empty() => Some(plain::<UInt32Type>(&c.stream[..n])),
        (Source::Flags, "u16") if c.odd.is_empty() => Some(plain::<UInt16Type>(&c.flags[..n])),
        (Source::Seq, "u32") if c.odd.is_empty() => Some(plain::<UInt32Type>(&c.seq[..n])),
        (Source::Ack, "u32") if c.odd.is_empty() => Some(plain::<UInt32Type>(&c.ack[..n])),
        (Source::Len, "u32") if c.odd.is_empty() => Some(optional::<UInt32Type>(&c.payload_len[..n])),
        (Source::DstPort, "u16") => Some(plain::<UInt16Type>(&c.dport[..n])),
        (Source::IpId, "u16") => Some(optional::<UInt16Type>(&c.ip_id[..n])),
        (Source::Checksum, "u16") => Some(optional::<UInt16Type>(&c.checksum[..n])),
        (Source::MpVersion, "u8") => Some(sparse::<UInt8Type, _>(n, &c.handshake, |h| h.version)),
        (Source::MpSendkey, "u64") => Some(sparse::<UInt64Type, _>(n, &c.handshake, |h| h.sendkey)),
        (Source::MpRecvkey, "u64") => Some(sparse::<UInt64Type, _>(n, &c.handshake, |h| h.recvkey)),
        (Source::MpRecvtok, "u32") => Some(sparse::<UInt32Type, _>(n, &c.handshake, |h| h.recvtok)),
        (Source::MpMapPresent, "u8") => Some(optional::<UInt8Type>(&c.mp_map_present[..n])),
        (Source::MpDsn64, "u8") => Some(optional::<UInt8Type>(&c.mp_dsn64[..n])),
        (Source::MpDsnRaw, "u64") => Some(optional::<UInt64Type>(&c.mp_dsn_raw[..n])),
        (Source::MpDack64, "u8") => Some(optional::<UInt8Type>(&c.mp_dack64[..n])),
        (Source::MpDackRaw, "u64") => Some(optional::<UInt64Type>(&c.mp_dack_raw[..n])),
        (Source::MpSsn, "u32") => Some(optional::<UInt32Type>(&c.mp_ssn[..n])),
        (Source::MpMapLen, "u16") => Some(optional::<UInt16Type>(&c.mp_map_len[..n])),
        (Source::MpDataFin, "u8") => Some(optional::<UInt8Type>(&c.mp_data_fin[..n])),
        (Source::MpBackup, "u8") => Some(sparse::<UInt8Type, _>(n, &c.handshake, |h| h.backup)),
        _ => None,
    }
}

/// `odd`: the chunk's per-row (bogus header, ports only) flags, made by the first
/// masked column that needs them and shared by the others.
fn column(c: &Chunk, col: &Column, dtype: &str, odd: &OnceCell<(Vec<bool>, Vec<bool>)>) -> ArrayRef {
    let n = c.len();
    // A macro, not a closure taking `fn`: each column's accessor is inlined into its loop.
    macro_rules! u {
        ($f:expr) => {
            unsigned(n, dtype, $f)
        };
    }
    // Values asked for in the type the chunk holds them in: whole vectors (`as_held`).
    if let Some(a) = as_held(c, col, dtype) {
        return a;
    }
    match col.source {
        Source::FrameNumber => u!(|i| Some(c.frame[i] as u64)),
        Source::TimeEpoch => match dtype {
            "f64" => primitive::<Float64Type>(n, |i| Some(c.time[i])),
            _ => text(n, |i, out| {
                out.push_str(&format!("{:.9}", c.time[i]));
                true
            }),
        },
        Source::FrameLen => u!(|i| Some(c.orig_len[i] as u64)),
        Source::CapLen => u!(|i| Some(c.cap_len[i] as u64)),
        Source::IpId => u!(|i| c.ip_id[i].map(u64::from)),
        Source::Checksum => u!(|i| c.checksum[i].map(u64::from)),
        Source::IpSrc => text_by_key(n, |i| c.ip4[i].map(|(a, _)| a), v4_slot, push_ipv4),
        Source::IpDst => text_by_key(n, |i| c.ip4[i].map(|(_, a)| a), v4_slot, push_ipv4),
        Source::Ip6Src | Source::Ip6Dst if c.ip6.is_empty() && dtype == "str" => new_null_array(&DataType::Utf8View, n),
        Source::Ip6Src => {
            let ip6 = spread(n, &c.ip6, |&(a, _)| Some(a));
            text_by_key(n, |i| ip6[i], v6_slot, |a, out| out.push_str(&ipv6_text(a)))
        }
        Source::Ip6Dst => {
            let ip6 = spread(n, &c.ip6, |&(_, a)| Some(a));
            text_by_key(n, |i| ip6[i], v6_slot, |a, out| out.push_str(&ipv6_text(a)))
        }
        Source::Stream => {
            let (_, ports_only) = odd.get_or_init(|| c.odd_rows());
            u!(|i| (!ports_only[i]).then_some(c.stream[i] as u64))
        }
        Source::SrcPort => u!(|i| Some(c.sport[i] as u64)),
        Source::DstPort => u!(|i| Some(c.dport[i] as u64)),
        Source::Flags => {
            let (bogus, ports_only) = odd.get_or_init(|| c.odd_rows());
            u!(|i| (!bogus[i] && !ports_only[i]).then_some(c.flags[i] as u64))
        }
        Source::Seq => {
            let (_, ports_only) = odd.get_or_init(|| c.odd_rows());
            u!(|i| (!ports_only[i]).then_some(c.seq[i] as u64))
        }
        Source::Ack => {
            let (bogus, ports_only) = odd.get_or_init(|| c.odd_rows());
            u!(|i| (!bogus[i] && !ports_only[i]).then_some(c.ack[i] as u64))
        }
        Source::Len => {
            let (_, ports_only) = odd.get_or_init(|| c.odd_rows());
            u!(|i| c.payload_len[i].filter(|_| !ports_only[i]).map(u64::from))
        }
        Source::MpSubtype if col.all => subtypes_text(c, n),
        Source::MpSubtype => u!(|i| c.mp_subtypes[i].first().map(u64::from)),
        Source::MpVersion | Source::MpSendkey | Source::MpRecvkey | Source::MpRecvtok | Source::MpBackup => {
            let v = spread(n, &c.handshake, |h| h.get(col.source));
            u!(|i| v[i])
        }
        Source::MpMapPresent => u!(|i| c.mp_map_present[i].map(u64::from)),
        Source::MpDsn64 => u!(|i| c.mp_dsn64[i].map(u64::from)),
        Source::MpDsnRaw => u!(|i| c.mp_dsn_raw[i]),
        Source::MpDack64 => u!(|i| c.mp_dack64[i].map(u64::from)),
        Source::MpDackRaw => u!(|i| c.mp_dack_raw[i]),
        Source::MpSsn => u!(|i| c.mp_ssn[i].map(u64::from)),
        Source::MpMapLen => u!(|i| c.mp_map_len[i].map(u64::from)),
        Source::MpDataFin => u!(|i| c.mp_data_fin[i].map(u64::from)),
    }
}

/// Every MPTCP subtype of each row, as tshark prints them ("2,3").
fn subtypes_text(c: &Chunk, n: usize) -> ArrayRef {
    text_by_key(
        n,
        |i| (!c.mp_subtypes[i].is_empty()).then_some(c.mp_subtypes[i]),
        |k| k.slot(),
        |k, out| {
            for (i, s) in k.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                if s >= 10 {
                    out.push('1');
                }
                out.push((b'0' + s % 10) as char); // a subtype is 4 bits
            }
        },
    )
}

fn v4_slot(a: &[u8; 4]) -> usize {
    (a[3] ^ a[2] ^ (a[1] << 2)) as usize
}

fn v6_slot(a: &[u8; 16]) -> usize {
    (a[15] ^ a[14] ^ (a[7] << 2)) as usize
}

fn push_ipv4(a: [u8; 4], out: &mut String) {
    let mut buf = [0u8; 15];
    out.push_str(ipv4_text(a, &mut buf));
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
    // SAFETY: only ASCII digits and dots were written.
    unsafe { std::str::from_utf8_unchecked(&buf[..n]) }
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
        // The conversation key uses the innermost addresses (tshark's pinfo->src/dst);
        // with a tunnel of both families, the IPv6 pair (the decoder records the first of each).
        let (src, dst): (&[u8], &[u8]) = match (&ip6, &ip4) {
            (Some((s, d)), _) => (s, d),
            (None, Some((s, d))) => (s, d),
            (None, None) => unreachable!("a TCP segment without an IP header"),
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
        c.ip4[r] = ip4;
        if let Some(pair) = ip6 {
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

//! The columns of a chunk (`column`): each value the decoder produces, as the Arrow
//! array of the type the caller asked for, and the text forms (addresses, subtype
//! lists) as tshark prints them.

use super::*;

pub(super) fn data_type(dtype: &str) -> Option<DataType> {
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
pub(super) fn column(c: &Chunk, col: &Column, dtype: &str, odd: &OnceCell<(Vec<bool>, Vec<bool>)>) -> ArrayRef {
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
pub(super) fn ipv4_text(a: [u8; 4], buf: &mut [u8; 15]) -> &str {
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

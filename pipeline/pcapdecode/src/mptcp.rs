//! TCP options and every MPTCP option subtype (RFC 6824 v0, RFC 8684 v1), decoded
//! into the fields tshark 4.0 shows for them.
//!
//! Which field each subtype fills, and for which option lengths, follows tshark's
//! MPTCP dissector, because the tshark path is the oracle: for instance MP_FAIL's
//! sequence number is shown as `rawdataseqno`, MP_FASTCLOSE's key as `recvkey`, and
//! MP_PRIO's flags as the `backup` flag. A value present several times in one segment
//! keeps its first occurrence (`-E occurrence=a`, first value kept), except the data
//! sequence number: a DSS mapping's, even after an MP_FAIL's (occurrence "dss"); the
//! subtypes themselves are all kept, in option order.

pub const KIND_MPTCP: u8 = 30;

pub const MP_CAPABLE: u8 = 0;
pub const MP_JOIN: u8 = 1;
pub const DSS: u8 = 2;
pub const ADD_ADDR: u8 = 3;
pub const REMOVE_ADDR: u8 = 4;
pub const MP_PRIO: u8 = 5;
pub const MP_FAIL: u8 = 6;
pub const MP_FASTCLOSE: u8 = 7;
pub const MP_TCPRST: u8 = 8;

/// The MPTCP fields of one segment (the packets table's `mp_*` columns).
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
pub struct MptcpFields {
    /// Subtypes in option order (40 bytes of options hold at most 13 MPTCP options).
    subtypes: [u8; 13],
    n_subtypes: u8,
    pub version: Option<u8>,
    pub sendkey: Option<u64>,
    pub recvkey: Option<u64>,
    pub recvtok: Option<u32>,
    pub map_present: Option<u8>,
    pub dsn64: Option<u8>,
    pub dsn_raw: Option<u64>,
    pub ssn: Option<u32>,
    pub map_len: Option<u16>,
    pub data_fin: Option<u8>,
    pub backup: Option<u8>,
    /// DSS's Data ACK as captured (4 or 8 bytes, per `dack64`) and its length flag.
    pub dack_raw: Option<u64>,
    pub dack64: Option<u8>,
    /// `dsn_raw` came from an MP_FAIL (a DSS mapping later in the segment replaces it:
    /// the field's "dss" occurrence rule, `pipeline/fields.py`).
    dsn_from_fail: bool,
}

impl MptcpFields {
    pub fn subtypes(&self) -> &[u8] {
        &self.subtypes[..self.n_subtypes as usize]
    }

    /// The subtypes alone, as a comparable key (a data segment's is the same as the last one's).
    pub fn subtype_key(&self) -> SubtypeKey {
        let n = self.n_subtypes as usize;
        let packed = self.subtypes[..n].iter().rev().fold(0u64, |acc, &s| acc << 4 | (s & 15) as u64);
        SubtypeKey(packed << 4 | n as u64)
    }

    fn push_subtype(&mut self, s: u8) {
        if let Some(slot) = self.subtypes.get_mut(self.n_subtypes as usize) {
            *slot = s;
            self.n_subtypes += 1;
        }
    }

    pub fn clear(&mut self) {
        self.n_subtypes = 0;
        self.version = None;
        self.sendkey = None;
        self.recvkey = None;
        self.recvtok = None;
        self.map_present = None;
        self.dsn64 = None;
        self.dsn_raw = None;
        self.ssn = None;
        self.map_len = None;
        self.data_fin = None;
        self.backup = None;
        self.dack_raw = None;
        self.dack64 = None;
        self.dsn_from_fail = false;
    }
}

/// A frame's MPTCP subtypes packed in one word: their count in the low 4 bits, then
/// each subtype (4 bits on the wire) in option order. A word, not an array: the chunk
/// keeps one per packet, and an odd-sized copy per packet cost ~10 % of decoding.
#[derive(Clone, Copy, PartialEq, Eq, Default)]
pub struct SubtypeKey(u64);

impl SubtypeKey {
    pub fn len(&self) -> usize {
        (self.0 & 15) as usize
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn first(&self) -> Option<u8> {
        (!self.is_empty()).then_some((self.0 >> 4 & 15) as u8)
    }

    pub fn iter(&self) -> impl Iterator<Item = u8> + '_ {
        (0..self.len()).map(move |k| (self.0 >> (4 + 4 * k) & 15) as u8)
    }

    /// A small hash for a cache slot.
    pub fn slot(&self) -> usize {
        (self.0 ^ self.0 >> 13) as usize
    }
}

fn first<T>(slot: &mut Option<T>, v: T) {
    if slot.is_none() {
        *slot = Some(v);
    }
}

/// Reads big-endian integers from an option body, failing (like tshark's bounds
/// exception) when the option is shorter than its fields.
struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at + n)?;
        self.at += n;
        Some(s)
    }
    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|s| u16::from_be_bytes([s[0], s[1]]))
    }
    fn u32(&mut self) -> Option<u32> {
        self.take(4).map(|s| u32::from_be_bytes([s[0], s[1], s[2], s[3]]))
    }
    fn u64(&mut self) -> Option<u64> {
        self.take(8).map(|s| u64::from_be_bytes(s.try_into().unwrap()))
    }
}

/// Walks the TCP options (`opts`: the captured bytes after the fixed 20-byte header,
/// `declared`: the options' length per the data offset) and decodes the MPTCP ones
/// into `out`. Stops, as tshark does, at End of Option List, at an option whose length
/// is bogus or runs past the header, at an MPTCP option shorter than the fields it
/// announces, and where the capture ends (fields read before that are kept).
pub fn decode_options(opts: &[u8], declared: usize, out: &mut MptcpFields) {
    let mut i = 0;
    while i < opts.len() {
        let kind = opts[i];
        match kind {
            0 => break,
            1 => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let Some(&len) = opts.get(i + 1) else { break };
        let len = len as usize;
        if len < 2 || i + len > declared {
            break;
        }
        let captured = &opts[i..opts.len().min(i + len)];
        if kind == KIND_MPTCP && decode_mptcp(captured, len, out).is_none() {
            break;
        }
        if captured.len() < len {
            break;
        }
        i += len;
    }
}

/// One MPTCP option (kind, length, subtype nibble, ...). `None`: the option ended
/// before a field it announces.
pub fn decode_mptcp(opt: &[u8], optlen: usize, out: &mut MptcpFields) -> Option<()> {
    // Byte 2 holds the subtype (high nibble) and, per subtype, the version (MP_CAPABLE)
    // or flags (MP_JOIN, MP_PRIO: backup); byte 3 the DSS flags.
    let mut c = Cursor { b: opt, at: 2 };
    let b2 = c.take(1)?[0];
    let sub = b2 >> 4;
    out.push_subtype(sub);
    match sub {
        MP_CAPABLE => {
            first(&mut out.version, b2 & 0x0f);
            c.take(1)?; // flags
            // 12: SYN/ACK (v1) or SYN and SYN/ACK (v0); 20: third ACK;
            // 22, 24: third ACK with data (v1) without / with checksum.
            if matches!(optlen, 12 | 20 | 22 | 24) {
                first(&mut out.sendkey, c.u64()?);
                if optlen >= 20 {
                    first(&mut out.recvkey, c.u64()?);
                }
                if optlen >= 22 {
                    first(&mut out.map_len, c.u16()?);
                }
            }
        }
        MP_JOIN => {
            // SYN (12): backup flag, address id, receiver's token, sender's nonce;
            // SYN/ACK (16): backup flag, address id, truncated HMAC, nonce; ACK (24): HMAC.
            if optlen == 12 || optlen == 16 {
                first(&mut out.backup, b2 & 0x01);
            }
            if optlen == 12 {
                c.take(1)?;
                first(&mut out.recvtok, c.u32()?);
                c.u32()?;
            }
        }
        DSS => {
            let flags = c.take(1)?[0] & 0x1f;
            first(&mut out.data_fin, (flags >> 4) & 1);
            first(&mut out.dsn64, (flags >> 3) & 1);
            first(&mut out.map_present, (flags >> 2) & 1);
            first(&mut out.dack64, (flags >> 1) & 1);
            if flags & 0x01 != 0 {
                let ack = if flags & 0x02 != 0 { c.u64()? } else { c.u32()? as u64 };
                first(&mut out.dack_raw, ack);
            }
            if flags & 0x04 != 0 {
                let dsn = if flags & 0x08 != 0 { c.u64()? } else { c.u32()? as u64 };
                // the mapping's DSN, not an MP_FAIL's sequence number before it
                if out.dsn_raw.is_none() || out.dsn_from_fail {
                    out.dsn_raw = Some(dsn);
                    out.dsn_from_fail = false;
                }
                first(&mut out.ssn, c.u32()?);
                first(&mut out.map_len, c.u16()?);
            }
        }
        MP_PRIO => first(&mut out.backup, b2 & 0x01),
        MP_FAIL => {
            c.at = 4; // 12 reserved bits
            let v = c.u64()?;
            if out.dsn_raw.is_none() {
                out.dsn_raw = Some(v);
                out.dsn_from_fail = true;
            }
        }
        MP_FASTCLOSE => {
            c.at = 4;
            first(&mut out.recvkey, c.u64()?);
        }
        _ => {} // ADD_ADDR, REMOVE_ADDR, MP_TCPRST, experimental: nothing the table reads
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Options captured whole.
    fn whole(o: &[u8], f: &mut MptcpFields) {
        decode_options(o, o.len(), f)
    }

    fn opt(sub_ver: u8, body: &[u8]) -> Vec<u8> {
        let mut v = vec![KIND_MPTCP, (3 + body.len()) as u8, sub_ver];
        v.extend_from_slice(body);
        v
    }

    #[test]
    fn mp_capable_lengths() {
        let mut f = MptcpFields::default();
        whole(&opt(0x01, &[0x81]), &mut f); // v1 SYN
        assert_eq!((f.subtypes().to_vec(), f.version, f.sendkey), (vec![0], Some(1), None));
        let mut body = vec![0x81];
        body.extend(7u64.to_be_bytes());
        body.extend(9u64.to_be_bytes());
        body.extend(137u16.to_be_bytes());
        let mut f = MptcpFields::default();
        whole(&opt(0x01, &body), &mut f);
        assert_eq!((f.sendkey, f.recvkey, f.map_len), (Some(7), Some(9), Some(137)));
    }

    #[test]
    fn dss_32_and_64_bit() {
        let mut body = vec![0x04 | 0x01]; // M, A (32-bit ack), 32-bit DSN
        body.extend(5u32.to_be_bytes());
        body.extend(0xdead_beefu32.to_be_bytes());
        body.extend(1u32.to_be_bytes());
        body.extend(1400u16.to_be_bytes());
        let mut f = MptcpFields::default();
        whole(&opt(0x20, &body), &mut f);
        assert_eq!(f.dsn_raw, Some(0xdead_beef));
        assert_eq!((f.map_present, f.dsn64, f.data_fin, f.map_len), (Some(1), Some(0), Some(0), Some(1400)));
        assert_eq!((f.dack_raw, f.dack64), (Some(5), Some(0)));
        let mut body = vec![0x1f]; // F m M a A
        body.extend(5u64.to_be_bytes());
        body.extend(u64::MAX.to_be_bytes());
        body.extend(1u32.to_be_bytes());
        body.extend(0u16.to_be_bytes());
        let mut f = MptcpFields::default();
        whole(&opt(0x20, &body), &mut f);
        assert_eq!((f.dsn_raw, f.dsn64, f.data_fin), (Some(u64::MAX), Some(1), Some(1)));
        assert_eq!((f.dack_raw, f.dack64), (Some(5), Some(1)));
        // a DSS without the A flag: the length flag is read, no DATA_ACK
        let mut f = MptcpFields::default();
        whole(&opt(0x20, &[0x02]), &mut f);
        assert_eq!((f.dack_raw, f.dack64), (None, Some(1)));
    }

    #[test]
    fn several_options_keep_first_values_and_all_subtypes() {
        let mut v = vec![1, 1]; // NOPs
        v.extend(opt(0x50, &[])); // MP_PRIO, backup 0
        v.extend(opt(0x20, &[0x00]));
        v.extend(opt(0x51, &[])); // MP_PRIO, backup 1: the first one is kept
        let mut f = MptcpFields::default();
        whole(&v, &mut f);
        assert_eq!(f.subtypes(), &[5, 2, 5]);
        assert_eq!((f.map_present, f.backup), (Some(0), Some(0)));
        let k = f.subtype_key();
        assert_eq!((k.len(), k.first(), k.iter().collect::<Vec<_>>()), (3, Some(5), vec![5, 2, 5]));
    }

    #[test]
    fn subtype_keys_hold_thirteen_subtypes_and_tell_them_apart() {
        let mut f = MptcpFields::default();
        assert!(f.subtype_key().is_empty() && f.subtype_key().first().is_none());
        let all: Vec<u8> = (0..13).map(|i| 15 - i).collect();
        for &s in &all {
            f.push_subtype(s);
        }
        f.push_subtype(1); // a 14th does not fit 40 bytes of options: not kept
        let k = f.subtype_key();
        assert_eq!((k.len(), k.iter().collect::<Vec<_>>()), (13, all));
        let (mut a, mut b) = (MptcpFields::default(), MptcpFields::default());
        a.push_subtype(2);
        b.push_subtype(2);
        b.push_subtype(0);
        assert!(a.subtype_key() != b.subtype_key());
    }

    #[test]
    fn short_option_stops_without_panicking() {
        let mut f = MptcpFields::default();
        whole(&[30, 8, 0x20, 0x05, 1, 2, 3, 4], &mut f); // M flag, no room for the DSN
        assert_eq!(f.subtypes(), &[2]);
        assert_eq!(f.dsn_raw, None);
        whole(&[30, 1], &mut f); // bogus length
        whole(&[30], &mut f);
    }
}

//! Records of a pcap or pcapng file, in file order, with tshark's timestamps.
//!
//! `pcap-parser` does the file format (both byte orders, µs/ns pcap, every pcapng
//! block type); this module keeps the per-interface state pcapng needs (link type,
//! `if_tsresol`, `if_tsoffset`, reset by each section header) and turns a record
//! into (time, original length, link type, bytes) the way Wireshark's wiretap does.

use std::fs::File;
use std::io::Read;
use std::path::Path;

use pcap_parser::pcapng::Block;
use pcap_parser::traits::PcapReaderIterator;
use pcap_parser::{create_reader, PcapBlockOwned, PcapError};

/// One captured frame.
pub struct Record<'a> {
    pub ts_sec: i64,
    pub ts_nsec: u32,
    pub orig_len: u32,
    pub linktype: i32,
    pub data: &'a [u8],
}

/// How the file ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum End {
    Clean,
    /// The last record is cut short (the capture was copied or written incompletely).
    Truncated,
    /// A record in the middle could not be parsed; reading stopped there.
    Corrupt(String),
}

/// What the walk over a classic pcap's record headers found, with the rules of
/// `pipeline/capfile.py` (`scan`), so both decoders word a damaged file alike.
#[derive(Clone, Debug, Default)]
pub struct PcapWalk {
    /// well-formed records before any damage
    pub records: u64,
    pub size: u64,
    /// byte offset of the first impossible record header, and why it is impossible
    pub damaged_at: Option<u64>,
    pub damage: Option<String>,
    /// bytes missing from a last record cut short
    pub tail_missing: u64,
    pub snaplen: u32,
}

#[derive(Clone, Copy)]
struct Interface {
    linktype: i32,
    snaplen: u32,
    units_per_sec: u64,
    offset_sec: i64,
}

const INITIAL_BUFFER: usize = 1 << 20;
// Wireshark refuses records above 256 KiB for most link types; pcapng blocks other
// than packets can be larger, so allow some room before calling a file corrupt.
const MAX_BUFFER: usize = 64 << 20;
const MAX_PCAP_RECORD: u32 = 262_144;

pub struct Reader {
    inner: Box<dyn PcapReaderIterator + Send>,
    state: Formats,
    capacity: usize,
    pub end: Option<End>,
    /// Some for a classic pcap (after its header)
    pub walk: Option<PcapWalk>,
    /// byte offset of the next block
    pos: u64,
    size: u64,
}

/// What earlier blocks said about the ones to come.
#[derive(Default)]
struct Formats {
    interfaces: Vec<Interface>,
    legacy: Option<(i32, bool)>, // link type, nanosecond timestamps
    /// the "modified" pcap format (24-byte record headers): no fast path
    modified_pcap: bool,
    big_endian_pcap: bool,
    big_endian_section: bool,
}

#[derive(Debug)]
pub enum OpenError {
    Io(String),
    NotACapture,
}

impl Reader {
    pub fn open(path: &Path) -> Result<Reader, OpenError> {
        let file = File::open(path).map_err(|e| OpenError::Io(e.to_string()))?;
        let size = file.metadata().map_err(|e| OpenError::Io(e.to_string()))?.len();
        let mut r = Self::from_read(file)?;
        r.size = size;
        Ok(r)
    }

    pub fn from_read<R: Read + Send + 'static>(r: R) -> Result<Reader, OpenError> {
        match create_reader(INITIAL_BUFFER, r) {
            Ok(inner) => Ok(Reader {
                inner,
                state: Formats::default(),
                capacity: INITIAL_BUFFER,
                end: None,
                walk: None,
                pos: 0,
                size: u64::MAX,
            }),
            Err(PcapError::ReadError) => Err(OpenError::Io("read error".into())),
            Err(_) => Err(OpenError::NotACapture),
        }
    }

    /// Calls `f` on each frame until the file ends; `self.end` then says how.
    /// `f` returns false to stop early (the caller's batch is full); call again to go on.
    pub fn for_each<F: FnMut(&Record) -> bool>(&mut self, mut f: F) {
        if self.end.is_some() {
            return;
        }
        loop {
            if !self.legacy_run(&mut f) {
                return;
            }
            if self.walk.is_some() && !self.check_pcap_record() {
                return;
            }
            let step = match self.inner.next() {
                Ok((offset, block)) => {
                    let keep_going = match block {
                        PcapBlockOwned::LegacyHeader(h) => {
                            self.state.legacy = Some((h.network.0, h.is_nanosecond_precision()));
                            self.state.big_endian_pcap = h.is_bigendian();
                            self.state.modified_pcap = h.is_modified_format();
                            self.walk = Some(PcapWalk { size: self.size, snaplen: h.snaplen, ..Default::default() });
                            true
                        }
                        PcapBlockOwned::Legacy(b) => {
                            if let Some(w) = self.walk.as_mut() {
                                w.records += 1;
                            }
                            let (linktype, ns) = self.state.legacy.unwrap_or((1, false));
                            let nsec = if ns { b.ts_usec } else { b.ts_usec.wrapping_mul(1000) };
                            f(&Record {
                                ts_sec: b.ts_sec as i64,
                                ts_nsec: nsec,
                                orig_len: b.origlen,
                                linktype,
                                data: b.data,
                            })
                        }
                        PcapBlockOwned::NG(block) => match self.state.ng_block(block, &mut f) {
                            Ok(keep_going) => keep_going,
                            Err(why) => {
                                // as Wireshark's reader: the file ends at the damage
                                self.end = Some(End::Corrupt(why));
                                false
                            }
                        },
                    };
                    Ok((offset, keep_going))
                }
                Err(e) => Err(classify(e)),
            };
            // A classic pcap record longer than any link type allows is corruption, not a
            // record to wait for (Wireshark stops there too, saying the file is damaged).
            let step = match step {
                Err(Step::Refill | Step::Grow | Step::Truncated) if self.state.legacy.is_some() => {
                    match self.legacy_caplen() {
                        Some(n) if n > MAX_PCAP_RECORD => Err(Step::Corrupt(format!(
                            "a record of {n} bytes, more than the {MAX_PCAP_RECORD} a pcap record may hold"
                        ))),
                        _ => step,
                    }
                }
                other => other,
            };
            if !self.advance(step) {
                return;
            }
        }
    }

    /// Acts on one step of the reader (`for_each`): moves past what was read, or ends,
    /// refills or grows the buffer; false when `for_each` returns (the caller's batch is
    /// full, or the file ended).
    fn advance(&mut self, step: Result<(usize, bool), Step>) -> bool {
        match step {
            Ok((offset, keep_going)) => {
                // Not `consume`: it moves the unread half of the buffer to its start
                // each time the read position passes the middle (a 512 KiB memmove per
                // MiB read, ~4 % of decoding); `refill` moves only the partial record left.
                self.inner.consume_noshift(offset);
                self.pos += offset as u64;
                if !keep_going {
                    return false;
                }
            }
            Err(Step::Eof) => {
                self.end = Some(End::Clean);
                return false;
            }
            Err(Step::Truncated) => {
                self.end = Some(End::Truncated);
                return false;
            }
            Err(Step::Refill) => {
                if self.inner.refill().is_err() {
                    self.end = Some(End::Corrupt("read error".into()));
                    return false;
                }
            }
            Err(Step::Grow) => {
                // A record larger than the buffer: grow, unless it is absurd.
                if self.capacity * 2 > MAX_BUFFER || !self.inner.grow(self.capacity * 2) {
                    self.end = Some(End::Corrupt(format!(
                        "a record claims more than {} MiB",
                        self.capacity >> 20
                    )));
                    return false;
                }
                self.capacity *= 2;
                if self.inner.refill().is_err() {
                    self.end = Some(End::Corrupt("read error".into()));
                    return false;
                }
            }
            Err(Step::Corrupt(msg)) => {
                self.end = Some(End::Corrupt(msg));
                return false;
            }
        }
        true
    }

    /// Checks the next classic pcap record header before pcap-parser reads it, with
    /// `capfile.scan`'s rules: a captured length above the limit, a fraction of a
    /// second >= 1 s or more bytes captured than sent is damage (reading stops there);
    /// a header or record running past the end of the file is a truncated tail.
    /// False when reading ends here (`self.end` says how).
    fn check_pcap_record(&mut self) -> bool {
        let Some(w) = self.walk.as_mut() else { return true };
        let left = self.size.saturating_sub(self.pos);
        if left == 0 {
            return true; // pcap-parser says Eof
        }
        if left < 16 {
            w.tail_missing = 16 - left;
            self.end = Some(End::Truncated);
            return false;
        }
        let d = self.inner.data();
        if d.len() < 16 {
            return true; // pcap-parser refills first
        }
        let ns = self.state.legacy.map(|l| l.1).unwrap_or(false);
        let incl = match record_header(d, self.state.big_endian_pcap, ns, w.snaplen) {
            Ok(incl) => incl,
            Err(why) => {
                w.damaged_at = Some(self.pos);
                w.damage = Some(why.clone());
                self.end = Some(End::Corrupt(why));
                return false;
            }
        };
        if 16 + incl as u64 > left {
            if incl > MAX_PCAP_RECORD {
                // no capture stopped mid-write leaves that much unwritten: damage mid-file
                let why = format!("a {incl}-byte record running past the end of the file");
                w.damaged_at = Some(self.pos);
                w.damage = Some(why.clone());
                self.end = Some(End::Corrupt(why));
            } else {
                w.tail_missing = 16 + incl as u64 - left;
                self.end = Some(End::Truncated);
            }
            return false;
        }
        true
    }

    /// Classic pcap: the records wholly in the buffer, each checked as
    /// `check_pcap_record` does and parsed by pcap-parser's frame parser, without a call
    /// through the boxed reader per record (~8 % of decoding). Whatever it does not take
    /// (a record running past the buffer, damage, the end) is left to the general loop.
    /// False when `f` asked to stop.
    fn legacy_run<F: FnMut(&Record) -> bool>(&mut self, f: &mut F) -> bool {
        let (Some((linktype, ns)), Some(w)) = (self.state.legacy, self.walk.as_mut()) else { return true };
        if self.state.modified_pcap {
            return true;
        }
        let be = self.state.big_endian_pcap;
        let parse = if be { pcap_parser::parse_pcap_frame_be } else { pcap_parser::parse_pcap_frame };
        let data = self.inner.data();
        let (mut off, mut go) = (0usize, true);
        while go {
            let rest = &data[off..];
            let Ok(incl) = record_header(rest, be, ns, w.snaplen) else { break };
            let end = 16 + incl as usize;
            if end > rest.len() {
                break;
            }
            let Ok((_, b)) = parse(&rest[..end]) else { break };
            w.records += 1;
            go = f(&Record {
                ts_sec: b.ts_sec as i64,
                ts_nsec: if ns { b.ts_usec } else { b.ts_usec.wrapping_mul(1000) },
                orig_len: b.origlen,
                linktype,
                data: b.data,
            });
            off += end;
        }
        self.inner.consume_noshift(off);
        self.pos += off as u64;
        go
    }

    /// The captured length in the next classic pcap record header, if a header is there.
    fn legacy_caplen(&self) -> Option<u32> {
        let d = self.inner.data();
        let b: [u8; 4] = d.get(8..12)?.try_into().ok()?;
        Some(if self.state.big_endian_pcap { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) })
    }
}

/// A classic pcap record header at the start of `d` (16 bytes or more) by
/// `capfile.scan`'s rules: its captured length, or why the header is impossible.
fn record_header(d: &[u8], be: bool, ns: bool, snaplen: u32) -> Result<u32, String> {
    let Some(h) = d.get(..16) else { return Err("a record header cut short".into()) };
    let u32_at = |o: usize| {
        let b = [h[o], h[o + 1], h[o + 2], h[o + 3]];
        if be { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
    };
    let (frac, incl, orig) = (u32_at(4), u32_at(8), u32_at(12));
    let per_s = if ns { 1_000_000_000 } else { 1_000_000 };
    let limit = if snaplen != 0 { snaplen.max(MAX_PCAP_RECORD) } else { MAX_PCAP_RECORD };
    if incl > limit {
        Err(format!("a {incl}-byte record, larger than the {limit}-byte maximum"))
    } else if frac >= per_s {
        Err(format!("a timestamp fraction of {frac} (>= 1 s)"))
    } else if incl > orig {
        Err(format!("{incl} bytes captured of a {orig}-byte packet"))
    } else {
        Ok(incl)
    }
}

impl Formats {
    /// Hands the block's frame (if any) to `f`; its verdict, or why the block is damage.
    fn ng_block<F: FnMut(&Record) -> bool>(&mut self, block: Block, f: &mut F) -> Result<bool, String> {
        Ok(match block {
            Block::SectionHeader(shb) => {
                // Interface ids are per section.
                self.interfaces.clear();
                self.big_endian_section = shb.big_endian();
                true
            }
            Block::InterfaceDescription(idb) => {
                let units = ts_units(idb.if_tsresol);
                self.interfaces.push(Interface {
                    linktype: idb.linktype.0,
                    snaplen: idb.snaplen,
                    units_per_sec: units,
                    offset_sec: idb.if_tsoffset,
                });
                true
            }
            Block::EnhancedPacket(epb) => {
                let iface = self.known_interface(epb.if_id)?;
                let ts = ((epb.ts_high as u64) << 32) | epb.ts_low as u64;
                let (sec, nsec) = split_ts(ts, iface.units_per_sec);
                let caplen = (epb.caplen as usize).min(epb.data.len());
                f(&Record {
                    ts_sec: sec as i64 + iface.offset_sec,
                    ts_nsec: nsec,
                    orig_len: epb.origlen,
                    linktype: iface.linktype,
                    data: &epb.data[..caplen],
                })
            }
            Block::SimplePacket(spb) => {
                // No timestamp in a simple packet block: tshark shows the epoch.
                let iface = self.interface(0);
                let mut caplen = (spb.origlen as usize).min(spb.data.len());
                if iface.snaplen != 0 {
                    caplen = caplen.min(iface.snaplen as usize);
                }
                f(&Record {
                    ts_sec: 0,
                    ts_nsec: 0,
                    orig_len: spb.origlen,
                    linktype: iface.linktype,
                    data: &spb.data[..caplen],
                })
            }
            Block::Unknown(ub) if ub.block_type == 2 || ub.block_type == 0x0200_0000 => {
                // Obsolete Packet Block (pcapng draft): if_id u16, drops u16, ts, caplen, len.
                let d = ub.data;
                if d.len() < 20 {
                    return Ok(true);
                }
                let be = self.big_endian_section;
                let u16_at = |o: usize| {
                    let b = [d[o], d[o + 1]];
                    if be { u16::from_be_bytes(b) } else { u16::from_le_bytes(b) }
                };
                let u32_at = |o: usize| {
                    let b = [d[o], d[o + 1], d[o + 2], d[o + 3]];
                    if be { u32::from_be_bytes(b) } else { u32::from_le_bytes(b) }
                };
                let iface = self.known_interface(u16_at(0) as u32)?;
                let ts = ((u32_at(4) as u64) << 32) | u32_at(8) as u64;
                let (sec, nsec) = split_ts(ts, iface.units_per_sec);
                let caplen = (u32_at(12) as usize).min(d.len() - 20);
                f(&Record {
                    ts_sec: sec as i64 + iface.offset_sec,
                    ts_nsec: nsec,
                    orig_len: u32_at(16),
                    linktype: iface.linktype,
                    data: &d[20..20 + caplen],
                })
            }
            _ => true, // name resolution, statistics, secrets, custom…: no frames
        })
    }

    /// A packet block's interface, which its section must have described (Wireshark's
    /// words when it has not).
    fn known_interface(&self, id: u32) -> Result<Interface, String> {
        match self.interfaces.get(id as usize) {
            Some(i) => Ok(*i),
            None => Err(format!(
                "pcapng: interface index {id} is not less than section interface count {}",
                self.interfaces.len()
            )),
        }
    }

    fn interface(&self, id: u32) -> Interface {
        self.interfaces.get(id as usize).copied().unwrap_or(Interface {
            linktype: -1,
            snaplen: 0,
            units_per_sec: 1_000_000,
            offset_sec: 0,
        })
    }
}

enum Step {
    Eof,
    Truncated,
    Refill,
    Grow,
    Corrupt(String),
}

fn classify(e: PcapError<&[u8]>) -> Step {
    match e {
        PcapError::Eof => Step::Eof,
        PcapError::UnexpectedEof => Step::Truncated,
        PcapError::Incomplete(_) => Step::Refill,
        PcapError::BufferTooSmall => Step::Grow,
        PcapError::ReadError => Step::Corrupt("read error".into()),
        other => Step::Corrupt(format!("{other:?}").chars().take(120).collect()),
    }
}

/// Time units per second from `if_tsresol` (default 10^6).
pub fn ts_units(tsresol: u8) -> u64 {
    let exp = (tsresol & 0x7f) as u32;
    if tsresol & 0x80 != 0 {
        if exp > 63 { 1_000_000 } else { 1u64 << exp }
    } else if exp > 19 {
        1_000_000
    } else {
        10u64.pow(exp)
    }
}

/// Seconds and nanoseconds as wiretap computes them (the fraction truncated to ns).
pub fn split_ts(ts: u64, units: u64) -> (u64, u32) {
    let sec = ts / units;
    let frac = ts % units;
    let nsec = ((frac as u128 * 1_000_000_000) / units as u128) as u32;
    (sec, nsec)
}

/// `sec + nsec / 1e9` rounded to the nearest f64, as tshark prints the time with
/// nine decimals and the tshark path parses that text: correctly rounded, so the
/// two decoders give bit-identical times.
pub fn epoch_f64(sec: i64, nsec: u32) -> f64 {
    if !(0..1i64 << 33).contains(&sec) {
        return sec as f64 + nsec as f64 * 1e-9;
    }
    if nsec == 0 {
        return sec as f64;
    }
    let n: u128 = sec as u128 * 1_000_000_000 + nsec as u128; // value = n / 1e9
    // Within an ulp of the answer. From 1 s on, the product's error (< 2^-53 s) stays
    // far below the sum's ulp, and a multiply is several times cheaper than a divide.
    let approx = if sec == 0 { nsec as f64 / 1e9 } else { sec as f64 + nsec as f64 * 1e-9 };
    // Is `approx` = m * 2^e the nearest f64 to n / 1e9? Compare 2 n 2^-e with the
    // midpoints (2m -/+ 1) 1e9 to its neighbours, exactly, in integers.
    let (m, e) = decompose(approx);
    if e < 0 && e > -100 && m != 1u128 << 52 {
        let t = (n << (-e) as u32) * 2;
        let lo = (2 * m - 1) * 1_000_000_000;
        let hi = (2 * m + 1) * 1_000_000_000;
        if lo < t && t < hi {
            return approx;
        }
        if (t == lo || t == hi) && m & 1 == 0 {
            return approx; // a tie goes to the even mantissa
        }
    }
    nearest_of_three(n, approx)
}

/// The slow path (a binade boundary, or `approx` one ulp off): the nearest of
/// `approx` and its two neighbours, ties to even.
fn nearest_of_three(n: u128, approx: f64) -> f64 {
    let cands = [next_down(approx), approx, next_up(approx)];
    let parts = cands.map(decompose);
    let e_min = parts.iter().map(|p| p.1).min().unwrap();
    if e_min >= 0 || -e_min > 100 {
        return approx;
    }
    let target = n << (-e_min) as u32;
    let mut best = 1usize;
    let mut best_d = u128::MAX;
    for (i, &(m, e)) in parts.iter().enumerate() {
        let v = (m << (e - e_min) as u32) * 1_000_000_000;
        let d = v.abs_diff(target);
        if d < best_d || (d == best_d && m & 1 == 0) {
            best = i;
            best_d = d;
        }
    }
    cands[best]
}

fn decompose(x: f64) -> (u128, i32) {
    let bits = x.to_bits();
    let exp = ((bits >> 52) & 0x7ff) as i32;
    let frac = bits & ((1u64 << 52) - 1);
    if exp == 0 {
        (frac as u128, -1074)
    } else {
        ((frac | (1u64 << 52)) as u128, exp - 1075)
    }
}

fn next_up(x: f64) -> f64 {
    f64::from_bits(x.to_bits() + 1)
}

fn next_down(x: f64) -> f64 {
    f64::from_bits(x.to_bits() - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn epoch_matches_decimal_parsing() {
        let cases = [
            (1_795_422_541u64, 989_443_000u32),
            (0, 1),
            (1, 1),
            (1, 999_999_999),
            (1_700_000_000, 123_456_789),
            (3, 500_000_000),
            (12345, 1_953_125),
        ];
        for (s, ns) in cases {
            let text = format!("{s}.{ns:09}");
            assert_eq!(epoch_f64(s as i64, ns), text.parse::<f64>().unwrap(), "{text}");
        }
        // a sweep over nanoseconds at two magnitudes
        for s in [0u64, 1, 7, 4_294_967_295, 1_700_000_000] {
            for ns in (0..1_000_000_000u32).step_by(777_777) {
                let text = format!("{s}.{ns:09}");
                assert_eq!(epoch_f64(s as i64, ns), text.parse::<f64>().unwrap(), "{text}");
            }
        }
    }

    #[test]
    fn epoch_matches_decimal_parsing_at_random() {
        // seconds from 0 to past 2^33 (the exact path's limit), at every magnitude
        let mut rng = crate::testgen::XorShift(0x6a09_e667_f3bc_c909);
        for _ in 0..200_000 {
            let bits = rng.below(35);
            let s = rng.below(1 << bits);
            let ns = rng.below(1_000_000_000) as u32;
            let text = format!("{s}.{ns:09}");
            assert_eq!(epoch_f64(s as i64, ns), text.parse::<f64>().unwrap(), "{text}");
        }
    }

    /// A little-endian µs pcap of `n` records of 60-1500 bytes, record i's timestamp i s.
    fn pcap(n: usize) -> (Vec<u8>, Vec<usize>) {
        let mut f = vec![0xd4, 0xc3, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 1, 0, 0, 0];
        let mut starts = Vec::new();
        for i in 0..n {
            let len = 60 + (i * 7919) % 1441;
            starts.push(f.len());
            for v in [i as u32, 0, len as u32, len as u32] {
                f.extend(v.to_le_bytes());
            }
            f.extend(std::iter::repeat_n(i as u8, len));
        }
        (f, starts)
    }

    fn read_all(bytes: Vec<u8>) -> (Vec<(i64, usize)>, Reader) {
        let mut r = Reader::from_read(std::io::Cursor::new(bytes)).unwrap();
        let mut got = Vec::new();
        // stopping every 1000 records, as a full chunk does
        while r.end.is_none() {
            let mut k = 0;
            r.for_each(|rec| {
                got.push((rec.ts_sec, rec.data.len()));
                k += 1;
                k < 1000
            });
        }
        (got, r)
    }

    #[test]
    fn records_across_buffer_refills_damage_and_a_cut_tail() {
        // ~2.3 MB: the 1 MiB buffer is refilled with records split across its end.
        let (f, starts) = pcap(3000);
        let (got, r) = read_all(f.clone());
        assert_eq!(r.end, Some(End::Clean));
        assert_eq!(got.len(), 3000);
        assert!(got.iter().enumerate().all(|(i, &(t, len))| t == i as i64 && len == 60 + (i * 7919) % 1441));
        assert_eq!(r.walk.as_ref().unwrap().records, 3000);

        // an impossible header (fraction >= 1 s) in the middle: the records before it, its offset
        let mut bad = f.clone();
        bad[starts[2222] + 4..starts[2222] + 8].copy_from_slice(&2_000_000u32.to_le_bytes());
        let (got, r) = read_all(bad);
        assert_eq!(got.len(), 2222);
        assert!(matches!(r.end, Some(End::Corrupt(_))));
        assert_eq!(r.walk.as_ref().unwrap().damaged_at, Some(starts[2222] as u64));

        // the last record cut short
        let (got, r) = read_all(f[..f.len() - 10].to_vec());
        assert_eq!((got.len(), r.end), (2999, Some(End::Truncated)));
    }

    #[test]
    fn ts_resolution() {
        assert_eq!(ts_units(6), 1_000_000);
        assert_eq!(ts_units(9), 1_000_000_000);
        assert_eq!(ts_units(0x80 | 20), 1 << 20);
        assert_eq!(split_ts(1_500_000, 1_000_000), (1, 500_000_000));
        assert_eq!(split_ts((3 << 20) + (1 << 19), 1 << 20), (3, 500_000_000));
    }
}

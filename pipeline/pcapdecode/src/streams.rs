//! TCP stream numbers equal to tshark's `tcp.stream`.
//!
//! tshark (4.0, with `tcp.analyze_sequence_numbers` on, as the pipeline runs it)
//! numbers conversations in order of their first frame. A conversation is an address
//! and port pair in either direction; a SYN (without ACK) whose sequence number
//! differs from the base sequence number already recorded for its direction starts a
//! new conversation on the same pair (port reuse after a close, or a new connection).
//! The base sequence number of a direction is set by its first segment (the SYN's
//! sequence number, or a non-SYN's minus one), or, before that, by the other
//! direction's first ACK (acknowledgement minus one). A SYN/ACK never starts one.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hash, Hasher};

#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Endpoint {
    addr: u128,
    v6: bool,
    port: u16,
}

#[derive(Clone, Copy, PartialEq, Eq)]
struct Key(Endpoint, Endpoint); // ordered: .0 <= .1

impl Hash for Key {
    fn hash<H: Hasher>(&self, h: &mut H) {
        for e in [&self.0, &self.1] {
            h.write_u64(e.addr as u64);
            h.write_u64((e.addr >> 64) as u64 ^ ((e.port as u64) << 1 | e.v6 as u64));
        }
    }
}

struct Conversation {
    stream: u32,
    /// its first packet came from the key's lower endpoint (direction 0 = from there)
    first_low: bool,
    base: [Option<u32>; 2], // base sequence number per direction
}

impl Conversation {
    /// The direction of a packet from the key's lower endpoint or not. With both
    /// endpoints equal, every packet is direction 0, as the first was.
    fn dir(&self, from_low: bool) -> usize {
        if self.first_low == from_low { 0 } else { 1 }
    }
}

/// FxHash-style hasher: the keys are fixed-size and not attacker-chosen in a way
/// that matters here (a hostile capture can only slow its own decoding).
#[derive(Default)]
pub struct FastHasher(u64);

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut b = [0u8; 8];
            b[..chunk.len()].copy_from_slice(chunk);
            self.write_u64(u64::from_le_bytes(b));
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = (self.0.rotate_left(5) ^ v).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_u128(&mut self, v: u128) {
        self.write_u64(v as u64);
        self.write_u64((v >> 64) as u64);
    }
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64)
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64)
    }
}

type FastMap<K> = HashMap<K, usize, BuildHasherDefault<FastHasher>>;

/// One family of keys: the latest conversation of each, and the last one looked up
/// (runs of packets of one conversation skip the hash).
struct Keys<K> {
    latest: FastMap<K>,
    last: Option<(K, usize)>,
}

impl<K> Default for Keys<K> {
    fn default() -> Self {
        Keys { latest: FastMap::default(), last: None }
    }
}

#[derive(Default)]
pub struct Streams {
    /// IPv4 pairs as one integer: each endpoint is address << 16 | port (48 bits), the
    /// lower one in the high half. Building and comparing the general key per packet was
    /// ~6 % of the decoder's time, and most captures never need it.
    v4: Keys<u128>,
    other: Keys<Key>,
    convs: Vec<Conversation>,
}

pub struct TcpMeta {
    pub flags: u16,
    pub seq: u32,
    pub ack: u32,
    /// tshark runs its sequence analysis (which records base sequence numbers) only
    /// when the IP payload holds the whole TCP header.
    pub has_seglen: bool,
}

const SYN: u16 = 0x02;
const ACK: u16 = 0x10;

impl Streams {
    /// The stream number of one segment, updating the conversation table.
    pub fn stream(&mut self, src: &[u8], dst: &[u8], sport: u16, dport: u16, m: &TcpMeta) -> u32 {
        let (idx, a_low) = match (<&[u8; 4]>::try_from(src), <&[u8; 4]>::try_from(dst)) {
            (Ok(s), Ok(d)) => {
                let a = (u32::from_be_bytes(*s) as u64) << 16 | sport as u64;
                let b = (u32::from_be_bytes(*d) as u64) << 16 | dport as u64;
                let a_low = a <= b;
                let (lo, hi) = if a_low { (a, b) } else { (b, a) };
                (find(&mut self.v4, &mut self.convs, (lo as u128) << 64 | hi as u128, a_low, m), a_low)
            }
            _ => {
                let (a, b) = (endpoint(src, sport), endpoint(dst, dport));
                let a_low = a <= b;
                let key = if a_low { Key(a, b) } else { Key(b, a) };
                (find(&mut self.other, &mut self.convs, key, a_low, m), a_low)
            }
        };
        let conv = &mut self.convs[idx];
        let dir = conv.dir(a_low);
        if m.has_seglen {
            if conv.base[dir].is_none() {
                conv.base[dir] = Some(if m.flags & SYN != 0 { m.seq } else { m.seq.wrapping_sub(1) });
            }
            if conv.base[1 - dir].is_none() && m.flags & ACK != 0 {
                conv.base[1 - dir] = Some(m.ack.wrapping_sub(1));
            }
        }
        conv.stream
    }

    pub fn count(&self) -> usize {
        self.convs.len()
    }
}

/// The conversation of `key` for a packet from its lower endpoint or not (`a_low`):
/// the latest one on the pair, or a new one for the pair's first packet or a SYN that
/// does not repeat the recorded base sequence number of its direction.
fn find<K: Copy + Eq + Hash>(keys: &mut Keys<K>, convs: &mut Vec<Conversation>, key: K, a_low: bool, m: &TcpMeta) -> usize {
    fn new_conversation<K: Eq + Hash>(keys: &mut Keys<K>, convs: &mut Vec<Conversation>, key: K, a_low: bool) -> usize {
        let idx = convs.len();
        convs.push(Conversation { stream: idx as u32, first_low: a_low, base: [None, None] });
        keys.latest.insert(key, idx);
        idx
    }
    let mut idx = match keys.last {
        Some((k, i)) if k == key => i,
        _ => match keys.latest.get(&key) {
            Some(&i) => i,
            None => new_conversation(keys, convs, key, a_low),
        },
    };
    if m.flags & (SYN | ACK) == SYN {
        let conv = &convs[idx];
        if conv.base[conv.dir(a_low)].is_some_and(|base| base != m.seq) {
            idx = new_conversation(keys, convs, key, a_low);
        }
    }
    keys.last = Some((key, idx));
    idx
}

fn endpoint(addr: &[u8], port: u16) -> Endpoint {
    // The two sizes by name: a copy of a length known only at run time (memset, memcpy,
    // then a wide load of what they wrote) cost ~10 % of decoding.
    let v = match addr.len() {
        4 => (u32::from_be_bytes([addr[0], addr[1], addr[2], addr[3]]) as u128) << 96,
        16 => u128::from_be_bytes(addr.try_into().unwrap()),
        _ => {
            let mut a = [0u8; 16];
            a[..addr.len()].copy_from_slice(addr);
            u128::from_be_bytes(a)
        }
    };
    Endpoint { addr: v, v6: addr.len() == 16, port }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(flags: u16, seq: u32, ack: u32) -> TcpMeta {
        TcpMeta { flags, seq, ack, has_seglen: true }
    }

    #[test]
    fn both_directions_share_a_stream_and_syn_reuse_starts_a_new_one() {
        let (c, s) = ([10, 0, 0, 2], [10, 0, 0, 1]);
        let mut st = Streams::default();
        assert_eq!(st.stream(&c, &s, 5000, 80, &m(SYN, 100, 0)), 0);
        assert_eq!(st.stream(&s, &c, 80, 5000, &m(SYN | ACK, 900, 101)), 0);
        assert_eq!(st.stream(&c, &s, 5000, 80, &m(SYN, 100, 0)), 0); // retransmitted SYN
        assert_eq!(st.stream(&c, &s, 5001, 80, &m(SYN, 1, 0)), 1);
        assert_eq!(st.stream(&c, &s, 5000, 80, &m(SYN, 7777, 0)), 2); // port reuse
        assert_eq!(st.stream(&s, &c, 80, 5000, &m(ACK, 901, 7778)), 2);
        assert_eq!(st.count(), 3);
    }

    /// source, destination, source port, destination port, header fields
    type Packet = (Vec<u8>, Vec<u8>, u16, u16, TcpMeta);

    /// The numbering as the module's doc states it, with a linear search over
    /// (address bytes, port) endpoints: no packed keys, caches or hashing.
    fn reference(pkts: &[Packet]) -> Vec<u32> {
        struct Conv {
            ends: [(Vec<u8>, u16); 2],
            first: (Vec<u8>, u16),
            base: [Option<u32>; 2],
        }
        let mut convs: Vec<Conv> = Vec::new();
        let mut out = Vec::new();
        for (src, dst, sp, dp, m) in pkts {
            let (a, b) = ((src.clone(), *sp), (dst.clone(), *dp));
            let same = |c: &Conv| (c.ends[0] == a && c.ends[1] == b) || (c.ends[0] == b && c.ends[1] == a);
            let mut idx = match convs.iter().rposition(same) {
                Some(i) => i,
                None => {
                    convs.push(Conv { ends: [a.clone(), b.clone()], first: a.clone(), base: [None, None] });
                    convs.len() - 1
                }
            };
            let mut dir = if convs[idx].first == a { 0 } else { 1 };
            if m.flags & (SYN | ACK) == SYN && convs[idx].base[dir].is_some_and(|x| x != m.seq) {
                convs.push(Conv { ends: [a.clone(), b.clone()], first: a.clone(), base: [None, None] });
                idx = convs.len() - 1;
                dir = 0;
            }
            let c = &mut convs[idx];
            if m.has_seglen {
                if c.base[dir].is_none() {
                    c.base[dir] = Some(if m.flags & SYN != 0 { m.seq } else { m.seq.wrapping_sub(1) });
                }
                if c.base[1 - dir].is_none() && m.flags & ACK != 0 {
                    c.base[1 - dir] = Some(m.ack.wrapping_sub(1));
                }
            }
            out.push(idx as u32);
        }
        out
    }

    #[test]
    fn numbering_equals_its_definition_on_generated_traffic() {
        // Few addresses (IPv4 and IPv6, some equal on both sides) and ports, so that
        // pairs repeat, SYNs reuse them and packets go both ways.
        let addrs: [Vec<u8>; 4] = [vec![10, 0, 0, 1], vec![10, 0, 0, 2], vec![0xfd; 16], {
            let mut a = vec![0u8; 16];
            a[15] = 1;
            a
        }];
        let mut rng = crate::testgen::XorShift(0xbb67_ae85_84ca_a73b);
        let mut streams_seen = 0;
        for _ in 0..300 {
            let n = 1 + rng.below(200) as usize;
            let pkts: Vec<_> = (0..n)
                .map(|_| {
                    let v6 = rng.below(4) == 0;
                    let pick = |r: &mut crate::testgen::XorShift| addrs[(r.below(2) + if v6 { 2 } else { 0 }) as usize].clone();
                    let (src, dst) = (pick(&mut rng), pick(&mut rng));
                    let flags = [SYN, SYN | ACK, ACK, 0][rng.below(4) as usize];
                    let meta = TcpMeta { flags, seq: rng.below(4) as u32, ack: rng.below(4) as u32, has_seglen: rng.below(8) != 0 };
                    (src, dst, 1 + rng.below(2) as u16, 1 + rng.below(2) as u16, meta)
                })
                .collect();
            let want = reference(&pkts);
            let mut st = Streams::default();
            let got: Vec<u32> = pkts.iter().map(|(s, d, sp, dp, m)| st.stream(s, d, *sp, *dp, m)).collect();
            assert_eq!(got, want);
            streams_seen += st.count();
        }
        assert!(streams_seen > 3000, "too few conversations generated: {streams_seen}");
    }

    #[test]
    fn base_from_the_other_sides_ack() {
        let (c, s) = ([10, 0, 0, 2], [10, 0, 0, 1]);
        let mut st = Streams::default();
        // Capture starts mid-connection with the server's ACK of client seq 500.
        assert_eq!(st.stream(&s, &c, 80, 5000, &m(ACK, 1, 500)), 0);
        // The client's SYN with seq 499 matches the recorded base (ack - 1): same stream.
        assert_eq!(st.stream(&c, &s, 5000, 80, &m(SYN, 499, 0)), 0);
        assert_eq!(st.stream(&c, &s, 5000, 80, &m(SYN, 42, 0)), 1);
    }
}

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

#[derive(Clone, Copy, PartialEq, Eq)]
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
    first: Endpoint,       // direction 0 = from this endpoint
    base: [Option<u32>; 2], // base sequence number per direction
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
    fn write_u16(&mut self, v: u16) {
        self.write_u64(v as u64)
    }
    fn write_u8(&mut self, v: u8) {
        self.write_u64(v as u64)
    }
}

#[derive(Default)]
pub struct Streams {
    latest: HashMap<Key, usize, BuildHasherDefault<FastHasher>>,
    convs: Vec<Conversation>,
    last: Option<(Key, usize)>, // runs of packets of one conversation skip the hash
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
        let a = endpoint(src, sport);
        let b = endpoint(dst, dport);
        let key = if (a.addr, a.v6, a.port) <= (b.addr, b.v6, b.port) { Key(a, b) } else { Key(b, a) };
        let mut idx = match self.last {
            Some((k, i)) if k == key => i,
            _ => match self.latest.get(&key) {
                Some(&i) => i,
                None => self.new_conversation(key, a),
            },
        };
        let mut dir = if self.convs[idx].first == a { 0 } else { 1 };
        if m.flags & (SYN | ACK) == SYN {
            if let Some(base) = self.convs[idx].base[dir] {
                if base != m.seq {
                    idx = self.new_conversation(key, a);
                    dir = 0;
                }
            }
        }
        self.last = Some((key, idx));
        let conv = &mut self.convs[idx];
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

    fn new_conversation(&mut self, key: Key, first: Endpoint) -> usize {
        let idx = self.convs.len();
        self.convs.push(Conversation { stream: idx as u32, first, base: [None, None] });
        self.latest.insert(key, idx);
        idx
    }

    pub fn count(&self) -> usize {
        self.convs.len()
    }
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

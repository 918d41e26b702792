//! One frame -> its IP and TCP header fields, through the link types captures use.
//!
//! `etherparse` reads the Ethernet, VLAN, Linux cooked v1, IPv4, IPv6 (with its
//! extension headers) and TCP headers; the other link headers (cooked v2, PPP, BSD
//! null/loopback, raw IP) are a few fixed bytes and are read here. Frames that are
//! not TCP over IP, IP fragments and malformed headers are classified, never fatal.
//!
//! Tunnels are opened as tshark opens them: IP in IP (4in4, 6in6, mixed), GRE (IP,
//! bridged Ethernet, MPLS or ERSPAN inside), IPv4's authentication header, on their UDP
//! ports VXLAN (4789), GENEVE (6081), GTP-U (2152), L2TPv2 (1701) and Teredo (3544), MPLS
//! label stacks, PPPoE sessions and 802.3 frames with LLC/SNAP. The addresses kept are
//! the innermost IP header's of each family, and `inner_v6` says which family is
//! innermost: the one the TCP segment rides in (tshark's `tcp.stream` keys on it too; its
//! `ip.src` lists every header's, and the pipeline reads the last). A row keeps only that
//! family's addresses (decoder.rs): with 6in4 or Teredo the outer IPv4 is the tunnel's.

use etherparse::{
    EtherType, Ethernet2HeaderSlice, IpNumber, Ipv4HeaderSlice, Ipv6ExtensionsSlice, Ipv6HeaderSlice,
    SingleVlanHeaderSlice, TcpHeaderSlice,
};

use crate::mptcp::{decode_options, MptcpFields};

// pcap link types (https://www.tcpdump.org/linktypes.html)
pub const LINKTYPE_NULL: i32 = 0;
pub const LINKTYPE_ETHERNET: i32 = 1;
pub const LINKTYPE_PPP: i32 = 9;
pub const LINKTYPE_RAW_BSD12: i32 = 12;
pub const LINKTYPE_RAW_BSD14: i32 = 14;
pub const LINKTYPE_PPP_HDLC: i32 = 50;
pub const LINKTYPE_RAW: i32 = 101;
pub const LINKTYPE_LOOP: i32 = 108;
pub const LINKTYPE_LINUX_SLL: i32 = 113;
pub const LINKTYPE_IPV4: i32 = 228;
pub const LINKTYPE_IPV6: i32 = 229;
pub const LINKTYPE_LINUX_SLL2: i32 = 276;

/// Why a frame gave no row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Skip {
    /// Not TCP over IPv4/IPv6 (ARP, UDP, ICMP, ...): expected, not a problem.
    NotTcp,
    /// An IPv4 or IPv6 fragment (not reassembled).
    Fragment,
    /// A header too short or inconsistent to read.
    Malformed,
    /// A link type the decoder does not read.
    LinkType,
}

/// The fields of one TCP segment the packets table holds.
#[derive(Default, Clone, Debug)]
pub struct Segment {
    pub ip4_src: Option<[u8; 4]>,
    pub ip4_dst: Option<[u8; 4]>,
    pub ip6_src: Option<[u8; 16]>,
    pub ip6_dst: Option<[u8; 16]>,
    /// the innermost IPv4 header's identification
    pub ip_id: Option<u16>,
    pub sport: u16,
    pub dport: u16,
    pub flags: u16,
    pub seq: u32,
    pub ack: u32,
    /// as sent (not verified); `None` when the snap length cut it
    pub checksum: Option<u16>,
    /// TCP payload length from the IP header's length (not the captured bytes), as
    /// tshark's `tcp.len`; `None` when the IP payload is shorter than the TCP header.
    pub payload_len: Option<u32>,
    /// The data offset is below 20 bytes: flags, ack and options are not shown.
    pub bogus_header: bool,
    /// The snap length left less than 16 bytes of TCP header: tshark shows the
    /// ports and nothing after them (not even the stream).
    pub ports_only: bool,
    /// The innermost IP header is IPv6 (4in6 and GRE over IPv6 keep the outer IPv6
    /// addresses beside the inner IPv4 ones: the stream is keyed by the inner).
    pub inner_v6: bool,
    pub mptcp: MptcpFields,
}

impl Segment {
    fn reset(&mut self) {
        self.ip4_src = None;
        self.ip4_dst = None;
        self.ip6_src = None;
        self.ip6_dst = None;
        self.ip_id = None;
        self.inner_v6 = false;
        self.mptcp.clear();
    }
}

/// Decodes `data` (a frame of link type `linktype`, `orig_len` bytes on the wire)
/// into `seg`. `seg` is reused between frames so its vectors keep their capacity.
pub fn decode(linktype: i32, data: &[u8], orig_len: u32, seg: &mut Segment) -> Result<(), Skip> {
    seg.reset();
    // The "reported" length past the link header: what the wire carried, which the
    // IP length is trimmed against (a snap length cuts the bytes, not the lengths).
    let wire_extra = (orig_len as usize).saturating_sub(data.len());
    match linktype {
        LINKTYPE_ETHERNET => ethernet(data, wire_extra, seg),
        LINKTYPE_LINUX_SLL => {
            // 16 bytes, the protocol (an EtherType for IP) last. Read by hand: etherparse's
            // slice refuses ARPHRD types it does not know, which Wireshark reads by protocol.
            if data.len() < 16 {
                return Err(Skip::Malformed);
            }
            let proto = u16::from_be_bytes([data[14], data[15]]);
            ether_payload(EtherType(proto), &data[16..], wire_extra, seg)
        }
        LINKTYPE_LINUX_SLL2 => {
            if data.len() < 20 {
                return Err(Skip::Malformed);
            }
            let proto = u16::from_be_bytes([data[0], data[1]]);
            ether_payload(EtherType(proto), &data[20..], wire_extra, seg)
        }
        LINKTYPE_RAW | LINKTYPE_RAW_BSD12 | LINKTYPE_RAW_BSD14 | LINKTYPE_IPV4 | LINKTYPE_IPV6 => {
            ip_by_version(data, wire_extra, seg)
        }
        LINKTYPE_NULL | LINKTYPE_LOOP => {
            if data.len() < 4 {
                return Err(Skip::Malformed);
            }
            let raw = [data[0], data[1], data[2], data[3]];
            // NULL: the capturing host's byte order (guess it as Wireshark does);
            // LOOP: network order.
            let family = if linktype == LINKTYPE_LOOP {
                u32::from_be_bytes(raw)
            } else {
                let le = u32::from_le_bytes(raw);
                if le & 0xffff_0000 != 0 { u32::from_be_bytes(raw) } else { le }
            };
            match family {
                2 => ipv4(&data[4..], wire_extra, seg),
                10 | 24 | 28 | 30 => ipv6(&data[4..], wire_extra, seg),
                _ => Err(Skip::NotTcp),
            }
        }
        LINKTYPE_PPP | LINKTYPE_PPP_HDLC => ppp(data, wire_extra, seg),
        _ => Err(Skip::LinkType),
    }
}

/// A PPP frame: the optional HDLC address and control, the protocol (1 or 2 bytes), IP.
fn ppp(data: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    let mut d = data;
    if d.len() >= 2 && d[0] == 0xff && d[1] == 0x03 {
        d = &d[2..]; // HDLC address and control
    }
    let (proto, rest) = match d {
        [p, rest @ ..] if p & 1 == 1 => (*p as u16, rest), // compressed protocol field
        [a, b, rest @ ..] => (u16::from_be_bytes([*a, *b]), rest),
        _ => return Err(Skip::Malformed),
    };
    match proto {
        0x0021 => ipv4(rest, wire_extra, seg),
        0x0057 => ipv6(rest, wire_extra, seg),
        _ => Err(Skip::NotTcp),
    }
}

/// An Ethernet frame: Ethernet II, or 802.3 (a length where the EtherType goes) with an
/// LLC/SNAP header (AA AA 03, an OUI, then the EtherType).
fn ethernet(data: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    let eth = Ethernet2HeaderSlice::from_slice(data).map_err(|_| Skip::Malformed)?;
    let rest = &data[eth.slice().len()..];
    let et = eth.ether_type();
    if et.0 > 1500 {
        return ether_payload(et, rest, wire_extra, seg);
    }
    match rest {
        [0xaa, 0xaa, 0x03, _, _, _, a, b, inner @ ..] => {
            ether_payload(EtherType(u16::from_be_bytes([*a, *b])), inner, wire_extra, seg)
        }
        _ => Err(Skip::NotTcp), // 802.3 with plain LLC (spanning tree, NetBIOS...)
    }
}

fn ether_payload(mut et: EtherType, mut d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    // 802.1Q, 802.1ad (QinQ) and the old 0x9100 tag, nested as deep as they go.
    while matches!(et, EtherType::VLAN_TAGGED_FRAME | EtherType::PROVIDER_BRIDGING | EtherType::VLAN_DOUBLE_TAGGED_FRAME) {
        let tag = SingleVlanHeaderSlice::from_slice(d).map_err(|_| Skip::Malformed)?;
        et = tag.ether_type();
        d = &d[tag.slice().len()..];
    }
    match et {
        EtherType::IPV4 => ipv4(d, wire_extra, seg),
        EtherType::IPV6 => ipv6(d, wire_extra, seg),
        EtherType(0x8847) | EtherType(0x8848) => mpls(d, wire_extra, seg),
        EtherType(0x8864) => pppoe_session(d, wire_extra, seg),
        _ => Err(Skip::NotTcp),
    }
}

/// MPLS: labels down to the bottom of the stack, then IP by its version nibble.
fn mpls(mut d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    loop {
        if d.len() < 4 {
            return Err(Skip::Malformed);
        }
        let bottom = d[2] & 0x01 == 1;
        d = &d[4..];
        if bottom {
            return ip_by_version(d, wire_extra, seg);
        }
    }
}

/// PPPoE session stage: 6 bytes of PPPoE header, then PPP's protocol field.
fn pppoe_session(d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    if d.len() < 8 {
        return Err(Skip::Malformed);
    }
    match u16::from_be_bytes([d[6], d[7]]) {
        0x0021 => ipv4(&d[8..], wire_extra, seg),
        0x0057 => ipv6(&d[8..], wire_extra, seg),
        _ => Err(Skip::NotTcp),
    }
}

/// GRE (RFC 2784/2890): flags, protocol, then the optional checksum, key and sequence.
fn gre(d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    if d.len() < 4 {
        return Err(Skip::Malformed);
    }
    let flags = d[0];
    if d[1] & 0x07 != 0 {
        return Err(Skip::NotTcp); // version 1 (PPTP's enhanced GRE): not opened
    }
    let mut at = 4;
    for bit in [0x80u8, 0x20, 0x10] {
        // C (checksum + reserved), K (key), S (sequence): 4 bytes each
        if flags & bit != 0 {
            at += 4;
        }
    }
    if d.len() < at {
        return Err(Skip::Malformed);
    }
    let inner = &d[at..];
    match u16::from_be_bytes([d[2], d[3]]) {
        // ERSPAN: type I (no GRE sequence number) carries the mirrored frame at once; type
        // II an 8-byte header before it (with a sequence number)
        0x88be if flags & 0x10 == 0 => inner_by_ethertype(0x6558, inner, seg),
        0x88be => inner_by_ethertype(0x6558, inner.get(8..).ok_or(Skip::Malformed)?, seg),
        // ERSPAN type III: 12 bytes, and 8 of platform-specific ones when its O bit is set
        0x22eb => {
            let o = inner.get(11).ok_or(Skip::Malformed)? & 0x01 == 1;
            inner_by_ethertype(0x6558, inner.get(if o { 20 } else { 12 }..).ok_or(Skip::Malformed)?, seg)
        }
        0x8847 | 0x8848 => mpls(inner, 0, seg),
        et => inner_by_ethertype(et, inner, seg),
    }
}

/// A tunnel's payload named by an EtherType: IP, or a bridged Ethernet frame.
fn inner_by_ethertype(et: u16, d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    match et {
        0x0800 => ipv4(d, 0, seg),
        0x86dd => ipv6(d, 0, seg),
        0x6558 => {
            let eth = Ethernet2HeaderSlice::from_slice(d).map_err(|_| Skip::Malformed)?;
            ether_payload(eth.ether_type(), &d[eth.slice().len()..], 0, seg)
        }
        _ => Err(Skip::NotTcp),
    }
}

/// UDP: the tunnels tshark opens on their registered ports, the lower of the two ports
/// tried first (as its UDP dissector does): VXLAN (4789), GENEVE (6081), GTP-U (2152),
/// L2TPv2 (1701) and Teredo (3544).
fn udp(d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    if d.len() < 8 {
        return Err(Skip::NotTcp);
    }
    let (a, b) = (u16::from_be_bytes([d[0], d[1]]), u16::from_be_bytes([d[2], d[3]]));
    let body = &d[8..];
    for port in [a.min(b), a.max(b)] {
        match port {
            4789 => return inner_by_ethertype(0x6558, body.get(8..).ok_or(Skip::Malformed)?, seg),
            6081 => return geneve(body, seg),
            2152 => return gtp_u(body, seg),
            1701 => return l2tp(body, seg),
            3544 => return teredo(body, seg),
            _ => {}
        }
    }
    Err(Skip::NotTcp)
}

/// GENEVE (RFC 8926): 8 bytes and the options, then the payload its protocol names.
fn geneve(d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    let [first, _, p0, p1, ..] = *d else { return Err(Skip::Malformed) };
    if first >> 6 != 0 {
        return Err(Skip::NotTcp); // a version this reader does not know
    }
    let at = 8 + (first & 0x3f) as usize * 4;
    inner_by_ethertype(u16::from_be_bytes([p0, p1]), d.get(at..).ok_or(Skip::Malformed)?, seg)
}

/// GTP-U (3GPP TS 29.281): a G-PDU (message type 255) carries the user's IP packet after
/// 8 bytes, 4 more when any of the E, S, PN flags is set, and its extension headers.
fn gtp_u(d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    let [flags, kind, ..] = *d else { return Err(Skip::Malformed) };
    if flags >> 5 != 1 || flags & 0x10 == 0 || kind != 0xff {
        return Err(Skip::NotTcp); // not GTPv1-U, or a signalling message (echo, end marker...)
    }
    let mut at = 8;
    if flags & 0x07 != 0 {
        let next_at = *d.get(11).ok_or(Skip::Malformed)?;
        let mut next = if flags & 0x04 != 0 { next_at } else { 0 };
        at = 12;
        while next != 0 {
            let units = *d.get(at).ok_or(Skip::Malformed)? as usize;
            if units == 0 {
                return Err(Skip::Malformed);
            }
            next = *d.get(at + units * 4 - 1).ok_or(Skip::Malformed)?;
            at += units * 4;
        }
    }
    ip_by_version(d.get(at..).ok_or(Skip::Malformed)?, 0, seg)
}

/// L2TPv2 (RFC 2661) data messages: the header its flags size, then PPP.
fn l2tp(d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    let [f0, f1, ..] = *d else { return Err(Skip::Malformed) };
    let flags = u16::from_be_bytes([f0, f1]);
    if flags & 0x000f != 2 || flags & 0x8000 != 0 {
        return Err(Skip::NotTcp); // not version 2, or a control message
    }
    let mut at = 2 + if flags & 0x4000 != 0 { 2 } else { 0 } + 4; // length, tunnel and session ids
    if flags & 0x0800 != 0 {
        at += 4; // Ns, Nr
    }
    if flags & 0x0200 != 0 {
        let off = d.get(at..at + 2).ok_or(Skip::Malformed)?;
        at += 2 + u16::from_be_bytes([off[0], off[1]]) as usize;
    }
    ppp(d.get(at..).ok_or(Skip::Malformed)?, 0, seg)
}

/// Teredo (RFC 4380): IPv6 over UDP, after an optional authentication indicator and an
/// optional origin indication.
fn teredo(mut d: &[u8], seg: &mut Segment) -> Result<(), Skip> {
    if let [0x00, 0x01, id_len, au_len, ..] = *d {
        d = d.get(4 + id_len as usize + au_len as usize + 9..).ok_or(Skip::Malformed)?;
    }
    if let [0x00, 0x00, ..] = *d {
        d = d.get(8..).ok_or(Skip::Malformed)?;
    }
    match d.first().map(|b| b >> 4) {
        Some(6) => ipv6(d, 0, seg),
        _ => Err(Skip::NotTcp),
    }
}

/// IPv4's authentication header (RFC 4302): its next header, after (length + 2) × 4
/// bytes. (In IPv6 it is an extension header, which the IPv6 reader walks.)
fn ah(d: &[u8], reported: usize, seg: &mut Segment) -> Result<(), Skip> {
    let [next, units, ..] = *d else { return Err(Skip::Malformed) };
    let len = (units as usize + 2) * 4;
    let rest = d.get(len..).ok_or(Skip::Malformed)?;
    ip_payload(IpNumber(next), rest, reported.checked_sub(len).ok_or(Skip::Malformed)?, seg)
}

/// What an IP header's protocol (or last extension's next header) names.
fn ip_payload(proto: IpNumber, d: &[u8], reported: usize, seg: &mut Segment) -> Result<(), Skip> {
    match proto {
        IpNumber::TCP => tcp(d, reported, seg),
        IpNumber::IPV4 => ipv4(d, reported.saturating_sub(d.len()), seg),
        IpNumber::IPV6 => ipv6(d, reported.saturating_sub(d.len()), seg),
        IpNumber::GRE => gre(d, seg),
        IpNumber::UDP => udp(d, seg),
        IpNumber::AUTHENTICATION_HEADER => ah(d, reported, seg),
        _ => Err(Skip::NotTcp),
    }
}

fn ip_by_version(d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    match d.first().map(|b| b >> 4) {
        Some(4) => ipv4(d, wire_extra, seg),
        Some(6) => ipv6(d, wire_extra, seg),
        Some(_) => Err(Skip::NotTcp),
        None => Err(Skip::Malformed),
    }
}

fn ipv4(d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    let ip = Ipv4HeaderSlice::from_slice(d).map_err(|_| Skip::Malformed)?;
    let hlen = ip.slice().len();
    let mut total = ip.total_len() as usize;
    if total == 0 {
        // TSO super-packet captured before segmentation: Wireshark takes the frame's length.
        total = d.len() + wire_extra;
    }
    if total < hlen {
        return Err(Skip::Malformed);
    }
    // an inner header replaces an outer one: the innermost is the TCP segment's
    seg.ip4_src = Some(ip.source());
    seg.ip4_dst = Some(ip.destination());
    seg.ip_id = Some(ip.identification());
    seg.inner_v6 = false; // an inner header, read after this one, says so again
    if ip.is_fragmenting_payload() {
        return Err(Skip::Fragment);
    }
    let captured = &d[hlen..d.len().min(total)];
    ip_payload(ip.protocol(), captured, total - hlen, seg)
}

fn ipv6(d: &[u8], wire_extra: usize, seg: &mut Segment) -> Result<(), Skip> {
    let _ = wire_extra;
    let ip = Ipv6HeaderSlice::from_slice(d).map_err(|_| Skip::Malformed)?;
    seg.ip6_src = Some(ip.source());
    seg.ip6_dst = Some(ip.destination());
    seg.inner_v6 = true;
    let payload_len = ip.payload_length() as usize;
    if payload_len == 0 {
        return Err(Skip::Malformed); // jumbogram or bogus
    }
    let body = &d[40..d.len().min(40 + payload_len)];
    let (exts, next, rest) = Ipv6ExtensionsSlice::from_slice(ip.next_header(), body).map_err(|_| Skip::Malformed)?;
    if exts.is_fragmenting_payload() {
        return Err(Skip::Fragment);
    }
    let ext_len = body.len() - rest.len();
    let reported = payload_len.checked_sub(ext_len).ok_or(Skip::Malformed)?;
    ip_payload(next, rest, reported, seg)
}

/// `d`: the captured TCP bytes; `reported`: the TCP segment's length per the IP header.
///
/// A snap length may cut the header itself: tshark then shows the fixed fields that
/// were captured and the options up to the cut (tests/test_decoders.py holds the
/// native decoder to that), so the packet still counts, with what it lost said by
/// its `cap_bytes` (pipeline/sanity.py).
fn tcp(d: &[u8], reported: usize, seg: &mut Segment) -> Result<(), Skip> {
    seg.bogus_header = false;
    seg.ports_only = false;
    if let Ok(h) = TcpHeaderSlice::from_slice(d) {
        // The whole header captured (the usual case).
        let s = h.slice();
        seg.sport = h.source_port();
        seg.dport = h.destination_port();
        seg.seq = h.sequence_number();
        seg.ack = h.acknowledgment_number();
        seg.flags = u16::from_be_bytes([s[12], s[13]]) & 0x0fff;
        seg.checksum = Some(h.checksum());
        seg.payload_len = reported.checked_sub(s.len()).map(|n| n as u32);
        if s.len() <= reported {
            decode_options(&s[20..], s.len() - 20, &mut seg.mptcp);
        }
        return Ok(());
    }
    if d.len() < 4 {
        return Err(Skip::Malformed);
    }
    seg.sport = u16::from_be_bytes([d[0], d[1]]);
    seg.dport = u16::from_be_bytes([d[2], d[3]]);
    if d.len() < 16 {
        // Not even the window: tshark stops before the stream is known.
        seg.ports_only = true;
        seg.checksum = None;
        return Ok(());
    }
    seg.sport = u16::from_be_bytes([d[0], d[1]]);
    seg.dport = u16::from_be_bytes([d[2], d[3]]);
    seg.seq = u32::from_be_bytes([d[4], d[5], d[6], d[7]]);
    seg.ack = u32::from_be_bytes([d[8], d[9], d[10], d[11]]);
    seg.flags = u16::from_be_bytes([d[12], d[13]]) & 0x0fff;
    seg.checksum = d.get(16..18).map(|c| u16::from_be_bytes([c[0], c[1]]));
    let hlen = (d[12] >> 4) as usize * 4;
    seg.payload_len = reported.checked_sub(hlen).map(|n| n as u32);
    if hlen < 20 {
        // A data offset below 20 bytes: tshark still shows the ports, sequence number,
        // stream and length (all bytes after the offset) and stops there.
        seg.bogus_header = true;
        seg.checksum = None;
        return Ok(());
    }
    if hlen > reported {
        // The header runs past the segment: tshark shows the fixed fields, no options.
        return Ok(());
    }
    if d.len() > 20 {
        decode_options(&d[20..d.len().min(hlen)], hlen - 20, &mut seg.mptcp);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tcp_syn() -> Vec<u8> {
        let mut t = vec![0u8; 20];
        t[0..2].copy_from_slice(&1234u16.to_be_bytes());
        t[2..4].copy_from_slice(&80u16.to_be_bytes());
        t[4..8].copy_from_slice(&7u32.to_be_bytes());
        t[12] = 5 << 4;
        t[13] = 0x02;
        t
    }

    fn ipv4_tcp(payload: usize) -> Vec<u8> {
        let t = tcp_syn();
        let mut ip = vec![0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2];
        let total = (20 + t.len() + payload) as u16;
        ip[2..4].copy_from_slice(&total.to_be_bytes());
        ip.extend(t);
        ip.extend(vec![b'x'; payload]);
        ip
    }

    #[test]
    fn ethernet_with_two_vlan_tags() {
        let mut f = vec![0u8; 12];
        f.extend([0x88, 0xa8, 0, 1, 0x81, 0x00, 0, 2, 0x08, 0x00]);
        f.extend(ipv4_tcp(10));
        let mut seg = Segment::default();
        decode(LINKTYPE_ETHERNET, &f, f.len() as u32, &mut seg).unwrap();
        assert_eq!((seg.sport, seg.dport, seg.payload_len, seg.flags), (1234, 80, Some(10), 2));
        assert_eq!(seg.ip4_src, Some([10, 0, 0, 1]));
    }

    #[test]
    fn snap_length_keeps_the_ip_length() {
        let f = ipv4_tcp(1000);
        let mut seg = Segment::default();
        decode(LINKTYPE_RAW, &f[..60], f.len() as u32, &mut seg).unwrap();
        assert_eq!(seg.payload_len, Some(1000));
    }

    #[test]
    fn null_loopback_both_orders_and_fragments() {
        let mut seg = Segment::default();
        for head in [[2u8, 0, 0, 0], [0, 0, 0, 2]] {
            let mut f = head.to_vec();
            f.extend(ipv4_tcp(0));
            decode(LINKTYPE_NULL, &f, f.len() as u32, &mut seg).unwrap();
        }
        let mut frag = ipv4_tcp(0);
        frag[6] = 0x20; // more fragments
        assert_eq!(decode(LINKTYPE_RAW, &frag, frag.len() as u32, &mut seg), Err(Skip::Fragment));
        assert_eq!(decode(LINKTYPE_RAW, &frag[..10], 10, &mut seg), Err(Skip::Malformed));
        assert_eq!(decode(147, &frag, frag.len() as u32, &mut seg), Err(Skip::LinkType));
    }
}

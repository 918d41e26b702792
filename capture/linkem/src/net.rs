//! AF_PACKET sockets bound to one interface, their receive rings (PACKET_MMAP,
//! TPACKET_V2: frames are read from shared memory, no system call per frame),
//! kernel receive timestamps, and clocks.

use std::ffi::CString;
use std::io;
use std::mem;
use std::sync::atomic::{AtomicU32, Ordering};

pub const VNET_HDR_LEN: usize = 10; // struct virtio_net_hdr
const PACKET_VNET_HDR: libc::c_int = 15;
const PACKET_QDISC_BYPASS: libc::c_int = 20;
const PACKET_IGNORE_OUTGOING: libc::c_int = 23;
const PACKET_RX_RING: libc::c_int = 5;
const PACKET_COPY_THRESH: libc::c_int = 7;
const PACKET_VERSION: libc::c_int = 10;
const TPACKET_V2: libc::c_int = 1;
const TP_STATUS_KERNEL: u32 = 0;
const TP_STATUS_USER: u32 = 1;
const TP_STATUS_COPY: u32 = 2;
const VIRTIO_NET_HDR_F_NEEDS_CSUM: u8 = 1;

pub fn clock_ns(clock: libc::clockid_t) -> i64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64
}

#[inline]
pub fn mono_ns() -> i64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// realtime - monotonic, sampled with the tightest bracket of a few tries.
pub fn realtime_offset_ns() -> i64 {
    let mut best = (i64::MAX, 0);
    for _ in 0..20 {
        let a = mono_ns();
        let r = clock_ns(libc::CLOCK_REALTIME);
        let b = mono_ns();
        if b - a < best.0 {
            best = (b - a, r - (a + (b - a) / 2));
        }
    }
    best.1
}

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn setopt(fd: i32, level: i32, name: i32, val: libc::c_int) -> io::Result<()> {
    cvt(unsafe {
        libc::setsockopt(fd, level, name, &val as *const _ as *const libc::c_void, mem::size_of::<libc::c_int>() as u32)
    })
    .map(|_| ())
}

pub struct PacketSocket {
    pub fd: i32,
    pub ifname: String,
    ring: Option<RxRing>,
}

pub struct Received {
    /// Bytes in the buffer, virtio_net_hdr included.
    pub len: usize,
    /// Kernel receive time (CLOCK_REALTIME ns), if the kernel gave one.
    pub kernel_ts: Option<i64>,
}

impl PacketSocket {
    /// Opens `ifname`; frames are received through a PACKET_MMAP ring (`next_frame`).
    pub fn open(ifname: &str) -> io::Result<PacketSocket> {
        let cname = CString::new(ifname).map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "bad interface name"))?;
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(io::Error::new(io::ErrorKind::NotFound, format!("no interface {}", ifname)));
        }
        // Protocol 0: receive nothing until bound to the interface (no frames
        // from other interfaces can sneak in between socket() and bind()).
        let fd = cvt(unsafe { libc::socket(libc::AF_PACKET, libc::SOCK_RAW | libc::SOCK_CLOEXEC, 0) })?;
        let mut s = PacketSocket { fd, ifname: ifname.to_string(), ring: None };
        setopt(fd, libc::SOL_PACKET, PACKET_VNET_HDR, 1)?;
        let _ = setopt(fd, libc::SOL_PACKET, PACKET_IGNORE_OUTGOING, 1); // Linux >= 4.20; also filtered below
        let _ = setopt(fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1);
        if setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUFFORCE, 16 << 20).is_err() {
            let _ = setopt(fd, libc::SOL_SOCKET, libc::SO_RCVBUF, 16 << 20);
        }
        if setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUFFORCE, 8 << 20).is_err() {
            let _ = setopt(fd, libc::SOL_SOCKET, libc::SO_SNDBUF, 8 << 20);
        }
        setopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)?;
        let mut sll: libc::sockaddr_ll = unsafe { mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as u16;
        sll.sll_protocol = (libc::ETH_P_ALL as u16).to_be();
        sll.sll_ifindex = ifindex as i32;
        cvt(unsafe { libc::bind(fd, &sll as *const _ as *const libc::sockaddr, mem::size_of::<libc::sockaddr_ll>() as u32) })?;
        let mut mr: libc::packet_mreq = unsafe { mem::zeroed() };
        mr.mr_ifindex = ifindex as i32;
        mr.mr_type = libc::PACKET_MR_PROMISC as u16;
        cvt(unsafe {
            libc::setsockopt(fd, libc::SOL_PACKET, libc::PACKET_ADD_MEMBERSHIP, &mr as *const _ as *const libc::c_void, mem::size_of::<libc::packet_mreq>() as u32)
        })?;
        s.ring = Some(RxRing::open(fd)?);
        Ok(s)
    }

    /// The next received frame from the ring, if any (never blocks). `buf`
    /// receives the frame with its virtio_net_hdr. Frames larger than a ring
    /// slot are fetched whole from the socket queue (PACKET_COPY_THRESH).
    pub fn next_frame(&mut self, buf: &mut Vec<u8>) -> io::Result<Option<Received>> {
        loop {
            let slot = match &self.ring {
                Some(r) => r.slot(r.cur),
                None => return Ok(None),
            };
            let status_word = slot as *const AtomicU32;
            // Acquire: the slot's bytes are valid once its status says USER.
            let status = unsafe { (*status_word).load(Ordering::Acquire) };
            if status & TP_STATUS_USER == 0 {
                return Ok(None);
            }
            let h = unsafe { std::ptr::read(slot as *const Tpacket2Hdr) };
            let sll = unsafe { std::ptr::read_unaligned(slot.add(SLL_OFFSET) as *const libc::sockaddr_ll) };
            let mut got = None;
            if sll.sll_pkttype != libc::PACKET_OUTGOING as u8 {
                let ts = h.tp_sec as i64 * 1_000_000_000 + h.tp_nsec as i64;
                let kernel_ts = if ts > 0 { Some(ts) } else { None };
                if status & TP_STATUS_COPY != 0 || h.tp_snaplen < h.tp_len {
                    // too big for a slot: the whole frame waits in the socket queue
                    buf.resize(VNET_HDR_LEN + 65536 + 256, 0);
                    if let Some(r) = self.recv_flags(buf, libc::MSG_DONTWAIT)? {
                        buf.truncate(r.len);
                        got = Some(Received { len: r.len, kernel_ts: r.kernel_ts.or(kernel_ts) });
                    }
                } else {
                    let start = h.tp_mac as usize - VNET_HDR_LEN;
                    let data = unsafe { std::slice::from_raw_parts(slot.add(start), VNET_HDR_LEN + h.tp_snaplen as usize) };
                    buf.clear();
                    buf.extend_from_slice(data);
                    got = Some(Received { len: buf.len(), kernel_ts });
                }
            }
            unsafe { (*status_word).store(TP_STATUS_KERNEL, Ordering::Release) };
            let r = self.ring.as_mut().unwrap();
            r.cur = (r.cur + 1) % r.frames;
            if got.is_some() {
                return Ok(got);
            }
        }
    }

    /// Receives one incoming frame from the socket queue (outgoing ones are
    /// skipped). Ok(None) when there is none / on interruption.
    fn recv_flags(&self, buf: &mut [u8], flags: libc::c_int) -> io::Result<Option<Received>> {
        loop {
            let mut sll: libc::sockaddr_ll = unsafe { mem::zeroed() };
            let mut iov = libc::iovec { iov_base: buf.as_mut_ptr() as *mut libc::c_void, iov_len: buf.len() };
            let mut cbuf = [0u64; 16];
            let mut msg: libc::msghdr = unsafe { mem::zeroed() };
            msg.msg_name = &mut sll as *mut _ as *mut libc::c_void;
            msg.msg_namelen = mem::size_of::<libc::sockaddr_ll>() as u32;
            msg.msg_iov = &mut iov;
            msg.msg_iovlen = 1;
            msg.msg_control = cbuf.as_mut_ptr() as *mut libc::c_void;
            msg.msg_controllen = mem::size_of_val(&cbuf) as _;
            let n = unsafe { libc::recvmsg(self.fd, &mut msg, flags) };
            if n < 0 {
                let e = io::Error::last_os_error();
                return match e.raw_os_error() {
                    Some(libc::EAGAIN) | Some(libc::EINTR) => Ok(None),
                    _ => Err(e),
                };
            }
            if sll.sll_pkttype == libc::PACKET_OUTGOING as u8 {
                continue;
            }
            let mut kernel_ts = None;
            unsafe {
                let mut c = libc::CMSG_FIRSTHDR(&msg);
                while !c.is_null() {
                    if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                        let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                        let v = ts.tv_sec as i64 * 1_000_000_000 + ts.tv_nsec as i64;
                        if v > 0 {
                            kernel_ts = Some(v);
                        }
                    }
                    c = libc::CMSG_NXTHDR(&msg, c);
                }
            }
            return Ok(Some(Received { len: n as usize, kernel_ts }));
        }
    }

    pub fn send(&self, buf: &[u8]) -> io::Result<()> {
        let n = unsafe { libc::send(self.fd, buf.as_ptr() as *const libc::c_void, buf.len(), 0) };
        if n < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    /// (packets received, packets dropped by the kernel for lack of buffer)
    /// since the last call.
    pub fn stats(&self) -> (u32, u32) {
        let mut st: libc::tpacket_stats = unsafe { mem::zeroed() };
        let mut len = mem::size_of::<libc::tpacket_stats>() as u32;
        unsafe { libc::getsockopt(self.fd, libc::SOL_PACKET, libc::PACKET_STATISTICS, &mut st as *mut _ as *mut libc::c_void, &mut len) };
        (st.tp_packets, st.tp_drops)
    }
}

impl Drop for PacketSocket {
    fn drop(&mut self) {
        self.ring = None;
        unsafe { libc::close(self.fd) };
    }
}

#[repr(C)]
#[derive(Clone, Copy)]
struct Tpacket2Hdr {
    tp_status: u32,
    tp_len: u32,
    tp_snaplen: u32,
    tp_mac: u16,
    tp_net: u16,
    tp_sec: u32,
    tp_nsec: u32,
    tp_vlan_tci: u16,
    tp_vlan_tpid: u16,
    tp_padding: [u8; 4],
}
/// Where the frame's sockaddr_ll sits in a slot (TPACKET_ALIGN of the header).
const SLL_OFFSET: usize = (mem::size_of::<Tpacket2Hdr>() + 15) & !15;

#[repr(C)]
struct TpacketReq {
    tp_block_size: u32,
    tp_block_nr: u32,
    tp_frame_size: u32,
    tp_frame_nr: u32,
}

/// Ring slots: 4 KiB each (a 1514-byte frame with headers fits; larger frames
/// come through the socket queue), 4096 of them: ~0.5 s of 100 Mbit/s.
const FRAME_SIZE: usize = 4096;
const BLOCK_SIZE: usize = 1 << 20;
const BLOCK_NR: usize = 16;

struct RxRing {
    base: *mut u8,
    size: usize,
    frames: usize,
    cur: usize,
}

// The ring belongs to one socket, used by one thread at a time.
unsafe impl Send for RxRing {}

impl RxRing {
    fn open(fd: i32) -> io::Result<RxRing> {
        setopt(fd, libc::SOL_PACKET, PACKET_VERSION, TPACKET_V2)?;
        // frames that do not fit a slot also go to the socket queue, whole
        setopt(fd, libc::SOL_PACKET, PACKET_COPY_THRESH, 1)?;
        let req = TpacketReq {
            tp_block_size: BLOCK_SIZE as u32,
            tp_block_nr: BLOCK_NR as u32,
            tp_frame_size: FRAME_SIZE as u32,
            tp_frame_nr: (BLOCK_SIZE / FRAME_SIZE * BLOCK_NR) as u32,
        };
        cvt(unsafe {
            libc::setsockopt(fd, libc::SOL_PACKET, PACKET_RX_RING, &req as *const _ as *const libc::c_void, mem::size_of::<TpacketReq>() as u32)
        })?;
        let size = BLOCK_SIZE * BLOCK_NR;
        let base = unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED | libc::MAP_LOCKED, fd, 0) };
        let base = if base == libc::MAP_FAILED {
            // MAP_LOCKED needs RLIMIT_MEMLOCK; locking only avoids page faults
            unsafe { libc::mmap(std::ptr::null_mut(), size, libc::PROT_READ | libc::PROT_WRITE, libc::MAP_SHARED, fd, 0) }
        } else {
            base
        };
        if base == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        Ok(RxRing { base: base as *mut u8, size, frames: req.tp_frame_nr as usize, cur: 0 })
    }

    fn slot(&self, i: usize) -> *mut u8 {
        // frames never straddle blocks: BLOCK_SIZE is a multiple of FRAME_SIZE
        unsafe { self.base.add(i * FRAME_SIZE) }
    }
}

impl Drop for RxRing {
    fn drop(&mut self) {
        unsafe { libc::munmap(self.base as *mut libc::c_void, self.size) };
    }
}

/// If the frame (after its virtio_net_hdr) still needs its L4 checksum (the
/// sender relied on checksum offload, as veth does), compute it in software
/// so the forwarded frame is valid on the wire, and clear the flag.
pub fn complete_checksum(buf: &mut [u8]) {
    if buf.len() < VNET_HDR_LEN || buf[0] & VIRTIO_NET_HDR_F_NEEDS_CSUM == 0 {
        return;
    }
    let start = u16::from_le_bytes([buf[6], buf[7]]) as usize;
    let off = u16::from_le_bytes([buf[8], buf[9]]) as usize;
    let gso_type = buf[1];
    let frame = &mut buf[VNET_HDR_LEN..];
    if gso_type != 0 || start + off + 2 > frame.len() {
        return; // GSO frame (offloads left on): pass the header through untouched
    }
    // The field already holds the pseudo-header sum; fold in the rest.
    let data = &frame[start..];
    let mut sum: u64 = 0;
    let mut chunks = data.chunks_exact(8);
    for c in &mut chunks {
        let v = u64::from_be_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
        sum = sum.wrapping_add(v >> 32).wrapping_add(v & 0xffff_ffff);
    }
    let rest = chunks.remainder();
    let mut i = 0;
    while i + 1 < rest.len() {
        sum += u16::from_be_bytes([rest[i], rest[i + 1]]) as u64;
        i += 2;
    }
    if i < rest.len() {
        sum += (rest[i] as u64) << 8;
    }
    while sum > 0xffff {
        sum = (sum & 0xffff) + (sum >> 16);
    }
    let mut c = !(sum as u16);
    if c == 0 {
        c = 0xffff; // same value in ones' complement; for UDP 0 would mean "no checksum"
    }
    frame[start + off..start + off + 2].copy_from_slice(&c.to_be_bytes());
    buf[0] &= !VIRTIO_NET_HDR_F_NEEDS_CSUM;
}

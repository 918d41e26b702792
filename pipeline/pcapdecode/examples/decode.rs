//! Decoder throughput on one core: `cargo run --release --example decode -- FILE`
//! (the packets table's columns, as pipeline/schema.py declares them; batches dropped).
use std::time::Instant;

use pcapdecode::decoder::{ColumnSpec, Decoder};

const FIELDS: &[(&str, &str, &str)] = &[
    ("frame.number", "frame", "u32"),
    ("frame.time_epoch", "time_s", "f64"),
    ("frame.len", "frame_bytes", "u32"),
    ("frame.cap_len", "cap_bytes", "u32"),
    ("ip.src", "ip_src", "str"),
    ("ip.dst", "ip_dst", "str"),
    ("ipv6.src", "ip6_src", "str"),
    ("ipv6.dst", "ip6_dst", "str"),
    ("ip.id", "ip_id", "u16"),
    ("tcp.stream", "stream", "u32"),
    ("tcp.srcport", "sport", "u16"),
    ("tcp.dstport", "dport", "u16"),
    ("tcp.flags", "tcp_flags", "u16"),
    ("tcp.seq", "seq", "u32"),
    ("tcp.ack", "ack", "u32"),
    ("tcp.len", "payload_bytes", "u32"),
    ("tcp.checksum", "tcp_checksum", "u16"),
    ("tcp.options.mptcp.subtype", "mp_subtypes", "str"),
    ("tcp.options.mptcp.version", "mp_version", "u8"),
    ("tcp.options.mptcp.sendkey", "mp_sendkey", "u64"),
    ("tcp.options.mptcp.recvkey", "mp_recvkey", "u64"),
    ("tcp.options.mptcp.recvtok", "mp_recvtok", "u32"),
    ("tcp.options.mptcp.dseqnpresent.flag", "mp_map_present", "u8"),
    ("tcp.options.mptcp.dseqn8.flag", "mp_dsn64", "u8"),
    ("tcp.options.mptcp.rawdataseqno", "mp_dsn_raw", "u64"),
    ("tcp.options.mptcp.subflowseqno", "mp_ssn", "u32"),
    ("tcp.options.mptcp.datalvllen", "mp_map_len", "u16"),
    ("tcp.options.mptcp.datafin.flag", "mp_data_fin", "u8"),
    ("tcp.options.mptcp.backup.flag", "mp_backup", "u8"),
    ("tcp.options.mptcp.dataack8.flag", "mp_dack64", "u8"),
    ("tcp.options.mptcp.rawdataack", "mp_dack_raw", "u64"),
];

fn main() {
    let path = std::env::args().nth(1).expect("usage: decode FILE");
    let specs: Vec<ColumnSpec> = FIELDS
        .iter()
        .map(|(t, c, d)| ColumnSpec {
            tshark: t.to_string(),
            column: c.to_string(),
            dtype: d.to_string(),
            occurrence: if *c == "mp_subtypes" { "all" } else { "first" }.to_string(),
        })
        .collect();
    // the pipeline's chunk size (pipeline/extract.py CHUNK_ROWS)
    let chunk: usize = std::env::var("CHUNK_ROWS").ok().and_then(|v| v.parse().ok()).unwrap_or(1 << 13);
    let rounds: usize = std::env::var("ROUNDS").ok().and_then(|v| v.parse().ok()).unwrap_or(3);
    for _ in 0..rounds {
        let t0 = Instant::now();
        let mut dec = Decoder::open(std::path::Path::new(&path), &specs, chunk).expect("open");
        let mut rows = 0usize;
        for b in &mut dec {
            rows += b.expect("batch").num_rows();
        }
        let dt = t0.elapsed().as_secs_f64();
        println!("{rows} packets in {dt:.3} s = {:.2} M packets/s", rows as f64 / dt / 1e6);
    }
}

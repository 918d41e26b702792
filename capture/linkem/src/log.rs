//! Per-packet CSV log, written by one thread from batches of records.

use std::io::{BufWriter, Write};
use std::sync::mpsc::{Receiver, Sender};

pub const HEADER: &str = "direction,packet_id,size_bytes,arrival_s,departure_s,dropped,reason,attempts\n";

#[derive(Clone, Copy, Debug)]
pub struct Record {
    pub up: bool,
    pub id: u64,
    pub size: u32,
    /// Epoch ns.
    pub arrival: i64,
    /// Epoch ns, None when dropped.
    pub departure: Option<i64>,
    pub reason: Option<&'static str>,
    /// Transmission attempts on the emulated link (core::Verdict).
    pub attempts: u32,
}

pub const BATCH: usize = 512;

/// Seconds with microsecond precision, exactly (no float rounding).
fn write_epoch(out: &mut Vec<u8>, ns: i64) {
    let us = (ns + 500) / 1000;
    let s = us / 1_000_000;
    let frac = us % 1_000_000;
    let _ = write!(out, "{}.{:06}", s, frac);
}

pub fn format(out: &mut Vec<u8>, r: &Record) {
    out.extend_from_slice(if r.up { b"up," } else { b"down," });
    let _ = write!(out, "{},{},", r.id, r.size);
    write_epoch(out, r.arrival);
    out.push(b',');
    if let Some(d) = r.departure {
        write_epoch(out, d);
    }
    match r.reason {
        Some(reason) => {
            out.extend_from_slice(b",1,");
            out.extend_from_slice(reason.as_bytes());
        }
        None => out.extend_from_slice(b",0,"),
    }
    let _ = writeln!(out, ",{}", r.attempts);
}

/// Writes batches until every sender is gone, then flushes.
pub fn run(file: std::fs::File, rx: Receiver<Vec<Record>>) -> std::io::Result<u64> {
    let mut w = BufWriter::with_capacity(1 << 20, file);
    w.write_all(HEADER.as_bytes())?;
    let mut line = Vec::with_capacity(128 * BATCH);
    let mut n = 0u64;
    for batch in rx {
        line.clear();
        for r in &batch {
            format(&mut line, r);
        }
        n += batch.len() as u64;
        w.write_all(&line)?;
    }
    w.flush()?;
    Ok(n)
}

/// A thread-local batch that is shipped to the log thread when full or old.
pub struct Batcher {
    tx: Sender<Vec<Record>>,
    buf: Vec<Record>,
    since: i64,
}

impl Batcher {
    pub fn new(tx: Sender<Vec<Record>>) -> Batcher {
        Batcher { tx, buf: Vec::with_capacity(BATCH), since: 0 }
    }
    pub fn push(&mut self, r: Record, now: i64) {
        if self.buf.is_empty() {
            self.since = now;
        }
        self.buf.push(r);
        if self.buf.len() >= BATCH {
            self.flush();
        }
    }
    /// Ships the batch if it is older than max_age_ns.
    pub fn flush_if_old(&mut self, now: i64, max_age_ns: i64) {
        if !self.buf.is_empty() && now - self.since >= max_age_ns {
            self.flush();
        }
    }
    pub fn flush(&mut self) {
        if !self.buf.is_empty() {
            let b = std::mem::replace(&mut self.buf, Vec::with_capacity(BATCH));
            let _ = self.tx.send(b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn csv_lines() {
        let mut out = Vec::new();
        format(&mut out, &Record { up: false, id: 7, size: 1514, arrival: 1_700_000_000_123_456_789, departure: Some(1_700_000_000_133_456_000), reason: None, attempts: 3 });
        format(&mut out, &Record { up: true, id: 8, size: 60, arrival: 1_700_000_001_000_000_400, departure: None, reason: Some("loss"), attempts: 5 });
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "down,7,1514,1700000000.123457,1700000000.133456,0,,3\nup,8,60,1700000001.000000,,1,loss,5\n"
        );
    }
}

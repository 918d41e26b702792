//! Stalls: intervals in which events happened later than they should, with
//! time passed in (pure, like the core).
//!
//! The emulator cannot stop the host from stalling (a shared VM loses its CPU
//! now and then), but it can say when that happened, so a run with a stall is
//! flagged instead of reporting a fake RTT spike as the path's. Two things are
//! tracked per direction: departures that left more than `LATE_NS` after their
//! scheduled time, and frames that the emulator read more than `LATE_NS` after
//! the kernel received them (reader lag). Consecutive late events form one
//! interval; an on-time event closes it.

/// "Late" means more than this after the due time (1 ms).
pub const LATE_NS: i64 = 1_000_000;
/// Intervals kept in full; later ones are only counted.
pub const MAX_INTERVALS: usize = 1000;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Interval {
    /// Due time of the first late event (ns, the caller's clock).
    pub start_ns: i64,
    /// When the last late event happened.
    pub end_ns: i64,
    pub events: u64,
    pub worst_ns: i64,
}

#[derive(Clone, Debug)]
pub struct Lateness {
    threshold_ns: i64,
    /// Events seen, late or not.
    pub events: u64,
    /// Events later than the threshold.
    pub late: u64,
    /// Worst lateness of any event (may be <= threshold) and when it was due.
    pub worst_ns: i64,
    pub worst_at_ns: i64,
    pub intervals: Vec<Interval>,
    /// Intervals beyond MAX_INTERVALS (counted, not kept).
    pub intervals_not_kept: u64,
    open: Option<Interval>,
}

impl Default for Lateness {
    fn default() -> Self {
        Lateness::new(LATE_NS)
    }
}

impl Lateness {
    pub fn new(threshold_ns: i64) -> Lateness {
        Lateness { threshold_ns, events: 0, late: 0, worst_ns: 0, worst_at_ns: 0, intervals: Vec::new(), intervals_not_kept: 0, open: None }
    }

    /// An event due at `due_ns` happened at `at_ns`.
    pub fn record(&mut self, due_ns: i64, at_ns: i64) {
        let late = at_ns - due_ns;
        self.events += 1;
        if late > self.worst_ns || self.events == 1 {
            self.worst_ns = late;
            self.worst_at_ns = due_ns;
        }
        if late <= self.threshold_ns {
            self.close();
            return;
        }
        self.late += 1;
        match &mut self.open {
            Some(iv) => {
                iv.end_ns = iv.end_ns.max(at_ns);
                iv.events += 1;
                iv.worst_ns = iv.worst_ns.max(late);
            }
            None => self.open = Some(Interval { start_ns: due_ns, end_ns: at_ns, events: 1, worst_ns: late }),
        }
    }

    /// Ends the open interval (an on-time event, or the end of the run).
    pub fn close(&mut self) {
        if let Some(iv) = self.open.take() {
            if self.intervals.len() < MAX_INTERVALS {
                self.intervals.push(iv);
            } else {
                self.intervals_not_kept += 1;
            }
        }
    }

    /// Number of late intervals (kept or not), the open one included.
    pub fn n_intervals(&self) -> u64 {
        self.intervals.len() as u64 + self.intervals_not_kept + self.open.is_some() as u64
    }
}

fn ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

fn epoch_s(ns: i64) -> f64 {
    // microsecond precision, like the per-packet log
    ((ns + 500) / 1000) as f64 / 1e6
}

impl Lateness {
    /// JSON summary; `offset_ns` maps the recorded clock to Unix epoch ns.
    pub fn to_json(&self, offset_ns: i64) -> serde_json::Value {
        let mut kept = self.intervals.clone();
        let mut not_kept = self.intervals_not_kept;
        if let Some(iv) = self.open {
            if kept.len() < MAX_INTERVALS {
                kept.push(iv);
            } else {
                not_kept += 1;
            }
        }
        serde_json::json!({
            "threshold_ms": ms(self.threshold_ns),
            "events": self.events,
            "late_events": self.late,
            "intervals": self.n_intervals(),
            "worst_ms": if self.events > 0 { Some(ms(self.worst_ns)) } else { None },
            "worst_at_s": if self.events > 0 { Some(epoch_s(self.worst_at_ns + offset_ns)) } else { None },
            "list": kept.iter().map(|iv| serde_json::json!({
                "start_s": epoch_s(iv.start_ns + offset_ns),
                "end_s": epoch_s(iv.end_ns + offset_ns),
                "events": iv.events,
                "worst_ms": ms(iv.worst_ns),
            })).collect::<Vec<_>>(),
            "list_not_kept": not_kept,
        })
    }
}

//! Mahimahi packet-delivery traces: one integer millisecond timestamp per
//! line, each line one 1500-byte delivery opportunity; the trace repeats
//! with a period equal to its last timestamp (as mm-link does).
//!
//! A trace may start at a phase (`with_offset`): emulator time t is then
//! trace time t + offset (modulo the period), so runs that start the same
//! trace at different offsets see different slices of its rate sequence.

pub const OPPORTUNITY_BYTES: u32 = 1500;

#[derive(Clone, Debug)]
pub struct Trace {
    ms: Vec<u64>,
    period_ms: u64,
    /// Trace time at emulator time 0, in [0, period_ms).
    offset_ms: u64,
    /// The first raw opportunity at or after `offset_ms`: emulator opportunity 0.
    k0: u64,
}

impl Trace {
    pub fn parse(text: &str) -> Result<Trace, String> {
        let mut ms = Vec::new();
        for (i, line) in text.lines().enumerate() {
            let l = line.trim();
            if l.is_empty() || l.starts_with('#') {
                continue;
            }
            let v: u64 = l
                .parse()
                .map_err(|_| format!("line {}: not a non-negative integer: {:?}", i + 1, l))?;
            if let Some(&prev) = ms.last() {
                if v < prev {
                    return Err(format!("line {}: timestamps must not decrease ({} < {})", i + 1, v, prev));
                }
            }
            ms.push(v);
        }
        Trace::from_ms(ms)
    }

    pub fn from_ms(ms: Vec<u64>) -> Result<Trace, String> {
        let period_ms = *ms.last().ok_or("empty trace")?;
        if period_ms == 0 {
            return Err("the last timestamp (the period) must be > 0".into());
        }
        if ms.windows(2).any(|w| w[1] < w[0]) {
            return Err("timestamps must not decrease".into());
        }
        Ok(Trace { ms, period_ms, offset_ms: 0, k0: 0 })
    }

    /// The same trace started at trace time `offset_ms` (taken modulo the
    /// period): the opportunity at trace time `offset_ms + x` happens at
    /// emulator time x. Offset 0 is the trace as loaded.
    pub fn with_offset(mut self, offset_ms: u64) -> Trace {
        self.offset_ms = offset_ms % self.period_ms;
        self.k0 = self.raw_first_at_or_after_ms(self.offset_ms);
        self
    }

    #[allow(dead_code)]
    pub fn offset_ms(&self) -> u64 {
        self.offset_ms
    }

    pub fn load(path: &std::path::Path) -> Result<Trace, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {}", path.display(), e))?;
        Trace::parse(&text)
    }

    #[allow(dead_code)]
    pub fn len(&self) -> usize {
        self.ms.len()
    }

    #[allow(dead_code)]
    pub fn period_ms(&self) -> u64 {
        self.period_ms
    }

    /// Trace time in ms of raw (offset-free) global opportunity k.
    fn raw_opp_ms(&self, k: u64) -> u64 {
        let n = self.ms.len() as u64;
        (k / n) * self.period_ms + self.ms[(k % n) as usize]
    }

    /// Time in ms (since the emulator start) of global opportunity k.
    pub fn opp_ms(&self, k: u64) -> u64 {
        self.raw_opp_ms(k + self.k0) - self.offset_ms
    }

    pub fn opp_ns(&self, k: u64) -> i64 {
        (self.opp_ms(k) as i64) * 1_000_000
    }

    /// The first global opportunity index whose time (since the emulator
    /// start) is >= t_ns.
    pub fn first_at_or_after(&self, t_ns: i64) -> u64 {
        let x = if t_ns <= 0 { 0 } else { ((t_ns as u64) + 999_999) / 1_000_000 }; // ceil to ms
        self.raw_first_at_or_after_ms(x + self.offset_ms) - self.k0
    }

    /// The first raw global opportunity index whose trace time is >= x ms.
    fn raw_first_at_or_after_ms(&self, x: u64) -> u64 {
        let n = self.ms.len() as u64;
        let mut cycle = (x / self.period_ms).saturating_sub(1);
        loop {
            let base = cycle * self.period_ms;
            let i = self.ms.partition_point(|&m| base + m < x) as u64;
            if i < n {
                return cycle * n + i;
            }
            cycle += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn parse_and_lookup() {
        let t = Trace::parse("1\n1\n3\n\n4\n").unwrap();
        assert_eq!(t.period_ms(), 4);
        assert_eq!(t.len(), 4);
        let times: Vec<u64> = (0..8).map(|k| t.opp_ms(k)).collect();
        assert_eq!(times, vec![1, 1, 3, 4, 5, 5, 7, 8]);
        assert_eq!(t.first_at_or_after(0), 0);
        assert_eq!(t.first_at_or_after(1_000_000), 0);
        assert_eq!(t.first_at_or_after(1_000_001), 2);
        assert_eq!(t.first_at_or_after(4_000_000), 3);
        assert_eq!(t.first_at_or_after(4_500_000), 4);
        assert_eq!(t.first_at_or_after(8_000_000), 7);
        for x in [0u64, 1, 2, 3, 4, 5, 9, 399, 400, 401, 402, 403, 404] {
            let k = t.first_at_or_after(x as i64 * 1_000_000);
            assert!(t.opp_ms(k) >= x && (k == 0 || t.opp_ms(k - 1) < x), "x={x} k={k}");
        }
        assert!(Trace::parse("3\n2\n").is_err());
        assert!(Trace::parse("0\n").is_err());
        assert!(Trace::parse("x\n").is_err());
    }
}

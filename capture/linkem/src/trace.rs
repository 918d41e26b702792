//! Mahimahi packet-delivery traces: one integer millisecond timestamp per
//! line, each line one 1500-byte delivery opportunity; the trace repeats
//! with a period equal to its last timestamp (as mm-link does).

pub const OPPORTUNITY_BYTES: u32 = 1500;

#[derive(Clone, Debug)]
pub struct Trace {
    ms: Vec<u64>,
    period_ms: u64,
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
        Ok(Trace { ms, period_ms })
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

    /// Time in ms (since the emulator start) of global opportunity k.
    pub fn opp_ms(&self, k: u64) -> u64 {
        let n = self.ms.len() as u64;
        (k / n) * self.period_ms + self.ms[(k % n) as usize]
    }

    pub fn opp_ns(&self, k: u64) -> i64 {
        (self.opp_ms(k) as i64) * 1_000_000
    }

    /// The first global opportunity index whose time is >= t_ns.
    pub fn first_at_or_after(&self, t_ns: i64) -> u64 {
        let x = if t_ns <= 0 { 0 } else { ((t_ns as u64) + 999_999) / 1_000_000 }; // ceil to ms
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

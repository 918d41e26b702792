//! A small deterministic number generator for the tests' generated cases (xorshift64).

pub struct XorShift(pub u64);

impl XorShift {
    /// The next number below `m`.
    pub fn below(&mut self, m: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % m
    }
}

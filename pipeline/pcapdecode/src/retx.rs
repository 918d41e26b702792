//! Which data packets are retransmissions (`metrics.retransmissions`): a packet that
//! starts below the highest sequence number its subflow had already carried that way
//! (as tcptrace counts them), as a pass with one number of state per subflow direction
//! (in polars, a window over every data packet). `pipeline/metrics.py` keeps the polars
//! version as the definition; the tests hold this one equal to it.

use crate::rtt::key;

/// A trace's data packets in frame order, one piece after another: the highest end
/// (one past the last byte) each subflow direction (`key`) carried so far. Streams are
/// numbered densely (as a decoder numbers them; `rtt::dense_streams` renumbers others):
/// the state is a vector indexed by them.
#[derive(Default)]
pub struct Retransmissions {
    highest: Vec<Option<i64>>,
}

impl Retransmissions {
    /// The next piece's flags: `stream`, `down`, and each packet's first byte (`seq`)
    /// and one past its last (`end`).
    pub fn feed(&mut self, stream: &[u32], down: &[bool], seq: &[i64], end: &[i64]) -> Vec<bool> {
        let mut out = Vec::with_capacity(seq.len());
        for i in 0..seq.len() {
            let k = key(stream[i], down[i]) as usize;
            if k >= self.highest.len() {
                self.highest.resize(k + 1, None);
            }
            let h = &mut self.highest[k];
            out.push(h.is_some_and(|h| seq[i] < h));
            *h = Some(h.map_or(end[i], |h| h.max(end[i])));
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_packet_below_what_its_subflow_carried_that_way_is_a_retransmission() {
        let mut r = Retransmissions::default();
        // subflow 0 down: 1-100, 101-200, then 51-150 again; subflow 0 up and subflow 1
        // down start low and are no retransmission of it
        let got = r.feed(&[0, 0, 0, 0, 1], &[true, true, true, false, true], &[1, 101, 51, 1, 1], &[101, 201, 151, 11, 101]);
        assert_eq!(got, [false, false, true, false, false]);
        // the next piece goes on from there
        assert_eq!(r.feed(&[0, 1], &[true, true], &[150, 101], &[250, 201]), [true, false]);
    }
}

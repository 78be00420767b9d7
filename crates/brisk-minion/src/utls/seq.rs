//! Sequence-number inference for records found out of order (Minion NSDI 2012 §6.3,
//! "challenge 3"; spec `minion.md` §4.5 and §4.7).
//!
//! An AEAD record authenticates only under its own sequence number (it is in the
//! nonce, RFC 8446 §5.3, and in the additional data, RFC 5246 §6.2.3.3), so a wrong
//! guess cannot deliver a wrong record: it only fails and costs one trial. Two sources
//! of guesses:
//!
//! - **Anchors**: offsets where a record of known number starts: the in-order point,
//!   the record after it when its header has arrived, and both ends of every record
//!   authenticated out of order. A candidate exactly at an anchor needs one trial.
//!   Otherwise the gap to the nearest anchor below is divided by the mean record size
//!   seen so far (the paper's "average size of past records"), clamped to what the
//!   smallest and largest records allow, and adjacent numbers are tried in the order
//!   est, est+1, est−1, est+2, … up to the trial limit.
//! - **TLS 1.2 AES-GCM's explicit nonce** (RFC 5288 §3): the 8 bytes before the
//!   ciphertext are chosen by the sender. OpenSSL sends the sequence number itself;
//!   rustls sends `seq XOR iv[4..12]`. Which relation the peer uses is learnt from the
//!   records that arrive in order ([`NonceRelation`]); once learnt, one trial suffices.

/// What the receiver has learnt about a TLS 1.2 GCM peer's explicit nonces.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct NonceRelation {
    /// In-order records observed.
    seen: u32,
    /// `nonce − seq` (wrapping) while it has been the same for every record.
    diff: Option<u64>,
    /// `nonce ^ seq` while it has been the same for every record.
    xor: Option<u64>,
}

impl NonceRelation {
    /// Records one in-order record's (sequence number, explicit nonce).
    pub fn observe(&mut self, seq: u64, nonce: u64) {
        let (d, x) = (nonce.wrapping_sub(seq), nonce ^ seq);
        if self.seen == 0 {
            self.diff = Some(d);
            self.xor = Some(x);
        } else {
            self.diff = self.diff.filter(|&v| v == d);
            self.xor = self.xor.filter(|&v| v == x);
        }
        self.seen = self.seen.saturating_add(1);
    }

    /// The sequence numbers `nonce` may stand for (at most two: both relations fit
    /// after one record, e.g. when the peer's constant is 0). Empty until a relation
    /// is learnt, and after a peer broke both (random nonces): then estimate.
    pub fn candidates(&self, nonce: u64) -> impl Iterator<Item = u64> {
        let a = self.diff.map(|d| nonce.wrapping_sub(d));
        let b = self.xor.map(|x| nonce ^ x).filter(|&s| Some(s) != a);
        a.into_iter().chain(b)
    }
}

/// Running mean of the on-wire size of authenticated application-data records.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MeanSize {
    bytes: u64,
    records: u64,
}

impl MeanSize {
    pub fn add(&mut self, wire_len: usize) {
        self.bytes = self.bytes.saturating_add(wire_len as u64);
        self.records = self.records.saturating_add(1);
    }

    /// The mean, or `None` before the first record.
    pub fn get(&self) -> Option<u64> {
        (self.records > 0).then(|| (self.bytes / self.records).max(1))
    }
}

/// The numbers to try for a record starting `gap` bytes after an anchor numbered
/// `anchor_seq` (gap > 0), below `upper` (the number of the nearest anchor above, if
/// any): at most `max_trials` numbers, nearest the estimate first. `min_wire` and
/// `max_wire` are the smallest and largest on-wire record sizes of the suite.
pub fn trial_order(
    anchor_seq: u64,
    gap: u64,
    upper: Option<u64>,
    mean: Option<u64>,
    min_wire: u64,
    max_wire: u64,
    max_trials: usize,
) -> Vec<u64> {
    if gap == 0 {
        return vec![anchor_seq];
    }
    // At least ⌈gap/max⌉ records lie between, at most ⌊gap/min⌋.
    let lo = anchor_seq.saturating_add(gap.div_ceil(max_wire));
    let mut hi = anchor_seq.saturating_add(gap / min_wire.max(1));
    if let Some(u) = upper {
        hi = hi.min(u.saturating_sub(1));
    }
    if lo > hi {
        return Vec::new();
    }
    let est = match mean {
        Some(m) => anchor_seq.saturating_add((gap + m / 2) / m),
        None => lo,
    }
    .clamp(lo, hi);
    let mut out = Vec::with_capacity(max_trials);
    out.push(est);
    let mut k = 1u64;
    while out.len() < max_trials && (est.saturating_add(k) <= hi || est >= lo + k) {
        if let Some(s) = est.checked_add(k).filter(|&s| s <= hi) {
            out.push(s);
        }
        if out.len() < max_trials && est >= lo + k {
            out.push(est - k);
        }
        k += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn learns_openssl_and_rustls_nonce_relations() {
        // OpenSSL: nonce = seq.
        let mut r = NonceRelation::default();
        r.observe(1, 1);
        r.observe(2, 2);
        assert_eq!(r.candidates(7).collect::<Vec<_>>(), vec![7]);
        // rustls: nonce = seq ^ c.
        let c = 0x1234_5678_9abc_def7;
        let mut r = NonceRelation::default();
        r.observe(1, 1 ^ c);
        assert_eq!(r.candidates(5 ^ c).count(), 2, "ambiguous after one record");
        r.observe(2, 2 ^ c);
        assert_eq!(r.candidates(5 ^ c).collect::<Vec<_>>(), vec![5]);
        // Random nonces: nothing learnt.
        r.observe(3, 999);
        assert_eq!(r.candidates(5).count(), 0);
        assert_eq!(NonceRelation::default().candidates(5).count(), 0);
    }

    #[test]
    fn trials_start_at_the_estimate_and_stay_in_bounds() {
        // Records of 1000 bytes: 3000 bytes after anchor 10 is record 13.
        let t = trial_order(10, 3000, None, Some(1000), 22, 16_645, 8);
        assert_eq!(t, vec![13, 14, 12, 15, 11, 16, 17, 18]);
        assert_eq!(t[0], 13);
        assert_eq!(t.len(), 8);
        assert!(t.iter().all(|&s| s > 10));
        // Upper anchor caps the guesses; exact anchor gives one trial.
        assert!(trial_order(10, 3000, Some(12), Some(1000), 22, 16_645, 8)
            .iter()
            .all(|&s| s == 11));
        assert_eq!(trial_order(10, 0, None, None, 22, 16_645, 8), vec![10]);
        // Impossible gaps give no trial.
        assert!(trial_order(10, 100, Some(11), None, 22, 16_645, 8).is_empty());
    }
}

//! Retransmission-timeout arithmetic (RFC 6298 §5.5 backoff, clamped like Linux
//! `inet_csk_rto_backoff`). The base RTO comes from `RttEstimator`; RTO-restart
//! (RFC 7765) only changes the arming reference, which the connection passes in.

use brisk_time::{Duration, Instant};

/// `base · 2^backoff`, clamped to `max`.
pub fn backoff(base: Duration, backoff: u32, max: Duration) -> Duration {
    let factor = 1u32.checked_shl(backoff.min(31)).unwrap_or(u32::MAX);
    base.saturating_mul(factor).min(max)
}

/// The RTO deadline armed at `reference` (RFC 6298 §5.1/5.3: the time of the last
/// (re)transmission or of the ACK that restarted the timer).
pub fn deadline(reference: Instant, base: Duration, n: u32, max: Duration) -> Instant {
    reference + backoff(base, n, max)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_doubles_then_clamps() {
        let b = Duration::from_millis(300);
        let max = Duration::from_secs(2);
        assert_eq!(backoff(b, 0, max), b);
        assert_eq!(backoff(b, 1, max), Duration::from_millis(600));
        assert_eq!(backoff(b, 2, max), Duration::from_millis(1200));
        assert_eq!(backoff(b, 3, max), max);
        assert_eq!(backoff(b, 200, max), max);
    }
}

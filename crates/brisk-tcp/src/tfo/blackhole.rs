//! The client's global Fast Open back-off after suspected middlebox black holes
//! (RFC 7413 §7.1 leaves it to implementations; Linux's
//! `tcp_fastopen_active_should_disable`, `tcp_fastopen_active_disable`,
//! `tcp_fastopen_active_detect_blackhole` in net/ipv4/tcp_fastopen.c).
//!
//! A connection that used Fast Open and timed out (its second retransmission
//! timeout, or an earlier one that gave up) disables active Fast Open for the whole
//! endpoint: for `timeout << min(times - 1, 6)` after the last such event, where
//! `times` counts them. After that, one connection probes; when it succeeds
//! (Linux: it got data without out-of-order trouble) `times` returns to 0.
//! `timeout` 0 turns the back-off off (Linux's default since 5.14).

use brisk_time::{Duration, Instant};

/// The back-off state; one per endpoint (Linux: per network namespace).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Blackhole {
    times: u32,
    stamp: Option<Instant>,
    /// Blackholes detected (`TCPFastOpenBlackhole`).
    pub detected: u64,
}

/// Exponent cap (Linux: `1 << min(tfo_da_times - 1, 6)`).
const MAX_SHIFT: u32 = 6;

impl Blackhole {
    /// Whether active Fast Open is disabled at `now`.
    pub fn should_disable(&self, now: Instant, timeout: Duration) -> bool {
        if timeout.is_zero() || self.times == 0 {
            return false;
        }
        let Some(stamp) = self.stamp else {
            return false;
        };
        let mult = 1u32 << (self.times - 1).min(MAX_SHIFT);
        now < stamp + timeout.saturating_mul(mult)
    }

    /// A retransmission timeout on a connection that used Fast Open: `timeouts`
    /// retransmissions so far, `expired` when the connection gives up. Returns
    /// whether this was taken as a black hole.
    pub fn on_timeout(
        &mut self,
        used_tfo: bool,
        timeouts: u32,
        expired: bool,
        now: Instant,
    ) -> bool {
        if used_tfo && (timeouts == 2 || (timeouts < 2 && expired)) {
            self.times = self.times.saturating_add(1);
            self.stamp = Some(now);
            self.detected += 1;
            return true;
        }
        false
    }

    /// A Fast Open connection allowed after a back-off worked: forget the history.
    pub fn on_success(&mut self) {
        self.times = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(s: u64) -> Instant {
        Instant::from_nanos(0) + Duration::from_secs(s)
    }

    #[test]
    fn exponential_back_off_capped() {
        let to = Duration::from_secs(10);
        let mut b = Blackhole::default();
        assert!(!b.should_disable(t(0), to));
        assert!(!b.on_timeout(true, 1, false, t(0)), "one RTO is not enough");
        assert!(!b.on_timeout(false, 2, false, t(0)), "plain connection");
        assert!(b.on_timeout(true, 2, false, t(0)));
        assert!(b.should_disable(t(9), to));
        assert!(!b.should_disable(t(10), to));
        assert!(!b.should_disable(t(9), Duration::ZERO), "off");
        for _ in 0..20 {
            b.on_timeout(true, 1, true, t(100));
        }
        // 21 events: 10 s << 6 = 640 s, not more.
        assert!(b.should_disable(t(739), to));
        assert!(!b.should_disable(t(740), to));
        b.on_success();
        assert!(!b.should_disable(t(101), to));
        assert_eq!(b.detected, 21);
    }
}

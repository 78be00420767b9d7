//! The listener's bound on pending Fast Open connections (RFC 7413 §5.1: "limit the
//! number of pending TFO connections"; Linux's `fastopenq`, `tcp_fastopen_queue_check`
//! in net/ipv4/tcp_fastopen.c).
//!
//! A Fast Open connection is pending from the SYN whose data was accepted until its
//! handshake completes (or it dies). Over the bound, a SYN's data is not accepted
//! and no cookie is given: the handshake proceeds as plain TCP and the refusal is
//! counted (Linux's `TCPFastOpenListenOverflow`).
//!
//! A pending connection the client resets keeps its slot until the time its
//! request would have expired, as Linux's `rskq_rst_head` list: otherwise a
//! SYN-data flood followed by RSTs would cycle through the bound at line rate. When
//! the queue is full, the oldest reset slot is reclaimed if it has expired (one per
//! check, as Linux).

use std::collections::VecDeque;

use brisk_time::Instant;

#[derive(Clone, Debug, Default)]
pub struct PendingQueue {
    max: u32,
    /// Pending connections plus reset slots not yet reclaimed.
    len: u32,
    /// When each reset slot may be reclaimed, oldest first (at most `len` long).
    reset: VecDeque<Instant>,
    /// SYNs refused because the queue was full (`TCPFastOpenListenOverflow`).
    pub overflows: u64,
}

impl PendingQueue {
    pub fn new(max: u32) -> Self {
        PendingQueue {
            max,
            ..Default::default()
        }
    }

    pub fn len(&self) -> u32 {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Whether one more Fast Open connection may be admitted now (Linux's
    /// `tcp_fastopen_queue_check`): false when the bound is 0, and when the queue is
    /// full and its oldest reset slot has not expired (counted as an overflow).
    pub fn check(&mut self, now: Instant) -> bool {
        if self.max == 0 {
            return false;
        }
        if self.len >= self.max {
            match self.reset.front() {
                Some(&at) if at <= now => {
                    self.reset.pop_front();
                    self.len -= 1;
                }
                _ => {
                    self.overflows += 1;
                    return false;
                }
            }
        }
        true
    }

    /// A Fast Open connection was created (after a successful [`check`](Self::check)).
    pub fn admit(&mut self) {
        self.len += 1;
    }

    /// A pending connection completed its handshake or was closed by us: its slot
    /// is free.
    pub fn release(&mut self) {
        self.len = self.len.saturating_sub(1);
    }

    /// A pending connection was reset by the client: its slot stays taken until
    /// `until` (the request's expiry).
    pub fn reset(&mut self, until: Instant) {
        if self.len as usize > self.reset.len() {
            self.reset.push_back(until);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    #[test]
    fn bound_holds_under_a_syn_data_flood() {
        let t0 = Instant::from_nanos(0);
        let mut q = PendingQueue::new(4);
        let mut admitted = 0;
        for _ in 0..10_000 {
            if q.check(t0) {
                q.admit();
                admitted += 1;
            }
        }
        assert_eq!(admitted, 4);
        assert_eq!(q.len(), 4);
        assert_eq!(q.overflows, 10_000 - 4);
        q.release();
        assert!(q.check(t0));
    }

    #[test]
    fn zero_refuses_everything_without_counting() {
        let mut q = PendingQueue::new(0);
        assert!(!q.check(Instant::from_nanos(0)));
        assert_eq!(q.overflows, 0);
    }

    #[test]
    fn reset_slots_are_held_until_expiry() {
        let t0 = Instant::from_nanos(0);
        let hold = t0 + Duration::from_secs(3);
        let mut q = PendingQueue::new(2);
        // A flood of SYN-data then RST: each reset keeps its slot.
        for _ in 0..2 {
            assert!(q.check(t0));
            q.admit();
            q.reset(hold);
        }
        assert!(!q.check(t0 + Duration::from_secs(1)));
        assert!(q.check(hold), "the oldest reset slot has expired");
        q.admit();
        assert_eq!(q.len(), 2);
        // The reset list never outgrows the queue.
        for _ in 0..100 {
            q.reset(hold);
        }
        assert!(q.reset.len() <= q.len() as usize);
    }
}

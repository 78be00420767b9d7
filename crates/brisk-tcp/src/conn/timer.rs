//! The connection's timers: one `Option<Instant>` slot per kind, expired in a fixed
//! order so that timers due at the same instant behave the same way on every run.

use brisk_time::Instant;

/// Every timer a connection can arm.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Timer {
    /// Retransmission timeout (RFC 6298), also the SYN/SYN-ACK retransmission timer.
    Rto,
    /// Tail loss probe (RFC 8985 §7).
    Tlp,
    /// RACK reordering timer (RFC 8985 §6.3).
    RackReorder,
    /// Delayed ACK (RFC 1122 §4.2.3.2, Linux ATO).
    DelayedAck,
    /// Zero-window probe (RFC 9293 §3.8.6.1).
    Persist,
    /// Keepalive (RFC 1122 §4.2.3.6).
    Keepalive,
    /// TIME-WAIT 2·MSL.
    TimeWait,
    /// Orphaned FIN-WAIT-2 (Linux `tcp_fin_timeout`): removes a closed connection
    /// whose peer ACKed our FIN but never sent its own (`conn/close.rs`).
    FinWait2,
    /// RFC 5482 user timeout.
    UserTimeout,
    /// The next paced segment's departure time (`conn/pacing.rs`, Linux's pacing
    /// hrtimer): expiring only lets the next poll send.
    Pacing,
}

impl Timer {
    pub const COUNT: usize = 10;
    /// Fixed expiry order.
    /// The probe timer goes before the RTO: when both are due, the probe is sent and
    /// the RTO re-armed, as with Linux's single shared timer.
    pub const ALL: [Timer; Timer::COUNT] = [
        Timer::Tlp,
        Timer::Rto,
        Timer::RackReorder,
        Timer::DelayedAck,
        Timer::Persist,
        Timer::Keepalive,
        Timer::TimeWait,
        Timer::FinWait2,
        Timer::UserTimeout,
        Timer::Pacing,
    ];
}

/// The armed deadlines, and their minimum kept up to date: the endpoint asks for it
/// after every segment and every poll (about a million times in `bench sim`'s 2 s),
/// more often than timers change, and a scan of the nine slots each time was 1.5 % of
/// the run. Invariant: `next` is the minimum of `at`.
#[derive(Clone, Copy, Debug, Default)]
pub struct TimerTable {
    at: [Option<Instant>; Timer::COUNT],
    next: Option<Instant>,
}

impl TimerTable {
    pub fn set(&mut self, t: Timer, at: Instant) {
        let old = self.at[t as usize].replace(at);
        match self.next {
            // Moving the earliest timer later: another may now be the earliest.
            Some(n) if old == Some(n) && at > n => self.next = self.scan(),
            Some(n) => self.next = Some(n.min(at)),
            None => self.next = Some(at),
        }
    }
    /// Inline: a take and a compare (a rescan only when the earliest timer stops),
    /// asked on every transmit.
    #[inline]
    pub fn stop(&mut self, t: Timer) {
        if self.at[t as usize]
            .take()
            .is_some_and(|old| Some(old) == self.next)
        {
            self.next = self.scan();
        }
    }
    pub fn get(&self, t: Timer) -> Option<Instant> {
        self.at[t as usize]
    }
    pub fn is_set(&self, t: Timer) -> bool {
        self.at[t as usize].is_some()
    }
    pub fn stop_all(&mut self) {
        self.at = [None; Timer::COUNT];
        self.next = None;
    }
    /// The earliest armed deadline.
    pub fn next(&self) -> Option<Instant> {
        debug_assert_eq!(self.next, self.scan());
        self.next
    }
    fn scan(&self) -> Option<Instant> {
        self.at.iter().flatten().min().copied()
    }
    /// Disarms and returns `t` if it is due at `now`.
    pub fn expire(&mut self, t: Timer, now: Instant) -> bool {
        match self.at[t as usize] {
            Some(at) if at <= now => {
                self.stop(t);
                true
            }
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_is_earliest_and_expire_disarms_only_due_timers() {
        let mut t = TimerTable::default();
        t.set(Timer::Keepalive, Instant::from_millis(50));
        t.set(Timer::Rto, Instant::from_millis(10));
        assert_eq!(t.next(), Some(Instant::from_millis(10)));
        assert!(!t.expire(Timer::Keepalive, Instant::from_millis(20)));
        assert!(t.expire(Timer::Rto, Instant::from_millis(20)));
        assert_eq!(t.next(), Some(Instant::from_millis(50)));
    }

    #[test]
    fn cached_earliest_follows_every_change() {
        // Random sets, stops and expiries against a scan of the slots.
        let mut t = TimerTable::default();
        let mut x = 0x2545_f491_4f6c_dd1du64;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let timer = Timer::ALL[(x % 9) as usize];
            let at = Instant::from_millis((x >> 8) % 64);
            match (x >> 20) % 5 {
                0 | 1 => t.set(timer, at),
                2 => t.stop(timer),
                3 => {
                    t.expire(timer, at);
                }
                _ if (x >> 24).is_multiple_of(50) => t.stop_all(),
                _ => {}
            }
            assert_eq!(t.next, t.scan());
        }
    }
}

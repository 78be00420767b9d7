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
}

impl Timer {
    pub const COUNT: usize = 9;
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
    ];
}

#[derive(Clone, Copy, Debug, Default)]
pub struct TimerTable([Option<Instant>; Timer::COUNT]);

impl TimerTable {
    pub fn set(&mut self, t: Timer, at: Instant) {
        self.0[t as usize] = Some(at);
    }
    pub fn stop(&mut self, t: Timer) {
        self.0[t as usize] = None;
    }
    pub fn get(&self, t: Timer) -> Option<Instant> {
        self.0[t as usize]
    }
    pub fn is_set(&self, t: Timer) -> bool {
        self.0[t as usize].is_some()
    }
    pub fn stop_all(&mut self) {
        self.0 = [None; Timer::COUNT];
    }
    /// The earliest armed deadline.
    pub fn next(&self) -> Option<Instant> {
        self.0.iter().flatten().min().copied()
    }
    /// Disarms and returns `t` if it is due at `now`.
    pub fn expire(&mut self, t: Timer, now: Instant) -> bool {
        match self.0[t as usize] {
            Some(at) if at <= now => {
                self.0[t as usize] = None;
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
}

//! brisk-time: the one notion of time every brisk crate shares.
//!
//! `Instant` is a `u64` count of nanoseconds since an arbitrary origin (`ZERO` in the
//! simulator, the emulator's start in real time). Nothing here reads a clock: callers
//! pass `now` in, which is what keeps the TCP core and the network elements
//! deterministic. [`Duration`] is integer nanoseconds too, with `std::time::Duration`'s
//! method names (module `duration`); convert to `std`'s at the real-time boundary.

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

mod duration;
pub use duration::{dur_nanos, Duration};

/// A point in (virtual or real) time, in integer nanoseconds.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Instant(u64);

impl Instant {
    pub const ZERO: Instant = Instant(0);
    /// The far future; used as "never" where an `Option` would be clumsy.
    pub const MAX: Instant = Instant(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Self {
        Instant(ns)
    }
    pub const fn from_micros(us: u64) -> Self {
        Instant(us.saturating_mul(1_000))
    }
    pub const fn from_millis(ms: u64) -> Self {
        Instant(ms.saturating_mul(1_000_000))
    }
    pub const fn from_secs(s: u64) -> Self {
        Instant(s.saturating_mul(1_000_000_000))
    }
    pub const fn as_nanos(self) -> u64 {
        self.0
    }
    pub const fn as_micros(self) -> u64 {
        self.0 / 1_000
    }
    pub const fn as_millis(self) -> u64 {
        self.0 / 1_000_000
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    /// Time elapsed since `earlier`, or zero if `earlier` is in the future.
    pub fn saturating_duration_since(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
    /// `self + d`, saturating at `Instant::MAX`.
    pub fn saturating_add(self, d: Duration) -> Instant {
        self.saturating_add_nanos(dur_nanos(d))
    }
    /// `self` plus `ns` nanoseconds, saturating at `Instant::MAX`: `saturating_add`
    /// for a caller that already has the nanoseconds (hot paths that keep timer
    /// arithmetic in integers instead of building a `Duration` per packet).
    #[inline]
    pub const fn saturating_add_nanos(self, ns: u64) -> Instant {
        Instant(self.0.saturating_add(ns))
    }
    pub fn checked_sub(self, d: Duration) -> Option<Instant> {
        self.0.checked_sub(dur_nanos(d)).map(Instant)
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        self.saturating_add(d)
    }
}

impl AddAssign<Duration> for Instant {
    fn add_assign(&mut self, d: Duration) {
        *self = *self + d;
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    /// Saturating: an `earlier` in the future gives zero rather than a panic.
    fn sub(self, earlier: Instant) -> Duration {
        self.saturating_duration_since(earlier)
    }
}

impl fmt::Debug for Instant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for Instant {
    /// Seconds with microseconds, e.g. `1.250000s`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}.{:06}s",
            self.0 / 1_000_000_000,
            (self.0 % 1_000_000_000) / 1_000
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arithmetic_saturates_instead_of_panicking() {
        let t = Instant::from_millis(5);
        assert_eq!(t - Instant::from_millis(7), Duration::ZERO);
        assert_eq!(Instant::MAX + Duration::from_secs(1), Instant::MAX);
        assert_eq!(t + Duration::from_micros(3), Instant::from_nanos(5_003_000));
    }

    #[test]
    fn displays_seconds_with_micros() {
        assert_eq!(Instant::from_micros(1_250_000).to_string(), "1.250000s");
    }
}

//! [`Duration`]: a span of time in integer nanoseconds, the partner of [`crate::Instant`].
//!
//! It has the names and meaning of `std::time::Duration`'s methods for the subset brisk
//! uses, so code reads as it did when this was `std`'s type, but it is one `u64`: every
//! formula (RTO, PTO, timer deadlines) is written once, on `Duration`, and is integer
//! arithmetic underneath, with no `u128` conversion per packet and no `*_nanos` twin
//! kept in step by hand.
//!
//! **Range and overflow.** The range is 0 to `u64::MAX` ns (about 584 years), which
//! covers every time brisk simulates or waits for (a scenario is at most 24 h). Where
//! `std` would panic, this type saturates instead: constructors, `+`, `-`, `*` and
//! `from_secs_f64`/`mul_f64` clamp to [`Duration::ZERO`] and [`Duration::MAX`] (NaN
//! gives zero), as [`crate::Instant`]'s arithmetic does, so no value read from a
//! scenario or a packet can panic here. The `checked_*` methods return `None` where
//! the exact result is out of range. Division by zero panics, as integer division does
//! (every divisor in brisk is a constant or a validated count).
//!
//! **Output.** `Debug` prints exactly what `std::time::Duration`'s does (it formats
//! through it), serde reads and writes it as `std`'s (`{ secs, nanos }`), and
//! `as_secs_f64` uses `std`'s formula, so results and reports are byte-for-byte what
//! they were with `std`'s type.
//!
//! **Real time.** Sleeps, socket timeouts and `std::time::Instant` arithmetic take
//! `std::time::Duration`: convert at that boundary with `.into()` ([`From`] both ways;
//! from `std`, values beyond the range saturate) or [`Duration::to_std`].

use std::fmt;
use std::iter::Sum;
use std::ops::{Add, AddAssign, Div, DivAssign, Mul, MulAssign, Sub, SubAssign};

const NANOS_PER_SEC: u64 = 1_000_000_000;
const NANOS_PER_MILLI: u64 = 1_000_000;
const NANOS_PER_MICRO: u64 = 1_000;

/// A span of time in integer nanoseconds (see the module documentation).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Duration(u64);

impl Duration {
    pub const ZERO: Duration = Duration(0);
    /// The longest duration, `u64::MAX` ns (about 584 years): "never".
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_secs(secs: u64) -> Duration {
        Duration(secs.saturating_mul(NANOS_PER_SEC))
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms.saturating_mul(NANOS_PER_MILLI))
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us.saturating_mul(NANOS_PER_MICRO))
    }
    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }

    /// `secs` seconds, rounded as `std::time::Duration::from_secs_f64` rounds; negative
    /// and NaN give zero, values beyond the range (and +∞) give [`Duration::MAX`].
    pub fn from_secs_f64(secs: f64) -> Duration {
        match std::time::Duration::try_from_secs_f64(secs) {
            Ok(d) => Duration::from(d),
            Err(_) if secs > 0.0 => Duration::MAX,
            Err(_) => Duration::ZERO,
        }
    }

    /// Whole seconds.
    pub const fn as_secs(&self) -> u64 {
        self.0 / NANOS_PER_SEC
    }
    /// The fractional part in nanoseconds.
    pub const fn subsec_nanos(&self) -> u32 {
        (self.0 % NANOS_PER_SEC) as u32
    }
    pub const fn subsec_micros(&self) -> u32 {
        self.subsec_nanos() / NANOS_PER_MICRO as u32
    }
    pub const fn subsec_millis(&self) -> u32 {
        self.subsec_nanos() / NANOS_PER_MILLI as u32
    }
    /// Total milliseconds (a `u128`, as `std`'s).
    pub const fn as_millis(&self) -> u128 {
        (self.0 / NANOS_PER_MILLI) as u128
    }
    /// Total microseconds (a `u128`, as `std`'s).
    pub const fn as_micros(&self) -> u128 {
        (self.0 / NANOS_PER_MICRO) as u128
    }
    /// Total nanoseconds (a `u128`, as `std`'s; [`crate::dur_nanos`] gives the `u64`).
    pub const fn as_nanos(&self) -> u128 {
        self.0 as u128
    }
    /// Seconds as `f64`, computed as `std` computes it (whole seconds plus the
    /// fraction), so printed values do not change.
    pub fn as_secs_f64(&self) -> f64 {
        (self.as_secs() as f64) + (self.subsec_nanos() as f64) / (NANOS_PER_SEC as f64)
    }
    pub fn as_secs_f32(&self) -> f32 {
        (self.as_secs() as f32) + (self.subsec_nanos() as f32) / (NANOS_PER_SEC as f32)
    }

    pub const fn is_zero(&self) -> bool {
        self.0 == 0
    }

    pub const fn checked_add(self, rhs: Duration) -> Option<Duration> {
        match self.0.checked_add(rhs.0) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }
    pub const fn checked_sub(self, rhs: Duration) -> Option<Duration> {
        match self.0.checked_sub(rhs.0) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }
    pub const fn checked_mul(self, rhs: u32) -> Option<Duration> {
        match self.0.checked_mul(rhs as u64) {
            Some(n) => Some(Duration(n)),
            None => None,
        }
    }
    pub const fn checked_div(self, rhs: u32) -> Option<Duration> {
        if rhs == 0 {
            None
        } else {
            Some(Duration(self.0 / rhs as u64))
        }
    }
    pub const fn saturating_add(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_add(rhs.0))
    }
    pub const fn saturating_sub(self, rhs: Duration) -> Duration {
        Duration(self.0.saturating_sub(rhs.0))
    }
    pub const fn saturating_mul(self, rhs: u32) -> Duration {
        Duration(self.0.saturating_mul(rhs as u64))
    }
    pub const fn abs_diff(self, other: Duration) -> Duration {
        Duration(self.0.abs_diff(other.0))
    }

    /// `self × rhs` as `std`'s `mul_f64` computes it (through seconds in `f64`),
    /// saturating as [`Duration::from_secs_f64`] does.
    pub fn mul_f64(self, rhs: f64) -> Duration {
        Duration::from_secs_f64(rhs * self.as_secs_f64())
    }
    /// `self ÷ rhs` as `std`'s `div_f64` computes it, saturating.
    pub fn div_f64(self, rhs: f64) -> Duration {
        Duration::from_secs_f64(self.as_secs_f64() / rhs)
    }

    /// The same span as a `std::time::Duration` (for sleeps, timeouts, real clocks).
    pub const fn to_std(self) -> std::time::Duration {
        std::time::Duration::from_nanos(self.0)
    }
}

/// A duration in nanoseconds: the integer inside, for hot paths that keep timer
/// arithmetic in `u64` (a plain field read; it was a saturating `u128` conversion when
/// `Duration` was `std`'s).
#[inline]
pub const fn dur_nanos(d: Duration) -> u64 {
    d.0
}

impl From<std::time::Duration> for Duration {
    /// Saturates at [`Duration::MAX`] beyond about 584 years.
    fn from(d: std::time::Duration) -> Duration {
        Duration(u64::try_from(d.as_nanos()).unwrap_or(u64::MAX))
    }
}

impl From<Duration> for std::time::Duration {
    fn from(d: Duration) -> std::time::Duration {
        d.to_std()
    }
}

impl Add for Duration {
    type Output = Duration;
    /// Saturating at [`Duration::MAX`].
    fn add(self, rhs: Duration) -> Duration {
        self.saturating_add(rhs)
    }
}

impl AddAssign for Duration {
    fn add_assign(&mut self, rhs: Duration) {
        *self = *self + rhs;
    }
}

impl Sub for Duration {
    type Output = Duration;
    /// Saturating at zero (`std` panics there).
    fn sub(self, rhs: Duration) -> Duration {
        self.saturating_sub(rhs)
    }
}

impl SubAssign for Duration {
    fn sub_assign(&mut self, rhs: Duration) {
        *self = *self - rhs;
    }
}

impl Mul<u32> for Duration {
    type Output = Duration;
    /// Saturating at [`Duration::MAX`].
    fn mul(self, rhs: u32) -> Duration {
        self.saturating_mul(rhs)
    }
}

impl Mul<Duration> for u32 {
    type Output = Duration;
    fn mul(self, rhs: Duration) -> Duration {
        rhs * self
    }
}

impl MulAssign<u32> for Duration {
    fn mul_assign(&mut self, rhs: u32) {
        *self = *self * rhs;
    }
}

impl Div<u32> for Duration {
    type Output = Duration;
    /// Panics when `rhs` is zero, as integer division does.
    fn div(self, rhs: u32) -> Duration {
        Duration(self.0 / u64::from(rhs))
    }
}

impl DivAssign<u32> for Duration {
    fn div_assign(&mut self, rhs: u32) {
        *self = *self / rhs;
    }
}

impl Sum for Duration {
    fn sum<I: Iterator<Item = Duration>>(iter: I) -> Duration {
        iter.fold(Duration::ZERO, |a, b| a + b)
    }
}

impl<'a> Sum<&'a Duration> for Duration {
    fn sum<I: Iterator<Item = &'a Duration>>(iter: I) -> Duration {
        iter.fold(Duration::ZERO, |a, b| a + *b)
    }
}

impl serde::Serialize for Duration {
    /// As `std::time::Duration` serialises (`{ secs, nanos }`), so JSON does not change.
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_std().serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Duration {
    /// As `std::time::Duration` deserialises; beyond the range it saturates.
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        std::time::Duration::deserialize(d).map(Duration::from)
    }
}

impl fmt::Debug for Duration {
    /// Exactly `std::time::Duration`'s format ("1.5s", "200ms", "10µs"), precision
    /// and width flags included.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.to_std(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::Duration;
    use std::time::Duration as Std;

    /// Spans, in nanoseconds, across the scales brisk uses.
    const NS: [u64; 12] = [
        0,
        1,
        999,
        1_000,
        1_500_000,
        40_000_000,
        999_999_999,
        1_000_000_000,
        1_234_567_891,
        86_400_000_000_000,
        123_456_789_012_345,
        u64::MAX / 3,
    ];

    #[test]
    fn methods_agree_with_std_in_range() {
        for &n in &NS {
            let (d, s) = (Duration::from_nanos(n), Std::from_nanos(n));
            assert_eq!(d.as_secs(), s.as_secs());
            assert_eq!(d.subsec_nanos(), s.subsec_nanos());
            assert_eq!(d.subsec_micros(), s.subsec_micros());
            assert_eq!(d.subsec_millis(), s.subsec_millis());
            assert_eq!(d.as_millis(), s.as_millis());
            assert_eq!(d.as_micros(), s.as_micros());
            assert_eq!(d.as_nanos(), s.as_nanos());
            assert_eq!(d.as_secs_f64().to_bits(), s.as_secs_f64().to_bits());
            assert_eq!(d.as_secs_f32().to_bits(), s.as_secs_f32().to_bits());
            assert_eq!(d.is_zero(), s.is_zero());
            assert_eq!(format!("{d:?}"), format!("{s:?}"));
            assert_eq!(format!("{d:.2?}"), format!("{s:.2?}"));
            assert_eq!(Std::from(d), s);
            assert_eq!(Duration::from(s), d);
            for k in [0u32, 1, 3, 1000] {
                // `None` also where std's result is beyond this type's range.
                let in_range = |x: &Std| x.as_nanos() <= u128::from(u64::MAX);
                assert_eq!(
                    d.checked_mul(k).map(Std::from),
                    s.checked_mul(k).filter(in_range)
                );
                assert_eq!(d.checked_div(k).map(Std::from), s.checked_div(k));
                if k > 0 {
                    assert_eq!(Std::from(d / k), s / k);
                }
            }
            for f in [0.0, 0.25, 0.5, 0.7, 1.0, 1.25, 3.0] {
                let want = s.mul_f64(f);
                if want.as_nanos() <= u128::from(u64::MAX) {
                    assert_eq!(Std::from(d.mul_f64(f)), want, "{n} × {f}");
                }
            }
            for &m in &NS {
                let (e, t) = (Duration::from_nanos(m), Std::from_nanos(m));
                assert_eq!(d.cmp(&e), s.cmp(&t));
                assert_eq!(d.checked_sub(e).map(Std::from), s.checked_sub(t));
                assert_eq!(Std::from(d.saturating_sub(e)), s.saturating_sub(t));
                assert_eq!(Std::from(d.abs_diff(e)), s.abs_diff(t));
                if let Some(sum) = s
                    .checked_add(t)
                    .filter(|x| x.as_nanos() <= u64::MAX as u128)
                {
                    assert_eq!(Std::from(d + e), sum);
                }
            }
        }
        for secs in [0.0, 1e-9, 0.0015, 0.1, 1.0 / 3.0, 2.5, 86_400.123_456_789] {
            let d = Duration::from_secs_f64(secs);
            assert_eq!(Std::from(d), Std::from_secs_f64(secs), "{secs}");
        }
        assert_eq!(Duration::from_secs(3), Std::from_secs(3).into());
        assert_eq!(Duration::from_millis(3), Std::from_millis(3).into());
        assert_eq!(Duration::from_micros(3), Std::from_micros(3).into());
        let v = [Duration::from_millis(1), Duration::from_millis(2)];
        assert_eq!(v.iter().sum::<Duration>(), Duration::from_millis(3));
        assert_eq!(v.into_iter().sum::<Duration>(), Duration::from_millis(3));
    }

    #[test]
    fn out_of_range_saturates_instead_of_panicking() {
        let max = Duration::MAX;
        assert_eq!(max + Duration::from_secs(1), max);
        assert_eq!(
            Duration::from_secs(1) - Duration::from_secs(2),
            Duration::ZERO
        );
        assert_eq!(max * 2, max);
        assert_eq!(Duration::from_secs(u64::MAX), max);
        assert_eq!(Duration::from_millis(u64::MAX), max);
        assert_eq!(Duration::from_micros(u64::MAX), max);
        assert_eq!(Duration::from(Std::MAX), max);
        assert_eq!(Duration::from_secs_f64(-1.0), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::NAN), Duration::ZERO);
        assert_eq!(Duration::from_secs_f64(f64::INFINITY), max);
        assert_eq!(Duration::from_secs_f64(1e30), max);
        assert_eq!(Duration::from_secs(1).mul_f64(-2.0), Duration::ZERO);
        assert_eq!(max.checked_add(Duration::from_nanos(1)), None);
        assert_eq!(Duration::ZERO.checked_sub(Duration::from_nanos(1)), None);
        assert_eq!(max.checked_mul(2), None);
        assert_eq!(Duration::from_secs(1).checked_div(0), None);
    }
}

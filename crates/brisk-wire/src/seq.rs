//! TCP sequence numbers: arithmetic and comparison modulo 2^32 (RFC 9293 §3.4).

use std::cmp::Ordering;
use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// A 32-bit sequence number. `<` and friends compare through `wrapping_sub`, so they are
/// correct across wrap as long as the two values are within 2^31 of each other.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct SeqNum(pub u32);

impl SeqNum {
    /// Signed distance `self - other` in bytes.
    pub fn diff(self, other: SeqNum) -> i32 {
        self.0.wrapping_sub(other.0) as i32
    }
    pub fn max(self, other: SeqNum) -> SeqNum {
        if self >= other {
            self
        } else {
            other
        }
    }
    pub fn min(self, other: SeqNum) -> SeqNum {
        if self <= other {
            self
        } else {
            other
        }
    }
}

impl PartialOrd for SeqNum {
    fn partial_cmp(&self, other: &SeqNum) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SeqNum {
    /// Not a total order over all u32 values, only within a 2^31 window, which TCP guarantees.
    fn cmp(&self, other: &SeqNum) -> Ordering {
        self.diff(*other).cmp(&0)
    }
}

impl Add<u32> for SeqNum {
    type Output = SeqNum;
    fn add(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_add(n))
    }
}

impl AddAssign<u32> for SeqNum {
    fn add_assign(&mut self, n: u32) {
        self.0 = self.0.wrapping_add(n);
    }
}

impl Sub<u32> for SeqNum {
    type Output = SeqNum;
    fn sub(self, n: u32) -> SeqNum {
        SeqNum(self.0.wrapping_sub(n))
    }
}

impl Sub<SeqNum> for SeqNum {
    type Output = u32;
    /// Forward distance from `other` to `self` (wrapping). Callers ensure `self >= other`.
    fn sub(self, other: SeqNum) -> u32 {
        self.0.wrapping_sub(other.0)
    }
}

impl fmt::Debug for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

impl fmt::Display for SeqNum {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compares_across_wrap() {
        let a = SeqNum(u32::MAX - 10);
        let b = a + 20;
        assert!(a < b);
        assert_eq!(b - a, 20);
        assert_eq!(a.diff(b), -20);
        assert_eq!(a.max(b), b);
    }
}

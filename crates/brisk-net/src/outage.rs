//! Link outages: configured intervals `[start, end)` during which the link is down and
//! every arriving packet is dropped (counted as `DropReason::Outage`). Packets already
//! queued or on the wire when an outage begins are still delivered: the outage models
//! a path that stops accepting traffic (a handover, a route flap), for fault campaigns
//! whose outages last several RTOs.

use brisk_time::Instant;

use crate::error::NetError;

/// One outage, `[start, end)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Outage {
    pub start: Instant,
    pub end: Instant,
}

/// Sorted, non-overlapping outages and a cursor: queries at non-decreasing times are
/// amortised O(1).
#[derive(Clone, Debug, Default)]
pub(crate) struct OutageSchedule {
    outages: Vec<Outage>,
    next: usize,
}

impl OutageSchedule {
    pub(crate) fn new(mut outages: Vec<Outage>) -> Result<Self, NetError> {
        for o in &outages {
            if o.end <= o.start {
                return Err(NetError::invalid(
                    "outages",
                    format!("[{}, {})", o.start, o.end),
                    "an outage must end after it starts",
                ));
            }
        }
        outages.sort_unstable_by_key(|o| o.start);
        for w in outages.windows(2) {
            if w[1].start < w[0].end {
                return Err(NetError::invalid(
                    "outages",
                    format!(
                        "[{}, {}) and [{}, {})",
                        w[0].start, w[0].end, w[1].start, w[1].end
                    ),
                    "outages must not overlap",
                ));
            }
        }
        Ok(OutageSchedule { outages, next: 0 })
    }

    /// Whether no outage is left at or after the cursor (the link can no longer go
    /// down).
    pub(crate) fn none_left(&self) -> bool {
        self.next >= self.outages.len()
    }

    /// Whether the link is down at `now`; `now` must not decrease between calls.
    pub(crate) fn is_down(&mut self, now: Instant) -> bool {
        while let Some(o) = self.outages.get(self.next) {
            if now < o.end {
                return now >= o.start;
            }
            self.next += 1;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn o(s: u64, e: u64) -> Outage {
        Outage {
            start: Instant::from_millis(s),
            end: Instant::from_millis(e),
        }
    }

    #[test]
    fn down_exactly_inside_half_open_intervals() {
        let mut s = OutageSchedule::new(vec![o(30, 40), o(10, 20)]).unwrap();
        let down: Vec<u64> = (0..50)
            .filter(|&t| s.is_down(Instant::from_millis(t)))
            .collect();
        let want: Vec<u64> = (10..20).chain(30..40).collect();
        assert_eq!(down, want);
    }

    #[test]
    fn overlapping_or_empty_outages_are_rejected() {
        assert!(OutageSchedule::new(vec![o(10, 20), o(15, 30)]).is_err());
        assert!(OutageSchedule::new(vec![o(10, 10)]).is_err());
        assert!(OutageSchedule::new(vec![o(10, 20), o(20, 30)]).is_ok());
    }
}

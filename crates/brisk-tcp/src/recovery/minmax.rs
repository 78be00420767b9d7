//! Windowed min/max filters: Kathleen Nichols' three-sample algorithm, the one Linux
//! uses in `lib/win_minmax.c` for `tcp_min_rtt` (RFC 8985 §6.2 and BBR rely on it too).
//!
//! The filter keeps the best, second-best and third-best samples, each from a later
//! part of the window than the one before it. When the best one ages out of the window,
//! the next takes over, so the estimate is exact for monotone input and within one
//! sub-window otherwise, in O(1) time and space per sample.

use brisk_time::{dur_nanos, Duration, Instant};

/// One remembered measurement.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Sample {
    t: Instant,
    v: u64,
}

/// The shared three-sample machinery; `better(a, b)` is `a <= b` for a min filter.
#[derive(Clone, Debug)]
struct Window {
    window: Duration,
    /// `window` and its quarter and half in nanoseconds, compared with sample ages in
    /// nanoseconds: the same comparisons as in `Duration` (a quarter and a half of a
    /// `Duration` are the floor of its nanoseconds' quarter and half), without the
    /// conversions, on every RTT sample.
    win_ns: u64,
    quarter_ns: u64,
    half_ns: u64,
    /// `s[0]` is the current best; `s[1]`, `s[2]` are later, worse fallbacks.
    s: Option<[Sample; 3]>,
}

impl Window {
    fn new(window: Duration) -> Self {
        Window {
            window,
            win_ns: dur_nanos(window),
            quarter_ns: dur_nanos(window / 4),
            half_ns: dur_nanos(window / 2),
            s: None,
        }
    }

    fn reset(&mut self, now: Instant, v: u64) -> u64 {
        let x = Sample { t: now, v };
        self.s = Some([x; 3]);
        v
    }

    fn update(&mut self, now: Instant, v: u64, better: fn(u64, u64) -> bool) -> u64 {
        let (win, quarter, half) = (self.win_ns, self.quarter_ns, self.half_ns);
        let age_of = |t: Instant| now.as_nanos().saturating_sub(t.as_nanos());
        let Some(s) = self.s.as_mut() else {
            return self.reset(now, v);
        };
        let x = Sample { t: now, v };
        // A new best, or every remembered sample has expired: start over.
        if better(v, s[0].v) || age_of(s[2].t) > win {
            return self.reset(now, v);
        }
        if better(v, s[1].v) {
            s[1] = x;
            s[2] = x;
        } else if better(v, s[2].v) {
            s[2] = x;
        }
        // Age the best sample out, or refresh fallbacks that have gone stale.
        let age = age_of(s[0].t);
        if age > win {
            // The window passed without a new best: promote the fallbacks. The second
            // may be stale too (the third was checked on entry), hence at most twice.
            s[0] = s[1];
            s[1] = s[2];
            s[2] = x;
            if age_of(s[0].t) > win {
                s[0] = s[1];
                s[1] = s[2];
                s[2] = x;
            }
        } else if s[1].t == s[0].t && age > quarter {
            // A quarter window without a second choice: take one from the second quarter.
            s[1] = x;
            s[2] = x;
        } else if s[2].t == s[1].t && age > half {
            // Half a window without a third choice: take one from the second half.
            s[2] = x;
        }
        s[0].v
    }

    fn get(&self) -> Option<u64> {
        self.s.map(|s| s[0].v)
    }
}

/// Running minimum of `u64` values over a sliding time window.
#[derive(Clone, Debug)]
pub struct WindowedMin(Window);

impl WindowedMin {
    pub fn new(window: Duration) -> Self {
        WindowedMin(Window::new(window))
    }
    /// Add a measurement taken at `now` (times must not go backwards); returns the
    /// current windowed minimum.
    pub fn update(&mut self, now: Instant, value: u64) -> u64 {
        self.0.update(now, value, |a, b| a <= b)
    }
    /// The current minimum; `None` before the first measurement.
    pub fn get(&self) -> Option<u64> {
        self.0.get()
    }
    /// Forget everything and start from this one measurement.
    pub fn reset(&mut self, now: Instant, value: u64) {
        self.0.reset(now, value);
    }
    pub fn window(&self) -> Duration {
        self.0.window
    }
}

/// Running maximum of `u64` values over a sliding time window (e.g. BBR's bandwidth).
#[derive(Clone, Debug)]
pub struct WindowedMax(Window);

impl WindowedMax {
    pub fn new(window: Duration) -> Self {
        WindowedMax(Window::new(window))
    }
    /// Add a measurement taken at `now`; returns the current windowed maximum.
    pub fn update(&mut self, now: Instant, value: u64) -> u64 {
        self.0.update(now, value, |a, b| a >= b)
    }
    pub fn get(&self) -> Option<u64> {
        self.0.get()
    }
    pub fn reset(&mut self, now: Instant, value: u64) {
        self.0.reset(now, value);
    }
    pub fn window(&self) -> Duration {
        self.0.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Instant {
        Instant::from_millis(v)
    }

    #[test]
    fn empty_filter_has_no_value() {
        assert_eq!(WindowedMin::new(Duration::from_secs(1)).get(), None);
        assert_eq!(WindowedMax::new(Duration::from_secs(1)).get(), None);
    }

    #[test]
    fn min_tracks_smaller_values_immediately() {
        let mut f = WindowedMin::new(Duration::from_secs(10));
        assert_eq!(f.update(ms(0), 50), 50);
        assert_eq!(f.update(ms(1), 70), 50);
        assert_eq!(f.update(ms(2), 30), 30);
        assert_eq!(f.update(ms(3), 40), 30);
        assert_eq!(f.get(), Some(30));
    }

    #[test]
    fn min_expires_after_the_window_and_falls_back_to_later_samples() {
        let win = Duration::from_millis(100);
        let mut f = WindowedMin::new(win);
        f.update(ms(0), 10);
        // Rising samples spread over the window become fallbacks.
        f.update(ms(30), 20);
        f.update(ms(60), 30);
        f.update(ms(90), 40);
        assert_eq!(f.get(), Some(10));
        // At 101 ms the 10 has aged out; the best sample still inside the window wins.
        let got = f.update(ms(101), 50);
        assert!(got > 10, "expired minimum still reported: {got}");
        assert!(got <= 40, "lost every in-window fallback: {got}");
        // Much later, only the newest sample remains.
        assert_eq!(f.update(ms(1000), 99), 99);
    }

    #[test]
    fn min_of_a_decreasing_then_flat_series_is_exact_inside_the_window() {
        let win = Duration::from_millis(50);
        let mut f = WindowedMin::new(win);
        for i in 0..200u64 {
            // A series whose true windowed min is always the newest value.
            let v = 1000 - i;
            assert_eq!(f.update(ms(i), v), v);
        }
    }

    #[test]
    fn min_matches_brute_force_within_sub_window_error() {
        // A deterministic zig-zag: the filter may lag the true windowed min, but never
        // reports a value smaller than the true one nor older than the window.
        let win_ms = 40u64;
        let mut f = WindowedMin::new(Duration::from_millis(win_ms));
        let series: Vec<u64> = (0..400u64).map(|i| 100 + (i * 37 % 61)).collect();
        for (i, &v) in series.iter().enumerate() {
            let i = i as u64;
            let got = f.update(ms(i), v);
            let lo = i.saturating_sub(win_ms) as usize;
            let true_min = *series[lo..=i as usize].iter().min().unwrap();
            assert!(got >= true_min, "at {i}: {got} < true min {true_min}");
            // Anything reported was measured at most one window ago.
            assert!(
                series[lo..=i as usize].contains(&got),
                "at {i}: {got} is stale"
            );
        }
    }

    #[test]
    fn max_tracks_and_expires() {
        let mut f = WindowedMax::new(Duration::from_millis(10));
        assert_eq!(f.update(ms(0), 5), 5);
        assert_eq!(f.update(ms(1), 9), 9);
        assert_eq!(f.update(ms(5), 3), 9);
        assert_eq!(f.update(ms(12), 4), 4);
    }

    #[test]
    fn reset_forgets_history() {
        let mut f = WindowedMin::new(Duration::from_secs(1));
        f.update(ms(0), 1);
        f.reset(ms(1), 7);
        assert_eq!(f.get(), Some(7));
        assert_eq!(f.update(ms(2), 8), 7);
    }
}

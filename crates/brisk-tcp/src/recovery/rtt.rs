//! Round-trip time estimation and the retransmission timeout: RFC 6298 §2 smoothing
//! with Linux's RTO formula (`tcp_set_rto`: `srtt + max(4·rttvar, rto_min)`), plus the
//! windowed minimum RTT Linux keeps for RACK and congestion control (`tcp_update_rtt_min`).
//!
//! Like Linux (`srtt_us` is stored <<3, `mdev_us` <<2), srtt and rttvar are kept scaled
//! by 8 and 4 in integer nanoseconds, so the 1/8 and 1/4 gains lose no precision to
//! repeated truncation and the result is the same on every platform.

use super::minmax::WindowedMin;
use brisk_time::{dur_nanos, Duration, Instant};

/// Linux `tcp_min_rtt_wlen`: the min-RTT filter window, 300 s.
pub const MIN_RTT_WINDOW: Duration = Duration::from_secs(300);

/// Smallest sample accepted; Linux likewise treats a 0 µs sample as 1 µs.
const MIN_SAMPLE: Duration = Duration::from_micros(1);

/// RFC 6298 RTT estimator with a windowed min-RTT filter.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    /// 8 × srtt, ns; meaningful once `latest` is `Some`.
    srtt8: u64,
    /// 4 × rttvar, ns.
    rttvar4: u64,
    latest: Option<Duration>,
    min_rtt: WindowedMin,
    /// `srtt8 / 8` and the filter's minimum as `Duration`s, made once per sample
    /// rather than on every query (the controller's view is refreshed on every ACK).
    srtt_now: Option<Duration>,
    min_rtt_now: Option<Duration>,
    initial_rto: Duration,
    min_rto: Duration,
    max_rto: Duration,
}

impl RttEstimator {
    /// `initial_rto` applies until the first sample (RFC 6298 §2.1: 1 s). A `max_rto`
    /// below `min_rto` (a bad config) is raised to `min_rto` rather than rejected.
    pub fn new(initial_rto: Duration, min_rto: Duration, max_rto: Duration) -> Self {
        RttEstimator {
            srtt8: 0,
            rttvar4: 0,
            latest: None,
            min_rtt: WindowedMin::new(MIN_RTT_WINDOW),
            srtt_now: None,
            min_rtt_now: None,
            initial_rto,
            min_rto,
            max_rto: max_rto.max(min_rto),
        }
    }

    /// Feed one valid (Karn-safe) sample. The first sets srtt = r, rttvar = r/2 (RFC 6298
    /// §2.2); later ones apply §2.3 with alpha = 1/8, beta = 1/4, rttvar first (it uses
    /// the old srtt).
    pub fn on_sample(&mut self, now: Instant, rtt: Duration) {
        let rtt = rtt.max(MIN_SAMPLE);
        let r = dur_nanos(rtt);
        let min = self.min_rtt.update(now, r);
        self.min_rtt_now = Some(Duration::from_nanos(min));
        if self.latest.is_none() {
            self.srtt8 = r.saturating_mul(8);
            self.rttvar4 = r.saturating_mul(2);
        } else {
            let srtt = self.srtt8 / 8;
            let err = srtt.abs_diff(r);
            // rttvar4 ← 4·(3/4·rttvar + 1/4·|srtt − r|) = rttvar4 − rttvar4/4 + err
            self.rttvar4 = (self.rttvar4 - self.rttvar4 / 4).saturating_add(err);
            // srtt8 ← 8·(7/8·srtt + 1/8·r) = srtt8 − srtt8/8 + r
            self.srtt8 = (self.srtt8 - self.srtt8 / 8).saturating_add(r);
        }
        self.latest = Some(rtt);
        self.srtt_now = Some(Duration::from_nanos(self.srtt8 / 8));
    }

    /// Base RTO without backoff: `initial_rto` before any sample, then
    /// `srtt + max(4·rttvar, min_rto)` clamped to `max_rto`. Linux folds `rto_min` into
    /// the variance term rather than flooring the sum (RFC 6298 §2.4), which keeps a
    /// margin above srtt even when the variance has collapsed on a stable path.
    pub fn rto(&self) -> Duration {
        if self.latest.is_none() {
            return self.initial_rto;
        }
        let var = self.rttvar4.max(dur_nanos(self.min_rto));
        Duration::from_nanos((self.srtt8 / 8).saturating_add(var)).min(self.max_rto)
    }

    /// The RTO after `backoffs` consecutive timeouts (RFC 6298 §5.5: doubling), capped
    /// at `max_rto`.
    pub fn rto_backoff(&self, backoffs: u32) -> Duration {
        super::rto::backoff(self.rto(), backoffs, self.max_rto)
    }

    /// Smoothed RTT; `None` before the first sample.
    pub fn srtt(&self) -> Option<Duration> {
        self.srtt_now
    }

    /// RTT variation (zero before the first sample).
    pub fn rttvar(&self) -> Duration {
        Duration::from_nanos(self.rttvar4 / 4)
    }

    /// The most recent sample.
    pub fn latest(&self) -> Option<Duration> {
        self.latest
    }

    /// Minimum RTT over the last [`MIN_RTT_WINDOW`].
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt_now
    }

    pub fn min_rto(&self) -> Duration {
        self.min_rto
    }
    pub fn max_rto(&self) -> Duration {
        self.max_rto
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(v: u64) -> Duration {
        Duration::from_millis(v)
    }

    fn linux_default() -> RttEstimator {
        RttEstimator::new(Duration::from_secs(1), ms(200), Duration::from_secs(120))
    }

    #[test]
    fn rto_backoff_saturates_and_stays_within_max_rto() {
        let big = Duration::from_secs(u64::MAX / 4);
        let durs = [
            Duration::ZERO,
            Duration::from_nanos(1),
            ms(1),
            ms(200),
            Duration::from_secs(1),
            Duration::from_secs(120),
            Duration::from_nanos(u64::MAX / 3),
            Duration::from_nanos(u64::MAX),
            big,
        ];
        let samples = [
            0u64,
            1,
            1_000,
            20_000_000,
            3_000_000_000,
            u64::MAX / 16,
            u64::MAX,
        ];
        for &initial in &durs {
            for &min in &durs {
                for &max in &durs {
                    let mut e = RttEstimator::new(initial, min, max);
                    for (i, &r) in std::iter::once(&0).chain(samples.iter()).enumerate() {
                        if i > 0 {
                            e.on_sample(Instant::from_nanos(r), Duration::from_nanos(r));
                        }
                        let mut prev = Duration::ZERO;
                        for n in [0, 1, 2, 5, 30, 31, 32, 40, u32::MAX] {
                            let rto = e.rto_backoff(n);
                            // Each backoff doubles until the cap, never past it.
                            assert!(
                                rto <= e.max_rto() && rto >= prev,
                                "initial {initial:?} min {min:?} max {max:?} sample {i} backoff {n}"
                            );
                            prev = rto;
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn before_any_sample_rto_is_initial_and_srtt_unknown() {
        let e = linux_default();
        assert_eq!(e.rto(), Duration::from_secs(1));
        assert_eq!(e.srtt(), None);
        assert_eq!(e.latest(), None);
        assert_eq!(e.min_rtt(), None);
        assert_eq!(e.rttvar(), Duration::ZERO);
    }

    #[test]
    fn first_sample_sets_srtt_and_half_rttvar() {
        let mut e = linux_default();
        e.on_sample(Instant::ZERO, ms(100));
        assert_eq!(e.srtt(), Some(ms(100)));
        assert_eq!(e.rttvar(), ms(50));
        // 100 + max(4·50, 200)
        assert_eq!(e.rto(), ms(300));
        assert_eq!(e.latest(), Some(ms(100)));
        assert_eq!(e.min_rtt(), Some(ms(100)));
    }

    #[test]
    fn later_samples_follow_rfc6298_gains_exactly() {
        // (sample µs, srtt µs, rttvar ns, rto µs), each row after the previous one.
        let table: &[(u64, u64, u64, u64)] = &[
            (100_000, 100_000, 50_000_000, 300_000),
            // rttvar = 3/4·50 + 1/4·|100−200| = 62.5; srtt = 7/8·100 + 1/8·200 = 112.5
            (200_000, 112_500, 62_500_000, 362_500),
            // rttvar = 3/4·62.5 + 0 = 46.875; srtt unchanged; 4·rttvar < 200 ms = min_rto
            (112_500, 112_500, 46_875_000, 312_500),
            // rttvar = 3/4·46.875 + 1/4·|112.5−32.5| = 55.15625; srtt = 102.5
            (32_500, 102_500, 55_156_250, 323_125),
        ];
        let mut e = linux_default();
        for &(sample, srtt, var, rto) in table {
            e.on_sample(Instant::ZERO, Duration::from_micros(sample));
            assert_eq!(
                e.srtt(),
                Some(Duration::from_micros(srtt)),
                "srtt after {sample}"
            );
            assert_eq!(
                e.rttvar(),
                Duration::from_nanos(var),
                "rttvar after {sample}"
            );
            assert_eq!(e.rto(), Duration::from_micros(rto), "rto after {sample}");
        }
    }

    #[test]
    fn rto_never_falls_below_srtt_plus_min_rto() {
        let mut e = linux_default();
        for _ in 0..50 {
            e.on_sample(Instant::ZERO, ms(1));
        }
        assert_eq!(e.srtt(), Some(ms(1)));
        assert!(e.rttvar() < Duration::from_micros(10));
        assert_eq!(e.rto(), ms(201));
        assert!(e.rto() >= e.min_rto());
    }

    #[test]
    fn rto_is_clamped_at_max() {
        let mut e = linux_default();
        e.on_sample(Instant::ZERO, Duration::from_secs(100));
        assert_eq!(e.rto(), Duration::from_secs(120));
        assert_eq!(e.rto_backoff(3), Duration::from_secs(120));
    }

    #[test]
    fn backoff_doubles_until_the_cap_without_overflow() {
        let mut e = linux_default();
        e.on_sample(Instant::ZERO, ms(100));
        assert_eq!(e.rto_backoff(0), ms(300));
        assert_eq!(e.rto_backoff(1), ms(600));
        assert_eq!(e.rto_backoff(4), ms(4800));
        assert_eq!(e.rto_backoff(20), Duration::from_secs(120));
        assert_eq!(e.rto_backoff(u32::MAX), Duration::from_secs(120));
    }

    #[test]
    fn zero_sample_is_treated_as_one_microsecond() {
        let mut e = linux_default();
        e.on_sample(Instant::ZERO, Duration::ZERO);
        assert_eq!(e.srtt(), Some(Duration::from_micros(1)));
    }

    #[test]
    fn min_rtt_forgets_samples_older_than_300s() {
        let mut e = linux_default();
        e.on_sample(Instant::from_secs(0), ms(10));
        e.on_sample(Instant::from_secs(100), ms(50));
        e.on_sample(Instant::from_secs(200), ms(40));
        assert_eq!(e.min_rtt(), Some(ms(10)));
        e.on_sample(Instant::from_secs(301), ms(60));
        let m = e.min_rtt().unwrap();
        assert!(m > ms(10) && m <= ms(50), "min_rtt {m:?}");
        e.on_sample(Instant::from_secs(700), ms(70));
        assert_eq!(e.min_rtt(), Some(ms(70)));
    }

    #[test]
    fn max_below_min_is_raised_not_a_panic() {
        let mut e = RttEstimator::new(ms(1000), ms(200), ms(100));
        e.on_sample(Instant::ZERO, ms(10));
        assert_eq!(e.rto(), ms(200));
    }
}

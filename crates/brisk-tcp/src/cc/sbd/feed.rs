//! One TCP flow's one-way-delay feed for the detector (RFC 8382 §4; spec §5.6): from
//! each ACK's timestamps, a relative OWD in µs, with the relative clock skew between
//! the two hosts estimated and removed (§3.3.3).
//!
//! The sample is the sender's (`sbd.md`, "Feedback path"): the peer's TSval (its clock
//! when it sent the ACK) minus the TSecr it echoes (our clock when the echoed segment
//! left), each converted to µs with its clock's rate. That is the forward OWD plus the
//! receiver's ACK delay plus a constant offset (both hosts' random TS offsets and
//! clock origins), which every statistic cancels since they are all relative to a mean
//! (§4). Both counters are 32-bit and wrap; each is extended to 64 bits by adding the
//! signed difference to its previous value, so a wrap between two ACKs costs nothing.
//!
//! **Clock skew** (§3.3.3: "skew_est is the statistic most affected"; the draft
//! promises an online correction "based on min_T(OWD)" and gives none, S8): a relative
//! rate error of r ppm between the hosts adds r µs of OWD per second. The estimate
//! follows the min-based idea with a robust line: the minimum OWD of each window of
//! `window` (a quarter of N·T by default) is kept for the last [`SKEW_WINDOWS`]
//! windows, and the drift is the Theil–Sen slope of those minima (the median of the
//! pairwise slopes), clamped to ±`max_ppm`. Queueing only adds delay, so a window's
//! minimum is the path's base delay plus the drift whenever the queue drained once
//! in the window; the median ignores the windows where it did not (up to ~29 % of the
//! pairs). Each sample is corrected by slope × (t − first sample's t). Cost: O(1) per
//! sample, one median of 120 slopes per window, in a stack array: no allocation.

use brisk_time::{Duration, Instant};

/// Window minima the skew estimate keeps.
pub const SKEW_WINDOWS: usize = 16;
const PAIRS: usize = SKEW_WINDOWS * (SKEW_WINDOWS - 1) / 2;

/// A 32-bit timestamp counter extended to 64 bits.
#[derive(Clone, Copy, Debug, Default)]
struct Unwrap {
    last: u32,
    ext: i64,
}

impl Unwrap {
    fn start(v: u32) -> Self {
        Unwrap { last: v, ext: 0 }
    }
    fn next(&mut self, v: u32) -> i64 {
        self.ext += i64::from(v.wrapping_sub(self.last) as i32);
        self.last = v;
        self.ext
    }
}

/// The OWD feed's settings, per host.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FeedConfig {
    /// Our timestamp clock's rate, Hz (brisk's: 1000, a 1-ms TSval like Linux).
    pub own_ts_hz: u32,
    /// The peers' timestamp clock rate, Hz (Linux and brisk: 1000). The draft wants
    /// a resolution below 1/100 of the delay range (§4): 1 ms suits paths whose
    /// delay varies by 100 ms or more; finer variation is quantised.
    pub peer_ts_hz: u32,
    /// Estimate and remove relative clock skew (§3.3.3, module doc).
    pub skew_correction: bool,
    /// Window of one minimum in the skew estimate.
    pub skew_window: Duration,
    /// Largest drift the estimate believes, ppm; beyond it a slope is taken as a
    /// queue change and clamped (crystals are within ±100 ppm; ±500 leaves room).
    pub max_ppm: f64,
    /// A jump of the raw OWD by more than this between two samples restarts the feed
    /// (a peer that changed its TS offset, or a hostile TSval): 60 s.
    pub max_jump: Duration,
}

impl Default for FeedConfig {
    fn default() -> Self {
        FeedConfig {
            own_ts_hz: 1000,
            peer_ts_hz: 1000,
            skew_correction: true,
            // N·T / 4 with the draft's N = 50, T = 350 ms: 16 windows span 70 s.
            skew_window: Duration::from_micros(4_375_000),
            max_ppm: 500.0,
            max_jump: Duration::from_secs(60),
        }
    }
}

/// The skew estimator's state (module doc).
#[derive(Clone, Debug)]
struct SkewEst {
    /// (time µs since the feed's start, minimum OWD µs) per closed window, a ring.
    mins: [(i64, i64); SKEW_WINDOWS],
    len: usize,
    head: usize,
    win_end: i64,
    cur: Option<(i64, i64)>,
    /// The drift, µs per s (= ppm).
    ppm: f64,
}

impl SkewEst {
    fn new() -> Self {
        SkewEst {
            mins: [(0, 0); SKEW_WINDOWS],
            len: 0,
            head: 0,
            win_end: 0,
            cur: None,
            ppm: 0.0,
        }
    }

    fn on_sample(&mut self, t: i64, owd: i64, cfg: &FeedConfig) {
        let w = cfg.skew_window.as_micros().max(1) as i64;
        if self.win_end == 0 {
            self.win_end = t + w;
        }
        if t >= self.win_end {
            if let Some(m) = self.cur.take() {
                self.mins[self.head] = m;
                self.head = (self.head + 1) % SKEW_WINDOWS;
                self.len = (self.len + 1).min(SKEW_WINDOWS);
                self.refit(cfg);
            }
            // Skip windows without samples: the next window starts at this sample.
            self.win_end = t + w;
        }
        match self.cur {
            Some((_, m)) if m <= owd => {}
            _ => self.cur = Some((t, owd)),
        }
    }

    /// Theil–Sen over the window minima, once per window.
    fn refit(&mut self, cfg: &FeedConfig) {
        if self.len < 3 {
            return;
        }
        let mut slopes = [0f64; PAIRS];
        let mut k = 0;
        for i in 0..self.len {
            for j in i + 1..self.len {
                let (ti, oi) = self.mins[i];
                let (tj, oj) = self.mins[j];
                if ti != tj {
                    slopes[k] = (oj - oi) as f64 / (tj - ti) as f64 * 1e6;
                    k += 1;
                }
            }
        }
        if k == 0 {
            return;
        }
        let s = &mut slopes[..k];
        let mid = k / 2;
        let (_, m, _) = s.select_nth_unstable_by(mid, f64::total_cmp);
        self.ppm = m.clamp(-cfg.max_ppm, cfg.max_ppm);
    }
}

/// One flow's feed.
#[derive(Clone, Debug)]
pub struct OwdFeed {
    peer: Unwrap,
    own: Unwrap,
    start: Option<Instant>,
    last_raw: i64,
    skew: SkewEst,
    /// The connection's cumulative lost-segment count at the last sample.
    pub(crate) lost_seen: u64,
    /// Restarts after an implausible jump.
    pub resets: u32,
}

impl Default for OwdFeed {
    fn default() -> Self {
        OwdFeed::new()
    }
}

impl OwdFeed {
    pub fn new() -> Self {
        OwdFeed {
            peer: Unwrap::default(),
            own: Unwrap::default(),
            start: None,
            last_raw: 0,
            skew: SkewEst::new(),
            lost_seen: 0,
            resets: 0,
        }
    }

    /// The drift the estimate removes, ppm (peer clock fast against ours: positive).
    pub fn skew_ppm(&self) -> f64 {
        self.skew.ppm
    }

    /// The relative OWD (µs, skew removed when configured) of an ACK that arrived at
    /// `now` carrying `tsval` (the peer's clock) and echoing `tsecr` (ours). `None`
    /// for the first sample of a (re)started feed, which only sets the origin.
    pub fn sample(
        &mut self,
        now: Instant,
        tsval: u32,
        tsecr: u32,
        cfg: &FeedConfig,
    ) -> Option<i64> {
        let Some(start) = self.start else {
            self.restart(now, tsval, tsecr);
            return None;
        };
        let peer = self.peer.next(tsval);
        let own = self.own.next(tsecr);
        let raw = peer.saturating_mul(1_000_000) / i64::from(cfg.peer_ts_hz.max(1))
            - own.saturating_mul(1_000_000) / i64::from(cfg.own_ts_hz.max(1));
        let jump = (raw - self.last_raw).unsigned_abs();
        if jump > cfg.max_jump.as_micros() as u64 {
            self.resets += 1;
            self.restart(now, tsval, tsecr);
            return None;
        }
        self.last_raw = raw;
        let t = (now - start).as_micros() as i64;
        if !cfg.skew_correction {
            return Some(raw);
        }
        self.skew.on_sample(t, raw, cfg);
        Some(raw - (self.skew.ppm * t as f64 / 1e6).round() as i64)
    }

    fn restart(&mut self, now: Instant, tsval: u32, tsecr: u32) {
        self.start = Some(now);
        self.peer = Unwrap::start(tsval);
        self.own = Unwrap::start(tsecr);
        self.last_raw = 0;
        self.skew = SkewEst::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(us: u64) -> Instant {
        Instant::ZERO + Duration::from_micros(us)
    }

    /// A 1-ms TS path of base OWD 20 ms with a queue that drains now and then, the
    /// peer's clock `ppm` fast; samples every 10 ms for `secs`.
    fn run(ppm: f64, secs: u64, offset_peer: u32, offset_own: u32, cfg: &FeedConfig) -> OwdFeed {
        let mut f = OwdFeed::new();
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        for i in 0..secs * 100 {
            let t_us = i * 10_000;
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // A queue of 0-60 ms, empty in about one sample of five.
            let q = if x.is_multiple_of(5) { 0 } else { x % 60_000 };
            let send_us = t_us;
            let arrive_us = send_us + 20_000 + q;
            let peer_ms = ((arrive_us as f64) * (1.0 + ppm / 1e6) / 1000.0) as u64;
            let tsval = (peer_ms as u32).wrapping_add(offset_peer);
            let tsecr = ((send_us / 1000) as u32).wrapping_add(offset_own);
            f.sample(at(arrive_us), tsval, tsecr, cfg);
        }
        f
    }

    #[test]
    fn skew_is_estimated_from_window_minima_across_counter_wraps() {
        let cfg = FeedConfig::default();
        for ppm in [100.0, -100.0, 50.0, -50.0, 0.0] {
            // Offsets near the top of the counter: both wrap during the run.
            let f = run(ppm, 120, u32::MAX - 30_000, u32::MAX - 50_000, &cfg);
            assert!(
                (f.skew_ppm() - ppm).abs() < 10.0,
                "{ppm} ppm estimated as {}",
                f.skew_ppm()
            );
            assert_eq!(f.resets, 0);
        }
    }

    #[test]
    fn corrected_samples_lose_the_drift_and_keep_the_queue() {
        let cfg = FeedConfig::default();
        let mut f = OwdFeed::new();
        let mut last = 0;
        // Idle path, peer +100 ppm: after the estimate settles the corrected OWD
        // stays within 2 ms of the first one over 200 s (uncorrected: +20 ms).
        for i in 0..20_000u64 {
            let t = i * 10_000;
            let peer = ((t + 20_000) as f64 * 1.0001 / 1000.0) as u32;
            if let Some(o) = f.sample(at(t + 20_000), peer, (t / 1000) as u32, &cfg) {
                last = o;
            }
        }
        assert!(last.abs() < 2_000, "corrected drift {last} µs");
        let raw = FeedConfig {
            skew_correction: false,
            ..cfg
        };
        let mut g = OwdFeed::new();
        for i in 0..20_000u64 {
            let t = i * 10_000;
            let peer = ((t + 20_000) as f64 * 1.0001 / 1000.0) as u32;
            if let Some(o) = g.sample(at(t + 20_000), peer, (t / 1000) as u32, &raw) {
                last = o;
            }
        }
        assert!(
            (last - 20_000).abs() <= 1_000,
            "uncorrected drift {last} µs"
        );
    }

    #[test]
    fn a_hostile_jump_restarts_the_feed_and_the_clamp_holds() {
        let cfg = FeedConfig::default();
        let mut f = OwdFeed::new();
        assert_eq!(f.sample(at(0), 1000, 5, &cfg), None);
        assert_eq!(f.sample(at(10_000), 1010, 15, &cfg), Some(0));
        // TSval jumps by 2^30 ms: not a path, a restart.
        assert_eq!(f.sample(at(20_000), 1020 + (1 << 30), 25, &cfg), None);
        assert_eq!(f.resets, 1);
        // A peer whose TSval runs 10 % fast is clamped to max_ppm.
        let mut g = OwdFeed::new();
        for i in 0..30_000u64 {
            let t = i * 10_000;
            g.sample(
                at(t),
                (t as f64 * 1.1 / 1000.0) as u32,
                (t / 1000) as u32,
                &cfg,
            );
        }
        assert_eq!(g.skew_ppm(), cfg.max_ppm);
    }
}

//! Whether the emulator itself distorted a run ("a result the emulator distorted must
//! never look like a clean result", issue 15 §1).
//!
//! The loop measures three things about itself and [`assess`] turns them into a
//! [`Health`] with plain-language `warnings`:
//!
//! * **headroom**: the fraction of wall time the loop thread spent *not* moving
//!   packets. An iteration that read, wrote or released anything counts as busy from
//!   its wake-up to its next wait; spinning near a deadline and sleeping do not.
//!   `busy_fraction` ≥ [`HealthLimits::busy`] means the loop, not the model, may have
//!   set the pace.
//! * **serviceable rate**: the forward bits delivered per *busy* second — what the
//!   loop could carry with this run's packet mix (ACKs included) if it did nothing
//!   else. Below the configured forward rate, while the emulated link was not the
//!   limit (utilisation < 90 %) and the loop was loaded (busy ≥ 50 %), the emulator
//!   could not keep up with the configured rate.
//! * **late deliveries**: the distribution of (actual write − scheduled departure),
//!   per direction. Its p99 above max([`HealthLimits::late_floor`],
//!   [`HealthLimits::late_fraction`] × the direction's one-way delay) is a warning —
//!   the model's timing was not what the kernels saw.
//!
//! Plus **kernel drops**: packets the TUN devices the loop reads from dropped because
//! their ring (txqueuelen) was full — the loop did not read them in time (Linux
//! `tun_net_xmit` drops with `SKB_DROP_REASON_FULL_RING` and counts `tx_dropped`).
//! The sender sees them as losses the model never made.

use std::sync::atomic::{AtomicU64, Ordering};

use brisk_time::Duration;
use serde::Serialize;

use crate::tools::hist::LatencySummary;

/// Warnings this process's emulators have reported so far (every run's, whichever
/// tool ran it). A caller that runs several labs at once (`brisk repro`'s real-time
/// phase) reads it before and after one of them: a warning in between means some
/// emulator beside it did not keep the model's timing, so its result is not accepted
/// as if it had run alone.
static REPORTED: AtomicU64 = AtomicU64::new(0);

/// Counts `n` warnings just reported (see [`warnings_reported`]).
pub fn note_reported(n: usize) {
    REPORTED.fetch_add(n as u64, Ordering::Relaxed);
}

/// How many emulator warnings this process has reported so far.
pub fn warnings_reported() -> u64 {
    REPORTED.load(Ordering::Relaxed)
}

/// Thresholds for the warnings (documented defaults in docs/emulator.md).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct HealthLimits {
    /// Delivery-error p99 above this is always too late (default 1 ms).
    pub late_floor: Duration,
    /// ... and above this fraction of the direction's one-way delay (default 10 %).
    pub late_fraction: f64,
    /// Busy fraction at or above which the loop is saturated (default 0.9).
    pub busy: f64,
}

impl Default for HealthLimits {
    fn default() -> Self {
        HealthLimits {
            late_floor: Duration::from_millis(1),
            late_fraction: 0.10,
            busy: 0.9,
        }
    }
}

/// Fewer deliveries than this make no late-delivery or rate verdict (too few samples
/// for a p99, or for a per-packet cost).
pub const MIN_PACKETS: u64 = 100;
/// The link counts as the limit (so a low serviceable rate did not matter) at this
/// utilisation or above.
const LINK_SATURATED: f64 = 0.9;
/// The serviceable-rate verdict needs the loop this busy: an idle loop's per-packet
/// cost includes wake-ups, and an application-limited run is not distorted.
const RATE_MIN_BUSY: f64 = 0.5;

/// What [`assess`] needs about one direction.
#[derive(Clone, Copy, Debug)]
pub struct DirInput<'a> {
    pub name: &'a str,
    pub delivered_packets: u64,
    pub delivered_bytes: u64,
    pub late: LatencySummary,
    /// The direction's shared link's propagation delay.
    pub one_way_delay: Duration,
    /// The direction's configured rate; `None`: unlimited.
    pub rate_bps: Option<u64>,
}

/// What [`assess`] needs about the run.
#[derive(Clone, Copy, Debug)]
pub struct HealthInput<'a> {
    pub elapsed_s: f64,
    pub busy_s: f64,
    pub thread_cpu_s: f64,
    pub forward: DirInput<'a>,
    pub reverse: DirInput<'a>,
    /// Packets the input devices dropped during the run; `None`: not known.
    pub kernel_drops: Option<u64>,
}

/// The emulator's verdict on itself (serialised as `emulator.health`).
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct Health {
    /// Fraction of the run the loop spent moving packets.
    pub busy_fraction: f64,
    /// 1 − `busy_fraction`.
    pub headroom: f64,
    /// CPU time of the loop thread (includes spinning, and the receiving kernels'
    /// work done inside its TUN writes).
    pub thread_cpu_s: f64,
    /// Forward bits per busy second: the forward rate the loop could serve with
    /// this run's packet mix; 0 with too few packets to tell.
    pub serviceable_bps: f64,
    /// The configured forward rate (`None`: unlimited).
    pub configured_rate_bps: Option<u64>,
    /// Forward delivered bits / (configured rate × duration).
    pub link_utilization: Option<f64>,
    /// The delivery-time error of the direction with the larger p99.
    pub late_direction: String,
    pub late_p50_us: f64,
    pub late_p99_us: f64,
    pub late_max_us: f64,
    /// That direction's threshold for `late_p99_us`.
    pub late_threshold_us: f64,
    /// Packets the input TUN devices dropped because the loop did not read them in
    /// time; `None` when the sides cannot tell.
    pub kernel_drops: Option<u64>,
    /// Empty when the run is clean.
    pub warnings: Vec<String>,
}

impl Health {
    pub fn is_clean(&self) -> bool {
        self.warnings.is_empty()
    }
}

fn us(ns: u64) -> f64 {
    ns as f64 / 1e3
}

fn threshold_ns(d: &DirInput, lim: &HealthLimits) -> u64 {
    let frac = (d.one_way_delay.as_nanos() as f64 * lim.late_fraction) as u64;
    (lim.late_floor.as_nanos() as u64).max(frac)
}

fn rate_text(bps: f64) -> String {
    if bps >= 1e9 {
        format!("{:.2} Gbit/s", bps / 1e9)
    } else {
        format!("{:.1} Mbit/s", bps / 1e6)
    }
}

/// Turns the loop's measurements into a verdict.
pub fn assess(inp: &HealthInput, lim: &HealthLimits) -> Health {
    let busy_fraction = if inp.elapsed_s > 0.0 {
        (inp.busy_s / inp.elapsed_s).clamp(0.0, 1.0)
    } else {
        0.0
    };
    let f = &inp.forward;
    let serviceable_bps = if f.delivered_packets >= MIN_PACKETS && inp.busy_s > 0.0 {
        f.delivered_bytes as f64 * 8.0 / inp.busy_s
    } else {
        0.0
    };
    let link_utilization = f
        .rate_bps
        .filter(|r| *r > 0 && inp.elapsed_s > 0.0)
        .map(|r| f.delivered_bytes as f64 * 8.0 / (r as f64 * inp.elapsed_s));
    let mut warnings = Vec::new();
    for d in [&inp.forward, &inp.reverse] {
        let thr = threshold_ns(d, lim);
        if d.delivered_packets >= MIN_PACKETS && d.late.p99_ns > thr {
            warnings.push(format!(
                "late deliveries: {} delivery-time error p99 {:.0} us > {:.0} us (max of {:.1} ms and {:.0} % of its link's {:.2} ms one-way delay; per-flow access delays of a dumbbell are not counted): the kernels saw other timing than the model's",
                d.name,
                us(d.late.p99_ns),
                us(thr),
                lim.late_floor.as_secs_f64() * 1e3,
                lim.late_fraction * 100.0,
                d.one_way_delay.as_secs_f64() * 1e3,
            ));
        }
    }
    if busy_fraction >= lim.busy {
        warnings.push(format!(
            "no headroom: the emulator thread was busy {:.0} % of the run (limit {:.0} %): the emulator, not the emulated path, may have set the pace",
            busy_fraction * 100.0,
            lim.busy * 100.0
        ));
    }
    if let Some(rate) = f.rate_bps {
        let link_limited = link_utilization.is_some_and(|u| u >= LINK_SATURATED);
        if serviceable_bps > 0.0
            && serviceable_bps < rate as f64
            && !link_limited
            && busy_fraction >= RATE_MIN_BUSY
        {
            warnings.push(format!(
                "could not keep up: configured {} {} but the emulator serves about {} with this packet mix (forward bits per busy second); the link was only {:.1} % utilised",
                f.name,
                rate_text(rate as f64),
                rate_text(serviceable_bps),
                link_utilization.unwrap_or(0.0) * 100.0
            ));
        }
    }
    if let Some(n) = inp.kernel_drops.filter(|n| *n > 0) {
        warnings.push(format!(
            "kernel drops: the TUN devices dropped {n} packets the emulator did not read in time (full ring): losses the model did not make"
        ));
    }
    let (dir, thr) = if inp.reverse.late.p99_ns > f.late.p99_ns {
        (&inp.reverse, threshold_ns(&inp.reverse, lim))
    } else {
        (f, threshold_ns(f, lim))
    };
    Health {
        busy_fraction,
        headroom: 1.0 - busy_fraction,
        thread_cpu_s: inp.thread_cpu_s,
        serviceable_bps,
        configured_rate_bps: f.rate_bps,
        link_utilization,
        late_direction: dir.name.to_string(),
        late_p50_us: us(dir.late.p50_ns),
        late_p99_us: us(dir.late.p99_ns),
        late_max_us: us(dir.late.max_ns),
        late_threshold_us: us(thr),
        kernel_drops: inp.kernel_drops,
        warnings,
    }
}

/// CPU time of the calling thread (CLOCK_THREAD_CPUTIME_ID), in seconds.
pub fn thread_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir(name: &str, pkts: u64, p99_us: u64, delay_ms: u64, rate: Option<u64>) -> DirInput<'_> {
        DirInput {
            name,
            delivered_packets: pkts,
            delivered_bytes: pkts * 1500,
            late: LatencySummary {
                count: pkts,
                p50_ns: 1_000,
                p99_ns: p99_us * 1_000,
                max_ns: p99_us * 2_000,
                ..LatencySummary::default()
            },
            one_way_delay: Duration::from_millis(delay_ms),
            rate_bps: rate,
        }
    }

    fn input<'a>(busy: f64, fwd: DirInput<'a>, rev: DirInput<'a>) -> HealthInput<'a> {
        HealthInput {
            elapsed_s: 1.0,
            busy_s: busy,
            thread_cpu_s: busy,
            forward: fwd,
            reverse: rev,
            kernel_drops: Some(0),
        }
    }

    #[test]
    fn a_modest_run_is_clean() {
        // 10 Mbit/s: 833 packets of 1500 B in 1 s, 2 % busy, 40 us p99.
        let h = assess(
            &input(
                0.02,
                dir("bottleneck", 833, 40, 5, Some(10_000_000)),
                dir("reverse", 400, 30, 5, None),
            ),
            &HealthLimits::default(),
        );
        assert!(h.is_clean(), "{:?}", h.warnings);
        assert!((h.headroom - 0.98).abs() < 1e-9);
        assert!((h.link_utilization.unwrap() - 0.9996).abs() < 1e-3);
        assert_eq!(h.late_direction, "bottleneck");
        assert_eq!(h.late_p99_us, 40.0);
    }

    #[test]
    fn an_impossible_rate_warns_that_it_could_not_keep_up() {
        // 100 Gbit/s configured; 200k packets (2.4 Gbit/s) in 1 s, busy 95 %.
        let h = assess(
            &input(
                0.95,
                dir("bottleneck", 200_000, 60, 0, Some(100_000_000_000)),
                dir("reverse", 100_000, 60, 0, None),
            ),
            &HealthLimits::default(),
        );
        assert_eq!(h.warnings.len(), 2, "{:?}", h.warnings);
        assert!(h.warnings[0].starts_with("no headroom"));
        assert!(h.warnings[1].starts_with("could not keep up"));
        assert!(h.serviceable_bps < 3e9);
    }

    #[test]
    fn late_threshold_is_the_larger_of_the_floor_and_a_tenth_of_the_delay() {
        let lim = HealthLimits::default();
        // 50 ms one-way: threshold 5 ms; 3 ms p99 is fine, 6 ms is not.
        let ok = assess(
            &input(
                0.1,
                dir("bottleneck", 1000, 3000, 50, None),
                dir("reverse", 0, 0, 50, None),
            ),
            &lim,
        );
        assert!(ok.is_clean(), "{:?}", ok.warnings);
        assert_eq!(ok.late_threshold_us, 5000.0);
        let late = assess(
            &input(
                0.1,
                dir("bottleneck", 1000, 6000, 50, None),
                dir("reverse", 0, 0, 50, None),
            ),
            &lim,
        );
        assert!(late.warnings[0].starts_with("late deliveries: bottleneck"));
        // Zero delay: the 1 ms floor.
        let floor = assess(
            &input(
                0.1,
                dir("bottleneck", 1000, 1100, 0, None),
                dir("reverse", 0, 0, 0, None),
            ),
            &lim,
        );
        assert_eq!(floor.late_threshold_us, 1000.0);
        assert_eq!(floor.warnings.len(), 1);
        // Too few packets for a p99: no verdict.
        let few = assess(
            &input(
                0.1,
                dir("bottleneck", 10, 9000, 0, None),
                dir("reverse", 0, 0, 0, None),
            ),
            &lim,
        );
        assert!(few.is_clean());
    }

    #[test]
    fn a_saturated_link_or_an_idle_loop_is_no_rate_warning() {
        let lim = HealthLimits::default();
        // The link ran at its rate: the emulator kept up with what was asked.
        let sat = assess(
            &input(
                0.6,
                dir("bottleneck", 83_000, 40, 0, Some(1_000_000_000)),
                dir("reverse", 0, 0, 0, None),
            ),
            &lim,
        );
        assert!(sat.is_clean(), "{:?}", sat.warnings);
        // An application-limited run on a fast link: the loop was mostly idle.
        let idle = assess(
            &input(
                0.05,
                dir("bottleneck", 1000, 40, 0, Some(10_000_000_000)),
                dir("reverse", 0, 0, 0, None),
            ),
            &lim,
        );
        assert!(idle.is_clean(), "{:?}", idle.warnings);
    }

    #[test]
    fn kernel_drops_warn() {
        let mut i = input(
            0.1,
            dir("bottleneck", 1000, 40, 0, None),
            dir("reverse", 0, 0, 0, None),
        );
        i.kernel_drops = Some(3);
        let h = assess(&i, &HealthLimits::default());
        assert_eq!(h.warnings.len(), 1);
        assert!(h.warnings[0].contains("dropped 3 packets"));
    }
}

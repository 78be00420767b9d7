//! Path models: a link drawn per run from the ranges of seed 004's Table III (RITE
//! D1.3, Appendix B.1; spec `rite-multipath-coupled-cc-sbd-cdg.md` §1.3), "randomly
//! drawn from the parameter ranges" for each run as the seed's CORE emulations did.
//!
//! | model | rate | propagation delay (one-way) | loss | router queue |
//! |---|---|---|---|---|
//! | `wlan` | 20–30 Mbit/s | 20–25 ms | 1–2 % | 100 packets |
//! | `3g` | 3–5 Mbit/s | 65–75 ms | 0 | 3750 packets |
//!
//! Each quantity is drawn uniformly and independently (the seed says only "randomly
//! drawn"; uniform is the plainest reading, spec §9 A2). The seed does not say whether
//! "propagation delay" is one-way or a round trip (A2): we take it as one-way, each
//! direction of the link (so a path over one such link has an RTT of twice the draw),
//! since the table's row is named for the propagation delay of a link and CORE, the
//! seed's emulator, sets a link's delay per direction. The loss is Bernoulli on each
//! direction, and both directions get the same draw, as a CORE link's parameters are
//! symmetric unless set per direction. Rounding: rate to 1 kbit/s, delay to 1 µs, loss
//! to 10⁻⁶, so a drawn link prints exactly.

use serde::{Deserialize, Serialize};

use super::{LinkSpec, LossSpec, QueueSpec};
use crate::units::{Dur, Rate};
use brisk_time::Duration;

/// `model = "wlan" | "3g"` on a network scenario's `[[link]]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize, Serialize)]
pub enum PathModel {
    #[serde(rename = "wlan")]
    Wlan,
    #[serde(rename = "3g")]
    ThreeG,
}

/// One model's ranges (inclusive), and its router queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ModelRanges {
    pub rate_bps: (u64, u64),
    /// One-way, per direction.
    pub delay_us: (u64, u64),
    /// Probability, per direction.
    pub loss: (f64, f64),
    pub queue_packets: u64,
}

impl PathModel {
    pub fn name(self) -> &'static str {
        match self {
            PathModel::Wlan => "wlan",
            PathModel::ThreeG => "3g",
        }
    }

    /// Table III's ranges.
    pub fn ranges(self) -> ModelRanges {
        match self {
            PathModel::Wlan => ModelRanges {
                rate_bps: (20_000_000, 30_000_000),
                delay_us: (20_000, 25_000),
                loss: (0.01, 0.02),
                queue_packets: 100,
            },
            PathModel::ThreeG => ModelRanges {
                rate_bps: (3_000_000, 5_000_000),
                delay_us: (65_000, 75_000),
                loss: (0.0, 0.0),
                queue_packets: 3750,
            },
        }
    }

    /// The link drawn for link `link` of a run with seed `seed`: the same in the
    /// simulator and in real runs (`crate::derive_seed`, "path-model").
    pub fn draw_for_run(self, seed: u64, link: usize) -> LinkSpec {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(crate::derive_seed(
            seed,
            "path-model",
            link as u64,
        ));
        self.draw([rng.gen(), rng.gen(), rng.gen()])
    }

    /// The link for three uniform draws in [0, 1) (rate, delay, loss), taken by the
    /// caller from the run's seeded stream, so the same seed gives the same link.
    pub fn draw(self, u: [f64; 3]) -> LinkSpec {
        let r = self.ranges();
        let lerp = |(lo, hi): (u64, u64), u: f64, step: u64| {
            let x = lo as f64 + u.clamp(0.0, 1.0) * (hi - lo) as f64;
            ((x / step as f64).round() as u64 * step).clamp(lo, hi)
        };
        let rate = lerp(r.rate_bps, u[0], 1000);
        let delay = lerp(r.delay_us, u[1], 1);
        let p = r.loss.0 + u[2].clamp(0.0, 1.0) * (r.loss.1 - r.loss.0);
        let p = (p * 1e6).round() / 1e6;
        LinkSpec {
            rate: Some(Rate(rate)),
            delay: Some(Dur(Duration::from_micros(delay))),
            queue: Some(QueueSpec::Droptail {
                packets: Some(r.queue_packets),
                bytes: None,
                time: None,
                ecn_threshold_packets: None,
                ecn_threshold_bytes: None,
            }),
            loss: (p > 0.0).then_some(LossSpec::Bernoulli { p }),
            ..LinkSpec::default()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_stay_in_table_iii_ranges_and_hit_both_ends() {
        for m in [PathModel::Wlan, PathModel::ThreeG] {
            let r = m.ranges();
            for u in [0.0, 0.25, 0.5, 0.999_999, 1.0] {
                let l = m.draw([u, u, u]);
                let rate = l.rate.unwrap().0;
                assert!(
                    (r.rate_bps.0..=r.rate_bps.1).contains(&rate),
                    "{m:?} {rate}"
                );
                let d = l.delay.unwrap().0.as_micros() as u64;
                assert!((r.delay_us.0..=r.delay_us.1).contains(&d), "{m:?} {d}");
                match (&l.loss, m) {
                    (Some(LossSpec::Bernoulli { p }), PathModel::Wlan) => {
                        assert!((0.01..=0.02).contains(p), "{p}")
                    }
                    (None, PathModel::ThreeG) => {}
                    other => panic!("{other:?}"),
                }
                assert!(l.validate("link").is_ok());
            }
            let lo = m.draw([0.0; 3]);
            let hi = m.draw([1.0; 3]);
            assert_eq!(lo.rate.unwrap().0, r.rate_bps.0);
            assert_eq!(hi.rate.unwrap().0, r.rate_bps.1);
        }
    }
}

//! Flow-size workloads: Poisson flow arrivals at a target load with sizes drawn from an
//! empirical CDF (RC3's evaluation, spec `rc3.md` §2.1 and A9; issue 11 §1).
//!
//! A [`SizeCdf`] (brisk-scenario's `network::sizes`) is a piecewise-linear CDF over
//! flow sizes in bytes; [`sample`] draws from it by inverse transform.
//!
//! [`poisson_arrivals`] turns a CDF, a load and a link rate into (start, size) pairs:
//! the arrival rate is λ = load · rate / (8 · E[size]), so that on average the flows
//! offer `load` of the link. Every draw comes from the caller's seeded generator.

use brisk_time::{Duration, Instant};
use rand::Rng;
use rand_chacha::ChaCha8Rng;

/// The flow-size CDF and its bounds are the scenario's words (brisk-scenario); the
/// draws are the simulator's.
pub use brisk_scenario::network::sizes::{CdfError, SizeCdf, MAX_FLOWS, MAX_POINTS};

/// One flow size from `cdf`, by inverse transform of a uniform draw from `rng`.
pub fn sample(cdf: &SizeCdf, rng: &mut ChaCha8Rng) -> u64 {
    cdf.quantile(rng.gen_range(0.0..1.0))
}

/// Why arrivals cannot be generated.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrivalError {
    /// Load outside (0, 1] or a zero rate.
    Load,
    /// More than [`MAX_FLOWS`] would be generated.
    TooMany(usize),
}

/// Poisson arrivals from `from` until `until` offering `load` of a `rate_bps` link:
/// (start, size) in arrival order.
pub fn poisson_arrivals(
    cdf: &SizeCdf,
    load: f64,
    rate_bps: u64,
    from: Instant,
    until: Instant,
    rng: &mut ChaCha8Rng,
) -> Result<Vec<(Instant, u64)>, ArrivalError> {
    if !(load > 0.0 && load <= 1.0) || rate_bps == 0 {
        return Err(ArrivalError::Load);
    }
    let lambda = load * rate_bps as f64 / 8.0 / cdf.mean();
    let span = until.saturating_duration_since(from).as_secs_f64();
    // Refuse before drawing: the expected count, with room for its spread.
    let expected = lambda * span;
    if expected > MAX_FLOWS as f64 {
        return Err(ArrivalError::TooMany(expected as usize));
    }
    let mut out = Vec::with_capacity(expected.ceil() as usize + 16);
    let mut t = from.as_secs_f64();
    loop {
        let u: f64 = rng.gen_range(f64::EPSILON..1.0);
        t += -u.ln() / lambda;
        if t >= until.as_secs_f64() {
            break;
        }
        if out.len() == MAX_FLOWS {
            return Err(ArrivalError::TooMany(MAX_FLOWS + 1));
        }
        let at = Instant::ZERO.saturating_add(Duration::from_secs_f64(t));
        out.push((at, sample(cdf, rng)));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;

    #[test]
    fn builtins_are_valid_with_the_stated_point_masses() {
        for name in SizeCdf::BUILTINS {
            assert!(SizeCdf::builtin(name).is_some(), "{name}");
        }
        let c = SizeCdf::builtin("rc3-synthetic").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let n = 200_000;
        let draws: Vec<u64> = (0..n).map(|_| sample(&c, &mut rng)).collect();
        let share = |b: u64| draws.iter().filter(|&&x| x == b).count() as f64 / n as f64;
        assert!((share(5 * 1460) - 0.07).abs() < 0.005);
        assert!((share(1164 * 1460) - 0.015).abs() < 0.002);
        assert!(draws.iter().all(|&x| (1460..=4000 * 1460).contains(&x)));
        let mean = draws.iter().sum::<u64>() as f64 / n as f64;
        assert!(
            (mean / c.mean() - 1.0).abs() < 0.03,
            "{mean} vs {}",
            c.mean()
        );
        assert!(SizeCdf::builtin("rc3-2000").unwrap().mean() < c.mean() / 3.0);
    }

    #[test]
    fn arrivals_offer_the_load_and_are_bounded() {
        let c = SizeCdf::builtin("rc3-synthetic").unwrap();
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let until = Instant::from_secs(200);
        let a = poisson_arrivals(&c, 0.3, 100_000_000, Instant::ZERO, until, &mut rng).unwrap();
        let bytes: u64 = a.iter().map(|x| x.1).sum();
        let offered = bytes as f64 * 8.0 / 200.0 / 100e6;
        assert!((offered - 0.3).abs() < 0.05, "offered {offered}");
        assert!(a.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(
            poisson_arrivals(&c, 0.0, 1, Instant::ZERO, until, &mut rng),
            Err(ArrivalError::Load)
        );
        assert!(matches!(
            poisson_arrivals(&c, 1.0, 100_000_000_000, Instant::ZERO, until, &mut rng),
            Err(ArrivalError::TooMany(_))
        ));
        // The same seed gives the same arrivals.
        let again = poisson_arrivals(
            &c,
            0.3,
            100_000_000,
            Instant::ZERO,
            until,
            &mut ChaCha8Rng::seed_from_u64(7),
        )
        .unwrap();
        assert_eq!(a, again);
    }
}

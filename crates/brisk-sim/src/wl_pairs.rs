//! `[workload.pairs]`: one connection per random host pair, all opened together
//! (seed 004 B.2's datacenter scenario, after Raiciu et al., SIGCOMM 2011: "each
//! end-host chooses other end-host randomly, with the constraint of using only one
//! subflow per end-host pair"; spec §9 L7 reads it as one MPTCP connection per pair).
//!
//! Sources take the hosts in a seeded random order (round robin when there are more
//! connections than hosts), so with one connection per host every host opens one.
//! Each destination is drawn uniformly from the hosts on other routers, redrawn while
//! the unordered pair is taken. Start times are `start` plus a uniform draw in
//! [0, `spread`). Everything comes from one seeded stream of its own, so the Poisson
//! generator's draws are not touched.

use brisk_scenario::network::PairsSpec;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::HashSet;

use crate::workload::SizeCdf;

/// Redraws of a destination before giving up on a source.
const REDRAWS: usize = 256;

/// One drawn flow: (start, seconds; source ordinal; destination ordinal; bytes).
pub type PairFlow = (f64, usize, usize, u64);

/// The flows of `[workload.pairs]`. `order` lists host ordinals grouped by router and
/// `run_of[k]` is (start in `order`, length) of host k's router's run, as the Poisson
/// generator uses them. Errors name what is missing.
pub fn draw(
    p: &PairsSpec,
    seed: u64,
    order: &[usize],
    run_of: &[(usize, usize)],
    cdf: &SizeCdf,
) -> Result<Vec<PairFlow>, String> {
    let nh = run_of.len();
    // Unordered pairs on different routers.
    let same: usize = {
        let mut runs: Vec<(usize, usize)> = run_of.to_vec();
        runs.sort_unstable();
        runs.dedup();
        runs.iter().map(|r| r.1 * r.1.saturating_sub(1) / 2).sum()
    };
    let possible = nh * nh.saturating_sub(1) / 2 - same;
    let want = p.connections as usize;
    if want > possible {
        return Err(format!(
            "connections = {want}, but the hosts have only {possible} pairs on different routers"
        ));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut sources: Vec<usize> = (0..nh).collect();
    // Fisher-Yates, by hand so the draws are this file's and stay put.
    for i in (1..nh).rev() {
        sources.swap(i, rng.gen_range(0..=i));
    }
    let mut used: HashSet<(usize, usize)> = HashSet::with_capacity(want);
    let mut out = Vec::with_capacity(want);
    let (t0, span) = (p.start.0.as_secs_f64(), p.spread.0.as_secs_f64());
    let mut k = 0usize;
    // Every source tried once per round; a source whose pairs are all taken is skipped.
    let mut misses = 0usize;
    while out.len() < want {
        let src = sources[k % nh];
        k += 1;
        let (start, len) = run_of[src];
        let mut dst = None;
        for _ in 0..REDRAWS {
            let pick = rng.gen_range(0..nh - len);
            let d = order[if pick < start { pick } else { pick + len }];
            if !used.contains(&(src.min(d), src.max(d))) {
                dst = Some(d);
                break;
            }
        }
        let Some(dst) = dst else {
            misses += 1;
            if misses > nh {
                return Err(format!(
                    "could not find {want} distinct host pairs (found {}); lower connections",
                    out.len()
                ));
            }
            continue;
        };
        misses = 0;
        used.insert((src.min(dst), src.max(dst)));
        let at = t0
            + if span > 0.0 {
                rng.gen_range(0.0..span)
            } else {
                0.0
            };
        let size = crate::workload::sample(cdf, &mut rng);
        out.push((at, src, dst, size));
    }
    out.sort_by(|a, b| a.0.total_cmp(&b.0));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_scenario::units::Dur;
    use brisk_time::Duration;

    /// 16 hosts, two per router (a k = 4 fat tree's edge switches).
    fn fat16() -> (Vec<usize>, Vec<(usize, usize)>) {
        let order: Vec<usize> = (0..16).collect();
        let run_of = (0..16).map(|k| (k / 2 * 2, 2)).collect();
        (order, run_of)
    }

    fn spec(n: u32, spread_ms: u64) -> PairsSpec {
        PairsSpec {
            connections: n,
            start: Dur(Duration::from_millis(10)),
            spread: Dur(Duration::from_millis(spread_ms)),
        }
    }

    #[test]
    fn every_host_opens_one_to_another_router_and_no_pair_twice() {
        let (order, run_of) = fat16();
        let cdf = SizeCdf::new(vec![(300_000, 1.0)]).unwrap();
        for seed in 0..20 {
            let f = draw(&spec(16, 5), seed, &order, &run_of, &cdf).unwrap();
            assert_eq!(f.len(), 16);
            let mut srcs: Vec<usize> = f.iter().map(|x| x.1).collect();
            srcs.sort_unstable();
            assert_eq!(srcs, (0..16).collect::<Vec<_>>(), "each host once");
            let mut pairs = HashSet::new();
            for &(at, s, d, z) in &f {
                assert_ne!(s / 2, d / 2, "different routers");
                assert!(pairs.insert((s.min(d), s.max(d))), "pair used twice");
                assert!((0.010..0.015).contains(&at));
                assert_eq!(z, 300_000);
            }
            assert!(f.windows(2).all(|w| w[0].0 <= w[1].0), "in time order");
            assert_eq!(f, draw(&spec(16, 5), seed, &order, &run_of, &cdf).unwrap());
        }
        let a = draw(&spec(16, 5), 1, &order, &run_of, &cdf).unwrap();
        let b = draw(&spec(16, 5), 2, &order, &run_of, &cdf).unwrap();
        assert_ne!(a, b, "seeds differ");
        // No spread: all at `start`.
        let z = draw(&spec(16, 0), 1, &order, &run_of, &cdf).unwrap();
        assert!(z.iter().all(|x| x.0 == 0.010));
    }

    #[test]
    fn more_connections_than_pairs_is_a_clear_error() {
        let (order, run_of) = fat16();
        let cdf = SizeCdf::new(vec![(1000, 1.0)]).unwrap();
        // 16 hosts: 120 pairs, 8 of them on one router: 112.
        assert_eq!(
            draw(&spec(112, 1), 3, &order, &run_of, &cdf).unwrap().len(),
            112
        );
        let e = draw(&spec(113, 1), 3, &order, &run_of, &cdf).unwrap_err();
        assert!(e.contains("only 112 pairs"), "{e}");
    }
}

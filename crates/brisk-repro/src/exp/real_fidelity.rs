//! Whether a real run may stand beside its simulation.
//!
//! A claim that compares real packets with the simulator (or brisk's userspace stack
//! with Linux's in-kernel one) measures the emulated path only while the emulator
//! kept the model's timing. The emulator checks that itself (`brisk_emu::emu::health`:
//! late deliveries, no headroom, a rate it could not serve, kernel drops, a late stack
//! thread) and says so in `RealResult::emulator.health.warnings`. On a loaded host
//! (two cores shared with a parallel build, a slow CI runner) deliveries come
//! milliseconds late: CI once saw p99 errors of 3–10 ms against a 1-ms threshold, and
//! brisk's stack thread, which competes for the CPU where Linux's stack runs in
//! softirq, came out 6–8 ms slower than the model over a 30-ms transfer. Such a run
//! says nothing about the model's fidelity, so the claim becomes *inconclusive*
//! (`n/a` with the emulator's reason and the number measured anyway), never a pass,
//! and never a failure blamed on the model. Claims that do not compare timing with a
//! model (orderings, stream integrity) keep their verdicts.

use crate::claim::Claim;
use brisk_emu::realrun::RealResult;

/// The emulator's reason why `res` did not keep the model's timing, or `None` for a
/// clean run.
pub fn distortion(res: &RealResult) -> Option<String> {
    let w = &res.emulator.health.warnings;
    match w.len() {
        0 => None,
        1 => Some(w[0].clone()),
        n => Some(format!("{} (and {} more warnings)", w[0], n - 1)),
    }
}

/// `claim` (already holding the measured value and tolerance) made inconclusive
/// because `distorted` of `runs` real runs behind it were distorted; `first` is the
/// first run's reason and `measured` the check it would have had.
pub fn inconclusive(
    claim: Claim,
    distorted: usize,
    runs: usize,
    first: &str,
    measured: &str,
) -> Claim {
    claim.not_applicable(format!(
        "inconclusive on this host: the emulator reports that {distorted} of {runs} real runs behind this claim did not keep the model's timing (first: {first}); measured anyway: {measured}. Rerun on a quiet host (`brisk bench emu` says whether this one keeps real time)"
    ))
}

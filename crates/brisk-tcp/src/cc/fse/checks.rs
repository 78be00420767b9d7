//! FSE-2's check: the active and conservative-active algorithms' invariants over
//! scripted update sequences (draft-welzl-rmcat-coupled-cc-05 §5.3). The proptest in
//! `tests.rs` and `brisk repro fse` (the FSE-2 row, through [`fse2`], with a seeded
//! generator over the same input ranges) run the same [`check_sequence`].

use super::{Algorithm, Fse, FseFlow};
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// One scripted operation on a group.
#[derive(Clone, Debug)]
pub enum Op {
    Join {
        p: u8,
        rate: u16,
    },
    Leave(u8),
    /// `factor` in per-mille of the flow's FSE_R: < 1000 is a decrease.
    Update {
        who: u8,
        factor: u16,
        rtt_ms: u8,
        dt_ms: u16,
    },
}

fn ensure(ok: bool, msg: impl FnOnce() -> String) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(msg())
    }
}

pub fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * (1.0 + a.abs().max(b.abs()))
}

/// FSE-2 over one scripted sequence: after every update FSE_R(i) = P(i)·S_CR/ΣP and
/// Σ FSE_R = S_CR; the conservative FSE's S_CR moves only as its rules allow.
pub fn check_sequence(alg: Algorithm, ops: &[Op]) -> Result<(), String> {
    let mut fse = Fse::new(alg, 16).unwrap();
    let mut flows: Vec<FseFlow> = Vec::new();
    let mut now = Instant::ZERO;
    for op in ops {
        match *op {
            Op::Join { p, rate } => {
                if let Ok(f) = fse.register(f64::from(p) / 10.0, f64::from(rate)) {
                    flows.push(f);
                }
            }
            Op::Leave(k) => {
                if !flows.is_empty() {
                    let f = flows.remove(usize::from(k) % flows.len());
                    fse.leave(f).unwrap();
                }
            }
            Op::Update {
                who,
                factor,
                rtt_ms,
                dt_ms,
            } => {
                if flows.is_empty() {
                    continue;
                }
                now += Duration::from_millis(u64::from(dt_ms));
                let f = flows[usize::from(who) % flows.len()];
                let before = fse.s_cr();
                let fse_r = fse.rate(f).unwrap();
                let frozen = fse.frozen_until().is_some_and(|t| now < t);
                let cc_r = fse_r * f64::from(factor) / 1000.0;
                let rtt = Duration::from_millis(u64::from(rtt_ms));
                let u = fse.update(f, cc_r, now, rtt).unwrap();
                match alg {
                    Algorithm::Active => {
                        ensure(close(fse.s_cr(), (before + cc_r - fse_r).max(0.0)), || {
                            format!("active: S_CR {} ≠ {before} + {cc_r} − {fse_r}", fse.s_cr())
                        })?;
                    }
                    _ if frozen => {
                        ensure(!u.applied, || "a frozen update was applied".into())?;
                        ensure(fse.s_cr() == before, || {
                            format!("S_CR moved while frozen: {before} → {}", fse.s_cr())
                        })?;
                    }
                    _ if cc_r < fse_r => {
                        ensure(close(fse.s_cr(), before * cc_r / fse_r), || {
                            format!(
                                "conservative decrease: S_CR {} ≠ {before}·{cc_r}/{fse_r}",
                                fse.s_cr()
                            )
                        })?;
                        ensure(fse.frozen_until() == Some(now + rtt * 2), || {
                            format!("freeze {:?}, want two RTTs of {rtt:?}", fse.frozen_until())
                        })?;
                    }
                    _ => {
                        ensure(close(fse.s_cr(), before + (cc_r - fse_r)), || {
                            format!(
                                "increase: S_CR {} ≠ {before} + DELTA {}",
                                fse.s_cr(),
                                cc_r - fse_r
                            )
                        })?;
                    }
                }
                ensure(close(u.rate, fse.rate(f).unwrap()), || {
                    "UPDATE returned a rate other than FSE_R".into()
                })?;
                // Step (c): every flow holds exactly its priority share.
                let s_p = fse.s_p();
                for (i, r) in fse.rates() {
                    let p = fse.priority(i).unwrap();
                    ensure(close(r, p * fse.s_cr() / s_p), || {
                        format!("share of {i:?}: {r} ≠ P·S_CR/ΣP")
                    })?;
                }
            }
        }
        // The invariants hold after every operation (joins and leaves included:
        // both add or remove the flow's own FSE_R only).
        let sum: f64 = fse.rates().map(|(_, r)| r).sum();
        ensure(close(sum, fse.s_cr()), || {
            format!("Σ FSE_R {sum} ≠ S_CR {}", fse.s_cr())
        })?;
    }
    Ok(())
}

/// One operation drawn as the proptest's `op()` strategy draws it: joins, leaves, any
/// update, and (weighted twice) updates within ±50 % of the flow's rate.
pub fn random_op(rng: &mut ChaCha8Rng) -> Op {
    match rng.gen_range(0..4) {
        0 => Op::Join {
            p: rng.gen_range(1..=10),
            rate: rng.gen_range(1..2000),
        },
        1 => Op::Leave(rng.gen()),
        2 => Op::Update {
            who: rng.gen(),
            factor: rng.gen_range(0..2000),
            rtt_ms: rng.gen_range(1..=200),
            dt_ms: rng.gen_range(0..500),
        },
        _ => Op::Update {
            who: rng.gen(),
            factor: rng.gen_range(500..1500),
            rtt_ms: rng.gen_range(1..=200),
            dt_ms: rng.gen_range(0..100),
        },
    }
}

/// FSE-2: `n` seeded sequences of 1–79 operations for each of the active and the
/// conservative-active FSE. Panics with the first violated invariant; returns what
/// was checked.
pub fn fse2(n: usize) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(0xF5E2);
    let mut updates = 0usize;
    for alg in [Algorithm::Active, Algorithm::ConservativeActive] {
        for case in 0..n {
            let len = rng.gen_range(1..80);
            let ops: Vec<Op> = (0..len).map(|_| random_op(&mut rng)).collect();
            updates += ops
                .iter()
                .filter(|o| matches!(o, Op::Update { .. }))
                .count();
            if let Err(e) = check_sequence(alg, &ops) {
                panic!("{alg:?}, case {case}: {e}");
            }
        }
    }
    format!("{n} sequences each for the active and the conservative-active FSE ({updates} updates): FSE_R(i) = P(i)·S_CR/ΣP and Σ FSE_R = S_CR after every operation; active S_CR += CC_R − FSE_R; conservative decrease S_CR ·= CC_R/FSE_R(f), frozen for 2 RTTs of f (updates ignored meanwhile); increase adds DELTA")
}

//! The Flow State Exchange (FSE) of one flow group: draft-welzl-rmcat-coupled-cc-05
//! §5 (later RFC 8699 §5), as seed 004 Appendix C.2 gives it (spec §4). Docs:
//! `docs/mechanisms/fse.md`.
//!
//! One [`Fse`] is the state of one flow group (FG, the flows that share a bottleneck):
//! the sum of calculated rates `S_CR`, per flow its priority `P`, its assigned rate
//! `FSE_R` and (passive FSE) its desired rate `DR`, and the group's total leftover
//! rate `TLO` and (conservative FSE) its freeze timer. Three algorithms:
//!
//! - [`Algorithm::Active`]: the draft's example algorithm 1 (§5.3.1).
//! - [`Algorithm::ConservativeActive`]: example algorithm 2 (§5.3.2): a decrease
//!   scales `S_CR` by `CC_R/FSE_R(f)` and freezes `S_CR` for two RTTs of the flow
//!   that reduced.
//! - [`Algorithm::Passive`]: Appendix A ("highly experimental"): `UPDATE` returns the
//!   rate to use, and application-limited flows leave their share to the next flow
//!   that updates (`TLO`).
//!
//! "Rate" is whatever quantity the controllers couple: bit/s for rate-based flows, or
//! a window in segments (draft -04: "for window-based CCs FSE_R is a window"). The
//! FSE never mixes the two; the caller chooses.
//!
//! Pure structure: no clock (the caller passes `now` and the RTT), no allocation after
//! [`Fse::new`] (the flow table is allocated once at its limit), O(flows) per update,
//! which is the draft's step (c) itself. There is no Linux counterpart: Linux has no
//! FSE (its closest relative, `tcp_metrics`, shares state between connections only
//! at start). [`tcp`] wires it into TCP flows: a controller layer and the host's groups.

pub mod checks;
pub mod tcp;
#[cfg(test)]
mod tests;

use brisk_time::{Duration, Instant};

/// Which FSE algorithm a group runs. "The same algorithm must be applied to all
/// flows" (§5.3): one per group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Algorithm {
    /// Example algorithm 1, §5.3.1.
    Active,
    /// Example algorithm 2, §5.3.2: the variant [fse] found to reduce queueing delay.
    #[default]
    ConservativeActive,
    /// Appendix A.
    Passive,
}

/// The lowest and highest priority (§5.2: "P ∈ [0.1, 1.0]").
pub const MIN_PRIORITY: f64 = 0.1;
pub const MAX_PRIORITY: f64 = 1.0;

/// Default flow limit of one group. The draft's grouping is meant for "about 10–20"
/// flows (RFC 8382 §3.2.1); 64 leaves room and keeps step (c) short.
pub const DEFAULT_MAX_FLOWS: usize = 64;

/// A flow's handle in its group. Valid until [`Fse::leave`] (active) or until the
/// passive FSE deletes the terminated flow; then the slot may be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FseFlow(u32);

impl FseFlow {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Refused input. Messages name the field and its range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum FseError {
    #[error("priority {0} is outside 0.1..=1.0")]
    Priority(f64),
    #[error("{field} {value} is not a finite rate >= 0")]
    Rate { field: &'static str, value: f64 },
    #[error("flow group is full: at most {limit} flows")]
    Full { limit: usize },
    #[error("flow {0} is not registered in this group")]
    UnknownFlow(u32),
    #[error("flow {0} has terminated and may not update")]
    Terminated(u32),
    #[error("max_flows {0} is outside 1..=4096")]
    Limit(usize),
    #[error("the flow is in no flow group")]
    NoGroup,
    #[error("the flow group runs another FSE algorithm (one algorithm per group)")]
    Mixed,
}

#[derive(Clone, Copy, Debug)]
struct Entry {
    /// Priority; negative once the flow terminated (passive FSE, A step 2).
    p: f64,
    /// The rate the FSE assigned (FSE_R).
    fse_r: f64,
    /// Desired rate (passive FSE only).
    dr: f64,
}

/// The FSE state of one flow group.
#[derive(Clone, Debug)]
pub struct Fse {
    algorithm: Algorithm,
    flows: Vec<Option<Entry>>,
    live: usize,
    /// S_CR: the sum of the calculated rates.
    s_cr: f64,
    /// TLO: total leftover rate (passive FSE).
    tlo: f64,
    /// End of the conservative FSE's freeze (two RTTs of the flow that reduced).
    frozen_until: Option<Instant>,
}

/// What one update decided for the updating flow.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Update {
    /// The rate the updating flow is to use (FSE_R(f) after the update).
    pub rate: f64,
    /// Whether the update changed S_CR (false while the conservative FSE is frozen).
    pub applied: bool,
}

fn check_rate(field: &'static str, value: f64) -> Result<f64, FseError> {
    if value.is_finite() && value >= 0.0 {
        Ok(value)
    } else {
        Err(FseError::Rate { field, value })
    }
}

fn check_priority(p: f64) -> Result<f64, FseError> {
    if (MIN_PRIORITY..=MAX_PRIORITY).contains(&p) {
        Ok(p)
    } else {
        Err(FseError::Priority(p))
    }
}

impl Fse {
    /// An empty group running `algorithm`, holding at most `max_flows` flows.
    pub fn new(algorithm: Algorithm, max_flows: usize) -> Result<Self, FseError> {
        if !(1..=4096).contains(&max_flows) {
            return Err(FseError::Limit(max_flows));
        }
        Ok(Fse {
            algorithm,
            flows: vec![None; max_flows],
            live: 0,
            s_cr: 0.0,
            tlo: 0.0,
            frozen_until: None,
        })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.algorithm
    }
    /// S_CR.
    pub fn s_cr(&self) -> f64 {
        self.s_cr
    }
    /// TLO (always 0 outside the passive FSE).
    pub fn tlo(&self) -> f64 {
        self.tlo
    }
    /// Flows in the table (including terminated passive flows not yet deleted).
    pub fn len(&self) -> usize {
        self.live
    }
    pub fn is_empty(&self) -> bool {
        self.live == 0
    }
    pub fn max_flows(&self) -> usize {
        self.flows.len()
    }
    /// The end of the conservative FSE's freeze, if one is set.
    pub fn frozen_until(&self) -> Option<Instant> {
        self.frozen_until
    }
    /// FSE_R(f): the flow's assigned rate.
    pub fn rate(&self, f: FseFlow) -> Option<f64> {
        self.entry(f).map(|e| e.fse_r)
    }
    /// DR(f) (passive FSE; equal to FSE_R otherwise).
    pub fn desired(&self, f: FseFlow) -> Option<f64> {
        self.entry(f).map(|e| e.dr)
    }
    /// P(f); negative for a terminated passive flow.
    pub fn priority(&self, f: FseFlow) -> Option<f64> {
        self.entry(f).map(|e| e.p)
    }
    /// Every flow with its assigned rate: what the active FSE "sends" to each flow in
    /// step (c). Terminated passive flows are left out.
    pub fn rates(&self) -> impl Iterator<Item = (FseFlow, f64)> + '_ {
        self.flows.iter().enumerate().filter_map(|(i, e)| {
            e.filter(|e| e.p >= 0.0)
                .map(|e| (FseFlow(i as u32), e.fse_r))
        })
    }
    /// S_P: the sum of the priorities of the flows that have not terminated.
    pub fn s_p(&self) -> f64 {
        self.flows
            .iter()
            .flatten()
            .filter(|e| e.p >= 0.0)
            .map(|e| e.p)
            .sum()
    }

    fn entry(&self, f: FseFlow) -> Option<&Entry> {
        self.flows.get(f.index()).and_then(|e| e.as_ref())
    }

    /// Step (1): flow f starts with priority `p` and its controller's initial rate;
    /// `FSE_R(f) = DR(f) = rate`, `S_CR += FSE_R(f)`. (The draft adds the rate once
    /// SBD has assigned the group; a flow registered here is in the group.)
    pub fn register(&mut self, p: f64, initial_rate: f64) -> Result<FseFlow, FseError> {
        let p = check_priority(p)?;
        let rate = check_rate("initial rate", initial_rate)?;
        let limit = self.flows.len();
        let slot = self
            .flows
            .iter()
            .position(Option::is_none)
            .ok_or(FseError::Full { limit })?;
        self.flows[slot] = Some(Entry {
            p,
            fse_r: rate,
            dr: rate,
        });
        self.live += 1;
        self.s_cr += rate;
        Ok(FseFlow(slot as u32))
    }

    /// Step (2): flow f stops.
    ///
    /// Active algorithms: the draft says only "remove its entry". We also take its
    /// FSE_R out of S_CR, the mirror of step (1), so Σ FSE_R = S_CR keeps holding and
    /// the others get no rate their controllers did not compute (`fse.md`, choice F-a).
    ///
    /// Passive (A step 2): `DR(f) = 0`, `P(f) = -1`; the entry stays, still counted in
    /// the next update's `new_S_CR`, and that update's step (c) deletes it.
    pub fn leave(&mut self, f: FseFlow) -> Result<(), FseError> {
        let slot = self
            .flows
            .get_mut(f.index())
            .ok_or(FseError::UnknownFlow(f.0))?;
        let e = slot.as_mut().ok_or(FseError::UnknownFlow(f.0))?;
        match self.algorithm {
            Algorithm::Passive => {
                e.dr = 0.0;
                e.p = -1.0;
            }
            Algorithm::Active | Algorithm::ConservativeActive => {
                self.s_cr = (self.s_cr - e.fse_r).max(0.0);
                *slot = None;
                self.live -= 1;
                if self.live == 0 {
                    self.s_cr = 0.0;
                    self.frozen_until = None;
                }
            }
        }
        Ok(())
    }

    /// Changes a flow's priority; takes effect in the next update's step (c).
    pub fn set_priority(&mut self, f: FseFlow, p: f64) -> Result<(), FseError> {
        let p = check_priority(p)?;
        let e = self.live_entry_mut(f)?;
        e.p = p;
        Ok(())
    }

    fn live_entry_mut(&mut self, f: FseFlow) -> Result<&mut Entry, FseError> {
        let e = self
            .flows
            .get_mut(f.index())
            .and_then(|e| e.as_mut())
            .ok_or(FseError::UnknownFlow(f.0))?;
        if e.p < 0.0 {
            return Err(FseError::Terminated(f.0));
        }
        Ok(e)
    }

    /// Step (3) of an active algorithm: flow f's controller computed `cc_r`. `now` and
    /// `rtt` (the flow's smoothed RTT) set the conservative FSE's freeze; the plain
    /// active FSE ignores them. Every flow's FSE_R is recomputed (step c); read them
    /// with [`Fse::rates`].
    ///
    /// For the passive FSE use [`Fse::update_passive`]; calling this on a passive
    /// group runs it with a bulk desired rate (`new_DR = ∞`).
    pub fn update(
        &mut self,
        f: FseFlow,
        cc_r: f64,
        now: Instant,
        rtt: Duration,
    ) -> Result<Update, FseError> {
        let cc_r = check_rate("calculated rate", cc_r)?;
        if self.algorithm == Algorithm::Passive {
            return self.update_passive(f, cc_r, f64::INFINITY);
        }
        let fse_r = self.live_entry_mut(f)?.fse_r;
        let applied = match self.algorithm {
            Algorithm::Active => {
                // (a) S_CR = S_CR + CC_R - FSE_R(f)
                self.s_cr = (self.s_cr + cc_r - fse_r).max(0.0);
                true
            }
            _ => {
                // (a) only when the timer has expired or is not set.
                let frozen = self.frozen_until.is_some_and(|t| now < t);
                if !frozen {
                    self.frozen_until = None;
                    let delta = cc_r - fse_r;
                    if delta < 0.0 {
                        // Congestion: scale the aggregate as one flow's decrease would.
                        self.s_cr = if fse_r > 0.0 {
                            self.s_cr * cc_r / fse_r
                        } else {
                            0.0
                        };
                        self.frozen_until = Some(now + rtt * 2);
                    } else {
                        self.s_cr += delta;
                    }
                }
                !frozen
            }
        };
        // (b) S_P, (c) FSE_R(i) = P(i)·S_CR/S_P for all i.
        self.distribute();
        let rate = self.rate(f).unwrap_or(0.0);
        Ok(Update { rate, applied })
    }

    fn distribute(&mut self) {
        let s_p = self.s_p();
        if s_p <= 0.0 {
            return;
        }
        let s_cr = self.s_cr;
        for e in self.flows.iter_mut().flatten() {
            e.fse_r = e.p * s_cr / s_p;
            e.dr = e.fse_r;
        }
    }

    /// Appendix A step (3): `UPDATE(f, CC_R, new_DR)`; `new_dr = f64::INFINITY` for a
    /// bulk flow with no known maximum. Returns the rate flow f is to use.
    pub fn update_passive(
        &mut self,
        f: FseFlow,
        cc_r: f64,
        new_dr: f64,
    ) -> Result<Update, FseError> {
        let cc_r = check_rate("calculated rate", cc_r)?;
        if new_dr.is_nan() || new_dr < 0.0 {
            return Err(FseError::Rate {
                field: "desired rate",
                value: new_dr,
            });
        }
        let fse_r_f = self.live_entry_mut(f)?.fse_r;
        // (a) new_S_CR = Σ FSE_R(i), terminated flows included (F5: deletion is in c).
        let new_s_cr: f64 = self.flows.iter().flatten().map(|e| e.fse_r).sum();
        let delta = cc_r - fse_r_f;
        // (b)
        let dr_f = new_dr.min(cc_r);
        if delta > 0.0 {
            self.s_cr += delta;
        } else if delta < 0.0 {
            self.s_cr = (new_s_cr + delta).max(0.0);
        }
        {
            let e = self.live_entry_mut(f)?;
            e.fse_r = cc_r;
            e.dr = dr_f;
        }
        // (c) delete terminated flows; S_P over the rest.
        for slot in self.flows.iter_mut() {
            if slot.is_some_and(|e| e.p < 0.0) {
                *slot = None;
                self.live -= 1;
            }
        }
        let s_p = self.s_p();
        let p_f = self.entry(f).map_or(0.0, |e| e.p);
        if dr_f < cc_r {
            // The draft's formula has an unbalanced ')'; A.1 step 4 fixes its reading.
            self.tlo += p_f / s_p * self.s_cr - dr_f;
        }
        // (d)
        let rate = new_dr.min(p_f * self.s_cr / s_p + self.tlo);
        if rate != new_dr && self.tlo > 0.0 {
            self.tlo = 0.0; // f has taken the leftover
        }
        // (e)
        let e = self.live_entry_mut(f)?;
        if rate > e.dr {
            e.dr = rate;
        }
        e.fse_r = rate;
        Ok(Update {
            rate,
            applied: true,
        })
    }
}

//! Measurement-based shared-bottleneck detection: RFC 8382 (draft-ietf-rmcat-sbd as
//! seed 004 Appendix C.3 gives it; spec §5). Docs: `docs/mechanisms/sbd.md`.
//!
//! - [`stats`]: the per-flow statistics of §3.1 over each interval T: mean delay, the
//!   counter-based skewness estimate, variability (PDV, or MAD as §3.3.1), oscillation
//!   frequency and loss, with §3.3's noise removal and §3.4's weighted averages as
//!   options ([`SbdConfig`]).
//! - [`group`]: the grouping algorithm of §3.2.1, every T from the second T.
//! - [`Sbd`]: one host's detector: a bounded table of flows, `tick(now)` every T.
//!
//! The detector is pure: the caller feeds relative one-way delays (µs) and packet
//! counts, and calls [`Sbd::tick`]; it owns no clock. Memory is fixed when a flow is
//! registered (N interval records per flow; no per-sample storage), and the table
//! holds at most [`SbdConfig::max_flows`] flows. No Linux counterpart exists.
//!
//! Feedback path for TCP (decided, not wired yet; `sbd.md`): the **sender** computes
//! the statistics. Its "OWD" sample per ACK is the peer's TSval (receiver clock at
//! the ACK) minus the TSecr it echoes (our clock when the segment left), both
//! converted to µs with the timestamp clock rate: forward OWD plus the receiver's ACK
//! delay plus a constant offset, which the statistics cancel (§4). This needs no new
//! option or message and keeps grouping where the FSE is (the sender, RFC 8699 §4).

pub mod checks;
pub mod feed;
pub mod group;
pub mod host;
pub mod stable;
pub mod stats;
#[cfg(test)]
mod tests;

pub use feed::{FeedConfig, OwdFeed};
pub use group::Grouper;
pub use host::{SbdHost, SbdHostConfig};
pub use stable::Stability;
pub use stats::{Estimates, FlowStats, IntervalRecord};

use brisk_time::{Duration, Instant};

/// Which variability statistic var_est is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Variability {
    /// PDV = max_T − E_T (§3.1.3), grouped with p_pdv.
    #[default]
    Pdv,
    /// Mean absolute deviation (§3.3.1), grouped with p_mad.
    Mad,
}

/// Every parameter of §2.1, with the draft's recommended values as defaults.
#[derive(Clone, Debug, PartialEq)]
pub struct SbdConfig {
    /// Base interval T (350 ms).
    pub t: Duration,
    /// N intervals for freq_est, pkt_loss and the records kept (50).
    pub n: usize,
    /// M ≤ N intervals for mean_delay, skew_est and var_est (50).
    pub m: usize,
    /// F equally weighted recent intervals in the weighted averages (25).
    pub f: usize,
    /// Congestion threshold on skew_est (−0.01).
    pub c_s: f64,
    /// Hysteresis threshold for previously congested flows (0.3).
    pub c_h: f64,
    /// Loss threshold (0.1).
    pub p_l: f64,
    /// freq_est grouping threshold (0.1).
    pub p_f: f64,
    /// skew_est grouping threshold (0.1).
    pub p_s: f64,
    /// Relative loss grouping threshold (0.1).
    pub p_d: f64,
    /// Relative PDV grouping threshold (0.2).
    pub p_pdv: f64,
    /// Relative MAD grouping threshold (0.1).
    pub p_mad: f64,
    /// Significant-crossing band; `None`: 0.2 with PDV, 0.7 with MAD.
    pub p_v: Option<f64>,
    pub variability: Variability,
    /// §3.3.2's oscillation-noise removal (off: the base calculations).
    pub noise_removal: bool,
    /// §3.4's piecewise-linear weighted averages for skew_est and var_est.
    pub weighted: bool,
    /// The host's flow limit.
    pub max_flows: usize,
}

impl Default for SbdConfig {
    fn default() -> Self {
        SbdConfig {
            t: Duration::from_millis(350),
            n: 50,
            m: 50,
            f: 25,
            c_s: -0.01,
            c_h: 0.3,
            p_l: 0.1,
            p_f: 0.1,
            p_s: 0.1,
            p_d: 0.1,
            p_pdv: 0.2,
            p_mad: 0.1,
            p_v: None,
            variability: Variability::Pdv,
            noise_removal: false,
            weighted: false,
            max_flows: DEFAULT_MAX_FLOWS,
        }
    }
}

/// Default flow limit per host: the grouping is meant for "about 10–20" flows
/// (§3.2.1); 64 bounds both memory (64 × 50 records) and the sort per T.
pub const DEFAULT_MAX_FLOWS: usize = 64;

/// A configuration or table error, naming the field and its range.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum SbdError {
    #[error("{field} {value} is outside {range}")]
    Param {
        field: &'static str,
        value: f64,
        range: &'static str,
    },
    #[error("shared-bottleneck detector is full: at most {limit} flows")]
    Full { limit: usize },
    #[error("flow {0} is not registered with the detector")]
    UnknownFlow(u32),
}

impl SbdConfig {
    /// The draft's values with §3.3's noise removal and §3.4's weighting on.
    pub fn improved() -> Self {
        SbdConfig {
            noise_removal: true,
            weighted: true,
            ..SbdConfig::default()
        }
    }

    /// p_v in use.
    pub fn p_v(&self) -> f64 {
        self.p_v.unwrap_or(match self.variability {
            Variability::Pdv => 0.2,
            Variability::Mad => 0.7,
        })
    }

    /// The relative variability threshold in use (p_pdv or p_mad).
    pub fn p_var(&self) -> f64 {
        match self.variability {
            Variability::Pdv => self.p_pdv,
            Variability::Mad => self.p_mad,
        }
    }

    /// §3.4's weight of the interval `age` back (1 = most recent): M−F+1 for the F
    /// most recent, then M−F, …, 1; 1 for every age ≤ M when weighting is off.
    pub fn weight(&self, age: usize) -> f64 {
        if age == 0 || age > self.m {
            0.0
        } else if !self.weighted {
            1.0
        } else if age <= self.f {
            (self.m - self.f + 1) as f64
        } else {
            (self.m - age + 1) as f64
        }
    }

    pub fn validate(&self) -> Result<(), SbdError> {
        let bad = |field, value: f64, range| {
            Err(SbdError::Param {
                field,
                value,
                range,
            })
        };
        let t_ms = self.t.as_micros() as f64 / 1000.0;
        if !(1.0..=60_000.0).contains(&t_ms) {
            return bad("t", t_ms, "1..=60000 ms");
        }
        if !(2..=1000).contains(&self.n) {
            return bad("n", self.n as f64, "2..=1000");
        }
        if !(1..=self.n).contains(&self.m) {
            return bad("m", self.m as f64, "1..=n");
        }
        if !(1..=self.m).contains(&self.f) {
            return bad("f", self.f as f64, "1..=m");
        }
        for (field, v) in [("c_s", self.c_s), ("c_h", self.c_h)] {
            if !(-1.0..=1.0).contains(&v) {
                return bad(field, v, "-1..=1");
            }
        }
        for (field, v) in [
            ("p_l", self.p_l),
            ("p_f", self.p_f),
            ("p_s", self.p_s),
            ("p_d", self.p_d),
            ("p_pdv", self.p_pdv),
            ("p_mad", self.p_mad),
            ("p_v", self.p_v()),
        ] {
            if !(0.0..=2.0).contains(&v) {
                return bad(field, v, "0..=2");
            }
        }
        if !(1..=4096).contains(&self.max_flows) {
            return bad("max_flows", self.max_flows as f64, "1..=4096");
        }
        Ok(())
    }
}

/// A flow's handle in the detector.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SbdFlow(u32);

impl SbdFlow {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// One host's shared-bottleneck detector.
#[derive(Clone, Debug)]
pub struct Sbd {
    cfg: SbdConfig,
    flows: Vec<Option<FlowStats>>,
    grouper: Grouper,
    next_tick: Option<Instant>,
    ticks: u64,
}

impl Sbd {
    pub fn new(cfg: SbdConfig) -> Result<Self, SbdError> {
        cfg.validate()?;
        let n = cfg.max_flows;
        Ok(Sbd {
            grouper: Grouper::new(n),
            flows: vec![None; n],
            cfg,
            next_tick: None,
            ticks: 0,
        })
    }

    pub fn config(&self) -> &SbdConfig {
        &self.cfg
    }

    /// Starts tracking a flow. The only allocation: its N interval records.
    pub fn register(&mut self) -> Result<SbdFlow, SbdError> {
        let limit = self.flows.len();
        let slot = self
            .flows
            .iter()
            .position(Option::is_none)
            .ok_or(SbdError::Full { limit })?;
        self.flows[slot] = Some(FlowStats::new(&self.cfg));
        Ok(SbdFlow(slot as u32))
    }

    pub fn remove(&mut self, f: SbdFlow) {
        if let Some(slot) = self.flows.get_mut(f.index()) {
            *slot = None;
            self.grouper.forget(f.index());
        }
    }

    pub fn flow(&self, f: SbdFlow) -> Option<&FlowStats> {
        self.flows.get(f.index()).and_then(|s| s.as_ref())
    }

    fn flow_mut(&mut self, f: SbdFlow) -> Result<&mut FlowStats, SbdError> {
        self.flows
            .get_mut(f.index())
            .and_then(|s| s.as_mut())
            .ok_or(SbdError::UnknownFlow(f.0))
    }

    /// One relative OWD sample of flow `f`, µs.
    pub fn on_owd(&mut self, f: SbdFlow, owd_us: i64) -> Result<(), SbdError> {
        self.flow_mut(f)?.on_owd(owd_us);
        Ok(())
    }

    /// Packets of flow `f` received and found lost since the last call.
    pub fn on_packets(&mut self, f: SbdFlow, received: u32, lost: u32) -> Result<(), SbdError> {
        self.flow_mut(f)?.on_packets(received, lost);
        Ok(())
    }

    /// Closes every flow's interval once per T and regroups. Returns whether a
    /// grouping decision was made (§3.2.2: every T, from the second T on).
    pub fn tick(&mut self, now: Instant) -> bool {
        let due = match self.next_tick {
            None => {
                self.next_tick = Some(now + self.cfg.t);
                return false;
            }
            Some(t) => now >= t,
        };
        if !due {
            return false;
        }
        self.next_tick = Some(now + self.cfg.t);
        self.close_all();
        true
    }

    /// Closes the interval now (for callers that keep T themselves) and regroups.
    pub fn close_all(&mut self) {
        for fl in self.flows.iter_mut().flatten() {
            fl.close_interval(&self.cfg);
        }
        self.ticks += 1;
        if self.ticks >= 2 {
            self.grouper.group(&self.cfg, &self.flows);
        }
        // PC for the next T: the verdict of this one.
        for fl in self.flows.iter_mut().flatten() {
            fl.previously_congested = fl.congested(&self.cfg);
        }
    }

    /// The last decision's group of `f`: `None` when the flow was not congested
    /// (only congested flows are grouped, §3.2.1 step 1) or no decision yet.
    pub fn group_of(&self, f: SbdFlow) -> Option<u32> {
        self.grouper.group_of(f.index())
    }

    /// Whether the last decision put `a` and `b` in one group.
    pub fn shares(&self, a: SbdFlow, b: SbdFlow) -> bool {
        matches!((self.group_of(a), self.group_of(b)), (Some(x), Some(y)) if x == y)
    }

    /// Decisions made so far.
    pub fn decisions(&self) -> u64 {
        self.ticks.saturating_sub(1)
    }
}

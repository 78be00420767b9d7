//! Shared-bottleneck detection (RFC 8382, brisk-tcp `cc/sbd`) in real runs (issue 33 §4):
//! turning the detector on in brisk's stack and recording its groups per decision.
//!
//! * **On.** The detector is the host's (`Endpoint::enable_sbd`), so it is switched on
//!   for the stack before any flow connects: explicitly by the two-path runner's
//!   [`super::twopath::TwoPathOptions::sbd`], or, in either runner, when a brisk flow's
//!   FSE follows the detector (`[flow.tcp] fse = { sbd = true }`), with the settings
//!   the simulator's `[[node]] sbd = true` uses ([`scenario_default`]).
//! * **Watched.** A thread polls the stack every [`POLL`] (a fifth of the draft's T =
//!   350 ms) under the stack's lock and, when the detector has made a new decision,
//!   records it: per flow of the run (found by its receiver's address, as the host
//!   numbers flows in the order they connected), the raw group, the stable group the
//!   FSE would couple, and the four estimates. Decisions made between two polls
//!   (none at T = 350 ms unless the host stalls) are counted in
//!   [`SbdReport::missed`], not invented.
//! * **Bounded.** At most [`MAX_DECISIONS`] decisions are kept (about 9.7 h at T =
//!   350 ms; later ones are counted only), each with one entry per flow of the run.

use std::net::SocketAddr;
use std::time::Duration as StdDuration;

use brisk_tcp::cc::sbd::{SbdConfig, SbdHostConfig};
use serde::Serialize;

use super::{since, FlowStack, RealRun};
use crate::os::clock::Clock;
use crate::stack::BriskStack;

/// How often the watcher looks for a new decision.
pub const POLL: StdDuration = StdDuration::from_millis(70);
/// Most decisions a report keeps.
pub const MAX_DECISIONS: usize = 100_000;

/// One flow in one decision.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct SbdFlowState {
    /// The decision's group (`None`: not congested, or not tracked).
    pub group: Option<u32>,
    /// The stable group the FSE couples (`stable.rs`), if any.
    pub coupled: Option<u32>,
    /// The estimates behind the decision: skew_est, var_est (ms), freq_est, pkt_loss.
    pub skew_est: f64,
    pub var_est_ms: f64,
    pub freq_est: f64,
    pub pkt_loss: f64,
    /// The detector tracks this flow (it connected and joined the host).
    pub tracked: bool,
}

/// One grouping decision as seen by the watcher.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SbdDecision {
    /// When the watcher saw it, ns since the run's start.
    pub at_ns: u64,
    /// The detector's decision count at that time.
    pub number: u64,
    /// By flow of the run.
    pub flows: Vec<SbdFlowState>,
}

/// The detector's output over a real run.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct SbdReport {
    pub decisions: Vec<SbdDecision>,
    /// Decisions the detector made in all by the run's end.
    pub total: u64,
    /// Decisions made between two polls (not recorded) or beyond [`MAX_DECISIONS`].
    pub missed: u64,
    /// One-way-delay samples fed to the detector.
    pub samples: u64,
    /// Flows the detector could not track (its table was full).
    pub untracked: u64,
}

/// The settings of the simulator's `[[node]] sbd = true` (`brisk-sim` `wl_run.rs`):
/// RFC 8382 with §3.3's noise removal and §3.4's weights, the feed's defaults.
pub fn scenario_default() -> SbdHostConfig {
    SbdHostConfig {
        sbd: SbdConfig::improved(),
        ..SbdHostConfig::default()
    }
}

/// The detector the run needs: `explicit`, else [`scenario_default`] if a brisk flow's
/// FSE follows the detector, else none.
pub fn needed(run: &RealRun, explicit: Option<&SbdHostConfig>) -> Option<SbdHostConfig> {
    explicit.cloned().or_else(|| {
        run.flows
            .iter()
            .any(|f| {
                f.stack == FlowStack::Brisk
                    && f.tcp
                        .congestion
                        .controller
                        .fse
                        .as_ref()
                        .is_some_and(|x| x.sbd)
            })
            .then(scenario_default)
    })
}

/// Switches the detector on in `stack` (before any flow connects).
pub fn enable(stack: &BriskStack, cfg: SbdHostConfig) -> crate::error::Result<()> {
    stack
        .with_endpoint(|ep| ep.enable_sbd(cfg))
        .map_err(|e| crate::error::EmuError::Config(format!("sbd: {e}")))
}

/// Records the detector's decisions until `end` (time since the run's start).
/// `receivers[i]` is flow i's receiver address, by which flows are told apart.
pub fn watch(
    stack: &BriskStack,
    clock: Clock,
    end: StdDuration,
    receivers: &[SocketAddr],
) -> SbdReport {
    let mut rep = SbdReport::default();
    let mut seen = 0u64;
    loop {
        let now = since(clock);
        let stop = now >= end;
        if !stop {
            std::thread::sleep(POLL.min(end - now));
        }
        let at_ns = since(clock).as_nanos() as u64;
        let d = stack.with_endpoint(|ep| {
            let hc = ep.host_cc();
            let sbd = hc.sbd()?;
            let n = sbd.decisions();
            let mut flows = vec![SbdFlowState::default(); receivers.len()];
            if n != seen {
                for (f, g) in sbd.groups() {
                    let Some((_, remote)) = hc.path(f) else {
                        continue;
                    };
                    let Some(i) = receivers.iter().position(|r| *r == remote) else {
                        continue;
                    };
                    let e = sbd.stats(f).map(|s| s.estimates());
                    flows[i] = SbdFlowState {
                        group: g,
                        coupled: sbd.coupled_group_of(f),
                        skew_est: e.map_or(f64::NAN, |e| e.skew_est),
                        var_est_ms: e.map_or(f64::NAN, |e| e.var_est / 1000.0),
                        freq_est: e.map_or(f64::NAN, |e| e.freq_est),
                        pkt_loss: e.map_or(f64::NAN, |e| e.pkt_loss),
                        tracked: true,
                    };
                }
            }
            Some((n, flows, sbd.samples, sbd.untracked))
        });
        let Some((n, flows, samples, untracked)) = d else {
            return rep; // no detector
        };
        rep.total = n;
        rep.samples = samples;
        rep.untracked = untracked;
        if n != seen {
            let new = n - seen;
            rep.missed += new - 1;
            if rep.decisions.len() < MAX_DECISIONS {
                rep.decisions.push(SbdDecision {
                    at_ns,
                    number: n,
                    flows,
                });
            } else {
                rep.missed += 1;
            }
            seen = n;
        }
        if stop {
            return rep;
        }
    }
}

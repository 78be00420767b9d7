//! The FSE for a host's TCP flows: a controller layer (tag "fse") that couples the
//! congestion windows of the flows in one group of the host (`host.rs`). Docs:
//! `docs/mechanisms/fse.md` ("TCP flows").
//!
//! What is coupled is the **congestion window**, in segments: draft -04/-05 §5.2
//! ("for window-based CCs FSE_R is a window"), and the coupling of TCP flows by the
//! FSE's authors (Islam, Welzl et al., "ctrlTCP", 2018, and "single-path TCP
//! congestion control coupling"), which keeps a sum of windows `S_CR` and a shared
//! slow-start threshold `S_SS` and writes each flow's share back into its cwnd and
//! ssthresh. Per hook:
//!
//! - **Join** (`init`): the flow registers with its priority and its initial window
//!   (step 1); a group already past its first decrease adds the window to `S_SS` too,
//!   so the newcomer starts in congestion avoidance, as the group is.
//! - **Increase** (`cong_avoid`): the flow first takes its assigned window
//!   `FSE_R(f) = P(f)·S_CR/S_P` and ssthresh `S_SS·FSE_R(f)/S_CR` (step c: "send
//!   FSE_R(i) to flow i"; the flow reads it at its next ACK). Then its own
//!   controller grows cwnd, and the growth enters the FSE as `CC_R = FSE_R(f) +
//!   growth` (step 3). In congestion avoidance the growth is scaled by `P(f)/S_P`
//!   ([`Increase::OneFlow`], C.1's "we limit the aggregate rate growth of N flows to
//!   I/N"), so the group grows as one flow; slow start is not scaled (the group's
//!   windows then double per RTT together, as one flow's would).
//!   A controller that lowers cwnd in `cong_avoid` (LEDBAT above its target) enters
//!   the FSE as a decrease, unless the flow had less in flight than its window (then
//!   the cut is LEDBAT's flight-size cap, not congestion, and is not passed on).
//! - **Decrease** (`ssthresh`): the flow's controller computes its reduced window;
//!   the FSE receives `CC_R = FSE_R(f)·(reduced/cwnd)`, the controller's own factor
//!   applied to the assigned window. The conservative FSE scales `S_CR` by that
//!   factor and freezes it for two RTTs of this flow, so a congestion event that
//!   hits several flows cuts the aggregate once; `S_SS` becomes the cut `S_CR`. The
//!   flow's new ssthresh is its share; PRR brings cwnd to it. A flow that loses
//!   during the freeze keeps its (already cut) share.
//! - **RTO**: the connection sets cwnd to 1; the flow then climbs back to its
//!   share by slow start instead of jumping to it (no burst of a whole share).
//! - **Idle restart** (`CwndRestart`, a paused sender resumes): the flow leaves the
//!   FSE and joins again with its restart window, then climbs to its new share.
//! - **Leave**: the host removes the flow's entry when its connection leaves the
//!   endpoint (`HostCc::leave`), and `S_CR` and `S_SS` lose its share (choice F-a).
//!
//! A flow whose group is full, or whose group runs another algorithm, runs its own
//! controller uncoupled and counts the refusal ([`FseDiagnostics::refused`]).
//!
//! Cost: every hook reaches the group through the lent host (`host.rs`: an index
//! into the flow table and one into the group table), with no lock and no
//! allocation; an update visits the group's flow table once (the draft's step c),
//! bounded by `max_flows`. The group's table is allocated when its first flow
//! registers. `tests/fse_alloc.rs` counts allocations over many hooks (zero).

use super::{Algorithm, FseError, FseFlow, Update, DEFAULT_MAX_FLOWS};
use super::{Fse, MAX_PRIORITY, MIN_PRIORITY};
use crate::cc::host::{GroupId, GroupKey};
use crate::cc::{
    AckSample, CcDiagnostics, CcEvent, CcLayer, CongestionCause, CongestionControl, FlowCtx,
};
use brisk_time::{Duration, Instant};
use std::net::SocketAddr;

/// The layer's tag in labels: `reno+fse`.
pub const TAG: &str = "fse";

/// Longest group name accepted (bytes).
pub const MAX_GROUP_NAME: usize = 64;

/// How a flow's growth in congestion avoidance enters `S_CR`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Increase {
    /// Scaled by `P(f)/S_P`, so that the group grows as one flow (C.1's "I/N").
    #[default]
    OneFlow,
    /// Whole, as the draft's pseudo-code adds `DELTA` (the group grows as the sum of
    /// its flows' increases).
    Sum,
}

/// One flow's FSE settings (`[flow.tcp] fse = { ... }`).
#[derive(Clone, Debug, PartialEq)]
pub struct FseConfig {
    /// A named group; `None`: the flows of this host to the same remote host (RFC
    /// 8699 §2's "flows between the same pair of hosts").
    pub group: Option<String>,
    /// P, 0.1 to 1.0 (draft §5.2).
    pub priority: f64,
    pub algorithm: Algorithm,
    pub increase: Increase,
    /// Most flows in the group (the group's FSE is made with the first flow's value).
    pub max_flows: usize,
    /// The group is the host's shared-bottleneck detector's stable group this flow is
    /// in (`HostCc::group_by_sbd`, issue 33 §4), none while it is in none (the flow
    /// then runs its own controller). Needs the detector on the host
    /// (`Endpoint::enable_sbd`; `[[node]] sbd = true` in a scenario); excludes `group`.
    pub sbd: bool,
}

impl Default for FseConfig {
    fn default() -> Self {
        FseConfig {
            group: None,
            priority: MAX_PRIORITY,
            algorithm: Algorithm::ConservativeActive,
            increase: Increase::OneFlow,
            max_flows: DEFAULT_MAX_FLOWS,
            sbd: false,
        }
    }
}

impl FseConfig {
    /// Range checks: `Err((field, message))`, the field relative to the `fse` table.
    pub fn validate(&self) -> Result<(), (&'static str, String)> {
        if !(MIN_PRIORITY..=MAX_PRIORITY).contains(&self.priority) {
            return Err((
                "priority",
                format!(
                    "must be between 0.1 and 1.0 (draft-welzl-rmcat-coupled-cc §5.2), got {}",
                    self.priority
                ),
            ));
        }
        if !(1..=4096).contains(&self.max_flows) {
            return Err((
                "max_flows",
                format!("must be between 1 and 4096, got {}", self.max_flows),
            ));
        }
        if let (true, Some(_)) = (self.sbd, &self.group) {
            return Err((
                "sbd",
                "a flow grouped by the detector (sbd = true) names no group".to_string(),
            ));
        }
        if let Some(g) = &self.group {
            if g.is_empty() || g.len() > MAX_GROUP_NAME {
                return Err(("group", format!("must be 1 to {MAX_GROUP_NAME} bytes long")));
            }
        }
        Ok(())
    }

    /// The host group a flow to `remote` joins at first (a flow grouped by the
    /// detector joins none: `HostCc::group_by_sbd`).
    pub fn join_key(&self, remote: SocketAddr) -> Option<GroupKey> {
        (!self.sbd).then(|| self.group_key(remote))
    }

    /// The host group a flow to `remote` joins, if not grouped by the detector.
    pub fn group_key(&self, remote: SocketAddr) -> GroupKey {
        match &self.group {
            Some(name) => GroupKey::named(name),
            None => GroupKey::RemoteHost(remote.ip()),
        }
    }
}

/// One group's FSE with what window-based coupling adds: the shared slow-start
/// threshold `S_SS` (ctrlTCP's), in segments.
#[derive(Clone, Debug)]
pub struct FseGroup {
    fse: Fse,
    /// `S_SS`; infinite until the group's first decrease.
    ssthresh: f64,
    /// Decreases the FSE applied.
    decreases: u64,
}

impl FseGroup {
    pub fn new(algorithm: Algorithm, max_flows: usize) -> Result<Self, FseError> {
        Ok(FseGroup {
            fse: Fse::new(algorithm, max_flows)?,
            ssthresh: f64::INFINITY,
            decreases: 0,
        })
    }

    pub fn algorithm(&self) -> Algorithm {
        self.fse.algorithm()
    }

    /// The group's FSE state (`S_CR`, shares, priorities).
    pub fn fse(&self) -> &Fse {
        &self.fse
    }

    /// `S_SS`, segments (infinite before the first decrease).
    pub fn ssthresh(&self) -> f64 {
        self.ssthresh
    }

    /// Decreases applied so far.
    pub fn decreases(&self) -> u64 {
        self.decreases
    }

    /// Step 1. A group in congestion avoidance takes the newcomer's window into `S_SS`.
    pub fn register(&mut self, p: f64, initial: f64) -> Result<FseFlow, FseError> {
        let h = self.fse.register(p, initial)?;
        if self.ssthresh.is_finite() {
            self.ssthresh += initial;
        }
        Ok(h)
    }

    /// Step 2; `S_SS` shrinks in proportion to `S_CR`.
    pub fn leave(&mut self, h: FseFlow) {
        let before = self.fse.s_cr();
        if self.fse.leave(h).is_err() {
            return;
        }
        let after = self.fse.s_cr();
        if self.ssthresh.is_finite() && before > 0.0 {
            self.ssthresh *= after / before;
        }
        if self.fse.is_empty() {
            self.ssthresh = f64::INFINITY;
        }
    }

    /// Step 3 with `CC_R = cc_r`; a decrease the FSE applies sets `S_SS = S_CR`.
    pub fn update(
        &mut self,
        h: FseFlow,
        cc_r: f64,
        now: Instant,
        rtt: Duration,
    ) -> Result<Update, FseError> {
        let before = self.fse.s_cr();
        let u = self.fse.update(h, cc_r, now, rtt)?;
        if u.applied && self.fse.s_cr() < before {
            self.ssthresh = self.fse.s_cr();
            self.decreases += 1;
        }
        Ok(u)
    }

    /// Flow `h`'s share of `S_SS`: `S_SS·FSE_R(h)/S_CR` (infinite before the first
    /// decrease).
    pub fn ssthresh_of(&self, h: FseFlow) -> f64 {
        let s = self.fse.s_cr();
        match self.fse.rate(h) {
            Some(r) if self.ssthresh.is_finite() && s > 0.0 => self.ssthresh * r / s,
            _ => f64::INFINITY,
        }
    }
}

/// What the layer reports (`TcpInfo::cc_diag`, traces).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct FseDiagnostics {
    /// The flow is registered in a group's FSE.
    pub coupled: bool,
    /// Its assigned window FSE_R(f), segments.
    pub share: f64,
    /// The group's S_CR, segments.
    pub group_window: f64,
    /// Flows in the group's FSE.
    pub members: u32,
    /// Registrations refused (group full, or running another algorithm).
    pub refused: u32,
}

/// The FSE layer around a flow's controller.
#[derive(Debug)]
pub struct FseLayer {
    inner: Box<dyn CongestionControl>,
    cfg: FseConfig,
    /// After an RTO: climbing back to the share by slow start.
    climbing: bool,
    /// The group a registration was last tried in (a refused flow does not retry
    /// on every ACK, only when its group changes).
    tried: Option<GroupId>,
    diag: FseDiagnostics,
}

/// A window in segments from an FSE value: rounded, at least 1.
fn window(x: f64) -> u32 {
    if x.is_finite() {
        x.round().clamp(1.0, f64::from(u32::MAX)) as u32
    } else {
        u32::MAX
    }
}

/// What a flow reads from its group at a hook.
#[derive(Clone, Copy, Debug)]
struct Share {
    rate: f64,
    ssthresh: f64,
    /// P(f)/S_P.
    weight: f64,
}

impl FseLayer {
    pub fn new(inner: Box<dyn CongestionControl>, cfg: FseConfig) -> Self {
        FseLayer {
            inner,
            cfg,
            climbing: false,
            tried: None,
            diag: FseDiagnostics::default(),
        }
    }

    /// Registers the flow in its group's FSE if it is not registered (a join, or a
    /// new group after `HostCc::regroup`), with its current window; reads its share.
    fn sync(&mut self, cx: &mut FlowCtx<'_>) -> Option<Share> {
        let f = cx.flow()?;
        let cwnd = f64::from(cx.cwnd);
        let cfg = &self.cfg;
        let host = cx.host_mut()?;
        if host.fse_mut(f).is_none() {
            let g = host.group_of(f);
            self.diag.coupled = false;
            if g.is_none() || g == self.tried {
                return None;
            }
            self.tried = g;
            if host
                .fse_register(f, cfg.algorithm, cfg.max_flows, cfg.priority, cwnd)
                .is_err()
            {
                self.diag.refused = self.diag.refused.saturating_add(1);
                return None;
            }
        }
        let (fg, h) = host.fse_mut(f)?;
        let fse = fg.fse();
        let rate = fse.rate(h)?;
        let s_p = fse.s_p();
        let weight = if s_p > 0.0 {
            fse.priority(h).unwrap_or(0.0).max(0.0) / s_p
        } else {
            1.0
        };
        self.diag.coupled = true;
        self.diag.share = rate;
        self.diag.group_window = fse.s_cr();
        self.diag.members = fse.len() as u32;
        Some(Share {
            rate,
            ssthresh: fg.ssthresh_of(h),
            weight,
        })
    }

    /// Step 3 for this flow; returns the new share.
    fn update(&mut self, cx: &mut FlowCtx<'_>, cc_r: f64, now: Instant) -> Option<Share> {
        let f = cx.flow()?;
        let rtt = cx.srtt;
        let (fg, h) = cx.host_mut()?.fse_mut(f)?;
        let u = fg.update(h, cc_r.max(0.0), now, rtt).ok()?;
        let ssthresh = fg.ssthresh_of(h);
        self.diag.share = u.rate;
        self.diag.group_window = fg.fse().s_cr();
        Some(Share {
            rate: u.rate,
            ssthresh,
            weight: 0.0,
        })
    }

    /// The flow takes its share: ssthresh always, cwnd unless it is climbing back
    /// after an RTO (then only once it has reached the share).
    fn follow(&mut self, cx: &mut FlowCtx<'_>, s: Share) {
        let clamp = cx.cwnd_clamp.max(1);
        let w = window(s.rate).min(clamp);
        cx.ssthresh = window(s.ssthresh).max(2);
        if self.climbing {
            if cx.cwnd >= w {
                self.climbing = false;
                cx.cwnd = w;
            }
        } else {
            cx.cwnd = w;
        }
    }
}

impl CcLayer for FseLayer {
    fn tag(&self) -> &'static str {
        TAG
    }
    fn inner(&self) -> &dyn CongestionControl {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.inner.as_mut()
    }

    fn init(&mut self, cx: &mut FlowCtx<'_>, now: Instant) {
        self.inner.init(cx, now);
        self.tried = None;
        if let Some(s) = self.sync(cx) {
            // A group in congestion avoidance: the newcomer starts there too.
            if s.ssthresh.is_finite() {
                cx.ssthresh = window(s.ssthresh).max(2);
            }
        }
    }

    fn cong_avoid(&mut self, cx: &mut FlowCtx<'_>, ack: &AckSample) {
        let Some(s) = self.sync(cx) else {
            self.inner.cong_avoid(cx, ack);
            return;
        };
        self.follow(cx, s);
        let before = cx.cwnd;
        let slow_start = cx.in_slow_start();
        self.inner.cong_avoid(cx, ack);
        if self.climbing {
            // Slow start from the RTO's cwnd of 1: the share already holds this window.
            if cx.cwnd >= window(s.rate) {
                self.climbing = false;
                cx.cwnd = window(s.rate).min(cx.cwnd_clamp.max(1));
            }
            return;
        }
        let grown = f64::from(cx.cwnd) - f64::from(before);
        if grown == 0.0 {
            return;
        }
        if grown < 0.0 && ack.prior_in_flight < before {
            // A cut while the flow did not fill its window is no congestion signal
            // (LEDBAT caps cwnd at flightsize + ALLOWED_INCREASE, RFC 6817 §2.4.2):
            // the group keeps its window; the flow sends what it has.
            return;
        }
        let scale = if grown > 0.0 && !slow_start && self.cfg.increase == Increase::OneFlow {
            s.weight
        } else {
            1.0
        };
        if let Some(n) = self.update(cx, s.rate + grown * scale, ack.now) {
            self.follow(cx, n);
        }
    }

    fn ssthresh(&mut self, cx: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        let reduced = self.inner.ssthresh(cx, now, cause);
        let Some(s) = self.sync(cx) else {
            return reduced;
        };
        let cwnd = cx.cwnd.max(1);
        let factor = (f64::from(reduced) / f64::from(cwnd)).min(1.0);
        let Some(n) = self.update(cx, s.rate * factor, now) else {
            return reduced;
        };
        // Frozen (another flow's decrease already cut the group): the share as it is.
        window(n.rate).min(cwnd).max(2)
    }

    fn on_event(&mut self, cx: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        self.inner.on_event(cx, now, ev);
        match ev {
            CcEvent::Rto if self.diag.coupled => self.climbing = true,
            CcEvent::CwndRestart if self.diag.coupled => {
                // Back from an idle period (a paused sender): the share it held while
                // idle goes back to the group, and it joins again with its restart
                // window, taking its priority share at the next update and climbing to
                // it by slow start (T-9).
                if let (Some(f), Some(h)) = (cx.flow(), cx.host_mut()) {
                    h.fse_leave(f);
                }
                self.tried = None;
                if self.sync(cx).is_some() {
                    self.climbing = true;
                }
            }
            _ => {}
        }
    }

    fn undo_cwnd(&mut self, cx: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        let v = self.inner.undo_cwnd(cx, prior_cwnd);
        // The FSE does not restore S_CR on an undo: the flow returns to its share.
        match self.sync(cx) {
            Some(s) => {
                self.climbing = false;
                v.min(window(s.rate))
            }
            None => v,
        }
    }

    fn own_diagnostics(&self) -> Option<CcDiagnostics> {
        Some(CcDiagnostics::Fse(self.diag))
    }
}

#[cfg(test)]
#[path = "tcp_tests.rs"]
mod tests;

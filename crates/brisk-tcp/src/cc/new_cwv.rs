//! New congestion window validation (new-CWV): RFC 7661 (Fairhurst, Sathiaseelan,
//! Secchi, Experimental, Oct 2015; = draft-ietf-tcpm-newcwv-12), as a layer around any
//! base controller. It mirrors the out-of-tree Linux "newcwv" module by Hossain, Secchi
//! and Yanev (there is no mainline function): a per-round pipeACK sample taken when
//! `snd_una` passes the `snd_nxt` of the previous sample, a binned max filter, the
//! `2·pipeACK ≥ cwnd·MSS` test, and the recovery and NVP rules below.
//!
//! - §4.1: start validated, pipeACK undefined.
//! - §4.2, §4.5.1: pipeACK = max of per-round samples (bytes cumulatively ACKed in one
//!   round) over the pipeACK Sampling Period `max(3·SRTT, 1 s)`, kept in 5 bins; a
//!   bin older than the period counts as 0. No sample in the first round, none in
//!   recovery; undefined again after recovery and after an RTO.
//! - §4.3: non-validated iff `pipeACK < ½·cwnd`.
//! - §4.4: while non-validated, cwnd grows only when the sender is cwnd-limited, and
//!   the RFC 5681 restart after idle is off (the connection checks
//!   [`super::CcSpec::new_cwv`]), so cwnd is kept across idle periods.
//! - §4.4.1: a loss while non-validated sets, for the recovery,
//!   `cwnd = max(pipeACK, LossFlightSize)/2`, and at its end
//!   `cwnd = ssthresh = (max(pipeACK, LossFlightSize) − R)/2`, at least 1 segment.
//! - §4.4.3, §4.5.2: per NVP elapsed while non-validated,
//!   `ssthresh = max(ssthresh, ¾·cwnd)` and `cwnd = min(cwnd, max(½·cwnd, IW))`,
//!   checked on every ACK and every transmission of new data (no timer).
//!
//! Every choice where the RFC is silent (resolutions C1–C14 of the spec) and the
//! departures: docs/mechanisms/new-cwv.md.

#[doc(hidden)]
pub mod checks;
#[cfg(test)]
mod tests;

use super::{
    AckSample, CcDiagnostics, CcEvent, CcState, CongestionCause, CongestionControl, FlowCtx,
};
use crate::sent::SentInfo;
use brisk_time::{Duration, Instant};

/// The layer's tag in labels: "cubic+cwv".
pub const TAG: &str = "cwv";

/// RFC 7661 §4.5.1 example (spec C12): the Sampling Period is split into 5 bins.
pub const BINS: usize = 5;

/// RFC 7661 §2: the pipeACK Sampling Period is at least 1 s.
pub const MIN_SAMPLING_PERIOD: Duration = Duration::from_secs(1);

/// RFC 7661 §2, §5: the NVP "SHOULD NOT exceed 5 minutes".
pub const DEFAULT_NVP: Duration = Duration::from_secs(300);

/// Tunables; `Default` gives the RFC's values.
#[derive(Clone, Debug, PartialEq)]
pub struct NewCwvConfig {
    /// Non-validated period: how long cwnd is kept while non-validated before each
    /// §4.4.3 reduction. Must be > 0.
    pub nvp: Duration,
}

impl Default for NewCwvConfig {
    fn default() -> Self {
        NewCwvConfig { nvp: DEFAULT_NVP }
    }
}

/// A configuration value outside what the layer supports.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum NewCwvConfigError {
    /// A zero NVP would reduce cwnd without end on the first non-validated ACK.
    #[error("new-CWV non-validated period must be > 0")]
    Nvp,
}

impl NewCwvConfig {
    /// Check every field; for configuration parsers.
    pub fn validate(&self) -> Result<(), NewCwvConfigError> {
        if self.nvp.is_zero() {
            return Err(NewCwvConfigError::Nvp);
        }
        Ok(())
    }
}

/// One measurement period of the max filter (§4.5.1): its start and highest sample.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Bin {
    start: Instant,
    max_bytes: u64,
}

/// The pipeACK variable: a max filter over [`BINS`] bins spanning the Sampling Period.
/// Fixed size; every operation is O(BINS).
#[derive(Clone, Debug, Default)]
pub struct PipeAckFilter {
    bins: [Option<Bin>; BINS],
    /// Ring slot the next new bin goes into.
    next: usize,
    /// Sampling Period, recomputed from SRTT at each sample (spec C3).
    period: Duration,
    /// False until the first sample (§4.1) and again after [`PipeAckFilter::reset`].
    defined: bool,
}

impl PipeAckFilter {
    /// pipeACK undefined, every bin gone.
    pub fn reset(&mut self) {
        *self = PipeAckFilter::default();
    }

    /// One pipeACK sample (bytes) taken at `now`, with the current SRTT.
    pub fn push(&mut self, now: Instant, sample_bytes: u64, srtt: Duration) {
        self.period = (srtt * 3).max(MIN_SAMPLING_PERIOD);
        self.defined = true;
        let bin_len = self.period / BINS as u32;
        let newest = (self.next + BINS - 1) % BINS;
        match &mut self.bins[newest] {
            Some(b) if now < b.start + bin_len => b.max_bytes = b.max_bytes.max(sample_bytes),
            _ => {
                self.bins[self.next] = Some(Bin {
                    start: now,
                    max_bytes: sample_bytes,
                });
                self.next = (self.next + 1) % BINS;
            }
        }
    }

    /// pipeACK at `now`, bytes: `None` while undefined; bins older than the Sampling
    /// Period count as 0 (§4.5.1).
    pub fn value(&self, now: Instant) -> Option<u64> {
        self.defined.then(|| {
            self.bins
                .iter()
                .flatten()
                .filter(|b| now.saturating_duration_since(b.start) < self.period)
                .map(|b| b.max_bytes)
                .max()
                .unwrap_or(0)
        })
    }

    /// The first instant in `(from, to]` at which `2·pipeACK < cwnd_bytes` holds: only
    /// a bin ageing out lowers pipeACK between samples, so the candidates are the
    /// bins' expiry instants; `to` when none crosses earlier.
    fn crossed_below(&self, cwnd_bytes: u64, from: Instant, to: Instant) -> Instant {
        let mut expiries = [Instant::MAX; BINS];
        for (e, b) in expiries.iter_mut().zip(self.bins.iter()) {
            if let Some(b) = b {
                *e = b.start.saturating_add(self.period);
            }
        }
        expiries.sort_unstable();
        expiries
            .into_iter()
            .filter(|&t| t > from && t <= to)
            .find(|&t| self.value(t).is_some_and(|p| 2 * p < cwnd_bytes))
            .unwrap_or(to)
    }
}

/// A pipeACK sample in progress (spec C2): `snd_una` (as cumulative bytes ACKed) when
/// it started, and the `snd_nxt` (cumulative new bytes sent) that ends it.
#[derive(Clone, Copy, Debug)]
struct Round {
    high_ack0: u64,
    marker: u64,
    /// Started after the first flight was acknowledged: its sample is kept.
    counts: bool,
}

/// A §4.4.1 response in progress (one loss or ECN episode while non-validated).
#[derive(Clone, Copy, Debug)]
struct Episode {
    /// max(pipeACK, LossFlightSize), bytes.
    d_bytes: u64,
    /// R: bytes retransmitted during the episode (spec C7).
    retrans_bytes: u64,
    /// ECN episodes take R = 0 (spec C6).
    count_r: bool,
}

/// What the layer reports through the connection (`TcpInfo::cc_diag`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct NewCwvDiagnostics {
    /// Validated phase (§4.3).
    pub validated: bool,
    /// pipeACK at the last evaluation, bytes; `None` while undefined.
    pub pipeack_bytes: Option<u64>,
    /// pipeACK samples taken.
    pub samples: u64,
    /// §4.4.3 reductions applied (one per NVP elapsed).
    pub nvp_reductions: u64,
    /// §4.4.1 responses started (losses or ECN while non-validated).
    pub loss_responses: u64,
    /// ACKs on which growth was withheld (non-validated, not cwnd-limited).
    pub growth_withheld: u64,
}

/// The new-CWV layer around a base controller.
#[derive(Debug)]
pub struct NewCwv {
    base: Box<dyn CongestionControl>,
    cfg: NewCwvConfig,
    /// Initial window for the §4.4.3 floor (spec C13): cwnd at `init`, segments.
    iw: u32,
    filter: PipeAckFilter,
    round: Option<Round>,
    /// Cumulative bytes sent when the first ACK arrived: the end of the first flight.
    first_flight_end: Option<u64>,
    /// Cumulative bytes ACKed (`snd_una` − ISS) and new bytes sent (`snd_nxt` − ISS).
    cum_acked: u64,
    cum_sent: u64,
    /// `Some(t)` while non-validated: when the phase began, advanced by one NVP per
    /// §4.4.3 reduction.
    nv_since: Option<Instant>,
    last_eval: Instant,
    /// Between EnterRecovery/EnterCwr and ExitRecovery: no sampling, no NVP.
    in_recovery: bool,
    episode: Option<Episode>,
    /// `prior_in_flight` of the latest ACK: LossFlightSize if that ACK starts recovery.
    prior_in_flight: u32,
    diag: NewCwvDiagnostics,
}

impl NewCwv {
    /// Wrap `base`. A zero NVP is replaced by the default; call
    /// [`NewCwvConfig::validate`] first to reject it instead.
    pub fn new(base: Box<dyn CongestionControl>, mut cfg: NewCwvConfig) -> Self {
        if cfg.validate().is_err() {
            cfg.nvp = DEFAULT_NVP;
        }
        NewCwv {
            base,
            cfg,
            iw: 1,
            filter: PipeAckFilter::default(),
            round: None,
            first_flight_end: None,
            cum_acked: 0,
            cum_sent: 0,
            nv_since: None,
            last_eval: Instant::ZERO,
            in_recovery: false,
            episode: None,
            prior_in_flight: 0,
            diag: NewCwvDiagnostics {
                validated: true,
                ..Default::default()
            },
        }
    }

    pub fn config(&self) -> &NewCwvConfig {
        &self.cfg
    }

    /// pipeACK at `now`, bytes (`None`: undefined).
    pub fn pipeack(&self, now: Instant) -> Option<u64> {
        self.filter.value(now)
    }

    /// Whether the last evaluation found the validated phase.
    pub fn is_validated(&self) -> bool {
        self.nv_since.is_none()
    }

    pub fn diag(&self) -> NewCwvDiagnostics {
        self.diag
    }

    /// §4.3 with spec C1/C4: non-validated iff `2·pipeACK < cwnd·MSS`; records when
    /// the phase began, back-dated to the bin expiry that caused it.
    fn evaluate(&mut self, cc: &CcState, now: Instant) {
        let now = now.max(self.last_eval);
        let pa = self.filter.value(now);
        let cwnd_bytes = cc.cwnd_bytes();
        let validated = pa.is_none_or(|p| 2 * p >= cwnd_bytes);
        if validated {
            self.nv_since = None;
        } else if self.nv_since.is_none() {
            self.nv_since = Some(self.filter.crossed_below(cwnd_bytes, self.last_eval, now));
        }
        self.last_eval = now;
        self.diag.validated = validated;
        self.diag.pipeack_bytes = pa;
    }

    /// §4.4.3 / §4.5.2 (spec C9): one reduction per whole NVP spent non-validated.
    fn apply_nvp(&mut self, cc: &mut CcState, now: Instant) {
        let Some(since) = self.nv_since else { return };
        let elapsed = now.saturating_duration_since(since);
        let nvp = self.cfg.nvp;
        let n = elapsed.as_nanos() / nvp.as_nanos();
        if n == 0 {
            return;
        }
        let n = u32::try_from(n).unwrap_or(u32::MAX);
        for _ in 0..n.min(64) {
            let cwnd = cc.cwnd;
            let three_quarters = u32::try_from(u64::from(cwnd) * 3 / 4).unwrap_or(u32::MAX);
            cc.ssthresh = cc.ssthresh.max(three_quarters);
            cc.cwnd = cwnd.min((cwnd / 2).max(self.iw)).max(1);
        }
        cc.cwnd_cnt = 0;
        self.nv_since = Some(since + nvp * n);
        self.diag.nvp_reductions += u64::from(n);
    }

    /// Spec C2: per-round sampling on the cumulative ACK point. A round starts only
    /// with data outstanding (after idle, at the first new segment sent). Rounds that
    /// start before the first flight is acknowledged are discarded (spec C14, [D13]:
    /// no sample in the first RTT, where the initial window rather than the path sets
    /// the volume).
    fn sample(&mut self, cc: &CcState, now: Instant) {
        match self.round {
            Some(r) if self.cum_acked >= r.marker => {
                if r.counts {
                    self.filter.push(now, self.cum_acked - r.high_ack0, cc.srtt);
                    self.diag.samples += 1;
                }
                self.round = None;
                self.start_round();
            }
            Some(_) => {}
            None => self.start_round(),
        }
    }

    fn start_round(&mut self) {
        if self.cum_sent > self.cum_acked {
            self.round = Some(Round {
                high_ack0: self.cum_acked,
                marker: self.cum_sent,
                counts: self.first_flight_end.is_some_and(|e| self.cum_acked >= e),
            });
        }
    }

    /// When the layer entered the non-validated phase (advanced by one NVP per
    /// §4.4.3 reduction); `None` while validated.
    pub fn non_validated_since(&self) -> Option<Instant> {
        self.nv_since
    }

    /// pipeACK undefined and sampling restarted (§4.4.1 after recovery; spec C6 after
    /// an RTO): the validated phase until a new sample exists.
    fn reinit(&mut self) {
        self.filter.reset();
        self.round = None;
        self.nv_since = None;
        self.diag.validated = true;
        self.diag.pipeack_bytes = None;
    }

    /// §4.4.1 at the end of recovery: `cwnd = ssthresh = (max(pipeACK, LFS) − R)/2`.
    fn end_episode(&mut self, cc: &mut CcState) {
        let Some(ep) = self.episode.take() else {
            return;
        };
        let mss = u64::from(cc.mss.max(1));
        let r = if ep.count_r { ep.retrans_bytes } else { 0 };
        let cwnd = (ep.d_bytes.saturating_sub(r) / 2 / mss).max(1);
        let cwnd = u32::try_from(cwnd).unwrap_or(u32::MAX);
        cc.cwnd = cwnd;
        cc.ssthresh = cwnd;
        cc.cwnd_cnt = 0;
    }
}

impl super::layer::CcLayer for NewCwv {
    fn tag(&self) -> &'static str {
        TAG
    }

    fn inner(&self) -> &dyn CongestionControl {
        self.base.as_ref()
    }

    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.base.as_mut()
    }

    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        self.iw = cc.cwnd.max(1);
        self.last_eval = now;
        self.base.init(cc, now);
    }

    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.first_flight_end.get_or_insert(self.cum_sent);
        self.cum_acked += ack.acked_bytes;
        self.prior_in_flight = ack.prior_in_flight;
        if !self.in_recovery {
            self.sample(cc, ack.now);
            self.evaluate(cc, ack.now);
            self.apply_nvp(cc, ack.now);
        }
        self.base.on_ack(cc, ack);
    }

    /// §4.4: not cwnd-limited and non-validated: no growth. `cwnd_blocked` is the
    /// strict test (spec C5), not slow start's 2× allowance.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        if self.nv_since.is_some() && !cc.cwnd_blocked {
            self.diag.growth_withheld += 1;
            return;
        }
        self.base.cong_avoid(cc, ack);
        self.evaluate(cc, ack.now);
    }

    /// §4.4.1: a loss (spec C6: also a probe-repaired loss or ECN) while
    /// non-validated reduces to `max(pipeACK, LossFlightSize)/2`; otherwise, and for
    /// an RTO, the base answers. The base is asked either way, so its own state
    /// (CUBIC's W_max, epoch) sees the signal.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        let base = self.base.ssthresh(cc, now, cause);
        if cause == CongestionCause::Rto || cause == CongestionCause::Delay {
            return base;
        }
        if !self.in_recovery {
            self.evaluate(cc, now);
        }
        let Some(pa) = self.filter.value(now).filter(|_| self.nv_since.is_some()) else {
            return base;
        };
        let mss = u64::from(cc.mss.max(1));
        let lfs = if self.prior_in_flight > 0 {
            self.prior_in_flight
        } else {
            cc.in_flight
        };
        let d_bytes = pa.max(u64::from(lfs) * mss);
        self.episode = Some(Episode {
            d_bytes,
            retrans_bytes: 0,
            // A probe-repaired loss has no recovery period (the connection's
            // `ExitRecovery` follows its `EnterCwr` at once): R = 0, as for ECN.
            count_r: cause != CongestionCause::Ecn && cause != CongestionCause::ProbeLoss,
        });
        self.diag.loss_responses += 1;
        u32::try_from((d_bytes / 2 / mss).max(1)).unwrap_or(u32::MAX)
    }

    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        self.base.on_event(cc, now, ev);
        match ev {
            CcEvent::EnterRecovery | CcEvent::EnterCwr => {
                self.in_recovery = true;
                self.round = None;
            }
            CcEvent::ExitRecovery => {
                self.end_episode(cc);
                self.in_recovery = false;
                self.reinit();
            }
            CcEvent::Rto => {
                self.episode = None;
                self.in_recovery = false;
                self.reinit();
            }
            CcEvent::Undo => self.episode = None,
            _ => {}
        }
    }

    fn on_sent(&mut self, cc: &mut FlowCtx<'_>, info: &SentInfo) {
        if info.retransmit {
            if let Some(ep) = &mut self.episode {
                ep.retrans_bytes = ep.retrans_bytes.saturating_add(u64::from(info.bytes));
            }
        } else {
            self.cum_sent += u64::from(info.bytes);
            if !self.in_recovery {
                if self.round.is_none() {
                    self.start_round();
                }
                self.evaluate(cc, info.sent_at);
                self.apply_nvp(cc, info.sent_at);
            }
        }
        self.base.on_sent(cc, info);
    }

    /// The layer's own state; a base's diagnostics are shadowed.
    fn own_diagnostics(&self) -> Option<CcDiagnostics> {
        Some(CcDiagnostics::NewCwv(self.diag))
    }
}

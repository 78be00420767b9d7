//! Congestion control behind one trait, shaped like Linux's `tcp_congestion_ops` so that
//! controllers read side by side with `net/ipv4/tcp_cubic.c` and friends.
//!
//! Like Linux, the window is counted in **segments** (`CcState::cwnd`), with
//! `cwnd_cnt` for fractional growth. The connection owns a [`CcState`], refreshes its
//! read-only fields before each call, and hands it to the controller inside a
//! [`FlowCtx`] (which derefs to it): the controller moves `cwnd`/`ssthresh`, and
//! reaches the flow's identity and the state its host shares across flows (groups,
//! published statistics: `host.rs`) through the same context. Loss *detection* (RACK-TLP, RTO) and PRR live in `recovery/`;
//! controllers only see the resulting events, which keeps TLP-restart, RTO-restart and
//! RDB free to change detection without touching any controller.
//!
//! Controllers are `Box<dyn CongestionControl>` because wrappers (delay-correlation,
//! new-CWV, ABE) must wrap any base controller; one indirect call per ACK is noise next
//! to the rest of ACK processing.

pub mod abe;
pub mod bbr;
pub mod bbr3;
pub mod bic;
pub mod cdg;
pub mod copa;
pub mod coupled;
pub mod cubic;
pub mod dctcp;
pub mod delay_corr;
pub mod flow;
pub mod fse;
pub mod highspeed;
pub mod host;
pub mod htcp;
pub mod hybla;
pub mod illinois;
pub mod layer;
pub mod ledbat;
pub(crate) mod linux_ca;
pub mod lp;
pub mod lp_corrected;
pub mod new_cwv;
pub mod reno;
pub mod sbd;
pub mod scalable;
pub mod spec;
#[cfg(test)]
pub(crate) mod testmodel;
#[cfg(test)]
mod traces;
pub mod vegas;
pub mod veno;
pub mod westwood;
pub mod yeah;

pub use crate::rate::{RateSample, RateState};
pub use crate::sent::SentInfo;
pub use flow::FlowCc;
pub use host::{
    FlowCtx, FlowId, FlowStats, GroupId, GroupKey, GroupState, Grouping, HostCc, PathInfo,
};
pub use layer::CcLayer;
pub use spec::{
    BaseTuning, CcContext, CcFactory, CcSpec, LayerKind, LayerOrder, LayerSpec, StandardCcFactory,
};

use brisk_time::{Duration, Instant};
use std::fmt;

/// TCP variables a controller reads and (for `cwnd`, `ssthresh`, `cwnd_cnt`) writes.
#[derive(Clone, Debug, Default)]
pub struct CcState {
    /// Congestion window, segments.
    pub cwnd: u32,
    /// Slow-start threshold, segments (`u32::MAX` = infinite, as Linux's initial 0x7fffffff).
    pub ssthresh: u32,
    /// Linux `snd_cwnd_cnt`: ACKed segments counted towards the next +1 of cwnd.
    pub cwnd_cnt: u32,
    /// Upper bound on cwnd (Linux `snd_cwnd_clamp`), segments.
    pub cwnd_clamp: u32,
    /// Sender MSS in bytes (payload per full segment).
    pub mss: u32,
    /// Segments in flight right now (RFC 6675 pipe / Linux `tcp_packets_in_flight`).
    pub in_flight: u32,
    /// Smoothed RTT; zero before the first sample.
    pub srtt: Duration,
    /// Minimum RTT seen over the connection (or a windowed filter); zero before the first sample.
    pub min_rtt: Duration,
    /// Total segments delivered (cumulatively or selectively ACKed) so far.
    pub delivered: u64,
    /// Whether the last send attempt was limited by cwnd (Linux `is_cwnd_limited`).
    pub cwnd_limited: bool,
    /// True while the sender has less data than cwnd allows (RFC 7661 / Linux app_limited).
    pub app_limited: bool,
    /// Whether, in this round, a send was held back because FlightSize ≥ cwnd (Linux
    /// `tp->is_cwnd_limited`): `cwnd_limited` without slow start's 2× allowance, the
    /// cwnd-limited detector RFC 7661 §4.5.3 asks for.
    pub cwnd_blocked: bool,
    /// SND.UNA and SND.NXT as absolute sequence offsets (never wrap), for controllers
    /// that count rounds as Linux does with `after(ack, ca->rtt_seq)` (CDG, DCTCP).
    pub snd_una: u64,
    pub snd_nxt: u64,
    /// Segments SACKed and not yet cumulatively ACKed (Linux `tp->sacked_out`).
    pub sacked_out: u32,
    /// Set by a controller in `cong_avoid` to start a window reduction of its own
    /// (Linux's controllers call `tcp_enter_cwr` there, as CDG's backoff does). The
    /// connection clears it, enters CWR with [`CongestionCause::Delay`] unless a
    /// reduction is already under way, and PRR then brings cwnd down to the new
    /// ssthresh over one window.
    pub request_cwr: bool,
    /// The delivery-rate sampler's connection state (`crate::rate`, Linux
    /// `tcp_rate.c`), kept only for controllers whose [`CcNeeds::rate_samples`] is set.
    pub rate: RateState,
    /// Linux `tcp_wstamp_ns`: the earliest departure time of the next paced segment
    /// (BBR's `bbr_packets_in_net_at_edt`); only kept while pacing is on.
    pub pacing_edt: Instant,
    /// ECN was negotiated (Linux `tp->ecn_flags & TCP_ECN_OK`); refreshed with the
    /// rate sample, so only for controllers with [`CcNeeds::rate_samples`] (BBR v3's
    /// `bbr_can_use_ecn`).
    pub ecn_ok: bool,
}

impl CcState {
    pub fn new(initial_cwnd: u32, mss: u32) -> Self {
        CcState {
            cwnd: initial_cwnd,
            ssthresh: u32::MAX,
            cwnd_cnt: 0,
            cwnd_clamp: 1 << 20,
            mss,
            ..Default::default()
        }
    }
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }
    pub fn cwnd_bytes(&self) -> u64 {
        u64::from(self.cwnd) * u64::from(self.mss)
    }
}

/// What one ACK told the sender.
#[derive(Clone, Copy, Debug, Default)]
pub struct AckSample {
    pub now: Instant,
    /// Segments newly ACKed cumulatively or selectively by this ACK.
    pub acked_segs: u32,
    /// Bytes newly ACKed cumulatively by this ACK.
    pub acked_bytes: u64,
    /// RTT sample from this ACK, if Karn's rule allows one (RFC 6298 §3 / RFC 7323 §4).
    pub rtt: Option<Duration>,
    /// Send-time state of the most recently sent segment this ACK covers, if any.
    pub newest_acked: Option<SentInfo>,
    /// Segments in flight before this ACK was processed.
    pub prior_in_flight: u32,
    /// The ACK carried ECE (RFC 3168 §6.1.2).
    pub ece: bool,
    /// The delivery-rate sample (`crate::rate`, Linux `struct rate_sample`): filled
    /// for controllers whose [`CcNeeds::rate_samples`] is set, and only in the call
    /// Linux makes after loss detection ([`CongestionControl::cong_control`]);
    /// elsewhere "no sample".
    pub rate: RateSample,
    /// The TCP timestamps this ACK carried (Linux `tp->rx_opt.rcv_tsval`/`rcv_tsecr`),
    /// filled only for controllers whose [`CcNeeds::timestamps`] is set, when
    /// timestamps were negotiated and the ACK echoes one (TSecr ≠ 0); else `None`.
    pub ts: Option<AckTimestamps>,
}

/// An ACK's TCP timestamps as a controller reads them (TCP-LP's one-way delay, Linux
/// `tcp_lp.c`): all three on 32-bit wrapping clocks.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckTimestamps {
    /// The peer's TSval: its timestamp clock plus its own random offset.
    pub tsval: u32,
    /// TSecr with this side's offset removed (Linux subtracts `tp->tsoffset` from
    /// `rcv_tsecr` as it parses it): this side's clock when the echoed segment left.
    pub tsecr: u32,
    /// This side's timestamp clock now, without offset (Linux `tcp_time_stamp_ts`),
    /// in the same 1 ms units (`conn::ts_clock`, Linux `TCP_TS_HZ` 1000).
    pub now: u32,
}

/// What a controller needs of the connection beyond the plain contract, asked once
/// when the connection is built. All off by default: the plain send and ACK paths
/// pay one branch for each.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CcNeeds {
    /// Delivery-rate samples on every ACK (`crate::rate`, Linux `tcp_rate.c`).
    pub rate_samples: bool,
    /// The controller sets cwnd itself on every ACK, in recovery too, through
    /// [`CongestionControl::cong_control`] (Linux: the module has `cong_control`):
    /// no PRR, no cwnd = ssthresh at the end of a reduction, no restart after idle.
    pub cong_control: bool,
    /// Pace at [`CongestionControl::pacing_rate`] (Linux `SK_PACING_NEEDED`).
    pub pacing: bool,
    /// The ACK's TCP timestamps in [`AckSample::ts`] (TCP-LP reads the peer's
    /// clock, Linux `tcp_lp.c`).
    pub timestamps: bool,
}

/// Why the window is being reduced: passed to [`CongestionControl::ssthresh`], as
/// neqo's `CongestionTrigger` and quinn's `is_ecn` do, so a controller can answer
/// each signal differently (ABE's β_ecn ≠ β_loss, RFC 8511; RDB's inferred losses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum CongestionCause {
    /// Loss found by SACK/RACK or duplicate ACKs: fast recovery starts.
    Loss,
    /// A tail-loss probe repaired a loss (RFC 8985 §7.4.2): reduce as for a loss.
    ProbeLoss,
    /// The peer echoed a CE mark (ECE, RFC 3168 §6.1.2).
    Ecn,
    /// RDB inferred a loss its bundles hid (an ACK covered a bundle while segments it
    /// carried were unacknowledged): CWR, as for ECN, but a loss for controllers that
    /// tell the two apart (`crate::rdb`).
    BundleLoss,
    /// A retransmission timeout.
    Rto,
    /// A delay signal: a layer's (delay correlation hands the window back to its base
    /// and re-anchors the base's reference point), or a controller's own request for
    /// CWR through [`CcState::request_cwr`] (CDG's delay-gradient backoff).
    Delay,
}

/// Events other than ACKs, after Linux's `cwnd_event` and state changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CcEvent {
    /// Fast recovery starts (loss detected by SACK/RACK). `ssthresh()` was just called.
    EnterRecovery,
    /// A reduction ends (Linux `tcp_end_cwnd_reduction`: `CA_EVENT_COMPLETE_CWR`, then
    /// `tcp_set_ca_state(TCP_CA_Open)`): fast recovery or CWR reached its recovery
    /// point (also after an undone recovery), or at once after the `EnterCwr` of a
    /// loss a tail-loss probe repaired (Linux `tcp_process_tlp_ack`). Sent to
    /// `cong_control` controllers too, for the state change (Linux skips only the
    /// `COMPLETE_CWR` for them).
    ExitRecovery,
    /// A CWR reduction starts (`ssthresh()` was called; Linux `tcp_enter_cwr`): ECE
    /// outside recovery (RFC 3168), RDB's hidden loss, a controller's own request, or
    /// a loss a tail-loss probe repaired, which `ExitRecovery` ends at once.
    EnterCwr,
    /// Retransmission timeout: `ssthresh()` was called; the connection sets cwnd to 1
    /// (RFC 5681). The Loss state lasts until `ExitLoss`.
    Rto,
    /// An RTO or recovery was found spurious and undone (Linux
    /// `tcp_undo_cwnd_reduction`). No state change by itself: when the undo ends the
    /// episode, `ExitRecovery` or `ExitLoss` follows.
    Undo,
    /// Transmission restarts after an idle period (RFC 5681 §4.1 / Linux CA_EVENT_TX_START).
    TxStart { idle: Duration },
    /// The sender became application-limited.
    AppLimited,
    /// cwnd was restarted after an idle period longer than the RTO (Linux
    /// `CA_EVENT_CWND_RESTART` from `tcp_cwnd_restart`): delay history is stale.
    CwndRestart,
    /// The RTO episode ended: the Loss state returns to Open (Linux
    /// `tcp_set_ca_state(TCP_CA_Open)` from TCP_CA_Loss, in `tcp_process_loss` once
    /// SND.UNA reaches the recovery point, after `tcp_try_undo_recovery`, or in
    /// `tcp_try_undo_loss` when the timeout proved spurious; an `Undo` comes first
    /// then). No `CA_EVENT_COMPLETE_CWR`: Linux calls `tcp_end_cwnd_reduction` only for
    /// CWR and fast recovery.
    ExitLoss,
}

/// A congestion controller. Only `name`, `ssthresh` and `cong_avoid` are required.
///
/// Who writes cwnd: a controller moves `cc.cwnd` only inside `cong_avoid` (growth
/// outside reductions, as Linux's `cong_avoid` does) and returns values from
/// `ssthresh`/`undo_cwnd`; every other change of cwnd (PRR, RTO, undo, idle restart,
/// the clamp) is made by the connection's congestion part (`conn/congestion.rs`).
/// One exception: the new-CWV layer (`new_cwv.rs`) sets cwnd and ssthresh in its
/// `on_event(ExitRecovery)`, after the connection's own exit value, because RFC 7661
/// §4.4.1 prescribes the window at the end of recovery; the connection re-clamps it.
/// Another: LISA (`coupled/lisa.rs`, an option of the coupled controllers) sets a
/// joining subflow's initial window in `init` and applies a donor's credit in `on_ack`,
/// because seed 004's Algorithm 1 runs before the new subflow's first send.
/// A third: the FSE layer (`fse/tcp.rs`) sets ssthresh to the flow's share of its
/// group's shared threshold in `init` and `cong_avoid`, where it also sets cwnd to
/// the assigned share: the FSE "sends FSE_R(i) to flow i" (draft §5.3 step c).
/// A fourth: TCP-LP (`lp.rs`) halves cwnd or sets it to 1 in `on_ack`, as Linux's
/// `tcp_lp_pkts_acked` does; and YeAH (`yeah.rs`) sets ssthresh with cwnd in
/// `cong_avoid` (its precautionary decongestion, as `tcp_yeah_cong_avoid`).
/// Linux's Westwood+ (`westwood.rs`) sets cwnd and ssthresh to BWE·RTTmin in
/// `on_event(ExitRecovery)` (its `CA_EVENT_COMPLETE_CWR`), and Hybla (`hybla.rs`)
/// sets the initial window (rho) and the clamp (65535) in `init`, as their Linux
/// modules do in those hooks.
pub trait CongestionControl: fmt::Debug + Send {
    /// Short name of this controller alone, e.g. "cubic" (a layer: its tag, "dc").
    fn name(&self) -> &'static str;

    /// The full name used in stats and output: a base's `name`, and for layers the
    /// inner label plus "+tag" ("cubic+dc"). Computed once per connection.
    fn label(&self) -> String {
        self.name().to_string()
    }

    /// Called once when the connection is established (Linux `init`).
    fn init(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant) {}

    /// Every ACK that acknowledges new data, before `cong_avoid` (Linux `pkts_acked`).
    fn on_ack(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {}

    /// Window growth outside recovery (Linux `cong_avoid`). Not called while in recovery,
    /// CWR or after an RTO until snd_una advances past the recovery point.
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample);

    /// The new slow-start threshold on a congestion signal (Linux `ssthresh`), segments.
    /// `cause` says which signal; the connection applies the result (and never lets it
    /// below 2) through its one reduction path.
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32;

    /// State changes and other events (Linux `cwnd_event` and `set_state`).
    fn on_event(&mut self, _cc: &mut FlowCtx<'_>, _now: Instant, _ev: CcEvent) {}

    /// A segment has just been sent (or retransmitted).
    fn on_sent(&mut self, _cc: &mut FlowCtx<'_>, _info: &SentInfo) {}

    /// The cwnd to restore on an undo (Linux `undo_cwnd`); default: the larger of cwnd and
    /// `prior_cwnd`.
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        cc.cwnd.max(prior_cwnd)
    }

    /// Pacing rate in bytes per second, when the controller wants pacing.
    fn pacing_rate(&self, _cc: &CcState) -> Option<u64> {
        None
    }

    /// What the controller needs beyond the plain contract (asked once).
    fn needs(&self) -> CcNeeds {
        CcNeeds::default()
    }

    /// Linux `cong_control`: with [`CcNeeds::cong_control`], called on every current
    /// ACK after loss detection and recovery entry, in place of PRR and `cong_avoid`,
    /// with the rate sample in `ack.rate`.
    fn cong_control(&mut self, _cc: &mut FlowCtx<'_>, _ack: &AckSample) {}

    /// Linux `min_tso_segs`: the fewest segments a paced burst may carry at
    /// `pacing_rate` bytes/s (Linux's `tcp_min_tso_segs` sysctl, 2, by default).
    fn min_tso_segs(&self, _pacing_rate: u64) -> u32 {
        2
    }

    /// The controller's internal decision state, for traces and `TcpInfo`; `None` for
    /// controllers with nothing beyond cwnd/ssthresh to report. Must be cheap: the
    /// connection calls it after every ACK while tracing is on.
    fn diagnostics(&self) -> Option<CcDiagnostics> {
        None
    }

    /// For traces: the diagnostics if they differ from `last`, which is updated to
    /// them; `None` if they are unchanged (or there are none). The connection calls
    /// it after every ACK while tracing is on. Default: [`diagnostics`] compared by
    /// value ([`changed_diagnostics`]); a controller whose diagnostics are boxed (BBR
    /// v3) compares in place and allocates only for a change.
    ///
    /// [`diagnostics`]: CongestionControl::diagnostics
    fn diagnostics_changed(&self, last: &mut Option<CcDiagnostics>) -> Option<CcDiagnostics> {
        changed_diagnostics(self.diagnostics()?, last)
    }
}

/// `d` if it differs from `last`, which becomes a copy of it; else `None`. The
/// default of [`CongestionControl::diagnostics_changed`] (no allocation for the
/// unboxed variants).
pub fn changed_diagnostics(
    d: CcDiagnostics,
    last: &mut Option<CcDiagnostics>,
) -> Option<CcDiagnostics> {
    if last.as_ref() == Some(&d) {
        return None;
    }
    *last = Some(d.clone());
    Some(d)
}

/// A controller's decision state, one variant per controller that reports any. Small
/// (56 bytes with its tag, so a `TraceEvent` stays within 64; the test
/// `trace_events_stay_small` holds it), so reading it needs no downcast of the boxed
/// controller and, but for BBR v3's, no allocation (BBR v3's traces allocate only
/// when its diagnostics change: `diagnostics_changed`). Serialised as
/// `{"kind": "delay_correlation", ...}`.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[non_exhaustive]
pub enum CcDiagnostics {
    /// The delay-correlation layer ([`delay_corr`]).
    DelayCorrelation(delay_corr::DelayCorrDiagnostics),
    /// The new-CWV layer ([`new_cwv`], RFC 7661).
    NewCwv(new_cwv::NewCwvDiagnostics),
    /// CAIA delay-gradient control ([`cdg`]).
    Cdg(cdg::CdgDiagnostics),
    /// DCTCP ([`dctcp`], RFC 8257).
    Dctcp(dctcp::DctcpDiagnostics),
    /// The coupled MPTCP controllers and LISA ([`coupled`]).
    Coupled(coupled::CoupledDiagnostics),
    /// The Flow State Exchange layer ([`fse::tcp`]).
    Fse(fse::tcp::FseDiagnostics),
    /// BBR v1 ([`bbr`], Linux `tcp_bbr.c`).
    Bbr(bbr::BbrDiagnostics),
    /// BBR v3 ([`bbr3`], google/bbr v3 `tcp_bbr.c`). Boxed: its 80 bytes (four rates,
    /// nine counters) would double every trace event's size; serialised as if inline.
    Bbr3(Box<bbr3::Bbr3Diagnostics>),
    /// Copa ([`copa`], NSDI 2018).
    Copa(copa::CopaDiagnostics),
}

/// Which controller to build. Parsed from config / scenario files.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CcAlgorithm {
    Reno,
    #[default]
    Cubic,
    /// CAIA delay-gradient (Hayes and Armitage 2011), as Linux `tcp_cdg.c`.
    Cdg,
    /// Data Center TCP (RFC 8257), as Linux `tcp_dctcp.c`; needs ECN.
    Dctcp,
    /// RFC 6356's coupled LIA for MPTCP subflows ([`coupled`]); Reno when alone.
    Lia,
    /// OLIA (Khalili et al. 2013, Linux `mptcp_olia.c`); Reno when alone.
    Olia,
    /// BALIA (Peng et al. 2016, Linux `mptcp_balia.c`); Reno when alone.
    Balia,
    /// LEDBAT (RFC 6817), less-than-best-effort ([`ledbat`]); no Linux module.
    Ledbat,
    /// Google's BBR v1, as Linux 6.18 `tcp_bbr.c` ([`bbr`]). Not the thesis's
    /// delay-correlation layer ([`delay_corr`]), which some seed texts call "BBR".
    Bbr,
    /// Scalable TCP (Kelly 2003), as Linux 6.18 `tcp_scalable.c` ([`scalable`]).
    Scalable,
    /// HighSpeed TCP (RFC 3649), as Linux 6.18 `tcp_highspeed.c` ([`highspeed`]).
    HighSpeed,
    /// TCP Veno (Fu and Liew 2003), as Linux 6.18 `tcp_veno.c` ([`veno`]).
    Veno,
    /// YeAH-TCP (Baiocchi et al. 2007), as Linux 6.18 `tcp_yeah.c` ([`yeah`]).
    Yeah,
    /// TCP-LP, low priority (Kuzmanovic and Knightly 2006), as Linux 6.18
    /// `tcp_lp.c` ([`lp`]), or corrected to yield on 1 ms timestamps
    /// ([`lp_corrected`], `BaseTuning::lp`); reads the peer's TCP timestamps.
    Lp,
    /// Google's BBR v3, as google/bbr's v3 branch `tcp_bbr.c` ([`bbr3`]): loss- and
    /// ECN-bounded model (bw_lo/hi, inflight_lo/hi), PROBE_BW's DOWN/CRUISE/REFILL/UP.
    Bbr3,
    /// Copa (Arun and Balakrishnan, NSDI 2018), default and competitive mode
    /// ([`copa`]); no Linux module.
    Copa,
    /// TCP Vegas, as Linux 6.18 `tcp_vegas.c` ([`vegas`]).
    Vegas,
    /// TCP Westwood+, as Linux 6.18 `tcp_westwood.c` ([`westwood`]).
    Westwood,
    /// TCP Hybla, as Linux 6.18 `tcp_hybla.c` ([`hybla`]).
    Hybla,
    /// TCP-Illinois, as Linux 6.18 `tcp_illinois.c` ([`illinois`]).
    Illinois,
    /// H-TCP, as Linux 6.18 `tcp_htcp.c` ([`htcp`]).
    Htcp,
    /// BIC TCP, as Linux 6.18 `tcp_bic.c` ([`bic`]).
    Bic,
}

impl CcAlgorithm {
    /// Every single-path base controller, in the order reports list them.
    pub const ALL: [CcAlgorithm; 4] = [
        CcAlgorithm::Reno,
        CcAlgorithm::Cubic,
        CcAlgorithm::Cdg,
        CcAlgorithm::Dctcp,
    ];

    /// The coupled controllers for MPTCP subflows ([`coupled`]).
    pub const COUPLED: [CcAlgorithm; 3] = [CcAlgorithm::Lia, CcAlgorithm::Olia, CcAlgorithm::Balia];

    /// The coupled increase this controller runs, if it is a coupled one.
    pub fn coupling(self) -> Option<coupled::Coupling> {
        match self {
            CcAlgorithm::Lia => Some(coupled::Coupling::Lia),
            CcAlgorithm::Olia => Some(coupled::Coupling::Olia),
            CcAlgorithm::Balia => Some(coupled::Coupling::Balia),
            _ => None,
        }
    }

    /// The controller with default tuning and seed 0; [`spec::StandardCcFactory`]
    /// builds with the spec's tuning and the connection's seed.
    pub fn build(self) -> Box<dyn CongestionControl> {
        self.build_with(&spec::BaseTuning::default(), 0)
    }

    /// The controller with `tuning` (CDG's and DCTCP's module parameters) and `seed`
    /// (CDG's probabilistic backoff: the only randomness a base controller draws);
    /// the coupled controllers read `tuning.coupled` (LISA).
    pub fn build_with(self, tuning: &spec::BaseTuning, seed: u64) -> Box<dyn CongestionControl> {
        match self {
            CcAlgorithm::Reno => Box::new(reno::Reno),
            CcAlgorithm::Cubic => Box::new(cubic::Cubic::default()),
            CcAlgorithm::Cdg => Box::new(cdg::Cdg::new(tuning.cdg.clone(), seed)),
            CcAlgorithm::Dctcp => Box::new(dctcp::Dctcp::new(tuning.dctcp.clone())),
            CcAlgorithm::Lia | CcAlgorithm::Olia | CcAlgorithm::Balia => {
                let kind = self.coupling().unwrap_or(coupled::Coupling::Lia);
                Box::new(coupled::Coupled::new(kind, tuning.coupled))
            }
            CcAlgorithm::Ledbat => Box::new(ledbat::Ledbat::default()),
            CcAlgorithm::Bbr => Box::new(bbr::Bbr::new(seed)),
            CcAlgorithm::Scalable => Box::new(scalable::Scalable),
            CcAlgorithm::HighSpeed => Box::new(highspeed::HighSpeed::default()),
            CcAlgorithm::Veno => Box::new(veno::Veno::default()),
            CcAlgorithm::Yeah => Box::new(yeah::Yeah::default()),
            CcAlgorithm::Lp => match tuning.lp {
                lp_corrected::LpVariant::Linux => Box::new(lp::Lp::default()),
                lp_corrected::LpVariant::Corrected => {
                    Box::new(lp_corrected::LpCorrected::default())
                }
            },
            CcAlgorithm::Bbr3 => Box::new(bbr3::Bbr3::new(seed)),
            CcAlgorithm::Copa => Box::new(copa::Copa::new(tuning.copa)),
            CcAlgorithm::Vegas => Box::new(vegas::Vegas::new(tuning.vegas)),
            CcAlgorithm::Westwood => Box::new(westwood::Westwood::default()),
            CcAlgorithm::Hybla => Box::new(hybla::Hybla::new(tuning.hybla)),
            CcAlgorithm::Illinois => Box::new(illinois::Illinois::new(tuning.illinois)),
            CcAlgorithm::Htcp => Box::new(htcp::Htcp::new(tuning.htcp)),
            CcAlgorithm::Bic => Box::new(bic::Bic::new(tuning.bic)),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            CcAlgorithm::Reno => "reno",
            CcAlgorithm::Cubic => "cubic",
            CcAlgorithm::Cdg => "cdg",
            CcAlgorithm::Dctcp => "dctcp",
            CcAlgorithm::Lia => "lia",
            CcAlgorithm::Olia => "olia",
            CcAlgorithm::Balia => "balia",
            CcAlgorithm::Ledbat => "ledbat",
            CcAlgorithm::Bbr => "bbr",
            CcAlgorithm::Scalable => "scalable",
            CcAlgorithm::HighSpeed => "highspeed",
            CcAlgorithm::Veno => "veno",
            CcAlgorithm::Yeah => "yeah",
            CcAlgorithm::Lp => "lp",
            CcAlgorithm::Bbr3 => "bbr3",
            CcAlgorithm::Copa => "copa",
            CcAlgorithm::Vegas => "vegas",
            CcAlgorithm::Westwood => "westwood",
            CcAlgorithm::Hybla => "hybla",
            CcAlgorithm::Illinois => "illinois",
            CcAlgorithm::Htcp => "htcp",
            CcAlgorithm::Bic => "bic",
        }
    }
    /// Whether the receiver echoes every CE mark as it arrives (RFC 8257 §3.2) rather
    /// than latching ECE until CWR (RFC 3168 §6.1.3): Linux lets the receiver's
    /// controller choose: DCTCP does, and BBR v3 (`TCP_CONG_WANTS_CE_EVENTS`,
    /// `bbr_cwnd_event` calls `dctcp_ece_ack_update`).
    pub fn accurate_ce_echo(self) -> bool {
        self == CcAlgorithm::Dctcp || self == CcAlgorithm::Bbr3
    }
}

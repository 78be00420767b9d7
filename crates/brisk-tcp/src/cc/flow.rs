//! One connection's controller as the connection holds it: the built controller
//! (base plus layers), the flow's identity in its host, and the host's state while the
//! endpoint lends it (`host.rs`). The connection calls the same hook names with its
//! `CcState` as before; `FlowCc` builds the [`FlowCtx`] each hook receives.

use super::host::{FlowCtx, FlowId, HostCc};
use super::{AckSample, CcDiagnostics, CcEvent, CcState, CongestionCause, CongestionControl};
use crate::sent::SentInfo;
use brisk_time::Instant;

#[derive(Debug)]
pub struct FlowCc {
    ctrl: Box<dyn CongestionControl>,
    flow: Option<FlowId>,
    /// The host's state, present only during a connection call (`HostHome::lend_to`).
    pub(super) lent: Option<Box<HostCc>>,
}

impl FlowCc {
    /// `ctrl` for the flow `flow` of its host (`None`: a controller outside any host).
    pub fn new(ctrl: Box<dyn CongestionControl>, flow: Option<FlowId>) -> Self {
        FlowCc {
            ctrl,
            flow,
            lent: None,
        }
    }

    pub fn flow(&self) -> Option<FlowId> {
        self.flow
    }

    /// Passes the lent host state between two controllers of one connection: the
    /// endpoint lends it to an MPTCP connection's first subflow (`lend_cc`), and the
    /// connection hands it to the subflow it calls into for that call, so coupled
    /// siblings (LIA/OLIA/BALIA, LISA) see one another. A swap: calling it again gives
    /// it back; neither side drops anything.
    #[inline]
    pub(crate) fn swap_lent(&mut self, other: &mut FlowCc) {
        std::mem::swap(&mut self.lent, &mut other.lent);
    }

    /// The controller itself.
    pub fn controller(&self) -> &dyn CongestionControl {
        self.ctrl.as_ref()
    }

    pub fn label(&self) -> String {
        self.ctrl.label()
    }

    #[inline]
    fn split<'a>(
        &'a mut self,
        vars: &'a mut CcState,
    ) -> (&'a mut dyn CongestionControl, FlowCtx<'a>) {
        (
            self.ctrl.as_mut(),
            FlowCtx::new(vars, self.flow, self.lent.as_deref_mut()),
        )
    }

    /// RFC 8382's OWD feed (`sbd/host.rs`): an ACK that newly acknowledged
    /// `delivered` segments, with its timestamps, for the host's detector if the host
    /// runs one. One `None` test otherwise.
    #[inline]
    pub fn on_owd(
        &mut self,
        now: Instant,
        tsval: u32,
        tsecr: u32,
        delivered: u32,
        lost_total: u64,
    ) {
        let (Some(flow), Some(host)) = (self.flow, self.lent.as_deref_mut()) else {
            return;
        };
        host.sbd_on_ack(flow, now, tsval, tsecr, delivered, lost_total);
    }

    #[inline]
    pub fn init(&mut self, vars: &mut CcState, now: Instant) {
        let (c, mut cx) = self.split(vars);
        c.init(&mut cx, now);
    }
    #[inline]
    pub fn on_ack(&mut self, vars: &mut CcState, ack: &AckSample) {
        let (c, mut cx) = self.split(vars);
        c.on_ack(&mut cx, ack);
    }
    #[inline]
    pub fn cong_avoid(&mut self, vars: &mut CcState, ack: &AckSample) {
        let (c, mut cx) = self.split(vars);
        c.cong_avoid(&mut cx, ack);
    }
    #[inline]
    pub fn ssthresh(&mut self, vars: &mut CcState, now: Instant, cause: CongestionCause) -> u32 {
        let (c, mut cx) = self.split(vars);
        c.ssthresh(&mut cx, now, cause)
    }
    #[inline]
    pub fn on_event(&mut self, vars: &mut CcState, now: Instant, ev: CcEvent) {
        let (c, mut cx) = self.split(vars);
        c.on_event(&mut cx, now, ev);
    }
    #[inline]
    pub fn on_sent(&mut self, vars: &mut CcState, info: &SentInfo) {
        let (c, mut cx) = self.split(vars);
        c.on_sent(&mut cx, info);
    }
    #[inline]
    pub fn undo_cwnd(&mut self, vars: &mut CcState, prior_cwnd: u32) -> u32 {
        let (c, mut cx) = self.split(vars);
        c.undo_cwnd(&mut cx, prior_cwnd)
    }
    #[inline]
    pub fn cong_control(&mut self, vars: &mut CcState, ack: &AckSample) {
        let (c, mut cx) = self.split(vars);
        c.cong_control(&mut cx, ack);
    }
    pub fn needs(&self) -> super::CcNeeds {
        self.ctrl.needs()
    }
    pub fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        self.ctrl.min_tso_segs(pacing_rate)
    }
    pub fn pacing_rate(&self, vars: &CcState) -> Option<u64> {
        self.ctrl.pacing_rate(vars)
    }
    pub fn diagnostics(&self) -> Option<CcDiagnostics> {
        self.ctrl.diagnostics()
    }
    /// [`CongestionControl::diagnostics_changed`]: for traces, per ACK.
    #[inline]
    pub fn diagnostics_changed(&self, last: &mut Option<CcDiagnostics>) -> Option<CcDiagnostics> {
        self.ctrl.diagnostics_changed(last)
    }
}

//! Controllers that wrap another one: delay correlation today; new-CWV (RFC 7661) and
//! ABE (RFC 8511) next. A layer implements [`CcLayer`]: it names its inner controller
//! and overrides only the hooks it changes; every other hook forwards to the inner
//! controller by default. The blanket impl below makes any layer a
//! [`CongestionControl`], so layers stack (`cubic` + `dc` + `cwv`) and the connection
//! never knows how many there are.
//!
//! Linux has no such composition (a `tcp_congestion_ops` is one module); this is the
//! shape the thesis's "layer around any controller" (Nowlan 2014 §3.4) asks for.

use super::{
    AckSample, CcDiagnostics, CcEvent, CcNeeds, CcState, CongestionCause, CongestionControl,
    FlowCtx,
};
use crate::sent::SentInfo;
use brisk_time::Instant;
use std::fmt;

/// A controller wrapping an inner one. Every hook defaults to the inner controller's.
pub trait CcLayer: fmt::Debug + Send {
    /// The layer's tag in composed labels: "dc" makes "cubic+dc".
    fn tag(&self) -> &'static str;

    fn inner(&self) -> &dyn CongestionControl;
    fn inner_mut(&mut self) -> &mut dyn CongestionControl;

    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        self.inner_mut().init(cc, now);
    }
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.inner_mut().on_ack(cc, ack);
    }
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.inner_mut().cong_avoid(cc, ack);
    }
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        self.inner_mut().ssthresh(cc, now, cause)
    }
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        self.inner_mut().on_event(cc, now, ev);
    }
    fn on_sent(&mut self, cc: &mut FlowCtx<'_>, info: &SentInfo) {
        self.inner_mut().on_sent(cc, info);
    }
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        self.inner_mut().undo_cwnd(cc, prior_cwnd)
    }
    fn pacing_rate(&self, cc: &CcState) -> Option<u64> {
        self.inner().pacing_rate(cc)
    }
    fn needs(&self) -> CcNeeds {
        self.inner().needs()
    }
    fn cong_control(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.inner_mut().cong_control(cc, ack);
    }
    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        self.inner().min_tso_segs(pacing_rate)
    }
    /// The layer's own decision state, reported in place of the inner controller's
    /// (delay correlation, new-CWV, the FSE); default `None`: the inner controller's
    /// diagnostics pass through.
    fn own_diagnostics(&self) -> Option<CcDiagnostics> {
        None
    }
}

impl<L: CcLayer> CongestionControl for L {
    fn name(&self) -> &'static str {
        self.tag()
    }
    fn label(&self) -> String {
        format!("{}+{}", self.inner().label(), self.tag())
    }
    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        CcLayer::init(self, cc, now);
    }
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        CcLayer::on_ack(self, cc, ack);
    }
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        CcLayer::cong_avoid(self, cc, ack);
    }
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        CcLayer::ssthresh(self, cc, now, cause)
    }
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        CcLayer::on_event(self, cc, now, ev);
    }
    fn on_sent(&mut self, cc: &mut FlowCtx<'_>, info: &SentInfo) {
        CcLayer::on_sent(self, cc, info);
    }
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        CcLayer::undo_cwnd(self, cc, prior_cwnd)
    }
    fn pacing_rate(&self, cc: &CcState) -> Option<u64> {
        CcLayer::pacing_rate(self, cc)
    }
    fn needs(&self) -> CcNeeds {
        CcLayer::needs(self)
    }
    fn cong_control(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        CcLayer::cong_control(self, cc, ack);
    }
    fn min_tso_segs(&self, pacing_rate: u64) -> u32 {
        CcLayer::min_tso_segs(self, pacing_rate)
    }
    fn diagnostics(&self) -> Option<CcDiagnostics> {
        CcLayer::own_diagnostics(self).or_else(|| self.inner().diagnostics())
    }
    /// A layer without diagnostics of its own lets the inner controller compare in
    /// place (BBR v3 under ABE allocates no more than alone).
    fn diagnostics_changed(&self, last: &mut Option<CcDiagnostics>) -> Option<CcDiagnostics> {
        match CcLayer::own_diagnostics(self) {
            Some(d) => super::changed_diagnostics(d, last),
            None => self.inner().diagnostics_changed(last),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cc::reno::Reno;

    /// A layer that overrides nothing: it must behave exactly as its inner controller.
    #[derive(Debug)]
    struct Pass(Box<dyn CongestionControl>);
    impl CcLayer for Pass {
        fn tag(&self) -> &'static str {
            "pass"
        }
        fn inner(&self) -> &dyn CongestionControl {
            self.0.as_ref()
        }
        fn inner_mut(&mut self) -> &mut dyn CongestionControl {
            self.0.as_mut()
        }
    }

    #[test]
    fn labels_compose_inside_out() {
        let two = Pass(Box::new(Pass(Box::new(Reno))));
        assert_eq!(two.label(), "reno+pass+pass");
        assert_eq!(CongestionControl::name(&two), "pass");
    }

    #[test]
    fn a_layer_overriding_nothing_is_its_inner_controller() {
        let mut plain = Reno;
        let mut layered = Pass(Box::new(Reno));
        let (mut a, mut b) = (CcState::new(10, 1448), CcState::new(10, 1448));
        a.cwnd_limited = true;
        b.cwnd_limited = true;
        for i in 0..200u32 {
            let ack = AckSample {
                acked_segs: 1 + i % 3,
                ..Default::default()
            };
            plain.cong_avoid(&mut FlowCtx::alone(&mut a), &ack);
            CongestionControl::cong_avoid(&mut layered, &mut FlowCtx::alone(&mut b), &ack);
            if i == 120 {
                a.ssthresh = plain.ssthresh(
                    &mut FlowCtx::alone(&mut a),
                    Instant::ZERO,
                    CongestionCause::Loss,
                );
                b.ssthresh = CongestionControl::ssthresh(
                    &mut layered,
                    &mut FlowCtx::alone(&mut b),
                    Instant::ZERO,
                    CongestionCause::Loss,
                );
                a.cwnd = a.ssthresh;
                b.cwnd = b.ssthresh;
            }
            assert_eq!(
                (a.cwnd, a.ssthresh, a.cwnd_cnt),
                (b.cwnd, b.ssthresh, b.cwnd_cnt)
            );
        }
    }
}

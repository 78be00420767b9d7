//! The controller's state events through real endpoints: every reduction the
//! connection starts is ended by an event, as Linux's `tcp_set_ca_state` moves
//! `icsk_ca_state` back to Open: fast recovery `EnterRecovery` → `ExitRecovery`
//! (`tcp_end_cwnd_reduction`), a tail-loss probe's repaired loss `EnterCwr` →
//! `ExitRecovery` at once (`tcp_process_tlp_ack`), an RTO episode `Rto` → `ExitLoss`
//! (`tcp_process_loss`, or `Undo` → `ExitLoss` when it was spurious,
//! `tcp_try_undo_loss`).

use super::harness::{Action, Pair, CLIENT_IP};
use crate::cc::spec::{CcContext, CcFactory, StandardCcFactory};
use crate::cc::{CcEvent, CcLayer, CcSpec, CongestionControl, FlowCtx};
use crate::config::Config;
use crate::endpoint::{Endpoint, EndpointConfig};
use crate::event::{RetransmitKind, TraceEvent};
use brisk_time::{Duration, Instant};
use std::sync::{Arc, Mutex};

type Log = Arc<Mutex<Vec<CcEvent>>>;

/// A layer that records the state events its base hears.
#[derive(Debug)]
struct Recorder {
    inner: Box<dyn CongestionControl>,
    log: Log,
}

impl CcLayer for Recorder {
    fn tag(&self) -> &'static str {
        "rec"
    }
    fn inner(&self) -> &dyn CongestionControl {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.inner.as_mut()
    }
    fn on_event(&mut self, cx: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        if !matches!(
            ev,
            CcEvent::TxStart { .. } | CcEvent::AppLimited | CcEvent::CwndRestart
        ) {
            self.log.lock().unwrap().push(ev);
        }
        self.inner.on_event(cx, now, ev);
    }
}

#[derive(Debug, Default)]
struct RecordingFactory {
    log: Log,
}

impl CcFactory for RecordingFactory {
    fn build(&self, spec: &CcSpec, ctx: CcContext<'_>) -> Box<dyn CongestionControl> {
        Box::new(Recorder {
            inner: StandardCcFactory.build(spec, ctx),
            log: self.log.clone(),
        })
    }
}

/// Sends `segs` full segments, then (once they arrived) `more`, from a client whose
/// controller is recorded, with `hook` deciding each data segment's fate by its index
/// among data segments. Returns the events and the client's trace once all data
/// arrived.
fn run(
    cfg: Config,
    segs: usize,
    more: usize,
    mut hook: impl FnMut(usize) -> Action + 'static,
) -> (Vec<CcEvent>, Vec<TraceEvent>) {
    let factory = Arc::new(RecordingFactory::default());
    let mut p = Pair::with_configs(Duration::from_millis(50), cfg.clone(), Config::default());
    p.client = Endpoint::new(
        CLIENT_IP,
        EndpointConfig {
            isn_secret: [1; 16],
            rng_seed: 1,
            cc_factory: factory.clone(),
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let mut n = 0;
    p.set_hook(move |x| {
        if !x.to_server || x.len == 0 {
            return Action::Deliver;
        }
        n += 1;
        hook(n - 1)
    });
    let mut got = Vec::new();
    let mut want = 0;
    for n in [segs, more].into_iter().filter(|&n| n > 0) {
        let data = vec![7u8; n * 1448];
        want += data.len();
        p.client.conn_mut(c).unwrap().write(&data);
        assert!(p.run_until(Duration::from_secs(20), |p| {
            Pair::read_all(&mut p.server, s, &mut got);
            got.len() == want
        }));
    }
    p.advance(Duration::from_secs(1));
    let mut trace = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut trace);
    let events = factory.log.lock().unwrap().clone();
    (events, trace)
}

fn retransmits(trace: &[TraceEvent], kind: RetransmitKind) -> usize {
    trace
        .iter()
        .filter(|e| matches!(e, TraceEvent::Retransmit { kind: k, .. } if *k == kind))
        .count()
}

#[test]
fn fast_recovery_is_entered_and_left() {
    // One segment of thirty lost: SACK/RACK recovery.
    let (ev, trace) = run(Config::default(), 30, 0, |i| {
        if i == 5 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    assert_eq!(ev, [CcEvent::EnterRecovery, CcEvent::ExitRecovery]);
    assert_eq!(retransmits(&trace, RetransmitKind::Rto), 0);
}

#[test]
fn a_probe_repaired_loss_is_a_cwr_ended_at_once() {
    // The last of ten segments lost: the tail-loss probe repairs it, and the ACK of
    // the next data (beyond the probe's episode) shows it was a loss (RFC 8985
    // §7.4.2, Linux `tcp_process_tlp_ack`).
    let (ev, trace) = run(Config::default(), 10, 1, |i| {
        if i == 9 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    assert_eq!(retransmits(&trace, RetransmitKind::Tlp), 1);
    assert_eq!(ev, [CcEvent::EnterCwr, CcEvent::ExitRecovery]);
}

#[test]
fn an_rto_episode_ends_with_exit_loss() {
    let mut cfg = Config::default();
    cfg.recovery.tlp = false;
    // The only segment's first transmission is lost: the RTO repairs it.
    let (ev, trace) = run(cfg, 1, 0, |i| {
        if i == 0 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    assert_eq!(retransmits(&trace, RetransmitKind::Rto), 1);
    assert_eq!(ev, [CcEvent::Rto, CcEvent::ExitLoss]);
}

/// The only segment's original delayed by `delay`, past the RTO; the timeout's
/// retransmission lost when `drop_rtx`.
fn late_original(
    timestamps: bool,
    delay: Duration,
    drop_rtx: bool,
) -> (Vec<CcEvent>, Vec<TraceEvent>) {
    let mut cfg = Config::default();
    cfg.recovery.tlp = false;
    cfg.options.timestamps = timestamps;
    run(cfg, 1, 0, move |i| match i {
        0 => Action::Delay(delay),
        1 if drop_rtx => Action::Drop,
        _ => Action::Deliver,
    })
}

#[test]
fn a_spurious_rto_is_undone_then_ends_with_exit_loss() {
    // RTO after 300 ms; the original's ACK arrives at 350 ms, echoing the original's
    // TSval: the timeout was spurious (Eifel, RFC 3522), undone, then Loss ends
    // (Linux `tcp_try_undo_loss`).
    let (ev, trace) = late_original(true, Duration::from_millis(250), true);
    assert_eq!(retransmits(&trace, RetransmitKind::Rto), 1);
    assert_eq!(ev, [CcEvent::Rto, CcEvent::Undo, CcEvent::ExitLoss]);
    // Without timestamps, and with the retransmission's ACK first: Loss ends at the
    // recovery point; the original arriving late is D-SACKed, which undoes the
    // episode in Open (Linux `tcp_try_undo_dsack`), no state change.
    let (ev, _) = late_original(false, Duration::from_millis(400), false);
    assert_eq!(ev, [CcEvent::Rto, CcEvent::ExitLoss, CcEvent::Undo]);
}

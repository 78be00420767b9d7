//! Undo of spurious congestion responses (RFC 2883/3708 D-SACK, RFC 3522 Eifel,
//! RFC 5682 F-RTO; Linux `tcp_try_undo_*`), end to end through a `Pair`: a reordered
//! segment and delayed ACKs are undone, genuine losses are not.

use super::harness::*;
use super::transfer::{pattern, transfer};
use crate::config::Config;
use crate::endpoint::ConnHandle;
use crate::event::{RetransmitKind, TraceEvent, UndoKind};
use crate::stats::TcpInfo;
use brisk_time::{Duration, Instant};

fn config(timestamps: bool) -> Config {
    let mut c = Config::default();
    c.options.timestamps = timestamps;
    c
}

fn pair(timestamps: bool) -> (Pair, ConnHandle, ConnHandle) {
    let mut p = Pair::with_configs(
        Duration::from_millis(50),
        config(timestamps),
        config(timestamps),
    );
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    (p, c, s)
}

fn trace(p: &mut Pair, c: ConnHandle) -> Vec<TraceEvent> {
    let mut t = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut t);
    t
}

/// cwnd/ssthresh as last traced before the first event matching `pred` (the initial
/// window if none was traced: tracing starts after the handshake).
fn window_before(trace: &[TraceEvent], pred: impl Fn(&TraceEvent) -> bool) -> (u32, u32) {
    let end = trace.iter().position(pred).expect("event in trace");
    trace[..end]
        .iter()
        .rev()
        .find_map(|e| match *e {
            TraceEvent::Cwnd { cwnd, ssthresh, .. } => Some((cwnd, ssthresh)),
            _ => None,
        })
        .unwrap_or((Config::default().congestion.initial_cwnd, u32::MAX))
}

fn undos(trace: &[TraceEvent]) -> Vec<(UndoKind, u32, u32)> {
    trace
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::Undo {
                kind,
                cwnd,
                ssthresh,
                ..
            } => Some((kind, cwnd, ssthresh)),
            _ => None,
        })
        .collect()
}

fn recovery_entered(trace: &[TraceEvent]) -> bool {
    trace
        .iter()
        .any(|e| matches!(e, TraceEvent::Recovery { enter: true, .. }))
}

/// Twenty segments; the first is delayed by `extra` (`drop`: lost instead), long
/// enough for RACK to mark it lost and retransmit it.
fn first_segment_run(timestamps: bool, extra: Duration, drop: bool) -> (TcpInfo, Vec<TraceEvent>) {
    let (mut p, c, s) = pair(timestamps);
    let mut done = false;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 && !done {
            done = true;
            if drop {
                Action::Drop
            } else {
                Action::Delay(extra)
            }
        } else {
            Action::Deliver
        }
    });
    let data = pattern(20 * 1448, 31);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(10));
    assert!(got == data, "stream intact");
    p.advance(Duration::from_secs(1));
    let t = trace(&mut p, c);
    (p.client.conn(c).unwrap().info(), t)
}

#[test]
fn reordered_segment_fast_retransmit_is_undone_by_dsack() {
    // Without timestamps only the receiver's D-SACK of the needless retransmission
    // shows the recovery was spurious; it arrives after recovery already ended.
    let (info, t) = first_segment_run(false, Duration::from_millis(80), false);
    assert_eq!(info.retransmits, 1);
    assert!(recovery_entered(&t));
    assert_eq!(info.dsack_received, 1);
    let prior = window_before(&t, |e| {
        matches!(e, TraceEvent::Recovery { enter: true, .. })
    });
    let reduced = window_before(&t, |e| matches!(e, TraceEvent::Undo { .. }));
    assert!(
        reduced.1 < prior.1,
        "recovery reduced ssthresh: {reduced:?} vs {prior:?}"
    );
    let u = undos(&t);
    assert_eq!(u.len(), 1, "{u:?}");
    let (kind, cwnd, ssthresh) = u[0];
    assert_eq!(kind, UndoKind::Dsack);
    assert!(
        cwnd >= prior.0,
        "cwnd {cwnd} restored to at least {}",
        prior.0
    );
    assert_eq!(ssthresh, prior.1, "ssthresh restored");
    assert_eq!(
        (info.undo_count, info.dsack_undo, info.spurious_rto),
        (1, 1, 0)
    );
    assert_eq!(info.ssthresh, u32::MAX, "still in slow start");
}

#[test]
fn reordered_segment_fast_retransmit_is_undone_by_timestamps() {
    // With timestamps the ACK that closes the hole echoes the original's TSval, older
    // than the retransmission: Eifel undoes at the end of recovery, before the D-SACK.
    let (info, t) = first_segment_run(true, Duration::from_millis(80), false);
    assert_eq!(info.retransmits, 1);
    assert!(recovery_entered(&t));
    let prior = window_before(&t, |e| {
        matches!(e, TraceEvent::Recovery { enter: true, .. })
    });
    let u = undos(&t);
    assert_eq!(u.len(), 1, "{u:?}");
    let (kind, cwnd, ssthresh) = u[0];
    assert_eq!(kind, UndoKind::Recovery);
    assert!(
        cwnd >= prior.0,
        "cwnd {cwnd} restored to at least {}",
        prior.0
    );
    assert_eq!(ssthresh, prior.1);
    assert_eq!((info.undo_count, info.dsack_undo), (1, 0));
    assert_eq!(info.ssthresh, u32::MAX);
}

#[test]
fn genuinely_lost_segment_is_not_undone() {
    for timestamps in [true, false] {
        let (info, t) = first_segment_run(timestamps, Duration::ZERO, true);
        assert_eq!(info.retransmits, 1, "timestamps {timestamps}");
        assert!(recovery_entered(&t));
        assert!(
            undos(&t).is_empty(),
            "timestamps {timestamps}: {:?}",
            undos(&t)
        );
        assert_eq!(info.undo_count, 0);
        assert_eq!(info.dsack_received, 0);
        assert!(info.ssthresh < u32::MAX, "the reduction stands");
    }
}

/// Ten segments (the whole write); every packet the server sends in the 700 ms after
/// the write is delayed by `ack_delay` (`None`: instead, every data packet the client
/// sends in the first 400 ms is lost). The RTO (300 ms) fires in both cases.
fn rto_run(timestamps: bool, ack_delay: Option<Duration>) -> (TcpInfo, Vec<TraceEvent>) {
    let (mut p, c, s) = pair(timestamps);
    let start = p.now;
    let window = move |at: Instant, len| at - start < len;
    p.set_hook(move |x| match ack_delay {
        Some(d) if !x.to_server && window(x.at, Duration::from_millis(700)) => Action::Delay(d),
        None if x.to_server && x.len > 0 && window(x.at, Duration::from_millis(400)) => {
            Action::Drop
        }
        _ => Action::Deliver,
    });
    // More than the initial window, so that F-RTO has new data to send.
    let data = pattern(30 * 1448, 32);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(20));
    assert!(got == data, "stream intact");
    p.advance(Duration::from_secs(1));
    let t = trace(&mut p, c);
    (p.client.conn(c).unwrap().info(), t)
}

fn rto_retransmitted(t: &[TraceEvent]) -> bool {
    t.iter().any(|e| {
        matches!(
            e,
            TraceEvent::Retransmit {
                kind: RetransmitKind::Rto,
                ..
            }
        )
    })
}

#[test]
fn spurious_rto_from_delayed_acks_is_undone_by_timestamps() {
    let (info, t) = rto_run(true, Some(Duration::from_secs(1)));
    assert_eq!(info.rto_count, 1);
    assert!(rto_retransmitted(&t));
    let prior = window_before(&t, |e| matches!(e, TraceEvent::Rto { .. }));
    let u = undos(&t);
    assert_eq!(u.len(), 1, "{u:?}");
    let (kind, cwnd, ssthresh) = u[0];
    assert_eq!(
        kind,
        UndoKind::Loss,
        "the first late ACK echoes a pre-RTO TSval"
    );
    assert!(cwnd >= prior.0, "cwnd {cwnd} vs {}", prior.0);
    assert_eq!(ssthresh, prior.1);
    assert_eq!((info.undo_count, info.spurious_rto), (1, 1));
    assert_eq!(info.ssthresh, u32::MAX);
}

#[test]
fn spurious_rto_from_delayed_acks_is_undone_by_f_rto_without_timestamps() {
    let (info, t) = rto_run(false, Some(Duration::from_secs(1)));
    assert_eq!(info.rto_count, 1);
    let prior = window_before(&t, |e| matches!(e, TraceEvent::Rto { .. }));
    let u = undos(&t);
    assert_eq!(u.len(), 1, "{u:?}");
    let (kind, cwnd, ssthresh) = u[0];
    assert_eq!(kind, UndoKind::Frto, "originals ACKed after the timeout");
    assert!(cwnd >= prior.0, "cwnd {cwnd} vs {}", prior.0);
    assert_eq!(ssthresh, prior.1);
    assert_eq!((info.undo_count, info.spurious_rto), (1, 1));
}

#[test]
fn rto_after_real_loss_is_not_undone() {
    for timestamps in [true, false] {
        let (info, t) = rto_run(timestamps, None);
        assert!(info.rto_count >= 1, "timestamps {timestamps}");
        assert!(rto_retransmitted(&t));
        assert!(
            undos(&t).is_empty(),
            "timestamps {timestamps}: {:?}",
            undos(&t)
        );
        assert_eq!((info.undo_count, info.spurious_rto), (0, 0));
        assert!(info.ssthresh < u32::MAX);
    }
}

#[test]
fn rto_for_data_delayed_beyond_it_is_undone_when_the_originals_are_dsacked() {
    // The first flight sits in a queue for a second; the RTO resends all of it. The
    // late originals reach the receiver after the retransmissions: with timestamps
    // PAWS drops them, without it they are plain duplicates; either way each is
    // D-SACKed (Linux `tcp_send_dupack`) and, all retransmissions D-SACKed, the
    // sender takes the reduction back.
    for timestamps in [true, false] {
        let cfg = {
            let mut c = config(timestamps);
            c.recovery.tlp = false;
            c
        };
        let mut p = Pair::with_configs(Duration::from_millis(50), cfg.clone(), cfg);
        let (c, s) = p.establish();
        p.client.conn_mut(c).unwrap().set_trace(true);
        let start = p.now;
        p.set_hook(move |x| {
            if x.to_server && x.len > 0 && x.at - start < Duration::from_millis(100) {
                Action::Delay(Duration::from_secs(1))
            } else {
                Action::Deliver
            }
        });
        let data = pattern(30 * 1448, 33);
        let got = transfer(&mut p, c, s, &data, Duration::from_secs(20));
        assert!(got == data);
        p.advance(Duration::from_secs(2));
        let t = trace(&mut p, c);
        let info = p.client.conn(c).unwrap().info();
        assert_eq!(info.rto_count, 1, "timestamps {timestamps}");
        assert!(info.retransmits > 1);
        assert_eq!(
            info.dsack_received, info.retransmits,
            "every original D-SACKed"
        );
        let prior = window_before(&t, |e| matches!(e, TraceEvent::Rto { .. }));
        let u = undos(&t);
        assert_eq!(u.len(), 1, "timestamps {timestamps}: {u:?}");
        assert_eq!(u[0].0, UndoKind::Dsack);
        assert!(u[0].1 >= prior.0);
        assert_eq!(info.ssthresh, prior.1);
        assert!(p.server.stats().drop_paws > 0 || !timestamps);
    }
}

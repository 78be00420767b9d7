//! RTO-restart (RFC 7765) and TLP-restart (RITE D1.3 App. A.1 §2.3) on the papers'
//! tail-loss case: a 10-segment flow whose last segments are lost on their first
//! transmission. Without restart the timer runs from the last ACK; with it, from the
//! earliest (RTOR) or last (TLPR) outstanding transmission, which saves about one RTT.

use crate::config::Config;
use crate::event::{RetransmitKind, TraceEvent};
use crate::testkit::*;
use brisk_time::{Duration, Instant};

const MSS: usize = 1448;

/// Sends 10 segments, drops the last `lost` on first transmission; returns the time
/// from the first lost segment's send to the first retransmission of any kind, and
/// that retransmission's kind.
fn tail(cfg: Config, lost: usize) -> (Duration, RetransmitKind) {
    let mut server = Config::default();
    server.ack.delayed = false; // quickACK receiver
    let mut p = Pair::with_configs(Duration::from_millis(25), cfg, server);
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let first_lost_index = 10 - lost;
    let mut data_seen = 0usize;
    let lost_at = std::rc::Rc::new(std::cell::Cell::new(None::<Instant>));
    let la = lost_at.clone();
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            let i = data_seen;
            data_seen += 1;
            if (first_lost_index..10).contains(&i) {
                if i == first_lost_index {
                    la.set(Some(x.at));
                }
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let data = pattern(10 * MSS, 5);
    assert_eq!(p.client.conn_mut(c).unwrap().write(&data), data.len());
    let mut got = Vec::new();
    let end = p.now + Duration::from_secs(10);
    while got.len() < data.len() && p.step_until(end) {
        Pair::read_all(&mut p.server, s, &mut got);
    }
    assert!(got == data, "stream intact");
    let mut t = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut t);
    let (at, kind) = t
        .iter()
        .find_map(|e| match *e {
            TraceEvent::Retransmit { at, kind, .. } => Some((at, kind)),
            _ => None,
        })
        .expect("a retransmission");
    (at - lost_at.get().expect("a lost segment"), kind)
}

fn cfg(tlp: bool, rto_restart: Option<u32>, tlp_restart: bool) -> Config {
    let mut c = Config::default();
    c.recovery.tlp = tlp;
    c.recovery.rto_restart = rto_restart;
    c.recovery.tlp_restart = tlp_restart;
    c
}

/// Returns what it measured, for the report.
pub fn rto_restart_retransmits_one_rtt_earlier_in_a_two_segment_tail() -> String {
    let (plain, k1) = tail(cfg(false, None, false), 2);
    let (rtor, k2) = tail(cfg(false, Some(4), false), 2);
    assert_eq!((k1, k2), (RetransmitKind::Rto, RetransmitKind::Rto));
    // The last ACK (for segment 8) arrives one RTT (50 ms) after segment 9 left, and
    // the plain RTO runs from there; RTOR runs from segment 9's transmission.
    let saved = plain - rtor;
    assert!(
        saved >= Duration::from_millis(45) && saved <= Duration::from_millis(55),
        "plain {plain:?} rtor {rtor:?}"
    );
    format!("2-segment tail, TLP off: RTO after {plain:?}, with RTOR after {rtor:?}")
}

pub fn rto_restart_stays_off_with_rrthresh_segments_outstanding() {
    // Five lost segments are ≥ rrthresh 4 outstanding: the standard restart applies.
    let (plain, _) = tail(cfg(false, None, false), 5);
    let (rtor, _) = tail(cfg(false, Some(4), false), 5);
    assert_eq!(plain, rtor);
}

/// Returns what it measured, for the report.
pub fn tlp_restart_probes_one_rtt_earlier() -> String {
    let (tlp, k1) = tail(cfg(true, None, false), 1);
    let (tlpr, k2) = tail(cfg(true, None, true), 1);
    assert_eq!((k1, k2), (RetransmitKind::Tlp, RetransmitKind::Tlp));
    let saved = tlp - tlpr;
    assert!(
        saved >= Duration::from_millis(20) && saved <= Duration::from_millis(55),
        "tlp {tlp:?} tlpr {tlpr:?}"
    );
    format!("1-segment tail: probe after {tlp:?}, with TLPR after {tlpr:?}")
}

/// A probe's SACK lets RACK repair the rest of the tail at once also when the last
/// segment carries the FIN (the receiver SACKs an out-of-order FIN with its data, as
/// Linux does). Before, the FIN-carrying segment never counted as SACKed and the 9th
/// segment waited for the RTO: 476 ms instead of 276 ms.
pub fn rack_repairs_the_tail_after_a_probe_also_when_the_fin_was_lost() {
    let mut times = Vec::new();
    for fin in [false, true] {
        let mut server = Config::default();
        server.ack.delayed = false;
        let mut p = Pair::with_configs(Duration::from_millis(25), Config::default(), server);
        let (c, s) = p.establish();
        p.client.conn_mut(c).unwrap().set_trace(true);
        let mut n = 0usize;
        p.set_hook(move |x| {
            if x.to_server && x.len > 0 {
                n += 1;
                if n == 9 || n == 10 {
                    return Action::Drop;
                }
            }
            Action::Deliver
        });
        let data = pattern(10 * MSS, 5);
        p.client.conn_mut(c).unwrap().write(&data);
        if fin {
            p.client.conn_mut(c).unwrap().shutdown_write();
        }
        let mut got = Vec::new();
        let end = p.now + Duration::from_secs(10);
        while got.len() < data.len() && p.step_until(end) {
            Pair::read_all(&mut p.server, s, &mut got);
        }
        assert!(got == data);
        let mut t = Vec::new();
        p.client.conn_mut(c).unwrap().drain_trace(&mut t);
        let kinds: Vec<(Instant, RetransmitKind)> = t
            .iter()
            .filter_map(|e| match *e {
                TraceEvent::Retransmit { at, kind, .. } => Some((at, kind)),
                _ => None,
            })
            .collect();
        assert_eq!(kinds.len(), 2, "fin={fin}: {kinds:?}");
        assert_eq!(kinds[0].1, RetransmitKind::Tlp);
        assert_eq!(kinds[1].1, RetransmitKind::Fast, "fin={fin}: {kinds:?}");
        times.push(kinds[1].0);
    }
    assert_eq!(times[0], times[1], "the FIN changes nothing");
}

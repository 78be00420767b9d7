//! RFC 5827 early retransmit as Linux 3.x ran it, for RFC 6675 recovery without RACK
//! (`recovery.early_retransmit`), and the 2013 draft's probe timeout
//! (`recovery.tlp_pto = Draft01`): the two pieces of the tail-loss paper's Linux 3.17
//! sender that brisk's RACK-TLP replaces.

use super::harness::*;
use super::transfer::pattern;
use crate::config::{Config, EarlyRetransmit};
use crate::event::{RetransmitKind, TraceEvent};
use crate::recovery::tlp::{pto, pto_draft01};
use brisk_time::{Duration, Instant};

const MSS: usize = 1448;

/// Three segments, the first lost on its first transmission (the receiver SACKs the
/// other two at once). Returns when, after the lost send, the first retransmission
/// went, and its kind.
fn three_segments_first_lost(er: EarlyRetransmit) -> (Duration, RetransmitKind) {
    let mut client = Config::default();
    client.recovery.rack = false;
    client.recovery.tlp = false;
    client.recovery.early_retransmit = er;
    let mut server = Config::default();
    server.ack.delayed = false;
    let mut p = Pair::with_configs(Duration::from_millis(25), client, server);
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let lost_at = std::rc::Rc::new(std::cell::Cell::new(None::<Instant>));
    let la = lost_at.clone();
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n == 1 {
                la.set(Some(x.at));
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let data = pattern(3 * MSS, 7);
    assert_eq!(p.client.conn_mut(c).unwrap().write(&data), data.len());
    let mut got = Vec::new();
    let end = p.now + Duration::from_secs(5);
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
    (at - lost_at.get().unwrap(), kind)
}

#[test]
fn early_retransmit_repairs_a_short_flight_without_three_dupacks() {
    let (off, k_off) = three_segments_first_lost(EarlyRetransmit::Off);
    let (now, k_now) = three_segments_first_lost(EarlyRetransmit::Immediate);
    let (delayed, k_delayed) = three_segments_first_lost(EarlyRetransmit::Delayed);
    eprintln!("first lost of 3: off {off:?} ({k_off:?}), ER {now:?}, delayed ER {delayed:?}");
    // Two SACKs can never make three duplicate ACKs: without ER only the RTO repairs.
    assert_eq!(k_off, RetransmitKind::Rto);
    assert!(off >= Duration::from_millis(250), "{off:?}");
    // ER: the first SACK (segment 2's, one RTT after the lost send) triggers recovery.
    assert_eq!(k_now, RetransmitKind::Fast);
    assert_eq!(now, Duration::from_millis(50));
    // Delayed ER: a quarter of SRTT (50 ms) later, 12.5 ms.
    assert_eq!(k_delayed, RetransmitKind::Fast);
    assert_eq!(delayed, Duration::from_micros(62_500));
}

#[test]
fn draft_pto_follows_equations_1_and_2() {
    let ms = Duration::from_millis;
    let wc = ms(200);
    // Eq. 1: more than one segment out: max(2·SRTT, 10 ms).
    assert_eq!(pto_draft01(ms(3), 2, wc, None), ms(10));
    assert_eq!(pto_draft01(ms(80), 2, wc, None), ms(160));
    // Eq. 2: one segment out: max(2·SRTT, 1.5·SRTT + 200 ms).
    assert_eq!(pto_draft01(ms(80), 1, wc, None), ms(320));
    assert_eq!(pto_draft01(ms(640), 1, wc, None), ms(1280));
    // Never later than the pending RTO.
    assert_eq!(pto_draft01(ms(80), 1, wc, Some(ms(250))), ms(250));
    // RFC 8985 differs: no 10-ms floor, and 2·SRTT + 200 ms with one segment out.
    assert_eq!(pto(ms(3), 2, wc, None), ms(6));
    assert_eq!(pto(ms(80), 1, wc, None), ms(360));
}

/// A whole flight of four lost, then the TLP probe (the last segment) SACKed: FACK
/// marks the head lost (4 SACKed-or-above > DupThresh), and after its ACK the other
/// two holes sit below the highest SACK with too few SACKs above them. Linux 3.x sends
/// them as forward retransmissions in recovery (RFC 6675 NextSeg rule 3); without
/// that, the sender waited for the RTO. Returns the retransmission kinds and the RTO
/// count.
fn whole_flight_lost_then_probe() -> (Vec<RetransmitKind>, u64) {
    let mut client = Config::default();
    client.recovery.rack = false;
    client.recovery.tlp = true;
    client.recovery.tlp_pto = crate::recovery::tlp::PtoFormula::Draft01;
    client.recovery.early_retransmit = EarlyRetransmit::Delayed;
    client.recovery.fack = true;
    let mut server = Config::default();
    server.ack.delayed = false;
    let mut p = Pair::with_configs(Duration::from_millis(40), client, server);
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n <= 4 {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let data = pattern(4 * MSS, 9);
    assert_eq!(p.client.conn_mut(c).unwrap().write(&data), data.len());
    let mut got = Vec::new();
    let end = p.now + Duration::from_secs(5);
    while got.len() < data.len() && p.step_until(end) {
        Pair::read_all(&mut p.server, s, &mut got);
    }
    assert!(got == data, "stream intact");
    let mut t = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut t);
    let kinds = t
        .iter()
        .filter_map(|e| match *e {
            TraceEvent::Retransmit { kind, .. } => Some(kind),
            _ => None,
        })
        .collect();
    (kinds, p.client.conn_mut(c).unwrap().info().rto_count)
}

#[test]
fn forward_retransmission_repairs_a_whole_lost_flight_after_the_probe() {
    let (kinds, rtos) = whole_flight_lost_then_probe();
    assert_eq!(rtos, 0, "no timeout: {kinds:?}");
    assert_eq!(
        kinds,
        vec![
            RetransmitKind::Tlp,
            RetransmitKind::Fast,
            RetransmitKind::Fast,
            RetransmitKind::Fast
        ],
        "the probe, the FACK-marked head, then the two holes below the SACK"
    );
}

use super::harness::*;
use super::transfer::pattern;
use crate::config::Config;
use crate::event::{ConnError, Event, RetransmitKind, TraceEvent};
use brisk_time::Duration;
use brisk_wire::parse_tcp_packet;
use std::cell::Cell;
use std::rc::Rc;

fn data_packets(p: &Pair, to_server: bool) -> Vec<Seen> {
    p.seen(to_server)
        .into_iter()
        .filter(|s| s.len > 0)
        .collect()
}

#[test]
fn rto_backs_off_doubling_clamps_and_gives_up() {
    let cfg = {
        let mut c = Config::default();
        c.recovery.tlp = false;
        c.recovery.max_retries = 5;
        c.recovery.max_rto = Duration::from_millis(1600);
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(50), cfg, Config::default());
    let (c, _s) = p.establish();
    p.set_hook(|s| {
        if s.to_server {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(b"x");
    p.advance(Duration::from_secs(30));
    let sends: Vec<_> = data_packets(&p, true).iter().map(|s| s.at).collect();
    assert_eq!(sends.len(), 6, "original + 5 retransmissions");
    let gaps: Vec<u64> = sends
        .windows(2)
        .map(|w| (w[1] - w[0]).as_millis() as u64)
        .collect();
    // Base RTO after a 100 ms handshake RTT: 100 + max(4*50, 200) = 300 ms.
    assert_eq!(gaps, vec![300, 600, 1200, 1600, 1600]);
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::TimedOut { retries: 5 })))));
}

#[test]
fn syn_retries_end_in_timeout() {
    let cfg = {
        let mut c = Config::default();
        c.timeouts.syn_retries = 2;
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), cfg, Config::default());
    p.set_hook(|_| Action::Drop);
    let c = p.connect();
    p.advance(Duration::from_secs(20));
    let syns: Vec<_> = p.seen(true).iter().map(|s| s.at.as_millis()).collect();
    assert_eq!(syns, vec![1, 1001, 3001]);
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::TimedOut { retries: 2 })))));
}

/// Three segments; the first is delayed by `extra`. With min_rtt 100 ms the RACK
/// reordering window is 25 ms (two SACKed segments: below DupThresh).
fn reorder_run(extra: Duration) -> (u64, u64) {
    let mut p = Pair::new(Duration::from_millis(50));
    let (c, s) = p.establish();
    p.set_hook(move |s| {
        if s.to_server && s.len > 0 && s.index == 2 {
            Action::Delay(extra)
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&pattern(3 * 1448, 5));
    p.advance(Duration::from_secs(2));
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got.len(), 3 * 1448);
    let info = p.client.conn(c).unwrap().info();
    (info.retransmits, info.rto_count)
}

#[test]
fn rack_does_not_mark_a_segment_reordered_within_min_rtt_over_4() {
    assert_eq!(reorder_run(Duration::from_millis(10)), (0, 0));
}

#[test]
fn rack_marks_a_segment_reordered_beyond_the_window_lost() {
    let (retx, rtos) = reorder_run(Duration::from_millis(60));
    assert_eq!(retx, 1);
    assert_eq!(rtos, 0);
}

#[test]
fn tlp_probes_at_two_srtt_and_recovers_tail_loss_without_rto() {
    let mut p = Pair::new(Duration::from_millis(50));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    // Lose the last two of ten segments.
    p.set_hook(|s| {
        if s.to_server && s.len > 0 && (s.index == 10 || s.index == 11) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = pattern(10 * 1448, 6);
    p.client.conn_mut(c).unwrap().write(&data);
    p.advance(Duration::from_secs(3));
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    let bad = got.iter().zip(&data).position(|(a, b)| a != b);
    assert!(
        got == data,
        "len {} vs {}, first mismatch {bad:?}",
        got.len(),
        data.len()
    );
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.rto_count, 0);
    assert_eq!(info.tlp_count, 1);
    let mut trace = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut trace);
    let probe_at = trace
        .iter()
        .find_map(|e| match e {
            TraceEvent::Retransmit {
                at,
                kind: RetransmitKind::Tlp,
                ..
            } => Some(*at),
            _ => None,
        })
        .expect("a TLP retransmission");
    // The last ACK (for 8 segments) reaches the client one latency after it was
    // emitted; the probe follows PTO = 2·SRTT = 200 ms later.
    let last_ack_emitted = p
        .seen(false)
        .iter()
        .filter(|s| s.at < probe_at)
        .map(|s| s.at)
        .max()
        .unwrap();
    let pto = (probe_at - (last_ack_emitted + Duration::from_millis(50))).as_millis();
    assert!((195..=215).contains(&pto), "PTO {pto} ms");
    // The second loss was repaired by a fast (RACK) retransmission after the probe.
    assert!(trace.iter().any(|e| matches!(
        e,
        TraceEvent::Retransmit {
            kind: RetransmitKind::Fast,
            ..
        }
    )));
}

#[test]
fn sack_blocks_report_most_recent_first() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, _s) = p.establish();
    // Drop data segments #1 and #3 (0-based); #2, #4, #5 arrive out of order.
    // Spread arrivals 1 ms apart so that each segment gets its own ACK.
    p.set_hook(|s| {
        if s.to_server && s.len > 0 && (s.index == 3 || s.index == 5) {
            Action::Drop
        } else if s.to_server && s.len > 0 {
            Action::Delay(Duration::from_millis(s.index as u64))
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&pattern(6 * 1448, 8));
    p.drive();
    let data = data_packets(&p, true);
    let base = data[0].seq;
    let acks: Vec<_> = p
        .log
        .iter()
        .filter(|(s, _)| !s.to_server)
        .map(|(_, b)| parse_tcp_packet(b).unwrap().1)
        .filter(|t| !t.sack.is_empty())
        .map(|t| {
            t.sack
                .as_slice()
                .iter()
                .map(|b| ((b.left - base) / 1448, (b.right - base) / 1448))
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(acks[0], vec![(2, 3)]);
    assert_eq!(acks[1], vec![(4, 5), (2, 3)]);
    assert_eq!(acks[2], vec![(4, 6), (2, 3)]);
}

#[test]
fn duplicate_segment_is_reported_with_dsack() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, _s) = p.establish();
    let dup_seq = Rc::new(Cell::new(None));
    let d2 = dup_seq.clone();
    p.set_hook(move |s| {
        if s.to_server && s.len > 0 && s.index == 3 {
            d2.set(Some((s.seq, s.len)));
            Action::Duplicate
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&pattern(3 * 1448, 9));
    p.drive();
    let (seq, len) = dup_seq.get().unwrap();
    let dsack = p
        .log
        .iter()
        .filter(|(s, _)| !s.to_server)
        .map(|(_, b)| parse_tcp_packet(b).unwrap().1)
        .find(|t| !t.sack.is_empty())
        .expect("an ACK with a SACK block");
    let first = dsack.sack.as_slice()[0];
    assert_eq!((first.left, first.right), (seq, seq + len as u32));
    assert!(dsack.ack >= first.right, "D-SACK block lies below the ACK");
    assert_eq!(p.client.conn(c).unwrap().info().dsack_received, 1);
}

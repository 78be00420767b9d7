//! A segment that starts below RCV.NXT but carries new bytes (what an RDB sender sends:
//! already-acknowledged bytes bundled in front of new data, issue 9 §1) is trimmed, its
//! new bytes delivered, and ACKed at once with a D-SACK for the duplicate prefix
//! (RFC 2883 §4.1, Linux `tcp_data_queue` → `tcp_dsack_set` + `tcp_send_ack`).

use super::harness::*;
use super::transfer::pattern;
use brisk_time::Duration;
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, IpRepr, Ipv4Repr, SeqNum, TcpRepr, IPPROTO_TCP,
};
use std::net::Ipv4Addr;

const MSS: usize = 1448;

#[test]
fn a_segment_overlapping_rcv_nxt_is_trimmed_delivered_and_acked_with_a_dsack() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    // The second data segment is lost: the receiver holds the first in order.
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n == 2 {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let data = pattern(2 * MSS, 4);
    p.client.conn_mut(c).unwrap().write(&data);
    // Both segments leave; the first arrives (10 ms); stop before the sender reacts.
    p.step_until(p.now + Duration::from_millis(12));
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, data[..MSS], "the first segment is in order");
    p.clear_hook();

    // An RDB-like segment: the last 748 bytes of segment 1 bundled before segment 2.
    let (_, first) = p
        .log
        .iter()
        .find(|(x, _)| x.to_server && x.len > 0)
        .map(|(x, b)| (*x, b.clone()))
        .expect("segment 1");
    let (_, real) = parse_tcp_packet(&first).unwrap();
    let start = MSS - 748;
    let payload = &data[start..];
    let seq = SeqNum(real.seq.0.wrapping_add(start as u32));
    let seg = TcpRepr {
        seq,
        payload,
        sack: Default::default(),
        ..real
    };
    let ip = IpRepr::V4(Ipv4Repr {
        src: Ipv4Addr::new(10, 0, 0, 1),
        dst: Ipv4Addr::new(10, 0, 0, 2),
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    });
    let mut bytes = Vec::new();
    emit_tcp_packet(&ip, &seg, &mut bytes);
    p.inject(true, bytes);
    let at = p.now + Duration::from_millis(10); // its arrival (the pair's latency)
    while p.now < at && p.step_until(at) {}
    assert_eq!(p.now, at);
    let acks_before = p
        .log
        .iter()
        .filter(|(x, _)| !x.to_server && x.at < at)
        .count();
    p.step_until(at);

    Pair::read_all(&mut p.server, s, &mut got);
    assert!(
        got == data,
        "the new bytes are delivered, the duplicate ones dropped"
    );
    // ACKed at once, cumulatively past the new bytes, with a D-SACK for the prefix.
    let acks = &p
        .log
        .iter()
        .filter(|(x, _)| !x.to_server)
        .collect::<Vec<_>>()[acks_before..];
    let (ack_seen, ack_bytes) = acks.first().expect("an ACK");
    assert_eq!(ack_seen.at, at, "the ACK is immediate");
    let (_, ack) = parse_tcp_packet(ack_bytes).unwrap();
    let end1 = SeqNum(real.seq.0.wrapping_add(MSS as u32));
    assert_eq!(ack.ack, SeqNum(real.seq.0.wrapping_add((2 * MSS) as u32)));
    let dsack = ack.sack.iter().next().expect("a D-SACK block");
    assert_eq!(
        (dsack.left, dsack.right),
        (seq, end1),
        "D-SACK = the duplicate prefix"
    );
}

use super::harness::*;
use crate::conn::State;
use crate::event::{ConnError, Event};
use brisk_time::Duration;
use brisk_wire::Flags;

#[test]
fn graceful_close_walks_both_sides_through_the_states() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    assert_eq!(p.client.conn(c).unwrap().state(), State::FinWait2);
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    assert!(p.server_has(Event::PeerClosed));
    p.server.conn_mut(s).unwrap().close();
    // The server's FIN is sent: LAST-ACK until the client ACKs it.
    assert_eq!(p.server.conn(s).unwrap().state(), State::LastAck);
    p.drive();
    assert!(p.server_events.contains(&(s, Event::Closed(Ok(())))));
    assert!(p.server.conn(s).is_none(), "reaped after Closed was polled");
    assert_eq!(p.client.conn(c).unwrap().state(), State::TimeWait);
    assert!(!p
        .client_events
        .iter()
        .any(|e| matches!(e.1, Event::Closed(_))));
    p.advance(Duration::from_secs(61));
    assert!(p.client_events.contains(&(c, Event::Closed(Ok(())))));
    let fins = p
        .log
        .iter()
        .filter(|(s, _)| s.flags.contains(Flags::FIN))
        .count();
    assert_eq!(fins, 2);
}

#[test]
fn simultaneous_close_goes_through_closing() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().close();
    p.server.conn_mut(s).unwrap().close();
    p.drive();
    // Both sent FIN before seeing the other's: CLOSING, then TIME-WAIT on both.
    assert_eq!(p.client.conn(c).unwrap().state(), State::TimeWait);
    assert_eq!(p.server.conn(s).unwrap().state(), State::TimeWait);
    p.advance(Duration::from_secs(61));
    assert!(p.client_has(Event::Closed(Ok(()))) && p.server_has(Event::Closed(Ok(()))));
}

/// The peer's FIN arrives while our close() is queued behind unsent data (cwnd-limited):
/// FIN-WAIT-1 → CLOSING with data and our FIN still to send. They must still go; a
/// first version sent nothing more from CLOSING and stalled with no timer armed (found
/// by tests/conn_memory.rs, which closes 200 connections at once).
#[test]
fn a_peer_fin_before_ours_is_sent_still_lets_the_data_and_our_fin_go() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let data: Vec<u8> = (0..300_000u32).map(|i| (i % 253) as u8).collect();
    assert_eq!(p.server.conn_mut(s).unwrap().write(&data), data.len());
    p.server.conn_mut(s).unwrap().close();
    p.client.conn_mut(c).unwrap().close();
    let mut got = Vec::new();
    let done = p.run_until(Duration::from_secs(30), |p| {
        Pair::read_all(&mut p.client, c, &mut got);
        got.len() == data.len()
            && p.server
                .conn(s)
                .is_none_or(|x| matches!(x.state(), State::TimeWait | State::Closed))
    });
    assert!(
        done,
        "server state {:?}",
        p.server.conn(s).map(|x| x.state())
    );
    assert_eq!(got, data);
    assert_eq!(p.server.conn(s).unwrap().state(), State::TimeWait);
}

#[test]
fn half_close_lets_the_peer_keep_sending() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().shutdown_write();
    p.drive();
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    let data: Vec<u8> = (0..50_000u32).map(|i| (i % 251) as u8).collect();
    assert_eq!(p.server.conn_mut(s).unwrap().write(&data), data.len());
    p.drive();
    let mut got = Vec::new();
    Pair::read_all(&mut p.client, c, &mut got);
    assert_eq!(got, data);
    assert_eq!(p.client.conn(c).unwrap().state(), State::FinWait2);
    p.server.conn_mut(s).unwrap().close();
    p.drive();
    assert_eq!(p.client.conn(c).unwrap().state(), State::TimeWait);
    assert!(p.server_has(Event::Closed(Ok(()))));
}

#[test]
fn abort_sends_rst_and_peer_reports_reset() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let client_sent = p.seen(true).len();
    p.server.conn_mut(s).unwrap().abort();
    p.drive();
    let rst = *p.seen(false).last().unwrap();
    assert!(rst.flags.contains(Flags::RST));
    let last_client = p.seen(true).last().copied().unwrap();
    assert_eq!(rst.seq, last_client.ack, "RST carries our SND.NXT");
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Aborted)))));
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::Reset)))));
    // Nothing answers the RST.
    assert_eq!(p.seen(true).len(), client_sent);
}

#[test]
fn segment_for_a_reaped_connection_gets_rst() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.server.conn_mut(s).unwrap().abort();
    p.set_hook(|seen| {
        if seen.flags.contains(Flags::RST) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    p.drive();
    // The client does not know; its data reaches no socket and is answered with RST.
    p.client.conn_mut(c).unwrap().write(b"hello");
    p.clear_hook();
    p.drive();
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::Reset)))));
    assert_eq!(p.server.stats().drop_no_socket, 1);
}

/// The fat-tree workload's "completed flows that end with a reset" (found in
/// scenarios/mp-fat-tree-ecmp.toml with `routing = "shortest"`, load 0.5: 15 of 400):
/// the client's ACK of the server's FIN is lost, the client's TIME-WAIT (short here,
/// 1 s in the simulator's workloads) ends before the server's RTO brings the FIN
/// again, and the client's endpoint answers that FIN with RST (no socket, RFC 9293
/// §3.10.7.1). The server is in LAST-ACK with every byte delivered: RFC 9293
/// §3.10.7.4 closes it without a reset signal, and Linux tells no application that
/// already closed. Before the fix the server reported `Closed(Err(Reset))`.
#[test]
fn rst_to_our_fin_after_the_peers_time_wait_ended_is_a_clean_close() {
    let mut client = crate::Config::default();
    client.timeouts.time_wait = Duration::from_millis(100);
    let mut p = Pair::with_configs(Duration::from_millis(10), client, crate::Config::default());
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().write(b"the whole flow");
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, b"the whole flow");
    assert!(p.server_has(Event::PeerClosed));
    // Drop the client's one ACK of the server's FIN.
    let (mut fin_sent, mut dropped) = (false, false);
    p.set_hook(move |seen| {
        if !seen.to_server && seen.flags.contains(Flags::FIN) {
            fin_sent = true;
        }
        if seen.to_server && fin_sent && !dropped && seen.flags == Flags::ACK && seen.len == 0 {
            dropped = true;
            return Action::Drop;
        }
        Action::Deliver
    });
    p.server.conn_mut(s).unwrap().close();
    assert_eq!(p.server.conn(s).unwrap().state(), State::LastAck);
    assert!(p.run_until(Duration::from_secs(10), |p| p.server.conn(s).is_none()));
    // The client's TIME-WAIT ended first; its endpoint answered the FIN with RST.
    assert!(p.client_events.contains(&(c, Event::Closed(Ok(())))));
    assert_eq!(p.client.stats().drop_no_socket, 1);
    let fins = p
        .seen(false)
        .iter()
        .filter(|x| x.flags.contains(Flags::FIN))
        .count();
    assert_eq!(fins, 2, "the FIN was retransmitted once");
    assert!(p.seen(true).last().unwrap().flags.contains(Flags::RST));
    assert!(
        p.server_events.contains(&(s, Event::Closed(Ok(())))),
        "{:?}",
        p.server_events
    );
}

/// An RST in LAST-ACK while data of ours is still unACKed: bytes may be lost, so the
/// application is told (`Err(Reset)`; Linux: ECONNRESET to a socket it still holds).
#[test]
fn rst_in_last_ack_with_data_unacked_is_still_a_reset() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    p.set_hook(|seen| {
        if seen.to_server {
            Action::Deliver
        } else {
            Action::Drop
        }
    });
    p.server
        .conn_mut(s)
        .unwrap()
        .write(b"reply that never arrives");
    p.server.conn_mut(s).unwrap().close();
    p.advance(Duration::from_millis(50));
    assert_eq!(p.server.conn(s).unwrap().state(), State::LastAck);
    // An RST at exactly RCV.NXT: one past the client's FIN.
    let fin = *p.seen(true).last().unwrap();
    assert!(fin.flags.contains(Flags::FIN));
    let rst = super::handshake::from_client(&p, Flags::RST, fin.len as i32 + 1, b"");
    p.inject(true, rst);
    p.drive();
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

// ----- issue 13 §1: bounded FIN-WAIT-2 and TIME-WAIT -----

const WEEK: Duration = Duration::from_secs(7 * 24 * 3600);
const FIN_TIMEOUT: Duration = Duration::from_secs(60);
const TWO_MSL: Duration = Duration::from_secs(60);

/// A segment from the server to the client, built from the server's last packet (its
/// numbers and options) with the sequence number moved by `seq_off`.
fn from_server(p: &Pair, flags: Flags, seq_off: i32) -> Vec<u8> {
    let bytes = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| !s.to_server)
        .map(|(_, b)| b.clone())
        .unwrap();
    let (_, t) = brisk_wire::parse_tcp_packet(&bytes).unwrap();
    let tcp = brisk_wire::TcpRepr {
        seq: brisk_wire::SeqNum(t.seq.0.wrapping_add(seq_off as u32)),
        flags,
        payload: &[],
        ..t
    };
    super::handshake::craft(SERVER_IP, CLIENT_IP, &tcp)
}

/// The attack: the peer ACKs our FIN and never sends its own (here it simply never
/// closes). After `close`, FIN-WAIT-2 lasts `fin_timeout` from the ACK of our FIN
/// (Linux `tcp_fin_timeout`), then the connection goes without a word; before this
/// fix it stayed forever with no timer armed.
#[test]
fn orphaned_fin_wait2_is_removed_after_fin_timeout_and_not_before() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    // The server's ACK of our FIN arrived at the client one latency before the
    // wire emptied.
    let acked_at = p.now;
    let conn = p.client.conn(c).unwrap();
    assert_eq!(conn.state(), State::FinWait2);
    assert_eq!(
        conn.timer_deadline(crate::conn::timer::Timer::FinWait2),
        Some(acked_at + FIN_TIMEOUT)
    );
    let sent_before = p.log.len();

    p.advance(FIN_TIMEOUT - Duration::from_millis(1));
    assert_eq!(p.client.conn(c).unwrap().state(), State::FinWait2);
    assert!(!p.client_has(Event::Closed(Ok(()))));

    let gone = p.run_until(WEEK, |p| p.client.conn(c).is_none());
    assert!(gone, "FIN-WAIT-2 still there after a week");
    assert_eq!(
        p.now,
        acked_at + FIN_TIMEOUT,
        "removed exactly at fin_timeout"
    );
    assert!(p.client_events.contains(&(c, Event::Closed(Ok(())))));
    assert_eq!(p.log.len(), sent_before, "expiry sends nothing (Linux)");

    // The rest of the week: nothing left on the client, nothing armed.
    p.advance(WEEK);
    assert_eq!(p.client.poll_timeout(), None);
    // Data arriving afterwards finds no connection and is answered with RST.
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    p.server.conn_mut(s).unwrap().write(b"late");
    p.drive();
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

/// `shutdown_write` alone keeps the socket the application's: Linux arms no
/// FIN-WAIT-2 timer for it, so neither does brisk, and the peer may keep sending.
#[test]
fn half_closed_fin_wait2_is_not_timed_out() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().shutdown_write();
    p.drive();
    assert_eq!(p.client.conn(c).unwrap().state(), State::FinWait2);
    assert_eq!(
        p.client
            .conn(c)
            .unwrap()
            .timer_deadline(crate::conn::timer::Timer::FinWait2),
        None
    );
    p.advance(WEEK);
    assert_eq!(p.client.conn(c).unwrap().state(), State::FinWait2);
    p.server.conn_mut(s).unwrap().write(b"still talking");
    p.drive();
    let mut got = Vec::new();
    Pair::read_all(&mut p.client, c, &mut got);
    assert_eq!(got, b"still talking");
    p.server.conn_mut(s).unwrap().close();
    p.drive();
    assert_eq!(p.client.conn(c).unwrap().state(), State::TimeWait);
}

/// `close` after a half-close already in FIN-WAIT-2 orphans the connection then
/// (Linux `tcp_close`): the timer runs from the `close`, not from the ACK.
#[test]
fn close_after_half_close_starts_the_fin_wait2_timer_at_close() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, _s) = p.establish();
    p.client.conn_mut(c).unwrap().shutdown_write();
    p.drive();
    p.advance(Duration::from_secs(3600));
    let closed_at = p.now;
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    assert_eq!(
        p.client
            .conn(c)
            .unwrap()
            .timer_deadline(crate::conn::timer::Timer::FinWait2),
        Some(closed_at + FIN_TIMEOUT)
    );
    assert!(p.run_until(WEEK, |p| p.client.conn(c).is_none()));
    assert_eq!(p.now, closed_at + FIN_TIMEOUT);
}

/// Both sides closed; the client is in TIME-WAIT. Returns its 2·MSL deadline. The
/// server's connection is gone, so its endpoint would answer the client's ACKs with
/// an RST that ends TIME-WAIT early (RFC 1337's assassination, kept as Linux's
/// default): packets to the server are dropped from here on, to watch the timer.
fn client_in_time_wait(p: &mut Pair) -> (crate::endpoint::ConnHandle, brisk_time::Instant) {
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    p.server.conn_mut(s).unwrap().close();
    p.drive();
    p.set_hook(|seen| {
        if seen.to_server {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let conn = p.client.conn(c).unwrap();
    assert_eq!(conn.state(), State::TimeWait);
    let deadline = conn
        .timer_deadline(crate::conn::timer::Timer::TimeWait)
        .unwrap();
    (c, deadline)
}

/// The attack: a blind FIN at a wrong sequence number every 50 s. Before this fix
/// every FIN restarted 2·MSL, so the entry lived as long as the packets came; now
/// TIME-WAIT ends 2·MSL after it began.
#[test]
fn blind_fins_do_not_extend_time_wait() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, deadline) = client_in_time_wait(&mut p);
    let mut rounds = 0;
    while p.client.conn(c).is_some() && rounds < 7 * 24 * 72 {
        for off in [1_000i32, -70_000, 1] {
            let fin = from_server(&p, Flags::FIN | Flags::ACK, off);
            p.inject(false, fin);
        }
        p.advance(Duration::from_secs(50));
        rounds += 1;
        if p.now < deadline {
            assert_eq!(p.client.conn(c).unwrap().state(), State::TimeWait);
            assert_eq!(
                p.client
                    .conn(c)
                    .unwrap()
                    .timer_deadline(crate::conn::timer::Timer::TimeWait),
                Some(deadline),
                "a blind FIN moved the deadline"
            );
        }
    }
    assert!(p.client.conn(c).is_none(), "TIME-WAIT pinned by blind FINs");
    assert_eq!(
        rounds, 2,
        "gone in the round that passed the 2·MSL deadline"
    );
    assert!(p.client_events.contains(&(c, Event::Closed(Ok(())))));
}

/// The peer's own FIN again (our ACK of it was lost) is re-ACKed and restarts 2·MSL
/// (RFC 9293 §3.10.7.4).
#[test]
fn retransmitted_fin_is_reacked_and_restarts_time_wait() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, deadline) = client_in_time_wait(&mut p);
    p.advance(Duration::from_secs(40));
    let acks_before = p.seen(true).len();
    let fin = from_server(&p, Flags::FIN | Flags::ACK, 0);
    p.inject(false, fin);
    p.drive();
    // The wire emptied when the FIN arrived (the re-ACK is dropped by the hook).
    let arrived = p.now;
    let reacks = &p.seen(true)[acks_before..];
    assert_eq!(reacks.len(), 1);
    assert_eq!(reacks[0].flags, Flags::ACK);
    let restarted = arrived + TWO_MSL;
    assert!(restarted > deadline);
    assert_eq!(
        p.client
            .conn(c)
            .unwrap()
            .timer_deadline(crate::conn::timer::Timer::TimeWait),
        Some(restarted)
    );
    assert!(p.run_until(WEEK, |p| p.client.conn(c).is_none()));
    assert_eq!(p.now, restarted);
}

/// Wrong-sequence segments in TIME-WAIT are answered with at most one duplicate ACK
/// per 500 ms (Linux `tcp_oow_rate_limited`), so a flood is not reflected.
#[test]
fn time_wait_dup_acks_are_rate_limited() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (_c, _) = client_in_time_wait(&mut p);
    let acks_before = p.seen(true).len();
    for i in 0..20 {
        let fin = from_server(&p, Flags::FIN | Flags::ACK, 5_000 + i);
        p.inject(false, fin);
    }
    p.drive();
    assert_eq!(p.seen(true).len() - acks_before, 1);
}

/// After the peer's FIN is taken, RCV.NXT is one past it. An old-looking segment whose
/// last byte sits on the FIN's sequence number (only a broken or hostile peer sends
/// one) is a duplicate to answer, not data: nothing becomes readable after the end
/// of the stream. (Before, the D-SACK path inserted that byte into the stream.)
#[test]
fn a_byte_on_the_peer_fins_number_is_not_data_after_the_end() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().write(b"abc");
    p.client.conn_mut(c).unwrap().close();
    p.drive();
    let mut buf = [0u8; 16];
    assert_eq!(p.server.conn_mut(s).unwrap().read(&mut buf), 3);
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    assert!(p.server_has(Event::PeerClosed));
    // The client's last segment carried the FIN (with or without the data): three
    // bytes ending on the FIN's number.
    let last = *p.seen(true).last().unwrap();
    assert!(last.flags.contains(Flags::FIN));
    let x = super::handshake::from_client(&p, Flags::ACK, last.len as i32 - 2, b"xyz");
    let acks_before = p.seen(false).len();
    p.inject(true, x);
    p.drive();
    let conn = p.server.conn_mut(s).unwrap();
    assert_eq!(
        conn.readable(),
        0,
        "a byte after the stream's end became readable"
    );
    assert_eq!(conn.read(&mut buf), 0);
    assert_eq!(conn.state(), State::CloseWait);
    // Answered with a duplicate ACK, as any unacceptable segment.
    assert!(p.seen(false).len() > acks_before);
}

/// The peer's FIN arrives ahead of a hole, then (a hostile or broken peer) data beyond
/// it, then the hole's bytes. The stream ends at the FIN: Linux takes the FIN when it
/// comes in order and `tcp_fin` purges what lies beyond. Before, the bytes past the
/// FIN joined the stream, RCV.NXT passed the FIN, which was then never taken: the
/// application read bytes after the end and never saw `PeerClosed`.
#[test]
fn data_beyond_an_out_of_order_fin_is_not_part_of_the_stream() {
    use super::handshake::from_client;
    let mut p = Pair::new(Duration::from_millis(10));
    let (_c, s) = p.establish();
    // Relative to the client's last packet (the handshake's ACK, at ISS + 1).
    p.inject(true, from_client(&p, Flags::FIN | Flags::ACK, 5, b"fghij"));
    p.inject(true, from_client(&p, Flags::ACK, 10, b"XYZ"));
    // A FIN at another number (after data past the first) moves nothing either.
    p.inject(true, from_client(&p, Flags::FIN | Flags::ACK, 13, b"!"));
    p.drive();
    assert_eq!(p.server.conn(s).unwrap().state(), State::Established);
    p.inject(true, from_client(&p, Flags::ACK, 0, b"abcde"));
    p.drive();
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, b"abcdefghij");
    assert!(p.server_has(Event::PeerClosed));
    assert_eq!(p.server.conn(s).unwrap().state(), State::CloseWait);
    // The FIN is ACKed: one past it.
    let last_ack = p.seen(false).last().unwrap().ack;
    let first = p.seen(true)[0].seq; // the SYN
    assert_eq!(last_ack.0.wrapping_sub(first.0), 1 + 10 + 1);
}

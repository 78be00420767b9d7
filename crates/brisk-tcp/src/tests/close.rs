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

//! Listener and table limits (RFC 4987 §3.1 SYN flooding; Linux's SYN/accept queue
//! overflow and `tcp_synack_retries`): a flood of SYNs from spoofed sources fills the
//! backlog and no more, further SYNs are dropped and counted, memory stays bounded,
//! half-open entries time out and free room for a real client, and the connection
//! table limit holds on both the passive and the active side.

use super::handshake::craft;
use super::harness::*;
use crate::config::Config;
use crate::endpoint::{Endpoint, EndpointConfig};
use crate::event::{ConnError, Event};
use crate::stats::EndpointStats;
use brisk_time::{Duration, Instant};
use brisk_wire::{Flags, SeqNum, TcpRepr, Timestamps, WindowScale};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const FLOOD_PORT: u16 = 8080;

/// A SYN from spoofed source number `i` (distinct address and port per `i`).
fn spoofed_syn(i: u32, port: u16) -> Vec<u8> {
    let src = IpAddr::V4(Ipv4Addr::from(0x0b00_0000 + i));
    let tcp = TcpRepr {
        src_port: 1024 + (i % 60_000) as u16,
        dst_port: port,
        seq: SeqNum(i.wrapping_mul(2_654_435_761)),
        flags: Flags::SYN,
        window: 65_535,
        mss: Some(1460),
        window_scale: WindowScale::new(7),
        sack_permitted: true,
        timestamps: Some(Timestamps { tsval: i, tsecr: 0 }),
        ..TcpRepr::default()
    };
    craft(src, SERVER_IP, &tcp)
}

/// Drains and discards everything the endpoint wants to send; returns how many.
fn drain(ep: &mut Endpoint, now: Instant) -> usize {
    let mut buf = Vec::new();
    let mut n = 0;
    while ep.poll_transmit(now, &mut buf).is_some() {
        n += 1;
    }
    while ep.poll_event().is_some() {}
    n
}

fn server(max_connections: usize) -> Endpoint {
    Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            max_connections,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    )
}

/// A `Pair` whose server runs without SYN cookies (`syncookies: false`), for the
/// queue limits themselves; `tests/syncookie.rs` covers the default.
fn pair_without_cookies(latency: Duration) -> Pair {
    let mut p = Pair::new(latency);
    p.server = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            syncookies: false,
            ..EndpointConfig::seeded([2; 16], 2)
        },
    );
    p.server.listen(PORT, 128, Config::default()).unwrap();
    p
}

#[test]
fn syn_flood_fills_the_backlog_then_drops_and_counts() {
    let backlog = 16;
    // Cookies off: what a full SYN queue does without them (tests/syncookie.rs has
    // the same flood with them).
    let mut ep = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            syncookies: false,
            ..EndpointConfig::seeded([2; 16], 2)
        },
    );
    ep.listen(FLOOD_PORT, backlog, Config::default()).unwrap();
    let mut now = Instant::from_millis(1);
    let mut synacks = 0;
    let mut peak = [0usize; 5];
    // 20 000 SYNs over 20 s, from as many spoofed sources; nobody answers.
    for i in 0..20_000u32 {
        ep.handle_packet(now, &spoofed_syn(i, FLOOD_PORT));
        if i % 100 == 99 {
            now += Duration::from_millis(100);
            ep.handle_timeout(now);
        }
        synacks += drain(&mut ep, now);
        assert!(ep.connection_count() <= backlog);
        for (p, f) in peak.iter_mut().zip(ep.footprint()) {
            *p = (*p).max(f);
        }
    }
    let st = ep.stats().clone();
    assert_eq!(
        ep.connection_count(),
        backlog,
        "half-open entries fill the backlog"
    );
    assert_eq!(st.drop_backlog_full, 20_000 - backlog as u64);
    assert_eq!(st.drop_table_full, 0);
    assert_eq!(st.rst_sent, 0, "dropped SYNs are not answered");
    // Within 20 s each entry sent its SYN-ACK and at most 4 retransmissions (1, 2, 4,
    // 8 s backoff).
    assert!(
        synacks >= backlog && synacks <= 5 * backlog,
        "{synacks} SYN-ACKs"
    );
    let [slots, table, timers, events, replies] = peak;
    assert_eq!((slots, table), (backlog, backlog), "{peak:?}");
    assert!(timers <= 4 * backlog, "timer heap {timers}");
    assert_eq!((events, replies), (0, 0));
}

#[test]
fn half_open_entries_time_out_and_a_real_client_then_connects() {
    let mut p = pair_without_cookies(Duration::from_millis(20));
    let backlog = 4;
    p.server
        .listen(FLOOD_PORT, backlog, Config::default())
        .unwrap();
    // The server's SYN-ACKs to the spoofed sources reach the client endpoint, which
    // is not their destination: it drops them (`drop_not_local`).
    for i in 0..50 {
        p.inject(true, spoofed_syn(i, FLOOD_PORT));
    }
    p.advance(Duration::from_secs(10));
    assert_eq!(p.server.connection_count(), backlog);
    assert_eq!(p.server.stats().drop_backlog_full, 50 - backlog as u64);

    // A real client's SYNs are dropped too while the queue is full ...
    let to = SocketAddr::new(SERVER_IP, FLOOD_PORT);
    let c = p.client.connect(p.now, 0, to, Config::default()).unwrap();
    p.advance(Duration::from_secs(40));
    assert!(!p.client_has(Event::Connected));
    let dropped = p.server.stats().drop_backlog_full - (50 - backlog as u64);
    assert!(dropped >= 5, "client SYNs dropped: {dropped}");
    // ... until the half-open entries give up after 5 SYN-ACK retransmissions
    // (63 s, Linux `tcp_synack_retries`); the client's SYN retry then gets in.
    let ok = p.run_until(Duration::from_secs(60), |p| {
        p.client_events.contains(&(c, Event::Connected))
    });
    assert!(ok, "client connected once the half-open entries timed out");
    p.drive();
    let s = p.server.accept(FLOOD_PORT).expect("accepted");
    assert_eq!(p.server.connection_count(), 1);
    // The connection works.
    p.client.conn_mut(c).unwrap().write(b"hello");
    p.drive();
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, b"hello");
}

#[test]
fn connection_table_limit_is_enforced_on_both_sides_and_frees_up() {
    let mut p = Pair::new(Duration::from_millis(5));
    p.server = server(3);
    p.server.listen(PORT, 128, Config::default()).unwrap();
    let mut clients = Vec::new();
    let mut servers = Vec::new();
    for _ in 0..3 {
        let (c, s) = p.establish();
        clients.push(c);
        servers.push(s);
    }
    assert_eq!(p.server.connection_count(), 3);

    // A fourth SYN finds the table full: dropped and counted, not answered.
    let before = p.server.stats().clone();
    let c4 = p.connect();
    p.drive();
    let after = p.server.stats().clone();
    assert_eq!(after.drop_table_full, before.drop_table_full + 1);
    assert_eq!(after.rst_sent, before.rst_sent);
    assert!(!p.client_events.contains(&(c4, Event::Connected)));
    assert_eq!(p.server.connection_count(), 3);

    // One connection closes (the client first, so TIME_WAIT stays on the client
    // endpoint): its server slot is freed and the SYN retry gets in.
    p.client.conn_mut(clients[0]).unwrap().close();
    p.drive();
    p.server.conn_mut(servers[0]).unwrap().close();
    let ok = p.run_until(Duration::from_secs(10), |p| {
        p.client_events.contains(&(c4, Event::Connected))
    });
    assert!(ok, "fourth client connected after a slot was freed");
    assert!(p.server_has(Event::Closed(Ok(()))));
    p.drive();
    assert!(p.server.accept(PORT).is_some());
    assert_eq!(p.server.connection_count(), 3);

    // The active side's table is bounded as well.
    let mut ep = Endpoint::new(
        CLIENT_IP,
        EndpointConfig {
            max_connections: 2,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    let now = Instant::from_millis(1);
    let to = Pair::server_addr();
    assert!(ep.connect(now, 0, to, Config::default()).is_ok());
    assert!(ep.connect(now, 0, to, Config::default()).is_ok());
    assert_eq!(
        ep.connect(now, 0, to, Config::default()),
        Err(ConnError::TableFull)
    );
    assert_eq!(
        ep.stats(),
        &EndpointStats {
            drop_table_full: 1,
            ..EndpointStats::default()
        }
    );
}

#[test]
fn syn_flood_larger_than_the_table_is_dropped_as_table_full() {
    let mut ep = server(8);
    ep.listen(FLOOD_PORT, 128, Config::default()).unwrap();
    let now = Instant::from_millis(1);
    for i in 0..100 {
        ep.handle_packet(now, &spoofed_syn(i, FLOOD_PORT));
        drain(&mut ep, now);
    }
    assert_eq!(ep.connection_count(), 8);
    assert_eq!(ep.stats().drop_table_full, 92);
    assert_eq!(ep.stats().drop_backlog_full, 0);
}

#[test]
fn accept_queue_holds_at_most_the_backlog_when_the_application_does_not_accept() {
    let mut p = pair_without_cookies(Duration::from_millis(5));
    let backlog = 3;
    p.server
        .listen(FLOOD_PORT, backlog, Config::default())
        .unwrap();
    let to = SocketAddr::new(SERVER_IP, FLOOD_PORT);
    // Two complete first; then six arrive while the accept queue has room for one.
    let mut clients: Vec<_> = (0..2)
        .map(|_| p.client.connect(p.now, 0, to, Config::default()).unwrap())
        .collect();
    p.advance(Duration::from_millis(100));
    clients.extend((0..6).map(|_| p.client.connect(p.now, 0, to, Config::default()).unwrap()));
    p.advance(Duration::from_secs(5));
    let mut accepted = Vec::new();
    while let Some(h) = p.server.accept(FLOOD_PORT) {
        accepted.push(h);
    }
    assert_eq!(
        accepted.len(),
        backlog,
        "accept queue bounded by the backlog"
    );
    assert!(p.server.stats().drop_backlog_full > 0);
    // Room again: the others complete when their SYN-ACK or SYN is retransmitted.
    let ok = p.run_until(Duration::from_secs(120), |p| {
        while let Some(h) = p.server.accept(FLOOD_PORT) {
            accepted.push(h);
        }
        accepted.len() == clients.len()
    });
    assert!(ok, "all clients accepted eventually: {}", accepted.len());
}

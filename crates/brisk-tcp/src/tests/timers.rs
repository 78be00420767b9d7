use super::handshake::{craft, from_client};
use super::harness::*;
use super::transfer::pattern;
use crate::config::Config;
use crate::event::{ConnError, Event};
use brisk_time::Duration;
use brisk_wire::{Flags, TcpRepr};

#[test]
fn zero_window_persist_probes_back_off_then_transfer_resumes() {
    let server = Config {
        recv_buffer: 16 * 1024,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(10), Config::default(), server);
    let (c, s) = p.establish();
    let data = pattern(64 * 1024, 12);
    let n = p.client.conn_mut(c).unwrap().write(&data);
    assert_eq!(n, data.len());
    // The server application does not read: the window closes.
    p.advance(Duration::from_secs(5));
    let zero_acks = p.seen(false).iter().filter(|x| x.window == 0).count();
    assert!(zero_acks > 0);
    let probes: Vec<_> = p
        .seen(true)
        .into_iter()
        .filter(|x| x.len == 0 && x.flags == Flags::ACK && x.at > p.log[3].0.at)
        .collect();
    assert!(probes.len() >= 3, "probes: {}", probes.len());
    let gaps: Vec<_> = probes.windows(2).map(|w| w[1].at - w[0].at).collect();
    assert!(gaps.windows(2).all(|g| g[1] > g[0]), "backoff {gaps:?}");
    // Probes carry SND.UNA - 1 (Linux `tcp_xmit_probe_skb`).
    let una = p.seen(false).last().unwrap().ack;
    assert_eq!(probes.last().unwrap().seq, una - 1);
    // Reading reopens the window; everything arrives.
    let mut got = Vec::new();
    let done = p.run_until(Duration::from_secs(60), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == data.len()
    });
    assert!(done && got == data);
    assert_eq!(p.client.conn(c).unwrap().info().rto_count, 0);
}

#[test]
fn keepalive_probes_answered_then_unanswered_time_out() {
    let cfg = {
        let mut c = Config::default();
        c.timeouts.keepalive = Some(Duration::from_secs(10));
        c.timeouts.keepalive_interval = Duration::from_secs(1);
        c.timeouts.keepalive_probes = 3;
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(10), cfg, Config::default());
    let (c, _s) = p.establish();
    p.advance(Duration::from_secs(25));
    let probes = p.seen(true).len() - 2;
    assert_eq!(probes, 2, "one probe per idle period, each answered");
    assert!(!p.client_has(Event::Closed(Err(ConnError::KeepaliveTimeout))));
    p.set_hook(|s| {
        if s.to_server {
            Action::Deliver
        } else {
            Action::Drop
        }
    });
    p.advance(Duration::from_secs(30));
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::KeepaliveTimeout)))));
    let last = *p.seen(true).last().unwrap();
    assert!(last.flags.contains(Flags::RST));
}

#[test]
fn hostile_out_of_order_segments_cannot_exceed_the_store_limit() {
    let server = Config {
        max_ooo_segments: 8,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), Config::default(), server);
    let (_c, s) = p.establish();
    for i in 1..200 {
        let seg = from_client(&p, Flags::ACK, i * 10, b"z");
        p.inject(true, seg);
    }
    p.drive();
    let conn = p.server.conn(s).unwrap();
    assert_eq!(conn.ooo_ranges(), 8);
    assert_eq!(conn.counters().ooo_dropped, 191);
    assert_eq!(conn.readable(), 0);
}

#[test]
fn user_timeout_aborts_when_data_stays_unacknowledged() {
    let cfg = {
        let mut c = Config::default();
        c.timeouts.user_timeout = Some(Duration::from_secs(2));
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(10), cfg, Config::default());
    let (c, _s) = p.establish();
    p.set_hook(|s| {
        if s.to_server && s.len > 0 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(b"hello");
    p.advance(Duration::from_secs(5));
    assert!(p
        .client_events
        .contains(&(c, Event::Closed(Err(ConnError::UserTimeout)))));
}

#[test]
fn paws_drops_segments_with_old_timestamps() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (_c, s) = p.establish();
    let bytes = from_client(&p, Flags::ACK, 0, b"old");
    let (_, t) = brisk_wire::parse_tcp_packet(&bytes).unwrap();
    let mut ts = t.timestamps.unwrap();
    ts.tsval = ts.tsval.wrapping_sub(1_000_000);
    let old = TcpRepr {
        timestamps: Some(ts),
        ..t
    };
    p.inject(true, craft(CLIENT_IP, SERVER_IP, &old));
    p.drive();
    assert_eq!(p.server.stats().drop_paws, 1);
    assert_eq!(p.server.conn(s).unwrap().readable(), 0);
}

#[test]
fn ecn_negotiated_marks_new_data_ect0_but_not_acks_or_syns() {
    let cfg = {
        let mut c = Config::default();
        c.ecn.enabled = true;
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), cfg.clone(), cfg);
    let (c, _s) = p.establish();
    let syn = p.seen(true)[0];
    assert!(syn.flags.contains(Flags::ECE) && syn.flags.contains(Flags::CWR));
    let synack = p.seen(false)[0];
    assert!(synack.flags.contains(Flags::ECE) && !synack.flags.contains(Flags::CWR));
    p.client.conn_mut(c).unwrap().write(&[1; 3000]);
    p.drive();
    for x in p.seen(true) {
        let want = if x.len > 0 {
            brisk_wire::Ecn::Ect0
        } else {
            brisk_wire::Ecn::NotEct
        };
        assert_eq!(x.ecn, want, "{x:?}");
    }
    assert!(p
        .seen(false)
        .iter()
        .all(|x| x.ecn == brisk_wire::Ecn::NotEct));
}

/// Issue 13: superseded heap entries used to leave only at their deadline. With
/// keepalive on (2 h), each request-response cycle armed the RTO (short) below the
/// registered keepalive deadline, leaving a stale entry that lived for two hours: one
/// per cycle, without bound. The endpoint now compacts the heap when stale entries
/// outnumber live ones (`crate::timer_heap`), so it stays within a constant.
#[test]
fn superseded_timer_entries_do_not_pile_up() {
    let client = Config {
        timeouts: crate::config::TimeoutConfig {
            keepalive: Some(Duration::from_secs(7200)),
            ..Config::default().timeouts
        },
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), client, Config::default());
    let (c, s) = p.establish();
    let mut max_heap = 0;
    let mut got = Vec::new();
    for i in 0..5000u32 {
        let n = p.client.conn_mut(c).unwrap().write(&i.to_be_bytes());
        assert_eq!(n, 4);
        p.advance(Duration::from_millis(100));
        Pair::read_all(&mut p.server, s, &mut got);
        max_heap = max_heap.max(p.client.footprint()[2]);
    }
    assert_eq!(got.len(), 4 * 5000, "every request arrived");
    // One connection has one live entry (two when a superseded one shares its
    // deadline): the heap stays within twice that plus the slack (64).
    assert!(
        max_heap <= 2 * 2 + 64,
        "timer heap reached {max_heap} entries"
    );
    assert!(
        max_heap > 2,
        "the pile-up this guards against did not happen"
    );
}

/// Issue 29: connections orphaned in FIN-WAIT-2 (60 s `fin_timeout`) whose peer
/// sends a byte every 50 ms. Each byte arms the delayed ACK below the FIN-WAIT-2
/// deadline; when it fired, the connection pushed its FIN-WAIT-2 deadline again, equal
/// to the copy already in the heap, and compaction kept every copy (both matched the
/// registered deadline): 305 933 entries for 1000 connections after 55 s. With a
/// generation per registration only the newest copy is live, and the heap stays
/// within 2 × connections + 64 throughout.
#[test]
fn fin_wait2_trickle_keeps_the_timer_heap_bounded() {
    const CONNS: usize = 20;
    let mut p = Pair::new(Duration::from_millis(5));
    let mut pairs = Vec::new();
    for _ in 0..CONNS {
        pairs.push(p.establish());
    }
    for &(c, _) in &pairs {
        p.client.conn_mut(c).unwrap().close();
    }
    p.drive();
    let mut max_heap = 0;
    let mut delivered = 0;
    // 55 s of trickle, within the 60 s fin_timeout.
    for _ in 0..1100 {
        for &(_, s) in &pairs {
            delivered += p.server.conn_mut(s).unwrap().write(b"x");
        }
        p.advance(Duration::from_millis(50));
        max_heap = max_heap.max(p.client.footprint()[2]);
        assert!(
            max_heap <= 2 * CONNS + 64,
            "timer heap reached {max_heap} entries for {CONNS} connections"
        );
    }
    for &(c, _) in &pairs {
        let conn = p.client.conn(c).expect("still in FIN-WAIT-2");
        assert_eq!(conn.state(), crate::State::FinWait2);
        assert!(conn.readable() > 1000, "the trickle arrived");
    }
    assert_eq!(delivered, CONNS * 1100);
}

//! MPTCP addresses, priorities and surviving subflows between two brisk endpoints
//! (RFC 8684 §3.4, §3.3.8, §3.3): the server's path manager announces its `signal`
//! endpoint with ADD_ADDR (HMAC, echo, re-sent until echoed, bounded), the client
//! joins the announced address within `add_addr_accepted`; forged and flooded
//! ADD_ADDRs are dropped and counted; REMOVE_ADDR closes the subflows to an address
//! and their data is re-injected; MP_PRIO makes a subflow a backup that carries data
//! only when no regular subflow can; and the connection outlives its first subflow
//! (blackholed or reset mid-transfer), closing cleanly with DATA_FINs.

use super::harness::*;
use super::mptcp_join::{
    cfg, check_transfer, client_port, establish_joined, every_subflow_carried, greet, ndiff, sha,
};
use crate::config::Config;
use crate::endpoint::ConnHandle;
use crate::event::Event;
use crate::mptcp::limits::{ADD_ADDR_BURST, ADD_ADDR_REFILL, PM_ACTION_QUEUE, PM_ADDR_MAX};
use crate::mptcp::meta::SIGNAL_QUEUE;
use crate::mptcp::pm::{Addr, LocalEndpoint, PmMode, ADD_ADDR_RETRANS_MAX};
use brisk_time::Duration;
use brisk_wire::mptcp::{self as wire, crypto, AddAddr, MptcpOption};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet, ExtraOptions, Flags};
use std::cell::Cell;
use std::net::{IpAddr, Ipv4Addr};
use std::rc::Rc;

/// The server's second address, announced with ADD_ADDR under id [`ANNOUNCED_ID`].
const S2: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 3));
const ANNOUNCED_ID: u8 = 5;

/// A server announcing `S2` (a `signal` endpoint, `ip mptcp endpoint add 10.0.0.3 id 5
/// signal`) and a client accepting `accepted` announcements (`ip mptcp limits set
/// add_addr_accepted N subflows 2`).
fn announce_pair(accepted: u8) -> Pair {
    let ep = LocalEndpoint {
        addr: Addr {
            id: ANNOUNCED_ID,
            ip: S2,
            port: 0,
        },
        signal: true,
        subflow: false,
        backup: false,
    };
    let mut client = cfg(PmMode::Fullmesh, 2, Vec::new());
    set_accepted(&mut client, accepted);
    let server = cfg(PmMode::Fullmesh, 2, vec![ep]);
    let mut p = Pair::with_configs(Duration::from_millis(10), client, server);
    p.server.add_address(S2).unwrap();
    p
}

fn set_accepted(c: &mut Config, n: u8) {
    if let Some(m) = c.mptcp.as_mut() {
        m.pm.limits.add_addr_accepted = n;
    }
}

/// The ADD_ADDRs in packet `i` of the log.
fn add_addrs(p: &Pair, i: usize) -> Vec<AddAddr> {
    wire::options(&p.logged_repr(i).extra)
        .filter_map(|o| match o {
            Ok(MptcpOption::AddAddr(a)) => Some(a),
            _ => None,
        })
        .collect()
}

fn has_option(p: &Pair, i: usize, f: impl Fn(&MptcpOption) -> bool) -> bool {
    wire::options(&p.logged_repr(i).extra).any(|o| o.is_ok_and(|o| f(&o)))
}

fn mib(p: &Pair, client: bool, h: ConnHandle) -> crate::mptcp::counters::MptcpCounters {
    let ep = if client { &p.client } else { &p.server };
    *ep.conn(h).unwrap().mptcp_mib().unwrap()
}

/// Rewrites packets in flight: `f` gets the parsed packet's MPTCP options and
/// returns the new ones (None: unchanged).
pub(super) fn rewrite_options(
    p: &mut Pair,
    mut f: impl FnMut(&Seen, &[MptcpOption]) -> Option<Vec<MptcpOption>> + 'static,
) {
    p.set_rewrite(move |seen, bytes| {
        let copy = bytes.clone();
        let (ip, mut tcp) = parse_tcp_packet(&copy).unwrap();
        let opts: Vec<MptcpOption> = wire::options(&tcp.extra).filter_map(Result::ok).collect();
        let Some(new) = f(seen, &opts) else {
            return;
        };
        let mut extra = ExtraOptions::new();
        for (kind, data) in tcp.extra.iter() {
            if kind != wire::KIND {
                extra.push(kind, data).unwrap();
            }
        }
        for o in &new {
            wire::push(&mut extra, o).unwrap();
        }
        tcp.extra = extra;
        let mut out = Vec::new();
        emit_tcp_packet(&ip, &tcp, &mut out);
        *bytes = out;
    });
}

/// Sends `n` bytes each way while `at(pair, step)` runs before each step; checks
/// both SHA-256s. Returns the number of steps taken.
fn transfer_with(
    p: &mut Pair,
    c: ConnHandle,
    s: ConnHandle,
    n: usize,
    seed: u64,
    at: impl FnMut(&mut Pair, usize),
) {
    transfer_ways(p, c, s, n, n, seed, at)
}

/// [`transfer_with`], `n_up` bytes up and `n_down` down.
fn transfer_ways(
    p: &mut Pair,
    c: ConnHandle,
    s: ConnHandle,
    n_up: usize,
    n_down: usize,
    seed: u64,
    mut at: impl FnMut(&mut Pair, usize),
) {
    let up = pattern(n_up, seed);
    let down = pattern(n_down, seed + 1000);
    let (mut sent_up, mut sent_down) = (0, 0);
    let (mut got_up, mut got_down) = (Vec::new(), Vec::new());
    let end = p.now + Duration::from_secs(600);
    let mut step = 0;
    while (got_up.len() < up.len() || got_down.len() < down.len()) && p.now < end {
        at(p, step);
        step += 1;
        if sent_up < up.len() {
            sent_up += p.client.conn_mut(c).unwrap().write(&up[sent_up..]);
        }
        if sent_down < down.len() {
            sent_down += p.server.conn_mut(s).unwrap().write(&down[sent_down..]);
        }
        Pair::read_all(&mut p.server, s, &mut got_up);
        Pair::read_all(&mut p.client, c, &mut got_down);
        if !p.step_until(end) {
            break;
        }
    }
    Pair::read_all(&mut p.server, s, &mut got_up);
    Pair::read_all(&mut p.client, c, &mut got_down);
    if got_up.len() != n_up || got_down.len() != n_down {
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let conn = ep.conn(h).unwrap();
            eprintln!(
                "{:?} {:?} {:?} {}",
                conn.state(),
                conn.mptcp_counters(),
                conn.mptcp_subflow_info(),
                conn.mptcp_debug()
            );
        }
    }
    assert_eq!(got_up.len(), n_up, "seed {seed}: client→server length");
    assert_eq!(sha(&got_up), sha(&up), "seed {seed}: client→server SHA-256");
    assert_eq!(got_down.len(), n_down, "seed {seed}: server→client length");
    assert_eq!(
        sha(&got_down),
        sha(&down),
        "seed {seed}: server→client SHA-256"
    );
    for (ep, h) in [(&p.client, c), (&p.server, s)] {
        let conn = ep.conn(h).unwrap();
        assert!(conn.is_mptcp(), "seed {seed}: no fallback");
        let m = conn.mptcp_counters().unwrap();
        assert_eq!(
            m.csum_bad + m.map_refused + m.no_dss_reset + m.bad_data_acks,
            0,
            "seed {seed}: {m:?}"
        );
    }
}

/// Both ends close; both see the peer's DATA_FIN and end with `Closed(Ok)`.
fn close_cleanly(p: &mut Pair, c: ConnHandle, s: ConnHandle, what: &str) {
    p.client.conn_mut(c).unwrap().close();
    p.server.conn_mut(s).unwrap().close();
    // Past TIME-WAIT (60 s).
    let ok = p.run_until(Duration::from_secs(150), |p| {
        p.client_events.contains(&(c, Event::Closed(Ok(()))))
            && p.server_events.contains(&(s, Event::Closed(Ok(()))))
    });
    assert!(
        p.client_has(Event::PeerClosed),
        "{what}: client saw the DATA_FIN"
    );
    assert!(
        p.server_has(Event::PeerClosed),
        "{what}: server saw the DATA_FIN"
    );
    let last = |ev: &[(ConnHandle, Event)], h: ConnHandle| {
        ev.iter()
            .filter(|e| e.0 == h && !matches!(e.1, Event::Readable | Event::Writable))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert!(
        ok,
        "{what}: both closed cleanly: client {:?} {} server {:?} {}",
        last(&p.client_events, c),
        p.client.conn(c).map_or(String::new(), |x| x.mptcp_debug()),
        last(&p.server_events, s),
        p.server.conn(s).map_or(String::new(), |x| x.mptcp_debug()),
    );
}

/// The server announces its second address; the client checks the HMAC, echoes it,
/// and joins it from its initial address; 10 MB each way over both paths.
#[test]
fn add_addr_is_echoed_and_the_announced_address_joined() {
    for seed in [61u64, 62, 63] {
        let mut p = announce_pair(1);
        let (c, s) = establish_joined(&mut p, 2);
        let ci = p.client.conn(c).unwrap().mptcp_subflow_info();
        assert_eq!(ci[1].0.ip(), CLIENT_IP, "joined from the initial address");
        assert_eq!(ci[1].1.ip(), S2, "to the announced one: {ci:?}");
        let si = p.server.conn(s).unwrap().mptcp_subflow_info();
        assert_eq!(si[1].0.ip(), S2);
        // The server's SYN/ACK gave the endpoint's configured id (Linux
        // `mptcp_pm_get_local_id`), the one its ADD_ADDR announced.
        let prio = p.client.conn(c).unwrap().mptcp_subflow_prio();
        assert_eq!(prio[1].3, ANNOUNCED_ID, "{prio:?}");
        // Exactly one announcement (with HMAC) and one echo (without) on the wire.
        let (mut anns, mut echoes) = (0, 0);
        for i in 0..p.log.len() {
            for a in add_addrs(&p, i) {
                assert_eq!((a.address_id, a.addr, a.port), (ANNOUNCED_ID, S2, None));
                if a.hmac.is_some() {
                    assert!(!p.log[i].0.to_server);
                    assert_eq!(p.log[i].0.len, 0, "ADD_ADDR rides a pure ACK");
                    anns += 1;
                } else {
                    assert!(p.log[i].0.to_server);
                    echoes += 1;
                }
            }
        }
        assert_eq!((anns, echoes), (1, 1), "seed {seed}");
        let (cm, sm) = (mib(&p, true, c), mib(&p, false, s));
        assert_eq!((sm.add_addr_tx, sm.echo_add), (1, 1), "server {sm:?}");
        assert_eq!((cm.add_addr, cm.echo_add_tx), (1, 1), "client {cm:?}");
        assert_eq!(cm.add_addr_hmac_failure + cm.add_addr_drop, 0);
        check_transfer(&mut p, c, s, 10 << 20, seed);
        every_subflow_carried(&p, c, s, 256 << 10);
        let to_s2 = p
            .log
            .iter()
            .filter(|(x, b)| x.to_server && parse_tcp_packet(b).unwrap().0.dst() == S2)
            .count();
        assert!(to_s2 > 100, "seed {seed}: {to_s2} packets to {S2}");
        // No re-send once echoed.
        p.advance(Duration::from_secs(5));
        assert_eq!(mib(&p, false, s).add_addr_tx, 1);
    }
}

/// With Linux's default `add_addr_accepted 0` the client echoes the announcement
/// (the server stops re-sending) and joins nothing.
#[test]
fn add_addr_beyond_add_addr_accepted_is_echoed_not_joined() {
    let mut p = announce_pair(0);
    let (c, s) = greet(&mut p);
    p.advance(Duration::from_secs(5));
    assert_eq!(p.client.conn(c).unwrap().mptcp_subflows(), 1);
    let st = p.client.conn(c).unwrap().mptcp_pm_stats().unwrap();
    assert_eq!((st.add_addr_rx, st.add_addr_ignored), (1, 1), "{st:?}");
    assert_eq!(mib(&p, true, c).echo_add_tx, 1);
    assert_eq!(mib(&p, false, s).add_addr_tx, 1, "echoed: not re-sent");
    check_transfer(&mut p, c, s, 1 << 20, 64);
}

/// Echoes lost: the server re-sends its ADD_ADDR on its timer (`mptcp_pm_add_timer`,
/// at most ADD_ADDR_RETRANS_MAX times), the client echoes each and joins once.
#[test]
fn add_addr_is_resent_until_echoed_and_the_resends_are_bounded() {
    for lose_all in [false, true] {
        let mut p = announce_pair(1);
        // A middlebox strips the echo from the client's pure ACK: all of them, or
        // the first two.
        let keep = if lose_all { u32::MAX } else { 2 };
        let lost = Rc::new(Cell::new(0u32));
        let lost2 = lost.clone();
        rewrite_options(&mut p, move |x, opts| {
            let echo = |o: &MptcpOption| matches!(o, MptcpOption::AddAddr(a) if a.hmac.is_none());
            if !x.to_server || !opts.iter().any(echo) || lost2.get() >= keep {
                return None;
            }
            lost2.set(lost2.get() + 1);
            Some(opts.iter().filter(|o| !echo(o)).copied().collect())
        });
        let (c, s) = greet(&mut p);
        p.advance(Duration::from_secs(30));
        let sm = mib(&p, false, s);
        let cm = mib(&p, true, c);
        let resent = p
            .server
            .conn(s)
            .unwrap()
            .mptcp_pm_stats()
            .unwrap()
            .add_addr_retrans;
        if lose_all {
            assert_eq!(
                sm.add_addr_tx,
                1 + u64::from(ADD_ADDR_RETRANS_MAX),
                "bounded re-sends: {sm:?}"
            );
            assert_eq!(resent, u64::from(ADD_ADDR_RETRANS_MAX));
            assert_eq!(sm.echo_add, 0);
        } else {
            assert!(sm.add_addr_tx >= 2 && resent >= 1, "re-sent: {sm:?}");
            assert_eq!(sm.echo_add, 1, "echoed once it got through: {sm:?}");
        }
        assert_eq!(cm.add_addr, sm.add_addr_tx, "each one verified and echoed");
        assert_eq!(cm.echo_add_tx, sm.add_addr_tx);
        assert_eq!(u64::from(lost.get()), sm.add_addr_tx - sm.echo_add);
        // Joined once: a re-sent ADD_ADDR of a known address only gets its echo.
        p.advance(Duration::from_secs(2));
        assert_eq!(p.client.conn(c).unwrap().mptcp_subflows(), 2, "{lose_all}");
        assert_eq!(p.server.stats().mptcp_joins_accepted, 1);
    }
}

/// A forged ADD_ADDR (HMAC wrong) is dropped and counted, not echoed, not joined; a
/// flood of valid ones (an attacker holding the keys, or a buggy peer) passes the
/// rate bound's burst only, every table stays bounded and the transfer is intact.
#[test]
fn forged_and_flooded_add_addrs_are_dropped_and_counted() {
    // Forged: the server's announcement with one HMAC bit flipped.
    let mut p = announce_pair(1);
    rewrite_options(&mut p, |_, opts| {
        let mut hit = false;
        let new = opts
            .iter()
            .map(|o| match o {
                MptcpOption::AddAddr(a) if a.hmac.is_some() => {
                    hit = true;
                    MptcpOption::AddAddr(AddAddr {
                        hmac: a.hmac.map(|h| h ^ 1),
                        ..*a
                    })
                }
                o => *o,
            })
            .collect();
        hit.then_some(new)
    });
    let (c, s) = greet(&mut p);
    p.advance(Duration::from_secs(30));
    let cm = mib(&p, true, c);
    let sm = mib(&p, false, s);
    assert_eq!(cm.add_addr_hmac_failure, sm.add_addr_tx, "{cm:?}");
    assert_eq!((cm.add_addr, cm.echo_add_tx), (0, 0));
    assert_eq!(sm.add_addr_tx, 1 + u64::from(ADD_ADDR_RETRANS_MAX));
    assert_eq!(p.client.conn(c).unwrap().mptcp_subflows(), 1);
    p.set_rewrite(|_, _| {});
    check_transfer(&mut p, c, s, 1 << 20, 65);

    // Flood: every other server pure ACK replaced by a valid ADD_ADDR for a new
    // address (the others keep their Data ACK: an ADD_ADDR replaces the DSS).
    let mut client = cfg(PmMode::Fullmesh, 2, Vec::new());
    set_accepted(&mut client, 8);
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        client,
        cfg(PmMode::Fullmesh, 2, Vec::new()),
    );
    let (c, s) = greet(&mut p);
    let (ck, sk) = p.client.conn(c).unwrap().mptcp_keys().unwrap();
    // Each step, 50 server pure ACKs on the first subflow, in the client's window
    // (the last server packet's sequence number), each with a valid ADD_ADDR for a
    // new address: an attacker holding the keys, or a broken peer.
    let dport = client_port(&p, c, 0);
    let mut k = 0u32;
    let t0 = p.now;
    transfer_ways(&mut p, c, s, 4 << 20, 0, 66, |p, _| {
        let Some((_, bytes)) = p
            .log
            .iter()
            .rev()
            .find(|(x, _)| !x.to_server && x.dst_port == dport)
        else {
            return;
        };
        let bytes = bytes.clone();
        for _ in 0..50 {
            let (ip, mut tcp) = parse_tcp_packet(&bytes).unwrap();
            tcp.seq += tcp.seg_len();
            tcp.flags = Flags::ACK;
            tcp.payload = &[];
            let addr = IpAddr::V4(Ipv4Addr::new(198, 18, (k >> 8) as u8, k as u8));
            let id = 1 + (k % 200) as u8;
            k += 1;
            let mut extra = ExtraOptions::new();
            let a = AddAddr {
                address_id: id,
                addr,
                port: None,
                hmac: Some(crypto::add_addr_hmac(sk, ck, id, addr, None)),
            };
            wire::push(&mut extra, &MptcpOption::AddAddr(a)).unwrap();
            tcp.extra = extra;
            let mut out = Vec::new();
            emit_tcp_packet(&ip, &tcp, &mut out);
            p.inject(false, out);
        }
    });
    let flood = u64::from(k);
    let elapsed = p.now.saturating_duration_since(t0);
    let cm = mib(&p, true, c);
    let conn = p.client.conn(c).unwrap();
    let st = conn.mptcp_pm_stats().unwrap();
    assert!(flood > 100, "{flood} flooded announcements");
    assert!(cm.add_addr_drop > 0, "over the rate: {cm:?}");
    // The token bucket: the burst, then one per ADD_ADDR_REFILL.
    let refills = elapsed.as_nanos() / ADD_ADDR_REFILL.as_nanos() + 1;
    assert!(
        cm.add_addr <= u64::from(ADD_ADDR_BURST) + refills as u64,
        "{} passed in {elapsed:?}",
        cm.add_addr
    );
    assert_eq!(cm.add_addr + cm.add_addr_drop, flood, "each one counted");
    assert!(
        conn.mptcp_subflows() <= 3,
        "{} subflows",
        conn.mptcp_subflows()
    );
    assert!(st.add_addr_rx <= cm.add_addr);
    let _ = (PM_ADDR_MAX, PM_ACTION_QUEUE, SIGNAL_QUEUE);
    assert!(
        conn.mptcp_counters().unwrap().signals_dropped + cm.echo_add_tx <= cm.add_addr,
        "echoes bounded by what passed"
    );
}

/// The server withdraws its announced endpoint mid-transfer (`ip mptcp endpoint
/// delete id 5`): REMOVE_ADDR; both ends close the subflow to it, its data is
/// re-injected on the first subflow, and the transfer completes intact.
#[test]
fn remove_addr_closes_the_subflows_to_that_address() {
    for seed in [67u64, 68] {
        let mut p = announce_pair(1);
        let (c, s) = establish_joined(&mut p, 2);
        transfer_with(&mut p, c, s, 4 << 20, seed, |p, step| {
            if step == 4 {
                let now = p.now;
                p.server
                    .conn_mut(s)
                    .unwrap()
                    .mptcp_remove_address(now, ANNOUNCED_ID);
            }
        });
        let (cm, sm) = (mib(&p, true, c), mib(&p, false, s));
        assert_eq!(sm.rm_addr_tx, 1, "server {sm:?}");
        assert_eq!(cm.rm_addr, 1, "client: one subflow named {cm:?}");
        assert!(cm.rm_subflow >= 1 && sm.rm_subflow >= 1);
        let rm_on_wire = (0..p.log.len()).any(|i| {
            !p.log[i].0.to_server
                && has_option(
                    &p,
                    i,
                    |o| matches!(o, MptcpOption::RemoveAddr(r) if r.ids() == [ANNOUNCED_ID]),
                )
        });
        assert!(rm_on_wire);
        assert_eq!(p.client.conn(c).unwrap().mptcp_subflows(), 1);
        assert_eq!(p.server.conn(s).unwrap().mptcp_subflows(), 1);
        let (cc, sc) = (
            p.client.conn(c).unwrap().mptcp_counters().unwrap(),
            p.server.conn(s).unwrap().mptcp_counters().unwrap(),
        );
        assert!(
            cc.reinjected_bytes + sc.reinjected_bytes > 0,
            "seed {seed}: data re-injected"
        );
        close_cleanly(&mut p, c, s, "after REMOVE_ADDR");
    }
}

/// MP_PRIO: the client makes subflow 1 a backup; the peer honours it too. Both
/// schedulers then leave it idle while subflow 0 lives; once subflow 0 dies
/// (blackholed, stale after `stale_loss_cnt` RTOs), the backup carries the rest.
#[test]
fn mp_prio_backup_is_used_only_when_no_regular_subflow_can_send() {
    for seed in [69u64, 70] {
        let mut p = ndiff(2, 2, 2);
        let (c, s) = establish_joined(&mut p, 2);
        let now = p.now;
        assert!(p.client.conn_mut(c).unwrap().mptcp_set_backup(now, 1, true));
        p.advance(Duration::from_millis(200));
        let sm = mib(&p, false, s);
        assert_eq!(sm.mp_prio_rx, 1, "{sm:?}");
        assert_eq!(mib(&p, true, c).mp_prio_tx, 1);
        let sprio = p.server.conn(s).unwrap().mptcp_subflow_prio();
        assert_eq!((sprio[1].0, sprio[1].2), (true, true), "{sprio:?}");
        let cprio = p.client.conn(c).unwrap().mptcp_subflow_prio();
        assert_eq!((cprio[1].0, cprio[1].1), (true, true), "{cprio:?}");
        let sent = |p: &Pair, client: bool| {
            let (ep, h) = if client {
                (&p.client, c)
            } else {
                (&p.server, s)
            };
            ep.conn(h).unwrap().mptcp_subflow_info()[1].2
        };
        let before = (sent(&p, true), sent(&p, false));
        check_transfer(&mut p, c, s, 4 << 20, seed);
        assert_eq!(
            (sent(&p, true), sent(&p, false)),
            before,
            "seed {seed}: the backup carried no data while subflow 0 lived"
        );
        // Subflow 0's path dies: the backup takes over.
        let dead = client_port(&p, c, 0);
        p.set_hook(move |x| {
            if x.src_port == dead || x.dst_port == dead {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        check_transfer(&mut p, c, s, 2 << 20, seed + 100);
        assert!(sent(&p, true) > before.0 + (1 << 20), "seed {seed}");
        assert!(sent(&p, false) > before.1 + (1 << 20), "seed {seed}");
        let cc = p.client.conn(c).unwrap().mptcp_counters().unwrap();
        assert!(cc.subflows_stale >= 1, "{cc:?}");
    }
}

/// RFC 8684 §3.3: the connection lives while any subflow lives. The first subflow's
/// path is blackholed, or its subflow reset, mid-transfer: its data is re-injected,
/// the transfer completes on the joined subflow, and both ends close cleanly.
#[test]
fn the_connection_survives_the_loss_of_its_first_subflow() {
    for (seed, reset) in [(71u64, false), (72, false), (73, true), (74, true)] {
        let mut p = ndiff(2, 2, 2);
        let (c, s) = establish_joined(&mut p, 2);
        let dead = client_port(&p, c, 0);
        let count = Rc::new(Cell::new(0usize));
        let count2 = count.clone();
        // The packet (to the client) that became a RST: (index).
        let rst_at: Rc<Cell<Option<usize>>> = Rc::new(Cell::new(None));
        let rst_at2 = rst_at.clone();
        p.set_hook(move |x| {
            if x.src_port != dead && x.dst_port != dead {
                return Action::Deliver;
            }
            count2.set(count2.get() + 1);
            if rst_at2.get().is_some_and(|i| !x.to_server && x.index == i) {
                return Action::Deliver;
            }
            if count2.get() > 200 || rst_at2.get().is_some() {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        if reset {
            // A packet of subflow 0 to the client becomes a RST (a middlebox or the
            // peer's stack resetting it); the path is silent afterwards.
            let count3 = count.clone();
            p.set_rewrite(move |x, bytes| {
                if x.to_server || x.dst_port != dead || count3.get() < 150 || rst_at.get().is_some()
                {
                    return;
                }
                rst_at.set(Some(x.index));
                let copy = bytes.clone();
                let (ip, mut tcp) = parse_tcp_packet(&copy).unwrap();
                tcp.flags = Flags::RST | Flags::ACK;
                tcp.payload = &[];
                tcp.extra = ExtraOptions::new();
                let mut out = Vec::new();
                emit_tcp_packet(&ip, &tcp, &mut out);
                *bytes = out;
            });
        }
        transfer_with(&mut p, c, s, 10 << 20, seed, |_, _| {});
        let cc = *p.client.conn(c).unwrap().mptcp_counters().unwrap();
        let sc = *p.server.conn(s).unwrap().mptcp_counters().unwrap();
        assert!(
            cc.reinjected_bytes > 0 && sc.reinjected_bytes > 0,
            "seed {seed}: client {cc:?} server {sc:?}"
        );
        if reset {
            assert_eq!(cc.first_subflow_lost, 1, "seed {seed}: {cc:?}");
        }
        let conn = p.client.conn(c).unwrap();
        assert!(conn.is_mptcp() && conn.state() != crate::State::Closed);
        close_cleanly(&mut p, c, s, &format!("seed {seed}"));
    }
}

/// The redundant scheduler sends every byte on every subflow with room: each
/// subflow of both ends carries (nearly) the whole transfer, the receiver keeps one
/// copy, and the bytes are intact.
#[test]
fn the_redundant_scheduler_sends_a_copy_on_every_subflow() {
    for seed in [75u64, 76] {
        let mut cc = cfg(PmMode::NDiffPorts { n: 2 }, 2, Vec::new());
        let mut sc = cfg(PmMode::Fullmesh, 2, Vec::new());
        for c in [&mut cc, &mut sc] {
            if let Some(m) = c.mptcp.as_mut() {
                m.scheduler = crate::mptcp::sched::SchedKind::Redundant;
            }
        }
        let mut p = Pair::with_configs(Duration::from_millis(10), cc, sc);
        let (c, s) = establish_joined(&mut p, 2);
        let n = 2 << 20;
        check_transfer(&mut p, c, s, n, seed);
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let conn = ep.conn(h).unwrap();
            let copies = conn.mptcp_counters().unwrap().redundant_bytes;
            assert!(
                copies > (n as u64) / 2,
                "seed {seed}: {copies} extra copies"
            );
            for (l, r, sent, _) in conn.mptcp_subflow_info() {
                assert!(sent > (n as u64) / 2, "seed {seed}: {l}→{r} sent {sent}");
            }
        }
    }
}

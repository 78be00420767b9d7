//! MPTCP connections with several subflows between two brisk endpoints (RFC 8684
//! §3.2): MP_JOIN opened by the path manager (ndiffports, fullmesh over a second
//! client address), data scheduled over the subflows and checked by SHA-256 under
//! loss and reordering on one subflow, a subflow blackholed mid-transfer (its data
//! re-injected on the other), and refused joins (unknown token, bad HMAC, over the
//! limit, a flood).

use super::harness::*;
use crate::config::Config;
use crate::endpoint::ConnHandle;
use crate::mptcp::pm::{Addr, Limits, LocalEndpoint, PmConfig, PmMode};
use crate::mptcp::MptcpConfig;
use brisk_time::Duration;
use brisk_wire::mptcp::{self as wire, MpJoin, MptcpOption, ResetReason};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::rc::Rc;

pub(super) fn cfg(mode: PmMode, subflows: u8, endpoints: Vec<LocalEndpoint>) -> Config {
    Config {
        mptcp: Some(Box::new(MptcpConfig {
            pm: PmConfig {
                mode,
                limits: Limits {
                    subflows,
                    add_addr_accepted: 0,
                },
                endpoints,
                ..PmConfig::default()
            },
            ..MptcpConfig::default()
        })),
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        ..Config::default()
    }
}

pub(super) fn ndiff(n: u8, client_limit: u8, server_limit: u8) -> Pair {
    Pair::with_configs(
        Duration::from_millis(10),
        cfg(PmMode::NDiffPorts { n }, client_limit, Vec::new()),
        cfg(PmMode::Fullmesh, server_limit, Vec::new()),
    )
}

pub(super) fn sha(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

/// Establishes and sends one byte from the server: its DSS makes the client fully
/// established (RFC 8684 §3.1), when its path manager opens subflows (as Linux's).
pub(super) fn greet(p: &mut Pair) -> (ConnHandle, ConnHandle) {
    let (c, s) = p.establish();
    assert_eq!(p.server.conn_mut(s).unwrap().write(b"!"), 1);
    let mut got = Vec::new();
    let ok = p.run_until(Duration::from_secs(2), |p| {
        Pair::read_all(&mut p.client, c, &mut got);
        got == b"!"
    });
    assert!(ok, "the greeting arrived");
    (c, s)
}

/// Establishes and lets the joins complete; returns (client, server).
pub(super) fn establish_joined(p: &mut Pair, want: usize) -> (ConnHandle, ConnHandle) {
    let (c, s) = greet(p);
    let ok = p.run_until(Duration::from_secs(5), |p| {
        let ci = p.client.conn(c).unwrap().mptcp_subflow_info();
        let si = p.server.conn(s).unwrap().mptcp_subflow_info();
        ci.len() == want && si.len() == want && ci.iter().chain(&si).all(|x| x.3)
    });
    assert!(
        ok,
        "{want} usable subflows: client {:?}, server {:?}",
        p.client.conn(c).unwrap().mptcp_subflow_info(),
        p.server.conn(s).unwrap().mptcp_subflow_info()
    );
    (c, s)
}

/// Sends `up` and `down` at once until both arrived or `max` passes.
pub(super) fn both_ways(
    p: &mut Pair,
    c: ConnHandle,
    s: ConnHandle,
    up: &[u8],
    down: &[u8],
    max: Duration,
) -> (Vec<u8>, Vec<u8>) {
    let (mut sent_up, mut sent_down) = (0, 0);
    let (mut got_up, mut got_down) = (Vec::new(), Vec::new());
    let end = p.now + max;
    while (got_up.len() < up.len() || got_down.len() < down.len()) && p.now < end {
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
    (got_up, got_down)
}

pub(super) fn check_transfer(p: &mut Pair, c: ConnHandle, s: ConnHandle, n: usize, seed: u64) {
    let up = pattern(n, seed);
    let down = pattern(n, seed + 1000);
    let (got_up, got_down) = both_ways(p, c, s, &up, &down, Duration::from_secs(600));
    if got_up.len() != up.len() || got_down.len() != down.len() {
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let conn = ep.conn(h).unwrap();
            eprintln!(
                "{:?} {:?} {:?} {:?} {}",
                conn.state(),
                conn.mptcp_counters(),
                conn.mptcp_subflow_info(),
                conn.mptcp_send_buffered(),
                conn.mptcp_debug()
            );
        }
    }
    assert_eq!(got_up.len(), up.len(), "seed {seed}: client→server length");
    assert_eq!(sha(&got_up), sha(&up), "seed {seed}: client→server SHA-256");
    assert_eq!(
        got_down.len(),
        down.len(),
        "seed {seed}: server→client length"
    );
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
            m.csum_bad + m.map_refused + m.no_dss_reset + m.opt_no_room + m.bad_data_acks,
            0,
            "seed {seed}: {m:?}"
        );
    }
}

/// Each subflow of both ends sent at least `min` bytes.
pub(super) fn every_subflow_carried(p: &Pair, c: ConnHandle, s: ConnHandle, min: u64) {
    for (who, ep, h) in [("client", &p.client, c), ("server", &p.server, s)] {
        let info = ep.conn(h).unwrap().mptcp_subflow_info();
        for (l, r, sent, _) in &info {
            assert!(
                *sent >= min,
                "{who} subflow {l}→{r} sent {sent} bytes (< {min}): {info:?}"
            );
        }
    }
}

/// The client port of subflow `i` (for hooks that pick one path).
pub(super) fn client_port(p: &Pair, c: ConnHandle, i: usize) -> u16 {
    p.client.conn(c).unwrap().mptcp_subflow_info()[i].0.port()
}

#[test]
fn ndiffports_two_subflows_join_and_carry_data() {
    let mut p = ndiff(2, 2, 2);
    let (c, s) = establish_joined(&mut p, 2);
    let cm = *p.client.conn(c).unwrap().mptcp_counters().unwrap();
    let sm = *p.server.conn(s).unwrap().mptcp_counters().unwrap();
    assert_eq!(
        (cm.join_syn_tx, cm.join_synack_rx, cm.join_synack_bad),
        (1, 1, 0)
    );
    assert_eq!((sm.join_syn_rx, sm.join_ack_rx, sm.join_ack_bad), (1, 1, 0));
    assert_eq!(p.server.stats().mptcp_joins_accepted, 1);
    assert_eq!(p.server.stats().mptcp_joins_refused, 0);
    // The join's packets carry MP_JOIN in each of its three forms.
    let forms: Vec<_> = (0..p.log.len())
        .flat_map(|i| {
            let t = p.logged_repr(i);
            wire::options(&t.extra)
                .filter_map(|o| match o {
                    Ok(MptcpOption::MpJoin(j)) => Some(match j {
                        MpJoin::Syn { .. } => 0,
                        MpJoin::SynAck { .. } => 1,
                        MpJoin::Ack { .. } => 2,
                    }),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(
        forms.contains(&0) && forms.contains(&1) && forms.contains(&2),
        "{forms:?}"
    );
    check_transfer(&mut p, c, s, 4 << 20, 7);
    every_subflow_carried(&p, c, s, 256 << 10);
}

/// ≥ 10 MB each way over 2 and 4 subflows (ndiffports), 1 % loss and 2 % reordering
/// on one subflow only, several seeds.
#[test]
fn ndiffports_ten_megabytes_each_way_under_loss_on_one_subflow() {
    for (n, seeds) in [(2u8, [1u64, 2, 3]), (4, [4, 5, 6])] {
        for seed in seeds {
            let mut p = ndiff(n, 8, 8);
            let (c, s) = establish_joined(&mut p, usize::from(n));
            let lossy = client_port(&p, c, 1);
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            p.set_hook(move |x| {
                if x.src_port != lossy && x.dst_port != lossy {
                    return Action::Deliver;
                }
                let r: f64 = rng.gen();
                if r < 0.01 {
                    Action::Drop
                } else if r < 0.03 {
                    Action::Delay(Duration::from_millis(rng.gen_range(1..20)))
                } else {
                    Action::Deliver
                }
            });
            check_transfer(&mut p, c, s, 10 << 20, seed);
            // The lossy subflow's window stays small: the scheduler gives it less,
            // but it carries data both ways.
            every_subflow_carried(&p, c, s, 16 << 10);
            let lossy_retx = p.client.conn(c).unwrap().mptcp_subflow_info();
            assert_eq!(
                lossy_retx.len(),
                usize::from(n),
                "seed {seed}: subflows kept"
            );
        }
    }
}

/// Fullmesh over a second client address: the client's `subflow` endpoint opens a
/// subflow from it to the server's address; both paths carry data.
#[test]
fn fullmesh_over_a_second_client_address() {
    let second = IpAddr::V4(Ipv4Addr::new(10, 0, 1, 1));
    let ep = LocalEndpoint {
        addr: Addr {
            id: 1,
            ip: second,
            port: 0,
        },
        signal: false,
        subflow: true,
        backup: false,
    };
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        cfg(PmMode::Fullmesh, 2, vec![ep]),
        cfg(PmMode::Fullmesh, 2, Vec::new()),
    );
    p.client.add_address(second).unwrap();
    let (c, s) = establish_joined(&mut p, 2);
    let info = p.client.conn(c).unwrap().mptcp_subflow_info();
    assert_eq!(info[0].0.ip(), CLIENT_IP);
    assert_eq!(info[1].0.ip(), second, "{info:?}");
    let sinfo = p.server.conn(s).unwrap().mptcp_subflow_info();
    assert_eq!(
        sinfo[1].1.ip(),
        second,
        "the server sees the join from the second address"
    );
    for seed in [21, 22] {
        check_transfer(&mut p, c, s, 3 << 20, seed);
    }
    every_subflow_carried(&p, c, s, 256 << 10);
    // The packets of the second subflow leave from the second address.
    let from_second = p
        .log
        .iter()
        .filter(|(x, b)| x.to_server && parse_tcp_packet(b).unwrap().0.src() == second)
        .count();
    assert!(from_second > 100, "{from_second} packets from {second}");
}

/// A subflow whose path goes silent mid-transfer: its RTOs re-inject its data on the
/// other subflow (seed Table I), which finishes the transfer.
#[test]
fn blackholed_subflow_data_is_reinjected_on_the_other() {
    for seed in [31u64, 32] {
        let mut p = ndiff(2, 2, 2);
        let (c, s) = establish_joined(&mut p, 2);
        let dead = client_port(&p, c, 1);
        let sent = Rc::new(Cell::new(0usize));
        let sent2 = sent.clone();
        p.set_hook(move |x| {
            sent2.set(sent2.get() + 1);
            if sent2.get() > 300 && (x.src_port == dead || x.dst_port == dead) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        check_transfer(&mut p, c, s, 4 << 20, seed);
        let cm = *p.client.conn(c).unwrap().mptcp_counters().unwrap();
        let sm = *p.server.conn(s).unwrap().mptcp_counters().unwrap();
        assert!(
            cm.reinjected_bytes > 0 && sm.reinjected_bytes > 0,
            "seed {seed}: client {cm:?} server {sm:?}"
        );
    }
}

/// The server's limit (1 additional subflow) refuses the client's third subflow with
/// MP_TCPRST "administratively prohibited"; the connection keeps its two.
#[test]
fn a_join_over_the_limit_is_refused_and_counted() {
    let mut p = ndiff(3, 8, 1);
    let (c, s) = greet(&mut p);
    p.advance(Duration::from_secs(2));
    let st = p.server.stats();
    assert_eq!(st.mptcp_join_rejected, 1, "{st:?}");
    assert_eq!(st.mptcp_joins_accepted, 1);
    let rst_reasons: Vec<_> = (0..p.log.len())
        .filter(|&i| !p.log[i].0.to_server && p.log[i].0.flags.rst())
        .flat_map(|i| {
            wire::options(&p.logged_repr(i).extra)
                .filter_map(|o| match o {
                    Ok(MptcpOption::MpTcpRst(r)) => Some(r.reason),
                    _ => None,
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(rst_reasons, vec![ResetReason::AdministrativelyProhibited]);
    assert_eq!(p.client.conn(c).unwrap().mptcp_subflows(), 2);
    assert_eq!(p.server.conn(s).unwrap().mptcp_subflows(), 2);
    check_transfer(&mut p, c, s, 1 << 20, 41);
}

/// Flips a bit of the MP_JOIN HMAC in segments matching `which` (SYN/ACK or third
/// ACK), as an attacker without the keys would get it wrong.
fn corrupt_join(p: &mut Pair, synack: bool) {
    p.set_rewrite(move |_, bytes| {
        let copy = bytes.clone();
        let (ip, mut tcp) = parse_tcp_packet(&copy).unwrap();
        let mut extra = brisk_wire::ExtraOptions::new();
        let mut hit = false;
        for (kind, data) in tcp.extra.iter() {
            if kind == wire::KIND {
                if let Ok(MptcpOption::MpJoin(j)) = MptcpOption::parse(data) {
                    let j2 = match j {
                        MpJoin::SynAck {
                            backup,
                            address_id,
                            truncated_hmac,
                            nonce,
                        } if synack => Some(MpJoin::SynAck {
                            backup,
                            address_id,
                            truncated_hmac: truncated_hmac ^ 1,
                            nonce,
                        }),
                        MpJoin::Ack { mut hmac } if !synack => {
                            hmac[7] ^= 0x40;
                            Some(MpJoin::Ack { hmac })
                        }
                        _ => None,
                    };
                    if let Some(j2) = j2 {
                        wire::push(&mut extra, &MptcpOption::MpJoin(j2)).unwrap();
                        hit = true;
                        continue;
                    }
                }
            }
            extra.push(kind, data).unwrap();
        }
        if hit {
            tcp.extra = extra;
            let mut out = Vec::new();
            emit_tcp_packet(&ip, &tcp, &mut out);
            *bytes = out;
        }
    });
}

#[test]
fn bad_join_hmacs_reset_the_subflow_and_are_counted() {
    for synack in [true, false] {
        let mut p = ndiff(2, 2, 2);
        corrupt_join(&mut p, synack);
        let (c, s) = greet(&mut p);
        p.advance(Duration::from_secs(3));
        let cm = *p.client.conn(c).unwrap().mptcp_counters().unwrap();
        let sm = *p.server.conn(s).unwrap().mptcp_counters().unwrap();
        if synack {
            assert_eq!(cm.join_synack_bad, 1, "{cm:?}");
            assert_eq!(cm.join_synack_rx, 0);
        } else {
            assert_eq!(sm.join_ack_bad, 1, "{sm:?}");
            assert_eq!(sm.join_ack_rx, 0);
        }
        // The subflow is gone on both sides; the connection carries on with one.
        assert_eq!(
            p.client.conn(c).unwrap().mptcp_subflows(),
            1,
            "synack {synack}"
        );
        assert_eq!(
            p.server.conn(s).unwrap().mptcp_subflows(),
            1,
            "synack {synack}"
        );
        let rst_with_reason = p.log.iter().enumerate().any(|(i, (x, _))| {
            x.flags.rst()
                && wire::options(&p.logged_repr(i).extra).any(|o| {
                    matches!(o, Ok(MptcpOption::MpTcpRst(r)) if r.reason == ResetReason::MptcpError)
                })
        });
        assert!(rst_with_reason, "synack {synack}: a RST with MP_TCPRST");
        p.set_rewrite(|_, _| {});
        check_transfer(&mut p, c, s, 1 << 20, 51);
        let [slots, table, ..] = p.server.footprint();
        assert!(slots <= 2 && table == 1, "slots {slots} table {table}");
    }
}

/// A peer flooding join SYNs with the connection's real token from many ports: the
/// subflow limit holds, the rest are refused (RSTs bounded), the table stays small.
#[test]
fn a_flood_of_join_syns_with_the_real_token_stays_bounded() {
    use super::handshake::craft;
    use brisk_wire::{Flags, SeqNum, TcpRepr};
    let mut p = ndiff(1, 2, 2);
    let (c, s) = p.establish();
    p.advance(Duration::from_millis(100));
    let (_, server_key) = p.client.conn(c).unwrap().mptcp_keys().unwrap();
    let token = brisk_wire::mptcp::crypto::token(server_key);
    for i in 0..5_000u32 {
        let mut tcp = TcpRepr {
            src_port: 1_000 + (i % 60_000) as u16,
            dst_port: PORT,
            seq: SeqNum(i),
            flags: Flags::SYN,
            window: 65_535,
            mss: Some(1460),
            ..TcpRepr::default()
        };
        wire::push(
            &mut tcp.extra,
            &MptcpOption::MpJoin(MpJoin::Syn {
                backup: false,
                address_id: 1,
                token,
                nonce: i,
            }),
        )
        .unwrap();
        let src = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
        p.inject(true, craft(src, SERVER_IP, &tcp));
    }
    p.advance(Duration::from_millis(50));
    let st = p.server.stats();
    assert_eq!(st.mptcp_joins_accepted, 2, "{st:?}");
    assert_eq!(st.mptcp_join_rejected, 4_998);
    let server = p.server.conn(s).unwrap();
    assert!(server.mptcp_subflows() <= 3);
    let [_, table, _, _, replies] = p.server.footprint();
    assert!(table <= 3, "table {table}");
    assert!(replies <= 1024, "replies {replies}");
    let _ = SocketAddr::new(SERVER_IP, PORT);
}

/// `acked_offset` of an MPTCP connection is the Data ACK (issue 32; brisk-sim's
/// workload completion and record latencies read it): over two subflows it is at
/// every step the bytes written less what the data level holds (`send_buffered`),
/// `sent_offset` lies between it and the bytes written, and at the end it is every
/// byte, though the first subflow carried only part of them.
#[test]
fn acked_offset_is_the_data_ack() {
    let mut p = ndiff(2, 2, 2);
    let (c, s) = establish_joined(&mut p, 2);
    let n = 500_000usize;
    let up = pattern(n, 7);
    let (mut sent, mut got) = (0usize, Vec::new());
    let end = p.now + Duration::from_secs(60);
    while got.len() < n && p.now < end {
        if sent < n {
            sent += p.client.conn_mut(c).unwrap().write(&up[sent..]);
        }
        Pair::read_all(&mut p.server, s, &mut got);
        let k = p.client.conn(c).unwrap();
        let acked = k.acked_offset();
        assert_eq!(acked + k.send_buffered() as u64, sent as u64);
        assert!(acked <= k.sent_offset() && k.sent_offset() <= sent as u64);
        if !p.step_until(end) {
            break;
        }
    }
    assert_eq!(sha(&got), sha(&up));
    let done = p.run_until(Duration::from_secs(5), |p| {
        p.client.conn(c).unwrap().acked_offset() == n as u64
    });
    let k = p.client.conn(c).unwrap();
    assert!(done, "Data ACK at {} of {n}", k.acked_offset());
    assert_eq!(k.send_buffered(), 0);
    let info = k.mptcp_subflow_info();
    assert!(
        info.len() == 2 && info.iter().all(|x| x.2 > 0 && x.2 < n as u64),
        "both subflows carried part: {info:?}"
    );
}

/// `abort` on a connection with two subflows resets both with MP_FASTCLOSE (RFC 8684
/// §3.5, Linux `mptcp_do_fastclose`), also when the application reads its events
/// after every packet the endpoint sends, as brisk-emu's stack does: the endpoint
/// reaps a connection once `Closed` is seen, so the connection must hold that event
/// until the last subflow's RST is out. Before, only the first subflow's RST left;
/// when Linux answered that one with a challenge ACK (RFC 5961: a segment still in
/// flight on that path), it never learnt of the fast close.
#[test]
fn abort_resets_every_subflow_with_mp_fastclose_before_closed_is_seen() {
    let mut p = ndiff(2, 2, 2);
    let (c, s) = establish_joined(&mut p, 2);
    let data = pattern(200_000, 9);
    let (up, _) = both_ways(&mut p, c, s, &data, &[], Duration::from_secs(20));
    assert_eq!(up.len(), data.len());
    let ports: Vec<u16> = (0..2).map(|i| client_port(&p, c, i)).collect();
    let (_, server_key) = p.client.conn(c).unwrap().mptcp_keys().unwrap();
    p.client.conn_mut(c).unwrap().abort();
    let mut fastclosed = Vec::new();
    let mut closed_after = None;
    let mut buf = Vec::new();
    for k in 0..16 {
        if p.client.poll_transmit(p.now, &mut buf).is_some() {
            let (_, tcp) = parse_tcp_packet(&buf).unwrap();
            let fc = wire::options(&tcp.extra).any(|o| {
                matches!(o, Ok(MptcpOption::MpFastclose { receiver_key }) if receiver_key == server_key)
            });
            if tcp.flags.rst() && fc {
                fastclosed.push(tcp.src_port);
            }
        }
        // The application looks at its events between two packets.
        while let Some((h, ev)) = p.client.poll_event() {
            if h == c && matches!(ev, crate::event::Event::Closed(_)) {
                closed_after.get_or_insert(k);
            }
        }
    }
    fastclosed.sort_unstable();
    let mut want = ports.clone();
    want.sort_unstable();
    assert_eq!(fastclosed, want, "a RST with MP_FASTCLOSE on each subflow");
    assert!(closed_after.is_some(), "the application saw Closed");
    assert!(p.client.conn(c).is_none(), "and the connection was reaped");
}

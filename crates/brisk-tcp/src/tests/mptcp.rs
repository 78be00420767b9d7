//! MPTCP connections (RFC 8684) between two brisk endpoints over one subflow: the
//! MP_CAPABLE handshake, DSS transfers under loss and reordering checked by SHA-256,
//! DATA_FIN closes, MP_FASTCLOSE, each fallback case (§3.7) and hostile DSS options.

use super::harness::*;
use crate::config::Config;
use crate::endpoint::ConnHandle;
use crate::event::{ConnError, Event};
use crate::mptcp::meta::Fallback;
use crate::mptcp::MptcpConfig;
use brisk_time::Duration;
use brisk_wire::mptcp::{self as wire, DataSeq, MpCapableForm, MptcpOption};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet, ExtraOptions, TcpRepr};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

fn mp_config(checksum: bool) -> Config {
    Config {
        mptcp: Some(Box::new(MptcpConfig {
            checksum,
            ..MptcpConfig::default()
        })),
        send_buffer: 1 << 20,
        recv_buffer: 1 << 20,
        ..Config::default()
    }
}

fn mp_pair(latency_ms: u64, checksum: bool) -> Pair {
    Pair::with_configs(
        Duration::from_millis(latency_ms),
        mp_config(checksum),
        mp_config(false),
    )
}

/// The MPTCP options of logged packet `i`.
fn mptcp_opts(p: &Pair, i: usize) -> Vec<MptcpOption> {
    let tcp = p.logged_repr(i);
    wire::options(&tcp.extra).map(|o| o.unwrap()).collect()
}

/// Rewrites a packet's TCP header through `f` and emits it again (checksums redone).
fn rewrite_tcp(bytes: &mut Vec<u8>, f: impl FnOnce(&mut TcpRepr<'_>)) {
    let copy = bytes.clone();
    let (ip, mut tcp) = parse_tcp_packet(&copy).unwrap();
    f(&mut tcp);
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &tcp, &mut out);
    *bytes = out;
}

/// `extra` without its MPTCP options.
fn strip_mptcp(extra: &ExtraOptions) -> ExtraOptions {
    let mut out = ExtraOptions::new();
    for (kind, data) in extra.iter() {
        if kind != wire::KIND {
            out.push(kind, data).unwrap();
        }
    }
    out
}

/// Sends `up` client→server and `down` server→client at once, reading both ends,
/// until all arrived or `max` passes. Returns (server got, client got).
fn both_ways(
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

fn sha(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

#[test]
fn mp_capable_handshake_exchanges_keys_v1() {
    let mut p = mp_pair(10, false);
    let (c, s) = p.establish();
    let cc = p.client.conn(c).unwrap();
    let sc = p.server.conn(s).unwrap();
    assert!(cc.is_mptcp() && sc.is_mptcp());
    let (ck, cr) = cc.mptcp_keys().unwrap();
    let (sk, sr) = sc.mptcp_keys().unwrap();
    assert_eq!((ck, cr), (sr, sk), "each side holds the other's key");
    assert_ne!(ck, sk);
    // SYN: MP_CAPABLE without key; SYN-ACK: the server's key; third ACK: both.
    let syn = mptcp_opts(&p, 0);
    assert!(matches!(syn[..], [MptcpOption::MpCapable(m)] if m.form == MpCapableForm::Syn));
    let synack = mptcp_opts(&p, 1);
    assert!(
        matches!(synack[..], [MptcpOption::MpCapable(m)] if m.form == MpCapableForm::SynAck { sender_key: sk })
    );
    let ack = mptcp_opts(&p, 2);
    assert!(matches!(ack[..], [MptcpOption::MpCapable(m)]
        if m.form == MpCapableForm::Ack { sender_key: ck, receiver_key: sk }));
    // Deterministic: the same pair again makes the same keys.
    let mut q = mp_pair(10, false);
    let (c2, _) = q.establish();
    assert_eq!(q.client.conn(c2).unwrap().mptcp_keys(), Some((ck, cr)));
}

#[test]
fn first_data_carries_mp_capable_with_length_then_dss() {
    let mut p = mp_pair(10, true);
    let (c, s) = p.establish();
    let data = pattern(5000, 3);
    let (got, _) = both_ways(&mut p, c, s, &data, &[], Duration::from_secs(5));
    assert!(got == data);
    // The client's first data segment: MP_CAPABLE with the data-level length and checksum.
    let first = p
        .log
        .iter()
        .position(|(x, _)| x.to_server && x.len > 0)
        .unwrap();
    let o = mptcp_opts(&p, first);
    match o[..] {
        [MptcpOption::MpCapable(m)] => match m.form {
            MpCapableForm::AckData {
                data_len, checksum, ..
            } => {
                assert_eq!(usize::from(data_len), p.log[first].0.len);
                assert!(checksum.is_some(), "checksums were asked for");
            }
            f => panic!("first data carries {f:?}"),
        },
        ref o => panic!("first data carries {o:?}"),
    }
    // Later data: a DSS with a 64-bit Data ACK and a mapping with checksum.
    let later = p
        .log
        .iter()
        .enumerate()
        .filter(|(_, (x, _))| x.to_server && x.len > 0)
        .nth(2)
        .unwrap()
        .0;
    match mptcp_opts(&p, later)[..] {
        [MptcpOption::Dss(d)] => {
            assert!(matches!(d.data_ack, Some(DataSeq::Bits64(_))));
            let m = d.mapping.unwrap();
            assert!(m.checksum.is_some());
        }
        ref o => panic!("later data carries {o:?}"),
    }
    let sc = p.server.conn(s).unwrap().mptcp_counters().unwrap();
    assert_eq!(sc.csum_bad, 0);
    assert!(sc.map.new + sc.map.extended > 0);
}

/// No segment exceeds the MTU: the subflow's MSS leaves room for the DSS beside
/// timestamps (40 bytes of options at most).
#[test]
fn segments_fit_the_mss_with_dss_and_timestamps() {
    let mut p = mp_pair(10, true);
    let (c, s) = p.establish();
    let data = pattern(200_000, 4);
    let (got, _) = both_ways(&mut p, c, s, &data, &[], Duration::from_secs(10));
    assert!(got == data);
    let mss = usize::from(Config::default().mss);
    for (x, bytes) in &p.log {
        // IPv4 20 + TCP 20 + options: at most MSS + 40 on the wire.
        assert!(
            bytes.len() <= mss + 40,
            "{} bytes (payload {})",
            bytes.len(),
            x.len
        );
    }
}

fn lossy_transfer(seed: u64, checksum: bool, n: usize) {
    let mut p = mp_pair(15, checksum);
    let (c, s) = p.establish();
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    p.set_hook(move |x| {
        if x.index < 3 {
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
    let up = pattern(n, seed);
    let down = pattern(n, seed + 1000);
    let (got_up, got_down) = both_ways(&mut p, c, s, &up, &down, Duration::from_secs(600));
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
    let cc = p.client.conn(c).unwrap();
    let sc = p.server.conn(s).unwrap();
    assert!(cc.is_mptcp() && sc.is_mptcp(), "seed {seed}: no fallback");
    for m in [cc.mptcp_counters().unwrap(), sc.mptcp_counters().unwrap()] {
        assert_eq!(
            m.csum_bad + m.map_refused + m.no_dss_reset + m.opt_no_room,
            0,
            "{m:?}"
        );
    }
    assert!(cc.info().retransmits > 0, "seed {seed}: the loss was felt");
}

#[test]
fn ten_megabytes_each_way_under_loss_and_reordering_sha256() {
    for seed in [1, 2, 3] {
        lossy_transfer(seed, false, 10 << 20);
    }
}

#[test]
fn lossy_transfer_with_dss_checksums() {
    for seed in [11, 12] {
        lossy_transfer(seed, true, 2 << 20);
    }
}

fn closed_ok(events: &[(ConnHandle, Event)], h: ConnHandle) -> bool {
    events.contains(&(h, Event::Closed(Ok(()))))
}

/// DATA_FIN each way (§3.3.3), then the subflow FINs: both ends close cleanly, in
/// both orders.
#[test]
fn data_fin_close_both_orders() {
    for client_first in [true, false] {
        let mut p = mp_pair(10, false);
        let (c, s) = p.establish();
        let data = pattern(300_000, 5);
        let (got, back) = both_ways(&mut p, c, s, &data, &data[..1000], Duration::from_secs(10));
        assert!(got == data && back[..] == data[..1000]);
        let (first, second) = if client_first {
            (true, false)
        } else {
            (false, true)
        };
        for is_client in [first, second] {
            if is_client {
                p.client.conn_mut(c).unwrap().close();
            } else {
                p.server.conn_mut(s).unwrap().close();
            }
            p.advance(Duration::from_millis(500));
        }
        assert!(p.server_has(Event::PeerClosed), "server saw the DATA_FIN");
        assert!(p.client_has(Event::PeerClosed), "client saw the DATA_FIN");
        p.advance(Duration::from_secs(120));
        assert!(
            closed_ok(&p.client_events, c),
            "client closed: {:?}",
            p.client_events
        );
        assert!(
            closed_ok(&p.server_events, s),
            "server closed: {:?}",
            p.server_events
        );
        // A DATA_FIN was sent each way, and subflow FINs only after it.
        let fin_dss = |to_server: bool| {
            p.log.iter().position(|(x, b)| {
                x.to_server == to_server && {
                    let (_, t) = parse_tcp_packet(b).unwrap();
                    let fin = wire::options(&t.extra)
                        .any(|o| matches!(o, Ok(MptcpOption::Dss(d)) if d.data_fin));
                    fin
                }
            })
        };
        let tcp_fin = |to_server: bool| {
            p.log
                .iter()
                .position(|(x, _)| x.to_server == to_server && x.flags.fin())
        };
        for dir in [true, false] {
            let df = fin_dss(dir).expect("a DATA_FIN");
            let tf = tcp_fin(dir).expect("a subflow FIN");
            assert!(df < tf, "DATA_FIN before the subflow FIN");
        }
    }
}

#[test]
fn abort_sends_mp_fastclose_and_the_peer_resets() {
    let mut p = mp_pair(10, false);
    let (c, s) = p.establish();
    let data = pattern(10_000, 6);
    let _ = both_ways(&mut p, c, s, &data, &[], Duration::from_secs(5));
    let (_, server_key) = p.client.conn(c).unwrap().mptcp_keys().unwrap();
    p.client.conn_mut(c).unwrap().abort();
    p.advance(Duration::from_millis(100));
    let rst = p
        .log
        .iter()
        .rposition(|(x, _)| x.to_server && x.flags.rst())
        .expect("an RST");
    let o = mptcp_opts(&p, rst);
    assert!(o.contains(&MptcpOption::MpFastclose {
        receiver_key: server_key
    }));
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

fn check_fallback_transfer(p: &mut Pair, c: ConnHandle, s: ConnHandle, seed: u64) {
    let up = pattern(500_000, seed);
    let down = pattern(300_000, seed + 1);
    let (a, b) = both_ways(p, c, s, &up, &down, Duration::from_secs(60));
    assert_eq!(sha(&a), sha(&up));
    assert_eq!(sha(&b), sha(&down));
    // Plain TCP after fallback: no MPTCP option on anything sent later.
    let last = p.log.len() - 1;
    assert!(mptcp_opts(p, last).is_empty());
}

#[test]
fn fallback_peer_without_mptcp() {
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        mp_config(false),
        Config::default(),
    );
    let (c, s) = p.establish();
    let cc = p.client.conn(c).unwrap();
    assert!(!cc.is_mptcp());
    assert_eq!(cc.mptcp_fallback(), Some(Fallback::NoMpCapableSynAck));
    // The plain server saw an MP_CAPABLE SYN and answered without it.
    assert!(mptcp_opts(&p, 1).is_empty());
    check_fallback_transfer(&mut p, c, s, 20);
    // And a plain client to an MPTCP listener gets plain TCP.
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        Config::default(),
        mp_config(false),
    );
    let (c, s) = p.establish();
    assert!(!p.server.conn(s).unwrap().is_mptcp());
    assert_eq!(p.server.conn(s).unwrap().mptcp_fallback(), None);
    check_fallback_transfer(&mut p, c, s, 21);
}

#[test]
fn fallback_when_synack_option_is_stripped() {
    let mut p = mp_pair(10, false);
    p.set_rewrite(|x, b| {
        if !x.to_server && x.flags.syn() {
            rewrite_tcp(b, |t| t.extra = strip_mptcp(&t.extra));
        }
    });
    let (c, s) = p.establish();
    assert_eq!(
        p.client.conn(c).unwrap().mptcp_fallback(),
        Some(Fallback::NoMpCapableSynAck)
    );
    // The server, MPTCP after its SYN-ACK, falls back on the plain third ACK.
    assert_eq!(
        p.server.conn(s).unwrap().mptcp_fallback(),
        Some(Fallback::NoMpCapableAck)
    );
    check_fallback_transfer(&mut p, c, s, 22);
}

#[test]
fn fallback_when_third_ack_and_first_data_lose_the_option() {
    let mut p = mp_pair(10, false);
    // Every client→server MP_CAPABLE after the SYN is stripped (third ACK, first data).
    p.set_rewrite(|x, b| {
        if x.to_server && !x.flags.syn() {
            rewrite_tcp(b, |t| {
                let has_mpc =
                    wire::options(&t.extra).any(|o| matches!(o, Ok(MptcpOption::MpCapable(_))));
                if has_mpc {
                    t.extra = strip_mptcp(&t.extra);
                }
            });
        }
    });
    let c = p.connect();
    p.client.conn_mut(c).unwrap().write(&pattern(3000, 9));
    p.drive();
    let s = p.server.accept(PORT).unwrap();
    assert_eq!(
        p.server.conn(s).unwrap().mptcp_fallback(),
        Some(Fallback::NoMpCapableAck)
    );
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert!(got == pattern(3000, 9));
    check_fallback_transfer(&mut p, c, s, 23);
    // The client learnt it from the server's ACKs without a DSS.
    assert_eq!(
        p.client.conn(c).unwrap().mptcp_fallback(),
        Some(Fallback::NoDss)
    );
}

#[test]
fn fallback_when_server_data_arrives_without_dss() {
    let mut p = mp_pair(10, false);
    // A middlebox strips MPTCP options from everything the server sends after its SYN-ACK.
    p.set_rewrite(|x, b| {
        if !x.to_server && !x.flags.syn() {
            rewrite_tcp(b, |t| t.extra = strip_mptcp(&t.extra));
        }
    });
    let (c, s) = p.establish();
    // The server speaks first: its data arrives without a DSS before the client is
    // fully established.
    p.server.conn_mut(s).unwrap().write(&pattern(2000, 30));
    p.drive();
    assert_eq!(
        p.client.conn(c).unwrap().mptcp_fallback(),
        Some(Fallback::NoDss)
    );
    let mut got = Vec::new();
    Pair::read_all(&mut p.client, c, &mut got);
    assert!(got == pattern(2000, 30));
    // The server falls back on the client's data without a DSS.
    check_fallback_transfer(&mut p, c, s, 24);
    assert_eq!(
        p.server.conn(s).unwrap().mptcp_fallback(),
        Some(Fallback::NoDss)
    );
}

/// Injects a copy of the last client data segment, its DSS changed by `f`.
fn inject_hostile_dss(p: &mut Pair, f: impl Fn(&mut wire::Dss)) {
    let (_, bytes) = p
        .log
        .iter()
        .rev()
        .find(|(x, b)| {
            x.to_server && x.len > 0 && {
                let (_, t) = parse_tcp_packet(b).unwrap();
                let mapped = wire::options(&t.extra)
                    .any(|o| matches!(o, Ok(MptcpOption::Dss(d)) if d.mapping.is_some()));
                mapped
            }
        })
        .expect("a DSS-mapped data segment")
        .clone();
    let mut bytes = bytes;
    rewrite_tcp(&mut bytes, |t| {
        let mut d = wire::options(&t.extra)
            .find_map(|o| match o {
                Ok(MptcpOption::Dss(d)) => Some(d),
                _ => None,
            })
            .unwrap();
        f(&mut d);
        let mut extra = strip_mptcp(&t.extra);
        wire::push(&mut extra, &MptcpOption::Dss(d)).unwrap();
        t.extra = extra;
    });
    p.inject(true, bytes);
    p.drive();
}

#[test]
fn hostile_mapping_outside_the_window_is_refused_and_counted() {
    let mut p = mp_pair(10, false);
    let (c, s) = p.establish();
    let _ = both_ways(
        &mut p,
        c,
        s,
        &pattern(20_000, 40),
        &[],
        Duration::from_secs(5),
    );
    inject_hostile_dss(&mut p, |d| {
        let m = d.mapping.as_mut().unwrap();
        m.dsn = DataSeq::Bits64(m.dsn.value().wrapping_add(1 << 40));
    });
    // The connection is gone (reset); the endpoint counted the refusal.
    assert!(p.server.conn(s).is_none());
    assert_eq!(p.server.stats().mptcp_refused, 1);
    // As Linux (`MPTCP_RST_EMPTCP`): the only subflow is reset.
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

#[test]
fn hostile_bad_dss_checksum_is_refused_and_counted() {
    let mut p = mp_pair(10, true);
    let (c, s) = p.establish();
    let _ = both_ways(
        &mut p,
        c,
        s,
        &pattern(20_000, 41),
        &[],
        Duration::from_secs(5),
    );
    inject_hostile_dss(&mut p, |d| {
        let m = d.mapping.as_mut().unwrap();
        m.checksum = m.checksum.map(|c| c ^ 0x0101);
    });
    assert!(p.server.conn(s).is_none());
    assert_eq!(p.server.stats().mptcp_refused, 1);
    assert!(p
        .server_events
        .contains(&(s, Event::Closed(Err(ConnError::Reset)))));
}

#[test]
fn plain_config_sends_no_mptcp_option() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    let _ = both_ways(
        &mut p,
        c,
        s,
        &pattern(50_000, 50),
        &[],
        Duration::from_secs(5),
    );
    for i in 0..p.log.len() {
        assert!(mptcp_opts(&p, i).is_empty());
    }
    assert!(p.client.conn(c).unwrap().mptcp_counters().is_none());
}

/// A listener answering with SYN cookies keeps no state for the MP_CAPABLE SYN, so
/// the cookie SYN-ACK has no MP_CAPABLE and the client falls back (Linux can do MPTCP
/// with cookies, `subflow_init_req_cookie_join_save` / `mptcp_token_new_request`;
/// brisk cannot yet).
#[test]
fn syn_cookies_fall_back_to_plain_tcp() {
    use crate::endpoint::{Endpoint, EndpointConfig};
    let mut p = mp_pair(10, false);
    let scfg = EndpointConfig {
        isn_secret: [2; 16],
        rng_seed: 2,
        syncookies: true,
        syncookies_always: true,
        ..EndpointConfig::seeded([7; 16], 7)
    };
    let mut server = Endpoint::new(SERVER_IP, scfg);
    server.listen(PORT, 128, mp_config(false)).unwrap();
    p.server = server;
    let (c, s) = p.establish();
    assert_eq!(p.server.stats().syncookies_sent, 1);
    assert_eq!(
        p.client.conn(c).unwrap().mptcp_fallback(),
        Some(Fallback::NoMpCapableSynAck)
    );
    assert!(!p.server.conn(s).unwrap().is_mptcp());
    check_fallback_transfer(&mut p, c, s, 25);
}

/// An MP_JOIN SYN to an MPTCP listener is refused with a RST carrying MP_TCPRST
/// reason 1 (RFC 8684 §3.2; Linux `subflow_check_req` on an unknown token): no
/// connection takes a second subflow yet. It is counted, creates no connection and
/// takes no backlog slot; a flood stays within the reply queue's bound. A plain
/// listener treats the same SYN as any SYN (the option means nothing to it).
#[test]
fn join_syns_to_an_mptcp_listener_are_refused_with_mp_tcprst() {
    use super::handshake::craft;
    use crate::endpoint::{Endpoint, EndpointConfig};
    use brisk_time::Instant;
    use brisk_wire::mptcp::{MpJoin, MpTcpRst, ResetReason};
    use brisk_wire::{Flags, SeqNum};
    use std::net::{IpAddr, Ipv4Addr};

    let server_ip = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
    let join_syn = |i: u32, port: u16| {
        let mut tcp = TcpRepr {
            src_port: 40_000 + i as u16,
            dst_port: port,
            seq: SeqNum(1000 + i),
            flags: Flags::SYN,
            window: 65_535,
            mss: Some(1460),
            ..TcpRepr::default()
        };
        let join = MptcpOption::MpJoin(MpJoin::Syn {
            backup: false,
            address_id: 1,
            token: 0x1234_5678 ^ i,
            nonce: i,
        });
        wire::push(&mut tcp.extra, &join).unwrap();
        craft(IpAddr::V4(Ipv4Addr::new(198, 18, 1, 1)), server_ip, &tcp)
    };
    let now = Instant::from_millis(1);
    for (mptcp, port) in [(true, 80u16), (false, 81)] {
        let mut ep = Endpoint::new(server_ip, EndpointConfig::seeded([3; 16], 3));
        let cfg = if mptcp {
            mp_config(false)
        } else {
            Config::default()
        };
        ep.listen(port, 16, cfg).unwrap();
        ep.handle_packet(now, &join_syn(0, port));
        let mut buf = Vec::new();
        ep.poll_transmit(now, &mut buf).expect("an answer");
        let (_, tcp) = parse_tcp_packet(&buf).unwrap();
        if mptcp {
            assert!(tcp.flags.rst() && tcp.flags.ack(), "{:?}", tcp.flags);
            assert_eq!(tcp.ack, SeqNum(1001));
            let opts: Vec<_> = wire::options(&tcp.extra).map(Result::unwrap).collect();
            assert_eq!(
                opts,
                vec![MptcpOption::MpTcpRst(MpTcpRst {
                    transient: false,
                    reason: ResetReason::MptcpError
                })]
            );
            assert_eq!(ep.stats().mptcp_joins_refused, 1);
            assert_eq!(ep.connection_count(), 0);
            // A flood: every join counted, no connection, the reply queue bounded.
            for i in 1..10_000 {
                ep.handle_packet(now, &join_syn(i, port));
            }
            assert_eq!(ep.stats().mptcp_joins_refused, 10_000);
            assert_eq!(ep.connection_count(), 0);
            let mut sent = 0;
            while ep.poll_transmit(now, &mut buf).is_some() {
                sent += 1;
            }
            assert!(sent < 10_000, "{sent} RSTs queued for 10 000 joins");
        } else {
            assert!(tcp.flags.syn() && tcp.flags.ack(), "{:?}", tcp.flags);
            assert!(
                tcp.extra.is_empty(),
                "a plain listener sends no MPTCP option"
            );
            assert_eq!(ep.stats().mptcp_joins_refused, 0);
            assert_eq!(ep.connection_count(), 1);
        }
    }
}

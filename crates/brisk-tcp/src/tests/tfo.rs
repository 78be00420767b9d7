//! TCP Fast Open wired (RFC 7413; docs/mechanisms/tfo.md), brisk against brisk
//! through real packets: the first connection gets a cookie, the second carries its
//! request on the SYN, which the server application reads before the third ACK and
//! answers one round trip earlier; the fallbacks (a SYN-ACK that acknowledges only
//! the SYN, SYN-data dropped by a middlebox and the negative cache); forged cookies
//! and cookies for another address refused and counted; the pending-request bound
//! under a SYN-data flood; Fast Open with SYN cookies; every stream's SHA-256 intact.

use super::handshake::craft;
use super::harness::*;
use crate::config::Config;
use crate::endpoint::{ConnHandle, Endpoint, EndpointConfig};
use crate::event::Event;
use crate::tfo::TfoConfig;
use brisk_time::{Duration, Instant};
use brisk_wire::fastopen::{self, FastOpen, FastOpenCookie};
use brisk_wire::{parse_tcp_packet, Flags, SeqNum, TcpRepr, Timestamps};
use sha2::{Digest, Sha256};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

fn tfo_config(max_pending: u32) -> Config {
    Config {
        fastopen: Some(Box::new(TfoConfig::both(max_pending))),
        ..Config::default()
    }
}

fn sha(b: &[u8]) -> [u8; 32] {
    Sha256::digest(b).into()
}

/// One request/response exchange on a new connection: the client writes `req`
/// before its SYN goes out (as Linux's `TCP_FASTOPEN_CONNECT` defers the SYN to the
/// first write), the server application answers with `resp` once it has read the
/// whole request. Returns the client's handle, the time from `connect` to the first
/// response byte, and the bytes each side read.
struct Exchange {
    client: ConnHandle,
    first_byte: Duration,
    server_got: Vec<u8>,
    client_got: Vec<u8>,
    /// The server read the whole request while its connection was in SYN-RECEIVED.
    read_in_syn_rcvd: bool,
}

fn exchange(p: &mut Pair, req: &[u8], resp: &[u8]) -> Exchange {
    let start = p.now;
    let c = p.connect();
    let n = p.client.conn_mut(c).unwrap().write(req);
    assert_eq!(n, req.len());
    let mut server: Option<ConnHandle> = None;
    let mut server_got = Vec::new();
    let mut client_got = Vec::new();
    let mut answered = false;
    let mut first_byte = None;
    let mut read_in_syn_rcvd = false;
    let done = p.run_until(Duration::from_secs(120), |p| {
        if server.is_none() {
            server = p.server.accept(PORT);
        }
        if let Some(s) = server {
            let before = server_got.len();
            Pair::read_all(&mut p.server, s, &mut server_got);
            if server_got.len() > before && server_got.len() == req.len() && !answered {
                read_in_syn_rcvd =
                    p.server.conn(s).unwrap().state() == crate::conn::State::SynReceived;
                let conn = p.server.conn_mut(s).unwrap();
                assert_eq!(conn.write(resp), resp.len());
                answered = true;
            }
        }
        let before = client_got.len();
        Pair::read_all(&mut p.client, c, &mut client_got);
        if client_got.len() > before && first_byte.is_none() {
            first_byte = Some(p.now - start);
        }
        client_got.len() == resp.len() && answered
    });
    if !done {
        for (seen, _) in p.log.iter().rev().take(40).rev() {
            eprintln!("{seen:?}");
        }
        eprintln!(
            "server_got {} client_got {} answered {answered}",
            server_got.len(),
            client_got.len()
        );
    }
    assert!(done, "exchange did not finish");
    Exchange {
        client: c,
        first_byte: first_byte.unwrap(),
        server_got,
        client_got,
        read_in_syn_rcvd,
    }
}

/// The client's SYNs in the log (index into `p.log`).
fn syns(p: &Pair, to_server: bool) -> Vec<usize> {
    (0..p.log.len())
        .filter(|&i| {
            let s = p.log[i].0;
            s.to_server == to_server && s.flags.contains(Flags::SYN)
        })
        .collect()
}

fn tfo_opt(p: &Pair, i: usize) -> Option<FastOpen> {
    fastopen::parse(&p.logged_repr(i).extra).map(|r| r.unwrap())
}

#[test]
fn second_connection_carries_its_request_on_the_syn_and_saves_a_round_trip() {
    // Several paths and request sizes (the SYN takes at most MSS - 40 bytes).
    for (lat_ms, req_len, resp_len, seed) in [
        (5u64, 300usize, 20_000usize, 1u64),
        (20, 1_420, 100_000, 2),
        (50, 3_000, 5_000, 3),
        (100, 1, 1, 4),
    ] {
        let latency = Duration::from_millis(lat_ms);
        let rtt = latency * 2;
        let mut p = Pair::with_configs(latency, tfo_config(16), tfo_config(16));
        let req = pattern(req_len, seed);
        let resp = pattern(resp_len, seed + 100);

        // First connection: a cookie request, no data on the SYN.
        let first_log = p.log.len();
        let e1 = exchange(&mut p, &req, &resp);
        let syn1 = syns(&p, true)[0];
        assert!(syn1 >= first_log);
        assert_eq!(tfo_opt(&p, syn1), Some(FastOpen::REQUEST));
        assert_eq!(p.log[syn1].0.len, 0, "no data beside a cookie request");
        let synack1 = syns(&p, false)[0];
        let cookie = tfo_opt(&p, synack1)
            .and_then(|o| o.cookie)
            .expect("a cookie");
        assert_eq!(cookie.len(), 8);
        assert_eq!(p.client.fastopen_cached_cookie(SERVER_IP), Some(cookie));
        assert_eq!(sha(&e1.server_got), sha(&req));
        assert_eq!(sha(&e1.client_got), sha(&resp));
        assert!(!e1.read_in_syn_rcvd);
        // Without data on the SYN the first response byte comes after two RTTs.
        assert_eq!(e1.first_byte, rtt * 2, "latency {lat_ms} ms");
        p.advance(Duration::from_secs(1));

        // Second connection: the cookie and the request's first bytes on the SYN.
        let mark = p.log.len();
        let e2 = exchange(&mut p, &req, &resp);
        let syn2 = *syns(&p, true).iter().find(|&&i| i >= mark).unwrap();
        assert_eq!(tfo_opt(&p, syn2), Some(FastOpen::with_cookie(cookie)));
        let on_syn = req_len.min(1460 - 40);
        assert_eq!(p.log[syn2].0.len, on_syn, "latency {lat_ms} ms");
        let synack2 = *syns(&p, false).iter().find(|&&i| i >= mark).unwrap();
        let sa = p.log[synack2].0;
        assert_eq!(
            sa.ack,
            p.log[syn2].0.seq + 1 + on_syn as u32,
            "SYN-ACK takes the data"
        );
        assert_eq!(tfo_opt(&p, synack2), None, "no cookie for a valid one");
        assert_eq!(sha(&e2.server_got), sha(&req));
        assert_eq!(sha(&e2.client_got), sha(&resp));
        if req_len <= on_syn {
            assert!(e2.read_in_syn_rcvd, "read before the third ACK");
            assert_eq!(e2.first_byte, rtt, "one RTT saved, latency {lat_ms} ms");
        } else {
            // The rest of the request follows the handshake: no round trip saved.
            assert_eq!(e2.first_byte, rtt * 2);
        }
        let c = p.client.fastopen_stats().client;
        let s = p.server.fastopen_stats().server;
        assert_eq!(
            (
                c.cookie_requests,
                c.syn_with_cookie,
                c.active,
                c.active_fail
            ),
            (1, 1, 1, 0)
        );
        assert_eq!((s.cookie_reqd, s.passive, s.passive_fail), (1, 1, 0));
        p.advance(Duration::from_secs(1));
        assert_eq!(p.server.fastopen_pending(PORT), Some(0), "slot released");
        let _ = e2.client;
    }
}

#[test]
fn server_data_before_the_third_ack_is_sent_in_syn_received() {
    let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), tfo_config(16));
    let _ = exchange(&mut p, b"hello", b"world");
    p.advance(Duration::from_secs(1));
    let mark = p.log.len();
    let e = exchange(&mut p, b"GET / HTTP/1.1\r\n\r\n", &pattern(4000, 9));
    // The server's first data segment left before the client's third ACK arrived
    // (it left at the SYN's arrival + 0, the third ACK arrives one RTT later).
    let syn = *syns(&p, true).iter().find(|&&i| i >= mark).unwrap();
    let t_syn = p.log[syn].0.at;
    let first_data = p.log[mark..]
        .iter()
        .find(|(s, _)| !s.to_server && s.len > 0)
        .unwrap()
        .0;
    assert_eq!(first_data.at - t_syn, Duration::from_millis(10));
    assert!(e.read_in_syn_rcvd);
}

#[test]
fn synack_acking_only_the_syn_makes_the_client_send_the_data_again() {
    // The server turns Fast Open off after the client has its cookie.
    let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), tfo_config(16));
    let _ = exchange(&mut p, b"one", b"two");
    p.advance(Duration::from_secs(1));
    p.server.set_listen_config(PORT, Config::default()).unwrap();
    let req = pattern(1000, 5);
    let mark = p.log.len();
    let e = exchange(&mut p, &req, &pattern(3000, 6));
    let syn = *syns(&p, true).iter().find(|&&i| i >= mark).unwrap();
    assert_eq!(p.log[syn].0.len, 1000, "data on the SYN");
    let synack = *syns(&p, false).iter().find(|&&i| i >= mark).unwrap();
    assert_eq!(p.log[synack].0.ack, p.log[syn].0.seq + 1, "only the SYN");
    // The data went again right after the handshake, with the third ACK.
    let again = p.log[synack..]
        .iter()
        .find(|(s, _)| s.to_server && s.len > 0)
        .unwrap()
        .0;
    assert_eq!(again.seq, p.log[syn].0.seq + 1);
    assert_eq!(again.at, p.log[synack].0.at + Duration::from_millis(10));
    assert_eq!(sha(&e.server_got), sha(&req));
    let c = p.client.fastopen_stats().client;
    assert_eq!((c.active, c.active_fail), (0, 1));
    assert!(!e.read_in_syn_rcvd);
    // The cookie stays cached (no loss: the SYN was not retransmitted).
    assert!(p.client.fastopen_cached_cookie(SERVER_IP).is_some());
}

#[test]
fn middlebox_dropping_syn_data_falls_back_then_stops_trying() {
    let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), tfo_config(16));
    let _ = exchange(&mut p, b"one", b"two");
    p.advance(Duration::from_secs(1));
    // From now on SYNs with data vanish (RFC 7413 §7.1's middlebox).
    p.set_hook(|s| {
        if s.to_server && s.flags.contains(Flags::SYN) && s.len > 0 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let mut with_data = Vec::new();
    for i in 0..4u64 {
        let mark = p.log.len();
        let req = pattern(700, 10 + i);
        let resp = pattern(9000, 20 + i);
        let e = exchange(&mut p, &req, &resp);
        assert_eq!(sha(&e.server_got), sha(&req), "connection {i}");
        assert_eq!(sha(&e.client_got), sha(&resp), "connection {i}");
        let first_syn = *syns(&p, true).iter().find(|&&j| j >= mark).unwrap();
        with_data.push(p.log[first_syn].0.len > 0);
        p.advance(Duration::from_secs(1));
    }
    // Two SYN-data losses in a row: the server is in the negative cache.
    assert_eq!(with_data, [true, true, false, false]);
    let c = p.client.fastopen_stats().client;
    assert_eq!(c.syn_losses, 2);
    assert_eq!(c.suppressed, 2);
    assert_eq!(c.active_fail, 2);
}

/// A SYN from `src` carrying `opt` and `data`, as a client would send it.
fn syn_with(src: IpAddr, port: u16, seq: u32, opt: Option<FastOpen>, data: &[u8]) -> Vec<u8> {
    let mut tcp = TcpRepr {
        src_port: port,
        dst_port: PORT,
        seq: SeqNum(seq),
        flags: Flags::SYN,
        window: 65_535,
        mss: Some(1460),
        window_scale: brisk_wire::WindowScale::new(7),
        sack_permitted: true,
        timestamps: Some(Timestamps { tsval: 1, tsecr: 0 }),
        payload: data,
        ..TcpRepr::default()
    };
    if let Some(o) = opt {
        fastopen::push(&mut tcp.extra, &o).unwrap();
    }
    craft(src, SERVER_IP, &tcp)
}

fn server(cfg: Config, syncookies_always: bool) -> Endpoint {
    let mut s = Endpoint::new(
        SERVER_IP,
        EndpointConfig {
            syncookies: true,
            syncookies_always,
            ..EndpointConfig::seeded([2; 16], 2)
        },
    );
    s.listen(PORT, 128, cfg).unwrap();
    s
}

/// The server's replies (headers only) and events.
fn drain(ep: &mut Endpoint, now: Instant) -> (Vec<TcpRepr<'static>>, Vec<Event>) {
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while ep.poll_transmit(now, &mut buf).is_some() {
        let (_, tcp) = parse_tcp_packet(&buf).expect("valid packet");
        out.push(TcpRepr {
            payload: &[],
            ..tcp
        });
    }
    let mut evs = Vec::new();
    while let Some((_, e)) = ep.poll_event() {
        evs.push(e);
    }
    (out, evs)
}

/// The cookie the server gives `src` (asked for with a request SYN, then reset).
fn cookie_for(s: &mut Endpoint, src: IpAddr, now: Instant) -> FastOpenCookie {
    s.handle_packet(now, &syn_with(src, 999, 1, Some(FastOpen::REQUEST), &[]));
    let (out, _) = drain(s, now);
    fastopen::parse(&out[0].extra)
        .unwrap()
        .unwrap()
        .cookie
        .unwrap()
}

const OTHER_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 9));

#[test]
fn forged_and_foreign_cookies_are_refused_and_counted() {
    let now = Instant::from_millis(1);
    let mut s = server(tfo_config(16), false);
    let good = cookie_for(&mut s, CLIENT_IP, now);
    let forged = FastOpenCookie::new(&[0xab; 8]).unwrap();
    let cases = [
        (CLIENT_IP, forged),
        // A valid cookie, but it was made for another client address.
        (OTHER_IP, good),
        // Another length.
        (CLIENT_IP, FastOpenCookie::new(&[1; 4]).unwrap()),
    ];
    for (k, (src, cookie)) in cases.into_iter().enumerate() {
        let data = b"forged request";
        let seq = 1000 * k as u32;
        s.handle_packet(
            now,
            &syn_with(
                src,
                2000 + k as u16,
                seq,
                Some(FastOpen::with_cookie(cookie)),
                data,
            ),
        );
        let (out, evs) = drain(&mut s, now);
        assert_eq!(out.len(), 1, "case {k}");
        let synack = out[0];
        assert!(synack.flags.syn() && synack.flags.ack());
        assert_eq!(synack.ack, SeqNum(seq + 1), "data ignored, case {k}");
        let reply = fastopen::parse(&synack.extra).unwrap().unwrap();
        let fresh = cookie_for(&mut s, src, now);
        assert_eq!(
            reply.cookie,
            Some(fresh),
            "answered with a valid cookie, case {k}"
        );
        assert!(evs.is_empty(), "nothing for the application, case {k}");
        assert_eq!(s.accept(PORT), None);
    }
    let st = s.fastopen_stats().server;
    assert_eq!((st.passive, st.passive_fail), (0, 3));
    // The good cookie from the right address is accepted.
    s.handle_packet(
        now,
        &syn_with(
            CLIENT_IP,
            3000,
            77,
            Some(FastOpen::with_cookie(good)),
            b"hi",
        ),
    );
    let (out, evs) = drain(&mut s, now);
    assert_eq!(out[0].ack, SeqNum(77 + 1 + 2));
    assert_eq!(evs, [Event::Incoming { port: PORT }]);
    let h = s.accept(PORT).unwrap();
    let mut got = Vec::new();
    Pair::read_all(&mut s, h, &mut got);
    assert_eq!(got, b"hi");
}

#[test]
fn malformed_option_is_plain_tcp_and_counted() {
    let now = Instant::from_millis(1);
    let mut s = server(tfo_config(16), false);
    // Kind 34 with a 3-byte cookie (odd, below the minimum).
    let mut tcp = TcpRepr {
        src_port: 4000,
        dst_port: PORT,
        seq: SeqNum(5),
        flags: Flags::SYN,
        window: 65_535,
        mss: Some(1460),
        payload: b"data",
        ..TcpRepr::default()
    };
    tcp.extra.push(34, &[1, 2, 3]).unwrap();
    s.handle_packet(now, &craft(CLIENT_IP, SERVER_IP, &tcp));
    let (out, evs) = drain(&mut s, now);
    assert_eq!(out[0].ack, SeqNum(6));
    assert!(fastopen::parse(&out[0].extra).is_none());
    assert!(evs.is_empty());
    assert_eq!(s.fastopen_stats().server.malformed, 1);
}

#[test]
fn syn_data_flood_is_held_to_the_pending_bound() {
    let now = Instant::from_millis(1);
    let mut s = server(tfo_config(4), false);
    let cookie = cookie_for(&mut s, CLIENT_IP, now);
    let data = pattern(1400, 3);
    let mut accepted = 0;
    let mut syn_only = 0;
    // Fewer than the backlog: every SYN reaches the Fast Open decision.
    for i in 0..100u32 {
        let port = 10_000 + i as u16;
        s.handle_packet(
            now,
            &syn_with(
                CLIENT_IP,
                port,
                i * 7919,
                Some(FastOpen::with_cookie(cookie)),
                &data,
            ),
        );
        let (out, _) = drain(&mut s, now);
        let synack = out[0];
        if synack.ack == SeqNum(i * 7919 + 1 + 1400) {
            accepted += 1;
        } else {
            assert_eq!(synack.ack, SeqNum(i * 7919 + 1));
            assert!(
                fastopen::parse(&synack.extra).is_none(),
                "no cookie over the bound"
            );
            syn_only += 1;
        }
        assert!(s.fastopen_pending(PORT).unwrap() <= 4);
    }
    assert_eq!((accepted, syn_only), (4, 96));
    let st = s.fastopen_stats().server;
    assert_eq!((st.passive, st.listen_overflow), (4, 96));
    // Data is held for the 4 only.
    let held: usize = (0..4)
        .map(|_| {
            let h = s.accept(PORT).unwrap();
            let mut got = Vec::new();
            Pair::read_all(&mut s, h, &mut got);
            got.len()
        })
        .sum();
    assert_eq!(held, 4 * 1400);
    assert_eq!(s.accept(PORT), None);
}

#[test]
fn reset_pending_children_keep_their_slots_until_expiry() {
    let now = Instant::from_millis(1);
    let mut s = server(tfo_config(2), false);
    let cookie = cookie_for(&mut s, CLIENT_IP, now);
    for i in 0..2u32 {
        let port = 20_000 + i as u16;
        let seq = 100 * i;
        s.handle_packet(
            now,
            &syn_with(
                CLIENT_IP,
                port,
                seq,
                Some(FastOpen::with_cookie(cookie)),
                b"x",
            ),
        );
        let _ = drain(&mut s, now);
        // The client resets it (in window, at RCV.NXT).
        let rst = TcpRepr {
            src_port: port,
            dst_port: PORT,
            seq: SeqNum(seq + 2),
            flags: Flags::RST,
            ..TcpRepr::default()
        };
        s.handle_packet(now, &craft(CLIENT_IP, SERVER_IP, &rst));
        let _ = drain(&mut s, now);
    }
    assert_eq!(s.fastopen_pending(PORT), Some(2));
    let syn = |port: u16| {
        syn_with(
            CLIENT_IP,
            port,
            9,
            Some(FastOpen::with_cookie(cookie)),
            b"y",
        )
    };
    s.handle_packet(now, &syn(21_000));
    let (out, _) = drain(&mut s, now);
    assert_eq!(out[0].ack, SeqNum(10), "bound still full after the resets");
    let later = now + Duration::from_secs(61);
    s.handle_packet(later, &syn(21_001));
    let (out, _) = drain(&mut s, later);
    assert_eq!(out[0].ack, SeqNum(11), "an expired reset slot is reclaimed");
}

#[test]
fn syn_cookies_and_fast_open_behave_as_linux() {
    // Linux tries Fast Open only when no SYN cookie is wanted (`tcp_conn_request`):
    // with cookies always on, a valid Fast Open cookie's data is not accepted and
    // the cookie SYN-ACK acknowledges only the SYN.
    let now = Instant::from_millis(1);
    let mut plain = server(tfo_config(16), false);
    let cookie = cookie_for(&mut plain, CLIENT_IP, now);
    let mut s = server(tfo_config(16), true);
    // Same seed, same key: the cookie is valid on `s` too.
    s.handle_packet(
        now,
        &syn_with(
            CLIENT_IP,
            5000,
            41,
            Some(FastOpen::with_cookie(cookie)),
            b"req",
        ),
    );
    let (out, evs) = drain(&mut s, now);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].ack, SeqNum(42), "data ignored under SYN cookies");
    assert!(fastopen::parse(&out[0].extra).is_none());
    assert!(evs.is_empty());
    assert_eq!(s.stats().syncookies_sent, 1);
    assert_eq!(s.fastopen_stats().server.passive, 0);
    // And the connection through the cookie works, the data sent again by the client.
    let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), tfo_config(16));
    let _ = exchange(&mut p, b"a", b"b");
    p.advance(Duration::from_secs(1));
    p.server.set_syncookies(true, true);
    let req = pattern(500, 8);
    let e = exchange(&mut p, &req, &pattern(2000, 9));
    assert_eq!(sha(&e.server_got), sha(&req));
    assert!(!e.read_in_syn_rcvd);
    assert_eq!(p.client.fastopen_stats().client.active_fail, 1);
}

#[test]
fn plain_configs_never_send_the_option() {
    let mut p = Pair::new(Duration::from_millis(10));
    let _ = exchange(&mut p, b"hello", b"world");
    for i in 0..p.log.len() {
        assert!(tfo_opt(&p, i).is_none());
    }
    assert_eq!(p.client.fastopen_stats(), Default::default());
    // A Fast Open client against a plain server: requests go unanswered, nothing breaks.
    let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), Config::default());
    let e = exchange(&mut p, b"hello", b"world");
    assert_eq!(e.client_got, b"world");
    let synack = syns(&p, false)[0];
    assert!(tfo_opt(&p, synack).is_none());
    let _ = SocketAddr::new(SERVER_IP, PORT);
}

#[test]
fn losses_around_a_fast_open_handshake_are_recovered() {
    // Which of the second connection's server segments is dropped: its SYN-ACK, its
    // first data segment (sent in SYN-RECEIVED), or the client's third ACK.
    for (case, drop_server_idx, drop_third_ack) in [
        ("synack", Some(0), false),
        ("first data", Some(1), false),
        ("third ack", None, true),
    ] {
        let mut p = Pair::with_configs(Duration::from_millis(10), tfo_config(16), tfo_config(16));
        let _ = exchange(&mut p, b"one", b"two");
        p.advance(Duration::from_secs(1));
        let base_s = p.seen(false).len();
        let base_c = p.seen(true).len();
        p.set_hook(move |s| {
            let drop = if s.to_server {
                drop_third_ack && s.index == base_c + 1
            } else {
                drop_server_idx.is_some_and(|i| s.index == base_s + i)
            };
            if drop {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        let req = pattern(900, 31);
        let resp = pattern(60_000, 32);
        let e = exchange(&mut p, &req, &resp);
        assert_eq!(sha(&e.server_got), sha(&req), "{case}");
        assert_eq!(sha(&e.client_got), sha(&resp), "{case}");
        p.clear_hook();
        p.advance(Duration::from_secs(5));
        assert_eq!(p.server.fastopen_pending(PORT), Some(0), "{case}");
    }
}

/// RITE's option (WEB-6; `TfoConfig::syn_data_iw`): the server's first flight on a
/// Fast Open connection is min(IW, n) segments; on the first connection (no SYN
/// data) and without the option, the ordinary IW 10.
#[test]
fn rite_option_smaller_initial_window_after_fast_open() {
    let latency = Duration::from_millis(20);
    for (iw, want_second) in [(None, 10usize), (Some(2), 2), (Some(4), 4)] {
        let mut cfg = tfo_config(16);
        cfg.fastopen.as_deref_mut().unwrap().syn_data_iw = iw;
        let mut p = Pair::with_configs(latency, cfg.clone(), cfg);
        let req = pattern(200, 9);
        let resp = pattern(60_000, 10);
        let flight = |p: &Pair, mark: usize| {
            let syn = p.log[mark..]
                .iter()
                .find(|(s, _)| s.to_server && s.flags.syn())
                .map(|(s, _)| s.at)
                .unwrap();
            let (from, to) = (syn + latency, syn + latency * 3);
            p.log[mark..]
                .iter()
                .filter(|(s, _)| !s.to_server && s.len > 0 && s.at >= from && s.at < to)
                .count()
        };
        let mark = p.log.len();
        let e1 = exchange(&mut p, &req, &resp);
        assert_eq!(sha(&e1.client_got), sha(&resp));
        // The first connection's response waits for the handshake: IW 10 then.
        let syn_ack_to_ack = flight(&p, mark);
        assert!(syn_ack_to_ack <= 10, "{iw:?}: {syn_ack_to_ack}");
        p.advance(Duration::from_secs(1));
        let mark = p.log.len();
        let e2 = exchange(&mut p, &req, &resp);
        assert!(e2.read_in_syn_rcvd);
        assert_eq!(sha(&e2.client_got), sha(&resp));
        assert_eq!(flight(&p, mark), want_second, "{iw:?}");
    }
}

/// RITE's suggestion (WEB-6): the cookie exchanged at the end of the first
/// connection (`TfoConfig::cookie_at_end`, brisk-only, off by default). The first SYN
/// is plain; the client's FIN asks; the server's next segment carries the cookie;
/// the second connection sends its request on the SYN with it and saves a round trip.
#[test]
fn rite_option_cookie_at_the_end_of_the_first_connection() {
    let cfg = || Config {
        fastopen: Some(Box::new(TfoConfig {
            cookie_at_end: true,
            ..TfoConfig::both(16)
        })),
        ..Config::default()
    };
    for lat_ms in [5u64, 40] {
        let latency = Duration::from_millis(lat_ms);
        let mut p = Pair::with_configs(latency, cfg(), cfg());
        let req = pattern(500, lat_ms);
        let resp = pattern(3_000, lat_ms + 1);
        let e1 = exchange(&mut p, &req, &resp);
        let syn1 = syns(&p, true)[0];
        assert_eq!(tfo_opt(&p, syn1), None, "a plain first SYN");
        assert_eq!(tfo_opt(&p, syns(&p, false)[0]), None, "a plain SYN-ACK");
        assert_eq!(e1.first_byte, latency * 4);
        assert_eq!(p.client.fastopen_cached_cookie(SERVER_IP), None);
        // The end: the client closes (its FIN asks), then the server.
        let mark = p.log.len();
        p.client.conn_mut(e1.client).unwrap().close();
        p.advance(Duration::from_millis(500));
        let s = p
            .server_events
            .iter()
            .map(|(h, _)| *h)
            .find(|h| p.server.conn(*h).is_some())
            .expect("the server connection");
        p.server.conn_mut(s).unwrap().close();
        p.advance(Duration::from_secs(1));
        let fin = (mark..p.log.len())
            .find(|&i| p.log[i].0.to_server && p.log[i].0.flags.contains(Flags::FIN))
            .expect("the client's FIN");
        assert_eq!(tfo_opt(&p, fin), Some(FastOpen::REQUEST), "the FIN asks");
        let answer = (fin..p.log.len())
            .find(|&i| !p.log[i].0.to_server)
            .expect("the server's next segment");
        let cookie = tfo_opt(&p, answer)
            .and_then(|o| o.cookie)
            .expect("the cookie at the end");
        assert_eq!(p.client.fastopen_cached_cookie(SERVER_IP), Some(cookie));
        // Second connection: the request on the SYN with that cookie, one RTT saved.
        let mark = p.log.len();
        let e2 = exchange(&mut p, &req, &resp);
        let syn2 = *syns(&p, true).iter().find(|&&i| i >= mark).unwrap();
        assert_eq!(tfo_opt(&p, syn2), Some(FastOpen::with_cookie(cookie)));
        assert_eq!(p.log[syn2].0.len, req.len());
        assert!(e2.read_in_syn_rcvd);
        assert_eq!(e2.first_byte, latency * 2, "one RTT saved");
        assert_eq!(sha(&e2.server_got), sha(&req));
        assert_eq!(sha(&e2.client_got), sha(&resp));
    }
    // Off (the default): the end of a connection carries no option.
    let mut p = Pair::with_configs(Duration::from_millis(5), tfo_config(16), tfo_config(16));
    let e = exchange(&mut p, b"x", b"y");
    let mark = p.log.len();
    p.client.conn_mut(e.client).unwrap().close();
    p.advance(Duration::from_secs(1));
    assert!((mark..p.log.len()).all(|i| tfo_opt(&p, i).is_none()));
}

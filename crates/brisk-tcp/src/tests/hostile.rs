//! Hostile segments against a live connection (RFC 9293 §3.10.7.4, RFC 5961, RFC 7323).
//!
//! A proptest throws arbitrary segments — any flag combination, sequence and
//! acknowledgment numbers near and far from the windows, random SACK blocks, stale and
//! future timestamps, options on non-SYNs, payloads up to a full segment — at both ends
//! of a connection in the middle of a transfer. Nothing may panic, and when the segments
//! are outside the receive window (what an off-path attacker without the sequence
//! numbers can send), the transfer must still deliver exactly the bytes written.

use super::harness::*;
use super::transfer::pattern;
use brisk_time::Duration;
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, Flags, IpRepr, Ipv4Repr, SackBlock, SackBlocks, SeqNum,
    TcpRepr, Timestamps, WindowScale, IPPROTO_TCP,
};
use proptest::prelude::*;
use std::net::{IpAddr, Ipv4Addr};

/// One hostile segment, relative to the latest real segment in that direction.
#[derive(Clone, Debug)]
struct Evil {
    to_server: bool,
    flags: u16,
    seq_off: i64,
    ack_off: i64,
    window: u16,
    sack: Vec<(i64, u32)>,
    ts_off: Option<i64>,
    mss: Option<u16>,
    wscale: Option<u8>,
    payload: usize,
}

fn evil(out_of_window: bool) -> impl Strategy<Value = Evil> {
    // Far offsets are beyond any window brisk opens here (recv buffer 6 MiB) but well
    // inside 2^31, so they are unambiguously out of window, before or after.
    let seq = if out_of_window {
        prop_oneof![-(1i64 << 30)..-(64 << 20), (64i64 << 20)..(1 << 30)].boxed()
    } else {
        prop_oneof![-3000i64..3000, -(1i64 << 31)..(1 << 31)].boxed()
    };
    (
        any::<bool>(),
        0u16..0x200,
        seq,
        prop_oneof![-3000i64..3000, -(1i64 << 31)..(1 << 31)],
        any::<u16>(),
        prop::collection::vec((-200_000i64..200_000, 0u32..100_000), 0..5),
        prop::option::of(-100_000i64..100_000),
        prop::option::of(any::<u16>()),
        prop::option::of(any::<u8>()),
        0usize..1500,
    )
        .prop_map(
            |(to_server, flags, seq_off, ack_off, window, sack, ts_off, mss, wscale, payload)| {
                Evil {
                    to_server,
                    flags,
                    seq_off,
                    ack_off,
                    window,
                    sack,
                    ts_off,
                    mss,
                    wscale,
                    payload,
                }
            },
        )
}

const CLIENT: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const SERVER: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 2);

/// The latest real segment sent *towards* `to_server`'s target, spoofed from its source.
fn forge(p: &Pair, e: &Evil) -> Option<Vec<u8>> {
    let (_, bytes) = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| s.to_server == e.to_server)?;
    let (_, real) = parse_tcp_packet(bytes).ok()?;
    let shift = |s: SeqNum, off: i64| SeqNum(s.0.wrapping_add(off as u32));
    let mut sack = SackBlocks::new();
    for &(off, len) in &e.sack {
        let left = shift(real.ack, off);
        sack.push(SackBlock {
            left,
            right: left + len,
        });
    }
    let payload = vec![0xEE; e.payload];
    let seg = TcpRepr {
        src_port: real.src_port,
        dst_port: real.dst_port,
        seq: shift(real.seq, e.seq_off),
        ack: shift(real.ack, e.ack_off),
        flags: Flags::from_bits_truncate(e.flags),
        window: e.window,
        mss: e.mss,
        window_scale: e.wscale.map(WindowScale::clamped),
        sack,
        timestamps: real.timestamps.map(|t| Timestamps {
            tsval: t.tsval.wrapping_add(e.ts_off.unwrap_or(0) as u32),
            tsecr: t.tsecr,
        }),
        payload: &payload,
        ..TcpRepr::default()
    };
    let (src, dst) = if e.to_server {
        (CLIENT, SERVER)
    } else {
        (SERVER, CLIENT)
    };
    let ip = IpRepr::V4(Ipv4Repr {
        src,
        dst,
        protocol: IPPROTO_TCP,
        dscp: 0,
        ecn: Ecn::NotEct,
        ttl: 64,
        ident: 0,
        dont_frag: true,
        payload_len: 0,
    });
    let mut out = Vec::new();
    emit_tcp_packet(&ip, &seg, &mut out);
    Some(out)
}

/// Starts a 200 kB transfer, injects the segments part-way, then finishes it.
/// Returns (bytes written, bytes read by the server, segments the two connections
/// rejected as out of window, by PAWS or with a challenge ACK).
fn attack(evils: &[Evil]) -> (Vec<u8>, Vec<u8>, u64) {
    attack_with(evils, crate::config::Config::default())
}

/// [`attack`] with the sender running `client` (e.g. with issue 9's mechanisms on).
fn attack_with(evils: &[Evil], client: crate::config::Config) -> (Vec<u8>, Vec<u8>, u64) {
    attack_chunked(evils, client, usize::MAX)
}

/// [`attack`] against a server reading with unordered receive on (uTCP): returns
/// (bytes written, the in-order reads concatenated, out-of-order reads whose bytes
/// differ from what was written at their offset, rejected segments).
fn attack_unordered(evils: &[Evil]) -> (Vec<u8>, Vec<u8>, Ooo, u64) {
    let mut ooo = Ooo::default();
    let (data, got, rejected) = attack_reading(
        evils,
        crate::config::Config::default(),
        usize::MAX,
        Some(&mut ooo),
    );
    (data, got, ooo, rejected)
}

/// Out-of-order reads seen by [`read_unordered_all`].
#[derive(Clone, Copy, Debug, Default)]
struct Ooo {
    /// Runs handed out ahead of a hole.
    runs: u64,
    /// Of those, runs whose bytes differ from what was written at their offset.
    wrong: u64,
}

/// [`attack_with`] where the sender writes at most `chunk` bytes per step, so a
/// thin-stream mechanism (RDB) has small segments to bundle.
fn attack_chunked(
    evils: &[Evil],
    client: crate::config::Config,
    chunk: usize,
) -> (Vec<u8>, Vec<u8>, u64) {
    attack_reading(evils, client, chunk, None)
}

/// The attack itself. With `unordered` set, the server reads with unordered receive
/// on: in-order runs go to the returned stream, and each out-of-order run is checked
/// against the bytes written at its offset, mismatches counted there.
fn attack_reading(
    evils: &[Evil],
    client: crate::config::Config,
    chunk: usize,
    mut unordered: Option<&mut Ooo>,
) -> (Vec<u8>, Vec<u8>, u64) {
    assert_eq!(CLIENT_IP, IpAddr::V4(CLIENT));
    assert_eq!(SERVER_IP, IpAddr::V4(SERVER));
    let mut p = Pair::with_configs(
        Duration::from_millis(5),
        client,
        crate::config::Config::default(),
    );
    let (c, s) = p.establish();
    if unordered.is_some() {
        p.server.conn_mut(s).unwrap().set_unordered(true);
        // Hold back every 7th data segment by 15 ms (3 RTTs), so the out-of-order
        // path really hands data out while the forged segments arrive.
        let mut n = 0u32;
        p.set_hook(move |seen| {
            if !seen.to_server || seen.len == 0 {
                return Action::Deliver;
            }
            n += 1;
            if n.is_multiple_of(7) {
                Action::Delay(Duration::from_millis(15))
            } else {
                Action::Deliver
            }
        });
    }
    let data = pattern(200_000, 9);
    let first = chunk.min(data.len());
    let mut off = p.client.conn_mut(c).unwrap().write(&data[..first]);
    let mut got = Vec::new();
    p.advance(Duration::from_millis(12));
    for e in evils {
        if let Some(bytes) = forge(&p, e) {
            p.inject(e.to_server, bytes);
        }
    }
    let rejected = |p: &Pair| -> u64 {
        [p.client.conn(c), p.server.conn(s)]
            .into_iter()
            .flatten()
            .map(|k| {
                let n = k.counters();
                n.out_of_window + n.paws_drops + n.challenge_acks + n.challenge_acks_suppressed
            })
            .sum()
    };
    let before = rejected(&p);
    p.run_until(Duration::from_millis(20), |_| false);
    let rejected = rejected(&p) - before;
    p.run_until(Duration::from_secs(60), |p| {
        if let Some(conn) = p.client.conn_mut(c) {
            if off < data.len() {
                let end = off.saturating_add(chunk).min(data.len());
                off += conn.write(&data[off..end]);
            }
        }
        match unordered.as_deref_mut() {
            None => Pair::read_all(&mut p.server, s, &mut got),
            Some(ooo) => read_unordered_all(p, s, &data, &mut got, ooo),
        }
        got.len() >= data.len() || p.client.conn(c).is_none() || p.server.conn(s).is_none()
    });
    (data, got, rejected)
}

/// Drains `s` with `read_unordered`: in-order runs extend `got`; out-of-order runs
/// are compared with `data` at their offset (bytes beyond it count as wrong).
fn read_unordered_all(
    p: &mut Pair,
    s: crate::endpoint::ConnHandle,
    data: &[u8],
    got: &mut Vec<u8>,
    ooo: &mut Ooo,
) {
    let mut buf = [0u8; 4096];
    let Some(conn) = p.server.conn_mut(s) else {
        return;
    };
    while let Some(r) = conn.read_unordered(&mut buf) {
        let run = &buf[..r.len];
        if r.in_order {
            assert_eq!(
                r.offset as usize,
                got.len(),
                "in-order reads are contiguous"
            );
            got.extend_from_slice(run);
        } else {
            let off = r.offset as usize;
            let same = data.get(off..off + r.len).is_some_and(|d| d == run);
            ooo.runs += 1;
            ooo.wrong += u64::from(!same);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// Anything goes: no panic, and whatever arrives is a prefix of what was sent or
    /// differs only where in-window forged data was accepted (which TCP cannot tell
    /// from real data); the connection either continues or ends with an error event.
    #[test]
    fn arbitrary_segments_never_panic(evils in prop::collection::vec(evil(false), 1..40)) {
        let (data, got, _) = attack(&evils);
        prop_assert!(got.len() <= data.len() + 40 * 1500);
    }

    /// The same with the sender's new-CWV layer, RTO-restart and TLP-restart on: ACKs in
    /// odd patterns (forged, duplicated, far ahead or behind) neither panic nor grow
    /// their state (new-CWV keeps five fixed bins; the restarts keep none).
    #[test]
    fn odd_acks_do_not_upset_new_cwv_or_the_restarts(
        evils in prop::collection::vec(evil(false), 1..40)
    ) {
        let mut cfg = crate::config::Config::default();
        cfg.congestion.controller = cfg.congestion.controller.clone().with_layer(
            crate::cc::LayerSpec::NewCwv(crate::cc::new_cwv::NewCwvConfig::default()),
        );
        cfg.recovery.rto_restart = Some(4);
        cfg.recovery.tlp_restart = true;
        let (data, got, _) = attack_with(&evils, cfg);
        prop_assert!(got.len() <= data.len() + 40 * 1500);
    }

    /// The same with RDB bundling every small write it can (unlimited, SPIFL 1000):
    /// forged ACKs that cover, split or precede bundles neither panic, nor corrupt
    /// the stream, nor grow state (the loss inference walks only the bundled segments).
    #[test]
    fn odd_acks_do_not_upset_rdb(evils in prop::collection::vec(evil(false), 1..40)) {
        let mut cfg = crate::config::Config {
            nagle: false,
            ..Default::default()
        };
        cfg.transmit.rdb = Some(crate::rdb::RdbConfig {
            lim: None,
            thin: crate::rdb::ThinTest::Spifl(1000),
            ..crate::rdb::RdbConfig::default()
        });
        let (data, got, _) = attack_chunked(&evils, cfg, 300);
        prop_assert!(got.len() <= data.len() + 40 * 1500);
    }

    /// Out-of-window segments, whatever their flags and options, change nothing:
    /// the stream arrives complete and byte-identical.
    #[test]
    fn out_of_window_segments_do_not_disturb_the_stream(
        evils in prop::collection::vec(evil(true), 1..40)
    ) {
        let (data, got, rejected) = attack(&evils);
        // The forged segments really reached the connections and were turned away.
        prop_assert!(rejected >= 1, "no forged segment was rejected");
        prop_assert_eq!(got.len(), data.len());
        prop_assert!(got == data, "stream corrupted");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The attacks again with the server in unordered-receive mode (uTCP, issue 13
    /// §2): forged segments of any kind neither panic nor make the out-of-order path
    /// hand out more than was sent plus what was forged.
    #[test]
    fn arbitrary_segments_never_panic_in_unordered_mode(
        evils in prop::collection::vec(evil(false), 1..40)
    ) {
        let (data, got, ooo, _) = attack_unordered(&evils);
        prop_assert!(got.len() <= data.len() + 40 * 1500);
        // Only forged in-window data (indistinguishable from real data) can make an
        // out-of-order run differ, and there are at most 40 forged segments.
        prop_assert!(ooo.wrong <= 40, "{ooo:?}");
    }

    /// Out-of-window segments change nothing in unordered mode either: every
    /// out-of-order run is the sender's bytes, and the in-order stream is complete
    /// and byte-identical.
    #[test]
    fn out_of_window_segments_do_not_disturb_unordered_reads(
        evils in prop::collection::vec(evil(true), 1..40)
    ) {
        let (data, got, ooo, rejected) = attack_unordered(&evils);
        prop_assert!(rejected >= 1, "no forged segment was rejected");
        prop_assert!(ooo.runs > 0, "the reordering produced out-of-order reads");
        prop_assert_eq!(ooo.wrong, 0);
        prop_assert_eq!(got.len(), data.len());
        prop_assert!(got == data, "stream corrupted");
    }
}

// ----- Out-of-window reply rate limit (Linux `tcp_oow_rate_limited`) -----

/// Blind segments sent at an established, idle server connection.
const BLIND: u32 = 1_000_000;
/// Virtual time they are spread over.
const BLIND_SPAN: Duration = Duration::from_secs(4);

/// Sends `bytes` to the server `n` times, spaced evenly over `span` from `p.now`,
/// draining the server's output after each; returns how many segments it sent back.
fn blast(p: &mut Pair, bytes: &[u8], n: u32, span: Duration) -> u64 {
    let start = p.now;
    let step = span / n;
    let mut buf = Vec::new();
    let mut replies = 0;
    for i in 0..n {
        let now = start + step * i;
        p.server.handle_packet(now, bytes);
        while p.server.poll_transmit(now, &mut buf).is_some() {
            replies += 1;
        }
    }
    p.now = start + span;
    replies
}

/// An established connection with 5000 bytes delivered, its timers quiet.
fn quiet_pair() -> (Pair, crate::endpoint::ConnHandle) {
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, s) = p.establish();
    let n = p.client.conn_mut(c).unwrap().write(&pattern(5000, 3));
    assert_eq!(n, 5000);
    p.advance(Duration::from_secs(1));
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got.len(), 5000);
    p.advance(Duration::from_secs(1));
    (p, s)
}

/// 10^6 blind pure ACKs and SYNs with sequence numbers far outside the window draw
/// at most one reply per `invalid_ratelimit` (500 ms), shared between both kinds
/// (Linux `tcp_oow_rate_limited` for the ACKs; the SYNs' RFC 5961 §4.2 challenge
/// ACKs go through the same per-connection limit in `tcp_send_challenge_ack`).
#[test]
fn blind_out_of_window_acks_and_syns_draw_one_reply_per_500ms() {
    let (mut p, s) = quiet_pair();
    let far = 1 << 30;
    let ack = super::handshake::from_client(&p, Flags::ACK, far, b"");
    let syn = super::handshake::from_client(&p, Flags::SYN, -far, b"");
    let before = *p.server.conn(s).unwrap().counters();
    let before_stats = p.server.stats().clone();

    let acks = blast(&mut p, &ack, BLIND, BLIND_SPAN);
    let syns = blast(&mut p, &syn, BLIND, BLIND_SPAN);

    // One reply at the start and then one each 500 ms: 8 per 4 s burst.
    let bound = u64::from(BLIND_SPAN.as_millis() as u32 / 500) + 1;
    assert!((1..=bound).contains(&acks), "{acks} replies to blind ACKs");
    assert!((1..=bound).contains(&syns), "{syns} replies to blind SYNs");
    let after = *p.server.conn(s).unwrap().counters();
    assert_eq!(
        after.out_of_window - before.out_of_window,
        2 * u64::from(BLIND)
    );
    assert_eq!(
        after.oow_acks_suppressed - before.oow_acks_suppressed,
        2 * u64::from(BLIND) - acks - syns
    );
    assert_eq!(after.challenge_acks - before.challenge_acks, syns);
    assert_eq!(
        p.server.stats().oow_acks_suppressed - before_stats.oow_acks_suppressed,
        2 * u64::from(BLIND) - acks - syns
    );
    // The connection is unharmed.
    assert_eq!(
        p.server.conn(s).unwrap().state(),
        crate::conn::State::Established
    );
}

/// Out-of-window data (a spurious retransmission below RCV.NXT) is never rate-limited
/// (Linux `tcp_oow_rate_limited` exempts segments with data and no SYN): each copy
/// gets its duplicate ACK with a D-SACK, even right after a limited blind ACK, so a
/// real sender's loss recovery and undo see every one.
#[test]
fn out_of_window_data_still_gets_every_duplicate_ack() {
    let (mut p, s) = quiet_pair();
    // Arm the limiter: a blind ACK is answered and the next would be suppressed.
    let ack = super::handshake::from_client(&p, Flags::ACK, 1 << 30, b"");
    assert_eq!(blast(&mut p, &ack, 2, Duration::from_millis(2)), 1);
    // 600 bytes behind the last data segment's start: wholly below RCV.NXT.
    let old = super::handshake::from_client(&p, Flags::ACK, -600, &[0xAB; 500]);
    let n = 100_000;
    let before = *p.server.conn(s).unwrap().counters();
    let replies = blast(&mut p, &old, n, Duration::from_millis(400));
    assert_eq!(
        replies,
        u64::from(n),
        "every spurious retransmission is ACKed"
    );
    let after = *p.server.conn(s).unwrap().counters();
    assert_eq!(after.oow_acks_suppressed, before.oow_acks_suppressed);
    assert_eq!(after.out_of_window - before.out_of_window, u64::from(n));
    // The replies carry D-SACK blocks (RFC 2883) for the duplicate.
    let mut buf = Vec::new();
    p.server.handle_packet(p.now, &old);
    assert!(p.server.poll_transmit(p.now, &mut buf).is_some());
    let (_, reply) = parse_tcp_packet(&buf).unwrap();
    assert!(!reply.sack.is_empty(), "duplicate data is D-SACKed");
}

// ----- ACK loops between two brisk endpoints (issue 13 §2) -----

/// Segments the pair exchanged in the log after index `from`.
fn exchanged_since(p: &Pair, from: usize) -> usize {
    p.log.len() - from
}

/// The classic ACK storm: forged in-window data desynchronises the pair (the server's
/// RCV.NXT moves past the client's SND.NXT). The server then acknowledges data the
/// client never sent, and the client's segments fall below the server's window, so
/// each side answers the other's ACK with one of its own. RFC 9293 alone would loop
/// at the path's speed for ever; Linux breaks the loop with `tcp_oow_rate_limited`
/// (one reply per 500 ms per connection) and by dropping ACKs of unsent data
/// silently. Over 20 s brisk exchanges at most what that limit allows.
#[test]
fn a_desynchronised_pair_does_not_ack_storm() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, s) = p.establish();
    assert_eq!(p.client.conn_mut(c).unwrap().write(&pattern(3000, 1)), 3000);
    p.advance(Duration::from_secs(1));
    // 1000 forged bytes at exactly the client's next sequence number: just past the
    // client's last segment (`from_client` offsets from that segment's start).
    let last_len = p.seen(true).last().unwrap().len as i32;
    let forged =
        super::handshake::from_client(&p, Flags::ACK | Flags::PSH, last_len, &[0x42; 1000]);
    p.inject(true, forged);
    p.advance(Duration::from_millis(50));
    // The client now writes: its data lies below the server's RCV.NXT.
    assert_eq!(p.client.conn_mut(c).unwrap().write(&pattern(500, 2)), 500);
    let from = p.log.len();
    let span = Duration::from_secs(20);
    p.advance(span);
    let n = exchanged_since(&p, from);
    // Per side: one rate-limited reply per 500 ms (41 in 20 s), plus the client's
    // retransmissions of its 500 bytes (RTO backoff: under 10 in 20 s).
    // (Measured: 26. With `invalid_ratelimit` zero the pair storms and this fails.)
    let bound = 2 * (20_000 / 500 + 1) + 10;
    let sc = p.server.conn(s).map(|k| *k.counters());
    assert!(
        n <= bound,
        "{n} segments in 20 s (bound {bound}); server {sc:?}"
    );
}

/// Simultaneous open with the first SYN-ACK in each direction lost: both sides
/// retransmit and reach ESTABLISHED, then fall quiet (no SYN-ACK/ACK ping-pong).
#[test]
fn simultaneous_open_under_loss_settles_without_a_loop() {
    let mut p = Pair::new(Duration::from_millis(10));
    let mut lost = [false; 2];
    p.set_hook(move |seen| {
        let dir = usize::from(seen.to_server);
        if seen.flags == Flags::SYN | Flags::ACK && !lost[dir] {
            lost[dir] = true;
            return Action::Drop;
        }
        Action::Deliver
    });
    let now = p.now;
    let a = p
        .client
        .connect(
            now,
            5000,
            std::net::SocketAddr::new(SERVER_IP, 6000),
            Default::default(),
        )
        .unwrap();
    let b = p
        .server
        .connect(
            now,
            6000,
            std::net::SocketAddr::new(CLIENT_IP, 5000),
            Default::default(),
        )
        .unwrap();
    p.advance(Duration::from_secs(10));
    let est = crate::conn::State::Established;
    assert_eq!(p.client.conn(a).unwrap().state(), est);
    assert_eq!(p.server.conn(b).unwrap().state(), est);
    let settled = p.log.len();
    p.advance(Duration::from_secs(60));
    assert_eq!(
        p.log.len() - settled,
        0,
        "an idle, established pair sends nothing (keepalive is off by default)"
    );
    assert!(settled <= 12, "{settled} segments to open");
}

/// Found by the `endpoint` fuzz target (fuzz/regressions/endpoint/crash-1): the scaled
/// window field is rounded up so the right edge never shrinks (as Linux's
/// `tcp_select_window` aligns it), so after an odd-length segment the advertised edge
/// passed the receive buffer's end by up to 2^wscale - 1 bytes, and a peer that filled
/// the window left `recv_buffer + 1` bytes buffered. Data in that slack is now dropped
/// (the peer retransmits it once the window opens): the buffer never exceeds its limit.
#[test]
fn window_rounding_never_lets_the_peer_overfill_the_receive_buffer() {
    use super::handshake::craft;
    use crate::config::Config;
    use crate::endpoint::{Endpoint, EndpointConfig};
    let recv_buffer = 65_536;
    let config = Config {
        recv_buffer,
        ..Config::default()
    };
    let mut ep = Endpoint::new(SERVER_IP, EndpointConfig::seeded([3; 16], 3));
    ep.listen(PORT, 4, config).unwrap();
    let mut now = brisk_time::Instant::from_secs(1);
    let irs = 1_000_000u32;
    let seg = |seq: u32, ack: u32, flags: Flags, len: usize| {
        let payload = vec![0x42; len];
        let tcp = TcpRepr {
            src_port: 40_000,
            dst_port: PORT,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window: 65_535,
            mss: flags.syn().then_some(1460),
            window_scale: flags.syn().then_some(WindowScale::clamped(7)),
            payload: &payload,
            ..TcpRepr::default()
        };
        craft(CLIENT_IP, SERVER_IP, &tcp)
    };
    // The latest (ACK, right edge) the endpoint advertised.
    let mut out = Vec::new();
    let mut drain = |ep: &mut Endpoint, now, edge: &mut (u32, u32), wscale: u8| {
        while ep.poll_transmit(now, &mut out).is_some() {
            let (_, t) = parse_tcp_packet(&out).unwrap();
            if t.flags.syn() {
                *edge = (t.seq.0, t.ack.0.wrapping_add(u32::from(t.window)));
            } else {
                *edge = (edge.0, t.ack.0.wrapping_add(u32::from(t.window) << wscale));
            }
        }
        while ep.poll_event().is_some() {}
    };
    let mut edge = (0, 0);
    ep.handle_packet(now, &seg(irs, 0, Flags::SYN, 0));
    drain(&mut ep, now, &mut edge, 0);
    let iss = edge.0;
    // Our scale for a 64-KiB buffer is 1, and the SYN-ACK offered 65 535 bytes: the
    // duplicate ACK an out-of-order byte draws rounds that odd window up (edge at the
    // buffer's end), and after 999 in-order bytes it is odd again, rounded up again.
    ep.handle_packet(now, &seg(irs + 11, iss + 1, Flags::ACK, 1));
    drain(&mut ep, now, &mut edge, 1);
    ep.handle_packet(now, &seg(irs + 1, iss + 1, Flags::ACK, 999));
    drain(&mut ep, now, &mut edge, 1);
    // Fill the window to its advertised edge, never reading.
    let mut next = irs + 1000;
    for _ in 0..200 {
        let room = edge.1.wrapping_sub(next) as usize;
        if room == 0 || room > 1 << 20 {
            break;
        }
        ep.handle_packet(now, &seg(next, iss + 1, Flags::ACK, room.min(1000)));
        next += room.min(1000) as u32;
        now += Duration::from_millis(50);
        ep.handle_timeout(now);
        drain(&mut ep, now, &mut edge, 1);
    }
    let h = crate::endpoint::ConnHandle(0);
    let readable = ep.conn(h).unwrap().readable();
    assert!(
        readable > recv_buffer - 1000,
        "the window was filled: {readable}"
    );
    assert!(
        readable <= recv_buffer,
        "{readable} bytes buffered, recv_buffer {recv_buffer}"
    );
}

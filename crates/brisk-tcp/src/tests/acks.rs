//! ACK-stream behaviour found against real Linux peers: reordered duplicate ACKs must
//! pass PAWS (Linux `tcp_disordered_ack_check`), and a receive batch handed over
//! before polling must yield the ACKs — SACK blocks, D-SACKs, duplicate ACKs — that
//! per-segment processing would.

use super::handshake::craft;
use super::harness::*;
use super::transfer::pattern;
use crate::config::Config;
use brisk_time::Duration;
use brisk_wire::{parse_tcp_packet, Flags, SackBlock, SackBlocks, SeqNum, TcpRepr, Timestamps};

const MSS: u32 = 1448;

/// How a crafted pure ACK differs from the server's last real segment.
#[derive(Clone, Copy, Default)]
struct Tweak {
    tsval: i32,
    window: i32,
    seq: u32,
}

/// A pure ACK from the server, built on the server's last real segment `template`.
fn server_ack(template: &[u8], ack: SeqNum, sack: &[(SeqNum, SeqNum)], tw: Tweak) -> Vec<u8> {
    let (_, t) = parse_tcp_packet(template).unwrap();
    let mut blocks = SackBlocks::new();
    for &(left, right) in sack {
        blocks.push(SackBlock { left, right });
    }
    let ts = t.timestamps.unwrap();
    let tcp = TcpRepr {
        src_port: t.src_port,
        dst_port: t.dst_port,
        seq: t.seq + tw.seq,
        ack,
        flags: Flags::ACK,
        window: (i32::from(t.window) + tw.window) as u16,
        sack: blocks,
        timestamps: Some(Timestamps {
            tsval: ts.tsval.wrapping_add(tw.tsval as u32),
            tsecr: ts.tsecr,
        }),
        payload: &[],
        ..TcpRepr::default()
    };
    craft(SERVER_IP, CLIENT_IP, &tcp)
}

fn ts(tsval: i32) -> Tweak {
    Tweak {
        tsval,
        ..Tweak::default()
    }
}

#[test]
fn reordered_duplicate_ack_passes_paws_and_its_sack_counts_but_old_acks_do_not() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, _s) = p.establish();
    // The server's own ACKs never reach the client: the test plays them.
    p.set_hook(|s| {
        if s.to_server {
            Action::Deliver
        } else {
            Action::Drop
        }
    });
    p.client
        .conn_mut(c)
        .unwrap()
        .write(&pattern(6 * MSS as usize, 3));
    p.drive();
    let base = p.seen(true).iter().find(|s| s.len > 0).unwrap().seq;
    let seg = |k: u32| base + k * MSS;
    let template = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| !s.to_server)
        .unwrap()
        .1
        .clone();
    let conn_stats = |p: &Pair| {
        let conn = p.client.conn(c).unwrap();
        (conn.counters().paws_drops, conn.info().sacked)
    };
    let send = |p: &mut Pair, bytes: Vec<u8>| {
        p.inject(false, bytes);
        p.drive();
    };

    // Segment 0 acknowledged; then a dup ACK SACKing segment 2 (TSval +20).
    send(&mut p, server_ack(&template, seg(1), &[], ts(10)));
    send(
        &mut p,
        server_ack(&template, seg(1), &[(seg(2), seg(3))], ts(20)),
    );
    assert_eq!(conn_stats(&p), (0, 1));
    // A dup ACK sent earlier (TSval +15) arrives late with news: segment 3 SACKed.
    send(
        &mut p,
        server_ack(&template, seg(1), &[(seg(3), seg(4))], ts(15)),
    );
    assert_eq!(
        conn_stats(&p),
        (0, 2),
        "reordered dup ACK accepted, SACK used"
    );
    // Not exempt, each carrying a new SACK block that must not be used: an ACK below
    // SND.UNA, a window update, a TSval beyond the replay window (about one RTO), a
    // segment not at RCV.NXT.
    let news = [(seg(4), seg(5))];
    send(&mut p, server_ack(&template, seg(0), &news, ts(15)));
    assert_eq!(
        conn_stats(&p),
        (1, 2),
        "old ACK below SND.UNA dropped by PAWS"
    );
    let wider = Tweak {
        window: 64,
        ..ts(15)
    };
    send(&mut p, server_ack(&template, seg(1), &news, wider));
    assert_eq!(
        conn_stats(&p),
        (2, 2),
        "stale window update dropped by PAWS"
    );
    send(&mut p, server_ack(&template, seg(1), &news, ts(-100_000)));
    assert_eq!(conn_stats(&p), (3, 2), "TSval far behind dropped by PAWS");
    let ahead = Tweak { seq: 1, ..ts(15) };
    send(&mut p, server_ack(&template, seg(1), &news, ahead));
    assert_eq!(conn_stats(&p), (4, 2), "ACK not at RCV.NXT dropped by PAWS");
}

/// The server's ACKs emitted at the instant the first data batch arrived.
fn batch_acks(p: &Pair) -> Vec<TcpRepr<'_>> {
    let sent = p.seen(true).into_iter().find(|s| s.len > 0).unwrap().at;
    let first = p.seen(false).into_iter().find(|s| s.at > sent);
    let at = first.expect("an ACK for the data").at;
    p.log
        .iter()
        .filter(|(s, _)| !s.to_server && s.at == at)
        .map(|(_, b)| parse_tcp_packet(b).unwrap().1)
        .collect()
}

/// Ten segments leave together and arrive together (one receive batch); `lost` are
/// dropped. Returns the pair and the first data sequence number.
fn one_batch(cfg: Config, lost: &'static [usize]) -> (Pair, SeqNum) {
    let mut p = Pair::with_configs(Duration::from_millis(10), cfg.clone(), cfg);
    let (c, _s) = p.establish();
    // Client packets: SYN, ACK, then data from index 2.
    p.set_hook(move |s| {
        if s.to_server && s.len > 0 && lost.contains(&(s.index - 2)) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    p.client
        .conn_mut(c)
        .unwrap()
        .write(&pattern(10 * MSS as usize, 4));
    p.drive();
    let base = p.seen(true).iter().find(|s| s.len > 0).unwrap().seq;
    (p, base)
}

#[test]
fn a_receive_batch_reports_every_out_of_order_range_in_some_sack_block() {
    let (p, base) = one_batch(Config::default(), &[1, 3, 5, 7]);
    let acks = batch_acks(&p);
    let seg = |k: u32| base + k * MSS;
    for k in [2, 4, 6, 8, 9] {
        let reported = acks.iter().any(|a| {
            a.sack
                .as_slice()
                .iter()
                .any(|b| b.left <= seg(k) && seg(k + 1) <= b.right)
        });
        assert!(reported, "segment {k} never SACKed in {} ACKs", acks.len());
    }
    // One ACK per change of the newest block: 0+2 (a plain cumulative ACK is
    // subsumed by the next one), 4, 6, 8+9 (9 only grows 8's block).
    assert_eq!(acks.len(), 4);
}

#[test]
fn a_receive_batch_dsacks_every_duplicate() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, _s) = p.establish();
    p.client
        .conn_mut(c)
        .unwrap()
        .write(&pattern(3 * MSS as usize, 5));
    p.drive();
    let before = p.seen(false).len();
    // Two old, distinct ranges arrive together (the last client packet is segment 2).
    let a = super::handshake::from_client(&p, Flags::ACK, -2 * MSS as i32, &[7; 100]);
    let b = super::handshake::from_client(&p, Flags::ACK, -(MSS as i32), &[7; 100]);
    p.inject(true, a);
    p.inject(true, b);
    p.drive();
    let last = *p.seen(true).last().unwrap();
    let dsacks: Vec<(u32, u32)> = p.log[..]
        .iter()
        .filter(|(s, _)| !s.to_server)
        .skip(before)
        .map(|(_, b)| parse_tcp_packet(b).unwrap().1)
        .filter_map(|t| t.sack.as_slice().first().copied())
        .map(|b| (last.seq - b.left, b.right - b.left))
        .collect();
    assert_eq!(dsacks, vec![(2 * MSS, 100), (MSS, 100)]);
}

#[test]
fn without_sack_each_out_of_order_segment_of_a_batch_gets_a_duplicate_ack() {
    let cfg = {
        let mut c = Config::default();
        c.options.sack = false;
        c
    };
    let (p, base) = one_batch(cfg, &[0]);
    let dupacks = batch_acks(&p).iter().filter(|a| a.ack == base).count();
    assert_eq!(dupacks, 9, "one duplicate ACK per out-of-order segment");
}

#[test]
fn old_ack_one_tick_behind_still_contributes_its_sack_blocks_but_not_its_window() {
    let mut p = Pair::new(Duration::from_millis(5));
    let (c, _s) = p.establish();
    p.set_hook(|s| {
        if s.to_server {
            Action::Deliver
        } else {
            Action::Drop
        }
    });
    p.client
        .conn_mut(c)
        .unwrap()
        .write(&pattern(6 * MSS as usize, 3));
    p.drive();
    let base = p.seen(true).iter().find(|s| s.len > 0).unwrap().seq;
    let seg = |k: u32| base + k * MSS;
    let template = p
        .log
        .iter()
        .rev()
        .find(|(s, _)| !s.to_server)
        .unwrap()
        .1
        .clone();
    let send = |p: &mut Pair, bytes: Vec<u8>| {
        p.inject(false, bytes);
        p.drive();
    };
    send(&mut p, server_ack(&template, seg(2), &[], ts(10)));
    let info = p.client.conn(c).unwrap().info();
    assert_eq!((info.sacked, info.bytes_acked), (0, 2 * u64::from(MSS)));
    // Sent just before it (one TSval tick earlier, Linux's PAWS window), delayed:
    // a cumulative ACK below SND.UNA, a wider window and news of segment 4.
    let older = Tweak {
        window: 64,
        ..ts(9)
    };
    send(
        &mut p,
        server_ack(&template, seg(1), &[(seg(4), seg(5))], older),
    );
    let conn = p.client.conn(c).unwrap();
    assert_eq!(conn.counters().paws_drops, 0);
    assert_eq!(conn.info().sacked, 1, "the old ACK's SACK block was used");
    assert_eq!(conn.info().snd_wnd, info.snd_wnd, "but not its window");
    assert_eq!(conn.info().bytes_acked, info.bytes_acked);
}

/// Linux's `ICSK_ACK_PUSHED` (`tcp_measure_rcv_mss` → `tcp_cleanup_rbuf`): a small
/// pushed segment's delayed ACK goes out as soon as the application has read
/// everything, so a thin stream read promptly is ACKed per write (Linux 6.18 does this
/// in the RDB real run); left unread, the ACK waits for the delayed-ACK timer.
#[test]
fn a_small_pushed_segment_is_acked_once_the_application_reads_it() {
    let ack_delay = |read_promptly: bool| {
        let client = Config {
            nagle: false,
            ..Config::default()
        };
        let mut server = Config::default();
        server.ack.quick_acks = 0;
        let mut p = Pair::with_configs(Duration::from_millis(10), client, server);
        let (c, s) = p.establish();
        p.advance(Duration::from_millis(100));
        p.client.conn_mut(c).unwrap().write(&pattern(120, 3));
        let mut got = Vec::new();
        p.run_until(Duration::from_millis(500), |p| {
            if read_promptly {
                Pair::read_all(&mut p.server, s, &mut got);
            }
            false
        });
        let data = p.seen(true).into_iter().find(|x| x.len > 0).unwrap();
        let ack = p.seen(false).into_iter().find(|x| x.at > data.at).unwrap();
        ack.at - data.at
    };
    assert_eq!(
        ack_delay(true),
        Duration::from_millis(10),
        "ACKed on arrival"
    );
    assert_eq!(
        ack_delay(false),
        Duration::from_millis(50),
        "10 ms + the 40 ms timer"
    );
}

//! RDB (`crate::rdb`) on the wire: the paper's Fig. 1 trace exactly (W-7), the same
//! packet count with and without bundling (RDB-7), no bundle on a FIN, one CWR per
//! window from the loss inference, and the stream intact under heavy loss; the thin-stream
//! thresholds (RDB-8) and the per-MSS caps of `crate::rdb`.

use crate::config::Config;
use crate::rdb::{bundle_start, RdbConfig, ThinTest};
use crate::recovery::scoreboard::Scoreboard;
use crate::sent::SentInfo;
use crate::testkit::*;
use brisk_time::Duration;

fn rdb_client(lim: Option<u32>, thin: ThinTest) -> Config {
    // Thin-stream applications set TCP_NODELAY (RDB footnote 1).
    let mut c = Config {
        nagle: false,
        ..Config::default()
    };
    c.transmit.rdb = Some(RdbConfig {
        lim,
        thin,
        ..RdbConfig::default()
    });
    c
}

fn quick_server() -> Config {
    let mut s = Config::default();
    s.ack.delayed = false;
    s
}

/// Data packets towards the server as (sequence offset from the first, length).
fn data_packets(p: &Pair) -> Vec<(u32, usize)> {
    let seen: Vec<Seen> = p.seen(true).into_iter().filter(|x| x.len > 0).collect();
    let base = seen.first().map_or(0, |x| x.seq.0);
    seen.iter()
        .map(|x| (x.seq.0.wrapping_sub(base), x.len))
        .collect()
}

/// Writes `n` chunks of `size` bytes, one every `itt`, then lets everything settle.
fn thin_stream(p: &mut Pair, c: crate::ConnHandle, n: usize, size: usize, itt: Duration) {
    let data = pattern(n * size, 9);
    for chunk in data.chunks(size) {
        assert_eq!(p.client.conn_mut(c).unwrap().write(chunk), size);
        p.advance(itt);
    }
    p.advance(Duration::from_secs(2));
}

/// W-7, the paper's Fig. 1: 200-byte writes, RDB_lim = ∞; the 2nd and 3rd packets
/// are lost, the 4th carries all three outstanding writes and its ACK (covering three
/// packets) enters CWR; the 5th has nothing left to bundle.
pub fn fig1_trace_is_reproduced_exactly() {
    let mut client = rdb_client(None, ThinTest::Spifl(100));
    client.recovery.tlp = false; // keep the trace to the paper's five packets
                                 // A 20 ms RTT and writes every 30 ms: each write finds the earlier ones ACKed
                                 // unless they were lost, as in the figure.
    let mut p = Pair::with_configs(Duration::from_millis(10), client, quick_server());
    let (c, s) = p.establish();
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n == 2 || n == 3 {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    thin_stream(&mut p, c, 5, 200, Duration::from_millis(30));
    assert_eq!(
        data_packets(&p),
        vec![(0, 200), (200, 200), (200, 400), (200, 600), (800, 200)]
    );
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.rdb_packets, 2);
    assert_eq!(info.rdb_bytes, 200 + 400);
    assert_eq!(info.rdb_loss_cwr, 1, "the ACK of 800 covers three packets");
    assert_eq!(info.retransmits, 0, "the bundle repaired the losses");
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, pattern(1000, 9));
    // The receiver ACKed each bundle at once: 800 right after the 4th packet arrived.
    let acks: Vec<u32> = p
        .seen(false)
        .iter()
        .filter(|x| x.len == 0)
        .map(|x| x.ack.0)
        .collect();
    assert!(acks.windows(2).any(|w| w[1].wrapping_sub(w[0]) == 600));
}

/// RDB-7: bundling changes packet sizes, never the number of packets.
pub fn bundling_sends_the_same_packets_bigger() {
    let run = |rdb: bool| {
        let client = if rdb {
            rdb_client(Some(1), ThinTest::default())
        } else {
            Config {
                nagle: false,
                ..Config::default()
            }
        };
        let mut p = Pair::with_configs(Duration::from_millis(50), client, quick_server());
        let (c, s) = p.establish();
        thin_stream(&mut p, c, 50, 120, Duration::from_millis(20));
        let mut got = Vec::new();
        Pair::read_all(&mut p.server, s, &mut got);
        assert_eq!(got, pattern(50 * 120, 9));
        (data_packets(&p), p.client.conn(c).unwrap().info())
    };
    let (plain, _) = run(false);
    let (bundled, info) = run(true);
    assert_eq!(plain.len(), 50);
    assert_eq!(bundled.len(), plain.len());
    // RTT 100 ms, ITT 20 ms: every packet after the first has its predecessor
    // unacknowledged, PIF ≈ 5 < DPIFL10 = 10, and RDB_lim = 1 bundles exactly it.
    assert!(
        bundled[1..].iter().all(|&(_, len)| len == 240),
        "{bundled:?}"
    );
    assert_eq!(info.rdb_packets, 49);
    assert_eq!(info.rdb_bytes, 49 * 120);
    assert_eq!(info.rdb_loss_cwr, 0, "no loss, no CWR");
}

/// The thin test gates bundling: SPIFL1 bundles only with nothing in flight, i.e.
/// never (a bundle needs an outstanding segment).
pub fn a_stream_that_is_not_thin_does_not_bundle() {
    let mut p = Pair::with_configs(
        Duration::from_millis(50),
        rdb_client(None, ThinTest::Spifl(1)),
        quick_server(),
    );
    let (c, _) = p.establish();
    thin_stream(&mut p, c, 20, 120, Duration::from_millis(20));
    assert!(data_packets(&p).iter().all(|&(_, len)| len == 120));
    assert_eq!(p.client.conn(c).unwrap().info().rdb_packets, 0);
}

/// No bundle on a FIN segment (the patch leaves FINs alone).
pub fn the_fin_segment_carries_no_bundle() {
    let mut p = Pair::with_configs(
        Duration::from_millis(50),
        rdb_client(None, ThinTest::default()),
        quick_server(),
    );
    let (c, s) = p.establish();
    let data = pattern(3 * 100, 9);
    for chunk in data.chunks(100).take(2) {
        p.client.conn_mut(c).unwrap().write(chunk);
        p.advance(Duration::from_millis(10));
    }
    p.client.conn_mut(c).unwrap().write(&data[200..]);
    p.client.conn_mut(c).unwrap().close();
    p.advance(Duration::from_secs(2));
    let seen: Vec<Seen> = p.seen(true).into_iter().filter(|x| x.len > 0).collect();
    let last = seen.last().unwrap();
    assert!(last.flags.fin());
    assert_eq!(last.len, 100, "the FIN segment is sent alone");
    assert_eq!(seen[1].len, 200, "the second packet did bundle");
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, data);
}

/// Two losses hidden by bundles within one window cause one CWR, not two (Linux
/// `tcp_enter_cwr` only from below CWR; CWR lasts until SND.UNA passes `high_seq`).
pub fn hidden_losses_reduce_the_window_once_per_window() {
    let mut p = Pair::with_configs(
        Duration::from_millis(50),
        rdb_client(Some(1), ThinTest::default()),
        quick_server(),
    );
    let (c, s) = p.establish();
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n == 2 || n == 4 {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let cwnd0 = p.client.conn(c).unwrap().info().cwnd;
    thin_stream(&mut p, c, 8, 120, Duration::from_millis(20));
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.rdb_loss_cwr, 1);
    assert_eq!(info.retransmits, 0);
    assert!(
        info.ssthresh <= cwnd0 && info.ssthresh >= cwnd0 / 2 - 1,
        "{info:?}"
    );
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, pattern(8 * 120, 9));
}

/// The loss inference can be switched off ("old RDB"): the same losses, no CWR.
pub fn without_the_loss_inference_hidden_losses_go_unanswered() {
    let mut client = rdb_client(Some(1), ThinTest::default());
    client.transmit.rdb.as_mut().unwrap().loss_inference = crate::rdb::LossInference::Off;
    let mut p = Pair::with_configs(Duration::from_millis(50), client, quick_server());
    let (c, _) = p.establish();
    let mut n = 0;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n == 2 {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    thin_stream(&mut p, c, 8, 120, Duration::from_millis(20));
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.rdb_loss_cwr, 0);
    assert_eq!(
        info.ssthresh,
        u32::MAX,
        "still in slow start, never reduced"
    );
}

/// Heavy random loss both ways, unlimited bundling, a long thin stream: every byte
/// arrives once and in order.
pub fn the_stream_survives_heavy_loss_with_unlimited_bundling() {
    let mut p = Pair::with_configs(
        Duration::from_millis(30),
        rdb_client(None, ThinTest::Spifl(64)),
        quick_server(),
    );
    let (c, s) = p.establish();
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    p.set_hook(move |_| {
        // xorshift: a fixed, seedless sequence, 15 % loss.
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        if x % 100 < 15 {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let n = 400;
    thin_stream(&mut p, c, n, 97, Duration::from_millis(7));
    p.advance(Duration::from_secs(60));
    let mut got = Vec::new();
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got, pattern(n * 97, 9));
    let info = p.client.conn(c).unwrap().info();
    assert!(info.rdb_packets > 50 && info.rdb_loss_cwr > 0, "{info:?}");
}

/// A receiver that delays the ACK of a segment and then ACKs the bundle carrying it
/// makes the paper's ACK rule see a loss that did not happen; the D-SACK refinement
/// sees the receiver's D-SACK for the carried segment and does not.
pub fn the_dsack_refinement_ignores_a_delayed_ack_covering_a_bundle() {
    let run = |rule: crate::rdb::LossInference| {
        let mut client = rdb_client(Some(1), ThinTest::Spifl(100));
        client.transmit.rdb.as_mut().unwrap().loss_inference = rule;
        let mut server = Config::default();
        server.ack.quick_acks = 0; // delay ACKs from the first segment on
        let mut p = Pair::with_configs(Duration::from_millis(20), client, server);
        let (c, s) = p.establish();
        let data = pattern(240, 9);
        // Two writes back to back: A alone, then B with A bundled in front.
        p.client.conn_mut(c).unwrap().write(&data[..120]);
        p.advance(Duration::from_millis(1));
        p.client.conn_mut(c).unwrap().write(&data[120..]);
        p.advance(Duration::from_secs(1));
        let mut got = Vec::new();
        Pair::read_all(&mut p.server, s, &mut got);
        assert_eq!(got, data);
        assert_eq!(data_packets(&p), vec![(0, 120), (0, 240)]);
        // The receiver ACKed both at once, on the bundle, with a D-SACK for A.
        let acks: Vec<Seen> = p.seen(false).into_iter().filter(|x| x.len == 0).collect();
        assert_eq!(acks.last().unwrap().ack.0.wrapping_sub(acks[0].ack.0), 240);
        p.client.conn(c).unwrap().info().rdb_loss_cwr
    };
    assert_eq!(
        run(crate::rdb::LossInference::Ack),
        1,
        "the paper's false positive"
    );
    assert_eq!(run(crate::rdb::LossInference::Dsack), 0);
}

// ---------------------------------------------------------------------------
// `crate::rdb`'s thin test and bundle walk (RDB-8 and the caps of RDB-7).

fn ms(v: u64) -> Duration {
    Duration::from_millis(v)
}

fn board(segs: &[(u64, u64)]) -> Scoreboard {
    let mut b = Scoreboard::new();
    for &(s, e) in segs {
        b.push(s, e, false, SentInfo::default());
    }
    b
}

/// RDB-8 / W-7: the thresholds the paper's text states.
pub fn thin_thresholds_are_exact() {
    // "RDB with SPIFL3 is only allowed to bundle when it has less than three packets
    // in the pipe."
    let s3 = ThinTest::Spifl(3);
    assert!(s3.is_thin(2, Some(ms(150))));
    assert!(!s3.is_thin(3, Some(ms(150))));
    // "RDB_lim=∞ uses DPIFL10; it is allowed to bundle as long as there are less
    // than 15 PIFs" (RTT 150 ms / 10 ms).
    let d10 = ThinTest::default();
    assert!(d10.is_thin(14, Some(ms(150))));
    assert!(!d10.is_thin(15, Some(ms(150))));
    // DPIFL20 halves the limit; no RTT sample yet: thin (Linux's ~0U min RTT).
    let d20 = ThinTest::Dpifl { itt_min: ms(20) };
    assert!(d20.is_thin(7, Some(ms(150))) && !d20.is_thin(8, Some(ms(150))));
    assert!(d20.is_thin(1000, None));
}

pub fn bundles_whole_segments_back_to_the_first_that_does_not_fit() {
    // Three 200-byte segments outstanding, a new one of 200 at 601.
    let b = board(&[(1, 201), (201, 401), (401, 601)]);
    assert_eq!(bundle_start(&b, 601, 200, 1448, None), (1, 3));
    assert_eq!(bundle_start(&b, 601, 200, 1448, Some(1)), (401, 1));
    assert_eq!(bundle_start(&b, 601, 200, 1448, Some(2)), (201, 2));
    // 600 bytes fit, 800 do not: the walk stops at the third (no skipping).
    assert_eq!(bundle_start(&b, 601, 200, 599, None), (401, 1));
    assert_eq!(bundle_start(&b, 601, 200, 600, None), (201, 2));
    // The new segment alone fills the cap: nothing goes along.
    assert_eq!(bundle_start(&b, 601, 1448, 1448, None), (601, 0));
}

pub fn the_paper_caps_hold_for_120_and_400_byte_writes() {
    // At most 12 × 120 B (11 redundant) and 3 × 400 B (2 redundant) per 1448 B.
    let segs: Vec<(u64, u64)> = (0..20).map(|i| (1 + i * 120, 121 + i * 120)).collect();
    let b = board(&segs);
    assert_eq!(bundle_start(&b, 2401, 120, 1448, None).1, 11);
    let segs: Vec<(u64, u64)> = (0..5).map(|i| (1 + i * 400, 401 + i * 400)).collect();
    let b = board(&segs);
    assert_eq!(bundle_start(&b, 2001, 400, 1448, None).1, 2);
}

pub fn a_gap_or_an_empty_board_stops_the_walk() {
    assert_eq!(bundle_start(&Scoreboard::new(), 1, 100, 1448, None), (1, 0));
    // The newest outstanding segment does not end where the new one starts.
    let b = board(&[(1, 101)]);
    assert_eq!(bundle_start(&b, 201, 100, 1448, None), (201, 0));
}

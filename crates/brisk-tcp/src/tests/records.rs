//! Record ends (`Connection::end_record`, Linux `MSG_EOR`): no segment carries bytes
//! from both sides of a mark, a segment ending at one carries PSH (also when
//! retransmitted), the stream arrives whole, and the marks held are bounded.

use super::harness::*;
use crate::config::Config;
use brisk_time::Duration;
use brisk_wire::Flags;

/// Writes 3000 B, ends a record, 300 B, ends a record, then 5000 B; returns every data
/// segment to the server as (stream start, length, PSH) and the bytes received.
fn run(drop_first_at: Option<usize>) -> (Vec<(usize, usize, bool)>, Vec<u8>) {
    let mut p = Pair::with_configs(
        Duration::from_millis(10),
        Config::default(),
        Config::default(),
    );
    if let Some(at) = drop_first_at {
        let mut dropped = false;
        let mut isn = None;
        p.set_hook(move |s| {
            if s.to_server && s.flags.syn() {
                isn = Some(s.seq);
            }
            let off = isn.map(|i| (s.seq - i) as usize - 1);
            if s.to_server && s.len > 0 && !dropped && off == Some(at) {
                dropped = true;
                return Action::Drop;
            }
            Action::Deliver
        });
    }
    let (c, s) = p.establish();
    let isn = p.log.iter().find(|(x, _)| x.to_server).unwrap().0.seq;
    let data: Vec<u8> = (0..8300u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let conn = p.client.conn_mut(c).unwrap();
    assert_eq!(conn.write(&data[..3000]), 3000);
    assert!(conn.end_record());
    assert!(
        !conn.end_record(),
        "a second mark at the same end adds nothing"
    );
    assert_eq!(conn.write(&data[3000..3300]), 300);
    assert!(conn.end_record());
    assert_eq!(conn.write(&data[3300..]), 5000);
    let mut got = Vec::new();
    p.run_until(Duration::from_secs(5), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() >= data.len()
    });
    assert_eq!(got, data, "the stream arrives whole and in order");
    let segs = p
        .log
        .iter()
        .filter(|(x, _)| x.to_server && x.len > 0)
        .map(|(x, _)| {
            (
                (x.seq - isn) as usize - 1,
                x.len,
                x.flags.contains(Flags::PSH),
            )
        })
        .collect();
    (segs, got)
}

#[test]
fn no_segment_spans_a_record_end() {
    for drop in [None, Some(2896)] {
        let (segs, _) = run(drop);
        for &(start, len, psh) in &segs {
            for mark in [3000, 3300] {
                assert!(
                    !(start < mark && start + len > mark),
                    "segment {start}+{len} spans the record end at {mark} (drop {drop:?})"
                );
                if start + len == mark {
                    assert!(psh, "segment {start}+{len} ends a record without PSH");
                }
            }
        }
        // The 300-byte record goes as a segment of its own, Nagle notwithstanding.
        assert!(
            segs.iter().any(|&(s, l, _)| s == 3000 && l == 300),
            "{segs:?}"
        );
        if drop.is_some() {
            let ends_record = segs.iter().filter(|&&(s, l, _)| s + l == 3000).count();
            assert!(
                ends_record >= 2,
                "the retransmission ends the record too: {segs:?}"
            );
        }
    }
}

#[test]
fn record_marks_are_bounded() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, _s) = p.establish();
    let conn = p.client.conn_mut(c).unwrap();
    // One-byte records with nothing sent in between (no poll): every mark is held.
    let mut taken = 0;
    for _ in 0..5_000 {
        assert_eq!(conn.write(&[1]), 1);
        if conn.end_record() {
            taken += 1;
        }
    }
    assert_eq!(taken, 4_096);
}

/// RC3's low-priority copies keep `end_record`'s contract too (as RDB's bundles do):
/// the RLP joins writes made before it starts into one chunk and slices it from the
/// chunk's head, so without the guard in `conn/rc3_send.rs` the copy slice around
/// offset 20 000 carried bytes of both records. On an MPTCP subflow a record end is
/// where two DSS mappings meet, and such a copy would carry bytes under the wrong
/// data sequence numbers. The marks lie beyond the initial window, where the RLP
/// copies.
#[test]
fn rc3_copies_do_not_span_a_record_end() {
    let rc3 = Config {
        transmit: crate::config::TransmitConfig {
            rc3: Some(crate::rc3::Rc3Config::default()),
            ..Default::default()
        },
        nagle: false,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(10), rc3.clone(), rc3);
    let (c, s) = p.establish();
    let isn = p.log.iter().find(|(x, _)| x.to_server).unwrap().0.seq;
    let data: Vec<u8> = (0..40_300u32).map(|i| (i * 7 + i / 251) as u8).collect();
    let conn = p.client.conn_mut(c).unwrap();
    assert_eq!(conn.write(&data[..20_000]), 20_000);
    assert!(conn.end_record());
    assert_eq!(conn.write(&data[20_000..20_300]), 300);
    assert!(conn.end_record());
    assert_eq!(conn.write(&data[20_300..]), 20_000);
    let mut got = Vec::new();
    p.run_until(Duration::from_secs(5), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() >= data.len()
    });
    assert_eq!(got, data, "the stream arrives whole and in order");
    let copies = p.client.conn(c).unwrap().info().rc3.unwrap().rlp_packets;
    assert!(copies > 0, "the RLP copied nothing");
    for (x, _) in p.log.iter().filter(|(x, _)| x.to_server && x.len > 0) {
        let start = (x.seq - isn) as usize - 1;
        for mark in [20_000, 20_300] {
            assert!(
                !(start < mark && start + x.len > mark),
                "segment {start}+{} spans the record end at {mark}",
                x.len
            );
        }
    }
}

//! Unordered receive (uTCP) through real packets: the Minion Fig. 3 read sequence,
//! readiness for out-of-order arrivals, and wire identity with the option on and off.

use super::harness::*;
use super::transfer::pattern;
use crate::config::Config;
use crate::endpoint::ConnHandle;
use crate::event::Event;
use crate::UnorderedRead;
use brisk_time::{Duration, Instant};
use std::cell::Cell;
use std::rc::Rc;

const MSS: usize = 1448;

/// Drains the server connection with `read_unordered` (or `read` when `unordered` is
/// false), checking every read against `data`.
fn drain(p: &mut Pair, s: ConnHandle, data: &[u8], buf_len: usize, out: &mut Vec<UnorderedRead>) {
    let mut buf = vec![0u8; buf_len];
    let c = p.server.conn_mut(s).unwrap();
    while let Some(r) = c.read_unordered(&mut buf) {
        let off = r.offset as usize;
        assert_eq!(&buf[..r.len], &data[off..off + r.len]);
        out.push(r);
    }
}

fn read(offset: usize, len: usize, in_order: bool) -> UnorderedRead {
    UnorderedRead {
        offset: offset as u64,
        len,
        in_order,
    }
}

/// Three segments whose second and third data packets are delayed so that they
/// arrive as 1, 3, 2 (10 ms apart). Returns the reads and the server's Readable count.
fn one_three_two(unordered: bool) -> (Vec<UnorderedRead>, usize) {
    let mut p = Pair::new(Duration::from_millis(20));
    let (c, s) = p.establish();
    p.server.conn_mut(s).unwrap().set_unordered(unordered);
    let data_seen = Rc::new(Cell::new(0));
    let n = data_seen.clone();
    p.set_hook(move |seen| {
        if !seen.to_server || seen.len == 0 {
            return Action::Deliver;
        }
        n.set(n.get() + 1);
        match n.get() {
            2 => Action::Delay(Duration::from_millis(20)),
            3 => Action::Delay(Duration::from_millis(10)),
            _ => Action::Deliver,
        }
    });
    let data = pattern(3 * MSS, 7);
    assert_eq!(p.client.conn_mut(c).unwrap().write(&data), data.len());
    p.server_events.clear();
    let mut reads = vec![];
    let end = p.now + Duration::from_secs(1);
    while p.step_until(end) {
        drain(&mut p, s, &data, MSS, &mut reads);
    }
    assert_eq!(data_seen.get(), 3, "no retransmissions");
    let readable = p
        .server_events
        .iter()
        .filter(|e| **e == (s, Event::Readable))
        .count();
    (reads, readable)
}

#[test]
fn segments_arriving_1_3_2_are_read_1_then_3_out_of_order_then_2_and_3_in_order() {
    let (reads, readable) = one_three_two(true);
    assert_eq!(
        reads,
        vec![
            read(0, MSS, true),
            read(2 * MSS, MSS, false),
            read(MSS, MSS, true),
            read(2 * MSS, MSS, true),
        ]
    );
    assert_eq!(
        readable, 3,
        "each arrival, in order or not, makes the socket readable"
    );
}

#[test]
fn without_the_option_out_of_order_data_waits_for_the_hole() {
    let (reads, readable) = one_three_two(false);
    assert_eq!(
        reads,
        vec![
            read(0, MSS, true),
            read(MSS, MSS, true),
            read(2 * MSS, MSS, true)
        ]
    );
    assert_eq!(readable, 2);
}

/// Every packet emitted: when, and its bytes.
type PacketLog = Vec<(Instant, Vec<u8>)>;

/// A lossy, reordering bulk transfer with a greedy reader; returns every packet both
/// hosts emitted, the in-order stream received and the bytes read out of order.
fn lossy_run(unordered: bool) -> (PacketLog, Vec<u8>, usize) {
    let server_cfg = Config {
        unordered,
        recv_buffer: 256 << 10,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(30), Config::default(), server_cfg);
    let (c, s) = p.establish();
    p.set_hook(|seen| {
        if seen.len == 0 {
            return Action::Deliver;
        }
        match seen.index % 23 {
            5 | 17 => Action::Drop,
            11 => Action::Delay(Duration::from_millis(7)),
            _ => Action::Deliver,
        }
    });
    let data = pattern(2 << 20, 9);
    let mut sent = 0;
    let mut reads = vec![];
    let end = p.now + Duration::from_secs(60);
    loop {
        if sent < data.len() {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        drain(&mut p, s, &data, 64 << 10, &mut reads);
        if !p.step_until(end) {
            break;
        }
    }
    let mut stream = vec![];
    let mut ooo = 0;
    for r in &reads {
        if r.in_order {
            assert_eq!(r.offset as usize, stream.len());
            stream.extend_from_slice(&data[r.offset as usize..][..r.len]);
        } else {
            ooo += r.len;
        }
    }
    let log = p.log.iter().map(|(seen, b)| (seen.at, b.clone())).collect();
    (log, stream, ooo)
}

#[test]
fn unordered_receive_leaves_every_packet_of_a_lossy_transfer_unchanged() {
    let (off_log, off_stream, off_ooo) = lossy_run(false);
    let (on_log, on_stream, on_ooo) = lossy_run(true);
    assert_eq!(off_ooo, 0);
    assert!(on_ooo > 100_000, "out-of-order reads happened: {on_ooo}");
    assert_eq!(off_stream.len(), 2 << 20);
    assert!(on_stream == off_stream);
    assert_eq!(on_log.len(), off_log.len());
    assert!(on_log == off_log, "packet traces differ");
}

//! Prioritised send (uTCP `SO_UNORDEREDSEND`, Minion NSDI 2012 §4.2) through real
//! packets: an urgent message written behind a queue of ordinary ones is sent ahead of
//! every one still wholly unsent, each message stays whole, and the stream (checked
//! message by message) survives loss and retransmission.

use super::harness::*;
use crate::config::Config;
use brisk_time::Duration;
use std::cell::Cell;
use std::rc::Rc;

const MSG: usize = 1000;
const QUEUED: u32 = 200;
const URGENT: u32 = 9999;

/// A message: its id (4 bytes, big-endian) then bytes derived from the id.
fn message(id: u32) -> Vec<u8> {
    let mut m = id.to_be_bytes().to_vec();
    m.extend((0..MSG - 4).map(|i| (id as usize * 31 + i * 7) as u8));
    m
}

/// Writes QUEUED ordinary messages, runs `settle`, writes the urgent one at priority 9,
/// then runs to the end. Returns the message ids as received in order, and the index
/// of the first message that was wholly unsent when the urgent one was written.
fn run(prioritised: bool, drop_every: usize) -> (Vec<u32>, usize) {
    let cfg = Config {
        unordered_send: prioritised,
        nagle: false,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(20), cfg, Config::default());
    // Drop every `drop_every`-th data packet to the server on its first sending (a
    // retransmission of the same sequence number goes through).
    let dropped = Rc::new(Cell::new(0usize));
    let d = dropped.clone();
    let mut seen_seqs = std::collections::HashSet::new();
    let mut n = 0usize;
    p.set_hook(move |s| {
        if !s.to_server || s.len == 0 || !seen_seqs.insert(s.seq) {
            return Action::Deliver;
        }
        n += 1;
        if drop_every > 0 && n.is_multiple_of(drop_every) {
            d.set(d.get() + 1);
            return Action::Drop;
        }
        Action::Deliver
    });
    let (c, s) = p.establish();
    let isn = p.log.iter().find(|(x, _)| x.to_server).unwrap().0.seq;
    for id in 0..QUEUED {
        assert_eq!(
            p.client
                .conn_mut(c)
                .unwrap()
                .write_with_priority(&message(id), 1),
            MSG
        );
    }
    // Two round trips: some messages are on the wire, most still queued.
    p.advance(Duration::from_millis(45));
    let frontier = p
        .log
        .iter()
        .filter(|(x, _)| x.to_server && x.len > 0)
        .map(|(x, _)| (x.seq - isn) as usize - 1 + x.len)
        .max()
        .unwrap_or(0);
    let first_unsent = frontier.div_ceil(MSG);
    assert!(
        first_unsent > 0 && first_unsent < QUEUED as usize / 2,
        "{first_unsent}"
    );
    assert_eq!(
        p.client
            .conn_mut(c)
            .unwrap()
            .write_with_priority(&message(URGENT), 9),
        MSG
    );
    let total = (QUEUED as usize + 1) * MSG;
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    let end = p.now + Duration::from_secs(30);
    while got.len() < total && p.step_until(end) {
        loop {
            let k = p.server.conn_mut(s).unwrap().read(&mut buf);
            if k == 0 {
                break;
            }
            got.extend_from_slice(&buf[..k]);
        }
    }
    assert_eq!(got.len(), total, "every byte arrives");
    if drop_every > 0 {
        assert!(
            dropped.get() >= 5,
            "the loss pattern dropped {}",
            dropped.get()
        );
    }
    let ids = got
        .chunks(MSG)
        .map(|m| {
            let id = u32::from_be_bytes(m[..4].try_into().unwrap());
            assert_eq!(m, &message(id)[..], "message {id} intact and whole");
            id
        })
        .collect();
    (ids, first_unsent)
}

fn expected(urgent_at: usize) -> Vec<u32> {
    let mut v: Vec<u32> = (0..QUEUED).collect();
    v.insert(urgent_at, URGENT);
    v
}

#[test]
fn an_urgent_write_overtakes_every_wholly_unsent_message() {
    let (ids, first_unsent) = run(true, 0);
    assert_eq!(ids, expected(first_unsent));
}

#[test]
fn without_prioritised_send_the_urgent_message_waits_its_turn() {
    let (ids, _) = run(false, 0);
    assert_eq!(ids, expected(QUEUED as usize));
}

#[test]
fn reordered_messages_survive_loss_and_retransmission() {
    let (ids, first_unsent) = run(true, 7);
    assert_eq!(ids, expected(first_unsent));
}

#[test]
fn a_prioritised_write_larger_than_the_send_buffer_is_an_error_not_a_wait() {
    use crate::stream::ByteStream;
    let cfg = Config {
        unordered_send: true,
        send_buffer: 4096,
        ..Config::default()
    };
    let mut p = Pair::with_configs(Duration::from_millis(5), cfg, Config::default());
    let (c, _) = p.establish();
    let conn = p.client.conn_mut(c).unwrap();
    let e = ByteStream::write_with_priority(conn, &[1; 4097], 3).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("4097"), "{e}");
    // One that fits is taken whole; a plain write is still taken in part.
    assert_eq!(
        ByteStream::write_with_priority(conn, &[1; 3000], 3).unwrap(),
        3000
    );
    assert_eq!(
        ByteStream::write_with_priority(conn, &[1; 2000], 3).unwrap(),
        0
    );
    assert_eq!(ByteStream::write(conn, &[1; 2000]).unwrap(), 1096);
}

//! msTCP tests: chunks over uCOBS over a modelled uTCP receiver (random segmentation,
//! loss, reordering; each byte handed out of order at most once and always again in
//! order), the receiver's bounds, and a seeded fuzz loop for the chunk decoder.

use super::*;
use crate::scan::{Limits, RecordScanner};
use brisk_tcp::conn::UnorderedRead;
use brisk_tcp::stream::ByteStream;
use rand::seq::SliceRandom;
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::io;

/// A byte stream that takes at most `room` bytes per write (and everything with
/// `room = usize::MAX`).
#[derive(Default)]
struct Wire {
    bytes: Vec<u8>,
    room: Option<usize>,
}

impl ByteStream for Wire {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        let n = data.len().min(self.room.unwrap_or(usize::MAX));
        self.bytes.extend_from_slice(&data[..n]);
        Ok(n)
    }
    fn read(&mut self, _: &mut [u8]) -> io::Result<usize> {
        Ok(0)
    }
    fn read_unordered(&mut self, _: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        Ok(None)
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Per stream, the messages rebuilt from the delivered chunks, plus broken streams.
#[derive(Default, Debug)]
struct Got {
    msgs: BTreeMap<u16, Vec<Vec<u8>>>,
    partial: BTreeMap<u16, Vec<u8>>,
    ended: Vec<u16>,
    broken: Vec<(u16, BreakReason)>,
}

impl Got {
    fn on(&mut self, e: MsEvent<'_>) {
        match e {
            MsEvent::Chunk(c) => {
                let p = self.partial.entry(c.stream).or_default();
                assert_eq!(p.len(), c.offset as usize, "offsets follow");
                p.extend_from_slice(c.data);
                if c.end_of_msg {
                    let m = std::mem::take(p);
                    self.msgs.entry(c.stream).or_default().push(m);
                }
                if c.end_of_stream {
                    self.ended.push(c.stream);
                }
            }
            MsEvent::Broken { stream, reason } => self.broken.push((stream, reason)),
        }
    }
}

/// uTCP's unordered receive over `wire` cut into segments, some lost and the rest in
/// a random order; feeds the uCOBS scanner and the demultiplexer. `spread: None`:
/// any order, lost segments last (as retransmissions); `Some(k)`: each segment is
/// at most `k` places late, a lost one `k` to `2k` (a retransmission an RTT later).
fn deliver_unordered(
    wire: &[u8],
    rng: &mut ChaCha8Rng,
    max_seg: usize,
    loss: f64,
    spread: Option<usize>,
    d: &mut Demux,
) -> Got {
    let mut segs = Vec::new();
    let mut off = 0;
    while off < wire.len() {
        let n = rng.gen_range(1..=max_seg).min(wire.len() - off);
        segs.push((off, n));
        off += n;
    }
    let (mut lost, mut arrive): (Vec<_>, Vec<_>) = segs.iter().partition(|_| rng.gen_bool(loss));
    if let Some(k) = spread {
        let mut keyed: Vec<(usize, (usize, usize))> = segs
            .iter()
            .enumerate()
            .map(|(i, &s)| {
                let late = if rng.gen_bool(loss) {
                    k + rng.gen_range(0..=k)
                } else {
                    rng.gen_range(0..=k)
                };
                (i + late, s)
            })
            .collect();
        keyed.sort_by_key(|x| x.0);
        arrive = keyed.into_iter().map(|x| x.1).collect();
    } else {
        arrive.shuffle(rng);
        lost.shuffle(rng);
        arrive.extend(lost);
    }
    let mut scan = RecordScanner::new(Limits::default()).unwrap();
    let mut got = Got::default();
    let mut pos = 0usize;
    let mut held: BTreeMap<usize, usize> = BTreeMap::new();
    let mut push = |scan: &mut RecordScanner, got: &mut Got, o: usize, n: usize, in_order: bool| {
        let mut cb = |dg: crate::scan::Datagram<'_>| d.push(dg.data, &mut |e| got.on(e));
        if in_order {
            scan.push_in_order(o as u64, &wire[o..o + n], &mut cb)
                .unwrap();
        } else {
            scan.push_out_of_order(o as u64, &wire[o..o + n], &mut cb);
        }
    };
    for (o, n) in arrive {
        if o == pos {
            push(&mut scan, &mut got, o, n, true);
            pos += n;
            // uTCP hands the held bytes again, in order, once the hole is filled.
            while let Some(n) = held.remove(&pos) {
                push(&mut scan, &mut got, pos, n, true);
                pos += n;
            }
        } else if o > pos {
            push(&mut scan, &mut got, o, n, false);
            held.insert(o, n);
        }
    }
    assert_eq!(pos, wire.len());
    got
}

type Plan = Vec<(u16, Vec<u8>, bool)>;

/// Random messages on `streams` streams, in a random interleaving that keeps each
/// stream's own order; some streams end with their last message.
fn random_plan(rng: &mut ChaCha8Rng, streams: u16, max_len: usize) -> Plan {
    let mut per: Vec<Vec<(u16, Vec<u8>, bool)>> = (0..streams)
        .map(|s| {
            let id = s.wrapping_mul(7919);
            let k = rng.gen_range(0..5);
            let end = rng.gen_bool(0.5);
            (0..k)
                .map(|j| {
                    let mut m = vec![0u8; rng.gen_range(0..max_len)];
                    rng.fill_bytes(&mut m);
                    (id, m, end && j == k - 1)
                })
                .collect()
        })
        .collect();
    let mut plan = Vec::new();
    loop {
        let live: Vec<usize> = (0..per.len()).filter(|&i| !per[i].is_empty()).collect();
        let Some(&i) = live.choose(rng) else {
            break;
        };
        plan.push(per[i].remove(0));
    }
    plan
}

fn expected(plan: &Plan) -> BTreeMap<u16, Vec<Vec<u8>>> {
    let mut m: BTreeMap<u16, Vec<Vec<u8>>> = BTreeMap::new();
    for (s, msg, _) in plan {
        m.entry(*s).or_default().push(msg.clone());
    }
    m
}

fn encode(plan: &Plan, max_chunk: usize, room: Option<usize>) -> Vec<u8> {
    let mut tx = MsSender::new(SendLimits {
        max_chunk,
        ..SendLimits::default()
    })
    .unwrap();
    for (s, m, end) in plan {
        tx.send(*s, m, *end).unwrap();
    }
    let mut w = Wire {
        room,
        ..Wire::default()
    };
    let mut rounds = 0;
    while !tx.idle() || w.bytes.is_empty() && rounds == 0 {
        tx.poll_write(&mut w).unwrap();
        rounds += 1;
        assert!(rounds < 1_000_000, "the sender makes progress");
    }
    assert_eq!(tx.queued_bytes(), 0);
    w.bytes
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]

    /// Every stream's messages arrive intact and in order, whatever the segmentation,
    /// loss and reordering under unordered delivery.
    #[test]
    fn streams_survive_unordered_delivery(
        seed in proptest::prelude::any::<u64>(),
        streams in 1u16..40,
        max_chunk in 64usize..1500,
        max_seg in 1usize..3000,
        loss in 0.0f64..0.3,
        short_writes in proptest::prelude::any::<bool>(),
    ) {
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let plan = random_plan(&mut rng, streams, 5000);
        let wire = encode(&plan, max_chunk, short_writes.then_some(700));
        let mut d = Demux::new(RecvLimits::default()).unwrap();
        let got = deliver_unordered(&wire, &mut rng, max_seg, loss, None, &mut d);
        proptest::prop_assert!(got.broken.is_empty(), "{:?}", got.broken);
        proptest::prop_assert_eq!(d.counters().malformed, 0);
        proptest::prop_assert!(got.msgs == expected(&plan), "messages differ");
        proptest::prop_assert!(got.partial.values().all(|p| p.is_empty()));
        let ended = plan.iter().filter(|x| x.2).count();
        proptest::prop_assert_eq!(got.ended.len(), ended);
        proptest::prop_assert_eq!(d.held_bytes(), 0);
        proptest::prop_assert_eq!(d.open_streams(), expected(&plan).len() - ended);
    }
}

#[test]
fn interleaves_round_robin() {
    let mut tx = MsSender::new(SendLimits {
        max_chunk: 10,
        ..SendLimits::default()
    })
    .unwrap();
    tx.send(1, &[1; 25], true).unwrap();
    tx.send(2, &[2; 15], true).unwrap();
    tx.send(3, &[3; 5], false).unwrap();
    let mut w = Wire::default();
    assert_eq!(tx.poll_write(&mut w).unwrap(), 6);
    let mut order = Vec::new();
    let mut scan = RecordScanner::new(Limits::default()).unwrap();
    scan.push_in_order(0, &w.bytes, &mut |d| {
        let (h, _) = ChunkHeader::decode(d.data).unwrap();
        order.push((h.stream, h.seq, h.flags));
    })
    .unwrap();
    let e = END_OF_MSG;
    let es = END_OF_MSG | END_OF_STREAM;
    assert_eq!(
        order,
        [
            (1, 0, 0),
            (2, 0, 0),
            (3, 0, e),
            (1, 1, 0),
            (2, 1, es),
            (1, 2, es)
        ]
    );
    assert_eq!(tx.send(1, b"x", false), Err(MsError::StreamClosed(1)));
    tx.send(3, b"more", false).unwrap();
}

#[test]
fn a_chunk_from_the_middle_of_a_stream_waits_for_its_turn() {
    let plan: Plan = vec![(5, vec![9; 30], false), (6, vec![8; 5], false)];
    let wire = encode(&plan, 10, None);
    let mut chunks = Vec::new();
    let mut scan = RecordScanner::new(Limits::default()).unwrap();
    scan.push_in_order(0, &wire, &mut |d| chunks.push(d.data.to_vec()))
        .unwrap();
    // Chunks: 5/0, 6/0, 5/1, 5/2. Deliver 5/2, 6/0, 5/1, 5/0.
    let mut d = Demux::new(RecvLimits::default()).unwrap();
    let mut seen = Vec::new();
    for k in [3, 1, 2, 0] {
        d.push(&chunks[k], &mut |e| {
            if let MsEvent::Chunk(c) = e {
                seen.push((c.stream, c.offset));
            }
        });
    }
    assert_eq!(seen, [(6, 0), (5, 0), (5, 10), (5, 20)]);
    assert_eq!(d.counters().held, 2);
    // A repeat is counted, not delivered.
    d.push(&chunks[0], &mut |_| panic!("no delivery"));
    assert_eq!(d.counters().duplicates, 1);
}

#[test]
fn sequence_numbers_wrap() {
    let plan: Plan = vec![(1, vec![7; 70_000], false), (2, vec![3; 5], true)];
    let wire = encode(&plan, 1, None);
    let mut d = Demux::new(RecvLimits::default()).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let got = deliver_unordered(&wire, &mut rng, 400, 0.05, Some(100), &mut d);
    assert!(got.broken.is_empty());
    assert!(got.msgs == expected(&plan), "messages differ");
}

fn chunk(stream: u16, seq: u16, flags: u8, msg_id: u32, off: u32, payload: &[u8]) -> Vec<u8> {
    let mut d = ChunkHeader {
        stream,
        seq,
        flags,
        len: payload.len() as u16,
        msg_id,
        msg_offset: off,
    }
    .encode()
    .to_vec();
    d.extend_from_slice(payload);
    d
}

#[test]
fn bounds_break_one_stream_and_spare_the_others() {
    let limits = RecvLimits {
        max_streams: 2,
        max_chunk: 8,
        max_reorder_chunks: 4,
        max_held_bytes: 20,
    };
    let mut d = Demux::new(limits).unwrap();
    let mut got = Got::default();
    let push = |d: &mut Demux, c: Vec<u8>, got: &mut Got| d.push(&c, &mut |e| got.on(e));
    push(&mut d, chunk(1, 0, 0, 0, 0, b"aaaa"), &mut got);
    push(&mut d, chunk(2, 1, 0, 0, 4, b"bbbb"), &mut got);
    // A third stream while two are open.
    push(&mut d, chunk(3, 0, END_OF_MSG, 0, 0, b"c"), &mut got);
    // Too far ahead on stream 2; then a chunk too long, an inconsistent offset.
    push(&mut d, chunk(2, 9, 0, 0, 0, b"b"), &mut got);
    assert_eq!(
        got.broken,
        [
            (3, BreakReason::TooManyStreams),
            (2, BreakReason::ReorderWindow)
        ]
    );
    push(&mut d, chunk(2, 0, 0, 0, 0, b"bbbb"), &mut got);
    assert_eq!(d.counters().closed_stream, 1);
    push(&mut d, chunk(4, 0, 0, 0, 0, &[4; 9]), &mut got);
    push(&mut d, chunk(5, 0, 0, 0, 3, b"x"), &mut got);
    assert_eq!(
        got.broken[2..],
        [
            (4, BreakReason::ChunkTooLong),
            (5, BreakReason::Inconsistent)
        ]
    );
    // Held bytes over all streams.
    push(&mut d, chunk(6, 1, 0, 0, 8, b"66666666"), &mut got);
    push(&mut d, chunk(6, 2, 0, 0, 16, b"66666666"), &mut got);
    push(&mut d, chunk(6, 3, 0, 0, 24, b"66666666"), &mut got);
    assert_eq!(got.broken[4], (6, BreakReason::HeldBytes));
    assert_eq!(d.held_bytes(), 0);
    // Garbage is counted; stream 1 is intact throughout.
    push(&mut d, vec![0xff; 40], &mut got);
    push(&mut d, vec![1, 2, 3], &mut got);
    assert_eq!(d.counters().malformed, 2);
    push(
        &mut d,
        chunk(1, 1, END_OF_MSG | END_OF_STREAM, 0, 4, b"AA"),
        &mut got,
    );
    assert_eq!(got.msgs[&1], [b"aaaaAA".to_vec()]);
    assert_eq!(got.ended, [1]);
    assert_eq!(d.open_streams(), 0);
}

#[test]
fn bad_limits_name_the_field() {
    let e = Demux::new(RecvLimits {
        max_reorder_chunks: 0,
        ..RecvLimits::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("max_reorder_chunks"), "{e}");
    let e = MsSender::new(SendLimits {
        max_chunk: 70_000,
        ..SendLimits::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("max_chunk"), "{e}");
}

/// Seeded fuzz loop: random and mutated chunks into a small-limit receiver never
/// panic and never pass its bounds; a clean stream fed alongside stays intact.
#[test]
fn fuzz_the_chunk_decoder() {
    let limits = RecvLimits {
        max_streams: 8,
        max_chunk: 64,
        max_reorder_chunks: 16,
        max_held_bytes: 512,
    };
    let mut d = Demux::new(limits).unwrap();
    let mut rng = ChaCha8Rng::seed_from_u64(0x006d_7374_6370);
    let mut got = Got::default();
    // A clean stream (id 0, which the fuzz never uses) interleaved with the noise.
    let mut clean = Vec::new();
    let mut clean_seq = 0u16;
    for round in 0..200_000u32 {
        let mut c = match rng.gen_range(0..4) {
            0 => {
                let mut v = vec![0u8; rng.gen_range(0..90)];
                rng.fill_bytes(&mut v);
                v
            }
            _ => {
                let n = rng.gen_range(0..70);
                let mut v = chunk(
                    rng.gen_range(1..20),
                    rng.gen_range(0..24),
                    rng.gen_range(0..4),
                    rng.gen_range(0..3),
                    rng.gen_range(0..200),
                    &vec![0x5a; n],
                );
                for _ in 0..rng.gen_range(0..3) {
                    let i = rng.gen_range(0..v.len());
                    v[i] ^= 1 << rng.gen_range(0..8);
                }
                v
            }
        };
        if c.len() >= 2 && c[0] == 0 && c[1] == 0 {
            c[1] = 1;
        }
        d.push(&c, &mut |e| got.on(e));
        if round % 100 == 0 {
            let p = [round as u8; 3];
            clean.extend_from_slice(&p);
            d.push(
                &chunk(0, clean_seq, 0, 0, 3 * u32::from(clean_seq), &p),
                &mut |e| got.on(e),
            );
            clean_seq += 1;
        }
        assert!(d.held_bytes() <= limits.max_held_bytes);
        assert!(d.open_streams() <= limits.max_streams);
    }
    assert_eq!(got.partial[&0], clean);
    assert!(!got.broken.iter().any(|b| b.0 == 0));
    let c = d.counters();
    assert!(c.malformed > 10_000 && c.broken_streams > 0, "{c:?}");
}

//! Target `minion`: brisk-minion's decoders. The first byte picks one:
//! - 0: uCOBS framing: `decode_body(encode(d)) == d` for any `d`, and whatever
//!   `decode_body` accepts re-encodes and decodes to itself; uTLS's record header
//!   parser agrees with its plausibility test;
//! - 1, 2: the record scanner on a stream of encoded datagrams (1) or raw bytes (2),
//!   fed in order and out of order in pieces the input chooses. A reference split of
//!   the whole stream at its zero bytes says which records exist and what they decode
//!   to: the scanner must deliver exactly those, each once, with their bytes, and hold
//!   no more out-of-order bytes than its limit;
//! - 3: msTCP: chunk headers round-trip, and the demultiplexer, fed arbitrary
//!   datagrams, keeps its streams and held bytes within their limits and delivers each
//!   stream's chunks contiguously (same message, next offset; a new message at 0;
//!   nothing after the stream's end or break).

use crate::input::Input;
use brisk_minion::frame::{decode_body, encode_record};
use brisk_minion::mstcp::{ChunkHeader, Demux, MsEvent, RecvLimits, HEADER_LEN};
use brisk_minion::utls::record::{plausible_app_data, Header, APPLICATION_DATA};
use brisk_minion::{Datagram, Limits, RecordScanner};
use std::collections::{BTreeMap, HashMap};

pub fn minion(data: &[u8]) {
    let mut inp = Input::new(data);
    match inp.u8() % 4 {
        0 => framing(inp.rest()),
        1 => {
            let limits = limits(&mut inp);
            let mut stream = Vec::new();
            for _ in 0..inp.u8() % 32 {
                let b = inp.u8();
                let len = if b > 250 {
                    usize::from(inp.u16() % 2000)
                } else {
                    usize::from(b % 100)
                };
                let mut d = inp.bytes(len).to_vec();
                d.resize(len, 0);
                encode_record(&d, &mut stream).expect("small datagram encodes");
            }
            scan(&stream, limits, &mut inp);
        }
        2 => {
            let limits = limits(&mut inp);
            let n = usize::from(inp.u16() % 2048);
            let stream = inp.bytes(n).to_vec();
            scan(&stream, limits, &mut inp);
        }
        _ => mstcp(&mut inp),
    }
}

fn framing(d: &[u8]) {
    let mut rec = Vec::new();
    let n = encode_record(d, &mut rec).expect("encodes");
    assert_eq!(n, rec.len());
    assert_eq!((rec[0], rec[n - 1]), (0, 0), "markers");
    let body = &rec[1..n - 1];
    assert!(!body.contains(&0), "zero inside a record");
    let mut out = Vec::new();
    decode_body(body, &mut out, d.len().max(1)).expect("own encoding decodes");
    assert_eq!(out, d, "uCOBS round trip");
    // Arbitrary bodies: what decodes re-encodes to something that decodes the same.
    let max = d.first().map_or(1, |&b| usize::from(b) * 4 + 1);
    if decode_body(d, &mut out, max).is_ok() {
        assert!(out.len() <= max);
        let mut again = Vec::new();
        encode_record(&out, &mut again).expect("encodes");
        let mut back = Vec::new();
        decode_body(&again[1..again.len() - 1], &mut back, max).expect("decodes");
        assert_eq!(back, out);
    }
    // uTLS record headers.
    let h = Header::parse(d);
    assert_eq!(h.is_some(), d.len() >= 5);
    if let Some(p) = plausible_app_data(d, 17) {
        assert_eq!(Some(p), h);
        assert_eq!(p.typ, APPLICATION_DATA);
        assert_eq!(p.wire_len(), 5 + p.len);
    }
}

fn limits(inp: &mut Input<'_>) -> Limits {
    Limits {
        max_datagram: 1 + usize::from(inp.u16() % 600),
        max_ooo_bytes: usize::from(inp.u16() % 3000),
        max_ooo_runs: 1 + usize::from(inp.u8() % 16),
    }
}

/// The records of `stream` by start offset, decoded (None: malformed or oversized).
fn reference(stream: &[u8], max: usize) -> BTreeMap<u64, Option<Vec<u8>>> {
    let mut recs = BTreeMap::new();
    let mut start = 0;
    for (i, &b) in stream.iter().enumerate() {
        if b == 0 {
            if i > start {
                let mut out = Vec::new();
                let ok = decode_body(&stream[start..i], &mut out, max).is_ok();
                recs.insert(start as u64, ok.then_some(out));
            }
            start = i + 1;
        }
    }
    recs
}

fn scan(stream: &[u8], limits: Limits, inp: &mut Input<'_>) {
    let expected = reference(stream, limits.max_datagram);
    let mut scanner = RecordScanner::new(limits).expect("limits in range");
    let mut seen: HashMap<u64, bool> = HashMap::new();
    let mut check = |d: Datagram<'_>| {
        let want = expected
            .get(&d.offset)
            .unwrap_or_else(|| panic!("delivered a record at {} where none starts", d.offset));
        let want = want
            .as_deref()
            .unwrap_or_else(|| panic!("delivered the bad record at {}", d.offset));
        assert_eq!(d.data, want, "record at {} delivered wrong", d.offset);
        assert!(
            seen.insert(d.offset, d.in_order).is_none(),
            "record at {} delivered twice",
            d.offset
        );
    };
    let len = stream.len() as u64;
    let mut pos = 0u64;
    for _ in 0..64 {
        if inp.is_empty() {
            break;
        }
        let op = inp.u8();
        let n = u64::from(inp.u8()) + 1;
        if op < 128 {
            let back = u64::from(inp.u8() % 32).min(pos);
            let from = pos - back;
            let to = (from + n).min(len);
            scanner
                .push_in_order(from, &stream[from as usize..to as usize], &mut check)
                .expect("in-order push at or before the in-order point");
            pos = pos.max(to);
        } else {
            let from = (pos + u64::from(inp.u16())).min(len);
            let to = (from + n * 8).min(len);
            scanner.push_out_of_order(from, &stream[from as usize..to as usize], &mut check);
        }
        assert_eq!(scanner.in_order_point(), pos);
        assert!(
            scanner.ooo_held() <= limits.max_ooo_bytes as u64,
            "{} out-of-order bytes held, limit {}",
            scanner.ooo_held(),
            limits.max_ooo_bytes
        );
    }
    scanner
        .push_in_order(pos, &stream[pos as usize..], &mut check)
        .expect("rest in order");
    let good = expected.values().filter(|v| v.is_some()).count();
    assert_eq!(
        seen.len(),
        good,
        "records delivered vs records in the stream"
    );
    assert_eq!(scanner.counters().delivered, good as u64);
}

fn mstcp(inp: &mut Input<'_>) {
    let limits = RecvLimits {
        max_streams: 1 + usize::from(inp.u8() % 8),
        max_chunk: 1 + usize::from(inp.u16() % 600),
        max_reorder_chunks: 1 + usize::from(inp.u8() % 32),
        max_held_bytes: 1 + usize::from(inp.u16() % 4000),
    };
    let mut demux = Demux::new(limits).expect("limits in range");
    // Per stream: (message id, next offset) after the last chunk, or None once ended.
    let mut at: HashMap<u16, Option<(u32, u32)>> = HashMap::new();
    for _ in 0..128 {
        if inp.is_empty() {
            break;
        }
        let d = if inp.u8() < 200 {
            // A well-formed chunk with fields from the input.
            let flags = inp.u8() % 4;
            let flags = if flags == 2 { 3 } else { flags };
            let n = usize::from(inp.u8() % 64);
            let payload = inp.bytes(n).to_vec();
            let h = ChunkHeader {
                stream: u16::from(inp.u8() % 12),
                seq: u16::from(inp.u8() % 16),
                flags,
                len: payload.len() as u16,
                msg_id: u32::from(inp.u8() % 4),
                msg_offset: u32::from(inp.u8()) * 4,
            };
            let mut d = h.encode().to_vec();
            d.extend_from_slice(&payload);
            d
        } else {
            let n = usize::from(inp.u8() % 80);
            inp.bytes(n).to_vec()
        };
        if let Ok((h, payload)) = ChunkHeader::decode(&d) {
            let mut back = h.encode().to_vec();
            back.extend_from_slice(payload);
            assert_eq!(back, d, "chunk header round trip");
            assert_eq!(d.len(), HEADER_LEN + usize::from(h.len));
        }
        demux.push(&d, &mut |ev| match ev {
            MsEvent::Chunk(c) => {
                let state = at.entry(c.stream).or_insert(Some((c.msg_id, 0)));
                let (id, off) = state.unwrap_or_else(|| {
                    panic!("chunk delivered on stream {} after its end", c.stream)
                });
                if off == 0 {
                    assert_eq!(c.offset, 0, "a message starts at offset 0");
                } else {
                    assert_eq!((c.msg_id, c.offset), (id, off), "chunks not contiguous");
                }
                let next = c.offset.wrapping_add(c.data.len() as u32);
                *state = if c.end_of_stream {
                    None
                } else if c.end_of_msg {
                    Some((c.msg_id.wrapping_add(1), 0))
                } else {
                    Some((c.msg_id, next))
                };
            }
            MsEvent::Broken { stream, .. } => {
                at.insert(stream, None);
            }
        });
        assert!(demux.open_streams() <= limits.max_streams, "open streams");
        assert!(demux.held_bytes() <= limits.max_held_bytes, "held bytes");
    }
}

pub(crate) fn seeds() -> Vec<Vec<u8>> {
    let mut seeds = vec![
        b"\x00hello\x00world".to_vec(),
        b"\x00\x17\x03\x03\x00\x20abc".to_vec(),
    ];
    // Encoded datagrams delivered with a hole filled later.
    let mut s = vec![1, 0, 200, 0x0b, 0xb8, 4, 4];
    for i in 0..4u8 {
        s.push(20);
        s.extend((0..20).map(|j| if j % 7 == 0 { 0 } else { i * 16 + j }));
    }
    s.extend_from_slice(&[0, 10, 0, 200, 30, 0, 10, 0, 40, 0]);
    seeds.push(s);
    let mut raw = vec![2, 0, 100, 0x0b, 0xb8, 4, 0, 64];
    raw.extend((0..64u8).map(|j| if j % 9 == 0 { 0 } else { j }));
    raw.extend_from_slice(&[200, 20, 0, 16, 0, 10, 0]);
    seeds.push(raw);
    let mut ms = vec![3, 4, 0x01, 0x00, 8, 0x10, 0x00];
    for i in 0..6u8 {
        ms.extend_from_slice(&[
            0,
            if i == 5 { 3 } else { 0 },
            4,
            b'a',
            b'b',
            b'c',
            b'd',
            1,
            i,
            0,
            i,
        ]);
    }
    seeds.push(ms);
    seeds
}

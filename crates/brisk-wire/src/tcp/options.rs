//! TCP options: MSS (RFC 9293 §3.2), window scale and timestamps (RFC 7323),
//! SACK-permitted and SACK (RFC 2018).
//!
//! Emission follows Linux's `tcp_options_write` (net/ipv4/tcp_output.c) byte for byte:
//! MSS; timestamps, prefixed by SACK-permitted when both are present (otherwise by two
//! NOPs); SACK-permitted as `NOP NOP 4 2` when there are no timestamps; window scale as
//! `NOP 3 3 ws`; SACK blocks as `NOP NOP 5 len` + blocks. Every item is 4-byte aligned,
//! so no trailing padding is ever needed.
//!
//! The option space is 40 bytes. SACK blocks go last and are truncated to what fits
//! (three beside timestamps, four without); the first blocks are kept, since RFC 2018
//! §4 puts the most recently changed block first.

use super::{SackBlock, SackBlocks, TcpRepr, Timestamps, WindowScale};
use crate::error::ParseError;
use crate::seq::SeqNum;

const EOL: u8 = 0;
const NOP: u8 = 1;
const MSS: u8 = 2;
const WINDOW_SCALE: u8 = 3;
const SACK_PERMITTED: u8 = 4;
const SACK: u8 = 5;
const TIMESTAMPS: u8 = 8;

const LEN_MSS: usize = 4;
const LEN_WINDOW_SCALE: usize = 3;
const LEN_SACK_PERMITTED: usize = 2;
const LEN_TIMESTAMPS: usize = 10;
const LEN_TIMESTAMPS_BYTE: u8 = LEN_TIMESTAMPS as u8;
const LEN_SACK_BASE: usize = 2;
const LEN_SACK_PER_BLOCK: usize = 8;

/// Maximum option bytes: a data offset of 15 words minus the 20-byte fixed header.
pub const MAX_OPTIONS_LEN: usize = 40;

/// Largest window shift RFC 7323 §2.3 allows; larger received values are clamped to it,
/// as Linux does.
pub const MAX_WINDOW_SCALE: u8 = 14;

/// Aligned sizes of each emitted item.
const ALIGNED_MSS: usize = 4;
const ALIGNED_TIMESTAMPS: usize = 12;
const ALIGNED_SACK_PERMITTED: usize = 4;
const ALIGNED_WINDOW_SCALE: usize = 4;
const ALIGNED_SACK_BASE: usize = 4;

/// Bytes of every option except SACK blocks, as emitted. Inline (with the two
/// below): every emitted segment sizes its options twice, about 20 instructions.
#[inline]
fn fixed_len(repr: &TcpRepr<'_>) -> usize {
    standard_len(repr) + extra_len(repr)
}

/// Bytes of MSS, timestamps, SACK-permitted and window scale, as emitted.
#[inline]
fn standard_len(repr: &TcpRepr<'_>) -> usize {
    let mut len = 0;
    if repr.mss.is_some() {
        len += ALIGNED_MSS;
    }
    if repr.timestamps.is_some() {
        // SACK-permitted, if present, rides in the timestamps' padding.
        len += ALIGNED_TIMESTAMPS;
    } else if repr.sack_permitted {
        len += ALIGNED_SACK_PERMITTED;
    }
    if repr.window_scale.is_some() {
        len += ALIGNED_WINDOW_SCALE;
    }
    len
}

/// Bytes of the extra options as emitted: all of them if they fit beside the standard
/// options (before SACK blocks), else none. The sender that adds extras sizes them;
/// this only keeps `len` and `emit` honest for a repr that overflows.
#[inline]
pub(super) fn extra_len(repr: &TcpRepr<'_>) -> usize {
    let n = repr.extra.aligned_len();
    if n == 0 {
        return 0;
    }
    let base = standard_len(repr);
    if base + n <= MAX_OPTIONS_LEN {
        n
    } else {
        0
    }
}

/// How many of `repr.sack`'s blocks `emit` writes.
pub(super) fn sack_blocks_emitted(repr: &TcpRepr<'_>) -> usize {
    let room = MAX_OPTIONS_LEN - fixed_len(repr);
    let fit = room.saturating_sub(ALIGNED_SACK_BASE) / LEN_SACK_PER_BLOCK;
    repr.sack.len().min(fit)
}

/// Bytes of options `emit` writes.
pub(super) fn len(repr: &TcpRepr<'_>) -> usize {
    // Without SACK blocks (most segments) none are emitted: `sack_blocks_emitted` is
    // `0.min(fit)`, so the length is the fixed part alone.
    if repr.sack.is_empty() {
        return fixed_len(repr);
    }
    let n = sack_blocks_emitted(repr);
    let sack = if n > 0 {
        ALIGNED_SACK_BASE + n * LEN_SACK_PER_BLOCK
    } else {
        0
    };
    fixed_len(repr) + sack
}

/// Appends the options in Linux's order; writes exactly `len(repr)` bytes.
#[cfg(test)]
pub(super) fn emit(repr: &TcpRepr<'_>, out: &mut Vec<u8>) {
    let mut buf = [0u8; MAX_OPTIONS_LEN];
    let n = emit_standard(repr, &mut buf);
    out.extend_from_slice(&buf[..n]);
    emit_extra(repr, out);
}

/// Writes the options except the extras, in Linux's order, at the start of `out`;
/// returns how many bytes. The header is built in an array and appended to the
/// packet once: a capacity check per option item was a measurable share of every
/// simulated segment.
pub(super) fn emit_standard(repr: &TcpRepr<'_>, out: &mut [u8; MAX_OPTIONS_LEN]) -> usize {
    // An established connection's segment without SACK blocks carries timestamps
    // alone (or beside SACK-permitted): the general path below would write no MSS,
    // the same 12 bytes, no window scale and no SACK option (no blocks to emit).
    if let (None, Some(ts), None, true) = (
        repr.mss,
        repr.timestamps,
        repr.window_scale,
        repr.sack.is_empty(),
    ) {
        let [a, b] = if repr.sack_permitted {
            [SACK_PERMITTED, LEN_SACK_PERMITTED as u8]
        } else {
            [NOP, NOP]
        };
        let [v0, v1, v2, v3] = ts.tsval.to_be_bytes();
        let [e0, e1, e2, e3] = ts.tsecr.to_be_bytes();
        out[..ALIGNED_TIMESTAMPS].copy_from_slice(&[
            a,
            b,
            TIMESTAMPS,
            LEN_TIMESTAMPS_BYTE,
            v0,
            v1,
            v2,
            v3,
            e0,
            e1,
            e2,
            e3,
        ]);
        return ALIGNED_TIMESTAMPS;
    }
    emit_standard_all(repr, out)
}

/// [`emit_standard`] item by item, for any repr.
fn emit_standard_all(repr: &TcpRepr<'_>, out: &mut [u8; MAX_OPTIONS_LEN]) -> usize {
    let mut at = 0;
    let mut put = |bytes: &[u8]| {
        out[at..at + bytes.len()].copy_from_slice(bytes);
        at += bytes.len();
    };
    if let Some(mss) = repr.mss {
        put(&[MSS, LEN_MSS as u8]);
        put(&mss.to_be_bytes());
    }
    if let Some(ts) = repr.timestamps {
        if repr.sack_permitted {
            put(&[SACK_PERMITTED, LEN_SACK_PERMITTED as u8]);
        } else {
            put(&[NOP, NOP]);
        }
        put(&[TIMESTAMPS, LEN_TIMESTAMPS as u8]);
        put(&ts.tsval.to_be_bytes());
        put(&ts.tsecr.to_be_bytes());
    } else if repr.sack_permitted {
        put(&[NOP, NOP, SACK_PERMITTED, LEN_SACK_PERMITTED as u8]);
    }
    if let Some(ws) = repr.window_scale {
        put(&[NOP, WINDOW_SCALE, LEN_WINDOW_SCALE as u8, ws.get()]);
    }
    let n = sack_blocks_emitted(repr);
    if n > 0 {
        let opt_len = (LEN_SACK_BASE + n * LEN_SACK_PER_BLOCK) as u8;
        put(&[NOP, NOP, SACK, opt_len]);
        for b in &repr.sack.as_slice()[..n] {
            put(&b.left.0.to_be_bytes());
            put(&b.right.0.to_be_bytes());
        }
    }
    at
}

/// Appends the extra options, which go last, if they fit (see [`extra_len`]).
pub(super) fn emit_extra(repr: &TcpRepr<'_>, out: &mut Vec<u8>) {
    if extra_len(repr) > 0 {
        repr.extra.emit(out);
    }
}

/// Parses the option bytes into `repr`. Kinds not interpreted here are kept in
/// `repr.extra` while they fit (then skipped by their length); a later instance of an
/// interpreted option replaces an earlier one.
pub(super) fn parse(opts: &[u8], repr: &mut TcpRepr<'_>) -> Result<(), ParseError> {
    let mut i = 0;
    // Every segment of an established connection with timestamps starts `NOP NOP 8 10`
    // (Linux's layout, `emit_standard`'s): taken in one compare. The loop below would
    // skip the two NOPs, accept kind 8 with length 10 (it fits: 12 bytes or more) and
    // set the same timestamps, reaching byte 12 with nothing else changed, so
    // continuing from there parses the rest (SACK blocks, extras) exactly as before.
    if let Some(&[NOP, NOP, TIMESTAMPS, LEN_TIMESTAMPS_BYTE, v0, v1, v2, v3, e0, e1, e2, e3]) =
        opts.first_chunk()
    {
        repr.timestamps = Some(Timestamps {
            tsval: u32::from_be_bytes([v0, v1, v2, v3]),
            tsecr: u32::from_be_bytes([e0, e1, e2, e3]),
        });
        i = 12;
    }
    parse_from(opts, i, repr)
}

/// [`parse`]'s loop, from byte `i` of the options on.
fn parse_from(opts: &[u8], mut i: usize, repr: &mut TcpRepr<'_>) -> Result<(), ParseError> {
    while i < opts.len() {
        let kind = opts[i];
        match kind {
            EOL => break,
            NOP => {
                i += 1;
                continue;
            }
            _ => {}
        }
        let bad = ParseError::BadOption { kind };
        let len = usize::from(*opts.get(i + 1).ok_or(bad)?);
        if len < 2 || len > opts.len() - i {
            return Err(bad);
        }
        let body = &opts[i + 2..i + len];
        match kind {
            MSS if len == LEN_MSS => repr.mss = Some(be16(body)),
            WINDOW_SCALE if len == LEN_WINDOW_SCALE => {
                repr.window_scale = Some(WindowScale::clamped(body[0]));
            }
            SACK_PERMITTED if len == LEN_SACK_PERMITTED => repr.sack_permitted = true,
            TIMESTAMPS if len == LEN_TIMESTAMPS => {
                repr.timestamps = Some(Timestamps {
                    tsval: be32(&body[0..4]),
                    tsecr: be32(&body[4..8]),
                });
            }
            SACK if sack_len_ok(body.len()) => {
                let mut sack = SackBlocks::new();
                for b in body.chunks_exact(LEN_SACK_PER_BLOCK) {
                    sack.push(SackBlock {
                        left: SeqNum(be32(&b[0..4])),
                        right: SeqNum(be32(&b[4..8])),
                    });
                }
                repr.sack = sack;
            }
            MSS | WINDOW_SCALE | SACK_PERMITTED | TIMESTAMPS | SACK => return Err(bad),
            // Within 40 option bytes the extras always fit; `push` bounds it anyway.
            _ => {
                let _ = repr.extra.push(kind, body);
            }
        }
        i += len;
    }
    Ok(())
}

/// A SACK option body holds one to four whole blocks.
fn sack_len_ok(body_len: usize) -> bool {
    let blocks = body_len / LEN_SACK_PER_BLOCK;
    blocks * LEN_SACK_PER_BLOCK == body_len && (1..=SackBlocks::MAX).contains(&blocks)
}

/// Callers pass exactly 2 bytes.
fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

/// Callers pass exactly 4 bytes.
fn be32(b: &[u8]) -> u32 {
    u32::from_be_bytes([b[0], b[1], b[2], b[3]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(opts: &[u8]) -> Result<TcpRepr<'static>, ParseError> {
        let mut repr = TcpRepr::default();
        parse(opts, &mut repr).map(|()| repr)
    }

    #[test]
    fn the_timestamps_prefix_parses_as_the_loop_does() {
        // The `NOP NOP TS` fast path against the plain loop from byte 0: TS alone, TS
        // with SACK blocks, with an extra, a second TS, trailing NOP/EOL, and
        // near-misses (bad length, too short) that must fail or parse alike.
        let ts = [1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8];
        let mut cases: Vec<Vec<u8>> = vec![ts.to_vec()];
        let mut sack = ts.to_vec();
        sack.extend_from_slice(&[
            1, 1, 5, 18, 0, 0, 0, 9, 0, 0, 0, 10, 0, 0, 0, 20, 0, 0, 0, 30,
        ]);
        cases.push(sack);
        let mut extra = ts.to_vec();
        extra.extend_from_slice(&[30, 4, 0xaa, 0xbb]);
        cases.push(extra);
        let mut twice = ts.to_vec();
        twice.extend_from_slice(&[1, 1, 8, 10, 9, 9, 9, 9, 8, 8, 8, 8]);
        cases.push(twice);
        let mut tail = ts.to_vec();
        tail.extend_from_slice(&[1, 0, 2, 4]);
        cases.push(tail);
        cases.push(ts[..11].to_vec());
        cases.push(vec![1, 1, 8, 9, 1, 2, 3, 4, 5, 6, 7, 8]);
        cases.push(vec![1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8, 2]);
        for opts in cases {
            let mut fast = TcpRepr::default();
            let mut slow = TcpRepr::default();
            let a = parse(&opts, &mut fast);
            let b = parse_from(&opts, 0, &mut slow);
            assert_eq!(a, b, "{opts:?}");
            assert_eq!(fast, slow, "{opts:?}");
        }
    }

    #[test]
    fn the_timestamps_only_emit_writes_what_the_general_one_does() {
        // Every combination of the standard options, with and without SACK blocks and
        // an extra: the fast path's bytes and length against the item-by-item path and
        // against a length computed with the SACK room formula.
        for bits in 0..64u32 {
            let mut r = TcpRepr {
                mss: (bits & 1 != 0).then_some(1460),
                timestamps: (bits & 2 != 0).then_some(Timestamps {
                    tsval: 0x0102_0304,
                    tsecr: 0xa0b0_c0d0,
                }),
                sack_permitted: bits & 4 != 0,
                window_scale: (bits & 8 != 0).then(|| WindowScale::clamped(7)),
                ..TcpRepr::default()
            };
            if bits & 16 != 0 {
                assert!(r.sack.push(SackBlock {
                    left: SeqNum(10),
                    right: SeqNum(20),
                }));
            }
            if bits & 32 != 0 {
                r.extra.push(30, &[0xaa, 0xbb]).unwrap();
            }
            let mut fast = [0u8; MAX_OPTIONS_LEN];
            let mut all = [0u8; MAX_OPTIONS_LEN];
            let n = emit_standard(&r, &mut fast);
            assert_eq!(n, emit_standard_all(&r, &mut all), "bits {bits}");
            assert_eq!(fast, all, "bits {bits}");
            let blocks = sack_blocks_emitted(&r);
            let sack = if blocks > 0 {
                ALIGNED_SACK_BASE + blocks * LEN_SACK_PER_BLOCK
            } else {
                0
            };
            assert_eq!(len(&r), fixed_len(&r) + sack, "bits {bits}");
            let mut out = Vec::new();
            emit(&r, &mut out);
            assert_eq!(out.len(), len(&r), "bits {bits}");
        }
    }

    #[test]
    fn unknown_options_are_skipped_by_length_and_kept_as_extras() {
        // Kind 30 (MPTCP) of length 4, then MSS.
        let r = parsed(&[30, 4, 0xaa, 0xbb, 2, 4, 0x05, 0xb4]).unwrap();
        assert_eq!(r.mss, Some(1460));
        assert_eq!(r.extra.get(30), Some(&[0xaa, 0xbb][..]));
    }

    #[test]
    fn extras_round_trip_after_the_standard_options_and_squeeze_sack_blocks() {
        let mut r = TcpRepr {
            timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
            ..TcpRepr::default()
        };
        for i in 0..4 {
            r.sack.push(SackBlock {
                left: SeqNum(100 * i),
                right: SeqNum(100 * i + 50),
            });
        }
        assert_eq!(sack_blocks_emitted(&r), 3);
        r.extra.push(34, &[1, 2, 3, 4, 5, 6]).unwrap(); // Fast Open cookie, 8 bytes
                                                        // 12 (timestamps) + 8 (cookie) leave 20 bytes: base 4 + two blocks.
        assert_eq!(sack_blocks_emitted(&r), 2);
        let mut out = Vec::new();
        emit(&r, &mut out);
        assert_eq!(out.len(), len(&r));
        assert_eq!(out.len() % 4, 0);
        let back = parsed(&out).unwrap();
        assert_eq!(back.extra, r.extra);
        assert_eq!(back.timestamps, r.timestamps);
        assert_eq!(back.sack.len(), 2);
    }

    #[test]
    fn extras_that_cannot_fit_beside_the_standard_options_are_left_out() {
        let mut r = TcpRepr {
            mss: Some(1460),
            timestamps: Some(Timestamps::default()),
            window_scale: WindowScale::new(7),
            ..TcpRepr::default()
        };
        r.extra.push(253, &[0; 20]).unwrap(); // 24 aligned bytes; only 20 are free
        let mut out = Vec::new();
        emit(&r, &mut out);
        assert_eq!(out.len(), 20);
        assert_eq!(len(&r), 20);
    }

    #[test]
    fn eol_stops_parsing() {
        let r = parsed(&[0, 2, 4, 0x05, 0xb4]).unwrap();
        assert_eq!(r.mss, None);
    }

    #[test]
    fn known_option_with_wrong_length_is_rejected() {
        for (opts, kind) in [
            (&[2u8, 3, 0, 1, 1, 1][..], 2),
            (&[3, 4, 7, 0][..], 3),
            (&[4, 3, 0, 1][..], 4),
            (&[8, 8, 0, 0, 0, 0, 0, 0][..], 8),
            (&[5, 9, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1][..], 5),
            (&[5, 2, 1, 1][..], 5),
        ] {
            assert_eq!(
                parsed(opts),
                Err(ParseError::BadOption { kind }),
                "{opts:?}"
            );
        }
    }

    #[test]
    fn option_past_the_header_is_rejected() {
        assert_eq!(
            parsed(&[1, 1, 8, 10, 0, 0]),
            Err(ParseError::BadOption { kind: 8 })
        );
        assert_eq!(
            parsed(&[1, 1, 1, 30]),
            Err(ParseError::BadOption { kind: 30 })
        );
        assert_eq!(
            parsed(&[1, 1, 30, 1]),
            Err(ParseError::BadOption { kind: 30 })
        );
    }

    #[test]
    fn window_scale_above_14_is_clamped() {
        assert_eq!(
            parsed(&[3, 3, 200, 1]).unwrap().window_scale,
            Some(WindowScale::MAX)
        );
    }

    #[test]
    fn four_sack_blocks_parse_and_emit_without_timestamps() {
        let mut repr = TcpRepr::default();
        for i in 0..4u32 {
            repr.sack.push(SackBlock {
                left: SeqNum(i * 100),
                right: SeqNum(i * 100 + 50),
            });
        }
        assert_eq!(len(&repr), 36);
        let mut out = Vec::new();
        emit(&repr, &mut out);
        assert_eq!(out.len(), 36);
        assert_eq!(&out[..4], &[1, 1, 5, 34]);
        assert_eq!(parsed(&out).unwrap().sack, repr.sack);
    }

    #[test]
    fn sack_blocks_are_truncated_to_fit_forty_bytes() {
        let mut repr = TcpRepr {
            mss: Some(1460),
            window_scale: WindowScale::new(7),
            sack_permitted: true,
            timestamps: Some(Timestamps { tsval: 1, tsecr: 2 }),
            ..TcpRepr::default()
        };
        for i in 0..4u32 {
            repr.sack.push(SackBlock {
                left: SeqNum(i),
                right: SeqNum(i + 1),
            });
        }
        // 4 + 12 + 4 = 20 bytes fixed, room for 2 blocks.
        assert_eq!(sack_blocks_emitted(&repr), 2);
        assert_eq!(len(&repr), 40);
        repr.mss = None;
        repr.window_scale = None;
        assert_eq!(sack_blocks_emitted(&repr), 3);
        assert_eq!(len(&repr), 40);
        let mut out = Vec::new();
        emit(&repr, &mut out);
        assert_eq!(out.len(), 40);
        assert_eq!(
            parsed(&out).unwrap().sack.as_slice(),
            &repr.sack.as_slice()[..3]
        );
    }
}

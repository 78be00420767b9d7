//! Inner Space on data segments (draft §2.3.1, §2.3.2.2, App. A, App. B): the SYN=0
//! layout of one sent segment — non-zero padding, the InSpace option (Len 1 or 2),
//! Prefix Options, Suffix Options, Payload — ZOMBI-encoded ([`frame_segment`]), and
//! the in-order reader that takes a byte stream cut anywhere back apart
//! ([`Deframer`]): it ZOMBI-decodes in place, checks every InSpace, hands out the
//! Payload and the ModeSwitch options it meets, and after a ModeSwitch confirmation
//! of "disabled" (App. B step 2/3: the half-connection switches right after the end of
//! the segment carrying it) reads the rest of the stream as plain Payload.
//!
//! Offsets are ISN-relative (`rel`): the first data byte after the SYN is 1, so the
//! padding `3 − ((rel − 1) mod 4)` puts every InSpace at a multiple of 4 from the ISN
//! (§2.3.1.2). A connection whose wire ISN differs from its ISS by a multiple of 4 (a
//! SYN-U: 12 octets of InSpace plus whole words of Inner Options) may count from its
//! ISS instead.
//!
//! Bounds: the Inner Options of one sent segment are buffered to be read, at most
//! [`MAX_INNER`] octets; more is refused (`InnerTooLong`), as is any option that does
//! not parse. Nothing allocates.

use super::mode::{ModeSwitch, EXID_MODE_SWITCH, EXP_KIND};
use super::zombi::{encode_segment, StreamDecoder, ZombiError};
use super::{DataInSpace, InSpaceError, SentSize, FULL_LEN, MAX_SENT_SIZE, PAD_OCTET, SHORT_LEN};

/// Octets of Inner Options one sent segment may carry into a [`Deframer`] (two
/// ModeSwitch options need 16).
pub const MAX_INNER: usize = 256;

/// A sent segment that cannot be written, or a stream that is not Inner Space framed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error(transparent)]
    Zombi(#[from] ZombiError),
    #[error(transparent)]
    InSpace(#[from] InSpaceError),
    #[error("sent segment of {len} octets exceeds the largest InSpace SDS (65515; larger needs the jumbo form)")]
    TooLong { len: usize },
    #[error("Inner Options of {len} octets exceed the reader's {max}-octet bound")]
    InnerTooLong { len: usize, max: usize },
    #[error("Inner Option at octet {at} of a sent segment's Inner Options does not parse (kind {kind}, length {len})")]
    BadInnerOption { at: usize, kind: u8, len: usize },
    #[error("InSpace SDS {sds} is not a sent size (distance and sparse values are not read here)")]
    NotASentSize { sds: u16 },
}

/// Padding octets before the InSpace option of a sent segment starting at `rel`.
pub fn pad_at(rel: u64) -> usize {
    3 - (rel.wrapping_sub(1) % 4) as usize
}

fn word_round(n: usize) -> usize {
    n.div_ceil(4) * 4
}

/// Octets a sent segment at `rel` spends before its Payload: padding, InSpace, and
/// the Inner Options rounded up to whole words.
pub fn overhead(rel: u64, prefix: usize, suffix: usize) -> usize {
    let inner = word_round(prefix) + word_round(suffix);
    let opt = if prefix == 0 || suffix == 0 {
        SHORT_LEN
    } else {
        FULL_LEN
    };
    pad_at(rel) + opt + inner
}

/// Appends one ZOMBI-encoded sent segment starting at `rel` to `out`: `prefix` and
/// `suffix` are whole options (each list is padded with NOP to a word, so the end of
/// the Prefix Options is aligned, §2.3.1.2). Returns its length (its SDS).
pub fn frame_segment(
    rel: u64,
    prefix: &[u8],
    suffix: &[u8],
    payload: &[u8],
    out: &mut Vec<u8>,
) -> Result<usize, FrameError> {
    let pad = pad_at(rel);
    let (pw, sw) = (word_round(prefix.len()), word_round(suffix.len()));
    let len = overhead(rel, prefix.len(), suffix.len()) + payload.len();
    if len > usize::from(MAX_SENT_SIZE) {
        return Err(FrameError::TooLong { len });
    }
    let inoo = ((pw + sw) / 4) as u16;
    let opt = DataInSpace::shortest(SentSize::Exact(len as u16), inoo, (pw / 4) as u16);
    let start = out.len();
    out.resize(start + pad, PAD_OCTET);
    let at = out.len();
    out.resize(at + opt.wire_len(), 0);
    opt.encode(pad, &mut out[at..])?;
    for (list, w) in [(prefix, pw), (suffix, sw)] {
        out.extend_from_slice(list);
        out.resize(out.len() + w - list.len(), 1); // NOP
    }
    out.extend_from_slice(payload);
    encode_segment(&mut out[start..], pad)?;
    Ok(len)
}

/// What the reader found, in stream order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Piece {
    /// Payload octets: this range of the chunk just fed (decoded in place).
    Payload(usize, usize),
    /// A ModeSwitch Inner Option; `suffix` when it was a Suffix Option.
    ModeSwitch { ms: ModeSwitch, suffix: bool },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Header,
    Inner,
    Payload,
    /// After the peer's "disabled" confirmation: no more InSpace (App. B).
    Raw,
}

/// Counts of what a [`Deframer`] read.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeframeStats {
    /// Sent segments read completely.
    pub segments: u64,
    /// Sent segments with no Payload and no Suffix Options (Impure ACKs, §2.3.1.5).
    pub impure: u64,
    /// Payload octets handed out (framed part only).
    pub payload: u64,
    /// Padding, InSpace and Inner Option octets removed.
    pub overhead: u64,
    /// Inner Options skipped as not brisk's (any but ModeSwitch).
    pub options_skipped: u64,
}

/// Reads an in-order Inner Space stream fed in arbitrary pieces (§2.3.2.2 steps 1, 2C,
/// 4, 6, 7, in order: this reader does not look past a gap, step 2B).
#[derive(Clone, Debug)]
pub struct Deframer {
    dec: StreamDecoder,
    rel: u64,
    phase: Phase,
    pad: usize,
    hdr: [u8; 3 + FULL_LEN],
    hdr_got: usize,
    hdr_need: usize,
    seg_end: u64,
    inner: [u8; MAX_INNER],
    inner_got: usize,
    inner_len: usize,
    prefix_len: usize,
    seg_payload: u64,
    /// A "disabled" confirmation was in this segment: Raw after it.
    switch_after: bool,
    failed: bool,
    stats: DeframeStats,
}

impl Deframer {
    /// A reader whose first byte is at ISN-relative `rel` and starts a sent segment.
    pub fn new(rel: u64) -> Self {
        let pad = pad_at(rel);
        Deframer {
            dec: StreamDecoder::new(rel),
            rel,
            phase: Phase::Header,
            pad,
            hdr: [0; 3 + FULL_LEN],
            hdr_got: 0,
            hdr_need: pad + SHORT_LEN,
            seg_end: 0,
            inner: [0; MAX_INNER],
            inner_got: 0,
            inner_len: 0,
            prefix_len: 0,
            seg_payload: 0,
            switch_after: false,
            failed: false,
            stats: DeframeStats::default(),
        }
    }

    pub fn stats(&self) -> DeframeStats {
        self.stats
    }

    /// Whether the peer's half has left Inner Space (everything further is Payload).
    pub fn raw(&self) -> bool {
        self.phase == Phase::Raw
    }

    /// Whether the reader stands between sent segments (or is raw).
    pub fn at_boundary(&self) -> bool {
        !self.failed
            && (self.phase == Phase::Raw || (self.phase == Phase::Header && self.hdr_got == 0))
    }

    /// Reads `chunk` in place, calling `on` for each Payload run and ModeSwitch. After
    /// an error the reader refuses further input.
    pub fn feed(&mut self, chunk: &mut [u8], on: &mut dyn FnMut(Piece)) -> Result<(), FrameError> {
        if self.failed {
            return Err(ZombiError::Failed.into());
        }
        let r = self.feed_inner(chunk, on, false);
        self.failed = r.is_err();
        r.map(|_| ())
    }

    /// [`feed`](Self::feed) that also moves the Payload runs to the front of `chunk`
    /// (in place, in order) and returns their total length; `Piece::Payload` then
    /// gives the runs' new places.
    pub fn feed_compact(
        &mut self,
        chunk: &mut [u8],
        on: &mut dyn FnMut(Piece),
    ) -> Result<usize, FrameError> {
        if self.failed {
            return Err(ZombiError::Failed.into());
        }
        let r = self.feed_inner(chunk, on, true);
        self.failed = r.is_err();
        r
    }

    fn decode(&mut self, part: &mut [u8]) -> Result<(), FrameError> {
        self.dec.feed(part)?;
        self.rel += part.len() as u64;
        Ok(())
    }

    /// Hands out a Payload run `a..b` of `chunk`, moved to `*w` when compacting.
    fn run(
        chunk: &mut [u8],
        (a, b): (usize, usize),
        w: &mut usize,
        compact: bool,
        on: &mut dyn FnMut(Piece),
    ) {
        if compact {
            chunk.copy_within(a..b, *w);
            on(Piece::Payload(*w, *w + b - a));
        } else {
            on(Piece::Payload(a, b));
        }
        *w += b - a;
    }

    fn feed_inner(
        &mut self,
        chunk: &mut [u8],
        on: &mut dyn FnMut(Piece),
        compact: bool,
    ) -> Result<usize, FrameError> {
        let len = chunk.len();
        let mut i = 0;
        let mut w = 0;
        while i < len {
            match self.phase {
                Phase::Raw => {
                    Self::run(chunk, (i, len), &mut w, compact, on);
                    self.rel += (len - i) as u64;
                    return Ok(w);
                }
                Phase::Header => {
                    let n = (self.hdr_need - self.hdr_got).min(len - i);
                    self.decode(&mut chunk[i..i + n])?;
                    self.hdr[self.hdr_got..self.hdr_got + n].copy_from_slice(&chunk[i..i + n]);
                    self.hdr_got += n;
                    i += n;
                    if self.hdr_got == self.hdr_need {
                        self.header_done()?;
                    }
                }
                Phase::Inner => {
                    let n = (self.inner_len - self.inner_got).min(len - i);
                    self.decode(&mut chunk[i..i + n])?;
                    self.inner[self.inner_got..self.inner_got + n]
                        .copy_from_slice(&chunk[i..i + n]);
                    self.inner_got += n;
                    i += n;
                    if self.inner_got == self.inner_len {
                        self.inner_done(on)?;
                    }
                }
                Phase::Payload => {
                    let n = ((self.seg_end - self.rel) as usize).min(len - i);
                    self.decode(&mut chunk[i..i + n])?;
                    Self::run(chunk, (i, i + n), &mut w, compact, on);
                    self.seg_payload += n as u64;
                    self.stats.payload += n as u64;
                    i += n;
                    if self.rel == self.seg_end {
                        self.segment_done();
                    }
                }
            }
        }
        Ok(w)
    }

    fn header_done(&mut self) -> Result<(), FrameError> {
        let pad = self.pad;
        if self.hdr_need == pad + SHORT_LEN {
            // Len sits 8 octets from the marker's left edge in every form (§2.2.2).
            match self.hdr[pad + 7] & 3 {
                1 => {}
                2 => {
                    self.hdr_need = pad + FULL_LEN;
                    return Ok(());
                }
                len => return Err(InSpaceError::UnknownLen { len }.into()),
            }
        }
        let opt = DataInSpace::decode(&self.hdr[pad..self.hdr_need], pad)?;
        let SentSize::Exact(sds) = opt.sds else {
            return Err(FrameError::NotASentSize { sds: opt.sds.sds() });
        };
        self.inner_len = 4 * usize::from(opt.inoo_words);
        self.prefix_len = 4 * usize::from(opt.soo_words());
        if self.inner_len > MAX_INNER {
            return Err(FrameError::InnerTooLong {
                len: self.inner_len,
                max: MAX_INNER,
            });
        }
        self.seg_end = self.rel - self.hdr_need as u64 + u64::from(sds);
        self.stats.overhead += (self.hdr_need + self.inner_len) as u64;
        self.inner_got = 0;
        self.seg_payload = 0;
        self.phase = Phase::Inner;
        if self.inner_len == 0 {
            self.phase = Phase::Payload;
            if self.rel == self.seg_end {
                self.segment_done();
            }
        }
        Ok(())
    }

    /// Prefix Options, then Suffix Options (§2.3.2.2 steps 4A and 6; the Outer Options
    /// are the TCP segment's, read by the connection before the stream is).
    fn inner_done(&mut self, on: &mut dyn FnMut(Piece)) -> Result<(), FrameError> {
        let (p, n) = (self.prefix_len, self.inner_len);
        for (from, to, suffix) in [(0, p, false), (p, n, true)] {
            let mut i = from;
            while i < to {
                match self.inner[i] {
                    0 => break, // EOL ends this list
                    1 => i += 1,
                    kind => {
                        let len = self.inner.get(i + 1).map_or(0, |&l| usize::from(l));
                        if len < 2 || i + len > to {
                            return Err(FrameError::BadInnerOption { at: i, kind, len });
                        }
                        let o = &self.inner[i..i + len];
                        if kind == EXP_KIND
                            && len == 5
                            && u16::from_be_bytes([o[2], o[3]]) == EXID_MODE_SWITCH
                        {
                            let ms = ModeSwitch::decode(o, 0)
                                .map_err(|_| FrameError::BadInnerOption { at: i, kind, len })?;
                            // App. B: a half switches right after the segment that
                            // carries its confirmation (R = 0).
                            if suffix && !ms.request && !ms.enabled {
                                self.switch_after = true;
                            }
                            on(Piece::ModeSwitch { ms, suffix });
                        } else {
                            self.stats.options_skipped += 1;
                        }
                        i += len;
                    }
                }
            }
        }
        self.phase = Phase::Payload;
        if self.rel == self.seg_end {
            self.segment_done();
        }
        Ok(())
    }

    fn segment_done(&mut self) {
        self.stats.segments += 1;
        if self.seg_payload == 0 && self.inner_len == self.prefix_len {
            self.stats.impure += 1;
        }
        if self.switch_after {
            self.phase = Phase::Raw;
            return;
        }
        self.pad = pad_at(self.rel);
        self.hdr_got = 0;
        self.hdr_need = self.pad + SHORT_LEN;
        self.phase = Phase::Header;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// One sent segment to write: payload bytes (kind 0 random, 1 all zero, 2 mostly
    /// zero), Prefix/Suffix no-op-ish options, or a ModeSwitch.
    #[derive(Clone, Debug)]
    struct Seg {
        payload: Vec<u8>,
        prefix: Vec<u8>,
        suffix: Vec<u8>,
        nopts: usize,
    }

    fn seg_strategy() -> impl Strategy<Value = Seg> {
        (0usize..1600, 0u8..3, any::<u64>(), 0usize..3, 0usize..3).prop_map(
            |(n, kind, seed, np, ns)| {
                let mut x = seed | 1;
                let mut next = || {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    x
                };
                let payload = (0..n)
                    .map(|_| match kind {
                        0 => next() as u8,
                        1 => 0,
                        _ => {
                            if next() % 5 == 0 {
                                next() as u8
                            } else {
                                0
                            }
                        }
                    })
                    .collect();
                // An unknown option with zero bytes inside (kind 253, ExID 0).
                let opt = |k: usize| {
                    let mut v = vec![253u8, (4 + k) as u8, 0, 0];
                    v.extend(std::iter::repeat_n(0u8, k));
                    v
                };
                Seg {
                    payload,
                    prefix: (0..np).flat_map(opt).collect(),
                    suffix: (0..ns).flat_map(|k| opt(k + 1)).collect(),
                    nopts: np + ns,
                }
            },
        )
    }

    fn write_stream(start: u64, segs: &[Seg]) -> Vec<u8> {
        let mut out = Vec::new();
        for s in segs {
            let rel = start + out.len() as u64;
            frame_segment(rel, &s.prefix, &s.suffix, &s.payload, &mut out).unwrap();
        }
        out
    }

    fn read_stream(start: u64, mut wire: Vec<u8>, cuts: &[usize]) -> (Vec<u8>, Deframer) {
        let mut d = Deframer::new(start);
        let mut got = Vec::new();
        let mut at = 0;
        let mut cut_points: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
        cut_points.sort_unstable();
        cut_points.push(wire.len());
        for c in cut_points {
            let chunk = &mut wire[at..c];
            let mut runs = Vec::new();
            d.feed(chunk, &mut |p| {
                if let Piece::Payload(a, b) = p {
                    runs.push((a, b));
                }
            })
            .unwrap();
            for (a, b) in runs {
                got.extend_from_slice(&chunk[a..b]);
            }
            at = c;
        }
        (got, d)
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Round trip through any resegmentation: random, all-zero and mostly-zero
        /// payloads, odd lengths, empty sent segments (Impure ACKs), from any start.
        #[test]
        fn any_stream_cut_anywhere_reads_back_its_payload(
            segs in prop::collection::vec(seg_strategy(), 1..8),
            start in 1u64..64,
            cuts in prop::collection::vec(any::<usize>(), 0..12),
        ) {
            let wire = write_stream(start, &segs);
            let want: Vec<u8> = segs.iter().flat_map(|s| s.payload.clone()).collect();
            // Every InSpace starts at a multiple of 4 from the ISN; after encoding the
            // only aligned 0x0000 shorts are the markers.
            let mut rel = start;
            let mut markers = Vec::new();
            for s in &segs {
                let pad = pad_at(rel);
                prop_assert_eq!((rel + pad as u64) % 4, 0);
                markers.push(rel + pad as u64);
                rel += (overhead(rel, s.prefix.len(), s.suffix.len()) + s.payload.len()) as u64;
            }
            prop_assert_eq!(rel - start, wire.len() as u64);
            for k in 0..wire.len() / 2 + 1 {
                let r = start + k as u64;
                if !r.is_multiple_of(2) { continue; }
                let i = (r - start) as usize;
                if i + 1 < wire.len() && wire[i] == 0 && wire[i + 1] == 0 {
                    prop_assert!(markers.contains(&r), "stray 0x0000 at rel {}", r);
                }
            }
            let (got, d) = read_stream(start, wire, &cuts);
            prop_assert_eq!(got, want);
            prop_assert!(d.at_boundary());
            prop_assert_eq!(d.stats().segments, segs.len() as u64);
            let impure = segs.iter().filter(|s| s.payload.is_empty() && s.suffix.is_empty()).count();
            prop_assert_eq!(d.stats().impure, impure as u64);
            let opts: usize = segs.iter().map(|s| s.nopts).sum();
            prop_assert_eq!(d.stats().options_skipped, opts as u64);
        }

        /// The compacting reader gives the same Payload at the front of each chunk.
        #[test]
        fn compacting_reader_matches(
            segs in prop::collection::vec(seg_strategy(), 1..6),
            cuts in prop::collection::vec(any::<usize>(), 0..8),
        ) {
            let mut wire = write_stream(1, &segs);
            let want: Vec<u8> = segs.iter().flat_map(|s| s.payload.clone()).collect();
            let mut d = Deframer::new(1);
            let mut got = Vec::new();
            let mut cut_points: Vec<usize> = cuts.iter().map(|c| c % (wire.len() + 1)).collect();
            cut_points.sort_unstable();
            cut_points.push(wire.len());
            let mut at = 0;
            for c in cut_points {
                let n = d.feed_compact(&mut wire[at..c], &mut |_| {}).unwrap();
                got.extend_from_slice(&wire[at..at + n]);
                at = c;
            }
            prop_assert_eq!(got, want);
        }

        /// Arbitrary bytes never panic the reader.
        #[test]
        fn arbitrary_bytes_do_not_panic(mut b in prop::collection::vec(any::<u8>(), 0..400), start in 1u64..16) {
            let mut d = Deframer::new(start);
            let _ = d.feed(&mut b, &mut |_| {});
        }
    }

    #[test]
    fn mode_switch_confirmation_turns_the_rest_raw() {
        let off = ModeSwitch::new(false, false).encode_exp();
        let mut wire = Vec::new();
        frame_segment(1, &[], &[], b"framed", &mut wire).unwrap();
        let rel = 1 + wire.len() as u64;
        frame_segment(rel, &[], &off, b"last", &mut wire).unwrap();
        wire.extend_from_slice(b"\0\0raw after");
        for cut in 0..wire.len() {
            let (got, d) = read_stream(1, wire.clone(), &[cut]);
            assert_eq!(got, b"framedlast\0\0raw after", "cut {cut}");
            assert!(d.raw());
        }
        // A request (R = 1) does not switch; it is reported.
        let req = ModeSwitch::new(false, true).encode_exp();
        let mut wire = Vec::new();
        frame_segment(1, &[], &req, b"x", &mut wire).unwrap();
        let mut d = Deframer::new(1);
        let mut seen = Vec::new();
        d.feed(&mut wire, &mut |p| seen.push(p)).unwrap();
        assert!(!d.raw());
        assert_eq!(
            seen[0],
            Piece::ModeSwitch {
                ms: ModeSwitch::new(false, true),
                suffix: true
            }
        );
    }

    #[test]
    fn unknown_len_and_zero_padding_are_refused() {
        let mut wire = Vec::new();
        frame_segment(1, &[], &[], b"abcdef", &mut wire).unwrap();
        // Len is the low 2 bits 8 octets from the marker (pad 3 at rel 1).
        let mut bad = wire.clone();
        bad[3 + 7] |= 3;
        let mut d = Deframer::new(1);
        assert!(matches!(
            d.feed(&mut bad, &mut |_| {}),
            Err(FrameError::InSpace(InSpaceError::UnknownLen { len: 3 }))
        ));
        assert!(
            d.feed(&mut [1u8], &mut |_| {}).is_err(),
            "refuses after an error"
        );
        let mut bad = wire.clone();
        bad[0] = 0;
        let mut d = Deframer::new(1);
        assert!(matches!(
            d.feed(&mut bad, &mut |_| {}),
            Err(FrameError::Zombi(ZombiError::ZeroPad { .. }))
        ));
    }

    #[test]
    fn inner_options_beyond_the_bound_are_refused() {
        let big = vec![1u8; MAX_INNER + 4];
        let mut wire = Vec::new();
        frame_segment(1, &[], &big, b"p", &mut wire).unwrap();
        let mut d = Deframer::new(1);
        assert!(matches!(
            d.feed(&mut wire, &mut |_| {}),
            Err(FrameError::InnerTooLong { .. })
        ));
    }

    #[test]
    fn largest_sent_segment_is_bounded() {
        let mut out = Vec::new();
        let p = vec![7u8; usize::from(MAX_SENT_SIZE)];
        assert!(matches!(
            frame_segment(1, &[], &[], &p, &mut out),
            Err(FrameError::TooLong { .. })
        ));
        let n = usize::from(MAX_SENT_SIZE) - overhead(1, 0, 0);
        assert_eq!(
            frame_segment(1, &[], &[], &p[..n], &mut out).unwrap(),
            usize::from(MAX_SENT_SIZE)
        );
    }
}

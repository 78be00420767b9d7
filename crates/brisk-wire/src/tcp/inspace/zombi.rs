//! ZOMBI, Zero Overhead Message Boundary Insertion (draft App. A): after encoding, the
//! only 0x0000 shorts aligned on even offsets from the ISN are InSpace markers, so a
//! receiver finds every sent segment's InSpace after resegmentation without waiting
//! for gaps to fill.
//!
//! Encoding, in place and without growing the data (zero-copy): from the ZOMBI field
//! onwards the segment is read as 2-octet shorts; each 0x0000 short is replaced by its
//! distance in shorts to the next 0x0000 short, or to just past the segment's end. The
//! ZOMBI field is the chain's head. An odd-length segment is treated as if a non-zero
//! pseudo octet followed it (not sent), so its last half short is never a link.
//!
//! Choices where the draft is loose (spec §2.9):
//! - The ZOMBI field is 15 bits with the CU/P bit below it (AMB-D2-12): the head
//!   distance is written as `(distance << 1) | P`, every other link as a full 16-bit
//!   distance. A segment has at most 32 767 shorts after the ZOMBI field (SDS ≤
//!   0xFFEB), so every distance fits 15 bits. Local to brisk.
//! - The draft's reference code has precedence bugs and omits the final link; this
//!   code writes the last link to just past the end, which the decoder checks.
//! - The head must be at least 2 (the first short after the ZOMBI field is SDS, never
//!   zero): a chain pointing at SDS is refused.
//! - Overhead: the fixed 4 octets of Marker + ZOMBI per segment (5 counting the odd
//!   case's pseudo octet, which is not sent), the draft's figure, not D.3's "2 B"
//!   (AMB-D2-11).
//!
//! [`StreamDecoder`] decodes an in-order byte stream cut anywhere (odd cuts too),
//! writing the decoded bytes in place, one pass, no buffering or allocation: a link
//! short's first byte is zeroed before its second arrives, since a link always decodes
//! to 0x0000. Decoding from the middle of a stream after a gap (draft §2.3.2.2 step 2B,
//! scanning for the next marker) is not built: the marker alone does not give the
//! padding in front of it, hence not where the segment that SDS measures began.
//!
//! Jumbo (App. C.2): the same in 4-octet words, marker 0x00000000, head `(distance <<
//! 2) | Len`: [`encode_jumbo`] / [`decode_jumbo`] on one segment.

use super::MAX_SENT_SIZE;

/// A segment that cannot be encoded, or a stream that is not ZOMBI-encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ZombiError {
    #[error("segment of {len} octets with {pad} padding: needs padding 0..=3 and at least 8 octets of InSpace option after it")]
    TooShort { len: usize, pad: usize },
    #[error("segment of {len} octets: a ZOMBI segment is at most {max} octets (larger needs the jumbo form)")]
    TooLong { len: usize, max: usize },
    #[error("padding octet at stream offset {at} is 0x00: padding must be non-zero")]
    ZeroPad { at: u64 },
    #[error("no InSpace marker (0x0000) at aligned stream offset {at}")]
    NoMarker { at: u64 },
    #[error(
        "ZOMBI field before encoding must be zero apart from its low bit (found {found:#06x})"
    )]
    FieldNotZero { found: u32 },
    #[error("ZOMBI link of 0 at stream offset {at}: links are 1..=32767 (head 2..=32767)")]
    ZeroLink { at: u64 },
    #[error("InSpace SDS {sds} at stream offset {at}: must be {min}..=65515 for ZOMBI decoding")]
    BadSds { sds: u16, min: u64, at: u64 },
    #[error("ZOMBI chain of the segment ending at stream offset {end} does not end just past it")]
    ChainEnd { end: u64 },
    #[error("decoder stopped at an earlier error")]
    Failed,
}

fn rd16(b: &[u8], i: usize) -> u16 {
    u16::from_be_bytes([b[i], b[i + 1]])
}

/// ZOMBI-encodes one sent segment in place. `seg` is its whole TCP Data: `pad`
/// non-zero padding octets, then the InSpace option with marker and ZOMBI zero (the
/// P/CU bit may be set), Inner Options and Payload.
pub fn encode_segment(seg: &mut [u8], pad: usize) -> Result<(), ZombiError> {
    let len = seg.len();
    if pad > 3 || len < pad + 8 {
        return Err(ZombiError::TooShort { len, pad });
    }
    if len > usize::from(MAX_SENT_SIZE) {
        return Err(ZombiError::TooLong {
            len,
            max: usize::from(MAX_SENT_SIZE),
        });
    }
    if let Some(i) = seg[..pad].iter().position(|&b| b == 0) {
        return Err(ZombiError::ZeroPad { at: i as u64 });
    }
    let head = pad + 2;
    let field = rd16(seg, pad) as u32 | ((rd16(seg, head) as u32 & !1) << 16);
    if field != 0 {
        return Err(ZombiError::FieldNotZero { found: field });
    }
    let shorts = (len - head).div_ceil(2);
    let mut prev = 0usize; // index in shorts from the ZOMBI field
    for k in 1..shorts {
        let i = head + 2 * k;
        // Only a whole short can be zero: the odd tail has a non-zero pseudo octet.
        if i + 1 < len && seg[i] == 0 && seg[i + 1] == 0 {
            write_link(seg, head, prev, k);
            prev = k;
        }
    }
    write_link(seg, head, prev, shorts);
    Ok(())
}

fn write_link(seg: &mut [u8], head: usize, from: usize, to: usize) {
    let d = (to - from) as u16; // ≤ 32 767: checked by the length bound
    let at = head + 2 * from;
    let v = if from == 0 {
        (d << 1) | u16::from(seg[at + 1] & 1)
    } else {
        d
    };
    seg[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    Pad,
    Header,
    Body,
}

/// Decodes an in-order ZOMBI-encoded byte stream fed in arbitrary pieces.
#[derive(Clone, Debug)]
pub struct StreamDecoder {
    /// ISN-relative offset of the next byte (the first data byte after the SYN is 1).
    rel: u64,
    seg_start: u64,
    marker: u64,
    seg_end: u64,
    next_link: u64,
    hi: u8,
    phase: Phase,
    failed: bool,
    segments: u64,
}

impl StreamDecoder {
    /// A decoder whose first byte is at ISN-relative offset `start_rel`: 1 after a
    /// data-less SYN, 1 + the SYN's data after a SYN with data (SYN=1 data is not
    /// ZOMBI-encoded).
    pub fn new(start_rel: u64) -> Self {
        StreamDecoder {
            rel: start_rel,
            seg_start: start_rel,
            marker: 0,
            seg_end: 0,
            next_link: 0,
            hi: 0,
            phase: Phase::Pad,
            failed: false,
            segments: 0,
        }
    }

    /// Sent segments completely decoded so far.
    pub fn segments(&self) -> u64 {
        self.segments
    }

    /// Whether the decoder stands at a sent segment's boundary.
    pub fn at_boundary(&self) -> bool {
        !self.failed && self.phase == Phase::Pad && self.rel == self.seg_start
    }

    /// Decodes `chunk` in place. After an error the decoder refuses further input.
    pub fn feed(&mut self, chunk: &mut [u8]) -> Result<(), ZombiError> {
        if self.failed {
            return Err(ZombiError::Failed);
        }
        let r = self.feed_inner(chunk);
        self.failed = r.is_err();
        r
    }

    fn feed_inner(&mut self, chunk: &mut [u8]) -> Result<(), ZombiError> {
        let mut i = 0;
        while i < chunk.len() {
            let r = self.rel;
            match self.phase {
                Phase::Pad if !r.is_multiple_of(4) => {
                    if chunk[i] == 0 {
                        return Err(ZombiError::ZeroPad { at: r });
                    }
                }
                Phase::Pad | Phase::Header => {
                    if self.phase == Phase::Pad {
                        self.marker = r;
                        self.phase = Phase::Header;
                    }
                    self.header_byte(&mut chunk[i])?;
                }
                Phase::Body => {
                    if r < self.next_link {
                        // Untouched run up to the next link or the segment's end.
                        let stop = self.next_link.min(self.seg_end) - 1;
                        let n = ((stop - r) as usize).min(chunk.len() - 1 - i);
                        i += n;
                        self.rel += n as u64;
                    } else if r == self.next_link {
                        self.hi = chunk[i];
                        chunk[i] = 0;
                    } else {
                        let code = u16::from_be_bytes([self.hi, chunk[i]]);
                        chunk[i] = 0;
                        if code == 0 {
                            return Err(ZombiError::ZeroLink { at: r - 1 });
                        }
                        self.next_link += 2 * u64::from(code);
                    }
                }
            }
            self.rel += 1;
            i += 1;
            if self.phase == Phase::Body && self.rel == self.seg_end {
                let past = self.marker + 2 + 2 * (self.seg_end - self.marker - 2).div_ceil(2);
                if self.next_link != past {
                    return Err(ZombiError::ChainEnd { end: self.seg_end });
                }
                self.phase = Phase::Pad;
                self.seg_start = self.seg_end;
                self.segments += 1;
            }
        }
        Ok(())
    }

    fn header_byte(&mut self, b: &mut u8) -> Result<(), ZombiError> {
        let r = self.rel;
        match r - self.marker {
            0 | 1 => {
                if *b != 0 {
                    return Err(ZombiError::NoMarker { at: self.marker });
                }
            }
            2 => {
                self.hi = *b;
                *b = 0;
            }
            3 => {
                let code = u16::from_be_bytes([self.hi, *b]) >> 1;
                *b &= 1;
                if code < 2 {
                    return Err(ZombiError::ZeroLink { at: r - 1 });
                }
                self.next_link = self.marker + 2 + 2 * u64::from(code);
            }
            4 => self.hi = *b,
            _ => {
                let sds = u16::from_be_bytes([self.hi, *b]);
                let min = self.marker - self.seg_start + 8;
                if u64::from(sds) < min || sds > MAX_SENT_SIZE {
                    return Err(ZombiError::BadSds {
                        sds,
                        min,
                        at: r - 1,
                    });
                }
                self.seg_end = self.seg_start + u64::from(sds);
                self.phase = Phase::Body;
            }
        }
        Ok(())
    }
}

/// Decodes one sent segment in place whose first octet is at ISN-relative `seg_rel`.
pub fn decode_segment(seg: &mut [u8], seg_rel: u64) -> Result<(), ZombiError> {
    let mut d = StreamDecoder::new(seg_rel);
    d.feed(seg)?;
    if !d.at_boundary() || d.segments() != 1 {
        return Err(ZombiError::ChainEnd {
            end: seg_rel + seg.len() as u64,
        });
    }
    Ok(())
}

fn rd32(b: &[u8], i: usize) -> u32 {
    u32::from_be_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])
}

/// Jumbo ZOMBI-encodes one segment in place (App. C.2): words of 4 octets from the
/// ZOMBI word, a partial last word treated as padded with non-zero octets. `pad` is
/// the padding before the 4-octet marker.
pub fn encode_jumbo(seg: &mut [u8], pad: usize) -> Result<(), ZombiError> {
    let len = seg.len();
    if pad > 3 || len < pad + 12 {
        return Err(ZombiError::TooShort { len, pad });
    }
    if let Some(i) = seg[..pad].iter().position(|&b| b == 0) {
        return Err(ZombiError::ZeroPad { at: i as u64 });
    }
    let head = pad + 4;
    let field = rd32(seg, pad) | (rd32(seg, head) & !3);
    if field != 0 {
        return Err(ZombiError::FieldNotZero { found: field });
    }
    let words = (len - head).div_ceil(4);
    let mut prev = 0usize;
    let link = |seg: &mut [u8], from: usize, to: usize| {
        let d = (to - from) as u32;
        let at = head + 4 * from;
        let v = if from == 0 {
            (d << 2) | (seg[at + 3] as u32 & 3)
        } else {
            d
        };
        seg[at..at + 4].copy_from_slice(&v.to_be_bytes());
    };
    for k in 1..words {
        let i = head + 4 * k;
        if i + 3 < len && seg[i..i + 4] == [0; 4] {
            link(seg, prev, k);
            prev = k;
        }
    }
    link(seg, prev, words);
    Ok(())
}

/// Decodes one jumbo segment in place; `pad` octets precede the marker.
pub fn decode_jumbo(seg: &mut [u8], pad: usize) -> Result<(), ZombiError> {
    let len = seg.len();
    if pad > 3 || len < pad + 12 {
        return Err(ZombiError::TooShort { len, pad });
    }
    if rd32(seg, pad) != 0 {
        return Err(ZombiError::NoMarker { at: pad as u64 });
    }
    let head = pad + 4;
    let words = (len - head).div_ceil(4);
    let w = rd32(seg, head);
    let mut k = (w >> 2) as usize;
    seg[head..head + 4].copy_from_slice(&(w & 3).to_be_bytes());
    if k < 2 {
        return Err(ZombiError::ZeroLink { at: head as u64 });
    }
    while k < words {
        let i = head + 4 * k;
        if i + 3 >= len {
            break; // a link never sits in the partial last word
        }
        let d = rd32(seg, i) as usize;
        seg[i..i + 4].fill(0);
        if d == 0 {
            return Err(ZombiError::ZeroLink { at: i as u64 });
        }
        k = k.saturating_add(d);
    }
    if k != words {
        return Err(ZombiError::ChainEnd { end: len as u64 });
    }
    Ok(())
}

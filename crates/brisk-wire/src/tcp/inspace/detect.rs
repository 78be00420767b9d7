//! Detecting an upgraded SYN=1 segment (draft §2.3.2.1, §3.2.2): unless the TCP Data is
//! shorter than 12 octets, it is upgraded iff its first 4 octets are Magic A, Len is 2,
//! Magic B is right and SDS equals the TCP Data's size.
//!
//! The four checks are one masked compare of the first 12 octets ([`CHECKED_MASK`]), so
//! the false-positive probability for an ordinary SYN whose data is uniformly random is
//! exactly 2^−(bits in the mask) = 2^−66 (32 + 16 + 16 + 2), the draft's figure, and a
//! SYN with fewer than 12 octets of data can never match.
//!
//! The magic values are "TBA" in the draft (AMB-D2-5): brisk's are private
//! experimental values, configurable, chosen not to look like the start of HTTP, TLS
//! (0x16 0x03) or SSH, and with no zero octet.

use super::{SynInSpace, SYN_LEN};

/// The two magic numbers of a SYN=1 InSpace option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Magic {
    pub a: u32,
    pub b: u16,
}

impl Default for Magic {
    fn default() -> Self {
        Magic::BRISK
    }
}

impl Magic {
    /// brisk's experimental values (not interoperable with any other implementation).
    pub const BRISK: Magic = Magic {
        a: 0x9E37_79B9,
        b: 0xC2B5,
    };
}

/// The bits the detector compares, octet by octet: Magic A (32), SDS (16), Len (the
/// low 2 bits of octet 7), Magic B (16). InOO, SOO and CU are free.
pub const CHECKED_MASK: [u8; SYN_LEN] = [
    0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00, 0x03, 0xFF, 0xFF, 0x00, 0x00,
];

/// Bits checked: the popcount of [`CHECKED_MASK`] (66).
pub const fn checked_bits() -> u32 {
    let mut n = 0;
    let mut i = 0;
    while i < SYN_LEN {
        n += CHECKED_MASK[i].count_ones();
        i += 1;
    }
    n
}

/// What a SYN=1 receiver makes of the TCP Data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SynKind {
    Ordinary,
    /// Passed the four checks. The option's extents may still be malformed (the draft
    /// leaves that TBA): [`SynInSpace::decode`] says so.
    Upgraded,
}

/// The expected first 12 octets under [`CHECKED_MASK`] for TCP Data of `len` octets,
/// or `None` when `len` cannot be an SDS (shorter than 12, or above 16 bits).
fn expected(len: usize, magic: Magic) -> Option<[u8; SYN_LEN]> {
    if len < SYN_LEN {
        return None;
    }
    let sds = u16::try_from(len).ok()?;
    let mut e = [0u8; SYN_LEN];
    e[0..4].copy_from_slice(&magic.a.to_be_bytes());
    e[4..6].copy_from_slice(&sds.to_be_bytes());
    e[7] = SynInSpace::LEN_FIELD;
    e[8..10].copy_from_slice(&magic.b.to_be_bytes());
    Some(e)
}

/// The draft's four checks on a SYN's or SYN/ACK's TCP Data. No allocation; reads at
/// most 12 octets.
pub fn detect_syn(data: &[u8], magic: Magic) -> SynKind {
    match data.first_chunk::<SYN_LEN>() {
        Some(head) => detect_head(head, data.len(), magic),
        None => SynKind::Ordinary,
    }
}

/// [`detect_syn`] on the first 12 octets of TCP Data `len` octets long.
pub fn detect_head(head: &[u8; SYN_LEN], len: usize, magic: Magic) -> SynKind {
    let Some(e) = expected(len, magic) else {
        return SynKind::Ordinary;
    };
    let hit = head
        .iter()
        .zip(CHECKED_MASK.iter())
        .zip(e.iter())
        .all(|((d, m), e)| d & m == *e);
    if hit {
        SynKind::Upgraded
    } else {
        SynKind::Ordinary
    }
}

/// Counts from [`sample_ordinary_syns`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SampleCounts {
    pub samples: u64,
    /// Read as upgraded: false positives.
    pub hits: u64,
    /// Matched the 2 Len bits alone (expected samples / 4): shows the sampler reaches
    /// the checked bits.
    pub len_only: u64,
    /// Matched Magic B and Len (18 bits, expected samples / 2^18).
    pub b_and_len: u64,
}

/// Runs the detector on `samples` ordinary SYNs whose first 12 octets `fill` draws and
/// whose data length is drawn by `len` (≥ 12: shorter data is never read).
pub fn sample_ordinary_syns(
    samples: u64,
    magic: Magic,
    mut fill: impl FnMut(&mut [u8; SYN_LEN]),
    mut len: impl FnMut() -> usize,
) -> SampleCounts {
    let mut c = SampleCounts {
        samples,
        ..SampleCounts::default()
    };
    let mut head = [0u8; SYN_LEN];
    let b = magic.b.to_be_bytes();
    for _ in 0..samples {
        fill(&mut head);
        let n = len();
        if detect_head(&head, n, magic) == SynKind::Upgraded {
            c.hits += 1;
        }
        if head[7] & 3 == SynInSpace::LEN_FIELD {
            c.len_only += 1;
            if head[8..10] == b {
                c.b_and_len += 1;
            }
        }
    }
    c
}

/// False-positive probability for uniformly random TCP Data of one length ≥ 12, as
/// 2^−k: returns k.
pub fn false_positive_log2() -> u32 {
    checked_bits()
}

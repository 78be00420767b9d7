//! The payload of the lab's bulk streams: bytes keyed by a seed and by their stream
//! offset, so any stretch can be produced without the bytes before it, and a receiver
//! checks each read exactly against what the sender wrote at that offset. A lost,
//! duplicated, reordered or corrupted byte shows, with its offset.
//!
//! Why not a ChaCha stream hashed with SHA-256 at both ends (what the lab used
//! before): at gigabits per second that took about 30 % of all CPU in `bench emu` and
//! `bench real` (docs/performance.md), CPU the TCP stacks under test then did not get.
//! This costs a few instructions per 8 bytes and a `memcmp`, and compares every byte
//! where a hash compares one digest. Nothing here needs secrecy.

/// SplitMix64's output function: a bijective mix, so distinct (key, word index)
/// inputs give well-spread, distinct words.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Writes the pattern bytes of stream offsets `off .. off + out.len()` for `seed`:
/// byte `i` is byte `i % 8` (little-endian) of word `i / 8`, and word `k` is
/// `mix(key + k·φ)`. Any offset can be produced without the bytes before it.
pub fn fill_pattern(seed: u64, off: u64, out: &mut [u8]) {
    let key = mix(seed ^ 0x6272_6973_6b2d_6275); // "brisk-bu"
    let word = |k: u64| mix(key.wrapping_add(k.wrapping_mul(0x9e37_79b9_7f4a_7c15)));
    let mut k = off / 8;
    let skip = (off % 8) as usize;
    let mut rest = out;
    if skip != 0 {
        let w = word(k).to_le_bytes();
        let n = (8 - skip).min(rest.len());
        rest[..n].copy_from_slice(&w[skip..skip + n]);
        rest = &mut rest[n..];
        k += 1;
    }
    let mut words = rest.chunks_exact_mut(8);
    for c in &mut words {
        c.copy_from_slice(&word(k).to_le_bytes());
        k += 1;
    }
    let tail = words.into_remainder();
    if !tail.is_empty() {
        let n = tail.len();
        tail.copy_from_slice(&word(k).to_le_bytes()[..n]);
    }
}

/// Checks a received stream against the pattern, read by read.
#[derive(Debug)]
pub struct PatternCheck {
    seed: u64,
    want: Vec<u8>,
    mismatch_at: Option<u64>,
}

impl PatternCheck {
    pub fn new(seed: u64) -> PatternCheck {
        PatternCheck {
            seed,
            want: Vec::new(),
            mismatch_at: None,
        }
    }

    /// Checks `data`, read at stream offset `off`. After the first mismatch the rest
    /// is not compared (the offset of the first is what tells the story).
    pub fn update(&mut self, off: u64, data: &[u8]) {
        if self.mismatch_at.is_some() {
            return;
        }
        if self.want.len() < data.len() {
            self.want.resize(data.len(), 0);
        }
        let want = &mut self.want[..data.len()];
        fill_pattern(self.seed, off, want);
        if data != &want[..] {
            let i = data.iter().zip(want.iter()).position(|(a, b)| a != b);
            self.mismatch_at = Some(off + i.unwrap_or(0) as u64);
        }
    }

    /// The stream offset of the first byte that differed, if any.
    pub fn mismatch_at(&self) -> Option<u64> {
        self.mismatch_at
    }
}

#[cfg(test)]
mod tests {
    use super::{fill_pattern, PatternCheck};

    #[test]
    fn pattern_is_the_same_from_any_offset() {
        let mut whole = vec![0u8; 1000];
        fill_pattern(7, 0, &mut whole);
        for (off, len) in [(0, 1), (1, 7), (3, 20), (8, 8), (13, 500), (999, 1), (5, 0)] {
            let mut part = vec![0u8; len];
            fill_pattern(7, off as u64, &mut part);
            assert_eq!(part, whole[off..off + len], "offset {off} len {len}");
        }
        let mut other = vec![0u8; 1000];
        fill_pattern(8, 0, &mut other);
        assert_ne!(other, whole, "the seed matters");
        // A shifted stream differs: reordering is caught.
        assert_ne!(whole[..992], whole[8..]);
    }

    #[test]
    fn a_check_finds_the_first_wrong_byte() {
        let mut data = vec![0u8; 300];
        fill_pattern(3, 100, &mut data);
        let mut ok = PatternCheck::new(3);
        ok.update(100, &data[..50]);
        ok.update(150, &data[50..]);
        assert_eq!(ok.mismatch_at(), None);
        data[123] ^= 1;
        let mut bad = PatternCheck::new(3);
        bad.update(100, &data);
        assert_eq!(bad.mismatch_at(), Some(223));
        let mut shifted = PatternCheck::new(3);
        shifted.update(101, &data[..20]);
        assert!(
            shifted.mismatch_at().is_some(),
            "a byte out of place is caught"
        );
    }
}

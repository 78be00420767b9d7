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

/// SplitMix64's output function: a bijective mix, so distinct inputs give
/// well-spread, distinct words.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// Words per block: prime, so a shift by a whole number of words lines a block's
/// table up with itself only after 8191 words, and then the block keys differ.
const BLOCK: usize = 8191;

/// One stream's payload generator (see [`Pattern::fill`]).
///
/// Why a table: mixing every 8-byte word on its own (what this did at first) was
/// 11 % of all CPU samples in `bench real` at 10 Gbit/s (docs/performance.md); a
/// table lookup and an XOR per word is a few instructions and vectorises.
#[derive(Clone, Debug)]
pub struct Pattern {
    key: u64,
    /// `table[i] = mix(key + i·φ)`, 64 KB.
    table: Box<[u64]>,
}

impl Pattern {
    pub fn new(seed: u64) -> Pattern {
        let key = mix(seed ^ 0x6272_6973_6b2d_6275); // "brisk-bu"
        let table = (0..BLOCK as u64)
            .map(|i| mix(key.wrapping_add(i.wrapping_mul(0x9e37_79b9_7f4a_7c15))))
            .collect();
        Pattern { key, table }
    }

    /// The key of block `b`, mixed into each of its words.
    fn block_key(&self, b: u64) -> u64 {
        mix(self.key ^ b.wrapping_mul(0xd1b5_4a32_d192_ed03))
    }

    fn word(&self, k: u64) -> u64 {
        self.table[(k % BLOCK as u64) as usize] ^ self.block_key(k / BLOCK as u64)
    }

    /// Writes the pattern bytes of stream offsets `off .. off + out.len()`: byte `i`
    /// is byte `i % 8` (little-endian) of word `i / 8`, and word `k` is
    /// `table[k mod 8191] XOR block_key(k div 8191)`. Any offset can be produced
    /// without the bytes before it.
    pub fn fill(&self, off: u64, out: &mut [u8]) {
        let mut k = off / 8;
        let skip = (off % 8) as usize;
        let mut rest = out;
        if skip != 0 {
            let w = self.word(k).to_le_bytes();
            let n = (8 - skip).min(rest.len());
            rest[..n].copy_from_slice(&w[skip..skip + n]);
            rest = &mut rest[n..];
            k += 1;
        }
        // Whole words, a block's run at a time: one block key, then table entries.
        while rest.len() >= 8 {
            let (b, mut i) = (k / BLOCK as u64, (k % BLOCK as u64) as usize);
            let bk = self.block_key(b);
            let run = (BLOCK - i).min(rest.len() / 8);
            let (head, tail) = rest.split_at_mut(run * 8);
            for c in head.chunks_exact_mut(8) {
                c.copy_from_slice(&(self.table[i] ^ bk).to_le_bytes());
                i += 1;
            }
            rest = tail;
            k += run as u64;
        }
        if !rest.is_empty() {
            let n = rest.len();
            rest.copy_from_slice(&self.word(k).to_le_bytes()[..n]);
        }
    }
}

/// Checks a received stream against the pattern, read by read.
#[derive(Debug)]
pub struct PatternCheck {
    pattern: Pattern,
    want: Vec<u8>,
    mismatch_at: Option<u64>,
}

impl PatternCheck {
    pub fn new(seed: u64) -> PatternCheck {
        PatternCheck {
            pattern: Pattern::new(seed),
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
        self.pattern.fill(off, want);
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
    use super::{Pattern, PatternCheck, BLOCK};

    #[test]
    fn pattern_is_the_same_from_any_offset() {
        let mut whole = vec![0u8; 1000];
        Pattern::new(7).fill(0, &mut whole);
        for (off, len) in [(0, 1), (1, 7), (3, 20), (8, 8), (13, 500), (999, 1), (5, 0)] {
            let mut part = vec![0u8; len];
            Pattern::new(7).fill(off as u64, &mut part);
            assert_eq!(part, whole[off..off + len], "offset {off} len {len}");
        }
        let mut other = vec![0u8; 1000];
        Pattern::new(8).fill(0, &mut other);
        assert_ne!(other, whole, "the seed matters");
        // A shifted stream differs: reordering is caught.
        assert_ne!(whole[..992], whole[8..]);
    }

    #[test]
    fn blocks_join_and_do_not_repeat() {
        // Three blocks and a bit, filled whole and in pieces that straddle the joins.
        let p = Pattern::new(11);
        let len = 3 * BLOCK * 8 + 100;
        let mut whole = vec![0u8; len];
        p.fill(0, &mut whole);
        for (off, n) in [
            (BLOCK * 8 - 3, 10),
            (BLOCK * 8, 8),
            (2 * BLOCK * 8 - 5, 7000),
        ] {
            let mut part = vec![0u8; n];
            p.fill(off as u64, &mut part);
            assert_eq!(part, whole[off..off + n], "offset {off}");
        }
        // A stretch one block later is different: a shift by a block is caught.
        let b = BLOCK * 8;
        assert_ne!(whole[..b], whole[b..2 * b]);
        // Every word of the first two blocks is distinct.
        let mut words: Vec<u64> = whole[..2 * b]
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
            .collect();
        words.sort_unstable();
        words.dedup();
        assert_eq!(words.len(), 2 * BLOCK);
    }

    #[test]
    fn a_check_finds_the_first_wrong_byte() {
        let mut data = vec![0u8; 300];
        Pattern::new(3).fill(100, &mut data);
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

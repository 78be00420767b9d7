//! Internet checksum (RFC 1071), with incremental update (RFC 1624).
//!
//! The sum is accumulated 64 bits at a time with end-around carry and folded at the
//! end: the ones'-complement sum is associative and byte-order independent (RFC 1071
//! §2), so summing wider words and folding the carries back in gives the same 16-bit
//! result.

use std::net::{Ipv4Addr, Ipv6Addr};

/// A running ones'-complement sum. Chunks of any length may be added in order; a chunk
/// that starts at an odd offset of the overall stream is handled by byte-swapping its
/// partial sum (RFC 1071 §2(B)).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Accumulator {
    sum: u64,
    /// The bytes added so far have odd length: the next byte is a low-order byte.
    odd: bool,
}

impl Accumulator {
    pub const fn new() -> Self {
        Accumulator { sum: 0, odd: false }
    }

    /// Adds `data` as the next bytes of the checksummed stream.
    pub fn add_bytes(&mut self, data: &[u8]) {
        let part = fold(sum_words(data));
        let part = if self.odd { part.swap_bytes() } else { part };
        self.sum += u64::from(part);
        self.odd ^= data.len() % 2 == 1;
    }

    /// Adds one big-endian 16-bit word. Must be at an even offset of the stream.
    pub fn add_u16(&mut self, word: u16) {
        debug_assert!(!self.odd, "word added at odd offset");
        self.sum += u64::from(word);
    }

    /// Adds one big-endian 32-bit word (two 16-bit words). Must be at an even offset.
    pub fn add_u32(&mut self, word: u32) {
        debug_assert!(!self.odd, "word added at odd offset");
        self.sum += u64::from(word);
    }

    /// The folded ones'-complement sum (not complemented). A correct packet, checksum
    /// field included, sums to `0xffff`.
    pub fn sum(self) -> u16 {
        fold(self.sum)
    }

    /// The value to put into a checksum field: the complement of the sum.
    pub fn checksum(self) -> u16 {
        !self.sum()
    }

    /// True when the data summed (including its checksum field) verifies.
    pub fn verifies(self) -> bool {
        self.sum() == 0xffff
    }
}

/// RFC 1071 checksum of `data`: what goes into a zeroed checksum field.
pub fn checksum(data: &[u8]) -> u16 {
    let mut acc = Accumulator::new();
    acc.add_bytes(data);
    acc.checksum()
}

/// The folded ones'-complement sum of a 20-byte IPv4 header (no options), the same
/// 16-bit value as `Accumulator::new()` plus `add_bytes(h)` then `sum()` gives.
///
/// Every simulated IPv4 packet's header is summed twice (built and parsed), and the
/// general path (slice chunking, the carry chain, the tail) cost about 75
/// instructions a header for what is five 32-bit adds: the five native-endian 32-bit
/// words summed in 64 bits cannot overflow (< 2^35), each is congruent mod 0xffff to
/// its two 16-bit words (2^16 ≡ 1), and the folded sum of byte-swapped words is the
/// byte-swapped folded sum (RFC 1071 §2(B)), as in `sum_words_from`. `fold` maps a
/// non-zero sum into 1..=0xffff by its residue and zero to zero, like the general
/// path, so the result is bit for bit the same (a test compares them).
#[inline]
pub fn header20_sum(h: &[u8; 20]) -> u16 {
    let w = |i: usize| u64::from(u32::from_ne_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]));
    let folded = fold(w(0) + w(4) + w(8) + w(12) + w(16));
    if cfg!(target_endian = "little") {
        folded.swap_bytes()
    } else {
        folded
    }
}

/// The IPv4 pseudo-header (RFC 9293 §3.1): addresses, zero, protocol, upper-layer length.
pub fn pseudo_header_v4(src: Ipv4Addr, dst: Ipv4Addr, protocol: u8, len: u16) -> Accumulator {
    let mut acc = Accumulator::new();
    acc.add_u32(u32::from(src));
    acc.add_u32(u32::from(dst));
    acc.add_u16(u16::from(protocol));
    acc.add_u16(len);
    acc
}

/// The IPv6 pseudo-header (RFC 8200 §8.1): addresses, 32-bit length, zeros, next header.
pub fn pseudo_header_v6(src: Ipv6Addr, dst: Ipv6Addr, next_header: u8, len: u32) -> Accumulator {
    let mut acc = Accumulator::new();
    acc.add_bytes(&src.octets());
    acc.add_bytes(&dst.octets());
    acc.add_u32(len);
    acc.add_u16(u16::from(next_header));
    acc
}

/// RFC 1624 eqn. 3: the checksum after one 16-bit word of the covered data changes
/// from `old` to `new`, `HC' = ~(~HC + ~m + m')`, which avoids producing -0.
pub fn update_u16(check: u16, old: u16, new: u16) -> u16 {
    let sum = u64::from(!check) + u64::from(!old) + u64::from(new);
    !fold(sum)
}

/// Folds a wide accumulator to 16 bits with end-around carry.
fn fold(mut sum: u64) -> u16 {
    sum = (sum & 0xffff_ffff) + (sum >> 32);
    sum = (sum & 0xffff_ffff) + (sum >> 32);
    let mut s = sum as u32;
    s = (s & 0xffff) + (s >> 16);
    s = (s & 0xffff) + (s >> 16);
    s as u16
}

/// Sum of `data` as big-endian 16-bit words, a trailing odd byte padded with zero,
/// folded to 16 bits (0 only for all-zero data, as a fold of the plain sum gives).
///
/// Every simulated packet is checksummed when built and again when parsed, so this is
/// the simulator's hottest loop. It adds native-endian 64-bit words with end-around
/// carry (one add-with-carry per 8 bytes, no byte swaps) and swaps the folded result
/// once: 2^16 ≡ 1 (mod 0xffff), so a 64-bit word sums like its four 16-bit words, a
/// carry out of bit 63 is worth 1 (2^64 ≡ 1 (mod 0xffff) too), and a sum of
/// byte-swapped words is the byte-swapped sum (RFC 1071 §2(A), (B)). Adding
/// non-negative words this way keeps a non-zero sum non-zero, and the fold maps
/// every positive value into 1..=0xffff by its residue, so the result equals a plain
/// 16-bit reference's bit for bit (the tests compare against one).
///
/// Long inputs (a segment's payload) are summed with AVX2 where the CPU has it
/// ([`wide_sum`]), 64 bytes per round without the carry chain; the last < 64 bytes go
/// the scalar way.
fn sum_words(data: &[u8]) -> u64 {
    #[cfg(target_arch = "x86_64")]
    if data.len() >= WIDE_MIN && std::is_x86_feature_detected!("avx2") {
        let whole = data.len() & !63;
        // SAFETY: the CPU supports AVX2 (checked just above).
        let acc = unsafe { wide_sum(&data[..whole]) };
        return sum_words_from(acc, &data[whole..]);
    }
    sum_words_from(0, data)
}

/// Shortest input worth the AVX2 path (below it, the scalar loop's fewer set-up
/// instructions win; a header is 20–60 bytes).
#[cfg(target_arch = "x86_64")]
const WIDE_MIN: usize = 256;

/// [`sum_words`] of `data`, continuing from `acc`: an end-around-carry sum of earlier
/// 64-bit native-endian words (the stream's length so far a multiple of 8).
fn sum_words_from(acc: u64, data: &[u8]) -> u64 {
    let word = |c: &[u8]| u64::from_ne_bytes(c.try_into().expect("8 bytes"));
    let (mut acc, mut carry) = (acc, 0u8);
    // 64 bytes a round: the carry flag threads through eight adds, so a round costs
    // eight add-with-carry instructions and the loop's own three.
    let mut wide = data.chunks_exact(64);
    for c in &mut wide {
        for w in c.chunks_exact(8) {
            (acc, carry) = add_carry(carry, acc, word(w));
        }
    }
    let mut words = wide.remainder().chunks_exact(8);
    for c in &mut words {
        (acc, carry) = add_carry(carry, acc, word(c));
    }
    let tail = words.remainder();
    if !tail.is_empty() {
        // Zero padding keeps every byte at its offset: an odd last byte stays the high
        // byte of its big-endian word.
        // Copied in fixed 4-, 2- and 1-byte pieces: a copy of variable length is a
        // `memcpy` call, on every IPv4 header (20 bytes) and most segments.
        let mut last = [0u8; 8];
        let mut at = 0;
        if tail.len() & 4 != 0 {
            last[..4].copy_from_slice(&tail[..4]);
            at = 4;
        }
        if tail.len() & 2 != 0 {
            last[at..at + 2].copy_from_slice(&tail[at..at + 2]);
            at += 2;
        }
        if tail.len() & 1 != 0 {
            last[at] = tail[at];
        }
        (acc, carry) = add_carry(carry, acc, word(&last));
    }
    // The last carry goes around too; if that wraps (acc was all ones), the result is 1.
    let (lo, wrapped) = acc.overflowing_add(u64::from(carry));
    let folded = fold(lo + u64::from(wrapped));
    u64::from(if cfg!(target_endian = "little") {
        folded.swap_bytes()
    } else {
        folded
    })
}

/// The end-around-carry sum of `data` (a multiple of 64 bytes long) as 32-bit
/// native-endian words, which is congruent mod 0xffff to the sum of its 64-bit words
/// (2^32 ≡ 1), and zero only for all-zero data, as [`sum_words_from`] needs.
///
/// Each 32-byte load is split into two vectors of four 64-bit lanes (each lane's low
/// 32-bit word masked, its high one shifted down) added to one of four accumulators,
/// so no add waits on a carry. A lane gains less than 2^32 per 64 bytes, so blocks of 2^20
/// rounds (64 MiB) cannot overflow it; each block's lanes are folded into the result
/// with end-around carry.
///
/// # Safety
/// The CPU must support AVX2.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn wide_sum(data: &[u8]) -> u64 {
    use std::arch::x86_64::{
        __m256i, _mm256_add_epi64, _mm256_and_si256, _mm256_loadu_si256, _mm256_set1_epi64x,
        _mm256_setzero_si256, _mm256_srli_epi64, _mm256_storeu_si256,
    };
    const BLOCK: usize = 64 << 20;
    debug_assert_eq!(data.len() % 64, 0);
    let (mut acc, mut carry) = (0u64, 0u8);
    for block in data.chunks(BLOCK) {
        let zero = _mm256_setzero_si256();
        let low = _mm256_set1_epi64x(0xffff_ffff);
        let mut a = [zero; 4];
        for c in block.chunks_exact(64) {
            // SAFETY: `c` is 64 bytes long, so both unaligned 32-byte loads are in bounds.
            let (v0, v1) = unsafe {
                (
                    _mm256_loadu_si256(c.as_ptr().cast::<__m256i>()),
                    _mm256_loadu_si256(c.as_ptr().add(32).cast::<__m256i>()),
                )
            };
            a[0] = _mm256_add_epi64(a[0], _mm256_and_si256(v0, low));
            a[1] = _mm256_add_epi64(a[1], _mm256_srli_epi64::<32>(v0));
            a[2] = _mm256_add_epi64(a[2], _mm256_and_si256(v1, low));
            a[3] = _mm256_add_epi64(a[3], _mm256_srli_epi64::<32>(v1));
        }
        let mut lanes = [0u64; 16];
        for (i, v) in a.iter().enumerate() {
            // SAFETY: `lanes[4 * i..]` has room for the four 64-bit lanes stored.
            unsafe { _mm256_storeu_si256(lanes.as_mut_ptr().add(4 * i).cast::<__m256i>(), *v) };
        }
        for l in lanes {
            (acc, carry) = add_carry(carry, acc, l);
        }
    }
    let (lo, wrapped) = acc.overflowing_add(u64::from(carry));
    lo + u64::from(wrapped)
}

/// `a + b + carry` and the carry out: x86-64's `adc`, which LLVM chains through the
/// flags register when calls follow each other (a portable version elsewhere). The
/// intrinsic needs no CPU feature beyond the base ISA and is a safe function.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn add_carry(carry: u8, a: u64, b: u64) -> (u64, u8) {
    let mut out = 0;
    let c = std::arch::x86_64::_addcarry_u64(carry, a, b, &mut out);
    (out, c)
}

#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
fn add_carry(carry: u8, a: u64, b: u64) -> (u64, u8) {
    let (s, c1) = a.overflowing_add(b);
    let (s, c2) = s.overflowing_add(u64::from(carry));
    (s, u8::from(c1 | c2))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` pseudo-random bytes from a linear congruential generator seeded with `x`.
    fn lcg_bytes(mut x: u32, n: usize) -> Vec<u8> {
        (0..n)
            .map(|_| {
                x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
                (x >> 16) as u8
            })
            .collect()
    }

    /// Straightforward 16-bit reference implementation to compare the fast path against.
    fn reference(data: &[u8]) -> u16 {
        let mut s: u32 = 0;
        for pair in data.chunks(2) {
            let w = u16::from_be_bytes([pair[0], *pair.get(1).unwrap_or(&0)]);
            s += u32::from(w);
            s = (s & 0xffff) + (s >> 16);
        }
        s as u16
    }

    #[test]
    fn rfc1071_example_sums_to_ddf2() {
        // RFC 1071 §3: bytes 00 01 f2 03 f4 f5 f6 f7 sum to ddf2.
        let data = [0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7];
        let mut acc = Accumulator::new();
        acc.add_bytes(&data);
        assert_eq!(acc.sum(), 0xddf2);
        assert_eq!(checksum(&data), 0x220d);
    }

    #[test]
    fn known_ipv4_header_verifies() {
        // A widely used example header (checksum b861).
        let hdr = [
            0x45, 0x00, 0x00, 0x73, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0xb8, 0x61, 0xc0, 0xa8,
            0x00, 0x01, 0xc0, 0xa8, 0x00, 0xc7,
        ];
        let mut acc = Accumulator::new();
        acc.add_bytes(&hdr);
        assert!(acc.verifies());
        let mut zeroed = hdr;
        zeroed[10] = 0;
        zeroed[11] = 0;
        assert_eq!(checksum(&zeroed), 0xb861);
    }

    #[test]
    fn fast_sum_matches_reference_for_all_lengths() {
        let data: Vec<u8> = (0..200u32).map(|i| (i * 37 + 11) as u8 | 0x80).collect();
        for len in 0..data.len() {
            let mut acc = Accumulator::new();
            acc.add_bytes(&data[..len]);
            assert_eq!(acc.sum(), reference(&data[..len]), "len {len}");
        }
    }

    #[test]
    fn fast_sum_matches_reference_on_packet_sized_and_extreme_data() {
        // Pseudo-random bytes (an LCG), all-0xff (sums that wrap many times) and
        // all-zero (the one input that folds to 0), at every offset of a long buffer.
        for data in [lcg_bytes(12345, 3000), vec![0xff; 3000], vec![0; 3000]] {
            for (start, len) in [(0, 1500), (1, 1499), (3, 1460), (7, 2993), (0, 0), (5, 33)] {
                let d = &data[start..start + len];
                let mut acc = Accumulator::new();
                acc.add_bytes(d);
                assert_eq!(acc.sum(), reference(d), "start {start} len {len}");
            }
        }
    }

    #[test]
    fn wide_and_scalar_sums_agree_with_the_reference() {
        // Both paths on the same inputs, whatever this CPU would pick: lengths around
        // the wide path's threshold and its 64-byte rounds, random and extreme bytes.
        for data in [lcg_bytes(777, 5000), vec![0xff; 5000], vec![0; 5000]] {
            for len in [0, 1, 63, 64, 255, 256, 257, 319, 1448, 1449, 4096, 4999] {
                let d = &data[..len];
                let want = reference(d);
                let scalar = sum_words_from(0, d);
                assert_eq!(scalar, u64::from(want), "scalar, len {len}");
                assert_eq!(sum_words(d), u64::from(want), "dispatch, len {len}");
                #[cfg(target_arch = "x86_64")]
                if std::is_x86_feature_detected!("avx2") {
                    let whole = len & !63;
                    // SAFETY: AVX2 is present (checked above).
                    let acc = unsafe { wide_sum(&d[..whole]) };
                    assert_eq!(
                        fold(sum_words_from(acc, &d[whole..])),
                        want,
                        "wide, len {len}"
                    );
                }
            }
        }
    }

    #[test]
    fn header20_sum_matches_the_general_sum() {
        // Random, all-ones (every fold wraps) and all-zero (folds to 0) headers, and
        // every single-bit header, against the accumulator and the 16-bit reference.
        let mut cases: Vec<[u8; 20]> = Vec::new();
        for seed in 0..2000u32 {
            cases.push(lcg_bytes(seed, 20).try_into().expect("20 bytes"));
        }
        cases.push([0xff; 20]);
        cases.push([0; 20]);
        for bit in 0..160 {
            let mut h = [0u8; 20];
            h[bit / 8] = 1 << (bit % 8);
            cases.push(h);
        }
        for h in cases {
            let mut acc = Accumulator::new();
            acc.add_bytes(&h);
            assert_eq!(header20_sum(&h), acc.sum(), "{h:?}");
            assert_eq!(header20_sum(&h), reference(&h), "{h:?}");
        }
    }

    #[test]
    fn chunks_at_odd_offsets_sum_like_one_slice() {
        let data: Vec<u8> = (0..61u8)
            .map(|i| i.wrapping_mul(97).wrapping_add(3))
            .collect();
        for split1 in 0..data.len() {
            let split2 = (split1 + 7).min(data.len());
            let mut acc = Accumulator::new();
            acc.add_bytes(&data[..split1]);
            acc.add_bytes(&data[split1..split2]);
            acc.add_bytes(&data[split2..]);
            assert_eq!(acc.sum(), reference(&data), "split {split1}");
        }
    }

    #[test]
    fn incremental_update_matches_recompute() {
        let mut hdr = [
            0x45u8, 0x02, 0x00, 0x73, 0x12, 0x34, 0x40, 0x00, 0x40, 0x06, 0x00, 0x00, 0x0a, 0x00,
            0x00, 0x01, 0x0a, 0x00, 0x00, 0x02,
        ];
        let c = checksum(&hdr);
        hdr[10..12].copy_from_slice(&c.to_be_bytes());
        let old = u16::from_be_bytes([hdr[0], hdr[1]]);
        hdr[1] |= 0x03;
        let new = u16::from_be_bytes([hdr[0], hdr[1]]);
        let updated = update_u16(c, old, new);
        hdr[10..12].copy_from_slice(&updated.to_be_bytes());
        let mut acc = Accumulator::new();
        acc.add_bytes(&hdr);
        assert!(acc.verifies());
        hdr[10] = 0;
        hdr[11] = 0;
        assert_eq!(updated, checksum(&hdr));
    }

    #[test]
    fn pseudo_header_v6_equals_byte_layout() {
        let src: Ipv6Addr = "2001:db8::1".parse().unwrap();
        let dst: Ipv6Addr = "2001:db8::2".parse().unwrap();
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&src.octets());
        bytes.extend_from_slice(&dst.octets());
        bytes.extend_from_slice(&1234u32.to_be_bytes());
        bytes.extend_from_slice(&[0, 0, 0, 6]);
        assert_eq!(pseudo_header_v6(src, dst, 6, 1234).sum(), reference(&bytes));
    }
}

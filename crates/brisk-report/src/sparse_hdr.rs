//! The counts of an HDR histogram (Gil Tene's HdrHistogram layout, as the
//! `hdrhistogram` crate builds it for lowest value 1 and three significant digits),
//! kept sparsely: a chunk of [`CHUNK`] counts is allocated only where values land.
//!
//! Why: every flow of a run keeps a one-way-delay histogram. A dense one spans every
//! bucket from 1 ns up to the largest delay seen, about 130 KB for a 20-ms path, while
//! a flow's delays fill a few hundred of its 16 000 slots (a 20-KB flow's 14 packets,
//! at most 14). With 10^4 flows that was 1.3 GB. Here a flow holds the chunks its
//! delays touched (256 B each) and a sorted list of them.
//!
//! Exactness: [`SparseHdr::index`] is the crate's bucket index (`index_for`) written out
//! for this one configuration, and [`SparseHdr::to_histogram`] records each slot's
//! count at its slot's lowest value into a growable histogram of the same
//! configuration, so that histogram has the same count in every slot as one that had
//! recorded the values themselves, and answers every quantile the same (tests below).
//! Recording is O(1) while delays stay in the last chunk touched (they mostly do: one
//! chunk spans 32 adjacent slots), else a binary search over the chunks.

use hdrhistogram::Histogram;

/// Counts per chunk.
pub const CHUNK: usize = 32;
/// Half the sub-buckets per bucket, as a power of two: three significant digits need
/// 2000 distinct values per bucket, so 2048 sub-buckets, half of them 1024.
const HALF_MAG: u32 = 10;
/// Values below this share bucket 0 (the sub-bucket count minus one, as a mask).
const SUB_MASK: u64 = (1 << (HALF_MAG + 1)) - 1;
/// 64 minus the unit magnitude (0: lowest value 1) minus the sub-bucket magnitude.
const LZ_BASE: u32 = 64 - (HALF_MAG + 1);

/// Sparse HDR counts (see the module's note).
#[derive(Clone, Debug, Default)]
pub struct SparseHdr {
    /// (chunk number, its counts), sorted by chunk number.
    chunks: Vec<(u32, Box<[u64; CHUNK]>)>,
    /// Position in `chunks` of the chunk last recorded into.
    last: usize,
}

impl SparseHdr {
    /// The slot of `v` (`v ≥ 1`), as `hdrhistogram`'s `index_for` computes it.
    pub fn index(v: u64) -> usize {
        let bucket = LZ_BASE - (v | SUB_MASK).leading_zeros();
        let sub = (v >> bucket) as usize;
        ((bucket as usize + 1) << HALF_MAG) + sub - (1 << HALF_MAG)
    }

    /// The lowest value of slot `i` (the crate's `value_for`).
    pub fn value(i: usize) -> u64 {
        let bucket = (i >> HALF_MAG) as i64 - 1;
        let sub = (i & ((1 << HALF_MAG) - 1)) as u64 + (1 << HALF_MAG);
        if bucket < 0 {
            sub - (1 << HALF_MAG)
        } else {
            sub << bucket
        }
    }

    /// Counts one `v` (`v ≥ 1`).
    #[inline]
    pub fn record(&mut self, v: u64) {
        let i = Self::index(v);
        let id = (i / CHUNK) as u32;
        let pos = match self.chunks.get(self.last) {
            Some((c, _)) if *c == id => self.last,
            _ => match self.chunks.binary_search_by_key(&id, |(c, _)| *c) {
                Ok(p) => p,
                Err(p) => {
                    self.chunks.insert(p, (id, Box::new([0; CHUNK])));
                    p
                }
            },
        };
        self.last = pos;
        self.chunks[pos].1[i % CHUNK] += 1;
    }

    /// Bytes allocated (chunks and the list).
    pub fn heap_bytes(&self) -> usize {
        self.chunks.capacity() * std::mem::size_of::<(u32, Box<[u64; CHUNK]>)>()
            + self.chunks.len() * CHUNK * 8
    }

    /// A dense histogram (lowest 1, three digits, growing) with these counts.
    pub fn to_histogram(&self) -> Histogram<u64> {
        // NOTE(unwrap): constant, valid bounds (1 ≤ low, 2·low ≤ high, 3 digits).
        let mut h = Histogram::new_with_bounds(1, 2, 3).expect("valid bounds");
        h.auto(true);
        for (id, counts) in &self.chunks {
            for (k, &n) in counts.iter().enumerate().filter(|(_, &n)| n > 0) {
                let v = Self::value(*id as usize * CHUNK + k);
                // NOTE(unwrap): v is a slot's lowest value, within the range the
                // histogram grows to (the recorder clamps what it records).
                h.record_n(v, n).expect("growable histogram");
            }
        }
        h
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(x: &mut u64) -> u64 {
        *x = x
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        *x >> 11
    }

    /// The slot arithmetic is the crate's: the same lowest equivalent value, and slots
    /// in value order.
    #[test]
    fn slots_are_the_crates_buckets() {
        let h = Histogram::<u64>::new_with_bounds(1, 2, 3).unwrap();
        let mut x = 3u64;
        let mut vals: Vec<u64> = (1..5000).collect();
        vals.extend((0..20_000).map(|_| 1 + lcg(&mut x) % 4_000_000_000_000));
        vals.extend([2047, 2048, 2049, 4095, 4096, 1 << 40, (1 << 40) - 1]);
        for v in vals {
            let i = SparseHdr::index(v);
            assert_eq!(SparseHdr::value(i), h.lowest_equivalent(v), "v {v}");
            assert_eq!(SparseHdr::index(SparseHdr::value(i)), i, "v {v}");
            assert!(SparseHdr::index(v + 1) >= i);
        }
    }

    /// Rebuilt from sparse counts, the histogram answers every quantile as one that
    /// recorded the values did.
    #[test]
    fn quantiles_match_a_dense_histogram() {
        let mut dense = Histogram::<u64>::new_with_bounds(1, 2, 3).unwrap();
        dense.auto(true);
        let mut s = SparseHdr::default();
        let mut x = 9u64;
        for i in 0..30_000u64 {
            let v = match i % 50 {
                0 => 1 + lcg(&mut x) % 3000,
                1 => 1 + lcg(&mut x) % 3_600_000_000_000,
                _ => 5_000_000 + lcg(&mut x) % 15_000_000,
            };
            dense.record(v).unwrap();
            s.record(v);
        }
        let rebuilt = s.to_histogram();
        assert_eq!(rebuilt.len(), dense.len());
        for q in [0.0, 0.001, 0.25, 0.5, 0.9, 0.95, 0.99, 0.9999, 1.0] {
            assert_eq!(
                rebuilt.value_at_quantile(q),
                dense.value_at_quantile(q),
                "q {q}"
            );
        }
    }

    /// A short flow's handful of delays costs a few chunks, not the dense span.
    #[test]
    fn a_few_delays_cost_a_few_chunks() {
        let mut s = SparseHdr::default();
        for k in 0..14u64 {
            s.record(5_000_000 + k * 12_000);
        }
        assert!(s.heap_bytes() <= 4 * 1024, "{} B", s.heap_bytes());
    }
}

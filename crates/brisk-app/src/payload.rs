//! The payload of the simulator's and the real runs' streams, and the two halves that
//! write and check it.
//!
//! Every payload byte at stream offset `o` is `pattern[o % PATTERN_LEN]` from a
//! per-flow seeded table, except record headers. The reading side checks every byte as
//! it reads it and both sides may SHA-256 the whole stream, so integrity is verified
//! exactly even for transfers cut off by the end of a run (prefix consistency).
//!
//! The halves talk to the connection through brisk-tcp's [`ByteStream`], so the same
//! code runs over the simulator's connections, brisk's sockets and the kernel's. A
//! stream error moves nothing; the first one other than `Interrupted` is kept
//! ([`TxStream::error`]) for callers whose streams can fail (the simulator's never do).

use rand::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};
use std::io;
use std::rc::Rc;

use brisk_tcp::stream::ByteStream;
use brisk_tcp::SharedBytes;

/// Pattern period: a prime, so it never lines up with segment or record sizes.
pub const PATTERN_LEN: usize = 65_521;
/// Most bytes one `read`/`write` call moves.
pub const CHUNK: usize = 64 * 1024;
/// Bytes a sized pattern produces at a time for a check or a digest (on the stack).
const PIECE: usize = 2048;

/// Writes bytes `[off, off + out.len())` of `seed`'s ChaCha8 stream into `out`: the
/// same bytes as the first `off + out.len()` of one `fill_bytes` from the start (which
/// takes the stream's 32-bit words in order, little-endian), found by seeking to the
/// word that holds `off` (`set_word_pos`) instead of drawing what comes before it.
pub fn chacha_fill(seed: u64, off: u64, out: &mut [u8]) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_word_pos(u128::from(off / 4));
    let skip = (off % 4) as usize;
    let mut done = 0;
    if skip != 0 {
        // `fill_bytes` starts at a word: take the rest of the word `off` falls in.
        let mut word = [0u8; 4];
        rng.fill_bytes(&mut word);
        done = (4 - skip).min(out.len());
        out[..done].copy_from_slice(&word[skip..skip + done]);
    }
    if done < out.len() {
        rng.fill_bytes(&mut out[done..]);
    }
}

/// The per-flow payload: a seeded `PATTERN_LEN`-byte period, held as brisk-tcp's
/// [`SharedBytes`] so a sender's send buffer can refer to it instead of copying it
/// ([`ByteStream::write_shared`]).
///
/// The table is drawn from its seed on first use, not when the flow is built: every
/// flow has one pattern per direction, and a bulk flow's reverse direction (or a flow
/// that has not started) never reads its bytes. The draw depends on the seed alone, so
/// when it happens changes no byte.
///
/// A pattern for a stream whose length is known and shorter than the period (a sized
/// transfer, [`Pattern::with_length`]) stores none of its bytes: ChaCha is seekable
/// (`set_word_pos`), so the bytes at any offset are produced from the seed when they
/// are read, the same bytes as the full draw's ([`chacha_fill`]). The writer hands the
/// connection a generated [`SharedBytes`] (it produces each segment's payload as the
/// segment is sent), and the reader and the digests take the bytes in pieces of
/// [`PIECE`] on the stack. With 10^4 short flows the 20 KB each held were the largest
/// part of an active flow's memory (docs/performance.md, "Issue 36 status: scale").
/// Anything asked past that length (never, for a stream that keeps to it) is served
/// from the full table, drawn then; so is [`Pattern::at`], which lends a slice.
#[derive(Debug)]
pub struct Pattern {
    seed: u64,
    table: std::cell::OnceCell<SharedBytes>,
    /// The stream's length when known and below [`PATTERN_LEN`], and its bytes as a
    /// generated sequence (made on first use; it stores no bytes).
    prefix: Option<(usize, std::cell::OnceCell<SharedBytes>)>,
    /// Whether streams using this pattern also keep SHA-256 digests (the per-byte
    /// pattern check is always on; the digests cost ~half the run time at 1 Gbit/s).
    hash: bool,
}

impl Pattern {
    pub fn new(seed: u64) -> Rc<Pattern> {
        Self::with_hashing(seed, true)
    }
    /// A pattern whose streams keep SHA-256 digests only if `hash`.
    pub fn with_hashing(seed: u64, hash: bool) -> Rc<Pattern> {
        Self::with_length(seed, hash, None)
    }
    /// A pattern for a stream of `len` bytes (`None`: unknown or unbounded); the same
    /// bytes as [`Pattern::with_hashing`]'s, held in less memory when `len` is below the
    /// period.
    pub fn with_length(seed: u64, hash: bool, len: Option<u64>) -> Rc<Pattern> {
        let prefix = len
            .filter(|&l| l > 0 && l < PATTERN_LEN as u64)
            .map(|l| (l as usize, std::cell::OnceCell::new()));
        Rc::new(Pattern {
            seed,
            table: std::cell::OnceCell::new(),
            prefix,
            hash,
        })
    }
    /// The first `n` bytes of the seed's ChaCha8 stream.
    fn draw(&self, n: usize) -> Vec<u8> {
        let mut rng = ChaCha8Rng::seed_from_u64(self.seed);
        let mut bytes = vec![0u8; n];
        rng.fill_bytes(&mut bytes);
        bytes
    }
    /// Whether the bytes `[off, off + n)` are produced on demand (they lie within a
    /// sized stream's length).
    fn generated_for(&self, off: u64, n: usize) -> bool {
        matches!(&self.prefix, Some((len, _)) if off.saturating_add(n as u64) <= *len as u64)
    }
    /// The pattern as a periodic sequence (byte `o` is the pattern at stream offset `o`).
    pub fn shared(&self) -> &SharedBytes {
        self.table
            .get_or_init(|| SharedBytes::periodic(&self.draw(PATTERN_LEN)))
    }
    /// A sequence that holds the pattern's bytes `[off, off + n)`: the stream's own
    /// bytes when they are known and the window lies within them, else the periodic
    /// table. Byte `o` of either is the pattern at stream offset `o`.
    pub fn shared_for(&self, off: u64, n: usize) -> &SharedBytes {
        match &self.prefix {
            Some((len, cell)) if off.saturating_add(n as u64) <= *len as u64 => {
                let seed = self.seed;
                cell.get_or_init(|| {
                    SharedBytes::generated(*len, move |o, out| chacha_fill(seed, o, out))
                })
            }
            _ => self.shared(),
        }
    }
    /// `n <= PATTERN_LEN` pattern bytes starting at stream offset `off`, lent from the
    /// periodic table (drawn on first use, also for a sized pattern: its stream halves
    /// use [`Pattern::fill`] and the pieces of `for_each_piece` instead).
    pub fn at(&self, off: u64, n: usize) -> &[u8] {
        let n = n.min(PATTERN_LEN);
        self.shared()
            .table_at(off, n)
            .expect("a periodic pattern is a table")
    }
    /// Calls `f` with the pattern bytes of stream offsets `off .. off + n`, in order, in
    /// pieces: lent from the table, or produced into a stack buffer for a sized stream.
    fn for_each_piece(&self, off: u64, n: usize, mut f: impl FnMut(&[u8])) {
        if self.generated_for(off, n) {
            let mut buf = [0u8; PIECE];
            let mut done = 0;
            while done < n {
                let k = (n - done).min(PIECE);
                chacha_fill(self.seed, off + done as u64, &mut buf[..k]);
                f(&buf[..k]);
                done += k;
            }
            return;
        }
        let mut done = 0;
        while done < n {
            let piece = self.at(off + done as u64, n - done);
            f(piece);
            done += piece.len();
        }
    }
    /// Copies the pattern bytes of stream offsets `off .. off + out.len()` into `out`
    /// (for writers that need one contiguous message longer than the period).
    pub fn fill(&self, off: u64, out: &mut [u8]) {
        if self.generated_for(off, out.len()) {
            chacha_fill(self.seed, off, out);
            return;
        }
        let mut done = 0;
        while done < out.len() {
            let src = self.at(off + done as u64, out.len() - done);
            out[done..done + src.len()].copy_from_slice(src);
            done += src.len();
        }
    }
}

/// The writing half of a stream: offset and running hash of what the stream accepted.
#[derive(Debug)]
pub struct TxStream {
    pat: Rc<Pattern>,
    pub bytes: u64,
    hash: Option<Sha256>,
    /// The first write error other than `Interrupted` (none in the simulator).
    pub error: Option<io::Error>,
}

impl TxStream {
    pub fn new(pat: Rc<Pattern>) -> Self {
        TxStream {
            hash: pat.hash.then(Sha256::new),
            pat,
            bytes: 0,
            error: None,
        }
    }
    /// Writes up to `max` pattern bytes; returns how many the stream took.
    pub fn write_pattern(&mut self, p: &mut dyn ByteStream, max: u64) -> u64 {
        // Offer a chunk even when the buffer looks full: a short write is what tells
        // TCP to report `Writable` once space frees up.
        self.write_chunks(p, max, CHUNK, false)
    }
    /// Writes up to `max` pattern bytes in calls of at most `size` bytes, each through
    /// `write_with_priority` (priority 0): a prioritised sender takes each call whole or
    /// not at all (uTCP's one write, one record), a plain one takes what fits.
    pub fn write_sized(&mut self, p: &mut dyn ByteStream, max: u64, size: usize) -> u64 {
        self.write_chunks(p, max, size, true)
    }
    /// Pattern bytes in calls of at most `size` until `max` or a short write.
    fn write_chunks(&mut self, p: &mut dyn ByteStream, max: u64, size: usize, whole: bool) -> u64 {
        let mut total = 0u64;
        while total < max {
            let want = (max - total).min(size as u64) as usize;
            let (len, n) = if self.pat.generated_for(self.bytes, want) {
                // A sized stream's bytes are not stored: a whole write gets them in a
                // buffer of its own, a shared one by reference to the generated sequence.
                let n = if whole {
                    let mut chunk = vec![0u8; want];
                    self.pat.fill(self.bytes, &mut chunk);
                    p.write_with_priority(&chunk, 0)
                } else {
                    p.write_shared(self.pat.shared_for(self.bytes, want), self.bytes, want)
                };
                (want, n)
            } else {
                let chunk = self.pat.at(self.bytes, want);
                let n = if whole {
                    p.write_with_priority(chunk, 0)
                } else {
                    // The same bytes as `write(chunk)`; the stream may keep a reference.
                    p.write_shared(
                        self.pat.shared_for(self.bytes, want),
                        self.bytes,
                        chunk.len(),
                    )
                };
                (chunk.len(), n)
            };
            let n = keep_error(&mut self.error, n).min(len);
            if let Some(h) = &mut self.hash {
                self.pat.for_each_piece(self.bytes, n, |b| h.update(b));
            }
            self.bytes += n as u64;
            total += n as u64;
            if n < len {
                break;
            }
        }
        total
    }
    /// Writes `scratch` as one message through `put` (a blocking stream's `write_all`,
    /// or a write that also half-closes): `prefix` (a record header; empty for bulk),
    /// then the pattern bytes of the offsets that follow it. For senders whose write
    /// calls matter over a stack running in another thread: RC3 makes each write a
    /// chunk, and a record's header written alone could leave in a segment of its own.
    /// False, with the error kept, if `put` failed; the bytes then do not count.
    pub fn write_message(
        &mut self,
        prefix: &[u8],
        scratch: &mut [u8],
        put: impl FnOnce(&[u8]) -> io::Result<()>,
    ) -> bool {
        let k = prefix.len().min(scratch.len());
        scratch[..k].copy_from_slice(&prefix[..k]);
        self.pat.fill(self.bytes + k as u64, &mut scratch[k..]);
        if let Err(e) = put(scratch) {
            self.error.get_or_insert(e);
            return false;
        }
        if let Some(h) = &mut self.hash {
            h.update(&*scratch);
        }
        self.bytes += scratch.len() as u64;
        true
    }
    /// Writes raw bytes (record headers); returns how many the stream took.
    pub fn write_raw(&mut self, p: &mut dyn ByteStream, data: &[u8]) -> usize {
        let n = keep_error(&mut self.error, p.write(data)).min(data.len());
        if let Some(h) = &mut self.hash {
            h.update(&data[..n]);
        }
        self.bytes += n as u64;
        n
    }
    /// The digest so far (None when hashing is off).
    pub fn sha256(&self) -> Option<[u8; 32]> {
        self.hash.as_ref().map(|h| h.clone().finalize().into())
    }
}

/// A write's count, 0 on error; the first error other than `Interrupted` is kept.
fn keep_error(slot: &mut Option<io::Error>, r: io::Result<usize>) -> usize {
    match r {
        Ok(n) => n,
        Err(e) => {
            if e.kind() != io::ErrorKind::Interrupted && slot.is_none() {
                *slot = Some(e);
            }
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_matches_at_across_periods() {
        let p = Pattern::new(5);
        let mut long = vec![0u8; 3 * PATTERN_LEN + 17];
        p.fill(12_345, &mut long);
        for (k, piece) in long.chunks(1000).enumerate() {
            assert_eq!(piece, p.at(12_345 + 1000 * k as u64, piece.len()));
        }
    }

    /// Seeking gives the bytes of one draw from the start, at every offset within a
    /// word and across ChaCha's 64-byte blocks and 256-byte batches.
    #[test]
    fn chacha_fill_at_any_offset_is_the_draws_bytes() {
        let whole = Pattern::new(21).draw(4096);
        for off in (0..20).chain([63, 64, 65, 255, 256, 257, 1021, 2047, 3000]) {
            for n in [0usize, 1, 2, 3, 4, 5, 7, 64, 300, 1000] {
                let n = n.min(4096 - off);
                let mut out = vec![0u8; n];
                chacha_fill(21, off as u64, &mut out);
                assert_eq!(out, &whole[off..off + n], "at {off}+{n}");
            }
        }
    }

    /// A pattern that knows its stream's length gives the same bytes as the full one,
    /// within the length and past it.
    #[test]
    fn a_sized_pattern_gives_the_full_patterns_bytes() {
        for len in [1u64, 17, 20_000, PATTERN_LEN as u64 - 1, PATTERN_LEN as u64] {
            let (full, sized) = (Pattern::new(11), Pattern::with_length(11, true, Some(len)));
            for (off, n) in [(0, len as usize), (0, 1), (len / 2, (len / 2) as usize)] {
                let mut b = vec![0u8; n];
                sized.fill(off, &mut b);
                assert_eq!(full.at(off, n), &b[..], "len {len} at {off}+{n}");
                // The generated sequence the writer hands the connection, too.
                let g = sized.shared_for(off, n).at(off, n);
                assert_eq!(full.at(off, n), &g[..], "len {len} shared at {off}+{n}");
            }
            // Past the length: served from the full table.
            assert_eq!(full.at(len - 1, 5000), sized.at(len - 1, 5000));
            let mut a = vec![0u8; 70_000];
            let mut b = a.clone();
            full.fill(3, &mut a);
            sized.fill(3, &mut b);
            assert!(a == b);
        }
    }

    #[test]
    fn a_message_counts_and_hashes_only_if_put_succeeds() {
        let p = Pattern::new(1);
        let (mut tx, mut rx) = (TxStream::new(p.clone()), RxStream::new(p));
        let mut buf = vec![0u8; 70_000];
        let mut wire = Vec::new();
        assert!(tx.write_message(&[], &mut buf, |d| {
            wire.extend_from_slice(d);
            Ok(())
        }));
        assert!(!tx.write_message(&[], &mut buf[..10], |_| Err(io::ErrorKind::TimedOut.into())));
        assert_eq!(tx.bytes, 70_000);
        assert_eq!(
            tx.error.as_ref().map(io::Error::kind),
            Some(io::ErrorKind::TimedOut)
        );
        rx.check_pattern(0, &wire);
        rx.account(&wire);
        assert_eq!((rx.bad_bytes, rx.sha256()), (0, tx.sha256()));
    }
}

/// The reading half: offset, running hash and a count of bytes that broke the pattern.
#[derive(Debug)]
pub struct RxStream {
    pat: Rc<Pattern>,
    pub bytes: u64,
    hash: Option<Sha256>,
    pub bad_bytes: u64,
}

impl RxStream {
    pub fn new(pat: Rc<Pattern>) -> Self {
        RxStream {
            hash: pat.hash.then(Sha256::new),
            pat,
            bytes: 0,
            bad_bytes: 0,
        }
    }
    /// Checks `data`, read at stream offset `off`, against the pattern.
    pub fn check_pattern(&mut self, off: u64, data: &[u8]) {
        if self.pat.generated_for(off, data.len()) {
            let mut done = 0;
            let bad = &mut self.bad_bytes;
            self.pat.for_each_piece(off, data.len(), |want| {
                let got = &data[done..done + want.len()];
                if want != got {
                    *bad += want.iter().zip(got).filter(|(a, b)| a != b).count() as u64;
                }
                done += want.len();
            });
            return;
        }
        let mut done = 0;
        while done < data.len() {
            let n = (data.len() - done).min(PATTERN_LEN);
            let want = self.pat.at(off + done as u64, n);
            let got = &data[done..done + n];
            if want != got {
                self.bad_bytes += want.iter().zip(got).filter(|(a, b)| a != b).count() as u64;
            }
            done += n;
        }
    }
    /// Counts `data` as read (and hashes it).
    pub fn account(&mut self, data: &[u8]) {
        if let Some(h) = &mut self.hash {
            h.update(data);
        }
        self.bytes += data.len() as u64;
    }
    /// The digest so far (None when hashing is off).
    pub fn sha256(&self) -> Option<[u8; 32]> {
        self.hash.as_ref().map(|h| h.clone().finalize().into())
    }
}

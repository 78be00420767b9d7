//! The send buffer: bytes written by the application and not yet cumulatively ACKed.
//!
//! Bytes live in one contiguous `Vec` (a consumed prefix is compacted away once it is
//! at least half the allocation, so each byte is moved at most once on average); any
//! `(offset, len)` range of buffered data is a plain slice, which is what lets a
//! segment be built over an arbitrary range of the stream.
//!
//! Hooks, designed in now so they need no rewrite later:
//! - (a) prioritised send (uTCP `SO_UNORDEREDSEND`, Minion NSDI 2012 §4.2): not-yet-sent
//!   data is also described by a queue of write records `(offset, len, priority)`.
//!   [`SendBuffer::write_prioritised`] places a write ahead of every *wholly unsent*
//!   write of lower priority by moving those bytes up in the buffer: sequence numbers
//!   are bound to bytes only when they are first sent, so reordering the unsent tail
//!   keeps SACK, retransmission and RDB (all over sent bytes) consistent. A write is
//!   never split, and nothing goes ahead of a write that is sent or partly sent. In
//!   this mode each write keeps its own record (so a later urgent write can pass
//!   every unsent one), bounded by [`MAX_WRITE_RECORDS`].
//! - (b) RDB: a segment may carry already-sent, unACKed bytes in front of new data.
//!   Segments are built from a `(start_seq, len)` range over this buffer, so bundling
//!   is a matter of choosing `start_seq < snd_nxt`; the scoreboard then records the new
//!   part as usual.
//! - (c) RC3: `Segment` carries `priority` and `dscp` per segment, and its `kind`
//!   distinguishes tracked sends from `SegmentKind::Redundant`, a copy that is emitted
//!   but neither entered in the scoreboard nor counted by CC.
//!
//! Shared bytes ([`SharedBytes`], `Connection::write_shared`): an application whose
//! payload is a repeating table (the simulator's workload pattern) may write by
//! reference. While every live byte came from one table, contiguously, the buffer
//! holds only a position in it instead of a copy; any other write first copies the
//! referenced bytes in (so the buffer's contents, and every segment, are the same
//! either way). With 10^5 open flows the copies were a third of the simulator's
//! memory.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::Arc;

/// Longest slice a [`SharedBytes`] serves contiguously, and so the longest shared
/// write taken in one call: more than any segment's payload (one IP packet).
pub const MAX_SHARED_SLICE: usize = u16::MAX as usize;

/// A periodic byte sequence that connections can write by reference: byte `i` is
/// `period[i % period.len()]`, or a finite sequence held as a table or produced on
/// demand ([`SharedBytes::generated`]). Cheap to clone (one `Arc`).
#[derive(Clone)]
pub struct SharedBytes(Arc<SharedTable>);

/// Produces the bytes of a generated sequence from offset `off` into `out`.
type Generator = dyn Fn(u64, &mut [u8]) + Send + Sync;

struct SharedTable {
    source: Source,
    period: usize,
}

enum Source {
    /// The period repeated so that any window of up to [`MAX_SHARED_SLICE`] bytes
    /// starting within the first period is contiguous (a finite sequence: its bytes).
    Table(Box<[u8]>),
    /// A finite sequence of `period` bytes that nobody stores: each window is produced
    /// when it is read (a seekable stream such as ChaCha's).
    Generated(Box<Generator>),
}

impl std::fmt::Debug for SharedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedBytes")
            .field("period", &self.0.period)
            .field("generated", &self.is_generated())
            .finish_non_exhaustive()
    }
}

impl SharedBytes {
    /// The sequence that repeats `period` (which must not be empty).
    pub fn periodic(period: &[u8]) -> Self {
        assert!(!period.is_empty(), "SharedBytes::periodic: empty period");
        let len = period.len() + MAX_SHARED_SLICE;
        // Whole periods by `extend_from_slice` (a byte iterator's `collect` was 4 % of a
        // 10^4-flow run, where every flow draws its pattern).
        let mut table = Vec::with_capacity(len);
        while table.len() < len {
            let n = (len - table.len()).min(period.len());
            table.extend_from_slice(&period[..n]);
        }
        let table = table.into_boxed_slice();
        SharedBytes(Arc::new(SharedTable {
            source: Source::Table(table),
            period: period.len(),
        }))
    }

    /// A finite sequence: `bytes` and nothing after them (its "period" is its length,
    /// and no offset at or past it is ever asked for). For a stream whose length is
    /// known and shorter than its pattern's period (a sized transfer): the table then
    /// holds the stream's bytes once, not a period plus [`MAX_SHARED_SLICE`] of wrap.
    /// [`SharedBytes::at`] clamps a window to the end, so a caller that asks past it
    /// gets a short slice, never a panic. `bytes` must not be empty.
    pub fn finite(bytes: &[u8]) -> Self {
        assert!(!bytes.is_empty(), "SharedBytes::finite: empty sequence");
        SharedBytes(Arc::new(SharedTable {
            source: Source::Table(bytes.into()),
            period: bytes.len(),
        }))
    }

    /// A finite sequence of `len` bytes (`len > 0`) that is never stored: `fill(off,
    /// out)` must write bytes `[off, off + out.len())` of it into `out`, the same bytes
    /// every time (a seekable deterministic stream). It behaves as
    /// [`SharedBytes::finite`] of those bytes; a send buffer that refers to it produces
    /// each segment's payload when the segment is sent (`SendBuffer::materialize`), so
    /// a connection holds one segment's bytes instead of its whole unacknowledged data.
    pub fn generated(len: usize, fill: impl Fn(u64, &mut [u8]) + Send + Sync + 'static) -> Self {
        assert!(len > 0, "SharedBytes::generated: empty sequence");
        SharedBytes(Arc::new(SharedTable {
            source: Source::Generated(Box::new(fill)),
            period: len,
        }))
    }

    /// The period's length.
    pub fn period(&self) -> usize {
        self.0.period
    }

    /// Whether the bytes are produced on demand (then [`SharedBytes::table_at`] has
    /// none).
    #[inline]
    pub fn is_generated(&self) -> bool {
        matches!(self.0.source, Source::Generated(_))
    }

    /// The window `[off, off + n)` as positions in the table: start and end, `n`
    /// clamped to [`MAX_SHARED_SLICE`] and, for a finite sequence, to its end.
    fn window(&self, off: u64, n: usize) -> (usize, usize) {
        let start = (off % self.0.period as u64) as usize;
        let end = start + n.min(MAX_SHARED_SLICE);
        match &self.0.source {
            // A periodic table always holds the window (it is a period plus the longest
            // slice); a finite one ends at its last byte.
            Source::Table(t) => (start, end.min(t.len())),
            Source::Generated(_) => (start, end.min(self.0.period)),
        }
    }

    /// Bytes `[off, off + n)` of a stored sequence, borrowed (`n` clamped as by
    /// [`SharedBytes::at`]); `None` for a generated one.
    #[inline]
    pub fn table_at(&self, off: u64, n: usize) -> Option<&[u8]> {
        match &self.0.source {
            Source::Table(t) => {
                let (start, end) = self.window(off, n);
                Some(&t[start..end])
            }
            Source::Generated(_) => None,
        }
    }

    /// Bytes `[off, off + n)` of the sequence, `n` clamped to [`MAX_SHARED_SLICE`] (and
    /// to the end of a finite sequence): borrowed from a table, or produced into a new
    /// buffer for a generated sequence (for the rare paths that need a copy anyway).
    pub fn at(&self, off: u64, n: usize) -> Cow<'_, [u8]> {
        if let Some(t) = self.table_at(off, n) {
            return Cow::Borrowed(t);
        }
        let (start, end) = self.window(off, n);
        let mut v = vec![0u8; end - start];
        self.fill(start as u64, &mut v);
        Cow::Owned(v)
    }

    /// The length of [`SharedBytes::at`]`(off, n)`, without producing its bytes.
    pub fn len_at(&self, off: u64, n: usize) -> usize {
        let (start, end) = self.window(off, n);
        end - start
    }

    /// Appends bytes `[off, off + n)` (clamped as by [`SharedBytes::at`]) to `out`
    /// without an intermediate copy; returns how many.
    pub fn extend_into(&self, off: u64, n: usize, out: &mut Vec<u8>) -> usize {
        let (start, end) = self.window(off, n);
        match &self.0.source {
            Source::Table(t) => out.extend_from_slice(&t[start..end]),
            Source::Generated(g) => {
                let old = out.len();
                out.resize(old + (end - start), 0);
                g(start as u64, &mut out[old..]);
            }
        }
        end - start
    }

    /// Writes bytes from position `pos` (`< period`, window within the sequence) into
    /// `out`.
    fn fill(&self, pos: u64, out: &mut [u8]) {
        match &self.0.source {
            Source::Table(t) => out.copy_from_slice(&t[pos as usize..pos as usize + out.len()]),
            Source::Generated(g) => g(pos, out),
        }
    }

    fn same(&self, other: &SharedBytes) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// The live bytes of a buffer that holds them by reference: `len` bytes of `src`
/// starting at position `pos` (`< period`), contiguous in `src` unless `breaks` says
/// where they jump (an MPTCP subflow's buffer: its writes skip the bytes the other
/// subflows took, `SendBuffer::write_shared_runs`).
#[derive(Debug)]
struct SharedRun {
    src: SharedBytes,
    pos: usize,
    len: usize,
    /// Stream offsets after the first byte where the position in `src` jumps, in
    /// order; `None` while the bytes are one contiguous run (every plain connection).
    /// Bounded by [`MAX_RUN_BREAKS`].
    /// Boxed: 8 B inline in every send buffer instead of a `VecDeque`'s 32 (an idle
    /// connection's size is bounded, `tests/conn_memory.rs`).
    #[allow(clippy::box_collection)]
    breaks: Option<Box<VecDeque<RunBreak>>>,
}

/// From stream offset `at` on, the bytes continue from position `pos` of the table.
#[derive(Clone, Copy, Debug)]
struct RunBreak {
    at: u64,
    pos: usize,
}

/// Most jumps a buffer held by reference keeps ([`SharedRun::breaks`], 16 B each):
/// beyond it a write copies the bytes in, as one that is not by reference does. An
/// MPTCP subflow's buffer holds about one per chunk the scheduler gave it and its
/// peer has not acknowledged (a window of single segments at most).
pub const MAX_RUN_BREAKS: usize = 4096;

impl SharedRun {
    /// Where the byte at stream offset `o` (`base <= o <= base + len`) lies in `src`
    /// (not reduced modulo the period: `SharedBytes` reduces it) and the stream offset
    /// where its contiguous piece ends.
    #[inline]
    fn locate(&self, base: u64, o: u64) -> (u64, u64) {
        let end = base + self.len as u64;
        let Some(b) = self.breaks.as_deref() else {
            return (self.pos as u64 + (o - base), end);
        };
        let k = b.partition_point(|r| r.at <= o);
        let next = b.get(k).map_or(end, |r| r.at);
        match k {
            0 => (self.pos as u64 + (o - base), next),
            _ => {
                let r = b[k - 1];
                (r.pos as u64 + (o - r.at), next)
            }
        }
    }

    /// The position (`< period`) of the byte after the last one.
    fn end_pos(&self, base: u64) -> usize {
        let (p, _) = self.locate(base, base + self.len as u64);
        (p % self.src.period() as u64) as usize
    }

    /// Appends the bytes `[o, o + n)` (stream offsets within the run) to `out`.
    fn extend_range(&self, base: u64, mut o: u64, n: usize, out: &mut Vec<u8>) {
        let stop = o + n as u64;
        while o < stop {
            let (pos, piece_end) = self.locate(base, o);
            let want = (piece_end.min(stop) - o) as usize;
            let mut done = 0;
            while done < want {
                done += self.src.extend_into(pos + done as u64, want - done, out);
            }
            o += want as u64;
        }
    }
}

/// Most unsent write records a prioritised sender keeps (one per write; about 1.5 MB at
/// 24 B each). A write beyond it is refused until sends drain the queue, as one beyond
/// the byte limit is.
pub const MAX_WRITE_RECORDS: usize = 65_536;

/// One application write that has not been fully sent yet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WriteRecord {
    /// Stream offset of the first unsent byte.
    pub offset: u64,
    pub len: u64,
    pub priority: u8,
    /// Part of the write is sent: nothing may be placed ahead of the rest.
    pub started: bool,
}

#[derive(Debug)]
pub struct SendBuffer {
    data: Vec<u8>,
    /// `data[head..]` is live; `data[head]` is stream offset `base`.
    head: usize,
    base: u64,
    limit: usize,
    /// Unsent writes in send order (bounded: adjacent equal-priority writes merge).
    writes: VecDeque<WriteRecord>,
    /// Set while the live bytes are held by reference (then `data` is empty).
    shared: Option<SharedRun>,
    /// The last segment's payload produced from a generated [`SharedBytes`]
    /// ([`SendBuffer::materialize`]): its bytes and their stream offset. Empty (no
    /// allocation) unless the live bytes are generated; freed when they drain.
    made: Vec<u8>,
    made_at: u64,
    /// Bytes `data` may newly allocate until the endpoint sets it again (`usize::MAX`:
    /// no limit, the default; `crate::mem`).
    mem_allow: usize,
    /// A write was cut short by `mem_allow` since the last `take_mem_limited`.
    mem_limited: bool,
    /// [`SendBuffer::slice`] lends some payload only after
    /// [`SendBuffer::materialize`]: the live bytes are held by reference to a
    /// generated sequence, or to a table in more than one run.
    needs_made: bool,
}

/// A drained buffer whose allocation is larger than this gives it back (Linux frees
/// each skb once it is ACKed): an idle connection that once sent megabytes should not
/// hold them, charged, for its lifetime.
const KEEP_DRAINED: usize = 64 << 10;

impl SendBuffer {
    pub fn new(limit: usize) -> Self {
        SendBuffer {
            data: Vec::new(),
            head: 0,
            base: 0,
            limit,
            writes: VecDeque::new(),
            shared: None,
            made: Vec::new(),
            made_at: 0,
            mem_allow: usize::MAX,
            mem_limited: false,
            needs_made: false,
        }
    }

    /// Bytes the buffer holds allocated (bytes held by reference cost nothing): what
    /// the endpoint charges for it (`crate::mem`).
    /// A run's jumps ([`MAX_RUN_BREAKS`] at 16 B, at most 64 KB) are left out: only an
    /// MPTCP subflow's buffer has them, and an MPTCP connection is charged through
    /// [`SendBuffer::mem_charge_all`] (this is read per packet: kept to one load).
    pub fn mem_charge(&self) -> usize {
        self.data.capacity()
    }

    /// [`SendBuffer::mem_charge`] with everything else the buffer allocates: the
    /// one-segment buffer a generated or broken run is produced into, and the run's
    /// jumps. What an MPTCP connection is charged for each subflow's send buffer and
    /// its data-level one (`conn::mp_mem`), read only for MPTCP connections.
    pub fn mem_charge_all(&self) -> usize {
        let breaks = self
            .shared
            .as_ref()
            .and_then(|r| r.breaks.as_deref())
            .map_or(0, |b| b.capacity() * std::mem::size_of::<RunBreak>());
        self.data.capacity() + self.made.capacity() + breaks
    }

    /// Sets the bytes later writes may newly allocate (`usize::MAX`: no limit).
    pub fn set_mem_allowance(&mut self, bytes: usize) {
        self.mem_allow = bytes;
    }

    /// Whether a write was cut short by the memory allowance since the last call.
    #[inline]
    pub fn take_mem_limited(&mut self) -> bool {
        // Read first: the common answer stores nothing.
        if self.mem_limited {
            self.mem_limited = false;
            return true;
        }
        false
    }

    /// How many of `n` bytes about to be copied in (after any `unshare`) the memory
    /// allowance admits, reserving the allocation for them: amortised doubling while
    /// the allowance covers it, exact growth near it (so the charge never passes it),
    /// and with `whole`, all or nothing. Linux `sk_wmem_schedule` for a send buffer.
    fn admit(&mut self, n: usize, whole: bool) -> usize {
        let live = self.data.len() + self.shared.as_ref().map_or(0, |r| r.len);
        let cap = self.data.capacity();
        let need = live + n;
        if need <= cap || self.mem_allow == usize::MAX {
            return n;
        }
        let room = cap.saturating_add(self.mem_allow);
        let grow_to = if need.max(cap * 2) <= room {
            need.max(cap * 2)
        } else if need <= room {
            need
        } else {
            self.mem_limited = true;
            if whole || room <= live {
                return 0;
            }
            room
        };
        self.data.reserve_exact(grow_to - self.data.len());
        self.mem_allow -= (self.data.capacity() - cap).min(self.mem_allow);
        n.min(grow_to - live)
    }

    /// Buffered bytes (unacknowledged and unsent).
    pub fn len(&self) -> usize {
        match &self.shared {
            Some(run) => run.len,
            None => self.data.len() - self.head,
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Stream offset one past the last written byte.
    pub fn end(&self) -> u64 {
        self.base + self.len() as u64
    }
    pub fn capacity(&self) -> usize {
        self.limit.saturating_sub(self.len())
    }

    /// A new byte limit; bytes already held above it stay until acknowledged.
    pub fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
    }

    /// Appends as much of `bytes` as fits; returns the count.
    pub fn write(&mut self, bytes: &[u8], priority: u8) -> usize {
        let n = bytes.len().min(self.capacity());
        let n = self.admit(n, false);
        if n == 0 {
            return 0;
        }
        let offset = self.end();
        self.unshare();
        self.data.extend_from_slice(&bytes[..n]);
        self.record(offset, n, priority);
        n
    }

    /// `write(src.at(off, len), priority)`, but holding the bytes by reference when
    /// every live byte then comes from `src` contiguously. `len` is clamped to
    /// [`MAX_SHARED_SLICE`].
    #[inline]
    pub fn write_shared(&mut self, src: &SharedBytes, off: u64, len: usize, priority: u8) -> usize {
        self.write_shared_in(src, off, len, priority, false)
    }

    /// [`SendBuffer::write_shared`], also by reference when the bytes do not continue
    /// the live ones in `src` (up to [`MAX_RUN_BREAKS`] jumps): an MPTCP subflow's
    /// buffer, whose writes skip the bytes the other subflows took, as Linux's
    /// subflows send the MPTCP socket's own skbs. A segment across a jump is lent
    /// after [`SendBuffer::materialize`].
    pub fn write_shared_runs(&mut self, src: &SharedBytes, off: u64, len: usize) -> usize {
        self.write_shared_in(src, off, len, 0, true)
    }

    #[inline]
    fn write_shared_in(
        &mut self,
        src: &SharedBytes,
        off: u64,
        len: usize,
        priority: u8,
        runs: bool,
    ) -> usize {
        let mut n = len.min(MAX_SHARED_SLICE).min(self.capacity());
        if n == 0 {
            return 0;
        }
        let offset = self.end();
        let pos = (off % src.period() as u64) as usize;
        let base = self.base;
        // Whether the write continues the live bytes in `src` (else, by reference only
        // as a new piece of the run).
        let mut continues = true;
        let by_ref = match &self.shared {
            Some(run) if run.len == 0 => true,
            Some(run) if run.src.same(src) => {
                continues = match &run.breaks {
                    None => (run.pos + run.len) % src.period() == pos,
                    Some(_) => run.end_pos(base) == pos,
                };
                continues || (runs && run.breaks.as_deref().map_or(0, |b| b.len()) < MAX_RUN_BREAKS)
            }
            Some(_) => false,
            None => self.data.len() == self.head,
        };
        if !by_ref {
            // A copy: it allocates.
            n = self.admit(n, false);
            if n == 0 {
                return 0;
            }
            self.unshare();
            src.extend_into(off, n, &mut self.data);
            self.record(offset, n, priority);
            return n;
        }
        match &mut self.shared {
            Some(run) => {
                if run.len == 0 {
                    *run = SharedRun {
                        src: src.clone(),
                        pos,
                        len: 0,
                        breaks: None,
                    };
                } else if !continues {
                    run.breaks
                        .get_or_insert_with(Default::default)
                        .push_back(RunBreak { at: offset, pos });
                }
                run.len += n;
                self.needs_made = src.is_generated() || run.breaks.is_some();
            }
            None => {
                // Nothing live: drop the copy buffer's allocation and refer instead.
                self.data = Vec::new();
                self.head = 0;
                self.shared = Some(SharedRun {
                    src: src.clone(),
                    pos,
                    len: n,
                    breaks: None,
                });
                self.needs_made = src.is_generated();
            }
        }
        self.record(offset, n, priority);
        n
    }

    /// Notes a write of `n` bytes at stream offset `offset` in the unsent queue.
    fn record(&mut self, offset: u64, n: usize, priority: u8) {
        match self.writes.back_mut() {
            Some(w) if w.priority == priority && w.offset + w.len == offset => w.len += n as u64,
            _ => self.writes.push_back(WriteRecord {
                offset,
                len: n as u64,
                priority,
                started: false,
            }),
        }
    }

    /// Copies bytes held by reference into `data` (before a write they cannot
    /// describe).
    fn unshare(&mut self) {
        let Some(run) = self.shared.take() else {
            return;
        };
        debug_assert!(self.data.is_empty() && self.head == 0);
        self.data.reserve_exact(run.len);
        run.extend_range(self.base, self.base, run.len, &mut self.data);
        self.made = Vec::new();
        self.needs_made = false;
    }

    /// A prioritised write: all of `bytes` or nothing (a write is never split, so a
    /// datagram framing such as uCOBS stays intact), placed ahead of every wholly
    /// unsent write of lower priority, behind those of equal or higher priority and
    /// behind a partly sent one. Returns the count taken (0 or `bytes.len()`).
    ///
    /// Cost: the bytes and records it passes are moved once (`Vec::splice`), so an
    /// urgent write costs what it overtakes; an ordinary one appends.
    pub fn write_prioritised(&mut self, bytes: &[u8], priority: u8) -> usize {
        let n = bytes.len();
        if n == 0 || n > self.capacity() || self.writes.len() >= MAX_WRITE_RECORDS {
            return 0;
        }
        if self.admit(n, true) == 0 {
            return 0;
        }
        // Walk back over the unsent lower-priority writes (the unsent queue is kept in
        // descending priority, so they are all at its back).
        let mut at = self.writes.len();
        while at > 0 {
            let w = &self.writes[at - 1];
            if w.started || w.priority >= priority {
                break;
            }
            at -= 1;
        }
        let offset = self.writes.get(at).map_or(self.end(), |w| w.offset);
        self.unshare();
        let pos = self.head + (offset - self.base) as usize;
        self.data.splice(pos..pos, bytes.iter().copied());
        for w in self.writes.range_mut(at..) {
            w.offset += n as u64;
        }
        self.writes.insert(
            at,
            WriteRecord {
                offset,
                len: n as u64,
                priority,
                started: false,
            },
        );
        n
    }

    /// Whether the live bytes are held by reference to a generated [`SharedBytes`]:
    /// then [`SendBuffer::slice`] serves only what [`SendBuffer::materialize`] made.
    #[inline]
    pub fn generated(&self) -> bool {
        matches!(&self.shared, Some(run) if run.src.is_generated())
    }

    /// Whether [`SendBuffer::slice`] may need [`SendBuffer::materialize`] first: the
    /// live bytes are generated, or held by reference in more than one run.
    #[inline]
    pub fn needs_materialize(&self) -> bool {
        self.needs_made
    }

    /// Produces the bytes `[offset, offset + len)` of a generated run, or of a range
    /// across the jumps of a run held in pieces, so that [`SendBuffer::slice`] can lend
    /// them (called for each segment with payload while
    /// [`SendBuffer::needs_materialize`]). The buffer grows to the largest segment and
    /// is freed when the run drains; a range outside the run, or one a table lends
    /// as it is, produces nothing.
    pub fn materialize(&mut self, offset: u64, len: usize) {
        let Some(run) = &self.shared else {
            return;
        };
        let Some(rel) = offset.checked_sub(self.base) else {
            return;
        };
        match (rel as usize).checked_add(len) {
            Some(end) if end <= run.len && len <= MAX_SHARED_SLICE => {}
            _ => return,
        }
        if run.breaks.is_some() {
            let (_, piece_end) = run.locate(self.base, offset);
            if offset + len as u64 <= piece_end && !run.src.is_generated() {
                return; // within one piece of a table: `slice` lends it
            }
            self.made.clear();
            self.made.reserve_exact(len);
            run.extend_range(self.base, offset, len, &mut self.made);
            self.made_at = offset;
            return;
        }
        self.made.clear();
        // Exactly one segment's room (amortised doubling kept twice that per flow).
        self.made.reserve_exact(len);
        let got = run
            .src
            .extend_into((run.pos as u64) + rel, len, &mut self.made);
        debug_assert_eq!(got, len, "a run lies within its sequence");
        self.made_at = offset;
    }

    /// The bytes `[offset, offset + len)`; empty if not (fully) buffered.
    pub fn slice(&self, offset: u64, len: usize) -> &[u8] {
        let Some(rel) = offset.checked_sub(self.base) else {
            return &[];
        };
        if let Some(run) = &self.shared {
            if run.breaks.is_some() {
                return self.slice_pieces(run, offset, len);
            }
            return match (rel as usize).checked_add(len) {
                Some(end) if end <= run.len && len <= MAX_SHARED_SLICE => {
                    match run.src.table_at((run.pos as u64) + rel, len) {
                        Some(t) => t,
                        // Generated bytes: those `materialize` produced for this range.
                        None if offset == self.made_at && len <= self.made.len() => {
                            &self.made[..len]
                        }
                        None => &[],
                    }
                }
                _ => &[],
            };
        }
        let start = self.head.saturating_add(rel as usize);
        match start.checked_add(len) {
            Some(end) if end <= self.data.len() => &self.data[start..end],
            _ => &[],
        }
    }

    /// [`SendBuffer::slice`] of a run held in pieces (an MPTCP subflow's): lent from
    /// the table within one piece, else what `materialize` produced. Apart, so that
    /// a plain connection's `slice` stays as it was.
    #[inline(never)]
    fn slice_pieces<'a>(&'a self, run: &'a SharedRun, offset: u64, len: usize) -> &'a [u8] {
        let rel = offset - self.base;
        match (rel as usize).checked_add(len) {
            Some(end) if end <= run.len && len <= MAX_SHARED_SLICE => {
                let (pos, piece_end) = run.locate(self.base, offset);
                let whole = offset + len as u64 <= piece_end;
                match run.src.table_at(pos, len).filter(|_| whole) {
                    Some(t) => t,
                    None if offset == self.made_at && len <= self.made.len() => &self.made[..len],
                    None => &[],
                }
            }
            _ => &[],
        }
    }

    /// The longest run of buffered bytes that starts at `offset` and is one slice:
    /// every live byte from `offset` on for a copied buffer, at most
    /// [`MAX_SHARED_SLICE`] of one piece for one held by reference; empty outside the
    /// buffer.
    pub fn contiguous(&self, offset: u64) -> &[u8] {
        self.slice(offset, self.contiguous_len(offset))
    }

    /// The length of [`SendBuffer::contiguous`] at `offset`, without producing the
    /// bytes of a generated run (whose `contiguous` lends only what
    /// [`SendBuffer::materialize`] made).
    pub fn contiguous_len(&self, offset: u64) -> usize {
        let Some(rel) = offset.checked_sub(self.base) else {
            return 0;
        };
        let rest = self.len().saturating_sub(rel as usize);
        match &self.shared {
            // A run lies within its sequence: a window of one piece is whole.
            Some(run) if rest > 0 => {
                let (_, piece_end) = run.locate(self.base, offset);
                ((piece_end - offset) as usize).min(MAX_SHARED_SLICE)
            }
            Some(_) => 0,
            None => rest,
        }
    }

    /// Where the byte at stream offset `offset` lies in the table the buffer holds
    /// its bytes from, when it holds them by reference: `(table, position)`, so that
    /// `b.write_shared(table, position, n)` into another buffer holds the same bytes
    /// by reference as well (an MPTCP subflow taking the data level's bytes, as
    /// Linux's subflows send the MPTCP socket's own skbs). `None` for a copied buffer
    /// or an offset outside it.
    pub fn shared_at(&self, offset: u64) -> Option<(&SharedBytes, u64)> {
        let run = self.shared.as_ref()?;
        let rel = offset.checked_sub(self.base)? as usize;
        if rel >= run.len {
            return None;
        }
        let (pos, _) = run.locate(self.base, offset);
        Some((&run.src, pos % run.src.period() as u64))
    }

    /// Drops bytes before stream offset `offset` (they were cumulatively ACKed).
    pub fn ack_to(&mut self, offset: u64) {
        if offset <= self.base {
            return;
        }
        let n = ((offset - self.base) as usize).min(self.len());
        self.base += n as u64;
        if let Some(run) = &mut self.shared {
            run.pos = (run.pos + n) % run.src.period();
            run.len -= n;
            if let Some(b) = run.breaks.as_deref_mut() {
                // The first byte now: from the last jump at or before it.
                let new_base = self.base;
                let mut last = None;
                while b.front().is_some_and(|r| r.at <= new_base) {
                    last = b.pop_front();
                }
                if let Some(r) = last {
                    run.pos =
                        ((r.pos as u64 + (new_base - r.at)) % run.src.period() as u64) as usize;
                }
                if b.is_empty() || run.len == 0 {
                    run.breaks = None;
                    self.needs_made = run.src.is_generated();
                }
            }
            if run.len == 0 && self.made.capacity() > 0 {
                self.made = Vec::new();
            }
            return;
        }
        self.head += n;
        if self.head == self.data.len() {
            if self.data.capacity() > KEEP_DRAINED {
                self.data = Vec::new();
            } else {
                self.data.clear();
            }
            self.head = 0;
        } else if self.head >= 4096 && self.head * 2 >= self.data.len() {
            self.data.drain(..self.head);
            self.head = 0;
        }
    }

    /// Marks `[.., offset)` as sent: consumes write records up to `offset`.
    pub fn mark_sent(&mut self, offset: u64) {
        while let Some(w) = self.writes.front_mut() {
            let end = w.offset + w.len;
            if end <= offset {
                self.writes.pop_front();
            } else {
                if w.offset < offset {
                    w.len = end - offset;
                    w.offset = offset;
                    w.started = true;
                }
                break;
            }
        }
    }

    /// The next unsent write, if any.
    pub fn next_write(&self) -> Option<&WriteRecord> {
        self.writes.front()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_are_bounded_and_sliced_by_stream_offset() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write(b"hello world", 0), 10);
        assert_eq!(b.write(b"x", 0), 0);
        assert_eq!(b.slice(6, 4), b"worl");
        b.ack_to(6);
        assert_eq!(b.capacity(), 6);
        assert_eq!(b.slice(6, 4), b"worl");
        assert_eq!(b.slice(0, 1), b"");
        assert_eq!(b.slice(8, 5), b"");
    }

    #[test]
    fn write_records_merge_and_are_consumed_by_sends() {
        let mut b = SendBuffer::new(100);
        b.write(b"aaaa", 0);
        b.write(b"bbbb", 0);
        b.write(b"cc", 7);
        assert_eq!(
            b.next_write(),
            Some(&WriteRecord {
                offset: 0,
                len: 8,
                priority: 0,
                started: false,
            })
        );
        b.mark_sent(5);
        assert_eq!(b.next_write().map(|w| (w.offset, w.len)), Some((5, 3)));
        b.mark_sent(8);
        assert_eq!(b.next_write().map(|w| w.priority), Some(7));
    }

    /// The unsent bytes in send order, as (priority, text) per record.
    fn queue(b: &SendBuffer) -> Vec<(u8, String)> {
        b.writes
            .iter()
            .map(|w| {
                let t = b.slice(w.offset, w.len as usize);
                (w.priority, String::from_utf8_lossy(t).into_owned())
            })
            .collect()
    }

    #[test]
    fn an_urgent_write_passes_unsent_lower_priority_writes_only() {
        let mut b = SendBuffer::new(100);
        for (t, p) in [("aaaa", 0), ("bbbb", 0), ("cc", 5), ("dd", 0)] {
            assert_eq!(b.write_prioritised(t.as_bytes(), p), t.len());
        }
        // Each write keeps its record; "cc" went ahead of both unsent priority-0 ones.
        assert_eq!(
            queue(&b),
            [(5, "cc"), (0, "aaaa"), (0, "bbbb"), (0, "dd")].map(|(p, t)| (p, t.into()))
        );
        // Part of "cc" is sent: nothing goes ahead of its rest, but a priority-5 write
        // goes ahead of the priority-0 ones (behind equal priority: FIFO within a level).
        b.mark_sent(1);
        b.write_prioritised(b"ee", 5);
        b.write_prioritised(b"ff", 9);
        assert_eq!(
            queue(&b),
            [
                (5, "c"),
                (9, "ff"),
                (5, "ee"),
                (0, "aaaa"),
                (0, "bbbb"),
                (0, "dd")
            ]
            .map(|(p, t)| (p, t.into()))
        );
        // The stream as it will be sent: sent bytes never move.
        assert_eq!(b.slice(0, b.len()), b"ccffeeaaaabbbbdd");
        // Sent to the end of "ff": the rest queues on unchanged.
        b.mark_sent(4);
        assert_eq!(b.next_write().map(|w| (w.offset, w.priority)), Some((4, 5)));
    }

    #[test]
    fn prioritised_writes_are_whole_and_bounded() {
        let mut b = SendBuffer::new(10);
        assert_eq!(b.write_prioritised(b"0123456", 1), 7);
        // All or nothing: 4 bytes do not fit in the 3 left.
        assert_eq!(b.write_prioritised(b"abcd", 9), 0);
        assert_eq!(b.write_prioritised(b"abc", 9), 3);
        assert_eq!(b.slice(0, 10), b"abc0123456");
        assert_eq!(b.write_prioritised(b"", 3), 0);
        // The record table is bounded too.
        let mut b = SendBuffer::new(1 << 20);
        for _ in 0..MAX_WRITE_RECORDS {
            assert_eq!(b.write_prioritised(b"x", 0), 1);
        }
        assert_eq!(b.write_prioritised(b"x", 0), 0);
    }

    proptest::proptest! {
        /// Against a model: a list of whole writes in send order, of which a prefix of
        /// bytes is sent. Every write stays whole and contiguous, sent bytes never move,
        /// and the unsent writes after a partly sent one are in descending priority,
        /// FIFO within a priority.
        #[test]
        fn prioritised_writes_match_the_model(
            ops in proptest::collection::vec((0u8..4, 1usize..40, 0usize..60), 1..60)
        ) {
            let mut b = SendBuffer::new(4096);
            // (id, priority, bytes) in send order; `sent` bytes of it are on the wire.
            let mut model: Vec<(usize, u8, Vec<u8>)> = Vec::new();
            let mut sent = 0usize;
            for (id, &(prio, len, send)) in ops.iter().enumerate() {
                let bytes: Vec<u8> = (0..len).map(|i| (id * 7 + i) as u8).collect();
                proptest::prop_assert_eq!(b.write_prioritised(&bytes, prio), len);
                // The model's placement: after every write that is partly or wholly
                // sent, or of equal or higher priority.
                let mut at = model.len();
                let mut start: usize = model.iter().map(|w| w.2.len()).sum();
                while at > 0 {
                    let w = &model[at - 1];
                    if start - w.2.len() < sent || w.1 >= prio {
                        break;
                    }
                    start -= w.2.len();
                    at -= 1;
                }
                model.insert(at, (id, prio, bytes));
                let total: usize = model.iter().map(|w| w.2.len()).sum();
                sent = (sent + send).min(total);
                b.mark_sent(sent as u64);
                let flat: Vec<u8> = model.iter().flat_map(|w| w.2.iter().copied()).collect();
                proptest::prop_assert_eq!(b.slice(0, b.len()), &flat[..]);
            }
        }
    }

    #[test]
    fn compaction_keeps_offsets_stable() {
        let mut b = SendBuffer::new(1 << 20);
        let data: Vec<u8> = (0..20_000u32).map(|i| i as u8).collect();
        b.write(&data, 0);
        b.ack_to(15_000);
        assert_eq!(b.slice(15_000, 3), &data[15_000..15_003]);
        b.write(&data[..10], 0);
        assert_eq!(b.slice(20_000, 10), &data[..10]);
    }

    /// A finite table serves its bytes like the periodic one over the same bytes, clamps
    /// a window at its end, and a buffer that writes the whole stream from it reads
    /// like one given copies, through partial ACKs to the end.
    #[test]
    fn a_finite_table_reads_like_its_periodic_twin() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let (fin, per) = (SharedBytes::finite(&bytes), SharedBytes::periodic(&bytes));
        for (off, n) in [(0u64, 1usize), (0, 20_000), (123, 4567), (19_999, 1)] {
            assert_eq!(fin.at(off, n), per.at(off, n));
        }
        assert_eq!(fin.at(19_990, 100).len(), 10, "clamped at the end");
        let (mut a, mut b) = (SendBuffer::new(8192), SendBuffer::new(8192));
        let mut off = 0u64;
        while off < bytes.len() as u64 {
            let want = (bytes.len() - off as usize).min(3000);
            let n = a.write_shared(&fin, off, want, 0);
            assert_eq!(n, b.write(&bytes[off as usize..off as usize + n], 0));
            assert_eq!(a.slice(a.base, a.len()), b.slice(b.base, b.len()));
            off += n as u64;
            let ack = a.base + (a.len() as u64).div_ceil(2).max(1);
            a.ack_to(ack);
            b.ack_to(ack);
            assert_eq!(a.slice(ack, a.len()), b.slice(ack, b.len()));
        }
        a.ack_to(off);
        assert_eq!(a.len(), 0);
    }

    /// A generated sequence reads like the finite table of its bytes: through `at`,
    /// and in a send buffer that lends a range only after `materialize` made it, holds
    /// no copy of its live bytes, frees what it made once they drain, and copies them
    /// in (the same bytes) when a plain write follows.
    #[test]
    fn a_generated_sequence_reads_like_its_table() {
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let fin = SharedBytes::finite(&bytes);
        let src = bytes.clone();
        let gen = SharedBytes::generated(bytes.len(), move |off, out| {
            out.copy_from_slice(&src[off as usize..off as usize + out.len()]);
        });
        assert!(gen.is_generated() && gen.table_at(0, 1).is_none());
        for (off, n) in [(0u64, 1usize), (0, 20_000), (123, 4567), (19_990, 100)] {
            assert_eq!(gen.at(off, n), fin.at(off, n));
        }
        let (mut a, mut b) = (SendBuffer::new(8192), SendBuffer::new(8192));
        let mut off = 0u64;
        while off < bytes.len() as u64 {
            let want = (bytes.len() - off as usize).min(3000);
            let n = a.write_shared(&gen, off, want, 0);
            assert_eq!(n, b.write(&bytes[off as usize..off as usize + n], 0));
            assert!(a.generated() && a.mem_charge() == 0, "held by reference");
            let (seg, len) = (a.base + 7, 1400.min(a.len() - 7));
            assert_eq!(a.slice(seg, len), b"", "not made yet");
            a.materialize(seg, len);
            assert_eq!(a.slice(seg, len), b.slice(seg, len));
            assert_eq!(a.slice(seg, len + 1), b"", "past what was made");
            off += n as u64;
            let ack = a.base + (a.len() as u64).div_ceil(2).max(1);
            a.ack_to(ack);
            b.ack_to(ack);
        }
        a.ack_to(off);
        assert!(a.is_empty() && a.made.capacity() == 0, "freed when drained");
        // A plain write after a generated run copies the run's bytes in first.
        let mut c = SendBuffer::new(1 << 16);
        assert_eq!(c.write_shared(&gen, 100, 5000, 0), 5000);
        c.write(b"tail", 0);
        assert!(!c.generated());
        assert_eq!(c.slice(0, 5000), &bytes[100..5100]);
        assert_eq!(c.slice(5000, 4), b"tail");
    }

    /// An MPTCP subflow's buffer (`write_shared_runs`): writes that skip bytes of the
    /// table stay by reference in pieces, and the buffer reads as one given the same
    /// bytes by plain writes: a range within a piece is lent from the table, one across
    /// a jump after `materialize`; ACKs across jumps, `shared_at`, `contiguous_len` and
    /// a plain write (which copies every piece in) agree; the jumps are bounded.
    #[test]
    fn runs_with_jumps_read_like_copies() {
        let period: Vec<u8> = (0..997u32).map(|i| (i * 31 % 251) as u8).collect();
        let table = SharedBytes::periodic(&period);
        let bytes: Vec<u8> = (0..60_000u32).map(|i| (i * 7 % 253) as u8).collect();
        let src = bytes.clone();
        let gen = SharedBytes::generated(bytes.len(), move |off, out| {
            out.copy_from_slice(&src[off as usize..off as usize + out.len()]);
        });
        let mut seed = 11u64;
        let mut rnd = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        for src in [&table, &gen] {
            let (mut a, mut b) = (SendBuffer::new(1 << 20), SendBuffer::new(1 << 20));
            // Positions in `src`: chunks alternate between "this subflow" (written)
            // and "the other" (skipped), sometimes contiguous.
            let mut at = 0u64;
            while at + 3000 < 60_000 {
                let n = 1 + rnd(2900) as usize;
                assert_eq!(a.write_shared_runs(src, at, n), n);
                b.write(&src.at(at, n), 0);
                assert_eq!(a.mem_charge(), 0, "held by reference");
                at += n as u64 + if rnd(4) == 0 { 0 } else { rnd(1500) };
                assert!(
                    a.needs_materialize()
                        || (!src.is_generated() && a.shared.as_ref().unwrap().breaks.is_none())
                );
                // A segment anywhere in the live bytes.
                let rel = rnd(a.len() as u64);
                let len = (1 + rnd(1448) as usize).min(a.len() - rel as usize);
                let seg = a.base + rel;
                if a.needs_materialize() {
                    a.materialize(seg, len);
                }
                assert_eq!(a.slice(seg, len), b.slice(seg, len), "at {seg} len {len}");
                let k = a.contiguous_len(seg);
                assert!(k > 0 && k <= a.len() - rel as usize);
                let (t, pos) = a.shared_at(seg).unwrap();
                assert_eq!(
                    t.at(pos, k)[..],
                    b.slice(seg, k)[..],
                    "one piece from {seg}"
                );
                if rnd(3) == 0 {
                    let ack = a.base + rnd(a.len() as u64 + 1);
                    a.ack_to(ack);
                    b.ack_to(ack);
                }
            }
            assert!(a.shared.is_some(), "still by reference");
            let end = a.end();
            a.write(b"tail", 0);
            b.write(b"tail", 0);
            assert!(a.shared.is_none() && !a.needs_materialize());
            assert_eq!(a.slice(a.base, a.len()), b.slice(b.base, b.len()));
            a.ack_to(end + 4);
            assert!(a.is_empty());
        }
        // Bounded: past `MAX_RUN_BREAKS` jumps a write copies the bytes in.
        let mut c = SendBuffer::new(1 << 24);
        for i in 0..=MAX_RUN_BREAKS as u64 {
            assert_eq!(c.write_shared_runs(&table, i * 3, 1), 1);
        }
        assert!(c.shared.as_ref().unwrap().breaks.as_ref().unwrap().len() == MAX_RUN_BREAKS);
        c.write_shared_runs(&table, 1, 1);
        assert!(c.shared.is_none(), "copied in past the bound");
        // A plain `write_shared` never makes a jump.
        let mut d = SendBuffer::new(1 << 16);
        d.write_shared(&table, 0, 10, 0);
        d.write_shared(&table, 50, 10, 0);
        assert!(d.shared.is_none() && d.slice(10, 10) == &period[50..60]);
    }

    /// Shared writes hold a reference while they can, and the buffer reads the same as
    /// one given the same bytes by plain writes, through any mix of operations.
    #[test]
    fn shared_writes_read_like_copies() {
        let period: Vec<u8> = (0..97u32).map(|i| (i * 31 % 251) as u8).collect();
        let src = SharedBytes::periodic(&period);
        let other = SharedBytes::periodic(&period[..50]);
        let byte = |s: &SharedBytes, i: u64| s.at(i, 1)[0];
        let mut seed = 7u64;
        let mut rnd = |n: u64| {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        // `mix`: weight (of 20) of the writes that a reference cannot describe.
        for (limit, mix) in [
            (300usize, 0u64),
            (300, 1),
            (300, 4),
            (5000, 0),
            (5000, 1),
            (5000, 4),
        ] {
            let (mut a, mut b) = (SendBuffer::new(limit), SendBuffer::new(limit));
            let mut src_off = 0u64;
            let mut sent = 0u64;
            let mut held_by_ref = 0;
            for _ in 0..4000 {
                let op = rnd(20);
                let odd = rnd(20) < mix;
                match op {
                    0..=11 => {
                        // Contiguous shared writes, or (`odd`) a jump or the other table.
                        let s = if odd && rnd(2) == 0 { &other } else { &src };
                        if odd {
                            src_off += rnd(200);
                        }
                        let len = rnd(400) as usize;
                        let bytes: Vec<u8> =
                            (0..len as u64).map(|i| byte(s, src_off + i)).collect();
                        let n = a.write_shared(s, src_off, len, 0);
                        assert_eq!(n, b.write(&bytes, 0));
                        src_off += n as u64;
                    }
                    12 if odd => {
                        let bytes = [rnd(256) as u8; 3];
                        assert_eq!(a.write(&bytes, 0), b.write(&bytes, 0));
                    }
                    13 if odd => {
                        let bytes = [9u8; 2];
                        let p = rnd(3) as u8;
                        assert_eq!(
                            a.write_prioritised(&bytes, p),
                            b.write_prioritised(&bytes, p)
                        );
                    }
                    12..=15 => {
                        // ACKs cover only sent bytes, often all of them.
                        let to = if rnd(2) == 0 {
                            sent
                        } else {
                            a.base + rnd(sent - a.base + 1)
                        };
                        a.ack_to(to);
                        b.ack_to(to);
                    }
                    _ => {
                        sent += rnd(a.end() - sent + 1);
                        a.mark_sent(sent);
                        b.mark_sent(sent);
                    }
                }
                held_by_ref += usize::from(a.shared.as_ref().is_some_and(|r| r.len > 0));
                assert_eq!(
                    (a.len(), a.end(), a.capacity()),
                    (b.len(), b.end(), b.capacity())
                );
                assert_eq!(a.next_write(), b.next_write());
                let (base, len) = (a.base, a.len());
                for _ in 0..4 {
                    let off = base + rnd(len as u64 + 2);
                    let n = rnd(300) as usize;
                    assert_eq!(a.slice(off, n), b.slice(off, n), "slice({off}, {n})");
                }
                assert_eq!(a.slice(base, len), b.slice(base, len));
            }
            assert!(
                held_by_ref > if mix == 0 { 3000 } else { 10 },
                "limit {limit}, mix {mix}: by reference in {held_by_ref} of 4000 steps"
            );
        }
    }

    #[test]
    fn a_shared_buffer_holds_no_copy() {
        let period: Vec<u8> = (0..=255u8).collect();
        let src = SharedBytes::periodic(&period);
        let mut b = SendBuffer::new(64 * 1024);
        for i in 0..4 {
            assert_eq!(b.write_shared(&src, 1000 + i * 16_384, 16_384, 0), 16_384);
        }
        assert_eq!(b.data.capacity(), 0);
        assert_eq!(
            b.slice(65_000, 3),
            [1000 + 65_000, 1000 + 65_001, 1000 + 65_002].map(|i: u64| i as u8)
        );
        b.ack_to(30_000);
        assert_eq!(b.write_shared(&src, 1000 + 65_536, 100, 0), 100);
        assert_eq!(b.data.capacity(), 0);
        assert_eq!(b.slice(65_600, 1), [(1000 + 65_600u64) as u8]);
    }
}

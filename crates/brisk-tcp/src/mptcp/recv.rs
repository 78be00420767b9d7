//! The data-level receive buffer (RFC 8684 §3.3): bytes from every subflow, placed by
//! data sequence number, reordered, handed to the application in order (or, when
//! configured, out of order as uTCP does), with the connection-level window (§3.3.4),
//! the DATA_FIN (§3.3.3) and the Data ACK to send.
//!
//! Linux: `mptcp_data_queue_ofo` / `__mptcp_move_skb` (`protocol.c`) put each mapped
//! skb in the msk's in-order queue or its out-of-order rbtree; data at or beyond the
//! window edge advertised (`rcv_wnd_sent`) is dropped [`MPTcpExtNoDSSInWindow`], data
//! below the Data ACK is a duplicate [`MPTcpExtDuplicateData`]; `mptcp_set_rwin`
//! keeps the advertised right edge from moving left; `mptcp_update_rcv_data_fin`
//! records the DATA_FIN and `mptcp_pending_data_fin` takes it once the data before it
//! is in.
//!
//! Storage: one ring of bytes indexed by data offset modulo its length: an arriving
//! segment is one or two `copy_from_slice`s. The ring starts empty and grows as data
//! arrives, doubling to the span it must hold (from the application's read position to
//! the highest byte stored), up to its bound: `capacity` plus one window granule of
//! slack for the rounded-up window (below). An idle connection holds no ring, as
//! plain TCP's receive buffer (`conn/recv.rs`, a `VecDeque` that grows with use) holds
//! none; a drained ring larger than [`RING_KEEP`] is given back, as TCP gives back its
//! drained burst beyond `READY_KEEP`. Nothing a peer sends makes it exceed the bound:
//! data at or beyond the advertised right edge is dropped before it is stored. Held
//! out-of-order ranges are a [`RangeSet`] with a count limit; at the limit a segment
//! that would need one more range is refused and counted (the subflow has ACKed it, so
//! the sender's data-level retransmission timer re-sends it: Linux's
//! `mptcp_retransmit_timer` does the same for data its receiver dropped).
//!
//! Positions inside are **offsets from the initial data sequence** (`idsn + 1` is offset
//! 0), so a DSN space that wraps at 2^64 never reorders the bookkeeping.
//!
//! Unordered reads follow brisk's uTCP receive (`conn/recv/unordered.rs`): an
//! out-of-order range is handed out once ahead of its hole, and every byte is handed out
//! again in order when the hole fills (at-least-once), so the Data ACK and the window are
//! the same with the option on or off.

use crate::rangeset::RangeSet;
use std::fmt;

/// Smallest ring allocated once data arrives (a few segments).
pub const RING_MIN: usize = 4 << 10;
/// A drained ring larger than this is shrunk back to it (plain TCP keeps the same,
/// `conn::recv::prune::READY_KEEP`).
pub const RING_KEEP: usize = 64 << 10;

/// Configuration of one connection's data-level receive buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RecvConfig {
    /// Receive buffer in bytes: the most data held (in order but unread, and out of
    /// order) and so the largest window advertised.
    pub capacity: u32,
    /// Most out-of-order ranges held (and, with `unordered`, ranges tracked as handed out).
    pub max_ranges: usize,
    /// Window scale shift the subflows advertise with (RFC 7323), 0..=14.
    pub wscale: u8,
    /// Hand out-of-order ranges to the application ahead of holes (uTCP).
    pub unordered: bool,
}

impl Default for RecvConfig {
    fn default() -> Self {
        RecvConfig {
            capacity: 4 << 20,
            max_ranges: 1024,
            wscale: 7,
            unordered: false,
        }
    }
}

/// A [`RecvConfig`] field out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RecvConfigError {
    Capacity { got: u32, max: u64 },
    MaxRanges { got: usize },
    Wscale { got: u8 },
}

impl fmt::Display for RecvConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RecvConfigError::Capacity { got, max } => write!(
                f,
                "mptcp receive capacity {got} out of range 1..={max} bytes (65535 << wscale, at most 1 GiB)"
            ),
            RecvConfigError::MaxRanges { got } => {
                write!(f, "mptcp max_ranges {got} out of range 1..=65536")
            }
            RecvConfigError::Wscale { got } => write!(f, "mptcp wscale {got} out of range 0..=14"),
        }
    }
}

impl std::error::Error for RecvConfigError {}

impl RecvConfig {
    pub fn validate(&self) -> Result<(), RecvConfigError> {
        if self.wscale > 14 {
            return Err(RecvConfigError::Wscale { got: self.wscale });
        }
        let max = (65_535u64 << self.wscale).min(1 << 30);
        if self.capacity == 0 || u64::from(self.capacity) > max {
            return Err(RecvConfigError::Capacity {
                got: self.capacity,
                max,
            });
        }
        if self.max_ranges == 0 || self.max_ranges > 65_536 {
            return Err(RecvConfigError::MaxRanges {
                got: self.max_ranges,
            });
        }
        Ok(())
    }
}

/// What became of an arriving data segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Insert {
    /// Stored; `in_order` says whether the Data ACK moved.
    Stored { in_order: bool },
    /// Every byte was below the Data ACK (or held already): nothing stored.
    Duplicate,
    /// Starts at or beyond the advertised right edge: dropped.
    OutsideWindow,
    /// Would need one more held range than the limit: dropped.
    RangesFull,
    /// Data beyond the DATA_FIN: dropped.
    AfterDataFin,
}

/// What became of a DATA_FIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FinVerdict {
    Accepted,
    Duplicate,
    /// A different DATA_FIN position than one received before, or before data already
    /// received: ignored (Linux ignores a DATA_FIN that does not match).
    Conflict,
    /// Beyond the advertised right edge.
    OutsideWindow,
}

/// One read: `len` bytes starting at data sequence number `dsn`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DataRead {
    pub dsn: u64,
    pub len: usize,
    /// In order (everything before it has been read) or a range read ahead of a hole.
    pub in_order: bool,
}

/// Counters of the receive buffer (Linux MIB in brackets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RecvStats {
    /// Bytes stored in order / out of order.
    pub bytes_in_order: u64,
    pub bytes_ooo: u64,
    /// Bytes dropped as below the Data ACK [DuplicateData counts segments].
    pub duplicate_bytes: u64,
    /// Segments dropped beyond the window [NoDSSInWindow].
    pub outside_window: u64,
    /// Bytes cut off a segment that ran past the window's right edge.
    pub beyond_window_bytes: u64,
    /// Segments dropped at the held-range limit.
    pub ranges_full: u64,
    /// Segments dropped for data beyond the DATA_FIN.
    pub after_fin: u64,
    /// DATA_FINs ignored as conflicting or outside the window.
    pub fin_refused: u64,
    /// Unordered reads declined at the handed-out-range limit.
    pub unordered_declined: u64,
    /// Times the advertised window would have moved its right edge left and was held
    /// (rounded up) instead.
    pub edge_held: u64,
}

/// The data-level receive buffer. See the module docs.
#[derive(Debug)]
pub struct DataRecv {
    cfg: RecvConfig,
    /// Initial data sequence number + 1: the DSN of offset 0.
    base_dsn: u64,
    /// Grows with use up to `ring_max` (see the module docs); empty while idle.
    ring: Box<[u8]>,
    /// The ring's bound: `capacity` plus one window granule.
    ring_max: usize,
    /// Highest offset stored (end of the last in-order or out-of-order byte): the ring
    /// holds `[read, hi)`.
    hi: u64,
    /// Next offset the application reads in order.
    read: u64,
    /// Next offset expected in order (the Data ACK, past the DATA_FIN once it is in).
    ack: u64,
    /// Held out-of-order ranges, all above `ack`.
    ooo: RangeSet,
    /// Highest right edge advertised (offset).
    sent_edge: u64,
    /// Offset of the DATA_FIN.
    fin: Option<u64>,
    ack_owed: bool,
    /// Unordered reads: ranges handed out ahead of holes, and the offset below which
    /// every held out-of-order byte has been handed out.
    handed: RangeSet,
    cursor: u64,
    pub stats: RecvStats,
}

impl DataRecv {
    /// A buffer expecting data sequence `first_dsn` (the peer's IDSN + 1) next.
    pub fn new(cfg: RecvConfig, first_dsn: u64) -> Result<DataRecv, RecvConfigError> {
        cfg.validate()?;
        let slack = 1usize << cfg.wscale;
        Ok(DataRecv {
            cfg,
            base_dsn: first_dsn,
            ring: Box::default(),
            ring_max: cfg.capacity as usize + slack,
            hi: 0,
            read: 0,
            ack: 0,
            ooo: RangeSet::new(cfg.max_ranges),
            sent_edge: u64::from(cfg.capacity),
            fin: None,
            ack_owed: false,
            handed: RangeSet::new(cfg.max_ranges),
            cursor: 0,
            stats: RecvStats::default(),
        })
    }

    fn off(&self, dsn: u64) -> u64 {
        dsn.wrapping_sub(self.base_dsn)
    }

    fn dsn(&self, off: u64) -> u64 {
        self.base_dsn.wrapping_add(off)
    }

    /// Stores `data` arriving at data sequence number `dsn` (already mapped and
    /// validated by the subflow's `RecvMap`).
    pub fn insert(&mut self, dsn: u64, data: &[u8]) -> Insert {
        if data.is_empty() {
            return Insert::Duplicate;
        }
        // Offsets far behind (a wrapped difference) are treated as old data.
        let raw = self.off(dsn);
        let behind = (raw as i64) < 0;
        let start_off = if behind { 0 } else { raw };
        let skip = if behind {
            (raw as i64).unsigned_abs()
        } else {
            0
        };
        if skip >= data.len() as u64 {
            self.stats.duplicate_bytes += data.len() as u64;
            return Insert::Duplicate;
        }
        let end = start_off + (data.len() as u64 - skip);
        if let Some(f) = self.fin {
            if end > f {
                self.stats.after_fin += 1;
                return Insert::AfterDataFin;
            }
        }
        if start_off >= self.sent_edge {
            self.stats.outside_window += 1;
            return Insert::OutsideWindow;
        }
        let start = start_off.max(self.ack);
        let stop = end.min(self.sent_edge);
        if stop <= start {
            self.stats.duplicate_bytes += data.len() as u64;
            return Insert::Duplicate;
        }
        let in_order = start == self.ack;
        if !in_order {
            if !self.ooo.insert(start..stop) {
                self.stats.ranges_full += 1;
                return Insert::RangesFull;
            }
            self.cursor = self.cursor.min(start);
            self.stats.bytes_ooo += stop - start;
        } else {
            self.stats.bytes_in_order += stop - start;
        }
        let from = (skip + (start - start_off)) as usize;
        self.reserve_to(stop);
        self.copy_in(start, &data[from..from + (stop - start) as usize]);
        self.hi = self.hi.max(stop);
        self.stats.beyond_window_bytes += end - stop;
        self.stats.duplicate_bytes += data.len() as u64 - (stop - start) - (end - stop);
        if in_order {
            self.advance_ack(stop);
        }
        Insert::Stored { in_order }
    }

    /// Makes the ring hold offsets up to `stop` (exclusive) beside the live bytes from
    /// `read`: doubles it (at least to [`RING_MIN`]) to the span needed, at most
    /// `ring_max`, moving the live bytes to their places in the longer ring. The span
    /// never exceeds `ring_max`: `stop` is at most the advertised right edge, which
    /// `advertise` keeps within `read + ring_max`.
    fn reserve_to(&mut self, stop: u64) {
        let need = (stop - self.read) as usize;
        if need <= self.ring.len() {
            return;
        }
        debug_assert!(need <= self.ring_max, "span {need} beyond the ring's bound");
        let len = need
            .next_power_of_two()
            .max(self.ring.len() * 2)
            .max(RING_MIN)
            .min(self.ring_max)
            .max(need);
        let old = std::mem::replace(&mut self.ring, vec![0u8; len].into_boxed_slice());
        let live = (self.hi.max(self.read) - self.read) as usize;
        if live > 0 {
            let n = old.len();
            let pos = (self.read % n as u64) as usize;
            let first = live.min(n - pos);
            self.copy_in(self.read, &old[pos..pos + first]);
            self.copy_in(self.read + first as u64, &old[..live - first]);
        }
    }

    /// Gives back a drained ring's growth beyond [`RING_KEEP`] (nothing is held: every
    /// stored byte has been read).
    fn shrink_if_drained(&mut self) {
        if self.read == self.hi && self.ring.len() > RING_KEEP {
            self.ring = vec![0u8; RING_KEEP].into_boxed_slice();
        }
    }

    fn copy_in(&mut self, off: u64, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let n = self.ring.len();
        let pos = (off % n as u64) as usize;
        let first = bytes.len().min(n - pos);
        self.ring[pos..pos + first].copy_from_slice(&bytes[..first]);
        self.ring[..bytes.len() - first].copy_from_slice(&bytes[first..]);
    }

    fn copy_out(&self, off: u64, out: &mut [u8]) {
        if out.is_empty() {
            return;
        }
        let n = self.ring.len();
        let pos = (off % n as u64) as usize;
        let first = out.len().min(n - pos);
        let len = out.len();
        out[..first].copy_from_slice(&self.ring[pos..pos + first]);
        out[first..].copy_from_slice(&self.ring[..len - first]);
    }

    fn advance_ack(&mut self, to: u64) {
        let mut ack = to;
        if let Some(e) = self.ooo.end_of(ack) {
            ack = e;
        }
        self.ooo.remove_below(ack);
        self.handed.remove_below(ack);
        self.cursor = self.cursor.max(ack);
        if self.fin == Some(ack) {
            ack += 1; // the DATA_FIN takes one data sequence number
        }
        if ack != self.ack {
            self.ack = ack;
            self.ack_owed = true;
        }
    }

    /// A DATA_FIN at data sequence number `dsn` (the DSN after the last data byte).
    pub fn on_data_fin(&mut self, dsn: u64) -> FinVerdict {
        let off = self.off(dsn);
        if (off as i64) < 0 {
            self.stats.fin_refused += 1;
            return FinVerdict::Conflict;
        }
        match self.fin {
            Some(f) if f == off => return FinVerdict::Duplicate,
            Some(_) => {
                self.stats.fin_refused += 1;
                return FinVerdict::Conflict;
            }
            None => {}
        }
        if off > self.sent_edge {
            self.stats.fin_refused += 1;
            return FinVerdict::OutsideWindow;
        }
        // Data already received beyond it.
        let beyond = self.ack > off
            || self.ooo.end_of(off).is_some()
            || self.ooo.next_start_after(off).is_some();
        if beyond {
            self.stats.fin_refused += 1;
            return FinVerdict::Conflict;
        }
        self.fin = Some(off);
        if self.ack == off {
            self.ack = off + 1;
            self.ack_owed = true;
        }
        FinVerdict::Accepted
    }

    /// In-order bytes ready to read.
    pub fn readable(&self) -> u64 {
        self.data_end() - self.read
    }

    /// End of in-order data (the Data ACK less the DATA_FIN's one).
    fn data_end(&self) -> u64 {
        match self.fin {
            Some(f) if self.ack > f => f,
            _ => self.ack,
        }
    }

    /// Reads in-order bytes into `out`; returns how many.
    pub fn read(&mut self, out: &mut [u8]) -> usize {
        let n = (self.readable().min(out.len() as u64)) as usize;
        self.copy_out(self.read, &mut out[..n]);
        self.read += n as u64;
        self.shrink_if_drained();
        n
    }

    /// [`read`](Self::read) that hands the bytes to `f` in place, straight from the
    /// ring when they lie in one piece of it, else copied into `out` first (the ring
    /// wraps inside them); at most `out.len()` bytes, as `read`. `f` is not called
    /// when nothing is readable.
    pub fn read_in_place(&mut self, out: &mut [u8], f: &mut dyn FnMut(&[u8])) -> usize {
        let n = (self.readable().min(out.len() as u64)) as usize;
        if n == 0 {
            return 0;
        }
        let pos = (self.read % self.ring.len() as u64) as usize;
        if pos + n <= self.ring.len() {
            f(&self.ring[pos..pos + n]);
        } else {
            self.copy_out(self.read, &mut out[..n]);
            f(&out[..n]);
        }
        self.read += n as u64;
        self.shrink_if_drained();
        n
    }

    /// Reads in-order bytes if any, else (with `unordered` configured) the lowest
    /// out-of-order run not handed out yet. `None` when there is nothing to read.
    pub fn read_unordered(&mut self, out: &mut [u8]) -> Option<DataRead> {
        if out.is_empty() {
            return None;
        }
        if self.readable() > 0 {
            let dsn = self.dsn(self.read);
            let len = self.read(out);
            return Some(DataRead {
                dsn,
                len,
                in_order: true,
            });
        }
        if !self.cfg.unordered {
            return None;
        }
        // From the cursor: the lowest held byte not handed out. Each step skips one
        // handed-out range or jumps to the next held range: O(log n) per step.
        let mut x = self.cursor.max(self.ack);
        loop {
            match self.ooo.end_of(x) {
                None => x = self.ooo.next_start_after(x)?,
                Some(held_end) => {
                    if let Some(h) = self.handed.end_of(x) {
                        x = h;
                        continue;
                    }
                    let stop = self
                        .handed
                        .next_start_after(x)
                        .map_or(held_end, |s| s.min(held_end));
                    let len = ((stop - x).min(out.len() as u64)) as usize;
                    if !self.handed.insert(x..x + len as u64) {
                        self.stats.unordered_declined += 1;
                        return None;
                    }
                    self.copy_out(x, &mut out[..len]);
                    // Everything skipped on the way was handed out or not held.
                    self.cursor = x + len as u64;
                    return Some(DataRead {
                        dsn: self.dsn(x),
                        len,
                        in_order: false,
                    });
                }
            }
        }
    }

    /// The Data ACK (64-bit DSN of the next byte expected, past the DATA_FIN once in).
    pub fn data_ack(&self) -> u64 {
        self.dsn(self.ack)
    }

    /// Whether the Data ACK moved since the last call (an ACK is owed), clearing it.
    pub fn take_ack_owed(&mut self) -> bool {
        std::mem::take(&mut self.ack_owed)
    }

    /// The window field to advertise on any subflow (scaled by `wscale`), relative to
    /// the Data ACK (§3.3.4). The right edge never moves left: when the buffer's own
    /// edge rounded down would fall short of the edge sent before, the field is rounded
    /// up to keep it (Linux `mptcp_set_rwin`); the ring's slack holds the difference.
    /// The one exception: a peer filling the slack of a reader that never reads, where
    /// the edge stays at the ring's end (counted in `edge_held`).
    pub fn advertise(&mut self) -> u16 {
        let s = self.cfg.wscale;
        let g = 1u64 << s;
        let own_edge = self.read + u64::from(self.cfg.capacity);
        let mut field = own_edge.saturating_sub(self.ack) >> s;
        if self.ack + (field << s) < self.sent_edge {
            let hard = self.read + self.ring_max as u64;
            let need = (self.sent_edge - self.ack).div_ceil(g);
            field = need.min(hard.saturating_sub(self.ack) >> s);
            self.stats.edge_held += 1;
        }
        let field = field.min(u64::from(u16::MAX));
        self.sent_edge = self.sent_edge.max(self.ack + (field << s));
        field as u16
    }

    /// The right edge advertised so far, as a DSN.
    pub fn right_edge(&self) -> u64 {
        self.dsn(self.sent_edge)
    }

    /// The DATA_FIN has arrived and every byte before it has been read.
    pub fn is_finished(&self) -> bool {
        self.fin.is_some_and(|f| self.read == f && self.ack > f)
    }

    /// Whether a DATA_FIN is known (its DSN).
    pub fn data_fin(&self) -> Option<u64> {
        self.fin.map(|f| self.dsn(f))
    }

    /// Out-of-order ranges held now.
    pub fn held_ranges(&self) -> usize {
        self.ooo.len()
    }

    /// Bytes of memory the buffer holds (the ring, as grown so far).
    pub fn memory(&self) -> usize {
        self.ring.len()
    }

    /// The most the ring grows to: `capacity` plus one window granule.
    pub fn memory_bound(&self) -> usize {
        self.ring_max
    }

    pub fn config(&self) -> &RecvConfig {
        &self.cfg
    }
}

#[cfg(test)]
mod tests;

//! The data-sequence map (RFC 8684 §3.3.1): which data-level bytes (64-bit DSN) a
//! subflow's bytes carry, on the send and on the receive side.
//!
//! Subflow positions are **subflow offsets**: bytes after the subflow's SYN, 0-based, 64
//! bits wide so they never wrap (the wire's relative subflow sequence number is
//! `offset + 1`, truncated to 32 bits: [`Mapping::wire_ssn`], [`expand32`] back).
//!
//! - [`SendMap`] (Linux: the `mptcp_ext` attached in `mptcp_sendmsg_frag`, and
//!   `mptcp_established_options_dss` writing it): mappings in subflow order as the
//!   subflow takes bytes from the stream, coalesced while contiguous at both levels (as
//!   `mptcp_sendmsg_frag` extends the previous extension), freed by the subflow's own
//!   cumulative ACK; a retransmission on the same subflow looks its mapping up again
//!   (RFC 8684 §3.3.1: the same data, the same mapping).
//! - [`RecvMap`] (Linux: `get_mapping_status` / `validate_mapping` in `subflow.c`):
//!   mappings received, keyed by subflow offset, each checked before it is stored, with
//!   a [`MapVerdict`] the caller counts in [`MapCounters`] (Linux's MIBs in brackets on
//!   each variant). Linux holds one mapping per subflow and refuses a second one for
//!   bytes not yet consumed; brisk keeps a bounded table, because brisk's subflow hands
//!   in-order bytes up after reassembly and the mappings of its out-of-order segments
//!   must survive until then.
//!
//! Both tables are rings (`VecDeque`) ordered by subflow offset: mappings are made and
//! received mostly in subflow order and freed from the front, so the common case is a
//! push at the back and a pop at the front; lookups are a check of the front entry,
//! else a binary search. Both have a count limit fixed at construction and start
//! empty, growing with use ([`grow_within`]) to at most that limit, so an idle
//! subflow holds no table and a peer cannot make one hold more than its limit.

use std::collections::VecDeque;
use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// Smallest table allocated once a mapping is held.
const TABLE_MIN: usize = 8;

/// Room for one more entry in `q`, which holds at most `limit`: doubles the storage
/// (at least to [`TABLE_MIN`]) but never past `limit` entries, so the memory a table
/// holds stays within its count limit's.
fn grow_within<T>(q: &mut VecDeque<T>, limit: usize) {
    if q.len() == q.capacity() && q.len() < limit {
        let add = q.len().max(TABLE_MIN).min(limit - q.len());
        q.reserve_exact(add);
    }
}

/// Longest data-level length one DSS mapping can state (a 16-bit field).
pub const MAX_MAP_LEN: u64 = u16::MAX as u64;

/// One DSS mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    /// Data sequence number of the first mapped byte (64-bit; see [`expand32`]).
    pub dsn: u64,
    /// Subflow offset of the first mapped byte.
    pub sub_off: u64,
    /// Data-level length as on the wire: payload bytes plus one for a DATA_FIN; 0 is
    /// the infinite mapping of fallback (§3.7).
    pub len: u16,
    /// The mapping's last data-level byte is the DATA_FIN (§3.3.3).
    pub data_fin: bool,
}

impl Mapping {
    /// Subflow (payload) bytes the mapping covers: the length without the DATA_FIN.
    pub fn payload(&self) -> u64 {
        u64::from(self.len).saturating_sub(u64::from(self.data_fin))
    }

    /// The infinite mapping a sender falling back to TCP sends once (§3.7): from data
    /// sequence `dsn` at subflow offset `sub_off` on, every byte maps one to one.
    pub fn infinite(dsn: u64, sub_off: u64) -> Mapping {
        Mapping {
            dsn,
            sub_off,
            len: 0,
            data_fin: false,
        }
    }

    /// The infinite mapping (data-level length 0): the peer fell back (§3.7).
    pub fn is_infinite(&self) -> bool {
        self.len == 0
    }

    /// The relative subflow sequence number on the wire (the SYN takes one). A
    /// DATA_FIN-only mapping carries 0 (§3.3.1).
    pub fn wire_ssn(&self) -> u32 {
        if self.payload() == 0 && self.data_fin {
            0
        } else {
            self.sub_off.wrapping_add(1) as u32
        }
    }
}

impl Mapping {
    /// A mapping as parsed from a DSS option (`brisk_wire::mptcp::Mapping`, with the
    /// option's F flag as `data_fin`), made 64-bit: a 32-bit DSN is expanded against
    /// `dsn_ref` (the receiver's Data ACK or the previous mapping's end) and the 32-bit
    /// relative subflow sequence number against `sub_ref` (the subflow's next expected
    /// offset), both with [`expand32`]. A DATA_FIN-only mapping (subflow sequence 0)
    /// sits at `sub_ref`.
    pub fn from_wire(
        w: &brisk_wire::mptcp::Mapping,
        data_fin: bool,
        dsn_ref: u64,
        sub_ref: u64,
    ) -> Mapping {
        let dsn = match w.dsn {
            brisk_wire::mptcp::DataSeq::Bits32(v) => expand32(dsn_ref, v),
            brisk_wire::mptcp::DataSeq::Bits64(v) => v,
        };
        let fin_only = data_fin && w.data_len == 1 && w.subflow_seq == 0;
        let sub_off = if fin_only {
            sub_ref
        } else {
            // The wire counts from the ISN (the SYN takes one); offsets from the first
            // payload byte.
            expand32(sub_ref.wrapping_add(1), w.subflow_seq).wrapping_sub(1)
        };
        Mapping {
            dsn,
            sub_off,
            len: w.data_len,
            data_fin,
        }
    }

    /// The DSS mapping to emit (no checksum: the caller adds it when negotiated, over
    /// the payload), with a 64-bit or 32-bit DSN. The DATA_FIN goes in the option's F
    /// flag ([`Mapping::data_fin`]).
    pub fn to_wire(&self, dsn64: bool) -> brisk_wire::mptcp::Mapping {
        brisk_wire::mptcp::Mapping {
            dsn: if dsn64 {
                brisk_wire::mptcp::DataSeq::Bits64(self.dsn)
            } else {
                brisk_wire::mptcp::DataSeq::Bits32(self.dsn as u32)
            },
            subflow_seq: self.wire_ssn(),
            data_len: self.len,
            checksum: None,
        }
    }
}

/// The 64-bit value whose low 32 bits are `v`, nearest to `reference` (within
/// −2^31..2^31). RFC 8684 §3.3.1 lets a sender send 32-bit DSNs and Data ACKs; the
/// receiver infers the high bits from what it knows (Linux: `__mptcp_expand_seq` for
/// Data ACKs, against the last one; `expand_seq` for mappings, against the previous
/// mapping's end, which only looks forward — nearest is the same for every forward
/// distance below 2^31 and also handles a mapping re-sent for older data).
pub fn expand32(reference: u64, v: u32) -> u64 {
    let diff = v.wrapping_sub(reference as u32) as i32;
    reference.wrapping_add(diff as i64 as u64)
}

/// Why a send-side mapping was not recorded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapError {
    /// The table holds its limit of mappings.
    Full { limit: usize },
    /// The bytes do not start where the subflow's mapped bytes end.
    NotContiguous { expected: u64, got: u64 },
    /// One mapping covers at most 65 535 data-level bytes.
    TooLong { len: u64 },
}

impl fmt::Display for MapError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MapError::Full { limit } => {
                write!(f, "send map full: at most {limit} mappings per subflow")
            }
            MapError::NotContiguous { expected, got } => write!(
                f,
                "mapping's subflow offset is {got}, expected {expected} (the end of the mapped bytes)"
            ),
            MapError::TooLong { len } => write!(
                f,
                "mapping length {len} out of range 1..={MAX_MAP_LEN} (data-level length is 16 bits)"
            ),
        }
    }
}

impl std::error::Error for MapError {}

/// The send side's mappings of one subflow, in subflow order.
#[derive(Debug)]
pub struct SendMap {
    maps: VecDeque<Mapping>,
    limit: usize,
    /// Subflow offset where the next mapped byte must start (the end of the mapped bytes).
    end: u64,
    /// Mappings freed from the front so far, and the position (counted from the first
    /// mapping ever held) of the one `lookup` found last: its starting guess.
    /// (An atomic only so the table stays `Sync` behind `&self`; relaxed loads and
    /// stores are plain moves.)
    popped: u64,
    hint: AtomicU64,
}

impl Clone for SendMap {
    fn clone(&self) -> SendMap {
        SendMap {
            maps: self.maps.clone(),
            limit: self.limit,
            end: self.end,
            popped: self.popped,
            hint: AtomicU64::new(self.hint.load(Relaxed)),
        }
    }
}

impl SendMap {
    /// An empty map for a subflow whose first payload byte is at offset `start`,
    /// holding at most `limit` (at least 1) mappings; storage grows with use up to
    /// `limit` entries.
    pub fn new(start: u64, limit: usize) -> SendMap {
        let limit = limit.max(1);
        SendMap {
            maps: VecDeque::new(),
            limit,
            end: start,
            popped: 0,
            hint: AtomicU64::new(0),
        }
    }

    /// The subflow takes `len` bytes of the stream starting at `dsn`, at subflow offset
    /// `sub_off` (its SND.NXT). Coalesces with the previous mapping when both levels
    /// continue and the sum fits 16 bits.
    pub fn push(&mut self, dsn: u64, sub_off: u64, len: u64) -> Result<Mapping, MapError> {
        if len == 0 || len > MAX_MAP_LEN {
            return Err(MapError::TooLong { len });
        }
        if sub_off != self.end {
            return Err(MapError::NotContiguous {
                expected: self.end,
                got: sub_off,
            });
        }
        if let Some(last) = self.maps.back_mut() {
            let continues = !last.data_fin
                && last.sub_off + last.payload() == sub_off
                && last.dsn.wrapping_add(last.payload()) == dsn
                && u64::from(last.len) + len <= MAX_MAP_LEN;
            if continues {
                last.len += len as u16;
                self.end += len;
                return Ok(*last);
            }
        }
        if self.maps.len() >= self.limit {
            return Err(MapError::Full { limit: self.limit });
        }
        let m = Mapping {
            dsn,
            sub_off,
            len: len as u16,
            data_fin: false,
        };
        grow_within(&mut self.maps, self.limit);
        self.maps.push_back(m);
        self.end += len;
        Ok(m)
    }

    /// The DATA_FIN goes out on this subflow at data sequence `dsn`: it joins the last
    /// mapping when that ends right before it (Linux: `mptcp_write_data_fin`, which
    /// adds it to the last extension). Otherwise it rides alone on a segment with no
    /// payload (length 1, subflow sequence 0): that mapping is returned but not held,
    /// since no subflow sequence number carries it — the Data ACK acknowledges it and
    /// the data level re-sends it.
    pub fn push_data_fin(&mut self, dsn: u64) -> Result<Mapping, MapError> {
        if let Some(last) = self.maps.back_mut() {
            if !last.data_fin
                && last.dsn.wrapping_add(last.payload()) == dsn
                && u64::from(last.len) < MAX_MAP_LEN
            {
                last.len += 1;
                last.data_fin = true;
                return Ok(*last);
            }
        }
        Ok(Mapping {
            dsn,
            sub_off: self.end,
            len: 1,
            data_fin: true,
        })
    }

    /// The mapping covering subflow offset `off` (for each segment sent, and to send
    /// again with a retransmission). Segments go out in subflow order while the
    /// subflow's buffer holds many mappings ahead, so the mapping found last and the
    /// one after it are tried first, then a binary search.
    pub fn lookup(&self, off: u64) -> Option<Mapping> {
        let covers = |m: &Mapping| m.sub_off <= off && off < m.sub_off + m.payload();
        let near = self.hint.load(Relaxed).saturating_sub(self.popped) as usize;
        for i in [near, near + 1] {
            if let Some(m) = self.maps.get(i).filter(|m| covers(m)) {
                self.hint.store(self.popped + i as u64, Relaxed);
                return Some(*m);
            }
        }
        let i = self
            .maps
            .partition_point(|m| m.sub_off + m.payload() <= off);
        let m = self.maps.get(i).filter(|m| covers(m))?;
        self.hint.store(self.popped + i as u64, Relaxed);
        Some(*m)
    }

    /// The subflow's cumulative ACK reached offset `una`: mappings wholly below it are
    /// done on this subflow (the data level frees the bytes on the Data ACK, not here).
    pub fn on_subflow_ack(&mut self, una: u64) {
        while let Some(m) = self.maps.front() {
            if m.sub_off + m.payload() <= una {
                self.maps.pop_front();
                self.popped += 1;
            } else {
                break;
            }
        }
    }

    /// The mappings still outstanding on this subflow, oldest first (what an RTO
    /// re-injects elsewhere, `reinject`).
    pub fn outstanding(&self) -> impl Iterator<Item = &Mapping> {
        self.maps.iter()
    }

    /// Subflow offset where the next mapped byte starts.
    pub fn end(&self) -> u64 {
        self.end
    }

    pub fn len(&self) -> usize {
        self.maps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Entries the table has storage for (grown with use, at most `limit`).
    pub fn capacity(&self) -> usize {
        self.maps.capacity()
    }
}

/// The data-level window a received mapping is checked against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WindowCtx {
    /// The Data ACK the receiver has sent or will send (its next expected DSN).
    pub data_ack: u64,
    /// The right edge the receiver has advertised (never below `data_ack`).
    pub right_edge: u64,
}

/// What became of a received mapping. Linux's MIB for each is in brackets.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MapVerdict {
    /// Stored.
    New,
    /// The same as (or inside) a mapping held already: nothing changes (Linux:
    /// "allow replacing only with an identical map").
    Duplicate,
    /// Overlaps held mappings with the same DSN-to-offset relation: merged into one.
    Extended,
    /// A DATA_FIN with no payload at this DSN: the caller passes it to the data-level
    /// receive buffer; nothing is stored.
    DataFinOnly { dsn: u64 },
    /// The infinite mapping (data-level length 0): fall back to TCP if allowed (§3.7),
    /// else reset [`MPTcpExtInfiniteMapRx`].
    Infinite,
    /// Overlaps a held mapping but maps the bytes differently: the data cannot be
    /// trusted; Linux treats it as `MAPPING_INVALID` (MP_FAIL / reset) [`DSSNoMatchTCP`].
    Inconsistent,
    /// The segment carrying the mapping is not inside it (Linux `validate_mapping`)
    /// [`DSSTCPMismatch`].
    NotCovering,
    /// Starts at or beyond the right edge of the advertised window: dropped, as Linux
    /// drops such data [`NoDSSInWindow`].
    OutsideWindow,
    /// The table holds its limit of mappings: dropped (the bytes will be sent again).
    TableFull,
}

/// Counts of [`MapVerdict`]s, for the caller's statistics.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MapCounters {
    pub new: u64,
    pub duplicate: u64,
    pub extended: u64,
    pub data_fin_only: u64,
    pub infinite: u64,
    pub inconsistent: u64,
    pub not_covering: u64,
    pub outside_window: u64,
    pub table_full: u64,
}

impl MapCounters {
    pub fn count(&mut self, v: MapVerdict) {
        let c = match v {
            MapVerdict::New => &mut self.new,
            MapVerdict::Duplicate => &mut self.duplicate,
            MapVerdict::Extended => &mut self.extended,
            MapVerdict::DataFinOnly { .. } => &mut self.data_fin_only,
            MapVerdict::Infinite => &mut self.infinite,
            MapVerdict::Inconsistent => &mut self.inconsistent,
            MapVerdict::NotCovering => &mut self.not_covering,
            MapVerdict::OutsideWindow => &mut self.outside_window,
            MapVerdict::TableFull => &mut self.table_full,
        };
        *c += 1;
    }
}

/// A held receive-side mapping: subflow offset and data sequence of its first byte,
/// payload length and whether its end is the DATA_FIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    start: u64,
    dsn: u64,
    len: u64,
    data_fin: bool,
}

impl Held {
    fn end(&self) -> u64 {
        self.start + self.len
    }
}

/// The receive side's mappings of one subflow: disjoint, in subflow-offset order.
#[derive(Clone, Debug)]
pub struct RecvMap {
    maps: VecDeque<Held>,
    limit: usize,
}

impl RecvMap {
    /// An empty table holding at most `limit` (at least 1) mappings; storage grows
    /// with use up to `limit` entries.
    pub fn new(limit: usize) -> RecvMap {
        RecvMap {
            maps: VecDeque::new(),
            limit: limit.max(1),
        }
    }

    /// Index of the first held mapping starting after `off` (binary search, with the
    /// in-order case, `off` past every held start, checked first).
    fn after(&self, off: u64) -> usize {
        match self.maps.back() {
            None => 0,
            Some(b) if b.start <= off => self.maps.len(),
            Some(_) => self.maps.partition_point(|h| h.start <= off),
        }
    }

    /// The held mapping covering `off`: the front one (where the subflow consumes
    /// from) checked first, else by binary search.
    fn covering(&self, off: u64) -> Option<&Held> {
        self.covering_at(off).map(|i| &self.maps[i])
    }

    /// [`covering`](Self::covering)'s index.
    fn covering_at(&self, off: u64) -> Option<usize> {
        let f = self.maps.front()?;
        if f.start <= off && off < f.end() {
            return Some(0);
        }
        let i = self
            .maps
            .partition_point(|h| h.start <= off)
            .checked_sub(1)?;
        (off < self.maps[i].end()).then_some(i)
    }

    /// Checks and stores mapping `m`, received on a segment whose payload starts at
    /// subflow offset `seg_off` and is `seg_len` bytes long (0 for a pure ACK), against
    /// the data-level window `win`.
    pub fn on_mapping(
        &mut self,
        m: Mapping,
        seg_off: u64,
        seg_len: u64,
        win: WindowCtx,
    ) -> MapVerdict {
        if m.is_infinite() {
            return MapVerdict::Infinite;
        }
        let len = m.payload();
        if len == 0 {
            // A DATA_FIN alone (len 1, subflow sequence 0).
            return if dsn_before(m.dsn, win.right_edge) {
                MapVerdict::DataFinOnly { dsn: m.dsn }
            } else {
                MapVerdict::OutsideWindow
            };
        }
        if !dsn_before(m.dsn, win.right_edge) {
            return MapVerdict::OutsideWindow;
        }
        let end = m.sub_off + len;
        if seg_len > 0 && !(m.sub_off <= seg_off && seg_off < end) {
            return MapVerdict::NotCovering;
        }
        let delta = m.dsn.wrapping_sub(m.sub_off);
        // Every held mapping that overlaps [sub_off, end): the one starting at or before
        // sub_off (if it reaches past it) and those starting inside. Held mappings are
        // disjoint and sorted, so they are the run `first..last`.
        let mut lo = m.sub_off;
        let mut hi = end;
        let mut fin = m.data_fin;
        let at = self.after(m.sub_off);
        let first = match at.checked_sub(1).map(|j| &self.maps[j]) {
            Some(h) if h.end() > m.sub_off => at - 1,
            _ => at,
        };
        let mut last = first;
        while let Some(h) = self.maps.get(last).filter(|h| h.start < end) {
            let h_end = h.end();
            if h.dsn.wrapping_sub(h.start) != delta {
                return MapVerdict::Inconsistent;
            }
            // Data after a DATA_FIN, or two DATA_FINs at different places.
            if (h.data_fin && end > h_end)
                || (m.data_fin && h_end > end)
                || (h.data_fin && m.data_fin && h_end != end)
            {
                return MapVerdict::Inconsistent;
            }
            if h.start <= m.sub_off && end <= h_end && (!m.data_fin || h.data_fin) {
                return MapVerdict::Duplicate;
            }
            lo = lo.min(h.start);
            hi = hi.max(h_end);
            fin |= h.data_fin;
            last += 1;
        }
        if last == first {
            if self.maps.len() >= self.limit {
                return MapVerdict::TableFull;
            }
            grow_within(&mut self.maps, self.limit);
            self.maps.insert(
                first,
                Held {
                    start: m.sub_off,
                    dsn: m.dsn,
                    len,
                    data_fin: m.data_fin,
                },
            );
            return MapVerdict::New;
        }
        // Merge: the overlapped entries become their union, in place (no allocation).
        self.maps[first] = Held {
            start: lo,
            dsn: delta.wrapping_add(lo),
            len: hi - lo,
            data_fin: fin,
        };
        self.maps.drain(first + 1..last);
        MapVerdict::Extended
    }

    /// The DSN of the byte at subflow offset `off` and how many bytes from there the
    /// same mapping covers (so a caller maps a whole run at once).
    pub fn lookup(&self, off: u64) -> Option<(u64, u64)> {
        let h = self.covering(off)?;
        Some((h.dsn.wrapping_add(off - h.start), h.end() - off))
    }

    /// How many bytes from subflow offset `off` on are mapped without a gap (across
    /// adjacent mappings), counting no further than `max`: what a caller may take from
    /// the subflow and hand to the data level in one go.
    pub fn mapped_run(&self, off: u64, max: u64) -> u64 {
        let Some(i) = self.covering_at(off) else {
            return 0;
        };
        let mut end = self.maps[i].end();
        if end - off < max {
            // Adjacent mappings after it (sorted and disjoint: the next ones in order).
            for h in self.maps.range(i + 1..) {
                if h.start != end || end - off >= max {
                    break;
                }
                end = h.end();
            }
        }
        (end - off).min(max)
    }

    /// Whether the mapping covering `off` ends with the DATA_FIN right after its last
    /// byte; gives the DATA_FIN's DSN.
    pub fn data_fin_after(&self, off: u64) -> Option<u64> {
        let h = self.covering(off)?;
        h.data_fin.then(|| h.dsn.wrapping_add(h.len))
    }

    /// The subflow handed its bytes up to offset `off`: mappings wholly below are done.
    pub fn consumed(&mut self, off: u64) {
        while self.maps.front().is_some_and(|h| h.end() <= off) {
            self.maps.pop_front();
        }
    }

    /// Entries the table has storage for (grown with use, at most `limit`).
    pub fn capacity(&self) -> usize {
        self.maps.capacity()
    }

    pub fn len(&self) -> usize {
        self.maps.len()
    }

    pub fn is_empty(&self) -> bool {
        self.maps.is_empty()
    }

    pub fn limit(&self) -> usize {
        self.limit
    }
}

/// `a` before `b` in 64-bit sequence space (Linux `before64`).
pub fn dsn_before(a: u64, b: u64) -> bool {
    (a.wrapping_sub(b) as i64) < 0
}

#[cfg(test)]
mod tests;

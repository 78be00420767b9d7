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
//! Lookups are O(log n) (binary search / B-tree); both tables have a count limit fixed at
//! construction.

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::ops::Bound;

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
#[derive(Clone, Debug)]
pub struct SendMap {
    maps: VecDeque<Mapping>,
    limit: usize,
    /// Subflow offset where the next mapped byte must start (the end of the mapped bytes).
    end: u64,
}

impl SendMap {
    /// An empty map for a subflow whose first payload byte is at offset `start`,
    /// holding at most `limit` (at least 1) mappings; the storage is allocated here,
    /// once.
    pub fn new(start: u64, limit: usize) -> SendMap {
        let limit = limit.max(1);
        SendMap {
            maps: VecDeque::with_capacity(limit),
            limit,
            end: start,
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

    /// The mapping covering subflow offset `off` (to send again with a retransmission),
    /// by binary search.
    pub fn lookup(&self, off: u64) -> Option<Mapping> {
        let i = self
            .maps
            .partition_point(|m| m.sub_off + m.payload() <= off);
        self.maps
            .get(i)
            .filter(|m| m.sub_off <= off && off < m.sub_off + m.payload())
            .copied()
    }

    /// The subflow's cumulative ACK reached offset `una`: mappings wholly below it are
    /// done on this subflow (the data level frees the bytes on the Data ACK, not here).
    pub fn on_subflow_ack(&mut self, una: u64) {
        while let Some(m) = self.maps.front() {
            if m.sub_off + m.payload() <= una {
                self.maps.pop_front();
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

/// A held receive-side mapping: data sequence of its first byte, payload length and
/// whether its end is the DATA_FIN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Held {
    dsn: u64,
    len: u64,
    data_fin: bool,
}

/// The receive side's mappings of one subflow, keyed by subflow offset.
#[derive(Clone, Debug)]
pub struct RecvMap {
    maps: BTreeMap<u64, Held>,
    limit: usize,
}

impl RecvMap {
    /// An empty table holding at most `limit` (at least 1) mappings.
    pub fn new(limit: usize) -> RecvMap {
        RecvMap {
            maps: BTreeMap::new(),
            limit: limit.max(1),
        }
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
        // sub_off (if it reaches past it) and those starting inside.
        let mut lo = m.sub_off;
        let mut hi = end;
        let mut fin = m.data_fin;
        let mut overlaps = 0usize;
        let first = self
            .maps
            .range(..=m.sub_off)
            .next_back()
            .filter(|(&s, h)| s + h.len > m.sub_off)
            .map(|(&s, &h)| (s, h));
        let inside = self
            .maps
            .range((Bound::Excluded(m.sub_off), Bound::Excluded(end)))
            .map(|(&s, &h)| (s, h));
        for (s, h) in first.into_iter().chain(inside) {
            let h_end = s + h.len;
            if h.dsn.wrapping_sub(s) != delta {
                return MapVerdict::Inconsistent;
            }
            // Data after a DATA_FIN, or two DATA_FINs at different places.
            if (h.data_fin && end > h_end)
                || (m.data_fin && h_end > end)
                || (h.data_fin && m.data_fin && h_end != end)
            {
                return MapVerdict::Inconsistent;
            }
            if s <= m.sub_off && end <= h_end && (!m.data_fin || h.data_fin) {
                return MapVerdict::Duplicate;
            }
            lo = lo.min(s);
            hi = hi.max(h_end);
            fin |= h.data_fin;
            overlaps += 1;
        }
        if overlaps == 0 {
            if self.maps.len() >= self.limit {
                return MapVerdict::TableFull;
            }
            self.maps.insert(
                m.sub_off,
                Held {
                    dsn: m.dsn,
                    len,
                    data_fin: m.data_fin,
                },
            );
            return MapVerdict::New;
        }
        // Merge: remove the overlapped entries (one removal each, no allocation beyond
        // the tree's own), insert the union.
        while let Some((&s, _)) = self.maps.range(lo..hi).next() {
            self.maps.remove(&s);
        }
        self.maps.insert(
            lo,
            Held {
                dsn: delta.wrapping_add(lo),
                len: hi - lo,
                data_fin: fin,
            },
        );
        MapVerdict::Extended
    }

    /// The DSN of the byte at subflow offset `off` and how many bytes from there the
    /// same mapping covers (so a caller maps a whole run at once), by B-tree search.
    pub fn lookup(&self, off: u64) -> Option<(u64, u64)> {
        let (&s, h) = self.maps.range(..=off).next_back()?;
        (off < s + h.len).then(|| (h.dsn.wrapping_add(off - s), s + h.len - off))
    }

    /// Whether the mapping covering `off` ends with the DATA_FIN right after its last
    /// byte; gives the DATA_FIN's DSN.
    pub fn data_fin_after(&self, off: u64) -> Option<u64> {
        let (&s, h) = self.maps.range(..=off).next_back()?;
        (off < s + h.len && h.data_fin).then(|| h.dsn.wrapping_add(h.len))
    }

    /// The subflow handed its bytes up to offset `off`: mappings wholly below are done.
    pub fn consumed(&mut self, off: u64) {
        while let Some(entry) = self.maps.first_entry() {
            if *entry.key() + entry.get().len <= off {
                entry.remove();
            } else {
                break;
            }
        }
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

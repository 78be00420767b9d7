//! The receive side under memory pressure: Linux's `tcp_collapse_ofo_queue` /
//! `tcp_collapse` (copy fragmented data into compact buffers) and
//! `tcp_prune_ofo_queue` (drop out-of-order data from the highest sequence down). The
//! endpoint decides when and on which connection (`crate::mem`); this module only acts
//! on one `RecvBuffer`.
//!
//! What is charged: each out-of-order range at its buffer's *capacity* plus
//! [`RANGE_OVERHEAD`] (what a peer makes us allocate, not the payload it sent: a range
//! grown segment by segment doubles its capacity, Linux's `truesize` problem), and the
//! in-order queue at its capacity. In-order data is cumulatively ACKed, so it is never
//! pruned; only out-of-order data is, which the peer still holds until our cumulative
//! ACK covers it (RFC 2018 §8 and RFC 9293 allow a receiver to discard it: SACK
//! reneging). The SACK blocks we send are computed from the store, so they stop
//! covering pruned data at once.
//!
//! Collapse in brisk: adjacent ranges are already merged on arrival (brisk keeps one
//! buffer per contiguous range, not one per segment), so collapsing is reallocating
//! each range with slack to its exact length. Prune drops whole ranges from the top,
//! and truncates the last one it touches when it holds more than is needed.
//!
//! Unordered receive (uTCP): pruned out-of-order data that was already handed out
//! stays marked as handed out, so when the peer retransmits it, it is not handed out
//! out of order again; it is delivered again in order, as every out-of-order byte is
//! (at-least-once, see `unordered`). Data pruned before it was handed out simply is
//! handed out when it arrives again.

use super::RecvBuffer;
use std::collections::VecDeque;

/// Bookkeeping charged per out-of-order range besides its buffer: the map entry
/// (8-byte key, 32-byte `VecDeque` header) and a share of its B-tree node, rounded
/// up. Makes a peer that sends many tiny ranges pay for them.
pub const RANGE_OVERHEAD: usize = 64;

/// An empty in-order queue with more capacity than this is shrunk to it after a read.
pub const READY_KEEP: usize = 64 << 10;

/// Collapse and prune work, per connection (also summed per endpoint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PruneStats {
    /// Times the out-of-order store was collapsed, bytes copied doing it and charged
    /// bytes it freed.
    pub collapses: u64,
    pub collapsed_bytes: u64,
    pub collapse_freed: u64,
    /// Times out-of-order data was pruned, payload bytes dropped, ranges removed or
    /// truncated (Linux counts skbs: `OFOPruned`), and charged bytes freed.
    pub prunes: u64,
    pub pruned_bytes: u64,
    pub pruned_ranges: u64,
    pub prune_freed: u64,
}

/// The charge of one stored out-of-order range.
pub(super) fn charge(v: &VecDeque<u8>) -> usize {
    v.capacity() + RANGE_OVERHEAD
}

impl RecvBuffer {
    /// Charged bytes of the out-of-order store (prunable).
    pub fn ooo_charge(&self) -> usize {
        self.ooo_charge
    }

    /// Charged bytes of the in-order queue (never pruned).
    pub fn ready_charge(&self) -> usize {
        self.ready.capacity()
    }

    /// Sets the bytes later inserts may newly allocate (`usize::MAX`: no limit).
    pub fn set_mem_allowance(&mut self, bytes: usize) {
        self.mem_allow = bytes;
    }

    /// Charged bytes a collapse would free (capacity beyond the stored bytes).
    pub fn ooo_slack(&self) -> usize {
        self.ooo_charge - self.ooo_bytes - self.ooo.len() * RANGE_OVERHEAD
    }

    /// Linux `tcp_collapse_ofo_queue`: reallocates every range whose capacity exceeds
    /// its length by more than an eighth to its exact length. Returns the charged
    /// bytes freed. Costs one copy of those ranges; called only under pressure.
    pub fn collapse_ooo(&mut self) -> usize {
        let before = self.ooo_charge;
        let mut copied = 0;
        for v in self.ooo.values_mut() {
            if v.capacity() - v.len() > v.len() / 8 {
                copied += v.len();
                self.ooo_charge -= v.capacity();
                v.shrink_to_fit();
                self.ooo_charge += v.capacity();
            }
        }
        let freed = before - self.ooo_charge;
        let st = &mut self.prune_stats;
        st.collapses += 1;
        st.collapsed_bytes += copied as u64;
        st.collapse_freed += freed as u64;
        freed
    }

    /// Linux `tcp_prune_ofo_queue`: drops out-of-order data from the highest offset
    /// down until at least `need` charged bytes are freed or the store is empty.
    /// Returns the charged bytes freed.
    pub fn prune_ooo(&mut self, need: usize) -> usize {
        let before = self.ooo_charge;
        let (mut bytes, mut ranges) = (0u64, 0u64);
        while before - self.ooo_charge < need {
            let Some(mut entry) = self.ooo.last_entry() else {
                break;
            };
            let still = need - (before - self.ooo_charge);
            let v = entry.get_mut();
            // Truncate instead of dropping when the range holds twice what is needed
            // (one contiguous range can be a whole window). Saturating: a caller may
            // ask for everything (`usize::MAX`).
            if v.len() >= still.saturating_mul(2) {
                let keep = v.len() - still;
                bytes += still as u64;
                ranges += 1;
                self.ooo_charge -= v.capacity();
                self.ooo_bytes -= still;
                v.truncate(keep);
                v.shrink_to_fit();
                self.ooo_charge += v.capacity();
                break;
            }
            let v = entry.remove();
            bytes += v.len() as u64;
            ranges += 1;
            self.ooo_bytes -= v.len();
            self.ooo_charge -= charge(&v);
        }
        let freed = before - self.ooo_charge;
        if ranges > 0 {
            let st = &mut self.prune_stats;
            st.prunes += 1;
            st.pruned_bytes += bytes;
            st.pruned_ranges += ranges;
            st.prune_freed += freed as u64;
        }
        freed
    }

    /// The charge recomputed from the store (tests check it against the running sum).
    #[cfg(test)]
    pub(crate) fn ooo_charge_recomputed(&self) -> usize {
        self.ooo.values().map(charge).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::super::Arrival;
    use super::*;

    fn blocks(r: &mut RecvBuffer) -> Vec<(u64, u64)> {
        let mut v = vec![];
        r.sack_blocks(4, &mut v);
        v
    }

    /// Ranges grown segment by segment hold up to twice their bytes; after a collapse
    /// capacity is within 1/8 of the bytes plus the per-range overhead.
    #[test]
    fn collapse_bounds_capacity_per_byte() {
        let mut r = RecvBuffer::new(8 << 20, 64);
        let seg = [7u8; 1460];
        for hole in 0..8u64 {
            let base = 1000 + hole * 300_000;
            for k in 0..150u64 {
                r.insert(base + k * 1460, &seg);
            }
        }
        assert_eq!(r.ooo_charge(), r.ooo_charge_recomputed());
        let bytes = r.ooo_bytes();
        let before = r.ooo_charge();
        let freed = r.collapse_ooo();
        let after = r.ooo_charge();
        eprintln!("collapse: {bytes} B stored, charge {before} -> {after} B");
        assert_eq!(after, r.ooo_charge_recomputed());
        assert_eq!(before - after, freed);
        assert!(before > bytes * 5 / 4, "growth left slack to collapse");
        assert!(
            after <= bytes + bytes / 8 + r.ooo_ranges() * RANGE_OVERHEAD,
            "capacity/bytes after collapse: {after} / {bytes}"
        );
        // The data is intact.
        r.insert(0, &[7u8; 1000]);
        let mut buf = vec![0u8; 1 << 20];
        let n = r.read(&mut buf);
        assert_eq!(n, 1000 + 150 * 1460);
        assert!(buf[..n].iter().all(|&b| b == 7));
    }

    /// Pruning removes the highest data first, truncating a large range, and the SACK
    /// blocks shrink with it (reneging).
    #[test]
    fn prune_drops_from_the_top_and_sack_follows() {
        let mut r = RecvBuffer::new(8 << 20, 64);
        r.insert(100, &[1; 100]);
        r.insert(1000, &[2; 100_000]);
        assert_eq!(blocks(&mut r), vec![(1000, 101_000), (100, 200)]);
        let freed = r.prune_ooo(10_000);
        assert!(freed >= 10_000, "{freed}");
        assert_eq!(r.ooo_charge(), r.ooo_charge_recomputed());
        assert_eq!(r.ooo_bytes(), 100 + 90_000);
        assert_eq!(blocks(&mut r), vec![(100, 200), (1000, 91_000)]);
        // Asking for more than there is empties the store.
        r.prune_ooo(usize::MAX);
        assert_eq!((r.ooo_bytes(), r.ooo_charge(), r.ooo_ranges()), (0, 0, 0));
        assert!(blocks(&mut r).is_empty());
        assert_eq!(r.prune_stats.prunes, 2);
        assert_eq!(r.prune_stats.pruned_bytes, 100_100);
        // The peer retransmits; everything reassembles.
        r.insert(100, &[1; 100]);
        r.insert(1000, &[2; 100_000]);
        r.insert(0, &[0; 100]);
        r.insert(200, &[0; 800]);
        assert_eq!(r.readable(), 101_000);
    }

    /// At the budget, a segment that would allocate is dropped and counted; one that
    /// fits in existing capacity is not.
    #[test]
    fn allowance_refuses_growth() {
        let mut r = RecvBuffer::new(1 << 20, 64);
        r.set_mem_allowance(0);
        assert_eq!(r.insert(5000, &[1; 100]), Arrival::Dropped);
        assert_eq!(r.insert(0, &[1; 100]), Arrival::Dropped);
        assert_eq!(r.mem_dropped, 2);
        r.set_mem_allowance(usize::MAX);
        assert_eq!(r.insert(5000, &[1; 100]), Arrival::OutOfOrder);
        // Near the budget, growth is exact instead of doubling.
        let cap = r.ooo_charge();
        r.set_mem_allowance(200);
        assert_eq!(r.insert(5100, &[1; 150]), Arrival::OutOfOrder);
        assert!(r.ooo_charge() - cap <= 200, "{} -> {}", cap, r.ooo_charge());
        assert_eq!(r.ooo_charge(), r.ooo_charge_recomputed());
    }

    /// Unordered receive: pruned bytes already handed out are not handed out out of
    /// order again when retransmitted, and the stream still arrives whole in order,
    /// also when a prune cut a handed-out run in two.
    #[test]
    fn pruned_data_handed_out_early_is_delivered_again_in_order_only() {
        let data: Vec<u8> = (0..2000u32).map(|i| (i * 7) as u8).collect();
        let mut r = RecvBuffer::new(1 << 20, 64);
        r.insert(1000, &data[1000..2000]);
        let mut buf = vec![0u8; 4096];
        assert_eq!(r.read_ooo(&mut buf), Some((1000, 1000)));
        // Prune the top half of the handed-out run, then the peer resends it.
        r.prune_ooo(500);
        assert_eq!(r.ooo_bytes(), 500);
        r.insert(1500, &data[1500..2000]);
        assert!(
            !r.has_undelivered_ooo(),
            "not handed out twice out of order"
        );
        // Prune everything; the resent top is still not handed out again.
        r.prune_ooo(usize::MAX);
        r.insert(1000, &data[1000..1600]);
        assert!(!r.has_undelivered_ooo());
        // Fill the hole: in order the stream is whole.
        r.insert(0, &data[..1000]);
        r.insert(1600, &data[1600..]);
        let n = r.read(&mut buf);
        assert_eq!(&buf[..n], &data[..]);
    }

    /// Filling a hole joins queued ranges into the in-order queue; near the budget the
    /// queue grows exactly, so the total stays within what was allowed.
    #[test]
    fn a_hole_filled_near_the_budget_grows_the_queue_exactly() {
        let mut r = RecvBuffer::new(8 << 20, 64);
        // 200 kB unread in order; then a range that, joined, just overflows the
        // queue's capacity (doubling would take twice the capacity).
        for k in 0..200u64 {
            r.insert(k * 1000, &[3u8; 1000]);
        }
        let cap = r.ready_charge();
        let len = r.readable();
        let range = cap - len - 1000 + 500;
        r.insert((len + 1000) as u64, &vec![3u8; range]);
        let before = r.ooo_charge() + r.ready_charge();
        r.set_mem_allowance(1000);
        assert!(matches!(
            r.insert(len as u64, &[3u8; 1000]),
            Arrival::InOrder { .. }
        ));
        let after = r.ooo_charge() + r.ready_charge();
        assert_eq!(r.readable(), cap + 500);
        assert!(after <= before + 1000, "{before} -> {after}");
    }
}

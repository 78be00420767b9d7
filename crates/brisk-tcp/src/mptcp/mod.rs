//! MPTCP's data level (RFC 8684), sans-IO: the pieces a multipath connection needs
//! above its subflows, each a pure structure the connection will drive.
//!
//! - [`dsn`]: the data-sequence map (§3.3): per-subflow mappings on both sides, their
//!   validation as Linux's `get_mapping_status` (`subflow.c`) does, and the 32→64-bit
//!   expansion of DSNs and Data ACKs (§3.3.1).
//! - [`recv`]: the data-level receive buffer (reordering across subflows, the
//!   connection-level window of §3.3.4, DATA_FIN, the Data ACK, unordered reads).
//! - [`sched`]: schedulers as pure decisions over subflow views (minimum RTT with
//!   penalisation and opportunistic retransmission, Linux 6.x's linger-time default,
//!   round-robin, redundant, STTF).
//! - [`pm`]: the path manager, shaped like Linux's in-kernel one (`pm_kernel.c`):
//!   fullmesh and ndiffports, limits, the address table, ADD_ADDR retransmission.
//! - [`reinject`]: the seed's Table I retransmission policy (fast retransmit stays on
//!   its subflow; an RTO also re-injects the data on another subflow).
//!
//! - [`config`]: a connection's MPTCP knobs (`Config::mptcp`), with Linux 6.18's defaults.
//!
//! Nothing here owns a clock or a socket: the caller passes `now` and the subflows'
//! state as [`sched::SubflowView`]s and applies the decisions returned. Every table
//! has a limit, fixed at construction. Docs: `docs/mechanisms/mptcp.md`.

pub mod config;
pub mod control;
pub mod counters;
pub mod dsn;
pub mod join;
pub mod limits;
pub mod meta;
pub mod pm;
pub mod recv;
pub mod reinject;
pub mod sched;
pub mod ss_exit;
pub mod token;

pub use config::{MptcpConfig, MptcpConfigError};

/// Most subflows one connection holds: the initial one plus Linux's largest `subflows`
/// limit, 8 additional ones (`MPTCP_PM_ADDR_MAX`; `ip mptcp limits set subflows 9`
/// answers "limit greater than maximum (8)" on this machine's 6.18 kernel).
pub const MAX_SUBFLOWS: usize = 9;

/// A set of subflow indices (`0..MAX_SUBFLOWS`) as a bit mask.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct SubflowMask(pub u16);

impl SubflowMask {
    pub const EMPTY: SubflowMask = SubflowMask(0);

    /// The mask holding only `i` (indices at or above `MAX_SUBFLOWS` give the empty mask).
    pub fn one(i: usize) -> SubflowMask {
        if i < MAX_SUBFLOWS {
            SubflowMask(1 << i)
        } else {
            SubflowMask(0)
        }
    }

    pub fn contains(self, i: usize) -> bool {
        i < MAX_SUBFLOWS && self.0 & (1 << i) != 0
    }

    pub fn with(self, i: usize) -> SubflowMask {
        SubflowMask(self.0 | SubflowMask::one(i).0)
    }

    pub fn without(self, i: usize) -> SubflowMask {
        SubflowMask(self.0 & !SubflowMask::one(i).0)
    }

    /// Bits at or above `MAX_SUBFLOWS` are not members.
    fn members(self) -> u16 {
        self.0 & ((1 << MAX_SUBFLOWS) - 1)
    }

    pub fn is_empty(self) -> bool {
        self.members() == 0
    }

    pub fn len(self) -> usize {
        self.members().count_ones() as usize
    }

    /// The indices in the set, lowest first (one step per member, by bit scan).
    pub fn iter(self) -> impl Iterator<Item = usize> {
        let mut bits = self.members();
        std::iter::from_fn(move || {
            if bits == 0 {
                return None;
            }
            let i = bits.trailing_zeros() as usize;
            bits &= bits - 1;
            Some(i)
        })
    }
}

/// What [`deliver`] did with a subflow's in-order bytes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    /// Subflow bytes consumed (mapped and handed to the data level, whatever the
    /// receive buffer made of them).
    pub consumed: u64,
    /// Bytes the receive buffer stored (not duplicates, inside the window).
    pub stored: u64,
    /// A DATA_FIN closed the last mapping consumed and was passed on.
    pub data_fin: Option<recv::FinVerdict>,
    /// Runs stored out of order and runs wholly duplicate, one per mapping run (Linux
    /// counts per skb: `MPTcpExtOFOQueue`, `MPTcpExtDuplicateData`).
    pub out_of_order: u32,
    pub duplicate: u32,
}

/// Hands a subflow's in-order bytes, starting at subflow offset `sub_off`, to the data
/// level: each run goes to the DSN its mapping gives (one `RecvMap` lookup per mapping,
/// not per byte), a DATA_FIN ending a mapping is passed on, and mappings fully consumed
/// are dropped. Stops at the first byte no mapping covers: the subflow keeps it until
/// its mapping arrives (Linux `get_mapping_status` returning `MAPPING_EMPTY` waits the
/// same way).
pub fn deliver(
    map: &mut dsn::RecvMap,
    recv: &mut recv::DataRecv,
    sub_off: u64,
    bytes: &[u8],
) -> Delivered {
    let mut out = Delivered::default();
    let mut at = 0usize;
    while at < bytes.len() {
        let off = sub_off + at as u64;
        let Some((dsn, run)) = map.lookup(off) else {
            break;
        };
        let n = (run.min((bytes.len() - at) as u64)) as usize;
        match recv.insert(dsn, &bytes[at..at + n]) {
            recv::Insert::Stored { in_order } => {
                out.stored += n as u64;
                out.out_of_order += u32::from(!in_order);
            }
            // No room now (beyond the window, or one range too many while another
            // subflow's bytes are ahead): the bytes stay on the subflow and are
            // offered again once the Data ACK moves, rather than being lost (so
            // not Linux's `NoDSSInWindow`, which counts bytes dropped).
            recv::Insert::OutsideWindow | recv::Insert::RangesFull => break,
            recv::Insert::Duplicate => out.duplicate += 1,
            recv::Insert::AfterDataFin => {}
        }
        if n as u64 == run {
            if let Some(fin) = map.data_fin_after(off + n as u64 - 1) {
                out.data_fin = Some(recv.on_data_fin(fin));
            }
        }
        at += n;
    }
    out.consumed = at as u64;
    map.consumed(sub_off + at as u64);
    out
}

#[cfg(test)]
mod tests;

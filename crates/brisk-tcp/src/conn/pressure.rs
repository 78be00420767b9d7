//! The connection's side of endpoint-wide memory accounting (`crate::mem`): what it
//! holds, the budget its receive path may still allocate, and collapse / prune on the
//! endpoint's request (`recv::prune`, Linux `tcp_collapse_ofo_queue` and
//! `tcp_prune_ofo_queue`). A connection driven without an endpoint keeps the default
//! budget, unlimited, and is never pruned.

use super::recv::prune::PruneStats;
use super::Connection;

/// What one connection holds, in bytes (see `recv::prune` for what is charged).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemUsage {
    /// Out-of-order store, by allocated capacity plus per-range overhead (prunable).
    pub ooo: usize,
    /// In-order data not yet read, by allocated capacity (ACKed: never dropped).
    pub ready: usize,
    /// Data written and not yet acknowledged (reported, not charged: the application
    /// bounds it with `Config::send_buffer`).
    pub send: usize,
}

impl MemUsage {
    /// The bytes charged against the endpoint's limits.
    pub fn charged(&self) -> usize {
        self.ooo + self.ready
    }
}

impl Connection {
    /// What this connection holds now.
    pub fn mem_usage(&self) -> MemUsage {
        let r = &self.rcv.recvbuf;
        MemUsage {
            ooo: r.ooo_charge(),
            ready: r.ready_charge(),
            send: self.send_buffered(),
        }
    }

    /// Bytes the receive path may newly allocate until the next call (the endpoint
    /// sets it before each segment; `usize::MAX` means unlimited, the default).
    pub fn set_mem_allowance(&mut self, bytes: usize) {
        self.rcv.recvbuf.set_mem_allowance(bytes);
    }

    /// Compacts the out-of-order store; returns the charged bytes freed.
    pub fn collapse_ooo(&mut self) -> usize {
        self.rcv.recvbuf.collapse_ooo()
    }

    /// Charged bytes a collapse would free.
    pub fn ooo_slack(&self) -> usize {
        self.rcv.recvbuf.ooo_slack()
    }

    /// Drops out-of-order data from the top until `need` charged bytes are freed (or
    /// none is left); returns the bytes freed. Never touches in-order data.
    pub fn prune_ooo(&mut self, need: usize) -> usize {
        self.rcv.recvbuf.prune_ooo(need)
    }

    /// Collapse and prune work done on this connection.
    pub fn prune_stats(&self) -> PruneStats {
        self.rcv.recvbuf.prune_stats
    }
}

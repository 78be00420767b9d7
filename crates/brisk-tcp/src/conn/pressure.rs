//! The connection's side of endpoint-wide memory accounting (`crate::mem`): what it
//! holds, the budgets its receive path and its writes may still allocate, and
//! collapse / prune on the endpoint's request (`recv::prune`, Linux `tcp_collapse_ofo_queue` and
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
    /// The send buffer, by allocated capacity (bytes written by reference, with
    /// `write_shared`, cost nothing). Never dropped: writes are refused instead.
    pub send: usize,
}

impl MemUsage {
    /// The bytes charged against the endpoint's limits: receive and send alike, as
    /// Linux's `tcp_memory_allocated` counts both.
    pub fn charged(&self) -> usize {
        self.ooo + self.ready + self.send
    }
}

impl Connection {
    /// What this connection holds now.
    pub fn mem_usage(&self) -> MemUsage {
        if self.mp.is_some() {
            // Its subflows' buffers and the data level's (`conn::mp_mem`).
            return self.mp_mem_usage().unwrap_or_default();
        }
        let r = &self.stream.recvbuf;
        MemUsage {
            ooo: r.ooo_charge(),
            ready: r.ready_charge(),
            send: self.stream.sendbuf.mem_charge(),
        }
    }

    /// Bytes writes may newly allocate in the send buffer until the next call (the
    /// endpoint sets it before lending the connection to the application; `usize::MAX`
    /// means unlimited, the default). A write beyond it is taken in part or refused, as
    /// one beyond a full send buffer (Linux `sk_stream_memory_free` false: the socket is
    /// not writable), and `Event::Writable` follows once memory allows.
    #[inline]
    pub fn set_send_allowance(&mut self, bytes: usize) {
        if self.mp.is_some() {
            self.mp_set_send_allowance(bytes);
        }
        self.stream.sendbuf.set_mem_allowance(bytes);
    }

    /// Whether a write was cut short by the send allowance since the last call; the
    /// connection then wants `Event::Writable` (`Connection::mem_writable`).
    #[inline]
    pub fn take_send_mem_limited(&mut self) -> bool {
        if self.mp.is_some() {
            return self.mp_take_send_mem_limited();
        }
        self.stream.sendbuf.take_mem_limited()
    }

    /// Memory was freed after a write was refused for it: `Event::Writable` if the
    /// application still waits for room.
    pub fn mem_writable(&mut self) {
        if self.mp.is_some() {
            return self.mp_mem_writable();
        }
        if self.stream.writable_wanted && self.send_capacity() > 0 {
            self.stream.writable_wanted = false;
            self.push_event(crate::event::Event::Writable);
        }
    }

    /// Bytes the receive path may newly allocate until the next call (the endpoint
    /// sets it before each segment; `usize::MAX` means unlimited, the default).
    pub fn set_mem_allowance(&mut self, bytes: usize) {
        if self.mp.is_some() {
            self.mp_set_mem_allowance(bytes);
        }
        self.stream.recvbuf.set_mem_allowance(bytes);
    }

    /// Compacts the out-of-order store; returns the charged bytes freed.
    pub fn collapse_ooo(&mut self) -> usize {
        if self.mp.is_some() {
            return self.mp_collapse_ooo();
        }
        self.stream.recvbuf.collapse_ooo()
    }

    /// Charged bytes a collapse would free.
    pub fn ooo_slack(&self) -> usize {
        if self.mp.is_some() {
            return self.mp_ooo_slack();
        }
        self.stream.recvbuf.ooo_slack()
    }

    /// Drops out-of-order data from the top until `need` charged bytes are freed (or
    /// none is left); returns the bytes freed. Never touches in-order data.
    pub fn prune_ooo(&mut self, need: usize) -> usize {
        if self.mp.is_some() {
            return self.mp_prune_ooo(need);
        }
        self.stream.recvbuf.prune_ooo(need)
    }

    /// Collapse and prune work done on this connection.
    pub fn prune_stats(&self) -> PruneStats {
        if self.mp.is_some() {
            return self.mp_prune_stats().unwrap_or_default();
        }
        self.stream.recvbuf.prune_stats
    }
}

//! An MPTCP connection's side of the endpoint's memory accounting (`crate::mem`,
//! `conn::pressure`): what it holds is its subflows' buffers and the data level's,
//! not the outer connection's, whose stream stays dormant (`conn/mp.rs`). Linux
//! charges the same bytes: each subflow is a TCP socket whose queues count in
//! `tcp_memory_allocated`, and the MPTCP socket's own send and receive queues are
//! charged to it (`__mptcp_rmem`, `sk_wmem_queued` via `sk_mem_charge` in
//! `protocol.c`).
//!
//! Before, the endpoint read only the outer connection's (empty) buffers, so an
//! MPTCP connection was charged nothing however much it held: the bound the
//! endpoint's limits promise did not hold for MPTCP. What is charged:
//!
//! - `ooo`: the subflows' out-of-order stores, prunable as a plain connection's
//!   (`prune_ooo` and `collapse_ooo` go to the subflows, largest holder first);
//! - `ready`: the subflows' in-order bytes not yet moved to the data level, the
//!   data-level receive ring (its out-of-order bytes included: they are not pruned,
//!   their subflows have acknowledged them) and the drain scratch;
//! - `send`: the data-level send buffer and every subflow's, each with its jumps and
//!   its one-segment buffer (`SendBuffer::mem_charge_all`).
//!
//! The allowances the endpoint sets go where the bytes are allocated: the receive
//! allowance to every subflow (one segment arrives on one of them), the send
//! allowance to the data-level send buffer (the application's writes land there).

use super::pressure::MemUsage;
use super::Connection;

impl Connection {
    /// What an MPTCP connection holds (`None`: not MPTCP).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_mem_usage(&self) -> Option<MemUsage> {
        let m = self.mp.as_deref()?;
        let mut u = MemUsage {
            ooo: 0,
            ready: m.recv.as_ref().map_or(0, |r| r.memory()) + m.scratch.capacity(),
            send: m.snd.buf.mem_charge_all(),
        };
        for s in &m.subs {
            let r = &s.conn.stream.recvbuf;
            u.ooo += r.ooo_charge();
            u.ready += r.ready_charge();
            u.send += s.conn.stream.sendbuf.mem_charge_all();
        }
        Some(u)
    }

    /// The receive allowance, to every subflow (`None`: not MPTCP).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_set_mem_allowance(&mut self, bytes: usize) -> Option<()> {
        let m = self.mp.as_deref_mut()?;
        for s in &mut m.subs {
            s.conn.set_mem_allowance(bytes);
        }
        Some(())
    }

    /// The send allowance, to the data-level send buffer (`None`: not MPTCP).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_set_send_allowance(&mut self, bytes: usize) -> Option<()> {
        let m = self.mp.as_deref_mut()?;
        m.snd.buf.set_mem_allowance(bytes);
        Some(())
    }

    /// Whether a data-level write was cut short by the send allowance.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_take_send_mem_limited(&mut self) -> bool {
        self.mp
            .as_deref_mut()
            .is_some_and(|m| m.snd.buf.take_mem_limited())
    }

    /// Memory was freed after a data-level write was refused for it.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_mem_writable(&mut self) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        if m.snd.writable_wanted && m.snd.capacity() > 0 && !m.snd.fin_queued {
            m.snd.writable_wanted = false;
            self.push_event(crate::event::Event::Writable);
        }
    }

    /// Charged out-of-order bytes a collapse of the subflows' stores would free.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_ooo_slack(&self) -> usize {
        self.mp.as_deref().map_or(0, |m| {
            m.subs
                .iter()
                .map(|s| s.conn.stream.recvbuf.ooo_slack())
                .sum()
        })
    }

    /// Collapses every subflow's out-of-order store; returns the bytes freed.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_collapse_ooo(&mut self) -> usize {
        self.mp.as_deref_mut().map_or(0, |m| {
            m.subs
                .iter_mut()
                .map(|s| s.conn.stream.recvbuf.collapse_ooo())
                .sum()
        })
    }

    /// Prunes the subflows' out-of-order data, largest store first, until `need`
    /// bytes are freed or none is left (each subflow prunes from its top, as a plain
    /// connection does; the mappings of what it dropped stay, and the retransmitted
    /// segments find them as duplicates). Returns the bytes freed.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_prune_ooo(&mut self, need: usize) -> usize {
        let Some(m) = self.mp.as_deref_mut() else {
            return 0;
        };
        let mut freed = 0;
        // Bounded by the subflow count: each round empties one store or meets `need`.
        for _ in 0..m.subs.len() {
            if freed >= need {
                break;
            }
            let Some(s) = m
                .subs
                .iter_mut()
                .filter(|s| s.conn.stream.recvbuf.ooo_charge() > 0)
                .max_by_key(|s| s.conn.stream.recvbuf.ooo_charge())
            else {
                break;
            };
            freed += s.conn.stream.recvbuf.prune_ooo(need - freed);
        }
        freed
    }

    /// Collapse and prune work done on the subflows.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_prune_stats(&self) -> Option<super::recv::prune::PruneStats> {
        let m = self.mp.as_deref()?;
        let mut t = super::recv::prune::PruneStats::default();
        for s in &m.subs {
            let p = s.conn.stream.recvbuf.prune_stats;
            t.collapses += p.collapses;
            t.collapsed_bytes += p.collapsed_bytes;
            t.collapse_freed += p.collapse_freed;
            t.prunes += p.prunes;
            t.pruned_bytes += p.pruned_bytes;
            t.pruned_ranges += p.pruned_ranges;
            t.prune_freed += p.prune_freed;
        }
        Some(t)
    }
}

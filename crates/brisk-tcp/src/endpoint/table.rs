//! The connection table: slots and handles, the 4-tuple lookup, reaping, the ready
//! queue, the timer heap's entries, events and the memory waiters.

use super::*;

impl Endpoint {
    pub(super) fn slot_mut(&mut self, h: ConnHandle) -> Option<&mut Slot> {
        self.slots.get_mut(h.0 as usize)?.as_deref_mut()
    }

    pub(super) fn insert(&mut self, conn: Connection, listener: Option<u16>) -> ConnHandle {
        let key = (conn.local().port(), conn.remote());
        let slot = Box::new(Slot {
            conn,
            listener,
            queued: false,
            in_ready: false,
            mem_wait: false,
            closed: false,
            mp_token: None,
            tfo_pending: None,
        });
        // FIFO reuse keeps a just-freed handle from being reissued at once.
        let idx = match self.free.pop_front() {
            Some(i) => {
                self.slots[i as usize] = Some(slot);
                i
            }
            None => {
                self.slots.push(Some(slot));
                (self.slots.len() - 1) as u32
            }
        };
        let h = ConnHandle(idx);
        self.table.insert(key, h);
        self.last_hit = None;
        self.live += 1;
        h
    }

    /// The connection of `(local port, remote)`, through the one-entry cache.
    pub(super) fn lookup(&mut self, port: u16, remote: SocketAddr) -> Option<ConnHandle> {
        if let Some((k, h)) = self.last_hit {
            if k == (port, remote) {
                return Some(h);
            }
        }
        let h = *self.table.get(&(port, remote))?;
        self.last_hit = Some(((port, remote), h));
        Some(h)
    }

    pub(super) fn reap(&mut self, h: ConnHandle) {
        let Some(mut slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.take()) else {
            return;
        };
        let key = (slot.conn.local().port(), slot.conn.remote());
        if self.table.get(&key) == Some(&h) {
            self.table.remove(&key);
            self.last_hit = None;
        }
        if let Some(port) = slot.listener {
            if let Some(l) = self.listeners.get_mut(&port) {
                if slot.queued {
                    l.accept.retain(|&x| x != h);
                } else {
                    l.syn_queue = l.syn_queue.saturating_sub(1);
                }
            }
        }
        if let Some(port) = slot.tfo_pending {
            self.tfo_forget(port);
        }
        self.live -= 1;
        if let Some(flow) = slot.conn.flow_cc_mut().flow() {
            self.host_cc.get_mut().leave(flow);
        }
        if slot.mp_token.is_some() || slot.conn.is_mptcp() {
            self.mp_forget(h, &mut slot);
        }
        self.timers.disarm(h.0);
        if self.lent == Some(h.0) {
            // A new connection in this slot must get its own allowance.
            self.lent = None;
        }
        if slot.mem_wait {
            self.mem_waiters.retain(|&x| x != h);
        }
        self.free.push_back(h.0);
        self.mem.remove(h.0, &mut self.stats);
    }

    pub(super) fn mark_ready(&mut self, h: ConnHandle) {
        if let Some(slot) = self
            .slots
            .get_mut(h.0 as usize)
            .and_then(|s| s.as_deref_mut())
        {
            slot.mark_ready(h, &mut self.ready);
        }
    }

    /// After any input to a connection: queue it for output, collect its events and
    /// register its deadline.
    pub(super) fn touch(&mut self, h: ConnHandle) {
        self.mark_ready(h);
        self.touch_events_and_timer(h);
    }

    /// Inline (always: it is called from four places): after every poll and every
    /// segment (about 890 000 calls in `bench sim`'s 2 s run), and its call and
    /// register saves were a quarter of its cost.
    #[inline(always)]
    pub(super) fn touch_events_and_timer(&mut self, h: ConnHandle) {
        let Some(slot) = self.slots.get_mut(h.0 as usize).and_then(|s| s.as_mut()) else {
            return;
        };
        // Passive connections report to the application only once accepted.
        let (became_established, closed_unaccepted) = if !slot.queued && slot.conn.has_events() {
            take_events(slot, h, &mut self.events)
        } else {
            (false, false)
        };
        let changed = self.mem.update(h.0, slot.conn.mem_usage(), &mut self.stats);
        if slot.conn.take_send_mem_limited() {
            self.stats.mem_send_limited += 1;
            if !slot.mem_wait {
                slot.mem_wait = true;
                self.mem_waiters.push_back(h);
            }
        }
        self.timers.arm(h.0, slot.conn.poll_timeout());
        // Waiters wake only when the total changes (so only after an update).
        if changed && !self.mem_waiters.is_empty() && !self.mem.under_pressure() {
            self.wake_mem_waiters();
        }
        if became_established || closed_unaccepted {
            self.after_events(h, became_established);
        }
    }

    /// The total left pressure: connections whose writes were refused for memory get
    /// `Event::Writable` (if they still want it), collected at their next poll.
    #[cold]
    #[inline(never)]
    pub(super) fn wake_mem_waiters(&mut self) {
        if self.mem.total() >= self.mem.high() {
            return;
        }
        while let Some(h) = self.mem_waiters.pop_front() {
            if let Some(slot) = self
                .slots
                .get_mut(h.0 as usize)
                .and_then(|s| s.as_deref_mut())
            {
                slot.mem_wait = false;
                slot.conn.mem_writable();
                slot.mark_ready(h, &mut self.ready);
            }
        }
    }

    /// `touch_events_and_timer`'s rare end: a passive connection became established
    /// (queue it for accept) or closed before it was accepted (reap it).
    #[cold]
    #[inline(never)]
    pub(super) fn after_events(&mut self, h: ConnHandle, became_established: bool) {
        if became_established {
            let Some(slot) = self.slot_mut(h) else {
                return;
            };
            slot.queued = true;
            if let Some(port) = slot.listener {
                if let Some(l) = self.listeners.get_mut(&port) {
                    l.syn_queue = l.syn_queue.saturating_sub(1);
                    l.accept.push_back(h);
                    self.events.push_back((h, Event::Incoming { port }));
                }
            }
        } else {
            self.reap(h);
        }
    }

    /// Re-reads what the connection last lent by `conn_mut` holds, so that the next
    /// allowance sees its writes.
    #[inline]
    pub(super) fn settle_lent(&mut self) {
        if let Some(i) = self.lent.take() {
            if let Some(slot) = self.slots.get(i as usize).and_then(|s| s.as_deref()) {
                let _ = self.mem.update(i, slot.conn.mem_usage(), &mut self.stats);
            }
        }
    }
}

/// Moves a connection's events to the endpoint's queue (`slot` not queued for
/// accept). A passive connection not yet accepted reports none: returns whether it
/// became established (its later events stay for after accept) and whether it closed.
#[inline(never)]
fn take_events(
    slot: &mut Slot,
    h: ConnHandle,
    events: &mut VecDeque<(ConnHandle, Event)>,
) -> (bool, bool) {
    let unaccepted = slot.listener.is_some() && !slot.queued;
    let mut closed_unaccepted = false;
    let mut became_established = false;
    while let Some(ev) = slot.conn.poll_event() {
        if unaccepted {
            match ev {
                Event::Connected => became_established = true,
                Event::Closed(_) => closed_unaccepted = true,
                _ => {}
            }
            if became_established {
                // Keep data/FIN events for after accept.
                break;
            }
        } else if events.len() < MAX_EVENTS {
            events.push_back((h, ev));
        }
    }
    (became_established, closed_unaccepted)
}

impl crate::mem::Conns for Vec<Option<Box<Slot>>> {
    fn conn_mut(&mut self, idx: u32) -> Option<&mut Connection> {
        self.get_mut(idx as usize)?.as_mut().map(|s| &mut s.conn)
    }
}

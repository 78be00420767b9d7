//! The endpoint's deadlines: a min-heap of `(deadline, slot, generation)` with lazy
//! invalidation, and one registration per slot.
//!
//! Each slot registers at most one deadline at a time, its earliest known one; an
//! entry that surfaces early (the connection's deadline moved later) simply lets the
//! connection re-register its current one. A registration that is superseded (an
//! earlier deadline registered since, the slot disarmed, or its entry fired) leaves
//! its entry in the heap as stale.
//!
//! An entry is live only if it matches the slot's registration in *both* deadline and
//! generation. Matching on the deadline alone (issue 29) let a slot hold many live
//! copies: after a short timer fired, the connection re-registered its long deadline
//! (keepalive, FIN-WAIT-2) and pushed it again, the older copy equal to it, so
//! compaction kept every copy — 305 933 entries for 1000 FIN-WAIT-2 connections whose
//! peer trickled a byte every 50 ms. With a generation per registration, each slot
//! has at most one live entry.
//!
//! Bound: after every operation the heap holds at most `2 × armed + HEAP_SLACK`
//! entries (`armed`: slots with a registration). When an operation would leave more,
//! the stale entries are dropped in one O(len) pass. Each operation makes at most one
//! entry stale and a pass removes at least `armed + HEAP_SLACK + 1` stale entries, so
//! the passes cost amortised O(1) per operation; registration itself is one heap push.
//!
//! Linux has no such pass: its timers are per socket (`sk_reset_timer` on a timer
//! wheel), re-armed in place. A wheel would quantise brisk's nanosecond deadlines, and
//! the heap orders ties by slot, which keeps runs reproducible.

use brisk_time::Instant;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

/// Stale entries tolerated beyond twice the armed slots.
pub(crate) const HEAP_SLACK: usize = 64;

/// One slot's registration. `gen == 0`: none.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Reg {
    at: Instant,
    gen: u32,
}

/// See the module doc.
#[derive(Debug, Default)]
pub(crate) struct TimerHeap {
    /// `(deadline, slot, generation)`: 16 bytes, as the `(deadline, slot)` it replaced
    /// (the generation fills what was padding). Ties order by slot, then generation
    /// (only one of which is live).
    heap: BinaryHeap<Reverse<(Instant, u32, u32)>>,
    regs: Vec<Reg>,
    armed: usize,
    /// The generation of the last registration. Wraps, skipping 0. A stale entry
    /// could only pass for live if its slot registered the same deadline exactly 2^32
    /// registrations later while it stayed in the heap; it would then fire the slot at
    /// its true deadline, and the bound would count it as one extra entry.
    gen: u32,
}

impl TimerHeap {
    /// Registers `deadline` for `slot` if it is earlier than the slot's registration
    /// (or the slot has none). A later deadline is not registered: the earlier entry
    /// surfaces first and the slot re-registers then.
    #[inline]
    pub(crate) fn arm(&mut self, slot: u32, deadline: Option<Instant>) {
        let Some(d) = deadline else { return };
        let i = slot as usize;
        if i >= self.regs.len() {
            self.regs.resize(i + 1, Reg::default());
        }
        let r = &mut self.regs[i];
        if r.gen != 0 && d >= r.at {
            return;
        }
        if r.gen == 0 {
            self.armed += 1;
        }
        self.gen = self.gen.wrapping_add(1).max(1);
        *r = Reg {
            at: d,
            gen: self.gen,
        };
        self.heap.push(Reverse((d, slot, self.gen)));
        self.keep_bound();
    }

    /// Forgets `slot`'s registration (the slot is gone); its entry becomes stale.
    pub(crate) fn disarm(&mut self, slot: u32) {
        if let Some(r) = self.regs.get_mut(slot as usize) {
            if r.gen != 0 {
                *r = Reg::default();
                self.armed -= 1;
                self.keep_bound();
            }
        }
    }

    /// The earliest entry's deadline (possibly a stale entry's: an early wake-up).
    #[inline]
    pub(crate) fn peek(&self) -> Option<Instant> {
        self.heap.peek().map(|Reverse((t, _, _))| *t)
    }

    /// Pops the next live registration due at `now` and returns its slot, now
    /// unregistered; stale entries on the way are dropped. `None`: nothing is due.
    pub(crate) fn pop_due(&mut self, now: Instant) -> Option<u32> {
        while let Some(&Reverse((t, slot, gen))) = self.heap.peek() {
            if t > now {
                return None;
            }
            self.heap.pop();
            let r = &mut self.regs[slot as usize];
            if r.gen == gen && r.at == t {
                *r = Reg::default();
                self.armed -= 1;
                self.keep_bound();
                return Some(slot);
            }
        }
        None
    }

    /// Entries in the heap, live and stale.
    pub(crate) fn len(&self) -> usize {
        self.heap.len()
    }

    /// Slots with a registration.
    #[cfg(test)]
    pub(crate) fn armed(&self) -> usize {
        self.armed
    }

    /// Restores `len <= 2 × armed + HEAP_SLACK` if an operation broke it.
    #[inline]
    fn keep_bound(&mut self) {
        if self.heap.len() > 2 * self.armed + HEAP_SLACK {
            self.compact();
        }
    }

    /// Drops every stale entry (those `pop_due` would skip), so timeouts are handled
    /// in the same order as before; `peek` merely stops reporting the early wake-ups
    /// they caused.
    #[cold]
    #[inline(never)]
    fn compact(&mut self) {
        let regs = &self.regs;
        self.heap.retain(|&Reverse((t, slot, gen))| {
            let r = regs[slot as usize];
            r.gen == gen && r.at == t
        });
        debug_assert_eq!(self.heap.len(), self.armed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[derive(Clone, Debug)]
    enum Op {
        /// Register `slot` at now + `after` ms.
        Arm(u32, u64),
        /// The slot is gone.
        Disarm(u32),
        /// Advance the clock by ms and fire what is due; each fired slot re-registers
        /// at now + its `again` ms (a connection's remaining long deadline), if any.
        Fire(u64, Option<u64>),
    }

    fn op(n: u32) -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (0..n, 0u64..100_000).prop_map(|(s, a)| Op::Arm(s, a)),
            1 => (0..n).prop_map(Op::Disarm),
            2 => (0u64..2_000, proptest::option::of(0u64..100_000))
                .prop_map(|(a, b)| Op::Fire(a, b)),
        ]
    }

    proptest! {
        /// Arbitrary register / cancel / fire traffic over `n` slots: the heap never
        /// holds more than `2 × armed + HEAP_SLACK` (so `2n + 64`) entries, and
        /// firing agrees with a model of the registrations.
        #[test]
        fn heap_stays_within_its_bound(
            (n, ops) in (1u32..40).prop_flat_map(|n| (Just(n), proptest::collection::vec(op(n), 0..2_000)))
        ) {
            let mut h = TimerHeap::default();
            let mut model: Vec<Option<Instant>> = vec![None; n as usize];
            let mut now = Instant::from_millis(0);
            for op in ops {
                match op {
                    Op::Arm(s, a) => {
                        let d = now + brisk_time::Duration::from_millis(a);
                        h.arm(s, Some(d));
                        let m = &mut model[s as usize];
                        if m.is_none_or(|r| d < r) {
                            *m = Some(d);
                        }
                    }
                    Op::Disarm(s) => {
                        h.disarm(s);
                        model[s as usize] = None;
                    }
                    Op::Fire(a, again) => {
                        now += brisk_time::Duration::from_millis(a);
                        let mut fired = Vec::new();
                        while let Some(s) = h.pop_due(now) {
                            prop_assert!(h.len() <= 2 * h.armed() + HEAP_SLACK);
                            fired.push(s);
                        }
                        let mut want: Vec<u32> = (0..n)
                            .filter(|&s| model[s as usize].is_some_and(|d| d <= now))
                            .collect();
                        fired.sort_unstable();
                        want.sort_unstable();
                        prop_assert_eq!(&fired, &want);
                        for s in fired {
                            model[s as usize] = None;
                            if let Some(b) = again {
                                let d = now + brisk_time::Duration::from_millis(b + 1);
                                h.arm(s, Some(d));
                                model[s as usize] = Some(d);
                            }
                        }
                    }
                }
                let armed = model.iter().filter(|m| m.is_some()).count();
                prop_assert_eq!(h.armed(), armed);
                prop_assert!(h.len() <= 2 * armed + HEAP_SLACK, "{} entries, {} armed", h.len(), armed);
                prop_assert!(h.len() <= 2 * n as usize + HEAP_SLACK);
                // The earliest registration is never later than what `peek` reports.
                let earliest = model.iter().flatten().min().copied();
                if let Some(e) = earliest {
                    prop_assert!(h.peek().is_some_and(|p| p <= e));
                }
            }
        }
    }

    /// The issue-29 pattern on its own: a short timer below a long deadline, fired
    /// over and over. Each cycle re-registers the same long deadline; the copies must
    /// not accumulate.
    #[test]
    fn re_registering_the_same_deadline_keeps_one_live_entry() {
        let mut h = TimerHeap::default();
        let long = Instant::from_millis(60_000);
        for s in 0..10 {
            h.arm(s, Some(long));
        }
        let mut max = 0;
        for k in 1..10_000u64 {
            let now = Instant::from_millis(k * 5);
            for s in 0..10 {
                h.arm(s, Some(now)); // the short timer (delayed ACK)
            }
            while let Some(s) = h.pop_due(now) {
                h.arm(
                    s,
                    Some(long.max(now + brisk_time::Duration::from_millis(1))),
                );
            }
            max = max.max(h.len());
        }
        assert!(max <= 2 * 10 + HEAP_SLACK, "heap reached {max} entries");
    }
}

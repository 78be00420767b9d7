//! Which groups a coupled controller may couple: RFC 8382 §3.2.2 (spec §5.4, "a
//! coupled congestion control MAY decide only to couple groups that remain stable,
//! say grouped together 90 % of the time").
//!
//! The draft gives the rule in one sentence and no window. Ours (docs/mechanisms/
//! sbd.md, "Groups for the FSE"):
//! - **Pairs, not group numbers.** The grouper's group numbers are not stable from one
//!   decision to the next (they follow sort order), so what is counted is, for each
//!   pair of flows, in how many of the last `window` decisions both were in one group.
//! - **Stable pair**: together in at least `share` (0.9) of the last `window`
//!   decisions (default 20, 7 s at T = 350 ms). A flow that joined less than
//!   `share·window` decisions ago has no stable pair yet.
//! - **Coupled groups**: the connected components of the stable pairs (single
//!   linkage, the same reading as the grouper's, S4), only components of two or more
//!   flows; a flow without a stable pair stays uncoupled. A component is named by its
//!   smallest slot, so a group keeps its name while its smallest member stays.
//!
//! Bounded: the pair counts cover the first [`MAX_STABLE_FLOWS`] detector slots (the
//! draft's grouping is meant for 10–20 flows); flows in later slots are never coupled.
//! Everything is allocated in [`Stability::new`]; a decision costs O(n²) over those
//! slots, once per T, not per packet.

/// Most detector slots the stability filter follows (pairs: 64·63/2).
pub const MAX_STABLE_FLOWS: usize = 64;

/// Default window, decisions (7 s at T = 350 ms).
pub const DEFAULT_WINDOW: usize = 20;

/// Default share of the window a pair must be together in (§3.2.2's 90 %).
pub const DEFAULT_SHARE: f64 = 0.9;

/// The stability filter's state (module doc).
#[derive(Clone, Debug)]
pub struct Stability {
    n: usize,
    window: usize,
    /// Together-count a pair needs: ⌈share·window⌉.
    need: u16,
    /// The last `window` decisions' groups, `window × n`, oldest overwritten first.
    ring: Vec<Option<u32>>,
    head: usize,
    /// Together-counts, `n × n` (only `i < j` used).
    together: Vec<u16>,
    /// Union-find parents, for the components.
    parent: Vec<u16>,
    /// Each slot's coupled group (its component's smallest slot), if any.
    coupled: Vec<Option<u32>>,
    /// Times the coupled groups changed.
    changes: u64,
}

impl Stability {
    /// `slots`: the detector's table size (capped at [`MAX_STABLE_FLOWS`]);
    /// `window` ≥ 1 decisions; `share` in (0, 1].
    pub fn new(slots: usize, window: usize, share: f64) -> Self {
        let n = slots.min(MAX_STABLE_FLOWS);
        let window = window.max(1);
        let need = ((share.clamp(0.0, 1.0) * window as f64).ceil() as u16).max(1);
        Stability {
            n,
            window,
            need,
            ring: vec![None; window * n],
            head: 0,
            together: vec![0; n * n],
            parent: (0..n as u16).collect(),
            coupled: vec![None; n],
            changes: 0,
        }
    }

    /// A slot was (re)used by a new flow, or freed: its history goes.
    pub fn reset(&mut self, slot: usize) {
        if slot >= self.n {
            return;
        }
        for d in 0..self.window {
            self.ring[d * self.n + slot] = None;
        }
        for j in 0..self.n {
            self.together[slot * self.n + j] = 0;
            self.together[j * self.n + slot] = 0;
        }
    }

    /// One grouping decision: `group_of(slot)` is the decision's group of each slot
    /// (`None`: not grouped or not tracked). Returns whether the coupled groups changed.
    pub fn record(&mut self, group_of: impl Fn(usize) -> Option<u32>) -> bool {
        let n = self.n;
        let base = self.head * n;
        // The decision that leaves the window, then the new one.
        for i in 0..n {
            let old_i = self.ring[base + i];
            if old_i.is_none() {
                continue;
            }
            for j in i + 1..n {
                if old_i == self.ring[base + j] {
                    let c = &mut self.together[i * n + j];
                    *c = c.saturating_sub(1);
                }
            }
        }
        for i in 0..n {
            self.ring[base + i] = group_of(i);
        }
        for i in 0..n {
            let gi = self.ring[base + i];
            if gi.is_none() {
                continue;
            }
            for j in i + 1..n {
                if gi == self.ring[base + j] {
                    let c = &mut self.together[i * n + j];
                    *c = c.saturating_add(1);
                }
            }
        }
        self.head = (self.head + 1) % self.window;
        self.components()
    }

    fn find(&mut self, mut x: u16) -> u16 {
        while self.parent[x as usize] != x {
            let p = self.parent[x as usize];
            self.parent[x as usize] = self.parent[p as usize];
            x = p;
        }
        x
    }

    /// Recomputes the coupled groups; whether any slot's group changed.
    fn components(&mut self) -> bool {
        let n = self.n;
        for (i, p) in self.parent.iter_mut().enumerate() {
            *p = i as u16;
        }
        for i in 0..n {
            for j in i + 1..n {
                if self.together[i * n + j] >= self.need {
                    let (a, b) = (self.find(i as u16), self.find(j as u16));
                    // The smaller slot is the root, so a root is its component's minimum.
                    let (lo, hi) = if a < b { (a, b) } else { (b, a) };
                    self.parent[hi as usize] = lo;
                }
            }
        }
        let mut changed = false;
        for i in 0..n {
            let root = self.find(i as u16) as usize;
            // In a component of two or more: the root, or a slot whose root is another.
            let grouped = root != i || (i + 1..n).any(|j| self.parent[j] as usize == i);
            let g = if grouped { Some(root as u32) } else { None };
            if self.coupled[i] != g {
                self.coupled[i] = g;
                changed = true;
            }
        }
        if changed {
            self.changes += 1;
        }
        changed
    }

    /// The slot's coupled group (its component's smallest slot), if it is in a
    /// stable group of two or more.
    pub fn coupled_group(&self, slot: usize) -> Option<u32> {
        self.coupled.get(slot).copied().flatten()
    }

    /// How often the coupled groups changed.
    pub fn changes(&self) -> u64 {
        self.changes
    }

    /// Decisions a pair must be together in, of the last [`Self::window`].
    pub fn need(&self) -> u16 {
        self.need
    }

    pub fn window(&self) -> usize {
        self.window
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_together_in_90_percent_of_the_window_are_coupled() {
        let mut s = Stability::new(8, 20, 0.9);
        assert_eq!(s.need(), 18);
        // Slots 0,1,2 always in one group; 3 with them every other decision; 4 and 5
        // together; 6 alone; 7 never grouped.
        for d in 0..40 {
            s.record(|i| match i {
                0..=2 => Some(1),
                3 if d % 2 == 0 => Some(1),
                3 => Some(2),
                4 | 5 => Some(7),
                6 => Some(9),
                _ => None,
            });
            if d < 17 {
                assert_eq!(s.coupled_group(0), None, "not yet stable at {d}");
            }
        }
        let g: Vec<_> = (0..8).map(|i| s.coupled_group(i)).collect();
        assert_eq!(
            g,
            [
                Some(0),
                Some(0),
                Some(0),
                None,
                Some(4),
                Some(4),
                None,
                None
            ]
        );
        // 4 and 5 part: after 3 decisions apart the pair is below 18 of 20.
        for _ in 0..3 {
            s.record(|i| match i {
                0..=2 => Some(1),
                4 => Some(7),
                5 => Some(8),
                _ => None,
            });
        }
        assert_eq!((s.coupled_group(4), s.coupled_group(5)), (None, None));
        assert_eq!(s.coupled_group(2), Some(0));
        // A slot reused by a new flow starts with no history.
        s.reset(1);
        s.record(|i| if i <= 2 { Some(1) } else { None });
        assert_eq!((s.coupled_group(1), s.coupled_group(2)), (None, Some(0)));
        assert!(s.changes() >= 3);
    }

    #[test]
    fn chains_of_stable_pairs_are_one_group_and_the_table_is_capped() {
        let mut s = Stability::new(10_000, 2, 1.0);
        assert_eq!(s.coupled.len(), MAX_STABLE_FLOWS);
        // 5–6 together in both decisions of the window; 6–9 in one of the two.
        s.record(|i| if [5, 6].contains(&i) { Some(1) } else { None });
        s.record(|i| {
            if [5, 6, 9].contains(&i) {
                Some(2)
            } else {
                None
            }
        });
        assert_eq!((s.coupled_group(5), s.coupled_group(6)), (Some(5), Some(5)));
        assert_eq!(s.coupled_group(9), None);
        // 6–9 and 5–6 stable, 5–9 too now: one group named by its smallest slot.
        s.record(|i| {
            if [5, 6, 9].contains(&i) {
                Some(4)
            } else {
                None
            }
        });
        assert_eq!(s.coupled_group(9), Some(5));
        // A chain (share 0.5): 1–2 together in 5 of 10, 2–3 in the other 5, 1 and 3
        // never: single linkage makes them one group.
        let mut c = Stability::new(8, 10, 0.5);
        for d in 0..10 {
            c.record(|i| match (i, d < 5) {
                (1, _) => Some(1),
                (2, true) => Some(1),
                (2, false) | (3, _) => Some(2),
                _ => None,
            });
        }
        let g: Vec<_> = (1..4).map(|i| c.coupled_group(i)).collect();
        assert_eq!(g, [Some(1), Some(1), Some(1)]);
        assert_eq!(s.coupled_group(10_000), None);
    }
}

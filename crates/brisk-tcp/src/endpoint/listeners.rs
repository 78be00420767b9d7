//! An endpoint's listeners by port: a vector sorted by port, searched by bisection.
//!
//! Most endpoints listen on one port or none; a `HashMap` reserves four buckets on its
//! first insert (532 B for one 128-B listener, per simulated receiver host), this
//! holds exactly what it has. Lookups (one per SYN, or per event of a listening
//! connection) are O(log n); `listen` and `unlisten` move the later entries, which is
//! fine for how rarely they run.

use super::Listener;

#[derive(Default)]
pub(super) struct Listeners(Vec<(u16, Listener)>);

impl Listeners {
    fn find(&self, port: u16) -> Result<usize, usize> {
        self.0.binary_search_by_key(&port, |e| e.0)
    }

    pub(super) fn get(&self, port: &u16) -> Option<&Listener> {
        self.find(*port).ok().map(|i| &self.0[i].1)
    }

    pub(super) fn get_mut(&mut self, port: &u16) -> Option<&mut Listener> {
        self.find(*port).ok().map(|i| &mut self.0[i].1)
    }

    pub(super) fn contains_key(&self, port: &u16) -> bool {
        self.find(*port).is_ok()
    }

    /// Adds or replaces the listener on `port`; returns the one replaced.
    pub(super) fn insert(&mut self, port: u16, l: Listener) -> Option<Listener> {
        match self.find(port) {
            Ok(i) => Some(std::mem::replace(&mut self.0[i].1, l)),
            Err(i) => {
                // Grow by one, not to the `Vec`'s first capacity of four.
                self.0.reserve_exact(1);
                self.0.insert(i, (port, l));
                None
            }
        }
    }

    pub(super) fn remove(&mut self, port: &u16) -> Option<Listener> {
        let i = self.find(*port).ok()?;
        Some(self.0.remove(i).1)
    }
}

#[cfg(test)]
mod tests {
    use super::super::Listener;
    use super::Listeners;
    use std::collections::VecDeque;
    use std::sync::Arc;

    fn listener(backlog: usize) -> Listener {
        Listener {
            backlog,
            config: Arc::default(),
            syn_queue: 0,
            accept: VecDeque::new(),
            last_overflow: None,
            tfo_queue: None,
        }
    }

    /// Ports added out of order are found, replaced and removed by port.
    #[test]
    fn found_by_port_in_any_order() {
        let mut ls = Listeners::default();
        for p in [443, 80, 8080, 22] {
            assert!(ls.insert(p, listener(usize::from(p))).is_none());
        }
        assert_eq!(ls.0.capacity(), 4, "grown one at a time");
        for p in [22, 80, 443, 8080] {
            assert_eq!(ls.get(&p).map(|l| l.backlog), Some(usize::from(p)));
        }
        assert!(!ls.contains_key(&81));
        assert_eq!(ls.insert(80, listener(1)).map(|l| l.backlog), Some(80));
        assert_eq!(ls.get_mut(&80).map(|l| l.backlog), Some(1));
        assert_eq!(ls.remove(&443).map(|l| l.backlog), Some(443));
        assert!(ls.get(&443).is_none() && ls.contains_key(&8080));
        assert!(ls.remove(&443).is_none());
    }
}

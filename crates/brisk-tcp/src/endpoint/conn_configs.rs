//! The configs connections use, kept for sharing (`Endpoint::conn_config`).
//!
//! A connection uses its given `Config` adjusted to its peer's family (the IPv6 MSS),
//! to RC3 (no timestamps) and to its host's timestamp clock. The last few adjusted
//! configs are kept, keyed by the given `Arc` (by address: the cache holds a clone, so
//! the address cannot be reused while kept), the family and the clock, so that
//! connections opened or accepted with one `Arc` share one copy instead of holding
//! 488 B each. Endpoints may share one cache ([`Endpoint::share_conn_configs`]): a
//! simulator's hosts, each with one connection, then share one copy instead of one
//! per host. Which copy a connection holds never changes what it holds.

use crate::config::Config;
use std::sync::{Arc, Mutex};

/// Adjusted configs kept per cache: enough for a host's few kinds of connections; a
/// miss only costs a copy.
const KEPT: usize = 8;

/// (given, IPv6, timestamp clock ppm, as used).
type Entry = (Arc<Config>, bool, i32, Arc<Config>);

/// A cache of connection configs, shared by the endpoints given a clone of it.
#[derive(Clone, Default)]
pub struct ConnConfigs(Arc<Mutex<Vec<Entry>>>);

impl ConnConfigs {
    /// The config kept for (`given`, `v6`, `ppm`), or `make`'s, then kept.
    pub(super) fn get_or_make(
        &self,
        given: &Arc<Config>,
        v6: bool,
        ppm: i32,
        make: impl FnOnce() -> Arc<Config>,
    ) -> Arc<Config> {
        // A poisoned lock held only this cache: its entries are whole either way.
        let mut kept = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = kept
            .iter()
            .find(|e| e.1 == v6 && e.2 == ppm && Arc::ptr_eq(&e.0, given))
        {
            return e.3.clone();
        }
        let used = make();
        if kept.len() >= KEPT {
            kept.remove(0);
        }
        kept.push((given.clone(), v6, ppm, used.clone()));
        used
    }
}

//! Endpoint-wide settings.

use crate::cc::host::Grouping;
use crate::cc::spec::{CcFactory, StandardCcFactory};
use crate::mem::MemLimits;
use std::sync::Arc;

/// Endpoint-wide settings.
#[derive(Clone, Debug)]
pub struct EndpointConfig {
    /// RFC 6528 secret key for ISN generation. RFC 6528 §3 needs it unknown to an
    /// off-path attacker, so `default()` draws it from the OS; only simulators and
    /// tests, whose peers are not attackers, should set a known value.
    pub isn_secret: [u8; 16],
    /// Seed for the endpoint's ChaCha RNG (ephemeral ports, jitter).
    pub rng_seed: u64,
    /// Connection-table limit; beyond it new connections are refused and counted.
    pub max_connections: usize,
    /// Builds each connection's congestion controller from its `Config::congestion`
    /// spec, with the connection's seed, its path and the host's shared `HostCc`.
    pub cc_factory: Arc<dyn CcFactory>,
    /// Which congestion group a new connection joins in the host's `HostCc` (FSE's
    /// and coupled controllers' room, `crate::cc::host`). Default: none.
    pub cc_grouping: Grouping,
    /// SYN cookies (RFC 4987 §3.6, `crate::syncookie`) when a listener's SYN queue is
    /// full, as Linux's default `net.ipv4.tcp_syncookies = 1`. Default on; off, a SYN
    /// that finds the queue full is dropped unanswered (`drop_backlog_full`) and a SYN
    /// flood locks legitimate clients out. Their key is derived from `isn_secret`.
    pub syncookies: bool,
    /// With `syncookies` on, answer every SYN to a listener with a cookie, queue or no
    /// queue (Linux `net.ipv4.tcp_syncookies = 2`, meant for testing). Default off.
    pub syncookies_always: bool,
    /// Endpoint-wide memory thresholds (`crate::mem`, Linux's `tcp_mem`).
    pub mem: MemLimits,
    /// This host's timestamp clock runs this many ppm fast (negative: slow), within
    /// ±`crate::conn::MAX_TS_PPM` (clamped): a simulated crystal error (RFC 8382
    /// §3.3.3's clock skew). Default 0, the simulator's clock.
    pub ts_clock_ppm: i32,
}

/// The OS random number generator could not be read (`getrandom(2)` or the
/// platform's equivalent, through the `getrandom` crate).
#[derive(Debug, thiserror::Error)]
#[error("the OS random number generator failed: {0}")]
pub struct OsRngError(getrandom::Error);

impl EndpointConfig {
    /// Defaults with the given ISN secret and RNG seed: for simulators, tests and
    /// replays, where the same inputs must give the same bytes out.
    pub fn seeded(isn_secret: [u8; 16], rng_seed: u64) -> Self {
        EndpointConfig {
            isn_secret,
            rng_seed,
            max_connections: 65_536,
            cc_factory: Arc::new(StandardCcFactory),
            cc_grouping: Grouping::None,
            syncookies: true,
            syncookies_always: false,
            mem: MemLimits::DEFAULT,
            ts_clock_ppm: 0,
        }
    }

    /// Defaults with the ISN secret and RNG seed drawn from the OS, each on its own
    /// (the seed steers observable choices such as ephemeral ports, so it must not
    /// reveal the secret). Use this where a failure must be reported, not panic.
    pub fn from_os_rng() -> Result<Self, OsRngError> {
        let mut isn_secret = [0u8; 16];
        getrandom::getrandom(&mut isn_secret).map_err(OsRngError)?;
        let mut seed = [0u8; 8];
        getrandom::getrandom(&mut seed).map_err(OsRngError)?;
        Ok(Self::seeded(isn_secret, u64::from_le_bytes(seed)))
    }
}

impl Default for EndpointConfig {
    /// [`EndpointConfig::from_os_rng`]: a library or socket user who takes the
    /// defaults gets unpredictable ISNs (RFC 6528) without asking. A fixed secret
    /// here would be public, and with it every ISN predictable from the 4-tuple and
    /// the clock.
    ///
    /// # Panics
    ///
    /// If the OS random number generator fails; falling back to a known secret
    /// silently would defeat RFC 6528. Callers that must not panic use
    /// `from_os_rng` (or `seeded`).
    fn default() -> Self {
        Self::from_os_rng().unwrap_or_else(|e| panic!("EndpointConfig::default: {e}"))
    }
}

#[cfg(test)]
mod config_tests {
    use super::EndpointConfig;

    /// RFC 6528: the default ISN secret is unpredictable, not a constant of the source.
    #[test]
    fn default_isn_secret_and_seed_come_from_the_os() {
        let a = EndpointConfig::default();
        let b = EndpointConfig::default();
        assert_ne!(a.isn_secret, [0x5a; 16], "the old public constant");
        assert_ne!(a.isn_secret, b.isn_secret);
        assert_ne!(a.rng_seed, b.rng_seed);
    }

    /// Simulators and replays get exactly what they pass.
    #[test]
    fn seeded_keeps_the_given_values() {
        let c = EndpointConfig::seeded([7; 16], 42);
        assert_eq!((c.isn_secret, c.rng_seed), ([7; 16], 42));
    }
}

//! TCP Fast Open (RFC 7413), the pure pieces: no connection state, no clock, no
//! global RNG (keys come from the endpoint's seeded RNG or the configuration, so the
//! simulator stays deterministic). The option's bytes are brisk-wire's
//! [`brisk_wire::fastopen`]; docs/mechanisms/tfo.md describes the whole mechanism.
//!
//! - [`cookie`]: server cookies, AES-128 of the client's address under a primary and
//!   a backup key (RFC 7413 §4.1.2; Linux's `tcp_fastopen_cookie_gen`,
//!   `tcp_fastopen_cookie_gen_check`, `tcp_fastopen_reset_cipher`).
//! - [`queue`]: the listener's bound on pending Fast Open requests (RFC 7413 §5.1;
//!   Linux's `fastopenq.max_qlen`, `tcp_fastopen_queue_check`).
//! - [`server`]: the listener's decision for one SYN (Linux's `tcp_try_fastopen`).
//! - [`cache`]: the client's bounded per-server cookie cache with its negative
//!   entries after SYN-data losses (Linux's `tcp_fastopen_cache_get/set` in
//!   tcp_metrics.c, `tcp_fastopen_cookie_check`).
//! - [`blackhole`]: the client's global back-off after Fast Open connections time
//!   out (Linux's `tcp_fastopen_active_should_disable`,
//!   `tcp_fastopen_active_detect_blackhole`).
//! - [`TfoConfig`]: the knobs, Linux's `net.ipv4.tcp_fastopen` bits and the
//!   listener's `TCP_FASTOPEN` queue length.

pub mod blackhole;
pub mod cache;
pub mod cookie;
pub mod queue;
pub mod server;

pub use blackhole::Blackhole;
pub use cache::{CacheEntry, ClientSyn, CookieCache};
pub use cookie::{CookieCheck, ServerKeys, COOKIE_LEN};
pub use queue::PendingQueue;
pub use server::{decide, ServerCounters, ServerDecision};

use brisk_time::Duration;

/// Fast Open knobs. Off unless `client` or `server` is set (Linux's
/// `net.ipv4.tcp_fastopen` bits 0x1 and 0x2; its default, 1, is client only).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TfoConfig {
    /// Send cookie requests and data on the SYN (`TFO_CLIENT_ENABLE`, 0x1).
    pub client: bool,
    /// Accept data on the SYN from clients with a valid cookie
    /// (`TFO_SERVER_ENABLE`, 0x2).
    pub server: bool,
    /// The listener's bound on pending Fast Open connections (Linux's `TCP_FASTOPEN`
    /// socket option value, `fastopenq.max_qlen`; 0 refuses all Fast Open). Linux's
    /// default with the sysctl's 0x400 bit is `somaxconn`; applications commonly
    /// pass 5 to 256.
    pub max_pending: u32,
    /// Server keys (primary, backup) from the configuration; `None`: drawn from the
    /// endpoint's seeded RNG (Linux draws `net.ipv4.tcp_fastopen_key` at random).
    pub keys: Option<([u8; 16], Option<[u8; 16]>)>,
    /// Cookies the client cache keeps (Linux's TCP metrics hash holds up to
    /// `tcpmhash_entries` destinations; brisk bounds the Fast Open part alone).
    pub cache_entries: usize,
    /// The per-server negative cache after SYN-data losses (older Linux's
    /// `syn_loss` rule in `tcp_fastopen_cookie_check`): off turns it off.
    pub negative_cache: bool,
    /// Base of the global blackhole back-off (Linux's
    /// `net.ipv4.tcp_fastopen_blackhole_timeout_sec`; 0, Linux's default since
    /// 5.14, disables it).
    pub blackhole_timeout: Duration,
    /// RITE's suggestion (seed 004 D.1, WEB-6): a less aggressive initial window on
    /// a connection whose SYN data was accepted (server: a Fast Open child; client:
    /// the SYN-ACK acknowledged its SYN data). `Some(n)`: that connection starts
    /// with min(IW, n) segments; `None` (default, Linux): the ordinary IW.
    pub syn_data_iw: Option<u32>,
    /// RITE's suggestion (seed 004 D.1, WEB-6): the cookie exchanged at the end of
    /// the first connection instead of on its SYN. A brisk-only extension, off by
    /// default (RFC 7413 and Linux ignore a Fast Open option on other segments).
    /// Client: with no cookie cached the SYN is plain and the request (an empty
    /// option) rides our FIN; a cookie on any later segment of the server is cached.
    /// Server: a request on a segment other than a SYN is answered with the
    /// cookie on our next segment.
    pub cookie_at_end: bool,
}

impl Default for TfoConfig {
    fn default() -> Self {
        TfoConfig {
            client: false,
            server: false,
            max_pending: 16,
            keys: None,
            cache_entries: 1024,
            negative_cache: true,
            blackhole_timeout: Duration::ZERO,
            syn_data_iw: None,
            cookie_at_end: false,
        }
    }
}

impl TfoConfig {
    /// Linux's `net.ipv4.tcp_fastopen = 3` (client and server) with a listener
    /// queue of `max_pending`.
    pub fn both(max_pending: u32) -> Self {
        TfoConfig {
            client: true,
            server: true,
            max_pending,
            ..TfoConfig::default()
        }
    }
}

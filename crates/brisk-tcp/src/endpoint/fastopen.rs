//! TCP Fast Open at the endpoint (RFC 7413; docs/mechanisms/tfo.md): the host-wide
//! state Linux keeps per network namespace (the server key, the client's cookie
//! cache and black-hole back-off) and the listener's pending-request queue, and the
//! three places they meet connections:
//!
//! - `connect`: the cache decides what the first SYN carries
//!   (Linux `tcp_fastopen_cookie_check` via `tcp_fastopen_defer_connect` /
//!   `tcp_send_syn_data`);
//! - a listener's SYN: `tfo::decide` (Linux `tcp_try_fastopen`, called from
//!   `tcp_conn_request` only when no SYN cookie is wanted, so never on the
//!   SYN-cookie path); a connection whose data was accepted goes to the accept queue
//!   at once, readable in SYN-RECEIVED, and holds a pending-queue slot until its
//!   handshake completes (released) or the client resets it (held until the request
//!   would have expired, Linux `reqsk_fastopen_remove`'s `rskq_rst_head`);
//! - a client's SYN-ACK: the outcome updates the cache (Linux
//!   `tcp_fastopen_cache_set` from `tcp_rcv_fastopen_synack`).

use super::*;
use crate::conn::ClientOutcome;
use crate::tfo::{
    self, Blackhole, ClientSyn, CookieCache, PendingQueue, ServerCounters, ServerKeys,
};
use brisk_time::Duration;

/// How long a pending slot whose connection the client reset stays taken (Linux
/// `reqsk_fastopen_remove`: the request's timer, `TCP_TIMEOUT_INIT`-based, 60 s in
/// `fastopenq` terms).
const RESET_HOLD: Duration = Duration::from_secs(60);

/// The client side's counters (Linux `nstat` names where Linux has one).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ClientCounters {
    /// SYNs that asked for a cookie.
    pub cookie_requests: u64,
    /// SYN-ACKs that brought a cookie.
    pub cookies_received: u64,
    /// SYNs that carried a cookie (with data, if any was written before the SYN).
    pub syn_with_cookie: u64,
    /// `TCPFastOpenActive`: SYN data the SYN-ACK acknowledged.
    pub active: u64,
    /// `TCPFastOpenActiveFail`: SYN data the SYN-ACK did not acknowledge (sent
    /// again after the handshake).
    pub active_fail: u64,
    /// SYN-data losses recorded in the cache (a SYN-ACK after a SYN timeout with
    /// neither the data acknowledged nor a cookie).
    pub syn_losses: u64,
    /// Connections to a server in the negative cache or during the black-hole
    /// back-off: plain SYNs.
    pub suppressed: u64,
}

/// Fast Open counters of one endpoint ([`Endpoint::fastopen_stats`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FastOpenStats {
    pub client: ClientCounters,
    pub server: ServerCounters,
}

/// The endpoint's Fast Open state, made with the first connection or listener that
/// uses Fast Open.
pub(super) struct TfoHost {
    /// Server keys, from the first server config's `keys` or a generator seeded
    /// from the endpoint's seed (not the endpoint's own RNG, whose draws plain TCP
    /// depends on).
    keys: Option<ServerKeys>,
    cache: Option<CookieCache>,
    blackhole: Blackhole,
    stats: FastOpenStats,
}

impl Endpoint {
    fn tfo_host(&mut self) -> &mut TfoHost {
        self.tfo.get_or_insert_with(|| {
            Box::new(TfoHost {
                keys: None,
                cache: None,
                blackhole: Blackhole::default(),
                stats: FastOpenStats::default(),
            })
        })
    }

    /// Fast Open counters (all zero while no connection used it).
    pub fn fastopen_stats(&self) -> FastOpenStats {
        self.tfo
            .as_ref()
            .map_or_else(FastOpenStats::default, |t| t.stats)
    }

    /// The cookie the client cache holds for `server`, if any.
    pub fn fastopen_cached_cookie(
        &mut self,
        server: IpAddr,
    ) -> Option<brisk_wire::fastopen::FastOpenCookie> {
        self.tfo.as_mut()?.cache.as_mut()?.get(server)?.cookie
    }

    /// Empties the client's cookie cache (Linux's `ip tcp_metrics flush all`).
    pub fn fastopen_flush_cache(&mut self) {
        if let Some(c) = self.tfo.as_mut().and_then(|t| t.cache.as_mut()) {
            c.clear();
        }
    }

    /// Pending Fast Open connections of a listener (its queue length).
    pub fn fastopen_pending(&self, port: u16) -> Option<u32> {
        self.listeners
            .get(&port)?
            .tfo_queue
            .as_ref()
            .map(PendingQueue::len)
    }

    /// Rotates the server key (Linux writes "new,old" to `tcp_fastopen_key`): the
    /// new key makes cookies from now on, the old one stays valid as the backup.
    pub fn fastopen_rotate_key(&mut self, key: [u8; 16]) {
        let seed = self.config.rng_seed;
        let host = self.tfo_host();
        host.keys
            .get_or_insert_with(|| ServerKeys::from_rng(&mut key_rng(seed)))
            .rotate(key);
    }

    /// `connect`: what the new connection's first SYN carries.
    pub(super) fn tfo_connect(&mut self, now: Instant, conn: &mut Connection) {
        let Some(cfg) = conn.config.fastopen.as_deref().filter(|f| f.client) else {
            return;
        };
        let (limit, negative, timeout, cfg_at_end) = (
            cfg.cache_entries,
            cfg.negative_cache,
            cfg.blackhole_timeout,
            cfg.cookie_at_end,
        );
        let server = conn.remote().ip();
        let host = self.tfo_host();
        let disabled = host.blackhole.should_disable(now, timeout);
        let cache = host.cache.get_or_insert_with(|| CookieCache::new(limit));
        let syn = cache.syn(server, now, negative, disabled);
        let mss = cache.get(server).and_then(|e| e.mss);
        let at_end = cfg_at_end && matches!(syn, ClientSyn::Request(_));
        match syn {
            ClientSyn::Request(_) => host.stats.client.cookie_requests += 1,
            ClientSyn::Data(_) => host.stats.client.syn_with_cookie += 1,
            ClientSyn::Plain => host.stats.client.suppressed += 1,
        }
        if at_end {
            // RITE's cookie at the end of the first connection: a plain SYN.
            conn.set_tfo_end_client();
            return;
        }
        conn.set_tfo_client(syn, mss);
    }

    /// A SYN to a listener with Fast Open on, `conn` just made from it: the
    /// listener's decision, carried out. Returns whether the SYN's data was
    /// accepted (the caller queues the connection for accept at once).
    pub(super) fn tfo_listen_syn(
        &mut self,
        now: Instant,
        port: u16,
        conn: &mut Connection,
        tcp: &TcpRepr<'_>,
    ) -> bool {
        let Some(cfg) = conn.config.fastopen.as_deref().filter(|f| f.server) else {
            return false;
        };
        let (cfg_keys, max_pending) = (cfg.keys, cfg.max_pending);
        let (client, server) = (conn.remote().ip(), conn.local().ip());
        let seed = self.config.rng_seed;
        let Some(l) = self.listeners.get_mut(&port) else {
            return false;
        };
        let queue = l
            .tfo_queue
            .get_or_insert_with(|| PendingQueue::new(max_pending));
        let host = self.tfo.get_or_insert_with(|| {
            Box::new(TfoHost {
                keys: None,
                cache: None,
                blackhole: Blackhole::default(),
                stats: FastOpenStats::default(),
            })
        });
        let keys = host.keys.get_or_insert_with(|| match cfg_keys {
            Some((primary, backup)) => ServerKeys::new(primary, backup),
            None => ServerKeys::from_rng(&mut key_rng(seed)),
        });
        let opt = match brisk_wire::fastopen::parse(&tcp.extra) {
            Some(Ok(o)) => Some(o),
            Some(Err(_)) => {
                host.stats.server.malformed += 1;
                None
            }
            None => None,
        };
        let d = tfo::decide(
            true,
            keys,
            queue,
            &mut host.stats.server,
            opt,
            !tcp.payload.is_empty(),
            client,
            server,
            now,
        );
        conn.set_tfo_passive(d.accept_data, d.reply, tcp);
        d.accept_data
    }

    /// After a segment or timeout on a connection that uses Fast Open: a client's
    /// handshake outcome goes to the cache; a pending server connection that left
    /// SYN-RECEIVED frees (or, reset, holds) its queue slot.
    #[cold]
    #[inline(never)]
    pub(super) fn tfo_after(&mut self, now: Instant, h: ConnHandle) {
        let Some(slot) = self
            .slots
            .get_mut(h.0 as usize)
            .and_then(|s| s.as_deref_mut())
        else {
            return;
        };
        let outcome = slot.conn.take_tfo_outcome();
        let server = slot.conn.remote().ip();
        let left = slot
            .tfo_pending
            .filter(|_| slot.conn.state() != State::SynReceived);
        let reset = slot.conn.state() == State::Closed;
        if left.is_some() {
            slot.tfo_pending = None;
        }
        if let Some(port) = left {
            if let Some(q) = self
                .listeners
                .get_mut(&port)
                .and_then(|l| l.tfo_queue.as_mut())
            {
                if reset {
                    q.reset(now + RESET_HOLD);
                } else {
                    q.release();
                }
            }
        }
        if let Some(o) = outcome {
            self.tfo_outcome(now, server, o);
        }
        // A request at the end of a connection (`TfoConfig::cookie_at_end`).
        let Some(slot) = self
            .slots
            .get_mut(h.0 as usize)
            .and_then(|s| s.as_deref_mut())
        else {
            return;
        };
        if slot.conn.tfo_end_due() {
            let (client, local) = (slot.conn.remote().ip(), slot.conn.local().ip());
            if let Some(k) = self.tfo.as_ref().and_then(|t| t.keys.as_ref()) {
                slot.conn.tfo_end_reply(k.cookie(client, local));
            }
        }
    }

    fn tfo_outcome(&mut self, now: Instant, server: IpAddr, o: ClientOutcome) {
        let host = self.tfo_host();
        let c = &mut host.stats.client;
        c.cookies_received += u64::from(o.cookie.is_some());
        c.syn_losses += u64::from(o.syn_lost);
        if o.data_sent > 0 {
            if o.data_acked == o.data_sent {
                c.active += 1;
                host.blackhole.on_success();
            } else {
                c.active_fail += 1;
            }
        }
        if let Some(cache) = host.cache.as_mut() {
            cache.set(server, o.mss, o.cookie, o.syn_lost, o.try_exp, now);
            if o.cookie.is_some() {
                cache.set_cookie_encoding(server, o.cookie_exp);
            }
        }
    }

    /// A reaped slot still pending in its listener's queue frees it.
    pub(super) fn tfo_forget(&mut self, port: u16) {
        if let Some(q) = self
            .listeners
            .get_mut(&port)
            .and_then(|l| l.tfo_queue.as_mut())
        {
            q.release();
        }
    }
}

/// The generator of a server key not given in the configuration: the endpoint's
/// seed with a constant folded in, so the key is deterministic per seed and plain
/// TCP's draws from the endpoint's RNG are untouched.
fn key_rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed ^ 0x007f_0741_3c00_c1e5)
}

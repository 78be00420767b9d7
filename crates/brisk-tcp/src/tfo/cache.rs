//! The client's cookie cache: per server address, the cookie, the MSS it announced
//! and the SYN-loss history (Linux keeps these in its TCP metrics,
//! `tcp_fastopen_cache_get`/`tcp_fastopen_cache_set` in net/ipv4/tcp_metrics.c), and
//! the client's decision for a new connection (`tcp_fastopen_cookie_check` in
//! tcp_fastopen.c).
//!
//! Bounded: at most `limit` servers, the least recently used evicted first (a map
//! plus an order index, O(log n) per connection; nothing per packet).
//!
//! Negative cache: after SYN-data losses (the SYN-ACK acknowledged neither the data
//! nor carried a cookie after the SYN was retransmitted), a server is not sent data
//! or cookie requests again while `now < last_loss + 60 s << losses` once there
//! were two losses in a row (Linux before 4.11, `tcp_fastopen_cookie_check`'s
//! "Recurring FO SYN losses: revert to regular handshake temporarily"; later Linux
//! keeps the counter but relies on the global [`Blackhole`](super::Blackhole)
//! back-off). The shift is capped at 10 (17 h), Linux's is not.
//!
//! Experimental encoding: a server that ignored our cookie request is asked in the
//! kind-254 encoding next (`try_exp` 1), and back in kind 34 if that also failed
//! (`try_exp` 2), as Linux.

use std::collections::{BTreeMap, HashMap};
use std::net::IpAddr;

use brisk_time::{Duration, Instant};
use brisk_wire::fastopen::{FastOpen, FastOpenCookie};

/// Base of the negative cache's back-off.
pub const SYN_LOSS_BACKOFF: Duration = Duration::from_secs(60);
/// Cap of its exponent.
const MAX_LOSS_SHIFT: u32 = 10;

/// What the cache knows about one server.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheEntry {
    pub cookie: Option<FastOpenCookie>,
    /// The server's MSS, to size the SYN's data before the SYN-ACK tells it.
    pub mss: Option<u16>,
    /// 0: ask in kind 34; 1: ask in kind 254; 2: kind 254 failed too.
    pub try_exp: u8,
    /// The cookie came in the experimental kind 254: the SYN carries it so
    /// (Linux keeps `tcp_fastopen_cookie.exp` with the cookie in its cache).
    pub cookie_exp: bool,
    /// SYN-data losses in a row.
    pub syn_loss: u32,
    pub last_syn_loss: Option<Instant>,
}

/// What the client puts on its SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientSyn {
    /// Data (up to the MSS) with this cookie.
    Data(FastOpen),
    /// A cookie request; any data waits for the handshake.
    Request(FastOpen),
    /// Neither (negative cache or blackhole back-off).
    Plain,
}

#[derive(Clone, Debug)]
pub struct CookieCache {
    limit: usize,
    map: HashMap<IpAddr, (CacheEntry, u64)>,
    /// Use stamp -> server, oldest first.
    order: BTreeMap<u64, IpAddr>,
    tick: u64,
    /// Entries evicted to stay within `limit`.
    pub evictions: u64,
}

impl CookieCache {
    pub fn new(limit: usize) -> Self {
        CookieCache {
            limit,
            map: HashMap::new(),
            order: BTreeMap::new(),
            tick: 0,
            evictions: 0,
        }
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }

    /// The entry for `server`, marked as used.
    pub fn get(&mut self, server: IpAddr) -> Option<CacheEntry> {
        let (entry, stamp) = self.map.get_mut(&server)?;
        self.order.remove(stamp);
        self.tick += 1;
        *stamp = self.tick;
        self.order.insert(self.tick, server);
        Some(*entry)
    }

    /// Records a handshake's outcome (Linux's `tcp_fastopen_cache_set`): the MSS if
    /// known, the cookie if one came, the encoding to try next, and whether the
    /// SYN's data was lost.
    pub fn set(
        &mut self,
        server: IpAddr,
        mss: Option<u16>,
        cookie: Option<FastOpenCookie>,
        syn_lost: bool,
        try_exp: u8,
        now: Instant,
    ) {
        if self.limit == 0 {
            return;
        }
        let mut e = self.get(server).unwrap_or_default();
        if mss.is_some() {
            e.mss = mss;
        }
        if cookie.is_some() {
            e.cookie = cookie;
        } else if try_exp > e.try_exp && e.cookie.is_none() {
            e.try_exp = try_exp;
        }
        if syn_lost {
            e.syn_loss = e.syn_loss.saturating_add(1);
            e.last_syn_loss = Some(now);
        } else {
            e.syn_loss = 0;
        }
        if let Some((slot, _)) = self.map.get_mut(&server) {
            *slot = e;
            return;
        }
        if self.map.len() >= self.limit {
            if let Some((_, old)) = self.order.pop_first() {
                self.map.remove(&old);
                self.evictions += 1;
            }
        }
        self.tick += 1;
        self.map.insert(server, (e, self.tick));
        self.order.insert(self.tick, server);
    }

    /// Forgets every server.
    pub fn clear(&mut self) {
        self.map.clear();
        self.order.clear();
    }

    /// The encoding the cached cookie for `server` came in (recorded beside
    /// [`CookieCache::set`]'s cookie): kind 254 if `exp`.
    pub fn set_cookie_encoding(&mut self, server: IpAddr, exp: bool) {
        if let Some((e, _)) = self.map.get_mut(&server) {
            e.cookie_exp = exp;
        }
    }

    /// What to put on a SYN to `server` (Linux's `tcp_fastopen_cookie_check`, the
    /// blackhole verdict passed in as `disabled`).
    pub fn syn(
        &mut self,
        server: IpAddr,
        now: Instant,
        negative_cache: bool,
        disabled: bool,
    ) -> ClientSyn {
        if disabled {
            return ClientSyn::Plain;
        }
        let e = self.get(server).unwrap_or_default();
        if negative_cache && e.syn_loss > 1 {
            if let Some(last) = e.last_syn_loss {
                let shift = e.syn_loss.min(MAX_LOSS_SHIFT);
                if now < last + SYN_LOSS_BACKOFF.saturating_mul(1 << shift) {
                    return ClientSyn::Plain;
                }
            }
        }
        match e.cookie {
            Some(c) => ClientSyn::Data(FastOpen {
                cookie: Some(c),
                experimental: e.cookie_exp,
            }),
            None => ClientSyn::Request(FastOpen {
                cookie: None,
                experimental: e.try_exp == 1,
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(i: u32) -> IpAddr {
        IpAddr::V4(std::net::Ipv4Addr::from(0xc612_0000 + i))
    }
    fn t(s: u64) -> Instant {
        Instant::from_nanos(0) + Duration::from_secs(s)
    }
    fn ck(b: u8) -> FastOpenCookie {
        FastOpenCookie::new(&[b; 8]).unwrap()
    }

    #[test]
    fn request_then_data() {
        let mut c = CookieCache::new(4);
        assert_eq!(
            c.syn(a(1), t(0), true, false),
            ClientSyn::Request(FastOpen::REQUEST)
        );
        c.set(a(1), Some(1460), Some(ck(1)), false, 0, t(0));
        assert_eq!(
            c.syn(a(1), t(1), true, false),
            ClientSyn::Data(FastOpen::with_cookie(ck(1)))
        );
        assert_eq!(c.get(a(1)).unwrap().mss, Some(1460));
        assert_eq!(c.syn(a(1), t(1), true, true), ClientSyn::Plain, "blackhole");
    }

    #[test]
    fn lru_bound_under_many_servers() {
        let mut c = CookieCache::new(3);
        for i in 0..10_000 {
            c.set(a(i), None, Some(ck(i as u8)), false, 0, t(0));
            // Keep server 0 in use: it must survive.
            c.get(a(0));
        }
        assert_eq!(c.len(), 3);
        assert_eq!(c.order.len(), 3);
        assert!(c.get(a(0)).is_some());
        assert!(c.get(a(9_999)).is_some());
        assert!(c.get(a(5)).is_none());
        assert_eq!(c.evictions, 10_000 - 3);
        let mut none = CookieCache::new(0);
        none.set(a(1), None, Some(ck(1)), false, 0, t(0));
        assert!(none.is_empty());
    }

    #[test]
    fn negative_cache_after_recurring_syn_losses() {
        let mut c = CookieCache::new(4);
        c.set(a(1), None, Some(ck(1)), false, 0, t(0));
        c.set(a(1), None, None, true, 0, t(10));
        assert!(
            matches!(c.syn(a(1), t(11), true, false), ClientSyn::Data(_)),
            "one loss"
        );
        c.set(a(1), None, None, true, 0, t(20));
        // Two in a row: plain until 20 + 60 << 2 = 260 s.
        assert_eq!(c.syn(a(1), t(259), true, false), ClientSyn::Plain);
        assert!(
            matches!(c.syn(a(259), t(259), true, false), ClientSyn::Request(_)),
            "per server"
        );
        assert!(
            matches!(c.syn(a(1), t(259), false, false), ClientSyn::Data(_)),
            "option off"
        );
        assert!(matches!(
            c.syn(a(1), t(260), true, false),
            ClientSyn::Data(_)
        ));
        // A success clears the history.
        c.set(a(1), None, None, false, 0, t(300));
        assert_eq!(c.get(a(1)).unwrap().syn_loss, 0);
        assert_eq!(c.get(a(1)).unwrap().cookie, Some(ck(1)), "cookie kept");
    }

    #[test]
    fn unanswered_request_tries_the_experimental_kind() {
        let mut c = CookieCache::new(4);
        c.set(a(1), None, None, false, 1, t(0));
        assert_eq!(
            c.syn(a(1), t(0), true, false),
            ClientSyn::Request(FastOpen {
                cookie: None,
                experimental: true
            })
        );
        c.set(a(1), None, None, false, 2, t(0));
        assert_eq!(
            c.syn(a(1), t(0), true, false),
            ClientSyn::Request(FastOpen::REQUEST)
        );
    }

    /// A cookie that came in kind 254 goes back in kind 254 (upstream packetdrill's
    /// fastopen/client/fallback-exp-opt.pkt); a later kind-34 cookie switches back.
    #[test]
    fn cookie_keeps_the_encoding_it_came_in() {
        let mut c = CookieCache::new(4);
        let k = FastOpenCookie::new(&[0x12, 0x34, 0xab, 0xcd]).unwrap();
        c.set(a(1), None, Some(k), false, 0, t(0));
        c.set_cookie_encoding(a(1), true);
        assert_eq!(
            c.syn(a(1), t(0), true, false),
            ClientSyn::Data(FastOpen {
                cookie: Some(k),
                experimental: true
            })
        );
        c.set(a(1), None, Some(k), false, 0, t(1));
        c.set_cookie_encoding(a(1), false);
        assert_eq!(
            c.syn(a(1), t(1), true, false),
            ClientSyn::Data(FastOpen::with_cookie(k))
        );
        // No entry: nothing to record.
        c.set_cookie_encoding(a(2), true);
        assert!(c.get(a(2)).is_none());
    }
}

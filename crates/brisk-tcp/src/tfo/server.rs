//! The listener's decision for one SYN (Linux's `tcp_try_fastopen`,
//! net/ipv4/tcp_fastopen.c, called from `tcp_conn_request`).
//!
//! - Fast Open off on the server, or the queue full ([`PendingQueue::check`]): the
//!   SYN is handled as plain TCP, its data is not accepted and no cookie is sent.
//! - A cookie request (empty option): the SYN-ACK carries our cookie; data on such
//!   a SYN is not accepted (the client retransmits it after the handshake).
//! - A cookie valid under the primary key: the data is accepted (the connection is
//!   created now and is readable in SYN_RCVD), the SYN-ACK carries no cookie.
//! - Valid under the backup key: accepted, and the SYN-ACK carries the primary
//!   key's cookie so the client updates it.
//! - An invalid cookie (forged, for another address, another length, old key): the
//!   data is not accepted, the SYN-ACK carries a valid cookie, counted.
//! - No option or a malformed one: plain TCP.
//!
//! The SYN-ACK's option uses the encoding the client used (kind 34 or 254).
//! When the listener answers with a SYN cookie (its SYN queue is full), Fast Open is
//! not tried at all, as Linux (`if (!want_cookie) tcp_try_fastopen(..)`): the caller
//! does not call [`decide`] then.

use std::net::IpAddr;

use brisk_time::Instant;
use brisk_wire::fastopen::FastOpen;

use super::{CookieCheck, PendingQueue, ServerKeys};

/// What to do with one SYN.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ServerDecision {
    /// Accept the SYN's data (and admit the connection to the pending queue).
    pub accept_data: bool,
    /// The Fast Open option for the SYN-ACK, if any.
    pub reply: Option<FastOpen>,
}

impl ServerDecision {
    const PLAIN: ServerDecision = ServerDecision {
        accept_data: false,
        reply: None,
    };
}

/// Linux's passive Fast Open counters (`nstat` names in the comments).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ServerCounters {
    /// `TCPFastOpenCookieReqd`: SYNs asking for a cookie.
    pub cookie_reqd: u64,
    /// `TCPFastOpenPassive`: SYNs whose data was accepted.
    pub passive: u64,
    /// `TCPFastOpenPassiveFail`: SYNs with an invalid cookie.
    pub passive_fail: u64,
    /// `TCPFastOpenPassiveAltKey`: accepted under the backup key.
    pub passive_alt_key: u64,
    /// `TCPFastOpenListenOverflow`: refused because the pending queue was full.
    pub listen_overflow: u64,
    /// Malformed Fast Open options on SYNs (not a Linux counter: Linux ignores
    /// them silently).
    pub malformed: u64,
}

/// The decision for a SYN from `client` to `server` carrying `opt` (the parsed
/// option, `None` when absent or malformed) and `has_data`. Admits the connection
/// to `queue` when the data is accepted; updates `counters`.
#[allow(clippy::too_many_arguments)]
pub fn decide(
    enabled: bool,
    keys: &ServerKeys,
    queue: &mut PendingQueue,
    counters: &mut ServerCounters,
    opt: Option<FastOpen>,
    has_data: bool,
    client: IpAddr,
    server: IpAddr,
    now: Instant,
) -> ServerDecision {
    if let Some(FastOpen { cookie: None, .. }) = opt {
        counters.cookie_reqd += 1;
    }
    // Linux: `(syn_data || foc->len >= 0)` -- data without a usable option also
    // consults the queue (and so counts an overflow), as Linux does.
    if !enabled || !(has_data || opt.is_some()) {
        return ServerDecision::PLAIN;
    }
    let before = queue.overflows;
    let room = queue.check(now);
    counters.listen_overflow += queue.overflows - before;
    let Some(opt) = opt.filter(|_| room) else {
        return ServerDecision::PLAIN;
    };
    let ours = FastOpen {
        cookie: Some(keys.cookie(client, server)),
        experimental: opt.experimental,
    };
    let Some(theirs) = opt.cookie else {
        return ServerDecision {
            accept_data: false,
            reply: Some(ours),
        };
    };
    match keys.check(theirs.as_bytes(), client, server) {
        CookieCheck::Invalid => {
            counters.passive_fail += 1;
            ServerDecision {
                accept_data: false,
                reply: Some(ours),
            }
        }
        check => {
            queue.admit();
            counters.passive += 1;
            let reply = if check == CookieCheck::Backup {
                counters.passive_alt_key += 1;
                Some(ours)
            } else {
                None
            };
            ServerDecision {
                accept_data: true,
                reply,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_wire::fastopen::FastOpenCookie;

    fn a(s: &str) -> IpAddr {
        s.parse().unwrap()
    }

    struct S {
        keys: ServerKeys,
        q: PendingQueue,
        c: ServerCounters,
    }

    impl S {
        fn new(max: u32) -> Self {
            S {
                keys: ServerKeys::new([5; 16], None),
                q: PendingQueue::new(max),
                c: ServerCounters::default(),
            }
        }
        fn syn(&mut self, opt: Option<FastOpen>, data: bool, client: &str) -> ServerDecision {
            decide(
                true,
                &self.keys,
                &mut self.q,
                &mut self.c,
                opt,
                data,
                a(client),
                a("198.18.0.2"),
                Instant::from_nanos(0),
            )
        }
    }

    #[test]
    fn request_then_valid_cookie() {
        let mut s = S::new(8);
        let d = s.syn(Some(FastOpen::REQUEST), true, "198.18.0.1");
        assert!(!d.accept_data, "data beside a request is not accepted");
        let cookie = d.reply.unwrap().cookie.unwrap();
        let d = s.syn(Some(FastOpen::with_cookie(cookie)), true, "198.18.0.1");
        assert_eq!(
            d,
            ServerDecision {
                accept_data: true,
                reply: None
            }
        );
        assert_eq!((s.c.cookie_reqd, s.c.passive, s.q.len()), (1, 1, 1));
    }

    #[test]
    fn forged_and_foreign_cookies_get_a_valid_one() {
        let mut s = S::new(8);
        let good = s.keys.cookie(a("198.18.0.1"), a("198.18.0.2"));
        let forged = FastOpenCookie::new(&[0; 8]).unwrap();
        for (cookie, client) in [(forged, "198.18.0.1"), (good, "198.18.0.9")] {
            let d = s.syn(Some(FastOpen::with_cookie(cookie)), true, client);
            assert!(!d.accept_data);
            let reply = d.reply.unwrap().cookie.unwrap();
            assert_eq!(reply, s.keys.cookie(a(client), a("198.18.0.2")));
        }
        assert_eq!((s.c.passive_fail, s.c.passive, s.q.len()), (2, 0, 0));
    }

    #[test]
    fn backup_key_accepts_and_refreshes() {
        let mut s = S::new(8);
        let old = s.keys.cookie(a("198.18.0.1"), a("198.18.0.2"));
        s.keys.rotate([6; 16]);
        let opt = FastOpen {
            cookie: Some(old),
            experimental: true,
        };
        let d = s.syn(Some(opt), true, "198.18.0.1");
        assert!(d.accept_data);
        let reply = d.reply.unwrap();
        assert!(reply.experimental, "answered in the client's encoding");
        assert_eq!(
            reply.cookie,
            Some(s.keys.cookie(a("198.18.0.1"), a("198.18.0.2")))
        );
        assert_eq!(s.c.passive_alt_key, 1);
    }

    #[test]
    fn overflow_falls_back_to_plain_tcp() {
        let mut s = S::new(2);
        let cookie = s.keys.cookie(a("198.18.0.1"), a("198.18.0.2"));
        let mut accepted = 0;
        for _ in 0..1000 {
            let d = s.syn(Some(FastOpen::with_cookie(cookie)), true, "198.18.0.1");
            if d.accept_data {
                accepted += 1;
            } else {
                assert_eq!(d.reply, None, "no cookie over the bound either");
            }
        }
        assert_eq!(accepted, 2);
        assert_eq!(s.c.listen_overflow, 998);
        // A cookie request over the bound is not answered (Linux checks the queue
        // for any valid option).
        assert_eq!(
            s.syn(Some(FastOpen::REQUEST), false, "198.18.0.1").reply,
            None
        );
    }

    #[test]
    fn off_or_no_option_is_plain() {
        let mut s = S::new(8);
        assert_eq!(s.syn(None, true, "198.18.0.1"), ServerDecision::PLAIN);
        assert_eq!(s.syn(None, false, "198.18.0.1"), ServerDecision::PLAIN);
        let d = decide(
            false,
            &s.keys,
            &mut s.q,
            &mut s.c,
            Some(FastOpen::REQUEST),
            false,
            a("198.18.0.1"),
            a("198.18.0.2"),
            Instant::from_nanos(0),
        );
        assert_eq!(d, ServerDecision::PLAIN);
    }
}

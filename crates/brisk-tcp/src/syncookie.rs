//! SYN cookies: RFC 4987 §3.6, as Linux runs them with `net.ipv4.tcp_syncookies = 1`
//! (net/ipv4/syncookies.c: `__cookie_v4_init_sequence`, `cookie_init_timestamp`,
//! `__cookie_v4_check`, `cookie_timestamp_decode`, `cookie_v4_check`; the trigger is
//! in tcp_input.c `tcp_conn_request`, and `tcp_synq_overflow` /
//! `tcp_synq_no_recent_overflow` in include/net/tcp.h).
//!
//! Only when a listener's SYN queue is full, a SYN is answered with a SYN-ACK whose
//! ISN is a cookie and nothing is kept. The ACK that completes the handshake returns
//! the cookie as `SEG.ACK - 1` and the peer's ISN as `SEG.SEQ - 1`; if the cookie is
//! valid the connection is created there and then, with what the cookie carried.
//!
//! The cookie (32 bits, our ISN):
//!
//! ```text
//!  31                                 4   3   2   1   0
//! | MAC: 28 bits of SipHash-2-4          | count % 4 | MSS index |
//! ```
//!
//! - MSS index: the largest entry of [`MSSTAB`] (Linux's `msstab`) not above the MSS
//!   the peer announced (536 when it announced none or less: the table's floor, as
//!   Linux).
//! - count: the time counter, `now` in [`COOKIE_PERIOD`] (60 s) ticks
//!   (`tcp_cookie_time`). A cookie is accepted while the counter has moved on by less
//!   than [`MAX_COOKIE_AGE`] (2), i.e. for 60 to 120 s, as Linux.
//! - MAC: SipHash-2-4, keyed by a secret derived from the endpoint's ISN secret, over
//!   both addresses and ports, the peer's ISN, the full counter and the MSS index.
//!
//! Where brisk differs from Linux, and why: Linux packs the counter (8 bits) and a
//! 24-bit hash *plus* the MSS index, with two hash layers added; a cookie one off from
//! a valid one can still decode to a valid index, so a blind guess succeeds with
//! about 2^-22. Here the index is covered by a separate 28-bit MAC (2^-28 per guess)
//! and checking costs one SipHash; the counter and index bits stand in clear, which
//! tells an observer nothing it could use without the key.
//!
//! Window scale, SACK-permitted and ECN cannot fit in the sequence number. When the
//! peer sent timestamps they ride in the low 6 bits of our SYN-ACK's TSval, which the
//! peer echoes in TSecr (`cookie_init_timestamp`): bits 0-3 the peer's window shift
//! (0xf: none), bit 4 SACK, bit 5 ECN. The TSval is our clock rounded down to keep
//! those bits, so later TSvals never go back; its offset is a keyed hash of the two
//! addresses (Linux's `secure_tcp_ts_off`), which the new connection then keeps.
//! Without timestamps these options are off for the connection, as in Linux. The
//! option bits are not covered by the MAC (nor in Linux): an off-path attacker who
//! could guess a cookie gains nothing by choosing them, and they are checked against
//! what this host offers (`cookie_timestamp_decode`).
//!
//! What a cookie connection lacks, as in Linux: no SYN-ACK retransmission (the peer's
//! SYN retransmission draws a fresh cookie), no handshake RTT sample, the peer's MSS
//! rounded down to the table, and no options for peers without timestamps.

use crate::config::Config;
use brisk_time::{Duration, Instant};
use brisk_wire::{Flags, SeqNum, TcpRepr, Timestamps};
use siphasher::sip::SipHasher24;
use std::cell::OnceCell;
use std::collections::VecDeque;
use std::hash::Hasher;
use std::net::{IpAddr, SocketAddr};

/// Linux's `msstab`: MSS values a cookie can carry, sorted. From Alcock and Nelson,
/// "An Analysis of TCP Maximum Segment Sizes" (2011): 1460 is the most common value,
/// 1300-1349 about a fifth of all, 1440/1452 PPPoE, fewer than 0.2 % below 536.
pub const MSSTAB: [u16; 4] = [536, 1300, 1440, 1460];

/// Linux `TCP_SYNCOOKIE_PERIOD`: one tick of the cookie counter.
pub const COOKIE_PERIOD: Duration = Duration::from_secs(60);

/// Linux `MAX_SYNCOOKIE_AGE`: a cookie is valid while the counter has advanced by less
/// than this since it was made (so for 60 to 120 s).
pub const MAX_COOKIE_AGE: u32 = 2;

/// Linux `TCP_SYNCOOKIE_VALID`: ACKs to a listener are checked as cookies only this
/// long after its SYN queue last overflowed (`tcp_synq_no_recent_overflow`), so an
/// unflooded listener spends no hashing on stray ACKs.
pub const COOKIE_VALID: Duration = Duration::from_secs(120);

/// Bound on cookie SYN-ACKs waiting for `poll_transmit` (beyond it a SYN is dropped
/// and counted as `drop_backlog_full`, as with cookies off). The host drains output
/// after each input, so this is reached only if it stops polling.
pub const MAX_PENDING_SYNACKS: usize = 1024;

/// Low TSval bits that carry options (`TSBITS`) and their meaning.
const TS_BITS: u32 = 6;
const TS_OPT_WSCALE_MASK: u32 = 0xf;
const TS_OPT_SACK: u32 = 1 << 4;
const TS_OPT_ECN: u32 = 1 << 5;

const MAC_SHIFT: u32 = 4;
const COUNT_SHIFT: u32 = 2;

/// What the handshake agreed, as a cookie carries it back.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CookieOpts {
    /// The peer's MSS, rounded down to [`MSSTAB`].
    pub mss: u16,
    /// The peer's window shift, if both sides scale.
    pub wscale: Option<u8>,
    pub sack: bool,
    pub ecn: bool,
    /// Timestamps in use (the ACK carried them).
    pub ts: bool,
}

/// Why a cookie ACK was refused (all counted as `syncookies_failed`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CookieError {
    /// The counter is too old (or from the future).
    Expired,
    /// The MAC does not match: forged, altered, or for another 4-tuple or peer ISN.
    BadMac,
    /// The echoed TSval asks for an option this host does not offer.
    BadOptions,
}

/// The keys (derived from the ISN secret, each for one use) and the queue of cookie
/// SYN-ACKs to send.
///
/// The keys are derived on first use, not when the endpoint is made: two SipHash
/// derivations cost ~1.4 k instructions per endpoint, and most endpoints never send or
/// check a cookie (a simulation of 10^5 flows builds 2 × 10^5 endpoints; issue 36 §2).
/// The derivation is the same function of the same secret (copied here when the
/// endpoint is made, so a later change of the configuration cannot change the keys),
/// so the keys, the cookies and the timestamp offsets are bit for bit those of an
/// eager derivation, and nothing about them depends on when they were first needed:
/// determinism and the cookie's security (a MAC under a key only the secret's holder
/// can derive) are unchanged.
pub(crate) struct SynCookies {
    secret: [u8; 16],
    keys: OnceCell<Keys>,
    pending: VecDeque<PendingSynAck>,
    /// The host's timestamp clock error, ppm (`EndpointConfig::ts_clock_ppm`).
    pub ts_ppm: i32,
}

/// The cookie MAC's key and the timestamp offset's key.
struct Keys {
    mac: [u8; 16],
    ts: [u8; 16],
}

/// A cookie SYN-ACK waiting for `poll_transmit`.
pub(crate) struct PendingSynAck {
    /// The address the SYN was sent to, which the SYN-ACK leaves from.
    pub local: IpAddr,
    pub remote: IpAddr,
    pub dscp: u8,
    pub header: TcpRepr<'static>,
}

/// A 16-byte key for `purpose`, derived from `secret` with SipHash-2-4 (two 64-bit
/// outputs under distinct labels), so cookie MACs, timestamp offsets and RFC 6528 ISNs
/// never share a key.
fn derive_key(secret: &[u8; 16], purpose: &[u8]) -> [u8; 16] {
    let mut out = [0u8; 16];
    for (half, chunk) in out.chunks_mut(8).enumerate() {
        let mut h = SipHasher24::new_with_key(secret);
        h.write(b"brisk syncookie key");
        h.write(purpose);
        h.write_u8(half as u8);
        chunk.copy_from_slice(&h.finish().to_le_bytes());
    }
    out
}

fn write_addr(h: &mut SipHasher24, a: IpAddr) {
    match a {
        IpAddr::V4(v4) => h.write(&v4.octets()),
        IpAddr::V6(v6) => h.write(&v6.octets()),
    }
}

/// `tcp_cookie_time`: the counter at `now`.
fn counter(now: Instant) -> u32 {
    (now.as_nanos() / COOKIE_PERIOD.as_nanos() as u64) as u32
}

impl SynCookies {
    pub fn new(isn_secret: &[u8; 16]) -> Self {
        SynCookies {
            secret: *isn_secret,
            keys: OnceCell::new(),
            pending: VecDeque::new(),
            ts_ppm: 0,
        }
    }

    /// The keys, derived from the secret on first use.
    fn keys(&self) -> &Keys {
        self.keys.get_or_init(|| Keys {
            mac: derive_key(&self.secret, b"mac"),
            ts: derive_key(&self.secret, b"tsoff"),
        })
    }

    /// The 28-bit MAC over the 4-tuple, the peer's ISN, the counter and the MSS index.
    fn mac(
        &self,
        local: SocketAddr,
        remote: SocketAddr,
        peer_isn: u32,
        count: u32,
        idx: u32,
    ) -> u32 {
        let mut h = SipHasher24::new_with_key(&self.keys().mac);
        write_addr(&mut h, local.ip());
        h.write_u16(local.port());
        write_addr(&mut h, remote.ip());
        h.write_u16(remote.port());
        h.write_u32(peer_isn);
        h.write_u32(count);
        h.write_u32(idx);
        (h.finish() as u32) >> MAC_SHIFT
    }

    /// `__cookie_v4_init_sequence`: the cookie for a SYN from `remote` with ISN
    /// `peer_isn` announcing `peer_mss`, and the MSS it encodes.
    pub fn make(
        &self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        peer_isn: u32,
        peer_mss: u16,
    ) -> (u32, u16) {
        let idx = MSSTAB.iter().rposition(|&m| peer_mss >= m).unwrap_or(0);
        let count = counter(now);
        let mac = self.mac(local, remote, peer_isn, count, idx as u32);
        let cookie = (mac << MAC_SHIFT) | ((count & 3) << COUNT_SHIFT) | idx as u32;
        (cookie, MSSTAB[idx])
    }

    /// `__cookie_v4_check`: the MSS `cookie` carries, if it is one we made for this
    /// 4-tuple and peer ISN less than [`MAX_COOKIE_AGE`] ticks ago.
    pub fn check(
        &self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        peer_isn: u32,
        cookie: u32,
    ) -> Result<u16, CookieError> {
        let now_count = counter(now);
        let age = now_count.wrapping_sub(cookie >> COUNT_SHIFT) & 3;
        if age >= MAX_COOKIE_AGE {
            return Err(CookieError::Expired);
        }
        let idx = cookie & 3;
        let mac = self.mac(local, remote, peer_isn, now_count.wrapping_sub(age), idx);
        if mac != cookie >> MAC_SHIFT {
            return Err(CookieError::BadMac);
        }
        Ok(MSSTAB[idx as usize])
    }

    /// Linux `secure_tcp_ts_off`: the timestamp offset for a connection between these
    /// addresses, the same for the cookie SYN-ACK and the connection built later.
    pub fn ts_offset(&self, local: IpAddr, remote: IpAddr) -> u32 {
        let mut h = SipHasher24::new_with_key(&self.keys().ts);
        write_addr(&mut h, local);
        write_addr(&mut h, remote);
        h.finish() as u32
    }

    /// The cookie SYN-ACK answering `syn` (to a listener with `config`), queued for
    /// `poll_transmit`; false if the queue is full (the caller counts the drop).
    pub fn queue_synack(
        &mut self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: &Config,
        syn: &TcpRepr<'_>,
    ) -> bool {
        if self.pending.len() >= MAX_PENDING_SYNACKS {
            return false;
        }
        let offer = Offer::new(config);
        let (cookie, _) = self.make(now, local, remote, syn.seq.0, syn.mss.unwrap_or(536));
        let ts = syn.timestamps.filter(|_| offer.ts);
        // Without timestamps nothing carries the options back: offer none (Linux
        // clears them, and ECN, in `tcp_conn_request`).
        let ws = syn.window_scale.filter(|_| offer.ws && ts.is_some());
        let sack = offer.sack && syn.sack_permitted && ts.is_some();
        let ecn = offer.ecn
            && ts.is_some()
            && syn.flags.contains(Flags::ECE)
            && syn.flags.contains(Flags::CWR);
        let mut flags = Flags::SYN;
        flags.insert(Flags::ACK);
        if ecn {
            flags.insert(Flags::ECE);
        }
        let timestamps = ts.map(|t| {
            let opts = CookieOpts {
                mss: 0,
                wscale: ws.map(|w| w.get()),
                sack,
                ecn,
                ts: true,
            };
            let clock = crate::conn::ts_clock(now, self.ts_ppm)
                .wrapping_add(self.ts_offset(local.ip(), remote.ip()));
            Timestamps {
                tsval: cookie_tsval(clock, &opts),
                tsecr: t.tsval,
            }
        });
        let header = TcpRepr {
            src_port: local.port(),
            dst_port: remote.port(),
            seq: SeqNum(cookie),
            ack: SeqNum(syn.seq.0.wrapping_add(1)),
            flags,
            window: synack_window(config),
            mss: Some(config.mss),
            window_scale: ws.map(|_| brisk_wire::WindowScale::clamped(offer.rcv_wscale)),
            sack_permitted: sack,
            timestamps,
            ..TcpRepr::default()
        };
        self.pending.push_back(PendingSynAck {
            local: local.ip(),
            remote: remote.ip(),
            dscp: config.dscp,
            header,
        });
        true
    }

    pub fn pop_synack(&mut self) -> Option<PendingSynAck> {
        self.pending.pop_front()
    }

    /// `cookie_v4_check` for an ACK to a listener with `config`: the options to build
    /// the connection with, if the ACK returns a valid cookie.
    pub fn validate(
        &self,
        now: Instant,
        local: SocketAddr,
        remote: SocketAddr,
        config: &Config,
        ack: &TcpRepr<'_>,
    ) -> Result<CookieOpts, CookieError> {
        let cookie = ack.ack.0.wrapping_sub(1);
        let peer_isn = ack.seq.0.wrapping_sub(1);
        let mss = self.check(now, local, remote, peer_isn, cookie)?;
        decode_options(mss, ack.timestamps, &Offer::new(config))
    }

    #[cfg(test)]
    pub fn pending_len(&self) -> usize {
        self.pending.len()
    }

    /// Whether `pop_synack` would return one.
    #[inline]
    pub fn has_pending(&self) -> bool {
        !self.pending.is_empty()
    }
}

/// What this host offers a peer, as `Connection` builds it from the listener's
/// config (RC3 turns timestamps off, see `Connection::from_setup`).
struct Offer {
    ws: bool,
    sack: bool,
    ts: bool,
    ecn: bool,
    rcv_wscale: u8,
}

impl Offer {
    fn new(config: &Config) -> Self {
        let ws = config.options.window_scaling;
        Offer {
            ws,
            sack: config.options.sack,
            ts: config.options.timestamps && config.transmit.rc3.is_none(),
            ecn: config.ecn.enabled,
            rcv_wscale: if ws {
                crate::conn::window_shift(config.recv_buffer)
            } else {
                0
            },
        }
    }
}

/// The unscaled window of a SYN-ACK (`Connection::syn_segment`'s rule on a new
/// connection's empty receive buffer).
pub(crate) fn synack_window(config: &Config) -> u16 {
    config.recv_buffer.min(65_535) as u16
}

/// `cookie_init_timestamp`: `clock` (our TSval now) with its low bits replaced by the
/// options, moved back one step if that would put it in the future, so the
/// connection's later TSvals (from the same clock) never run backwards.
pub fn cookie_tsval(clock: u32, opts: &CookieOpts) -> u32 {
    let mut bits = opts.wscale.map_or(TS_OPT_WSCALE_MASK, u32::from);
    if opts.sack {
        bits |= TS_OPT_SACK;
    }
    if opts.ecn {
        bits |= TS_OPT_ECN;
    }
    let ts = (clock >> TS_BITS << TS_BITS) | bits;
    if ts > clock {
        ts.wrapping_sub(1 << TS_BITS)
    } else {
        ts
    }
}

/// `cookie_timestamp_decode`: the options from the echoed TSval; none without
/// timestamps; an option this host does not offer refuses the cookie (ECN is only
/// switched off, as Linux's `cookie_ecn_ok`).
fn decode_options(
    mss: u16,
    ts: Option<Timestamps>,
    offer: &Offer,
) -> Result<CookieOpts, CookieError> {
    let Some(ts) = ts else {
        return Ok(CookieOpts {
            mss,
            wscale: None,
            sack: false,
            ecn: false,
            ts: false,
        });
    };
    if !offer.ts {
        return Err(CookieError::BadOptions);
    }
    let bits = ts.tsecr;
    let sack = bits & TS_OPT_SACK != 0;
    if sack && !offer.sack {
        return Err(CookieError::BadOptions);
    }
    let wscale = match bits & TS_OPT_WSCALE_MASK {
        TS_OPT_WSCALE_MASK => None,
        // 0-14 (we clamp as RFC 7323 §2.3 does before encoding; 15 means none).
        _ if !offer.ws => return Err(CookieError::BadOptions),
        w => Some(w as u8),
    };
    Ok(CookieOpts {
        mss,
        wscale,
        sack,
        ecn: bits & TS_OPT_ECN != 0 && offer.ecn,
        ts: true,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(s: &str) -> SocketAddr {
        s.parse().unwrap()
    }

    fn keys() -> SynCookies {
        SynCookies::new(&[9; 16])
    }

    const L: &str = "198.18.0.1:80";
    const R: &str = "198.19.1.2:40000";

    #[test]
    fn cookie_round_trips_and_rounds_the_mss_down_to_the_table() {
        let k = keys();
        let now = Instant::from_secs(1000);
        for (announced, carried) in [
            (65_535, 1460),
            (1460, 1460),
            (1459, 1440),
            (1452, 1440),
            (1440, 1440),
            (1380, 1300),
            (1300, 1300),
            (1299, 536),
            (536, 536),
            (100, 536),
        ] {
            let (c, mss) = k.make(now, addr(L), addr(R), 77, announced);
            assert_eq!(mss, carried, "announced {announced}");
            assert_eq!(k.check(now, addr(L), addr(R), 77, c), Ok(carried));
        }
    }

    #[test]
    fn cookie_is_valid_for_one_to_two_periods_then_expires() {
        let k = keys();
        let made = Instant::from_secs(600); // the start of counter 10
        let (c, _) = k.make(made, addr(L), addr(R), 5, 1460);
        let at = |s: u64| k.check(Instant::from_secs(s), addr(L), addr(R), 5, c);
        assert_eq!(at(600), Ok(1460));
        assert_eq!(at(719), Ok(1460), "counter 11: one tick old");
        assert_eq!(at(720), Err(CookieError::Expired), "counter 12");
        assert_eq!(at(780), Err(CookieError::Expired), "counter 13");
        // Four ticks later the 2-bit counter wraps: the MAC over the full counter
        // refuses it.
        assert_eq!(at(840), Err(CookieError::BadMac));
        // Made late in a tick: valid only into the next one (60 s + a little).
        let (c, _) = k.make(Instant::from_secs(659), addr(L), addr(R), 5, 1460);
        assert_eq!(
            k.check(Instant::from_secs(719), addr(L), addr(R), 5, c),
            Ok(1460)
        );
        assert_eq!(
            k.check(Instant::from_secs(720), addr(L), addr(R), 5, c),
            Err(CookieError::Expired)
        );
    }

    #[test]
    fn altered_forged_or_misdirected_cookies_are_refused() {
        let k = keys();
        let now = Instant::from_secs(3);
        let (c, _) = k.make(now, addr(L), addr(R), 1234, 1460);
        // Every single-bit change (the MSS index and counter bits included).
        for bit in 0..32 {
            let bad = k.check(now, addr(L), addr(R), 1234, c ^ (1 << bit));
            assert!(bad.is_err(), "bit {bit}: {bad:?}");
        }
        // Another 4-tuple or peer ISN.
        assert_eq!(
            k.check(now, addr("198.19.1.3:40000"), addr(R), 1234, c),
            Err(CookieError::BadMac)
        );
        assert_eq!(
            k.check(now, addr(L), addr("198.19.1.2:40001"), 1234, c),
            Err(CookieError::BadMac)
        );
        assert_eq!(
            k.check(now, addr("198.18.0.1:81"), addr(R), 1234, c),
            Err(CookieError::BadMac)
        );
        assert_eq!(
            k.check(now, addr(L), addr(R), 1235, c),
            Err(CookieError::BadMac)
        );
        // Another secret.
        assert_eq!(
            SynCookies::new(&[8; 16]).check(now, addr(L), addr(R), 1234, c),
            Err(CookieError::BadMac)
        );
        // Blind guesses: 2^-28 each, so none of 100 000 passes.
        let forged = (0..100_000u32)
            .filter(|i| {
                k.check(now, addr(L), addr(R), 1234, i.wrapping_mul(2_654_435_761))
                    .is_ok()
            })
            .count();
        assert_eq!(forged, 0);
    }

    #[test]
    fn options_ride_in_the_tsval_and_decode() {
        let offer = Offer::new(&Config {
            ecn: crate::config::EcnConfig { enabled: true },
            ..Config::default()
        });
        for wscale in [None, Some(0), Some(7), Some(14)] {
            for sack in [false, true] {
                for ecn in [false, true] {
                    let opts = CookieOpts {
                        mss: 1300,
                        wscale,
                        sack,
                        ecn,
                        ts: true,
                    };
                    for clock in [0u32, 63, 64, 1_000_003, u32::MAX] {
                        let ts = cookie_tsval(clock, &opts);
                        // Never ahead of the clock (modulo 2^32), at most 64 behind.
                        assert!(clock.wrapping_sub(ts) < 64, "{clock} {ts}");
                        let echo = Some(Timestamps {
                            tsval: 5,
                            tsecr: ts,
                        });
                        assert_eq!(decode_options(1300, echo, &offer), Ok(opts));
                    }
                }
            }
        }
        // No timestamps on the ACK: no options.
        let none = decode_options(536, None, &offer).unwrap();
        assert_eq!(
            (none.wscale, none.sack, none.ecn, none.ts),
            (None, false, false, false)
        );
        // Options this host does not offer refuse the cookie; ECN is only dropped.
        let mut cfg = Config::default();
        cfg.options.sack = false;
        cfg.options.window_scaling = false;
        let strict = Offer::new(&cfg);
        let echo = |tsecr| Some(Timestamps { tsval: 1, tsecr });
        assert_eq!(
            decode_options(536, echo(0x1f), &strict),
            Err(CookieError::BadOptions)
        );
        assert_eq!(
            decode_options(536, echo(0x07), &strict),
            Err(CookieError::BadOptions)
        );
        let d = decode_options(536, echo(0x2f), &strict).unwrap();
        assert_eq!((d.wscale, d.sack, d.ecn), (None, false, false));
    }

    #[test]
    fn keys_are_separate_and_follow_the_secret() {
        let a = SynCookies::new(&[1; 16]);
        let b = SynCookies::new(&[2; 16]);
        assert_ne!(a.keys().mac, a.keys().ts);
        assert_ne!(a.keys().mac, b.keys().mac);
        assert_ne!(a.keys().mac, [1; 16]);
        // Derived on first use, they are the eager derivation's keys.
        assert_eq!(a.keys().mac, derive_key(&[1; 16], b"mac"));
        assert_eq!(a.keys().ts, derive_key(&[1; 16], b"tsoff"));
        let (l, r) = (addr(L).ip(), addr(R).ip());
        assert_eq!(a.ts_offset(l, r), SynCookies::new(&[1; 16]).ts_offset(l, r));
        assert_ne!(a.ts_offset(l, r), b.ts_offset(l, r));
    }
}

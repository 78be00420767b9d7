//! Decisions for MPTCP's control options (RFC 8684 §3.4–§3.7) other than the
//! handshakes and the DSS: each function takes what arrived plus the little state it
//! needs and returns what the connection must do, counting into [`MptcpCounters`]
//! the events Linux counts on receipt (`…Rx`, `AddAddr`, `EchoAdd`, …). Counters of
//! what is *sent* (`…Tx`) are the caller's, when the segment leaves. Where the RFC
//! leaves room, Linux 6.18's behaviour is followed and its function named.
//!
//! | option | decision | Linux |
//! | --- | --- | --- |
//! | ADD_ADDR | HMAC check, rate bound, id-0 rule, then to the path manager | `mptcp_incoming_options`, `add_addr_hmac_valid`, `mptcp_pm_add_addr_received` |
//! | ADD_ADDR echo | stop re-sending ours | `mptcp_pm_add_addr_echoed`, `mptcp_pm_del_add_timer` |
//! | REMOVE_ADDR | the subflows whose remote id is named | `mptcp_pm_rm_addr_or_subflow` |
//! | MP_PRIO | the subflow's backup flag | `mptcp_pm_mp_prio_received` |
//! | MP_FASTCLOSE | our key: reset every subflow, close | `mptcp_check_fastclose` |
//! | MP_TCPRST | the reason to report | `mptcp_incoming_options` (`reset_seen`, `reset_reason`) |
//! | MP_FAIL | one subflow: fall back; several: the subflow is reset | `mptcp_pm_mp_fail_received`, `subflow_check_data_avail` |
//!
//! Everything here is O(1) or O(subflows) per option, allocation-free.

use super::counters::MptcpCounters;
use super::pm::{Addr, ADDR_MAX};
use super::{SubflowMask, MAX_SUBFLOWS};
use brisk_time::{Duration, Instant};
use brisk_wire::mptcp::{crypto, AddAddr, MpTcpRst, MptcpOption, RemoveAddr, ResetReason};
use std::net::IpAddr;

/// A connection's two keys (MP_CAPABLE, §3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Keys {
    pub local: u64,
    pub remote: u64,
}

/// ADD_ADDRs processed back to back before the rate bound applies: the most a peer
/// announces at once (one per endpoint, `MPTCP_PM_ADDR_MAX`).
pub const ADD_ADDR_BURST: u32 = ADDR_MAX as u32;
/// After the burst, one ADD_ADDR per this interval (40 a second). A genuine peer
/// re-sends an unechoed ADD_ADDR only after its timer (at least one RTO, Linux's
/// `mptcp_adjust_add_addr_timeout`), at most 3 times, so 8 addresses re-sent together
/// every 200 ms (RTO minimum) fit; a flood beyond it is dropped and counted.
pub const ADD_ADDR_REFILL: Duration = Duration::from_millis(25);

/// What a received ADD_ADDR (either kind) asks of the connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AddAddrVerdict {
    /// A new announcement with a good HMAC: give `addr` to
    /// [`super::pm::PathManager::on_add_addr`], which echoes it, skips addresses it
    /// knows (a re-sent ADD_ADDR whose echo was lost is echoed again) and acts within
    /// `add_addr_accepted` and `subflows`.
    Announce { addr: Addr },
    /// The echo of one of our announcements: give `addr` to
    /// [`super::pm::PathManager::on_add_addr_echo`] (stops re-sending it).
    Echoed { addr: Addr },
    /// Address id 0 names the initial address, so an ADD_ADDR with id 0 and another
    /// address is echoed (the peer stops re-sending) and not acted on (Linux 6.18
    /// `mptcp_pm_add_addr_received`: "id0 should not have a different address").
    EchoOnly { echo: MptcpOption },
    /// The HMAC does not verify: dropped, not echoed (`add_addr_hmac_valid`).
    BadHmac,
    /// Over the rate bound: dropped, not echoed; a genuine peer re-sends it later.
    RateLimited,
}

/// The ADD_ADDR echo of `a` (flag E, no HMAC; §3.4.1).
pub fn echo_of(a: &AddAddr) -> MptcpOption {
    MptcpOption::AddAddr(AddAddr { hmac: None, ..*a })
}

/// Our ADD_ADDR announcing `addr` (port 0: none on the wire), its HMAC keyed with
/// our key first (`add_addr_generate_hmac(local_key, remote_key, …)`).
pub fn announce(keys: Keys, addr: Addr) -> MptcpOption {
    let port = (addr.port != 0).then_some(addr.port);
    MptcpOption::AddAddr(AddAddr {
        address_id: addr.id,
        addr: addr.ip,
        port,
        hmac: Some(crypto::add_addr_hmac(
            keys.local,
            keys.remote,
            addr.id,
            addr.ip,
            port,
        )),
    })
}

fn addr_of(a: &AddAddr) -> Addr {
    Addr {
        id: a.address_id,
        ip: a.addr,
        port: a.port.unwrap_or(0),
    }
}

/// Checks and rate-bounds the ADD_ADDRs of one connection. Fixed size, no
/// allocation; the only state is the token bucket and the initial remote address.
#[derive(Clone, Copy, Debug)]
pub struct AddAddrGate {
    keys: Keys,
    initial_remote: Option<(IpAddr, u16)>,
    tokens: u32,
    /// When the bucket last gained a token (None: full since construction).
    refilled: Option<Instant>,
}

impl AddAddrGate {
    pub fn new(keys: Keys) -> AddAddrGate {
        AddAddrGate {
            keys,
            initial_remote: None,
            tokens: ADD_ADDR_BURST,
            refilled: None,
        }
    }

    /// The peer's address and port of the initial subflow (for the id-0 rule).
    pub fn set_initial_remote(&mut self, ip: IpAddr, port: u16) {
        self.initial_remote = Some((ip, port));
    }

    fn take_token(&mut self, now: Instant) -> bool {
        match self.refilled {
            None => self.refilled = Some(now),
            Some(t) => {
                let step = ADD_ADDR_REFILL.as_nanos() as u64;
                let gained = now.saturating_duration_since(t).as_nanos() as u64 / step;
                if gained > 0 {
                    self.tokens = self
                        .tokens
                        .saturating_add(gained.min(u64::from(ADD_ADDR_BURST)) as u32)
                        .min(ADD_ADDR_BURST);
                    self.refilled = Some(t.saturating_add_nanos(gained * step));
                }
            }
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }

    /// A received ADD_ADDR (announcement or echo). Echoes are not rate-bounded (they
    /// cost a lookup in 8 entries and cause no output).
    pub fn on_add_addr(
        &mut self,
        now: Instant,
        a: &AddAddr,
        c: &mut MptcpCounters,
    ) -> AddAddrVerdict {
        let addr = addr_of(a);
        let Some(hmac) = a.hmac else {
            c.echo_add += 1;
            return AddAddrVerdict::Echoed { addr };
        };
        let want = crypto::add_addr_hmac(
            self.keys.remote,
            self.keys.local,
            a.address_id,
            a.addr,
            a.port,
        );
        if want != hmac {
            c.add_addr_hmac_failure += 1;
            return AddAddrVerdict::BadHmac;
        }
        if !self.take_token(now) {
            c.add_addr_drop += 1;
            return AddAddrVerdict::RateLimited;
        }
        c.add_addr += 1;
        if a.port.is_some() {
            c.port_add += 1;
        }
        if a.address_id == 0 {
            // Without a port the option means the connection's port: compare the
            // port only when the option carries one.
            let same = self.initial_remote.is_some_and(|(ip, port)| {
                ip == addr.ip && (a.port.is_none() || a.port == Some(port))
            });
            if !same {
                return AddAddrVerdict::EchoOnly { echo: echo_of(a) };
            }
        }
        AddAddrVerdict::Announce { addr }
    }
}

/// REMOVE_ADDR: the subflows to close, those whose remote address id is named.
/// `remote_ids[slot]` is the peer's address id of the subflow in `slot` (None: no
/// subflow). Every named id is also given to
/// [`super::pm::PathManager::on_rm_addr`] by the caller, which forgets the address.
/// Counted as Linux's `mptcp_pm_rm_addr_or_subflow` does: `RmAddr` once per subflow
/// closed (and nothing for an id naming none).
pub fn on_remove_addr(
    rm: &RemoveAddr,
    remote_ids: &[Option<u8>],
    c: &mut MptcpCounters,
) -> SubflowMask {
    let mut close = SubflowMask::EMPTY;
    for (slot, id) in remote_ids.iter().enumerate().take(MAX_SUBFLOWS) {
        if let Some(id) = id {
            if rm.ids().contains(id) {
                close = close.with(slot);
            }
        }
    }
    c.rm_addr += close.len() as u64;
    close
}

/// MP_PRIO on a subflow whose backup flag is `current`: the new flag, and whether it
/// changed (Linux then restarts the scheduler's choice, `msk->last_snd = NULL`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrioChange {
    pub backup: bool,
    pub changed: bool,
}

/// MP_PRIO (§3.3.8): the peer asks that the subflow it arrived on be (or stop being)
/// a backup (`mptcp_pm_mp_prio_received`).
pub fn on_mp_prio(current: bool, backup: bool, c: &mut MptcpCounters) -> PrioChange {
    c.mp_prio_rx += 1;
    PrioChange {
        backup,
        changed: current != backup,
    }
}

/// What an MP_FASTCLOSE asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FastcloseVerdict {
    /// The key is ours: send a RST on every subflow still open, drop the token and
    /// close the connection with "connection reset" (Linux `mptcp_check_fastclose`;
    /// "refused" in SYN-SENT, "broken pipe" in CLOSE-WAIT, as `tcp_reset`).
    ResetAll,
    /// Not our key: ignored (§3.5 makes the key the proof; Linux ignores it too).
    Ignore,
}

/// MP_FASTCLOSE (§3.5), on an ACK or a RST alike.
pub fn on_fastclose(keys: Keys, receiver_key: u64, c: &mut MptcpCounters) -> FastcloseVerdict {
    if receiver_key == keys.local {
        c.mp_fastclose_rx += 1;
        FastcloseVerdict::ResetAll
    } else {
        c.fastclose_bad_key += 1;
        FastcloseVerdict::Ignore
    }
}

/// The peer's reason for resetting a subflow (MP_TCPRST, §3.6).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RstReport {
    pub reason: ResetReason,
    /// The peer says the condition is temporary: the path manager may open the
    /// subflow again later.
    pub transient: bool,
}

/// MP_TCPRST: reported only when it rides a RST (Linux's parser ignores it
/// elsewhere); the RST itself closes the subflow as TCP does.
pub fn on_tcprst(r: &MpTcpRst, rst_flag: bool, c: &mut MptcpCounters) -> Option<RstReport> {
    if !rst_flag {
        return None;
    }
    c.mp_rst_rx += 1;
    Some(RstReport {
        reason: r.reason,
        transient: r.transient,
    })
}

/// How long a host that sent MP_FAIL waits for the peer's answer before resetting
/// the subflow (Linux `mptcp_subflow_fail`: `TCP_RTO_MAX`, 120 s; then
/// `mptcp_mp_fail_no_response` resets with "middlebox interference").
pub const MP_FAIL_TIMEOUT: Duration = Duration::from_secs(120);

/// The fallback state MP_FAIL decisions need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FailCtx {
    /// Only one subflow has ever carried data and none was joined: an infinite
    /// mapping can still replace MPTCP (Linux `msk->allow_infinite_fallback`).
    pub allow_infinite_fallback: bool,
    /// We sent MP_FAIL on this subflow and wait for the answer (Linux
    /// `subflow->fail_tout` set).
    pub fail_sent: bool,
}

/// What a received MP_FAIL asks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailVerdict {
    /// The peer's checksum failed on our data and we can fall back: answer with
    /// MP_FAIL at the same DSN and an infinite mapping from there, then run as plain
    /// TCP; no new subflows (`mptcp_pm_mp_fail_received`: `send_mp_fail`,
    /// `send_infinite_map`, `allow_subflows = false`).
    EchoAndFallback { reply: MptcpOption },
    /// The answer to our own MP_FAIL: stop the wait; the fallback stands.
    Answered,
    /// Several subflows: the peer resets the failed subflow itself (the MP_FAIL rides
    /// its RST), so nothing beyond the RST (Linux returns early).
    Ignore,
}

/// MP_FAIL (§3.7) received.
pub fn on_mp_fail(dsn: u64, ctx: FailCtx, c: &mut MptcpCounters) -> FailVerdict {
    c.mp_fail_rx += 1;
    if !ctx.allow_infinite_fallback {
        c.mp_fail_ignored += 1;
        return FailVerdict::Ignore;
    }
    if ctx.fail_sent {
        FailVerdict::Answered
    } else {
        FailVerdict::EchoAndFallback {
            reply: MptcpOption::MpFail { dsn },
        }
    }
}

/// What to do when a DSS checksum fails on data we received.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CsumFailVerdict {
    /// One subflow: send MP_FAIL for `dsn` and wait for the peer's infinite mapping
    /// until `deadline` ([`MP_FAIL_TIMEOUT`]), then reset the subflow with
    /// [`ResetReason::MiddleboxInterference`] (Linux `mptcp_subflow_fail`).
    SendFail {
        fail: MptcpOption,
        deadline: Instant,
    },
    /// Several subflows: reset the failed one, with MP_FAIL and MP_TCPRST
    /// ("middlebox interference", not transient) on the RST; the data is re-injected
    /// on the others (§3.7; `subflow_check_data_avail`'s `MAPPING_BAD_CSUM` branch).
    ResetSubflow { fail: MptcpOption, rst: MptcpOption },
}

/// A DSS checksum failed for the mapping starting at `dsn`.
pub fn on_checksum_failure(
    now: Instant,
    dsn: u64,
    allow_infinite_fallback: bool,
    c: &mut MptcpCounters,
) -> CsumFailVerdict {
    c.data_csum_err += 1;
    let fail = MptcpOption::MpFail { dsn };
    if allow_infinite_fallback {
        CsumFailVerdict::SendFail {
            fail,
            deadline: now.saturating_add(MP_FAIL_TIMEOUT),
        }
    } else {
        CsumFailVerdict::ResetSubflow {
            fail,
            rst: MptcpOption::MpTcpRst(MpTcpRst {
                transient: false,
                reason: ResetReason::MiddleboxInterference,
            }),
        }
    }
}

#[cfg(test)]
mod tests;

//! Inner Space's dual handshake at the endpoint (draft-briscoe-tcpm-inspace-mode-
//! tcpbis-00 §2.1.1-2.1.2, App. C.1; docs/mechanisms/inner-space.md).
//!
//! Client: [`Endpoint::connect_dual`] opens two connections to one server from two
//! source ports, the Upgraded one (SYN-U) first and the Ordinary one (a plain SYN, or
//! a SYN-O in the explicit variant). Their events pass through [`Endpoint::poll_event`]
//! here: each side's answer is recorded and the events held until the rules decide;
//! then the survivor's held events go to the application (one `Connected`) and the
//! loser is reset (`Connection::inspace_abort_loser`) and reaped without the
//! application ever seeing it. Rules (implicit): a SYN/ACK-U wins at once; an
//! ordinary SYN/ACK on the Upgraded connection (a legacy server) resets it at once
//! (`conn/inspace.rs`) and the Ordinary one survives when answered; an answer on the
//! Ordinary connection first waits for the Upgraded one. Explicit: a RST to the SYN-O
//! is an upgraded server's; if both complete, the one that answered last is aborted.
//! Only the Ordinary SYN is ever retransmitted (the SYN-U's first timeout ends it:
//! `syn_retries` 0), so never both; a lost SYN-U costs at most its initial RTO, after
//! which the Ordinary connection survives (the draft's "MAY ... RST the Upgraded
//! connection and complete the Ordinary one", AMB-D2-2).
//!
//! Server: [`Endpoint::inspace_listen_syn`]: a SYN-O is answered with RST, a SYN-U is
//! read past its InSpace and Inner Options (which become the options the connection
//! reads, e.g. a Fast Open cookie) and answered with a SYN/ACK-U.
//!
//! Bounds: a pair lives from `connect_dual` until its decision (at most the Ordinary
//! SYN's retries); pairs and the reset losers awaiting their `Closed` are at most the
//! endpoint's connections (`max_connections`), each an entry of a few words.

use super::Endpoint;
use crate::config::Config;
use crate::conn::InSpaceRole;
use crate::endpoint::ConnHandle;
use crate::event::{ConnError, Event};
use crate::inspace::{DualVariant, InSpaceConfig};
use brisk_time::Instant;
use brisk_wire::tcp::inspace::detect::{detect_syn, SynKind};
use brisk_wire::tcp::inspace::mode::FlagOption;
use brisk_wire::tcp::inspace::{SynInSpace, SYN_LEN};
use brisk_wire::TcpRepr;
use std::collections::VecDeque;
use std::net::SocketAddr;

/// The two connections [`Endpoint::connect_dual`] opened. The application uses the
/// one its `Connected` event names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DualConnect {
    pub upgraded: ConnHandle,
    pub ordinary: ConnHandle,
}

/// Inner Space counters (client and server).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InSpaceStats {
    /// Dual handshakes opened.
    pub duals: u64,
    /// Decided for the Upgraded connection (an upgraded server).
    pub won_upgraded: u64,
    /// Decided for the Ordinary connection (a legacy server, or a lost SYN-U).
    pub won_ordinary: u64,
    /// Neither connection survived (reported on the Ordinary handle).
    pub failed: u64,
    /// Server: SYN-Us answered with a SYN/ACK-U.
    pub syn_u: u64,
    /// Server: SYN-Os reset (explicit variant).
    pub syn_o_reset: u64,
    /// Server: SYNs that passed detection but whose InSpace or Inner Options did not
    /// parse: handled as ordinary SYNs.
    pub malformed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Side {
    Pending,
    Connected,
    Failed(ConnError),
}

#[derive(Debug)]
struct Dual {
    pair: DualConnect,
    variant: DualVariant,
    ord: Side,
    upg: Side,
    /// The Ordinary connection answered before the Upgraded one did.
    ord_first: bool,
    held: Vec<(ConnHandle, Event)>,
}

#[derive(Debug, Default)]
pub(super) struct DualHost {
    pairs: Vec<Dual>,
    losers: Vec<ConnHandle>,
    released: VecDeque<(ConnHandle, Event)>,
    stats: InSpaceStats,
}

/// What a listener makes of a SYN with Inner Space on.
pub(super) enum ListenSyn<'a> {
    /// A SYN-O: answer RST.
    Reset,
    /// A SYN-U, as the connection reads it: past its InSpace, Inner Options as options.
    Upgraded(TcpRepr<'a>),
    Ordinary,
}

impl Endpoint {
    fn dual_host(&mut self) -> &mut DualHost {
        self.dual.get_or_insert_with(Box::default)
    }

    /// Inner Space counters.
    pub fn inspace_stats(&self) -> InSpaceStats {
        self.dual
            .as_ref()
            .map_or_else(InSpaceStats::default, |d| d.stats)
    }

    /// Opens a dual handshake to `remote` (`config.inspace.client` says which); the
    /// application waits for one `Connected` (or `Closed`) naming the survivor.
    /// Errors: `config.inspace` has no client variant (`Unsupported`), or either
    /// `connect` failed (then nothing is left open).
    pub fn connect_dual(
        &mut self,
        now: Instant,
        remote: SocketAddr,
        config: Config,
    ) -> Result<DualConnect, ConnError> {
        let Some(is) = config.inspace.as_deref().copied() else {
            return Err(ConnError::Unsupported);
        };
        let Some(variant) = is.client else {
            return Err(ConnError::Unsupported);
        };
        // SYN-U first (§2.1.1's most aggressive order): it is queued first.
        let upgraded = self.connect(now, 0, remote, config.clone())?;
        let ordinary = match self.connect(now, 0, remote, config) {
            Ok(h) => h,
            Err(e) => {
                if let Some(c) = self.conn_mut(upgraded) {
                    c.abort();
                }
                return Err(e);
            }
        };
        if let Some(c) = self.conn_mut(upgraded) {
            c.set_inspace(InSpaceRole::Upgraded, &is);
        }
        let role = match variant {
            DualVariant::Implicit => InSpaceRole::Ordinary,
            DualVariant::Explicit => InSpaceRole::OrdinaryExplicit,
        };
        if let Some(c) = self.conn_mut(ordinary) {
            c.set_inspace(role, &is);
        }
        let pair = DualConnect { upgraded, ordinary };
        let host = self.dual_host();
        host.stats.duals += 1;
        host.pairs.push(Dual {
            pair,
            variant,
            ord: Side::Pending,
            upg: Side::Pending,
            ord_first: false,
            held: Vec::new(),
        });
        Ok(pair)
    }

    /// A SYN to a listener with Inner Space on (§2.1.1, App. C.1).
    pub(super) fn inspace_listen_syn<'a>(
        &mut self,
        tcp: &TcpRepr<'a>,
        c: &InSpaceConfig,
    ) -> ListenSyn<'a> {
        if FlagOption::InSpaceO.present(&tcp.extra) {
            self.dual_host().stats.syn_o_reset += 1;
            return ListenSyn::Reset;
        }
        if detect_syn(tcp.payload, c.magic) != SynKind::Upgraded {
            return ListenSyn::Ordinary;
        }
        let parsed = SynInSpace::decode(tcp.payload, c.magic).ok().and_then(|o| {
            let head = SYN_LEN + o.inner_octets();
            let mut extra = tcp.extra;
            crate::conn::inspace::inner_into_extra(&tcp.payload[SYN_LEN..head], &mut extra)
                .then_some((head, extra))
        });
        let Some((head, extra)) = parsed else {
            self.dual_host().stats.malformed += 1;
            return ListenSyn::Ordinary;
        };
        self.dual_host().stats.syn_u += 1;
        ListenSyn::Upgraded(TcpRepr {
            seq: tcp.seq + head as u32,
            payload: &tcp.payload[head..],
            extra,
            ..*tcp
        })
    }

    /// The next event for the application, through the dual handshakes' rules:
    /// `None` when it is held or swallowed.
    #[cold]
    #[inline(never)]
    pub(super) fn dual_filter(&mut self, h: ConnHandle, ev: Event) -> Option<(ConnHandle, Event)> {
        let Some(host) = self.dual.as_mut() else {
            return Some((h, ev));
        };
        if let Some(i) = host.losers.iter().position(|&l| l == h) {
            if matches!(ev, Event::Closed(_)) {
                host.losers.swap_remove(i);
                self.closed_event(h);
            }
            return None;
        }
        let Some(i) = host
            .pairs
            .iter()
            .position(|d| d.pair.ordinary == h || d.pair.upgraded == h)
        else {
            return Some((h, ev));
        };
        let d = &mut host.pairs[i];
        let is_ord = d.pair.ordinary == h;
        let mut closed = false;
        match ev {
            Event::Connected | Event::Closed(_) => {
                let side = match ev {
                    Event::Connected => Side::Connected,
                    Event::Closed(Err(e)) => Side::Failed(e),
                    _ => Side::Failed(ConnError::Reset),
                };
                closed = matches!(ev, Event::Closed(_));
                if is_ord {
                    if d.upg == Side::Pending && d.ord == Side::Pending {
                        d.ord_first = true;
                    }
                    d.ord = side;
                } else {
                    d.upg = side;
                }
                if ev == Event::Connected {
                    d.held.push((h, ev));
                }
            }
            other => d.held.push((h, other)),
        }
        // The Ordinary SYN answered first: the SYN-U's retransmission (§2.1.2).
        let retry =
            (is_ord && ev == Event::Connected && d.upg == Side::Pending).then_some(d.pair.upgraded);
        if closed {
            // The application never sees this connection: reap it now.
            self.closed_event(h);
        }
        self.dual_decide(i);
        if let Some(u) = retry {
            if let Some((at, rtt)) = self.conn(h).map(|c| c.inspace_answer()) {
                if let Some(c) = self.conn_mut(u) {
                    c.inspace_retry_syn_u(at, rtt);
                }
            }
        }
        None
    }

    /// Applies the rules to pair `i`; on a decision, releases the survivor's events,
    /// resets the loser and forgets the pair.
    fn dual_decide(&mut self, i: usize) {
        let Some(host) = self.dual.as_mut() else {
            return;
        };
        let d = &host.pairs[i];
        // The Upgraded connection ended without a SYN/ACK-U: a legacy server's
        // SYN/ACK reset it (`InSpaceOutcome::Legacy`), or its SYN-U timed out.
        let legacy = matches!(d.upg, Side::Failed(_));
        // (winner, loser) or failure.
        let verdict: Option<Result<(ConnHandle, ConnHandle), ConnError>> = match (d.ord, d.upg) {
            // A SYN/ACK-U: the Upgraded connection, unless (explicit) the Ordinary
            // one completed first: both succeeded, the last to answer is aborted.
            (ord, Side::Connected) => {
                if d.variant == DualVariant::Explicit && ord == Side::Connected && d.ord_first {
                    Some(Ok((d.pair.ordinary, d.pair.upgraded)))
                } else {
                    Some(Ok((d.pair.upgraded, d.pair.ordinary)))
                }
            }
            (Side::Connected, _) if legacy => Some(Ok((d.pair.ordinary, d.pair.upgraded))),
            (Side::Failed(e), _) if legacy => Some(Err(e)),
            _ => None,
        };
        let Some(verdict) = verdict else {
            return;
        };
        let d = host.pairs.swap_remove(i);
        match verdict {
            Ok((win, lose)) => {
                if win == d.pair.upgraded {
                    host.stats.won_upgraded += 1;
                } else {
                    host.stats.won_ordinary += 1;
                }
                host.released
                    .extend(d.held.into_iter().filter(|(h, _)| *h == win));
                let lose_side = if lose == d.pair.upgraded {
                    d.upg
                } else {
                    d.ord
                };
                // A loser that already ended was reaped when its `Closed` came.
                let lose_alive = !matches!(lose_side, Side::Failed(_));
                if lose_alive {
                    host.losers.push(lose);
                }
                if let Some(c) = self.conn_mut(win) {
                    c.inspace_release();
                }
                if lose_alive {
                    if let Some(c) = self.conn_mut(lose) {
                        c.inspace_abort_loser();
                    }
                }
            }
            Err(e) => {
                host.stats.failed += 1;
                host.released
                    .push_back((d.pair.ordinary, Event::Closed(Err(e))));
            }
        }
    }

    /// An event released by a decision, before any newer one.
    #[inline]
    pub(super) fn dual_released(&mut self) -> Option<(ConnHandle, Event)> {
        self.dual.as_mut()?.released.pop_front()
    }
}

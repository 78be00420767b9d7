//! TCP Fast Open in the connection (RFC 7413 §3-4; docs/mechanisms/tfo.md). The
//! endpoint decides (its cookie cache, keys and pending queue, `crate::tfo`); the
//! connection carries it out:
//!
//! - Client (Linux `tcp_send_syn_data`, `tcp_rcv_fastopen_synack`): the first SYN
//!   carries a cookie request, or the cookie with up to one MSS of the data written
//!   before it went out (less the 40 bytes of option space, as Linux sizes it). The
//!   data takes sequence space after the SYN and is not in the scoreboard: a SYN-ACK
//!   that acknowledges it frees it from the send buffer; one that acknowledges only
//!   the SYN puts SND.NXT back after the SYN, so the data goes again as new data at
//!   once after the handshake. A retransmitted SYN carries neither data nor option
//!   (Linux clears `fastopen_req->cookie` after the first). The outcome (the cookie,
//!   the server's MSS, whether the SYN's data was lost, which encoding to try) is
//!   left for the endpoint's cache (`take_tfo_outcome`).
//! - Server (Linux `tcp_fastopen_create_child`): a SYN whose cookie the listener
//!   accepted has its data taken into the receive buffer at once; the SYN-ACK
//!   acknowledges it and carries the listener's reply option (a cookie for a
//!   request, a forged or stale cookie). The connection is readable, and may send,
//!   in SYN-RECEIVED, as Linux's passive Fast Open child.

use super::rto_timer::RtoArm;
use super::{Connection, State};
use crate::event::Event;
use crate::tfo::ClientSyn;
use brisk_time::Instant;
use brisk_wire::fastopen::{self, FastOpen, FastOpenCookie};
use brisk_wire::TcpRepr;

/// The option space Linux leaves when it sizes a SYN's data (`MAX_TCP_OPTION_SPACE`).
const SYN_OPTION_SPACE: u32 = 40;

/// A connection's Fast Open state (boxed in `Connection::tfo`; `None` for plain TCP).
#[derive(Clone, Debug, Default)]
pub(crate) struct ConnTfo {
    /// Client: what the first SYN carries (the endpoint's cache decided).
    client: Option<ClientSyn>,
    /// Client: the server's MSS from the cache, to size the SYN's data.
    cached_mss: Option<u16>,
    /// Client: data bytes the first SYN carried.
    syn_data: u32,
    /// Server: the option for our SYN-ACK.
    reply: Option<FastOpen>,
    /// Server: the SYN's data was accepted (a pending Fast Open child).
    passive: bool,
    /// Client: the handshake's outcome, once, for the endpoint.
    outcome: Option<ClientOutcome>,
    /// RITE's cookie at the end of the first connection (`TfoConfig::cookie_at_end`);
    /// a `Cell` because the option is added to a segment on its way out, by reference.
    end: std::cell::Cell<EndCookie>,
}

/// The cookie exchanged at the end of a connection (brisk-only, off by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
enum EndCookie {
    #[default]
    Off,
    /// Client: the request goes on our FIN.
    Ask,
    /// Client: asked; a cookie on the server's later segments is taken.
    Asked,
    /// Server: a request on a non-SYN segment is answered.
    Serve,
    /// Server: a request came; the endpoint makes the cookie.
    Due,
    /// Server: the option for our next segment.
    Reply(FastOpen),
    Done,
}

/// What a client handshake taught (Linux `tcp_fastopen_cache_set`'s arguments, and
/// what the counters need).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ClientOutcome {
    /// The server's cookie, if its SYN-ACK carried one.
    pub cookie: Option<FastOpenCookie>,
    /// The cookie came in the experimental encoding (kind 254).
    pub cookie_exp: bool,
    /// The server's MSS option.
    pub mss: Option<u16>,
    /// The SYN's data was lost: the SYN was retransmitted and the SYN-ACK neither
    /// acknowledged the data nor carried a cookie (a middlebox dropping SYNs with
    /// data, or the SYN-data itself lost).
    pub syn_lost: bool,
    /// Which cookie-request encoding to try next (0: no change; 1: the experimental
    /// kind 254; 2: back to kind 34), Linux's `try_exp`.
    pub try_exp: u8,
    /// Data bytes the SYN carried.
    pub data_sent: u32,
    /// Of them, acknowledged by the SYN-ACK (Linux `syn_data_acked`).
    pub data_acked: u32,
    /// The SYN asked for a cookie.
    pub requested: bool,
}

impl Connection {
    /// Client: what the first SYN will carry (before it goes out).
    pub(crate) fn set_tfo_client(&mut self, syn: ClientSyn, cached_mss: Option<u16>) {
        if self.state != State::SynSent || matches!(syn, ClientSyn::Plain) {
            return;
        }
        self.tfo = Some(Box::new(ConnTfo {
            client: Some(syn),
            cached_mss,
            ..ConnTfo::default()
        }));
    }

    /// Server: the listener's decision for the SYN this connection was accepted
    /// from. With `accept_data`, the SYN's payload is in the receive buffer now.
    pub(crate) fn set_tfo_passive(
        &mut self,
        accept_data: bool,
        reply: Option<FastOpen>,
        syn: &TcpRepr<'_>,
    ) {
        let at_end = self
            .config
            .fastopen
            .as_deref()
            .is_some_and(|f| f.cookie_at_end && f.server);
        if !accept_data && reply.is_none() && !at_end {
            return;
        }
        self.tfo = Some(Box::new(ConnTfo {
            reply,
            passive: accept_data,
            end: std::cell::Cell::new(if at_end {
                EndCookie::Serve
            } else {
                EndCookie::Off
            }),
            ..ConnTfo::default()
        }));
        // The child sends in SYN-RECEIVED: RITE's smaller IW applies from here.
        if let Some(iw) = self
            .config
            .fastopen
            .as_deref()
            .and_then(|f| f.syn_data_iw)
            .filter(|_| accept_data)
        {
            let initial = self.config.congestion.initial_cwnd.max(1);
            if iw.max(1) < initial {
                self.set_cwnd(iw.max(1));
            }
        }
        if accept_data && !syn.payload.is_empty() {
            // The SYN-ACK acknowledges these bytes; no ACK of its own is owed.
            let ooo_before = self.stream.recvbuf.ooo_dropped;
            if let super::recv::Arrival::InOrder { advanced, .. } = self.land(1, syn.payload) {
                self.info.bytes_received += advanced;
                self.push_event(Event::Readable);
            }
            self.counters.ooo_dropped += self.stream.recvbuf.ooo_dropped - ooo_before;
        }
    }

    /// Client: the data (and FIN) a SYN-ACK carried, taken as Linux's
    /// `tcp_fastopen_add_skb` does on a Fast Open connection (RFC 7413 §4.2.2 lets a
    /// server send them). Without Fast Open a SYN-ACK's data is ignored, as Linux's
    /// `tcp_rcv_synsent_state_process` does; the server sends it again.
    pub(super) fn tfo_synack_data(&mut self, now: Instant, seg: &TcpRepr<'_>) {
        if !seg.payload.is_empty() {
            let ooo_before = self.stream.recvbuf.ooo_dropped;
            if let super::recv::Arrival::InOrder { advanced, .. } = self.land(1, seg.payload) {
                self.info.bytes_received += advanced;
                self.push_event(Event::Readable);
            }
            self.counters.ooo_dropped += self.stream.recvbuf.ooo_dropped - ooo_before;
        }
        let end = 1 + seg.payload.len() as u64;
        if seg.flags.fin() && self.sub.map.rcv_to_stream(end) == self.stream.recvbuf.nxt() {
            self.sub.rcv.fin_seq = Some(end);
            self.stream.peer_fin = Some(self.sub.map.rcv_to_stream(end));
            if self.sub.rcv.fin_due() {
                self.on_peer_fin(now);
            }
        }
    }

    /// Client with `cookie_at_end` and no cookie: a plain SYN, the request on our
    /// FIN.
    pub(crate) fn set_tfo_end_client(&mut self) {
        if self.state == State::SynSent {
            self.tfo = Some(Box::new(ConnTfo {
                end: std::cell::Cell::new(EndCookie::Ask),
                ..ConnTfo::default()
            }));
        }
    }

    /// A segment for a connection with Fast Open state, before it is processed:
    /// the end-of-connection request (server) or cookie (client).
    #[cold]
    #[inline(never)]
    pub(crate) fn tfo_end_input(&mut self, seg: &TcpRepr<'_>) {
        let mss = self.mss().min(u32::from(u16::MAX)) as u16;
        let Some(t) = self.tfo.as_deref_mut() else {
            return;
        };
        if seg.flags.syn() || !matches!(t.end.get(), EndCookie::Asked | EndCookie::Serve) {
            return;
        }
        let Some(Ok(opt)) = fastopen::parse(&seg.extra) else {
            return;
        };
        match (t.end.get(), opt.cookie) {
            (EndCookie::Asked, Some(cookie)) => {
                t.end.set(EndCookie::Done);
                t.outcome = Some(ClientOutcome {
                    cookie: Some(cookie),
                    cookie_exp: opt.experimental,
                    mss: Some(mss),
                    syn_lost: false,
                    try_exp: 0,
                    data_sent: 0,
                    data_acked: 0,
                    requested: true,
                });
            }
            (EndCookie::Serve, None) => t.end.set(EndCookie::Due),
            _ => {}
        }
    }

    /// Server: a request came at the end of the connection; the endpoint makes
    /// the cookie.
    pub(crate) fn tfo_end_due(&self) -> bool {
        self.tfo
            .as_deref()
            .is_some_and(|t| t.end.get() == EndCookie::Due)
    }

    pub(crate) fn tfo_end_reply(&mut self, cookie: FastOpenCookie) {
        if let Some(t) = self.tfo.as_deref_mut() {
            t.end.set(EndCookie::Reply(FastOpen::with_cookie(cookie)));
        }
    }

    /// The option on a segment leaving (not a SYN): the client's request on its
    /// FIN, the server's cookie on its next segment.
    #[cold]
    #[inline(never)]
    pub(crate) fn tfo_end_option(&self, extra: &mut brisk_wire::ExtraOptions, fin: bool) {
        let Some(t) = self.tfo.as_deref() else {
            return;
        };
        match t.end.get() {
            EndCookie::Ask if fin && fastopen::push(extra, &FastOpen::REQUEST).is_ok() => {
                t.end.set(EndCookie::Asked);
            }
            EndCookie::Reply(o) if fastopen::push(extra, &o).is_ok() => {
                t.end.set(EndCookie::Done);
            }
            _ => {}
        }
    }

    /// A passive connection whose SYN's data was accepted and which has not
    /// completed its handshake: readable and writable in SYN-RECEIVED.
    #[inline]
    pub(crate) fn tfo_passive_pending(&self) -> bool {
        self.state == State::SynReceived && self.tfo.as_ref().is_some_and(|t| t.passive)
    }

    /// Whether this connection's SYN carried accepted Fast Open data (server) or
    /// used Fast Open at all (client).
    pub fn used_fastopen(&self) -> bool {
        self.tfo
            .as_ref()
            .is_some_and(|t| t.passive || t.client.is_some())
    }

    /// Client, before the first SYN left: how many data bytes it can carry (a
    /// cookie is cached), or `None` (a cookie request or no Fast Open). What Linux's
    /// `tcp_send_syn_data` copies into the SYN, and so what a non-blocking
    /// `sendto(MSG_FASTOPEN)` returns.
    pub fn fastopen_syn_room(&self) -> Option<u32> {
        if self.state != State::SynSent {
            return None;
        }
        let t = self.tfo.as_deref()?;
        let Some(ClientSyn::Data(_)) = t.client else {
            return None;
        };
        let mss = u32::from(self.config.mss);
        let peer = t.cached_mss.map_or(mss, u32::from);
        Some(mss.min(peer).saturating_sub(SYN_OPTION_SPACE))
    }

    /// Whether the connection has Fast Open state (one branch per segment for plain
    /// TCP, in the endpoint).
    #[inline(always)]
    pub(crate) fn has_tfo(&self) -> bool {
        self.tfo.is_some()
    }

    /// The client's handshake outcome, once (the endpoint updates its cache).
    #[inline]
    pub(crate) fn take_tfo_outcome(&mut self) -> Option<ClientOutcome> {
        self.tfo.as_mut()?.outcome.take()
    }

    /// Adds the Fast Open option (and, on a client's first SYN, the data) to the SYN
    /// or SYN-ACK being built. Returns the payload length the SYN carries.
    pub(super) fn tfo_syn(
        &mut self,
        header: &mut TcpRepr<'static>,
        first: bool,
        active: bool,
    ) -> u32 {
        let unsent = self.stream.sendbuf.end();
        let mss = u32::from(self.config.mss);
        let Some(t) = self.tfo.as_deref_mut() else {
            return 0;
        };
        if !active {
            if let Some(opt) = t.reply {
                let _ = fastopen::push(&mut header.extra, &opt);
            }
            return 0;
        }
        if !first {
            // Linux: SYN retries carry no Fast Open option and no data.
            return 0;
        }
        match t.client {
            Some(ClientSyn::Request(opt)) => {
                let _ = fastopen::push(&mut header.extra, &opt);
                0
            }
            Some(ClientSyn::Data(opt)) => {
                if fastopen::push(&mut header.extra, &opt).is_err() {
                    return 0;
                }
                let peer = t.cached_mss.map_or(mss, u32::from);
                let space = mss.min(peer).saturating_sub(SYN_OPTION_SPACE);
                let len = unsent.min(u64::from(space)) as u32;
                t.syn_data = len;
                len
            }
            _ => 0,
        }
    }

    /// The handshake completed. A Fast Open child may have data in flight from
    /// SYN-RECEIVED: its retransmission timer runs on (Linux
    /// `tcp_rcv_synrecv_state_fastopen` re-arms it), and if its SYN-ACK timed out
    /// that data is taken as lost and sent again now (Linux enters loss on the
    /// first SYN-ACK timeout of a Fast Open child, `tcp_fastopen_synack_timer`;
    /// the client dropped any data that overtook its SYN-ACK).
    pub(super) fn tfo_established(&mut self, now: Instant) {
        // RITE's smaller IW after a Fast Open handshake (`TfoConfig::syn_data_iw`).
        if let Some(iw) = self.config.fastopen.as_deref().and_then(|f| f.syn_data_iw) {
            let used = self
                .tfo
                .as_ref()
                .is_some_and(|t| t.passive || t.outcome.is_some_and(|o| o.data_acked > 0));
            let initial = self.config.congestion.initial_cwnd.max(1);
            if used && iw.max(1) < initial {
                self.set_cwnd(iw.max(1));
            }
        }
        if !self.tfo.as_ref().is_some_and(|t| t.passive) || !self.sub.loss.outstanding() {
            return;
        }
        if self.sub.hs.syn_retransmitted {
            self.enter_loss(now);
        }
        self.arm_rto(now, RtoArm::DataSent);
    }

    /// Client: the SYN-ACK (acknowledging `ack`, a sequence offset in 1..=SND.NXT)
    /// arrived in SYN-SENT; SND.UNA is 1. Linux `tcp_rcv_fastopen_synack`.
    pub(super) fn tfo_on_synack(&mut self, seg: &TcpRepr<'_>, ack: u64) {
        let retransmitted = self.sub.hs.syn_retransmitted;
        let Some(t) = self.tfo.as_deref_mut() else {
            return;
        };
        let Some(sent) = t.client else {
            return;
        };
        let (cookie, cookie_exp) = match fastopen::parse(&seg.extra) {
            Some(Ok(FastOpen {
                cookie: Some(c),
                experimental,
            })) => (Some(c), experimental),
            _ => (None, false),
        };
        let requested = matches!(sent, ClientSyn::Request(_));
        let data_sent = t.syn_data;
        let data_acked = (ack.saturating_sub(1)).min(u64::from(data_sent)) as u32;
        // Linux: a timed-out SYN whose SYN-ACK has no cookie and does not take the
        // data means the SYN-data was lost; an unanswered request (no timestamps
        // to show a middlebox stripped nothing, as Linux) tries the other encoding.
        let syn_lost = retransmitted && cookie.is_none() && data_sent > data_acked;
        let try_exp = match sent {
            ClientSyn::Request(o)
                if !retransmitted && cookie.is_none() && seg.timestamps.is_none() =>
            {
                if o.experimental {
                    2
                } else {
                    1
                }
            }
            _ => 0,
        };
        t.outcome = Some(ClientOutcome {
            cookie,
            cookie_exp,
            mss: seg.mss,
            syn_lost,
            try_exp,
            data_sent,
            data_acked,
            requested,
        });
        if data_acked > 0 {
            self.sub.snd.snd_una = 1 + u64::from(data_acked);
            self.stream.sendbuf.ack_to(u64::from(data_acked));
            self.stream.sendbuf.mark_sent(u64::from(data_acked));
            self.info.bytes_acked += u64::from(data_acked);
            self.stream.on_space_freed();
        }
        // A Fast Open server may send right behind its SYN-ACK (from SYN-RECEIVED),
        // so its data can arrive before our first ACK has set the advertised edge:
        // the window our SYN offered holds until then (Linux sets `rcv_wnd` at
        // `tcp_connect_init`).
        let syn_window = self.stream.recvbuf.free().min(65_535) as u64;
        self.sub.rcv.rcv_adv = self.sub.rcv.rcv_adv.max(self.rcv_nxt() + syn_window);
        // What the SYN-ACK did not take goes again at once after the handshake, as
        // new data (it was never in the scoreboard).
        self.sub.snd.snd_nxt = self.sub.snd.snd_una;
    }
}

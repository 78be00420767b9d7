//! Inner Space in the connection: the SYN=1 InSpace option on a SYN-U and a
//! SYN/ACK-U, and the client's reading of the answer to its SYN-U (draft
//! §2.1.1, §2.3.1, App. C.1; docs/mechanisms/inner-space.md). Mode (iii),
//! self-disabling after the SYN/ACK: only the handshake carries InSpace.
//!
//! Sequence space (§2.3.1.3: all TCP Data is in it): the connection's ISS and IRS are
//! those of its first ordinary byte. A SYN-U whose InSpace and Inner Options take `H`
//! octets leaves with sequence number ISS − H, so the SYN flag, then the `H` octets,
//! then stream offset 0 at ISS + 1: a SYN/ACK-U that acknowledges the whole TCP Data
//! acknowledges ISS + 1 (+ any Fast Open data), exactly what a plain SYN-ACK would.
//! A legacy server's SYN/ACK acknowledges only the SYN (ISS − H + 1): the client
//! resets at once (§2.1.1). The same shift on a SYN/ACK-U (H = 12) and at the
//! receivers (IRS = SEQ + H) keeps the rest of the connection ordinary.

use super::inspace_data::{has_mode_switch, mode_switch_bytes, DataMode};
use super::{Connection, State};
use crate::event::ConnError;
use crate::inspace::InSpaceConfig;
use brisk_time::{Duration, Instant};
use brisk_wire::tcp::inspace::detect::{detect_syn, Magic, SynKind};
use brisk_wire::tcp::inspace::mode::FlagOption;
use brisk_wire::tcp::inspace::{SynInSpace, SYN_LEN};
use brisk_wire::{ExtraOptions, SeqNum, TcpRepr};

/// A connection's Inner Space role in the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InSpaceRole {
    /// The client's Upgraded connection: its SYN is a SYN-U.
    Upgraded,
    /// The client's Ordinary connection of an implicit dual handshake: a plain SYN.
    Ordinary,
    /// The client's Ordinary connection of an explicit dual handshake: a SYN-O.
    OrdinaryExplicit,
    /// A server connection accepted from a SYN-U: its SYN/ACK is a SYN/ACK-U.
    Server,
}

/// How the Upgraded connection's SYN-U was answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InSpaceOutcome {
    /// A SYN/ACK-U: an upgraded server.
    Upgraded,
    /// An ordinary SYN/ACK: a legacy server; the connection was reset at once.
    Legacy,
}

#[derive(Clone, Debug)]
pub(crate) struct ConnInSpace {
    role: InSpaceRole,
    magic: Magic,
    outcome: Option<InSpaceOutcome>,
    /// The Ordinary connection holds the ACK of its SYN/ACK until the dual
    /// handshake is decided (Table 1, step 3a: the client waits, then ACKs the
    /// survivor and resets the other, so a server never completes the loser).
    hold_ack: bool,
    /// Client: the config asks for Inner Space on data segments.
    want_data: bool,
    /// Client: the SYN-U asked for it (decided at its first emission: only a
    /// data-less SYN-U with nothing written asks, so both halves frame from stream
    /// offset 0). A `Cell` because the SYN is wrapped on its way out, by reference.
    pub(super) data_req: std::cell::Cell<bool>,
    /// Inner Space on data segments, once asked for (`inspace_data.rs`).
    pub(super) data: Option<Box<super::inspace_data::DataMode>>,
    /// The SYN-U's one retransmission (§2.1.2).
    retry: SynURetry,
}

/// The SYN-U's retransmission (§2.1.2: "If the SYN has been answered but the SYN-U
/// has not a short while later, the client SHOULD retransmit the SYN-U").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SynURetry {
    /// Not asked for: the Ordinary SYN is unanswered. The SYN-U's own timeout ends
    /// it (neither SYN answered: only the Ordinary one is retransmitted, never both).
    Idle,
    /// The Ordinary SYN was answered: the SYN-U goes again at the RTO timer, and the
    /// connection gives up `give_up` after that.
    Due { give_up: Duration },
    /// Retransmitted once; the next timeout ends the connection.
    Sent,
}

/// Fast Open's option kinds: on a SYN-U they go inside (§2.7.1).
fn is_fast_open(kind: u8, data: &[u8]) -> bool {
    kind == brisk_wire::fastopen::KIND
        || (kind == brisk_wire::fastopen::EXP_KIND && data.starts_with(&[0xF9, 0x89]))
}

/// Inner Options from a SYN-U into the options the connection reads, as if Outer
/// (the connection-related options may be either, §2.3). NOP and padding skipped;
/// an option that does not parse ends the list. Returns whether all were taken.
pub(crate) fn inner_into_extra(inner: &[u8], extra: &mut ExtraOptions) -> bool {
    let mut i = 0;
    while i < inner.len() {
        match inner[i] {
            0 => return true,
            1 => i += 1,
            kind => {
                let Some(&len) = inner.get(i + 1) else {
                    return false;
                };
                let len = usize::from(len);
                if len < 2 || i + len > inner.len() {
                    return false;
                }
                if extra.push(kind, &inner[i + 2..i + len]).is_err() {
                    return false;
                }
                i += len;
            }
        }
    }
    true
}

impl Connection {
    pub(crate) fn set_inspace(&mut self, role: InSpaceRole, cfg: &InSpaceConfig) {
        self.inspace = Some(Box::new(ConnInSpace {
            role,
            magic: cfg.magic,
            outcome: None,
            hold_ack: matches!(role, InSpaceRole::Ordinary | InSpaceRole::OrdinaryExplicit),
            want_data: cfg.data && role == InSpaceRole::Upgraded,
            data_req: std::cell::Cell::new(false),
            data: None,
            retry: SynURetry::Idle,
        }));
        if role == InSpaceRole::Upgraded {
            // Neither SYN answered: only the Ordinary one is retransmitted (§2.1.2,
            // latency preferred), so the SYN-U's own first timeout ends it. Its one
            // retransmission, once the Ordinary SYN is answered, is
            // `inspace_retry_syn_u`'s.
            std::sync::Arc::make_mut(&mut self.config)
                .timeouts
                .syn_retries = 0;
        }
    }

    /// Whether this connection takes part in Inner Space's handshake (one branch
    /// per SYN sent, in the endpoint).
    #[inline(always)]
    pub(crate) fn has_inspace(&self) -> bool {
        self.inspace.is_some()
    }

    pub fn inspace_role(&self) -> Option<InSpaceRole> {
        self.inspace.as_ref().map(|i| i.role)
    }

    /// How the SYN-U was answered (the Upgraded connection only).
    pub fn inspace_outcome(&self) -> Option<InSpaceOutcome> {
        self.inspace.as_ref().and_then(|i| i.outcome)
    }

    /// A SYN or SYN/ACK of this connection as it goes on the wire: a SYN-U or
    /// SYN/ACK-U gets the InSpace option (and Inner Options) in front of its data
    /// and its sequence number moved back by their length; a SYN-O gets the InSpaceO
    /// flag. `None`: leave the segment as it is.
    #[cold]
    #[inline(never)]
    pub(crate) fn inspace_syn_wire(
        &self,
        tcp: &TcpRepr<'_>,
    ) -> Option<(SeqNum, ExtraOptions, Vec<u8>)> {
        let is = self.inspace.as_deref()?;
        let mut extra = tcp.extra;
        let mut inner = Vec::new();
        match is.role {
            InSpaceRole::Ordinary => return None,
            InSpaceRole::OrdinaryExplicit => {
                if self.state != State::SynSent {
                    return None;
                }
                let _ = FlagOption::InSpaceO.push(&mut extra);
                return Some((tcp.seq, extra, tcp.payload.to_vec()));
            }
            InSpaceRole::Upgraded => {
                if self.state != State::SynSent {
                    return None;
                }
                // A Fast Open option moves inside (§2.7.1): a legacy server never
                // sees it, so it never delivers the SYN-U's data early.
                if tcp.extra.iter().any(|(k, d)| is_fast_open(k, d)) {
                    extra = ExtraOptions::new();
                    for (k, d) in tcp.extra.iter() {
                        if is_fast_open(k, d) {
                            inner.push(k);
                            inner.push((d.len() + 2) as u8);
                            inner.extend_from_slice(d);
                        } else {
                            let _ = extra.push(k, d);
                        }
                    }
                }
                // Inner Space on data segments: asked on a data-less SYN-U before
                // anything is written (so both halves frame from offset 0), and on
                // its retransmissions.
                if is.want_data
                    && !is.data_req.get()
                    && tcp.payload.is_empty()
                    && self.stream.sendbuf.end() == 0
                    && !self.sub.hs.syn_retransmitted
                {
                    is.data_req.set(true);
                }
                if is.data_req.get() {
                    inner.extend_from_slice(&mode_switch_bytes(true, true));
                }
            }
            InSpaceRole::Server => {
                if self.state != State::SynReceived {
                    return None;
                }
                if is.data.is_some() {
                    inner.extend_from_slice(&mode_switch_bytes(true, false));
                }
            }
        }
        while inner.len() % 4 != 0 {
            inner.push(1);
        }
        let head = SYN_LEN + inner.len();
        let words = (inner.len() / 4) as u16;
        let sds = u16::try_from(head + tcp.payload.len()).ok()?;
        let opt = SynInSpace {
            sds,
            inoo_words: words,
            // All Prefix: they are connection options, processed before the data.
            soo_words: words,
        }
        .encode(is.magic)
        .ok()?;
        let mut data = Vec::with_capacity(usize::from(sds));
        data.extend_from_slice(&opt);
        data.extend_from_slice(&inner);
        data.extend_from_slice(tcp.payload);
        Some((tcp.seq - head as u32, extra, data))
    }

    /// The Upgraded connection's SYN/ACK in SYN-SENT (§2.1.1). A SYN/ACK-U: the
    /// segment as the rest of the handshake reads it (IRS past its InSpace). An
    /// ordinary SYN/ACK: a legacy server, reset at once; `None`.
    #[cold]
    #[inline(never)]
    pub(super) fn inspace_synack<'a>(&mut self, seg: &TcpRepr<'a>) -> Option<TcpRepr<'a>> {
        let is = self.inspace.as_deref_mut()?;
        if detect_syn(seg.payload, is.magic) == SynKind::Upgraded {
            if let Ok(opt) = SynInSpace::decode(seg.payload, is.magic) {
                let head = SYN_LEN + opt.inner_octets();
                let mut extra = seg.extra;
                if inner_into_extra(&seg.payload[SYN_LEN..head], &mut extra) {
                    is.outcome = Some(InSpaceOutcome::Upgraded);
                    if is.data_req.get() {
                        let confirmed =
                            has_mode_switch(&extra, true, false) && seg.payload.len() == head;
                        if confirmed {
                            is.data
                                .get_or_insert_with(|| Box::new(DataMode::new(false)))
                                .start_reading();
                        } else {
                            is.data_req.set(false);
                            if is.data.is_some() {
                                // Writes were framed for a server that did not
                                // confirm: they cannot be sent as they are.
                                is.data = None;
                                self.pending_rst = Some((seg.ack, None));
                                self.terminate(Err(ConnError::Refused));
                                return None;
                            }
                        }
                    }
                    return Some(TcpRepr {
                        seq: seg.seq + head as u32,
                        payload: &seg.payload[head..],
                        extra,
                        ..*seg
                    });
                }
            }
        }
        is.outcome = Some(InSpaceOutcome::Legacy);
        // <SEQ=SEG.ACK><CTL=RST>: the legacy server's half-open connection goes.
        self.pending_rst = Some((seg.ack, None));
        self.terminate(Err(ConnError::Refused));
        None
    }

    /// Server: the SYN-U asked for Inner Space on data segments (a ModeSwitch R = 1,
    /// I = 1 Inner Option on a data-less SYN-U): on, and confirmed on the SYN/ACK-U.
    pub(crate) fn inspace_server_data(&mut self, extra: &ExtraOptions, syn_data: usize) {
        if let Some(is) = self.inspace.as_deref_mut() {
            if is.role == InSpaceRole::Server && syn_data == 0 && has_mode_switch(extra, true, true)
            {
                is.data = Some(Box::new(DataMode::new(true)));
            }
        }
    }

    /// The Ordinary connection's answer: when its SYN/ACK came and its RTT (the
    /// handshake's sample; the initial RTO when its SYN was retransmitted).
    pub(crate) fn inspace_answer(&self) -> (Instant, Duration) {
        let rtt = self
            .sub
            .loss
            .rtt
            .srtt()
            .unwrap_or(self.config.recovery.initial_rto);
        (self.sub.probes.last_recv, rtt)
    }

    /// The Ordinary SYN was answered and this SYN-U was not (§2.1.2's SHOULD): the
    /// SYN-U goes again "a short while" later — AMB-D2-2, brisk's choice: half the
    /// Ordinary connection's RTT after its SYN/ACK, when an answer to a SYN-U sent
    /// with it is overdue — and the Upgraded connection gives up two RTTs after that
    /// (at least 10 ms), so the Ordinary one, whose ACK waits, is held at most about
    /// 2.5 RTT longer. Once only.
    pub(crate) fn inspace_retry_syn_u(&mut self, answered: Instant, rtt: Duration) {
        let Some(is) = self.inspace.as_deref_mut() else {
            return;
        };
        if is.role != InSpaceRole::Upgraded
            || is.outcome.is_some()
            || is.retry != SynURetry::Idle
            || self.state != State::SynSent
        {
            return;
        }
        is.retry = SynURetry::Due {
            give_up: (rtt * 2).max(Duration::from_millis(10)),
        };
        self.sub
            .timers
            .set(super::timer::Timer::Rto, answered + rtt / 2);
    }

    /// The Upgraded connection's RTO in SYN-SENT: the one retransmission, or giving
    /// up after it. False: the ordinary path (the SYN-U's `syn_retries` is 0).
    pub(super) fn inspace_syn_u_rto(&mut self, now: Instant) -> bool {
        let Some(is) = self.inspace.as_deref_mut() else {
            return false;
        };
        match is.retry {
            SynURetry::Idle => false,
            SynURetry::Due { give_up } => {
                is.retry = SynURetry::Sent;
                self.sub.hs.syn_retries += 1;
                self.sub.hs.syn_pending = true;
                self.sub.hs.syn_retransmitted = true;
                self.sub.timers.set(super::timer::Timer::Rto, now + give_up);
                true
            }
            SynURetry::Sent => {
                self.terminate(Err(ConnError::TimedOut {
                    retries: self.sub.hs.syn_retries,
                }));
                true
            }
        }
    }

    /// Whether the ACK of the SYN/ACK waits for the dual handshake's decision.
    pub(super) fn inspace_holds_ack(&self) -> bool {
        self.inspace.as_ref().is_some_and(|i| i.hold_ack)
    }

    /// The Ordinary connection survived: the held ACK of its SYN/ACK goes now.
    pub(crate) fn inspace_release(&mut self) {
        if let Some(i) = self.inspace.as_deref_mut() {
            if std::mem::take(&mut i.hold_ack) && self.state.synchronized() {
                self.ack_now();
            }
        }
    }

    /// The dual handshake's loser, aborted (§2.1.1: the client "MUST RST" it). In
    /// SYN-SENT, where `abort` sends nothing, a RST at ISS + 1 still reaches a server
    /// that answered (its SYN-RECEIVED window starts there).
    pub(crate) fn inspace_abort_loser(&mut self) {
        if self.state == State::SynSent && self.sub.hs.syn_sent_at.is_some() {
            self.pending_rst = Some((self.wire_snd(1), None));
            self.terminate(Err(ConnError::Aborted));
        } else {
            self.abort();
        }
    }
}

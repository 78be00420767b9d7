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

use super::{Connection, State};
use crate::event::ConnError;
use crate::inspace::InSpaceConfig;
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
        }));
        if role == InSpaceRole::Upgraded {
            // Only one SYN of the pair is ever retransmitted (§2.1.2): the Ordinary
            // one (latency preferred). The SYN-U's first timeout ends it.
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
                    while inner.len() % 4 != 0 {
                        inner.push(1);
                    }
                }
            }
            InSpaceRole::Server => {
                if self.state != State::SynReceived {
                    return None;
                }
            }
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

//! The glue between a [`Connection`] and its MPTCP-level socket
//! (`crate::mptcp::meta::Meta`, RFC 8684): with `mp` set, the application and I/O
//! calls come here. The outer connection's own stream and subflow stay dormant; the
//! subflows are complete plain-TCP connections inside the meta. Linux's shape:
//! `mptcp_sendmsg` / `__mptcp_push_pending` move data-level bytes into a subflow and
//! record the mapping; `mptcp_established_options` adds the DSS to each outgoing
//! subflow segment; `mptcp_incoming_options` reads the options of an arriving one
//! (mappings, Data ACK), and `__mptcp_move_skbs_from_subflow` moves the subflow's
//! in-order bytes into the data-level receive queue.
//!
//! Handshake (§3.1, version 1): MP_CAPABLE without key on the SYN, the server's key on
//! the SYN-ACK, both keys on the third ACK and again, with the data-level length, on
//! the client's first data (`MpCapableForm::AckData`, Linux sends it on the segment at
//! the subflow's ISN + 1 until the server's first DSS). Fallback (§3.7) before any
//! data-level byte was acknowledged: the subflow becomes the connection itself
//! (`fallback`), its bytes the same as the data level's since subflow offset and data
//! offset coincide on the first subflow.

use super::*;
use crate::conn::send::{SendBuffer, SharedBytes};
use crate::mptcp::control::{self, AddAddrVerdict, Keys};
use crate::mptcp::dsn::{self, MapVerdict, Mapping, WindowCtx};
use crate::mptcp::join::{find_join, JoinError, JoinInitiator, JoinResponder};
use crate::mptcp::meta::{
    DataSend, Fallback, Meta, MptcpCounters, RemovedSubflow, SubJoin, SubflowCtx, SubflowOpen,
    DSS_RESERVE,
};
use crate::mptcp::meta::{SIGNAL_QUEUE, STALE_LOSS_CNT};
use crate::mptcp::pm::{Addr, PathManager, PmAction};
use crate::mptcp::recv::{DataRecv, FinVerdict, RecvConfig};
use crate::mptcp::reinject::{LossKind, Reinjector};
use crate::mptcp::sched::{Pick, Scheduler, SubflowView};
use crate::mptcp::SubflowMask;
use brisk_wire::mptcp::checksum::{dss_checksum, DssChecksum};
use brisk_wire::mptcp::crypto;
use brisk_wire::mptcp::{self as wire, DataSeq, Dss, MpCapable, MpCapableForm, MptcpOption};
use brisk_wire::mptcp::{MpTcpRst, ResetReason};
use std::collections::VecDeque;
use std::net::IpAddr;

/// What the MPTCP options of one arriving segment said.
#[derive(Default)]
struct Rx {
    mpc: Option<MpCapable>,
    dss: Option<Dss>,
    fastclose: Option<u64>,
    add_addr: Option<wire::AddAddr>,
    rm_addr: Option<wire::RemoveAddr>,
    prio: Option<bool>,
}

fn parse_rx(seg: &TcpRepr<'_>, counters: &mut MptcpCounters) -> Rx {
    let mut rx = Rx::default();
    for o in wire::options(&seg.extra) {
        match o {
            Ok(MptcpOption::MpCapable(c)) => rx.mpc = Some(c),
            Ok(MptcpOption::Dss(d)) => rx.dss = Some(d),
            Ok(MptcpOption::MpFastclose { receiver_key }) => rx.fastclose = Some(receiver_key),
            Ok(MptcpOption::AddAddr(a)) => rx.add_addr = Some(a),
            Ok(MptcpOption::RemoveAddr(r)) => rx.rm_addr = Some(r),
            Ok(MptcpOption::MpPrio { backup }) => rx.prio = Some(backup),
            Ok(_) => {}
            Err(_) => counters.bad_options += 1,
        }
    }
    rx
}

/// A seed for the MPTCP key, separate from the connection's own RNG draws so that
/// plain TCP's are unchanged.
const KEY_SEED: u64 = 0x4d50_5443_5031_6b65;
/// Disjoint DSN ranges the re-injection queue holds (more are left to their subflow's
/// own retransmission, counted in `ReinjectStats::refused`).
const REINJECT_RANGES: usize = 64;

impl Connection {
    /// The subflow's and the outer's configs: the subflow runs plain TCP.
    fn mp_split_setup(setup: Setup) -> (Setup, Setup) {
        let mut sub_cfg = (*setup.config).clone();
        sub_cfg.mptcp = None;
        let outer = Setup {
            local: setup.local,
            remote: setup.remote,
            config: setup.config.clone(),
            iss: setup.iss,
            seed: setup.seed,
            // The outer's own controller never runs (its subflow is dormant).
            cc: crate::cc::FlowCc::new(Box::new(crate::cc::reno::Reno), None),
        };
        let sub = Setup {
            config: Arc::new(sub_cfg),
            ..setup
        };
        (outer, sub)
    }

    fn mp_meta(passive: bool, seed: u64, config: &Config, sub: Connection) -> Box<Meta> {
        let mut rng = ChaCha8Rng::seed_from_u64(seed ^ KEY_SEED);
        let local_key: u64 = rng.gen();
        let mcfg = config.mptcp.as_deref().cloned().unwrap_or_default();
        let local_idsn = crypto::idsn(local_key);
        let sub_config = sub.config.clone();
        let mut meta = Box::new(Meta {
            passive,
            local_key,
            remote_key: None,
            local_token: crypto::token(local_key),
            local_idsn,
            remote_idsn: 0,
            csum: mcfg.checksum,
            fully_established: false,
            snd: DataSend::new(config.send_buffer),
            recv: None,
            // The data level holds what the application can read: at most the
            // connection's receive buffer (SO_RCVBUF on Linux's MPTCP socket), as the
            // data-level send buffer is its send buffer.
            rcv_cfg: RecvConfig {
                capacity: mcfg
                    .recv
                    .capacity
                    .min(u32::try_from(config.recv_buffer).unwrap_or(u32::MAX))
                    .max(1),
                // uTCP's switch reaches the data level too (`read_unordered`).
                unordered: mcfg.recv.unordered || config.unordered,
                ..mcfg.recv
            },
            subs: vec![SubflowCtx::new(sub, SubJoin::Initial, 0, false)],
            counters: MptcpCounters::default(),
            peer_closed_reported: false,
            fastclose: false,
            subflows_closing: false,
            orphaned: false,
            read_total: 0,
            scratch: Vec::new(),
            // The config was validated with the connection's; a bad one gets the
            // defaults rather than a panic.
            pm: PathManager::new(&mcfg.pm)
                .unwrap_or_else(|_| PathManager::new(&Default::default()).expect("default")),
            sched: Scheduler::new(mcfg.scheduler),
            reinject: Reinjector::new(local_idsn.wrapping_add(1), REINJECT_RANGES),
            rtx: Default::default(),
            rng,
            sub_config,
            rx_remote: None,
            pm_started: false,
            opens: VecDeque::new(),
            removed: Vec::new(),
            closed0: None,
            first_gone: false,
            mib: Default::default(),
            gate: None,
            signals: VecDeque::new(),
            ss_sum: None,
            held_closed: None,
        });
        let Meta { sched, subs, .. } = &mut *meta;
        sttf_rate_samples(sched, &mut subs[0]);
        meta
    }

    /// Active open offering MP_CAPABLE.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_connect(now: Instant, setup: Setup) -> Connection {
        let seed = setup.seed;
        let (outer, sub) = Connection::mp_split_setup(setup);
        let mut s = Connection::connect(now, sub);
        s.sub.opts.opt_reserve = DSS_RESERVE;
        let mut c = Connection::from_setup(now, outer, false);
        c.state = State::SynSent;
        c.mp = Some(Connection::mp_meta(false, seed, &c.config, s));
        c
    }

    /// Passive open from an MP_CAPABLE SYN (`syn` carries it).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_accept(
        now: Instant,
        setup: Setup,
        syn: &TcpRepr<'_>,
        mpc: MpCapable,
    ) -> Connection {
        let seed = setup.seed;
        let (outer, sub) = Connection::mp_split_setup(setup);
        let mut s = Connection::accept(now, sub, syn);
        s.sub.opts.opt_reserve = DSS_RESERVE;
        s.negotiate(syn, true);
        let mut c = Connection::from_setup(now, outer, true);
        c.state = State::SynReceived;
        let mut m = Connection::mp_meta(true, seed, &c.config, s);
        m.csum |= mpc.checksum_required;
        c.mp = Some(m);
        c
    }

    /// The MP_CAPABLE of a SYN, when this connection's config offers MPTCP.
    #[inline(never)]
    pub(super) fn mp_syn_option(config: &Config, syn: &TcpRepr<'_>) -> Option<MpCapable> {
        config.mptcp.as_ref()?;
        wire::options(&syn.extra).find_map(|o| match o {
            Ok(MptcpOption::MpCapable(c)) if c.form == MpCapableForm::Syn => Some(c),
            _ => None,
        })
    }

    /// MPTCP counters (None for plain TCP or after fallback).
    pub fn mptcp_counters(&self) -> Option<&MptcpCounters> {
        self.mp.as_deref().map(|m| &m.counters)
    }

    /// Why this connection fell back to plain TCP, if it offered MPTCP and did.
    pub fn mptcp_fallback(&self) -> Option<Fallback> {
        self.mp_fallback
    }

    /// Whether the connection runs MPTCP (it offered it and has not fallen back).
    pub fn is_mptcp(&self) -> bool {
        self.mp.is_some()
    }

    /// (local key, remote key) of an MPTCP connection once both are known.
    pub fn mptcp_keys(&self) -> Option<(u64, u64)> {
        let m = self.mp.as_deref()?;
        Some((m.local_key, m.remote_key?))
    }

    /// Bytes the data level holds unacknowledged (the data-level send buffer).
    pub fn mptcp_send_buffered(&self) -> Option<usize> {
        self.mp.as_deref().map(|m| m.snd.buf.len())
    }

    // ----- the application's calls -----

    #[cold]
    #[inline(never)]
    pub(super) fn mp_write(&mut self, data: &[u8]) -> usize {
        self.mp_queue(data.len(), |b, n| b.write(&data[..n], 0))
    }

    /// `write_shared` at the data level: the bytes held by reference, as plain TCP's
    /// send buffer holds them (`SendBuffer::write_shared`), so that the subflows can
    /// take them by reference too (`DataSend::write_to`). Byte for byte and event for
    /// event `mp_write(src.at(off, len))`.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_write_shared(&mut self, src: &SharedBytes, off: u64, len: usize) -> usize {
        let want = src.len_at(off, len);
        self.mp_queue(want, |b, n| b.write_shared(src, off, n, 0))
    }

    /// A write of `want` bytes at the data level, of which `put` places the first `n`
    /// (as many as fit) in the data-level send buffer.
    fn mp_queue(
        &mut self,
        want: usize,
        put: impl FnOnce(&mut SendBuffer, usize) -> usize,
    ) -> usize {
        let Some(m) = self.mp.as_deref_mut() else {
            return 0;
        };
        // Any subflow open keeps the connection writable (§3.3: the connection lives
        // while a subflow does, the first one or not).
        let open = m.subs.iter().any(|s| {
            matches!(
                s.conn.state(),
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            )
        });
        if m.snd.fin_queued || !open {
            return 0;
        }
        let n = want.min(m.snd.capacity());
        let n = if n > 0 { put(&mut m.snd.buf, n) } else { 0 };
        if n < want {
            m.snd.writable_wanted = true;
        }
        mp_fill(m);
        n
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_read(&mut self, buf: &mut [u8]) -> usize {
        let Some(m) = self.mp.as_deref_mut() else {
            return 0;
        };
        let Some(r) = m.recv.as_mut() else {
            return 0;
        };
        let n = r.read(buf);
        if n == 0 {
            // As `mp_read_in_place`: nothing changed.
            return 0;
        }
        m.read_total += n as u64;
        mp_drain(m);
        self.mp_sync();
        n
    }

    /// `read_unordered` at the data level: in-order bytes as `mp_read`, else (with
    /// unordered receive on) the lowest out-of-order run not handed out yet. Offsets
    /// are from the peer's IDSN + 1, as `mp_read_offset`.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_read_unordered(&mut self, buf: &mut [u8]) -> Option<UnorderedRead> {
        let m = self.mp.as_deref_mut()?;
        let d = m.recv.as_mut()?.read_unordered(buf)?;
        let offset = d.dsn.wrapping_sub(m.remote_idsn.wrapping_add(1));
        if d.in_order {
            m.read_total += d.len as u64;
            mp_drain(m);
            self.mp_sync();
        }
        Some(UnorderedRead {
            offset,
            len: d.len,
            in_order: d.in_order,
        })
    }

    /// `read_in_place`: the data-level bytes handed to `f` from the ring (`buf` only
    /// when they wrap), as plain TCP does.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_read_in_place(&mut self, buf: &mut [u8], f: &mut dyn FnMut(&[u8])) -> usize {
        let Some(m) = self.mp.as_deref_mut() else {
            return 0;
        };
        let Some(r) = m.recv.as_mut() else {
            return 0;
        };
        let n = r.read_in_place(buf, f);
        if n == 0 {
            // Nothing read, nothing changed since the last entry point's `mp_sync`
            // (the application's loop ends on such a read: about two reads in three
            // of a bulk receiver's).
            return 0;
        }
        m.read_total += n as u64;
        mp_drain(m);
        self.mp_sync();
        n
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_readable(&self) -> usize {
        self.mp
            .as_deref()
            .and_then(|m| m.recv.as_ref())
            .map_or(0, |r| r.readable() as usize)
    }

    /// The Data ACK as a send offset (`DataSend::una`): the data level's SND.UNA.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_acked_offset(&self) -> u64 {
        self.mp.as_deref().map_or(0, |m| m.snd.una)
    }

    /// Data-level bytes handed to a subflow (the in-order cursor `DataSend::nxt`;
    /// a subflow takes only what its window sends at once, so they are out or
    /// about to be).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_sent_offset(&self) -> u64 {
        self.mp.as_deref().map_or(0, |m| m.snd.nxt)
    }

    /// Data-level bytes written and not Data-ACKed.
    #[cold]
    #[inline(never)]
    pub(super) fn mp_send_buffered(&self) -> usize {
        self.mp.as_deref().map_or(0, |m| m.snd.buf.len())
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_send_capacity(&self) -> usize {
        self.mp.as_deref().map_or(0, |m| {
            if m.snd.fin_queued {
                0
            } else {
                m.snd.capacity()
            }
        })
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_peer_closed(&self) -> bool {
        self.mp
            .as_deref()
            .and_then(|m| m.recv.as_ref())
            .is_some_and(fin_reached)
    }

    /// `close` / `shutdown_write`: a DATA_FIN after the queued data (§3.3.3).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_shutdown_write(&mut self, orphan: bool) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        m.orphaned |= orphan;
        if m.subs[0].conn.state() == State::SynSent {
            for s in &mut m.subs {
                s.conn.close();
            }
            self.mp_sync();
            return;
        }
        if !m.snd.fin_queued {
            m.snd.fin_queued = true;
            // A segment to carry it, if no data will.
            let i = signal_sub(m);
            m.subs[i].conn.ack_now();
        }
    }

    /// Abort: RST on every subflow with MP_FASTCLOSE (§3.5, as Linux's
    /// `mptcp_do_fastclose`).
    #[cold]
    #[inline(never)]
    pub(super) fn mp_abort(&mut self) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        m.fastclose = m.remote_key.is_some();
        for s in &mut m.subs {
            s.conn.abort();
        }
        if self.state != State::Closed {
            self.mp_terminate(Err(ConnError::Aborted));
        }
    }

    // ----- I/O -----

    #[cold]
    #[inline(never)]
    pub(super) fn mp_poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        self.poll_end = super::transmit::PollEnd::Open;
        let m = self.mp.as_deref_mut()?;
        m.sched.tick(now);
        mp_fill(m);
        mp_rtx_update(m, now);
        let mut out = None;
        let mut exhausted = true;
        let mut polled_any = false;
        let n = m.subs.len();
        for i in 0..n {
            // A subflow whose poll would return nothing and change nothing
            // (`poll_finds_nothing`, the test by which the endpoint skips a plain
            // connection's poll) is not polled: most MPTCP polls find one subflow's
            // window full or its data all sent, and its poll cost more than the test.
            let polled = if m.subs[i].conn.poll_finds_nothing() {
                None
            } else {
                polled_any = true;
                mp_swap_room(m, i);
                let polled = m.subs[i].conn.poll_transmit(now);
                mp_swap_room(m, i);
                polled
            };
            if let Some(seg) = polled {
                let mut seg = seg;
                seg.meta.subflow = i as u8;
                // The subflow's bytes held by reference to a generated sequence are
                // produced now, as the endpoint does for a plain connection's segment:
                // `mp_decorate` reads the payload (its length, the DSS checksum) and
                // `mp_payload` lends it.
                m.subs[i].conn.prepare_payload(&seg);
                if mp_decorate(m, i, &mut seg) && !m.signals.is_empty() {
                    // More control options wait: another pure ACK for the next.
                    let j = signal_sub(m);
                    sub_send_ack(&mut m.subs[j].conn, now);
                }
                // The subflows before `i` found nothing in this poll; those after it
                // were not polled, and their `poll_exhausted` is from an older poll
                // (data the scheduler gave them since, or an abort's RST, would wait
                // for the next input): only the last subflow's ACK ends the poll.
                exhausted = i + 1 == n && m.subs[i].conn.ack_ended_poll();
                out = Some(seg);
                break;
            }
            if m.subs[i].conn.state() == State::Closed {
                // Its last segment (a RST with MP_TCPRST) is out: it may go.
                m.subs[i].closed_seen = true;
            }
        }
        // No subflow polled and nothing out: nothing `mp_sync` reads changed since
        // the last entry point's (about two MPTCP polls in three of a bulk transfer).
        let quiet = out.is_none() && !polled_any && m.held_closed.is_none() && mp_sync_idle(m);
        if out.is_none() {
            if let Some(r) = m.held_closed.take() {
                // Every subflow's last segment is out: the application may see it.
                self.push_event(Event::Closed(r));
            }
        }
        if !quiet {
            self.mp_sync();
        }
        if out.is_some() && exhausted {
            self.poll_end = super::transmit::PollEnd::Ack;
        }
        out
    }

    /// Ends an MPTCP connection (`terminate`), holding its `Closed` event back while a
    /// subflow still has a RST to send (`Meta::held_closed`): `abort` resets every
    /// subflow with MP_FASTCLOSE (RFC 8684 §3.5, Linux `mptcp_do_fastclose`), but the
    /// endpoint reaps the connection once the application has seen `Closed`, and a
    /// poll returns one segment, so only the first subflow's RST went out when the
    /// application looked at its events between two polls (brisk-emu does, after
    /// each packet). A peer whose RST on that subflow was not accepted (a segment in
    /// flight, RFC 5961's challenge ACK) then never learnt of the fast close.
    #[cold]
    #[inline(never)]
    fn mp_terminate(&mut self, r: Result<(), ConnError>) {
        self.terminate(r);
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        if !m.subs.iter().any(|s| s.conn.pending_rst.is_some()) {
            return;
        }
        if let Some(k) = self
            .stream
            .events
            .iter()
            .position(|e| matches!(e, Event::Closed(_)))
        {
            if let Some(Event::Closed(r)) = self.stream.events.remove(k) {
                m.held_closed = Some(r);
            }
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_payload(&self, seg: &Segment) -> &[u8] {
        match self.mp.as_deref() {
            Some(m) => m
                .subs
                .get(usize::from(seg.meta.subflow))
                .map_or(&[][..], |s| s.conn.payload(seg)),
            None => &[],
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_poll_timeout(&self) -> Option<Instant> {
        let m = self.mp.as_deref()?;
        let min = |a: Option<Instant>, b: Option<Instant>| match (a, b) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let mut t = min(m.snd.fin_rtx_at, m.pm.poll_timeout());
        t = min(t, m.rtx.at);
        for s in &m.subs {
            // A subflow is a plain connection (no `mp`): its timer table directly.
            debug_assert!(s.conn.mp.is_none());
            t = min(t, s.conn.sub.timers.next());
            t = min(t, s.join_rtx_at);
        }
        t
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_handle_timeout(&mut self, now: Instant) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        let several = m.subs.len() > 1;
        for i in 0..m.subs.len() {
            if m.subs[i].conn.poll_timeout().is_some_and(|t| t <= now) {
                mp_swap_room(m, i);
                m.subs[i].conn.handle_timeout(now);
                mp_swap_room(m, i);
            }
            let s = &mut m.subs[i];
            if s.join_rtx_at.is_some_and(|t| t <= now) {
                // No fourth ACK yet: the third ACK again (Linux retransmits it from
                // the subflow's timer until the peer acknowledges it).
                s.join_rtx_count += 1;
                if s.join_rtx_count > 6 || s.conn.state() != State::Established {
                    s.join_rtx_at = None;
                    s.rst_reason = Some(ResetReason::MptcpError);
                    s.conn.abort();
                } else {
                    let rto = s.conn.current_rto() * (1u32 << s.join_rtx_count);
                    s.join_rtx_at = Some(now + rto);
                    s.conn.ack_now();
                }
            }
            // Seed Table I: an RTO retransmits on its subflow (its own TCP does) and
            // re-injects the data on another.
            let rto = s.conn.info.rto_count;
            if rto > s.rto_seen {
                s.rto_seen = rto;
                if several && s.conn.sub.loss.backoff == STALE_LOSS_CNT {
                    m.counters.subflows_stale += 1;
                }
                if m.subflows_closing
                    && s.conn.sub.loss.backoff == STALE_LOSS_CNT
                    && s.conn.state() != State::Closed
                {
                    // Our DATA_FIN is acknowledged and this subflow went stale while
                    // closing (a dead path; the others may be reaped by now): reset
                    // it rather than send its FIN until the retries run out, as a
                    // subflow already stale at the close is (`mp_after_input`).
                    s.rst_reason = Some(ResetReason::Unspecified);
                    s.conn.abort();
                    continue;
                }
                if several && s.usable && m.reinject.on_loss(LossKind::Rto, i, s.smap.outstanding())
                {
                    m.counters.reinject_rto += 1;
                }
            }
        }
        if m.rtx.at.is_some_and(|t| t <= now) {
            mp_data_retrans(m, now);
        }
        if m.snd.fin_rtx_at.is_some_and(|t| t <= now) {
            // Ask a live subflow for a segment: it carries the DATA_FIN again.
            let i = signal_sub(m);
            let rto = m.subs[i].conn.current_rto();
            m.snd.fin_rtx_count += 1;
            let backoff = rto * (1u32 << m.snd.fin_rtx_count.min(6));
            m.snd.fin_rtx_at = Some(now + backoff);
            m.subs[i].conn.ack_now();
        }
        if m.pm.poll_timeout().is_some_and(|t| t <= now) {
            // ADD_ADDR not echoed: announced again (`mptcp_pm_add_timer`).
            let rto = max_rto(m);
            m.pm.on_timeout(now, rto);
            mp_pm_actions(m, now);
        }
        mp_after_input(m, now);
        self.mp_sync();
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_handle_segment(
        &mut self,
        now: Instant,
        ecn: Ecn,
        dscp: u8,
        seg: &TcpRepr<'_>,
    ) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        let Some(i) = mp_rx_subflow(m, seg) else {
            return;
        };
        if i != 0 {
            return self.mp_handle_joined(now, ecn, dscp, i, seg);
        }
        let rx = parse_rx(seg, &mut m.counters);
        let f = seg.flags;
        let sub_state = m.subs[0].conn.state();
        // ----- handshake and fallback (§3.1, §3.7) -----
        let mut fallback = None;
        if !m.passive && sub_state == State::SynSent && f.syn() && f.ack() && !f.rst() {
            let acks_syn = seg.ack.0 == m.subs[0].conn.sub.opts.iss.wrapping_add(1);
            match rx.mpc.map(|c| c.form) {
                Some(MpCapableForm::SynAck { sender_key }) if acks_syn => {
                    m.remote_key = Some(sender_key);
                    m.remote_idsn = crypto::idsn(sender_key);
                    m.csum |= rx.mpc.is_some_and(|c| c.checksum_required);
                    mp_make_recv(m);
                }
                _ if acks_syn => fallback = Some(Fallback::NoMpCapableSynAck),
                _ => {}
            }
        } else if m.passive
            && m.remote_key.is_none()
            && sub_state == State::SynReceived
            && seg.ack.0 == m.subs[0].conn.sub.opts.iss.wrapping_add(1)
            && f.ack()
            && !f.syn()
            && !f.rst()
        {
            let keys = match rx.mpc.map(|c| c.form) {
                Some(MpCapableForm::Ack {
                    sender_key,
                    receiver_key,
                })
                | Some(MpCapableForm::AckData {
                    sender_key,
                    receiver_key,
                    ..
                }) if receiver_key == m.local_key => Some(sender_key),
                _ => None,
            };
            match keys {
                Some(k) => {
                    m.remote_key = Some(k);
                    m.remote_idsn = crypto::idsn(k);
                    m.fully_established = true;
                    mp_make_recv(m);
                }
                None => fallback = Some(Fallback::NoMpCapableAck),
            }
        } else if !m.passive
            && !m.fully_established
            && m.remote_key.is_some()
            && !f.syn()
            && !f.rst()
        {
            if rx.dss.is_some() {
                m.fully_established = true;
            } else {
                let iss = m.subs[0].conn.sub.opts.iss;
                let acks_data = f.ack() && seg.ack.0.wrapping_sub(iss.wrapping_add(1)) as i32 > 0;
                if !seg.payload.is_empty() || acks_data {
                    fallback = Some(Fallback::NoDss);
                }
            }
        }
        // Data without a mapping (§3.7): fall back while nothing has reached the data
        // level (Linux `subflow_can_fallback`), else reset the subflow.
        let mapped = rx.dss.is_some_and(|d| d.mapping.is_some())
            || rx
                .mpc
                .is_some_and(|c| matches!(c.form, MpCapableForm::AckData { .. }));
        let mut unmapped_reset = false;
        if fallback.is_none() && !seg.payload.is_empty() && !mapped && !f.syn() && !f.rst() {
            if let Some(r) = m.recv.as_ref() {
                if r.data_ack() == m.remote_idsn.wrapping_add(1) && m.subs[0].consumed == 0 {
                    fallback = Some(Fallback::NoDss);
                } else {
                    unmapped_reset = true;
                }
            }
        }
        if unmapped_reset {
            m.counters.no_dss_reset += 1;
            m.subs[0].conn.counters.mptcp_refused += 1;
            for s in &mut m.subs {
                s.conn.abort();
            }
            self.mp_reset();
            return;
        }
        if let Some(why) = fallback {
            self.mp_fallback_to_tcp(why);
            self.handle_segment_dscp(now, ecn, dscp, seg);
            return;
        }
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        if let Some(key) = rx.fastclose {
            if key == m.local_key {
                m.counters.fastclose_rx += 1;
                for s in &mut m.subs {
                    // Linux's RST answering MP_FASTCLOSE carries MP_TCPRST reason 0
                    // (`mptcp_do_fastclose` → `mptcp_subflow_reset`).
                    s.rst_reason = Some(ResetReason::Unspecified);
                    s.conn.abort();
                }
                self.mp_reset();
                return;
            }
        }
        // ----- mappings and the Data ACK (§3.3) -----
        if mp_rx_dss(m, 0, &rx, seg) {
            m.subs[0].conn.counters.mptcp_refused += 1;
            // Linux `subflow_check_data_avail` → `MPTCP_RST_EMPTCP`: the subflow
            // is reset; with no other subflow alive that ends the connection.
            if others_alive(m, 0) {
                m.subs[0].rst_reason = Some(ResetReason::MptcpError);
                m.subs[0].conn.abort();
                mp_after_input(m, now);
                self.mp_sync();
                return;
            }
            for s in &mut m.subs {
                s.conn.abort();
            }
            self.mp_reset();
            return;
        }
        let oow = m.subs[0].conn.counters.out_of_window;
        m.subs[0].conn.handle_segment_dscp(now, ecn, dscp, seg);
        if m.subs[0].conn.counters.out_of_window == oow {
            // Only from a segment the subflow found acceptable (in its window).
            mp_wnd_update(m, 0, &rx, seg);
            mp_rx_control(m, now, 0, &rx, seg);
        }
        mp_pm_start(m, now);
        mp_after_input(m, now);
        self.mp_sync();
    }

    /// §3.7: the handshake did not complete as MPTCP. The subflow becomes this
    /// connection; the data-level bytes no subflow took yet follow its own (on the
    /// first subflow, data offsets and subflow offsets are the same).
    fn mp_fallback_to_tcp(&mut self, why: Fallback) {
        let Some(m) = self.mp.take() else {
            return;
        };
        let mut m = *m;
        let mut sub = m.subs.swap_remove(0).conn;
        let mut at = m.snd.nxt;
        while at < m.snd.end() {
            let n = m.snd.write_to(&mut sub, at, usize::MAX);
            if n == 0 {
                break;
            }
            at += n as u64;
        }
        debug_assert_eq!(at, m.snd.end());
        if m.snd.fin_queued {
            if m.orphaned {
                sub.close();
            } else {
                sub.shutdown_write();
            }
        }
        let config = self.config.clone();
        let events = std::mem::take(&mut self.stream.events);
        *self = sub;
        // The application's config (its `mptcp` says what was offered).
        self.config = config;
        for ev in events.into_iter().rev() {
            self.stream.events.push_front(ev);
        }
        self.mp_fallback = Some(why);
        self.counters.mptcp_fallbacks += 1;
    }

    /// The connection ends with `Reset` (its subflows were reset).
    fn mp_reset(&mut self) {
        if let Some(m) = self.mp.as_deref() {
            self.counters = m.subs[0].conn.counters;
        }
        self.mp_terminate(Err(ConnError::Reset));
    }

    /// The outer state follows the first subflow's; subflow events become the
    /// connection's (Connected, Closed), data events come from the data level.
    fn mp_sync(&mut self) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        // `counters()` reads the outer's: the subflow's, mirrored (so that a
        // fallback, which makes the subflow the connection, continues them).
        self.counters = m.subs[0].conn.counters;
        let mut closed = None;
        let mut connected = false;
        while let Some(ev) = m.subs[0].conn.poll_event() {
            match ev {
                Event::Connected => connected = true,
                Event::Closed(r) => m.closed0 = Some(r),
                _ => {}
            }
        }
        for s in m.subs.iter_mut().skip(1) {
            // A joined subflow's events are the meta's business (its state is read).
            while s.conn.poll_event().is_some() {}
        }
        let data_closed = m.snd.fin_acked && m.recv.as_ref().is_some_and(fin_reached);
        if let Some(r) = m.closed0 {
            // RFC 8684 §3.3: the connection lives while any subflow lives. A first
            // subflow that closes (reset, timed out, or closed by the peer) before the
            // data level did hands its data over to the others, as any subflow does
            // (`mp_reap_subflows`); it stays in `subs[0]` as a closed placeholder, so
            // that index 0 keeps meaning "the MP_CAPABLE subflow" and the connection
            // keeps its handle and its first 4-tuple in the endpoint's table (docs:
            // "Addresses, priorities and surviving subflows").
            if !m.first_gone
                && !data_closed
                && !m.fastclose
                && m.fully_established
                && others_open(m, 0)
            {
                m.first_gone = true;
                m.counters.first_subflow_lost += 1;
                if !m.subs[0].smap.is_empty() && !m.subflows_closing {
                    m.reinject
                        .on_loss(LossKind::Rto, 0, m.subs[0].smap.outstanding());
                }
                if let Some(slot) = m.subs[0].pm_slot.take() {
                    m.pm.on_subflow_closed(slot);
                }
            }
            // A first subflow that failed while no other could carry on takes the
            // others with it.
            if r.is_err() && !m.first_gone {
                for s in m.subs.iter_mut().skip(1) {
                    s.conn.abort();
                }
            }
            if m.subs.iter().all(|s| s.conn.state() == State::Closed) {
                // A completed data-level close (both DATA_FINs acknowledged, RFC 8684
                // §3.3.3) is a clean close however the subflows ended: every byte
                // both ways is in. Linux likewise reports a subflow's error on the
                // MPTCP socket only after a fallback or during the MP_CAPABLE connect
                // (`__mptcp_subflow_error_report`). Counting the subflows here was
                // wrong: joined subflows that closed first are reaped, so a reset of
                // the first subflow after the close (the peer's dead-path reset) read
                // as the connection's failure (issue 32: 2 of 3 840 MP-5 flows).
                closed = Some(if data_closed { Ok(()) } else { r });
            }
        }
        let readable = m.recv.as_ref().is_some_and(|r| r.readable() > 0);
        let fin_in = m.recv.as_ref().is_some_and(fin_reached);
        let mut peer_closed = false;
        if fin_in && !m.peer_closed_reported {
            m.peer_closed_reported = true;
            peer_closed = true;
        }
        let writable = m.snd.writable_wanted && m.snd.capacity() > 0 && !m.snd.fin_queued;
        if writable {
            m.snd.writable_wanted = false;
        }
        let mut state = m.subs[0].conn.state();
        if m.first_gone && state == State::Closed {
            // The first subflow is gone: the connection's state is a live subflow's.
            state = m
                .subs
                .iter()
                .map(|s| s.conn.state())
                .find(|&st| st != State::Closed)
                .unwrap_or(State::Closed);
        }
        if connected {
            self.push_event(Event::Connected);
        }
        if readable {
            self.push_event(Event::Readable);
        }
        if peer_closed {
            self.push_event(Event::PeerClosed);
        }
        if writable {
            self.push_event(Event::Writable);
        }
        if let Some(r) = closed {
            if self.state != State::Closed {
                self.mp_terminate(r);
            }
        } else if self.state != State::Closed && state != State::Closed {
            self.state = state;
        }
    }
}

/// Whether `mp_sync` would change nothing, given that no subflow was called since
/// the last one (the subflows' events, states and counters are as it left them):
/// no first-subflow close to act on, no `Writable` owed, nothing readable (each
/// sync pushes `Readable` while data waits, so a reader that left some behind is
/// told again) and no `PeerClosed` to report. Conservative: any of them syncs.
fn mp_sync_idle(m: &Meta) -> bool {
    m.closed0.is_none()
        && !m.snd.writable_wanted
        && m.recv
            .as_ref()
            .is_none_or(|r| r.readable() == 0 && (m.peer_closed_reported || !fin_reached(r)))
}

/// Whether the DATA_FIN is in (every byte before it arrived).
fn fin_reached(r: &DataRecv) -> bool {
    r.data_fin()
        .is_some_and(|f| r.data_ack() == f.wrapping_add(1))
}

/// The 64-bit subflow offset of the payload of a segment at relative sequence `rel`
/// (the SYN is 0), nearest `near`.
fn expand_sub_off(near: u64, rel: u32) -> u64 {
    dsn::expand32(near.wrapping_add(1), rel).wrapping_sub(1)
}

fn mp_make_recv(m: &mut Meta) {
    if m.recv.is_none() {
        // The config was validated with the connection's; a bad one falls back to
        // the default rather than panicking.
        let cfg = m.rcv_cfg;
        let first = m.remote_idsn.wrapping_add(1);
        m.recv = DataRecv::new(cfg, first)
            .or_else(|_| DataRecv::new(Default::default(), first))
            .ok();
    }
}

/// The peer's Data ACK (§3.3.2): frees the data-level send buffer; covering the
/// DATA_FIN, it lets the subflows close.
fn mp_on_data_ack(m: &mut Meta, a: DataSeq) {
    let una_dsn = m.snd_dsn(m.snd.una);
    let ack = match a {
        DataSeq::Bits64(v) => v,
        DataSeq::Bits32(v) => dsn::expand32(una_dsn, v),
    };
    let off = ack.wrapping_sub(m.local_idsn.wrapping_add(1));
    let fin_extra = u64::from(m.snd.fin_queued && m.snd.nxt == m.snd.end());
    if (ack.wrapping_sub(una_dsn) as i64) < 0 {
        return; // old
    }
    if off > m.snd.nxt.max(m.snd.hi) + fin_extra {
        m.counters.bad_data_acks += 1;
        return;
    }
    let data_to = off.min(m.snd.end());
    m.reinject.on_data_ack(m.snd_dsn(data_to));
    m.snd.buf.ack_to(data_to);
    m.snd.una = data_to;
    if data_to > m.snd.nxt {
        // Bytes sent ahead (STTF) whose run was dropped from the book arrived
        // anyway: nothing before the Data ACK needs sending again.
        m.snd.nxt = data_to;
        mp_sttf_settle(m);
    }
    if m.snd.fin_queued && off == m.snd.end() + 1 && !m.snd.fin_acked {
        m.snd.fin_acked = true;
        m.snd.fin_rtx_at = None;
    }
}

/// The peer's data-level right edge (offset) for the scheduler: the highest Data ACK
/// plus window any one segment carried (`mp_wnd_update`); before the first Data ACK,
/// the first subflow's window from the handshake (Linux `mptcp_finish_connect` sets
/// `wnd_end` to the IDSN + 1 plus the SYN/ACK's window).
fn mp_wnd_end(m: &Meta) -> u64 {
    let first = || {
        m.subs
            .first()
            .map_or(0, |s| s.conn.sub.snd.snd_wnd)
            .saturating_add(m.snd.una)
    };
    m.snd.wnd_end.unwrap_or_else(first).max(m.snd.una)
}

/// Raises the peer's data-level right edge from a segment subflow `i` accepted: its
/// Data ACK plus the window field of the same segment, scaled (RFC 8684 §3.3.4: the
/// window is relative to the Data ACK), kept only if beyond the edge so far (Linux
/// `ack_update_msk` / `msk->wnd_end`). Departure: Linux adds the subflow's
/// `snd_wnd` as `tcp_ack` left it, and so did brisk; but TCP takes a window only
/// under its update rule (`tcp_may_update_window`), so a duplicate ACK whose window
/// shrank while its Data ACK moved left `snd_wnd` wide, and the sum over-ran the edge
/// Linux advertised (a 21-segment burst past it in a real run). Joining the newest
/// Data ACK with another subflow's older, wider window did the same. Linux drops
/// such data after ACKing it at the subflow level (`MPTcpExtNoDSSInWindow`), and the
/// run stalled on the data-level retransmission timer (200-1000 ms) near its end.
fn mp_wnd_update(m: &mut Meta, i: usize, rx: &Rx, seg: &TcpRepr<'_>) {
    let Some(a) = rx.dss.as_ref().and_then(|d| d.data_ack) else {
        return;
    };
    let Some(s) = m.subs.get(i) else {
        return;
    };
    let una_dsn = m.snd_dsn(m.snd.una);
    let ack = match a {
        DataSeq::Bits64(v) => v,
        DataSeq::Bits32(v) => dsn::expand32(una_dsn, v),
    };
    let mut off = ack.wrapping_sub(m.local_idsn.wrapping_add(1));
    // A Data ACK for data not sent (or from before the IDSN, wrapped) counts as the
    // current one (Linux: "ACK for data not even sent yet? Ignore.").
    if off > m.snd.nxt.max(m.snd.hi) + 1 {
        off = m.snd.una;
    }
    // A SYN's window is never scaled (RFC 7323 §2.2); a Data ACK rides no SYN, but
    // the rule costs nothing.
    let shift = if seg.flags.syn() {
        0
    } else {
        s.conn.sub.opts.snd_wscale
    };
    let edge = off.saturating_add(u64::from(seg.window) << shift);
    m.snd.wnd_end = Some(m.snd.wnd_end.map_or(edge, |e| e.max(edge)));
}

/// One received mapping on subflow `i`: checked (`RecvMap`), its checksum verified
/// when negotiated and it covers exactly this segment. Returns true when the subflow
/// must be reset.
fn mp_on_mapping(
    m: &mut Meta,
    i: usize,
    map: Mapping,
    checksum: Option<u16>,
    seg_off: u64,
    payload: &[u8],
) -> bool {
    let Some(recv) = m.recv.as_mut() else {
        return false;
    };
    if m.csum && !payload.is_empty() {
        let whole = map.sub_off == seg_off && map.payload() == payload.len() as u64;
        if whole {
            let ok = checksum.is_some_and(|c| {
                let mut s = DssChecksum::new(map.dsn, map.wire_ssn(), map.len);
                s.add(payload);
                s.verifies(c)
            });
            if !ok {
                m.counters.csum_bad += 1;
                // Linux `validate_data_csum`.
                m.mib.data_csum_err += 1;
                return true;
            }
        } else {
            m.counters.csum_unverified += 1;
        }
    }
    // The edge a mapping is judged against is the one our segments promised on the
    // wire: a subflow advertises its own buffer's free space beside the Data ACK, so
    // the sender may map up to the Data ACK plus that window, beyond the data-level
    // buffer's edge (`DataRecv::right_edge`) when the reader is slow; those bytes
    // wait on the subflow (`mp_drain`). Judged by the data-level edge alone, such a
    // mapping reset the subflow, and then the connection, behind a slow reader.
    // Departure: Linux's subflows advertise the connection-level window itself
    // (`mptcp_set_rwin`). Every subflow has the same receive buffer (one config),
    // and a window is at most its capacity (rounded up to the scale's granule).
    let sub = &m.subs[i].conn;
    let promised = recv
        .data_ack()
        .wrapping_add(sub.stream.recvbuf.capacity() as u64)
        .wrapping_add(1u64 << sub.sub.opts.rcv_wscale);
    let edge = recv.right_edge();
    let win = WindowCtx {
        data_ack: recv.data_ack(),
        right_edge: if promised.wrapping_sub(edge) as i64 > 0 {
            promised
        } else {
            edge
        },
    };
    let v = m.subs[i]
        .rmap
        .on_mapping(map, seg_off, payload.len() as u64, win);
    m.counters.map.count(v);
    // Linux counts the same verdicts in `get_mapping_status` / `validate_mapping`
    // (DSSNotMatching, DSSNoMatchTCP, InfiniteMapRx) and the data-level window check.
    m.mib.count_mapping(v);
    match v {
        MapVerdict::New | MapVerdict::Extended | MapVerdict::Duplicate => false,
        MapVerdict::DataFinOnly { dsn } => {
            if recv.on_data_fin(dsn) == FinVerdict::Accepted {
                // The DATA_FIN is acknowledged by the Data ACK of the next segment.
                m.subs[i].conn.ack_now();
            }
            false
        }
        MapVerdict::Infinite => {
            m.counters.infinite_rx += 1;
            true
        }
        MapVerdict::Inconsistent
        | MapVerdict::NotCovering
        | MapVerdict::OutsideWindow
        | MapVerdict::TableFull => {
            m.counters.map_refused += 1;
            true
        }
    }
}

/// After any input: subflow ACKs free send mappings, in-order subflow bytes move to
/// the data level, our acknowledged DATA_FIN closes the subflows, more data moves
/// into them.
fn mp_after_input(m: &mut Meta, now: Instant) {
    for s in &mut m.subs {
        let una = s.conn.acked_offset();
        s.smap.on_subflow_ack(una);
    }
    super::mp_ss::observe(m, now);
    m.sched.tick(now);
    mp_reap_subflows(m);
    mp_drain(m);
    if m.snd.fin_acked && !m.subflows_closing {
        m.subflows_closing = true;
        let several = m.subs.len() > 1;
        for s in &mut m.subs {
            if several
                && s.conn.sub.loss.backoff >= STALE_LOSS_CNT
                && s.conn.state() != State::Closed
            {
                // A stale subflow (`STALE_LOSS_CNT` RTOs in a row, Linux's
                // `stale_loss_cnt`: a dead path) is not needed for the data-level
                // close: reset, not a FIN it would retransmit until its retries run
                // out (brisk's choice; docs); one that goes stale while closing is
                // reset then (`mp_handle_timeout`). One RTO is not a dead path: the
                // peer may still need the subflow for its DATA_FIN or our Data ACK
                // of it (resetting it after one RTO left MP-5 receivers whose other
                // subflow had closed with none, issue 32).
                s.rst_reason = Some(ResetReason::Unspecified);
                s.conn.abort();
                continue;
            }
            // Linux closes subflows once the DATA_FIN is acknowledged
            // (`mptcp_check_data_fin_ack` → `mptcp_close_wake_up`).
            if m.orphaned {
                s.conn.close();
            } else {
                s.conn.shutdown_write();
            }
        }
    }
    mp_fill(m);
    mp_rtx_update(m, now);
}

/// Arms, moves or stops the data-level retransmission timer after input or output
/// (Linux arms it in `__mptcp_push_pending` and restarts or stops it in
/// `__mptcp_clean_una`). O(1) unless it arms: then the interval's base is read
/// from the subflows.
fn mp_rtx_update(m: &mut Meta, now: Instant) {
    let (una, mut nxt) = (m.snd.una, m.snd.nxt);
    if m.closed0.is_some() && m.subs.iter().all(|s| s.conn.state() == State::Closed) {
        nxt = una; // no subflow left to send on: the timer stops
    }
    let subs = &m.subs;
    m.rtx.update(now, una, nxt, || rtx_base(subs));
}

/// The data-level timer's base interval: the largest RTO (without back-off) among
/// the subflows that may carry data (Linux `mptcp_set_timeout` takes the largest
/// pending subflow timer; floored at `TCP_RTO_MIN` by the timer).
fn rtx_base(subs: &[SubflowCtx]) -> Duration {
    subs.iter()
        .filter(|s| sub_alive(s))
        .map(|s| s.conn.sub.loss.rtt.rto())
        .max()
        .unwrap_or_default()
}

/// The data-level retransmission timer expired (Linux `mptcp_retransmit_timer` →
/// `__mptcp_retrans`): unless the Data ACK moved meanwhile, the oldest bytes not
/// Data-ACKed go again, with their own mapping, on an idle subflow
/// ([`retrans_sub`]); the interval doubles (bounded). With no idle subflow nothing
/// is sent: the subflows still holding data retransmit it themselves, and their RTOs
/// re-inject it elsewhere (seed Table I).
fn mp_data_retrans(m: &mut Meta, now: Instant) {
    let base = rtx_base(&m.subs);
    if !m.rtx.on_expiry(now, m.snd.una, m.snd.nxt, base) {
        return;
    }
    let Some(i) = retrans_sub(m) else {
        m.rtx.idle_none += 1;
        return;
    };
    let s = &m.subs[i];
    let mss = u64::from(s.conn.sub.opts.mss.max(1));
    // The head of the unacknowledged data, as much as the subflow's window takes
    // now (at least one segment), at most one mapping: Linux re-sends the head
    // fragment of its `rtx_queue`.
    let len = (m.snd.nxt - m.snd.una)
        .min(sub_room(s).max(mss))
        .min(dsn::MAX_MAP_LEN);
    let dsn = m.snd_dsn(m.snd.una);
    let n = mp_reinject_on(m, i, dsn, len);
    if n > 0 {
        m.counters.data_rtx += 1;
        m.counters.data_rtx_bytes += n;
        m.mib.mptcp_retrans += 1;
    }
}

/// The subflow for a data-level retransmission (Linux `mptcp_subflow_get_retrans`):
/// one that may carry data and has nothing outstanding at the TCP level (everything
/// written to it acknowledged) and room in the peer's window; a non-backup one
/// first; a backup only when every busy subflow has timed out more than once (no
/// progress anywhere, Linux's `min_stale_count > 1`).
fn retrans_sub(m: &Meta) -> Option<usize> {
    let mut backup = None;
    let mut min_stale = u32::MAX;
    for (i, s) in m.subs.iter().enumerate() {
        if !sub_alive(s) {
            continue;
        }
        if s.conn.acked_offset() < s.written {
            min_stale = min_stale.min(s.conn.sub.loss.backoff);
            continue;
        }
        if s.conn.sub.snd.snd_wnd == 0 {
            continue;
        }
        if s.backup {
            backup = backup.or(Some(i));
            continue;
        }
        return Some(i);
    }
    if min_stale > 1 {
        backup
    } else {
        None
    }
}

/// Most subflow bytes handed to the data level per read: the size of the scratch used
/// only when they wrap around the subflow's receive ring.
const DRAIN_CHUNK: usize = 16 << 10;

/// Moves the subflows' in-order, mapped bytes into the data-level receive buffer, as
/// far as it has room (what does not fit, or has no mapping yet, stays on the subflow,
/// whose window then shrinks; Linux `__mptcp_move_skbs_from_subflow` likewise moves
/// only mapped data). The bytes go from the subflow's ring straight into the
/// data-level ring (`read_in_place`): one copy; `scratch` only when they wrap.
fn mp_drain(m: &mut Meta) {
    let Meta {
        recv,
        subs,
        scratch,
        counters,
        mib,
        ..
    } = m;
    let Some(recv) = recv.as_mut() else {
        return;
    };
    let several = subs.len() > 1;
    for s in subs.iter_mut() {
        loop {
            recv.advertise();
            let readable = s.conn.readable();
            let room = recv.right_edge().wrapping_sub(recv.data_ack()) as usize;
            if readable == 0 || room == 0 {
                break;
            }
            let most = room.min(readable).min(DRAIN_CHUNK);
            let mut want = s.rmap.mapped_run(s.consumed, most as u64) as usize;
            if want == 0 {
                counters.unmapped_held += 1;
                break;
            }
            if several {
                // Another subflow's bytes may be ahead at the data level: take only
                // what lies inside the window (`deliver` must consume every byte
                // read), one mapping at a time.
                if let Some((dsn, run)) = s.rmap.lookup(s.consumed) {
                    let ahead = dsn.wrapping_sub(recv.data_ack());
                    let allowed = if (ahead as i64) < 0 {
                        run // old data (a re-injected copy): consumed as a duplicate
                    } else {
                        (room as u64).saturating_sub(ahead).min(run)
                    };
                    want = want.min(allowed as usize);
                    if want == 0 {
                        break;
                    }
                }
            }
            if scratch.len() < want {
                scratch.resize(want, 0);
            }
            let (rmap, at) = (&mut s.rmap, s.consumed);
            let mut d = crate::mptcp::Delivered::default();
            let n = s.conn.read_in_place(&mut scratch[..want], &mut |b| {
                d = crate::mptcp::deliver(rmap, recv, at, b);
            });
            if n == 0 {
                break;
            }
            // Every byte read was mapped, so every byte was consumed.
            debug_assert_eq!(d.consumed, n as u64);
            s.consumed += n as u64;
            mib.ofo_queue += u64::from(d.out_of_order);
            mib.duplicate_data += u64::from(d.duplicate);
            if d.data_fin == Some(FinVerdict::Accepted) {
                s.conn.ack_now();
            }
        }
    }
}

/// Moves data-level bytes into the subflows and records the mappings (Linux
/// `__mptcp_push_pending`). With one subflow it takes what the subflow's send buffer
/// takes; with several the scheduler (`MptcpConfig::scheduler`) picks a subflow per
/// chunk, and a subflow takes only what its congestion window has room for, as
/// Linux's subflows take only what they can send now: the rest waits at the data
/// level for the next subflow with room. Data queued for re-injection goes first.
fn mp_fill(m: &mut Meta) {
    if m.remote_key.is_none() {
        return;
    }
    if m.subflows_closing {
        return;
    }
    // One subflow takes what its send buffer takes; data re-injected from a subflow
    // that left (REMOVE_ADDR, a reset) goes through the scheduler's path even when
    // one subflow remains.
    // (Also while STTF holds runs sent ahead of the cursor: the in-order fill must
    // skip them, `mp_sttf_settle`.)
    if m.subs.len() == 1 && m.reinject.is_idle() && m.sched.ahead_empty() {
        mp_fill_one(m);
    } else if !mp_nothing_new(m) {
        mp_fill_sched(m);
    }
    if m.snd.fin_queued
        && m.snd.nxt == m.snd.end()
        && !m.snd.fin_acked
        && m.snd.fin_rtx_at.is_none()
    {
        // Resend the DATA_FIN if no Data ACK covers it within a few RTOs.
        let i = signal_sub(m);
        m.snd.fin_rtx_at =
            Some(m.subs[i].conn.sub.probes.last_send + m.subs[i].conn.current_rto() * 2);
    }
}

fn mp_fill_one(m: &mut Meta) {
    let i = 0;
    let st = m.subs[i].conn.state();
    if !matches!(st, State::Established | State::CloseWait) {
        return;
    }
    while m.snd.nxt < m.snd.end() {
        let s = &mut m.subs[i];
        // Only what its window takes (Linux `__mptcp_push_pending` pushes as the
        // subflow's cwnd allows): the rest stays at the data level, where a subflow
        // that joins later can take it. Committing the whole send buffer to the first
        // subflow left a joined subflow idle for any transfer that fit in it.
        let room = sub_room(s);
        if room == 0 {
            break;
        }
        let chunk = m
            .snd
            .avail(m.snd.nxt)
            .min(dsn::MAX_MAP_LEN as usize)
            .min(room as usize);
        let dsn = m.local_idsn.wrapping_add(1).wrapping_add(m.snd.nxt);
        // After a data-level retransmission the subflow's last mapping ends
        // elsewhere: a new record (a no-op otherwise).
        sub_dsn_break(s, dsn);
        let n = m.snd.write_to(&mut s.conn, m.snd.nxt, chunk);
        if n == 0 {
            break;
        }
        if s.smap.push(dsn, s.written, n as u64).is_err() {
            m.counters.opt_no_room += 1;
        }
        // Where this subflow's data level ends, so that the scheduler's first write
        // after a join ends the record here if it does not continue it
        // (`sub_dsn_break`): without it one segment could carry the end of this
        // mapping and the start of a discontiguous one under one DSS mapping.
        s.dsn_end = Some(dsn.wrapping_add(n as u64));
        s.written += n as u64;
        m.snd.nxt += n as u64;
    }
}

/// Room in subflow `s`'s congestion window for new bytes: cwnd less what is in
/// flight and what it holds unsent. Zero for a subflow that may not carry data.
fn sub_room(s: &SubflowCtx) -> u64 {
    let st = s.conn.state();
    if !s.usable
        || !matches!(st, State::Established | State::CloseWait)
        || s.smap.len() >= s.smap.limit()
        || s.conn.sub.loss.backoff >= STALE_LOSS_CNT
    {
        return 0;
    }
    let mss = u64::from(s.conn.sub.opts.mss.max(1));
    let cwnd = u64::from(s.conn.sub.cong.vars.cwnd) * mss;
    let flight = u64::from(s.conn.sub.loss.board.in_flight()) * mss;
    let unsent = s.written.saturating_sub(s.conn.sent_offset());
    cwnd.saturating_sub(flight + unsent)
}

fn sub_view(s: &SubflowCtx, room: u64) -> SubflowView {
    let c = &s.conn;
    let mss = c.sub.opts.mss.max(1);
    SubflowView {
        srtt: c.sub.loss.rtt.srtt().unwrap_or_default(),
        cwnd: c.sub.cong.vars.cwnd.saturating_mul(mss),
        in_flight: c.sub.loss.board.in_flight().saturating_mul(mss),
        queued: s
            .written
            .saturating_sub(c.sent_offset())
            .min(u64::from(u32::MAX)) as u32,
        mss,
        backup: s.backup,
        // Zero unless the subflow's rate sampler runs (`sttf_rate_samples`).
        rate: c.sub.cong.vars.rate.delivery_rate(mss),
        min_rtt: c.sub.loss.rtt.min_rtt().unwrap_or_default(),
        usable: room > 0,
        ca_open: c.ca_state() == CaState::Open,
    }
}

/// STTF's estimate reads each subflow's delivery rate (`mptcp::sched::sttf_time`):
/// its subflows run the rate sampler (`crate::rate`, Linux `tcp_rate.c`, which Linux
/// runs on every socket). Only STTF's: the other schedulers do not read it, and a
/// plain TCP connection never gets here. Set once per subflow, when it is made (the
/// scheduler is fixed for the connection's life and a subflow's controller, whose
/// `needs` this adds to, is never replaced); it was set on every fill.
fn sttf_rate_samples(sched: &Scheduler, s: &mut SubflowCtx) {
    if matches!(sched, Scheduler::Sttf(_)) {
        s.conn.sub.cong.needs.rate_samples = true;
    }
}

/// `mp_fill_sched`'s early stop, tested before the call: nothing re-injected waits,
/// nothing new may go (every data-level byte handed to a subflow, or the peer's
/// window closed) and the scheduler neither acts without room (LowRTT+RP) nor
/// serves every subflow itself (redundant), nor holds STTF runs to settle. Then the
/// call would only settle an empty book and return; its frame (nine views, the
/// rooms) cost more than this test on most polls and inputs of a bulk transfer.
fn mp_nothing_new(m: &Meta) -> bool {
    let acts_alone = match &m.sched {
        Scheduler::Redundant => true,
        Scheduler::MinRtt(mr) => mr.rp,
        _ => false,
    };
    !acts_alone
        && m.reinject.is_idle()
        && m.sched.ahead_empty()
        && m.snd.nxt >= m.snd.end().min(mp_wnd_end(m))
}

#[inline(never)]
fn mp_fill_sched(m: &mut Meta) {
    if matches!(m.sched, Scheduler::Redundant) {
        mp_fill_redundant(m);
        return;
    }
    let n = m.subs.len().min(crate::mptcp::MAX_SUBFLOWS);
    let mut rooms = [0u64; crate::mptcp::MAX_SUBFLOWS];
    // The peer's connection-level window (RFC 8684 §3.3.4: no data beyond the Data
    // ACK plus the window): Linux drops data beyond the edge it advertised
    // (`MPTcpExtNoDSSInWindow`) after the subflow has acknowledged it, so only the
    // data-level retransmission timer sends it again.
    let wnd_end = mp_wnd_end(m);
    // Only LowRTT+RP acts when no subflow has room (its penalty needs none).
    let acts_without_room = matches!(&m.sched, Scheduler::MinRtt(mr) if mr.rp);
    if !acts_without_room && m.reinject.is_idle() {
        // Nothing new may go (every data-level byte handed to a subflow, or the peer's
        // window closed; most polls and inputs of a bulk transfer between the
        // application's writes): the round below would settle STTF's book, then stop
        // at the same test, after building every subflow's room and view for nothing.
        // Settling is idempotent, so the round's own settle is a no-op after this one.
        mp_sttf_settle(m);
        if m.snd.nxt >= m.snd.end().min(wnd_end) {
            return;
        }
    }
    // Bounded: each round places at least one byte or stops.
    // RFC 8684 §3.3.8: backup subflows carry data only when no non-backup subflow
    // is alive (Linux `mptcp_subflow_get_send` picks a backup only when no active
    // subflow exists; a non-backup subflow with a full window still counts).
    let active = m.subs.iter().any(|s| sub_alive(s) && !s.backup);
    for _ in 0..4096 {
        for (room, s) in rooms.iter_mut().zip(&m.subs).take(n) {
            *room = if active && s.backup { 0 } else { sub_room(s) };
        }
        if !acts_without_room && rooms[..n].iter().all(|&r| r == 0) {
            // No subflow's window has room (most polls and inputs while the
            // windows are full): no view is usable, so re-injection takes nothing,
            // every scheduler picks none and STTF sends nothing ahead; only STTF's
            // book is settled, as the full round below would. Skipping the views
            // and the pick here is what the round costs otherwise, on every poll.
            mp_sttf_settle(m);
            break;
        }
        // Built here, after the test above, rather than zeroed on every call.
        let mut views = [SubflowView::default(); crate::mptcp::MAX_SUBFLOWS];
        for i in 0..n {
            views[i] = sub_view(&m.subs[i], rooms[i]);
        }
        // Re-injection first (seed Table I), on a subflow other than the one that
        // timed out.
        if !m.reinject.is_idle() {
            let max = rooms
                .iter()
                .copied()
                .max()
                .unwrap_or(0)
                .min(dsn::MAX_MAP_LEN);
            if max > 0 && mp_reinject_step(m, &views[..n], &rooms[..n], max) {
                continue;
            }
        }
        mp_sttf_settle(m);
        if m.snd.nxt >= m.snd.end().min(wnd_end) {
            // Nothing new may go: LowRTT+RP's opportunistic retransmission and
            // penalisation, when the peer's window blocks data waiting to go
            // (v0.89 `mptcp_next_segment`, penal = 1) or the application waits for
            // send space (`__mptcp_next_segment`, penal only with the buffer full).
            let blocked = m.snd.nxt < m.snd.end();
            let starved = !blocked && m.snd.writable_wanted;
            if (blocked || starved)
                && mp_lowrtt_rp(
                    m,
                    &views[..n],
                    &rooms[..n],
                    blocked || m.snd.capacity() == 0,
                )
            {
                continue;
            }
            break;
        }
        let mut want = m
            .snd
            .avail(m.snd.nxt)
            .min(dsn::MAX_MAP_LEN as usize)
            .min((wnd_end - m.snd.nxt) as usize) as u32;
        if let Scheduler::Sttf(book) = &m.sched {
            // Up to the first run STTF sent ahead, which the cursor then skips.
            if let Some(st) = book.next_start() {
                want = want.min(st.saturating_sub(m.snd.nxt).min(u64::from(u32::MAX)) as u32);
            }
        }
        let i = match m.sched.pick(&views[..n], want, SubflowMask::EMPTY) {
            Pick::One(i) => i,
            // The redundant scheduler is served by `mp_fill_redundant`.
            Pick::Many(mask) => match mask.iter().next() {
                Some(i) => i,
                None => break,
            },
            Pick::None => {
                // STTF waits for a busy faster subflow with the head of the backlog;
                // a slower one with room may take bytes from deeper in it.
                if mp_sttf_ahead(m, &views[..n], &rooms[..n], wnd_end) {
                    continue;
                }
                break;
            }
        };
        let take = (want as u64).min(rooms[i]).max(1) as usize;
        let dsn = m.local_idsn.wrapping_add(1).wrapping_add(m.snd.nxt);
        let s = &mut m.subs[i];
        sub_dsn_break(s, dsn);
        let n_w = m.snd.write_to(&mut s.conn, m.snd.nxt, take);
        if n_w == 0 {
            break;
        }
        s.dsn_end = Some(dsn.wrapping_add(n_w as u64));
        if s.smap.push(dsn, s.written, n_w as u64).is_err() {
            m.counters.opt_no_room += 1;
        }
        s.written += n_w as u64;
        m.snd.nxt += n_w as u64;
        // At once: a Data ACK past the cursor would be refused (`mp_on_data_ack`).
        mp_sttf_settle(m);
    }
}

/// STTF's book kept true (`SttfBook`): runs whose subflow left or went stale are
/// dropped (their bytes go out again in order), and the in-order cursor moves past
/// the runs it reached. A no-op for the other schedulers.
fn mp_sttf_settle(m: &mut Meta) {
    let Scheduler::Sttf(book) = &mut m.sched else {
        return;
    };
    if book.is_empty() {
        return;
    }
    let subs = &m.subs;
    book.retain(|tag| subs.iter().any(|s| sub_tag(s) == tag && sub_alive(s)));
    m.snd.nxt = book.skip(m.snd.nxt);
}

/// A subflow's key in STTF's book (indices shift when a subflow is reaped): its
/// ports and addresses folded into 64 bits.
fn sub_tag(s: &SubflowCtx) -> u64 {
    let fold = |ip: IpAddr| -> u64 {
        match ip {
            IpAddr::V4(a) => u64::from(u32::from(a)),
            IpAddr::V6(a) => {
                let v = u128::from(a);
                (v as u64) ^ ((v >> 64) as u64)
            }
        }
    };
    let (l, r) = (s.conn.local(), s.conn.remote());
    (u64::from(l.port()) << 48 | u64::from(r.port()) << 32)
        ^ fold(l.ip())
        ^ fold(r.ip()).rotate_left(17)
}

/// STTF out of order (seed main body §3.2.1, "unsent data is rescheduled every time
/// a new packet is scheduled"): the head of the backlog waits for a busy faster
/// subflow, so a subflow with room takes the bytes STTF's per-segment assignment
/// would give it, `sttf_ahead_offset` unassigned bytes into the backlog, for as long
/// as its window has room; they are recorded as a run ahead of the cursor. The
/// assignment to the busy subflow is never written into it (a subflow takes only
/// what its window sends now), so it is re-decided on every call: that is the
/// seed's rescheduling of data queued on a path, here without taking bytes back out
/// of a subflow. Returns whether a run was sent.
fn mp_sttf_ahead(m: &mut Meta, views: &[SubflowView], rooms: &[u64], wnd_end: u64) -> bool {
    let Scheduler::Sttf(book) = &m.sched else {
        return false;
    };
    let limit_end = m.snd.end().min(wnd_end);
    let avail = {
        // Unassigned bytes from the cursor to the window's end.
        let inside: u64 = book
            .runs()
            .iter()
            .map(|r| r.end.min(limit_end).saturating_sub(r.start.min(limit_end)))
            .sum();
        limit_end.saturating_sub(m.snd.nxt).saturating_sub(inside)
    };
    let mut best: Option<(u64, usize)> = None;
    for (j, &room) in rooms.iter().enumerate().take(views.len()) {
        if room == 0 {
            continue;
        }
        if let Some(k) = crate::mptcp::sched::sttf_ahead_offset(views, j, SubflowMask::EMPTY, avail)
        {
            if best.is_none_or(|(b, _)| k < b) {
                best = Some((k, j));
            }
        }
    }
    let Some((k, j)) = best else {
        return false;
    };
    let (start, stretch_end) = book.locate(m.snd.nxt, k);
    let end = stretch_end
        .min(limit_end)
        .min(start.saturating_add(rooms[j].min(dsn::MAX_MAP_LEN)));
    if start >= end {
        return false;
    }
    let tag = sub_tag(&m.subs[j]);
    let sent = mp_send_run(m, j, start, end - start);
    if sent == 0 {
        return false;
    }
    if let Scheduler::Sttf(book) = &mut m.sched {
        if !book.insert(crate::mptcp::sched::AheadRun {
            start,
            end: start + sent,
            tag,
        }) {
            // Cannot happen (the stretch is unassigned and the book was checked for
            // room below); if it did, the bytes go out again in order: a duplicate.
            return false;
        }
    }
    true
}

/// Writes data-level bytes `[off, off + len)` on subflow `i` with their own
/// mapping (ending a record first when they do not continue its last one); returns
/// how many it took.
fn mp_send_run(m: &mut Meta, i: usize, off: u64, len: u64) -> u64 {
    if len == 0 || off < m.snd.una || off + len > m.snd.end() || i >= m.subs.len() {
        return 0;
    }
    let chunk = (len as usize).min(m.snd.avail(off));
    let dsn = m.snd_dsn(off);
    let s = &mut m.subs[i];
    sub_dsn_break(s, dsn);
    let n = m.snd.write_to(&mut s.conn, off, chunk);
    if n == 0 {
        return 0;
    }
    s.dsn_end = Some(dsn.wrapping_add(n as u64));
    if s.smap.push(dsn, s.written, n as u64).is_err() {
        m.counters.opt_no_room += 1;
    }
    s.written += n as u64;
    m.snd.hi = m.snd.hi.max(off + n as u64);
    n as u64
}

/// LowRTT+RP (the seed's Table I; v0.89 `mptcp_rcv_buf_optimization`, Raiciu et al.
/// NSDI 2012 §4.2): nothing new may go, so the data-level head (the Data ACK's
/// next byte, sent and not yet data-acknowledged) may be what holds the receiver.
/// `MinRtt::opportunistic` decides; this carries it out: the slow carrier's window
/// halved through its congestion control (ssthresh too unless in slow start), and
/// the head's run, as far as the slow carrier's mapping goes, sent again on the
/// fast subflow. Returns whether bytes were sent. Plain min-RTT and the other
/// schedulers do nothing here.
fn mp_lowrtt_rp(m: &mut Meta, views: &[SubflowView], rooms: &[u64], penal: bool) -> bool {
    let Scheduler::MinRtt(mr) = &mut m.sched else {
        return false;
    };
    let Some(now) = mr.now.filter(|_| mr.rp) else {
        return false;
    };
    if m.subs.len() < 2 || m.snd.una >= m.snd.nxt {
        return false;
    }
    let head = m.local_idsn.wrapping_add(1).wrapping_add(m.snd.una);
    // The subflows that carry the head, and how far the first one's mapping runs.
    let mut carriers = SubflowMask::EMPTY;
    let mut run_end = m.snd.una;
    for (i, s) in m.subs.iter().enumerate().take(views.len()) {
        // Outstanding mappings are few (coalesced per contiguous run).
        if let Some(map) = s
            .smap
            .outstanding()
            .find(|map| head.wrapping_sub(map.dsn) < map.payload())
        {
            if carriers.is_empty() {
                run_end = m.snd.una + (map.payload() - head.wrapping_sub(map.dsn));
            }
            carriers = carriers.with(i);
        }
    }
    if carriers.is_empty() {
        return false;
    }
    let o = mr.opportunistic(now, views, carriers, penal);
    if let Some(j) = o.penalise {
        mr.stats.penalised += 1;
        let c = &mut m.subs[j].conn;
        let (cwnd, ssthresh) = c.sub.cong.window();
        let (cwnd, ssthresh) = crate::mptcp::sched::penalty(cwnd, ssthresh, 1);
        c.sub.cong.set_cwnd(cwnd);
        c.sub.cong.vars.ssthresh = ssthresh;
    }
    let Some(f) = o.retransmit_on.filter(|&f| f < rooms.len() && rooms[f] > 0) else {
        return false;
    };
    let len = (run_end - m.snd.una).min(rooms[f]).min(dsn::MAX_MAP_LEN);
    let sent = mp_send_run(m, f, m.snd.una, len);
    if let Scheduler::MinRtt(mr) = &mut m.sched {
        mr.stats.opportunistic += u64::from(sent > 0);
        mr.stats.opportunistic_bytes += sent;
    }
    sent > 0
}

impl Connection {
    /// What the MPTCP scheduler did beyond picking subflows (LowRTT+RP's
    /// penalties and opportunistic retransmissions, STTF's sends ahead); `None`
    /// for a plain TCP connection.
    pub fn mptcp_sched_stats(&self) -> Option<crate::mptcp::sched::SchedStats> {
        self.mp.as_deref().map(|m| m.sched.stats())
    }

    /// What the scheduler sees of each subflow now (srtt, window, flight, queued,
    /// delivery rate, minimum RTT, room); for tests and reports.
    pub fn mptcp_subflow_views(&self) -> Vec<SubflowView> {
        self.mp.as_deref().map_or(Vec::new(), |m| {
            m.subs.iter().map(|s| sub_view(s, sub_room(s))).collect()
        })
    }
}

/// The redundant scheduler: every subflow sends every data-level byte not yet
/// data-acknowledged, each from its own cursor (`SubflowCtx::red_nxt`) as its window
/// allows, each copy with its own mapping of the same DSNs; the receiver keeps the
/// first copy and consumes the others as duplicates. Backups only when no regular
/// subflow is alive. No copy goes beyond the peer's data-level right edge
/// (`mp_wnd_end`, RFC 8684 §3.3.4), as for the other schedulers: Linux would drop
/// it at the data level after ACKing it on the subflow.
fn mp_fill_redundant(m: &mut Meta) {
    let active = m.subs.iter().any(|s| sub_alive(s) && !s.backup);
    let limit = m.snd.end().min(mp_wnd_end(m));
    for i in 0..m.subs.len() {
        if active && m.subs[i].backup {
            continue;
        }
        // Bounded: each round writes at least one byte or stops.
        for _ in 0..4096 {
            let room = sub_room(&m.subs[i]);
            let from = m.subs[i].red_nxt.max(m.snd.una);
            if room == 0 || from >= limit {
                break;
            }
            let dsn = m.snd_dsn(from);
            let take = (m.snd.avail(from) as u64)
                .min(limit - from)
                .min(room)
                .min(dsn::MAX_MAP_LEN) as usize;
            let s = &mut m.subs[i];
            sub_dsn_break(s, dsn);
            let n_w = m.snd.write_to(&mut s.conn, from, take);
            if n_w == 0 {
                break;
            }
            s.dsn_end = Some(dsn.wrapping_add(n_w as u64));
            if s.smap.push(dsn, s.written, n_w as u64).is_err() {
                m.counters.opt_no_room += 1;
            }
            s.written += n_w as u64;
            let end = from + n_w as u64;
            s.red_nxt = end;
            let fresh = end.saturating_sub(m.snd.nxt.max(from));
            m.counters.redundant_bytes += n_w as u64 - fresh;
            m.snd.nxt = m.snd.nxt.max(end);
        }
    }
}

/// Before bytes at `dsn` go to subflow `s`: if they do not continue its last mapping
/// at the data level, the subflow ends a record there (`Connection::end_record`), so
/// that no segment, first sent or retransmitted, carries bytes of two mappings (Linux
/// keeps skbs of different mappings apart, `mptcp_skb_can_collapse`).
fn sub_dsn_break(s: &mut SubflowCtx, dsn: u64) {
    if s.dsn_end.is_some_and(|e| e != dsn) {
        s.conn.end_record();
    }
}

/// One re-injection from the queue (seed Table I) on the subflow the scheduler
/// picks among those that did not time out, at most `max` bytes and what that
/// subflow's window has room for. Partial re-injection: only what the subflow takes
/// leaves the queue; the rest waits for the next subflow with room. Returns whether
/// any byte went (the caller's loop goes on) — false when nothing is queued, no
/// subflow was picked, or it took nothing.
fn mp_reinject_step(m: &mut Meta, views: &[SubflowView], rooms: &[u64], max: u64) -> bool {
    let Some(r) = m.reinject.peek(&mut m.sched, views, max) else {
        return false;
    };
    let i = match r.on {
        Pick::One(i) => Some(i),
        Pick::Many(mask) => mask.iter().next(),
        Pick::None => None,
    };
    let Some(i) = i.filter(|&i| i < rooms.len()) else {
        return false;
    };
    let want = r.len.min(rooms[i].max(1));
    let took = mp_reinject_on(m, i, r.dsn, want);
    m.reinject.consume(&r, took);
    if took > 0 && took < r.len {
        m.counters.reinject_partial += 1;
    }
    took > 0
}

/// Re-injects `len` data-level bytes at `dsn` on subflow `i` (what of them the
/// Data ACK has not covered yet), with their own mapping. Returns how many bytes
/// from `dsn` on are dealt with: written to the subflow, or already Data-ACKed.
fn mp_reinject_on(m: &mut Meta, i: usize, dsn: u64, len: u64) -> u64 {
    let off = dsn.wrapping_sub(m.local_idsn.wrapping_add(1));
    let start = off.max(m.snd.una);
    let end = (off + len).min(m.snd.nxt);
    let below = start.saturating_sub(off);
    if start >= end || i >= m.subs.len() {
        return below.min(len);
    }
    let chunk = ((end - start) as usize).min(m.snd.avail(start));
    let dsn = m.local_idsn.wrapping_add(1).wrapping_add(start);
    let s = &mut m.subs[i];
    sub_dsn_break(s, dsn);
    let n = m.snd.write_to(&mut s.conn, start, chunk);
    if n == 0 {
        return below;
    }
    s.dsn_end = Some(dsn.wrapping_add(n as u64));
    if s.smap.push(dsn, s.written, n as u64).is_err() {
        m.counters.opt_no_room += 1;
    }
    s.written += n as u64;
    m.counters.reinjected_bytes += n as u64;
    below + n as u64
}

/// Adds the MPTCP option to subflow `i`'s outgoing segment
/// (`mptcp_established_options`, `mptcp_synack_options`, `mptcp_syn_options`).
/// Returns whether the segment carries a queued control option (then the caller
/// asks for another pure ACK while more wait).
fn mp_decorate(m: &mut Meta, i: usize, seg: &mut Segment) -> bool {
    let f = seg.header.flags;
    if i > 0 {
        if let Some(opt) = mp_join_option(m, i, seg) {
            if wire::push(&mut seg.header.extra, &opt).is_err() {
                m.counters.opt_no_room += 1;
            }
            return false;
        }
    }
    let opt = if f.rst() {
        if let Some(reason) = m.subs[i].rst_reason.filter(|_| !m.fastclose) {
            // A refused join or a bad mapping (RFC 8684 §3.6).
            let _ = wire::push(
                &mut seg.header.extra,
                &MptcpOption::MpTcpRst(MpTcpRst {
                    transient: false,
                    reason,
                }),
            );
            return false;
        }
        if !m.fastclose {
            return false;
        }
        let Some(k) = m.remote_key else {
            return false;
        };
        let _ = wire::push(
            &mut seg.header.extra,
            &MptcpOption::MpTcpRst(MpTcpRst {
                transient: false,
                reason: ResetReason::Unspecified,
            }),
        );
        MptcpOption::MpFastclose { receiver_key: k }
    } else if f.syn() && !f.ack() {
        MptcpOption::MpCapable(MpCapable {
            checksum_required: m.csum,
            deny_join_id0: false,
            form: MpCapableForm::Syn,
        })
    } else if f.syn() {
        MptcpOption::MpCapable(MpCapable {
            checksum_required: m.csum,
            deny_join_id0: false,
            form: MpCapableForm::SynAck {
                sender_key: m.local_key,
            },
        })
    } else {
        let Some(remote_key) = m.remote_key else {
            return false;
        };
        let s = &m.subs[i];
        let rel = seg.header.seq.0.wrapping_sub(s.conn.sub.opts.iss);
        let payload = s.conn.payload(seg);
        if i == 0 && !m.passive && !m.fully_established && rel == 1 {
            // The third ACK, and the first data with its implicit mapping (§3.1).
            let form = if payload.is_empty() {
                MpCapableForm::Ack {
                    sender_key: m.local_key,
                    receiver_key: remote_key,
                }
            } else {
                let len = payload.len() as u16;
                MpCapableForm::AckData {
                    sender_key: m.local_key,
                    receiver_key: remote_key,
                    data_len: len,
                    checksum: m.csum.then(|| dss_checksum(m.snd_dsn(0), 1, len, payload)),
                }
            };
            MptcpOption::MpCapable(MpCapable {
                checksum_required: m.csum,
                deny_join_id0: false,
                form,
            })
        } else {
            let Some(recv) = m.recv.as_ref() else {
                return false;
            };
            let fin_dsn = if m.snd.fin_queued && !m.snd.fin_acked && m.snd.nxt == m.snd.end() {
                m.fin_dsn()
            } else {
                None
            };
            let mut data_fin = false;
            let mapping = if !payload.is_empty() {
                // One mapping per segment, covering exactly its payload (Linux accepts
                // a new mapping once the previous is consumed).
                let off = seg.payload_offset;
                s.smap.lookup(off).map(|mp| {
                    let dsn = mp.dsn.wrapping_add(off - mp.sub_off);
                    let mut len = payload.len() as u16;
                    if fin_dsn == Some(dsn.wrapping_add(u64::from(len))) {
                        len += 1;
                        data_fin = true;
                    }
                    let ssn = (off + 1) as u32;
                    wire::Mapping {
                        dsn: DataSeq::Bits64(dsn),
                        subflow_seq: ssn,
                        data_len: len,
                        checksum: m.csum.then(|| dss_checksum(dsn, ssn, len, payload)),
                    }
                })
            } else if let Some(fd) = fin_dsn {
                data_fin = true;
                Some(wire::Mapping {
                    dsn: DataSeq::Bits64(fd),
                    subflow_seq: 0,
                    data_len: 1,
                    checksum: m.csum.then(|| dss_checksum(fd, 0, 1, &[])),
                })
            } else {
                None
            };
            MptcpOption::Dss(Dss {
                data_ack: Some(DataSeq::Bits64(recv.data_ack())),
                mapping,
                data_fin,
            })
        }
    };
    if let MptcpOption::Dss(d) = &opt {
        let pure = seg.payload_len == 0 && f.ack() && !f.syn() && !f.fin() && !f.rst();
        if pure && d.mapping.is_none() && m.subs[i].usable && mp_decorate_control(m, i, seg, &opt) {
            return true;
        }
    }
    if wire::push(&mut seg.header.extra, &opt).is_err() {
        m.counters.opt_no_room += 1;
    }
    false
}

/// A pure ACK on subflow `i` carries the queued control options: an ADD_ADDR (or
/// echo) *instead of* the DSS, as Linux's `mptcp_established_options_add_addr` drops
/// the other suboptions on a pure ACK (an IPv6 ADD_ADDR with HMAC takes 30 of the 40
/// bytes); a REMOVE_ADDR or this subflow's MP_PRIO beside the DSS
/// (`mptcp_established_options_rm_addr`, `_mp_prio`). Returns whether it wrote the
/// options (one control option consumed).
fn mp_decorate_control(m: &mut Meta, i: usize, seg: &mut Segment, dss: &MptcpOption) -> bool {
    let prio = m.subs[i].prio_tx.take();
    let sig = m.signals.pop_front();
    if prio.is_none() && sig.is_none() {
        return false;
    }
    let extra = &mut seg.header.extra;
    match sig {
        Some(o @ MptcpOption::AddAddr(a)) => {
            if wire::push(extra, &o).is_err() {
                m.counters.opt_no_room += 1;
            } else if a.hmac.is_some() {
                m.mib.add_addr_tx += 1;
            } else {
                m.mib.echo_add_tx += 1;
            }
            // MP_PRIO waits for the next pure ACK.
            m.subs[i].prio_tx = prio;
        }
        other => {
            if wire::push(extra, dss).is_err() {
                m.counters.opt_no_room += 1;
            }
            if let Some(o) = other {
                if wire::push(extra, &o).is_err() {
                    m.counters.opt_no_room += 1;
                } else if matches!(o, MptcpOption::RemoveAddr(_)) {
                    m.mib.rm_addr_tx += 1;
                }
            }
            if let Some(backup) = prio {
                if wire::push(extra, &MptcpOption::MpPrio { backup }).is_err() {
                    m.counters.opt_no_room += 1;
                } else {
                    m.mib.mp_prio_tx += 1;
                }
            }
        }
    }
    true
}

/// The DSS (and the first data's MP_CAPABLE mapping) of a segment arriving on subflow
/// `i` (§3.3): the Data ACK frees the data-level send buffer, a mapping is checked
/// and stored. Returns true when the subflow must be reset.
fn mp_rx_dss(m: &mut Meta, i: usize, rx: &Rx, seg: &TcpRepr<'_>) -> bool {
    let f = seg.flags;
    let st = m.subs[i].conn.state();
    let synchronized = st.synchronized() || st == State::SynReceived;
    if !synchronized || f.syn() || m.recv.is_none() {
        return false;
    }
    let irs = m.subs[i].conn.sub.opts.irs;
    // Subflow offset of the payload's first byte (the SYN takes one).
    let rel = seg.seq.0.wrapping_sub(irs);
    let seg_off = expand_sub_off(m.subs[i].consumed, rel);
    let mut reset = false;
    if let Some(MpCapableForm::AckData {
        data_len, checksum, ..
    }) = rx.mpc.map(|c| c.form)
    {
        // The first data's implicit mapping: DSN = IDSN + 1 at subflow sequence 1
        // (§3.1), on the first subflow only.
        if i == 0 && !seg.payload.is_empty() && rel == 1 {
            let map = Mapping {
                dsn: m.remote_idsn.wrapping_add(1),
                sub_off: 0,
                len: data_len,
                data_fin: false,
            };
            reset |= mp_on_mapping(m, i, map, checksum, seg_off, seg.payload);
        }
    }
    if let Some(d) = rx.dss {
        if let Some(a) = d.data_ack {
            mp_on_data_ack(m, a);
        }
        if let Some(w) = d.mapping {
            let r = m.recv.as_ref().map_or(0, |r| r.data_ack());
            let map = Mapping::from_wire(&w, d.data_fin, r, seg_off);
            reset |= mp_on_mapping(m, i, map, w.checksum, seg_off, seg.payload);
        }
    }
    reset
}

/// Which subflow an arriving segment is for: the one whose local port and remote
/// address match (the endpoint's table key; `Meta::rx_remote` is set by the endpoint).
fn mp_rx_subflow(m: &Meta, seg: &TcpRepr<'_>) -> Option<usize> {
    if m.subs.len() == 1 {
        return Some(0);
    }
    m.subs.iter().position(|s| {
        s.conn.local().port() == seg.dst_port
            && match m.rx_remote {
                Some(r) => s.conn.remote() == r,
                None => s.conn.remote().port() == seg.src_port,
            }
    })
}

/// The connection is fully established: the path manager announces its `signal`
/// endpoints (ADD_ADDR) and, on the client, opens the mode's subflows
/// (`mptcp_pm_fully_established` → `mptcp_pm_create_subflow_or_signal_addr`). A
/// server's path manager announces and admits joins; it opens no subflows (docs).
fn mp_pm_start(m: &mut Meta, now: Instant) {
    if m.pm_started || !m.fully_established {
        return;
    }
    let s0 = &m.subs[0].conn;
    if s0.state() != State::Established {
        return;
    }
    m.pm_started = true;
    let local = Addr {
        id: 0,
        ip: s0.local().ip(),
        port: 0,
    };
    let remote = Addr {
        id: 0,
        ip: s0.remote().ip(),
        port: s0.remote().port(),
    };
    let rto = s0.current_rto();
    m.subs[0].pm_slot = Some(0);
    m.pm.on_established(now, local, remote, Some(rto));
    mp_pm_actions(m, now);
}

/// Carries out the path manager's decisions: subflows to open (the client's; the
/// endpoint picks the port), ADD_ADDR / echo / REMOVE_ADDR to send on the next pure
/// ACK (one is sent at once, as Linux's `mptcp_pm_addr_send_ack`), subflows to close.
fn mp_pm_actions(m: &mut Meta, now: Instant) {
    while let Some(a) = m.pm.poll_action() {
        match a {
            PmAction::OpenSubflow {
                slot,
                local,
                remote,
                backup,
            } => {
                if m.passive || m.subflows_closing || local.ip.is_ipv4() != remote.ip.is_ipv4() {
                    m.pm.on_subflow_closed(slot);
                    continue;
                }
                let rport = if remote.port == 0 {
                    s0_remote_port(m)
                } else {
                    remote.port
                };
                m.opens.push_back(SubflowOpen {
                    slot,
                    remote_id: remote.id,
                    local: std::net::SocketAddr::new(local.ip, local.port),
                    remote: std::net::SocketAddr::new(remote.ip, rport),
                    addr_id: local.id,
                    backup,
                });
            }
            PmAction::AddAddr { addr } => {
                if let Some(remote) = m.remote_key {
                    let keys = Keys {
                        local: m.local_key,
                        remote,
                    };
                    push_signal(m, control::announce(keys, addr));
                }
            }
            PmAction::AddAddrEcho { addr } => {
                let a = wire::AddAddr {
                    address_id: addr.id,
                    addr: addr.ip,
                    port: (addr.port != 0).then_some(addr.port),
                    hmac: None,
                };
                push_signal(m, control::echo_of(&a));
            }
            PmAction::RemoveAddr { id } => {
                if let Ok(r) = wire::RemoveAddr::new(&[id]) {
                    push_signal(m, MptcpOption::RemoveAddr(r));
                }
            }
            PmAction::CloseSubflow { slot } => {
                // The path manager freed the slot already.
                if let Some(s) = m.subs.iter_mut().find(|s| s.pm_slot == Some(slot)) {
                    s.pm_slot = None;
                    if s.conn.state() != State::Closed {
                        m.mib.rm_subflow += 1;
                        s.rst_reason = Some(ResetReason::Unspecified);
                        s.conn.abort();
                    }
                }
            }
        }
    }
    if !m.signals.is_empty() {
        let i = signal_sub(m);
        sub_send_ack(&mut m.subs[i].conn, now);
    }
}

/// Queues a control option for the next pure ACK (bounded: [`SIGNAL_QUEUE`]).
fn push_signal(m: &mut Meta, o: MptcpOption) {
    if m.signals.len() >= SIGNAL_QUEUE {
        m.counters.signals_dropped += 1;
        return;
    }
    m.signals.push_back(o);
}

/// Queues a pure ACK on subflow `c` now (Linux `tcp_send_ack` from
/// `mptcp_subflow_send_ack`): the control options ride on it.
fn sub_send_ack(c: &mut Connection, now: Instant) {
    if c.state().synchronized() && c.sub.rcv.owed_acks.len() < super::MAX_OWED_ACKS {
        let s = c.header(
            now,
            c.sub.snd.snd_nxt,
            brisk_wire::Flags::ACK,
            SegmentKind::Ack,
        );
        let s = c.finish(now, s);
        c.sub.rcv.owed_acks.push_back(s);
    }
}

/// A subflow that may take data now: usable, established, and not stale (fewer than
/// `stale_loss_cnt` RTOs in a row; Linux `mptcp_subflow_active` and `subflow->stale`).
fn sub_alive(s: &SubflowCtx) -> bool {
    s.usable
        && matches!(s.conn.state(), State::Established | State::CloseWait)
        && s.conn.sub.loss.backoff < STALE_LOSS_CNT
}

/// Whether a subflow other than `i` is alive (carries data now).
fn others_alive(m: &Meta, i: usize) -> bool {
    m.subs
        .iter()
        .enumerate()
        .any(|(j, s)| j != i && sub_alive(s))
}

/// Whether a subflow other than `i` is open and may carry data (even if stale now).
fn others_open(m: &Meta, i: usize) -> bool {
    m.subs.iter().enumerate().any(|(j, s)| {
        j != i && s.usable && s.conn.state().synchronized() && s.conn.state() != State::Closed
    })
}

/// The subflow to carry a connection-level signal (DATA_FIN, ADD_ADDR, REMOVE_ADDR):
/// the first alive non-backup subflow, else the first alive one, else the first
/// (Linux `mptcp_pm_addr_send_ack` prefers a non-backup subflow).
fn signal_sub(m: &Meta) -> usize {
    if m.subs.len() == 1 {
        return 0;
    }
    let alive = |s: &SubflowCtx| sub_alive(s);
    m.subs
        .iter()
        .position(|s| alive(s) && !s.backup)
        .or_else(|| m.subs.iter().position(alive))
        .unwrap_or(0)
}

/// The largest RTO among the subflows (for the ADD_ADDR timer).
fn max_rto(m: &Meta) -> Option<Duration> {
    m.subs
        .iter()
        .filter(|s| s.conn.state().synchronized())
        .map(|s| s.conn.current_rto())
        .max()
}

/// ADD_ADDR, its echo, REMOVE_ADDR and MP_PRIO on a segment subflow `i` accepted
/// (`mptcp_incoming_options` → the path manager; RFC 8684 §3.4, §3.3.8).
fn mp_rx_control(m: &mut Meta, now: Instant, i: usize, rx: &Rx, seg: &TcpRepr<'_>) {
    if rx.add_addr.is_none() && rx.rm_addr.is_none() && rx.prio.is_none() {
        return;
    }
    let Some(remote_key) = m.remote_key else {
        return;
    };
    if seg.flags.syn() || seg.flags.rst() || !m.subs[i].conn.state().synchronized() {
        return;
    }
    if let Some(a) = rx.add_addr {
        if m.gate.is_none() {
            let mut g = control::AddAddrGate::new(Keys {
                local: m.local_key,
                remote: remote_key,
            });
            let r0 = m.subs[0].conn.remote();
            g.set_initial_remote(r0.ip(), r0.port());
            m.gate = Some(g);
        }
        if let Some(g) = m.gate.as_mut() {
            match g.on_add_addr(now, &a, &mut m.mib) {
                AddAddrVerdict::Announce { addr } => m.pm.on_add_addr(addr),
                AddAddrVerdict::Echoed { addr } => m.pm.on_add_addr_echo(addr),
                AddAddrVerdict::EchoOnly { echo } => push_signal(m, echo),
                // Dropped and counted (`AddAddrHMacFailure`, `AddAddrDrop`).
                AddAddrVerdict::BadHmac | AddAddrVerdict::RateLimited => {}
            }
        }
    }
    if let Some(rm) = rx.rm_addr {
        let mut ids = [None; crate::mptcp::MAX_SUBFLOWS];
        for (j, s) in m.subs.iter().enumerate().take(crate::mptcp::MAX_SUBFLOWS) {
            if s.conn.state() != State::Closed {
                ids[j] = Some(s.remote_id);
            }
        }
        let close = control::on_remove_addr(&rm, &ids, &mut m.mib);
        for j in close.iter() {
            let s = &mut m.subs[j];
            m.mib.rm_subflow += 1;
            s.rst_reason = Some(ResetReason::Unspecified);
            s.conn.abort();
        }
        // The path manager forgets the addresses (and frees their slots; the
        // subflows it names are those closed above).
        for &id in rm.ids() {
            m.pm.on_rm_addr(id);
        }
    }
    if let Some(b) = rx.prio {
        let s = &mut m.subs[i];
        let ch = control::on_mp_prio(s.peer_backup, b, &mut m.mib);
        s.peer_backup = ch.backup;
        s.backup = s.local_backup || s.peer_backup;
    }
    mp_pm_actions(m, now);
}

fn s0_remote_port(m: &Meta) -> u16 {
    m.subs[0].conn.remote().port()
}

/// Subflows other than the first that closed: their path-manager slot is freed, and
/// they leave the connection (the endpoint takes their 4-tuple out of its table).
/// Their data not yet data-acknowledged was queued for re-injection on their RTOs.
fn mp_reap_subflows(m: &mut Meta) {
    let mut i = 1;
    while i < m.subs.len() {
        if m.subs[i].conn.state() != State::Closed || !m.subs[i].closed_seen {
            i += 1;
            continue;
        }
        let mut s = m.subs.remove(i);
        // Its data not yet data-acknowledged goes to the others.
        // (Index MAX_SUBFLOWS: it excludes no subflow, this one being gone.)
        if !s.smap.is_empty() && !m.subflows_closing {
            m.reinject.on_loss(
                LossKind::Rto,
                crate::mptcp::MAX_SUBFLOWS,
                s.smap.outstanding(),
            );
        }
        while s.conn.poll_event().is_some() {}
        if let Some(slot) = s.pm_slot {
            m.pm.on_subflow_closed(slot);
        }
        m.counters.subflows_closed += 1;
        // Drained by the endpoint after every call into the connection.
        m.removed.push(RemovedSubflow {
            key: (s.conn.local().port(), s.conn.remote()),
            flow: s.conn.flow_cc_mut().flow(),
        });
    }
}

/// What `Connection::mp_join_admit` granted: the responder state and the path
/// manager's slot, for `mp_add_passive_subflow`.
#[derive(Clone, Copy, Debug)]
pub struct JoinAdmit {
    responder: JoinResponder,
    slot: usize,
    addr_id: u8,
}

impl Connection {
    /// The local MPTCP token (None for plain TCP or after fallback).
    pub fn mptcp_token(&self) -> Option<u32> {
        self.mp.as_deref().map(|m| m.local_token)
    }

    /// The Linux-named MIB counters (`MPTcpExt*`) of the control options (ADD_ADDR,
    /// echo, REMOVE_ADDR, MP_PRIO) and of the receive path (mapping verdicts,
    /// `DataCsumErr`, `OFOQueue`, `DuplicateData`), None for plain TCP.
    pub fn mptcp_mib(&self) -> Option<&crate::mptcp::counters::MptcpCounters> {
        self.mp.as_deref().map(|m| &m.mib)
    }

    /// The path manager's counters (None for plain TCP).
    pub fn mptcp_pm_stats(&self) -> Option<crate::mptcp::pm::PmStats> {
        self.mp.as_deref().map(|m| m.pm.stats)
    }

    /// Per subflow: (backup for the scheduler, our request, the peer's, the peer's
    /// address id). For tests and reports.
    pub fn mptcp_subflow_prio(&self) -> Vec<(bool, bool, bool, u8)> {
        self.mp.as_deref().map_or(Vec::new(), |m| {
            m.subs
                .iter()
                .map(|s| (s.backup, s.local_backup, s.peer_backup, s.remote_id))
                .collect()
        })
    }

    /// Makes subflow `i` a backup (or a regular subflow again) and tells the peer with
    /// MP_PRIO on that subflow (RFC 8684 §3.3.8; Linux `ip mptcp endpoint change ...
    /// backup` → `mptcp_pm_mp_prio_send_ack`). False if there is no such subflow.
    pub fn mptcp_set_backup(&mut self, now: Instant, i: usize, backup: bool) -> bool {
        let Some(m) = self.mp.as_deref_mut() else {
            return false;
        };
        let Some(s) = m.subs.get_mut(i) else {
            return false;
        };
        if !s.conn.state().synchronized() || s.conn.state() == State::Closed {
            return false;
        }
        s.local_backup = backup;
        s.backup = s.local_backup || s.peer_backup;
        s.prio_tx = Some(backup);
        sub_send_ack(&mut s.conn, now);
        true
    }

    /// Withdraws local endpoint `id` (`ip mptcp endpoint delete id ID`): REMOVE_ADDR
    /// if it was announced, and the subflows from it closed, their data re-injected
    /// on the others (Linux `mptcp_pm_remove_addrs_and_subflows`).
    pub fn mptcp_remove_address(&mut self, now: Instant, id: u8) {
        if let Some(m) = self.mp.as_deref_mut() {
            m.pm.remove_local(id);
            mp_pm_actions(m, now);
        }
    }

    /// Subflows (the initial one included) of an MPTCP connection; 0 for plain TCP.
    pub fn mptcp_subflows(&self) -> usize {
        self.mp.as_deref().map_or(0, |m| m.subs.len())
    }

    /// Per subflow: (local, remote, bytes sent at least once, may carry data). For
    /// tests and reports.
    pub fn mptcp_subflow_info(&self) -> Vec<(SocketAddr, SocketAddr, u64, bool)> {
        self.mp.as_deref().map_or(Vec::new(), |m| {
            m.subs
                .iter()
                .map(|s| {
                    (
                        s.conn.local(),
                        s.conn.remote(),
                        s.conn.info.bytes_sent,
                        s.usable,
                    )
                })
                .collect()
        })
    }

    /// The re-injection queue's counters and the data-level retransmission timer
    /// (Linux `mptcp_retransmit_timer`); for tests and reports.
    pub fn mptcp_reinject_state(
        &self,
    ) -> Option<(
        crate::mptcp::reinject::ReinjectStats,
        crate::mptcp::reinject::DataRtxTimer,
        u64,
    )> {
        self.mp
            .as_deref()
            .map(|m| (m.reinject.stats, m.rtx, m.reinject.pending()))
    }

    /// Replaces the local key (the endpoint's token table found the token taken, Linux
    /// `mptcp_token_new_connect` draws again). Only before the key was sent.
    pub(crate) fn mp_set_local_key(&mut self, key: u64) {
        if let Some(m) = self.mp.as_deref_mut() {
            m.local_key = key;
            m.local_token = crypto::token(key);
            m.local_idsn = crypto::idsn(key);
            m.reinject = Reinjector::new(m.local_idsn.wrapping_add(1), REINJECT_RANGES);
        }
    }

    /// The endpoint names the remote address of the segment it hands over next (with
    /// its destination port, it names the subflow).
    #[inline]
    pub(crate) fn mp_set_rx_remote(&mut self, remote: SocketAddr) {
        if let Some(m) = self.mp.as_deref_mut() {
            m.rx_remote = Some(remote);
        }
    }

    /// The addresses of an outgoing segment: its subflow's (`TxMeta::subflow`).
    #[inline]
    pub(crate) fn tx_addrs(&self, seg: &Segment) -> (IpAddr, IpAddr) {
        match self.mp.as_deref() {
            None => (self.local().ip(), self.remote().ip()),
            Some(m) => {
                let s = m
                    .subs
                    .get(usize::from(seg.meta.subflow))
                    .unwrap_or(&m.subs[0]);
                (s.conn.local().ip(), s.conn.remote().ip())
            }
        }
    }

    /// The next subflow the path manager wants opened (the endpoint picks its port).
    pub(crate) fn mp_poll_open(&mut self) -> Option<SubflowOpen> {
        self.mp.as_deref_mut()?.opens.pop_front()
    }

    /// Subflows removed since the last call (the endpoint's table and host state).
    pub(crate) fn mp_take_removed(&mut self) -> Vec<RemovedSubflow> {
        match self.mp.as_deref_mut() {
            Some(m) if !m.removed.is_empty() => std::mem::take(&mut m.removed),
            _ => Vec::new(),
        }
    }

    /// The 4-tuples and host flows of every subflow but the first (the outer
    /// connection's own), for the endpoint when it reaps the connection.
    pub(crate) fn mp_subflow_keys(&mut self) -> Vec<RemovedSubflow> {
        let Some(m) = self.mp.as_deref_mut() else {
            return Vec::new();
        };
        let mut out = std::mem::take(&mut m.removed);
        for s in m.subs.iter_mut().skip(1) {
            out.push(RemovedSubflow {
                key: (s.conn.local().port(), s.conn.remote()),
                flow: s.conn.flow_cc_mut().flow(),
            });
        }
        out
    }

    /// The subflows' config (the connection's without `mptcp`).
    pub(crate) fn mp_sub_config(&self) -> Option<Arc<Config>> {
        self.mp.as_deref().map(|m| m.sub_config.clone())
    }

    /// Opens the subflow `open` asked for, with `setup` (the endpoint's port, ISN,
    /// seed and controller): an active open whose SYN carries MP_JOIN (§3.2).
    #[cold]
    #[inline(never)]
    pub(crate) fn mp_open_subflow(&mut self, now: Instant, setup: Setup, open: SubflowOpen) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        let Some(remote_key) = m.remote_key else {
            m.pm.on_subflow_closed(open.slot);
            return;
        };
        let nonce: u32 = m.rng.gen();
        let ji = JoinInitiator::new(m.local_key, remote_key, open.addr_id, open.backup, nonce);
        let mut c = Connection::connect(now, setup);
        c.sub.opts.opt_reserve = DSS_RESERVE;
        let mut s = SubflowCtx::new(c, SubJoin::Initiator(ji), open.addr_id, open.backup);
        s.pm_slot = Some(open.slot);
        s.remote_id = open.remote_id;
        sttf_rate_samples(&m.sched, &mut s);
        m.subs.push(s);
        m.counters.join_syn_tx += 1;
    }

    /// The endpoint could not open the subflow (no port, table full).
    pub(crate) fn mp_open_failed(&mut self, open: SubflowOpen) {
        if let Some(m) = self.mp.as_deref_mut() {
            m.pm.on_subflow_closed(open.slot);
        }
    }

    /// A SYN with MP_JOIN `join` resolved to this connection by its token, from
    /// `remote` to our `local`: whether it may join (Linux `subflow_check_req`: the
    /// connection is fully established, the token is its own, the path manager's limit
    /// allows it, `mptcp_pm_allow_new_subflow`). The SYN/ACK's nonce is drawn here.
    pub(crate) fn mp_join_admit(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        join: &MptcpOption,
    ) -> Result<JoinAdmit, JoinError> {
        let Some(m) = self.mp.as_deref_mut() else {
            return Err(JoinError::LimitReached);
        };
        let Some(remote_key) = m.remote_key.filter(|_| m.fully_established) else {
            // Linux: a join before the connection is fully established finds no
            // token yet (`MPJoinNoTokenFound`).
            let token = match join {
                MptcpOption::MpJoin(wire::MpJoin::Syn { token, .. }) => *token,
                _ => 0,
            };
            return Err(JoinError::UnknownToken { token });
        };
        if m.subflows_closing || m.subs.len() >= crate::mptcp::MAX_SUBFLOWS {
            return Err(JoinError::LimitReached);
        }
        let addr_id = mp_local_addr_id(m, local.ip());
        let nonce: u32 = m.rng.gen();
        let (responder, _) =
            JoinResponder::on_syn(m.local_key, remote_key, join, addr_id, false, nonce)?;
        // Port 0 as the path manager's endpoints (REMOVE_ADDR of a local endpoint
        // finds the subflows joined to it).
        let la = Addr {
            id: addr_id,
            ip: local.ip(),
            port: 0,
        };
        let ra = Addr {
            id: responder.peer().address_id,
            ip: remote.ip(),
            port: remote.port(),
        };
        let Some(slot) = m.pm.allow_join(la, ra) else {
            return Err(JoinError::LimitReached);
        };
        Ok(JoinAdmit {
            responder,
            slot,
            addr_id,
        })
    }

    /// The admitted join's subflow, made from `setup` and the SYN: it answers with a
    /// SYN/ACK carrying MP_JOIN (§3.2).
    #[cold]
    #[inline(never)]
    pub(crate) fn mp_add_passive_subflow(
        &mut self,
        now: Instant,
        setup: Setup,
        syn: &TcpRepr<'_>,
        admit: JoinAdmit,
    ) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        let mut c = Connection::accept(now, setup, syn);
        c.sub.opts.opt_reserve = DSS_RESERVE;
        c.negotiate(syn, true);
        let peer = admit.responder.peer();
        let mut s = SubflowCtx::new(c, SubJoin::Responder(admit.responder), admit.addr_id, false);
        s.peer_backup = peer.backup;
        s.backup = peer.backup;
        s.remote_id = peer.address_id;
        s.pm_slot = Some(admit.slot);
        sttf_rate_samples(&m.sched, &mut s);
        m.subs.push(s);
        m.counters.join_syn_rx += 1;
    }

    /// A segment for a joined subflow `i` (not the first): the MP_JOIN handshake's
    /// SYN/ACK and third ACK (§3.2), then DSS as on any subflow. A failure resets this
    /// subflow only, with MP_TCPRST.
    #[cold]
    #[inline(never)]
    fn mp_handle_joined(&mut self, now: Instant, ecn: Ecn, dscp: u8, i: usize, seg: &TcpRepr<'_>) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        let f = seg.flags;
        let st = m.subs[i].conn.state();
        let handshake = (f.syn() && f.ack() && st == State::SynSent)
            || (f.ack() && !f.syn() && st == State::SynReceived);
        if handshake && !f.rst() {
            mp_swap_room(m, i);
            mp_join_step(m, now, ecn, dscp, i, seg);
            mp_swap_room(m, i);
        } else {
            let rx = parse_rx(seg, &mut m.counters);
            let s = &mut m.subs[i];
            if !s.usable
                && matches!(s.join, SubJoin::Initiator(_))
                && st.synchronized()
                && f.ack()
                && !f.syn()
                && !f.rst()
            {
                // The fourth ACK (§3.2): the peer has our third ACK; data may flow.
                s.usable = true;
                s.join_ack = None;
                s.join_rtx_at = None;
            }
            if rx.fastclose.is_some_and(|k| k == m.local_key) {
                m.counters.fastclose_rx += 1;
                for s in &mut m.subs {
                    s.rst_reason = Some(ResetReason::Unspecified);
                    s.conn.abort();
                }
                self.mp_reset();
                return;
            }
            if mp_rx_dss(m, i, &rx, seg) {
                m.subs[0].conn.counters.mptcp_refused += 1;
                let s = &mut m.subs[i];
                s.rst_reason = Some(ResetReason::MptcpError);
                s.conn.abort();
            } else {
                let oow = m.subs[i].conn.counters.out_of_window;
                mp_swap_room(m, i);
                m.subs[i].conn.handle_segment_dscp(now, ecn, dscp, seg);
                mp_swap_room(m, i);
                if m.subs[i].conn.counters.out_of_window == oow {
                    mp_wnd_update(m, i, &rx, seg);
                    mp_rx_control(m, now, i, &rx, seg);
                }
            }
        }
        mp_after_input(m, now);
        self.mp_sync();
    }
}

/// Lends subflow `i` the host's congestion state for one call into it, or takes it
/// back (a swap: the same call does both). The endpoint lends the state to the first
/// subflow's controller (`Connection::flow_cc_mut`); a joined subflow's coupled
/// controller needs it to read and publish in its group (`cc/coupled/`, LISA's join).
#[inline]
fn mp_swap_room(m: &mut Meta, i: usize) {
    if i == 0 || i >= m.subs.len() {
        return;
    }
    let (first, rest) = m.subs.split_at_mut(1);
    first[0]
        .conn
        .flow_cc_mut()
        .swap_lent(rest[i - 1].conn.flow_cc_mut());
}

/// The MP_JOIN SYN/ACK (initiator) or third ACK (responder) on subflow `i`.
fn mp_join_step(m: &mut Meta, now: Instant, ecn: Ecn, dscp: u8, i: usize, seg: &TcpRepr<'_>) {
    let s = &mut m.subs[i];
    match &mut s.join {
        SubJoin::Initiator(ji) => {
            // `subflow_finish_connect`: the SYN/ACK's truncated HMAC.
            let r = find_join(&seg.extra, "SYN/ACK").and_then(|o| ji.on_synack(&o));
            s.conn.handle_segment_dscp(now, ecn, dscp, seg);
            match r {
                Ok(ack) => {
                    m.counters.join_synack_rx += 1;
                    if let Some(p) = ji.peer() {
                        // Linux `subflow_finish_connect`: the peer's id and backup flag.
                        s.peer_backup = p.backup;
                        s.remote_id = p.address_id;
                        s.backup = s.local_backup || s.peer_backup;
                    }
                    s.join_ack = Some(ack);
                    s.join_rtx_at = Some(now + s.conn.current_rto());
                }
                Err(e) => {
                    m.counters.join_synack_bad += 1;
                    s.rst_reason = Some(e.reset_reason());
                    s.conn.abort();
                }
            }
        }
        SubJoin::Responder(jr) => {
            // `subflow_syn_recv_sock` → `subflow_hmac_valid`: the third ACK's HMAC.
            match find_join(&seg.extra, "third ACK").and_then(|o| jr.on_ack(&o)) {
                Ok(()) => {
                    m.counters.join_ack_rx += 1;
                    s.usable = true;
                    s.conn.handle_segment_dscp(now, ecn, dscp, seg);
                    // The fourth ACK, at once (Linux `subflow_syn_recv_sock` →
                    // `mptcp_subflow_fully_established` acks the join).
                    s.conn.ack_now();
                }
                Err(e) => {
                    m.counters.join_ack_bad += 1;
                    s.rst_reason = Some(e.reset_reason());
                    s.conn.abort();
                }
            }
        }
        SubJoin::Initial => s.conn.handle_segment_dscp(now, ecn, dscp, seg),
    }
}

/// Our address id for local address `ip` (Linux `mptcp_pm_get_local_id`): 0 for the
/// initial subflow's, the endpoint's configured id for an endpoint (the id its
/// ADD_ADDR announced), else the smallest id no endpoint has (Linux appends such an
/// address with a new id).
fn mp_local_addr_id(m: &Meta, ip: IpAddr) -> u8 {
    if m.subs[0].conn.local().ip() == ip {
        return 0;
    }
    if let Some(id) = m.pm.local_id(ip) {
        return id;
    }
    (1..=u8::MAX)
        .find(|&id| !m.pm.has_local_id(id))
        .unwrap_or(1)
}

/// A joined subflow's MP_JOIN for this segment, if it needs one: the SYN's, the
/// SYN/ACK's, or the third ACK's (repeated on pure ACKs at the subflow's ISN + 1
/// until the fourth ACK arrives).
fn mp_join_option(m: &Meta, i: usize, seg: &Segment) -> Option<MptcpOption> {
    let s = &m.subs[i];
    let f = seg.header.flags;
    if f.rst() {
        return None;
    }
    match &s.join {
        SubJoin::Initiator(ji) if f.syn() && !f.ack() => Some(ji.syn_option()),
        SubJoin::Responder(jr) if f.syn() && f.ack() => Some(jr.synack_option()),
        SubJoin::Initiator(_) if !f.syn() && seg.payload_len == 0 => {
            let rel = seg.header.seq.0.wrapping_sub(s.conn.sub.opts.iss);
            if rel == 1 && !s.usable {
                s.join_ack
            } else {
                None
            }
        }
        _ => None,
    }
}

impl Connection {
    /// Debug dump of the data level and subflows (tests).
    #[doc(hidden)]
    pub fn mptcp_debug(&self) -> String {
        let Some(m) = self.mp.as_deref() else {
            return String::new();
        };
        let mut out = String::new();
        if let Some(r) = m.recv.as_ref() {
            out += &format!(
                "data_ack+{} right+{} readable {} | snd una {} nxt {} end {} reinj {} | ",
                r.data_ack().wrapping_sub(m.remote_idsn.wrapping_add(1)),
                r.right_edge().wrapping_sub(m.remote_idsn.wrapping_add(1)),
                r.readable(),
                m.snd.una,
                m.snd.nxt,
                m.snd.end(),
                m.reinject.pending()
            );
            out += &format!("{:?} | ", r.stats);
        }
        for s in &m.subs {
            let head = s
                .rmap
                .lookup(s.consumed)
                .map(|(d, run)| (d.wrapping_sub(m.remote_idsn.wrapping_add(1)), run));
            out += &format!(
                "[{:?} readable {} consumed {} head {:?} written {} acked {} sent {} smaps {}] ",
                s.conn.state(),
                s.conn.readable(),
                s.consumed,
                head,
                s.written,
                s.conn.acked_offset(),
                s.conn.sent_offset(),
                s.smap.len()
            );
        }
        out
    }
}

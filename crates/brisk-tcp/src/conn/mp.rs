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
use crate::mptcp::dsn::{self, MapVerdict, Mapping, RecvMap, SendMap, WindowCtx};
use crate::mptcp::meta::{
    DataSend, Fallback, Meta, MptcpCounters, SubflowCtx, DSS_RESERVE, RECV_MAPS, SEND_MAPS,
};
use crate::mptcp::recv::{DataRecv, FinVerdict, RecvConfig};
use brisk_wire::mptcp::checksum::{dss_checksum, DssChecksum};
use brisk_wire::mptcp::crypto;
use brisk_wire::mptcp::{self as wire, DataSeq, Dss, MpCapable, MpCapableForm, MptcpOption};
use brisk_wire::mptcp::{MpTcpRst, ResetReason};

/// What the MPTCP options of one arriving segment said.
#[derive(Default)]
struct Rx {
    mpc: Option<MpCapable>,
    dss: Option<Dss>,
    fastclose: Option<u64>,
}

fn parse_rx(seg: &TcpRepr<'_>, counters: &mut MptcpCounters) -> Rx {
    let mut rx = Rx::default();
    for o in wire::options(&seg.extra) {
        match o {
            Ok(MptcpOption::MpCapable(c)) => rx.mpc = Some(c),
            Ok(MptcpOption::Dss(d)) => rx.dss = Some(d),
            Ok(MptcpOption::MpFastclose { receiver_key }) => rx.fastclose = Some(receiver_key),
            Ok(_) => {}
            Err(_) => counters.bad_options += 1,
        }
    }
    rx
}

/// A seed for the MPTCP key, separate from the connection's own RNG draws so that
/// plain TCP's are unchanged.
const KEY_SEED: u64 = 0x4d50_5443_5031_6b65;

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
        Box::new(Meta {
            passive,
            local_key,
            remote_key: None,
            local_token: crypto::token(local_key),
            local_idsn: crypto::idsn(local_key),
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
                ..mcfg.recv
            },
            subs: vec![SubflowCtx {
                conn: sub,
                smap: SendMap::new(0, SEND_MAPS),
                rmap: RecvMap::new(RECV_MAPS),
                written: 0,
                consumed: 0,
            }],
            counters: MptcpCounters::default(),
            peer_closed_reported: false,
            fastclose: false,
            subflows_closing: false,
            orphaned: false,
            read_total: 0,
            scratch: Vec::new(),
        })
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
        let Some(m) = self.mp.as_deref_mut() else {
            return 0;
        };
        let open = matches!(
            m.subs[0].conn.state(),
            State::SynSent | State::SynReceived | State::Established | State::CloseWait
        );
        if m.snd.fin_queued || !open {
            return 0;
        }
        let n = data.len().min(m.snd.capacity());
        m.snd.buf.extend(&data[..n]);
        if n < data.len() {
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
        m.read_total += n as u64;
        if n > 0 {
            mp_drain(m);
        }
        self.mp_sync();
        n
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
        m.read_total += n as u64;
        if n > 0 {
            mp_drain(m);
        }
        self.mp_sync();
        n
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_read_offset(&self) -> u64 {
        self.mp.as_deref().map_or(0, |m| m.read_total)
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_readable(&self) -> usize {
        self.mp
            .as_deref()
            .and_then(|m| m.recv.as_ref())
            .map_or(0, |r| r.readable() as usize)
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
            m.subs[0].conn.ack_now();
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
            self.terminate(Err(ConnError::Aborted));
        }
    }

    // ----- I/O -----

    #[cold]
    #[inline(never)]
    pub(super) fn mp_poll_transmit(&mut self, now: Instant) -> Option<Segment> {
        self.ack_ended_poll = false;
        let m = self.mp.as_deref_mut()?;
        mp_fill(m);
        let mut out = None;
        for i in 0..m.subs.len() {
            if let Some(seg) = m.subs[i].conn.poll_transmit(now) {
                let mut seg = seg;
                mp_decorate(m, i, &mut seg);
                out = Some(seg);
                break;
            }
        }
        let exhausted = out.is_none() || m.subs.iter().all(|s| s.conn.poll_exhausted());
        self.mp_sync();
        self.ack_ended_poll = out.is_some() && exhausted;
        out
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_payload(&self, seg: &Segment) -> &[u8] {
        match self.mp.as_deref() {
            Some(m) => m.subs[0].conn.payload(seg),
            None => &[],
        }
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_poll_timeout(&self) -> Option<Instant> {
        let m = self.mp.as_deref()?;
        let mut t = m.snd.fin_rtx_at;
        for s in &m.subs {
            t = match (t, s.conn.poll_timeout()) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        }
        t
    }

    #[cold]
    #[inline(never)]
    pub(super) fn mp_handle_timeout(&mut self, now: Instant) {
        let Some(m) = self.mp.as_deref_mut() else {
            return;
        };
        for s in &mut m.subs {
            if s.conn.poll_timeout().is_some_and(|t| t <= now) {
                s.conn.handle_timeout(now);
            }
        }
        if m.snd.fin_rtx_at.is_some_and(|t| t <= now) {
            // Ask the subflow for a segment: it carries the DATA_FIN again.
            let rto = m.subs[0].conn.current_rto();
            m.snd.fin_rtx_count += 1;
            let backoff = rto * (1u32 << m.snd.fin_rtx_count.min(6));
            m.snd.fin_rtx_at = Some(now + backoff);
            m.subs[0].conn.ack_now();
        }
        mp_after_input(m);
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
                    s.conn.abort();
                }
                self.mp_reset();
                return;
            }
        }
        // ----- mappings and the Data ACK (§3.3) -----
        let i = 0;
        let synchronized =
            m.subs[i].conn.state().synchronized() || m.subs[i].conn.state() == State::SynReceived;
        if synchronized && !f.syn() && m.recv.is_some() {
            let irs = m.subs[i].conn.sub.opts.irs;
            // Subflow offset of the payload's first byte (the SYN takes one).
            let rel = seg.seq.0.wrapping_sub(irs);
            let seg_off = expand_sub_off(m.subs[i].consumed, rel);
            let mut reset = false;
            if let Some(MpCapableForm::AckData {
                data_len, checksum, ..
            }) = rx.mpc.map(|c| c.form)
            {
                // The first data's implicit mapping: DSN = IDSN + 1 at subflow
                // sequence 1 (§3.1).
                if !seg.payload.is_empty() && rel == 1 {
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
            if reset {
                m.subs[0].conn.counters.mptcp_refused += 1;
                // Linux `subflow_check_data_avail` → `MPTCP_RST_EMPTCP`: the subflow
                // is reset; with one subflow the connection ends.
                for s in &mut m.subs {
                    s.conn.abort();
                }
                self.mp_reset();
                return;
            }
        }
        m.subs[i].conn.handle_segment_dscp(now, ecn, dscp, seg);
        mp_after_input(m);
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
        let (a, b) = m.snd.from(m.snd.nxt);
        let n = sub.write(a);
        let n2 = if n == a.len() { sub.write(b) } else { 0 };
        debug_assert_eq!(n + n2, a.len() + b.len());
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
        self.terminate(Err(ConnError::Reset));
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
                Event::Closed(r) => closed = Some(r),
                _ => {}
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
        let state = m.subs[0].conn.state();
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
                self.terminate(r);
            }
        } else if self.state != State::Closed {
            self.state = state;
        }
    }
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
    if off > m.snd.nxt + fin_extra {
        m.counters.bad_data_acks += 1;
        return;
    }
    let data_to = off.min(m.snd.end());
    let n = (data_to - m.snd.una) as usize;
    m.snd.buf.drain(..n);
    m.snd.una = data_to;
    if m.snd.fin_queued && off == m.snd.end() + 1 && !m.snd.fin_acked {
        m.snd.fin_acked = true;
        m.snd.fin_rtx_at = None;
    }
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
                return true;
            }
        } else {
            m.counters.csum_unverified += 1;
        }
    }
    let win = WindowCtx {
        data_ack: recv.data_ack(),
        right_edge: recv.right_edge(),
    };
    let v = m.subs[i]
        .rmap
        .on_mapping(map, seg_off, payload.len() as u64, win);
    m.counters.map.count(v);
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
fn mp_after_input(m: &mut Meta) {
    for s in &mut m.subs {
        let una = s.conn.acked_offset();
        s.smap.on_subflow_ack(una);
    }
    mp_drain(m);
    if m.snd.fin_acked && !m.subflows_closing {
        m.subflows_closing = true;
        for s in &mut m.subs {
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
        ..
    } = m;
    let Some(recv) = recv.as_mut() else {
        return;
    };
    for s in subs.iter_mut() {
        loop {
            recv.advertise();
            let readable = s.conn.readable();
            let room = recv.right_edge().wrapping_sub(recv.data_ack()) as usize;
            if readable == 0 || room == 0 {
                break;
            }
            let most = room.min(readable).min(DRAIN_CHUNK);
            let want = s.rmap.mapped_run(s.consumed, most as u64) as usize;
            if want == 0 {
                counters.unmapped_held += 1;
                break;
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
            if d.data_fin == Some(FinVerdict::Accepted) {
                s.conn.ack_now();
            }
        }
    }
}

/// Moves data-level bytes into the first subflow (the scheduler's choice with one
/// subflow) and records the mapping (Linux `__mptcp_push_pending`).
fn mp_fill(m: &mut Meta) {
    if m.remote_key.is_none() {
        return;
    }
    let i = 0;
    let st = m.subs[i].conn.state();
    if !matches!(st, State::Established | State::CloseWait) || m.subflows_closing {
        return;
    }
    while m.snd.nxt < m.snd.end() {
        let s = &mut m.subs[i];
        if s.smap.len() >= s.smap.limit() {
            break;
        }
        let (a, _) = m.snd.from(m.snd.nxt);
        let chunk = &a[..a.len().min(dsn::MAX_MAP_LEN as usize)];
        let n = s.conn.write(chunk);
        if n == 0 {
            break;
        }
        let dsn = m.local_idsn.wrapping_add(1).wrapping_add(m.snd.nxt);
        // Cannot fail: contiguous on this subflow, at most MAX_MAP_LEN, room checked.
        let _ = s.smap.push(dsn, s.written, n as u64);
        s.written += n as u64;
        m.snd.nxt += n as u64;
    }
    if m.snd.fin_queued
        && m.snd.nxt == m.snd.end()
        && !m.snd.fin_acked
        && m.snd.fin_rtx_at.is_none()
    {
        // Resend the DATA_FIN if no Data ACK covers it within a few RTOs.
        m.snd.fin_rtx_at =
            Some(m.subs[i].conn.sub.probes.last_send + m.subs[i].conn.current_rto() * 2);
    }
}

/// Adds the MPTCP option to subflow `i`'s outgoing segment
/// (`mptcp_established_options`, `mptcp_synack_options`, `mptcp_syn_options`).
fn mp_decorate(m: &mut Meta, i: usize, seg: &mut Segment) {
    let f = seg.header.flags;
    let opt = if f.rst() {
        if !m.fastclose {
            return;
        }
        let Some(k) = m.remote_key else {
            return;
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
            return;
        };
        let s = &m.subs[i];
        let rel = seg.header.seq.0.wrapping_sub(s.conn.sub.opts.iss);
        let payload = s.conn.payload(seg);
        if !m.passive && !m.fully_established && rel == 1 {
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
                return;
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
    if wire::push(&mut seg.header.extra, &opt).is_err() {
        m.counters.opt_no_room += 1;
    }
}

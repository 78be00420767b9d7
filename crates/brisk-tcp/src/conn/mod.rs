//! One TCP connection: a dispatcher over
//! - `state`: RFC 9293 §3.10.7 segment arrival (handshake, RST/SYN/ACK checks, RFC 5961),
//! - `paws`: RFC 7323 PAWS with Linux's reordered-dup-ACK exemption,
//! - `ack`: the sender's ACK processing (scoreboard, RTT, RACK-TLP, PRR, CC),
//! - `undo`: undo of spurious recoveries and RTOs (D-SACK, Eifel, F-RTO),
//! - `output`: what to send next and building segments,
//! - `send` / `recv`: the buffers,
//! - `timer` / `timeout`: the timer table and what each timer does,
//! - `close`: the FIN-WAIT-2 orphan timeout and TIME-WAIT's segment rules,
//! - `isn`: RFC 6528 initial sequence numbers.
//!
//! Sequence numbers are kept as 64-bit offsets from the ISS (send side) and the IRS
//! (receive side), so they never wrap inside the connection; they become `SeqNum`s
//! only at the wire.
//!
//! Methods, quinn-style: getters; input `handle_segment`, `handle_timeout`; application
//! calls `write`, `read`, `close`, ...; output `poll_transmit`, `poll_event`,
//! `poll_timeout`. After any input or application call, poll `poll_transmit` until
//! `None`, then `poll_event`, then re-read `poll_timeout`.

mod ack;
mod ack_policy;
mod app;
mod close;
mod congestion;
mod cookie_open;
mod detect;
mod fastopen;
mod handshake;
pub(crate) mod inspace;
mod inspace_data;
pub mod isn;
mod loss;
mod mech;
mod mp;
mod mp_mem;
mod mp_ss;
mod pacing;
mod parts;
mod paws;
pub mod pressure;
mod rc3_send;
pub mod recv;
mod report;
mod rto_timer;
mod sack_classify;
mod segment;
mod select;
pub mod send;
mod state;
mod stream;
mod stream_map;
mod subflow;
mod timeout;
pub mod timer;
mod transmit;
mod undo;

use crate::cc::CcState;
use crate::config::Config;
use crate::event::{ConnError, Event, RetransmitKind, TraceEvent};
use crate::recovery::scoreboard::Scoreboard;
use crate::recovery::RttEstimator;
use crate::stats::{InfoCounts, TcpInfo};
use ack_policy::AckState;
pub(crate) use ack_policy::MAX_QUICKACKS;
use brisk_time::{Duration, Instant};
use brisk_wire::{Ecn, SeqNum, TcpRepr};
pub use fastopen::ClientOutcome;
pub use inspace::{InSpaceOutcome, InSpaceRole};
pub use inspace_data::InSpaceDataStats;
use mech::Mechanisms;
use parts::{Congestion, Handshake, LossRecovery, Negotiated, Probes, RecvSide, SendSpace, Tracer};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
pub use recv::unordered::UnorderedRead;
use send::{SendBuffer, SharedBytes};
use std::net::SocketAddr;
use std::sync::Arc;
use stream::Stream;
use subflow::Subflow;
use timer::TimerTable;

/// RFC 9293 §3.3.2 states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum State {
    Closed,
    Listen,
    SynSent,
    SynReceived,
    Established,
    FinWait1,
    FinWait2,
    CloseWait,
    Closing,
    LastAck,
    TimeWait,
}

impl State {
    pub fn name(self) -> &'static str {
        match self {
            State::Closed => "CLOSED",
            State::Listen => "LISTEN",
            State::SynSent => "SYN_SENT",
            State::SynReceived => "SYN_RECV",
            State::Established => "ESTABLISHED",
            State::FinWait1 => "FIN_WAIT1",
            State::FinWait2 => "FIN_WAIT2",
            State::CloseWait => "CLOSE_WAIT",
            State::Closing => "CLOSING",
            State::LastAck => "LAST_ACK",
            State::TimeWait => "TIME_WAIT",
        }
    }
    /// Synchronized states (RFC 9293 §3.5.2).
    pub fn synchronized(self) -> bool {
        !matches!(
            self,
            State::Closed | State::Listen | State::SynSent | State::SynReceived
        )
    }
}

/// Linux-style congestion-avoidance states (`icsk_ca_state`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum CaState {
    Open,
    Disorder,
    Cwr,
    Recovery,
    Loss,
}

/// What a segment from `poll_transmit` is, for the endpoint, tracing and later
/// mechanisms (RC3 copies are `Redundant`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SegmentKind {
    /// SYN, SYN-ACK, FIN-only, RST.
    Control,
    /// A pure ACK (incl. window updates and challenge ACKs).
    Ack,
    /// First transmission of data.
    NewData,
    Retransmit(RetransmitKind),
    /// Zero-window or keepalive probe.
    Probe,
    /// An untracked extra copy (hook for RC3): not in the scoreboard, not seen by CC.
    Redundant,
}

/// Transmit metadata of an outgoing segment: what the IP layer, schedulers and
/// tracing need beside the TCP header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TxMeta {
    /// IP ECN field (RFC 3168: ECT only on new data of ECN flows).
    pub ecn: Ecn,
    pub dscp: u8,
    /// Scheduling priority (0 = normal); for RC3-style low-priority copies.
    pub priority: u8,
    pub kind: SegmentKind,
    /// MPTCP: the index of the subflow that emitted it in its connection (0 for plain
    /// TCP and the initial subflow); the endpoint addresses the packet with that
    /// subflow's addresses (`Connection::tx_addrs`).
    pub subflow: u8,
}

/// An outgoing segment: the TCP header as brisk-wire's [`TcpRepr`] (its payload left
/// empty), the payload as a range of the send buffer (`Connection::payload`), and
/// transmit metadata. `to_repr` joins header and payload for the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub header: TcpRepr<'static>,
    /// Stream offset of the payload in the send buffer.
    pub payload_offset: u64,
    pub payload_len: u32,
    pub meta: TxMeta,
}

impl Segment {
    pub fn to_repr<'a>(&self, payload: &'a [u8]) -> TcpRepr<'a> {
        TcpRepr {
            payload,
            ..self.header
        }
    }
}

/// Per-connection drop and defence counters, aggregated by the endpoint.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ConnCounters {
    pub paws_drops: u64,
    pub out_of_window: u64,
    pub challenge_acks: u64,
    pub challenge_acks_suppressed: u64,
    /// Replies to out-of-window or PAWS-rejected pure ACKs and SYNs, and challenge
    /// ACKs, not sent because one went out less than `Config::invalid_ratelimit` ago
    /// (Linux's `TCPACKSkipped*` counters, summed).
    pub oow_acks_suppressed: u64,
    pub sack_blocks_ignored: u64,
    pub ooo_dropped: u64,
    /// Data segments dropped because the endpoint's memory budget was exhausted
    /// (`crate::mem`, Linux `TCPRcvQDrop` / `TCPOFODrop` under `tcp_mem`).
    pub mem_dropped: u64,
    /// Timeouts that found the peer had discarded data it SACKed (the cumulative ACK
    /// stopped at a SACKed segment; Linux `TCPSACKReneging`): SACK marks were cleared.
    pub sack_reneging: u64,
    pub bad_acks: u64,
    /// MPTCP: segments refused for their DSS (mapping outside the window or
    /// inconsistent, bad checksum, data without a mapping once fallback is no longer
    /// possible); each resets the subflow (`mp.rs`).
    pub mptcp_refused: u64,
    /// MPTCP offers that fell back to plain TCP (RFC 8684 §3.7).
    pub mptcp_fallbacks: u64,
}

/// Maximum recorded trace events; beyond it recording stops and drops are counted.
pub const TRACE_LIMIT: usize = 1 << 20;
/// RFC 8985 §7.2 WCDelAckT / Linux adds `tcp_rto_min` (200 ms) with one segment out.
const TLP_WC_DELACK: Duration = Duration::from_millis(200);
/// Linux tcp_synack_retries.
const SYNACK_RETRIES: u32 = 5;
/// Most ACKs kept owed between two `poll_transmit` drains (one per arriving segment
/// of a receive batch; beyond it, later arrivals share the last ACK).
const MAX_OWED_ACKS: usize = 64;

pub struct Connection {
    /// Shared with the listener or the caller's other connections while unchanged
    /// (408 B each otherwise; `set_unordered*` copy it on write).
    pub(crate) config: Arc<Config>,
    state: State,
    passive: bool,

    /// The data level: buffers, FIN, writability, events.
    stream: Stream,
    /// The one path the stream travels on (one 4-tuple).
    sub: Subflow,
    /// Sender mechanisms beside the primary send loop (RC3).
    mech: Mechanisms,

    // --- output and reporting ---
    pending_rst: Option<(SeqNum, Option<SeqNum>)>,
    closed_reported: bool,
    counters: ConnCounters,
    info: InfoCounts,
    tracer: Tracer,
    challenge_window: (Instant, u32),
    /// The application called `close` (not only `shutdown_write`): it has given the
    /// connection up, so FIN-WAIT-2 is bounded by `fin_timeout` (Linux `SOCK_DEAD`,
    /// `close.rs`).
    orphaned: bool,
    /// When the last reply governed by `Config::invalid_ratelimit` was sent (Linux
    /// `tp->last_oow_ack_time`); None before the first.
    last_oow_ack_time: Option<Instant>,
    /// DSCP of the segment being handled (RC3 classifies ACKs and data by it).
    rx_dscp: u8,
    /// How the last `poll_transmit` ended: see [`Connection::poll_exhausted`].
    poll_end: transmit::PollEnd,
    /// The MPTCP-level socket (RFC 8684; `mp.rs`): `Some` makes this connection the
    /// data level over its subflows, which the application and I/O calls delegate
    /// to; `None` (plain TCP, or after fallback) costs one branch per call.
    mp: Option<Box<crate::mptcp::meta::Meta>>,
    /// Why an MPTCP offer fell back to plain TCP (RFC 8684 §3.7).
    mp_fallback: Option<crate::mptcp::meta::Fallback>,
    /// TCP Fast Open (RFC 7413, `fastopen.rs`): `None` for plain TCP.
    tfo: Option<Box<fastopen::ConnTfo>>,
    /// Inner Space's handshake role (`None` for plain TCP).
    inspace: Option<Box<inspace::ConnInSpace>>,
}

/// RC3 copies wait in the host's priority queue, so they carry TSvals older than
/// priority-0 segments built after them; a PAWS receiver (RFC 7323 §5, Linux
/// `tcp_paws_discard`) drops such a copy once a newer segment has moved its TS.Recent.
/// RC3 therefore does not offer timestamps (spec A10: the paper's simulations had
/// none). Copies `config` only when it changes it.
pub(crate) fn rc3_without_timestamps(config: &mut Arc<Config>) {
    if config.transmit.rc3.is_some() && config.options.timestamps {
        Arc::make_mut(config).options.timestamps = false;
    }
}

/// The host's timestamp clock at `now`, ms (RFC 7323 §5.4: a 1-ms tick, as Linux),
/// running `ppm` parts per million fast (positive) or slow: a host's crystal error,
/// which the simulator sets per host (`EndpointConfig::ts_clock_ppm`) so that
/// shared-bottleneck detection meets clock skew (RFC 8382 §3.3.3). 0: exactly the
/// simulator's clock.
#[inline]
pub fn ts_clock(now: Instant, ppm: i32) -> u32 {
    if ppm == 0 {
        return now.as_millis() as u32;
    }
    let rate = 1_000_000 + i128::from(ppm.clamp(-MAX_TS_PPM, MAX_TS_PPM));
    (i128::from(now.as_micros()) * rate / 1_000_000_000) as u32
}

/// The largest timestamp clock error accepted, ppm (±0.1 %; crystals are within
/// ±100).
pub const MAX_TS_PPM: i32 = 1000;

/// What a new connection is made of: its addresses, configuration, initial sequence
/// number, seed (for the timestamp offset) and the controller the endpoint's factory
/// built for it.
pub struct Setup {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    pub config: Arc<Config>,
    pub iss: u32,
    pub seed: u64,
    pub cc: crate::cc::FlowCc,
}

impl Connection {
    /// Congestion state for white-box tests: the phase, the controller's variables
    /// and whether this window is cwnd-limited.
    #[cfg(test)]
    pub(crate) fn cc_probe(&self) -> (CaState, &crate::cc::CcState, bool) {
        (
            self.sub.loss.ca_state,
            &self.sub.cong.vars,
            self.sub.cong.is_cwnd_limited,
        )
    }

    /// The controller, to lend it the host's congestion state for one call
    /// (`crate::cc::host::HostHome::lend_to`).
    pub(crate) fn flow_cc_mut(&mut self) -> &mut crate::cc::FlowCc {
        if let Some(m) = self.mp.as_deref_mut() {
            return m.subs[0].conn.flow_cc_mut();
        }
        &mut self.sub.cong.ctrl
    }

    fn from_setup(now: Instant, setup: Setup, passive: bool) -> Self {
        let Setup {
            local,
            remote,
            config,
            iss,
            seed,
            cc,
        } = setup;
        let mut config = config;
        // The endpoint hands over configs already adjusted (so that connections share
        // them); a `Setup` built elsewhere is adjusted here.
        rc3_without_timestamps(&mut config);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let ts_offset: u32 = rng.gen();
        let base_mss = u32::from(config.mss).max(64);
        let mut vars = CcState::new(config.congestion.initial_cwnd.max(1), base_mss);
        vars.cwnd_clamp = vars.cwnd_clamp.max(vars.cwnd);
        let rtt = RttEstimator::new(
            config.recovery.initial_rto,
            config.recovery.min_rto,
            config.recovery.max_rto,
        );
        let rcv_wscale = if config.options.window_scaling {
            window_shift(config.recv_buffer)
        } else {
            0
        };
        Connection {
            state: State::Closed,
            passive,
            stream: Stream::new(
                config.send_buffer,
                config.recv_buffer,
                config.max_ooo_segments,
            ),
            sub: Subflow {
                local,
                remote,
                opts: Negotiated::new(iss, base_mss, rcv_wscale, ts_offset),
                snd: SendSpace::new(),
                hs: Handshake::default(),
                rcv: RecvSide::new(config.ack.quick_acks),
                loss: LossRecovery::new(rtt, now),
                cong: Congestion::new(cc, vars, config.congestion.pacing),
                probes: Probes::new(now),
                timers: TimerTable::default(),
                map: stream_map::StreamMap,
            },
            mech: Mechanisms::new(&config),
            pending_rst: None,
            closed_reported: false,
            counters: ConnCounters::default(),
            info: InfoCounts::default(),
            tracer: Tracer::default(),
            challenge_window: (now, 0),
            orphaned: false,
            last_oow_ack_time: None,
            rx_dscp: 0,
            poll_end: transmit::PollEnd::Open,
            mp: None,
            mp_fallback: None,
            tfo: None,
            inspace: None,
            config,
        }
    }

    /// Active open: the connection starts in SYN-SENT with a SYN to send.
    pub fn connect(now: Instant, setup: Setup) -> Self {
        if setup.config.mptcp.is_some() {
            return Connection::mp_connect(now, setup);
        }
        let mut c = Connection::from_setup(now, setup, false);
        c.state = State::SynSent;
        c.sub.hs.syn_pending = true;
        c.sub.snd.snd_nxt = 0;
        c
    }

    /// Passive open from a listener's SYN: the connection starts in SYN-RECEIVED with a
    /// SYN-ACK to send. `syn` must be a SYN without ACK/RST (the endpoint checks).
    pub fn accept(now: Instant, setup: Setup, syn: &TcpRepr<'_>) -> Self {
        if setup.config.mptcp.is_some() {
            if let Some(mpc) = Connection::mp_syn_option(&setup.config, syn) {
                return Connection::mp_accept(now, setup, syn, mpc);
            }
        }
        let mut c = Connection::from_setup(now, setup, true);
        c.state = State::SynReceived;
        c.sub.opts.irs = syn.seq.0;
        c.negotiate(syn, true);
        c.sub.hs.syn_pending = true;
        c.sub.probes.last_recv = now;
        c
    }

    // ----- getters -----

    pub fn state(&self) -> State {
        self.state
    }
    pub fn local(&self) -> SocketAddr {
        self.sub.local
    }
    pub fn remote(&self) -> SocketAddr {
        self.sub.remote
    }
    pub fn is_passive(&self) -> bool {
        self.passive
    }
    /// Payload bytes per full-sized segment we send.
    pub fn mss(&self) -> u32 {
        self.sub.opts.mss
    }
    pub fn counters(&self) -> &ConnCounters {
        // MPTCP: a copy of the subflow's, kept by `mp.rs` after each segment.
        &self.counters
    }
    /// Whether the connection is fully closed (and its Closed event queued).
    pub fn is_closed(&self) -> bool {
        self.state == State::Closed
    }
    /// Disjoint out-of-order ranges held for reassembly.
    pub fn ooo_ranges(&self) -> usize {
        self.stream.recvbuf.ooo_ranges()
    }
    pub fn ca_state(&self) -> CaState {
        self.sub.loss.ca_state
    }

    // ----- output: events and timers -----

    #[must_use]
    pub fn poll_event(&mut self) -> Option<Event> {
        self.stream.events.pop_front()
    }

    /// Whether `poll_event` would return an event.
    #[inline]
    pub(crate) fn has_events(&self) -> bool {
        !self.stream.events.is_empty()
    }

    #[must_use]
    #[inline]
    pub fn poll_timeout(&self) -> Option<Instant> {
        if self.mp.is_some() {
            return self.mp_poll_timeout();
        }
        self.sub.timers.next()
    }

    // ----- helpers shared by the submodules -----

    /// The highest sequence ever sent: the frontier for ACK and SACK acceptability.
    /// Retransmissions come from the scoreboard and never move SND.NXT back (no
    /// go-back-N), so it is SND.NXT, or the end of the highest copy RC3's
    /// recursive-low-priority loop sent from the tail of the buffer, beyond SND.NXT
    /// (so SACKs and cumulative ACKs of copies are accepted: the paper's relaxed SACK
    /// validation and "ACK bump", §4.1.1).
    fn snd_max(&self) -> u64 {
        self.mech.snd_max(self.sub.snd.snd_nxt)
    }

    /// Whether the stream holds bytes the subflow has not sent yet (its SND.NXT is
    /// before the stream's end, through the subflow's map).
    #[inline]
    fn has_unsent_data(&self) -> bool {
        self.sub.map.stream_to_snd(self.stream.sendbuf.end()) > self.sub.snd.snd_nxt
    }

    /// RCV.NXT: the subflow's own (`RecvSide::rcv_nxt`), moved as in-order bytes and
    /// the FIN arrive.
    #[inline]
    fn rcv_nxt(&self) -> u64 {
        self.sub.rcv.rcv_nxt
    }

    fn wire_snd(&self, s: u64) -> SeqNum {
        SeqNum(self.sub.opts.iss.wrapping_add(s as u32))
    }
    fn wire_rcv(&self, s: u64) -> SeqNum {
        SeqNum(self.sub.opts.irs.wrapping_add(s as u32))
    }
    /// An incoming sequence number as an offset from the IRS, relative to RCV.NXT.
    fn unwrap_rcv(&self, seq: SeqNum) -> i64 {
        let nxt = self.rcv_nxt();
        nxt as i64 + i64::from(seq.diff(self.wire_rcv(nxt)))
    }
    /// An incoming ACK number as an offset from the ISS, relative to SND.UNA.
    fn unwrap_ack(&self, ack: SeqNum) -> i64 {
        self.sub.snd.snd_una as i64 + i64::from(ack.diff(self.wire_snd(self.sub.snd.snd_una)))
    }

    fn tsval(&self, now: Instant) -> u32 {
        ts_clock(now, self.config.ts_clock_ppm).wrapping_add(self.sub.opts.ts_offset)
    }

    fn current_rto(&self) -> Duration {
        self.sub.loss.rtt.rto_backoff(self.sub.loss.backoff)
    }

    fn push_event(&mut self, ev: Event) {
        self.stream.push_event(ev);
    }

    fn trace(&mut self, ev: TraceEvent) {
        if let Some(t) = self.tracer.buf.as_mut() {
            if t.len() < TRACE_LIMIT {
                t.push(ev);
            } else {
                self.tracer.dropped += 1;
            }
        }
    }

    /// Traces cwnd/ssthresh and then the controller's diagnostics, each if changed.
    /// Inline for its common answer on every ACK: no change and no trace buffer.
    #[inline]
    fn trace_cwnd(&mut self, now: Instant) {
        let cur = (self.sub.cong.vars.cwnd, self.sub.cong.vars.ssthresh);
        if cur != self.tracer.last_cwnd || self.tracer.buf.is_some() {
            self.trace_cwnd_changes(now);
        }
    }

    #[inline(never)]
    fn trace_cwnd_changes(&mut self, now: Instant) {
        let cur = (self.sub.cong.vars.cwnd, self.sub.cong.vars.ssthresh);
        if cur != self.tracer.last_cwnd {
            self.tracer.last_cwnd = cur;
            self.trace(TraceEvent::Cwnd {
                at: now,
                cwnd: cur.0,
                ssthresh: cur.1,
            });
        }
        if self.tracer.buf.is_none() {
            return;
        }
        // Compared with the last traced value by the controller, in place: no
        // allocation unless they changed (BBR v3's boxed diagnostics then allocate
        // the traced copy).
        let last = &mut self.tracer.last_diag;
        if let Some(diag) = self.sub.cong.ctrl.diagnostics_changed(last) {
            self.trace(TraceEvent::CcState { at: now, diag });
        }
    }

    fn queue_rst_ack(&mut self) {
        let ack = if self.state == State::SynSent {
            None
        } else {
            Some(self.wire_rcv(self.rcv_nxt()))
        };
        self.pending_rst = Some((self.wire_snd(self.sub.snd.snd_nxt), ack));
    }

    /// Ends the connection: timers stop, buffers are dropped, `Closed` is reported once.
    fn terminate(&mut self, result: Result<(), ConnError>) {
        self.state = State::Closed;
        self.sub.timers.stop_all();
        self.sub.loss.board = Scoreboard::new();
        self.stream.sendbuf = SendBuffer::new(0);
        self.sub.probes.probe_pending = false;
        self.sub.loss.tlp.reset();
        self.sub.rcv.ack = AckState::new(self.config.ack.quick_acks);
        self.sub.rcv.owed_acks.clear();
        if !self.closed_reported {
            self.closed_reported = true;
            self.push_event(Event::Closed(result));
        }
    }
}

/// Linux `tcp_select_initial_window`: the smallest shift that lets the 16-bit window
/// field cover the buffer, at most 14 (RFC 7323 §2.3).
pub fn window_shift(buf: usize) -> u8 {
    let mut shift = 0u8;
    while shift < 14 && (buf >> shift) > 65_535 {
        shift += 1;
    }
    shift
}

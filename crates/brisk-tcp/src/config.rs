//! Per-connection configuration, with Linux 6.x defaults.

use crate::cc::host::{FlowId, GroupId, HostCc, PathInfo};
use crate::cc::spec::{CcContext, CcFactory, StandardCcFactory};
use crate::cc::{CcSpec, CongestionControl};
use brisk_time::{Duration, Instant};

/// Per-connection knobs, grouped by mechanism. `Default` matches a stock Linux 6.x
/// host: IW10, MSS 1448 with timestamps (1460 advertised), SACK, window scaling,
/// timestamps, CUBIC, minRTO 200 ms, delayed ACKs up to 40 ms. A mechanism that
/// arrives adds its own group (new-CWV and ABE to `congestion` and `ecn`, RDB and
/// RC3 to a transmit group).
#[derive(Clone, Debug)]
pub struct Config {
    /// MSS we advertise (IPv4 MTU 1500 - 40). Payload per segment is this minus options.
    pub mss: u16,
    /// Send buffer limit, bytes (writes beyond it are refused: `write` returns fewer bytes).
    pub send_buffer: usize,
    /// Receive buffer, bytes: bounds the advertised window and the out-of-order store.
    pub recv_buffer: usize,
    /// Max out-of-order segments held for reassembly.
    pub max_ooo_segments: usize,
    /// RFC 896 Nagle (with Minshall's refinement, as Linux).
    pub nagle: bool,
    /// DSCP for outgoing packets.
    pub dscp: u8,
    /// Unordered receive (uTCP `SO_UNORDERED`, Minion §4.1): `read_unordered` also hands
    /// out out-of-order data. Local API only: nothing on the wire depends on it.
    pub unordered: bool,
    /// Prioritised send (uTCP `SO_UNORDEREDSEND`, Minion §4.2): `write_with_priority`
    /// places a write whole ahead of unsent writes of lower priority. Local API only.
    /// Ignored on an RC3 sender, whose RLP copies each write where it was written.
    pub unordered_send: bool,
    /// Challenge ACK rate limit per second (RFC 5961 §7; Linux tcp_challenge_ack_limit).
    pub challenge_ack_limit: u32,
    /// Least time between two ACKs sent in reply to out-of-window pure ACKs or SYNs,
    /// PAWS-rejected pure ACKs, or RFC 5961 challenges (Linux
    /// `net.ipv4.tcp_invalid_ratelimit`, 500 ms; `tcp_oow_rate_limited`). Such replies
    /// are what two confused peers bounce back and forth in an ACK loop, and what a
    /// blind attacker draws out of us at will. Out-of-window data is never limited: its
    /// duplicate ACK drives a real sender's loss recovery. Zero disables the limit.
    pub invalid_ratelimit: Duration,
    /// Options offered in the handshake.
    pub options: OptionsConfig,
    /// The congestion controller and window rules.
    pub congestion: CongestionConfig,
    /// Loss detection, retransmission timer and undo.
    pub recovery: RecoveryConfig,
    /// The receiver's ACK policy.
    pub ack: AckConfig,
    /// Explicit congestion notification.
    pub ecn: EcnConfig,
    /// What goes into each packet beyond the next bytes in order (RDB).
    pub transmit: TransmitConfig,
    /// Handshake retries, TIME-WAIT, keepalive and the user timeout.
    pub timeouts: TimeoutConfig,
    /// Multipath TCP (RFC 8684): `Some` offers MP_CAPABLE on `connect` and accepts
    /// it on a listener; `None` is plain TCP. Boxed: most connections have none.
    pub mptcp: Option<Box<crate::mptcp::MptcpConfig>>,
    /// TCP Fast Open (RFC 7413; docs/mechanisms/tfo.md): `Some` with `client` sends
    /// cookie requests and data on the SYN on `connect`, with `server` a listener
    /// accepts data on SYNs with a valid cookie. `None` (the default) is plain TCP.
    /// Boxed: most connections have none.
    pub fastopen: Option<Box<crate::tfo::TfoConfig>>,
    /// Inner Space's dual handshake (docs/mechanisms/inner-space.md): `Some` with
    /// `client` lets `Endpoint::connect_dual` open one, with `server` a listener
    /// answers SYN-Us. `None` (the default) is plain TCP. Boxed: most have none.
    pub inspace: Option<Box<crate::inspace::InSpaceConfig>>,
    /// The host's timestamp clock error, ppm (`crate::conn::ts_clock`): a host
    /// property, which the endpoint copies from `EndpointConfig::ts_clock_ppm` into
    /// each connection's config. Default 0.
    pub ts_clock_ppm: i32,
}

/// Options offered in the SYN (RFC 2018, RFC 7323).
#[derive(Clone, Debug)]
pub struct OptionsConfig {
    pub sack: bool,
    pub window_scaling: bool,
    pub timestamps: bool,
}

/// The congestion controller and the window rules around it.
#[derive(Clone, Debug)]
pub struct CongestionConfig {
    /// The controller: a base algorithm plus layers (e.g. CUBIC wrapped in the
    /// delay-correlation limiter, Nowlan 2014 ch. 3). Default: CUBIC alone.
    pub controller: CcSpec,
    /// Initial window, segments (RFC 6928; Linux IW10).
    pub initial_cwnd: u32,
    /// RFC 5681 §4.1 / Linux `tcp_slow_start_after_idle` (default on): after an idle
    /// period longer than the RTO, restart from at most the initial window.
    pub slow_start_after_idle: bool,
    /// The cwnd-limited test of Linux before 3.16: an ACK may grow cwnd when the
    /// packets in flight before it were within this many segments of cwnd (Linux used
    /// 3, `tcp_max_tso_deferred_mss`). None: today's rule (cwnd-limited only when a
    /// send filled or was blocked by cwnd; in slow start, cwnd < 2 · max in flight).
    pub cwnd_limited_slack: Option<u32>,
    /// Pace every connection (`conn/pacing.rs`, Linux's internal pacing) at the
    /// controller's rate, else at Linux's default (`tcp_update_pacing_rate`: 2 ×
    /// cwnd / srtt in slow start, 1.2 × after). Off by default; controllers that
    /// need pacing (BBR) pace whatever this says.
    pub pacing: bool,
}

/// Loss detection and the retransmission timer.
#[derive(Clone, Debug)]
pub struct RecoveryConfig {
    /// RACK-TLP (RFC 8985); off means RFC 6675 dupthresh only.
    pub rack: bool,
    pub tlp: bool,
    /// F-RTO (RFC 5682) detection of spurious RTOs (Linux `tcp_frto`, default on).
    /// Timestamp (Eifel) and D-SACK undo are always on, as in Linux.
    pub frto: bool,
    pub min_rto: Duration,
    pub max_rto: Duration,
    pub initial_rto: Duration,
    /// Give up after this many consecutive RTOs (Linux tcp_retries2 = 15).
    pub max_retries: u32,
    /// RTO-restart (RFC 7765) with this rrthresh: when fewer segments than this are
    /// outstanding and no unsent data waits, an ACK re-arms the RTO for the earliest
    /// outstanding segment's send time rather than now. None: off (the default).
    pub rto_restart: Option<u32>,
    /// TLP-restart (TLPR, RITE D1.3 App. A.1 §2.3): the probe timer runs from the
    /// last transmission (PTO − T_last) rather than from the ACK. Off by default.
    pub tlp_restart: bool,
    /// The probe timeout's formula: RFC 8985's (default) or the 2013 draft's.
    pub tlp_pto: crate::recovery::tlp::PtoFormula,
    /// RFC 5827 early retransmit as Linux 3.x ran it, for the RFC 6675 recovery
    /// without RACK (RACK subsumes it). Off by default.
    pub early_retransmit: EarlyRetransmit,
    /// FACK loss marking as Linux 3.x ran it (`tcp_fack`, default on until 4.15), for
    /// the recovery without RACK. Off by default.
    pub fack: bool,
}

/// Linux's `tcp_early_retrans` modes 0-2 (3 and 4 add or keep TLP, `RecoveryConfig::tlp`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EarlyRetransmit {
    #[default]
    Off,
    /// Retransmit at once (mode 1).
    Immediate,
    /// Wait max(SRTT/4, 2 ms) first (mode 2, and 3 with TLP: the tail-loss paper's
    /// baseline), in case the ACKs were only reordered.
    Delayed,
}

/// The receiver's ACK policy.
#[derive(Clone, Debug)]
pub struct AckConfig {
    /// Delayed ACKs (RFC 1122 §4.2.3.2, RFC 5681 §4.2).
    pub delayed: bool,
    /// Delayed-ACK ceiling (Linux TCP_DELACK_MAX 200 ms; the ATO settles at 40 ms).
    pub max_delay: Duration,
    /// The delayed-ACK timer (Linux's ATO, TCP_ATO_MIN = 40 ms), capped by `max_delay`.
    /// The tail-loss paper's delACK receiver uses 200 ms (RITE D1.3 App. A.1 §3).
    pub ato: Duration,
    /// Quick-ACK credits at connection start: the first this many ACKs go out at once
    /// (Linux TCP_MAX_QUICKACKS = 16). 0 delays ACKs from the first segment on, as the
    /// tail-loss paper's modified delACK receiver does in slow start.
    pub quick_acks: u32,
}

/// Transmit-path mechanisms that choose what a packet carries.
#[derive(Clone, Debug, Default)]
pub struct TransmitConfig {
    /// Redundant data bundling for thin streams (`crate::rdb`); None: off (the default).
    pub rdb: Option<crate::rdb::RdbConfig>,
    /// RC3 (`crate::rc3`): the recursive-low-priority loop as a sender, ACKs at the
    /// data's priority as a receiver; None: off (the default).
    pub rc3: Option<crate::rc3::Rc3Config>,
}

/// Explicit congestion notification (RFC 3168).
#[derive(Clone, Debug)]
pub struct EcnConfig {
    /// Negotiate ECN in the handshake.
    pub enabled: bool,
}

/// Handshake retries, TIME-WAIT, the FIN-WAIT-2 timeout, keepalive and the user timeout.
#[derive(Clone, Debug)]
pub struct TimeoutConfig {
    /// SYN retries (Linux tcp_syn_retries = 6).
    pub syn_retries: u32,
    /// RFC 5482 user timeout: abort if data stays unacknowledged this long.
    pub user_timeout: Option<Duration>,
    pub time_wait: Duration,
    /// How long an orphaned connection (the application called `close`, not only
    /// `shutdown_write`) may stay in FIN-WAIT-2 waiting for the peer's FIN (Linux
    /// `net.ipv4.tcp_fin_timeout`, default 60 s; at least 3.5 RTO, `tcp_fin_time`).
    /// On expiry the connection is removed silently. See `conn/close.rs`.
    pub fin_timeout: Duration,
    /// Keepalive idle time; None disables keepalive.
    pub keepalive: Option<Duration>,
    pub keepalive_interval: Duration,
    pub keepalive_probes: u32,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1460,
            send_buffer: 4 << 20,
            recv_buffer: 6 << 20,
            max_ooo_segments: 4096,
            nagle: true,
            dscp: 0,
            unordered: false,
            unordered_send: false,
            challenge_ack_limit: 1000,
            invalid_ratelimit: Duration::from_millis(500),
            options: OptionsConfig {
                sack: true,
                window_scaling: true,
                timestamps: true,
            },
            congestion: CongestionConfig {
                controller: CcSpec::default(),
                initial_cwnd: 10,
                slow_start_after_idle: true,
                cwnd_limited_slack: None,
                pacing: false,
            },
            recovery: RecoveryConfig {
                rack: true,
                tlp: true,
                frto: true,
                min_rto: Duration::from_millis(200),
                max_rto: Duration::from_secs(120),
                initial_rto: Duration::from_secs(1),
                max_retries: 15,
                rto_restart: None,
                tlp_restart: false,
                tlp_pto: crate::recovery::tlp::PtoFormula::Rfc8985,
                early_retransmit: EarlyRetransmit::Off,
                fack: false,
            },
            ack: AckConfig {
                delayed: true,
                max_delay: Duration::from_millis(40),
                ato: Duration::from_millis(40),
                quick_acks: crate::conn::MAX_QUICKACKS,
            },
            ecn: EcnConfig { enabled: false },
            transmit: TransmitConfig::default(),
            timeouts: TimeoutConfig {
                syn_retries: 6,
                user_timeout: None,
                time_wait: Duration::from_secs(60),
                fin_timeout: Duration::from_secs(60),
                keepalive: None,
                keepalive_interval: Duration::from_secs(75),
                keepalive_probes: 9,
            },
            mptcp: None,
            fastopen: None,
            inspace: None,
            ts_clock_ppm: 0,
        }
    }
}

impl Config {
    /// The controller this configuration asks for, built by brisk's standard factory
    /// for a connection with `seed` on a host of its own. Endpoints build through
    /// their `EndpointConfig::cc_factory`, with the path and the host's shared state.
    pub fn build_cc(&self, seed: u64) -> Box<dyn CongestionControl> {
        let mut host = HostCc::new();
        let any = std::net::SocketAddr::from(([0, 0, 0, 0], 0));
        let (flow, group) = host.join(any, any, None);
        let path = self.cc_path(any, any, Instant::ZERO, flow, group);
        let ctx = CcContext {
            seed,
            path: &path,
            host: &mut host,
        };
        StandardCcFactory.build(&self.congestion.controller, ctx)
    }

    /// What a controller factory is told about a connection with this configuration
    /// on `local`→`remote`: the MSS and window it starts with (as `Connection` sets
    /// them up) and its RTO before the first sample.
    pub fn cc_path(
        &self,
        local: std::net::SocketAddr,
        remote: std::net::SocketAddr,
        now: Instant,
        flow: FlowId,
        group: Option<GroupId>,
    ) -> PathInfo {
        PathInfo {
            local,
            remote,
            mss: u32::from(self.mss).max(64),
            initial_cwnd: self.congestion.initial_cwnd.max(1),
            initial_rto: self.recovery.initial_rto,
            now,
            flow,
            group,
        }
    }

    /// The label the built controller reports, e.g. "cubic" or "cubic+dc".
    pub fn cc_name(&self) -> String {
        self.congestion.controller.name()
    }
}

//! Per-connection configuration, with Linux 6.x defaults.

use crate::cc::spec::{CcContext, CcFactory, HostCc, StandardCcFactory};
use crate::cc::{CcSpec, CongestionControl};
use brisk_time::Duration;

/// Per-connection knobs. `Default` matches a stock Linux 6.x host: IW10, MSS 1448 with
/// timestamps (1460 advertised), SACK, window scaling, timestamps, CUBIC, minRTO 200 ms,
/// delayed ACKs up to 40 ms.
#[derive(Clone, Debug)]
pub struct Config {
    /// MSS we advertise (IPv4 MTU 1500 - 40). Payload per segment is this minus options.
    pub mss: u16,
    pub initial_cwnd: u32,
    pub sack: bool,
    pub window_scaling: bool,
    pub timestamps: bool,
    pub nagle: bool,
    /// The congestion controller: a base algorithm plus layers (e.g. CUBIC wrapped in
    /// the delay-correlation limiter, Nowlan 2014 ch. 3). Default: CUBIC alone.
    pub congestion: CcSpec,
    /// Send buffer limit, bytes (writes beyond it are refused: `write` returns fewer bytes).
    pub send_buffer: usize,
    /// Receive buffer, bytes: bounds the advertised window and the out-of-order store.
    pub recv_buffer: usize,
    pub min_rto: Duration,
    pub max_rto: Duration,
    pub initial_rto: Duration,
    /// Delayed-ACK ceiling (Linux TCP_DELACK_MAX 200 ms; the ATO settles at 40 ms).
    pub delayed_ack: bool,
    pub max_ack_delay: Duration,
    /// RACK-TLP (RFC 8985); off means RFC 6675 dupthresh only.
    pub rack: bool,
    pub tlp: bool,
    /// F-RTO (RFC 5682) detection of spurious RTOs (Linux `tcp_frto`, default on).
    /// Timestamp (Eifel) and D-SACK undo are always on, as in Linux.
    pub frto: bool,
    /// Give up after this many consecutive RTOs (Linux tcp_retries2 = 15).
    pub max_retries: u32,
    /// SYN retries (Linux tcp_syn_retries = 6).
    pub syn_retries: u32,
    /// RFC 5482 user timeout: abort if data stays unacknowledged this long.
    pub user_timeout: Option<Duration>,
    pub time_wait: Duration,
    /// Keepalive idle time; None disables keepalive.
    pub keepalive: Option<Duration>,
    pub keepalive_interval: Duration,
    pub keepalive_probes: u32,
    /// ECN (RFC 3168) negotiation.
    pub ecn: bool,
    /// DSCP for outgoing packets.
    pub dscp: u8,
    /// Max out-of-order segments held for reassembly.
    pub max_ooo_segments: usize,
    /// Challenge ACK rate limit per second (RFC 5961 §7; Linux tcp_challenge_ack_limit).
    pub challenge_ack_limit: u32,
    /// RFC 5681 §4.1 / Linux `tcp_slow_start_after_idle` (default on): after an idle
    /// period longer than the RTO, restart from at most the initial window.
    pub slow_start_after_idle: bool,
    /// Unordered receive (uTCP `SO_UNORDERED`, Minion §4.1): `read_unordered` also hands
    /// out out-of-order data. Local API only: nothing on the wire depends on it.
    pub unordered: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            mss: 1460,
            initial_cwnd: 10,
            sack: true,
            window_scaling: true,
            timestamps: true,
            nagle: true,
            congestion: CcSpec::default(),
            send_buffer: 4 << 20,
            recv_buffer: 6 << 20,
            min_rto: Duration::from_millis(200),
            max_rto: Duration::from_secs(120),
            initial_rto: Duration::from_secs(1),
            delayed_ack: true,
            max_ack_delay: Duration::from_millis(40),
            rack: true,
            tlp: true,
            frto: true,
            max_retries: 15,
            syn_retries: 6,
            user_timeout: None,
            time_wait: Duration::from_secs(60),
            keepalive: None,
            keepalive_interval: Duration::from_secs(75),
            keepalive_probes: 9,
            ecn: false,
            dscp: 0,
            max_ooo_segments: 4096,
            challenge_ack_limit: 1000,
            slow_start_after_idle: true,
            unordered: false,
        }
    }
}

impl Config {
    /// The controller this configuration asks for, built by brisk's standard factory
    /// for a connection with `seed` on a host of its own. Endpoints build through
    /// their `EndpointConfig::cc_factory` and share one `HostCc` instead.
    pub fn build_cc(&self, seed: u64) -> Box<dyn CongestionControl> {
        let host = HostCc::default();
        StandardCcFactory.build(&self.congestion, CcContext { seed, host: &host })
    }

    /// The label the built controller reports, e.g. "cubic" or "cubic+dc".
    pub fn cc_name(&self) -> String {
        self.congestion.name()
    }
}

//! `[flow.tcp]`: the per-flow TCP knobs. Every knob is declared once, in the table
//! below: its flat key, the group table it may also be written in, the
//! `brisk_tcp::Config` field it sets (or the mechanism builder that reads it, in
//! `build`), and whether a Linux flow can take it. The macro in `declare` derives the
//! flat and grouped TOML forms, the fold between them, the Config fields and the
//! Linux column from it; `validate` holds the range checks. A new knob is one line
//! here plus its check there.

#[macro_use]
mod declare;
mod build;
mod mptcp;
mod types;
mod validate;

pub use brisk_tcp::cc::LayerKind;
pub use mptcp::{EndpointKnob, MptcpKnobs, PathManagerKnob};
pub use types::*;
pub use validate::validate_tcp;

use crate::units::{Dur, Size};

/// Kernel has no per-connection setting for the knob.
const NO_KNOB: &str = "Linux has no per-connection setting for it";
/// A brisk mechanism the kernel lacks.
const BRISK_ONLY: &str = "a brisk mechanism the kernel does not implement";

/// A Linux congestion module's parameters are the module's, for every connection.
const MODULE_PARAMS: &str = "Linux's module parameters are global (/sys/module/tcp_*/parameters), not a per-connection setting";

/// Linux validates cwnd by RFC 2861 (`tcp_slow_start_after_idle`), not RFC 7661.
const NO_NEW_CWV: &str = "Linux has RFC 2861's cwnd validation, not new-CWV (RFC 7661)";

tcp_knobs! {
    flat {
        mss: u16 => set(mss), linux kernel;
        nagle: bool => set(nagle), linux kernel;
        recv_buffer: Size => set(recv_buffer), linux kernel;
        send_buffer: Size => set(send_buffer), linux kernel;
        /// ECN negotiation: `ecn = true`, or a table `[flow.tcp.ecn]` with `enabled`.
        ecn: EcnKnob => mechanism, linux kernel;
        /// A set of defaults for the other knobs: "3.17" is the Linux 3.17 sender the
        /// tail-loss paper measured (rack = false, fack = true, early_retransmit =
        /// "delayed", tlp_pto = "draft01"); knobs set explicitly win.
        linux_profile: LinuxProfile => mechanism,
            linux refuse_set("a profile of brisk knobs; the kernel is what it is");
        /// Unordered receive (uTCP): the receiving app reads with `read_unordered` and
        /// counts bytes at first delivery (docs/mechanisms/utcp.md).
        unordered: bool => set(unordered), linux refuse_on(BRISK_ONLY);
        /// Prioritised send (uTCP `SO_UNORDEREDSEND`): a `datagrams` app's urgent writes
        /// overtake unsent ordinary ones (docs/mechanisms/utcp.md).
        unordered_send: bool => set(unordered_send), linux refuse_on(BRISK_ONLY);
        /// `[flow.tcp.cdg]`: CDG's Linux module parameters (window, backoff_beta,
        /// backoff_factor, hystart_detect, use_ineff, use_shadow, use_tolerance;
        /// docs/mechanisms/cdg.md); needs `cc = "cdg"`.
        cdg: CdgTable => mechanism, linux unchecked;
        /// `[flow.tcp.dctcp]`: DCTCP's Linux module parameters (shift_g, alpha_on_init;
        /// docs/mechanisms/dctcp.md); needs `cc = "dctcp"`.
        dctcp: DctcpTable => mechanism, linux unchecked;
        /// RC3 (docs/mechanisms/rc3.md): `rc3 = true`, or a table `[flow.tcp.rc3]` with
        /// `levels` (segments per low-priority level, default [40, 400, 4000]) and `rule`
        /// ("design", the paper's, default; or "linux", the patch's cumulative
        /// thresholds). As a sender it adds the recursive-low-priority copies; as a
        /// receiver it ACKs low-priority data at the data's priority.
        rc3: Rc3Knob => mechanism,
            linux refuse_on("mainline Linux has no RC3 (the paper's was a patched kernel)");
        /// DSCP of every packet the connection sends, 0 to 63 (default 0). On a `prio`
        /// queue a packet's band is its DSCP (capped at the last band), so `dscp = 1` puts
        /// a connection one band below DSCP-0 traffic (RC3-13's "everything else shifts
        /// down one band"). Not with `rc3`, which sets each packet's DSCP to its priority.
        dscp: u8 => set(dscp), linux kernel;
        /// `[flow.tcp.mptcp]`: MPTCP (RFC 8684; docs/scenarios.md, knobs/mptcp.rs):
        /// subflows, add_addr_accepted, path_manager, ndiffports, scheduler, checksum,
        /// allow_join_initial_addr_port, recv_buffer, recv_wscale, recv_max_ranges,
        /// add_addr_timeout, `[[flow.tcp.mptcp.endpoint]]`. Its presence asks for
        /// MPTCP. A Linux flow opens an IPPROTO_MPTCP socket; what Linux lacks is
        /// refused by `MptcpKnobs::linux_refusal`.
        mptcp: MptcpKnobs => mechanism, linux unchecked;
        /// `[flow.tcp.fse]`: the Flow State Exchange couples this flow's congestion
        /// window with the other flows of its group on the same host
        /// (docs/mechanisms/fse.md): `group` (a name; absent: the host's flows to the
        /// same remote host), `priority` (0.1 to 1.0, default 1.0), `algorithm`
        /// ("conservative", default; "active"; "passive"), `increase` ("one-flow",
        /// default: the group grows as one flow; "sum"), `max_flows` (1 to 4096,
        /// default 64). In the dumbbell, flows naming one group send from one host.
        fse: FseTable => mechanism,
            linux refuse_set("Linux has no Flow State Exchange (coupled congestion control across connections)");
        /// `[flow.tcp.fastopen]`: TCP Fast Open (RFC 7413; docs/mechanisms/tfo.md):
        /// `client`, `server` (default true each when the table is there: Linux's
        /// `tcp_fastopen = 3`), `queue` (the listener's pending-request bound, 0 to
        /// 65535, default 16), `cache_entries` (the client's cookie cache, 1 to
        /// 1000000, default 1024), `negative_cache` (default true), `key` (the
        /// server key, 32 hex digits; default drawn from the run's seed). The flow's
        /// client opens with a cookie request, later connections of the host to the
        /// same server send data on the SYN.
        fastopen: FastOpenTable => mechanism,
            linux refuse_set("a Linux flow's Fast Open is the namespace's net.ipv4.tcp_fastopen and the listener's TCP_FASTOPEN, not a per-run knob");
        /// `[flow.tcp.copa]`: Copa's `delta` (default 0.5, 1/4096 to 1) and
        /// `mode_switch` (the competitive mode, default true; docs/mechanisms/copa.md);
        /// needs `cc = "copa"`.
        copa: CopaTable => mechanism, linux unchecked;
        /// `[flow.tcp.vegas]`: Vegas's Linux module parameters `alpha`, `beta`,
        /// `gamma` (segments, 0 to 1048576, alpha ≤ beta; Linux defaults 2, 4, 1;
        /// docs/mechanisms/vegas.md); needs `cc = "vegas"`.
        vegas: VegasTable => mechanism, linux refuse_set(MODULE_PARAMS);
        /// `[flow.tcp.hybla]`: Hybla's reference RTT `rtt0` (whole milliseconds, 1ms
        /// to 10s; Linux default "25ms"; docs/mechanisms/hybla.md); needs
        /// `cc = "hybla"`.
        hybla: HyblaTable => mechanism, linux refuse_set(MODULE_PARAMS);
        /// `[flow.tcp.lp]`: `variant`, "linux" (default: Linux 6.18's `tcp_lp.c`,
        /// which does not yield on 1 ms timestamps) or "corrected" (the paper's
        /// algorithm with a 64-bit relative one-way delay; docs/mechanisms/lp.md);
        /// needs `cc = "lp"`.
        lp: LpTable => mechanism,
            linux refuse_set("a Linux flow runs the kernel's tcp_lp; the corrected variant is brisk's");
        /// `[flow.tcp.illinois]`: Illinois's Linux module parameters `win_thresh`
        /// (segments, 0 to 1048576, default 15) and `theta` (rounds, 0 to 65535,
        /// default 5; docs/mechanisms/illinois.md); needs `cc = "illinois"`.
        illinois: IllinoisTable => mechanism, linux refuse_set(MODULE_PARAMS);
        /// `[flow.tcp.htcp]`: H-TCP's Linux module parameters `use_rtt_scaling` and
        /// `use_bandwidth_switch` (default true each; docs/mechanisms/htcp.md); needs
        /// `cc = "htcp"`.
        htcp: HtcpTable => mechanism, linux refuse_set(MODULE_PARAMS);
        /// `[flow.tcp.bic]`: BIC's Linux module parameters `fast_convergence` (default
        /// true), `max_increment` (1 to 1048576, default 16), `low_window` (0 to
        /// 1048576, default 14), `beta` (1024ths, 1 to 1024, default 819),
        /// `initial_ssthresh` (0 to 1048576, default 0: the connection's),
        /// `smooth_part` (1 to 1000, default 20; docs/mechanisms/bic.md); needs
        /// `cc = "bic"`.
        bic: BicTable => mechanism, linux refuse_set(MODULE_PARAMS);
    }
    groups {
        /// `[flow.tcp.options]`: sack, timestamps, window_scaling.
        options: OptionsKnobs {
            sack as sack: bool => set(options.sack), linux kernel;
            timestamps as timestamps: bool => set(options.timestamps), linux kernel;
            window_scaling as window_scaling: bool => set(options.window_scaling), linux kernel;
        }
        /// `[flow.tcp.congestion]`: initial_cwnd, slow_start_after_idle, new_cwv,
        /// new_cwv_nvp, cwnd_limited_slack, pacing, abe, beta_ecn, beta_loss,
        /// layer_order, lisa.
        congestion: CongestionKnobs {
            initial_cwnd as initial_cwnd: u32 => set(congestion.initial_cwnd), linux kernel;
            /// RFC 5681 §4.1 restart after idle (Linux `tcp_slow_start_after_idle`,
            /// default true).
            slow_start_after_idle as slow_start_after_idle: bool
                => set(congestion.slow_start_after_idle), linux unchecked;
            /// Wrap `cc` in new congestion window validation (RFC 7661;
            /// docs/mechanisms/new-cwv.md). With it on, the RFC 5681 restart after idle
            /// is off (the NVP governs idle time).
            new_cwv as new_cwv: bool => mechanism, linux refuse_on(NO_NEW_CWV);
            /// new-CWV non-validated period (default 300s, > 0); needs `new_cwv`.
            new_cwv_nvp as new_cwv_nvp: Dur => mechanism, linux refuse_set(NO_NEW_CWV);
            /// Linux before 3.16: cwnd may grow while in flight is within this many
            /// segments of cwnd (Linux used 3; the RDB paper's senders). Absent: today's
            /// rule.
            cwnd_limited_slack as cwnd_limited_slack: u32
                => some(congestion.cwnd_limited_slack),
                linux refuse_set("this kernel has the 3.16+ rule and no setting for it");
            /// Pace the flow's data (docs/mechanisms/bbr.md; Linux's internal pacing)
            /// at its controller's rate, else at Linux's default (2 × cwnd / srtt in
            /// slow start, 1.2 × after). Default false; `cc = "bbr"` always paces.
            pacing as pacing: bool => set(congestion.pacing),
                linux refuse_set("Linux paces per socket through its controller (bbr) or the fq qdisc, not a per-flow switch here");
            /// Wrap `cc` in ABE, Alternative Backoff with ECN (RFC 8511;
            /// docs/mechanisms/abe.md): ECN marks reduce cwnd by `beta_ecn`, losses as
            /// before. Needs `ecn = true`.
            abe as abe: bool => mechanism,
                linux refuse_set("mainline Linux has no ABE (the paper's was a patched module)");
            /// ABE's β_ecn, in (0, 1] (default 0.8 for Reno, 0.85 for CUBIC); needs `abe`.
            beta_ecn as beta_ecn: f64 => mechanism,
                linux refuse_set("mainline Linux has no ABE (the paper's was a patched module)");
            /// The decrease for losses (and every other non-ECN reduction), in (0, 1], in
            /// place of the controller's own: the ABE paper's second sysctl; needs `abe`.
            beta_loss as beta_loss: f64 => mechanism,
                linux refuse_set("mainline Linux has no ABE (the paper's was a patched module)");
            /// The order of the layers around `cc`, innermost first, among those
            /// switched on: names from "delay_correlation", "new_cwv", "abe" (default
            /// that order). A layer switched on but not listed goes outside the listed
            /// ones, in the default order.
            layer_order as layer_order: Vec<LayerKind> => mechanism,
                linux refuse_set("Linux has none of brisk's congestion layers");
            /// LISA (seed B.2): a new subflow takes its initial window from a
            /// slow-starting sibling; needs a coupled `cc` (lia, olia, balia).
            /// `cc = "lia+lisa"` is the same as `cc = "lia"` with `lisa = true`.
            lisa as lisa: bool => mechanism,
                linux refuse_on("LISA is a brisk mechanism (the seed's was a patched kernel)");
        }
        /// `[flow.tcp.recovery]`: rack, tlp, min_rto, initial_rto, max_retries,
        /// rto_restart, tlp_restart, tlp_pto, early_retransmit, fack.
        recovery: RecoveryKnobs {
            rack as rack: bool => set(recovery.rack), linux kernel;
            tlp as tlp: bool => set(recovery.tlp), linux kernel;
            min_rto as min_rto: Dur => set(recovery.min_rto), linux kernel;
            initial_rto as initial_rto: Dur => set(recovery.initial_rto),
                linux refuse_set("the kernel's initial RTO is fixed at 1 s");
            max_retries as max_retries: u32 => set(recovery.max_retries), linux kernel;
            /// RTO-restart (RFC 7765) with this rrthresh (e.g. 4); absent: off.
            rto_restart as rto_restart: u32 => some(recovery.rto_restart),
                linux refuse_set("Linux has no RTO-restart (RFC 7765)");
            /// TLP-restart: the probe timer runs from the last transmission.
            tlp_restart as tlp_restart: bool => set(recovery.tlp_restart),
                linux refuse_on(BRISK_ONLY);
            /// The probe timeout's formula: "rfc8985" (default) or "draft01" (the 2013
            /// draft the tail-loss paper measured: max(2·SRTT, 10 ms); max(2·SRTT,
            /// 1.5·SRTT + 200 ms)).
            tlp_pto as tlp_pto: TlpPtoKnob => set(recovery.tlp_pto),
                linux refuse_set("this kernel's PTO is fixed (RFC 8985's)");
            /// RFC 5827 early retransmit without RACK: "off" (default), "on", "delayed"
            /// (after max(SRTT/4, 2 ms), Linux's tcp_early_retrans = 2/3).
            early_retransmit as early_retransmit: ErKnob => set(recovery.early_retransmit),
                linux refuse_set("Linux 4.15 removed early retransmit (RACK replaced it)");
            /// FACK loss marking without RACK (Linux 3.x `tcp_fack`); default false.
            fack as fack: bool => set(recovery.fack),
                linux refuse_set("Linux 4.15 removed FACK (RACK replaced it)");
        }
        /// `[flow.tcp.ack]`: delayed, max_delay, timer, quick_acks.
        ack: AckKnobs {
            delayed_ack as delayed: bool => set(ack.delayed), linux refuse_set(NO_KNOB);
            max_ack_delay as max_delay: Dur => set(ack.max_delay), linux refuse_set(NO_KNOB);
            /// The delayed-ACK timer (default 40 ms, capped by `max_ack_delay`).
            ack_timer as timer: Dur => set(ack.ato), linux refuse_set(NO_KNOB);
            /// Quick-ACK credits at connection start (default 16; 0: delay from the start).
            quick_acks as quick_acks: u32 => set(ack.quick_acks), linux refuse_set(NO_KNOB);
        }
        /// `[flow.tcp.timeouts]`: time_wait, user_timeout, keepalive.
        timeouts: TimeoutKnobs {
            time_wait as time_wait: Dur => set(timeouts.time_wait),
                linux refuse_set("the kernel's TIME-WAIT is fixed at 60 s");
            user_timeout as user_timeout: Dur => some(timeouts.user_timeout), linux kernel;
            keepalive as keepalive: Dur => some(timeouts.keepalive),
                linux refuse_set("keepalive does not act within a run");
        }
    }
    switches {
        /// Wrap `cc` in the delay-correlation bufferbloat limiter (thesis ch. 3):
        /// `delay_correlation = true`, or a table `[flow.tcp.delay_correlation]` with
        /// `window`, `threshold` and `passive` (its presence switches the layer on).
        delay_correlation: DcKnob (DcTable), linux refuse_on(BRISK_ONLY) {
            /// Delay-correlation observation window W (default 32); needs
            /// `delay_correlation`.
            dc_window as window: usize => mechanism, linux refuse_set(BRISK_ONLY);
            /// Delay-correlation threshold on Pearson r (default 0.90); needs
            /// `delay_correlation`.
            dc_threshold as threshold: f64 => mechanism, linux refuse_set(BRISK_ONLY);
            /// Delay correlation observes and reports r but never sets cwnd (CUBIC runs
            /// as without it); needs `delay_correlation`.
            dc_passive as passive: bool => mechanism, linux refuse_set(BRISK_ONLY);
        }
        /// Redundant data bundling (RDB, docs/mechanisms/rdb.md): `rdb = true`, or a
        /// table `[flow.tcp.rdb]` with `lim`, `spifl`, `itt_min`, `max_bytes`,
        /// `loss_inference` (its presence switches RDB on).
        rdb: RdbKnob (RdbTable),
            linux refuse_on("mainline Linux has no RDB (it was an out-of-tree patch)") {
            /// Most earlier segments per bundle, 1 to 1024 or "unlimited" (default 1);
            /// needs `rdb`.
            rdb_lim as lim: RdbLim => mechanism, linux unchecked;
            /// Static thin-stream test SPIFL_n: bundle only with fewer than n packets in
            /// flight. Without it the dynamic test DPIFL applies; needs `rdb`.
            rdb_spifl as spifl: u32 => mechanism, linux unchecked;
            /// DPIFL's ITT_min (default 10ms): bundle while PIF · ITT_min < min RTT;
            /// needs `rdb`.
            rdb_itt_min as itt_min: Dur => mechanism, linux unchecked;
            /// A payload cap for bundles below the MSS, bytes; needs `rdb`.
            rdb_max_bytes as max_bytes: u32 => mechanism, linux unchecked;
            /// How losses hidden by bundles are found: "ack" (the paper's rule,
            /// default), "dsack" (its D-SACK refinement) or "off" ("old RDB"); needs
            /// `rdb`.
            rdb_loss_inference as loss_inference: RdbLossInference => mechanism,
                linux unchecked;
        }
    }
}

/// Folds `nested` onto `flat`; both set is an error naming both keys.
fn fold<T>(
    flat: &mut Option<T>,
    nested: Option<T>,
    flat_key: &str,
    nested_key: &str,
) -> Result<(), (String, String)> {
    if nested.is_some() {
        if flat.is_some() {
            return Err((
                format!("tcp.{nested_key}"),
                format!("also set as tcp.{flat_key}; set it once"),
            ));
        }
        *flat = nested;
    }
    Ok(())
}

/// A knob's value as its `brisk_tcp::Config` field holds it.
pub trait KnobValue {
    type Config;
    fn config(self) -> Self::Config;
}

macro_rules! same_value {
    ($($t:ty),*) => { $( impl KnobValue for $t { type Config = $t; fn config(self) -> $t { self } } )* };
}
same_value!(bool, u8, u16, u32);

impl KnobValue for Dur {
    type Config = brisk_time::Duration;
    fn config(self) -> brisk_time::Duration {
        self.0
    }
}

impl KnobValue for Size {
    type Config = usize;
    fn config(self) -> usize {
        usize::try_from(self.0).unwrap_or(usize::MAX)
    }
}

impl KnobValue for TlpPtoKnob {
    type Config = brisk_tcp::recovery::tlp::PtoFormula;
    fn config(self) -> Self::Config {
        match self {
            TlpPtoKnob::Rfc8985 => brisk_tcp::recovery::tlp::PtoFormula::Rfc8985,
            TlpPtoKnob::Draft01 => brisk_tcp::recovery::tlp::PtoFormula::Draft01,
        }
    }
}

impl KnobValue for ErKnob {
    type Config = brisk_tcp::config::EarlyRetransmit;
    fn config(self) -> Self::Config {
        match self {
            ErKnob::Off => brisk_tcp::config::EarlyRetransmit::Off,
            ErKnob::On => brisk_tcp::config::EarlyRetransmit::Immediate,
            ErKnob::Delayed => brisk_tcp::config::EarlyRetransmit::Delayed,
        }
    }
}

/// Whether a knob is switched on (for the Linux column's `refuse_on`).
pub trait KnobOn {
    fn is_on(&self) -> bool;
}

impl KnobOn for Option<bool> {
    fn is_on(&self) -> bool {
        *self == Some(true)
    }
}

impl<T> KnobOn for Option<SwitchOrTable<T>> {
    fn is_on(&self) -> bool {
        TcpKnobs::switch(self) == Some(true)
    }
}

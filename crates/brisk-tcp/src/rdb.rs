//! Redundant data bundling (RDB): Opstad, Markussen, Ahmed, Petlund, Griwodz and
//! Halvorsen, "Latency and fairness trade-off for thin streams using redundant data
//! bundling in TCP", IEEE LCN 2015, §III (seed 002; spec `rdb-tlp-rtor-newcwv.md` §1.1).
//! The Linux counterpart is the out-of-tree RDB patch (netdev 2015-16):
//! `tcp_transmit_rdb_skb` / `rdb_build_skb` for the bundle, `tcp_stream_is_thin_dpifl`
//! for the thin test, and `rdb_check_rtx_queue_loss` for the loss inference.
//!
//! A packet that carries new data for a *thin* stream also carries, in front of it,
//! whole earlier segments that are still unacknowledged, as long as the payload stays
//! within the MSS and at most `lim` earlier segments go along. The packet's sequence
//! number moves back to the oldest bundled byte, so it is one contiguous range any TCP
//! receiver accepts (RFC 9293 §3.10.7.4 trims the duplicate prefix). No packet is
//! added, and a bundle counts as one packet against cwnd: only its new part enters the
//! scoreboard. This module holds the decisions; `conn/select.rs` builds the packet and
//! `conn/ack.rs` runs the loss inference.

use crate::recovery::scoreboard::Scoreboard;
use brisk_time::Duration;

/// When a stream counts as thin (RDB §III-B): the bundle is allowed only then.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThinTest {
    /// Static packets-in-flight limit `SPIFL_n`: thin iff PIF < n (Linux's traditional
    /// `tcp_stream_is_thin` is n = 4).
    Spifl(u32),
    /// Dynamic limit `DPIFL = RTT_min / ITT_min`: thin iff PIF · ITT_min < RTT_min,
    /// with RTT_min the connection's minimum RTT (Linux `tcp_min_rtt`). The paper
    /// evaluates ITT_min 10 ms (from RFC 4828's 10-ms TFRC-SP interval) and 20 ms.
    Dpifl { itt_min: Duration },
}

impl Default for ThinTest {
    fn default() -> Self {
        ThinTest::Dpifl {
            itt_min: Duration::from_millis(10),
        }
    }
}

impl ThinTest {
    /// Whether a stream with `pif` packets in flight (counted before the packet about
    /// to go, as Linux evaluates it in `tcp_write_xmit`) is thin. Without an RTT sample
    /// DPIFL holds, as in the Linux patch, whose `tcp_min_rtt` is then `~0U`.
    pub fn is_thin(&self, pif: u32, min_rtt: Option<Duration>) -> bool {
        match *self {
            ThinTest::Spifl(n) => pif < n,
            ThinTest::Dpifl { itt_min } => match min_rtt {
                // Without division: PIF < RTT_min / ITT_min.
                Some(rtt) => u128::from(pif) * itt_min.as_nanos() < rtt.as_nanos(),
                None => true,
            },
        }
    }
}

/// The per-flow RDB switch and its limits (off unless a `Config` carries one).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RdbConfig {
    /// The most earlier segments one packet may carry (the paper's RDB_lim). `None` is
    /// the paper's "∞": only the byte cap limits. The paper recommends 1 (§VI).
    pub lim: Option<u32>,
    pub thin: ThinTest,
    /// A cap on a bundled packet's payload below the MSS (the patch's
    /// `rdb_max_bytes`); `None`: the MSS alone.
    pub max_bytes: Option<u32>,
    /// How losses hidden by bundles are found (§III-A, fairness fix 1).
    pub loss_inference: LossInference,
}

/// RDB's answer to the losses its bundles hide: without it a lost packet whose bytes
/// the next bundle repaired leaves no gap, no dupACK and no congestion response.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum LossInference {
    /// No response ("old RDB", 2008): only to show its unfairness.
    Off,
    /// The paper's rule and the Linux patch's: an ACK that advances to the end of a
    /// bundle while segments the bundle carried were unacknowledged is a loss; enter
    /// CWR. A receiver that delayed the ACK of a segment and then ACKs the bundle
    /// carrying it makes this a false positive ("only makes RDB more conservative").
    #[default]
    Ack,
    /// The D-SACK refinement the paper describes: as `Ack`, but a carried segment
    /// inside the ACK's D-SACK block reached the receiver on its own and is not lost.
    /// Exact with a SACK peer that reports D-SACKs (Linux and brisk do); without
    /// SACK it is `Ack`.
    Dsack,
}

impl Default for RdbConfig {
    fn default() -> Self {
        RdbConfig {
            lim: Some(1),
            thin: ThinTest::default(),
            max_bytes: None,
            loss_inference: LossInference::Ack,
        }
    }
}

/// Most segments one bundle may walk over (a `lim` above this is refused by
/// validation): with one-byte segments and a 9000-byte MSS the byte cap would allow
/// thousands; this keeps the per-packet work bounded whatever the limits say.
pub const MAX_BUNDLED_SEGMENTS: u32 = 1024;

/// The first sequence number of the packet that carries `[new_start, new_start +
/// new_len)`: walking back from the newest outstanding segment, whole segments are
/// taken while the total payload stays within `cap` bytes and at most `lim` of them
/// go along; the walk stops at the first that does not fit (the range must stay
/// contiguous). Returns `(start, segments bundled)`; `start == new_start` means no
/// bundle. Only segments that end exactly where the next begins are taken, so the
/// range is contiguous by construction. Cost: one step per bundled segment.
pub fn bundle_start(
    board: &Scoreboard,
    new_start: u64,
    new_len: u32,
    cap: u32,
    lim: Option<u32>,
) -> (u64, u32) {
    let lim = lim.unwrap_or(u32::MAX).min(MAX_BUNDLED_SEGMENTS);
    let mut start = new_start;
    let mut total = u64::from(new_len);
    let mut n = 0;
    for s in board.iter_rev() {
        if n >= lim || s.end != start || s.fin {
            break;
        }
        let len = s.end - s.start;
        if total + len > u64::from(cap) {
            break;
        }
        total += len;
        start = s.start;
        n += 1;
    }
    (start, n)
}

#[cfg(test)]
mod tests {
    use crate::claim_checks::rdb as c;

    /// RDB-8 / W-7: the thresholds the paper's text states.
    #[test]
    fn thin_thresholds_are_exact() {
        c::thin_thresholds_are_exact();
    }

    #[test]
    fn bundles_whole_segments_back_to_the_first_that_does_not_fit() {
        c::bundles_whole_segments_back_to_the_first_that_does_not_fit();
    }

    #[test]
    fn the_paper_caps_hold_for_120_and_400_byte_writes() {
        c::the_paper_caps_hold_for_120_and_400_byte_writes();
    }

    #[test]
    fn a_gap_or_an_empty_board_stops_the_walk() {
        c::a_gap_or_an_empty_board_stops_the_walk();
    }
}

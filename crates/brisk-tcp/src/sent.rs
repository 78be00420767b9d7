//! The per-packet send record: what the sender knew when a segment left, handed back
//! when it is delivered. Shared by loss recovery (the scoreboard keeps one per segment)
//! and congestion control (delivery-rate and send-time state), so it belongs to
//! neither; after Linux's `tcp_skb_cb` `tx` fields and RFC 9406/draft-cheng
//! delivery-rate estimation's per-packet state.

use brisk_time::Instant;

/// Per-packet state captured when a segment was (last) sent; handed back on ACK.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SentInfo {
    pub sent_at: Instant,
    /// Payload bytes of the segment.
    pub bytes: u32,
    /// Segments in flight when this one left, including itself.
    pub in_flight_at_send: u32,
    /// `CcState::delivered` when this one left (for delivery-rate samples).
    pub delivered_at_send: u64,
    /// Whether the sender was application-limited when this left.
    pub app_limited: bool,
    /// Whether this transmission was a retransmission.
    pub retransmit: bool,
    /// Delivery-rate snapshot (`crate::rate`, Linux `tcp_skb_cb.tx`), filled only for
    /// controllers that take rate samples: the send phase's start
    /// (`first_tx_mstamp`) and the last delivery (`delivered_mstamp`), as microseconds
    /// before `sent_at`, and Linux's app-limited mark (`tp->app_limited != 0`).
    pub first_tx_us: u32,
    pub delivered_us: u32,
    pub rate_app_limited: bool,
    /// BBR v3's send-time counters (Linux v3 `tcp_skb_cb.tx.lost` and
    /// `tx.delivered_ce`), low 32 bits, filled with the rate snapshot: the
    /// connection's lost and CE-delivered counts when this left, so a rate sample
    /// can say how many were lost or CE-marked since (`crate::rate`).
    pub lost_at_send: u32,
    pub delivered_ce_at_send: u32,
}

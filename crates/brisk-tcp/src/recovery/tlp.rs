//! Tail Loss Probe (RFC 8985 §7, Linux `tcp_schedule_loss_probe` / `tcp_send_loss_probe`
//! / `tcp_process_tlp_ack`).
//!
//! The probe timeout is a pure function of SRTT, the flight size and the time left on
//! the RTO, so TLP-restart (arming relative to the last ACK or the last send) can change
//! only where `pto` is evaluated, not this code.

use brisk_time::Duration;

/// RFC 8985 §7.2 / Linux 4.13+: `PTO = 2·SRTT`, plus the worst-case delayed-ACK time
/// when only one segment is in flight (the probe's ACK may be delayed), never later
/// than the pending RTO. Integer nanoseconds underneath, saturating at
/// `Duration::MAX` as `Instant + Duration` does.
#[inline]
pub fn pto(
    srtt: Duration,
    packets_out: u32,
    wc_delayed_ack: Duration,
    rto_remaining: Option<Duration>,
) -> Duration {
    let mut t = srtt.saturating_mul(2);
    if packets_out == 1 {
        t = t.saturating_add(wc_delayed_ack);
    }
    match rto_remaining {
        Some(r) => t.min(r),
        None => t,
    }
}

/// draft-dukkipati-tcpm-tcp-loss-probe-01 (2013), as the tail-loss paper ran it in
/// Linux 3.10-3.17 (`tcp_schedule_loss_probe` before 4.13): `PTO = max(2·SRTT, 10 ms)`
/// with more than one segment out (Eq. 1), `max(2·SRTT, 1.5·SRTT + WCDelAckT)` with one
/// (Eq. 2), never later than the pending RTO.
pub fn pto_draft01(
    srtt: Duration,
    packets_out: u32,
    wc_delayed_ack: Duration,
    rto_remaining: Option<Duration>,
) -> Duration {
    let two = srtt.saturating_mul(2);
    let t = if packets_out > 1 {
        two.max(Duration::from_millis(10))
    } else {
        let one_and_half = srtt.saturating_mul(3) / 2;
        two.max(one_and_half.saturating_add(wc_delayed_ack))
    };
    match rto_remaining {
        Some(r) => t.min(r),
        None => t,
    }
}

/// Which probe timeout TLP uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PtoFormula {
    /// RFC 8985 / Linux 4.13+ ([`pto`]).
    #[default]
    Rfc8985,
    /// The 2013 draft the tail-loss paper measured ([`pto_draft01`]).
    Draft01,
}

/// Per-connection TLP episode state (RFC 8985 §7.3–7.4).
#[derive(Clone, Debug, Default)]
pub struct Tlp {
    /// `TLP.end_seq`: snd_nxt when the probe went out; Some while an episode is open
    /// (at most one probe per flight).
    pub high_seq: Option<u64>,
    /// The probe retransmitted old data (only then can it reveal a repaired loss).
    pub is_retrans: bool,
    /// The probe timer fired; the next `poll_transmit` sends the probe.
    pub pending: bool,
}

/// What the ACK that ends a TLP episode says (RFC 8985 §7.4.2, with Linux's
/// `tcp_process_tlp_ack` rules).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TlpOutcome {
    /// The episode is still open.
    Open,
    /// The probe was not needed (new data probe, D-SACK, or duplicate ACK at high_seq).
    NoLoss,
    /// The probe repaired a loss: reduce cwnd as for a loss.
    Loss,
}

impl Tlp {
    pub fn on_probe_sent(&mut self, snd_nxt: u64, is_retrans: bool) {
        self.pending = false;
        self.high_seq = Some(snd_nxt);
        self.is_retrans = is_retrans;
    }

    /// Feed each ACK. `dsack_for_probe` = the ACK carries a D-SACK at or below high_seq.
    pub fn on_ack(&mut self, ack: u64, dsack_for_probe: bool, is_dupack: bool) -> TlpOutcome {
        let Some(high) = self.high_seq else {
            return TlpOutcome::Open;
        };
        if ack < high {
            return TlpOutcome::Open;
        }
        let outcome = if !self.is_retrans || dsack_for_probe {
            // New data probed, or both original and probe arrived.
            TlpOutcome::NoLoss
        } else if ack > high {
            // The ACK went past the probe: it repaired a loss.
            TlpOutcome::Loss
        } else if is_dupack {
            TlpOutcome::NoLoss
        } else {
            return TlpOutcome::Open;
        };
        self.high_seq = None;
        outcome
    }

    /// RTO or recovery ends any episode.
    pub fn reset(&mut self) {
        *self = Tlp::default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pto_is_twice_srtt_plus_delack_allowance_for_single_segment() {
        let srtt = Duration::from_millis(50);
        let wc = Duration::from_millis(200);
        assert_eq!(pto(srtt, 5, wc, None), Duration::from_millis(100));
        assert_eq!(pto(srtt, 1, wc, None), Duration::from_millis(300));
        assert_eq!(
            pto(srtt, 1, wc, Some(Duration::from_millis(250))),
            Duration::from_millis(250)
        );
    }

    #[test]
    fn pto_saturates_instead_of_overflowing() {
        let vals = [
            0u64,
            1,
            999_999_999,
            1_000_000_000,
            20_000_000,
            200_000_000,
            u64::MAX / 4,
            u64::MAX / 2 - 1,
            u64::MAX / 2,
            u64::MAX / 2 + 1,
            u64::MAX - 200_000_000,
            u64::MAX - 1,
            u64::MAX,
        ];
        for &srtt in &vals {
            for &wc in &vals {
                for packets_out in [0, 1, 2, 100] {
                    for rto in std::iter::once(None).chain(vals.iter().map(|&r| Some(r))) {
                        // The same formula in u128, clamped to the range at the end.
                        let mut want = 2 * u128::from(srtt);
                        if packets_out == 1 {
                            want += u128::from(wc);
                        }
                        let want = want
                            .min(rto.map_or(u128::MAX, u128::from))
                            .min(u128::from(u64::MAX)) as u64;
                        let d = pto(
                            Duration::from_nanos(srtt),
                            packets_out,
                            Duration::from_nanos(wc),
                            rto.map(Duration::from_nanos),
                        );
                        assert_eq!(
                            d,
                            Duration::from_nanos(want),
                            "srtt {srtt} wc {wc} packets {packets_out} rto {rto:?}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn retransmitted_probe_acked_beyond_high_seq_signals_loss() {
        let mut t = Tlp::default();
        t.on_probe_sent(1000, true);
        assert_eq!(t.on_ack(900, false, false), TlpOutcome::Open);
        // Linux `tcp_process_tlp_ack`: an ACK of exactly high_seq leaves it open.
        assert_eq!(t.on_ack(1000, false, false), TlpOutcome::Open);
        assert_eq!(t.on_ack(1500, false, false), TlpOutcome::Loss);
        assert_eq!(t.high_seq, None);
    }

    #[test]
    fn dsack_of_probe_means_no_loss() {
        let mut t = Tlp::default();
        t.on_probe_sent(1000, true);
        assert_eq!(t.on_ack(1000, true, true), TlpOutcome::NoLoss);
        let mut t = Tlp::default();
        t.on_probe_sent(1000, false);
        assert_eq!(t.on_ack(1000, false, false), TlpOutcome::NoLoss);
    }
}

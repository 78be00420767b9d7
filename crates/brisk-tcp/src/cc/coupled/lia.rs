//! LIA, the Linked Increases Algorithm (RFC 6356 §3–4), as the out-of-tree Linux
//! MPTCP `mptcp_coupled.c` ("coupled": `mptcp_recalc_alpha`, `mptcp_fc_cong_avoid`).
//!
//! RFC 6356 §3: for each ACK on subflow i that acknowledges `bytes_acked`,
//!
//! ```text
//! cwnd_i += min( alpha·bytes_acked·MSS_i / cwnd_total , bytes_acked·MSS_i / cwnd_i )
//! alpha   = cwnd_total · max_i(cwnd_i / rtt_i²) / (Σ_i cwnd_i / rtt_i)²
//! ```
//!
//! In segments this is one segment of growth per `w` segments ACKed, with
//! `w = max(cwnd_total/alpha, cwnd_i)`, and `cwnd_total/alpha` simplifies to
//! `(Σ_p cwnd_p·rtt_b/rtt_p)² / cwnd_b` where b is the subflow that maximises
//! cwnd/rtt² — the form Linux computes (`snd_cwnd = 1/alpha` scaled). [`window`]
//! returns that `w`; the caller feeds it to Reno's byte-counting additive increase
//! (`cong_avoid_ai`), so partial credit carries over in `cwnd_cnt` (RFC 6356 §4's
//! byte counting) and a stretch ACK counts every segment it covers.
//!
//! Departures: the quotient is rounded **up** (Linux truncates), so the increase is
//! never above the RFC's (goal 2, "do no harm", errs on the safe side); and `w` is
//! recomputed on every congestion-avoidance ACK from the members' published windows
//! (O(members) ≤ 9, no allocation) rather than cached until a window changes (the
//! optimisation RFC 6356 §4 describes; the result is the same when nothing changed).

use super::Member;

/// Fixed-point shift for the Σ cwnd·rtt_b/rtt term.
const SHIFT: u32 = 16;

/// The subflow that maximises cwnd/rtt² (RFC 6356's max_i term; Linux's
/// `best_cwnd`/`best_rtt`). The first such member wins a tie (equal values).
pub(super) fn best(members: &[Member]) -> usize {
    let mut b = 0;
    for (i, m) in members.iter().enumerate().skip(1) {
        let (mb, rb) = (&members[b], u128::from(members[b].srtt_us));
        let rm = u128::from(m.srtt_us);
        if u128::from(m.cwnd) * rb * rb > u128::from(mb.cwnd) * rm * rm {
            b = i;
        }
    }
    b
}

/// Segments ACKed per segment of growth for member `me`:
/// `max(ceil(cwnd_total/alpha), cwnd_me)`. Saturates (no growth) on overflow.
pub fn window(members: &[Member], me: usize) -> u32 {
    let own = members[me].cwnd.max(1);
    let b = best(members);
    let wb = u128::from(members[b].cwnd.max(1));
    let rb = u128::from(members[b].srtt_us);
    let mut s: u128 = 0;
    for m in members {
        let term = (u128::from(m.cwnd) << SHIFT).saturating_mul(rb) / u128::from(m.srtt_us);
        s = s.saturating_add(term);
    }
    let num = s.saturating_mul(s);
    let den = wb << (2 * SHIFT);
    let w = num.div_ceil(den);
    u32::try_from(w).unwrap_or(u32::MAX).max(own)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(cwnd: u32, rtt_ms: u64) -> Member {
        Member {
            cwnd,
            srtt_us: rtt_ms * 1000,
            ..Default::default()
        }
    }

    /// alpha by RFC 6356's formula in floating point, for the check below.
    fn alpha(ms: &[Member]) -> f64 {
        let total: f64 = ms.iter().map(|m| f64::from(m.cwnd)).sum();
        let max = ms
            .iter()
            .map(|m| f64::from(m.cwnd) / (m.srtt_us as f64).powi(2))
            .fold(0.0, f64::max);
        let sum: f64 = ms
            .iter()
            .map(|m| f64::from(m.cwnd) / m.srtt_us as f64)
            .sum();
        total * max / (sum * sum)
    }

    #[test]
    fn window_is_the_rfc_6356_quotient_rounded_up() {
        for ms in [
            vec![m(10, 10), m(10, 10)],
            vec![m(40, 20), m(10, 80)],
            vec![m(7, 30), m(90, 30), m(33, 100)],
            vec![m(1, 5), m(500, 400)],
        ] {
            let total: f64 = ms.iter().map(|m| f64::from(m.cwnd)).sum();
            let q = total / alpha(&ms);
            for i in 0..ms.len() {
                let want = (q - 1e-9).ceil().max(f64::from(ms[i].cwnd)) as u32;
                assert_eq!(window(&ms, i), want, "{ms:?} member {i}");
            }
        }
    }

    #[test]
    fn equal_paths_grow_the_total_like_one_flow() {
        // Two equal subflows of 10: cwnd_total/alpha = 20²/10 = 40, so each grows by
        // one segment per 40 ACKed; together 20 ACKs per RTT each → +0.5 +0.5 = +1
        // segment per RTT for the connection, as one TCP (RFC 6356 §3's design goal).
        let ms = [m(10, 10), m(10, 10)];
        assert_eq!(window(&ms, 0), 40);
        // A single member: cwnd_total/alpha = cwnd, plain Reno.
        assert_eq!(window(&[m(17, 33)], 0), 17);
    }

    #[test]
    fn the_increase_is_capped_by_the_subflows_own_reno_increase() {
        // A slow path with a large window beside a fast small one: b is the fast path
        // (10/10² > 100/100²), cwnd_total/alpha = (10 + 100·10/100)²/10 = 40, below the
        // slow path's own cwnd of 100, so min(..) keeps it at Reno's 1/cwnd_i.
        let ms = [m(10, 10), m(100, 100)];
        assert_eq!(window(&ms, 0), 40);
        assert_eq!(window(&ms, 1), 100);
    }
}

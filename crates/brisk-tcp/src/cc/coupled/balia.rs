//! BALIA, the Balanced Linked Adaptation algorithm (Peng, Walid, Hwang, Low,
//! "Multipath TCP: Analysis, Design, and Implementation", IEEE/ACM ToN 2016, §VI;
//! draft-walid-mptcp-congestion-control-04 §3), as the out-of-tree Linux
//! `mptcp_balia.c` (`mptcp_balia_recalc_ai`, `mptcp_balia_cong_avoid`,
//! `mptcp_balia_ssthresh`).
//!
//! With x_p = w_p / rtt_p and α_r = max_p x_p / x_r, for each ACK on path r:
//!
//! ```text
//! w_r += x_r / (rtt_r · (Σ_p x_p)²) · (1 + α_r)/2 · (4 + α_r)/5
//!      = (x_r + x_max)(4·x_r + x_max) / (10 · w_r · (Σ_p x_p)²)
//! ```
//!
//! and on a loss w_r −= (w_r / 2) · min(α_r, 1.5). The second form is Linux's `ai`:
//! one segment of growth per `ai` segments ACKed ([`window`]), fed to Reno's
//! byte-counting increase.
//!
//! Departures from Linux: α_r is kept as the exact ratio in the decrease (Linux uses
//! the integer quotient `max_rate / rate`, so a path at 1.9× the slowest path's rate
//! backs off as if α were 1); `ai` is rounded up, not down; and the window floor on a
//! loss is brisk's two segments (Linux: one). Rates are kept in segments per µs
//! scaled by 2³², so Linux's rescaling loop against overflow is not needed.

use super::Member;

fn rate(m: &Member) -> u128 {
    (u128::from(m.cwnd) << 32) / u128::from(m.srtt_us)
}

/// Segments ACKed per segment of growth for member `me` (Linux's `ai`), rounded up.
pub fn window(members: &[Member], me: usize) -> u32 {
    let xr = rate(&members[me]).max(1);
    let mut sum: u128 = 0;
    let mut max: u128 = 0;
    for m in members {
        let x = rate(m);
        sum = sum.saturating_add(x);
        max = max.max(x);
    }
    let wr = u128::from(members[me].cwnd.max(1));
    // (Σx)²·10·w_r / ((x_r + x_max)(4x_r + x_max)), divided in two steps as Linux
    // does so that the intermediate stays in range.
    let a = sum.saturating_mul(sum).saturating_mul(10) / (xr + max);
    let ai = a.saturating_mul(wr).div_ceil(4 * xr + max);
    u32::try_from(ai).unwrap_or(u32::MAX).max(1)
}

/// The new ssthresh on a loss: w_r − (w_r/2)·min(α_r, 1.5), at least 2.
pub fn ssthresh(members: &[Member], me: usize) -> u32 {
    let xr = rate(&members[me]).max(1);
    let max = members.iter().map(rate).max().unwrap_or(xr);
    let w = u128::from(members[me].cwnd);
    // md = w·min(x_max, 1.5·x_r) / (2·x_r) = w·min(2·x_max, 3·x_r) / (4·x_r).
    let md = w * (2 * max).min(3 * xr) / (4 * xr);
    (w.saturating_sub(md) as u32).max(2)
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

    #[test]
    fn equal_paths_take_the_papers_increase() {
        // Two equal paths: α = 1, x_r = x_max, Σx = 2x: ai = 4x²·10·w/(2x·5x) = 4w.
        let ms = [m(20, 40), m(20, 40)];
        assert_eq!(window(&ms, 0), 80);
        // One path: α = 1: ai = 10·w·x²/(2x·5x) = w, Reno.
        assert_eq!(window(&[m(33, 40)], 0), 33);
    }

    #[test]
    fn the_slower_path_backs_off_more_up_to_three_quarters() {
        // Path 1 sends at a quarter of path 0's rate: α_1 = 4, capped at 1.5:
        // md = 40/2·1.5 = 30 → ssthresh 10. Path 0: α = 1 → half.
        let ms = [m(40, 10), m(40, 40)];
        assert_eq!(ssthresh(&ms, 0), 20);
        assert_eq!(ssthresh(&ms, 1), 10);
        // α = 1.25 (exact, not Linux's integer 1): md = 40/2·1.25 = 25.
        let ms = [m(50, 40), m(40, 40)];
        assert_eq!(ssthresh(&ms, 1), 15);
    }

    #[test]
    fn ai_matches_the_formula() {
        let ms = [m(30, 20), m(12, 70), m(50, 45)];
        for i in 0..3 {
            let x: Vec<f64> = ms
                .iter()
                .map(|m| f64::from(m.cwnd) / m.srtt_us as f64)
                .collect();
            let sum: f64 = x.iter().sum();
            let max = x.iter().cloned().fold(0.0, f64::max);
            let ai = sum * sum * 10.0 * f64::from(ms[i].cwnd) / ((x[i] + max) * (4.0 * x[i] + max));
            let got = window(&ms, i);
            assert!(
                (f64::from(got) - ai.ceil()).abs() <= 1.0,
                "{i}: {got} vs {ai}"
            );
        }
    }
}

//! Delay correlation's design claims (thesis §3.2, §3.4, §5.1): DC-7's dither, FIFO fit
//! and running sums, and DC-8's per-socket state size. The unit tests in
//! `cc/delay_corr/tests.rs` and `brisk repro design` run these same functions.

use super::{cases, Cases};
use crate::cc::delay_corr::{DelayCorrConfig, Observation, ObservationWindow, Sums, MAX_VALUE};
use rand::Rng;

/// Algorithm 3 and the thesis' worked example: est 8 → 10 / 18, est 176 → 178 / 187.
pub fn dither_matches_the_thesis_worked_example() {
    let cfg = DelayCorrConfig::default();
    // "a BDP of roughly 8 TCP packets, producing low and high rate estimates of 10 and 18"
    assert_eq!(cfg.dither(8, 0, 32), 10);
    assert_eq!(cfg.dither(8, 16, 32), 18);
    // Large BDPs: 6.25 % once est >> 4 exceeds 10.
    assert_eq!(cfg.dither(176, 0, 32), 178);
    assert_eq!(cfg.dither(176, 31, 32), 187);
    assert_eq!(cfg.dither(175, 31, 32), 185);
}

/// A window of points on rtt = base + (x − BDP)·τ.
pub fn fifo_window(
    w: usize,
    bdp: u32,
    base_us: u32,
    tau_us: u32,
    xs: impl Fn(usize) -> u32,
) -> ObservationWindow {
    let mut win = ObservationWindow::new(w);
    for i in 0..w {
        let x = xs(i);
        win.push(x, base_us + (x - bdp) * tau_us);
    }
    win
}

/// The FIFO model's points give r = 1 and the least-squares estimate = BDP exactly.
pub fn fifo_line_gives_r_of_one_and_the_bdp_exactly() {
    for (bdp, tau) in [(8u32, 6_000u32), (20, 1_000), (176, 57), (1000, 12)] {
        let win = fifo_window(32, bdp, 50_000, tau, |i| bdp + 1 + (i as u32 * 7) % 40);
        let m = win.moments();
        assert!((m.r() - 1.0).abs() < 1e-12, "r = {}", m.r());
        assert_eq!(m.x_at(50_000), Some(i128::from(bdp)));
    }
}

/// One case of the running-sums property (Algorithm 1): after every push the running
/// sums equal a recomputation, and the window holds exactly the last min(n, W)
/// observations, saturated at `MAX_VALUE`.
pub fn running_sums_case(w: usize, obs: &[(u32, u32)]) -> Result<(), String> {
    let mut win = ObservationWindow::new(w);
    for (i, &(x, y)) in obs.iter().enumerate() {
        win.push(x, y);
        if win.sums() != win.recompute() {
            return Err(format!(
                "W {w}: sums differ from recomputation after push {i}"
            ));
        }
    }
    if win.len() != obs.len().min(w) {
        return Err(format!(
            "W {w}: holds {} of {} observations",
            win.len(),
            obs.len()
        ));
    }
    let mut want: Vec<_> = obs
        .iter()
        .rev()
        .take(w)
        .map(|&(x, y)| (x.min(MAX_VALUE), y.min(MAX_VALUE)))
        .collect();
    let mut got: Vec<_> = win
        .observations()
        .iter()
        .map(|o| (o.rate, o.rtt_us))
        .collect();
    want.sort_unstable();
    got.sort_unstable();
    if got != want {
        return Err(format!(
            "W {w}: the window does not hold the last observations"
        ));
    }
    Ok(())
}

/// DC-8: 8 W + 40 bytes per socket (296 B at W = 32, 1064 B at W = 128).
pub fn per_socket_state_is_8w_plus_40_bytes() {
    assert_eq!(
        std::mem::size_of::<Observation>(),
        8,
        "two 32-bit values per slot"
    );
    assert_eq!(std::mem::size_of::<Sums>(), 40, "five 64-bit sums");
    assert_eq!(ObservationWindow::new(32).state_bytes(), 296);
    assert_eq!(ObservationWindow::new(128).state_bytes(), 1064);
}

/// DC-7: the worked example, the FIFO fit, and `n` seeded cases of the running-sums
/// property (the proptest's input ranges). Panics on a failure.
pub fn dc7(n: usize) -> String {
    dither_matches_the_thesis_worked_example();
    fifo_line_gives_r_of_one_and_the_bdp_exactly();
    let mut c = Cases::new(0xdc07);
    cases(n, |i| {
        let w = c.rng.gen_range(2usize..200);
        let len = c.rng.gen_range(0usize..700);
        let obs: Vec<(u32, u32)> = (0..len).map(|_| (c.rng.gen(), c.rng.gen())).collect();
        running_sums_case(w, &obs).map_err(|e| format!("case {i}: {e}"))
    });
    format!(
        "dither: est 8 → 10/18, est 176 → 178/187; FIFO line: r = 1, estimate = BDP at 4 BDPs; running sums = recomputation in {n} seeded cases"
    )
}

/// DC-8. Panics on a failure.
pub fn dc8() -> String {
    per_socket_state_is_8w_plus_40_bytes();
    format!(
        "{} B at W = 32, {} B at W = 128 (8 W + 40)",
        ObservationWindow::new(32).state_bytes(),
        ObservationWindow::new(128).state_bytes()
    )
}

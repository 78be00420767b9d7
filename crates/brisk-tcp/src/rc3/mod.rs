//! RC3, Recursively Cautious Congestion Control (Mittal, Sherry, Ratnasamy, Shenker,
//! NSDI 2014; seed 001; spec `rc3.md` §1): the parts that are pure arithmetic, which the
//! sender's RLP loop and the experiments share.
//!
//! - [`Rc3Levels::priority`]: which priority (DSCP) the recursive-low-priority loop
//!   gives a segment, counted from the tail of its chunk (paper §2.1 and the Linux
//!   patch's §4.1.1 rule; spec ambiguity A1).
//! - [`model`]: the paper's §3 performance model, whose shape is claim RC3-2 (W-6).
//! - [`rlp::Rlp`]: the sender's recursive-low-priority loop state (which tail copies
//!   go next, what the RLP has sent, what SACKs showed delivered beyond the primary
//!   loop). The connection's glue is `conn/rc3_send.rs` and the receiver side is in
//!   `conn/state.rs` (`process_data`).
//!
//! Configuration: [`Rc3Config`] in `Config::transmit.rc3`. As a sender it runs the
//! RLP; as a receiver it ACKs low-priority data at the data's priority (§4.1.2). An
//! unmodified receiver is a connection with RC3 off.

pub mod rlp;

/// RC3 on a connection (`Config::transmit.rc3`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Rc3Config {
    /// Priority levels of the RLP (default 40 / 400 / 4000, the paper's design rule).
    pub levels: Rc3Levels,
}

/// How level boundaries are counted (spec A1).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum LevelRule {
    /// The paper's design (§2.1): level k *holds* `levels[k-1]` segments, so with
    /// (40, 400, 4000) the cumulative bounds are 40, 440, 4440.
    #[default]
    Design,
    /// The Linux patch (§4.1.1): the offset from the tail is compared with the level
    /// sizes themselves as cumulative thresholds, `(tail_seq − seq)/MSS ≤ 40 → 1`,
    /// `≤ 400 → 2`, ...: levels of 40, 360, 3600. The offset counts the last segment as
    /// 1 (tail_seq is one past the last byte).
    LinuxCumulative,
}

/// Most low-priority levels: Linux's prio qdisc has 16 bands, one of them priority 0.
pub const MAX_LEVELS: usize = 15;

/// The RLP's levels: segments per level, nearest the tail first (paper default 40, 400,
/// 4000), and how they are counted. The last level absorbs whatever lies beyond the
/// others (spec A2).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rc3Levels {
    sizes: Vec<u64>,
    rule: LevelRule,
}

impl Default for Rc3Levels {
    fn default() -> Self {
        Rc3Levels {
            sizes: vec![40, 400, 4000],
            rule: LevelRule::Design,
        }
    }
}

/// Why a level configuration is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Rc3LevelsError {
    /// No level, or more than [`MAX_LEVELS`].
    Count(usize),
    /// A level of zero segments, or (Linux rule) thresholds that do not grow.
    Size(usize),
}

impl std::fmt::Display for Rc3LevelsError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Rc3LevelsError::Count(n) => write!(
                f,
                "{n} levels: must be between 1 and {MAX_LEVELS} (Linux's prio qdisc has 16 bands)"
            ),
            Rc3LevelsError::Size(i) => write!(
                f,
                "level {} must hold at least one segment (and, with the Linux rule, exceed the level before it)",
                i + 1
            ),
        }
    }
}

impl std::error::Error for Rc3LevelsError {}

impl Rc3Levels {
    pub fn new(sizes: Vec<u64>, rule: LevelRule) -> Result<Self, Rc3LevelsError> {
        if sizes.is_empty() || sizes.len() > MAX_LEVELS {
            return Err(Rc3LevelsError::Count(sizes.len()));
        }
        for (i, &s) in sizes.iter().enumerate() {
            let grows = i == 0 || rule == LevelRule::Design || s > sizes[i - 1];
            if s == 0 || !grows {
                return Err(Rc3LevelsError::Size(i));
            }
        }
        Ok(Rc3Levels { sizes, rule })
    }

    /// Low-priority levels (priorities 1..=levels).
    pub fn levels(&self) -> u8 {
        self.sizes.len() as u8
    }

    /// The priority (1 = just below normal) of the segment `d` places from the tail of
    /// its chunk (`d = 0`: the last segment).
    pub fn priority(&self, d: u64) -> u8 {
        let mut bound = 0u64;
        for (k, &n) in self.sizes.iter().enumerate() {
            let hit = match self.rule {
                LevelRule::Design => {
                    bound = bound.saturating_add(n);
                    d < bound
                }
                // The offset counts the last segment as 1: d + 1 ≤ n.
                LevelRule::LinuxCumulative => d < n,
            };
            if hit {
                return k as u8 + 1;
            }
        }
        self.levels()
    }
}

/// The paper's §3 model of flow completion time, as the spec parametrises it (§1.11):
/// FCT_TCP = RTT·(1 + max(0, log2(min(N, W)/i))) + N/A and FCT_RC3 = RTT + N/A, with A
/// the available capacity and W = A·RTT in segments. The paper gives the shape, not
/// the curve (zero gain up to the initial window, a peak near A·RTT, then decay); the
/// log base and the handshake RTT are the spec's choices (A12).
pub mod model {
    /// A path and a flow for the model.
    #[derive(Clone, Copy, Debug)]
    pub struct Path {
        /// Bottleneck capacity, bit/s.
        pub bw_bps: f64,
        /// Its utilisation by other traffic, 0 to 1.
        pub load: f64,
        pub rtt_s: f64,
        /// Initial window, segments.
        pub iw: f64,
        /// Segment size, bytes.
        pub mss: f64,
    }

    impl Path {
        /// Available capacity A, bit/s.
        pub fn available_bps(&self) -> f64 {
            (1.0 - self.load) * self.bw_bps
        }
        /// A·RTT in segments (the window that fills what is available).
        pub fn window_segments(&self) -> f64 {
            self.available_bps() * self.rtt_s / 8.0 / self.mss
        }
        fn transfer_s(&self, n: f64) -> f64 {
            n * self.mss * 8.0 / self.available_bps()
        }
        /// TCP's FCT for `n` segments: slow start's rounds plus the transfer.
        pub fn fct_tcp(&self, n: f64) -> f64 {
            let rounds = (n.min(self.window_segments()) / self.iw).log2().max(0.0);
            self.rtt_s * (1.0 + rounds) + self.transfer_s(n)
        }
        /// RC3's FCT: one round plus the transfer at the available rate.
        pub fn fct_rc3(&self, n: f64) -> f64 {
            self.rtt_s + self.transfer_s(n)
        }
        /// (FCT_TCP − FCT_RC3) / FCT_TCP.
        pub fn gain(&self, n: f64) -> f64 {
            let t = self.fct_tcp(n);
            (t - self.fct_rc3(n)) / t
        }
    }
}

#[cfg(test)]
mod tests {
    use super::model::Path;
    use super::*;

    #[test]
    fn design_rule_levels_hold_40_400_4000_and_the_last_absorbs_the_rest() {
        let l = Rc3Levels::default();
        let p: Vec<u8> = [0, 39, 40, 439, 440, 4439, 4440, 1_000_000]
            .iter()
            .map(|&d| l.priority(d))
            .collect();
        assert_eq!(p, [1, 1, 2, 2, 3, 3, 3, 3]);
        // The closed form p(d) = ⌊log10(9d/40 + 1)⌋ + 1 within the three levels.
        for d in 0..4440u64 {
            let closed = ((9.0 * d as f64 / 40.0 + 1.0).log10().floor() as u8) + 1;
            assert_eq!(l.priority(d), closed, "d = {d}");
        }
    }

    #[test]
    fn the_66_packet_example_gives_40_at_priority_1_and_22_at_priority_2() {
        // Paper §2.2: IW 4 sends 1-4; the RLP covers 66...5 from the tail (W-1).
        let l = Rc3Levels::default();
        let mut count = [0u32; 4];
        for pkt in 5..=66u64 {
            count[l.priority(66 - pkt) as usize] += 1;
        }
        assert_eq!(count, [0, 40, 22, 0]);
        assert_eq!(l.priority(66 - 27), 1);
        assert_eq!(l.priority(66 - 26), 2);
    }

    #[test]
    fn linux_rule_gives_40_360_3600() {
        let l = Rc3Levels::new(vec![40, 400, 4000], LevelRule::LinuxCumulative).unwrap();
        let per_level = |k: u8| (0..10_000u64).filter(|&d| l.priority(d) == k).count();
        assert_eq!(per_level(1), 40);
        assert_eq!(per_level(2), 360);
        assert_eq!(per_level(3), 10_000 - 400);
        assert_eq!(
            Rc3Levels::new(vec![40, 40], LevelRule::LinuxCumulative),
            Err(Rc3LevelsError::Size(1))
        );
        assert_eq!(
            Rc3Levels::new(vec![], LevelRule::Design),
            Err(Rc3LevelsError::Count(0))
        );
        assert!(Rc3Levels::new(vec![1; 16], LevelRule::Design).is_err());
    }

    /// W-6 (RC3-2): the spec's parametrisation, 1 Gbit/s at 30 % load, RTT 40 ms, IW 4,
    /// MSS 1460: W ≈ 2397 segments; gains 57 / 77 / 85 / 82 / 64 % at N = 10 / 40 / 440
    /// / 2397 / 10000, zero up to the initial window, the peak near A·RTT.
    #[test]
    fn model_shape_matches_w6() {
        let p = Path {
            bw_bps: 1e9,
            load: 0.3,
            rtt_s: 0.040,
            iw: 4.0,
            mss: 1460.0,
        };
        assert!((p.window_segments() - 2397.3).abs() < 1.0);
        for (n, pct) in [
            (10.0, 57.0),
            (40.0, 77.0),
            (440.0, 85.0),
            (2397.0, 82.0),
            (10_000.0, 64.0),
        ] {
            let g = p.gain(n) * 100.0;
            assert!((g - pct).abs() < 1.0, "N = {n}: {g:.1} % against {pct} %");
        }
        for n in [1.0, 2.0, 4.0] {
            assert!(p.gain(n).abs() < 1e-12, "no gain at N = {n} ≤ IW");
        }
        // Rising to a peak below A·RTT... then falling.
        let sizes: Vec<f64> = (1..=200).map(|k| (k * 100) as f64).collect();
        let best = sizes
            .iter()
            .copied()
            .max_by(|a, b| p.gain(*a).total_cmp(&p.gain(*b)))
            .unwrap();
        assert!(best > 100.0 && best < p.window_segments(), "peak at {best}");
        assert!(p.gain(20_000.0) < p.gain(best));
    }
}

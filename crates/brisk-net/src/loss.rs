//! Random and scripted loss, decided per packet on arrival at a link (before its queue).
//!
//! - Bernoulli: independent drops with probability `p`.
//! - Gilbert-Elliott (Gilbert 1960; Elliott 1963): a two-state Markov chain, Good and
//!   Bad, each with its own drop probability. Per packet the chain first moves (Good to
//!   Bad with `p_gb`, Bad to Good with `p_bg`), then the packet is dropped with the new
//!   state's probability, as Linux netem's `gemodel` does. Mean Bad sojourn is `1/p_bg`
//!   packets, which is what makes losses bursty.
//! - List: drop exactly the packets with these 0-based indices among those offered.
//! - DataList: the same, counting only packets that carry TCP payload. A host may or
//!   may not send the handshake's ACK on its own (Linux folds it into the first data
//!   segment when a write is pending, `tcp_rcv_synsent_state_process`), so over real
//!   packets "the 10th data segment" is a stable position and "the 12th packet" is not.
//!
//! Each model owns its ChaCha stream, so adding another element or flow elsewhere never
//! shifts this one's drops.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::error::{check_prob, NetError};

/// ChaCha stream number for loss decisions, apart from the impairment streams.
pub(crate) const LOSS_STREAM: u64 = 1;

#[derive(Clone, Debug, PartialEq)]
pub enum LossModel {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
    },
    /// 0-based indices of the packets to drop; order and duplicates do not matter.
    List(Vec<u64>),
    /// 0-based indices among the packets with TCP payload; other packets pass and are
    /// not counted.
    DataList(Vec<u64>),
}

#[derive(Clone, Debug)]
enum State {
    None,
    Bernoulli {
        p: f64,
    },
    GilbertElliott {
        p_gb: f64,
        p_bg: f64,
        loss_good: f64,
        loss_bad: f64,
        bad: bool,
    },
    /// Sorted, deduplicated; `next` is the first entry not yet reached.
    List {
        drop: Vec<u64>,
        next: usize,
        data_only: bool,
    },
}

impl State {
    fn list(mut drop: Vec<u64>, data_only: bool) -> Self {
        drop.sort_unstable();
        drop.dedup();
        State::List {
            drop,
            next: 0,
            data_only,
        }
    }
}

/// A loss model with its state and random stream.
#[derive(Clone, Debug)]
pub struct Loss {
    state: State,
    rng: ChaCha8Rng,
    /// Packets offered so far (the index of the next one).
    offered: u64,
}

impl Loss {
    pub fn new(model: LossModel, seed: u64) -> Result<Self, NetError> {
        let state = match model {
            LossModel::None => State::None,
            LossModel::Bernoulli { p } => State::Bernoulli {
                p: check_prob("loss.p", p)?,
            },
            LossModel::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
            } => State::GilbertElliott {
                p_gb: check_prob("loss.p_gb", p_gb)?,
                p_bg: check_prob("loss.p_bg", p_bg)?,
                loss_good: check_prob("loss.loss_good", loss_good)?,
                loss_bad: check_prob("loss.loss_bad", loss_bad)?,
                bad: false,
            },
            LossModel::List(drop) => State::list(drop, false),
            LossModel::DataList(drop) => State::list(drop, true),
        };
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(LOSS_STREAM);
        Ok(Loss {
            state,
            rng,
            offered: 0,
        })
    }

    /// No loss at all.
    pub fn none() -> Self {
        Loss {
            state: State::None,
            rng: ChaCha8Rng::seed_from_u64(0),
            offered: 0,
        }
    }

    /// Whether this is no loss model at all (no packet is ever dropped).
    pub fn is_none(&self) -> bool {
        matches!(self.state, State::None)
    }

    /// Decides the fate of the packet `data` (a whole IP packet): `true` means drop it.
    /// Inline for the common case, a link with no loss model (every packet of every
    /// simulated link asks, from another crate): the offer is counted as
    /// `should_drop` counts it, and nothing else happens.
    #[inline]
    pub fn should_drop_packet(&mut self, data: &[u8]) -> bool {
        if let State::None = self.state {
            self.offered = self.offered.saturating_add(1);
            return false;
        }
        self.should_drop_packet_modelled(data)
    }

    #[inline(never)]
    fn should_drop_packet_modelled(&mut self, data: &[u8]) -> bool {
        if let State::List {
            data_only: true, ..
        } = self.state
        {
            // Only payload-carrying TCP packets count; the rest pass untouched.
            if brisk_wire::peek::tcp_payload_len(data).unwrap_or(0) == 0 {
                return false;
            }
        }
        self.should_drop()
    }

    /// Decides the fate of the next packet offered: `true` means drop it.
    pub fn should_drop(&mut self) -> bool {
        let index = self.offered;
        self.offered = self.offered.saturating_add(1);
        match &mut self.state {
            State::None => false,
            State::Bernoulli { p } => chance(&mut self.rng, *p),
            State::GilbertElliott {
                p_gb,
                p_bg,
                loss_good,
                loss_bad,
                bad,
            } => {
                let flip = if *bad { *p_bg } else { *p_gb };
                if chance(&mut self.rng, flip) {
                    *bad = !*bad;
                }
                chance(&mut self.rng, if *bad { *loss_bad } else { *loss_good })
            }
            State::List { drop, next, .. } => {
                // Indices only grow, so a cursor replaces a search.
                if drop.get(*next) == Some(&index) {
                    *next += 1;
                    true
                } else {
                    false
                }
            }
        }
    }

    /// Packets offered so far.
    pub fn offered(&self) -> u64 {
        self.offered
    }
}

/// True with probability `p` in `[0, 1]`; draws nothing for the certain cases, so
/// `p = 0` and `p = 1` are exact.
pub(crate) fn chance(rng: &mut ChaCha8Rng, p: f64) -> bool {
    if p <= 0.0 {
        false
    } else if p >= 1.0 {
        true
    } else {
        rng.gen::<f64>() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(model: LossModel, seed: u64, n: usize) -> Vec<bool> {
        let mut l = Loss::new(model, seed).unwrap();
        (0..n).map(|_| l.should_drop()).collect()
    }

    /// Mean length of runs of consecutive drops.
    fn mean_burst(drops: &[bool]) -> f64 {
        let (mut runs, mut lost, mut prev) = (0u32, 0u32, false);
        for &d in drops {
            if d {
                lost += 1;
                if !prev {
                    runs += 1;
                }
            }
            prev = d;
        }
        f64::from(lost) / f64::from(runs.max(1))
    }

    #[test]
    fn none_never_drops() {
        assert!(run(LossModel::None, 1, 10_000).iter().all(|d| !d));
    }

    #[test]
    fn bernoulli_rate_is_within_tolerance_over_100k_packets() {
        let n = 100_000;
        let drops = run(LossModel::Bernoulli { p: 0.01 }, 42, n);
        let rate = drops.iter().filter(|d| **d).count() as f64 / n as f64;
        // 5 standard deviations: sqrt(p(1-p)/n) = 3.1e-4.
        assert!((rate - 0.01).abs() < 0.0016, "rate {rate}");
    }

    #[test]
    fn bernoulli_extremes_are_exact() {
        assert!(run(LossModel::Bernoulli { p: 0.0 }, 3, 1000)
            .iter()
            .all(|d| !d));
        assert!(run(LossModel::Bernoulli { p: 1.0 }, 3, 1000)
            .iter()
            .all(|d| *d));
    }

    #[test]
    fn gilbert_elliott_losses_come_in_bursts() {
        let n = 200_000;
        let ge = LossModel::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.25,
            loss_good: 0.0,
            loss_bad: 1.0,
        };
        let drops = run(ge, 7, n);
        let rate = drops.iter().filter(|d| **d).count() as f64 / n as f64;
        // Stationary Bad share p_gb / (p_gb + p_bg) = 1/26.
        assert!((rate - 1.0 / 26.0).abs() < 0.006, "rate {rate}");
        let ge_burst = mean_burst(&drops);
        assert!(
            (ge_burst - 4.0).abs() < 0.4,
            "mean burst 1/p_bg = 4, got {ge_burst}"
        );
        let iid = run(LossModel::Bernoulli { p: rate }, 7, n);
        assert!(
            mean_burst(&iid) < 1.1,
            "Bernoulli at the same rate is not bursty"
        );
    }

    /// A minimal IPv4/TCP packet with `payload` bytes of data (20-byte headers).
    fn tcp(payload: usize) -> Vec<u8> {
        let mut p = vec![0u8; 40 + payload];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&((40 + payload) as u16).to_be_bytes());
        p[9] = 6;
        p[32] = 5 << 4;
        p
    }

    #[test]
    fn data_list_counts_only_packets_with_tcp_payload() {
        let mut l = Loss::new(LossModel::DataList(vec![1, 3]), 0).unwrap();
        // SYN, pure ACK, data 0, pure ACK, data 1, data 2, non-TCP, data 3, data 4.
        let pkts = [0, 0, 100, 0, 100, 1, usize::MAX, 1448, 1];
        let dropped: Vec<usize> = (0..pkts.len())
            .filter(|&i| {
                let mut p = if pkts[i] == usize::MAX {
                    tcp(10)
                } else {
                    tcp(pkts[i])
                };
                if pkts[i] == usize::MAX {
                    p[9] = 17;
                }
                l.should_drop_packet(&p)
            })
            .collect();
        // Data segments 1 and 3 are packets 4 and 7; pure ACKs and UDP never count.
        assert_eq!(dropped, vec![4, 7]);
        // The plain list counts every packet.
        let mut all = Loss::new(LossModel::List(vec![1, 3]), 0).unwrap();
        let d: Vec<usize> = (0..pkts.len())
            .filter(|&i| all.should_drop_packet(&tcp(pkts[i].min(100))))
            .collect();
        assert_eq!(d, vec![1, 3]);
    }

    #[test]
    fn list_drops_exactly_the_listed_indices() {
        let drops = run(LossModel::List(vec![17, 3, 3, 0, 1000]), 0, 100);
        let dropped: Vec<usize> = (0..100).filter(|&i| drops[i]).collect();
        assert_eq!(dropped, vec![0, 3, 17]);
    }

    #[test]
    fn same_seed_same_drops_and_different_seed_different_drops() {
        let m = LossModel::Bernoulli { p: 0.3 };
        assert_eq!(run(m.clone(), 9, 1000), run(m.clone(), 9, 1000));
        assert_ne!(run(m.clone(), 9, 1000), run(m, 10, 1000));
    }

    #[test]
    fn bad_probabilities_are_rejected_by_field() {
        for (m, field) in [
            (LossModel::Bernoulli { p: 1.5 }, "loss.p"),
            (LossModel::Bernoulli { p: f64::NAN }, "loss.p"),
            (
                LossModel::GilbertElliott {
                    p_gb: 0.1,
                    p_bg: -0.1,
                    loss_good: 0.0,
                    loss_bad: 1.0,
                },
                "loss.p_bg",
            ),
        ] {
            let e = Loss::new(m, 0).unwrap_err();
            assert!(
                matches!(e, NetError::Invalid { field: f, .. } if f == field),
                "{e}"
            );
        }
    }
}

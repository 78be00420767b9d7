//! The design claims of the ledger that unit and property tests check (the ledger's
//! `design` rows), as functions that panic on a failure and return what they checked.
//! The crate's unit tests call the same functions, and `brisk repro design` runs them
//! to give those rows a verdict, so a row's verdict comes from running the check.
//!
//! Property checks run a fixed number of cases drawn from a seeded ChaCha8 generator
//! over the proptest's input ranges, so the report's verdict is reproducible.

pub mod delay_corr;
pub mod rc3;
pub mod rdb;
pub mod restart;

pub use crate::cc::new_cwv::checks::{cwv1, cwv2, cwv3};
pub use crate::conn::recv::unordered::checks::ut4;
pub use delay_corr::{dc7, dc8};

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The seeded generator of a property check's cases.
pub struct Cases {
    pub rng: ChaCha8Rng,
}

impl Cases {
    pub fn new(seed: u64) -> Self {
        Cases {
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }
}

/// Runs `n` cases; panics with the first failing case's message.
pub fn cases(n: usize, mut case: impl FnMut(usize) -> Result<(), String>) {
    for i in 0..n {
        if let Err(e) = case(i) {
            panic!("{e}");
        }
    }
}

/// RDB-7: the paper's Fig. 1 trace, the packet count with and without bundling, the
/// per-MSS caps, and one CWR per window. Panics on a failure.
pub fn rdb7() -> String {
    rdb::fig1_trace_is_reproduced_exactly();
    rdb::bundling_sends_the_same_packets_bigger();
    rdb::the_paper_caps_hold_for_120_and_400_byte_writes();
    rdb::bundles_whole_segments_back_to_the_first_that_does_not_fit();
    rdb::the_fin_segment_carries_no_bundle();
    rdb::hidden_losses_reduce_the_window_once_per_window();
    "Fig. 1 trace exact; same packet count with and without RDB; ≤ 12 × 120 B and ≤ 3 × 400 B per MSS; one CWR per window".into()
}

/// RDB-8: the thin-stream thresholds. Panics on a failure.
pub fn rdb8() -> String {
    rdb::thin_thresholds_are_exact();
    "DPIFL10 at RTT 150 ms: thin at PIF 14, not at 15; SPIFL3: thin at 2, not at 3".into()
}

/// TLP-7: RTO-restart and TLP-restart timer rules on the tail-loss case. Panics on a
/// failure.
pub fn tlp7() -> String {
    let rtor = restart::rto_restart_retransmits_one_rtt_earlier_in_a_two_segment_tail();
    restart::rto_restart_stays_off_with_rrthresh_segments_outstanding();
    let tlpr = restart::tlp_restart_probes_one_rtt_earlier();
    format!("{rtor}; RTOR off with 5 outstanding; {tlpr}")
}

/// RC3-18: the paper's worked example (W-1), exactly. Panics on a failure.
pub fn rc3_18() -> String {
    rc3::rc3_worked_example_finishes_in_4_rtts_against_5();
    rc3::rc3_works_against_an_unmodified_receiver();
    "W-1: RLP 66…27 at p1 and 26…5 at p2 exactly, cwnd 4 → 8 → 16 with no loss response, done in 4 RTTs against TCP's 5; round 3 resends 13–19 beside 21 and 22 (ACK order, docs/mechanisms/rc3.md W-1)".into()
}

//! The fault campaign's scenarios (`common::fault`: random paths, loss models,
//! duplication, reordering, corruption, outages, apps and TCP settings) with the
//! flow's controller replaced by Copa (`cc = "copa"`), which the plain campaign
//! (CUBIC or Reno) never runs. For every seed: no panic, the run ends, the delivered
//! stream equals the sent one, and the connection completes and closes cleanly or
//! ends with a clear error; errors stay rare.
//!
//! CI runs 150 seeds; `BRISK_FAULT_SEEDS=2000 cargo test --release -p brisk-sim
//! --test fault_copa` runs more.

mod common;

use common::fault::{campaign_over, Over};

const OVER: Over = Over {
    cc: "copa",
    queue: None,
    tcp: "",
};

/// The campaign's one runner (`common::fault::campaign_over`) over Copa.
#[test]
fn fault_campaign_over_copa() {
    let seeds: u64 = std::env::var("BRISK_FAULT_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    campaign_over(seeds, Some(&OVER));
}

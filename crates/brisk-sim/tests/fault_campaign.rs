//! Fault campaign: random loss (Bernoulli and bursty), duplication, reordering, bit
//! corruption and link outages of several RTOs, in both directions, over random paths,
//! applications and TCP settings.
//!
//! For every seed: no panic; the run ends (the simulator is bounded by `duration`); the
//! delivered byte stream equals the sent one (per-byte pattern check plus SHA-256 of both
//! streams once complete); and every connection either completes and closes cleanly on
//! both sides, or ends with a clear `ConnError`. With a controller put in place of the
//! generated one (`Over`), also that the flow ran it. One runner for every controller:
//! `common::fault::campaign_over`.
//!
//! CI runs 500 seeds. `BRISK_FAULT_SEEDS=10000 cargo test --release --test fault_campaign`
//! (or the ignored `fault_campaign_long`) runs the long campaign.

mod common;

use brisk_sim::{run, Scenario};
use common::fault::{campaign_over, scenario_for, Over};

fn campaign(seeds: u64) {
    campaign_over(seeds, None)
}

#[test]
fn fault_campaign_500_seeds() {
    let n = std::env::var("BRISK_FAULT_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(500);
    campaign(n);
}

#[test]
#[ignore = "long campaign: 10 000 seeds"]
fn fault_campaign_long() {
    campaign(10_000);
}

/// `BRISK_FAULT_SHOW=N cargo test --release --test fault_campaign show_seed -- --nocapture`
/// prints seed N's scenario and result table, to debug one seed.
#[test]
fn show_seed() {
    let Some(seed) = std::env::var("BRISK_FAULT_SHOW")
        .ok()
        .and_then(|v| v.parse().ok())
    else {
        return;
    };
    let text = scenario_for(seed);
    let sc = Scenario::from_toml_str(&text).unwrap();
    let res = run(&sc, seed).unwrap();
    eprintln!(
        "{text}\n{}\nerror: {:?} closed: {:?}",
        res.table(),
        res.flows[0].error,
        res.flows[0].closed
    );
}

/// Linux's Scalable, HighSpeed, Veno, YeAH and TCP-LP (`cc/scalable.rs`,
/// `cc/highspeed.rs`, `cc/veno.rs`, `cc/yeah.rs`, `cc/lp.rs`) over the campaign's
/// seeds: the same generated paths, impairments and apps with the controller replaced
/// (`common::fault::scenario_over`), held to the same checks as the plain campaign.
/// `BRISK_FAULT_CC_SEEDS=N` runs N seeds per controller (default 100).
#[test]
fn fault_campaign_scalable_highspeed_veno_yeah_lp() {
    let n: u64 = std::env::var("BRISK_FAULT_CC_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    for cc in ["scalable", "highspeed", "veno", "yeah", "lp"] {
        let over = Over {
            cc,
            queue: None,
            tcp: "",
        };
        campaign_over(n, Some(&over));
    }
}

/// The campaign with BBR v3 (`cc = "bbr3"`) as every flow's controller (issue 35
/// §2): the same paths, faults and applications, no panic, no stall, the stream
/// intact. `BRISK_FAULT_SEEDS` sets the count here too.
#[test]
fn fault_campaign_bbr3_200_seeds() {
    let n = std::env::var("BRISK_FAULT_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let over = Over {
        cc: "bbr3",
        queue: None,
        tcp: "",
    };
    campaign_over(n, Some(&over));
}

/// The ports of Linux's Vegas, Westwood+, Hybla, Illinois, H-TCP and BIC modules
/// through the campaign's paths, impairments and apps (`scenario_over`: the seed's
/// scenario with the controller replaced): no panic, no stall, the stream intact,
/// a clean close or a clear error, errors as rare as in the plain campaign.
/// `BRISK_FAULT_SEEDS_CC=N` sets the seeds per controller (default 60).
#[test]
fn fault_campaign_linux_module_ports() {
    let n: u64 = std::env::var("BRISK_FAULT_SEEDS_CC")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60);
    for cc in ["vegas", "westwood", "hybla", "illinois", "htcp", "bic"] {
        let over = Over {
            cc,
            queue: None,
            tcp: "",
        };
        campaign_over(n, Some(&over));
    }
}

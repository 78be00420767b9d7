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

use brisk_sim::{run, Scenario};
use common::fault::{scenario_over, Over};

const OVER: Over = Over {
    cc: "copa",
    queue: None,
    tcp: "",
};

/// Whether `seed` ended in a connection error (`Ok(true)`), cleanly (`Ok(false)`),
/// or broke an invariant (`Err`).
fn check(seed: u64) -> Result<bool, String> {
    let text = scenario_over(seed, Some(&OVER));
    let sc = Scenario::from_toml_str(&text).map_err(|e| format!("scenario: {e}\n{text}"))?;
    let res = run(&sc, seed).map_err(|e| format!("run: {e}\n{text}"))?;
    let f = &res.flows[0];
    let fail = |what: &str| Err(format!("seed {seed}: {what}\n{}\n{text}", res.table()));
    if f.cc != "copa" {
        return fail("not copa");
    }
    if !f.stream_ok {
        return fail("delivered stream differs from the sent one");
    }
    match &f.error {
        Some(e) if !e.is_empty() => Ok(true),
        Some(_) => fail("empty error message"),
        None if f.fct.is_none() => fail("transfer neither completed nor failed with an error"),
        None if f.closed != [true, true] => fail("connection did not close cleanly on both sides"),
        None => Ok(false),
    }
}

#[test]
fn fault_campaign_over_copa() {
    let seeds: u64 = std::env::var("BRISK_FAULT_SEEDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(150);
    let (mut failures, mut errors) = (Vec::new(), Vec::new());
    for seed in 0..seeds {
        match std::panic::catch_unwind(|| check(seed)) {
            Ok(Ok(false)) => {}
            Ok(Ok(true)) => errors.push(seed),
            Ok(Err(e)) => failures.push(e),
            Err(_) => failures.push(format!(
                "seed {seed}: PANIC\n{}",
                scenario_over(seed, Some(&OVER))
            )),
        }
        if failures.len() >= 5 {
            break;
        }
    }
    eprintln!(
        "copa fault campaign: {seeds} seeds, {} ended with a connection error: {errors:?}",
        errors.len()
    );
    assert!(
        failures.is_empty(),
        "{} failing seeds; first:\n{}",
        failures.len(),
        failures.join("\n---\n")
    );
    assert!(
        errors.len() as u64 * 20 <= seeds.max(20),
        "{} of {seeds} seeds ended in a connection error",
        errors.len()
    );
}

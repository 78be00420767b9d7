//! CI's reproduction check: the whole `--quick` suite must not fail any claim that is
//! not listed, with its reason, in `repro/accepted-failures.toml`. An accepted failure
//! that now passes is reported (the list should shrink) but does not fail the test.
//!
//! Ignored in unoptimised builds (minutes instead of seconds); CI runs
//! `cargo test --workspace --profile ci` (release without LTO).
//!
//! The suite includes the `real-*` experiments, which run real packets in real time
//! where the host allows (root, TUN, iproute2; CI does) and are `n/a` elsewhere. The tests
//! here take `SERIAL` so no simulation of another test competes with it for the CPU.

mod common;

use brisk_repro::{accepted, html, report, run_suite, select, Progress, Verdict};
use std::sync::Mutex;

static SERIAL: Mutex<()> = Mutex::new(());

#[test]
#[cfg_attr(debug_assertions, ignore = "runs the quick suite; use --release")]
fn quick_suite_fails_no_claim_outside_the_accepted_list() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let exps = select(&[]).expect("all experiments");
    let results = run_suite(&exps, true, &Progress::hidden());
    let acc =
        accepted::embedded(accepted::Mode::Quick).expect("repro/accepted-failures.toml parses");
    eprintln!("{}", report::table(&results, &acc));
    // Every figure of the report passes the SVG checker.
    for r in &results {
        for (i, p) in r.plots.iter().enumerate() {
            let id = html::figure_id(r.id, i);
            if let Err(e) = common::check(&p.figure, &id) {
                panic!("{e}");
            }
        }
    }
    // Every accepted entry must name a claim the suite reports, so stale entries
    // cannot hide a renamed claim.
    let ids: Vec<&str> = results
        .iter()
        .flat_map(|r| r.claims.iter().map(|c| c.id.as_str()))
        .collect();
    for id in acc.keys() {
        assert!(
            ids.contains(&id.as_str()),
            "accepted failure {id} names no claim"
        );
    }
    let reg = accepted::check(&results, &acc);
    for id in &reg.now_passing {
        eprintln!("warning: accepted failure {id} now passes; remove it from repro/accepted-failures.toml");
    }
    // Name the numbers behind each unexpected failure: the table cuts notes, and a
    // real-packet claim may fail only on the CI machine.
    for c in results.iter().flat_map(|r| &r.claims) {
        if reg.unexpected.contains(&c.id) {
            eprintln!(
                "unexpected failure {}: ours {} ({}), tolerance {}; {}",
                c.id,
                brisk_repro::claim::show(&c.ours),
                c.unit,
                c.tolerance,
                c.note
            );
        }
    }
    assert!(
        reg.unexpected.is_empty(),
        "claims failing outside the accepted list: {:?}",
        reg.unexpected
    );
    assert!(results
        .iter()
        .flat_map(|r| &r.claims)
        .any(|c| c.verdict == Verdict::Pass));
}

#[test]
#[cfg_attr(debug_assertions, ignore = "runs simulations; use --release")]
fn suite_results_do_not_depend_on_scheduling() {
    let _serial = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let exps = select(&["dc-compete".to_string()]).unwrap();
    let plan = (exps[0].plan)(true).unwrap();
    let one = brisk_repro::runner::run_jobs(&plan.jobs, 1, &Progress::hidden());
    let two = brisk_repro::runner::run_jobs(&plan.jobs, 2, &Progress::hidden());
    for (a, b) in one.iter().zip(&two) {
        let (a, b) = (a.as_ref().unwrap(), b.as_ref().unwrap());
        for (fa, fb) in a.flows.iter().zip(&b.flows) {
            assert_eq!(fa.bytes_delivered, fb.bytes_delivered);
            assert_eq!(fa.goodput_series, fb.goodput_series);
        }
    }
}

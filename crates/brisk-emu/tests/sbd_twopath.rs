//! Plain flows on chosen paths of the two-path lab and brisk's shared-bottleneck
//! detector in the real stack (`realrun::twopath::run_two_path_with`,
//! `realrun/sbd.rs`; issue 33 §4):
//! * two brisk flows on path 0 and one brisk and one Linux flow on path 1: each path
//!   carries data (the emulators' counters), every stream is intact;
//! * with the detector on, the run reports its decisions (about one per T), every
//!   brisk flow tracked by its receiver, and no decision for the Linux flow;
//! * a path that does not exist, or a list of the wrong length, is refused by field.
//!
//! Needs root and TUN; skips with a message otherwise. One run of 4 s plus the drain.

mod common;

use brisk_emu::realrun::twopath::{run_two_path_with, TwoPathOptions, TwoPathRun};
use brisk_emu::realrun::{FlowStack, LinuxKnobs, RealApp, RealFlow, RealRun};
use brisk_emu::tools::multipath::MultiPathConfig;
use brisk_tcp::cc::sbd::{SbdConfig, SbdHostConfig};
use brisk_time::Duration;

const PATHS: &str = r#"
[[path]]
rtt = "40ms"
bottleneck = { rate = "8Mbit", queue = { kind = "droptail", packets = 40 } }
[[path]]
rtt = "40ms"
bottleneck = { rate = "4Mbit", queue = { kind = "droptail", packets = 20 } }
"#;

fn flow(stack: FlowStack) -> RealFlow {
    RealFlow {
        stack,
        cc: "cubic".into(),
        tcp: brisk_tcp::Config::default(),
        linux: LinuxKnobs::default(),
        start: Duration::ZERO,
        rtt: Duration::from_millis(40),
        app: RealApp::Bulk { bytes: None },
    }
}

fn plan() -> TwoPathRun {
    TwoPathRun {
        run: RealRun {
            name: "sbd-twopath".into(),
            seed: 1,
            duration: Duration::from_secs(4),
            path: brisk_emu::EmuConfig::default(),
            flows: vec![
                flow(FlowStack::Brisk),
                flow(FlowStack::Brisk),
                flow(FlowStack::Brisk),
                flow(FlowStack::Linux),
            ],
            sample_interval: Duration::from_millis(100),
            pcap_dir: None,
            link_log_dir: None,
        },
        paths: MultiPathConfig::from_toml(PATHS).unwrap(),
    }
}

#[test]
fn flows_take_their_paths_and_the_detector_reports_per_interval() {
    if !common::lab_available("flows_take_their_paths_and_the_detector_reports_per_interval") {
        return;
    }
    let opts = TwoPathOptions {
        flow_paths: vec![0, 0, 1, 1],
        sbd: Some(SbdHostConfig {
            sbd: SbdConfig::improved(),
            ..SbdHostConfig::default()
        }),
    };
    let r = run_two_path_with(&plan(), &opts).expect("two-path run");
    eprintln!("{}", r.table());
    for f in &r.flows {
        assert!(
            f.stream_ok && f.error.is_none(),
            "flow {}: {:?}",
            f.id,
            f.error
        );
        assert!(
            f.bytes_delivered > 100_000,
            "flow {}: {}",
            f.id,
            f.bytes_delivered
        );
    }
    // Both paths carried data, path 1 its two flows' (a quarter or more of all).
    assert_eq!(r.paths.len(), 2);
    assert!(r.paths[1].share > 0.2, "{:?}", r.paths);
    assert!(r.paths[0].share > 0.4, "{:?}", r.paths);
    let sbd = r.sbd.expect("the detector's report");
    // 4 s at T = 350 ms: about 10 decisions (from the second interval on).
    assert!((6..=13).contains(&sbd.total), "{sbd:?}");
    assert!(sbd.samples > 500, "{}", sbd.samples);
    let last = sbd.decisions.last().expect("a decision");
    assert_eq!(last.flows.len(), 4);
    assert!(last.flows[..3].iter().all(|f| f.tracked), "{last:?}");
    assert!(
        !last.flows[3].tracked,
        "the Linux flow is not brisk's: {last:?}"
    );
}

#[test]
fn bad_flow_paths_are_refused_by_field() {
    for (paths, words) in [
        (vec![0, 2, 0, 0], "flow_paths[1] = 2"),
        (vec![0, 1], "one path per flow"),
    ] {
        let opts = TwoPathOptions {
            flow_paths: paths,
            sbd: None,
        };
        let e = run_two_path_with(&plan(), &opts).unwrap_err().to_string();
        assert!(e.contains(words), "{e}");
    }
}

//! Real runs over the two-path lab (`realrun::twopath`, `brisk run --real FLOWS.toml
//! --paths NET.toml`): the paths of `scenarios/mp-two-path-client.toml` (a WLAN-like
//! and a 3G-like path drawn from seed 004's Table III for the seed), Linux MPTCP
//! and brisk MPTCP senders, a bulk flow and a CBR (`records`) flow:
//! * a Linux MPTCP bulk flow opens a subflow per path and both paths carry data (the
//!   emulators' per-path counters), intact, with the join in the kernels' counters;
//! * a brisk MPTCP bulk flow and a CBR flow run over both paths (brisk's stack has an
//!   address on each, its MPTCP a subflow per path), intact, both paths carry data,
//!   and the CBR flow reports its application delay;
//! * every namespace the runs made is gone afterwards, also after a refused run.
//!
//! Needs root, TUN and an MPTCP kernel; skips with a message otherwise. Runs are
//! 3 s each plus the drain.

mod common;

use brisk_emu::realrun::twopath::{run_two_path, two_path_run, TwoPathRun};
use brisk_emu::realrun::RealResult;
use brisk_emu::stack::mptcp_kernel;
use brisk_scenario::network::NetScenario;

const NET: &str = include_str!("../../../scenarios/mp-two-path-client.toml");

fn available(test: &str) -> bool {
    if !common::lab_available(test) {
        return false;
    }
    if let Some(why) = mptcp_kernel::unsupported_reason() {
        eprintln!("SKIPPED {test}: {why}");
        return false;
    }
    true
}

/// The flows file: the single-path view's `[bottleneck]` and `rtt` are replaced by
/// the network's paths.
fn flows(body: &str) -> String {
    format!("name = \"tp\"\nduration = \"3s\"\n[bottleneck]\nrate = \"25Mbit\"\n{body}")
}

fn plan(body: &str, seed: u64) -> TwoPathRun {
    let sc = brisk_sim::Scenario::from_toml_str(&flows(body)).unwrap();
    let net = NetScenario::from_toml_str_named(NET, "mp-two-path-client.toml").unwrap();
    two_path_run(
        &sc,
        "flows.toml",
        &net,
        "mp-two-path-client.toml",
        Some(seed),
    )
    .unwrap()
}

fn run(body: &str, seed: u64) -> RealResult {
    let r = run_two_path(&plan(body, seed)).expect("two-path run");
    eprintln!("{}", r.table());
    r
}

/// One lab at a time: a test's "no namespace left" check lists the whole process's
/// namespaces, and real-time runs in parallel would distort each other.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// This process's lab namespaces still listed by `ip netns`.
fn our_namespaces() -> Vec<String> {
    let me = format!("brisk-{}-", std::process::id());
    common::ip_netns_list()
        .into_iter()
        .filter(|n| n.starts_with(&me))
        .collect()
}

#[test]
fn a_linux_mptcp_flow_uses_both_paths_of_the_two_path_client() {
    let _one = serial();
    if !available("a_linux_mptcp_flow_uses_both_paths_of_the_two_path_client") {
        return;
    }
    for seed in [1, 2] {
        let r = run(
            "[[flow]]\nstack = \"linux\"\ncc = \"cubic\"\nrtt = \"50ms\"\napp = { kind = \"bulk\" }\n[flow.tcp.mptcp]\n",
            seed,
        );
        let f = &r.flows[0];
        assert!(f.stream_ok, "seed {seed}: intact: {:?}", f.error);
        assert_eq!(r.paths.len(), 2);
        assert_eq!(
            f.subflows.len(),
            2,
            "seed {seed}: a subflow per path: {:?}",
            f.subflows
        );
        for p in &r.paths {
            assert!(
                p.share > 0.05,
                "seed {seed}: path {} carried {:.1} % of the data: {:?}",
                p.path,
                p.share * 100.0,
                r.paths
            );
        }
        // Goodput within the two paths' capacity (payload below the IP rate), and
        // not starved: the WLAN path's 1-2 % loss holds a loss-based flow to a few
        // Mbit/s (Mathis: 1448 B x 8 / 50 ms x 1.22 / sqrt(0.015) = 2.3 Mbit/s).
        let cap: u64 = r.paths.iter().filter_map(|p| p.rate_bps).sum();
        assert!(
            f.goodput_bps < cap as f64,
            "seed {seed}: {} > {cap}",
            f.goodput_bps
        );
        assert!(
            f.goodput_bps > 0.1 * cap as f64,
            "seed {seed}: {}",
            f.goodput_bps
        );
        let m = r.mptcp.as_ref().expect("MPTCP counters");
        let c = |k: &str| m.receivers.get(k).copied().unwrap_or(0);
        assert_eq!(c("MPTcpExtMPJoinAckRx"), 1, "seed {seed}: {m:?}");
        for k in [
            "MPTcpExtDataCsumErr",
            "MPTcpExtMPFailRx",
            "MPTcpExtInfiniteMapRx",
        ] {
            assert_eq!(c(k), 0, "seed {seed}: {k}: {m:?}");
        }
        let j = r.to_json();
        assert_eq!(j["real"]["paths"].as_array().map(Vec::len), Some(2));
    }
    assert!(our_namespaces().is_empty(), "left: {:?}", our_namespaces());
}

#[test]
fn brisk_mptcp_bulk_and_a_cbr_stream_run_over_both_paths() {
    let _one = serial();
    if !available("brisk_mptcp_bulk_and_a_cbr_stream_run_over_both_paths") {
        return;
    }
    // A 512-KiB send buffer: what is queued at the end must drain within the
    // runner's 15 s over a path with 1-2 % loss.
    let r = run(
        "[[flow]]\ncc = \"cubic\"\nrtt = \"50ms\"\napp = { kind = \"bulk\" }\n[flow.tcp]\nsend_buffer = \"512KiB\"\n[flow.tcp.mptcp]\n\
         [[flow]]\ncc = \"cubic\"\nrtt = \"50ms\"\napp = { kind = \"records\", size = 1000, interval = \"20ms\" }\n[flow.tcp.mptcp]\n",
        3,
    );
    for f in &r.flows {
        assert!(f.stream_ok, "flow {} intact: {:?}", f.id, f.error);
        assert_eq!(f.stack, "brisk");
    }
    assert!(r.flows[0].goodput_bps > 1e6, "{}", r.flows[0].goodput_bps);
    // 1000-byte records every 20 ms for 3 s: about 150, each delayed at least the
    // WLAN path's one-way delay (> 20 ms).
    let lat = r.flows[1].record_latency.expect("record latency");
    assert!(lat.count > 100, "{lat:?}");
    assert!(lat.min > 20_000_000, "{lat:?}");
    // brisk has an address on each path and joins from the 3G one: both paths carry
    // its data (the counters are the run's, both flows together).
    for p in &r.paths {
        assert!(p.share > 0.01, "path {}: {:?}", p.path, r.paths);
    }
    assert!(our_namespaces().is_empty(), "left: {:?}", our_namespaces());
}

/// A run the lab cannot take is refused before any namespace exists, by field.
#[test]
fn a_linux_route_knob_is_refused_in_a_two_path_run() {
    let _one = serial();
    let tp = plan(
        "[[flow]]\nstack = \"linux\"\nrtt = \"50ms\"\napp = { kind = \"bulk\" }\n[flow.tcp]\ninitial_cwnd = 20\n",
        1,
    );
    let e = run_two_path(&tp).unwrap_err().to_string();
    assert!(e.contains("flow[0].tcp.initial_cwnd"), "{e}");
    assert!(our_namespaces().is_empty());
}

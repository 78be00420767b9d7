//! A host that handled nothing since the last sample repeats its last `cwnd` row
//! instead of asking each connection for its `TcpInfo` again (`Host::sample`, issue 36
//! §2). The shortcut must not change a byte: each scenario here is run once as it is
//! and once with every host asking every time (`Host::full_samples`), and the two
//! results must be identical, series included. The scenarios have idle hosts at
//! sampling instants: flows stuck behind a SYN storm, short flows that finished, and
//! an application that sends a burst every 2 s.

use brisk_sim::{build_for, run_network, run_with, RunOptions, Scenario};

/// Both ways; the full `Debug` of every flow's result (series, `TcpInfo`, summaries)
/// and the JSON summary.
fn both_ways(text: &str) -> [(String, String); 2] {
    let sc = Scenario::from_toml_str(text).unwrap();
    let opts = RunOptions::default();
    let fast = run_with(&sc, sc.seed, &opts).unwrap();
    let mut net = build_for(&sc, sc.seed, &opts).unwrap();
    for i in 0..net.engine.nodes().len() {
        if let Some(h) = net.engine.node_mut(i).as_host_mut() {
            h.full_samples();
        }
    }
    let full = run_network(&sc, sc.seed, &mut net, &opts, &mut |_| true).unwrap();
    [fast, full].map(|r| {
        (
            format!("{:?}", r.flows),
            serde_json::to_string(&r.to_json()).unwrap(),
        )
    })
}

fn assert_same(text: &str) {
    let [fast, full] = both_ways(text);
    assert!(fast.0.contains("cwnd_series: [("), "no cwnd rows at all");
    assert_eq!(fast.1, full.1, "JSON summaries differ");
    assert!(fast.0 == full.0, "flow results (series) differ");
}

#[test]
fn syn_storm_idle_flows_sample_the_same() {
    // 300 flows at once into a 50-packet queue: most SYNs are dropped and their
    // flows sit idle in SYN-SENT across several samples.
    assert_same(
        r#"
name = "storm"
seed = 3
duration = "2s"
[bottleneck]
rate = "50Mbit"
queue = { kind = "droptail", packets = 50 }
[[flow]]
count = 300
rtt = "10ms"
app = { kind = "bulk", bytes = 20000 }
"#,
    );
}

#[test]
fn bursty_app_limited_sender_samples_the_same() {
    assert_same(include_str!("../../../scenarios/new-cwv-bursty.toml"));
}

#[test]
fn finished_and_lossy_flows_sample_the_same() {
    assert_same(
        r#"
name = "mixed"
seed = 9
duration = "3s"
[bottleneck]
rate = "20Mbit"
queue = { kind = "droptail", packets = 40 }
loss = { kind = "bernoulli", p = 0.01 }
[[flow]]
count = 4
rtt = "30ms"
app = { kind = "bulk", bytes = 50000 }
[[flow]]
rtt = "40ms"
cc = "reno"
start = "0.5s"
app = { kind = "records", size = 500, interval = "300ms" }
[[flow]]
rtt = "20ms"
app = { kind = "bulk" }
"#,
    );
}

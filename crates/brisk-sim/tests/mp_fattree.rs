//! The fat tree of seed 004 B.2 (MP-6, `scenarios/mp-fattree.toml`): one MPTCP
//! connection per random host pair with 8 ndiffports subflows over ECMP, and the
//! per-subflow slow-start-exit samples the simulator records from the connection.

use brisk_scenario::network::NetScenario;
use brisk_sim::wl_run::run_net;

const FILE: &str = include_str!("../../../scenarios/mp-fattree.toml");

/// The shipped network with `connections`, every queue at `queue` packets, `bytes`
/// per connection and LISA on or off.
fn net(connections: u32, queue: u32, bytes: u64, lisa: bool) -> NetScenario {
    let text = FILE
        .replace("connections = 16", &format!("connections = {connections}"))
        .replace("packets = 21", &format!("packets = {queue}"))
        .replace("[[300000, 1.0]]", &format!("[[{bytes}, 1.0]]"))
        .replace("lisa = true", &format!("lisa = {lisa}"));
    NetScenario::from_toml_str_named(&text, "mp-fattree test").unwrap()
}

#[test]
fn the_shipped_fat_tree_runs_16_connections_of_8_subflows_each() {
    let sc = NetScenario::from_toml_str_named(FILE, "mp-fattree").unwrap();
    let r = run_net(&sc, 1).unwrap();
    assert_eq!((r.hosts, r.routers), (16, 20));
    assert_eq!(r.flows.len(), 16);
    let mut srcs: Vec<u32> = r.flows.iter().map(|f| f.src).collect();
    srcs.sort_unstable();
    assert_eq!(srcs, (0..16).collect::<Vec<_>>(), "every host opens one");
    for f in &r.flows {
        assert!(f.intact(), "flow {} {:?}", f.id, f.error);
        assert_eq!(f.subflows.len(), 8, "flow {}", f.id);
        let since = f.start - brisk_time::Instant::ZERO;
        assert!(
            since < brisk_time::Duration::from_millis(5),
            "opened within 5 ms"
        );
    }
}

#[test]
fn slow_start_exits_are_recorded_per_subflow_and_summed_at_the_last() {
    for lisa in [false, true] {
        for seed in [1, 2, 3] {
            let r = run_net(&net(6, 6, 900_000, lisa), seed).unwrap();
            let mut summed = 0;
            for f in &r.flows {
                assert!(f.intact(), "seed {seed} flow {}", f.id);
                let done = f.acked.unwrap();
                let total: u64 = f.subflows.iter().map(|s| s.retransmits).sum();
                for s in &f.subflows {
                    if let Some(e) = s.ss_exit {
                        assert!(e.at <= done);
                        assert!(e.retransmits <= s.retransmits);
                        assert!(e.cwnd >= 1 && e.cwnd <= 1 << 20);
                        assert!(e.ssthresh < u32::MAX, "left slow start: {e:?}");
                    }
                }
                if let Some(sum) = f.ss_exit {
                    summed += 1;
                    assert!(sum.at <= done);
                    assert!(sum.retransmits <= total);
                    // Recorded at a subflow's exit; with every subflow in it, at the
                    // latest one (a subflow still in slow start keeps an earlier
                    // compound of fewer subflows).
                    let last = f
                        .subflows
                        .iter()
                        .filter_map(|s| s.ss_exit)
                        .map(|e| e.at)
                        .max();
                    assert!(Some(sum.at) <= last, "seed {seed} flow {}", f.id);
                    assert!(f
                        .subflows
                        .iter()
                        .filter_map(|s| s.ss_exit)
                        .any(|e| e.at == sum.at));
                    let exited = f.subflows.iter().filter(|s| s.ss_exit.is_some()).count();
                    assert!(sum.subflows as usize <= exited);
                    if exited == f.subflows.len() {
                        assert_eq!(Some(sum.at), last, "seed {seed} flow {}", f.id);
                        assert_eq!(sum.subflows as usize, exited);
                    }
                    assert!(sum.cwnd >= sum.subflows);
                }
            }
            // Six-packet queues: 900 KB cannot finish in slow start on every subflow.
            assert!(
                summed > 0,
                "lisa {lisa} seed {seed}: no connection left slow start"
            );
        }
    }
}

#[test]
fn lia_and_lisa_runs_of_a_seed_get_the_same_pairs_sizes_and_starts() {
    let a = run_net(&net(16, 10, 200_000, false), 4).unwrap();
    let b = run_net(&net(16, 10, 200_000, true), 4).unwrap();
    let key = |r: &brisk_sim::wl_run::WorkloadResult| {
        r.flows
            .iter()
            .map(|f| (f.src, f.dst, f.size, f.start))
            .collect::<Vec<_>>()
    };
    assert_eq!(key(&a), key(&b));
    let c = run_net(&net(16, 10, 200_000, false), 5).unwrap();
    assert_ne!(key(&a), key(&c), "another seed, other pairs");
}

#[test]
fn pairs_errors_name_the_field() {
    let bad = FILE.replace("connections = 16", "connections = 0");
    let e = NetScenario::from_toml_str_named(&bad, "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.pairs.connections"), "{e}");
    let bad = FILE.replace("spread = \"5ms\"", "spread = \"40s\"");
    let e = NetScenario::from_toml_str_named(&bad, "x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("workload.pairs.spread"), "{e}");
    // 16 hosts on 8 edge switches have 112 pairs on different switches.
    let sc = net(113, 10, 1000, false);
    let e = run_net(&sc, 1).err().unwrap().to_string();
    assert!(
        e.contains("workload.pairs.connections") && e.contains("only 112 pairs"),
        "{e}"
    );
}

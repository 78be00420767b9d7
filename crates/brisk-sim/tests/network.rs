//! Network scenarios end to end: multi-hop topologies with a Poisson flow workload
//! (issue 11 §1; RC3 §5.1; spec rc3.md A7, A8, A12): every flow completes intact,
//! the load calibration holds, runs are deterministic, classes get their own TCP, and
//! bad files get errors naming the field.

use brisk_sim::topo_build;
use brisk_sim::wl_run::{run_net, WorkloadResult};

/// The Internet2 graph, 2 hosts per router, 100 Mbit/s, with `workload` appended.
fn internet2(extra: &str, workload: &str) -> String {
    format!(
        r#"
name = "t"
duration = "60s"
topology = {{ kind = "internet2", hosts_per_router = 2, rate = "100Mbps", hop_delay = "10ms", queue = {{ kind = "droptail", time = "40ms" }}, host_queue = {{ kind = "droptail", bytes = "16MB" }} {extra} }}

[workload]
{workload}
"#
    )
}

const BASE: &str = r#"sizes = "rc3-synthetic"
load = 0.3
cc = "reno"
tcp = { initial_cwnd = 4, recv_buffer = "8MB", send_buffer = "8MB" }
"#;

fn run(text: &str) -> WorkloadResult {
    let sc = topo_build::from_toml_str(text).unwrap_or_else(|e| panic!("{e}"));
    run_net(&sc, sc.seed).unwrap_or_else(|e| panic!("{e}"))
}

fn assert_all_intact(r: &WorkloadResult) {
    assert!(!r.flows.is_empty());
    assert_eq!(r.errors, 0);
    assert_eq!(r.not_intact, 0);
    assert_eq!(r.unknown_accepts, 0);
    assert_eq!(r.engine.unroutable, 0);
    for f in &r.flows {
        assert!(f.intact(), "flow {f:?}");
        let (fb, ack, rx) = (f.first_byte.unwrap(), f.acked.unwrap(), f.last_rx.unwrap());
        // SYN, then data; the last byte is read before its ACK reaches the sender.
        assert!(f.start < fb && rx < ack, "{f:?}");
        // At least one base RTT (the data's and the ACK's propagation).
        assert!(ack - fb >= f.base_rtt, "{f:?}");
    }
    assert_eq!(r.all.completed, r.all.flows);
}

#[test]
fn internet2_workload_completes_intact_with_the_calibrated_core_load() {
    // Light-tailed sizes, a low rate and a long warm-up, so a few thousand flows give
    // a steady load for the spec A8 check.
    let w = BASE.replace("rc3-synthetic", "rc3-2000");
    let r = run(
        &internet2("", &format!("{w}flows = 3000\nwarmup = \"1s\"\n")).replace("100Mbps", "20Mbps"),
    );
    assert_all_intact(&r);
    // What was offered: Σ size · core hops over the arrival span, per core capacity
    // (26 directed core links of 20 Mbit/s).
    let span = r.flows.last().unwrap().start - brisk_time::Instant::ZERO;
    let offered: f64 = r
        .flows
        .iter()
        .map(|f| f.size as f64 * 8.0 * f64::from(f.core_hops))
        .sum::<f64>()
        / (26.0 * 20e6 * span.as_secs_f64());
    assert!((offered - 0.3).abs() < 0.03, "offered core load {offered}");
    // Per-flow state is freed: 3000 flows over ~12 s, yet a host never holds more than
    // its flows of the last TIME-WAIT second (1 s) or so.
    assert!(
        r.peak_connections > 0 && r.peak_connections < 60,
        "{}",
        r.peak_connections
    );
    assert_eq!((r.hosts, r.routers, r.links), (20, 10, 66));
    // Spec A7: uniform pairs over different routers, equal hosts per router.
    assert!((r.mean_core_hops - 204.0 / 90.0).abs() < 1e-9);
    // Spec A8: the core links' mean utilisation is the target, within Poisson noise.
    let u = &r.utilisation;
    assert!(
        (u.core_mean - 0.3).abs() < 0.05,
        "core utilisation {} (target 0.3)",
        u.core_mean
    );
    assert!(u.core_max > u.core_mean && u.core_max <= 1.0);
    // Each flow crosses two access links; 20 hosts share the load.
    assert!(u.access_up_mean > 0.0 && u.access_down_mean > 0.0);
    // Paths: 2 access links plus 1 to 5 core links; RTT 20 ms per core hop.
    for f in &r.flows {
        assert!((1..=5).contains(&f.core_hops) && f.hops == f.core_hops + 2);
        assert_eq!(f.base_rtt.as_millis(), 20 * u128::from(f.core_hops));
        assert!(f.size <= 700 * 1460);
        assert_ne!(f.src / 2, f.dst / 2, "hosts on one router: {f:?}");
    }
    // Warm-up flows are excluded (10 % of the arrival span by default).
    let late = r
        .flows
        .iter()
        .filter(|f| f.start >= brisk_time::Instant::ZERO + r.warmup);
    assert_eq!(late.count(), r.all.flows);
    assert!(r.all.flows < r.flows.len());
}

#[test]
fn same_seed_same_bytes_other_seed_other_flows() {
    let text = internet2("", &format!("{BASE}flows = 200\n"));
    let sc = topo_build::from_toml_str(&text).unwrap();
    let dir =
        |n: &str| std::env::temp_dir().join(format!("brisk-net-det-{}-{n}", std::process::id()));
    let mut outs = Vec::new();
    for (n, seed) in [("a", 1), ("b", 1), ("c", 2)] {
        let r = run_net(&sc, seed).unwrap();
        r.write_dir(&dir(n)).unwrap();
        let json = std::fs::read(dir(n).join("summary.json")).unwrap();
        let csv = std::fs::read(dir(n).join("flows.csv")).unwrap();
        std::fs::remove_dir_all(dir(n)).ok();
        outs.push((json, csv, r.table()));
    }
    assert_eq!(outs[0], outs[1]);
    assert_ne!(outs[0].1, outs[2].1);
}

#[test]
fn classes_give_hosts_their_own_tcp() {
    // Half of every router's hosts open with IW 10, the rest with IW 4: flows of 5 to
    // 10 packets need one round trip with IW 10 and two with IW 4.
    let w = format!(
        "{BASE}flows = 600\n[[workload.class]]\nname = \"iw10\"\nhosts = 0.5\ncc = \"reno\"\ntcp = {{ initial_cwnd = 10, recv_buffer = \"8MB\", send_buffer = \"8MB\" }}\n"
    );
    let r = run(&internet2("", &w));
    assert_all_intact(&r);
    assert_eq!(r.classes.len(), 2);
    assert_eq!((r.classes[0].hosts, r.classes[1].hosts), (10, 10));
    // Hosts 0, 2, 4, ... (the first of each router's two) are class 1.
    for f in &r.flows {
        assert_eq!(f.class, if f.src % 2 == 0 { 1 } else { 0 });
    }
    let bin = |c: usize| {
        let b = &r.classes[c].stats.bins[1]; // (4, 10] packets
        assert!(b.completed >= 10, "{b:?}");
        b.mean_fct_s.unwrap()
    };
    assert!(bin(1) < 0.85 * bin(0), "IW10 {} vs IW4 {}", bin(1), bin(0));
}

#[test]
fn flow_classes_pick_flows_without_moving_arrivals() {
    let base = internet2("", &format!("{BASE}flows = 400\n"));
    let with = internet2(
        "",
        &format!("{BASE}flows = 400\n[[workload.class]]\nname = \"critical\"\nflows = 0.25\ncc = \"reno\"\ntcp = {{ initial_cwnd = 10 }}\n"),
    );
    let (a, b) = (run(&base), run(&with));
    assert_all_intact(&b);
    let key = |r: &WorkloadResult| -> Vec<_> {
        r.flows
            .iter()
            .map(|f| (f.src, f.dst, f.size, f.start))
            .collect()
    };
    assert_eq!(key(&a), key(&b));
    let critical = b.flows.iter().filter(|f| f.class == 1).count();
    assert!((70..=130).contains(&critical), "{critical} of 400");
    // The flow class sets the sender's TCP: IW 10 sends 5-10 packet flows in one round.
    assert!(b.classes[1].stats.bins[1].mean_fct_s < b.classes[0].stats.bins[1].mean_fct_s);
    assert_eq!(b.classes[1].hosts, 0); // a flow class claims no hosts
}

#[test]
fn access_loss_is_recovered_and_every_flow_stays_intact() {
    let r = run(&internet2(
        ", access_loss = { kind = \"bernoulli\", p = 0.01 }",
        &format!("{BASE}flows = 300\n"),
    ));
    assert_all_intact(&r);
    assert!(r.utilisation.access_drops > 0);
    assert!(r.flows.iter().map(|f| f.retransmits).sum::<u64>() > 0);
}

#[test]
fn seeded_core_rates_and_fifo_routers() {
    let text = internet2(
        ", core_rate_max = \"200Mbps\", fifo_routers = 0.5, fifo_queue = { kind = \"droptail\", packets = 50 }",
        &format!("{BASE}flows = 300\n"),
    )
    .replace("rate = \"100Mbps\"", "rate = \"50Mbps\"");
    let sc = topo_build::from_toml_str(&text).unwrap();
    let (g, fifo) = topo_build::graph_seeded(&sc, 7).unwrap();
    let mut rates = std::collections::BTreeSet::new();
    for (l, link) in g.links().iter().enumerate() {
        let rate = link.spec.rate.unwrap().0;
        if g.is_core(l) {
            assert!((50_000_000..=200_000_000).contains(&rate));
            let back = g.reverse_of(l).unwrap();
            assert_eq!(g.links()[back].spec.rate.unwrap().0, rate);
            rates.insert(rate);
        } else {
            assert_eq!(rate, 50_000_000); // host links keep `rate`
        }
        let from = &g.nodes()[link.from].name;
        let fifo_q = matches!(
            link.spec.queue,
            Some(brisk_scenario::link::QueueSpec::Droptail {
                packets: Some(50),
                ..
            })
        );
        assert_eq!(fifo_q, fifo.contains(from), "{from}");
    }
    assert_eq!(rates.len(), 13, "one draw per core link pair");
    assert_eq!(fifo.len(), 5);
    // Another seed, other choices; the same seed, the same ones.
    assert_ne!(topo_build::graph_seeded(&sc, 8).unwrap().1, fifo);
    assert_eq!(topo_build::graph_seeded(&sc, 7).unwrap().1, fifo);
    let r = run_net(&sc, 7).unwrap();
    assert_all_intact(&r);
    assert_eq!(r.fifo_routers, fifo);
}

#[test]
fn fat_tree_and_explicit_graphs_run_intact() {
    let ft = r#"
name = "ft"
duration = "30s"
topology = { kind = "fat_tree", k = 4, rate = "100Mbps", hop_delay = "1ms", queue = { kind = "droptail", packets = 100 } }
[workload]
sizes = "rc3-2000"
load = 0.2
flows = 300
"#;
    let r = run(ft);
    assert_all_intact(&r);
    assert_eq!((r.hosts, r.routers), (16, 20));
    for f in &r.flows {
        // Host-edge (1 ms each way) + 2 or 4 switch links: never within one edge switch.
        assert!(f.hops == 4 || f.hops == 6, "{f:?}");
    }

    // Two routers, a slow forward and a fast reverse direction.
    let explicit = r#"
name = "x"
duration = "30s"
[[node]]
name = "A"
kind = "router"
[[node]]
name = "B"
kind = "router"
[[node]]
name = "a1"
kind = "host"
[[node]]
name = "b1"
kind = "host"
[[link]]
a = "a1"
b = "A"
rate = "50Mbps"
[[link]]
a = "b1"
b = "B"
rate = "50Mbps"
[[link]]
a = "A"
b = "B"
rate = "20Mbps"
delay = "15ms"
reverse = { rate = "40Mbps", delay = "5ms" }
[workload]
sizes = { cdf = [[1460, 0.5], [14600, 1.0]] }
load = 0.3
flows = 100
"#;
    let r = run(explicit);
    assert_all_intact(&r);
    assert!(r
        .flows
        .iter()
        .all(|f| f.base_rtt.as_millis() == 20 && f.hops == 3));
}

#[test]
fn edge_lists_load_relative_to_the_scenario() {
    let dir = std::env::temp_dir().join(format!("brisk-edges-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("topologies")).unwrap();
    std::fs::write(
        dir.join("topologies/ring.txt"),
        "# a ring of four\nA B 5\nB C 5\nC D 5\nD A 5 200Mbps\n",
    )
    .unwrap();
    let sc = dir.join("ring.toml");
    std::fs::write(
        &sc,
        "name = \"ring\"\nduration = \"20s\"\ntopology = { kind = \"edges\", file = \"topologies/ring.txt\", hosts_per_router = 1, rate = \"100Mbps\" }\n[workload]\nsizes = \"rc3-2000\"\nload = 0.2\nflows = 100\n",
    )
    .unwrap();
    let s = topo_build::load(&sc).unwrap();
    let r = run_net(&s, 1).unwrap();
    assert_all_intact(&r);
    // Opposite routers are 2 hops apart, neighbours 1: (8·1 + 4·2) / 12 ordered pairs.
    assert!((r.mean_core_hops - 16.0 / 12.0).abs() < 1e-9);
    std::fs::write(&sc, "name = \"ring\"\nduration = \"20s\"\ntopology = { kind = \"edges\", file = \"nope.txt\", rate = \"1Gbps\" }\n[workload]\nsizes = \"rc3-2000\"\nload = 0.2\n").unwrap();
    let e = topo_build::load(&sc).unwrap_err();
    assert_eq!(e.field, "topology.file");
    assert!(e.message.contains("cannot read"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_shipped_internet2_edge_list_routes_like_the_generator() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let scen = |topo: &str| {
        format!("name = \"e\"\nduration = \"10s\"\ntopology = {{ {topo}, hosts_per_router = 2, rate = \"1Gbps\", hop_delay = \"10ms\" }}\n[workload]\nsizes = \"rc3-2000\"\nload = 0.3\n")
    };
    let from_file = topo_build::graph(
        &topo_build::from_toml_str_named(
            &scen("kind = \"edges\", file = \"topologies/internet2.txt\""),
            &dir.join("x.toml").display().to_string(),
        )
        .unwrap(),
    )
    .unwrap();
    let built =
        topo_build::graph(&topo_build::from_toml_str(&scen("kind = \"internet2\"")).unwrap())
            .unwrap();
    let hops = |g: &brisk_sim::graph::Graph| {
        let r = g.routes().unwrap();
        let n = r.hosts.len();
        let mut out = std::collections::BTreeMap::new();
        for s in 0..n {
            for t in 0..n {
                let name = |k: usize| g.nodes()[r.hosts[k]].name.clone();
                let p = r.path(g, s, t).unwrap();
                let d: u64 = p.iter().map(|&l| g.links()[l].delay_ns()).sum();
                out.insert((name(s), name(t)), (p.len(), d));
            }
        }
        out
    };
    assert_eq!(hops(&from_file), hops(&built));
}

/// (scenario text, field, words the message must contain).
fn bad(text: &str, field: &str, words: &[&str]) {
    let e = topo_build::from_toml_str(text).expect_err(text);
    assert_eq!(e.field, field, "{e}");
    for w in words {
        assert!(e.message.contains(w), "{e} lacks {w:?}");
    }
}

fn two_routers(links: &str) -> String {
    format!(
        "name = \"x\"\nduration = \"10s\"\n[[node]]\nname = \"A\"\nkind = \"router\"\n[[node]]\nname = \"B\"\nkind = \"router\"\n[[node]]\nname = \"a1\"\nkind = \"host\"\n[[node]]\nname = \"b1\"\nkind = \"host\"\n{links}\n[workload]\nsizes = \"rc3-2000\"\nload = 0.3\n"
    )
}

#[test]
fn bad_network_scenarios_name_the_field() {
    let ok_links = "[[link]]\na = \"a1\"\nb = \"A\"\nrate = \"1Gbps\"\n[[link]]\na = \"b1\"\nb = \"B\"\nrate = \"1Gbps\"\n";
    let ab = "[[link]]\na = \"A\"\nb = \"B\"\nrate = \"1Gbps\"\n";
    // Sanity: the base is valid.
    topo_build::from_toml_str(&two_routers(&format!("{ok_links}{ab}"))).unwrap();
    bad(
        &two_routers(&format!("{ok_links}[[link]]\na = \"A\"\nb = \"C\"\n")),
        "link[2]",
        &["unknown node \"C\"", "A->C"],
    );
    bad(
        &two_routers(&format!("{ok_links}[[link]]\na = \"A\"\nb = \"A\"\n")),
        "link[2]",
        &["itself"],
    );
    bad(
        &two_routers(&format!(
            "{ok_links}[[link]]\na = \"A\"\nb = \"B\"\nrate = \"0bps\"\n"
        )),
        "link[2].rate",
        &["> 0"],
    );
    bad(
        &two_routers(&format!("{ok_links}{ab}{ab}")),
        "link[3]",
        &["defined twice"],
    );
    bad(
        &two_routers(ok_links),
        "topology",
        &["unreachable", "\"a1\"", "\"b1\""],
    );
    bad(
        &two_routers(&format!(
            "{ok_links}{ab}[[node]]\nname = \"A\"\nkind = \"host\"\n"
        )),
        "node[4].name",
        &["\"A\" is defined twice"],
    );
    let w = format!("{BASE}flows = 10\n");
    bad(
        &internet2("", &w.replace("load = 0.3", "load = 1.5")),
        "workload.load",
        &["(0, 1]"],
    );
    bad(
        &internet2("", &w.replace("rc3-synthetic", "allman")),
        "workload.sizes",
        &["unknown CDF", "rc3-synthetic"],
    );
    bad(
        &internet2(
            "",
            &w.replace("\"rc3-synthetic\"", "{ cdf = [[100, 0.5]] }"),
        ),
        "workload.sizes.cdf",
        &["probability must be 1"],
    );
    bad(
        &internet2(", k = 4", &w),
        "topology.k",
        &["kind = \"internet2\""],
    );
    bad(
        &internet2("", &format!("{w}[[workload.class]]\nname = \"a\"\nhosts = 0.7\n[[workload.class]]\nname = \"b\"\nhosts = 0.7\n")),
        "workload.class[1].hosts",
        &["`hosts` fractions add up to more than 1"],
    );
    bad(
        &internet2(
            "",
            &format!("{w}[[workload.class]]\nname = \"a\"\nhosts = 0.5\nflows = 0.5\n"),
        ),
        "workload.class[0]",
        &["exactly one of `hosts`"],
    );
    bad(
        &internet2("", &w.replace("initial_cwnd = 4", "initial_cwnd = 0")),
        "workload.tcp.initial_cwnd",
        &["between 1 and 1000"],
    );
    bad(
        &internet2("", &format!("{w}flows_per_s = 3\n")),
        "workload.flows_per_s",
        &["unknown field `flows_per_s`"],
    );
    bad(
        &internet2("", &w.replace("flows = 10", "flows = 0")),
        "workload.flows",
        &["between 1 and"],
    );
    bad(
        &internet2(", hosts_per_router = 0", &w).replace("hosts_per_router = 2, ", ""),
        "topology.hosts_per_router",
        &["between 1 and"],
    );
    bad(
        &internet2(", core_rate_max = \"10Mbps\"", &w),
        "topology.core_rate_max",
        &["at least rate"],
    );
    bad(
        &internet2(", fifo_routers = 1.5", &w),
        "topology.fifo_routers",
        &["[0, 1]"],
    );
    bad(
        &internet2(", fifo_queue = { kind = \"droptail\" }", &w),
        "topology.fifo_queue",
        &["needs fifo_routers"],
    );
    let ft = "name = \"f\"\nduration = \"1s\"\ntopology = { kind = \"fat_tree\", k = 5, rate = \"1Gbps\" }\n[workload]\nsizes = \"rc3-2000\"\nload = 0.3\n";
    bad(ft, "topology.k", &["even"]);
    // No routers twice as a graph: one router's hosts cannot make a workload.
    let star = "name = \"s\"\nduration = \"1s\"\ntopology = { kind = \"dumbbell\", hosts_per_side = 2, rate = \"1Gbps\" }\n[workload]\nsizes = \"rc3-2000\"\nload = 0.3\n";
    bad(star, "topology.bottleneck", &["missing"]);
    // Too many flows for the bound.
    let sc = topo_build::from_toml_str(&internet2(
        "",
        "sizes = { cdf = [[100, 1.0]] }\nload = 1.0\n",
    ))
    .unwrap();
    let e = run_net(&sc, 1).unwrap_err().to_string();
    assert!(e.contains("at most 200000"), "{e}");
}

/// A download workload with a paced flow (RC3-9's video, scaled down): 300 KB at
/// once, then 32 KB every 50 ms up to 620 KB.
fn paced(extra_tcp: &str) -> String {
    let w = BASE.replace(
        "send_buffer = \"8MB\"",
        &format!("send_buffer = \"8MB\"{extra_tcp}"),
    );
    internet2(
        "",
        &format!(
            "{w}flows = 200\ndirection = \"download\"\n[workload.paced]\nstart = \"0.2s\"\nfirst = \"300KB\"\nchunk = \"32KB\"\ninterval = \"50ms\"\ntotal = \"620KB\"\n"
        ),
    )
}

#[test]
fn a_paced_flow_writes_on_its_schedule_and_is_tracked_apart() {
    let r = run(&paced(""));
    assert_all_intact(&r);
    let p: Vec<_> = r.flows.iter().filter(|f| f.paced.is_some()).collect();
    assert_eq!(p.len(), 1);
    let f = p[0];
    assert_eq!(f.size, 620_000);
    assert_eq!(
        f.start,
        brisk_time::Instant::ZERO + brisk_time::Duration::from_millis(200)
    );
    let m = f.paced.as_ref().unwrap();
    let (fb, acked) = (f.first_byte.unwrap(), f.acked.unwrap());
    let (first_acked, first_read) = (m.first_acked.unwrap(), m.first_read.unwrap());
    // The first 300 KB are read, then ACKed, before the whole flow.
    assert!(
        fb < first_read && first_read < first_acked && first_acked < acked,
        "{f:?}"
    );
    // 320 KB after the first write go in 10 chunks of 32 KB, the last at 500 ms: the
    // flow cannot complete before that, and completes soon after on an idle path.
    let fct = acked - fb;
    assert!(fct >= brisk_time::Duration::from_millis(500), "{fct:?}");
    assert!(fct < brisk_time::Duration::from_millis(1500), "{fct:?}");
    // It is not in the FCT statistics.
    let measured = r
        .flows
        .iter()
        .filter(|x| x.start >= brisk_time::Instant::ZERO + r.warmup && x.paced.is_none())
        .count();
    assert_eq!(r.all.flows, measured);
    // Deterministic, and the Poisson arrivals do not move for it.
    let again = run(&paced(""));
    assert_eq!(again.flows, r.flows);
    let without = run(&paced("").replace(
        "[workload.paced]\nstart = \"0.2s\"\nfirst = \"300KB\"\nchunk = \"32KB\"\ninterval = \"50ms\"\ntotal = \"620KB\"\n",
        "",
    ));
    let key = |r: &WorkloadResult| -> Vec<_> {
        r.flows
            .iter()
            .filter(|f| f.paced.is_none())
            .map(|f| (f.src, f.dst, f.size, f.start))
            .collect()
    };
    assert_eq!(key(&without), key(&r));
}

#[test]
fn a_paced_flow_on_rc3_buffers_sooner_than_on_tcp() {
    let tcp = run(&paced(""));
    let rc3 = run(&paced(", rc3 = true, timestamps = false"));
    assert_all_intact(&rc3);
    let buffering = |r: &WorkloadResult| {
        let f = r.flows.iter().find(|f| f.paced.is_some()).unwrap();
        f.paced.as_ref().unwrap().first_acked.unwrap() - f.first_byte.unwrap()
    };
    assert!(
        buffering(&rc3) < buffering(&tcp),
        "{:?} vs {:?}",
        buffering(&rc3),
        buffering(&tcp)
    );
}

#[test]
fn flow_classes_run_at_both_ends_in_download_mode() {
    // Critical flows at DSCP 0, every other packet at DSCP 1: on a download the
    // critical flow's sender accepts on the class's port with the class's TCP.
    let w = BASE.replace("send_buffer = \"8MB\"", "send_buffer = \"8MB\", dscp = 1");
    let text = internet2(
        "",
        &format!("{w}flows = 300\ndirection = \"download\"\n[[workload.class]]\nname = \"critical\"\nflows = 0.2\ncc = \"reno\"\ntcp = {{ initial_cwnd = 10, recv_buffer = \"8MB\", send_buffer = \"8MB\" }}\n"),
    )
    .replace("kind = \"droptail\", time = \"40ms\"", "kind = \"prio\", bands = 2, bytes = 500000");
    let r = run(&text);
    assert_all_intact(&r);
    // IW 10 sends 5-10 packet flows in one round: only if the sender has the class's TCP.
    let b = |c: usize| r.classes[c].stats.bins[1].mean_fct_s.unwrap();
    assert!(b(1) < 0.8 * b(0), "critical {} vs regular {}", b(1), b(0));
}

#[test]
fn bad_paced_and_dscp_fields_are_named() {
    let p = |body: &str| internet2("", &format!("{BASE}flows = 10\n[workload.paced]\n{body}\n"));
    let ok = "start = \"0.1s\"\nfirst = \"1MB\"\nchunk = \"64KB\"\ninterval = \"100ms\"\ntotal = \"2MB\"";
    topo_build::from_toml_str(&p(ok)).unwrap();
    bad(
        &p(&ok.replace("first = \"1MB\"", "first = \"3MB\"")),
        "workload.paced.first",
        &["between 1 byte and total"],
    );
    bad(
        &p(&ok.replace("chunk = \"64KB\"", "chunk = \"0B\"")),
        "workload.paced.chunk",
        &["between 1 byte and total"],
    );
    bad(
        &p(&ok
            .replace("chunk = \"64KB\"", "chunk = \"1B\"")
            .replace("first = \"1MB\"", "first = \"1B\"")),
        "workload.paced.chunk",
        &["at most 1000000"],
    );
    bad(
        &p(&ok.replace("interval = \"100ms\"", "interval = \"0ms\"")),
        "workload.paced.interval",
        &["> 0"],
    );
    bad(
        &p(&ok.replace("start = \"0.1s\"", "start = \"60s\"")),
        "workload.paced.start",
        &["before duration"],
    );
    bad(
        &p(&ok.replace("total = \"2MB\"", "total = \"2GB\"")),
        "workload.paced.total",
        &["1GiB"],
    );
    bad(
        &p(&format!("{ok}\nsize = 3")),
        "workload.paced.size",
        &["unknown field `size`"],
    );
    let d = |tcp: &str| {
        internet2(
            "",
            &format!("{}flows = 10\n", BASE.replace("send_buffer = \"8MB\"", tcp)),
        )
    };
    topo_build::from_toml_str(&d("send_buffer = \"8MB\", dscp = 63")).unwrap();
    bad(
        &d("send_buffer = \"8MB\", dscp = 64"),
        "workload.tcp.dscp",
        &["between 0 and 63"],
    );
    bad(
        &d("send_buffer = \"8MB\", dscp = 1, rc3 = true"),
        "workload.tcp.dscp",
        &["rc3"],
    );
}

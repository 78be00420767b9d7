//! `brisk run --real` runs: brisk and Linux flows mixed on one emulated bottleneck,
//! each behind its own RTT; data arrives intact, the link is shared, and the JSON has
//! every field the simulator's summary has, so the two compare field by field.
//! Root-only (namespaces, TUN); skipped otherwise.

mod common;

use brisk_emu::path::{Dur, PathSpec, QueueSpec, Rate};
use brisk_emu::realrun::{run_real, FlowStack, RealApp, RealFlow, RealResult, RealRun};
use brisk_emu::EmuConfig;
use brisk_time::Duration;
use common::lab_available;

fn flow(stack: FlowStack, rtt_ms: u64, app: RealApp) -> RealFlow {
    RealFlow {
        stack,
        cc: "cubic".into(),
        tcp: brisk_tcp::Config::default(),
        linux: Default::default(),
        start: Duration::ZERO,
        rtt: Duration::from_millis(rtt_ms),
        app,
    }
}

fn run(name: &str, secs: u64, rate: u64, queue: Option<u64>, flows: Vec<RealFlow>) -> RealResult {
    let run = RealRun {
        name: name.into(),
        seed: 1,
        duration: Duration::from_secs(secs),
        path: EmuConfig {
            rtt: None,
            bottleneck: PathSpec {
                rate: Some(Rate(rate)),
                queue: queue.map(QueueSpec::droptail_packets),
                ..PathSpec::default()
            },
            reverse: None,
            seed: 1,
        },
        flows,
        sample_interval: Duration::from_millis(100),
        pcap_dir: None,
        link_log_dir: None,
    };
    let r = run_real(&run).expect("real run");
    eprintln!("{}", r.table());
    r
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

const BULK: RealApp = RealApp::Bulk { bytes: None };

#[test]
fn brisk_and_linux_cubic_share_one_bottleneck_fairly_with_the_simulators_fields() {
    if !lab_available("real runs") {
        return;
    }
    let sc = brisk_sim::Scenario::from_toml_str(
        "name = \"x\"\nduration = \"1s\"\n[bottleneck]\nrate = \"20Mbit\"\n[[flow]]\nrtt = \"20ms\"\napp = { kind = \"bulk\" }\n",
    )
    .unwrap();
    let sim = brisk_sim::run(&sc, 1).unwrap().to_json();
    let r = run(
        "mixed",
        10,
        20_000_000,
        Some(100),
        vec![
            flow(FlowStack::Brisk, 20, BULK),
            flow(FlowStack::Linux, 20, BULK),
        ],
    );
    let total: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
    assert!(total > 16e6, "the flows fill the link: {total}");
    for f in &r.flows {
        assert!(
            f.stream_ok,
            "flow {} ({}) intact: {:?}",
            f.id, f.stack, f.error
        );
        // Every byte sent is counted once: by the end, or in the drain after it.
        assert_eq!(
            f.bytes_delivered + f.drain.bytes,
            f.bytes_sent,
            "flow {} ({})",
            f.id,
            f.stack
        );
        assert!(
            f.goodput_bps >= 0.2 * total,
            "flow {} ({}) gets at least 20 %: {} of {total}",
            f.id,
            f.stack,
            f.goodput_bps
        );
    }
    let jain = r.jain_fairness();
    assert!(jain > 0.7 && jain <= 1.0, "Jain's index {jain}");
    assert!(
        r.bottleneck.utilization > 0.8,
        "{}",
        r.bottleneck.utilization
    );
    let j = r.to_json();
    assert_eq!(j["real"]["jain_fairness"].as_f64(), Some(jain));
    for k in keys(&sim) {
        if k != "sim" {
            assert!(j.get(&k).is_some(), "top-level key {k}");
        }
    }
    for (i, stack) in ["brisk", "linux"].iter().enumerate() {
        for k in keys(&sim["flows"][0]) {
            assert!(j["flows"][i].get(&k).is_some(), "flow key {k}");
        }
        assert_eq!(j["flows"][i]["stack"], *stack);
        assert!(j["flows"][i]["drain"]["retransmitted_packets"].is_u64());
    }
    for k in keys(&sim["bottleneck"]) {
        assert!(j["bottleneck"].get(&k).is_some(), "bottleneck key {k}");
    }
    assert!(j["bottleneck"]["queue_delay_ms"]["mean"].as_f64().is_some());
}

#[test]
fn shorter_rtt_flow_sees_the_smaller_rtt_on_a_shared_link() {
    if !lab_available("real runs") {
        return;
    }
    // brisk at 10 ms and Linux at 50 ms, and the other way round: the ordering
    // follows the RTT, not the stack. A short queue keeps queueing delay small
    // against the 40 ms difference.
    for (short, long) in [
        (FlowStack::Brisk, FlowStack::Linux),
        (FlowStack::Linux, FlowStack::Brisk),
    ] {
        let r = run(
            "two-rtt",
            4,
            20_000_000,
            Some(50),
            vec![flow(short, 10, BULK), flow(long, 50, BULK)],
        );
        let srtt = |i: usize| r.flows[i].srtt.expect("srtt samples").mean / 1e6;
        assert!(r.flows.iter().all(|f| f.stream_ok));
        assert!(
            srtt(0) >= 10.0 && srtt(1) >= 50.0,
            "base RTTs: {} {}",
            srtt(0),
            srtt(1)
        );
        assert!(
            srtt(0) + 20.0 < srtt(1),
            "{short:?} 10 ms {} vs {long:?} 50 ms {}",
            srtt(0),
            srtt(1)
        );
        let rtt0 = r.flows[0].rtt.unwrap().mean;
        let rtt1 = r.flows[1].rtt.unwrap().mean;
        assert!(rtt0 < rtt1, "mean RTT {rtt0} < {rtt1}");
    }
}

#[test]
fn an_unlimited_brisk_flow_leaves_little_to_drain_and_still_fills_the_link() {
    if !lab_available("real runs") {
        return;
    }
    // 10 Mbit/s, 20 ms, a 100-packet queue (150 KB): at the end at most the queue and
    // the BDP are in flight, and the writer keeps at most one second of the link's rate
    // (1.25 MB) plus one 64-KiB write unsent (`notsent_floor`). Without that limit
    // brisk's 4-MiB send buffer was full at the end: over 4 MB, 3.4 s, to drain.
    let r = run(
        "drain",
        3,
        10_000_000,
        Some(100),
        vec![flow(FlowStack::Brisk, 20, BULK)],
    );
    let f = &r.flows[0];
    assert!(f.stream_ok, "intact: {:?}", f.error);
    assert_eq!(f.bytes_delivered + f.drain.bytes, f.bytes_sent);
    assert!(
        f.drain.bytes < 2_000_000,
        "drained {} B in {:?} after the end",
        f.drain.bytes,
        f.drain.duration
    );
    // The limit must not starve the sender: the link stays full.
    assert!(
        r.bottleneck.utilization > 0.9,
        "utilisation {}",
        r.bottleneck.utilization
    );
}

#[test]
fn buffer_overflow_reports_drops_and_their_first_time() {
    if !lab_available("real runs") {
        return;
    }
    // 10 Mbit/s with a 20-packet queue, two bulk flows (one per stack) and a late
    // records flow: slow start overflows the queue within the first second. Records
    // are 1000 bytes every 20 ms (+ up to 2 ms), 25 of them.
    let records = RealApp::Records {
        size: 1000,
        interval: Duration::from_millis(20),
        jitter: Duration::from_millis(2),
        count: Some(25),
    };
    let mut late = flow(FlowStack::Brisk, 20, records);
    late.start = Duration::from_millis(500);
    let r = run(
        "overflow",
        4,
        10_000_000,
        Some(20),
        vec![
            flow(FlowStack::Brisk, 20, BULK),
            flow(FlowStack::Linux, 20, BULK),
            late,
        ],
    );
    let b = &r.bottleneck;
    assert!(b.drops > 0, "drops");
    let first = b.first_drop.expect("first_drop_s is set").as_secs_f64();
    assert!(first > 0.0 && first < 4.0, "first drop at {first}");
    assert!(b.max_queue_packets <= 20 && b.max_queue_packets >= 19);
    let per_flow: Vec<f64> = r
        .flows
        .iter()
        .filter_map(|f| f.first_drop.map(|t| t.as_secs_f64()))
        .collect();
    assert!(!per_flow.is_empty());
    assert!(per_flow.iter().all(|t| *t >= first));
    let j = r.to_json();
    assert_eq!(j["bottleneck"]["first_drop_s"].as_f64(), Some(first));
    assert_eq!(j["bottleneck"]["drops"].as_u64(), Some(b.drops));
    let rec = &r.flows[2];
    assert_eq!(rec.app, "records");
    assert!(rec.stream_ok, "records intact: {:?}", rec.error);
    assert_eq!(rec.bytes_sent, 25_000);
    let lat = rec.record_latency.expect("record latencies");
    // Every record is measured if the flow completed by the end (a dropped SYN costs
    // it a second or more), and at least one otherwise.
    match rec.fct {
        Some(_) => assert_eq!(lat.count, 25),
        None => assert!(lat.count >= 1),
    }
    // At least the one-way base delay (10 ms), plus the queue.
    assert!(lat.min >= 10_000_000, "min latency {}", lat.min);
    assert!(j["flows"][2]["record_latency_ms"]["mean"]
        .as_f64()
        .is_some());
}

#[test]
fn records_report_ack_latency_for_both_stacks_as_the_simulator_defines_it() {
    if !lab_available("real runs") {
        return;
    }
    // Thin records (200 B every 20 ms) from each stack over an uncongested 10 Mbit/s
    // link, 60 ms RTT, no loss: a record's ACK comes one RTT after its first
    // transmission (plus the receiver's ACK delay, if any), never less.
    let records = RealApp::Records {
        size: 200,
        interval: Duration::from_millis(20),
        jitter: Duration::ZERO,
        count: None,
    };
    let mut linux = flow(FlowStack::Linux, 60, records.clone());
    linux.linux.nagle = Some(false);
    let mut brisk = flow(FlowStack::Brisk, 60, records);
    brisk.tcp.nagle = false;
    let r = run("ack-latency", 3, 10_000_000, None, vec![brisk, linux]);
    let j = r.to_json();
    for (i, f) in r.flows.iter().enumerate() {
        assert!(f.stream_ok, "flow {i}: {:?}", f.error);
        let ack = f.ack_latency.expect("ack latency measured");
        let delivered = f.record_latency.expect("record latency").count;
        // Every record delivered by the end was sent; all but the last RTT's worth
        // are ACKed by then.
        assert!(
            ack.count + 5 >= delivered && ack.count <= delivered + 5,
            "flow {i}: {} ACKed, {delivered} delivered",
            ack.count
        );
        assert!(ack.count > 100, "flow {i}: {} samples", ack.count);
        // Plausible: at least the base RTT, at most RTT + a 200 ms delayed ACK.
        assert!(ack.min >= 60_000_000, "flow {i}: min {}", ack.min);
        assert!(ack.p50 < 105_000_000, "flow {i}: p50 {}", ack.p50);
        assert!(ack.max < 270_000_000, "flow {i}: max {}", ack.max);
        let tx = f
            .record_latency_tx
            .expect("latency after first transmission");
        // From the first transmission to delivery: half the RTT and a little more.
        assert!(
            tx.min >= 30_000_000 && tx.p50 < 40_000_000,
            "flow {i}: after-tx {tx:?}"
        );
        let ms = j["flows"][i]["ack_latency_ms"]["p50"].as_f64();
        assert!(ms.is_some_and(|m| m >= 60.0), "flow {i}: JSON {ms:?}");
        assert!(j["flows"][i]["record_latency_after_tx_ms"]["p50"]
            .as_f64()
            .is_some());
    }
    // records.csv: one row per delivered record, generation ≤ first transmission ≤
    // delivery.
    let csv = r.records_csv().expect("records.csv");
    let rows: Vec<Vec<&str>> = csv
        .lines()
        .skip(1)
        .map(|l| l.split(',').collect())
        .collect();
    let delivered: u64 = r
        .flows
        .iter()
        .map(|f| f.record_latency.map_or(0, |s| s.count))
        .sum();
    assert_eq!(rows.len() as u64, delivered);
    for row in &rows {
        let x = |k: usize| row[k].parse::<f64>().unwrap();
        assert!(x(4) <= x(5) && x(5) <= x(6), "{row:?}");
    }
}

#[test]
fn simulator_rejects_linux_flows_with_a_clear_error() {
    let sc = brisk_sim::Scenario::from_toml_str(
        "name = \"x\"\nduration = \"1s\"\n[bottleneck]\nrate = \"20Mbit\"\n[[flow]]\nrtt = \"10ms\"\nstack = \"linux\"\napp = { kind = \"bulk\" }\n",
    )
    .expect("stack = \"linux\" parses");
    assert_eq!(sc.flows[0].stack, brisk_sim::scenario::Stack::Linux);
    let e = brisk_sim::run(&sc, 1).expect_err("the simulator cannot run Linux TCP");
    assert!(e.to_string().contains("--real"), "{e}");
}

#[test]
fn real_runs_reject_a_path_rtt_and_bad_records() {
    let mut run = RealRun::one_bulk_flow(
        "x".into(),
        Duration::from_secs(1),
        EmuConfig::bottleneck(10_000_000, Duration::from_millis(10)),
        FlowStack::Brisk,
        "cubic",
        brisk_tcp::Config::default(),
    )
    .expect("cubic labels the default config's cubic");
    assert_eq!(
        run.flows[0].rtt,
        Duration::from_millis(10),
        "rtt moves to the flow"
    );
    assert!(run.path.rtt.is_none());
    run.path.rtt = Some(Dur(Duration::from_millis(10)));
    let e = run_real(&run).expect_err("path rtt");
    assert!(e.to_string().contains("per flow"), "{e}");
    run.path.rtt = None;
    run.flows[0].app = RealApp::Records {
        size: 10,
        interval: Duration::from_millis(1),
        jitter: Duration::ZERO,
        count: None,
    };
    let e = run_real(&run).expect_err("record smaller than its header");
    assert!(e.to_string().contains("flow[0].app"), "{e}");
}

/// A brisk flow's `cc` only labels the controller its config runs: a label naming
/// another one is refused before anything runs (no lab needed); layers after `+` and
/// a Linux flow's module name are not compared with the brisk config.
#[test]
fn one_bulk_flow_refuses_a_label_that_names_another_controller() {
    let path = || EmuConfig::bottleneck(10_000_000, Duration::from_millis(10));
    let one = |stack, cc: &str, tcp| {
        RealRun::one_bulk_flow("x".into(), Duration::from_secs(1), path(), stack, cc, tcp)
    };
    let e = one(FlowStack::Brisk, "bbr", brisk_tcp::Config::default())
        .expect_err("bbr label over the default (cubic) config");
    let msg = e.to_string();
    assert!(
        msg.contains("flow[0].cc") && msg.contains("\"bbr\"") && msg.contains("\"cubic\""),
        "{msg}"
    );
    let mut bbr = brisk_tcp::Config::default();
    bbr.congestion.controller.base = brisk_tcp::cc::CcAlgorithm::Bbr;
    assert!(one(FlowStack::Brisk, "bbr", bbr.clone()).is_ok());
    assert!(one(FlowStack::Brisk, "cubic", bbr).is_err());
    assert!(one(FlowStack::Brisk, "cubic+dc", brisk_tcp::Config::default()).is_ok());
    assert!(one(FlowStack::Linux, "bbr", brisk_tcp::Config::default()).is_ok());
}

/// `[flow.tcp]` knobs of a Linux flow reach the kernel: seen on the wire in the pcap
/// (the SYN's ECN flags and MSS, the initial window's flight) and in the data.
#[test]
fn linux_knobs_are_applied_in_the_senders_namespace() {
    if !lab_available("linux knobs") {
        return;
    }
    use brisk_emu::realrun::LinuxKnobs;
    use brisk_wire::tcp::Flags;
    let dir = std::env::temp_dir().join(format!("brisk-linux-knobs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let mut f = flow(
        FlowStack::Linux,
        40,
        RealApp::Bulk {
            bytes: Some(2_000_000),
        },
    );
    f.linux = LinuxKnobs {
        ecn: Some(true),
        mss: Some(1000),
        initial_cwnd: Some(4),
        nagle: Some(false),
        recv_buffer: Some(4 << 20),
        ..LinuxKnobs::default()
    };
    let run = RealRun {
        name: "linux-knobs".into(),
        seed: 1,
        duration: Duration::from_secs(3),
        path: EmuConfig {
            rtt: None,
            bottleneck: PathSpec {
                rate: Some(Rate(50_000_000)),
                ..PathSpec::default()
            },
            reverse: None,
            seed: 1,
        },
        flows: vec![f],
        sample_interval: Duration::from_millis(100),
        pcap_dir: Some(dir.clone()),
        link_log_dir: Some(dir.clone()),
    };
    let r = run_real(&run).expect("real run");
    assert!(r.flows[0].stream_ok && r.flows[0].bytes_delivered == 2_000_000);
    let pkts = brisk_emu::pcapread::read(&dir.join("sender.pcap")).unwrap();
    let tcp: Vec<(u64, brisk_wire::tcp::TcpRepr)> = pkts
        .iter()
        .filter_map(|p| {
            brisk_wire::packet::parse_tcp_packet(&p.data)
                .ok()
                .map(|(_, t)| (p.ts_ns, t))
        })
        .collect();
    let syn = tcp.iter().find(|(_, t)| t.flags.syn()).expect("a SYN").1;
    assert_eq!(syn.mss, Some(1000), "route mtu lock 1040 gives MSS 1000");
    assert_eq!(
        syn.flags.bits() & (Flags::ECE | Flags::CWR).bits(),
        (Flags::ECE | Flags::CWR).bits(),
        "an ECN-setup SYN"
    );
    // Initial window: the data segments sent before the first ACK of data can arrive
    // (one RTT, 40 ms, after the first one) number initcwnd = 4, not Linux's 10.
    let data: Vec<u64> = tcp
        .iter()
        .filter(|(_, t)| !t.payload.is_empty())
        .map(|(ts, _)| *ts)
        .collect();
    let first = data[0];
    let first_flight = data.iter().filter(|&&t| t < first + 30_000_000).count();
    assert_eq!(first_flight, 4, "initcwnd 4");
    // The bottleneck's Mahimahi log: what left the link is the data plus headers.
    let log = std::fs::read_to_string(dir.join("bottleneck.mm.log")).unwrap();
    // In time order and readable by mm-throughput-graph, as mm-link's logs.
    brisk_net::mmlog::check_log(&log).expect("bottleneck.mm.log");
    let departed: u64 = log
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.get(1) == Some(&"-")).then(|| f[2].parse::<u64>().unwrap())
        })
        .sum();
    assert!(
        departed > 2_000_000 && departed < 2_200_000,
        "departed {departed}"
    );
    assert!(
        log.lines().any(|l| l.ends_with(" # 1500")),
        "capacity lines"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

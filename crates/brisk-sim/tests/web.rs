//! The `web` app: a page over persistent connections (the TLP paper's web test).

use brisk_sim::{run, Scenario};

fn page(loss: &str, objects: &str, connections: u32, queue: u32) -> Scenario {
    let text = format!(
        r#"
name = "web"
duration = "60s"
[bottleneck]
rate = "100Mbit"
[reverse]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = {queue} }}
{loss}
[[flow]]
rtt = "40ms"
app = {{ kind = "web", objects = [{objects}], connections = {connections} }}
[flow.tcp]
ack = {{ delayed = true }}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

fn sizes(n: usize) -> String {
    (0..n)
        .map(|i| (3000 + 7919 * i % 60_000).to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

#[test]
fn a_page_loads_html_first_then_spreads_objects_over_its_connections() {
    let r = run(&page("", &sizes(30), 6, 1000), 1).unwrap();
    let f = &r.flows[0];
    assert!(f.stream_ok, "every connection's streams intact");
    let w = f.web.as_ref().expect("web results");
    assert_eq!(w.objects.len(), 30);
    let html_done = w.objects[0].done_ns.unwrap();
    for o in &w.objects[1..] {
        assert!(
            o.requested_ns.unwrap() >= html_done,
            "objects wait for the HTML"
        );
        assert!(o.done_ns.is_some(), "every object arrives");
    }
    let used: std::collections::BTreeSet<u32> = w.objects.iter().map(|o| o.conn).collect();
    assert_eq!(used.len(), 6, "all six connections carry objects: {used:?}");
    // Without loss (a queue that never fills) no retransmission, so no object is selected as a tail loss.
    assert_eq!(w.retransmits, 0);
    assert!(w.tail_retransmitted.iter().all(|t| !t));
    let total: u64 = w.objects.iter().map(|o| o.size).sum();
    assert_eq!(
        f.bytes_delivered, total,
        "the browser read every object byte"
    );
    assert!(f.fct.is_some() && f.fct == w.load_time);
    // Each object on a connection follows the previous one there.
    for c in 0..6 {
        let mut next = 0;
        for o in w.objects.iter().filter(|o| o.conn == c) {
            assert_eq!(o.resp_start, next);
            next += o.size;
        }
    }
}

#[test]
fn one_connection_fetches_in_order() {
    let r = run(&page("", &sizes(5), 1, 1000), 1).unwrap();
    let w = r.flows[0].web.as_ref().unwrap();
    let done: Vec<u64> = w.objects.iter().map(|o| o.done_ns.unwrap()).collect();
    assert!(done.windows(2).all(|d| d[0] < d[1]), "{done:?}");
    assert!(w.objects.iter().all(|o| o.conn == 0));
}

#[test]
fn losses_select_objects_with_a_retransmitted_tail_and_the_data_stays_intact() {
    let loss = r#"loss = { kind = "gilbert_elliott", p_good_bad = 0.02, p_bad_good = 0.5 }"#;
    let mut tails = 0;
    for seed in 1..=6 {
        let r = run(&page(loss, &sizes(40), 6, 100), seed).unwrap();
        let f = &r.flows[0];
        assert!(f.stream_ok, "seed {seed}");
        let w = f.web.as_ref().unwrap();
        assert!(w.load_time.is_some(), "seed {seed}: the page completes");
        assert!(
            w.retransmits > 0,
            "seed {seed}: loss forces retransmissions"
        );
        assert!(w.data_segs_out > w.retransmits);
        tails += w.tail_retransmitted.iter().filter(|&&t| t).count();
        assert!(w.tail_retransmitted.iter().filter(|&&t| t).count() <= w.objects.len());
    }
    assert!(
        tails > 0,
        "some objects lose one of their last four segments"
    );
}

/// The layered records source (the CDG experiment's SCC substitute) sends fewer layers
/// when a bulk CUBIC flow fills the queue than when it is alone, and the exponential
/// think time of request/response gives gaps with the configured mean.
#[test]
fn layered_source_backs_off_under_a_full_queue_and_think_exp_gaps_average_think() {
    let run = |with_cubic: bool| {
        let mut text = String::from(
            "name = \"layers\"\nduration = \"60s\"\n[bottleneck]\nrate = \"1Mbit\"\nqueue = { kind = \"droptail\", time = \"300ms\" }\n\
             [[flow]]\nrtt = \"100ms\"\ncc = \"cdg\"\napp = { kind = \"records\", size = 1042, interval = \"33333us\", layers = 4 }\n",
        );
        if with_cubic {
            text.push_str("[[flow]]\nrtt = \"100ms\"\ncc = \"cubic\"\nstart = \"10s\"\napp = { kind = \"bulk\" }\n");
        }
        let sc = brisk_sim::Scenario::from_toml_str(&text).unwrap();
        let r = brisk_sim::run(&sc, 1).unwrap();
        assert!(r.flows.iter().all(|f| f.stream_ok));
        r.flows[0].bytes_delivered as f64
    };
    let alone = run(false);
    let shared = run(true);
    // Alone it reaches most of the 1 Mbit/s; beside CUBIC it drops layers.
    assert!(alone > 0.4 * 60.0 * 1e6 / 8.0, "alone {alone}");
    assert!(shared < 0.7 * alone, "shared {shared} alone {alone}");

    let sc = brisk_sim::Scenario::from_toml_str(
        "name = \"think\"\nduration = \"400s\"\n[bottleneck]\nrate = \"100Mbit\"\n\
         [[flow]]\nrtt = \"10ms\"\napp = { kind = \"request_response\", request = 1000, response = 1000, think = \"2s\", think_exp = true }\n",
    )
    .unwrap();
    let r = brisk_sim::run(&sc, 1).unwrap();
    let n = r.flows[0].record_latency.map_or(0, |l| l.count);
    // 400 s / (2 s mean gap + ~20 ms exchange) ≈ 198 exchanges; a fixed 2 s gives 198
    // exactly, exponential gaps about that many ± 3σ (σ ≈ 14).
    assert!((150..250).contains(&n), "{n} exchanges");
}

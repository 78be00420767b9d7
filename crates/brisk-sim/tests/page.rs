//! The `page` app (one page load on one connection, `brisk_sim::page_app`) in its
//! three framings — pipelined HTTP/1.1, msTCP over uCOBS (unordered with uTCP), and
//! HTTP/2-style frames — through 1.5 Mbit/s links with loss both ways: every object
//! arrives whole, each byte checked against what the object must hold.

use brisk_sim::page_app::PageResult;
use brisk_sim::{run, Scenario};

const SIZES: [u64; 9] = [9_000, 30_000, 1, 700, 120_000, 4_096, 15_000, 2_000, 60_000];

fn scenario(framing: &str, loss: f64, extra: &str) -> String {
    let objects = SIZES.map(|s| format!("\"{s}B\"")).join(", ");
    let unordered = framing == "mstcp";
    let lossy = format!("loss = {{ kind = \"bernoulli\", p = {loss} }}");
    format!(
        "name = \"page\"\nduration = \"60s\"\n\
         [bottleneck]\nrate = \"1500kbit\"\nqueue = {{ kind = \"droptail\", packets = 50 }}\n{lossy}\n\
         [reverse]\nrate = \"1500kbit\"\nqueue = {{ kind = \"droptail\", packets = 50 }}\n{lossy}\n\
         [[flow]]\nrtt = \"60ms\"\n\
         app = {{ kind = \"page\", objects = [{objects}], framing = \"{framing}\"{extra} }}\n\
         [flow.tcp]\nnagle = false\nsend_buffer = \"32KB\"\nunordered = {unordered}\n"
    )
}

fn load(framing: &str, loss: f64, seed: u64) -> PageResult {
    let sc = Scenario::from_toml_str(&scenario(framing, loss, "")).unwrap();
    let r = run(&sc, seed).unwrap();
    let f = &r.flows[0];
    assert_eq!(f.app, "page");
    assert!(f.error.is_none(), "{:?}", f.error);
    let p = f.page.clone().expect("a page flow");
    assert!(p.clean(), "{framing} seed {seed}: {p:?}");
    assert_eq!(f.bytes_delivered, SIZES.iter().sum::<u64>());
    assert!(f.fct.is_some());
    assert!(p.plt_ns().is_some() && p.mean_ttfb_ns().is_some());
    p
}

#[test]
fn every_object_arrives_whole_in_every_framing_with_loss() {
    let mut held = 0;
    for seed in 1..=3 {
        for framing in ["pipelined", "mstcp", "h2"] {
            let p = load(framing, 0.03, seed);
            if framing == "mstcp" {
                held += p.records_out_of_order;
            } else {
                assert_eq!(p.records_out_of_order, 0);
            }
        }
    }
    assert!(
        held > 0,
        "losses give out-of-order chunks to the msTCP browser"
    );
}

#[test]
fn interleaving_starts_every_object_sooner_than_pipelining() {
    let (a, b, c) = (
        load("pipelined", 0.0, 1),
        load("mstcp", 0.0, 1),
        load("h2", 0.0, 1),
    );
    let (ta, tb, tc) = (
        a.mean_ttfb_ns().unwrap(),
        b.mean_ttfb_ns().unwrap(),
        c.mean_ttfb_ns().unwrap(),
    );
    assert!(tb < 0.8 * ta && tc < 0.8 * ta, "ttfb {ta} {tb} {tc}");
    // The same bytes cross the same link: load times within 10 %.
    let (pa, pb) = (a.plt_ns().unwrap() as f64, b.plt_ns().unwrap() as f64);
    assert!((pb / pa - 1.0).abs() < 0.1, "plt {pa} {pb}");
}

#[test]
fn the_same_seed_gives_the_same_load() {
    assert_eq!(load("mstcp", 0.02, 5), load("mstcp", 0.02, 5));
}

#[test]
fn bad_settings_name_the_field() {
    let err = |extra: &str, framing: &str| {
        Scenario::from_toml_str(&scenario(framing, 0.0, extra))
            .unwrap_err()
            .to_string()
    };
    assert!(err(", chunk = \"100B\"", "pipelined").contains("app.chunk"));
    assert!(err(", frame = \"0B\"", "h2").contains("app.frame"));
    assert!(err(", request = \"4B\"", "h2").contains("app.request"));
    let e = Scenario::from_toml_str(&scenario("mstcp", 0.0, "").replace("\"1B\"", "\"0B\""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("app.objects[2]"), "{e}");
    let e = Scenario::from_toml_str(&scenario("spdy", 0.0, ""))
        .unwrap_err()
        .to_string();
    assert!(e.contains("framing") || e.contains("spdy"), "{e}");
}

//! The `udp` app: VoIP-sized datagrams as IP/UDP packets through the same bottleneck
//! as TCP. Without loss every datagram arrives once, intact, at the path's delay;
//! through a lossy or overflowing queue the missing ones are exactly those the
//! bottleneck dropped; a bad field is an error naming it; runs are deterministic.

use brisk_sim::{run, RunResult, Scenario};

fn scenario(loss: &str, queue: u32, bulk: bool, extra: &str) -> String {
    let bulk = if bulk {
        "[[flow]]\nrtt = \"60ms\"\napp = { kind = \"bulk\" }\n"
    } else {
        ""
    };
    format!(
        r#"
name = "udp"
duration = "12s"
[bottleneck]
rate = "3Mbit"
queue = {{ kind = "droptail", packets = {queue} }}
{loss}
[[flow]]
rtt = "60ms"
app = {{ kind = "udp", size = "640B", interval = "20ms", count = 500{extra} }}
{bulk}"#
    )
}

fn udp(r: &RunResult) -> &brisk_sim::run::DatagramResult {
    let f = &r.flows[0];
    assert_eq!(f.app, "udp");
    f.datagrams
        .as_ref()
        .expect("a udp flow has datagram results")
}

#[test]
fn without_loss_every_datagram_arrives_once_at_the_path_delay() {
    let sc = Scenario::from_toml_str(&scenario("", 50, false, "")).unwrap();
    let r = run(&sc, 1).unwrap();
    let f = &r.flows[0];
    let d = udp(&r);
    assert_eq!((d.generated, d.delivered, d.bad), (500, 500, 0));
    assert!(f.stream_ok && f.error.is_none());
    assert_eq!(f.bytes_sent, 500 * 640);
    assert_eq!(f.bytes_delivered, 500 * 640);
    assert!(f.fct.is_some(), "a counted flow completes");
    // One-way: 30 ms of propagation plus 668 B at 3 Mbit/s (1.78 ms); nothing queues.
    for &(i, g, t) in &d.deliveries {
        let ms = (t - g) as f64 / 1e6;
        assert!((31.7..31.9).contains(&ms), "datagram {i}: {ms} ms");
        assert_eq!(g, d.deliveries[0].1 + i * 20_000_000, "on schedule");
    }
    // No TCP connection: no RTT samples, nothing retransmitted, no congestion control.
    assert!(f.rtt.is_none() && f.retransmitted_packets == 0);
    assert_eq!(f.cc, "none");
    assert_eq!(r.bottleneck.drops, 0);
}

#[test]
fn lost_datagrams_are_exactly_the_bottlenecks_drops() {
    // A bulk TCP flow fills a short queue; UDP loses what overflows, with no
    // retransmission, and what arrives is intact.
    let sc = Scenario::from_toml_str(&scenario("", 20, true, "")).unwrap();
    let r = run(&sc, 2).unwrap();
    let d = udp(&r);
    assert_eq!(d.bad, 0);
    let udp_drops = r
        .bottleneck
        .drop_records
        .iter()
        .filter(|x| x.flow == 0)
        .count() as u64;
    assert!(udp_drops > 0, "the queue overflowed");
    assert_eq!(d.delivered + udp_drops, d.generated);
    let mut idx: Vec<u64> = d.deliveries.iter().map(|x| x.0).collect();
    let n = idx.len();
    idx.dedup();
    assert_eq!(idx.len(), n, "each once, in order (a FIFO path)");
    assert_eq!(r.flows[0].retransmitted_packets, 0);
    // Random loss too.
    let sc = Scenario::from_toml_str(&scenario(
        "loss = { kind = \"bernoulli\", p = 0.05 }",
        50,
        false,
        "",
    ))
    .unwrap();
    let r = run(&sc, 3).unwrap();
    let d = udp(&r);
    let lost = d.generated - d.delivered;
    assert!((10..=45).contains(&lost), "5 % of 500, got {lost}");
    assert!(
        r.flows[0].fct.is_none(),
        "an incomplete flow has no completion time"
    );
}

#[test]
fn runs_are_deterministic() {
    let sc = Scenario::from_toml_str(&scenario("", 20, true, ", jitter = \"5ms\"")).unwrap();
    let opts = brisk_sim::RunOptions {
        trace_hash: true,
        ..Default::default()
    };
    let a = brisk_sim::run_with(&sc, 4, &opts).unwrap();
    let b = brisk_sim::run_with(&sc, 4, &opts).unwrap();
    assert_eq!(a.trace_sha256, b.trace_sha256);
    assert_eq!(udp(&a).deliveries, udp(&b).deliveries);
}

#[test]
fn bad_fields_are_errors_that_name_them() {
    let cases = [
        (
            "size = \"640B\"",
            "size = \"10B\"",
            "flow[0].app.size",
            "24",
        ),
        (
            "size = \"640B\"",
            "size = \"70000B\"",
            "flow[0].app.size",
            "65507",
        ),
        (
            "interval = \"20ms\"",
            "interval = \"0s\"",
            "flow[0].app.interval",
            "> 0",
        ),
        ("count = 500", "count = 0", "flow[0].app.count", "> 0"),
        (
            "count = 500",
            "count = 5, urgent_every = 2",
            "flow[0].app",
            "urgent_every",
        ),
    ];
    for (from, to, field, says) in cases {
        let text = scenario("", 50, false, "").replacen(from, to, 1);
        let e = Scenario::from_toml_str(&text).unwrap_err();
        assert!(e.field.starts_with(field), "{to}: field {}", e.field);
        assert!(e.message.contains(says), "{to}: {}", e.message);
    }
}

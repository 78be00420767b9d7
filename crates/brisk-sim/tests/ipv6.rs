//! The dumbbell over IPv6 (`ip = "v6"`, per scenario or per flow): a standard bulk
//! transfer delivers the same stream intact as over IPv4, at a similar goodput (the
//! 20-byte larger header and 20-byte smaller MSS change the numbers slightly, so the
//! test asserts both work, not equality), and the two families share a bottleneck.

use brisk_sim::{run, Scenario};

fn bulk(ip_line: &str, flow_ip: &str) -> Scenario {
    let text = format!(
        r#"
name = "bulk-ip"
duration = "20s"
{ip_line}
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 50 }}
loss = {{ kind = "bernoulli", p = 0.005 }}
[[flow]]
rtt = "40ms"
app = {{ kind = "bulk", bytes = 4000000 }}
{flow_ip}
"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn bulk_over_ipv6_delivers_the_stream_intact_at_a_goodput_like_ipv4() {
    let v4 = run(&bulk("", ""), 1).unwrap();
    let v6 = run(&bulk(r#"ip = "v6""#, ""), 1).unwrap();
    let (f4, f6) = (&v4.flows[0], &v6.flows[0]);
    for (name, f, res) in [("v4", f4, &v4), ("v6", f6, &v6)] {
        // stream_ok: no bad byte, and the SHA-256 of what the receiver read equals
        // the sender's (the same seeded pattern in both runs).
        assert!(f.stream_ok, "{name}: {}", res.table());
        assert_eq!(f.bytes_delivered, 4_000_000, "{name}: {}", res.table());
        assert!(f.fct.is_some(), "{name} completes");
    }
    assert!(v6.bottleneck.drops > 0, "the test needs losses");
    // The sender's segments: 1460 − 12 over IPv4, 1440 − 12 over IPv6.
    let mss = |f: &brisk_sim::FlowResult| f.sender_info.as_ref().map(|i| i.mss);
    assert_eq!((mss(f4), mss(f6)), (Some(1448), Some(1428)));
    let ratio = f6.goodput_bps / f4.goodput_bps;
    eprintln!(
        "goodput v4 {:.3} Mbit/s, v6 {:.3} Mbit/s, v6/v4 {ratio:.3}; fct v4 {:?}, v6 {:?}",
        f4.goodput_bps / 1e6,
        f6.goodput_bps / 1e6,
        f4.fct.unwrap(),
        f6.fct.unwrap()
    );
    assert!((0.8..1.2).contains(&ratio), "v6/v4 goodput {ratio:.3}");
}

#[test]
fn a_v4_and_a_v6_flow_share_the_bottleneck() {
    let text = r#"
name = "mixed"
duration = "10s"
[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 50 }
[[flow]]
rtt = "20ms"
app = { kind = "bulk", bytes = 2000000 }
[[flow]]
rtt = "20ms"
ip = "v6"
app = { kind = "bulk", bytes = 2000000 }
"#;
    let res = run(&Scenario::from_toml_str(text).unwrap(), 3).unwrap();
    for f in &res.flows {
        assert!(f.stream_ok, "{}", res.table());
        assert_eq!(f.bytes_delivered, 2_000_000, "{}", res.table());
    }
    let mss: Vec<_> = res
        .flows
        .iter()
        .map(|f| f.sender_info.as_ref().map(|i| i.mss))
        .collect();
    assert_eq!(mss, [Some(1448), Some(1428)]);
}

#[test]
fn a_bad_ip_version_names_the_field() {
    let good = r#"
name = "t"
duration = "1s"
[bottleneck]
rate = "10Mbit"
[[flow]]
rtt = "10ms"
app = { kind = "bulk" }
"#;
    for (bad, field) in [
        (format!("ip = \"v5\"\n{good}"), "ip"),
        (
            good.replace("[[flow]]\n", "[[flow]]\nip = \"ipv6\"\n"),
            "flow[0].ip",
        ),
    ] {
        let e = Scenario::from_toml_str_named(&bad, "x.toml").expect_err("accepted");
        assert_eq!(e.field, field, "{e}");
        assert!(e.message.contains("v4") && e.message.contains("v6"), "{e}");
    }
}

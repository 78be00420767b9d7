use super::*;

#[test]
fn rtt_is_split_over_the_two_directions() {
    let cfg = EmuConfig::from_toml(
        r#"
        rtt = "10ms"
        [bottleneck]
        rate = "10Mbit"
        delay = "1ms"
        "#,
    )
    .unwrap();
    let (mut fwd, mut rev) = cfg.build().unwrap();
    assert!(fwd.impairment().is_none());
    let pkt = |id| Packet {
        data: vec![0; 1250],
        id,
        flow: 0,
        sent_at: Instant::ZERO,
        l4_csum_valid: false,
    };
    fwd.handle_packet(Instant::ZERO, pkt(1));
    rev.handle_packet(Instant::ZERO, pkt(2));
    // Forward: 1 ms serialisation + 5 ms (rtt/2) + 1 ms own delay.
    assert_eq!(fwd.poll_timeout(), Some(Instant::from_millis(7)));
    // Reverse: unlimited rate, rtt/2 only.
    assert_eq!(rev.poll_timeout(), Some(Instant::from_millis(5)));
    assert!(fwd.poll_packet(Instant::from_millis(7)).is_some());
}

#[test]
fn impairments_add_an_element_only_when_asked_for() {
    let cfg = EmuConfig::from_toml(
        r#"
        [bottleneck]
        jitter = { max = "2ms", reorder = true }
        duplicate = 0.1
        "#,
    )
    .unwrap();
    let (fwd, rev) = cfg.build().unwrap();
    assert!(fwd.impairment().is_some());
    assert!(rev.impairment().is_none());
}

#[test]
fn bad_configs_are_errors_not_panics() {
    for bad in [
        "[bottleneck]\nrate = 0",
        "[bottleneck]\nspeed = \"1Mbit\"",
        "[bottleneck]\nloss = { kind = \"bernoulli\", p = 2.0 }",
        "[bottleneck]\nqueue = { kind = \"droptail\", packets = 0 }",
        "[reverse]\njitter = { max = \"11s\" }",
        "rtt = \"ten\"",
    ] {
        let r = EmuConfig::from_toml(bad).and_then(|c| c.build().map(drop));
        assert!(r.is_err(), "{bad:?} accepted");
    }
}

#[test]
fn range_errors_name_the_direction_and_the_key() {
    let cfg = EmuConfig::from_toml("[reverse]\nloss = { kind = \"bernoulli\", p = 2.0 }").unwrap();
    let e = cfg.build().map(drop).unwrap_err().to_string();
    assert!(e.contains("reverse.loss.p: must be a probability"), "{e}");
}

#[test]
fn loss_and_outages_map_onto_brisk_net_models() {
    let cfg = EmuConfig::from_toml(
        r#"
        [bottleneck]
        loss = { kind = "list", packets = [1] }
        outages = [{ start = "1s", duration = "1s" }]
        "#,
    )
    .unwrap();
    let (mut fwd, _) = cfg.build().unwrap();
    for (i, t) in [(0, 0), (1, 1), (2, 1500), (3, 2500)] {
        fwd.handle_packet(
            Instant::from_millis(t),
            Packet {
                data: vec![0; 100],
                id: i,
                flow: 0,
                sent_at: Instant::from_millis(t),
                l4_csum_valid: false,
            },
        );
    }
    let mut out = Vec::new();
    while let Some(p) = fwd.poll_packet(Instant::from_secs(3)) {
        out.push(p.id);
    }
    // Packet 1 lost by the list, packet 2 by the outage.
    assert_eq!(out, vec![0, 3]);
}

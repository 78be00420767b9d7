use super::*;
use crate::element::Element;
use crate::stats::DropReason;

fn link_cfg(s: &str) -> Result<LinkConfig, toml::de::Error> {
    toml::from_str(s)
}

#[test]
fn durations_parse_exactly_in_every_unit() {
    let ok = [
        ("1.5ms", 1_500_000),
        ("250us", 250_000),
        ("2s", 2_000_000_000),
        ("7ns", 7),
        ("0.000000001s", 1),
        ("1_000ms", 1_000_000_000),
        (".5s", 500_000_000),
    ];
    for (s, ns) in ok {
        assert_eq!(parse_duration(s), Ok(Duration::from_nanos(ns)), "{s}");
    }
    for s in [
        "10",
        "ms",
        "1.2.3ms",
        "5 minutes",
        "0.5ns",
        "99999999999999999999s",
    ] {
        assert!(parse_duration(s).is_err(), "{s}");
    }
}

#[test]
fn full_link_config_parses_and_builds() {
    let cfg = link_cfg(
        r#"
        rate_bps = 10_000_000
        delay = "20ms"
        overhead_bytes = 38
        queue = { kind = "droptail", bytes = 150000 }
        loss = { kind = "gilbert_elliott", p_gb = 0.01, p_bg = 0.3 }
        outages = [{ start = "2s", end = "3.5s" }]
        "#,
    )
    .unwrap();
    assert_eq!(cfg.delay, Duration::from_millis(20));
    assert_eq!(
        cfg.loss,
        LossConfig::GilbertElliott {
            p_gb: 0.01,
            p_bg: 0.3,
            loss_good: 0.0,
            loss_bad: 1.0
        }
    );
    assert_eq!(cfg.outages[0].end, Duration::from_millis(3500));
    let link = cfg.build(1).unwrap();
    assert_eq!(link.rate_bps(), 10_000_000);
}

#[test]
fn empty_link_config_is_an_unlimited_wire_with_a_default_queue() {
    let cfg = link_cfg("").unwrap();
    assert_eq!(cfg, LinkConfig::default());
    let mut l = cfg.build(0).unwrap();
    l.handle_packet(Instant::from_millis(3), crate::testutil::pkt(0, 1500));
    assert!(l.poll_packet(Instant::from_millis(3)).is_some());
}

#[test]
fn loss_kinds_parse() {
    #[derive(Deserialize)]
    struct W {
        loss: LossConfig,
    }
    let p = |s: &str| toml::from_str::<W>(s).map(|w| w.loss);
    assert_eq!(p(r#"loss = { kind = "none" }"#).unwrap(), LossConfig::None);
    assert_eq!(
        p(r#"loss = { kind = "bernoulli", p = 0.01 }"#).unwrap(),
        LossConfig::Bernoulli { p: 0.01 }
    );
    assert_eq!(
        p(r#"loss = { kind = "list", drop = [3, 17] }"#).unwrap(),
        LossConfig::List { drop: vec![3, 17] }
    );
    assert!(p(r#"loss = { kind = "bernoulli", p = 0.01, q = 1 }"#).is_err());
    assert!(p(r#"loss = { kind = "uniform", p = 0.01 }"#).is_err());
}

#[test]
fn unknown_fields_are_rejected() {
    assert!(link_cfg("rate = 5").is_err());
    assert!(link_cfg(r#"queue = { kind = "droptail", packet = 10 }"#).is_err());
    assert!(link_cfg(r#"outages = [{ start = "1s", end = "2s", why = "x" }]"#).is_err());
    assert!(toml::from_str::<ImpairConfig>("jiter = \"1ms\"").is_err());
}

#[test]
fn queue_needs_exactly_one_limit() {
    let both = link_cfg(r#"queue = { kind = "droptail", packets = 10, bytes = 100 }"#).unwrap();
    assert!(both.build(0).unwrap_err().to_string().contains("queue"));
    let none = link_cfg(r#"queue = { kind = "droptail" }"#).unwrap();
    assert!(none.build(0).is_err());
    let zero = link_cfg(r#"queue = { kind = "droptail", packets = 0 }"#).unwrap();
    assert!(zero.build(0).is_err());
}

#[test]
fn bad_values_surface_as_errors_naming_the_field() {
    let cfg = link_cfg(r#"loss = { kind = "bernoulli", p = 1.01 }"#).unwrap();
    let e = cfg.build(0).unwrap_err();
    assert!(e.to_string().contains("loss.p"), "{e}");
    let cfg = link_cfg(r#"outages = [{ start = "2s", end = "1s" }]"#).unwrap();
    assert!(cfg.build(0).unwrap_err().to_string().contains("outages"));
}

#[test]
fn configured_outage_drops_arrivals() {
    let cfg = link_cfg(r#"outages = [{ start = "1ms", end = "2ms" }]"#).unwrap();
    let mut l = cfg.build(0).unwrap();
    for (i, ms) in [0u64, 1, 2].into_iter().enumerate() {
        l.handle_packet(
            Instant::from_millis(ms),
            crate::testutil::pkt(i as u64, 100),
        );
    }
    assert_eq!(l.counters().dropped(DropReason::Outage).packets, 1);
}

#[test]
fn impair_config_parses_and_builds() {
    let cfg: ImpairConfig = toml::from_str(
        r#"
        jitter = "5ms"
        reorder = true
        duplicate_p = 0.01
        corrupt_p = 0.001
        "#,
    )
    .unwrap();
    assert_eq!(cfg.jitter, Duration::from_millis(5));
    assert!(cfg.reorder);
    assert_eq!(cfg.limit_packets, DEFAULT_IMPAIR_LIMIT);
    cfg.build(3).unwrap();
    let bad = ImpairConfig {
        corrupt_p: -1.0,
        ..ImpairConfig::default()
    };
    assert!(bad.build(0).unwrap_err().to_string().contains("corrupt_p"));
}

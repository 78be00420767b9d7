use super::*;
use brisk_net::queue::{PrioParams, QueueLimit};
use brisk_net::stats::DropReason;
use brisk_net::testutil::pkt;
use brisk_net::Element;
use brisk_time::Instant;

const SEEDS: LinkSeeds = LinkSeeds { loss: 1, impair: 2 };

fn spec(s: &str) -> Result<LinkSpec, toml::de::Error> {
    toml::from_str(s)
}

fn field(s: &str) -> String {
    spec(s).unwrap().validate("l").unwrap_err().field
}

#[test]
fn full_link_spec_parses_and_builds_both_stages() {
    let l = spec(
        r#"
        rate = "10Mbit"
        delay = "20ms"
        queue = { kind = "droptail", bytes = "150KB" }
        loss = { kind = "gilbert_elliott", p_good_bad = 0.01, p_bad_good = 0.3 }
        jitter = { max = "1ms", reorder = true }
        duplicate = 0.01
        corrupt = 0.001
        outages = [{ start = "2s", duration = "1.5s" }]
        "#,
    )
    .unwrap();
    assert_eq!(l.delay, Some(Dur(Duration::from_millis(20))));
    assert_eq!(
        l.loss,
        Some(LossSpec::GilbertElliott {
            p_good_bad: 0.01,
            p_bad_good: 0.3,
            loss_good: 0.0,
            loss_bad: 1.0
        })
    );
    l.validate("bottleneck").unwrap();
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap();
    assert_eq!(e.link.rate_bps(), 10_000_000);
    assert!(e.impairment.is_some());
    assert_eq!(l.queue_limits(), (QueueLimit::Bytes(150_000), None));
}

#[test]
fn impairment_stage_exists_only_when_asked_for() {
    for (s, want) in [
        ("", false),
        ("duplicate = 0.0\ncorrupt = 0.0", false),
        ("jitter = { max = \"0ms\" }", true),
        ("duplicate = 0.1", true),
        ("corrupt = 0.1", true),
    ] {
        let e = spec(s).unwrap().build("l", Duration::ZERO, SEEDS).unwrap();
        assert_eq!(e.impairment.is_some(), want, "{s:?}");
    }
}

#[test]
fn queue_defaults_depend_on_whether_the_rate_is_limited() {
    let q = |s: &str| spec(s).unwrap().queue_limits();
    let unlimited = QueueLimit::Packets(UNLIMITED_QUEUE_PACKETS);
    let default = QueueLimit::Packets(DEFAULT_QUEUE_PACKETS);
    assert_eq!(q(""), (unlimited, None));
    assert_eq!(q("rate = \"1Mbit\""), (default, None));
    assert_eq!(
        q("rate = \"1Mbit\"\nqueue = { kind = \"droptail\" }"),
        (default, None)
    );
    assert_eq!(
        q("queue = { kind = \"droptail\", packets = 5, bytes = 9000 }"),
        (QueueLimit::Bytes(9000), None)
    );
    assert_eq!(
        q("queue = { kind = \"droptail\", packets = 5, ecn_threshold_packets = 2 }"),
        (QueueLimit::Packets(5), Some(QueueLimit::Packets(2)))
    );
}

#[test]
fn extra_delay_adds_to_the_links_own_delay() {
    let l = spec("delay = \"1ms\"").unwrap();
    let mut e = l.build("l", Duration::from_millis(4), SEEDS).unwrap().link;
    e.handle_packet(Instant::ZERO, pkt(0, 100));
    assert_eq!(e.poll_timeout(), Some(Instant::from_millis(5)));
}

#[test]
fn outages_drop_arrivals_from_start_for_their_duration() {
    let l = spec(r#"outages = [{ start = "1ms", duration = "1ms" }]"#).unwrap();
    let mut link = l.build("l", Duration::ZERO, SEEDS).unwrap().link;
    for (i, ms) in [0u64, 1, 2].into_iter().enumerate() {
        link.handle_packet(Instant::from_millis(ms), pkt(i as u64, 100));
    }
    assert_eq!(link.counters().dropped(DropReason::Outage).packets, 1);
}

#[test]
fn list_loss_drops_exactly_the_listed_packets() {
    let l = spec(r#"loss = { kind = "list", packets = [1] }"#).unwrap();
    let mut link = l.build("l", Duration::ZERO, SEEDS).unwrap().link;
    let out = brisk_net::testutil::run(&mut link, brisk_net::testutil::train(3, 100, 1000));
    let ids: Vec<u64> = out.iter().map(|(_, p)| p.id).collect();
    assert_eq!(ids, vec![0, 2]);
}

#[test]
fn list_loss_reads_its_count_and_rejects_unknown_ones() {
    assert!(spec(r#"loss = { kind = "list", packets = [1], count = "data" }"#).is_ok());
    assert!(spec(r#"loss = { kind = "list", packets = [1], count = "all" }"#).is_ok());
    assert!(spec(r#"loss = { kind = "list", packets = [1], count = "acks" }"#).is_err());
}

#[test]
fn unknown_keys_and_kinds_are_rejected() {
    assert!(spec("rtae = \"1s\"").is_err());
    assert!(spec(r#"queue = { kind = "droptail", packet = 10 }"#).is_err());
    assert!(spec(r#"queue = { kind = "blue" }"#).is_err());
    assert!(spec(r#"queue = { kind = "red", maxp = 0.1 }"#).is_err());
    assert!(spec(r#"loss = { kind = "bernoulli", p = 0.01, q = 1 }"#).is_err());
    assert!(spec(r#"outages = [{ start = "1s", end = "2s" }]"#).is_err());
    assert!(spec("rate = 10").is_err());
}

#[test]
fn range_checks_name_the_field() {
    assert_eq!(field("rate = \"0Mbit\""), "l.rate");
    assert_eq!(field("delay = \"61s\""), "l.delay");
    assert_eq!(
        field(r#"queue = { kind = "droptail", packets = 0 }"#),
        "l.queue.packets"
    );
    assert_eq!(
        field(r#"queue = { kind = "droptail", bytes = "5GiB" }"#),
        "l.queue.bytes"
    );
    assert_eq!(
        field(
            r#"queue = { kind = "droptail", ecn_threshold_packets = 1, ecn_threshold_bytes = 1 }"#
        ),
        "l.queue.ecn_threshold_bytes"
    );
    assert_eq!(
        field(r#"loss = { kind = "bernoulli", p = 1.5 }"#),
        "l.loss.p"
    );
    assert_eq!(
        field(r#"loss = { kind = "gilbert_elliott", p_good_bad = 0.1, p_bad_good = -1 }"#),
        "l.loss.p_bad_good"
    );
    assert_eq!(field("jitter = { max = \"11s\" }"), "l.jitter.max");
    assert_eq!(field("duplicate = 2.0"), "l.duplicate");
    assert_eq!(field("corrupt = nan"), "l.corrupt");
    let e = spec("loss = { kind = \"bernoulli\", p = 1.5 }")
        .unwrap()
        .validate("l")
        .unwrap_err();
    assert!(e.message.contains("[0, 1]"), "{e}");
}

#[test]
fn elements_still_refuse_what_validation_was_not_asked_about() {
    let l = spec(r#"loss = { kind = "bernoulli", p = 1.5 }"#).unwrap();
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap_err();
    assert_eq!(e.field, "bottleneck.loss");
    let l = spec(r#"queue = { kind = "droptail", packets = 0 }"#).unwrap();
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap_err();
    assert_eq!(e.field, "bottleneck.queue");
    let l = spec("corrupt = 2.0").unwrap();
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap_err();
    assert_eq!(e.field, "bottleneck");
}

#[test]
fn serialising_omits_unset_ecn_thresholds() {
    let q = QueueSpec::droptail_packets(7);
    let v = toml::Value::try_from(&q).unwrap();
    let t = v.as_table().unwrap();
    assert_eq!(t.get("packets").and_then(|p| p.as_integer()), Some(7));
    assert!(!t.contains_key("ecn_threshold_packets"));
    assert!(!t.contains_key("ecn_threshold_bytes"));
}

#[test]
fn prio_queue_parses_validates_and_builds() {
    let l = spec(
        "rate = \"20Mbit\"\nqueue = { kind = \"prio\", bands = 4, bytes = \"5MB\", push_out = false }",
    )
    .unwrap();
    l.validate("bottleneck").unwrap();
    assert_eq!(
        l.prio_params(),
        PrioParams {
            bands: 4,
            limit: QueueLimit::Bytes(5_000_000),
            push_out: false,
        }
    );
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap();
    let q = e.link.queue().as_prio().expect("a prio queue");
    assert_eq!(q.band_counters().len(), 4);
    // Defaults: Linux's 3 bands, 1000 packets, push-out on.
    let d = spec("queue = { kind = \"prio\", packets = 7 }").unwrap();
    assert_eq!(
        d.prio_params(),
        PrioParams {
            bands: 3,
            limit: QueueLimit::Packets(7),
            push_out: true,
        }
    );
    assert_eq!(
        spec("queue = { kind = \"prio\" }")
            .unwrap()
            .prio_params()
            .limit,
        QueueLimit::Packets(1000)
    );
}

#[test]
fn prio_queue_errors_name_the_field_and_the_range() {
    for (q, want, range) in [
        ("bands = 0", "l.queue.bands", "between 1 and 16 bands"),
        ("bands = 17", "l.queue.bands", "between 1 and 16 bands"),
        ("packets = 0", "l.queue.packets", "between 1 and 10000000"),
        (
            "bytes = 0",
            "l.queue.bytes",
            "between 1 and 4294967296 bytes",
        ),
    ] {
        let e = spec(&format!("queue = {{ kind = \"prio\", {q} }}"))
            .unwrap()
            .validate("l")
            .unwrap_err();
        assert_eq!(e.field, want, "{q}");
        assert!(e.message.contains(range), "{q}: {e}");
    }
    let typo = spec("queue = { kind = \"prio\", band = 2 }").unwrap_err();
    assert!(typo.to_string().contains("band"), "{typo}");
}

#[test]
fn prio_push_outs_count_as_queue_full_drops_at_the_link() {
    use brisk_net::queue::test_packets::ip_tos;
    let l = spec("rate = \"1Mbit\"\nqueue = { kind = \"prio\", bands = 2, packets = 3 }").unwrap();
    let mut e = l.build("l", Duration::ZERO, SEEDS).unwrap();
    let t = Instant::ZERO;
    // The first goes straight onto the wire; three low-priority packets fill the queue;
    // two high-priority ones push two of them out.
    for (id, tos) in [(0, 0x10), (1, 0x10), (2, 0x10), (3, 0x10), (4, 0), (5, 0)] {
        e.link.handle_packet(t, ip_tos(id, 1000, tos));
    }
    assert_eq!(e.link.counters().dropped(DropReason::QueueFull).packets, 2);
    let c = e.link.queue().as_prio().unwrap().band_counters();
    assert_eq!((c[1].pushed_out, c[0].enqueued), (2, 2));
}

#[test]
fn prio_with_one_class_of_traffic_is_exactly_drop_tail() {
    use brisk_net::queue::test_packets::ip_tos;
    // The same bursty arrivals (all DSCP 0) into a 1 Mbit/s link with a 20-packet
    // drop-tail and with a 4-band prio queue of 20 packets: the same packets leave at
    // the same times, and the same ones are dropped.
    let run = |queue: &str| {
        let l = spec(&format!("rate = \"1Mbit\"\nqueue = {queue}")).unwrap();
        let mut e = l.build("l", Duration::ZERO, SEEDS).unwrap();
        let mut out = Vec::new();
        let mut id = 0u64;
        for ms in 0..400u64 {
            let t = Instant::from_millis(ms);
            // A burst of 5 every 10 ms, one packet per ms otherwise: ~1.3x the rate.
            let n = if ms % 10 == 0 { 5 } else { 1 };
            for _ in 0..n {
                e.link
                    .handle_packet(t, ip_tos(id, 100 + (id % 7) as usize * 50, 0));
                id += 1;
            }
            while let Some(p) = e.link.poll_packet(t) {
                out.push((ms, p.id));
            }
        }
        (
            out,
            e.link.counters().dropped(DropReason::QueueFull).packets,
        )
    };
    let dt = run("{ kind = \"droptail\", packets = 20 }");
    let prio = run("{ kind = \"prio\", bands = 4, packets = 20 }");
    assert!(dt.1 > 0, "the queue overflowed");
    assert_eq!(dt, prio);
}

#[test]
fn prio_band0_pie_parses_validates_and_builds() {
    let l = spec(
        "rate = \"20Mbit\"\nqueue = { kind = \"prio\", bands = 4, bytes = \"5MB\", band0_pie = { ecn = true, ecn_drop_rule = false, target = \"15ms\" } }",
    )
    .unwrap();
    l.validate("bottleneck").unwrap();
    let e = l.build("bottleneck", Duration::ZERO, SEEDS).unwrap();
    let q = e.link.queue().as_prio().expect("a prio queue");
    assert_eq!(q.band0_pie_prob(), Some(0.0));
    // Without the key there is no PIE.
    let plain = spec("rate = \"20Mbit\"\nqueue = { kind = \"prio\", bands = 4 }").unwrap();
    let e = plain.build("bottleneck", Duration::ZERO, SEEDS).unwrap();
    assert_eq!(e.link.queue().as_prio().unwrap().band0_pie_prob(), None);
    // PIE's own checks, named under band0_pie; `packets` is not a key of it.
    let bad = spec("queue = { kind = \"prio\", band0_pie = { target = \"0ms\" } }").unwrap();
    let err = bad.validate("bottleneck").unwrap_err().to_string();
    assert!(err.contains("band0_pie"), "{err}");
    assert!(spec("queue = { kind = \"prio\", band0_pie = { packets = 5 } }").is_err());
}

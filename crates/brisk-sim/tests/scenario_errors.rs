//! Scenario files: errors name the file and the field, and every shipped scenario parses.

use brisk_sim::Scenario;

const GOOD: &str = r#"
name = "t"
duration = "1s"
[bottleneck]
rate = "10Mbit"
queue = { kind = "droptail", packets = 100 }
[[flow]]
rtt = "10ms"
app = { kind = "bulk" }
"#;

fn err(text: &str) -> brisk_sim::ScenarioError {
    match Scenario::from_toml_str_named(text, "scenarios/x.toml") {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e,
    }
}

#[test]
fn a_minimal_scenario_parses_with_defaults() {
    let sc = Scenario::from_toml_str(GOOD).unwrap();
    assert_eq!(sc.seed, 1);
    assert_eq!(sc.flows.len(), 1);
    assert_eq!(sc.total_flows(), 1);
    assert_eq!(sc.bottleneck.rate.unwrap().0, 10_000_000);
    assert_eq!(sc.flows[0].rtt.0, brisk_time::Duration::from_millis(10));
}

#[test]
fn bad_duration_names_the_field_and_the_expected_form() {
    let e = err(&GOOD.replace(r#"rtt = "10ms""#, r#"rtt = "ten""#));
    assert_eq!(e.file, "scenarios/x.toml");
    assert_eq!(e.field, "flow[0].rtt");
    assert!(
        e.message.contains(r#"expected a duration like "10ms""#),
        "{e}"
    );
    assert!(e.message.contains(r#"got "ten""#), "{e}");
    assert!(
        e.to_string().starts_with("scenarios/x.toml: flow[0].rtt: "),
        "{e}"
    );
}

#[test]
fn unknown_key_is_rejected_with_its_location() {
    let e = err(&GOOD.replace("rate = ", "rtae = \"1s\"\nrate = "));
    assert_eq!(e.field, "bottleneck.rtae", "{e}");
    assert!(e.message.contains("unknown field `rtae`"), "{e}");

    let e = err(&GOOD.replace("[[flow]]", "[[flow]]\ncc = \"cubic\"\nccc = 1"));
    assert_eq!(e.field, "flow[0].ccc", "{e}");
    assert!(e.message.contains("ccc"), "{e}");
}

#[test]
fn probability_above_one_is_rejected() {
    let e = err(&GOOD.replace(
        "queue =",
        "loss = { kind = \"bernoulli\", p = 1.5 }\nqueue =",
    ));
    assert_eq!(e.field, "bottleneck.loss.p", "{e}");
    assert!(e.message.contains("[0, 1]"), "{e}");
}

#[test]
fn zero_rate_and_bad_rate_unit_are_rejected() {
    let e = err(&GOOD.replace(r#""10Mbit""#, r#""0Mbit""#));
    assert_eq!(e.field, "bottleneck.rate", "{e}");
    let e = err(&GOOD.replace(r#""10Mbit""#, r#""10 furlongs""#));
    assert_eq!(e.field, "bottleneck.rate", "{e}");
    assert!(e.message.contains("expected a rate"), "{e}");
}

#[test]
fn unknown_cc_and_app_kind_are_rejected() {
    // Linux's "nv" has no brisk port (vegas, westwood, ... now do).
    let e = err(&GOOD.replace("[[flow]]", "[[flow]]\ncc = \"nv\""));
    assert_eq!(e.field, "flow[0].cc", "{e}");
    assert!(e.message.contains("nv"), "{e}");
    let e = err(&GOOD.replace(r#"kind = "bulk""#, r#"kind = "torrent""#));
    assert!(e.field.starts_with("flow[0]"), "{e}");
    assert!(e.message.contains("torrent"), "{e}");
}

#[test]
fn missing_required_keys_and_syntax_errors_are_reported() {
    let e = err(&GOOD.replace("duration = \"1s\"\n", ""));
    assert!(e.message.contains("duration"), "{e}");
    let e = err("name = \"t\"\nduration = ");
    assert_eq!(e.field, "(file)", "{e}");
    assert!(e.message.contains("line"), "{e}");
}

#[test]
fn range_checks_name_the_field() {
    let e = err(&GOOD.replace(
        r#"kind = "bulk""#,
        r#"kind = "records", size = 10, interval = "1ms""#,
    ));
    assert_eq!(e.field, "flow[0].app.size", "{e}");
    let e = err(&GOOD.replace("[[flow]]", "[[flow]]\ncount = 0"));
    assert_eq!(e.field, "flow[0].count", "{e}");
    let e = err(&GOOD.replace("[[flow]]", "[[flow]]\nstart = \"5s\""));
    assert_eq!(e.field, "flow[0].start", "{e}");
    let e = err(&format!("{GOOD}[flow.tcp]\nmss = 10\n"));
    assert_eq!(e.field, "flow[0].tcp.mss", "{e}");
    let e = err(&GOOD.replace("packets = 100", "packets = 0"));
    assert_eq!(e.field, "bottleneck.queue.packets", "{e}");
}

#[test]
fn a_missing_file_is_an_error_not_a_panic() {
    let e = Scenario::load("no/such/file.toml".as_ref()).unwrap_err();
    assert_eq!(e.file, "no/such/file.toml");
    assert!(e.message.contains("cannot read"), "{e}");
}

#[test]
fn every_shipped_scenario_parses() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml") {
            // A `[workload]` makes it a network scenario, with its own parser.
            let text = std::fs::read_to_string(&path).unwrap();
            if brisk_scenario::network::is_net_scenario(&text) {
                brisk_sim::topo_build::load(&path).unwrap_or_else(|e| panic!("{e}"));
            } else {
                Scenario::load(&path).unwrap_or_else(|e| panic!("{e}"));
            }
            n += 1;
        }
    }
    assert!(n >= 8, "only {n} scenarios in {}", dir.display());
}

/// The TCP knobs of `[flow.tcp]` written as `body`, as a brisk_tcp::Config (Debug).
fn tcp_config(body: &str) -> String {
    let sc = Scenario::from_toml_str(&format!("{GOOD}[flow.tcp]\n{body}")).unwrap();
    format!("{:?}", sc.flows[0].tcp.to_config(sc.flows[0].cc))
}

#[test]
fn grouped_tables_mean_the_same_as_flat_keys() {
    let flat = tcp_config(
        "rack = false\ntlp = false\nmin_rto = \"300ms\"\ndelayed_ack = false\nmax_ack_delay = \"10ms\"\n\
         initial_cwnd = 4\nsack = false\ntime_wait = \"1s\"\necn = true\n\
         delay_correlation = true\ndc_window = 64\ndc_threshold = 0.8\n",
    );
    let nested = tcp_config(
        "[flow.tcp.recovery]\nrack = false\ntlp = false\nmin_rto = \"300ms\"\n\
         [flow.tcp.ack]\ndelayed = false\nmax_delay = \"10ms\"\n\
         [flow.tcp.congestion]\ninitial_cwnd = 4\n\
         [flow.tcp.options]\nsack = false\n\
         [flow.tcp.timeouts]\ntime_wait = \"1s\"\n\
         [flow.tcp.ecn]\nenabled = true\n\
         [flow.tcp.delay_correlation]\nwindow = 64\nthreshold = 0.8\n",
    );
    assert_eq!(flat, nested);
    assert_ne!(flat, tcp_config(""));
    // An empty delay-correlation table switches the layer on with its defaults.
    assert_eq!(
        tcp_config("[flow.tcp.delay_correlation]\n"),
        tcp_config("delay_correlation = true\n")
    );
}

#[test]
fn a_knob_set_flat_and_grouped_is_an_error_naming_both() {
    let e = err(&format!(
        "{GOOD}[flow.tcp]\nrack = false\n[flow.tcp.recovery]\nrack = true\n"
    ));
    assert_eq!(e.field, "flow[0].tcp.recovery.rack");
    assert!(e.message.contains("tcp.rack"), "{e}");
    let e = err(&format!(
        "{GOOD}[flow.tcp]\ndc_window = 16\n[flow.tcp.delay_correlation]\nwindow = 64\n"
    ));
    assert_eq!(e.field, "flow[0].tcp.delay_correlation.window");
}

#[test]
fn grouped_tables_reject_unknown_keys_and_wrong_types_by_name() {
    let e = err(&format!("{GOOD}[flow.tcp.recovery]\nrak = false\n"));
    assert!(e.field.starts_with("flow[0].tcp.recovery"), "{e}");
    assert!(e.message.contains("rak"), "{e}");
    let e = err(&format!("{GOOD}[flow.tcp]\ndelay_correlation = 3\n"));
    assert_eq!(e.field, "flow[0].tcp.delay_correlation");
    assert!(e.message.contains("true, false or a table"), "{e}");
    let e = err(&format!("{GOOD}[flow.tcp.delay_correlation]\nwindow = 1\n"));
    assert!(
        e.field.contains("dc_window") || e.field.contains("delay_correlation"),
        "{e}"
    );
}

#[test]
fn out_of_range_integers_give_a_range_and_a_line_not_a_rust_type() {
    let e = err(&GOOD.replace("packets = 100", "packets = -5"));
    assert!(e.field.contains("queue"), "{e}");
    assert!(
        !e.message.contains("u64") && !e.message.contains("usize"),
        "{e}"
    );
    assert!(e.message.contains("from 0 to"), "{e}");
    assert!(e.message.contains("line"), "{e}");
    let e = err(&format!("{GOOD}[flow.tcp]\nmss = 100000\n"));
    assert_eq!(e.field, "flow[0].tcp.mss");
    assert!(
        e.message.contains("from 0 to 65535") && !e.message.contains("u16"),
        "{e}"
    );
}

#[test]
fn a_zero_rtt_is_rejected() {
    let e = err(&GOOD.replace(r#"rtt = "10ms""#, r#"rtt = "0ms""#));
    assert_eq!(e.field, "flow[0].rtt");
    assert!(e.message.contains("greater than 0"), "{e}");
}

#[test]
fn durations_take_hours_and_days() {
    let sc = Scenario::from_toml_str(&GOOD.replace(r#"duration = "1s""#, r#"duration = "24h""#))
        .unwrap();
    assert_eq!(sc.duration.0, brisk_time::Duration::from_secs(86_400));
}

#[test]
fn restart_knobs_reach_the_config_and_reject_a_zero_threshold() {
    assert_eq!(
        tcp_config("rto_restart = 4\ntlp_restart = true\n"),
        tcp_config("[flow.tcp.recovery]\nrto_restart = 4\ntlp_restart = true\n")
    );
    let cfg = tcp_config("rto_restart = 4\ntlp_restart = true\n");
    assert!(
        cfg.contains("rto_restart: Some(4)") && cfg.contains("tlp_restart: true"),
        "{cfg}"
    );
    let e = err(&format!("{GOOD}[flow.tcp]\nrto_restart = 0\n"));
    assert_eq!(e.field, "flow[0].tcp.rto_restart");
    assert!(e.message.contains("between 1 and 1000"), "{e}");
}

#[test]
fn rdb_knobs_reach_the_config_both_ways() {
    assert_eq!(
        tcp_config("rdb = { lim = \"unlimited\", spifl = 7, loss_inference = \"dsack\" }\n"),
        tcp_config(
            "rdb = true\nrdb_lim = \"unlimited\"\nrdb_spifl = 7\nrdb_loss_inference = \"dsack\"\n"
        )
    );
    let cfg = tcp_config("[flow.tcp.rdb]\nlim = 3\nitt_min = \"20ms\"\n");
    assert!(
        cfg.contains("lim: Some(3)") && cfg.contains("itt_min: 20ms"),
        "{cfg}"
    );
    let off = tcp_config("rack = true\n");
    assert!(off.contains("rdb: None"), "{off}");
}

#[test]
fn rdb_knobs_without_meaning_are_rejected_naming_the_field() {
    for (knob, field, words) in [
        (
            "rdb = { lim = 0 }",
            "flow[0].tcp.rdb_lim",
            "between 1 and 1024",
        ),
        ("rdb_lim = 2", "flow[0].tcp.rdb_lim", "needs rdb = true"),
        (
            "rdb = { spifl = 0 }",
            "flow[0].tcp.rdb_spifl",
            "between 1 and 100000",
        ),
        (
            "rdb = { itt_min = \"0ms\" }",
            "flow[0].tcp.rdb_itt_min",
            "greater than 0",
        ),
        (
            "rdb = { spifl = 3, itt_min = \"10ms\" }",
            "flow[0].tcp.rdb_itt_min",
            "set one of them",
        ),
        (
            "rdb = { max_bytes = 0 }",
            "flow[0].tcp.rdb_max_bytes",
            "between 1 and 65535",
        ),
        (
            "cwnd_limited_slack = 5000",
            "flow[0].tcp.cwnd_limited_slack",
            "0 and 1000",
        ),
    ] {
        let e = err(&format!("{GOOD}[flow.tcp]\n{knob}\n"));
        assert_eq!(e.field, field, "{knob}: {e}");
        assert!(e.message.contains(words), "{knob}: {e}");
    }
    // Not a count or "unlimited", and a negative ITT_min: parse errors naming the field.
    let e = err(&format!("{GOOD}[flow.tcp]\nrdb = {{ lim = \"lots\" }}\n"));
    assert!(
        e.to_string().contains("rdb.lim") && e.to_string().contains("\"unlimited\""),
        "{e}"
    );
    let e = err(&format!(
        "{GOOD}[flow.tcp]\nrdb = {{ itt_min = \"-10ms\" }}\n"
    ));
    assert!(e.to_string().contains("itt_min"), "{e}");
    let e = err(&format!(
        "{GOOD}[flow.tcp]\nrdb = {{ loss_inference = \"maybe\" }}\n"
    ));
    assert!(e.to_string().contains("loss_inference"), "{e}");
}

#[test]
fn the_linux_3_17_profile_sets_its_knobs_and_explicit_ones_win() {
    let cfg = tcp_config("linux_profile = \"3.17\"\n");
    for want in [
        "rack: false",
        "fack: true",
        "early_retransmit: Delayed",
        "tlp_pto: Draft01",
    ] {
        assert!(cfg.contains(want), "{want}: {cfg}");
    }
    let cfg = tcp_config("linux_profile = \"3.17\"\n[flow.tcp.recovery]\ntlp_pto = \"rfc8985\"\n");
    assert!(
        cfg.contains("tlp_pto: Rfc8985") && cfg.contains("fack: true"),
        "{cfg}"
    );
    // Early retransmit and FACK need RACK off (RACK subsumes them).
    let e = err(&format!("{GOOD}[flow.tcp]\nearly_retransmit = \"on\"\n"));
    assert_eq!(e.field, "flow[0].tcp.early_retransmit");
    assert!(e.message.contains("rack = false"), "{e}");
    let e = err(&format!("{GOOD}[flow.tcp]\nfack = true\n"));
    assert_eq!(e.field, "flow[0].tcp.fack");
    let e = err(&format!("{GOOD}[flow.tcp]\nlinux_profile = \"2.6\"\n"));
    assert!(e.to_string().contains("linux_profile"), "{e}");
}

#[test]
fn web_page_errors_name_the_field() {
    let web = |app: &str| GOOD.replace(r#"app = { kind = "bulk" }"#, app);
    let e = err(&web(r#"app = { kind = "web", objects = [] }"#));
    assert_eq!(e.field, "flow[0].app.objects", "{e}");
    assert!(e.message.contains("the first is the HTML"), "{e}");
    let e = err(&web(r#"app = { kind = "web", objects = [1000, 0] }"#));
    assert_eq!(e.field, "flow[0].app.objects[1]", "{e}");
    assert!(e.message.contains("between 1 and 64MiB"), "{e}");
    let e = err(&web(
        r#"app = { kind = "web", objects = [1000], connections = 17 }"#,
    ));
    assert_eq!(e.field, "flow[0].app.connections", "{e}");
    assert!(e.message.contains("between 1 and 16"), "{e}");
    let e = err(&web(
        r#"app = { kind = "web", objects = [1000], request = 0 }"#,
    ));
    assert_eq!(e.field, "flow[0].app.request", "{e}");
    assert!(Scenario::from_toml_str(&web(
        r#"app = { kind = "web", objects = ["24KB", 1000], connections = 6 }"#
    ))
    .is_ok());
}

#[test]
fn codel_parameters_out_of_range_name_the_field() {
    let q = |spec: &str| GOOD.replace(r#"queue = { kind = "droptail", packets = 100 }"#, spec);
    let e = err(&q(r#"queue = { kind = "codel", target = "200ms" }"#));
    assert_eq!(e.field, "bottleneck.queue.target", "{e}");
    assert!(e.message.contains("below the interval"), "{e}");
    let e = err(&q(r#"queue = { kind = "codel", interval = "0ms" }"#));
    assert_eq!(e.field, "bottleneck.queue.interval", "{e}");
    let e = err(&q(r#"queue = { kind = "codel", packets = 0 }"#));
    assert_eq!(e.field, "bottleneck.queue.packets", "{e}");
    let e = err(&q(r#"queue = { kind = "codel", tagret = "5ms" }"#));
    assert!(e.message.contains("tagret"), "{e}");
    let sc = Scenario::from_toml_str(&q(
        r#"queue = { kind = "codel", target = "5ms", interval = "100ms", packets = 1000, ecn = true }"#,
    ))
    .unwrap();
    assert!(matches!(
        sc.bottleneck.queue,
        Some(brisk_scenario::link::QueueSpec::Codel { ecn: true, .. })
    ));
}

#[test]
fn red_and_time_limited_queues_parse_and_their_errors_name_the_field() {
    let q = |spec: &str| GOOD.replace(r#"queue = { kind = "droptail", packets = 100 }"#, spec);
    let e = err(&q(r#"queue = { kind = "red", min_th = 20, max_th = 10 }"#));
    assert_eq!(e.field, "bottleneck.queue.max_th", "{e}");
    let e = err(&q(r#"queue = { kind = "red", max_p = 1.5 }"#));
    assert_eq!(e.field, "bottleneck.queue.max_p", "{e}");
    assert!(e.message.contains("[0, 1]"), "{e}");
    let e = err(&q(r#"queue = { kind = "red", w_q = 0.0 }"#));
    assert_eq!(e.field, "bottleneck.queue.w_q", "{e}");
    assert!(Scenario::from_toml_str(&q(
        r#"queue = { kind = "red", min_th = 5, max_th = 15, max_p = 0.1, ecn = true }"#
    ))
    .is_ok());
    // 300 ms at 10 Mbit/s = 375 000 bytes.
    let sc =
        Scenario::from_toml_str(&q(r#"queue = { kind = "droptail", time = "300ms" }"#)).unwrap();
    let link = sc
        .bottleneck
        .build(
            "bottleneck",
            brisk_time::Duration::ZERO,
            brisk_scenario::link::LinkSeeds { loss: 1, impair: 2 },
        )
        .unwrap();
    match link.link.queue() {
        brisk_net::queue::AnyQueue::DropTail(d) => {
            assert_eq!(d.limit(), brisk_net::queue::QueueLimit::Bytes(375_000))
        }
        other => panic!("{other:?}"),
    }
    let e = err(&q(
        r#"queue = { kind = "droptail", time = "300ms", bytes = 1000000 }"#,
    ));
    assert_eq!(e.field, "bottleneck.queue.time", "{e}");
    let e = err(&q(r#"queue = { kind = "droptail", time = "1us" }"#));
    assert_eq!(e.field, "bottleneck.queue.time", "{e}");
    assert!(e.message.contains("1500 bytes"), "{e}");
}

#[test]
fn pie_parameters_out_of_range_name_the_field() {
    let q = |spec: &str| GOOD.replace(r#"queue = { kind = "droptail", packets = 100 }"#, spec);
    let e = err(&q(r#"queue = { kind = "pie", tupdate = "0ms" }"#));
    assert_eq!(e.field, "bottleneck.queue.tupdate", "{e}");
    let e = err(&q(r#"queue = { kind = "pie", alpha = 40.0 }"#));
    assert_eq!(e.field, "bottleneck.queue.alpha", "{e}");
    let e = err(&q(
        r#"queue = { kind = "pie", ecn = true, ecn_drop_above = 1.5 }"#,
    ));
    assert_eq!(e.field, "bottleneck.queue.ecn_drop_above", "{e}");
    assert!(Scenario::from_toml_str(&q(
        r#"queue = { kind = "pie", target = "20ms", tupdate = "30ms", alpha = 0.125, beta = 1.25, max_burst = "100ms", ecn = true, ecn_drop_rule = false }"#
    ))
    .is_ok());
}

#[test]
fn fq_codel_parameters_out_of_range_name_the_field() {
    let q = |spec: &str| GOOD.replace(r#"queue = { kind = "droptail", packets = 100 }"#, spec);
    let e = err(&q(r#"queue = { kind = "fq_codel", flows = 0 }"#));
    assert_eq!(e.field, "bottleneck.queue.flows", "{e}");
    assert!(e.message.contains("between 1 and 65536"), "{e}");
    let e = err(&q(r#"queue = { kind = "fq_codel", quantum = 10 }"#));
    assert_eq!(e.field, "bottleneck.queue.quantum", "{e}");
    let e = err(&q(r#"queue = { kind = "fq_codel", target = "1s" }"#));
    assert_eq!(e.field, "bottleneck.queue.target", "{e}");
    assert!(Scenario::from_toml_str(&q(
        r#"queue = { kind = "fq_codel", flows = 1024, quantum = 1514, packets = 10240, memory_limit = "32MiB", ecn = false }"#
    ))
    .is_ok());
}

#[test]
fn abe_knobs_name_the_field() {
    let f = |tcp: &str| {
        GOOD.replace(
            r#"app = { kind = "bulk" }"#,
            &format!("app = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}"),
        )
    };
    let e = err(&f("abe = true"));
    assert_eq!(e.field, "flow[0].tcp.abe", "{e}");
    assert!(e.message.contains("needs ecn = true"), "{e}");
    let e = err(&f("ecn = true\nbeta_ecn = 0.9"));
    assert_eq!(e.field, "flow[0].tcp.beta_ecn", "{e}");
    assert!(e.message.contains("needs abe = true"), "{e}");
    let e = err(&f("ecn = true\nabe = true\nbeta_ecn = 1.5"));
    assert_eq!(e.field, "flow[0].tcp.beta_ecn", "{e}");
    assert!(e.message.contains("(0, 1]"), "{e}");
    let e = err(&f("ecn = true\nbeta_loss = 0.7"));
    assert_eq!(e.field, "flow[0].tcp.beta_loss", "{e}");
    let e = err(&f("ecn = true\nabe = true\nbeta_loss = 0.0"));
    assert_eq!(e.field, "flow[0].tcp.beta_loss", "{e}");
    let sc = Scenario::from_toml_str(&f(
        "ecn = true\n[flow.tcp.congestion]\nabe = true\nbeta_ecn = 0.9",
    ))
    .unwrap();
    let cfg = sc.flows[0].tcp.to_config(sc.flows[0].cc);
    assert_eq!(
        cfg.congestion.controller.abe().and_then(|a| a.beta_ecn),
        Some(0.9)
    );
}

#[test]
fn cdg_and_dctcp_parameters_name_the_field() {
    let f = |cc: &str, tcp: &str| {
        GOOD.replace(
            r#"app = { kind = "bulk" }"#,
            &format!("cc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}"),
        )
    };
    let e = err(&f("cubic", "[flow.tcp.cdg]\nwindow = 8"));
    assert_eq!(e.field, "flow[0].tcp.cdg", "{e}");
    assert!(e.message.contains("needs cc = \"cdg\""), "{e}");
    let e = err(&f("cdg", "[flow.tcp.cdg]\nwindow = 6"));
    assert_eq!(e.field, "flow[0].tcp.cdg.window", "{e}");
    assert!(e.message.contains("power of two from 1 to 256"), "{e}");
    let e = err(&f("cdg", "[flow.tcp.cdg]\nbackoff_beta = 1025"));
    assert_eq!(e.field, "flow[0].tcp.cdg.backoff_beta", "{e}");
    let e = err(&f("cdg", "[flow.tcp.cdg]\nspeed = 1"));
    assert!(e.to_string().contains("speed"), "{e}");
    let e = err(&f("dctcp", ""));
    assert_eq!(e.field, "flow[0].cc", "{e}");
    assert!(e.message.contains("ecn = true"), "{e}");
    let e = err(&f("dctcp", "ecn = true\n[flow.tcp.dctcp]\nshift_g = 11"));
    assert_eq!(e.field, "flow[0].tcp.dctcp.shift_g", "{e}");
    let sc = Scenario::from_toml_str(&f(
        "cdg",
        "[flow.tcp.cdg]\nbackoff_factor = 333\nuse_shadow = false",
    ))
    .unwrap();
    let cfg = sc.flows[0].tcp.to_config(sc.flows[0].cc);
    let t = &cfg.congestion.controller.tuning.cdg;
    assert_eq!((t.backoff_factor, t.use_shadow, t.window), (333, false, 8));
    assert!(Scenario::from_toml_str(&f("dctcp", "ecn = true")).is_ok());
}

#[test]
fn fse_settings_name_the_field_and_the_range() {
    let f = |tcp: &str| {
        GOOD.replace(
            r#"app = { kind = "bulk" }"#,
            &format!("app = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}"),
        )
    };
    let e = err(&f(r#"fse = { group = "g", priority = 1.5 }"#));
    assert_eq!(e.field, "flow[0].tcp.fse.priority", "{e}");
    assert!(e.message.contains("between 0.1 and 1.0"), "{e}");
    let e = err(&f(r#"fse = { max_flows = 0 }"#));
    assert_eq!(e.field, "flow[0].tcp.fse.max_flows", "{e}");
    assert!(e.message.contains("between 1 and 4096"), "{e}");
    let e = err(&f(r#"fse = { group = "" }"#));
    assert_eq!(e.field, "flow[0].tcp.fse.group", "{e}");
    let e = err(&f(r#"fse = { algorithm = "greedy" }"#));
    assert!(e.field.starts_with("flow[0].tcp"), "{e}");
    assert!(e.message.contains("conservative"), "{e}");
    // The table form, and what reaches the controller.
    let sc = Scenario::from_toml_str(&f(
        "[flow.tcp.fse]\ngroup = \"g\"\npriority = 0.25\nalgorithm = \"active\"\nincrease = \"sum\"",
    ))
    .unwrap();
    let cfg = sc.flows[0].tcp.to_config(sc.flows[0].cc);
    assert_eq!(cfg.cc_name(), "cubic+fse");
    let fse = cfg.congestion.controller.fse.unwrap();
    assert_eq!((fse.group.as_deref(), fse.priority), (Some("g"), 0.25));
    assert_eq!(fse.algorithm, brisk_tcp::cc::fse::Algorithm::Active);
    assert_eq!(fse.increase, brisk_tcp::cc::fse::tcp::Increase::Sum);
    // Without the knob: no FSE, the label unchanged.
    let plain = Scenario::from_toml_str(GOOD).unwrap();
    assert_eq!(
        plain.flows[0].tcp.to_config(plain.flows[0].cc).cc_name(),
        "cubic"
    );
}

#[test]
fn linux_module_parameters_name_the_field_and_default_to_linux() {
    let f = |cc: &str, tcp: &str| {
        GOOD.replace(
            r#"app = { kind = "bulk" }"#,
            &format!("cc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}"),
        )
    };
    let cfg = |cc: &str, tcp: &str| {
        let sc = Scenario::from_toml_str(&f(cc, tcp)).unwrap();
        sc.flows[0].tcp.to_config(sc.flows[0].cc)
    };
    // Each table only with its controller.
    for m in ["vegas", "hybla", "illinois", "htcp", "bic"] {
        let e = err(&f("cubic", &format!("[flow.tcp.{m}]")));
        assert_eq!(e.field, format!("flow[0].tcp.{m}"), "{e}");
        assert!(e.message.contains(&format!("needs cc = \"{m}\"")), "{e}");
    }
    // Out of range: the key is named, with its range.
    for (cc, tcp, field, words) in [
        ("vegas", "alpha = 5", "vegas.alpha", "must not exceed beta"),
        ("vegas", "gamma = 2000000", "vegas.gamma", "0 and 1048576"),
        ("hybla", "rtt0 = \"0ms\"", "hybla.rtt0", "1ms to 10s"),
        (
            "hybla",
            "rtt0 = \"2500us\"",
            "hybla.rtt0",
            "whole number of milliseconds",
        ),
        ("illinois", "theta = 70000", "illinois.theta", "0 and 65535"),
        (
            "bic",
            "max_increment = 0",
            "bic.max_increment",
            "1 and 1048576",
        ),
        ("bic", "beta = 1025", "bic.beta", "1 and 1024"),
        ("bic", "smooth_part = 0", "bic.smooth_part", "1 and 1000"),
    ] {
        let e = err(&f(cc, &format!("[flow.tcp.{cc}]\n{tcp}")));
        assert_eq!(e.field, format!("flow[0].tcp.{field}"), "{e}");
        assert!(e.message.contains(words), "{e}");
    }
    let e = err(&f("htcp", "[flow.tcp.htcp]\nuse_bandwith_switch = false"));
    assert!(e.to_string().contains("use_bandwith_switch"), "{e}");
    // Defaults are Linux's; each key reaches the controller's tuning.
    let d = cfg("vegas", "").congestion.controller.tuning;
    assert_eq!((d.vegas.alpha, d.vegas.beta, d.vegas.gamma), (2, 4, 1));
    assert_eq!(d.hybla.rtt0_ms, 25);
    assert_eq!((d.illinois.win_thresh, d.illinois.theta), (15, 5));
    assert!(d.htcp.use_rtt_scaling && d.htcp.use_bandwidth_switch);
    assert_eq!(
        (d.bic.max_increment, d.bic.low_window, d.bic.beta),
        (16, 14, 819)
    );
    let t = cfg("vegas", "[flow.tcp.vegas]\nalpha = 1\nbeta = 3\ngamma = 2")
        .congestion
        .controller
        .tuning;
    assert_eq!((t.vegas.alpha, t.vegas.beta, t.vegas.gamma), (1, 3, 2));
    let t = cfg("hybla", "[flow.tcp.hybla]\nrtt0 = \"50ms\"")
        .congestion
        .controller
        .tuning;
    assert_eq!(t.hybla.rtt0_ms, 50);
    let t = cfg(
        "illinois",
        "[flow.tcp.illinois]\nwin_thresh = 30\ntheta = 7",
    )
    .congestion
    .controller
    .tuning;
    assert_eq!((t.illinois.win_thresh, t.illinois.theta), (30, 7));
    let t = cfg("htcp", "[flow.tcp.htcp]\nuse_bandwidth_switch = false")
        .congestion
        .controller
        .tuning;
    assert!(t.htcp.use_rtt_scaling && !t.htcp.use_bandwidth_switch);
    let t = cfg(
        "bic",
        "[flow.tcp.bic]\nfast_convergence = false\nmax_increment = 32\nlow_window = 20\nbeta = 700\ninitial_ssthresh = 100\nsmooth_part = 10",
    )
    .congestion
    .controller
    .tuning;
    assert_eq!(
        (
            t.bic.fast_convergence,
            t.bic.max_increment,
            t.bic.low_window,
            t.bic.beta,
            t.bic.initial_ssthresh,
            t.bic.smooth_part
        ),
        (false, 32, 20, 700, 100, 10)
    );
}

#[test]
fn lp_variant_names_the_field_and_defaults_to_linux() {
    let f = |cc: &str, tcp: &str| {
        GOOD.replace(
            r#"app = { kind = "bulk" }"#,
            &format!("cc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}"),
        )
    };
    let cfg = |cc: &str, tcp: &str| {
        let sc = Scenario::from_toml_str(&f(cc, tcp)).unwrap();
        sc.flows[0].tcp.to_config(sc.flows[0].cc)
    };
    use brisk_tcp::cc::lp_corrected::LpVariant;
    // Only with its controller; an unknown variant names the key and the choices.
    let e = err(&f("cubic", "[flow.tcp.lp]\nvariant = \"corrected\""));
    assert_eq!(e.field, "flow[0].tcp.lp", "{e}");
    assert!(e.message.contains("needs cc = \"lp\""), "{e}");
    let e = err(&f("lp", "[flow.tcp.lp]\nvariant = \"fixed\""));
    assert!(e.field.starts_with("flow[0].tcp"), "{e}");
    assert!(e.to_string().contains("variant"), "{e}");
    assert!(
        e.message.contains("linux") && e.message.contains("corrected"),
        "{e}"
    );
    // Default Linux's, label "lp"; the corrected one is labelled apart.
    let d = cfg("lp", "");
    assert_eq!(d.congestion.controller.tuning.lp, LpVariant::Linux);
    assert_eq!(d.cc_name(), "lp");
    let c = cfg("lp", "[flow.tcp.lp]\nvariant = \"corrected\"");
    assert_eq!(c.congestion.controller.tuning.lp, LpVariant::Corrected);
    assert_eq!(c.cc_name(), "lp-corrected");
    assert_eq!(
        cfg("lp", "[flow.tcp.lp]\nvariant = \"linux\"")
            .congestion
            .controller
            .tuning
            .lp,
        LpVariant::Linux
    );
}

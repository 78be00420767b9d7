//! The vocabulary's own rules: layer order as data, kernel cc names only on Linux
//! flows, and every flat knob also accepted in its group table.

use brisk_scenario::knobs::LayerKind;
use brisk_scenario::{Scenario, ScenarioError, TcpKnobs};

fn flow(extra: &str, tcp: &str) -> Result<Scenario, ScenarioError> {
    Scenario::from_toml_str_named(
        &format!(
            "name = \"v\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n{extra}\n[flow.tcp]\n{tcp}\n"
        ),
        "v.toml",
    )
}

fn layer_tags(sc: &Scenario) -> String {
    sc.flows[0]
        .tcp
        .to_config(sc.flows[0].cc)
        .congestion
        .controller
        .name()
}

#[test]
fn layers_stack_in_the_default_order_unless_layer_order_says_otherwise() {
    let on = "ecn = true\nabe = true\nnew_cwv = true\ndelay_correlation = true\n";
    let default = flow("", on).unwrap();
    let d = layer_tags(&default);
    assert_eq!(
        default.flows[0].tcp.layer_names(),
        LayerKind::ALL.to_vec(),
        "{d}"
    );
    let swapped = flow(
        "",
        &format!("{on}layer_order = [\"abe\", \"delay_correlation\"]"),
    )
    .unwrap();
    assert_eq!(
        swapped.flows[0].tcp.layer_names(),
        vec![
            LayerKind::Abe,
            LayerKind::DelayCorrelation,
            LayerKind::NewCwv
        ]
    );
    assert_ne!(layer_tags(&swapped), d);
    // The grouped form means the same.
    let grouped = flow(
        "",
        &format!("{on}[flow.tcp.congestion]\nlayer_order = [\"abe\", \"delay_correlation\"]"),
    )
    .unwrap();
    assert_eq!(layer_tags(&grouped), layer_tags(&swapped));
}

#[test]
fn a_bad_layer_order_names_the_field() {
    for (tcp, says) in [
        (
            "abe = true\necn = true\nlayer_order = [\"abe\", \"abe\"]",
            "twice",
        ),
        (
            "abe = true\necn = true\nlayer_order = [\"new_cwv\"]",
            "not switched on",
        ),
    ] {
        let e = flow("", tcp).unwrap_err();
        assert_eq!(e.field, "flow[0].tcp.layer_order", "{e}");
        assert!(e.message.contains(says), "{e}");
    }
    let e = flow("", "layer_order = [\"vegas\"]").unwrap_err();
    assert!(e.field.starts_with("flow[0].tcp.layer_order"), "{e}");
    assert!(e.message.contains("vegas"), "{e}");
}

#[test]
fn kernel_cc_names_are_for_linux_flows_only() {
    let sc = flow("cc = \"nv\"\nstack = \"linux\"", "").unwrap();
    assert_eq!(sc.flows[0].kernel_cc(), "nv");
    let e = flow("cc = \"nv\"", "").unwrap_err();
    assert_eq!(e.field, "flow[0].cc", "{e}");
    assert!(
        e.message.contains("nv") && e.message.contains("cubic"),
        "{e}"
    );
    // brisk's ports of Linux modules carry the module's name both ways: brisk's
    // controller for a brisk flow, the kernel's module for a Linux flow.
    for (name, cc) in [
        ("vegas", brisk_tcp::cc::CcAlgorithm::Vegas),
        ("westwood", brisk_tcp::cc::CcAlgorithm::Westwood),
        ("hybla", brisk_tcp::cc::CcAlgorithm::Hybla),
        ("illinois", brisk_tcp::cc::CcAlgorithm::Illinois),
        ("htcp", brisk_tcp::cc::CcAlgorithm::Htcp),
        ("bic", brisk_tcp::cc::CcAlgorithm::Bic),
    ] {
        let sc = flow(&format!("cc = \"{name}\""), "").unwrap();
        assert_eq!(sc.flows[0].cc, cc);
        assert_eq!(cc.name(), name);
        let sc = flow(&format!("cc = \"{name}\"\nstack = \"linux\""), "").unwrap();
        assert_eq!(sc.flows[0].kernel_cc(), name);
    }
    // brisk's own BBR (v1, as Linux `tcp_bbr.c`) is a brisk name too, and a Linux
    // flow's "bbr" is the kernel's module.
    let sc = flow("cc = \"bbr\"", "").unwrap();
    assert_eq!(sc.flows[0].cc, brisk_tcp::cc::CcAlgorithm::Bbr);
    let sc = flow("cc = \"bbr\"\nstack = \"linux\"", "").unwrap();
    assert_eq!(sc.flows[0].kernel_cc(), "bbr");
}

#[test]
fn every_flat_knob_is_a_key_of_the_flat_form() {
    // Each declared key is accepted by serde (an unknown one would be refused by name).
    for key in TcpKnobs::FLAT_KEYS {
        let e = flow("", &format!("{key} = {{ nonsense = 1 }}")).unwrap_err();
        assert!(
            !e.message.contains(&format!("unknown field `{key}`")),
            "{key}: {e}"
        );
    }
    let e = flow("", "tlp_restrat = true").unwrap_err();
    assert_eq!(e.field, "flow[0].tcp.tlp_restrat", "{e}");
}

#[test]
fn a_knob_set_flat_and_grouped_is_refused_naming_both() {
    let e = flow(
        "",
        "tlp_restart = true\n[flow.tcp.recovery]\ntlp_restart = false",
    )
    .unwrap_err();
    assert_eq!(e.field, "flow[0].tcp.recovery.tlp_restart", "{e}");
    assert!(e.message.contains("tcp.tlp_restart"), "{e}");
}

#[test]
fn fastopen_table_reaches_the_config_and_bad_values_name_field_and_range() {
    let sc = flow(
        "",
        "[flow.tcp.fastopen]\nqueue = 4\nkey = \"000102030405060708090a0b0c0d0e0f\"",
    )
    .unwrap();
    let c = sc.flows[0].tcp.to_config(sc.flows[0].cc);
    let f = c.fastopen.expect("fastopen on");
    assert!(f.client && f.server);
    assert_eq!(f.max_pending, 4);
    assert_eq!(f.keys.unwrap().0[15], 15);
    // Off by default.
    let plain = flow("", "").unwrap();
    assert!(plain.flows[0]
        .tcp
        .to_config(plain.flows[0].cc)
        .fastopen
        .is_none());
    for (tcp, field, says) in [
        (
            "fastopen = { queue = 70000 }",
            "queue",
            "between 0 and 65535",
        ),
        (
            "fastopen = { cache_entries = 0 }",
            "cache_entries",
            "between 1 and 1000000",
        ),
        (
            "fastopen = { key = \"abc\" }",
            "key",
            "32 hexadecimal digits",
        ),
    ] {
        let e = flow("", tcp).unwrap_err();
        assert_eq!(e.field, format!("flow[0].tcp.fastopen.{field}"), "{e}");
        assert!(e.message.contains(says), "{e}");
    }
}

#[test]
fn a_linux_flow_refuses_the_module_parameter_tables() {
    // Linux's module parameters are the module's, not the connection's: the Linux
    // column refuses the tables (a real run's Linux flow reports it by key).
    for m in ["vegas", "hybla", "illinois", "htcp", "bic"] {
        let sc = flow(&format!("cc = \"{m}\""), &format!("[flow.tcp.{m}]")).unwrap();
        let (key, why) = sc.flows[0].tcp.linux_refusal().expect("refused");
        assert_eq!(key, m);
        assert!(why.contains("/sys/module"), "{why}");
        assert!(flow(&format!("cc = \"{m}\""), "").unwrap().flows[0]
            .tcp
            .linux_refusal()
            .is_none());
    }
}

//! Per-host clock drift (`[[node]] clock_ppm`, issue 33 §2): a host's TCP timestamp
//! clock can run fast or slow; the knob is range-checked with the field named, 0 (or
//! absent) gives the same run as before, and a drifting host still carries its flows.

use brisk_sim::topo_build;
use brisk_sim::wl_run::run_net;

fn scenario(node_extra: &str) -> String {
    format!(
        r#"
name = "drift"
duration = "10s"
[[node]]
name = "c"
kind = "host"
{node_extra}
[[node]]
name = "A"
kind = "router"
[[node]]
name = "B"
kind = "router"
[[node]]
name = "s"
kind = "host"
[[link]]
a = "c"
b = "A"
rate = "10Mbps"
delay = "10ms"
[[link]]
a = "A"
b = "B"
rate = "10Mbps"
delay = "10ms"
[[link]]
a = "B"
b = "s"
rate = "10Mbps"
delay = "10ms"
[workload]
sizes = {{ cdf = [[200000, 1.0]] }}
load = 0.3
flows = 6
"#
    )
}

fn err(text: &str) -> String {
    match topo_build::from_toml_str(text) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn clock_ppm_is_range_checked_with_the_field_named() {
    let e = err(&scenario("clock_ppm = 1001"));
    assert!(
        e.contains("node[0].clock_ppm") && e.contains("between -1000 and 1000 ppm, got 1001"),
        "{e}"
    );
    let e = err(&scenario("clock_ppm = -5000"));
    assert!(e.contains("got -5000"), "{e}");
    let router = scenario("").replace(
        "name = \"A\"\nkind = \"router\"",
        "name = \"A\"\nkind = \"router\"\nclock_ppm = 10",
    );
    let e = err(&router);
    assert!(e.contains("node[1].clock_ppm: only a host"), "{e}");
}

#[test]
fn zero_drift_is_the_same_run_and_a_drifting_host_carries_its_flows() {
    let run = |extra: &str| {
        let sc = topo_build::from_toml_str(&scenario(extra)).unwrap();
        let r = run_net(&sc, 3).unwrap();
        let fct: Vec<_> = r.flows.iter().map(|f| format!("{f:?}")).collect();
        (
            fct,
            r.flows
                .iter()
                .filter(|f| f.received == f.size && f.bad_bytes == 0)
                .count(),
        )
    };
    let (base, ok) = run("");
    assert_eq!(ok, 6);
    assert_eq!(run("clock_ppm = 0").0, base, "0 ppm changes nothing");
    let (fast, ok_fast) = run("clock_ppm = 1000");
    let (slow, ok_slow) = run("clock_ppm = -1000");
    assert_eq!((ok_fast, ok_slow), (6, 6));
    assert_eq!(fast.len(), 6);
    assert_eq!(slow.len(), 6);
}

/// `[[node]] sbd = true` (issue 33 §4): hosts only, named in the error; a host running
/// the detector whose flows do not follow it (no `fse = { sbd = true }`) runs the same
/// bytes as without it: the detector only observes.
#[test]
fn the_sbd_switch_is_for_hosts_and_only_observes() {
    let router = scenario("").replace(
        "name = \"A\"\nkind = \"router\"",
        "name = \"A\"\nkind = \"router\"\nsbd = true",
    );
    let e = err(&router);
    assert!(
        e.contains("node[1].sbd: only a host runs shared-bottleneck detection"),
        "{e}"
    );
    let run = |extra: &str| {
        let sc = topo_build::from_toml_str(&scenario(extra)).unwrap();
        let r = run_net(&sc, 3).unwrap();
        r.flows.iter().map(|f| format!("{f:?}")).collect::<Vec<_>>()
    };
    let base = run("");
    assert_eq!(base.len(), 6);
    assert_eq!(run("sbd = true"), base);
    assert_eq!(run("sbd = false"), base);
}

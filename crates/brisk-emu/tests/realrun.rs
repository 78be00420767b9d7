//! `brisk run --real` runs: each stack sends through the emulated bottleneck, the data
//! arrives intact, goodput fills the link, and the JSON has every field the
//! simulator's summary has, so the two compare field by field.

mod common;

use brisk_emu::path::{Dur, PathSpec, Rate};
use brisk_emu::realrun::{run_real, FlowStack, RealRun};
use brisk_emu::EmuConfig;
use brisk_time::Duration;
use common::lab_available;

fn run(stack: FlowStack) -> brisk_emu::realrun::RealResult {
    let path = EmuConfig {
        rtt: Some(Dur(Duration::from_millis(10))),
        bottleneck: PathSpec {
            rate: Some(Rate(20_000_000)),
            ..PathSpec::default()
        },
        reverse: None,
        seed: 1,
    };
    let mut run = RealRun::one_bulk_flow(
        "real-test".into(),
        Duration::from_secs(3),
        path,
        stack,
        "cubic",
        brisk_tcp::Config::default(),
    );
    run.delivery_log = 100_000;
    run_real(&run).expect("real run")
}

fn keys(v: &serde_json::Value) -> Vec<String> {
    v.as_object().unwrap().keys().cloned().collect()
}

#[test]
fn both_stacks_fill_the_link_intact_and_report_the_simulators_fields() {
    if !lab_available("real runs") {
        return;
    }
    let sc = brisk_sim::Scenario::from_toml_str(
        "name = \"x\"\nduration = \"1s\"\n[bottleneck]\nrate = \"20Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n",
    )
    .unwrap();
    let sim = brisk_sim::run(&sc, 1).unwrap().to_json();
    for stack in [FlowStack::Brisk, FlowStack::Linux] {
        let r = run(stack);
        let f = &r.flows[0];
        eprintln!("{}", r.table());
        assert!(f.stream_ok, "{stack:?}: stream intact");
        assert!(f.goodput_bps > 15e6, "{stack:?}: goodput {}", f.goodput_bps);
        let srtt = f.srtt.expect("srtt samples");
        assert!(srtt.mean > 10e6, "{stack:?}: srtt at least the base RTT");
        let j = r.to_json();
        for k in keys(&sim) {
            if k != "sim" {
                assert!(j.get(&k).is_some(), "{stack:?}: top-level key {k}");
            }
        }
        for k in keys(&sim["flows"][0]) {
            assert!(j["flows"][0].get(&k).is_some(), "{stack:?}: flow key {k}");
        }
        for k in keys(&sim["bottleneck"]) {
            assert!(
                j["bottleneck"].get(&k).is_some(),
                "{stack:?}: bottleneck key {k}"
            );
        }
        assert_eq!(j["flows"][0]["stack"], stack.name());
    }
}

#[test]
fn simulator_rejects_linux_flows_with_a_clear_error() {
    let sc = brisk_sim::Scenario::from_toml_str(
        "name = \"x\"\nduration = \"1s\"\n[bottleneck]\nrate = \"20Mbit\"\n[[flow]]\nrtt = \"10ms\"\nstack = \"linux\"\napp = { kind = \"bulk\" }\n",
    )
    .expect("stack = \"linux\" parses");
    assert_eq!(sc.flows[0].stack, brisk_sim::scenario::Stack::Linux);
    let e = brisk_sim::run(&sc, 1).expect_err("the simulator cannot run Linux TCP");
    assert!(e.to_string().contains("--real"), "{e}");
}

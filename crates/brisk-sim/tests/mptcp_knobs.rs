//! `[flow.tcp.mptcp]` in the simulator: the knobs reach both endpoints' `Config::mptcp`,
//! the coupled controllers are `cc` names, a flow with the table runs brisk's MPTCP
//! connection, with its subflows.

use brisk_sim::Scenario;
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::mptcp::pm::PmMode;
use brisk_tcp::mptcp::sched::SchedKind;

fn scenario(cc: &str, mptcp: &str) -> String {
    format!(
        "name = \"mp\"\nduration = \"3s\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = 50 }}\n\
         [[flow]]\nrtt = \"30ms\"\ncc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n\
         [[flow]]\nrtt = \"50ms\"\nstart = \"200ms\"\ncc = \"{cc}\"\napp = {{ kind = \"bulk\", bytes = 300000 }}\n{mptcp}"
    )
}

/// The knobs of the second flow (the table follows its `[[flow]]`).
const TABLE: &str = "[flow.tcp.mptcp]\nsubflows = 4\nadd_addr_accepted = 1\npath_manager = \"ndiffports\"\n\
                     ndiffports = 3\nscheduler = \"sttf\"\nchecksum = true\nrecv_buffer = \"2MiB\"\n\
                     [[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.200.1\"\nsignal = true\n";

#[test]
fn the_table_reaches_config_mptcp_and_its_absence_leaves_none() {
    let sc = Scenario::from_toml_str(&scenario("olia", TABLE)).unwrap();
    assert!(sc.flows[0].tcp.to_config(sc.flows[0].cc).mptcp.is_none());
    let c = sc.flows[1].tcp.to_config(sc.flows[1].cc);
    let m = c.mptcp.expect("[flow.tcp.mptcp] gives Config::mptcp");
    assert_eq!(m.pm.limits.subflows, 4);
    assert_eq!(m.pm.limits.add_addr_accepted, 1);
    assert_eq!(m.pm.mode, PmMode::NDiffPorts { n: 3 });
    assert_eq!(m.scheduler, SchedKind::Sttf);
    assert!(m.checksum);
    assert_eq!(m.recv.capacity, 2 << 20);
    assert_eq!(m.pm.endpoints.len(), 1);
    assert!(m.pm.endpoints[0].signal && !m.pm.endpoints[0].subflow);
    assert_eq!(c.congestion.controller.base, CcAlgorithm::Olia);
}

#[test]
fn coupled_controllers_and_lisa_are_cc_names() {
    for (name, base, lisa) in [
        ("lia", CcAlgorithm::Lia, false),
        ("olia", CcAlgorithm::Olia, false),
        ("balia", CcAlgorithm::Balia, false),
        ("lia+lisa", CcAlgorithm::Lia, true),
        ("olia+lisa", CcAlgorithm::Olia, true),
    ] {
        let sc = Scenario::from_toml_str(&scenario(name, "")).unwrap();
        let c = sc.flows[0].tcp.to_config(sc.flows[0].cc);
        assert_eq!(c.congestion.controller.base, base, "{name}");
        assert_eq!(c.congestion.controller.tuning.coupled.lisa, lisa, "{name}");
        assert_eq!(c.congestion.controller.name(), name);
    }
    let e = Scenario::from_toml_str(&scenario("cubic+lisa", "")).unwrap_err();
    assert_eq!(e.field, "flow[0].cc");
    assert!(e.message.contains("lia+lisa"), "{e}");
    let e = Scenario::from_toml_str(&scenario("cubic", "[flow.tcp]\nlisa = true\n")).unwrap_err();
    assert_eq!(e.field, "flow[1].tcp.lisa");
    assert!(e.message.contains("coupled"), "{e}");
    let e =
        Scenario::from_toml_str(&scenario("lia+lisa", "[flow.tcp]\nlisa = false\n")).unwrap_err();
    assert_eq!(e.field, "flow[1].tcp.lisa");
}

#[test]
fn errors_name_the_key_and_flow_mptcp_points_at_the_tcp_table() {
    for (table, field, words) in [
        (
            "[flow.tcp.mptcp]\nsubflows = 12\n",
            "flow[1].tcp.mptcp.subflows",
            "0..=8",
        ),
        (
            "[flow.tcp.mptcp]\nscheduler = \"rr\"\n",
            "flow[1].tcp.mptcp.scheduler",
            "roundrobin",
        ),
        (
            "[flow.tcp.mptcp]\nsubflow = 2\n",
            "flow[1].tcp.mptcp.subflow",
            "unknown field",
        ),
        (
            "[flow.tcp.mptcp]\npath_manager = \"mesh\"\n",
            "flow[1].tcp.mptcp.path_manager",
            "fullmesh",
        ),
        (
            "[flow.mptcp]\nsubflows = 2\n",
            "flow[1].mptcp",
            "[flow.tcp.mptcp]",
        ),
    ] {
        let e = Scenario::from_toml_str(&scenario("lia", table)).unwrap_err();
        assert_eq!(e.field, field, "{table}: {e}");
        assert!(e.message.contains(words), "{table}: {e}");
    }
}

/// The table makes the run an MPTCP one (the DSS costs option space, so the bytes on
/// the wire differ from plain TCP's), intact and deterministic over several seeds; its
/// knobs all act (joins exist), so the scenario has no warning about them.
#[test]
fn a_brisk_flow_with_mptcp_runs_intact_without_a_warning() {
    let plain = Scenario::from_toml_str(&scenario("lia", "")).unwrap();
    let mp = Scenario::from_toml_str(&scenario("lia", TABLE)).unwrap();
    assert!(plain.warnings().is_empty());
    assert!(mp.warnings().is_empty(), "{:?}", mp.warnings());
    for seed in [1, 2, 3] {
        let a = brisk_sim::run(&plain, seed).unwrap();
        let b = brisk_sim::run(&mp, seed).unwrap();
        for f in &b.flows {
            assert!(f.stream_ok, "seed {seed} flow {}: intact", f.id);
        }
        assert_ne!(
            a.to_json()["flows"][1],
            b.to_json()["flows"][1],
            "seed {seed}: the MPTCP flow runs exactly as plain TCP; does the connection read Config::mptcp?"
        );
        let again = brisk_sim::run(&mp, seed).unwrap();
        assert_eq!(b.to_json(), again.to_json(), "seed {seed}: deterministic");
    }
}

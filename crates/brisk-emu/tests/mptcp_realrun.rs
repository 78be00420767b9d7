//! `[flow.tcp.mptcp]` in real runs (`brisk run --real`): a Linux flow opens an
//! `IPPROTO_MPTCP` socket to an MPTCP listener, the namespaces get the table's limits,
//! sysctls and endpoints, and the run reports each subflow and the kernels' MPTCP
//! counters. Over the single-path dumbbell a `subflow` endpoint (a second sender
//! address) gives a second subflow over the same emulated path. Root-only; skipped
//! otherwise.

mod common;

use brisk_emu::realrun::{real_run, run_real, RealResult};
use brisk_emu::stack::mptcp_kernel;

fn available(test: &str) -> bool {
    if !common::lab_available(test) {
        return false;
    }
    if let Some(why) = mptcp_kernel::unsupported_reason() {
        eprintln!("SKIPPED {test}: {why}");
        return false;
    }
    true
}

const TABLE: &str = "[flow.tcp.mptcp]\nsubflows = 2\nchecksum = true\n\
                     [[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.3\"\nsubflow = true\n";

fn run(text: &str) -> RealResult {
    let sc = brisk_sim::Scenario::from_toml_str(text).unwrap();
    let run = real_run(&sc, "<test>", None).unwrap();
    let r = run_real(&run).expect("real run");
    eprintln!("{}", r.table());
    r
}

/// Counters that mean a checksum, join, mapping or option error (nstat names).
const ERRORS: &[&str] = &[
    "MPTcpExtDataCsumErr",
    "MPTcpExtDSSNoMatchTCP",
    "MPTcpExtDSSNotMatching",
    "MPTcpExtInfiniteMapRx",
    "MPTcpExtMPJoinSynAckHMacFailure",
    "MPTcpExtMPJoinAckHMacFailure",
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtMPFailRx",
    "MPTcpExtMPFailTx",
    "MPTcpExtMPRstRx",
];

#[test]
fn a_linux_mptcp_flow_uses_both_subflows_through_the_emulator_and_reports_nstat() {
    if !available("a_linux_mptcp_flow_uses_both_subflows") {
        return;
    }
    let r = run(&format!(
        "name = \"mp\"\nduration = \"4s\"\n[bottleneck]\nrate = \"20Mbit\"\nqueue = {{ kind = \"droptail\", packets = 100 }}\n\
         [[flow]]\nstack = \"linux\"\ncc = \"reno\"\nrtt = \"20ms\"\napp = {{ kind = \"bulk\" }}\n{TABLE}"
    ));
    let f = &r.flows[0];
    assert!(f.stream_ok, "intact: {:?}", f.error);
    assert!(f.goodput_bps > 12e6, "fills the link: {}", f.goodput_bps);
    assert_eq!(f.subflows.len(), 2, "two subflows: {:?}", f.subflows);
    let total: u64 = f.subflows.iter().map(|s| s.bytes_acked).sum();
    for s in &f.subflows {
        assert!(
            s.bytes_acked > total / 20,
            "each subflow carries data (>5 %): {:?}",
            f.subflows
        );
    }
    let m = r.mptcp.as_ref().expect("MPTCP counters");
    let c =
        |side: &std::collections::BTreeMap<String, u64>, k: &str| side.get(k).copied().unwrap_or(0);
    assert_eq!(c(&m.receivers, "MPTcpExtMPCapableSYNRX"), 1, "{m:?}");
    assert_eq!(c(&m.senders, "MPTcpExtMPCapableSYNACKRX"), 1, "{m:?}");
    assert_eq!(c(&m.receivers, "MPTcpExtMPJoinSynRx"), 1, "{m:?}");
    assert_eq!(c(&m.senders, "MPTcpExtMPJoinSynAckRx"), 1, "{m:?}");
    assert_eq!(c(&m.receivers, "MPTcpExtMPJoinAckRx"), 1, "{m:?}");
    for side in [&m.senders, &m.receivers] {
        for k in ERRORS {
            assert_eq!(c(side, k), 0, "{k}: {m:?}");
        }
    }
    let j = r.to_json();
    assert_eq!(
        j["real"]["mptcp"]["counters"]["receivers"]["MPTcpExtMPJoinAckRx"].as_u64(),
        Some(1)
    );
    assert_eq!(
        j["real"]["mptcp"]["flows"][0]["subflows"]
            .as_array()
            .map(Vec::len),
        Some(2)
    );
}

/// A brisk flow with the table is brisk's MPTCP client to Linux's MPTCP listener: the
/// receiver counts the MP_CAPABLE SYN, no error or fallback counter moves, the stream
/// is intact.
#[test]
fn a_brisk_mptcp_flow_meets_a_linux_mptcp_listener() {
    if !available("a_brisk_mptcp_flow_meets_a_linux_mptcp_listener") {
        return;
    }
    let r = run(
        "name = \"mpb\"\nduration = \"2s\"\n[bottleneck]\nrate = \"20Mbit\"\n\
         [[flow]]\nrtt = \"20ms\"\ncc = \"lia\"\napp = { kind = \"bulk\", bytes = 1000000 }\n\
         [flow.tcp.mptcp]\nsubflows = 2\n",
    );
    let f = &r.flows[0];
    assert!(f.stream_ok, "intact: {:?}", f.error);
    assert!(
        f.subflows.is_empty(),
        "subflows are read from Linux senders only"
    );
    let m = r.mptcp.as_ref().expect("MPTCP counters");
    assert!(m.senders.is_empty(), "no Linux senders: {m:?}");
    let c = |k: &str| m.receivers.get(k).copied().unwrap_or(0);
    assert_eq!(c("MPTcpExtMPCapableSYNRX"), 1, "{m:?}");
    for k in ERRORS {
        assert_eq!(c(k), 0, "{k}: {m:?}");
    }
}

/// Limits, sysctls and endpoints are per namespace, which the flows share: flows that
/// ask for different ones are refused before any namespace is made.
#[test]
fn mptcp_flows_that_disagree_on_namespace_settings_are_refused() {
    let two = |a: &str, b: &str| {
        let sc = brisk_sim::Scenario::from_toml_str(&format!(
            "name = \"c\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n\
             [[flow]]\nstack = \"linux\"\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp.mptcp]\n{a}\n\
             [[flow]]\nstack = \"linux\"\nrtt = \"10ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp.mptcp]\n{b}\n"
        ))
        .unwrap();
        run_real(&real_run(&sc, "c.toml", None).unwrap())
            .err()
            .map(|e| e.to_string())
    };
    let e = two("subflows = 2", "subflows = 3").expect("refused");
    assert!(
        e.contains("flow[1].tcp.mptcp") && e.contains("flow[0]"),
        "{e}"
    );
    let e = two(
        "[[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.3\"",
        "[[flow.tcp.mptcp.endpoint]]\naddr = \"198.18.0.4\"",
    )
    .expect("refused");
    assert!(e.contains("flow[1].tcp.mptcp.endpoint"), "{e}");
}

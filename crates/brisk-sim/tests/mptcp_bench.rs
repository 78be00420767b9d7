//! `RunOptions::mptcp` (`brisk bench sim`'s MPTCP line): every flow runs MPTCP end to
//! end and its bytes pass the checks, over seeds and a lossy path; without it the same
//! flows are plain TCP and report so.

use brisk_sim::{run_with, RunOptions, Scenario};

const SC: &str = r#"
name = "mp-bench"
duration = "2s"
[bottleneck]
rate = "50Mbit"
queue = { kind = "droptail", packets = 100 }
loss = { kind = "bernoulli", p = 0.005 }
[[flow]]
rtt = "10ms"
cc = "cubic"
app = { kind = "bulk" }
"#;

#[test]
fn mptcp_option_makes_checked_mptcp_flows_and_its_absence_plain_tcp() {
    let sc = Scenario::from_toml_str(SC).unwrap();
    for seed in 1..=3 {
        let tcp = run_with(&sc, seed, &RunOptions::default()).unwrap();
        let mp = run_with(
            &sc,
            seed,
            &RunOptions {
                mptcp: Some(brisk_tcp::mptcp::MptcpConfig::default()),
                ..RunOptions::default()
            },
        )
        .unwrap();
        let (t, m) = (&tcp.flows[0], &mp.flows[0]);
        assert!(
            !t.mptcp,
            "seed {seed}: a flow without the option is plain TCP"
        );
        assert!(m.mptcp, "seed {seed}: the flow ran MPTCP to the end");
        for f in [t, m] {
            // The SHA-256 digests are on here (the benchmark keeps only the per-byte
            // check): whole and correct streams both ways.
            assert!(f.stream_ok, "seed {seed}: stream check");
            assert!(f.error.is_none(), "seed {seed}: {:?}", f.error);
            assert!(
                f.bytes_delivered > 1_000_000,
                "seed {seed}: bytes delivered"
            );
        }
        // One subflow on the same path: MPTCP loses only the DSS's option space (about
        // 2 % of each segment) and what that changes in the loss pattern.
        assert!(
            m.goodput_bps > 0.9 * t.goodput_bps,
            "seed {seed}: MPTCP {:.1} against TCP {:.1} Mbit/s",
            m.goodput_bps / 1e6,
            t.goodput_bps / 1e6
        );
        eprintln!(
            "seed {seed}: TCP {:.1} Mbit/s, MPTCP {:.1} Mbit/s",
            t.goodput_bps / 1e6,
            m.goodput_bps / 1e6
        );
    }
}

/// `brisk bench sim`'s two-subflow line (issue 36 §4): ndiffports 2 on one path opens
/// the second subflow, both carry data, and the bytes pass the checks, over seeds.
#[test]
fn two_ndiffports_subflows_both_carry_checked_data() {
    let sc = Scenario::from_toml_str(SC).unwrap();
    let mut cfg = brisk_tcp::mptcp::MptcpConfig::default();
    cfg.pm.mode = brisk_tcp::mptcp::pm::PmMode::NDiffPorts { n: 2 };
    for seed in 1..=3 {
        let mp = run_with(
            &sc,
            seed,
            &RunOptions {
                mptcp: Some(cfg.clone()),
                ..RunOptions::default()
            },
        )
        .unwrap();
        let f = &mp.flows[0];
        assert!(f.mptcp, "seed {seed}: still MPTCP");
        assert!(f.stream_ok, "seed {seed}: stream check");
        assert!(f.error.is_none(), "seed {seed}: {:?}", f.error);
        assert_eq!(f.mptcp_subflows.len(), 2, "seed {seed}: two subflows");
        for (i, s) in f.mptcp_subflows.iter().enumerate() {
            assert!(
                s.bytes_acked > 0,
                "seed {seed}: subflow {i} carried no data ({} bytes acked)",
                s.bytes_acked
            );
        }
    }
}

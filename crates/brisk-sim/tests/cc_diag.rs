//! Controller diagnostics reach the run result: per-consult delay-correlation rows in
//! `FlowResult::cc_series`, the final state in `cc_diag` and `summary.json`, `dc.csv`.

use brisk_sim::{run, Scenario};
use brisk_tcp::cc::CcDiagnostics;

fn scenario(dc: bool) -> Scenario {
    let tcp = if dc {
        "[flow.tcp]\ndelay_correlation = true\n"
    } else {
        ""
    };
    let text = format!(
        r#"
name = "ccdiag"
duration = "3s"
[bottleneck]
rate = "10Mbit"
queue = {{ kind = "droptail", packets = 1000 }}
[[flow]]
rtt = "10ms"
app = {{ kind = "bulk" }}
{tcp}"#
    );
    Scenario::from_toml_str(&text).unwrap()
}

#[test]
fn delay_correlation_flow_records_every_consult() {
    let res = run(&scenario(true), 1).unwrap();
    let f = &res.flows[0];
    let Some(CcDiagnostics::DelayCorrelation(last)) = f.cc_diag else {
        panic!("no final diagnostics: {:?}", f.cc_diag);
    };
    assert!(last.consults > 100 && last.clamps > 0, "{last:?}");
    assert_eq!(f.cc_rows_dropped, 0);
    // One row per consult (plus clamp/release changes), times non-decreasing, and
    // the rows carry the sender's RTT and cwnd.
    let consults: Vec<u64> = f
        .cc_series
        .iter()
        .filter_map(|(_, r)| match r.diag {
            CcDiagnostics::DelayCorrelation(d) => Some(d.consults),
            _ => None,
        })
        .collect();
    let mut distinct = consults.clone();
    distinct.dedup();
    // The first row is the initial state (no consult yet).
    assert_eq!(distinct, (0..=last.consults).collect::<Vec<_>>());
    assert!(f.cc_series.windows(2).all(|w| w[0].0 <= w[1].0));
    assert!(f.cc_series.iter().all(|(_, r)| r.rtt_ns > 0 && r.cwnd > 0));
    let json = res.to_json();
    assert_eq!(json["flows"][0]["cc_diag"]["kind"], "delay_correlation");
    assert_eq!(json["flows"][0]["cc_diag"]["consults"], last.consults);

    let dir = std::env::temp_dir().join(format!("brisk-sim-ccdiag-{}", std::process::id()));
    res.write_dir(&dir).unwrap();
    let csv = std::fs::read_to_string(dir.join("dc.csv")).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(csv.starts_with("time_s,flow,r,"));
    assert_eq!(csv.lines().count(), f.cc_series.len() + 1);
}

#[test]
fn plain_cubic_flow_has_no_diagnostics_and_no_dc_csv() {
    let res = run(&scenario(false), 1).unwrap();
    let f = &res.flows[0];
    assert!(f.cc_diag.is_none() && f.cc_series.is_empty());
    assert!(res.to_json()["flows"][0]["cc_diag"].is_null());
    let dir = std::env::temp_dir().join(format!("brisk-sim-noccdiag-{}", std::process::id()));
    res.write_dir(&dir).unwrap();
    let has_dc = dir.join("dc.csv").exists();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(!has_dc);
}

//! new-cwv: new-CWV (RFC 7661, RITE D1.3 App. A.2 and body §2.2.3.4) against standard
//! TCP, claim CWV-4 (spec §2.3): (a) a bulk flow is unchanged (start-up and FCT), and
//! (b) a bursty rate-limited application (100 KB every 2 s over 10 Mbit/s, 100 ms)
//! completes its bursts as fast as with slow-start-after-idle off, and faster than
//! with RFC 5681's restart after idle. CWV-1 to CWV-3 are exact unit tests of the
//! layer (`crates/brisk-tcp/src/cc/new_cwv/tests.rs`, W-9), not simulations.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan};
use brisk_sim::{RunResult, Scenario};

pub const ID: &str = "new-cwv";
pub const TITLE: &str =
    "new-CWV: bulk start-up and bursty rate-limited traffic (RFC 7661, D1.3 A.2)";
pub const CLAIMS: &[&str] = &["CWV-4a", "CWV-4b"];

/// The arms: name, `[flow.tcp]` lines.
const ARMS: &[(&str, &str)] = &[
    (
        "RFC 5681 (slow start after idle)",
        "slow_start_after_idle = true",
    ),
    ("no restart after idle", "slow_start_after_idle = false"),
    ("new-CWV", "new_cwv = true"),
];
const SSAI: usize = 0;
const CWV: usize = 2;

fn scenario(app: &str, tcp: &str, duration_s: u64) -> Result<Scenario, String> {
    let text = format!(
        "name = \"new-cwv\"\nduration = \"{duration_s}s\"\n[bottleneck]\nrate = \"10Mbit\"\n\
         queue = {{ kind = \"droptail\", packets = 200 }}\n[[flow]]\nrtt = \"100ms\"\n\
         cc = \"cubic\"\napp = {app}\n[flow.tcp]\n{tcp}\n"
    );
    Scenario::from_toml_str_named(&text, ID).map_err(|e| e.to_string())
}

const BULK: &str = "{ kind = \"bulk\", bytes = \"5MB\" }";
const BURSTS: &str = "{ kind = \"records\", size = \"100KB\", interval = \"2s\" }";

pub fn plan(quick: bool) -> Result<Plan, String> {
    let burst_s = if quick { 20 } else { 60 };
    let mut jobs = Vec::new();
    for (name, tcp) in [ARMS[SSAI], ARMS[CWV]] {
        jobs.push(Job::new(
            format!("new-cwv bulk {name}"),
            scenario(BULK, tcp, 30)?,
            1,
        ));
    }
    for (name, tcp) in ARMS {
        jobs.push(Job::new(
            format!("new-cwv bursts {name}"),
            scenario(BURSTS, tcp, burst_s)?,
            1,
        ));
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(analyse),
    })
}

/// Time (s) until the receiver had read `bytes`, from the goodput series.
fn time_to(r: &RunResult, bytes: u64) -> f64 {
    let mut sum = 0u64;
    for (t, b) in &r.flows[0].goodput_series {
        sum += *b;
        if sum >= bytes {
            return *t as f64 / 1e9;
        }
    }
    f64::NAN
}

fn analyse(runs: &[RunResult]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let fct = |x: &RunResult| x.flows[0].fct.map_or(f64::NAN, |d| d.as_secs_f64());
    let (bulk_std, bulk_cwv) = (&runs[0], &runs[1]);
    let (f_std, f_cwv) = (fct(bulk_std), fct(bulk_cwv));
    let (s_std, s_cwv) = (time_to(bulk_std, 1_000_000), time_to(bulk_cwv, 1_000_000));
    let d_fct = (f_cwv / f_std - 1.0) * 100.0;
    let d_start = (s_cwv / s_std - 1.0) * 100.0;
    r.claims.push(
        Claim::new(
            "CWV-4a",
            "bulk 5 MB: FCT and time to 1 MB, new-CWV vs standard",
        )
        .paper_text("no gap at start-up")
        .ours_text(&format!("FCT {d_fct:+.2} %, 1 MB {d_start:+.2} %"))
        .unit("%")
        .tolerance("FCT ±2 %, start-up ±5 %")
        .check(d_fct.abs() <= 2.0 && d_start.abs() <= 5.0),
    );
    let lat = |x: &RunResult| x.flows[0].record_latency.map_or(f64::NAN, |s| s.mean / 1e6);
    let (l_ssai, l_no, l_cwv) = (lat(&runs[2]), lat(&runs[3]), lat(&runs[4]));
    let near = (l_cwv - l_no).abs() <= 0.10 * l_no;
    r.claims.push(
        Claim::new("CWV-4b", "100 KB bursts every 2 s: mean burst completion")
            .paper_text("lower latency for rate-changing apps")
            .ours_text(&format!(
                "new-CWV {l_cwv:.0} ms, no restart {l_no:.0} ms, RFC 5681 {l_ssai:.0} ms"
            ))
            .unit("ms")
            .tolerance("new-CWV ≈ no restart (±10 %) < RFC 5681")
            .check(near && l_cwv < l_ssai),
    );
    r.notes.push(
        "Set-up (spec §2.3, assumed sizes): one CUBIC flow, 10 Mbit/s bottleneck, 200-packet drop-tail queue, 100 ms RTT, seed 1 (no randomness). (a) 5 MB bulk transfer, standard TCP against new-CWV; start-up = time until the receiver read 1 MB (100-ms goodput bins). (b) a 100 KB record every 2 s (records app; latency = generation to the last byte at the application, the burst completion time); arms: RFC 5681 with slow start after idle (brisk's and Linux's default), slow_start_after_idle = false, and new-CWV (which replaces the restart, spec resolution C10). CWV-1 to CWV-3 (state machine, W-9's loss and NVP cases) are exact unit tests of the layer, not simulated here. new-CWV does not pace in brisk yet (the RFC's SHOULD; brisk has no pacing), so its bursts leave at line rate like the no-restart arm's.".into(),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quick_plan_builds_five_runs() {
        let p = plan(true).unwrap();
        assert_eq!(p.jobs.len(), 5);
        assert!(p.jobs[1].scenario.flows[0]
            .tcp
            .to_config(p.jobs[1].scenario.flows[0].cc)
            .congestion
            .controller
            .new_cwv()
            .is_some());
    }
}

//! design: the ledger's `design` rows, which unit and property tests check (DC-7, DC-8,
//! UT-1, UT-4, MN-11, RDB-7, RDB-8, TLP-7, CWV-1 to CWV-3, RC3-18), and MN-6's seeded
//! fuzz loop (`brisk_minion::utls::fuzz`). Each row runs the
//! check function its unit test runs (`brisk_tcp::claim_checks`,
//! `brisk_sim::claim_checks`, `brisk_minion::scan::checks`): the verdict is `pass` when
//! the check returns and `fail`, with its message, when it panics. Property checks run
//! a fixed number of cases from a seeded generator (64 quick, 256 full).
//!
//! Also here: `not-reproducible`, the rows brisk cannot check, each `n/a` with its
//! reason, so that the report covers every row of the ledger.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const ID: &str = "design";
pub const TITLE: &str =
    "Design claims checked by the unit and property tests (exact traces, thresholds, state sizes)";
pub const CLAIMS: &[&str] = &[
    "DC-7", "DC-8", "UT-1", "UT-4", "MN-11", "MN-6", "RDB-7", "RDB-8", "TLP-7", "CWV-1", "CWV-2",
    "CWV-3", "RC3-18",
];

/// One design row: the ledger's statement and the check that decides it.
struct Row {
    id: &'static str,
    description: &'static str,
    paper: &'static str,
    /// The unit tests that run the same check (`cargo test --release -p …`).
    tests: &'static str,
    check: fn(usize) -> String,
}

const ROWS: &[Row] = &[
    Row {
        id: "DC-7",
        description: "Delay correlation: dither, least-squares fit on the FIFO model, running sums (thesis §3.2.4, §3.4.2, Algs 1–3)",
        paper: "est 8 → cwnd 10 / 18; est 176 → 178 / 187; FIFO model gives R = 1 and the BDP; running sums = recomputation",
        tests: "brisk-tcp delay_corr",
        check: brisk_tcp::claim_checks::dc7,
    },
    Row {
        id: "DC-8",
        description: "Delay correlation: per-socket state (thesis §3.2.1, §5.1)",
        paper: "≈296 B at W = 32, ≈1064 B at W = 128 (8 W + 40)",
        tests: "brisk-tcp per_socket_state",
        check: |_| brisk_tcp::claim_checks::dc8(),
    },
    Row {
        id: "UT-1",
        description: "uTCP: the receiver's packet trace is byte-identical with unordered receive on and off (seeded lossy runs)",
        paper: "wire-visible behaviour identical to TCP",
        tests: "brisk-sim --test unordered",
        check: |_| brisk_sim::claim_checks::ut1(),
    },
    Row {
        id: "UT-4",
        description: "uTCP: arrivals 1, 3, 2 read as 1, 3 (out of order, with offset), 2, 3; at-least-once delivery",
        paper: "reads 1, 3 (OOO), 2, 3; each OOO byte redelivered once in order",
        tests: "brisk-tcp unordered",
        check: brisk_tcp::claim_checks::ut4,
    },
    Row {
        id: "MN-11",
        description: "uCOBS: which records a segment loss or re-segmentation delays (Minion §5.3, Fig. 4)",
        paper: "(a) 1 and 3 at once, 2 after retransmission; (b) 1, then 2 and 3; (c) 3 at once; single markers fail",
        tests: "brisk-minion scan",
        check: |_| brisk_minion::scan::checks::mn11(),
    },
    Row {
        id: "MN-6",
        description: "uTLS: a stock TLS sender's stream, tampered with (flipped bytes, planted headers, garbage, replays, truncation) and delivered as uTCP would (0–30 % of segments late): deliveries of data the peer did not send (Minion §6, §4.6)",
        paper: "never delivers a record whose MAC fails (0); a tampered record in order is fatal, as in TLS",
        tests: "brisk-minion mn6",
        check: |cases| mn6(cases as u64 * 150 / 64),
    },
    Row {
        id: "RDB-7",
        description: "RDB: the Fig. 1 trace, no extra packets, per-MSS caps, one CWR per window (LCN 2015 §III)",
        paper: "exact trace; packets with RDB = without; ≤ 12 × 120 B, ≤ 3 × 400 B per MSS",
        tests: "brisk-tcp rdb",
        check: |_| brisk_tcp::claim_checks::rdb7(),
    },
    Row {
        id: "RDB-8",
        description: "RDB: thin-stream thresholds DPIFL and SPIFL (LCN 2015 §III-B)",
        paper: "bundles while PIF < 15 (150 ms / 10 ms); SPIFL3 while PIF < 3",
        tests: "brisk-tcp thin_thresholds",
        check: |_| brisk_tcp::claim_checks::rdb8(),
    },
    Row {
        id: "TLP-7",
        description: "RTO-restart and TLP-restart timers on a tail loss (RITE D1.3 App. A.1 §2)",
        paper: "RTOR timer = RTO − T_earliest with < 4 outstanding; TLPR probe = PTO − T_last; each saves about one RTT",
        tests: "brisk-tcp restart",
        check: |_| brisk_tcp::claim_checks::tlp7(),
    },
    Row {
        id: "CWV-1",
        description: "new-CWV: phase transitions on scripted ACK streams (RFC 7661 §4.1–4.5)",
        paper: "validated iff pipeACK ≥ cwnd/2 or undefined; no growth unless cwnd-limited",
        tests: "brisk-tcp new_cwv",
        check: |_| brisk_tcp::claim_checks::cwv1(),
    },
    Row {
        id: "CWV-2",
        description: "new-CWV: loss in the non-validated phase (RFC 7661 §4.4.1, W-9)",
        paper: "cwnd = max(pipeACK, LFS)/2, at the end (… − R)/2 ≥ 1 MSS, pipeACK undefined",
        tests: "brisk-tcp new_cwv",
        check: |_| brisk_tcp::claim_checks::cwv2(),
    },
    Row {
        id: "CWV-3",
        description: "new-CWV: closedown per elapsed NVP (RFC 7661 §4.4.3, W-9)",
        paper: "per NVP: ssthresh = max(ssthresh, ¾ cwnd), cwnd = max(½ cwnd, IW)",
        tests: "brisk-tcp new_cwv",
        check: |_| brisk_tcp::claim_checks::cwv3(),
    },
    Row {
        id: "RC3-18",
        description: "RC3: the paper's worked example, 66 packets, IW 4, 21 and 22 lost at priority 2 (NSDI 2014 §2.2, Fig. 3)",
        paper: "RLP 66…27 at p1, 26…5 at p2; cwnd 4 → 8 → 16; done in 4 RTTs (TCP 5)",
        tests: "brisk-tcp rc3",
        check: |_| brisk_tcp::claim_checks::rc3_18(),
    },
];

/// MN-6's fuzz loop over `sessions` seeded sessions: panics (a failing row) on any
/// delivery of data the peer did not send, a datagram delivered twice, a buffer over
/// its bound, or tampering that never failed a session in order.
fn mn6(sessions: u64) -> String {
    let r = brisk_minion::utls::fuzz::mn6_fuzz(sessions);
    assert!(
        r.wrong == 0 && r.twice == 0 && r.over_bound == 0,
        "{} wrong deliveries, {} repeated, {} sessions over their buffer bounds in {} sessions",
        r.wrong,
        r.twice,
        r.over_bound,
        r.sessions
    );
    assert!(r.failed > 0, "no tampered session failed in order");
    format!(
        "0 wrong deliveries in {} tampered sessions ({} genuine datagrams delivered, {} sessions failed in order as TLS does); interop with OpenSSL over real packets: brisk-emu --test utls_real",
        r.sessions, r.delivered, r.failed
    )
}

/// The message of a caught panic.
fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "the check panicked".into())
}

/// Runs `check`, turning a panic into the failure's message.
pub fn run_check(check: impl FnOnce() -> String) -> Result<String, String> {
    catch_unwind(AssertUnwindSafe(check)).map_err(|p| panic_text(&*p))
}

fn row_claim(r: &Row, cases: usize) -> Claim {
    let c = Claim::new(r.id, r.description)
        .paper_text(r.paper)
        .tolerance("exact (the unit test's check)");
    let how = format!(
        "Ran the check of `cargo test --release -p {}`{}.",
        r.tests,
        if matches!(r.id, "DC-7" | "UT-4") {
            format!(" with {cases} seeded property cases")
        } else if r.id == "MN-6" {
            format!(" with {} seeded sessions", cases * 150 / 64)
        } else {
            String::new()
        }
    );
    match run_check(|| (r.check)(cases)) {
        Ok(what) => c.ours_text(&what).check(true).note(how),
        Err(msg) => c
            .ours_text("check failed")
            .check(false)
            .note(format!("{how} It failed: {msg}")),
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let cases = if quick { 64 } else { 256 };
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| {
            let mut r = ExperimentResult::new(ID, TITLE);
            r.claims = ROWS.iter().map(|row| row_claim(row, cases)).collect();
            r.notes.push(format!(
                "Each row runs, in this process, the function its unit tests run (named in the row's note), so the verdict is that check's; property checks draw {cases} cases from a fixed seed over the proptest's input ranges (the unit tests draw 256 fresh ones). A check that panics is a failure with its message."
            ));
            r
        }),
    })
}

pub const NA_ID: &str = "not-reproducible";
pub const NA_TITLE: &str = "Ledger rows brisk does not check, with the reason";
pub const NA_CLAIMS: &[&str] = &["MN-3", "MN-13", "RC3-10", "RC3-14", "RC3-17"];

/// (id, description, paper value, why it is not checked).
const NOT_CHECKED: &[(&str, &str, &str, &str)] = &[
    (
        "MN-3",
        "Voice quality (PESQ) of uCOBS, TCP and UDP as competitors join (Minion §8.2, Fig. 9)",
        "no numbers; per minute uCOBS ≥ TCP, |uCOBS − UDP| ≤ 0.5",
        "Not built (optional): it needs a Speex UWB codec with loss concealment and ITU-T P.862.2 wideband PESQ, which no package here provides; the frame arrival times it would decode from are what mn-voip produces (docs/mechanisms/ucobs.md).",
    ),
    (
        "MN-13",
        "Code size of uTCP, uCOBS and uTLS (Minion Table 1)",
        "uTCP 565, uCOBS 732, uTLS 586 lines of C",
        "Informational in the ledger: C kernel and OpenSSL patches against a userspace Rust stack are not comparable line for line; brisk's counts are in docs/mechanisms/minion.md (MN-13).",
    ),
    (
        "RC3-10",
        "RC3 downlink-bottlenecked and 100 Gb/s fat-tree variants (NSDI 2014 §5.1.2, §6)",
        "(a) +10 %; (b) 45 % over flows, 66 % over bytes",
        "Not built: the paper does not specify either setting (the ledger asks for invented ones); the fat-tree topology exists (brisk_sim::topo_gen) but no experiment runs it yet (docs/mechanisms/rc3.md, Next).",
    ),
    (
        "RC3-14",
        "RC3 against RCP (NSDI 2014 §5.1.4, Fig. 14c)",
        "no numbers; RC3 ≤ RCP in the ≤ 4-packet bin",
        "Not built (optional in the ledger): brisk has no RCP model (explicit rate allocation at routers).",
    ),
    (
        "RC3-17",
        "RC3 with TSO and LRO (NSDI 2014 §5.2, Fig. 18)",
        "RC3 with TSO/LRO cuts packet-processing overhead by almost 50 %",
        "Not applicable (the ledger's own verdict): NIC segmentation and receive offloads of a Linux kernel path; brisk is a userspace stack.",
    ),
];

pub fn plan_not_reproducible(_quick: bool) -> Result<Plan, String> {
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(|_| {
            let mut r = ExperimentResult::new(NA_ID, NA_TITLE);
            for (id, what, paper, why) in NOT_CHECKED {
                r.claims.push(
                    Claim::new(id, what)
                        .paper_text(paper)
                        .ours_text("not checked")
                        .not_applicable(*why),
                );
            }
            r.notes.push("These rows are listed so that the report covers every row of the ledger; each says why brisk does not check it.".into());
            r
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panicking_check_is_a_failure_with_its_message() {
        let r = Row {
            id: "X-1",
            description: "x",
            paper: "p",
            tests: "none",
            check: |_| panic!("value 3 is not 4"),
        };
        let c = row_claim(&r, 1);
        assert_eq!(c.verdict, crate::Verdict::Fail);
        assert!(c.note.contains("value 3 is not 4"), "{}", c.note);
        let ok = Row {
            check: |n| format!("{n} cases"),
            ..r
        };
        let c = row_claim(&ok, 7);
        assert_eq!(c.verdict, crate::Verdict::Pass);
        assert_eq!(c.ours, serde_json::json!("7 cases"));
    }

    #[test]
    fn every_row_is_declared_and_in_the_ledger() {
        let ids: Vec<&str> = ROWS.iter().map(|r| r.id).collect();
        assert_eq!(ids, CLAIMS);
        let na: Vec<&str> = NOT_CHECKED.iter().map(|r| r.0).collect();
        assert_eq!(na, NA_CLAIMS);
        let ledger: Vec<String> = crate::ledger::rows(crate::ledger::EMBEDDED)
            .into_iter()
            .map(|r| r.id)
            .collect();
        for id in ids.iter().chain(&na) {
            assert!(
                ledger.iter().any(|l| l == id),
                "{id} not in repro/claims.md"
            );
        }
    }
}

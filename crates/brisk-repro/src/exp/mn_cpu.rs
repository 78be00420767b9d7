//! mn-cpu: Minion's CPU cost (claim MN-5; Minion NSDI 2012 §1, §8.1, Fig. 6(a)(b);
//! Nowlan's thesis §6.2.1). The driver is `brisk_minion::cpu_cost`, the same code as
//! `cargo bench -p brisk-minion --bench mn_cpu`: two brisk endpoints and their
//! applications in one thread, 60 ms RTT, 0/1/2/5 % loss, four arms (raw TCP, uCOBS,
//! stock rustls, uTLS) moving the same payload in 1448-B writes.
//!
//! CPU time is not deterministic, so every row is a ratio to a peer arm measured in
//! the same run, interleaved with it (the thread's CPU time, `CLOCK_THREAD_CPUTIME_ID`),
//! never an absolute time; it runs as a real-time experiment, alone after the
//! simulator pool, so no simulation competes with it for the core. Quick: 4 MiB per
//! run, 3 runs per cell (about 5 s); full: 30 MiB (the paper's 30 MB), 5 runs.

use crate::claim::{fmt_num, Claim};
use crate::experiment::{ExperimentResult, Plan};
use brisk_minion::cpu_cost::{measure, Arm, Cost, Measured, LOSSES};
use std::panic::{catch_unwind, AssertUnwindSafe};

pub const ID: &str = "mn-cpu";
pub const TITLE: &str =
    "Minion CPU cost: uCOBS against raw TCP, uTLS against TLS (Minion §8.1, Fig. 6)";
pub const CLAIMS: &[&str] = &["MN-5a", "MN-5b", "MN-5c"];

/// Nothing to prepare: the thread CPU clock exists on every Linux host.
pub fn unsupported() -> Option<String> {
    None
}

/// The thread's CPU time in ns.
fn cpu_ns() -> u64 {
    (brisk_emu::emu::health::thread_cpu_s() * 1e9) as u64
}

/// One ratio row: its claim, the arms and figure compared, and its bound.
struct Row {
    id: &'static str,
    what: &'static str,
    paper: &'static str,
    tolerance: &'static str,
    ours: Arm,
    peer: Arm,
    figure: fn(&Cost) -> u64,
    /// Whether a ratio holds.
    ok: fn(f64) -> bool,
    /// Which of the four ratios the row reports: the one that decides it.
    worst: fn(&[f64]) -> f64,
}

fn max(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::NEG_INFINITY, f64::max)
}

/// The ratio farthest from 1.
fn farthest_from_one(v: &[f64]) -> f64 {
    v.iter().copied().fold(1.0, |a, x| {
        if (x - 1.0).abs() > (a - 1.0).abs() {
            x
        } else {
            a
        }
    })
}

const ROWS: [Row; 3] = [
    Row {
        id: "MN-5a",
        what: "uCOBS total CPU / raw TCP total CPU (both endpoints, wire and applications), worst over 0/1/2/5 % loss",
        paper: "≤ 5× (Fig. 6(a): well below)",
        tolerance: "≤ 5",
        ours: Arm::Ucobs,
        peer: Arm::Raw,
        figure: |c| c.total,
        ok: |r| r <= 5.0,
        worst: max,
    },
    Row {
        id: "MN-5b",
        what: "uTLS receiver CPU / stock TLS receiver CPU (application calls), worst over 0/1/2/5 % loss",
        paper: "≤ 1.07 (within 7 %)",
        tolerance: "≤ 1.07",
        ours: Arm::Utls,
        peer: Arm::Tls,
        figure: |c| c.receiver,
        ok: |r| r <= 1.07,
        worst: max,
    },
    Row {
        id: "MN-5c",
        what: "uTLS sender CPU / stock TLS sender CPU (application calls), farthest from 1 over 0/1/2/5 % loss",
        paper: "1.00 (identical)",
        tolerance: "1 ± 0.03",
        ours: Arm::Utls,
        peer: Arm::Tls,
        figure: |c| c.sender,
        ok: |r| (0.97..=1.03).contains(&r),
        worst: farthest_from_one,
    },
];

fn rows(m: &Measured) -> Vec<Claim> {
    ROWS.iter()
        .map(|row| {
            let ratios: Vec<f64> = (0..LOSSES.len())
                .map(|li| m.ratio(li, row.ours, row.peer, row.figure))
                .collect();
            let shown = (row.worst)(&ratios);
            let per_loss: Vec<String> = LOSSES
                .iter()
                .zip(&ratios)
                .map(|(l, r)| format!("{} % {}", fmt_num(l * 100.0), fmt_num(*r)))
                .collect();
            let held = ratios.iter().filter(|r| (row.ok)(**r)).count();
            Claim::new(row.id, row.what)
                .paper_text(row.paper)
                .ours(shown)
                .unit("ratio")
                .tolerance(row.tolerance)
                .check(ratios.iter().all(|r| r.is_finite() && (row.ok)(*r)))
                .note(format!(
                    "{} / {} by loss: {}; {held} of {} within the bound. CPU time varies from run to run; each ratio compares arms run interleaved in the same process.",
                    row.ours.name(),
                    row.peer.name(),
                    per_loss.join(", "),
                    ratios.len()
                ))
        })
        .collect()
}

fn table(m: &Measured) -> String {
    let mut s = String::from(
        "<table><tr><th>loss</th><th>arm</th><th>total µs/MiB</th><th>sender µs/MiB</th><th>receiver µs/MiB</th><th>early</th><th>retransmissions</th></tr>",
    );
    for row in &m.cells {
        for c in row {
            let us = |ns: u64| fmt_num(ns as f64 / m.mib / 1e3);
            s.push_str(&format!(
                "<tr><td>{} %</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
                fmt_num(c.loss * 100.0),
                crate::html::esc(c.arm.name()),
                us(c.cost.total),
                us(c.cost.sender),
                us(c.cost.receiver),
                c.early,
                c.retransmits
            ));
        }
    }
    s.push_str("</table>");
    s
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let (mb, reps) = if quick { (4, 3) } else { (30, 5) };
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| {
            let mut r = ExperimentResult::new(ID, TITLE);
            match catch_unwind(AssertUnwindSafe(|| measure(mb, reps, &cpu_ns))) {
                Ok(m) => {
                    r.claims = rows(&m);
                    r.html = table(&m);
                    r.notes.push(format!(
                        "{:.2} MiB per run in 1448-B writes, datagrams or records; RTT 60 ms, no link rate (cwnd-limited); TLS 1.3 AES-128-GCM (rustls has no CBC suites); median of {} runs per cell, arms interleaved, one warm-up run per arm; CPU = the thread's CPU time after the handshakes, less {:.0} ns per clock reading. The paper measured Linux's kernel TCP with OpenSSL; here brisk's userspace stack runs in the same thread, so \"total\" also pays for the simulated wire. Method and full-size results: docs/performance.md, \"Minion CPU (MN-5)\".",
                        m.mib, m.reps, m.clock_ns
                    ));
                }
                Err(p) => {
                    let msg = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_else(|| "the driver panicked".into());
                    for row in &ROWS {
                        r.claims.push(
                            Claim::new(row.id, row.what)
                                .paper_text(row.paper)
                                .ours_text("not measured")
                                .tolerance(row.tolerance)
                                .check(false)
                                .note(format!("The transfer failed: {msg}")),
                        );
                    }
                }
            }
            r
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sender_row_reports_the_ratio_farthest_from_one() {
        assert_eq!(farthest_from_one(&[1.02, 0.9, 1.05]), 0.9);
        assert_eq!(max(&[1.0, 4.2, 3.0]), 4.2);
    }
}

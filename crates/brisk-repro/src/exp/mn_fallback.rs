//! mn-fallback: uCOBS's deployability matrix (Minion NSDI 2012 §3.3; thesis §4.3.2;
//! claim MN-12). The same uCOBS application runs over the four combinations of a
//! sender with or without prioritised send (uTCP's `SO_UNORDEREDSEND`) and a receiver
//! with or without unordered receive (`SO_UNORDERED`). Minion's argument is that the
//! framing needs neither: with plain TCP on either side the application still gets
//! every datagram exactly once, just in order; each uTCP side adds its own gain
//! (out-of-order delivery from the receiver, priority from the sender) and nothing
//! else. The kernel-TCP half of the matrix (Linux 6.18 as the plain side, over real
//! packets) is `crates/brisk-emu/tests/ucobs_real.rs`; the sans-IO half without the
//! simulator is `crates/brisk-minion/tests/fallback.rs`.

use std::fmt::Write as _;

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan};
use brisk_sim::{RunResult, Scenario};

pub const ID: &str = "mn-fallback";
pub const TITLE: &str =
    "uCOBS fallback matrix: plain or uTCP sender × plain or uTCP receiver (Minion §3.3)";
pub const CLAIMS: &[&str] = &["MN-12a", "MN-12b", "MN-12c", "MN-12d"];

/// Every n-th datagram is urgent.
const URGENT_EVERY: u64 = 20;
const SIZE: u64 = 1000;

/// (uTCP sender, uTCP receiver), in the report's order.
const CELLS: [(bool, bool); 4] = [(false, false), (false, true), (true, false), (true, true)];

fn name(sender: bool, receiver: bool) -> String {
    let side = |u| if u { "uTCP" } else { "TCP" };
    format!("{} → {}", side(sender), side(receiver))
}

fn scenario(sender: bool, receiver: bool, count: u64) -> Result<Scenario, String> {
    // Network-limited (interval 0) so the send buffer holds unsent datagrams for an
    // urgent one to pass; 1 % random loss so bytes arrive out of order. The run is long
    // enough for the last datagram to arrive (checked: `delivered == count`).
    let text = format!(
        "name = \"mn-fallback\"\nduration = \"120s\"\n[bottleneck]\nrate = \"5Mbit\"\n\
         queue = {{ kind = \"droptail\", packets = 50 }}\n\
         loss = {{ kind = \"bernoulli\", p = 0.01 }}\n[[flow]]\nrtt = \"60ms\"\n\
         cc = \"cubic\"\n\
         app = {{ kind = \"datagrams\", size = \"{SIZE}B\", interval = \"0s\", count = {count}, urgent_every = {URGENT_EVERY} }}\n\
         [flow.tcp]\nsend_buffer = \"128KB\"\nunordered_send = {sender}\nunordered = {receiver}\n"
    );
    Scenario::from_toml_str_named(&text, ID).map_err(|e| e.to_string())
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let count = if quick { 4_000 } else { 20_000 };
    let jobs = CELLS
        .iter()
        .map(|&(s, r)| {
            Ok(Job::new(
                format!("{ID} {}", name(s, r)),
                scenario(s, r, count)?,
                1,
            ))
        })
        .collect::<Result<Vec<_>, String>>()?;
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(runs, count)),
    })
}

/// What one cell of the matrix delivered.
#[derive(Clone, Copy, Debug)]
struct Cell {
    delivered: u64,
    out_of_order: u64,
    bad: u64,
    stream_ok: bool,
    /// Mean delay (ms) of the urgent and of the other datagrams.
    urgent_ms: f64,
    other_ms: f64,
}

fn urgent(index: u64) -> bool {
    (index + 1).is_multiple_of(URGENT_EVERY)
}

fn cell(r: &RunResult) -> Cell {
    let f = &r.flows[0];
    let Some(d) = &f.datagrams else {
        return Cell {
            delivered: 0,
            out_of_order: 0,
            bad: 0,
            stream_ok: false,
            urgent_ms: f64::NAN,
            other_ms: f64::NAN,
        };
    };
    let (mut hi, mut lo) = ((0.0, 0u64), (0.0, 0u64));
    for &(i, g, t) in &d.deliveries {
        let acc = if urgent(i) { &mut hi } else { &mut lo };
        acc.0 += (t - g) as f64 / 1e6;
        acc.1 += 1;
    }
    let mean = |(s, n): (f64, u64)| if n == 0 { f64::NAN } else { s / n as f64 };
    Cell {
        delivered: d.delivered,
        out_of_order: d.out_of_order,
        bad: d.bad,
        stream_ok: f.stream_ok,
        urgent_ms: mean(hi),
        other_ms: mean(lo),
    }
}

fn analyse(runs: &[RunResult], count: u64) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let cells: Vec<Cell> = runs.iter().map(cell).collect();
    let once = cells
        .iter()
        .all(|c| c.delivered == count && c.bad == 0 && c.stream_ok);
    let list = |f: &dyn Fn(&Cell) -> String| {
        CELLS
            .iter()
            .zip(&cells)
            .map(|(&(s, rx), c)| format!("{} {}", name(s, rx), f(c)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    r.claims.push(
        Claim::new(
            "MN-12a",
            "every datagram delivered exactly once, all four combinations",
        )
        .paper_text("works in all 4 combinations")
        .ours_text(if once { "yes" } else { "no" })
        .tolerance("all four cells")
        .note(format!(
            "of {count} datagrams, delivered (repeated or corrupt): {}",
            list(&|c| format!("{} ({})", c.delivered, c.bad))
        ))
        .check(once),
    );
    let ooo_plain: u64 = CELLS
        .iter()
        .zip(&cells)
        .filter(|((_, rx), _)| !rx)
        .map(|(_, c)| c.out_of_order)
        .sum();
    let ooo_utcp = CELLS
        .iter()
        .zip(&cells)
        .filter(|((_, rx), _)| *rx)
        .all(|(_, c)| c.out_of_order > 0);
    r.claims.push(
        Claim::new("MN-12b", "out-of-order deliveries without a uTCP receiver")
            .paper_text("OOO only with a uTCP receiver")
            .ours(ooo_plain as f64)
            .tolerance("0 (and > 0 with one)")
            .note(format!(
                "out of order: {}",
                list(&|c| c.out_of_order.to_string())
            ))
            .check(ooo_plain == 0 && ooo_utcp),
    );
    // Priority: the urgent datagrams' mean delay against the others'. A plain sender
    // treats them alike; a prioritised one puts them ahead of the unsent backlog.
    let ratio = |c: &Cell| c.urgent_ms / c.other_ms;
    let plain_tx: Vec<f64> = cells[..2].iter().map(ratio).collect();
    let utcp_tx: Vec<f64> = cells[2..].iter().map(ratio).collect();
    let plain_worst = plain_tx.iter().map(|x| (x - 1.0).abs()).fold(0.0, f64::max);
    r.claims.push(
        Claim::new(
            "MN-12c",
            "plain sender: urgent / other datagrams' mean delay",
        )
        .paper_text("prioritisation only with a uTCP sender")
        .ours(plain_worst * 100.0)
        .unit("% off 1")
        .tolerance("within ±10 %")
        .note(format!(
            "urgent / other: {}",
            list(&|c| format!("{:.0} / {:.0} ms", c.urgent_ms, c.other_ms))
        ))
        .check(plain_worst <= 0.10),
    );
    let utcp_worst = utcp_tx.iter().cloned().fold(0.0, f64::max);
    r.claims.push(
        Claim::new(
            "MN-12d",
            "uTCP sender: urgent / other datagrams' mean delay",
        )
        .paper_text("prioritisation with a uTCP sender, whatever the receiver")
        .ours(utcp_worst)
        .unit("×")
        .tolerance("≤ 0.5 with either receiver")
        .note(format!(
            "ratios: plain receiver {:.2}, uTCP receiver {:.2}",
            utcp_tx[0], utcp_tx[1]
        ))
        .check(utcp_worst <= 0.5),
    );
    let mut table = String::from(
        "<table><tr><th>sender → receiver</th><th>delivered</th><th>repeated or corrupt</th><th>out of order</th><th>urgent delay (ms)</th><th>other delay (ms)</th></tr>",
    );
    for (&(s, rx), c) in CELLS.iter().zip(&cells) {
        let _ = write!(
            table,
            "<tr><td>{}</td><td>{} of {count}</td><td>{}</td><td>{}</td><td>{:.0}</td><td>{:.0}</td></tr>",
            name(s, rx),
            c.delivered,
            c.bad,
            c.out_of_order,
            c.urgent_ms,
            c.other_ms
        );
    }
    table.push_str("</table>");
    r.html = format!(
        "<p class=\"note\">The matrix: uTCP sender = prioritised send (`[flow.tcp] unordered_send`), uTCP receiver = unordered receive (`unordered`); TCP = brisk with the option off. Delays are from the write to the first delivery, means over all datagrams.</p>{table}"
    );
    r.notes.push(format!(
        "Set-up (ours; the paper gives the matrix as an argument, with no experiment): one CUBIC connection, 5 Mbit/s bottleneck with a 50-packet drop-tail queue and 1 % random loss, RTT 60 ms, 128 KB send buffer, seed 1. A network-limited `datagrams` application writes {count} datagrams of {SIZE} bytes over uCOBS, every {URGENT_EVERY}th at a higher priority, and closes. The same seed gives each cell the same loss draws per packet offered, not the same lost datagrams: the cells send different byte orders. The kernel-TCP half (Linux 6.18 as the plain side over real packets) is the test `crates/brisk-emu/tests/ucobs_real.rs`."
    ));
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_is_the_two_by_two_matrix() {
        let p = plan(true).unwrap();
        assert_eq!(p.jobs.len(), 4);
        let c: Vec<_> = p
            .jobs
            .iter()
            .map(|j| j.scenario.flows[0].tcp.to_config(j.scenario.flows[0].cc))
            .collect();
        let got: Vec<(bool, bool)> = c.iter().map(|c| (c.unordered_send, c.unordered)).collect();
        assert_eq!(got, CELLS.to_vec());
    }
}

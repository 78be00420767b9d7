//! mp-compose: MPTCP composed with brisk's single-path latency mechanisms (issue 32
//! §5, beyond the seed): unordered receive at the data level (uTCP), RDB on the
//! subflows, ECN with ABE on the subflows behind a marking queue. Does each help
//! MPTCP as it helps TCP, and do they add up?
//!
//! The network is `mp_b1_net`'s two paths: 10 Mbit/s each, 10 ms and 30 ms one way,
//! 100-packet queues that also mark ECN-capable packets CE once 5 ms of queueing is
//! ahead of them (step marking, RFC 8257 §3.1's threshold in time; flows without ECN
//! see the drop-tail alone). Two workloads, each its own connection:
//! - thin: 200-byte messages every 20 ms (a game or VoIP-like thin stream) over paths
//!   with 1 % random loss each; the measure is the per-message application delay
//!   (mean and 99th percentile), from the write to the reader having the message
//!   whole (with uTCP: handed out whole, in order or not);
//! - bulk: a transfer written at once over loss-free paths, where the queues build;
//!   the measures are completion time and the data packets lost at the queues.
//!
//! Arms: TCP (Reno, on the 10-ms path), MPTCP (OLIA, Reno's coupled form,
//! lowrtt+rp, fullmesh over the client's two addresses, first subflow on the 10-ms
//! path) and the same MPTCP with round-robin (which spreads the thin stream over
//! both subflows), each plain, with uTCP, with RDB (`rdb = true`: its defaults),
//! with ECN + ABE (β_ecn 0.8), and with all three. The knobs are a scenario's
//! `[flow.tcp]` lines, checked by the scenario checker: a composition it refused
//! would be shown as refused with its message.
//!
//! The claims (our IDs, MP-X7 to MP-X11) were written before the first run.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{categorical, Chart, Series, Style};
use brisk_scenario::knobs::TcpKnobs;
use brisk_sim::Scenario;
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::mptcp::sched::SchedKind;
use brisk_time::Duration;
use std::fmt::Write;

use super::mp_b1_net::{self as net, Extras, Outcome, PathSpec, RunSpec, Transport, Workload};
use super::mp_sttf::{bulk, par_map};

pub const ID: &str = "mp-compose";
pub const TITLE: &str = "MPTCP composed with uTCP, RDB and ECN + ABE: does each help, and do they add up? (beyond the seed)";
pub const CLAIMS: &[&str] = &["MP-X7", "MP-X8", "MP-X9", "MP-X10", "MP-X11"];

/// (label, `[flow.tcp]` lines, unordered reads).
const MECHS: [(&str, &str, bool); 5] = [
    ("plain", "", false),
    ("uTCP", "", true),
    ("RDB", "rdb = true\n", false),
    ("ECN+ABE", "ecn = true\nabe = true\n", false),
    ("all", "rdb = true\necn = true\nabe = true\n", true),
];

const THIN_MSG: u32 = 200;
const THIN_PERIOD_MS: u64 = 20;
const MARK_OVER: Duration = Duration::from_millis(5);
const SCHED: SchedKind = SchedKind::LowRttRp;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    Thin,
    Bulk,
}

struct Shape {
    seeds: Vec<u64>,
    thin_s: u64,
    bulk_bytes: u64,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            seeds: vec![1, 2],
            thin_s: 8,
            bulk_bytes: 2_000_000,
        }
    } else {
        Shape {
            seeds: (1..=10).collect(),
            thin_s: 30,
            bulk_bytes: 8_000_000,
        }
    }
}

fn paths(load: Load) -> [PathSpec; 2] {
    let loss = match load {
        Load::Thin => 0.01,
        Load::Bulk => 0.0,
    };
    [
        PathSpec {
            rate_bps: 10_000_000,
            delay: Duration::from_millis(10),
            loss,
            queue: 100,
        },
        PathSpec {
            rate_bps: 10_000_000,
            delay: Duration::from_millis(30),
            loss,
            queue: 100,
        },
    ]
}

fn thin(secs: u64) -> Workload {
    Workload::Messages(
        (0..secs * 1000 / THIN_PERIOD_MS)
            .map(|i| (Duration::from_millis(i * THIN_PERIOD_MS), THIN_MSG))
            .collect(),
    )
}

/// The transports: TCP, MPTCP with `SCHED`, MPTCP with round-robin (which spreads a
/// thin stream over both subflows, so the data level sees holes of the other path).
const TRANSPORTS: [(&str, Option<SchedKind>); 3] = [
    ("TCP", None),
    ("MPTCP", Some(SCHED)),
    ("MPTCP-rr", Some(SchedKind::RoundRobin)),
];

/// One arm: (transport index, mechanism index).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Arm {
    tr: usize,
    mech: usize,
}

impl Arm {
    fn mp(self) -> bool {
        TRANSPORTS[self.tr].1.is_some()
    }
    fn cc(self) -> CcAlgorithm {
        if self.mp() {
            CcAlgorithm::Olia
        } else {
            CcAlgorithm::Reno
        }
    }
    fn label(self) -> String {
        format!(
            "{}{}",
            TRANSPORTS[self.tr].0,
            match MECHS[self.mech].0 {
                "plain" => String::new(),
                m => format!("+{m}"),
            }
        )
    }
}

fn arms() -> Vec<Arm> {
    let mut v = Vec::new();
    for tr in 0..TRANSPORTS.len() {
        for mech in 0..MECHS.len() {
            v.push(Arm { tr, mech });
        }
    }
    v
}

/// The arm's knobs as a scenario's `[flow.tcp]` (with `[flow.tcp.mptcp]` for MPTCP, so
/// the checker sees the composition), or the checker's refusal.
fn knobs(a: Arm) -> Result<TcpKnobs, String> {
    let mut s = format!(
        "name = \"{ID}\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n\
         [[flow]]\nrtt = \"20ms\"\ncc = \"{}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{}",
        a.cc().name(),
        MECHS[a.mech].1
    );
    if MECHS[a.mech].2 {
        s.push_str("unordered = true\n");
    }
    if a.mp() {
        s.push_str(
            "[flow.tcp.mptcp]\npath_manager = \"ndiffports\"\nndiffports = 2\nsubflows = 1\n",
        );
    }
    let sc = Scenario::from_toml_str_named(&s, ID).map_err(|e| e.to_string())?;
    let mut k = sc.flows[0].tcp.clone();
    // The driver builds its own MPTCP config (fullmesh over two addresses).
    k.mptcp = None;
    Ok(k)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    arm: usize,
    load: Load,
    seed: u64,
}

fn run_one(it: &Item, k: &TcpKnobs, sh: &Shape) -> Result<Outcome, String> {
    let a = arms()[it.arm];
    let (workload, limit) = match it.load {
        Load::Thin => (thin(sh.thin_s), Duration::from_secs(sh.thin_s + 30)),
        Load::Bulk => (bulk(sh.bulk_bytes), Duration::from_secs(120)),
    };
    net::run_with(
        &RunSpec {
            paths: paths(it.load),
            transport: if let Some(sched) = TRANSPORTS[a.tr].1 {
                Transport::Mptcp { sched, cc: a.cc() }
            } else {
                Transport::Tcp {
                    path: 0,
                    cc: a.cc(),
                }
            },
            workload,
            send_buffer: 1 << 20,
            recv_buffer: 2 << 20,
            background: false,
            start: Duration::ZERO,
            limit,
            seed: it.seed,
        },
        &Extras {
            knobs: k.clone(),
            unordered_reads: MECHS[a.mech].2,
            mark_over: Some(MARK_OVER),
        },
    )
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    if sh.seeds.is_empty() {
        return Err("no runs".into());
    }
    let checked: Vec<Result<TcpKnobs, String>> = arms().into_iter().map(knobs).collect();
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&sh, &checked)),
    })
}

/// Per arm and load: per seed (mean ms, p99 ms, completion s, lost, marks, ahead bytes, bundles).
#[derive(Clone, Copy, Debug, Default)]
struct M {
    mean: f64,
    p99: f64,
    fct: f64,
    lost: f64,
    marks: f64,
    ahead: f64,
    bundles: f64,
    share1: f64,
}

fn m_of(o: &Outcome) -> M {
    M {
        mean: crate::stats::mean(&o.delays_ms),
        p99: if o.delays_ms.is_empty() {
            f64::NAN
        } else {
            crate::stats::quantile(&o.delays_ms, 0.99)
        },
        fct: o.completion.map_or(f64::NAN, |d| d.as_secs_f64()),
        lost: (o.data_lost[0] + o.data_lost[1]) as f64,
        marks: (o.ce_marked[0] + o.ce_marked[1]) as f64,
        ahead: o.unordered_bytes as f64,
        bundles: o.rdb_packets as f64,
        share1: o.share(1),
    }
}

fn analyse(sh: &Shape, checked: &[Result<TcpKnobs, String>]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let all = arms();
    let mut items = Vec::new();
    for (ai, k) in checked.iter().enumerate() {
        if k.is_err() {
            continue;
        }
        for load in [Load::Thin, Load::Bulk] {
            for &seed in &sh.seeds {
                items.push(Item {
                    arm: ai,
                    load,
                    seed,
                });
            }
        }
    }
    let res = par_map(&items, |it| match &checked[it.arm] {
        Ok(k) => run_one(it, k, sh),
        Err(e) => Err(e.clone()),
    });
    let mut per: Vec<[Vec<M>; 2]> = vec![[Vec::new(), Vec::new()]; all.len()];
    let mut failed = Vec::new();
    for (it, o) in items.iter().zip(&res) {
        let li = usize::from(it.load == Load::Bulk);
        match o {
            Ok(o) if o.unread == 0 && o.completion.is_some() => per[it.arm][li].push(m_of(o)),
            Ok(o) => failed.push(format!(
                "{} {:?} seed {}: {} messages unread",
                all[it.arm].label(),
                it.load,
                it.seed,
                o.unread
            )),
            Err(e) => failed.push(format!(
                "{} {:?} seed {}: {e}",
                all[it.arm].label(),
                it.load,
                it.seed
            )),
        }
    }
    let avg = |ai: usize, li: usize, f: fn(&M) -> f64| -> f64 {
        crate::stats::mean(&per[ai][li].iter().map(f).collect::<Vec<_>>())
    };
    let idx = |mp: bool, mech: &str| {
        all.iter()
            .position(|a| a.tr == usize::from(mp) && MECHS[a.mech].0 == mech)
            .unwrap_or(0)
    };
    let rr = |mech: &str| {
        all.iter()
            .position(|a| a.tr == 2 && MECHS[a.mech].0 == mech)
            .unwrap_or(0)
    };
    r.notes.push(format!(
        "Set-up: two paths of 10 Mbit/s, 10 ms and 30 ms one way, 100-packet drop-tail queues marking ECN-capable packets CE at ≥ {} ms of queueing ahead. Thin: {THIN_MSG}-byte messages every {THIN_PERIOD_MS} ms for {} s, 1 % random loss on each path. Bulk: {} MB at once, no random loss. TCP: Reno on the 10-ms path; MPTCP: OLIA, {}, fullmesh, first subflow on the 10-ms path. uTCP: `unordered = true` on the client, which reads with `read_unordered` (for MPTCP at the data level, mptcp/recv.rs); RDB: `rdb = true` (limit 1, dynamic thin test, ITT_min 10 ms) on every subflow; ECN+ABE: `ecn = true, abe = true` (Reno/OLIA β_ecn 0.8) on every subflow. 1 MiB send / 2 MiB receive buffers, Nagle off. {} seed(s) per arm (loss pattern, endpoints' randomness).",
        MARK_OVER.as_millis(),
        sh.thin_s,
        sh.bulk_bytes / 1_000_000,
        SCHED.name(),
        sh.seeds.len()
    ));
    let refused: Vec<String> = checked
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.as_ref().err().map(|e| format!("{}: {e}", all[i].label())))
        .collect();
    r.notes.push(format!(
        "Refused by the scenario checker: {}.",
        if refused.is_empty() {
            "none (every composition is accepted)".to_string()
        } else {
            refused.join("; ")
        }
    ));
    if !failed.is_empty() {
        r.notes
            .push(format!("Runs that did not finish: {}.", failed.join("; ")));
    }
    let mut tab = String::from(
        "Per arm, means over seeds. Thin: mean / p99 delay ms, bytes read ahead of a hole, RDB bundles, share on path 1 %. Bulk: completion s, data packets lost, CE marks.",
    );
    for (ai, a) in all.iter().enumerate() {
        let _ = write!(
            tab,
            "\n{}: thin {:.1} / {:.1} ms, ahead {:.0} B, bundles {:.0}, path-1 {:.1} %; bulk {:.2} s, lost {:.0}, marks {:.0}",
            a.label(),
            avg(ai, 0, |m| m.mean),
            avg(ai, 0, |m| m.p99),
            avg(ai, 0, |m| m.ahead),
            avg(ai, 0, |m| m.bundles),
            avg(ai, 0, |m| m.share1),
            avg(ai, 1, |m| m.fct),
            avg(ai, 1, |m| m.lost),
            avg(ai, 1, |m| m.marks),
        );
    }
    r.notes.push(tab);

    let (mp, mpu, mpr, mpe, mpa) = (
        idx(true, "plain"),
        idx(true, "uTCP"),
        idx(true, "RDB"),
        idx(true, "ECN+ABE"),
        idx(true, "all"),
    );
    let (tp, tu, tr, _te, ta) = (
        idx(false, "plain"),
        idx(false, "uTCP"),
        idx(false, "RDB"),
        idx(false, "ECN+ABE"),
        idx(false, "all"),
    );
    let gain = |x: f64, base: f64| 100.0 * (1.0 - x / base);
    // MP-X7 uTCP.
    let (a, b) = (avg(mpu, 0, |m| m.mean), avg(mp, 0, |m| m.mean));
    let (ta_, tb_) = (avg(tu, 0, |m| m.mean), avg(tp, 0, |m| m.mean));
    r.claims.push(
        Claim::new(
            "MP-X7",
            "Thin stream with 1 % loss: uTCP's reduction of the mean message delay, MPTCP (data level) / TCP",
        )
        .paper_text("a reduction with MPTCP as with TCP (uTCP hands out messages behind a hole)")
        .ours_text(&format!(
            "{:.1} % ({a:.1} vs {b:.1} ms) / {:.1} % ({ta_:.1} vs {tb_:.1} ms)",
            gain(a, b),
            gain(ta_, tb_)
        ))
        .tolerance("MPTCP's reduction ≥ 5 %")
        .check(gain(a, b) >= 5.0 && failed.is_empty())
        .note(format!(
            "Bytes handed out ahead of a hole per run: MPTCP {:.0}, TCP {:.0}. With round-robin (both subflows carry the stream): {:.0} bytes ahead, mean {:.1} vs {:.1} ms plain, p99 {:.0} vs {:.0} ms.",
            avg(mpu, 0, |m| m.ahead),
            avg(tu, 0, |m| m.ahead),
            avg(rr("uTCP"), 0, |m| m.ahead),
            avg(rr("uTCP"), 0, |m| m.mean),
            avg(rr("plain"), 0, |m| m.mean),
            avg(rr("uTCP"), 0, |m| m.p99),
            avg(rr("plain"), 0, |m| m.p99),
        )),
    );
    // MP-X8 RDB.
    let (a, b) = (avg(mpr, 0, |m| m.p99), avg(mp, 0, |m| m.p99));
    let (ta_, tb_) = (avg(tr, 0, |m| m.p99), avg(tp, 0, |m| m.p99));
    r.claims.push(
        Claim::new(
            "MP-X8",
            "Thin stream with 1 % loss: RDB's reduction of the p99 message delay, MPTCP / TCP",
        )
        .paper_text("a reduction with MPTCP as with TCP (a bundle repairs a loss before the retransmission)")
        .ours_text(&format!(
            "{:.1} % ({a:.0} vs {b:.0} ms) / {:.1} % ({ta_:.0} vs {tb_:.0} ms)",
            gain(a, b),
            gain(ta_, tb_)
        ))
        .tolerance("MPTCP's reduction ≥ 10 %")
        .check(gain(a, b) >= 10.0 && failed.is_empty())
        .note(format!(
            "Bundles per run: MPTCP {:.0}, TCP {:.0}, MPTCP round-robin {:.0} (a bundle stops at a DSS mapping's start, and round-robin never sends a subflow two DSN-contiguous messages).",
            avg(mpr, 0, |m| m.bundles),
            avg(tr, 0, |m| m.bundles),
            avg(rr("RDB"), 0, |m| m.bundles)
        )),
    );
    // MP-X9 ECN+ABE on the bulk transfer.
    let (lost_e, lost_p) = (avg(mpe, 1, |m| m.lost), avg(mp, 1, |m| m.lost));
    let (fct_e, fct_p) = (avg(mpe, 1, |m| m.fct), avg(mp, 1, |m| m.fct));
    r.claims.push(
        Claim::new(
            "MP-X9",
            "Bulk transfer behind the marking queues: MPTCP + ECN + ABE against plain MPTCP, data packets lost and completion time",
        )
        .paper_text("fewer losses (marks instead of drops), completion no more than 10 % later (ABE's β_ecn keeps the rate)")
        .ours_text(&format!(
            "lost {lost_e:.0} vs {lost_p:.0}; {fct_e:.2} vs {fct_p:.2} s"
        ))
        .tolerance("lost < plain's and completion ≤ plain's × 1.10")
        .check(lost_e < lost_p && fct_e <= fct_p * 1.10 && failed.is_empty())
        .note(format!(
            "CE marks per run: {:.0}.",
            avg(mpe, 1, |m| m.marks)
        )),
    );
    // MP-X10: do they add up (thin stream)?
    let best_single = avg(mpu, 0, |m| m.p99).min(avg(mpr, 0, |m| m.p99));
    let comp = avg(mpa, 0, |m| m.p99);
    let best_mean = avg(mpu, 0, |m| m.mean).min(avg(mpr, 0, |m| m.mean));
    let comp_mean = avg(mpa, 0, |m| m.mean);
    r.claims.push(
        Claim::new(
            "MP-X10",
            "Thin stream: MPTCP with all three against the best single mechanism on MPTCP, p99 and mean delay",
        )
        .paper_text("at least as good (the mechanisms act on different delays: the hole's repair, the wait behind it, the queue)")
        .ours_text(&format!(
            "p99 {comp:.0} vs {best_single:.0} ms; mean {comp_mean:.1} vs {best_mean:.1} ms"
        ))
        .tolerance("each ≤ the best single × 1.05")
        .check(comp <= best_single * 1.05 && comp_mean <= best_mean * 1.05 && failed.is_empty()),
    );
    // MP-X11: MPTCP + mechanisms against TCP + mechanisms.
    let (m_all, t_all) = (avg(mpa, 0, |m| m.p99), avg(ta, 0, |m| m.p99));
    r.claims.push(
        Claim::new(
            "MP-X11",
            "Thin stream: p99 message delay, MPTCP + all three against TCP + all three",
        )
        .paper_text("no worse (a second path only adds a place to send)")
        .ours_text(&format!("{m_all:.0} vs {t_all:.0} ms"))
        .tolerance("≤ TCP's × 1.10")
        .check(m_all <= t_all * 1.10 && failed.is_empty()),
    );

    // Figures: per-seed values as boxes would hide few seeds; draw bars as points
    // with the seeds' spread: x = arm index.
    let thin_series = |f: fn(&M) -> f64| -> Vec<Series> { points(&all, &per, 0, f) };
    let ticks = MECHS
        .iter()
        .enumerate()
        .map(|(i, m)| format!("{i} = {}", m.0))
        .collect::<Vec<_>>()
        .join(", ");
    for (what, f) in [
        ("mean", (|m: &M| m.mean) as fn(&M) -> f64),
        ("p99", |m: &M| m.p99),
    ] {
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!("Thin stream, 1 % loss: {what} message delay per seed"),
                x_label: format!("mechanism ({ticks})"),
                y_label: format!("{what} application delay (ms)"),
                series: thin_series(f),
                x_range: Some((-0.5, MECHS.len() as f64 - 0.5)),
                ..Chart::default()
            }),
            paper: "No paper has this picture: MPTCP composed with uTCP, RDB and ECN+ABE.".into(),
            ours: format!(
                "One point per seed ({} seeds); per mechanism TCP left, MPTCP (lowrtt+rp) middle, MPTCP round-robin right.",
                sh.seeds.len()
            ),
        });
    }
    let bulk_series = |f: fn(&M) -> f64| -> Vec<Series> { points(&all, &per, 1, f) };
    for (what, unit, f) in [
        ("completion time", "s", (|m: &M| m.fct) as fn(&M) -> f64),
        ("data packets lost", "per run", |m: &M| m.lost),
    ] {
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!("Bulk transfer behind the marking queues: {what} per seed"),
                x_label: format!("mechanism ({ticks})"),
                y_label: format!("{what} ({unit})"),
                series: bulk_series(f),
                x_range: Some((-0.5, MECHS.len() as f64 - 0.5)),
                ..Chart::default()
            }),
            paper: "No paper has this picture.".into(),
            ours: format!(
                "{} MB per run, one point per seed ({} seeds); per mechanism TCP left, MPTCP (lowrtt+rp) middle, MPTCP round-robin right.",
                sh.bulk_bytes / 1_000_000,
                sh.seeds.len()
            ),
        });
    }
    r
}

/// One series per transport: per arm, its seeds' values at x = mechanism (offset
/// by transport).
fn points(all: &[Arm], per: &[[Vec<M>; 2]], li: usize, f: fn(&M) -> f64) -> Vec<Series> {
    TRANSPORTS
        .iter()
        .enumerate()
        .map(|(t, (name, _))| {
            let mut pts = Vec::new();
            for (ai, a) in all.iter().enumerate() {
                if a.tr == t {
                    for m in &per[ai][li] {
                        pts.push((a.mech as f64 + 0.15 * (t as f64 - 1.0), f(m)));
                    }
                }
            }
            Series::new(name, categorical(t), Style::Points, pts)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_composition_is_accepted_and_configures_its_mechanisms() {
        for a in arms() {
            let k = knobs(a).unwrap_or_else(|e| panic!("{}: {e}", a.label()));
            let c = k.to_config(a.cc());
            let m = MECHS[a.mech].0;
            assert_eq!(c.transmit.rdb.is_some(), m == "RDB" || m == "all", "{m}");
            assert_eq!(c.ecn.enabled, m == "ECN+ABE" || m == "all", "{m}");
            assert_eq!(c.unordered, m == "uTCP" || m == "all", "{m}");
        }
    }

    /// A lossy thin stream over MPTCP with uTCP: every message arrives, and the reader
    /// gets bytes ahead of holes only where the data was spread over both subflows.
    #[test]
    fn composed_mptcp_thin_stream_delivers_every_message() {
        let sh = shape(true);
        let ai = arms()
            .iter()
            .position(|a| a.tr == 1 && MECHS[a.mech].0 == "all")
            .unwrap();
        let k = knobs(arms()[ai]).unwrap();
        let o = run_one(
            &Item {
                arm: ai,
                load: Load::Thin,
                seed: 1,
            },
            &k,
            &sh,
        )
        .unwrap();
        assert_eq!(o.unread, 0);
        assert_eq!(o.delays_ms.len() as u64, sh.thin_s * 1000 / THIN_PERIOD_MS);
        assert!(o.rdb_packets > 0, "{o:?}");
    }
}

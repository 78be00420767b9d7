//! mp-fattree: LISA in the datacenter (seed 004 Appendix B.2 §3.2 and Fig 8; claim
//! MP-6; spec `rite-multipath-coupled-cc-sbd-cdg.md` §2.3–2.4, §9 L7).
//!
//! The network is `scenarios/mp-fattree.toml`: a 4-ary fat tree (16 hosts, 20
//! switches), every link 50 Mbit/s, base RTT 5 ms between pods, ECMP by flow hash at
//! every switch. Traffic (L7, read as the spec's interpretation): one MPTCP
//! connection per random host pair (`[workload.pairs]`: every host opens one, to a
//! random host on another edge switch, no pair twice), each with 8 subflows from the
//! `ndiffports` path manager (the seed's footnote 4: subflows over one address pair
//! on different source ports), so ECMP's hash puts each subflow on a random shortest
//! path, as Raiciu et al. did. The 16 connections open within one RTT (5 ms) of each
//! other. MPTCP is LIA (Linux MPTCP's default coupled increase), LISA is LIA + LISA;
//! both arms of a seed get the same pairs, sizes and start times.
//!
//! - R_ss and the compound cwnd at the last subflow's slow-start exit, queues 2–42
//!   packets (every link's queue), 900 KB per connection (MP-3's size): read from the
//!   connection's own slow-start-exit samples (`brisk_tcp::mptcp::ss_exit`), not from
//!   periodic samples.
//! - Completion time and retransmissions R, files 100–900 KB, queues 10 / 25 / 40.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, RED};
use brisk_scenario::network::NetScenario;
use brisk_sim::wl_host::FlowRecord;
use brisk_sim::RunResult;

pub const ID: &str = "mp-fattree";
pub const TITLE: &str =
    "LISA in a 4-ary fat tree: 8 MPTCP subflows per connection over ECMP (seed 004 B.2 Fig 8)";
pub const CLAIMS: &[&str] = &["MP-6"];

/// Subflows per connection (the seed, after Raiciu et al.'s recommendation).
pub const SUBFLOWS: u32 = 8;
/// Connections per run: one per host of the k = 4 fat tree.
const CONNECTIONS: u32 = 16;
/// The R_ss runs' transfer (MP-3's: long enough that the subflows leave slow start).
const RSS_BYTES: u64 = 900_000;

/// The network of one run: `queue` packets at every link (router ports and host
/// NICs), `bytes` per connection, LIA with or without LISA. The shipped
/// `scenarios/mp-fattree.toml` is this text for 21 packets, 300 KB and LISA (a test
/// checks).
pub fn net_text(queue: u32, bytes: u64, lisa: bool) -> String {
    format!(
        "name = \"mp-fattree\"\nseed = 1\nduration = \"30s\"\nrouting = \"ecmp\"\n\
         topology = {{ kind = \"fat_tree\", k = 4, rate = \"50Mbps\", hop_delay = \"400us\", access_delay = \"450us\", \
         queue = {{ kind = \"droptail\", packets = {queue} }}, host_queue = {{ kind = \"droptail\", packets = {queue} }} }}\n\
         \n[workload]\nsizes = {{ cdf = [[{bytes}, 1.0]] }}\nload = 0.1\nwarmup = \"0s\"\ncc = \"lia\"\n\
         \n[workload.pairs]\nconnections = {CONNECTIONS}\nspread = \"5ms\"\n\
         \n[workload.tcp]\nlisa = {lisa}\n\
         \n[workload.tcp.mptcp]\npath_manager = \"ndiffports\"\nndiffports = {SUBFLOWS}\nsubflows = {}\n",
        SUBFLOWS - 1
    )
}

fn net(queue: u32, bytes: u64, lisa: bool) -> Result<NetScenario, String> {
    NetScenario::from_toml_str_named(&net_text(queue, bytes, lisa), "mp-fattree")
        .map_err(|e| e.to_string())
}

struct Shape {
    seeds: Vec<u64>,
    /// R_ss / cwnd runs' queues (packets).
    rss_queues: Vec<u32>,
    /// FCT runs' queues and sizes (KB).
    fct_queues: Vec<u32>,
    sizes: Vec<u64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            seeds: vec![1],
            rss_queues: vec![4, 21, 42],
            fct_queues: vec![10, 25, 40],
            sizes: vec![100, 500, 900],
        }
    } else {
        Shape {
            seeds: (1..=10).collect(),
            rss_queues: vec![2, 4, 6, 8, 10, 14, 17, 21, 25, 30, 35, 42],
            fct_queues: vec![10, 25, 40],
            sizes: (1..=9).map(|k| k * 100).collect(),
        }
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    let mut jobs = Vec::new();
    for &q in &sh.rss_queues {
        for &seed in &sh.seeds {
            for lisa in [false, true] {
                jobs.push(Job::network(
                    format!("rss q={q} {} seed {seed}", arm(lisa)),
                    net(q, RSS_BYTES, lisa)?,
                    seed,
                ));
            }
        }
    }
    for &q in &sh.fct_queues {
        for &kb in &sh.sizes {
            for &seed in &sh.seeds {
                for lisa in [false, true] {
                    jobs.push(Job::network(
                        format!("fct q={q} {kb}KB {} seed {seed}", arm(lisa)),
                        net(q, kb * 1000, lisa)?,
                        seed,
                    ));
                }
            }
        }
    }
    Ok(Plan {
        jobs,
        analyse: Box::new(move |runs| analyse(runs, &sh)),
    })
}

fn arm(lisa: bool) -> &'static str {
    if lisa {
        "lisa"
    } else {
        "lia"
    }
}

// ----- per-connection measures -----

/// One connection's numbers.
#[derive(Clone, Copy, Debug, Default)]
struct Conn {
    fct_ms: f64,
    /// Retransmitted segments of all subflows at completion.
    r: f64,
    /// R_ss and the compound cwnd at the last slow-start exit; a connection that
    /// completed with a subflow still in slow start gives its totals at completion.
    rss: f64,
    cwnd: f64,
    /// The last exit was seen with all subflows.
    exited: bool,
    subflows: usize,
}

fn conn(f: &FlowRecord) -> Option<Conn> {
    let fct = f.fct().filter(|_| f.intact())?;
    let r: u64 = f.subflows.iter().map(|s| s.retransmits).sum();
    let cwnd: u32 = f.subflows.iter().map(|s| s.cwnd).sum();
    let exit = f.ss_exit.filter(|s| s.subflows >= SUBFLOWS);
    Some(Conn {
        fct_ms: fct.as_secs_f64() * 1e3,
        r: r as f64,
        rss: exit.map_or(r as f64, |s| s.retransmits as f64),
        cwnd: exit.map_or(f64::from(cwnd), |s| f64::from(s.cwnd)),
        exited: exit.is_some(),
        subflows: f.subflows.len(),
    })
}

/// Why a connection did not complete intact.
fn broken_kind(f: &FlowRecord) -> String {
    match (&f.error, f.acked) {
        (Some(e), _) => format!("error {e:?}"),
        (None, None) => "not acknowledged by the end of the run".into(),
        (None, Some(_)) if f.received < f.size => "acknowledged, not all read".into(),
        _ => "bytes differ".into(),
    }
}

/// A run's connections, and how many did not complete intact.
fn conns(run: Option<&RunResult>) -> (Vec<Conn>, usize) {
    conns_why(run, &mut |_| {})
}

/// As [`conns`], telling `why` the reason of each broken one.
fn conns_why(run: Option<&RunResult>, why: &mut dyn FnMut(String)) -> (Vec<Conn>, usize) {
    let Some(w) = run.and_then(|r| r.workload.as_deref()) else {
        why("run without results".into());
        return (Vec::new(), CONNECTIONS as usize);
    };
    let mut out = Vec::new();
    let mut bad = 0;
    for f in &w.flows {
        match conn(f) {
            Some(c) => out.push(c),
            None => {
                bad += 1;
                why(broken_kind(f));
            }
        }
    }
    (out, bad)
}

fn mean(xs: &[f64]) -> f64 {
    crate::stats::mean(xs)
}

/// Totals over every run of the experiment, for the notes.
#[derive(Default)]
struct Census {
    conns: usize,
    broken: usize,
    all_subflows: usize,
    exited: usize,
    /// Broken connections by (cell, arm, reason).
    why: std::collections::BTreeMap<String, usize>,
}

impl Census {
    fn add(&mut self, c: &[Conn], bad: usize) {
        self.conns += c.len();
        self.broken += bad;
        self.all_subflows += c.iter().filter(|x| x.subflows == SUBFLOWS as usize).count();
        self.exited += c.iter().filter(|x| x.exited).count();
    }
}

// ----- analysis -----

fn analyse(runs: &[RunResult], sh: &Shape) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let ns = sh.seeds.len();
    let nq = sh.rss_queues.len();
    let (rss_runs, fct_runs) = runs.split_at((nq * ns * 2).min(runs.len()));
    let mut census = Census::default();
    // R_ss runs: per queue, per seed, [LIA, LISA].
    let rss_cell = |qi: usize, si: usize, lisa: bool, why: &mut dyn FnMut(String)| {
        conns_why(rss_runs.get((qi * ns + si) * 2 + usize::from(lisa)), why)
    };
    let mut rss_rows = Vec::new(); // (q, [lia, lisa] R_ss, [lia, lisa] cwnd)
    for (qi, &q) in sh.rss_queues.iter().enumerate() {
        let mut v = [[Vec::new(), Vec::new()], [Vec::new(), Vec::new()]];
        for si in 0..ns {
            for lisa in [false, true] {
                let cell = format!("R_ss q={q} {}", arm(lisa));
                let why = &mut census.why;
                let (c, bad) = rss_cell(qi, si, lisa, &mut |k| {
                    *why.entry(format!("{cell}: {k}")).or_default() += 1
                });
                census.add(&c, bad);
                v[0][usize::from(lisa)].extend(c.iter().map(|x| x.rss));
                v[1][usize::from(lisa)].extend(c.iter().map(|x| x.cwnd));
            }
        }
        rss_rows.push((
            q,
            [mean(&v[0][0]), mean(&v[0][1])],
            [mean(&v[1][0]), mean(&v[1][1])],
        ));
    }
    let rss_lower = rss_rows.iter().filter(|x| x.1[1] < x.1[0]).count();
    let cwnd_lower = rss_rows.iter().filter(|x| x.2[1] < x.2[0]).count();
    // FCT runs: per queue, per size, per seed, [LIA, LISA].
    let nz = sh.sizes.len();
    let fct_cell = |qi: usize, zi: usize, si: usize, lisa: bool, why: &mut dyn FnMut(String)| {
        conns_why(
            fct_runs.get(((qi * nz + zi) * ns + si) * 2 + usize::from(lisa)),
            why,
        )
    };
    let mut cells = Vec::new(); // (q, kb, [lia, lisa] mean FCT, [lia, lisa] mean R)
    for (qi, &q) in sh.fct_queues.iter().enumerate() {
        for (zi, &kb) in sh.sizes.iter().enumerate() {
            let mut f = [Vec::new(), Vec::new()];
            let mut rr = [Vec::new(), Vec::new()];
            for si in 0..ns {
                for lisa in [false, true] {
                    let cell = format!("q={q} {kb} KB {}", arm(lisa));
                    let why = &mut census.why;
                    let (c, bad) = fct_cell(qi, zi, si, lisa, &mut |k| {
                        *why.entry(format!("{cell}: {k}")).or_default() += 1
                    });
                    census.add(&c, bad);
                    f[usize::from(lisa)].extend(c.iter().map(|x| x.fct_ms));
                    rr[usize::from(lisa)].extend(c.iter().map(|x| x.r));
                }
            }
            cells.push((
                q,
                kb,
                [mean(&f[0]), mean(&f[1])],
                [mean(&rr[0]), mean(&rr[1])],
            ));
        }
    }
    let fct_lower = cells.iter().filter(|c| c.2[1] < c.2[0]).count();
    let share = fct_lower as f64 / cells.len().max(1) as f64;
    let ok = share >= 0.8 && rss_lower == rss_rows.len() && census.broken == 0;
    let rss_list = rss_rows
        .iter()
        .map(|(q, a, _)| format!("q={q}: {:.1} → {:.1}", a[0], a[1]))
        .collect::<Vec<_>>()
        .join("; ");
    let cwnd_list = rss_rows
        .iter()
        .map(|(q, _, w)| format!("q={q}: {:.0} → {:.0}", w[0], w[1]))
        .collect::<Vec<_>>()
        .join("; ");
    let fct_list = cells
        .iter()
        .map(|(q, kb, f, rr)| {
            format!(
                "q={q} {kb} KB: {:.0} → {:.0} ms (R {:.1} → {:.1}){}",
                f[0],
                f[1],
                rr[0],
                rr[1],
                if f[1] < f[0] { "" } else { " ✗" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ");
    r.notes.push(format!(
        "Network scenarios/mp-fattree.toml: 4-ary fat tree (16 hosts, 20 switches), every link 50 Mbit/s, one-way delays 450 µs per host link and 400 µs per switch link (base RTT 5 ms between pods, 3.4 ms between edge switches of one pod), ECMP by 5-tuple hash at every switch, drop-tail queues of the cell's size at every router port and host NIC. Per run {CONNECTIONS} MPTCP connections, one per random host pair on different edge switches (every host opens one; no pair twice), opened within 5 ms of each other; each has {SUBFLOWS} subflows (ndiffports: the first, then 7 joins on other source ports once the connection is fully established, about 3 RTTs in), so ECMP places each subflow on a random shortest path. \"MPTCP\" is LIA, \"LISA\" LIA + LISA, with the same pairs, sizes and start times per seed; {ns} seed(s) per cell. L7 (spec §9): one MPTCP connection per host pair with 8 subflows (the spec's interpretation; the literal \"one subflow per end-host pair\" leaves LISA nothing to do, since a connection with one subflow never gives a credit). Of {} connections, {} completed with all {SUBFLOWS} subflows and {} saw their last subflow leave slow start before completing (the others give R_ss as all their retransmissions and the cwnd at completion, MP-3's rule); {} did not complete intact{}.",
        census.conns + census.broken,
        census.all_subflows,
        census.exited,
        census.broken,
        if census.why.is_empty() {
            String::new()
        } else {
            format!(
                " ({})",
                census
                    .why
                    .iter()
                    .map(|(k, n)| format!("{k}: {n}"))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
        }
    ));
    r.claims.push(
        Claim::new(
            "MP-6",
            "fat tree, 8 subflows over ECMP: LISA's mean FCT lower than MPTCP (LIA) per (size, queue) cell, and R_ss lower per queue",
        )
        .paper_text("FCT significantly lower (Fig 8(c)); R_ss consistently lower (Fig 8(a))")
        .ours_text(&format!(
            "FCT lower in {fct_lower} of {} cells; R_ss lower at {rss_lower} of {} queues",
            cells.len(),
            rss_rows.len()
        ))
        .tolerance("FCT lower in ≥ 80 % of cells; R_ss lower at every queue; every connection intact")
        .check(ok)
        .note(format!(
            "R_ss (retransmissions before the last subflow left slow start), 900 KB, mean per connection, MPTCP → LISA: {rss_list}. Mean FCT and retransmissions R per cell: {fct_list}."
        )),
    );
    r.claims.push(
        Claim::new(
            "MP-6b",
            "fat tree: compound cwnd when the last subflow leaves slow start, MPTCP (LIA) → LISA, per queue",
        )
        .paper_text("consistently lower with LISA (Fig 8(b))")
        .ours_text(&format!("lower at {cwnd_lower} of {} queues", rss_rows.len()))
        .tolerance("lower at every queue")
        .check(cwnd_lower == rss_rows.len())
        .note(format!("900 KB, mean per connection: {cwnd_list}.")),
    );
    plots(&mut r, sh, rss_runs, fct_runs, &rss_list, &cwnd_list);
    r
}

/// Per seed, a measure's mean over a run's connections, against x.
type PerSeed = Vec<Vec<(f64, f64)>>;

fn plots(
    r: &mut ExperimentResult,
    sh: &Shape,
    rss_runs: &[RunResult],
    fct_runs: &[RunResult],
    rss_list: &str,
    cwnd_list: &str,
) {
    let ns = sh.seeds.len();
    let (nq, nz, nfq) = (sh.rss_queues.len(), sh.sizes.len(), sh.fct_queues.len());
    let cap = crate::bands::caption(ns);
    let per_q = |lisa: bool, f: fn(&Conn) -> f64| -> PerSeed {
        (0..ns)
            .map(|si| {
                (0..nq)
                    .map(|qi| {
                        let (c, _) = conns(rss_runs.get((qi * ns + si) * 2 + usize::from(lisa)));
                        let v: Vec<f64> = c.iter().map(f).collect();
                        (f64::from(sh.rss_queues[qi]), mean(&v))
                    })
                    .collect()
            })
            .collect()
    };
    // Per seed and size: the mean over the three queues' connections.
    let per_size = |lisa: bool, f: fn(&Conn) -> f64| -> PerSeed {
        (0..ns)
            .map(|si| {
                (0..nz)
                    .map(|zi| {
                        let v: Vec<f64> = (0..nfq)
                            .flat_map(|qi| {
                                let i = ((qi * nz + zi) * ns + si) * 2 + usize::from(lisa);
                                conns(fct_runs.get(i)).0
                            })
                            .map(|c| f(&c))
                            .collect();
                        (sh.sizes[zi] as f64, mean(&v))
                    })
                    .collect()
            })
            .collect()
    };
    let pair = |f: &dyn Fn(bool) -> PerSeed| {
        vec![
            super::over_seeds("MPTCP (LIA)", RED, Style::Line, f(false)),
            super::over_seeds("LISA", BLUE, Style::Line, f(true)),
        ]
    };
    let chart = |title: &str, x: &str, y: &str, series: Vec<Series>| {
        Figure::Chart(Chart {
            title: title.into(),
            x_label: x.into(),
            y_label: y.into(),
            series,
            v_lines: vec![],
            ..Chart::default()
        })
    };
    r.plots.push(Plot {
        figure: chart(
            "MP-6: R_ss against the queue, fat tree, 8 subflows, 900 KB",
            "queue at every link (packets)",
            "retransmissions before the last slow-start exit",
            pair(&|l| per_q(l, |c| c.rss)),
        ),
        paper: "B.2 Fig 8(a): LISA reduces R_ss consistently over queues 2–42 packets (the figure's values did not survive extraction).".into(),
        ours: format!("Mean per connection, MPTCP → LISA: {rss_list}. {cap}"),
    });
    r.plots.push(Plot {
        figure: chart(
            "MP-6: compound cwnd at the last slow-start exit, fat tree, 900 KB",
            "queue at every link (packets)",
            "sum of the subflows' cwnd (segments)",
            pair(&|l| per_q(l, |c| c.cwnd)),
        ),
        paper: "B.2 Fig 8(b): LISA's total cwnd at the end of slow start is consistently lower."
            .into(),
        ours: format!("Mean per connection, MPTCP → LISA: {cwnd_list}. {cap}"),
    });
    let qs = sh
        .fct_queues
        .iter()
        .map(u32::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    r.plots.push(Plot {
        figure: chart(
            "MP-6: mean completion time against file size, fat tree, 8 subflows",
            "file size (KB)",
            "mean completion time (ms)",
            pair(&|l| per_size(l, |c| c.fct_ms)),
        ),
        paper: "B.2 Fig 8(c): completion time significantly lower with LISA at every size, 100–900 KB (30 tests per size: 10 per queue 10, 25, 40; the y axis reaches 0.5 s).".into(),
        ours: format!("Each point: the mean over the connections of queues {qs} (16 per run). {cap}"),
    });
    r.plots.push(Plot {
        figure: chart(
            "MP-6: retransmissions R against file size, fat tree, 8 subflows",
            "file size (KB)",
            "retransmitted segments per connection",
            pair(&|l| per_size(l, |c| c.r)),
        ),
        paper: "B.2 Fig 8(d): fewer retransmissions with LISA, correlated with the shorter completion times.".into(),
        ours: format!("Mean per connection over queues {qs}. {cap}"),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_scenario_is_the_experiments_network() {
        let file = include_str!("../../../../scenarios/mp-fattree.toml");
        let shipped = NetScenario::from_toml_str_named(file, "mp-fattree").unwrap();
        let ours = net(21, 300_000, true).unwrap();
        assert_eq!(shipped.topology, ours.topology);
        assert_eq!(shipped.routing, ours.routing);
        let (a, b) = (&shipped.workload, &ours.workload);
        assert_eq!(a.sizes, b.sizes);
        assert_eq!(a.pairs, b.pairs);
        assert_eq!(a.cc, b.cc);
        assert_eq!(a.tcp.lisa, Some(true));
        assert_eq!(
            a.tcp.to_config(a.cc).cc_name(),
            b.tcp.to_config(b.cc).cc_name()
        );
        let m = a.tcp.to_config(a.cc).mptcp.unwrap();
        assert_eq!(m, b.tcp.to_config(b.cc).mptcp.unwrap());
    }

    #[test]
    fn the_arms_differ_only_in_lisa() {
        let (a, b) = (
            net(7, 100_000, false).unwrap(),
            net(7, 100_000, true).unwrap(),
        );
        assert_eq!(a.workload.tcp.to_config(a.workload.cc).cc_name(), "lia");
        assert_eq!(
            b.workload.tcp.to_config(b.workload.cc).cc_name(),
            "lia+lisa"
        );
        assert_eq!(a.topology, b.topology);
        assert_eq!(a.workload.pairs, b.workload.pairs);
    }
}

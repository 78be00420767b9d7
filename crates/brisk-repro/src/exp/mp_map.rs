//! mp-map: every MPTCP scheduler × every coupled controller × LISA on/off against
//! path asymmetry, on one page (issue 32 §5, beyond the seed; `aqm-map` does the same
//! for the AQMs). No paper has this picture.
//!
//! The network is `mp_b1_net`'s two-path one (brisk endpoints on both ends, one
//! access link per path, drop-tail queues, no random loss, no background):
//! - RTT asymmetry: both paths 8–12 Mbit/s (drawn per seed), the fast path 8–12 ms
//!   one way, the slow one k times that, k = 1 … 10;
//! - bandwidth asymmetry: both paths 8–12 ms one way (drawn), the fast one 8–12 Mbit/s,
//!   the slow one 1/k of that.
//!
//! Queues hold 100 packets. Two workloads, each on its own connection: a bulk transfer
//! written at once (the measure: completion time, from acceptance to the last byte
//! read) and a paced application stream of 4-KB messages every 10 ms (3.3 Mbit/s;
//! the measure: the 95th percentile of the per-message application delay, from the
//! write to the reader having it whole). MPTCP with fullmesh over the client's two
//! addresses, the first subflow on the fast path; 1 MiB send / 2 MiB receive buffers,
//! Nagle off. The applications start once both subflows are up, so LISA acts on the
//! second subflow's start only as far as the first is still in slow start then.
//!
//! Schedulers: minrtt, lowrtt+rp, roundrobin, redundant, sttf. Controllers: uncoupled
//! (Reno per subflow, the base of the three coupled ones), LIA, OLIA, BALIA; each
//! with LISA off and on. Uncoupled with LISA is refused by the configuration (LISA is
//! an option of the coupled controllers): its cells are drawn and listed as refused,
//! with the checker's message.
//!
//! The claims (our IDs, MP-X1 to MP-X6) were written before the first run.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{categorical, Chart, Style};
use crate::svg::{Cell as HeatCell, HeatMap};
use brisk_scenario::knobs::{validate_tcp, TcpKnobs};
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::mptcp::sched::SchedKind;
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

use super::mp_b1_net::{self as net, Extras, Outcome, PathSpec, RunSpec, Transport, Workload};
use super::mp_sttf::{bulk, par_map};

pub const ID: &str = "mp-map";
pub const TITLE: &str = "Every MPTCP scheduler × coupled controller × LISA against path asymmetry: bulk completion time and p95 application delay (beyond the seed)";
pub const CLAIMS: &[&str] = &["MP-X1", "MP-X2", "MP-X3", "MP-X4", "MP-X5", "MP-X6"];

pub const SCHEDS: [(SchedKind, &str); 5] = [
    (SchedKind::MinRtt, "minrtt"),
    (SchedKind::LowRttRp, "lowrtt+rp"),
    (SchedKind::RoundRobin, "rr"),
    (SchedKind::Redundant, "redundant"),
    (SchedKind::Sttf, "sttf"),
];

/// (label, controller). Uncoupled MPTCP is Reno per subflow.
pub const CCS: [(&str, CcAlgorithm); 4] = [
    ("uncoupled", CcAlgorithm::Reno),
    ("lia", CcAlgorithm::Lia),
    ("olia", CcAlgorithm::Olia),
    ("balia", CcAlgorithm::Balia),
];

/// Stream message, bytes, and its period.
const MSG: u32 = 4000;
const PERIOD_MS: u64 = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Asym {
    Rtt,
    Bandwidth,
}

impl Asym {
    fn name(self) -> &'static str {
        match self {
            Asym::Rtt => "RTT",
            Asym::Bandwidth => "bandwidth",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Load {
    Bulk,
    Stream,
}

struct Shape {
    asyms: Vec<Asym>,
    ratios: Vec<u64>,
    seeds: Vec<u64>,
    bulk_bytes: u64,
    stream_s: u64,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            asyms: vec![Asym::Rtt],
            ratios: vec![1, 10],
            seeds: vec![1],
            bulk_bytes: 1_000_000,
            stream_s: 3,
        }
    } else {
        Shape {
            asyms: vec![Asym::Rtt, Asym::Bandwidth],
            ratios: vec![1, 2, 4, 6, 8, 10],
            seeds: vec![1, 2, 3],
            bulk_bytes: 4_000_000,
            stream_s: 10,
        }
    }
}

/// One combination of the map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Combo {
    sched: usize,
    cc: usize,
    lisa: bool,
}

/// Short names for the heat maps' row labels (their margin is narrow).
const SCHED_SHORT: [&str; 5] = ["min", "lrp", "rr", "red", "sttf"];
const CC_SHORT: [&str; 4] = ["unc", "lia", "olia", "bal"];

impl Combo {
    fn short(self) -> String {
        format!(
            "{}·{}{}",
            SCHED_SHORT[self.sched],
            CC_SHORT[self.cc],
            if self.lisa { "+L" } else { "" }
        )
    }
    fn label(self) -> String {
        format!(
            "{} · {}{}",
            SCHEDS[self.sched].1,
            CCS[self.cc].0,
            if self.lisa { "+lisa" } else { "" }
        )
    }
}

fn combos() -> Vec<Combo> {
    let mut v = Vec::new();
    for sched in 0..SCHEDS.len() {
        for cc in 0..CCS.len() {
            for lisa in [false, true] {
                v.push(Combo { sched, cc, lisa });
            }
        }
    }
    v
}

/// The combination's TCP knobs, or the configuration checker's refusal (field: message).
fn knobs(c: Combo) -> Result<TcpKnobs, String> {
    let k = TcpKnobs {
        lisa: c.lisa.then_some(true),
        ..TcpKnobs::default()
    };
    validate_tcp(&k, CCS[c.cc].1).map_err(|(f, m)| format!("{f}: {m}"))?;
    Ok(k)
}

/// The two paths for `seed`, asymmetry `a` and ratio `k`.
pub fn paths(a: Asym, seed: u64, k: u64) -> [PathSpec; 2] {
    let mut rng =
        ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(seed, "mp-map-paths", 0));
    let d = rng.gen_range(0.008..=0.012);
    let r0 = (rng.gen_range(8.0..=12.0) * 1e6) as u64;
    let r1 = (rng.gen_range(8.0..=12.0) * 1e6) as u64;
    let (d1, r1) = match a {
        Asym::Rtt => (d * k as f64, r1),
        Asym::Bandwidth => (d, r0 / k.max(1)),
    };
    [
        PathSpec {
            rate_bps: r0,
            delay: Duration::from_secs_f64(d),
            loss: 0.0,
            queue: 100,
        },
        PathSpec {
            rate_bps: r1,
            delay: Duration::from_secs_f64(d1),
            loss: 0.0,
            queue: 100,
        },
    ]
}

/// The paced stream: `MSG` bytes every `PERIOD_MS` for `secs`.
pub fn stream(secs: u64) -> Workload {
    Workload::Messages(
        (0..secs * 1000 / PERIOD_MS)
            .map(|i| (Duration::from_millis(i * PERIOD_MS), MSG))
            .collect(),
    )
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Item {
    combo: usize,
    asym: Asym,
    ratio: u64,
    seed: u64,
    load: Load,
}

/// One run's measure: completion time (s) for bulk, p95 delay (ms) for the stream;
/// NaN when the run did not finish (counted separately).
fn measure(o: &Outcome, load: Load) -> Option<f64> {
    match load {
        Load::Bulk => o.completion.map(|d| d.as_secs_f64()),
        Load::Stream => (o.unread == 0 && !o.delays_ms.is_empty())
            .then(|| crate::stats::quantile(&o.delays_ms, 0.95)),
    }
}

fn run_one(it: &Item, k: &TcpKnobs, sh: &Shape) -> Result<Outcome, String> {
    let c = combos()[it.combo];
    let (workload, limit) = match it.load {
        Load::Bulk => (bulk(sh.bulk_bytes), Duration::from_secs(60)),
        Load::Stream => (stream(sh.stream_s), Duration::from_secs(sh.stream_s + 30)),
    };
    net::run_with(
        &RunSpec {
            paths: paths(it.asym, it.seed, it.ratio),
            transport: Transport::Mptcp {
                sched: SCHEDS[c.sched].0,
                cc: CCS[c.cc].1,
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
            ..Extras::default()
        },
    )
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    if sh.ratios.is_empty() || sh.seeds.is_empty() {
        return Err("no runs".into());
    }
    // Every valid combination's knobs are built (and the refused ones' reasons known)
    // before any run.
    let checked: Vec<Result<TcpKnobs, String>> = combos().into_iter().map(knobs).collect();
    if checked.iter().all(|k| k.is_err()) {
        return Err("every combination was refused".into());
    }
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&sh, &checked)),
    })
}

/// Per (combo, asym, load, ratio): per-seed values.
struct Table {
    v: Vec<Vec<f64>>,
    keys: Vec<(usize, Asym, Load, u64)>,
}

impl Table {
    fn get(&self, combo: usize, a: Asym, l: Load, ratio: u64) -> Option<&[f64]> {
        self.keys
            .iter()
            .position(|&k| k == (combo, a, l, ratio))
            .map(|i| self.v[i].as_slice())
    }
    fn mean(&self, combo: usize, a: Asym, l: Load, ratio: u64) -> f64 {
        self.get(combo, a, l, ratio)
            .map_or(f64::NAN, crate::stats::mean)
    }
}

fn combo_index(sched: SchedKind, cc: CcAlgorithm, lisa: bool) -> usize {
    combos()
        .iter()
        .position(|c| SCHEDS[c.sched].0 == sched && CCS[c.cc].1 == cc && c.lisa == lisa)
        .unwrap_or(0)
}

fn analyse(sh: &Shape, checked: &[Result<TcpKnobs, String>]) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let all = combos();
    let mut items = Vec::new();
    for (ci, k) in checked.iter().enumerate() {
        if k.is_err() {
            continue;
        }
        for &asym in &sh.asyms {
            for &ratio in &sh.ratios {
                for &seed in &sh.seeds {
                    for load in [Load::Bulk, Load::Stream] {
                        items.push(Item {
                            combo: ci,
                            asym,
                            ratio,
                            seed,
                            load,
                        });
                    }
                }
            }
        }
    }
    let res = par_map(&items, |it| match &checked[it.combo] {
        Ok(k) => run_one(it, k, sh),
        Err(e) => Err(e.clone()),
    });
    let mut t = Table {
        v: Vec::new(),
        keys: Vec::new(),
    };
    let mut unfinished: Vec<String> = Vec::new();
    for (it, o) in items.iter().zip(&res) {
        let key = (it.combo, it.asym, it.load, it.ratio);
        let i = match t.keys.iter().position(|&k| k == key) {
            Some(i) => i,
            None => {
                t.keys.push(key);
                t.v.push(Vec::new());
                t.v.len() - 1
            }
        };
        match o.as_ref().map(|o| measure(o, it.load)) {
            Ok(Some(x)) => t.v[i].push(x),
            Ok(None) => unfinished.push(format!(
                "{} {:?} {} 1:{} seed {}",
                all[it.combo].label(),
                it.load,
                it.asym.name(),
                it.ratio,
                it.seed
            )),
            Err(e) => unfinished.push(format!(
                "{} {:?} {} 1:{} seed {}: {e}",
                all[it.combo].label(),
                it.load,
                it.asym.name(),
                it.ratio,
                it.seed
            )),
        }
    }
    let refused: Vec<String> = checked
        .iter()
        .enumerate()
        .filter_map(|(i, k)| k.as_ref().err().map(|e| format!("{}: {e}", all[i].label())))
        .collect();
    r.notes.push(format!(
        "Set-up: mp_b1_net's two paths (drop-tail, 100 packets, no random loss, no background). RTT asymmetry: both 8–12 Mbit/s, fast path 8–12 ms one way, slow path k times that. Bandwidth asymmetry: both 8–12 ms one way, slow path 1/k of the fast path's 8–12 Mbit/s. Ratios {}; {} seed(s) per point (the path draw and the endpoints' randomness). Bulk: {} MB written at once, completion time from acceptance to the last byte read. Stream: {MSG}-byte messages every {PERIOD_MS} ms for {} s (3.2 Mbit/s), p95 of the per-message delay from its write time to the reader having it whole. MPTCP fullmesh, first subflow on the fast path, 1 MiB send / 2 MiB receive buffers, Nagle off; the application starts once both subflows are up. Uncoupled = Reno per subflow (the coupled controllers' base). {} runs.",
        sh.ratios.iter().map(|k| format!("1:{k}")).collect::<Vec<_>>().join(", "),
        sh.seeds.len(),
        sh.bulk_bytes / 1_000_000,
        sh.stream_s,
        items.len()
    ));
    r.notes.push(format!(
        "Refused by the configuration (drawn as n/a, not run): {}.",
        if refused.is_empty() {
            "none".into()
        } else {
            refused.join("; ")
        }
    ));
    if !unfinished.is_empty() {
        r.notes.push(format!(
            "Runs that did not finish (left out of the means; a cell with none left is n/a): {}.",
            unfinished.join("; ")
        ));
    }
    // The full table: mean (min–max over seeds).
    for &a in &sh.asyms {
        for load in [Load::Bulk, Load::Stream] {
            let mut s = format!(
                "{} asymmetry, {}:",
                a.name(),
                match load {
                    Load::Bulk => "bulk completion time s, mean (min–max over seeds)",
                    Load::Stream => "stream p95 application delay ms, mean (min–max over seeds)",
                }
            );
            for (ci, c) in all.iter().enumerate() {
                let _ = write!(s, "\n{}:", c.label());
                if let Err(e) = &checked[ci] {
                    let _ = write!(s, " refused ({e})");
                    continue;
                }
                for &k in &sh.ratios {
                    let v = t.get(ci, a, load, k).unwrap_or(&[]);
                    if v.is_empty() {
                        let _ = write!(s, "  1:{k} unfinished");
                    } else {
                        let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
                        let hi = v.iter().copied().fold(0.0, f64::max);
                        let _ = write!(s, "  1:{k} {:.3} ({lo:.3}–{hi:.3})", crate::stats::mean(v));
                    }
                }
            }
            r.notes.push(s);
        }
    }

    claims(&mut r, sh, &t, checked, unfinished.len(), items.len());
    plots(&mut r, sh, &t, checked);
    r
}

fn claims(
    r: &mut ExperimentResult,
    sh: &Shape,
    t: &Table,
    checked: &[Result<TcpKnobs, String>],
    unfinished: usize,
    runs: usize,
) {
    let all = combos();
    let big = *sh.ratios.last().unwrap_or(&1);
    let a = Asym::Rtt;
    // MP-X1: every valid run finishes.
    r.claims.push(
        Claim::new(
            "MP-X1",
            "Every valid scheduler × controller × LISA combination completes the bulk transfer and delivers every stream message, at every asymmetry",
        )
        .paper_text("– (ours: the map is only meaningful if every cell ran)")
        .ours_text(&format!("{} of {runs} runs unfinished", unfinished))
        .tolerance("0")
        .check(unfinished == 0),
    );
    // MP-X2: redundant halves bulk throughput on symmetric paths.
    let red = combo_index(SchedKind::Redundant, CcAlgorithm::Olia, false);
    let min = combo_index(SchedKind::MinRtt, CcAlgorithm::Olia, false);
    let (r1, m1) = (t.mean(red, a, Load::Bulk, 1), t.mean(min, a, Load::Bulk, 1));
    r.claims.push(
        Claim::new(
            "MP-X2",
            "Symmetric paths (1:1), OLIA: bulk completion time, redundant / minrtt",
        )
        .paper_text("≈ 2 (redundant sends every byte on both paths: one path's throughput)")
        .ours(r1 / m1)
        .unit("×")
        .tolerance("≥ 1.5")
        .check(r1 / m1 >= 1.5)
        .note(format!("redundant {r1:.2} s, minrtt {m1:.2} s")),
    );
    // MP-X3: round-robin suffers from RTT asymmetry more than minrtt (stream p95).
    let rr = combo_index(SchedKind::RoundRobin, CcAlgorithm::Olia, false);
    let (rr_hi, mn_hi) = (
        t.mean(rr, a, Load::Stream, big),
        t.mean(min, a, Load::Stream, big),
    );
    r.claims.push(
        Claim::new(
            "MP-X3",
            &format!("RTT 1:{big}, OLIA: stream p95 application delay, round-robin against minrtt"),
        )
        .paper_text(
            "higher (round-robin ignores the RTTs: every other message waits for the slow path)",
        )
        .ours_text(&format!("{rr_hi:.0} vs {mn_hi:.0} ms"))
        .tolerance("round-robin's > minrtt's")
        .check(rr_hi > mn_hi),
    );
    // MP-X4: STTF's p95 no worse than minrtt's at the largest RTT ratio, every controller.
    let mut worst = (f64::NEG_INFINITY, String::new());
    for (_, cc) in CCS {
        let s = t.mean(
            combo_index(SchedKind::Sttf, cc, false),
            a,
            Load::Stream,
            big,
        );
        let m = t.mean(
            combo_index(SchedKind::MinRtt, cc, false),
            a,
            Load::Stream,
            big,
        );
        let d = s / m - 1.0;
        if d > worst.0 || worst.1.is_empty() {
            worst = (
                d,
                format!("{}: sttf {s:.0} ms, minrtt {m:.0} ms", cc.name()),
            );
        }
    }
    r.claims.push(
        Claim::new(
            "MP-X4",
            &format!(
                "RTT 1:{big}: stream p95 application delay, STTF against minrtt, worst controller"
            ),
        )
        .paper_text("no worse (STTF's estimate includes the queue minrtt ignores)")
        .ours(worst.0 * 100.0)
        .unit("% (STTF above minrtt)")
        .tolerance("≤ 10 %")
        .check(worst.0 <= 0.10)
        .note(worst.1),
    );
    // MP-X5: coupling on disjoint paths: uncoupled no slower than LIA (bulk, mean over
    // ratios and schedulers except redundant).
    let mut unc = Vec::new();
    let mut lia = Vec::new();
    for &asym in &sh.asyms {
        for &k in &sh.ratios {
            for (s, _) in SCHEDS {
                if s == SchedKind::Redundant {
                    continue;
                }
                unc.push(t.mean(
                    combo_index(s, CcAlgorithm::Reno, false),
                    asym,
                    Load::Bulk,
                    k,
                ));
                lia.push(t.mean(combo_index(s, CcAlgorithm::Lia, false), asym, Load::Bulk, k));
            }
        }
    }
    let (u, l) = (crate::stats::mean(&unc), crate::stats::mean(&lia));
    r.claims.push(
        Claim::new(
            "MP-X5",
            "Disjoint paths: bulk completion time, uncoupled (Reno per subflow) against LIA, mean over asymmetries and schedulers (redundant aside)",
        )
        .paper_text("uncoupled no slower (RFC 6356: LIA takes no more than the best path's TCP; uncoupled takes each path's share)")
        .ours_text(&format!("{u:.2} vs {l:.2} s"))
        .tolerance("uncoupled ≤ LIA × 1.02")
        .check(u <= l * 1.02),
    );
    // MP-X6: LISA's effect on separate paths: small.
    let mut worst = (0.0f64, String::new());
    for (ci, c) in combos().iter().enumerate() {
        if !c.lisa || checked[ci].is_err() {
            continue;
        }
        let off = all
            .iter()
            .position(|x| x.sched == c.sched && x.cc == c.cc && !x.lisa)
            .unwrap_or(ci);
        for &asym in &sh.asyms {
            for &k in &sh.ratios {
                let on = t.mean(ci, asym, Load::Bulk, k);
                let of = t.mean(off, asym, Load::Bulk, k);
                let d = (on / of - 1.0).abs();
                if d > worst.0 {
                    worst = (
                        d,
                        format!("{} {} 1:{k}: {on:.2} vs {of:.2} s", c.label(), asym.name()),
                    );
                }
            }
        }
    }
    r.claims.push(
        Claim::new(
            "MP-X6",
            "Bulk completion time with LISA against without, largest relative difference over every combination and asymmetry",
        )
        .paper_text("small (LISA targets a shared bottleneck's slow-start overshoot; these paths are disjoint and the second subflow joins before the data)")
        .ours(worst.0 * 100.0)
        .unit("%")
        .tolerance("≤ 10 %")
        .check(worst.0 <= 0.10)
        .note(worst.1),
    );
}

fn plots(r: &mut ExperimentResult, sh: &Shape, t: &Table, checked: &[Result<TcpKnobs, String>]) {
    let all = combos();
    // The map: one heat map per asymmetry and workload, rows the combinations,
    // columns the ratios; shade relative to the best cell of the column.
    for &a in &sh.asyms {
        for load in [Load::Bulk, Load::Stream] {
            let mut cells = Vec::new();
            let mut rows = Vec::new();
            for (ci, c) in all.iter().enumerate() {
                rows.push(if checked[ci].is_err() {
                    format!("{} refused", c.short())
                } else {
                    c.short()
                });
                cells.push(Vec::new());
            }
            for &k in &sh.ratios {
                let best = (0..all.len())
                    .map(|ci| t.mean(ci, a, load, k))
                    .filter(|x| x.is_finite())
                    .fold(f64::INFINITY, f64::min);
                for (ci, row) in cells.iter_mut().enumerate() {
                    let v = t.mean(ci, a, load, k);
                    row.push(v.is_finite().then(|| HeatCell {
                        // 0 at the column's best, 1 at 4× it or worse.
                        shade: ((v / best).log2() / 2.0).clamp(0.0, 1.0),
                        text: match load {
                            Load::Bulk => format!("{v:.2}"),
                            Load::Stream => format!("{v:.0}"),
                        },
                        fail: false,
                    }));
                }
            }
            let (what, unit) = match load {
                Load::Bulk => ("bulk completion time", "s"),
                Load::Stream => ("stream p95 application delay", "ms"),
            };
            r.plots.push(Plot {
                figure: Figure::Heat(HeatMap {
                    title: format!("{} asymmetry: {what} ({unit})", a.name()),
                    x_label: format!("{} ratio fast : slow path", a.name()),
                    y_label: "scheduler · controller".into(),
                    cols: sh.ratios.iter().map(|k| format!("1:{k}")).collect(),
                    rows,
                    cells,
                    scale: "÷ column's best".into(),
                    scale_lo: "1× (the best)".into(),
                    scale_hi: "≥ 4×".into(),
                }),
                paper: "No paper has this picture; the style is aqm-map's (every mechanism on one page).".into(),
                ours: format!(
                    "Rows: scheduler (min = minrtt, lrp = lowrtt+rp, rr, red = redundant, sttf) · controller (unc = uncoupled Reno, lia, olia, bal = balia), +L = LISA on. Each cell: the mean over {} seed(s) ({unit}); colour relative to the best cell of its column (log scale, dark = best). n/a rows: refused by the configuration (uncoupled has no LISA) or unfinished. The seeds' spread is in the notes and the charts below.",
                    sh.seeds.len()
                ),
            });
        }
    }
    // Seed bands: the schedulers (OLIA, LISA off), then the controllers and LISA under
    // lowrtt+rp.
    for &a in &sh.asyms {
        for load in [Load::Bulk, Load::Stream] {
            let (what, unit) = match load {
                Load::Bulk => ("bulk completion time", "s"),
                Load::Stream => ("stream p95 application delay", "ms"),
            };
            let series_of = |ci: usize, name: &str, colour: &'static str, style: Style| {
                let runs: Vec<Vec<(f64, f64)>> = (0..sh.seeds.len())
                    .map(|j| {
                        sh.ratios
                            .iter()
                            .filter_map(|&k| {
                                t.get(ci, a, load, k)
                                    .and_then(|v| v.get(j))
                                    .map(|&y| (k as f64, y))
                            })
                            .collect()
                    })
                    .collect();
                super::over_seeds(name, colour, style, runs)
            };
            let sched_series = SCHEDS
                .iter()
                .enumerate()
                .map(|(i, (s, name))| {
                    series_of(
                        combo_index(*s, CcAlgorithm::Olia, false),
                        name,
                        categorical(i),
                        Style::Line,
                    )
                })
                .collect();
            r.plots.push(Plot {
                figure: Figure::Chart(Chart {
                    title: format!("{} asymmetry: {what}, schedulers (OLIA)", a.name()),
                    x_label: format!("{} ratio slow / fast path", a.name()),
                    y_label: format!("{what} ({unit})"),
                    y_log: load == Load::Stream,
                    series: sched_series,
                    ..Chart::default()
                }),
                paper: "No paper has this picture.".into(),
                ours: format!(
                    "Each scheduler with OLIA, LISA off. {}",
                    crate::bands::caption(sh.seeds.len())
                ),
            });
            let mut cc_series = Vec::new();
            for (i, (name, cc)) in CCS.iter().enumerate() {
                for lisa in [false, true] {
                    let ci = combo_index(SchedKind::LowRttRp, *cc, lisa);
                    if checked[ci].is_err() {
                        continue;
                    }
                    cc_series.push(series_of(
                        ci,
                        &format!("{name}{}", if lisa { "+lisa" } else { "" }),
                        categorical(i),
                        if lisa { Style::Dashed } else { Style::Line },
                    ));
                }
            }
            r.plots.push(Plot {
                figure: Figure::Chart(Chart {
                    title: format!(
                        "{} asymmetry: {what}, controllers and LISA (lowrtt+rp)",
                        a.name()
                    ),
                    x_label: format!("{} ratio slow / fast path", a.name()),
                    y_label: format!("{what} ({unit})"),
                    y_log: load == Load::Stream,
                    series: cc_series,
                    ..Chart::default()
                }),
                paper: "No paper has this picture.".into(),
                ours: format!(
                    "lowrtt+rp with each controller, LISA off (solid) and on (dashed; uncoupled has none: refused). {}",
                    crate::bands::caption(sh.seeds.len())
                ),
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uncoupled_with_lisa_is_refused_and_every_other_combination_accepted() {
        let all = combos();
        assert_eq!(all.len(), 40);
        for c in all {
            let k = knobs(c);
            if c.lisa && CCS[c.cc].1 == CcAlgorithm::Reno {
                let e = k.unwrap_err();
                assert!(e.contains("tcp.lisa") && e.contains("coupled"), "{e}");
            } else {
                let k = k.unwrap();
                let cfg = k.to_config(CCS[c.cc].1);
                assert_eq!(cfg.congestion.controller.tuning.coupled.lisa, c.lisa);
            }
        }
    }

    #[test]
    fn asymmetric_paths_scale_the_right_dimension() {
        let p = paths(Asym::Rtt, 1, 10);
        let (d0, d1) = (p[0].delay.as_nanos() as i128, p[1].delay.as_nanos() as i128);
        assert!((d1 - 10 * d0).abs() < 100, "{d0} {d1}");
        let q = paths(Asym::Bandwidth, 1, 10);
        assert_eq!(q[1].rate_bps, q[0].rate_bps / 10);
        assert_eq!(q[0].delay, q[1].delay);
    }
}

//! Beyond the RC3 paper (issue 11 §6), on rc3-base's network (`rc3_net`):
//! - `rc3-compose`: RC3 composed with CUBIC, with ABE behind PIE (PIE on band 0 of the
//!   routers' priority queues, marking) and with RDB, each against the same mechanism
//!   without RC3 and against NewReno RC3 on the same arrivals;
//! - `rc3-deploy`: the fraction of routers with priorities swept from 0 to 100 %
//!   (RC3-15 extended), RC3's reduction per size bin against the fraction.
//!
//! Claims `RC3-X1` to `RC3-X5` are ours; their checks were written before the runs.

use super::rc3_net::{self, bin_label, bin_mid, jobs, Arm, Net, EDGES};
use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREEN, ORANGE, RED};
use brisk_sim::fct::{FctStats, Reductions};
use brisk_sim::RunResult;

pub const COMPOSE_ID: &str = "rc3-compose";
pub const COMPOSE_TITLE: &str =
    "RC3 composed with CUBIC, ABE behind PIE and RDB (ours, beyond RC3 §6)";
pub const COMPOSE_CLAIMS: &[&str] = &[
    "RC3-X1a", "RC3-X1b", "RC3-X2a", "RC3-X2b", "RC3-X3a", "RC3-X3b", "RC3-X1c", "RC3-X1d",
    "RC3-X2c", "RC3-X2d",
];
pub const DEPLOY_ID: &str = "rc3-deploy";
pub const DEPLOY_TITLE: &str =
    "RC3 with 0 to 100 % of routers having priorities (ours, RC3-15 extended)";
pub const DEPLOY_CLAIMS: &[&str] = &["RC3-X4", "RC3-X5"];

/// (seeds, flows per run).
fn sizes(quick: bool) -> (u64, u32) {
    if quick {
        (1, 1000)
    } else {
        (3, 3000)
    }
}

fn set_up(quick: bool) -> String {
    let (seeds, flows) = sizes(quick);
    format!(
        "{seeds} seed(s) × {flows} downloads per arm{}, arms sharing arrivals per seed, the first 10 % of the arrival span left out, pooled.",
        if quick {
            " (--quick: scaled down from the full run's 3 × 3000)"
        } else {
            ""
        }
    )
}

/// The runs of arm `k` of `n` (seed-major).
fn arm_runs(runs: &[RunResult], k: usize, n: usize) -> Vec<&RunResult> {
    runs.iter().skip(k).step_by(n).collect()
}

fn nan(x: Option<f64>) -> f64 {
    x.unwrap_or(f64::NAN)
}

/// The compositions: (name, the network, the `tcp` extra keys), each run without and
/// with RC3; RDB only on the first setting (it bundles nothing in this workload, see
/// the notes).
fn compositions(net: &Net, rdb: bool) -> Vec<(&'static str, Net, &'static str)> {
    let mut v = vec![
        ("NewReno", net.clone(), ""),
        (
            "CUBIC",
            Net {
                cc: "cubic",
                ..net.clone()
            },
            "",
        ),
        (
            "ABE behind PIE",
            Net {
                band0_pie: true,
                ..net.clone()
            },
            "ecn = true, abe = true",
        ),
    ];
    if rdb {
        v.push(("RDB", net.clone(), "rdb = true"));
    }
    v
}

/// The two settings: rc3-base's network (1 Gbit/s), and rc3-levels' (100 Mbit/s, 500-KB
/// buffers), where the same flows meet congestion; (label, rate in Mbit/s, with RDB,
/// claim letters for keep / no bin slower).
const SETTINGS: [(&str, u64, bool, [&str; 2]); 2] = [
    ("1 Gbit/s (rc3-base)", 1000, true, ["a", "b"]),
    ("100 Mbit/s (rc3-levels)", 100, false, ["c", "d"]),
];

const ARM_LABELS: [&str; 8] = [
    "NewReno",
    "NewReno RC3",
    "CUBIC",
    "CUBIC RC3",
    "ABE-PIE",
    "ABE-PIE RC3",
    "RDB",
    "RDB RC3",
];

pub fn plan_compose(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    let mut arms = Vec::new();
    for &(_, rate, rdb, _) in &SETTINGS {
        let net = Net {
            rate_mbps: rate,
            ..Net::base(flows)
        };
        for (k, (_, net, extra)) in compositions(&net, rdb).into_iter().enumerate() {
            for (j, rc3) in [false, true].into_iter().enumerate() {
                let mut keys = extra.to_string();
                if rc3 {
                    if !keys.is_empty() {
                        keys.push_str(", ");
                    }
                    keys.push_str("rc3 = true");
                }
                arms.push(Arm {
                    label: ARM_LABELS[2 * k + j].into(),
                    net: net.clone(),
                    tcp: rc3_net::tcp(&keys),
                });
            }
        }
    }
    Ok(Plan {
        jobs: jobs(COMPOSE_ID, &arms, seeds)?,
        analyse: Box::new(move |runs| analyse_compose(runs, quick)),
    })
}

/// Arms per seed over both settings.
fn compose_arms() -> usize {
    SETTINGS.iter().map(|s| 2 * (3 + usize::from(s.2))).sum()
}

/// Flows (arrived after the warm-up, completed in both) whose FCT is the same to the
/// nanosecond in two arms on the same arrivals, and how many were compared.
fn identical_flows(a: &[&RunResult], b: &[&RunResult]) -> (usize, usize) {
    let (mut same, mut n) = (0, 0);
    for (ra, rb) in a.iter().zip(b) {
        let (Some(wa), Some(wb)) = (&ra.workload, &rb.workload) else {
            continue;
        };
        let warm = brisk_time::Instant::ZERO + wa.warmup;
        for (fa, fb) in wa.flows.iter().zip(&wb.flows) {
            if fa.start < warm {
                continue;
            }
            if let (Some(x), Some(y)) = (fa.fct(), fb.fct()) {
                n += 1;
                same += usize::from(x == y);
            }
        }
    }
    (same, n)
}

/// Sums over the completed flows that arrived after the warm-up: (flows, ECN
/// reductions, retransmitted segments, packets carrying an RDB bundle).
fn sender_counts(runs: &[&RunResult]) -> (u64, u64, u64, u64) {
    let (mut n, mut cwr, mut rtx, mut rdb) = (0, 0, 0, 0);
    for r in runs {
        let Some(w) = &r.workload else { continue };
        let warm = brisk_time::Instant::ZERO + w.warmup;
        for f in w
            .flows
            .iter()
            .filter(|f| f.start >= warm && f.acked.is_some())
        {
            n += 1;
            cwr += f.ecn_cwr;
            rtx += f.retransmits;
            rdb += f.rdb_packets;
        }
    }
    (n, cwr, rtx, rdb)
}

fn bins_text(red: &Reductions) -> String {
    red.bins
        .iter()
        .enumerate()
        .map(|(i, b)| format!("{} {:.1}", bin_label(i), nan(*b)))
        .collect::<Vec<_>>()
        .join("; ")
}

/// A table cell: one decimal, "–" where a bin holds no flow.
fn cell(x: Option<f64>) -> String {
    match x.filter(|v| v.is_finite()) {
        Some(v) => format!("<td>{v:.1}</td>"),
        None => "<td>–</td>".into(),
    }
}

fn row(name: &str, red: &Reductions) -> String {
    format!(
        "<tr><td>{}</td>{}{}{}</tr>",
        crate::html::esc(name),
        cell(red.over_flows),
        cell(red.over_bytes),
        red.bins.iter().map(|x| cell(*x)).collect::<String>()
    )
}

fn analyse_compose(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(COMPOSE_ID, COMPOSE_TITLE);
    let n = compose_arms();
    let broken = rc3_net::broken(&runs.iter().collect::<Vec<_>>());
    let ms = |s: Option<f64>| s.map_or(f64::NAN, |x| x * 1e3);
    let head: String = (0..=EDGES.len())
        .map(|i| format!("<th>{}</th>", crate::html::esc(&bin_label(i))))
        .collect();
    let mut offset = 0;
    for &(setting, _, rdb, letters) in &SETTINGS {
        let k_arms = 2 * (3 + usize::from(rdb));
        let arms: Vec<Vec<&RunResult>> =
            (0..k_arms).map(|k| arm_runs(runs, offset + k, n)).collect();
        offset += k_arms;
        let st: Vec<FctStats> = arms.iter().map(|a| rc3_net::stats(a, None)).collect();
        // RC3's own gain on NewReno: the reference every composition is held to.
        let rc3 = st[1].reductions_from(&st[0]);
        let (rf, rb) = (nan(rc3.over_flows), nan(rc3.over_bytes));
        let mut rows = row("NewReno (reference)", &rc3);
        let comps: &[(&str, &str)] = if rdb {
            &[
                ("CUBIC", "RC3-X1"),
                ("ABE behind PIE", "RC3-X2"),
                ("RDB", "RC3-X3"),
            ]
        } else {
            &[("CUBIC", "RC3-X1"), ("ABE behind PIE", "RC3-X2")]
        };
        for (c, &(name, id)) in comps.iter().enumerate() {
            let (base, with) = (&st[2 * c + 2], &st[2 * c + 3]);
            let red = with.reductions_from(base);
            let (f, b) = (nan(red.over_flows), nan(red.over_bytes));
            let vs_rc3 = with.reductions_from(&st[1]);
            let vs_nr = base.reductions_from(&st[0]);
            let keeps = f >= 0.8 * rf && b >= 0.8 * rb && broken == 0;
            r.claims.push(
                Claim::new(
                    &format!("{id}{}", letters[0]),
                    &format!("{setting}: {name} + RC3 vs {name} alone, RC3's gain kept"),
                )
                .paper_text(&format!(
                    "ours: NewReno RC3 vs NewReno {rf:.1} % over flows, {rb:.1} % over bytes"
                ))
                .ours_text(&format!("{f:.1} % over flows, {b:.1} % over bytes"))
                .unit("%")
                .tolerance("≥ 0.8 × NewReno RC3's reduction, over flows and over bytes")
                .check(keeps)
                .note(format!(
                    "mean FCT {name} {:.1} → {name} + RC3 {:.1} ms; byte-weighted {:.1} → {:.1} ms. {name} alone against NewReno: {:+.1} % over flows, {:+.1} % over bytes; {name} + RC3 against NewReno RC3 ({:.1} / {:.1} ms): {:+.1} % over flows, {:+.1} % over bytes (positive: faster)",
                    ms(base.mean_fct_s),
                    ms(with.mean_fct_s),
                    ms(base.byte_weighted_fct_s),
                    ms(with.byte_weighted_fct_s),
                    nan(vs_nr.over_flows),
                    nan(vs_nr.over_bytes),
                    ms(st[1].mean_fct_s),
                    ms(st[1].byte_weighted_fct_s),
                    nan(vs_rc3.over_flows),
                    nan(vs_rc3.over_bytes)
                )),
            );
            let filled = |i: usize| {
                base.bins.get(i).is_some_and(|x| x.completed > 0)
                    && with.bins.get(i).is_some_and(|x| x.completed > 0)
            };
            let worst = (0..red.bins.len())
                .filter(|&i| filled(i))
                .filter_map(|i| red.bins[i])
                .fold(f64::INFINITY, f64::min);
            r.claims.push(
                Claim::new(
                    &format!("{id}{}", letters[1]),
                    &format!("{setting}: {name} + RC3 vs {name} alone, no size bin slower"),
                )
                .paper_text("ours: RC3 raises no bin's mean FCT by more than 5 %")
                .ours_text(&format!("worst bin {worst:.1} %"))
                .unit("%")
                .tolerance("reduction ≥ −5 % in every bin")
                .check(worst >= -5.0)
                .note(bins_text(&red)),
            );
            rows.push_str(&row(name, &red));
        }
        r.html.push_str(&format!(
            "<p class=\"note\">{}: reduction in mean FCT (%) of each mechanism with RC3 against the same mechanism without, over flows, over bytes and per size bin; the first row is NewReno RC3 against NewReno.</p><table><tr><th>mechanism</th><th>over flows</th><th>over bytes</th>{head}</tr>{rows}</table>",
            crate::html::esc(setting)
        ));

        // Evidence for the reasons.
        let c: Vec<(u64, u64, u64, u64)> = arms.iter().map(|a| sender_counts(a)).collect();
        let per = |k: usize, x: u64| x as f64 / c[k].0.max(1) as f64;
        let same = |a: usize, b: usize| {
            let (s, n) = identical_flows(&arms[a], &arms[b]);
            format!("{s} of {n}")
        };
        r.notes.push(format!(
            "{setting}, senders' counters per completed flow: retransmitted segments NewReno {:.3}, NewReno RC3 {:.3}, CUBIC {:.3}, CUBIC RC3 {:.3}, ABE {:.3}, ABE RC3 {:.3}; ECN reductions ABE {:.3}, ABE RC3 {:.3}. Flows with the same FCT to the nanosecond: CUBIC and NewReno {}, CUBIC RC3 and NewReno RC3 {}, ABE-PIE and NewReno {}, ABE-PIE RC3 and NewReno RC3 {}.",
            per(0, c[0].2),
            per(1, c[1].2),
            per(2, c[2].2),
            per(3, c[3].2),
            per(4, c[4].2),
            per(5, c[5].2),
            per(4, c[4].1),
            per(5, c[5].1),
            same(0, 2),
            same(1, 3),
            same(0, 4),
            same(1, 5)
        ));
        if rdb {
            let why = if c[6].3 + c[7].3 == 0 {
                "No packet carried a bundle. A workload flow is one write of its whole size, so every segment but the last is a full MSS, and RDB bundles only while the packet stays within one MSS: it has nothing to bundle. The thin flows RDB is for are streams of small writes, which this workload does not have; RDB was therefore not run on the second setting."
            } else {
                "Some packets carried a bundle."
            };
            r.notes.push(format!(
                "{setting}, RDB: packets that carried a bundle: {} (RDB) and {} (RDB + RC3); flows with the same FCT to the nanosecond with and without RDB: {} (RC3 off), {} (RC3 on). {why}",
                c[6].3,
                c[7].3,
                same(0, 6),
                same(1, 7)
            ));
        }
        compose_plot(&mut r, &st, setting);
    }
    r.notes.push(format!(
        "Set-up: rc3-base's network and TCP (Internet2-like, 30 % load, NewReno + SACK, IW 4, every segment ACKed, one-BDP shared priority buffers with push-out) at 1 Gbit/s (rc3-base) and at 100 Mbit/s with 500-KB buffers (rc3-levels' setting, where the same flow sizes are 10× longer in RTTs and meet losses). Arms, each without and with RC3 (levels 40/400/4000): NewReno; CUBIC (cc = \"cubic\", brisk's defaults); NewReno with ECN and ABE (β_ecn 0.8, RFC 8511's default for Reno) with every router port's band 0 under PIE (Linux 3.17.4's constants: target 20 ms, tupdate 30 ms, α 0.125, β 1.25, max burst 100 ms; ECN marking with the 10 % drop rule off, as the ABE paper ran it; our choice: PIE on band 0 only, the lower bands plain; host NICs unchanged); at 1 Gbit/s also NewReno with RDB (rdb = true: limit 1, thin while packets in flight × 10 ms < min RTT). {} Flows broken or unfinished: {broken}. The checks were fixed before the runs: a composition keeps RC3's gain if its reduction against the mechanism alone is at least 0.8 × NewReno RC3's on the same network, over flows and over bytes (a, c), and it conflicts if any size bin gets more than 5 % slower (b, d).",
        set_up(quick)
    ));
    r
}

fn compose_plot(r: &mut ExperimentResult, st: &[FctStats], setting: &str) {
    const COLORS: [&str; 4] = [BLUE, RED, GREEN, ORANGE];
    let names = ["NewReno", "CUBIC", "ABE behind PIE", "RDB"];
    let mut series = Vec::new();
    for (c, name) in names.iter().enumerate().take(st.len() / 2) {
        let (base, with) = (&st[2 * c], &st[2 * c + 1]);
        let red = with.reductions_from(base);
        let pts: Vec<(f64, f64)> = red
            .bins
            .iter()
            .enumerate()
            .filter_map(|(i, b)| {
                let filled = base.bins.get(i).is_some_and(|x| x.completed > 0);
                b.filter(|v| v.is_finite() && filled)
                    .map(|v| (bin_mid(i) / 1e3, v))
            })
            .collect();
        let style = if c == 0 { Style::Line } else { Style::Dashed };
        series.push(Series::new(
            &format!("{name}: + RC3 vs alone"),
            COLORS[c],
            style,
            pts,
        ));
    }
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: format!("RC3's FCT reduction per flow size, composed with other mechanisms, {setting}"),
            x_label: "flow size (KB, log)".into(),
            y_label: "reduction in mean FCT (%)".into(),
            x_log: true,
            y_range: Some((-20.0, 100.0)),
            series,
            h_lines: vec![(0.0, String::new())],
            ..Chart::default()
        }),
        paper: "Not in the paper (§6 names these as open questions).".into(),
        ours: "Each line: a mechanism with RC3 against the same mechanism without, per size bin (geometric middle), pooled over seeds.".into(),
    });
}

/// Fractions of routers with priorities, rc3-deploy's x axis.
const DEPLOY: [f64; 6] = [0.0, 0.2, 0.4, 0.6, 0.8, 1.0];

pub fn plan_deploy(quick: bool) -> Result<Plan, String> {
    let (seeds, flows) = sizes(quick);
    // With every packet at DSCP 0 a priority queue is a drop-tail of the same shared
    // limit, so TCP's network does not depend on the fraction: one TCP arm.
    let mut arms = vec![Arm {
        label: "TCP".into(),
        net: Net::base(flows),
        tcp: rc3_net::tcp(""),
    }];
    const LABELS: [&str; 6] = [
        "RC3 0 % prio",
        "RC3 20 % prio",
        "RC3 40 % prio",
        "RC3 60 % prio",
        "RC3 80 % prio",
        "RC3 100 % prio",
    ];
    for (k, &d) in DEPLOY.iter().enumerate() {
        let fifo = 1.0 - d;
        arms.push(Arm {
            label: LABELS[k].into(),
            net: Net {
                fifo_routers: (fifo > 0.0).then_some(fifo),
                ..Net::base(flows)
            },
            tcp: rc3_net::tcp("rc3 = true"),
        });
    }
    // Evidence arm: no priorities anywhere, host NICs FIFO too.
    arms.push(Arm {
        label: "RC3 0 % prio, FIFO host NICs".into(),
        net: Net {
            fifo_routers: Some(1.0),
            fifo_hosts: true,
            ..Net::base(flows)
        },
        tcp: rc3_net::tcp("rc3 = true"),
    });
    Ok(Plan {
        jobs: jobs(DEPLOY_ID, &arms, seeds)?,
        analyse: Box::new(move |runs| analyse_deploy(runs, quick)),
    })
}

/// Mean of the finite reductions in bins `range` that hold flows in `base`.
fn mean_bins(red: &Reductions, base: &FctStats, range: std::ops::RangeInclusive<usize>) -> f64 {
    let v: Vec<f64> = range
        .filter(|&i| base.bins.get(i).is_some_and(|b| b.completed > 0))
        .filter_map(|i| red.bins.get(i).copied().flatten())
        .filter(|x| x.is_finite())
        .collect();
    if v.is_empty() {
        f64::NAN
    } else {
        v.iter().sum::<f64>() / v.len() as f64
    }
}

fn analyse_deploy(runs: &[RunResult], quick: bool) -> ExperimentResult {
    let mut r = ExperimentResult::new(DEPLOY_ID, DEPLOY_TITLE);
    let n = DEPLOY.len() + 2;
    let st: Vec<FctStats> = (0..n)
        .map(|k| rc3_net::stats(&arm_runs(runs, k, n), None))
        .collect();
    let broken = rc3_net::broken(&runs.iter().collect::<Vec<_>>());
    let tcp = &st[0];
    let red: Vec<Reductions> = st[1..=DEPLOY.len()]
        .iter()
        .map(|s| s.reductions_from(tcp))
        .collect();
    let bare = st[n - 1].reductions_from(tcp);
    let pct = |d: f64| format!("{:.0} %", d * 100.0);

    // RC3-X4: large flows (above 1000 packets: bins 6 and 7) gain monotonically.
    let large: Vec<f64> = red.iter().map(|x| mean_bins(x, tcp, 6..=7)).collect();
    let worst_step = large
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    let span = large[large.len() - 1] - large[0];
    r.claims.push(
        Claim::new(
            "RC3-X4",
            "flows above 1000 packets: reduction against the fraction of routers with priorities",
        )
        .paper_text("ours: rises with deployment")
        .ours_text(&format!(
            "{} (0 → 100 %); largest fall between steps {:.1} pp",
            large
                .iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" / "),
            (-worst_step).max(0.0)
        ))
        .unit("%")
        .tolerance("no step falls by more than 3 pp; 100 % at least 20 pp above 0 %")
        .check(worst_step >= -3.0 && span >= 20.0 && broken == 0),
    );
    // RC3-X5: small flows (≤ 4 packets) lose without priorities and not with them.
    let small: Vec<f64> = red
        .iter()
        .map(|x| x.bins.first().copied().flatten().unwrap_or(f64::NAN))
        .collect();
    let from = DEPLOY
        .iter()
        .zip(&small)
        .rev()
        .take_while(|(_, s)| **s >= 0.0)
        .last()
        .map(|(d, _)| pct(*d));
    r.claims.push(
        Claim::new(
            "RC3-X5",
            "flows of at most 4 packets: where RC3 stops hurting them",
        )
        .paper_text("ours: worse than TCP with no router prioritising, not worse with all")
        .ours_text(&format!(
            "{} (0 → 100 %); no loss from {}",
            small
                .iter()
                .map(|x| format!("{x:.1}"))
                .collect::<Vec<_>>()
                .join(" / "),
            from.unwrap_or_else(|| "no fraction".into())
        ))
        .unit("%")
        .tolerance("< 0 at 0 %, ≥ 0 at 100 %")
        .check(small[0] < 0.0 && small[small.len() - 1] >= 0.0),
    );
    for (k, x) in red.iter().enumerate() {
        r.notes.push(format!(
            "{} of routers with priorities: {:.1} % over flows, {:.1} % over bytes; per bin: {}",
            pct(DEPLOY[k]),
            nan(x.over_flows),
            nan(x.over_bytes),
            bins_text(x)
        ));
    }
    r.notes.push(format!(
        "No priorities anywhere (every router and every host NIC a drop-tail FIFO, RC3 still sending its copies): {:.1} % over flows, {:.1} % over bytes; per bin: {}. Against the 0 % arm (host NICs with priorities) this isolates what the sender's own NIC contributes.",
        nan(bare.over_flows),
        nan(bare.over_bytes),
        bins_text(&bare)
    ));
    r.notes.push(format!(
        "Set-up: rc3-base's network and TCP; the routers without priorities (drawn with the run's seed, a partial Fisher-Yates shuffle, so for one seed the prioritising routers of a smaller fraction stay prioritising at every larger one) have drop-tail FIFOs of the same 5 MB on all out-links, DSCP left intact; host NICs keep their priority queue at every fraction (the sender's own NIC is part of the RC3 host). TCP is run once, on the all-priority network: with every packet at DSCP 0 a priority queue is a drop-tail of the same shared limit. Fractions 0, 20, 40, 60, 80 and 100 % (0, 2, 4, 6, 8, 10 of the 10 routers). {} Flows broken or unfinished: {broken}. Checks RC3-X4 and X5 were fixed before the first run. RC3-15 (rc3-partial) is unchanged.",
        set_up(quick)
    ));
    deploy_plot(&mut r, &red, tcp);
    r
}

/// rc3-deploy's colours, one per flow-size bin: viridis-like, darkest for the smallest
/// flows; the last one darkened for contrast. Public so that `remote` can map a colour
/// read back from another process to the same static string.
pub const DEPLOY_COLORS: [&str; 8] = [
    "#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#8fbf26", "#c49a00",
];

fn deploy_plot(r: &mut ExperimentResult, red: &[Reductions], tcp: &FctStats) {
    let mut series = Vec::new();
    for (i, &color) in DEPLOY_COLORS.iter().enumerate().take(EDGES.len() + 1) {
        if tcp.bins.get(i).is_none_or(|b| b.completed == 0) {
            continue;
        }
        let pts: Vec<(f64, f64)> = DEPLOY
            .iter()
            .zip(red)
            .filter_map(|(d, x)| {
                x.bins
                    .get(i)
                    .copied()
                    .flatten()
                    .filter(|v| v.is_finite())
                    .map(|v| (d * 100.0, v))
            })
            .collect();
        series.push(Series::new(&bin_label(i), color, Style::Line, pts));
    }
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "RC3's FCT reduction per size bin against deployment".into(),
            x_label: "routers with priorities (%)".into(),
            y_label: "reduction in mean FCT vs TCP (%)".into(),
            y_range: Some((-60.0, 100.0)),
            series,
            h_lines: vec![(0.0, String::new())],
            ..Chart::default()
        }),
        paper: "§6 (RC3-15): at 20 % without priorities every flow gains; at 50 % small flows lose 6-7 %, medium gain ≈ 36 %, large 70-76 %.".into(),
        ours: "One line per size bin (bytes); x = 100 % is rc3-base's network.".into(),
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_plans_have_the_arms_in_order() {
        let p = plan_compose(true).unwrap();
        assert_eq!(p.jobs.len(), 14);
        assert_eq!(compose_arms(), 14);
        let cfg = |k: usize| {
            let net = p.jobs[k].net.as_ref().unwrap();
            let (_, c) = &net.workload.class_configs()[0];
            (c.transmit.rc3.is_some(), c.transmit.rdb.is_some())
        };
        assert_eq!(cfg(0), (false, false));
        assert_eq!(cfg(1), (true, false));
        assert_eq!(cfg(6), (false, true));
        assert_eq!(cfg(7), (true, true));
        assert_eq!(plan_deploy(true).unwrap().jobs.len(), 8);
    }
}

//! mp-sttf: MP-7, STTF against min-RTT (seed 004 main body §3.2, Figs 3.1–3.3; spec
//! `rite-multipath-coupled-cc-sbd-cdg.md` §1.2.4). Two parts, both on the two-path
//! network of `mp_b1_net`:
//!
//! (a) A synthesised video-on-demand session over two paths whose RTTs differ by a
//! factor swept from 1 to 12: a start-up burst of `STARTUP_S` seconds of video at
//! once, then one `CHUNK_S`-second chunk at the playback rate every `CHUNK_S` seconds
//! (the buffering-then-ON-OFF pattern Rao et al. measured for Netflix, "Network
//! characteristics of video streaming traffic", CoNEXT 2011; the seed's replayed
//! trace is not available). Each chunk is written as 16-KiB messages stamped with the
//! chunk's time; a message's application delay runs from that time to the reader
//! having read its last byte. The claim: STTF's reduction of the mean application
//! delay against min-RTT grows with the asymmetry.
//!
//! (b) A 10-MB download over a WLAN-like and a 3G-like path (Table III drawn per
//! run): the share of runs in which WLAN alone carries the transfer, and the time
//! data packets wait in the data-level receive buffer (mean and maximum).

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, RED};
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::mptcp::sched::SchedKind;
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::mp_b1_net::{self as net, Kind, Outcome, PathSpec, RunSpec, Transport, Workload};

pub const ID: &str = "mp-sttf";
pub const TITLE: &str =
    "STTF against min-RTT: video on demand over asymmetric paths and a 10-MB WLAN + 3G download (D1.3 body §3.2)";
pub const CLAIMS: &[&str] = &["MP-7a", "MP-7b", "MP-7c"];

/// Video bitrate, bit/s.
const BITRATE: u64 = 4_000_000;
/// The start-up burst, seconds of video.
const STARTUP_S: u64 = 10;
/// Chunk length, seconds of video (one chunk per this many seconds).
const CHUNK_S: u64 = 4;
const MSG: u32 = 16 * 1024;
/// 3G carries at most this share of the data packets for a run to count as
/// WLAN-only (fixed before the runs).
const WLAN_ONLY_PCT: f64 = 1.0;
const DOWNLOAD: u64 = 10_000_000;

struct Shape {
    ratios: Vec<u64>,
    seeds: Vec<u64>,
    session_s: u64,
    dl_seeds: Vec<u64>,
}

fn shape(quick: bool) -> Shape {
    if quick {
        Shape {
            ratios: vec![1, 4, 10],
            seeds: vec![1, 2],
            session_s: 12,
            dl_seeds: (1..=4).collect(),
        }
    } else {
        Shape {
            ratios: vec![1, 2, 4, 6, 8, 10, 12],
            seeds: (1..=5).collect(),
            session_s: 40,
            dl_seeds: (1..=30).collect(),
        }
    }
}

/// The video session's messages: the start-up burst at 0, then a chunk every
/// `CHUNK_S` seconds until `session_s`.
pub fn vod_session(session_s: u64) -> Workload {
    let mut m = Vec::new();
    let mut push = |at: Duration, bytes: u64| {
        let mut left = bytes;
        while left > 0 {
            let n = left.min(u64::from(MSG)) as u32;
            m.push((at, n));
            left -= u64::from(n);
        }
    };
    push(Duration::ZERO, BITRATE / 8 * STARTUP_S);
    let mut t = CHUNK_S;
    while t < session_s {
        push(Duration::from_secs(t), BITRATE / 8 * CHUNK_S);
        t += CHUNK_S;
    }
    Workload::Messages(m)
}

/// `total` bytes written at once (as 16-KiB messages).
pub fn bulk(total: u64) -> Workload {
    let m = u64::from(MSG);
    Workload::Messages(
        (0..total.div_ceil(m))
            .map(|i| (Duration::ZERO, (total - i * m).min(m) as u32))
            .collect(),
    )
}

/// The two paths of (a) for `seed` and RTT ratio `k`: each 8–12 Mbit/s, the fast one
/// 8–12 ms one way, the slow one `k` times that; no random loss; 100-packet queues.
fn vod_paths(seed: u64, k: u64) -> [PathSpec; 2] {
    let mut rng =
        ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(seed, "mp-sttf-vod", 0));
    let d = rng.gen_range(0.008..=0.012);
    let r0 = (rng.gen_range(8.0..=12.0) * 1e6) as u64;
    let r1 = (rng.gen_range(8.0..=12.0) * 1e6) as u64;
    [
        PathSpec {
            rate_bps: r0,
            delay: Duration::from_secs_f64(d),
            loss: 0.0,
            queue: 100,
        },
        PathSpec {
            rate_bps: r1,
            delay: Duration::from_secs_f64(d * k as f64),
            loss: 0.0,
            queue: 100,
        },
    ]
}

/// WLAN (path 0) and 3G (path 1), Table III drawn for `seed`.
pub fn wlan_3g(seed: u64) -> [PathSpec; 2] {
    let mut rng =
        ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(seed, "mp-b1-draw", 0));
    [Kind::Wlan.draw(&mut rng), Kind::G3.draw(&mut rng)]
}

/// The seed's LowRTT: v0.89's default, minimum RTT with retransmission and
/// penalisation (Table I, "LowRTT + RP"). Until 2026-12-06 this was plain min-RTT.
const LOWRTT: SchedKind = SchedKind::LowRttRp;

const SCHEDS: [(SchedKind, &str, &str); 2] =
    [(LOWRTT, "LowRTT+RP", RED), (SchedKind::Sttf, "STTF", BLUE)];

fn mptcp(sched: SchedKind) -> Transport {
    // The seed's MPTCP runs OLIA (Table I). Coupling across subflows is the
    // controller's business (docs/mechanisms/coupled-cc.md); the schedulers compared
    // here see the same controllers.
    Transport::Mptcp {
        sched,
        cc: CcAlgorithm::Olia,
    }
}

fn vod_run(seed: u64, k: u64, sched: SchedKind, sh: &Shape) -> Result<Outcome, String> {
    net::run(&RunSpec {
        paths: vod_paths(seed, k),
        transport: mptcp(sched),
        workload: vod_session(sh.session_s),
        send_buffer: 1 << 20,
        recv_buffer: 2 << 20,
        background: false,
        start: Duration::ZERO,
        limit: Duration::from_secs(sh.session_s + 20),
        seed,
    })
}

fn download_run(seed: u64, sched: SchedKind) -> Result<Outcome, String> {
    net::run(&RunSpec {
        paths: wlan_3g(seed),
        transport: mptcp(sched),
        workload: bulk(DOWNLOAD),
        // The seed's WLAN socket buffers (B.1 §1.3).
        send_buffer: 1 << 20,
        recv_buffer: 2 << 20,
        background: false,
        start: Duration::ZERO,
        limit: Duration::from_secs(120),
        seed,
    })
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sh = shape(quick);
    // Checked here so that a bad shape fails the plan, not the analysis.
    if sh.ratios.is_empty() || sh.seeds.is_empty() {
        return Err("no runs".into());
    }
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&sh)),
    })
}

/// Runs `f` over `items` on up to two threads (the machine's cores), results in order.
pub fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let chunk = items.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let hs: Vec<_> = items
            .chunks(chunk)
            .map(|c| s.spawn(|| c.iter().map(&f).collect::<Vec<R>>()))
            .collect();
        hs.into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    })
}

fn analyse(sh: &Shape) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    r.notes.push(format!(
        "(a) Video on demand, synthesised: {} Mbit/s video; a start-up burst of {STARTUP_S} s of video ({} MB) written at once, then one {CHUNK_S}-s chunk ({} MB) every {CHUNK_S} s, a {}-s session, written as 16-KiB messages stamped with their chunk's time (server to client). Two paths, each 8–12 Mbit/s (drawn per seed), 100-packet drop-tail queues, no random loss; the fast path 8–12 ms one way, the slow path k times that. MPTCP (OLIA, fullmesh, 1 MiB send / 2 MiB receive buffers, Nagle off), first subflow on the fast path. {} seed(s) per point.",
        BITRATE / 1_000_000,
        BITRATE / 8 * STARTUP_S / 1_000_000,
        BITRATE / 8 * CHUNK_S / 1_000_000,
        sh.session_s,
        sh.seeds.len()
    ));
    r.notes.push(format!(
        "(b) 10 MB download, WLAN + 3G with Table III drawn per run (WLAN 20–30 Mbit/s, 20–25 ms one way, 1–2 % loss, 100-packet queue; 3G 3–5 Mbit/s, 65–75 ms, no loss, 3750 packets), first subflow on WLAN, {} runs per scheduler. WLAN-only: 3G carried at most {WLAN_ONLY_PCT} % of the data packets. Receive-buffer wait: per data packet, from its arrival at the client to the reader having read its last byte.",
        sh.dl_seeds.len()
    ));
    r.notes.push("STTF as built (mptcp/sched.rs): the segment goes to the subflow with the least estimated arrival time, min RTT/2 + max(0, in flight + queued + segment − delivery rate × min RTT)/delivery rate (the window-drain model srtt/2 + srtt·max(0, in flight + queued + segment − cwnd)/cwnd before a rate sample), waiting for a busy subflow when it wins; while the head waits, a subflow with room sends the run STTF's per-segment assignment gives it from deeper in the backlog (sends ahead of the in-order cursor); see docs/mechanisms/mptcp.md, 'STTF and the B.1 study reproduced'.".into());

    // (a)
    let mut items = Vec::new();
    for &k in &sh.ratios {
        for &seed in &sh.seeds {
            for (s, _, _) in SCHEDS {
                items.push((k, seed, s));
            }
        }
    }
    let res = par_map(&items, |&(k, seed, s)| vod_run(seed, k, s, sh));
    let mut err = None;
    // mean delay per (ratio, seed, sched)
    let mut delay = |k: u64, seed: u64, s: SchedKind| -> f64 {
        let i = items.iter().position(|&x| x == (k, seed, s)).unwrap_or(0);
        match &res[i] {
            Ok(o) => o.mean_delay(),
            Err(e) => {
                err = Some(e.clone());
                f64::NAN
            }
        }
    };
    // Reduction per ratio per seed, %.
    let mut red_runs: Vec<Vec<(f64, f64)>> = vec![Vec::new(); sh.seeds.len()];
    let mut per_sched: Vec<Vec<Vec<(f64, f64)>>> = vec![vec![Vec::new(); sh.seeds.len()]; 2];
    let mut red_mean = Vec::new();
    for &k in &sh.ratios {
        let mut reds = Vec::new();
        for (j, &seed) in sh.seeds.iter().enumerate() {
            let m = delay(k, seed, LOWRTT);
            let s = delay(k, seed, SchedKind::Sttf);
            per_sched[0][j].push((k as f64, m));
            per_sched[1][j].push((k as f64, s));
            let red = 100.0 * (1.0 - s / m);
            red_runs[j].push((k as f64, red));
            reds.push(red);
        }
        red_mean.push((k, crate::stats::mean(&reds)));
    }
    let first = red_mean.first().map_or(f64::NAN, |x| x.1);
    let last = red_mean.last().map_or(f64::NAN, |x| x.1);
    let tau = kendall(
        &red_mean
            .iter()
            .map(|&(k, v)| (k as f64, v))
            .collect::<Vec<_>>(),
    );
    let table: Vec<String> = red_mean
        .iter()
        .map(|(k, v)| format!("1:{k} {v:.1} %"))
        .collect();
    r.claims.push(
        Claim::new(
            "MP-7a",
            "VoD over asymmetric RTTs: STTF's reduction of the mean application delay against min-RTT grows with the asymmetry",
        )
        .paper_text("grows with asymmetry (Fig 3.1, no numbers)")
        .ours(last - first)
        .unit("pp (reduction at the largest ratio − at 1:1)")
        .tolerance("direction: a reduction (> 0) at the largest ratio, larger than at 1:1, and Kendall's τ over the ratios > 0")
        .check(last > 0.0 && last > first && tau > 0.0 && err.is_none())
        .note(format!(
            "Mean reduction per ratio: {}; Kendall's τ {tau:.2}.{}",
            table.join(", "),
            err.as_ref().map_or(String::new(), |e| format!(" A run failed: {e}"))
        )),
    );
    let pts = |v: &Vec<Vec<(f64, f64)>>| v.clone();
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Video on demand: mean application delay against RTT asymmetry".into(),
            x_label: "RTT ratio slow/fast path".into(),
            y_label: "mean application delay per 16-KiB message (ms)".into(),
            series: SCHEDS
                .iter()
                .enumerate()
                .map(|(i, (_, name, c))| super::over_seeds(name, c, Style::Line, pts(&per_sched[i])))
                .collect(),
            ..Chart::default()
        }),
        paper: "Fig 3.1 (CORE, a replayed Netflix session): STTF lowers the average latency more than LowRTT, and the gap grows with the RTT asymmetry.".into(),
        ours: format!(
            "STTF's reduction against min-RTT: {}. {}",
            table.join(", "),
            crate::bands::caption(sh.seeds.len())
        ),
    });
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "Video on demand: STTF's delay reduction against min-RTT".into(),
            x_label: "RTT ratio slow/fast path".into(),
            y_label: "reduction of the mean application delay (%)".into(),
            series: vec![super::over_seeds(
                "1 − STTF / min-RTT",
                BLUE,
                Style::Line,
                red_runs,
            )],
            h_lines: vec![(0.0, "no difference".into())],
            ..Chart::default()
        }),
        paper: "Fig 3.1: the reduction grows with the asymmetry.".into(),
        ours: format!(
            "Kendall's τ of the mean reduction over the ratios: {tau:.2}. {}",
            crate::bands::caption(sh.seeds.len())
        ),
    });

    // (b)
    let mut items = Vec::new();
    for &seed in &sh.dl_seeds {
        for (s, _, _) in SCHEDS {
            items.push((seed, s));
        }
    }
    let res = par_map(&items, |&(seed, s)| download_run(seed, s));
    let mut only = [0usize; 2];
    let mut n = [0usize; 2];
    let mut waits: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut wait_max = [0.0f64; 2];
    let mut shares: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut fct: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
    let mut errs = Vec::new();
    for (i, &(_, s)) in items.iter().enumerate() {
        let j = usize::from(s == SchedKind::Sttf);
        match &res[i] {
            Ok(o) => {
                n[j] += 1;
                let g3 = o.share(1);
                shares[j].push(g3);
                if g3 <= WLAN_ONLY_PCT {
                    only[j] += 1;
                }
                waits[j].push(crate::stats::mean(&o.rbuf_wait_ms));
                wait_max[j] = wait_max[j].max(o.rbuf_wait_ms.iter().copied().fold(0.0, f64::max));
                if let Some(c) = o.completion {
                    fct[j].push(c.as_secs_f64());
                }
            }
            Err(e) => errs.push(e.clone()),
        }
    }
    let pct = |j: usize| 100.0 * only[j] as f64 / n[j].max(1) as f64;
    let (p_min, p_sttf) = (pct(0), pct(1));
    r.claims.push(
        Claim::new(
            "MP-7b",
            "10 MB over WLAN + 3G: share of runs that use only WLAN, min-RTT / STTF",
        )
        .paper_text("≈20 % / ≈50 %")
        .ours_text(&format!("{p_min:.0} % / {p_sttf:.0} %"))
        .tolerance("each within 15 pp of the seed's, and STTF > min-RTT")
        .check(
            errs.is_empty()
                && (p_min - 20.0).abs() <= 15.0
                && (p_sttf - 50.0).abs() <= 15.0
                && p_sttf > p_min,
        )
        .note(format!(
            "{} runs each. 3G share of data packets, mean: min-RTT {:.1} %, STTF {:.1} %. Completion time, mean: min-RTT {:.1} s, STTF {:.1} s.{}",
            n[0],
            crate::stats::mean(&shares[0]),
            crate::stats::mean(&shares[1]),
            crate::stats::mean(&fct[0]),
            crate::stats::mean(&fct[1]),
            if errs.is_empty() { String::new() } else { format!(" Failed runs: {}", errs.join("; ")) }
        )),
    );
    let (w_min, w_sttf) = (crate::stats::mean(&waits[0]), crate::stats::mean(&waits[1]));
    r.claims.push(
        Claim::new(
            "MP-7c",
            "10 MB over WLAN + 3G: receive-buffer waiting time, STTF against min-RTT: lower mean, higher maximum",
        )
        .paper_text("lower mean, higher maximum (no numbers)")
        .ours_text(&format!(
            "mean {w_sttf:.1} vs {w_min:.1} ms; max {:.0} vs {:.0} ms",
            wait_max[1], wait_max[0]
        ))
        .tolerance("direction: STTF's mean < min-RTT's and STTF's maximum > min-RTT's")
        .check(errs.is_empty() && w_sttf < w_min && wait_max[1] > wait_max[0])
        .note("Mean: of the per-run means; maximum: over all runs' packets."),
    );
    let series = |v: &[Vec<f64>; 2]| -> Vec<Series> {
        SCHEDS
            .iter()
            .enumerate()
            .map(|(j, (_, name, c))| {
                let mut s = crate::stats::sorted(&v[j]);
                s.retain(|x| x.is_finite());
                let n = s.len().max(2) - 1;
                Series::new(
                    name,
                    c,
                    Style::Step,
                    s.iter()
                        .enumerate()
                        .map(|(i, &x)| (x, i as f64 / n as f64))
                        .collect(),
                )
            })
            .collect()
    };
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "10 MB over WLAN + 3G: share of the data on 3G per run".into(),
            x_label: "3G share of the connection's data packets (%)".into(),
            y_label: "fraction of runs (CDF)".into(),
            series: series(&shares),
            v_lines: vec![(WLAN_ONLY_PCT, "WLAN only".into())],
            ..Chart::default()
        }),
        paper: "Fig 3.3 (live, Rennes via Roubaix): only WLAN is used in ≈20 % of the tests with LowRTT and ≈50 % with STTF.".into(),
        ours: format!(
            "WLAN only (≤ {WLAN_ONLY_PCT} % on 3G): min-RTT {p_min:.0} %, STTF {p_sttf:.0} % of {} runs each; each step is one run (one Table III draw).",
            n[0]
        ),
    });
    r.plots.push(Plot {
        figure: Figure::Chart(Chart {
            title: "10 MB over WLAN + 3G: mean receive-buffer wait per run".into(),
            x_label: "mean receive-buffer wait per data packet (ms)".into(),
            y_label: "fraction of runs (CDF)".into(),
            series: series(&waits),
            ..Chart::default()
        }),
        paper: "STTF lowers the receive-buffer waiting time but has a higher maximum waiting time.".into(),
        ours: format!(
            "Mean of the per-run means: STTF {w_sttf:.1} ms, min-RTT {w_min:.1} ms; largest single wait STTF {:.0} ms, min-RTT {:.0} ms. Each step is one run.",
            wait_max[1], wait_max[0]
        ),
    });
    r
}

/// Kendall's τ-a of the points' y against x.
pub fn kendall(p: &[(f64, f64)]) -> f64 {
    let mut s = 0i64;
    let mut n = 0i64;
    for i in 0..p.len() {
        for j in i + 1..p.len() {
            let d = (p[j].0 - p[i].0) * (p[j].1 - p[i].1);
            s += if d > 0.0 {
                1
            } else if d < 0.0 {
                -1
            } else {
                0
            };
            n += 1;
        }
    }
    if n == 0 {
        f64::NAN
    } else {
        s as f64 / n as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vod_session_is_a_burst_then_chunks_at_the_playback_rate() {
        let Workload::Messages(m) = vod_session(12);
        let at0: u64 = m
            .iter()
            .filter(|x| x.0.is_zero())
            .map(|x| u64::from(x.1))
            .sum();
        assert_eq!(at0, BITRATE / 8 * STARTUP_S);
        let at4: u64 = m
            .iter()
            .filter(|x| x.0 == Duration::from_secs(4))
            .map(|x| u64::from(x.1))
            .sum();
        assert_eq!(at4, BITRATE / 8 * CHUNK_S);
        assert!(m
            .iter()
            .all(|x| x.1 <= MSG && x.0 < Duration::from_secs(12)));
    }

    #[test]
    fn kendall_tau_signs() {
        assert_eq!(kendall(&[(1.0, 1.0), (2.0, 2.0), (3.0, 3.0)]), 1.0);
        assert_eq!(kendall(&[(1.0, 3.0), (2.0, 2.0), (3.0, 1.0)]), -1.0);
    }
}

//! mn-vpn: TCP-in-TCP (Minion NSDI 2012 §1, §8.4, Figs 11–12; claim MN-9). An IP
//! tunnel over one TCP connection (OpenVPN 2.1.4's TCP mode, a 2-byte length per
//! packet) against the same tunnel with unordered receive (uCOBS records read with
//! `read_unordered`), with tunnelled pure ACKs written at a higher priority through
//! uTCP's prioritised send ("priACKs"), and with both. The inner flows are brisk TCP
//! (CUBIC) bulk transfers inside the tunnel; the outer connection crosses a 3 Mbit/s
//! down / 0.5 Mbit/s up bottleneck (the paper's) with RTT 60 ms and 50-packet queues
//! (the spec's assumptions, `minion.md` §6.4). The tunnel is `brisk_sim::vpn`.
//!
//! Two settings of the outer socket buffers: OpenVPN 2.1's own (it sets `SO_SNDBUF`
//! and `SO_RCVBUF` to 64 KB on Linux), the main one, and OS-sized buffers (4 MB, Linux's
//! `tcp_wmem` maximum; what `--sndbuf 0` leaves to the kernel), which decide where the
//! uploads' backlog waits: in the TUN queue, where no priority reaches, or in the
//! socket, where prioritised send lets ACKs overtake it.

use crate::claim::Claim;
use crate::experiment::{ExperimentResult, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREY, ORANGE, RED};
use brisk_sim::vpn::{self, Framing, VpnConfig, VpnResult};
use brisk_time::Duration;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

pub const ID: &str = "mn-vpn";
pub const TITLE: &str =
    "TCP-in-TCP: an IP tunnel over TCP vs uCOBS/uTCP with prioritised ACKs (Minion §8.4, Figs 11–12)";
pub const CLAIMS: &[&str] = &["MN-9a", "MN-9b", "MN-9c"];

/// The four tunnels of Fig. 12.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Variant {
    Original,
    Ucobs,
    PriAcks,
    Both,
}

const VARIANTS: [Variant; 4] = [
    Variant::Original,
    Variant::Ucobs,
    Variant::PriAcks,
    Variant::Both,
];

impl Variant {
    fn name(self) -> &'static str {
        match self {
            Variant::Original => "original (TCP)",
            Variant::Ucobs => "uCOBS",
            Variant::PriAcks => "priACKs",
            Variant::Both => "uCOBS + priACKs",
        }
    }
    /// Framing, unordered receive, prioritised ACKs. PriACKs alone keep OpenVPN's
    /// length prefix and in-order receive: only the sender changes.
    fn switches(self) -> (Framing, bool, bool) {
        match self {
            Variant::Original => (Framing::LengthPrefix, false, false),
            Variant::Ucobs => (Framing::Ucobs, true, false),
            Variant::PriAcks => (Framing::LengthPrefix, false, true),
            Variant::Both => (Framing::Ucobs, true, true),
        }
    }
}

/// Outer socket buffers: OpenVPN 2.1's 64 KB (main) and OS-sized 4 MB.
const BUFFERS: [(usize, &str); 2] = [
    (64 * 1024, "OpenVPN 2.1 socket buffers (64 KB)"),
    (4 << 20, "OS-sized socket buffers (4 MB)"),
];
const MAIN: usize = 0;

/// (uploads, downloads). Fig. 12's contexts, then Fig. 11's single download against
/// 1–4 uploads (0 uploads is DL-only).
const UL_ONLY: (usize, usize) = (1, 0);
const MIXED: (usize, usize) = (1, 3);
const DL_ONLY: (usize, usize) = (0, 1);
const FIG11: [(usize, usize); 4] = [(1, 1), (2, 1), (3, 1), (4, 1)];

struct Setup {
    buffers: Vec<usize>,
    contexts: Vec<(usize, usize)>,
    seeds: u64,
    secs: u64,
    warmup: u64,
}

fn setup(quick: bool) -> Setup {
    let mut contexts = vec![UL_ONLY, MIXED, DL_ONLY];
    if quick {
        // The claims need only the ends of Fig. 11's range; the figure has all four
        // in full mode.
        contexts.extend([FIG11[0], FIG11[3]]);
        Setup {
            buffers: vec![MAIN],
            contexts,
            seeds: 1,
            secs: 30,
            warmup: 10,
        }
    } else {
        contexts.extend(FIG11);
        Setup {
            buffers: (0..BUFFERS.len()).collect(),
            contexts,
            seeds: 3,
            secs: 120,
            warmup: 20,
        }
    }
}

#[derive(Clone, Copy)]
struct Job {
    buffer: usize,
    ctx: (usize, usize),
    variant: Variant,
    seed: u64,
}

fn config(j: &Job, s: &Setup) -> VpnConfig {
    let (framing, unordered, pri_acks) = j.variant.switches();
    VpnConfig {
        framing,
        unordered,
        pri_acks,
        outer_buffer: BUFFERS[j.buffer].0,
        uploads: j.ctx.0,
        downloads: j.ctx.1,
        duration: Duration::from_secs(s.secs),
        warmup: Duration::from_secs(s.warmup),
        seed: j.seed,
        ..VpnConfig::default()
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let s = setup(quick);
    // Check every config before anything runs.
    for j in jobs(&s) {
        config(&j, &s).validate().map_err(|e| e.to_string())?;
    }
    // The tunnel is its own driver (nested stacks), not a dumbbell scenario: it runs
    // in the analysis, on a few threads.
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| analyse(&s)),
    })
}

fn jobs(s: &Setup) -> Vec<Job> {
    let mut v = Vec::new();
    for &buffer in &s.buffers {
        for &ctx in &s.contexts {
            for variant in VARIANTS {
                for seed in 1..=s.seeds {
                    v.push(Job {
                        buffer,
                        ctx,
                        variant,
                        seed,
                    });
                }
            }
        }
    }
    v
}

/// Runs every job on up to 4 threads; results in job order.
fn run_all(s: &Setup, jobs: &[Job]) -> Vec<Result<VpnResult, String>> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<Option<Result<VpnResult, String>>>> =
        Mutex::new((0..jobs.len()).map(|_| None).collect());
    let threads = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    std::thread::scope(|sc| {
        for _ in 0..threads {
            sc.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = vpn::run(&config(j, s)).map_err(|e| e.to_string());
                if let Ok(mut o) = out.lock() {
                    o[i] = Some(r);
                }
            });
        }
    });
    out.into_inner()
        .unwrap_or_default()
        .into_iter()
        .map(|r| r.unwrap_or_else(|| Err("not run".into())))
        .collect()
}

/// Mean download and upload Mbit/s over seeds, and whether every run was intact.
#[derive(Clone, Copy, Debug, Default)]
struct Cell {
    down: f64,
    up: f64,
    intact: bool,
    n: u64,
}

struct Table {
    cells: Vec<(usize, (usize, usize), Variant, Cell)>,
}

impl Table {
    fn get(&self, buffer: usize, ctx: (usize, usize), v: Variant) -> Cell {
        self.cells
            .iter()
            .find(|c| c.0 == buffer && c.1 == ctx && c.2 == v)
            .map_or(Cell::default(), |c| c.3)
    }
}

fn analyse(s: &Setup) -> ExperimentResult {
    let mut r = ExperimentResult::new(ID, TITLE);
    let jobs = jobs(s);
    let results = run_all(s, &jobs);
    if let Some((j, Err(e))) = jobs.iter().zip(&results).find(|(_, r)| r.is_err()) {
        for id in CLAIMS {
            r.claims.push(
                Claim::new(id, "tunnel runs")
                    .ours_text("error")
                    .note(format!(
                        "{} {:?} seed {}: {e}",
                        j.variant.name(),
                        j.ctx,
                        j.seed
                    ))
                    .check(false),
            );
        }
        return r;
    }
    let mut t = Table { cells: Vec::new() };
    let (mut drops_tun, mut ooo, mut pri) = (0u64, 0u64, 0u64);
    for (j, res) in jobs.iter().zip(&results) {
        let Ok(v) = res else { continue };
        drops_tun += v.client.tun_drops + v.server.tun_drops;
        ooo += v.client.delivered_out_of_order + v.server.delivered_out_of_order;
        pri += v.client.acks_prioritised + v.server.acks_prioritised;
        let k = t
            .cells
            .iter()
            .position(|c| c.0 == j.buffer && c.1 == j.ctx && c.2 == j.variant);
        let k = k.unwrap_or_else(|| {
            t.cells.push((
                j.buffer,
                j.ctx,
                j.variant,
                Cell {
                    intact: true,
                    ..Cell::default()
                },
            ));
            t.cells.len() - 1
        });
        let c = &mut t.cells[k].3;
        c.down += v.download_mbps();
        c.up += v.upload_mbps();
        c.intact &= v.intact();
        c.n += 1;
    }
    for c in &mut t.cells {
        c.3.down /= c.3.n.max(1) as f64;
        c.3.up /= c.3.n.max(1) as f64;
    }
    let intact = t.cells.iter().all(|c| c.3.intact);
    claims(&mut r, s, &t, intact);
    plots(&mut r, s, &t);
    r.notes.push(format!(
        "Set-up (paper §8.4: 3 Mbit/s down, 0.5 Mbit/s up; spec minion.md §6.4: RTT 60 ms, 50-packet drop-tail queues each way): the tunnel of brisk_sim::vpn, two brisk TCP (CUBIC) hosts behind the two tunnel ends, every inner flow a bulk transfer inside the tunnel (the paper's competing uploads are \"within the same tunnel\"), opening at a seeded instant in the first second. Each tunnel end has a 100-packet TUN transmit queue (OpenVPN's --txqueuelen default), drop-tail; it moves packets to the outer socket in FIFO order whenever the socket takes a whole record (OpenVPN reads the TUN device only when its socket has taken the previous packet). Throughput = inner bytes read by the receiving applications from {w} s to {d} s, mean of {n} seed(s). All runs: {drops_tun} TUN-queue drops, {ooo} packets delivered out of order by uCOBS, {pri} pure ACKs prioritised; every inner byte matched its sender's pattern: {intact}.",
        w = s.warmup,
        d = s.secs,
        n = s.seeds,
    ));
    r.notes.push("Variants: original = 2-byte length prefix (OpenVPN's TCP mode), in-order receive. uCOBS = one uCOBS record per packet, unordered receive at both tunnel ends. priACKs = OpenVPN's length prefix and in-order receive, with tunnelled pure ACKs (IPv4, TCP, ACK only, no payload) written at a higher priority with uTCP's prioritised send at both ends: meaningful over in-order TCP, because a prioritised write is taken whole and placed at a write boundary, and the tunnel writes whole records only, so the receiver still reads whole records in order; only the sender's queue changes. Both = uCOBS records, unordered receive and priACKs.".into());
    r.notes.push(one_line_table(s, &t));
    r
}

fn one_line_table(s: &Setup, t: &Table) -> String {
    let mut out = String::from("Mean download / upload Mbit/s per context:");
    for &b in &s.buffers {
        out.push_str(&format!(" [{}]", BUFFERS[b].1));
        for &ctx in &s.contexts {
            out.push_str(&format!(" {}UL+{}DL:", ctx.0, ctx.1));
            for v in VARIANTS {
                let c = t.get(b, ctx, v);
                out.push_str(&format!(" {} {:.2}/{:.2};", v.name(), c.down, c.up));
            }
        }
    }
    out
}

/// Fig. 11's ratio (both / original download) at each upload count present.
fn fig11_ratios(s: &Setup, t: &Table, b: usize) -> Vec<(usize, f64)> {
    s.contexts
        .iter()
        .filter(|c| c.1 == 1 && c.0 >= 1)
        .map(|&ctx| {
            let o = t.get(b, ctx, Variant::Original).down;
            let m = t.get(b, ctx, Variant::Both).down;
            (ctx.0, m / o)
        })
        .collect()
}

fn ordering(t: &Table, b: usize) -> (bool, [f64; 4]) {
    let d = VARIANTS.map(|v| t.get(b, MIXED, v).down);
    let [o, u, p, both] = d;
    (both >= 0.95 * p && p >= 1.5 * u && u > o, d)
}

fn similar(t: &Table, b: usize) -> (f64, String) {
    let mut worst = 0.0f64;
    let mut parts = Vec::new();
    for ctx in [UL_ONLY, DL_ONLY] {
        let total = |v| {
            let c = t.get(b, ctx, v);
            c.down + c.up
        };
        let o = total(Variant::Original);
        let vals: Vec<String> = VARIANTS
            .iter()
            .map(|&v| {
                let x = total(v);
                worst = worst.max((x / o - 1.0).abs());
                format!("{:.2}", x)
            })
            .collect();
        parts.push(format!(
            "{}: {}",
            if ctx == UL_ONLY { "UL-only" } else { "DL-only" },
            vals.join(" / ")
        ));
    }
    (worst, parts.join("; "))
}

fn claims(r: &mut ExperimentResult, s: &Setup, t: &Table, intact: bool) {
    let other = (s.buffers.len() > 1).then_some(1usize);
    let ratios = fig11_ratios(s, t, MAIN);
    let best = ratios.iter().map(|x| x.1).fold(f64::NAN, f64::max);
    let fmt = |v: &[(usize, f64)]| {
        v.iter()
            .map(|(k, x)| format!("{k} UL {x:.2}×"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut note = format!("{}: {}", BUFFERS[MAIN].1, fmt(&ratios));
    if let Some(b) = other {
        note.push_str(&format!(
            "; {}: {}",
            BUFFERS[b].1,
            fmt(&fig11_ratios(s, t, b))
        ));
    }
    r.claims.push(
        Claim::new(
            "MN-9a",
            "single tunnelled download against 1–4 uploads: max (uCOBS + priACKs) / original",
        )
        .paper_text("\"can double the throughput\"")
        .ours(best)
        .unit("×")
        .tolerance("≥ 1.8")
        .note(note)
        .check(best >= 1.8 && intact),
    );
    let (ok, d) = ordering(t, MAIN);
    let mut note = format!(
        "{}: original {:.2}, uCOBS {:.2}, priACKs {:.2}, both {:.2} Mbit/s",
        BUFFERS[MAIN].1, d[0], d[1], d[2], d[3]
    );
    if let Some(b) = other {
        let (ok2, d2) = ordering(t, b);
        note.push_str(&format!(
            "; {}: {:.2}, {:.2}, {:.2}, {:.2} (ordering {})",
            BUFFERS[b].1,
            d2[0],
            d2[1],
            d2[2],
            d2[3],
            if ok2 { "holds" } else { "fails" }
        ));
    }
    r.claims.push(
        Claim::new("MN-9b", "1 UL + 3 DL: download throughput ordering")
            .paper_text("both ≥ priACK ≫ uCOBS-only > original")
            .ours_text(&format!(
                "{:.2} / {:.2} / {:.2} / {:.2}",
                d[3], d[2], d[1], d[0]
            ))
            .unit("Mbit/s")
            .tolerance("both ≥ 0.95·priACK, priACK ≥ 1.5·uCOBS, uCOBS > original")
            .note(note)
            .check(ok && intact),
    );
    let (worst, parts) = similar(t, MAIN);
    let mut note = format!(
        "total (down + up) Mbit/s, original / uCOBS / priACKs / both, {}: {parts}",
        BUFFERS[MAIN].1
    );
    if let Some(b) = other {
        let (w2, p2) = similar(t, b);
        note.push_str(&format!(
            "; {}: {p2} (worst {:.0} %)",
            BUFFERS[b].1,
            w2 * 100.0
        ));
    }
    r.claims.push(
        Claim::new(
            "MN-9c",
            "UL-only and DL-only: every variant's total vs the original",
        )
        .paper_text("all four variants perform similarly")
        .ours(worst * 100.0)
        .unit("%")
        .tolerance("within ±10 %")
        .note(note)
        .check(worst <= 0.10 && intact),
    );
}

fn plots(r: &mut ExperimentResult, s: &Setup, t: &Table) {
    let colour = |v: Variant| match v {
        Variant::Original => GREY,
        Variant::Ucobs => ORANGE,
        Variant::PriAcks => BLUE,
        Variant::Both => RED,
    };
    for &b in &s.buffers {
        let mut ks: Vec<(usize, usize)> = vec![DL_ONLY];
        ks.extend(s.contexts.iter().filter(|c| c.1 == 1 && c.0 >= 1));
        let series = VARIANTS
            .iter()
            .map(|&v| {
                let pts = ks
                    .iter()
                    .map(|&ctx| (ctx.0 as f64, t.get(b, ctx, v).down))
                    .collect();
                Series::new(v.name(), colour(v), Style::Line, pts)
            })
            .collect();
        let ratios = fig11_ratios(s, t, b);
        let (_, d) = ordering(t, b);
        r.plots.push(Plot {
            figure: Figure::Chart(Chart {
                title: format!(
                    "Tunnelled download against competing uploads, {} (Fig. 11)",
                    BUFFERS[b].1
                ),
                x_label: "competing uploads in the tunnel".into(),
                y_label: "download throughput (Mbit/s)".into(),
                y_range: Some((0.0, 3.0)),
                series,
                ..Chart::default()
            }),
            paper: "Fig. 11: the download through the modified OpenVPN (uCOBS + priACKs) gets noticeably more than through the original as uploads compete; §1: up to double. Fig. 12 (1 UL + 3 DL): priACKs greatly improve downloads, uCOBS a little; no axis values are given in the text.".into(),
            ours: format!(
                "Both / original: {}. In 1 UL + 3 DL the downloads get {:.2} (original), {:.2} (uCOBS), {:.2} (priACKs), {:.2} (both) Mbit/s. Alone (0 uploads) the download fills most of the 3 Mbit/s in every variant.",
                ratios
                    .iter()
                    .map(|(k, x)| format!("{k} UL {x:.2}×"))
                    .collect::<Vec<_>>()
                    .join(", "),
                d[0],
                d[1],
                d[2],
                d[3]
            ),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_config_validates_and_quick_is_small() {
        for quick in [true, false] {
            let s = setup(quick);
            for j in jobs(&s) {
                config(&j, &s).validate().unwrap();
            }
        }
        assert_eq!(jobs(&setup(true)).len(), 5 * 4);
    }

    #[test]
    fn variants_switch_what_the_paper_switches() {
        assert_eq!(
            Variant::PriAcks.switches(),
            (Framing::LengthPrefix, false, true)
        );
        assert_eq!(Variant::Ucobs.switches(), (Framing::Ucobs, true, false));
    }
}

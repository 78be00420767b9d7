//! real-prio: strict priority by DSCP over real packets (RC3, NSDI 2014 §5.2, the
//! iperf priority test; claim RC3-16's priority part). Two long Linux CUBIC flows
//! through one emulated 20 Mbit/s bottleneck whose queue is brisk-net's `prio` (2
//! bands, one shared 2-BDP buffer of 100 KB, push-out; spec A6), each flow behind
//! RTT 20 ms (10 ms each way). One sender's socket has `IP_TOS` 0x00 (DSCP 0, band 0,
//! the paper's priority 0), the other `IP_TOS` 0x10 (DSCP 4, band 1, priority 1).
//!
//! Arms, each one real run: (a) the low-priority flow starts first and the
//! high-priority one joins; (b) the reverse. Claims RC3-16a/b: the high-priority
//! flow's share of what the two receive over the overlap (from 0.5 s after the join to
//! the end) is at least 95 %, with the high-priority stream intact and neither stream
//! damaged (a starved low-priority stream may still be draining; see [`Stream`]). Two
//! further arms show the measure can fail: the same
//! flows through a one-band queue (a FIFO: DSCP ignored) and through the prio queue
//! without push-out (tail drop against the shared buffer), both low-priority first.
//!
//! The simulator's scenarios cannot yet mark a flow's DSCP, so its companion run is
//! the FIFO control's: two brisk CUBIC flows through the same `prio` bottleneck, both
//! DSCP 0 (so one band serves both), low-first timing. It also shows the scenario
//! syntax of the queue at work in the simulator.

use crate::claim::{fmt_num, Claim};
use crate::experiment::{ExperimentResult, Job, Plan, Plot};
use crate::figure::Figure;
use crate::svg::{Chart, Series, Style, BLUE, GREY, ORANGE, RED};
use brisk_emu::path::{EmuConfig, PathSpec, QueueSpec, Rate};
use brisk_emu::realrun::{run_real, RealFlow, RealRun};
use brisk_emu::EmuError;
use brisk_net::queue::BandCounters;
use brisk_sim::units::Size;
use brisk_sim::{RunResult, Scenario};
use brisk_time::Duration;

pub const ID: &str = "real-prio";
pub const TITLE: &str =
    "Real packets: strict priority by DSCP (RC3 §5.2), two Linux CUBIC flows in both start orders";
pub const CLAIMS: &[&str] = &["RC3-16a", "RC3-16b"];

const RATE_BPS: u64 = 20_000_000;
const RTT_MS: u64 = 20;
/// The share is measured from this long after the join to the end: the joining
/// flow's slow start and the first flow's reaction take a few RTTs.
const SETTLE_MS: u64 = 500;
/// Required share of the high-priority flow (the ledger's tolerance).
const MIN_SHARE: f64 = 0.95;
/// Goodput is plotted in bins of this many 100-ms samples.
const PLOT_BIN: usize = 5;
/// DSCPs of the two flows: 0 and 4 (`IP_TOS` 0x00 and 0x10).
const DSCP_HIGH: u8 = 0;
const DSCP_LOW: u8 = 4;

/// One real run.
#[derive(Clone, Copy, Debug)]
struct Arm {
    label: &'static str,
    /// The claim it decides, if any.
    claim: Option<&'static str>,
    low_first: bool,
    bands: u64,
    push_out: bool,
}

const ARMS: [Arm; 4] = [
    Arm {
        label: "(a) low-priority flow first",
        claim: Some("RC3-16a"),
        low_first: true,
        bands: 2,
        push_out: true,
    },
    Arm {
        label: "(b) high-priority flow first",
        claim: Some("RC3-16b"),
        low_first: false,
        bands: 2,
        push_out: true,
    },
    Arm {
        label: "control: one band (FIFO), low first",
        claim: None,
        low_first: true,
        bands: 1,
        push_out: true,
    },
    Arm {
        label: "ablation: prio without push-out, low first",
        claim: None,
        low_first: true,
        bands: 2,
        push_out: false,
    },
];

/// (join, end) in seconds: 3 and 9 with `--quick` (four runs ≈ 45 s), else 5 and 15
/// (≈ 90 s). Longer runs starve the low-priority flow for longer, and its backed-off
/// retransmission timer would outlast the drain's bound after the end.
fn times(quick: bool) -> (u64, u64) {
    if quick {
        (3, 9)
    } else {
        (5, 15)
    }
}

pub fn unsupported() -> Option<String> {
    brisk_emu::netns::unsupported_reason()
}

/// A goodput curve: (s, Mbit/s).
type Curve = Vec<(f64, f64)>;

/// What one run measured.
#[derive(Clone, Debug)]
struct Nums {
    /// Bytes each flow's receiver read over the overlap window: (high, low).
    window: (u64, u64),
    window_s: f64,
    /// Goodput over time, (s, Mbit/s), per flow: (high, low).
    series: (Curve, Curve),
    bands: Vec<BandCounters>,
    drops: u64,
    /// Per flow (high, low): how its stream ended.
    streams: [Stream; 2],
}

/// How a flow's byte stream ended, judged after the drain.
#[derive(Clone, Debug, PartialEq)]
enum Stream {
    /// Every byte arrived, in order, with the sender's SHA-256.
    Intact,
    /// Not every byte arrived within the drain's bound (15 s after the end). A flow
    /// starved for many seconds has backed its retransmission timer off that far
    /// (Linux doubles it per timeout): its next retransmission may come after the
    /// bound. No byte that arrived was wrong.
    Undrained(String),
    /// Every byte arrived but the stream does not verify, or an endpoint failed.
    Damaged(String),
}

impl Stream {
    fn text(&self) -> String {
        match self {
            Stream::Intact => "intact".into(),
            Stream::Undrained(e) => format!("not drained within the bound ({e})"),
            Stream::Damaged(e) => format!("DAMAGED ({e})"),
        }
    }
}

impl Nums {
    fn share(&self) -> f64 {
        let total = self.window.0 + self.window.1;
        if total == 0 {
            f64::NAN
        } else {
            self.window.0 as f64 / total as f64
        }
    }

    /// Whether the run can decide a claim: the high-priority stream intact and no
    /// stream damaged (the starved one may still be draining when the bound ends).
    fn valid(&self) -> bool {
        self.streams[0] == Stream::Intact && !matches!(self.streams[1], Stream::Damaged(_))
    }

    fn mbps(&self, bytes: u64) -> f64 {
        bytes as f64 * 8.0 / self.window_s.max(1e-9) / 1e6
    }
}

/// The simulated control: the same bottleneck, two brisk CUBIC flows, both DSCP 0.
fn sim_toml(quick: bool) -> String {
    let (join_s, end_s) = times(quick);
    let bdp = RATE_BPS * RTT_MS / 1000 / 8;
    format!(
        "name = \"{ID}\"\nseed = 1\nduration = \"{end_s}s\"\nsample_interval = \"100ms\"\n\
         [bottleneck]\nrate = \"20Mbit\"\nqueue = {{ kind = \"prio\", bands = 2, bytes = {} }}\n\
         [[flow]]\nrtt = \"{RTT_MS}ms\"\ncc = \"cubic\"\nstart = \"{join_s}s\"\napp = {{ kind = \"bulk\" }}\n\
         [[flow]]\nrtt = \"{RTT_MS}ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n",
        2 * bdp
    )
}

/// The simulated control's share of flow 0 over the overlap window.
fn sim_share(quick: bool, run: Option<&RunResult>) -> f64 {
    let (join_s, end_s) = times(quick);
    let from = (join_s * 1000 + SETTLE_MS) * 1_000_000;
    let to = end_s * 1_000_000_000;
    let Some(run) = run else { return f64::NAN };
    let bytes: Vec<u64> = run
        .flows
        .iter()
        .map(|f| {
            f.goodput_series
                .iter()
                .filter(|(t, _)| *t > from && *t <= to)
                .map(|(_, b)| *b)
                .sum()
        })
        .collect();
    let total: u64 = bytes.iter().sum();
    if total == 0 {
        f64::NAN
    } else {
        bytes[0] as f64 / total as f64
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let sc = Scenario::from_toml_str_named(&sim_toml(quick), ID)
        .map_err(|e| format!("{ID} scenario: {e}"))?;
    Ok(Plan {
        jobs: vec![Job::new(format!("{ID} sim control"), sc, 1)],
        analyse: Box::new(move |runs| {
            let sim = sim_share(quick, runs.first());
            let t0 = std::time::Instant::now();
            let measured = run_all(quick);
            let mut r = analyse(quick, &measured);
            r.notes.push(format!(
                "Simulator, the FIFO control's companion (two brisk CUBIC flows through the same prio bottleneck, both DSCP 0, so one band): the later flow's share {:.1} %.",
                sim * 100.0
            ));
            r.notes.push(format!(
                "Real runs took {:.0} s of wall time on this host.",
                t0.elapsed().as_secs_f64()
            ));
            r
        }),
    })
}

fn flow(dscp: u8, start_s: u64) -> RealFlow {
    RealFlow::linux_bulk(
        "cubic",
        Some(dscp),
        Duration::from_secs(start_s),
        Duration::from_millis(RTT_MS),
    )
}

fn run_all(quick: bool) -> Vec<(Arm, Result<Nums, String>)> {
    let mut lab_missing: Option<String> = None;
    let cubic = brisk_emu::bulk::available_congestion_controls()
        .iter()
        .any(|c| c == "cubic");
    ARMS.iter()
        .map(|arm| {
            let o = if let Some(why) = &lab_missing {
                Err(why.clone())
            } else if !cubic {
                Err("the kernel offers no cubic congestion control".into())
            } else {
                crate::runner::status(&format!("{ID} (real time): {}", arm.label));
                match measure(quick, *arm) {
                    Ok(n) => Ok(n),
                    Err(EmuError::Unsupported(why)) => {
                        lab_missing = Some(why.clone());
                        Err(why)
                    }
                    Err(e) => Err(e.to_string()),
                }
            };
            (*arm, o)
        })
        .collect()
}

/// One arm over real packets: flow 0 is DSCP 0, flow 1 DSCP 4.
fn measure(quick: bool, arm: Arm) -> Result<Nums, EmuError> {
    let (join_s, end_s) = times(quick);
    let (high_at, low_at) = if arm.low_first {
        (join_s, 0)
    } else {
        (0, join_s)
    };
    let bdp = RATE_BPS * RTT_MS / 1000 / 8;
    let run = RealRun {
        name: format!("{ID} {}", arm.label),
        seed: 1,
        duration: Duration::from_secs(end_s),
        path: EmuConfig {
            rtt: None,
            bottleneck: PathSpec {
                rate: Some(Rate(RATE_BPS)),
                queue: Some(QueueSpec::Prio {
                    bands: Some(arm.bands),
                    packets: None,
                    bytes: Some(Size(2 * bdp)),
                    push_out: Some(arm.push_out),
                    band0_pie: None,
                }),
                ..PathSpec::default()
            },
            reverse: None,
            seed: 1,
        },
        flows: vec![flow(DSCP_HIGH, high_at), flow(DSCP_LOW, low_at)],
        sample_interval: Duration::from_millis(100),
        pcap_dir: None,
        link_log_dir: None,
    };
    let r = run_real(&run)?;
    let from = (join_s * 1000 + SETTLE_MS) * 1_000_000;
    let to = end_s * 1_000_000_000;
    let in_window = |i: usize| -> u64 {
        r.flows.get(i).map_or(0, |f| {
            f.goodput_series
                .iter()
                .filter(|(end, _)| *end > from && *end <= to)
                .map(|(_, b)| *b)
                .sum()
        })
    };
    // From the flow's start on: before it, a flow has no goodput to plot.
    let series = |i: usize| -> Curve {
        r.flows.get(i).map_or_else(Vec::new, |f| {
            let start = f.start.as_nanos() as u64;
            let after: Vec<(u64, u64)> = f
                .goodput_series
                .iter()
                .copied()
                .filter(|(end, _)| *end > start)
                .collect();
            after
                .chunks(PLOT_BIN)
                .map(|c| {
                    let end = c.last().map_or(0, |x| x.0);
                    let bytes: u64 = c.iter().map(|x| x.1).sum();
                    let secs = c.len() as f64 * 0.1;
                    (end as f64 / 1e9, bytes as f64 * 8.0 / secs / 1e6)
                })
                .collect()
        })
    };
    Ok(Nums {
        window: (in_window(0), in_window(1)),
        window_s: (to - from) as f64 / 1e9,
        series: (series(0), series(1)),
        bands: r.emulator.forward.prio_bands.clone().unwrap_or_default(),
        drops: r.bottleneck.drops,
        streams: [stream(r.flows.first()), stream(r.flows.get(1))],
    })
}

fn stream(f: Option<&brisk_emu::realrun::RealFlowResult>) -> Stream {
    let Some(f) = f else {
        return Stream::Damaged("no result".into());
    };
    let why = f
        .error
        .clone()
        .unwrap_or_else(|| "checksum mismatch".into());
    if f.stream_ok {
        Stream::Intact
    } else if f.bytes_delivered + f.drain.bytes < f.bytes_sent {
        Stream::Undrained(why)
    } else {
        Stream::Damaged(why)
    }
}

fn bands_text(b: &[BandCounters]) -> String {
    b.iter()
        .enumerate()
        .map(|(i, c)| {
            format!(
                "band {i}: {} in, {} out, {} rejected, {} pushed out",
                c.enqueued, c.dequeued, c.rejected, c.pushed_out
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

fn analyse(quick: bool, measured: &[(Arm, Result<Nums, String>)]) -> ExperimentResult {
    let (join_s, end_s) = times(quick);
    let mut r = ExperimentResult::new(ID, TITLE);
    r.reference = "paper";
    r.notes.push(format!(
        "Set-up: brisk-emu, 20 Mbit/s bottleneck, queue {{ kind = \"prio\", bands = 2, bytes = 100000 }} \
         (2 × BDP, shared by the bands, push-out), RTT 20 ms per flow, Linux CUBIC senders and \
         receivers in network namespaces, IP_TOS 0x00 (DSCP 0) and 0x10 (DSCP 4) on the senders' \
         sockets. The second flow joins at {join_s} s, the run ends at {end_s} s; shares are over \
         {:.1}–{end_s} s. The paper's test: iperf, Linux prio qdisc, 1 and 10 Gbit/s; the rate is \
         scaled down for the userspace emulator.",
        join_s as f64 + SETTLE_MS as f64 / 1000.0
    ));
    r.notes.push(
        "Goodput over the overlap (Mbit/s), high-priority : low-priority, the high-priority \
         flow's share, and the bottleneck's per-band counters (packets), one run each:"
            .into(),
    );
    for (arm, o) in measured {
        r.notes.push(match o {
            Ok(n) => format!(
                "{}: {:.2} : {:.2}, share {:.1} %; bottleneck drops {} ({}); streams: DSCP 0 {}, DSCP 4 {}.",
                arm.label,
                n.mbps(n.window.0),
                n.mbps(n.window.1),
                n.share() * 100.0,
                n.drops,
                bands_text(&n.bands),
                n.streams[0].text(),
                n.streams[1].text()
            ),
            Err(e) => format!("{}: not run: {e}.", arm.label),
        });
    }
    for (arm, o) in measured {
        let Some(id) = arm.claim else { continue };
        let c = Claim::new(
            id,
            &format!(
                "high-priority (DSCP 0) flow's share of the bottleneck's goodput over the overlap, {}",
                arm.label
            ),
        )
        .paper_text("takes the link");
        r.claims.push(match o {
            Ok(n) => c
                .ours(n.share() * 100.0)
                .unit("%")
                .tolerance("≥ 95 %")
                .check(n.share() >= MIN_SHARE && n.valid())
                .note(format!(
                    "{} : {} Mbit/s; streams: DSCP 0 {}, DSCP 4 {}",
                    fmt_num(n.mbps(n.window.0)),
                    fmt_num(n.mbps(n.window.1)),
                    n.streams[0].text(),
                    n.streams[1].text()
                )),
            Err(e) => c.not_applicable(format!("real run did not complete: {e}")),
        });
    }
    // Figures: goodput over time, one chart per order, and one for the two controls.
    let join = vec![(join_s as f64, "second flow joins".to_string())];
    let chart = |title: String, series: Vec<Series>| Chart {
        title,
        x_label: "time (s)".into(),
        y_label: "goodput (Mbit/s, 0.5-s bins)".into(),
        x_range: Some((0.0, end_s as f64)),
        y_range: Some((0.0, RATE_BPS as f64 / 1e6 * 1.1)),
        series,
        v_lines: join.clone(),
        ..Chart::default()
    };
    for (arm, o) in measured.iter().filter(|(a, _)| a.claim.is_some()) {
        let Ok(n) = o else { continue };
        r.plots.push(Plot {
            figure: Figure::Chart(chart(
                format!("Strict priority by DSCP over real packets, {}", arm.label),
                vec![
                    Series::new(
                        "high priority (DSCP 0)",
                        BLUE,
                        Style::Line,
                        n.series.0.clone(),
                    ),
                    Series::new("low priority (DSCP 4)", RED, Style::Line, n.series.1.clone()),
                ],
            )),
            paper: "RC3 §5.2: with the prio qdisc, the high-priority iperf flow takes the link whatever the start order (no figure values survive extraction).".into(),
            ours: format!(
                "Two Linux CUBIC flows through brisk-emu's prio bottleneck (20 Mbit/s, 2 bands, 100 KB shared, push-out); the DSCP-0 flow gets {:.1} % of the goodput from {:.1} s on.",
                n.share() * 100.0,
                join_s as f64 + SETTLE_MS as f64 / 1000.0
            ),
        });
    }
    let mut ctl = Vec::new();
    let mut ctl_text = Vec::new();
    for (k, (arm, o)) in measured
        .iter()
        .filter(|(a, _)| a.claim.is_none())
        .enumerate()
    {
        let Ok(n) = o else { continue };
        let (hc, lc) = if k == 0 { (GREY, ORANGE) } else { (BLUE, RED) };
        let style = if k == 0 { Style::Line } else { Style::Dashed };
        let short = if k == 0 { "FIFO" } else { "no push-out" };
        ctl.push(Series::new(
            &format!("{short}: DSCP 0"),
            hc,
            style,
            n.series.0.clone(),
        ));
        ctl.push(Series::new(
            &format!("{short}: DSCP 4"),
            lc,
            style,
            n.series.1.clone(),
        ));
        ctl_text.push(format!(
            "{}: DSCP-0 share {:.1} %",
            arm.label,
            n.share() * 100.0
        ));
    }
    if !ctl.is_empty() {
        r.plots.push(Plot {
            figure: Figure::Chart(chart(
                "Controls (low-priority flow first): one-band FIFO, and prio without push-out"
                    .into(),
                ctl,
            )),
            paper: "No paper figure; controls of ours showing that the share measure can fail."
                .into(),
            ours: format!("{}.", ctl_text.join("; ")),
        });
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arms_cover_both_orders_with_claims_and_the_quick_run_is_short() {
        let ids: Vec<&str> = ARMS.iter().filter_map(|a| a.claim).collect();
        assert_eq!(ids, CLAIMS);
        assert_ne!(ARMS[0].low_first, ARMS[1].low_first);
        let (join, end) = times(true);
        assert!(join < end && end <= 10);
    }

    #[test]
    fn the_share_is_the_high_flows_fraction_of_the_window() {
        let n = Nums {
            window: (950, 50),
            window_s: 1.0,
            series: (vec![], vec![]),
            bands: vec![],
            drops: 0,
            streams: [Stream::Intact, Stream::Intact],
        };
        assert!((n.share() - 0.95).abs() < 1e-12);
        let none = Nums {
            window: (0, 0),
            ..n.clone()
        };
        assert!(none.share().is_nan(), "no bytes: no share, not 0 or 100 %");
        let starved = Nums {
            streams: [Stream::Intact, Stream::Undrained("x".into())],
            ..n.clone()
        };
        assert!(n.valid() && starved.valid());
        for streams in [
            [Stream::Intact, Stream::Damaged("x".into())],
            [Stream::Undrained("x".into()), Stream::Intact],
        ] {
            assert!(!Nums {
                streams,
                ..n.clone()
            }
            .valid());
        }
    }

    #[test]
    fn the_simulated_control_runs_the_prio_queue_and_shares_the_link() {
        let sc = Scenario::from_toml_str_named(&sim_toml(true), ID).unwrap();
        assert!(matches!(
            sc.bottleneck.queue,
            Some(QueueSpec::Prio { bands: Some(2), .. })
        ));
        let run = brisk_sim::run(&sc, 1).unwrap();
        let share = sim_share(true, Some(&run));
        // Both flows are DSCP 0: one band, so CUBIC against CUBIC, far from 95 %.
        assert!((0.2..0.8).contains(&share), "share {share}");
    }
}

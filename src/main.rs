//! `brisk`: the command-line front end.
//!
//! - `brisk run SCENARIO.toml [--seed N | --seeds A..B] [--out DIR] [--pcap] [--json]`
//! - `brisk plot DIR [--out FILE.html]`: time series and throughput-delay chart
//! - `brisk bench sim [--duration 20s]`, `brisk bench net [--flows 600] [--rate 100Mbit]`
//! - `brisk sweep FILE [--jobs N] [--out DIR] [--json]` (see `sweep_cmd`)
//! - `brisk repro [ID ...|all] [--quick] [--json] [--out DIR]` (see `repro_cmd`)
//! - `brisk run --real SCENARIO.toml`, `brisk bench emu|real` (see `real_cmd`)
//! - `brisk lab up|send|clean` (see `lab_cmd`)
//!
//! Errors go to stderr with exit code 2. Wall-clock time is read here (for the
//! benchmark) and never in the library crates.

mod args;
mod interrupt;
mod lab_cmd;
mod pdrill_cmd;
mod provenance;
mod real_cmd;
mod repro_cmd;
mod seeds;
mod sweep_cmd;
mod trace_cmd;

use brisk_sim::{RunOptions, Scenario};
use brisk_time::Duration;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

/// The standard benchmark scenario, shipped with the binary.
const BENCH_SCENARIO: &str = include_str!("../scenarios/bench-1g.toml");
/// The network benchmark's scenario, shipped with the binary.
const NET_BENCH_SCENARIO: &str = include_str!("../scenarios/rc3-internet2-small.toml");
/// The equivalent ns-3 script, relative to the working directory.
const NS3_SCRIPT: &str = "bench/ns3/bufferbloat.py";

#[derive(Parser)]
#[command(
    name = "brisk",
    version,
    about = "brisk: userspace TCP, simulator and reproduction suite"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario in the deterministic simulator.
    Run {
        /// Scenario file (TOML).
        scenario: PathBuf,
        /// Seed (default: the scenario's `seed`).
        #[arg(long, conflicts_with = "seeds")]
        seed: Option<u64>,
        /// Run every seed of a range, e.g. 1..10, and report each metric's mean and
        /// 95 % confidence interval across them (simulated runs). With --out, each
        /// seed's files go into DIR/seed-<k>/ and the aggregate into DIR/summary.json.
        #[arg(long, value_parser = seeds::parse_range, conflicts_with_all = ["real", "pcap"])]
        seeds: Option<std::ops::RangeInclusive<u64>>,
        /// Write summary.json (with provenance), the scenario and CSV time series into
        /// this directory; it must be empty or new.
        #[arg(long)]
        out: Option<PathBuf>,
        /// With --out: replace brisk's output files already in the directory.
        #[arg(long, requires = "out")]
        force: bool,
        /// Also write one pcap per host into the --out directory (simulated runs:
        /// timestamps from the start of the run, shown as 1970-01-01 00:00:00 UTC).
        #[arg(long)]
        pcap: bool,
        /// With --pcap: bytes kept of each packet (at least 100; 128 keeps headers
        /// only, for runs whose full capture would be gigabytes). Simulated runs only.
        #[arg(long, requires = "pcap", value_parser = clap::value_parser!(u32).range(100..=65535))]
        snaplen: Option<u32>,
        /// Also write each dumbbell link's log in Mahimahi's mm-link format
        /// (bottleneck.mm.log, reverse.mm.log) into the --out directory, for
        /// mm-throughput-graph and mm-delay-graph.
        #[arg(long, requires = "out")]
        link_log: bool,
        /// Print the summary as one JSON object instead of a table.
        #[arg(long)]
        json: bool,
        /// Run over real packets: brisk or Linux TCP (per flow `stack`) through the
        /// real-time emulator in network namespaces (needs root, TUN, iproute2).
        #[arg(long)]
        real: bool,
    },
    /// Plot a run's --out directory (simulated, real or --seeds) into one
    /// self-contained HTML page: goodput, RTT, cwnd, queue and drops over time, one
    /// line per flow, and throughput against one-way delay (Pantheon-style).
    Plot {
        /// The directory `brisk run --out` wrote.
        dir: PathBuf,
        /// The HTML file to write (default: DIR/plot.html).
        #[arg(long)]
        out: Option<PathBuf>,
    },
    /// The real-packet lab: brisk and Linux joined by the emulator.
    Lab(Box<lab_cmd::LabArgs>),
    /// Run a parameter sweep (a base scenario, a grid and seeds) on every core:
    /// one row per cell, seed and flow, and each metric's mean and 95 % CI per cell.
    Sweep(sweep_cmd::SweepArgs),
    /// Run the reproduction suite: experiments, claims, report.
    Repro(repro_cmd::ReproArgs),
    /// Write a Mahimahi delivery trace (constant, stepped, LTE-like) to stdout, or
    /// describe one.
    #[command(subcommand)]
    Trace(trace_cmd::TraceCmd),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell) to stdout,
    /// e.g. `brisk completions bash > /etc/bash_completion.d/brisk`.
    Completions { shell: clap_complete::Shell },
    /// Print the man page (roff) to stdout, e.g. `brisk man > brisk.1; man ./brisk.1`.
    Man,
    /// Run packetdrill scripts against brisk's sans-IO endpoint in virtual time: one
    /// line per script (pass, the first mismatch, or the first unsupported feature).
    /// Exits non-zero if any script fails or does not parse.
    Pdrill(pdrill_cmd::PdrillArgs),
    /// Benchmarks.
    Bench {
        #[command(subcommand)]
        what: BenchCmd,
    },
}

#[derive(Subcommand)]
enum BenchCmd {
    /// Simulator speed: one CUBIC bulk flow, 1 Gbit/s, 10 ms RTT, 1000-packet queue.
    Sim {
        /// Simulated duration.
        #[arg(long, default_value = "20s", value_parser = args::positive_duration)]
        duration: Duration,
        /// brisk's runs of the standard flow: its wall time is short beside ns-3's, so
        /// one run is noisy on a shared machine; the ratio uses their median.
        #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=100))]
        repeat: u32,
        /// Skip the ns-3 twin (for profiling brisk alone).
        #[arg(long)]
        no_ns3: bool,
        /// Skip the runs through CoDel, FQ-CoDel and prio.
        #[arg(long)]
        no_aqm: bool,
    },
    /// Simulator scale: N bulk CUBIC flows sharing one bottleneck (bench sim's, 10 ms
    /// RTT, IPv6 so that 10^5 flows have addresses), all starting at 0, one child
    /// process per N so each peak RSS is its own. Prints the flows that got data
    /// through, build and run time, events/s (run only), simulated s per wall s, peak
    /// RSS and KB per flow.
    Scale {
        /// Flow counts, comma-separated.
        #[arg(
            long,
            value_delimiter = ',',
            default_value = "1,10,100,1000,10000,100000"
        )]
        flows: Vec<u32>,
        /// Simulated duration of each point.
        #[arg(long, default_value = "2s", value_parser = args::positive_duration)]
        duration: Duration,
        /// Bottleneck rate (the same for every N, so every point carries about the
        /// same packets per simulated second and only N changes).
        #[arg(long, default_value = "1Gbit", value_parser = args::rate)]
        rate: u64,
        /// Run one point in this process and print it as JSON (the parent's child).
        #[arg(long, hide = true)]
        one: bool,
        /// Skip the ns-3 peer (bench/ns3/scale.py), which otherwise runs the 1000-flow
        /// point when the list has it.
        #[arg(long)]
        no_ns3: bool,
    },
    /// Network-scenario speed: scenarios/rc3-internet2-small.toml's workload at 10, 30
    /// and 50 % core load.
    Net {
        /// Flows per load level.
        #[arg(long, default_value_t = 600)]
        flows: u32,
        /// Core and access rate (the shipped scenario's is 100Mbit).
        #[arg(long, default_value = "100Mbit", value_parser = args::rate)]
        rate: u64,
        /// Hosts per router (the shipped scenario's is 4; the paper's 10).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1000))]
        hosts_per_router: Option<u32>,
        /// Every host runs RC3 (`tcp.rc3 = true`, priority queues everywhere).
        #[arg(long)]
        rc3: bool,
    },
    /// Concurrent short flows (issue 15 §2): RC3's workload (rc3-synthetic sizes, the
    /// Internet2 graph, RC3 on every host, priority queues) with arrivals faster than
    /// completions, so that most of `--flows` are open at once. Every flow's access
    /// links add `--access-delay` each way, so no flow can finish (about two RTTs of
    /// at least 4 × access delay) before the last one has arrived; the run stops at
    /// `--duration`. Prints the peak of open connections over all hosts (sampled every
    /// 100 ms of simulated time), events/s, peak RSS and RSS per open flow.
    Flows {
        /// Flows generated (at most 200 000).
        #[arg(long, default_value_t = 100_000)]
        flows: u32,
        /// Core and access rate: with `--load` it sets the arrival rate.
        #[arg(long, default_value = "10Gbit", value_parser = args::rate)]
        rate: u64,
        /// Offered mean core load, in (0, 1].
        #[arg(long, default_value_t = 1.0)]
        load: f64,
        /// Hosts per router (10 routers).
        #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1000))]
        hosts_per_router: u32,
        /// One-way delay of every host's access link.
        #[arg(long, default_value = "500ms", value_parser = args::positive_duration)]
        access_delay: Duration,
        /// Every connection's send buffer in bytes (the shipped scenario's is 8 MB,
        /// which would hold each open flow whole, 189 KB on average).
        #[arg(long, default_value_t = 65_536)]
        send_buffer: u64,
        /// Simulated time to run (the arrivals span flows / λ; see the printed λ).
        #[arg(long, default_value = "2s", value_parser = args::positive_duration)]
        duration: Duration,
    },
    /// Emulator capacity: kernel CUBIC through an emulated zero-delay path.
    Emu {
        #[arg(long, default_value = "10Gbit", value_parser = args::rate)]
        rate: u64,
        #[arg(long, default_value = "5s", value_parser = args::positive_duration)]
        duration: Duration,
    },
    /// brisk vs Linux: goodput and CPU on an emulated 1 Gbit/s, 10 ms path.
    Real {
        #[arg(long, default_value = "10s", value_parser = args::positive_duration)]
        duration: Duration,
        /// Bottleneck rate (e.g. `10Gbit` with `--rtt 0ms` for the batched-path target).
        #[arg(long, default_value = "1Gbit", value_parser = args::rate)]
        rate: u64,
        /// Round-trip time of the path (base delay, without queueing).
        #[arg(long, default_value = "10ms", value_parser = args::duration)]
        rtt: Duration,
    },
}

fn main() -> ExitCode {
    // A bug must not spill a backtrace over the user; say what happened in one line.
    std::panic::set_hook(Box::new(|info| {
        eprintln!("brisk: internal error: {info}");
    }));
    let cli = Cli::parse();
    let res = match cli.cmd {
        Cmd::Run {
            scenario,
            seeds: Some(_),
            ..
        } if is_net_scenario(&scenario) => Err(anyhow::anyhow!(
            "--seeds is not supported for network ([workload]) scenarios yet; run each seed with --seed N"
        )),
        Cmd::Run {
            scenario,
            seeds: Some(range),
            json,
            out,
            force,
            ..
        } => cmd_run_seeds(&scenario, range, out, force, json),
        Cmd::Plot { dir, out } => brisk_repro::plot::write(&dir, out.as_deref())
            .map_err(anyhow::Error::from)
            .and_then(|p| emit(&format!("wrote {}\n", p.display()))),
        Cmd::Run {
            scenario,
            seed,
            seeds: None,
            out,
            force,
            pcap,
            snaplen,
            link_log,
            json,
            real,
        } => match out.as_deref().map(|d| provenance::prepare_out(d, force)) {
            Some(Err(e)) => Err(e),
            _ if real && snaplen.is_some() => Err(anyhow::anyhow!(
                "--snaplen applies to simulated runs; real runs capture whole packets"
            )),
            _ if real && is_net_scenario(&scenario) => Err(anyhow::anyhow!(
                "--real runs the dumbbell only; network ([workload]) scenarios are simulated"
            )),
            _ if real => real_cmd::cmd_run_real(&scenario, seed, out, pcap, link_log, json),
            _ if is_net_scenario(&scenario) => {
                if pcap || link_log || snaplen.is_some() {
                    Err(anyhow::anyhow!(
                        "--pcap, --snaplen and --link-log are not supported for network ([workload]) scenarios yet"
                    ))
                } else {
                    cmd_run_net(&scenario, seed, out, json)
                }
            }
            _ => cmd_run(&scenario, seed, out, pcap, snaplen, link_log, json),
        },
        Cmd::Lab(args) => lab_cmd::cmd_lab(*args),
        Cmd::Trace(cmd) => trace_cmd::cmd_trace(cmd),
        Cmd::Pdrill(args) => match pdrill_cmd::cmd_pdrill(args) {
            Ok(true) => Ok(()),
            Ok(false) => return ExitCode::FAILURE,
            Err(e) => Err(e),
        },
        Cmd::Completions { shell } => {
            use clap::CommandFactory;
            clap_complete::generate(shell, &mut Cli::command(), "brisk", &mut std::io::stdout());
            Ok(())
        }
        Cmd::Man => {
            use clap::CommandFactory;
            clap_mangen::Man::new(Cli::command())
                .render(&mut std::io::stdout())
                .map_err(anyhow::Error::from)
        }
        Cmd::Bench {
            what: BenchCmd::Emu { rate, duration },
        } => real_cmd::cmd_bench_emu(rate, duration),
        Cmd::Bench {
            what:
                BenchCmd::Real {
                    duration,
                    rate,
                    rtt,
                },
        } => real_cmd::cmd_bench_real(duration, rate, rtt),
        Cmd::Bench {
            what:
                BenchCmd::Sim {
                    duration,
                    repeat,
                    no_ns3,
                    no_aqm,
                },
        } => cmd_bench_sim(duration, repeat, no_ns3, no_aqm),
        Cmd::Bench {
            what:
                BenchCmd::Scale {
                    flows,
                    duration,
                    rate,
                    one,
                    no_ns3,
                },
        } => cmd_bench_scale(&flows, duration, rate, one, no_ns3),
        Cmd::Bench {
            what:
                BenchCmd::Net {
                    flows,
                    rate,
                    hosts_per_router,
                    rc3,
                },
        } => cmd_bench_net(flows, rate, hosts_per_router, rc3),
        Cmd::Bench {
            what:
                BenchCmd::Flows {
                    flows,
                    rate,
                    load,
                    hosts_per_router,
                    access_delay,
                    send_buffer,
                    duration,
                },
        } => cmd_bench_flows(&FlowsBench {
            flows,
            rate,
            load,
            hosts_per_router,
            access_delay,
            send_buffer,
            duration,
        }),
        Cmd::Repro(args) => repro_cmd::cmd_repro(args),
        Cmd::Sweep(args) => sweep_cmd::cmd_sweep(args),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("brisk: {e}");
            ExitCode::from(2)
        }
    }
}

/// Whether the file is a network scenario (a topology with a `[workload]`); an
/// unreadable file goes to the dumbbell loader, which reports it.
fn is_net_scenario(path: &Path) -> bool {
    std::fs::read_to_string(path).is_ok_and(|t| brisk_sim::topo_spec::is_net_scenario(&t))
}

/// `brisk run` of a network scenario: FCT aggregates and utilisation.
fn cmd_run_net(
    path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    let sc = brisk_sim::topo_spec::NetScenario::load(path)?;
    let seed = seed.unwrap_or(sc.seed);
    interrupt::install();
    let res = brisk_sim::wl_run::run_net_controlled(&sc, seed, &mut |_| !interrupt::interrupted())?;
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        stamp_run(dir, path)?;
    }
    print_run(json, out.as_deref(), || res.to_json(), || res.table())?;
    if res.stopped_early {
        std::process::exit(130);
    }
    Ok(())
}

fn cmd_run(
    path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    pcap: bool,
    snaplen: Option<u32>,
    link_log: bool,
    json: bool,
) -> anyhow::Result<()> {
    let sc = Scenario::load(path)?;
    if pcap && out.is_none() {
        anyhow::bail!("--pcap needs --out DIR (pcaps are written there)");
    }
    let seed = seed.unwrap_or(sc.seed);
    let opts = RunOptions {
        pcap_dir: if pcap { out.clone() } else { None },
        snaplen,
        link_log_dir: if link_log { out.clone() } else { None },
        ..RunOptions::default()
    };
    let res = run_with_progress(&sc, seed, &opts)?;
    if res.stopped_early {
        eprintln!(
            "brisk: interrupted at {:.1} s of {:.1} s simulated; the results below cover that much",
            res.duration.as_secs_f64(),
            sc.duration.0.as_secs_f64()
        );
    }
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        stamp_run(dir, path)?;
        copy_traces(dir, &sc)?;
    }
    print_run(json, out.as_deref(), || res.to_json(), || res.table())?;
    if res.stopped_early {
        // The shell's convention for a run ended by SIGINT.
        std::process::exit(130);
    }
    Ok(())
}

/// Runs a simulation with a progress bar on a terminal, in simulated seconds, once it
/// has taken more than a second of wall time; Ctrl-C stops it at the next 100 ms step
/// with what it has.
fn run_with_progress(
    sc: &Scenario,
    seed: u64,
    opts: &RunOptions,
) -> anyhow::Result<brisk_sim::RunResult> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    interrupt::install();
    let total_ms = sc.duration.0.as_millis() as u64;
    let started = std::time::Instant::now();
    let mut bar: Option<ProgressBar> = None;
    let mut control = |t: brisk_time::Instant| {
        if interrupt::interrupted() {
            return false;
        }
        if bar.is_none() && started.elapsed() > std::time::Duration::from_secs(1) {
            let b = ProgressBar::with_draw_target(Some(total_ms), ProgressDrawTarget::stderr());
            if let Ok(style) =
                ProgressStyle::with_template("{prefix} {wide_bar} {msg} eta {eta}; Ctrl-C stops")
            {
                b.set_style(style);
            }
            b.set_prefix(format!("brisk run {}", sc.name));
            bar = Some(b);
        }
        if let Some(b) = &bar {
            let ms = t.as_nanos() / 1_000_000;
            b.set_position(ms);
            b.set_message(format!(
                "{:.1}/{:.1} s simulated,",
                ms as f64 / 1e3,
                total_ms as f64 / 1e3
            ));
        }
        true
    };
    let res = brisk_sim::run_controlled(sc, seed, opts, &mut control);
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    Ok(res?)
}

/// `brisk run --seeds A..B`: mean and 95 % CI of each metric across the seeds; with
/// `out`, each seed's files in `out/seed-<k>/` and the aggregate in `out/summary.json`.
fn cmd_run_seeds(
    path: &Path,
    range: std::ops::RangeInclusive<u64>,
    out: Option<PathBuf>,
    force: bool,
    json: bool,
) -> anyhow::Result<()> {
    let sc = Scenario::load(path)?;
    let list: Vec<u64> = range.clone().collect();
    if let Some(dir) = &out {
        provenance::prepare_out(dir, force)?;
    }
    let runs = seeds::run_all(&sc, range)?;
    if let Some(dir) = &out {
        for r in &runs {
            let sub = dir.join(format!("seed-{}", r.seed));
            r.write_dir(&sub)?;
            stamp_run(&sub, path)?;
        }
        let mut agg = serde_json::to_string_pretty(&seeds::to_json(&sc, &list, &runs))?;
        agg.push('\n');
        std::fs::write(dir.join("summary.json"), agg)?;
        stamp_run(dir, path)?;
    }
    print_run(
        json,
        out.as_deref(),
        || seeds::to_json(&sc, &list, &runs),
        || seeds::table(&sc, &list, &runs),
    )
}

/// A copy of each link's delivery trace (`bottleneck.trace`, `reverse.trace`) beside
/// the scenario, so the output directory describes the run on its own.
fn copy_traces(dir: &Path, sc: &Scenario) -> anyhow::Result<()> {
    let links = [
        ("bottleneck", Some(&sc.bottleneck)),
        ("reverse", sc.reverse.as_ref()),
    ];
    for (name, spec) in links {
        if let Some(t) = spec.and_then(|s| s.trace.as_ref()).and_then(|t| t.trace()) {
            let path = dir.join(format!("{name}.trace"));
            std::fs::write(&path, t.to_text())
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
    }
    Ok(())
}

/// Provenance into `dir/summary.json` and a copy of the scenario file beside it.
pub(crate) fn stamp_run(dir: &Path, scenario: &Path) -> anyhow::Result<()> {
    let text = std::fs::read_to_string(scenario).ok();
    let prov = provenance::provenance(Some(scenario), text.as_deref());
    provenance::stamp(dir, prov, text.as_deref())
}

/// Prints a finished run (simulated or real): its `--json` object on one line, or its
/// table and where its files went.
fn print_run(
    json: bool,
    out: Option<&Path>,
    to_json: impl FnOnce() -> serde_json::Value,
    table: impl FnOnce() -> String,
) -> anyhow::Result<()> {
    if json {
        return emit(&format!("{}\n", serde_json::to_string(&to_json())?));
    }
    let mut text = table();
    if let Some(dir) = out {
        text.push_str(&format!("wrote {}\n", dir.display()));
    }
    emit(&text)
}

/// Writes to stdout; a closed pipe (`brisk run ... | head`) is not an error.
pub(crate) fn emit(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(e.into()),
        _ => Ok(()),
    }
}

/// `brisk bench net`: wall time, simulated seconds per wall second, events and flows
/// per wall second of the small Internet2 workload at three loads.
/// The process's peak resident set so far (Linux `VmHWM`), MB; None elsewhere.
fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

/// `scenarios/rc3-internet2-small.toml` with `hosts_per_router` and, with `rc3`, RC3's
/// network: the text `brisk bench net` and `brisk bench flows` run.
fn net_bench_text(rate: u64, hosts_per_router: Option<u32>, rc3: bool) -> String {
    let mut text = NET_BENCH_SCENARIO.to_string();
    if let Some(h) = hosts_per_router {
        text = text.replace("hosts_per_router = 4", &format!("hosts_per_router = {h}"));
    }
    if rc3 {
        // RC3's network: priority queues with push-out (40 ms at the link rate, as the
        // drop-tail's `time`), and RC3 on every host.
        text = text
            .replace(
                "queue = { kind = \"droptail\", time = \"40ms\" }",
                &format!(
                    "queue = {{ kind = \"prio\", bands = 4, bytes = {} }}",
                    rate / 8 / 25
                ),
            )
            .replace(
                "host_queue = { kind = \"droptail\", bytes = \"16MB\" }",
                "host_queue = { kind = \"prio\", bands = 4, packets = 1000000 }",
            )
            .replace(
                "send_buffer = \"8MB\" }",
                "send_buffer = \"8MB\", rc3 = true }",
            );
    }
    text
}

fn cmd_bench_net(
    flows: u32,
    rate: u64,
    hosts_per_router: Option<u32>,
    rc3: bool,
) -> anyhow::Result<()> {
    use brisk_sim::topo_spec::NetScenario;
    let text = net_bench_text(rate, hosts_per_router, rc3);
    let mut sc = NetScenario::from_toml_str_named(&text, "rc3-internet2-small.toml")?;
    sc.workload.flows = Some(flows);
    sc.duration = brisk_sim::units::Dur(Duration::from_secs(3600));
    if let Some(t) = &mut sc.topology {
        t.rate = brisk_sim::units::Rate(rate);
    }
    println!(
        "brisk network benchmark: Internet2, {} hosts/router, {:.0} Mbit/s, {} flows of rc3-synthetic, Reno{}",
        sc.topology.as_ref().and_then(|t| t.hosts_per_router).unwrap_or(10),
        rate as f64 / 1e6,
        flows,
        if rc3 { " with RC3" } else { "" }
    );
    println!(
        "  {:>5} {:>9} {:>9} {:>12} {:>12} {:>12} {:>10} {:>10} {:>10} {:>12}",
        "load",
        "sim s",
        "wall s",
        "sim s/wall",
        "events/s",
        "packets/s",
        "flows/s",
        "core util",
        "peak conns",
        "peak RSS MB"
    );
    for load in [0.1, 0.3, 0.5] {
        sc.workload.load = load;
        let t0 = std::time::Instant::now();
        let r = brisk_sim::wl_run::run_net(&sc, sc.seed)?;
        let wall = t0.elapsed().as_secs_f64().max(1e-9);
        let sim = r.duration.as_secs_f64();
        println!(
            "  {:>5.2} {:>9.3} {:>9.3} {:>12.3} {:>12.0} {:>12.0} {:>10.0} {:>10.3} {:>10} {:>12}",
            load,
            sim,
            wall,
            sim / wall,
            r.engine.events as f64 / wall,
            r.engine.packets as f64 / wall,
            r.flows.len() as f64 / wall,
            r.utilisation.core_mean,
            r.peak_connections,
            // The process's peak so far: levels run in order, so it is a running maximum.
            peak_rss_mb().map_or("-".into(), |m| format!("{m:.0}"))
        );
        if r.not_intact + r.errors > 0 {
            anyhow::bail!("{} flows not intact, {} errors", r.not_intact, r.errors);
        }
    }
    Ok(())
}

/// `brisk bench flows`' settings (see `BenchCmd::Flows`).
struct FlowsBench {
    flows: u32,
    rate: u64,
    load: f64,
    hosts_per_router: u32,
    access_delay: Duration,
    send_buffer: u64,
    duration: Duration,
}

/// The resident set now (`VmRSS`), in MB.
fn rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with("VmRSS:"))?
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()?;
    Some(kb / 1024.0)
}

fn cmd_bench_flows(b: &FlowsBench) -> anyhow::Result<()> {
    use brisk_sim::topo_spec::NetScenario;
    use brisk_sim::units::{Dur, Rate, Size};
    let text = net_bench_text(b.rate, Some(b.hosts_per_router), true);
    let mut sc = NetScenario::from_toml_str_named(&text, "rc3-internet2-small.toml")?;
    sc.workload.flows = Some(b.flows);
    sc.workload.load = b.load;
    sc.workload.tcp.send_buffer = Some(Size(b.send_buffer));
    sc.duration = Dur(b.duration);
    if let Some(t) = &mut sc.topology {
        t.rate = Rate(b.rate);
        t.access_delay = Some(Dur(b.access_delay));
    }
    println!(
        "brisk concurrent-flows benchmark: Internet2, {} hosts/router, {:.0} Mbit/s, access delay {:?}, load {}, {} flows of rc3-synthetic, Reno with RC3, send buffer {} B, {:?} simulated",
        b.hosts_per_router,
        b.rate as f64 / 1e6,
        b.access_delay,
        b.load,
        b.flows,
        b.send_buffer,
        b.duration
    );
    let rss0 = rss_mb();
    let t0 = std::time::Instant::now();
    let r = brisk_sim::wl_run::run_net(&sc, sc.seed)?;
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    let peak = peak_rss_mb();
    // Both ends of a flow hold a connection: open flows are half the connections.
    let open = r.peak_total_connections as f64 / 2.0;
    let done = r.flows.iter().filter(|f| f.acked.is_some()).count();
    println!(
        "  arrival rate {:.0} flows/s (all {} arrive within {:.2} s), {} done by the end",
        r.arrival_rate,
        r.flows.len(),
        r.flows.len() as f64 / r.arrival_rate.max(1e-9),
        done
    );
    println!(
        "  {:.3} sim s in {:.1} wall s: {} events, {:.0} events/s, {} packets",
        r.duration.as_secs_f64(),
        wall,
        r.engine.events,
        r.engine.events as f64 / wall,
        r.engine.packets
    );
    println!(
        "  peak open connections {} (all hosts; {:.0} flows), {} on one host",
        r.peak_total_connections, open, r.peak_connections
    );
    match (rss0, peak) {
        (Some(a), Some(p)) => println!(
            "  peak RSS {p:.0} MB ({a:.0} MB before the build): {:.1} KB per open flow",
            (p - a) * 1024.0 / open.max(1.0)
        ),
        _ => println!("  peak RSS unavailable (no /proc/self/status)"),
    }
    Ok(())
}

fn cmd_bench_sim(d: Duration, repeat: u32, no_ns3: bool, no_aqm: bool) -> anyhow::Result<()> {
    let mut sc = Scenario::from_toml_str_named(BENCH_SCENARIO, "bench-1g.toml")?;
    sc.duration = brisk_sim::units::Dur(d);
    // Stream digests are app-level work ns-3 does not do; the per-byte check stays.
    let opts = RunOptions {
        skip_stream_hashes: true,
        ..RunOptions::default()
    };
    let sim_s = d.as_secs_f64();
    println!(
        "brisk sim benchmark: 1 CUBIC bulk flow, 1 Gbit/s, 10 ms RTT, 1000-pkt drop-tail, {sim_s}s"
    );
    // The runs are deterministic, so only the wall time differs between them; the
    // median is what the shared machine's drift disturbs least.
    let mut walls = Vec::new();
    let mut res = None;
    for _ in 0..repeat {
        let t0 = std::time::Instant::now();
        let r = brisk_sim::run_with(&sc, sc.seed, &opts)?;
        walls.push(t0.elapsed().as_secs_f64().max(1e-9));
        res = Some(r);
    }
    let res = res.expect("repeat >= 1");
    walls.sort_by(f64::total_cmp);
    let wall = median(&walls);
    let f = res.flows.first();
    let goodput = f.map_or(0.0, |f| f.goodput_bps);
    let rtt = f.and_then(|f| f.rtt).map(|r| r.mean / 1e6);
    println!(
        "  wall time        {wall:.3} s  (median of {repeat}; min {:.3}, max {:.3})",
        walls[0],
        walls[walls.len() - 1]
    );
    println!("  events           {}", res.engine.events);
    println!("  events/s         {:.0}", res.engine.events as f64 / wall);
    println!("  packets/s        {:.0}", res.engine.packets as f64 / wall);
    println!("  sim s / wall s   {:.3}", sim_s / wall);
    println!("  goodput          {:.1} Mbit/s", goodput / 1e6);
    match rtt {
        Some(rtt) => println!("  mean RTT         {rtt:.2} ms"),
        None => println!("  mean RTT         n/a (no RTT samples)"),
    }
    if !no_aqm {
        bench_sim_aqms(&sc, &opts, res.engine.events as f64 / wall)?;
    }
    if no_ns3 {
        return Ok(());
    }
    match run_ns3(sim_s) {
        Some(Ok((ns3_wall, ns3_goodput, ns3_rtt))) => {
            println!("ns-3 ({NS3_SCRIPT}, one run):");
            println!(
                "  wall time        {ns3_wall:.3} s  (brisk's median is {:.1}x faster; {:.1}x to {:.1}x over brisk's max and min)",
                ns3_wall / wall,
                ns3_wall / walls[walls.len() - 1],
                ns3_wall / walls[0]
            );
            println!(
                "  goodput          {:.1} Mbit/s  (brisk {:.1}, ratio {:.4})",
                ns3_goodput / 1e6,
                goodput / 1e6,
                goodput / ns3_goodput
            );
            let ours = rtt.map_or("n/a".into(), |r| {
                format!("{r:.2}, ratio {:.4}", r / ns3_rtt)
            });
            println!("  mean RTT         {ns3_rtt:.2} ms  (brisk {ours})");
        }
        Some(Err(e)) => println!("ns-3 run failed, skipped: {e}"),
        None => println!("ns-3 not found, skipped"),
    }
    Ok(())
}

/// The median of sorted values.
fn median(sorted: &[f64]) -> f64 {
    let n = sorted.len();
    if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    }
}

/// The standard flow through each AQM and the prio queue, one run each, as events/s
/// against drop-tail's `base_eps`.
fn bench_sim_aqms(sc: &Scenario, opts: &RunOptions, base_eps: f64) -> anyhow::Result<()> {
    // The same flow through the AQMs and the prio queue: per-packet cost against
    // drop-tail (none allocates per packet; FQ-CoDel hashes each one, prio reads the
    // DSCP).
    let aqms = [
        (
            "CoDel",
            brisk_net::spec::QueueSpec::Codel {
                target: None,
                interval: None,
                packets: None,
                ecn: false,
            },
        ),
        (
            "FQ-CoDel",
            brisk_net::spec::QueueSpec::FqCodel {
                target: None,
                interval: None,
                flows: None,
                quantum: None,
                packets: None,
                memory_limit: None,
                drop_batch: None,
                ecn: Some(false),
            },
        ),
        (
            // RC3's strict priority: one flow, so one band, but every packet is
            // classified by its DSCP and accounted per band.
            "prio",
            brisk_net::spec::QueueSpec::Prio {
                bands: Some(4),
                packets: Some(1000),
                bytes: None,
                push_out: None,
                band0_pie: None,
            },
        ),
    ];
    for (name, q) in aqms {
        let mut aqm = sc.clone();
        aqm.bottleneck.queue = Some(q);
        let t = std::time::Instant::now();
        let r = brisk_sim::run_with(&aqm, aqm.seed, opts)?;
        let w = t.elapsed().as_secs_f64().max(1e-9);
        let eps = r.engine.events as f64 / w;
        println!(
            "  through {name:<9} {eps:.0} events/s ({:.2}x drop-tail's), goodput {:.1} Mbit/s, mean queue {}",
            eps / base_eps,
            r.flows.first().map_or(0.0, |f| f.goodput_bps) / 1e6,
            r.bottleneck
                .queue_delay
                .map_or("-".into(), |q| format!("{:.2} ms", q.mean / 1e6))
        );
    }
    Ok(())
}

/// One point of `brisk bench scale`: the scenario of `n` flows.
///
/// Each flow's send buffer is its share of twice the path's BDP plus queue, between
/// 64 KB and 4 MiB: the bulk app keeps its send buffer full, and a fixed 4 MiB would
/// make every point measure N × 4 MiB of queued app data (40 GB at N = 10^4) where
/// Linux's send-buffer autotuning holds about 2 × cwnd per flow.
fn scale_scenario(n: u32, d: Duration, rate: u64) -> anyhow::Result<Scenario> {
    let bdp_and_queue = rate / 8 / 100 + 1000 * 1500; // 10 ms of the rate, 1000 packets
    let sndbuf = (2 * bdp_and_queue / u64::from(n.max(1))).clamp(64 << 10, 4 << 20);
    let text = format!(
        "name = \"scale-{n}\"\nseed = 1\nduration = \"{}ns\"\n\n[bottleneck]\nrate = \"{rate}bit\"\n\
         queue = {{ kind = \"droptail\", packets = 1000 }}\n\n[[flow]]\nrtt = \"10ms\"\n\
         cc = \"cubic\"\ncount = {n}\nip = \"v6\"\napp = {{ kind = \"bulk\" }}\n\
         tcp = {{ send_buffer = {sndbuf} }}\n",
        d.as_nanos()
    );
    Ok(Scenario::from_toml_str_named(&text, "bench-scale")?)
}

/// `brisk bench scale`: each N runs in a child process (this binary with `--one`), so
/// its peak RSS is not a running maximum over earlier points.
fn cmd_bench_scale(
    flows: &[u32],
    d: Duration,
    rate: u64,
    one: bool,
    no_ns3: bool,
) -> anyhow::Result<()> {
    if one {
        let &[n] = flows else {
            anyhow::bail!("--one takes one flow count");
        };
        let sc = scale_scenario(n, d, rate)?;
        let opts = RunOptions {
            skip_stream_hashes: true,
            ..RunOptions::default()
        };
        // The build (hosts, links, patterns) is timed apart, so that events/s is the
        // engine's rate; it is built again inside the run.
        let t0 = std::time::Instant::now();
        drop(brisk_sim::topology::build_with(&sc, sc.seed, false)?);
        let build = t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let r = brisk_sim::run_with(&sc, sc.seed, &opts)?;
        let wall = (t0.elapsed().as_secs_f64() - build).max(1e-9);
        let goodput: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        let active = r.flows.iter().filter(|f| f.goodput_bps > 0.0).count();
        println!(
            "{}",
            serde_json::json!({
                "flows": n,
                "active": active,
                "build_s": build,
                "wall_s": wall,
                "events": r.engine.events,
                "packets": r.engine.packets,
                "early": r.engine.early,
                "stale": r.engine.stale,
                "goodput_bps": goodput,
                "peak_rss_mb": peak_rss_mb(),
            })
        );
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let sim_s = d.as_secs_f64();
    println!(
        "brisk scale benchmark: N bulk CUBIC flows, one {:.0} Mbit/s bottleneck, 10 ms RTT, 1000-pkt drop-tail, IPv6, {sim_s}s each",
        rate as f64 / 1e6
    );
    println!(
        "  {:>7} {:>7} {:>8} {:>8} {:>11} {:>11} {:>10} {:>8} {:>9} {:>11} {:>9} {:>12}",
        "flows",
        "active",
        "build s",
        "run s",
        "events",
        "events/s",
        "ns/event",
        "sim/wall",
        "Mbit/s",
        "peak RSS MB",
        "KB/flow",
        "early+stale"
    );
    let mut base_rss: Option<(f64, f64)> = None;
    let mut brisk_1000 = None;
    for &n in flows {
        let out = Command::new(&exe)
            .args(["bench", "scale", "--one", "--flows", &n.to_string()])
            .args(["--duration", &format!("{}ns", d.as_nanos())])
            .args(["--rate", &format!("{rate}bit")])
            .output()?;
        if !out.status.success() {
            anyhow::bail!("N = {n}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let wall = f("wall_s");
        let rss = f("peak_rss_mb");
        // Bytes per flow: the growth of peak RSS over the first point, per added flow.
        let per_flow = match base_rss {
            Some((b, bn)) if f64::from(n) > bn => {
                format!("{:.1}", (rss - b) * 1024.0 / (f64::from(n) - bn))
            }
            _ => "-".into(),
        };
        if base_rss.is_none() {
            base_rss = Some((rss, f64::from(n)));
        }
        println!(
            "  {:>7} {:>7} {:>8.2} {:>8.2} {:>11.0} {:>11.0} {:>10.0} {:>8.3} {:>9.1} {:>11.0} {:>9} {:>12.0}",
            n,
            f("active"),
            f("build_s"),
            wall,
            f("events"),
            f("events") / wall,
            wall * 1e9 / f("events"),
            sim_s / wall,
            f("goodput_bps") / 1e6,
            rss,
            per_flow,
            f("early") + f("stale"),
        );
        if n == PEER_FLOWS {
            brisk_1000 = Some((wall, f("active"), f("goodput_bps")));
        }
    }
    if let (false, Some((wall, active, goodput))) = (no_ns3, brisk_1000) {
        match run_ns3_scale(PEER_FLOWS, sim_s, rate) {
            Some(Ok(v)) => {
                let g = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
                println!("ns-3 ({NS3_SCALE_SCRIPT}), {PEER_FLOWS} flows, one run:");
                println!(
                    "  run {:.2} s, {:.0} events, sim s / wall s {:.3}  (brisk {:.3}: {:.1}x faster)",
                    g("wall_s"),
                    g("events"),
                    sim_s / g("wall_s"),
                    sim_s / wall,
                    g("wall_s") / wall
                );
                println!(
                    "  {:.0} flows got data, {:.1} Mbit/s in all  (brisk {active:.0}, {:.1})",
                    g("active"),
                    g("goodput_bps") / 1e6,
                    goodput / 1e6
                );
            }
            Some(Err(e)) => println!("ns-3 run failed, skipped: {e}"),
            None => println!("ns-3 not found, skipped"),
        }
    }
    Ok(())
}

/// The flow count at which `bench scale` runs its ns-3 peer (the issue's).
const PEER_FLOWS: u32 = 1000;
const NS3_SCALE_SCRIPT: &str = "bench/ns3/scale.py";

/// The Python that runs an ns-3 script: `$BRISK_NS3_PYTHON` (a venv with the `ns3`
/// wheel, as `brisk repro` and `bench/ns3/compare.sh` use), else `python3`; None when
/// it cannot import ns-3 or `script` is absent (run from the repository root).
fn ns3_python(script: &str) -> Option<String> {
    let py = std::env::var("BRISK_NS3_PYTHON").unwrap_or_else(|_| "python3".into());
    let have_ns3 = Command::new(&py)
        .args(["-c", "from ns import ns"])
        .output()
        .is_ok_and(|o| o.status.success());
    (have_ns3 && Path::new(script).exists()).then_some(py)
}

/// Runs `bench/ns3/scale.py` (the Python as in [`run_ns3`]); None if ns-3 or the script
/// is absent, else its JSON line.
fn run_ns3_scale(n: u32, sim_s: f64, rate: u64) -> Option<anyhow::Result<serde_json::Value>> {
    let py = ns3_python(NS3_SCALE_SCRIPT)?;
    println!("ns-3: running {NS3_SCALE_SCRIPT} with {n} flows (minutes)...");
    let out = Command::new(&py)
        .arg(NS3_SCALE_SCRIPT)
        .args(["--flows", &n.to_string(), "--duration", &sim_s.to_string()])
        .args([
            "--rate",
            &format!("{rate}bps"),
            "--rate-bps",
            &rate.to_string(),
        ])
        .output();
    Some((|| {
        let out = out?;
        if !out.status.success() {
            anyhow::bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().rev().find(|l| l.trim_start().starts_with('{'));
        Ok(serde_json::from_str(line.unwrap_or("{}"))?)
    })())
}

/// Runs the ns-3 twin (`bench/ns3/bufferbloat.py`, which needs the `ns3` Python
/// wheel) if ns-3 is importable. The script prints one JSON object with `goodput_bps`,
/// `rtt_ms_mean` and `wall_s` (its simulation time only, without the slow import).
/// Returns None if ns-3 or the script is absent. The Python is `$BRISK_NS3_PYTHON`
/// (a venv with the wheel, as `brisk repro` and `bench/ns3/compare.sh` use), else
/// `python3`.
fn run_ns3(sim_s: f64) -> Option<anyhow::Result<(f64, f64, f64)>> {
    let py = ns3_python(NS3_SCRIPT)?;
    // ns-3 takes minutes for what brisk does in seconds: say so before the wait.
    println!("ns-3: running {NS3_SCRIPT} on the same scenario (about 30x brisk's wall time)...");
    let out = Command::new(&py)
        .args([NS3_SCRIPT, "--duration", &sim_s.to_string()])
        .output();
    Some((|| {
        let out = out?;
        if !out.status.success() {
            anyhow::bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
        }
        let text = String::from_utf8_lossy(&out.stdout);
        let line = text.lines().rev().find(|l| l.trim_start().starts_with('{'));
        let v: serde_json::Value = serde_json::from_str(line.unwrap_or("{}"))?;
        let field = |k: &str| {
            v[k].as_f64()
                .ok_or_else(|| anyhow::anyhow!("ns-3 output lacks {k}: {text}"))
        };
        Ok((
            field("wall_s")?,
            field("goodput_bps")?,
            field("rtt_ms_mean")?,
        ))
    })())
}

//! `brisk`: the command-line front end.
//!
//! - `brisk run SCENARIO.toml [--seed N | --seeds A..B] [--out DIR] [--pcap] [--json]`
//! - `brisk plot DIR [--out FILE.html]`: time series and throughput-delay chart (a
//!   sweep directory: one throughput-delay chart across its cells)
//! - `brisk bench sim|scale|net|flows` (see `bench_cmd`)
//! - `brisk sweep FILE [--jobs N] [--out DIR] [--json]` (see `sweep_cmd`)
//! - `brisk repro [ID ...|all] [--quick] [--json] [--out DIR] [--timings]` (see `repro_cmd`)
//! - `brisk run --real SCENARIO.toml`, `brisk bench emu|real` (see `real_cmd`)
//! - `brisk lab up|send|clean` (see `lab_cmd`)
//!
//! Errors go to stderr with exit code 2. Wall-clock time is read here (for the
//! benchmark) and never in the library crates.

mod args;
mod bench_cmd;
mod flent_cmd;
mod interrupt;
mod iperf_json;
mod lab_cmd;
mod pdrill_cmd;
mod provenance;
mod real_cmd;
mod repro_cmd;
mod seeds;
mod sweep_cmd;
mod trace_cmd;

/// mimalloc as the binary's allocator, opt-in (`cargo build --release --features
/// mimalloc`): `bench sim` takes 3 % less CPU with it, but `bench scale` peaks at
/// 14-31 % more RSS per flow, so the default stays the system allocator
/// (docs/performance.md, "Allocator, PGO, thin LTO, shipped profiles (§1, helper
/// perfbuild5)").
/// Results do not depend on it: nothing reads addresses.
#[cfg(feature = "mimalloc")]
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

use brisk_sim::{RunOptions, Scenario};
use brisk_time::Duration;
use clap::{Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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
        /// With --real: run the scenario's flows over the paths of this multi-homed
        /// network scenario (e.g. scenarios/mp-two-path-client.toml) in the two-path
        /// lab, one emulated link per address of its multi-homed host, drawn for the
        /// seed as the simulator draws them; the scenario's [bottleneck] and flow
        /// `rtt`s are replaced by the paths.
        #[arg(long, requires = "real", conflicts_with = "link_log")]
        paths: Option<PathBuf>,
    },
    /// Plot a run's --out directory (simulated, real or --seeds) into one
    /// self-contained HTML page: goodput, RTT, cwnd, queue and drops over time, one
    /// line per flow, and throughput against one-way delay (Pantheon-style). A
    /// `brisk sweep --out` directory gets one throughput-delay chart across its cells.
    Plot {
        /// The directory `brisk run --out` (or `brisk sweep --out`) wrote.
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
    /// One of flent's standard tests (rrul, tcp-upload, tcp-download) in the simulator
    /// for any controller and queue: an HTML page with flent's plots (throughput per
    /// direction and latency over time, the latency's CDF and box plot).
    Flent(flent_cmd::FlentArgs),
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
    /// Exit status: 0 every script passed; 1 one failed or did not parse; 2 the
    /// command's own error (bad argument, unreadable path); 3 none failed but one
    /// was unsupported (unsupported is not a pass).
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
        /// Skip the MPTCP runs (the same flow with MPTCP on both ends, one and two
        /// subflows) and the FSE line (two flows coupled against uncoupled).
        #[arg(long)]
        no_mptcp: bool,
        /// Skip the line per controller (brisk_repro::roster::CONTROLLERS; also
        /// skipped with --no-aqm).
        #[arg(long)]
        no_cc: bool,
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
        /// Each flow sends this many bytes and closes (short flows: e.g. 20KB, so that
        /// every flow gets data through within the run); default: bulk until the end.
        #[arg(long, value_parser = args::size)]
        bytes: Option<u64>,
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
    Flows(bench_cmd::FlowsBench),
    /// Every controller of brisk_repro::roster::CONTROLLERS that ns-3 has, brisk's
    /// beside ns-3's model (bench/ns3/cc.py, the ns3 wheel via BRISK_NS3_PYTHON) on a
    /// bufferbloated and a lossy 20 Mbit/s, 40 ms path: goodput and mean RTT side by
    /// side as a markdown table (docs/cc-comparison.md).
    Ns3Cc {
        /// Simulated duration of each run.
        #[arg(long, default_value = "30s", value_parser = args::positive_duration)]
        duration: Duration,
        /// Also write the table to this file.
        #[arg(long)]
        out: Option<PathBuf>,
        /// Only these controllers (`cc` names), comma-separated.
        #[arg(long, value_delimiter = ',')]
        only: Vec<String>,
        /// Keep ns-3's results in this directory and reuse them (ns-3's runs are
        /// deterministic per run number; each takes 10-300 s).
        #[arg(long)]
        ns3_cache: Option<PathBuf>,
        /// Seeds per cell on both sides (brisk's scenario seed, ns-3's run number):
        /// the lossy path's loss draws and the controllers' own randomness.
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u64).range(1..=20))]
        seeds: u64,
    },
    /// Emulator capacity: kernel CUBIC through an emulated zero-delay path.
    Emu {
        #[arg(long, default_value = "10Gbit", value_parser = args::rate)]
        rate: u64,
        #[arg(long, default_value = "5s", value_parser = args::positive_duration)]
        duration: Duration,
        /// Also run the transfer through the two TUN devices joined by a bare relay
        /// (every frame written as read, no model): the ceiling of the TUN design.
        #[arg(long)]
        relay: bool,
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
            paths,
        } => match out.as_deref().map(|d| provenance::prepare_out(d, force)) {
            Some(Err(e)) => Err(e),
            _ if real && snaplen.is_some() => Err(anyhow::anyhow!(
                "--snaplen applies to simulated runs; real runs capture whole packets"
            )),
            _ if real && is_net_scenario(&scenario) => Err(anyhow::anyhow!(
                "--real runs a dumbbell scenario's flows, over its bottleneck or over a multi-homed network's paths (--paths NET.toml); network ([workload]) scenarios are simulated"
            )),
            _ if real => match paths {
                Some(net) => real_cmd::cmd_run_two_path(&scenario, &net, seed, out, pcap, json),
                None => real_cmd::cmd_run_real(&scenario, seed, out, pcap, link_log, json),
            },
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
            Ok(pdrill_cmd::EXIT_PASS) => Ok(()),
            Ok(code) => return ExitCode::from(code),
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
            what:
                BenchCmd::Emu {
                    rate,
                    duration,
                    relay,
                },
        } => real_cmd::cmd_bench_emu(rate, duration, relay),
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
                    no_mptcp,
                    no_cc,
                },
        } => bench_cmd::cmd_bench_sim(duration, repeat, no_ns3, no_aqm, no_mptcp, no_cc),
        Cmd::Bench {
            what:
                BenchCmd::Scale {
                    flows,
                    duration,
                    rate,
                    one,
                    no_ns3,
                    bytes,
                },
        } => bench_cmd::cmd_bench_scale(&flows, duration, rate, one, no_ns3, bytes),
        Cmd::Bench {
            what:
                BenchCmd::Net {
                    flows,
                    rate,
                    hosts_per_router,
                    rc3,
                },
        } => bench_cmd::cmd_bench_net(flows, rate, hosts_per_router, rc3),
        Cmd::Bench {
            what: BenchCmd::Flows(b),
        } => bench_cmd::cmd_bench_flows(&b),
        Cmd::Bench {
            what:
                BenchCmd::Ns3Cc {
                    duration,
                    out,
                    only,
                    ns3_cache,
                    seeds,
                },
        } => bench_cmd::cmd_bench_ns3_cc(
            duration,
            out.as_deref(),
            &only,
            ns3_cache.as_deref(),
            seeds,
        ),
        Cmd::Repro(args) => repro_cmd::cmd_repro(args),
        Cmd::Flent(args) => flent_cmd::cmd_flent(args),
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
    brisk_scenario::input::read_text(path)
        .is_ok_and(|t| brisk_scenario::network::is_net_scenario(&t))
}

/// `brisk run` of a network scenario: FCT aggregates and utilisation.
fn cmd_run_net(
    path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    json: bool,
) -> anyhow::Result<()> {
    let sc = brisk_sim::topo_build::load(path)?;
    let seed = seed.unwrap_or(sc.seed);
    interrupt::install();
    let mut res =
        brisk_sim::wl_run::run_net_controlled(&sc, seed, &mut |_| !interrupt::interrupted())?;
    if let Some(i) = &mut res.interrupted {
        // The controller stops only for a Ctrl-C.
        i.signal = Some("SIGINT".into());
        eprintln!(
            "brisk: interrupted at {:.1} s of {:.1} s simulated; the results below cover that much",
            i.at.as_secs_f64(),
            i.of.as_secs_f64()
        );
    }
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        stamp_run(dir, path)?;
    }
    print_run(json, out.as_deref(), || res.to_json(), || res.table())?;
    if res.interrupted.is_some() {
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
    warn(&sc);
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
    let mut res = run_with_progress(&sc, seed, &opts)?;
    if let Some(i) = &mut res.interrupted {
        // run_with_progress's controller stops only for a Ctrl-C.
        i.signal = Some("SIGINT".into());
        eprintln!(
            "brisk: interrupted at {:.1} s of {:.1} s simulated; the results below cover that much",
            i.at.as_secs_f64(),
            i.of.as_secs_f64()
        );
    }
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        stamp_run(dir, path)?;
        copy_traces(dir, &sc)?;
    }
    print_run(json, out.as_deref(), || res.to_json(), || res.table())?;
    if res.interrupted.is_some() {
        // The shell's convention for a run ended by SIGINT.
        std::process::exit(130);
    }
    // The command ends here: its result goes with the process (see `run_with_progress`).
    std::mem::forget(res);
    Ok(())
}

/// The scenario's warnings (what it asks for and will not get), on stderr.
pub(crate) fn warn(sc: &Scenario) {
    for w in sc.warnings() {
        eprintln!("brisk: warning: {w}");
    }
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
    let res = brisk_sim::build_for(sc, seed, opts).and_then(|mut net| {
        let res = brisk_sim::run_network(sc, seed, &mut net, opts, &mut control);
        // The command exits after printing the result: the OS takes the network back
        // at once, where dropping it freed it allocation by allocation (at 10^5 flows
        // ~7 M `free`s and a tenth of the process's instructions; issue 36 §2). Only
        // here, in a one-run command: the library drops it.
        std::mem::forget(net);
        res
    });
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
    warn(&sc);
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
    let text = brisk_scenario::input::read_text(scenario).ok();
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

//! `brisk lab`: the real-packet testbed by hand.
//!
//! - `brisk lab up [--rtt 10ms] [--rate 100Mbit] [--loss P] [--serve DIR | --echo | --sink]
//!   [--port N] [--for 10m] [--pcap DIR] [--ipv6]`: builds a namespace with a Linux host
//!   (198.18.0.2) and brisk (198.18.0.1, this process) joined by the emulator, serves
//!   from brisk (HTTP file server, echo or sink; every connection from one thread, an
//!   event loop over the endpoint: `brisk_emu::serve`) and prints how to reach it;
//!   tears everything down on Ctrl-C or after `--for`.
//! - `brisk lab send [--bytes 100MB] [--cc cubic] [...path flags]`: brisk sends to a
//!   Linux sink through the path and prints goodput and whether the data arrived intact.
//! - `brisk lab bufferbloat [--duration 20s] [--out DIR]`: experiment real-bufferbloat.
//! - `brisk lab shell [...path flags] [--outside CMD] [-- CMD]`: two Linux hosts joined
//!   by the emulator, like Mahimahi's mm-link (`brisk_emu::tools::shell`); with
//!   `--paths FILE` by several emulated paths (`brisk_emu::tools::multipath`).
//! - `brisk lab clean`: removes `brisk-*` namespaces left by dead processes.
//!
//! `--ipv6` makes the lab dual-stack (2001:db8:18::1 for brisk / the outside host,
//! 2001:db8:18::2 for Linux / the inside host).

use crate::iperf_json;
use std::io::Write as _;
use std::net::{Shutdown, SocketAddr};
use std::path::PathBuf;

use brisk_emu::path::{Dur, LossSpec, PathSpec, Rate};
use brisk_emu::{
    tools, BriskLab, EmuConfig, EmulatorOptions, StackConfig, BRISK_ADDR, BRISK_ADDR6, KERNEL_ADDR,
    KERNEL_ADDR6,
};
use brisk_time::Duration;

#[derive(clap::Args)]
pub struct LabArgs {
    #[command(subcommand)]
    cmd: LabCmd,
}

#[derive(clap::Args, Clone)]
struct PathArgs {
    /// Base round-trip time of the emulated path.
    #[arg(long, default_value = "10ms", value_parser = crate::args::duration, allow_hyphen_values = true)]
    rtt: Duration,
    /// Bottleneck rate brisk → Linux (in `shell`: outside → inside, the downlink);
    /// default: unlimited.
    #[arg(long, value_parser = crate::args::rate, conflicts_with = "trace", allow_hyphen_values = true)]
    rate: Option<u64>,
    /// Mahimahi delivery trace for the bottleneck direction instead of --rate (one ms
    /// timestamp per line, each a 1500-byte opportunity; see `brisk trace`).
    #[arg(long)]
    trace: Option<PathBuf>,
    /// Rate of the other direction (Linux → brisk; in `shell` the uplink); default:
    /// unlimited.
    #[arg(long, value_parser = crate::args::rate, conflicts_with = "uplink_trace", allow_hyphen_values = true)]
    uplink_rate: Option<u64>,
    /// Mahimahi delivery trace for the other direction instead of --uplink-rate.
    #[arg(long)]
    uplink_trace: Option<PathBuf>,
    /// Bernoulli loss probability in each direction.
    #[arg(long, value_parser = crate::args::probability, allow_hyphen_values = true)]
    loss: Option<f64>,
    /// Bottleneck drop-tail queue: packets (`1000`) or bytes (`64KiB`); default 1000 packets.
    #[arg(long, value_parser = crate::args::queue, allow_hyphen_values = true)]
    queue: Option<brisk_scenario::link::QueueSpec>,
    /// Extra delay per packet, uniform in [0, JITTER], order kept, brisk → Linux.
    #[arg(long, value_parser = crate::args::jitter, allow_hyphen_values = true)]
    jitter: Option<Duration>,
    /// Write brisk.pcap and kernel.pcap (what the emulator saw at each end) here.
    #[arg(long)]
    pcap: Option<PathBuf>,
    /// Write each direction's link log in Mahimahi's mm-link format here
    /// (downlink.mm.log for the bottleneck direction, uplink.mm.log), for
    /// mm-throughput-graph and mm-delay-graph.
    #[arg(long)]
    link_log: Option<PathBuf>,
    /// Dual-stack lab: the hosts also get IPv6 addresses, 2001:db8:18::1 (brisk, or
    /// the outside host in `shell`) and 2001:db8:18::2 (Linux, or the inside host),
    /// routed only inside the lab's namespaces.
    #[arg(long)]
    ipv6: bool,
}

/// The emulator options of the path flags: pcaps named `a`/`b`, and link logs.
fn emu_options(p: &PathArgs, a: &str, b: &str) -> anyhow::Result<EmulatorOptions> {
    for d in [&p.pcap, &p.link_log].into_iter().flatten() {
        std::fs::create_dir_all(d).map_err(|e| anyhow::anyhow!("creating {}: {e}", d.display()))?;
    }
    Ok(EmulatorOptions {
        pcap_a: p.pcap.as_ref().map(|d| d.join(a)),
        pcap_b: p.pcap.as_ref().map(|d| d.join(b)),
        link_logs: [
            p.link_log.as_ref().map(|d| d.join("downlink.mm.log")),
            p.link_log.as_ref().map(|d| d.join("uplink.mm.log")),
        ],
        ..EmulatorOptions::default()
    })
}

#[derive(clap::Subcommand)]
enum LabCmd {
    /// Build the lab and serve from brisk until Ctrl-C.
    Up {
        #[command(flatten)]
        path: PathArgs,
        /// Serve files from this directory over HTTP/1.1.
        #[arg(long, conflicts_with_all = ["echo", "sink"])]
        serve: Option<PathBuf>,
        /// Echo every connection's bytes back.
        #[arg(long)]
        echo: bool,
        /// Read and discard, printing each connection's byte count and SHA-256.
        #[arg(long)]
        sink: bool,
        /// Port brisk listens on, 1 to 65535 (default 80 for --serve, else 7).
        #[arg(long, value_parser = clap::value_parser!(u16).range(1..), allow_hyphen_values = true)]
        port: Option<u16>,
        /// Tear down after this long.
        #[arg(long = "for", default_value = "1h", value_parser = crate::args::positive_duration, allow_hyphen_values = true)]
        for_: Duration,
    },
    /// brisk sends to a Linux sink through the path.
    Send {
        #[command(flatten)]
        path: PathArgs,
        /// Bytes to send.
        #[arg(long, default_value_t = 100_000_000)]
        bytes: u64,
        /// brisk's congestion control (reno, cubic).
        #[arg(long, default_value = "cubic")]
        cc: String,
        /// Print an iperf3-like JSON report (`start`, `intervals`, `end`) instead of
        /// the one-line summary.
        #[arg(long)]
        json: bool,
        /// Length of the report's intervals (as iperf3's -i).
        #[arg(long, default_value = "1s", value_parser = crate::args::positive_duration, allow_hyphen_values = true)]
        interval: Duration,
    },
    /// Experiment real-bufferbloat: Linux CUBIC/BBR and brisk CUBIC (+ delay
    /// correlation) on 10 Mbit/s, 10 ms, 1000-packet drop-tail, next to the simulator.
    Bufferbloat {
        #[arg(long, default_value = "20s", value_parser = crate::args::positive_duration, allow_hyphen_values = true)]
        duration: Duration,
        /// Write table.md, summary.json, rtt.svg, rtt.csv here.
        #[arg(long, default_value = "target/real-bufferbloat")]
        out: PathBuf,
    },
    /// Two Linux namespaces joined by the emulator, like Mahimahi's mm-link: runs
    /// --outside CMD (a server) at 198.18.0.1 and the command after `--` (default: an
    /// interactive $SHELL) at 198.18.0.2; tears everything down when it exits. The
    /// path flags shape outside → inside (the downlink); --uplink-* the other way.
    /// Example: `brisk lab shell --rate 50Mbit --rtt 20ms --outside 'iperf3 -s' --
    /// iperf3 -c 198.18.0.1 -R`.
    Shell {
        #[command(flatten)]
        path: PathArgs,
        /// Command line (run by `sh -c`) in the outside namespace, started first and
        /// stopped at the end.
        #[arg(long)]
        outside: Option<String>,
        /// Several paths instead of one: a TOML file of `[[path]]` tables (each the
        /// path keys, plus `strip_mptcp = { direction, packets }`); path k joins
        /// outside 198.18.k.1 and inside 198.18.k.2 (docs/emulator.md, "Two paths").
        /// Only `--pcap` of the path flags goes with it.
        #[arg(long, conflicts_with_all = ["rtt", "rate", "trace", "uplink_rate", "uplink_trace", "loss", "queue", "jitter", "link_log", "ipv6"])]
        paths: Option<PathBuf>,
        /// The emulator stops after this long even if the command has not exited.
        #[arg(long = "for", default_value = "24h", value_parser = crate::args::positive_duration, allow_hyphen_values = true)]
        for_: Duration,
        /// Program and arguments for the inside namespace.
        #[arg(last = true)]
        inside: Vec<String>,
    },
    /// Remove namespaces left behind by brisk processes that are gone.
    Clean,
}

fn emu_config(p: &PathArgs) -> anyhow::Result<EmuConfig> {
    let rtt = p.rtt;
    let rate = p.rate.map(Rate);
    let loss = p.loss.map(|p| LossSpec::Bernoulli { p });
    let mut bottleneck = PathSpec {
        rate,
        loss: loss.clone(),
        queue: p.queue.clone(),
        jitter: p.jitter.map(|j| brisk_scenario::link::JitterSpec {
            max: Dur(j),
            reorder: false,
        }),
        trace: p.trace.as_ref().map(|t| t.display().to_string().into()),
        ..PathSpec::default()
    };
    let mut reverse = PathSpec {
        rate: p.uplink_rate.map(Rate),
        loss,
        trace: p
            .uplink_trace
            .as_ref()
            .map(|t| t.display().to_string().into()),
        ..PathSpec::default()
    };
    for (spec, flag) in [
        (&mut bottleneck, "--trace"),
        (&mut reverse, "--uplink-trace"),
    ] {
        brisk_scenario::input::load_link_trace(spec, std::path::Path::new(""), flag)
            .map_err(|e| anyhow::anyhow!("{flag}: {}", e.message))?;
    }
    Ok(EmuConfig {
        rtt: Some(Dur(rtt)),
        bottleneck,
        reverse: Some(reverse),
        seed: 1,
    })
}

fn build(p: &PathArgs, stack: StackConfig, limit: Option<Duration>) -> anyhow::Result<BriskLab> {
    let cfg = emu_config(p)?;
    let opts = emu_options(p, "brisk.pcap", "kernel.pcap")?;
    Ok(BriskLab::new(&cfg, stack, opts, limit)?)
}

/// A random ISN secret and seed per run, each drawn from the OS on its own. If the
/// OS RNG fails the lab does not start: a known ISN secret would make every ISN
/// predictable (RFC 6528), so there is no fallback.
fn stack_config() -> anyhow::Result<StackConfig> {
    // Drawn first, so a failing OS RNG is reported here as an error rather than by
    // the panic of `EndpointConfig::default()` inside `StackConfig::new`.
    let endpoint = brisk_tcp::EndpointConfig::from_os_rng()
        .map_err(|e| anyhow::anyhow!("cannot seed brisk's ISN secret and RNG: {e}"))?;
    let mut cfg = StackConfig::new(BRISK_ADDR);
    cfg.endpoint = endpoint;
    Ok(cfg)
}

pub fn cmd_lab(args: LabArgs) -> anyhow::Result<()> {
    match args.cmd {
        LabCmd::Clean => {
            let removed = brisk_emu::clean_leftovers()?;
            if removed.is_empty() {
                println!("no leftover brisk namespaces");
            }
            for n in removed {
                println!("removed namespace {n}");
            }
            Ok(())
        }
        LabCmd::Send {
            path,
            bytes,
            cc,
            json,
            interval,
        } => send(&path, bytes, &cc, json, interval),
        LabCmd::Shell {
            path,
            outside,
            paths: Some(file),
            for_,
            inside,
        } => multipath_shell(&path, &file, outside, for_, inside),
        LabCmd::Shell {
            path,
            outside,
            paths: None,
            for_,
            inside,
        } => shell(&path, outside, for_, inside),
        LabCmd::Bufferbloat { duration, out } => {
            let r = brisk_repro::bufferbloat::real_bufferbloat(duration)?;
            r.write_dir(&out)?;
            print!("{}", r.table());
            println!("wrote {}", out.display());
            Ok(())
        }
        LabCmd::Up {
            path,
            serve,
            echo,
            sink,
            port,
            for_,
        } => up(&path, serve, echo, sink, port, for_),
    }
}

/// The inside command is what follows `--`; a program name beginning with '-' is a
/// flag's value that went astray (`--rate -- -5`), never something to run.
fn check_inside(inside: &[String]) -> anyhow::Result<()> {
    if let Some(prog) = inside.first().filter(|p| p.starts_with('-')) {
        anyhow::bail!(
            "the inside command (after `--`) must be a program, not {prog:?}; a flag's value goes right after the flag, e.g. `--rate 5Mbit`"
        );
    }
    Ok(())
}

fn shell(
    p: &PathArgs,
    outside: Option<String>,
    for_: Duration,
    inside: Vec<String>,
) -> anyhow::Result<()> {
    // Everything that can fail before the lab exists fails before the banner.
    check_inside(&inside)?;
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        anyhow::bail!("brisk lab shell cannot run here: {why}");
    }
    let cfg = emu_config(p)?;
    let opts = emu_options(p, "outside.pcap", "inside.pcap")?;
    let v6 = if p.ipv6 {
        " (IPv6: outside 2001:db8:18::1, inside 2001:db8:18::2)"
    } else {
        ""
    };
    eprintln!(
        "brisk lab shell: outside 198.18.0.1 <-> emulator <-> inside 198.18.0.2{v6} (MAHIMAHI_BASE=198.18.0.1); exit the inside command to tear down"
    );
    let shell = brisk_emu::tools::shell::ShellConfig {
        outside,
        outside_settle: std::time::Duration::from_millis(300),
        inside,
        limit: Some(for_),
        ipv6: p.ipv6,
    };
    let r = brisk_emu::tools::shell::run_shell(&cfg, &shell, opts)?;
    let (f, b) = (&r.emulator.forward, &r.emulator.reverse);
    eprintln!(
        "brisk lab shell: {:.1} s; downlink {} packets delivered, {} dropped; uplink {} delivered, {} dropped",
        r.emulator.elapsed_s,
        f.delivered_packets,
        f.dropped_queue_full + f.dropped_loss + f.dropped_outage + f.dropped_overflow,
        b.delivered_packets,
        b.dropped_queue_full + b.dropped_loss + b.dropped_outage + b.dropped_overflow,
    );
    // (The emulator has already printed its warnings, if any, to stderr.)
    if r.emulator.health.is_clean() {
        eprintln!(
            "brisk lab shell: emulator clean (busy {:.0} %, delivery error p99 {:.1} us)",
            r.emulator.health.busy_fraction * 100.0,
            r.emulator.health.late_p99_us
        );
    }
    match r.status.code() {
        Some(0) => Ok(()),
        Some(c) => anyhow::bail!("the inside command exited with status {c}"),
        None => anyhow::bail!("the inside command was killed ({})", r.status),
    }
}

/// `brisk lab shell --paths FILE`: the multipath lab (brisk_emu::tools::multipath).
fn multipath_shell(
    p: &PathArgs,
    file: &std::path::Path,
    outside: Option<String>,
    for_: Duration,
    inside: Vec<String>,
) -> anyhow::Result<()> {
    use brisk_emu::tools::multipath::{addr_a, addr_b, MultiPathConfig, MultiPathOptions};
    check_inside(&inside)?;
    let text = std::fs::read_to_string(file)
        .map_err(|e| anyhow::anyhow!("--paths {}: {e}", file.display()))?;
    let cfg = MultiPathConfig::from_toml(&text)
        .map_err(|e| anyhow::anyhow!("--paths {}: {e}", file.display()))?;
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        anyhow::bail!("brisk lab shell cannot run here: {why}");
    }
    if let Some(d) = &p.pcap {
        std::fs::create_dir_all(d).map_err(|e| anyhow::anyhow!("creating {}: {e}", d.display()))?;
    }
    let opts = MultiPathOptions {
        pcap_dir: p.pcap.clone(),
        limit: Some(for_),
        ..MultiPathOptions::default()
    };
    let n = cfg.paths.len();
    let pairs: Vec<String> = (0..n)
        .map(|k| format!("path {k}: outside {} <-> inside {}", addr_a(k), addr_b(k)))
        .collect();
    eprintln!(
        "brisk lab shell: {n} paths ({}); BRISK_OUTSIDE_k, BRISK_INSIDE_k, BRISK_DEV_k name them; exit the inside command to tear down",
        pairs.join("; ")
    );
    let shell = brisk_emu::tools::shell::ShellConfig {
        outside,
        outside_settle: std::time::Duration::from_millis(300),
        inside,
        limit: Some(for_),
        ipv6: false,
    };
    let r = brisk_emu::tools::shell::run_multipath_shell(&cfg, &shell, &opts)?;
    for (k, e) in r.paths.iter().enumerate() {
        let (f, b) = (&e.forward, &e.reverse);
        eprintln!(
            "brisk lab shell: path {k}: downlink {} packets ({} bytes) delivered, {} dropped, {} MPTCP-stripped; uplink {} ({} bytes) delivered, {} dropped, {} MPTCP-stripped",
            f.delivered_packets,
            f.delivered_bytes,
            f.dropped_queue_full + f.dropped_loss + f.dropped_outage + f.dropped_overflow,
            f.mptcp_stripped_packets,
            b.delivered_packets,
            b.delivered_bytes,
            b.dropped_queue_full + b.dropped_loss + b.dropped_outage + b.dropped_overflow,
            b.mptcp_stripped_packets,
        );
    }
    match r.status.code() {
        Some(0) => Ok(()),
        Some(c) => anyhow::bail!("the inside command exited with status {c}"),
        None => anyhow::bail!("the inside command was killed ({})", r.status),
    }
}

fn send(p: &PathArgs, bytes: u64, cc: &str, json: bool, interval: Duration) -> anyhow::Result<()> {
    let cc = match cc {
        "cubic" => brisk_tcp::cc::CcAlgorithm::Cubic,
        "reno" => brisk_tcp::cc::CcAlgorithm::Reno,
        other => anyhow::bail!("--cc: brisk has reno and cubic, not {other:?}"),
    };
    let mut stack = stack_config()?;
    let addr = if p.ipv6 {
        stack.local6 = Some(BRISK_ADDR6);
        SocketAddr::from((KERNEL_ADDR6, 5001))
    } else {
        SocketAddr::from((KERNEL_ADDR, 5001))
    };
    let lab = build(p, stack, Some(Duration::from_secs(3600)))?;
    let l = lab
        .kernel()
        .run_in(move || std::net::TcpListener::bind(addr))??;
    let every = std::time::Duration::from_nanos(interval.as_nanos() as u64);
    // The receiver's congestion control and CPU are for the JSON report.
    type Rx = (
        tools::TransferReport,
        Vec<tools::Interval>,
        String,
        iperf_json::Cpu,
    );
    let rx = std::thread::spawn(move || -> std::io::Result<Rx> {
        let (mut s, _) = l.accept()?;
        let cpu0 = iperf_json::Cpu::thread();
        let (got, intervals) = tools::interval_sink(&mut s, u64::MAX, every)?;
        let cc = iperf_json::tcp_congestion(&s).unwrap_or_default();
        Ok((got, intervals, cc, iperf_json::Cpu::thread().since(cpu0)))
    });
    let mut tcp = brisk_tcp::Config::default();
    tcp.congestion.controller = cc.into();
    let mut c = brisk_emu::TcpStream::connect_with(
        lab.stack(),
        addr,
        tcp,
        Some(std::time::Duration::from_secs(5)),
    )?;
    let local = c.local_addr();
    let cpu0 = iperf_json::Cpu::process();
    let read_info = |c: &brisk_emu::TcpStream| c.info();
    let mut w = iperf_json::Sampler::new(&mut c, &read_info, every);
    let sent = tools::source(&mut w, bytes, 1)?;
    let send_s = w.elapsed();
    w.sample();
    let (t0, mut samples) = w.into_parts();
    let info = samples.last().map(|s| s.info.clone());
    c.shutdown(Shutdown::Write)?;
    if json {
        // Per-interval counters while the data drains, until the receiver has it all.
        let mut w = iperf_json::Sampler::resume(&mut c, &read_info, every, t0, samples);
        w.sample_until(|| rx.is_finished(), std::time::Duration::from_secs(3600));
        samples = w.into_parts().1;
    }
    let (got, intervals, receiver_cc, remote_cpu) = rx
        .join()
        .map_err(|_| anyhow::anyhow!("receiver panicked"))??;
    if json {
        // The last reading, after the receiver saw the end, holds every retransmission.
        if let Some(info) = c.info() {
            let at = t0.elapsed().as_secs_f64();
            samples.push(iperf_json::Sample { at, info });
        }
        let report = iperf_json::report(&iperf_json::IperfRun {
            local: local.ok(),
            remote: addr,
            cc: cc.name(),
            receiver_cc,
            bytes,
            interval: every.as_secs_f64(),
            send_s,
            samples: &samples,
            got: &got,
            intervals: &intervals,
            intact: got.digest == sent,
            host_cpu: iperf_json::Cpu::process().since(cpu0),
            remote_cpu,
            wall_s: got.seconds,
            mss: u32::from(brisk_tcp::Config::default().mss),
        });
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
        "brisk -> Linux: {} bytes in {:.2} s = {:.1} Mbit/s; intact: {}; brisk srtt {:.2} ms, retransmits {}",
        got.digest.bytes,
        got.seconds,
        got.goodput_bps / 1e6,
        got.digest == sent,
        info.as_ref().map_or(f64::NAN, |i| i.srtt.as_secs_f64() * 1e3),
        info.as_ref().map_or(0, |i| i.retransmits),
    );
    }
    drop(c);
    lab.stop()?;
    anyhow::ensure!(
        got.digest == sent,
        "received data differs from the sent data"
    );
    Ok(())
}

fn up(
    p: &PathArgs,
    serve: Option<PathBuf>,
    echo: bool,
    sink: bool,
    port: Option<u16>,
    for_: Duration,
) -> anyhow::Result<()> {
    let life = for_;
    let port = port.unwrap_or(if serve.is_some() { 80 } else { 7 });
    // The loop outlives the accept loop, which stops at `--for`.
    let mut stack = stack_config()?;
    if p.ipv6 {
        // BriskLab puts it at BRISK_ADDR6 and the kernel at KERNEL_ADDR6.
        stack.local6 = Some(BRISK_ADDR6);
    }
    let lab = build(p, stack, Some(life.saturating_add(Duration::from_secs(10))))?;
    // Listening for the stack's life; the server accepts from the endpoint directly.
    let _listener = lab.stack().listen(port)?;
    let ns = lab.kernel().name().to_string();
    let mode = match (&serve, echo, sink) {
        (Some(d), _, _) => format!("HTTP files from {}", d.display()),
        (None, _, true) => "sink".to_string(),
        _ => "echo".to_string(),
    };
    println!("brisk lab up: brisk {BRISK_ADDR}:{port} ({mode}) <-> emulator <-> Linux {KERNEL_ADDR} in netns {ns}");
    if p.ipv6 {
        println!("      IPv6: brisk [{BRISK_ADDR6}]:{port} <-> Linux {KERNEL_ADDR6}");
    }
    println!("try:  ip netns exec {ns} curl -o /dev/null http://{BRISK_ADDR}:{port}/FILE");
    println!("      ip netns exec {ns} nc {BRISK_ADDR} {port}");
    if p.ipv6 {
        println!("      ip netns exec {ns} nc {BRISK_ADDR6} {port}");
    }
    println!(
        "Ctrl-C (or --for {}) tears everything down.",
        brisk_sim::units::Dur(for_)
    );
    let _ = std::io::stdout().flush();
    let deadline =
        std::time::Instant::now() + std::time::Duration::from_nanos(life.as_nanos() as u64);
    // One thread serves every connection from the endpoint's events (no thread per
    // connection: 20 000 idle clients used to make thousands of threads).
    let mut service = LabService {
        serve: serve.map(std::sync::Arc::new),
        sink,
    };
    let stats = brisk_emu::serve::serve(
        lab.stack(),
        port,
        &mut service,
        &brisk_emu::serve::ServeConfig::default(),
        deadline,
    )?;
    eprintln!(
        "brisk lab up: served {} connections (at most {} at once), {} reset after 60 s idle",
        stats.accepted, stats.peak_open, stats.idle_resets
    );
    lab.stop()?;
    Ok(())
}

/// What `lab up` serves on each connection.
struct LabService {
    serve: Option<std::sync::Arc<PathBuf>>,
    sink: bool,
}

impl brisk_emu::serve::Service for LabService {
    fn open(&mut self, _peer: SocketAddr) -> Box<dyn brisk_emu::serve::Session> {
        use brisk_emu::serve::{Echo, HttpFiles, Sink};
        match (&self.serve, self.sink) {
            (Some(dir), _) => Box::new(HttpFiles::new(std::sync::Arc::clone(dir))),
            (None, true) => Box::<Sink>::default(),
            (None, false) => Box::<Echo>::default(),
        }
    }

    fn closed(&mut self, peer: SocketAddr, outcome: std::io::Result<String>) {
        match outcome {
            Ok(m) => println!("{peer}: {m}"),
            Err(e) => println!("{peer}: error: {e}"),
        }
    }
}

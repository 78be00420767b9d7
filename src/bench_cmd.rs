//! `brisk bench sim|scale|net|flows`: the simulator's benchmarks, each printing its
//! peer (ns-3 where it is installed) measured in the same run, and a ratio
//! (docs/performance.md). `brisk bench emu|real` are in `real_cmd`.

use brisk_emu::emu::health::thread_cpu_s;
use brisk_sim::{RunOptions, Scenario};
use brisk_time::Duration;

use crate::args;
use std::path::Path;
use std::process::Command;

/// The standard benchmark scenario, shipped with the binary.
const BENCH_SCENARIO: &str = include_str!("../scenarios/bench-1g.toml");
/// The network benchmark's scenario, shipped with the binary.
const NET_BENCH_SCENARIO: &str = include_str!("../scenarios/rc3-internet2-small.toml");
/// The equivalent ns-3 script, relative to the working directory.
const NS3_SCRIPT: &str = "bench/ns3/bufferbloat.py";

/// The process's peak resident set so far (Linux `VmHWM`), MB; None elsewhere.
fn peak_rss_mb() -> Option<f64> {
    proc_status_mb("VmHWM:")
}

/// A `kB` field of `/proc/self/status`, in MB.
fn proc_status_mb(key: &str) -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb: f64 = s
        .lines()
        .find(|l| l.starts_with(key))?
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

/// `brisk bench net`: wall time, simulated seconds per wall second, events and flows
/// per wall second of the small Internet2 workload at three loads.
pub fn cmd_bench_net(
    flows: u32,
    rate: u64,
    hosts_per_router: Option<u32>,
    rc3: bool,
) -> anyhow::Result<()> {
    let text = net_bench_text(rate, hosts_per_router, rc3);
    let mut sc = brisk_sim::topo_build::from_toml_str_named(&text, "rc3-internet2-small.toml")?;
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

/// `brisk bench flows`' settings.
#[derive(clap::Args)]
pub struct FlowsBench {
    /// Flows generated, 1 to 200 000.
    #[arg(long, default_value_t = 100_000, value_parser = clap::value_parser!(u32).range(1..=200_000))]
    pub flows: u32,
    /// Core and access rate: with `--load` it sets the arrival rate.
    #[arg(long, default_value = "10Gbit", value_parser = args::rate)]
    pub rate: u64,
    /// Offered mean core load, in (0, 1].
    #[arg(long, default_value = "1", value_parser = args::load)]
    pub load: f64,
    /// Hosts per router (10 routers).
    #[arg(long, default_value_t = 100, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub hosts_per_router: u32,
    /// One-way delay of every host's access link.
    #[arg(long, default_value = "500ms", value_parser = args::positive_duration)]
    pub access_delay: Duration,
    /// Every connection's send buffer in bytes (the shipped scenario's is 8 MB,
    /// which would hold each open flow whole, 189 KB on average), 1 KiB to 1 GiB.
    #[arg(long, default_value_t = 65_536, value_parser = clap::value_parser!(u64).range(1024..=1 << 30))]
    pub send_buffer: u64,
    /// Simulated time to run (the arrivals span flows / λ; see the printed λ).
    #[arg(long, default_value = "2s", value_parser = args::positive_duration)]
    pub duration: Duration,
}

/// The resident set now (`VmRSS`), in MB.
fn rss_mb() -> Option<f64> {
    proc_status_mb("VmRSS:")
}

pub fn cmd_bench_flows(b: &FlowsBench) -> anyhow::Result<()> {
    use brisk_sim::units::{Dur, Rate, Size};
    let text = net_bench_text(b.rate, Some(b.hosts_per_router), true);
    let mut sc = brisk_sim::topo_build::from_toml_str_named(&text, "rc3-internet2-small.toml")?;
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

/// How this binary was built, for the benchmarks' reports: `scripts/pgo-build.sh`
/// sets `BRISK_PGO` (`gen` for the instrumented training build, `use` for the LTO
/// optimised one), and build.rs records the cargo profile (`BRISK_PROFILE`), so a
/// speed figure always says which build it came from.
fn build_kind() -> &'static str {
    match (option_env!("BRISK_PGO"), env!("BRISK_PROFILE")) {
        (Some("use"), _) => "profile-guided release build with LTO (scripts/pgo-build.sh)",
        (Some("gen"), _) => "instrumented PGO training build: its times are not representative",
        _ if cfg!(debug_assertions) => "debug build: its times are not representative",
        (_, "release") => "release build (fat LTO, one codegen unit)",
        (_, "ci") => {
            "ci-profile build (the tests' profile: no LTO, 16 codegen units; slower than release)"
        }
        _ => "optimised build of another cargo profile",
    }
}

/// The global allocator (the opt-in `mimalloc` feature; main.rs), so an A/B of the
/// two says which side each run was.
fn allocator() -> &'static str {
    if cfg!(feature = "mimalloc") {
        "mimalloc allocator"
    } else {
        "system allocator"
    }
}

pub fn cmd_bench_sim(
    d: Duration,
    repeat: u32,
    no_ns3: bool,
    no_aqm: bool,
    no_mptcp: bool,
    no_cc: bool,
) -> anyhow::Result<()> {
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
    println!("  binary           {}; {}", build_kind(), allocator());
    // The runs are deterministic, so only the time differs between them; the median
    // is what the shared machine's drift disturbs least. With ns-3 to run, half of
    // brisk's runs go before it and half after: ns-3 takes minutes, over which this
    // VM's speed drifts by tens of percent, and the median of runs on both sides of it
    // is the fairer partner for its one run.
    let with_ns3 = if no_ns3 { None } else { ns3_python(NS3_SCRIPT) };
    let before = if with_ns3.is_some() {
        repeat.div_ceil(2)
    } else {
        repeat
    };
    let mut walls = Vec::new();
    let mut cpus = Vec::new();
    let mut res = None;
    let mut run_brisk = |n: u32| -> anyhow::Result<()> {
        for _ in 0..n {
            // The simulator runs on this thread: the difference is the run's CPU time,
            // whatever else the machine does.
            let (t0, c0) = (std::time::Instant::now(), thread_cpu_s());
            let r = brisk_sim::run_with(&sc, sc.seed, &opts)?;
            walls.push(t0.elapsed().as_secs_f64().max(1e-9));
            cpus.push((thread_cpu_s() - c0).max(1e-9));
            res = Some(r);
        }
        Ok(())
    };
    run_brisk(before)?;
    let ns3 = with_ns3.as_ref().map(|py| run_ns3(py, sim_s));
    run_brisk(repeat - before)?;
    let res = res.expect("repeat >= 1");
    walls.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let wall = median(&walls);
    let cpu = median(&cpus);
    let f = res.flows.first();
    let goodput = f.map_or(0.0, |f| f.goodput_bps);
    let rtt = f.and_then(|f| f.rtt).map(|r| r.mean / 1e6);
    let split = if with_ns3.is_some() {
        format!(", {before} before ns-3 and {} after", repeat - before)
    } else {
        String::new()
    };
    println!(
        "  wall time        {wall:.3} s  (median of {repeat}{split}; min {:.3}, max {:.3})",
        walls[0],
        walls[walls.len() - 1]
    );
    println!(
        "  CPU time         {cpu:.3} s  (median; min {:.3}, max {:.3})",
        cpus[0],
        cpus[cpus.len() - 1]
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
        if !no_cc {
            bench_sim_ccs(
                BENCH_SCENARIO,
                d,
                &opts,
                res.engine.events as f64 / wall,
                cpu,
            )?;
        }
    }
    if !no_mptcp {
        let one = brisk_tcp::mptcp::MptcpConfig::default();
        bench_sim_mptcp(&sc, &opts, repeat, (wall, cpu), &res, 1, one)?;
        // Issue 36 §4's target: two subflows (ndiffports over the one path, each
        // with its own source port) at <= 1.25x a TCP segment's CPU.
        let mut two = brisk_tcp::mptcp::MptcpConfig::default();
        two.pm.mode = brisk_tcp::mptcp::pm::PmMode::NDiffPorts { n: 2 };
        bench_sim_mptcp(&sc, &opts, repeat, (wall, cpu), &res, 2, two)?;
        bench_sim_fse(BENCH_SCENARIO, d, &opts, repeat)?;
    }
    match ns3 {
        _ if no_ns3 => {}
        Some(Ok(n)) => {
            println!("ns-3 ({NS3_SCRIPT}, one run, `Simulator::Run` alone):");
            println!(
                "  wall time        {:.3} s  (brisk's median is {:.1}x faster; {:.1}x to {:.1}x over brisk's max and min)",
                n.wall_s,
                n.wall_s / wall,
                n.wall_s / walls[walls.len() - 1],
                n.wall_s / walls[0]
            );
            if let Some(c) = n.cpu_s {
                println!(
                    "  CPU time         {c:.3} s  (brisk's median uses {:.1}x less)",
                    c / cpu
                );
            }
            println!(
                "  goodput          {:.1} Mbit/s  (brisk {:.1}, ratio {:.4})",
                n.goodput_bps / 1e6,
                goodput / 1e6,
                goodput / n.goodput_bps
            );
            let ours = rtt.map_or("n/a".into(), |r| {
                format!("{r:.2}, ratio {:.4}", r / n.rtt_ms)
            });
            println!("  mean RTT         {:.2} ms  (brisk {ours})", n.rtt_ms);
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

/// The standard flow with every controller of `brisk_repro::roster::CONTROLLERS` built
/// here (issue 35 §4), one run each, as events/s and CPU time against unpaced CUBIC's
/// median (`base_eps`, `base_cpu`) from the same invocation; then paced CUBIC, and the
/// pacing target: paced BBR's CPU time at most 1.2x unpaced CUBIC's. One run per line
/// on a shared machine: the numbers are indicative (docs/performance.md).
fn bench_sim_ccs(
    text: &str,
    d: Duration,
    opts: &RunOptions,
    base_eps: f64,
    base_cpu: f64,
) -> anyhow::Result<()> {
    println!(
        "per controller (brisk_repro::roster::CONTROLLERS, one run each; ratios to unpaced CUBIC's median above; indicative on a loaded machine):"
    );
    let one = |label: &str, cc: &str, tcp: &str| -> anyhow::Result<f64> {
        let text = text.replace("cc = \"cubic\"", &format!("cc = \"{cc}\""));
        let mut v = Scenario::from_toml_str_named(&format!("{text}[flow.tcp]\n{tcp}"), label)?;
        v.duration = brisk_sim::units::Dur(d);
        let (t0, c0) = (std::time::Instant::now(), thread_cpu_s());
        let r = brisk_sim::run_with(&v, v.seed, opts)?;
        let w = t0.elapsed().as_secs_f64().max(1e-9);
        let cpu = (thread_cpu_s() - c0).max(1e-9);
        let eps = r.engine.events as f64 / w;
        println!(
            "  {label:<16} {eps:>10.0} events/s ({:.2}x), CPU {cpu:.3} s ({:.2}x), events {}, goodput {:.1} Mbit/s, mean queue {}",
            eps / base_eps,
            cpu / base_cpu,
            r.engine.events,
            r.flows.first().map_or(0.0, |f| f.goodput_bps) / 1e6,
            r.bottleneck
                .queue_delay
                .map_or("-".into(), |q| format!("{:.2} ms", q.mean / 1e6))
        );
        Ok(cpu)
    };
    let mut bbr_cpu = None;
    for (c, _) in brisk_repro::roster::built() {
        let cpu = one(c.label, c.cc, c.tcp)?;
        if c.cc == "bbr" {
            bbr_cpu = Some(cpu);
        }
    }
    let missing: Vec<&str> = brisk_repro::roster::CONTROLLERS
        .iter()
        .filter(|c| c.algorithm().is_none())
        .map(|c| c.label)
        .collect();
    if !missing.is_empty() {
        println!("  not built here yet: {}", missing.join(", "));
    }
    one("paced CUBIC", "cubic", "pacing = true\n")?;
    if let Some(cpu) = bbr_cpu {
        let ratio = cpu / base_cpu;
        println!(
            "  pacing target    paced BBR's CPU time {ratio:.2}x unpaced CUBIC's (target <= 1.2x): {}",
            if ratio <= 1.2 { "pass" } else { "miss" }
        );
    }
    Ok(())
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
            brisk_scenario::link::QueueSpec::Codel {
                target: None,
                interval: None,
                packets: None,
                ecn: false,
            },
        ),
        (
            "FQ-CoDel",
            brisk_scenario::link::QueueSpec::FqCodel {
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
            brisk_scenario::link::QueueSpec::Prio {
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

/// The same flow as MPTCP (RFC 8684: both ends offer MP_CAPABLE and every segment
/// carries a DSS) with `subflows` subflows (`cfg`; two are ndiffports over the one
/// path), `repeat` runs as the TCP line, as events/s and CPU per packet against TCP's
/// (`tcp`: its median wall and CPU time, `base` its run). The transfer must be whole,
/// still MPTCP at the end and use every subflow, or the line is an error, so the bench
/// cannot pass on a broken or fallen-back transfer.
fn bench_sim_mptcp(
    sc: &Scenario,
    opts: &RunOptions,
    repeat: u32,
    tcp: (f64, f64),
    base: &brisk_sim::RunResult,
    subflows: usize,
    cfg: brisk_tcp::mptcp::MptcpConfig,
) -> anyhow::Result<()> {
    let mp = RunOptions {
        mptcp: Some(cfg),
        ..opts.clone()
    };
    let (mut walls, mut cpus, mut res) = (Vec::new(), Vec::new(), None);
    for _ in 0..repeat {
        let (t0, c0) = (std::time::Instant::now(), thread_cpu_s());
        let r = brisk_sim::run_with(sc, sc.seed, &mp)?;
        walls.push(t0.elapsed().as_secs_f64().max(1e-9));
        cpus.push((thread_cpu_s() - c0).max(1e-9));
        res = Some(r);
    }
    let r = res.expect("repeat >= 1");
    let f = r
        .flows
        .first()
        .ok_or_else(|| anyhow::anyhow!("MPTCP run: no flow"))?;
    // The per-byte pattern check stays on in the benchmark (only the SHA-256 digests
    // are skipped): `stream_ok` is false on any wrong, missing or extra byte.
    if !f.stream_ok || f.bytes_delivered == 0 || f.error.is_some() {
        anyhow::bail!(
            "MPTCP run: transfer broken ({} bytes delivered, stream check {}, error {:?})",
            f.bytes_delivered,
            if f.stream_ok { "passed" } else { "failed" },
            f.error
        );
    }
    if !f.mptcp {
        anyhow::bail!("MPTCP run: the connection is not MPTCP at the end (fell back to TCP)");
    }
    if f.mptcp_subflows.len() < subflows {
        anyhow::bail!(
            "MPTCP run: {} subflow(s) at the end, {subflows} asked for",
            f.mptcp_subflows.len()
        );
    }
    walls.sort_by(f64::total_cmp);
    cpus.sort_by(f64::total_cmp);
    let (wall, cpu) = (median(&walls), median(&cpus));
    let eps = r.engine.events as f64 / wall;
    let tcp_eps = base.engine.events as f64 / tcp.0;
    // A packet's cost: CPU time per packet the engine moved, MPTCP's over TCP's (the
    // issue's target: at most 1.25x).
    let per_pkt = cpu / r.engine.packets.max(1) as f64;
    let tcp_per_pkt = tcp.1 / base.engine.packets.max(1) as f64;
    let label = if subflows == 1 {
        "MPTCP, 1 subflow ".to_string()
    } else {
        format!("MPTCP, {subflows} subflows")
    };
    let ratio = per_pkt / tcp_per_pkt;
    let target = if subflows == 2 {
        format!(
            "; target <= 1.25x: {}",
            if ratio <= 1.25 { "pass" } else { "miss" }
        )
    } else {
        String::new()
    };
    println!(
        "  {label} {eps:.0} events/s ({:.2}x TCP's), {:.0} ns CPU per packet ({ratio:.2}x TCP's {:.0}{target}), goodput {:.1} Mbit/s, {} events, bytes checked (median of {repeat})",
        eps / tcp_eps,
        per_pkt * 1e9,
        tcp_per_pkt * 1e9,
        f.goodput_bps / 1e6,
        r.engine.events
    );
    Ok(())
}

/// Two CUBIC flows of the standard path coupled by the FSE (`[flow.tcp.fse]`, one
/// group, the conservative active algorithm by default; docs/mechanisms/fse.md)
/// against the same two flows uncoupled, `repeat` runs each, as CPU per packet. The
/// coupled state is reached by index through the lent host state, with no lock and no
/// allocation per ACK (`crates/brisk-tcp/tests/fse_alloc.rs` asserts both); this line
/// is what that costs per packet.
fn bench_sim_fse(text: &str, d: Duration, opts: &RunOptions, repeat: u32) -> anyhow::Result<()> {
    let pair = |fse: &str| -> anyhow::Result<(f64, brisk_sim::RunResult)> {
        let t = text.replace("cc = \"cubic\"", "cc = \"cubic\"\ncount = 2");
        let mut v = Scenario::from_toml_str_named(&format!("{t}{fse}"), "bench-fse")?;
        v.duration = brisk_sim::units::Dur(d);
        let (mut cpus, mut res) = (Vec::new(), None);
        for _ in 0..repeat {
            let c0 = thread_cpu_s();
            let r = brisk_sim::run_with(&v, v.seed, opts)?;
            cpus.push((thread_cpu_s() - c0).max(1e-9));
            res = Some(r);
        }
        cpus.sort_by(f64::total_cmp);
        let r = res.expect("repeat >= 1");
        for f in &r.flows {
            if !f.stream_ok || f.bytes_delivered == 0 || f.error.is_some() {
                anyhow::bail!("FSE line: a transfer is broken ({:?})", f.error);
            }
        }
        Ok((median(&cpus) / r.engine.packets.max(1) as f64, r))
    };
    let (plain, pr) = pair("")?;
    let (fse, fr) = pair("[flow.tcp.fse]\ngroup = \"bench\"\n")?;
    let gp = |r: &brisk_sim::RunResult| r.flows.iter().map(|f| f.goodput_bps).sum::<f64>() / 1e6;
    println!(
        "  FSE, 2 flows     {:.0} ns CPU per packet ({:.2}x the same 2 flows uncoupled, {:.0} ns), goodput {:.1} Mbit/s (uncoupled {:.1}), no lock and no allocation per ACK (tests/fse_alloc.rs) (median of {repeat})",
        fse * 1e9,
        fse / plain,
        plain * 1e9,
        gp(&fr),
        gp(&pr)
    );
    Ok(())
}

/// One point of `brisk bench scale`: the scenario of `n` flows.
///
/// Each flow's send buffer is its share of twice the path's BDP plus queue, between
/// 64 KB and 4 MiB: the bulk app keeps its send buffer full, and a fixed 4 MiB would
/// make every point measure N × 4 MiB of queued app data (40 GB at N = 10^4) where
/// Linux's send-buffer autotuning holds about 2 × cwnd per flow.
///
/// With `bytes`, each flow sends that many bytes and closes (the short flows:
/// 10^4 flows of 20 KB through one 1 Gbit/s bottleneck), with the default send buffer.
fn scale_scenario(n: u32, d: Duration, rate: u64, bytes: Option<u64>) -> anyhow::Result<Scenario> {
    let bdp_and_queue = rate / 8 / 100 + 1000 * 1500; // 10 ms of the rate, 1000 packets
    let sndbuf = (2 * bdp_and_queue / u64::from(n.max(1))).clamp(64 << 10, 4 << 20);
    let (app, tcp) = match bytes {
        Some(b) => (format!("{{ kind = \"bulk\", bytes = {b} }}"), String::new()),
        None => (
            "{ kind = \"bulk\" }".to_string(),
            format!("tcp = {{ send_buffer = {sndbuf} }}\n"),
        ),
    };
    let text = format!(
        "name = \"scale-{n}\"\nseed = 1\nduration = \"{}ns\"\n\n[bottleneck]\nrate = \"{rate}bit\"\n\
         queue = {{ kind = \"droptail\", packets = 1000 }}\n\n[[flow]]\nrtt = \"10ms\"\n\
         cc = \"cubic\"\ncount = {n}\nip = \"v6\"\napp = {app}\n{tcp}",
        d.as_nanos()
    );
    Ok(Scenario::from_toml_str_named(&text, "bench-scale")?)
}

/// `brisk bench scale`: each N runs in a child process (this binary with `--one`), so
/// its peak RSS is not a running maximum over earlier points.
pub fn cmd_bench_scale(
    flows: &[u32],
    d: Duration,
    rate: u64,
    one: bool,
    no_ns3: bool,
    bytes: Option<u64>,
) -> anyhow::Result<()> {
    if one {
        let &[n] = flows else {
            anyhow::bail!("--one takes one flow count");
        };
        let sc = scale_scenario(n, d, rate, bytes)?;
        let opts = RunOptions {
            skip_stream_hashes: true,
            ..RunOptions::default()
        };
        // The build (hosts, links, patterns) is timed apart, so that events/s is the
        // engine's rate; the run takes the network built here (it used to build a
        // second one only to time it: at 10^5 flows that was a fifth of the process's
        // instructions).
        let t0 = std::time::Instant::now();
        let mut net = brisk_sim::build_for(&sc, sc.seed, &opts)?;
        let build = t0.elapsed().as_secs_f64();
        let t0 = std::time::Instant::now();
        let r = brisk_sim::run_network(&sc, sc.seed, &mut net, &opts, &mut |_| true)?;
        let wall = t0.elapsed().as_secs_f64().max(1e-9);
        // This process exits after printing one line: the network and the result are
        // left to the OS, not freed one allocation at a time (as `brisk run` does; the
        // teardown was ~0.7 G instructions and 7 M `free`s at 10^5 flows, inside the
        // timed run until `run_network` borrowed the network).
        std::mem::forget(net);
        let goodput: f64 = r.flows.iter().map(|f| f.goodput_bps).sum();
        let active = r.flows.iter().filter(|f| f.goodput_bps > 0.0).count();
        let done = r.flows.iter().filter(|f| f.fct.is_some()).count();
        let rx_bytes: u64 = r.flows.iter().map(|f| f.bytes_delivered).sum();
        println!(
            "{}",
            serde_json::json!({
                "flows": n,
                "active": active,
                "done": done,
                "rx_bytes": rx_bytes,
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
        std::mem::forget(r);
        return Ok(());
    }
    let exe = std::env::current_exe()?;
    let sim_s = d.as_secs_f64();
    let what = bytes.map_or("bulk".to_string(), |b| format!("{b}-byte"));
    println!(
        "brisk scale benchmark: N {what} CUBIC flows, one {:.0} Mbit/s bottleneck, 10 ms RTT, 1000-pkt drop-tail, IPv6, {sim_s}s each",
        rate as f64 / 1e6
    );
    println!(
        "  {:>7} {:>7} {:>7} {:>8} {:>8} {:>11} {:>11} {:>10} {:>8} {:>9} {:>11} {:>9} {:>10} {:>12}",
        "flows",
        "active",
        "done",
        "build s",
        "run s",
        "events",
        "events/s",
        "ns/event",
        "sim/wall",
        "Mbit/s",
        "peak RSS MB",
        "KB/flow",
        "KB/active",
        "early+stale"
    );
    // (peak RSS MB, flows, active flows) of the first point.
    let mut base_rss: Option<(f64, f64, f64)> = None;
    let mut brisk_1000 = None;
    for &n in flows {
        let mut cmd = Command::new(&exe);
        cmd.args(["bench", "scale", "--one", "--flows", &n.to_string()])
            .args(["--duration", &format!("{}ns", d.as_nanos())])
            .args(["--rate", &format!("{rate}bit")]);
        if let Some(b) = bytes {
            cmd.args(["--bytes", &b.to_string()]);
        }
        let out = cmd.output()?;
        if !out.status.success() {
            anyhow::bail!("N = {n}: {}", String::from_utf8_lossy(&out.stderr).trim());
        }
        let v: serde_json::Value = serde_json::from_slice(&out.stdout)?;
        let f = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
        let wall = f("wall_s");
        let rss = f("peak_rss_mb");
        // Bytes per flow: the growth of peak RSS over the first point, per added flow.
        // KB per active flow: the same growth per added flow that got data through (the
        // idle ones' memory included, so an upper bound on an active flow's).
        let per_flow = match base_rss {
            Some((b, bn, _)) if f64::from(n) > bn => {
                format!("{:.1}", (rss - b) * 1024.0 / (f64::from(n) - bn))
            }
            _ => "-".into(),
        };
        let per_active = match base_rss {
            Some((b, _, ba)) if f("active") > ba => {
                format!("{:.1}", (rss - b) * 1024.0 / (f("active") - ba))
            }
            _ => "-".into(),
        };
        if base_rss.is_none() {
            base_rss = Some((rss, f64::from(n), f("active")));
        }
        println!(
            "  {:>7} {:>7} {:>7} {:>8.2} {:>8.2} {:>11.0} {:>11.0} {:>10.0} {:>8.3} {:>9.1} {:>11.0} {:>9} {:>10} {:>12.0}",
            n,
            f("active"),
            f("done"),
            f("build_s"),
            wall,
            f("events"),
            f("events") / wall,
            wall * 1e9 / f("events"),
            sim_s / wall,
            f("goodput_bps") / 1e6,
            rss,
            per_flow,
            per_active,
            f("early") + f("stale"),
        );
        if n == PEER_FLOWS {
            brisk_1000 = Some(PeerLoad {
                wall,
                events: f("events"),
                active: f("active"),
                done: f("done"),
                rx_bytes: f("rx_bytes"),
            });
        }
    }
    if let (false, Some(b)) = (no_ns3, brisk_1000) {
        match run_ns3_scale(PEER_FLOWS, sim_s, rate, bytes) {
            Some(Ok(v)) => {
                let g = |k: &str| v[k].as_f64().unwrap_or(f64::NAN);
                let ns3 = PeerLoad {
                    wall: g("wall_s"),
                    events: g("events"),
                    active: g("active"),
                    done: g("done"),
                    rx_bytes: g("rx_bytes"),
                };
                println!("ns-3 ({NS3_SCALE_SCRIPT}), {PEER_FLOWS} flows, one run:");
                println!(
                    "  {:.0} flows got data, {:.0} finished, {:.1} MB received, {:.0} dropped at the sender  (brisk {:.0}, {:.0}, {:.1} MB)",
                    ns3.active,
                    ns3.done,
                    ns3.rx_bytes / 1e6,
                    g("sender_drops"),
                    b.active,
                    b.done,
                    b.rx_bytes / 1e6,
                );
                println!(
                    "  run {:.2} s, {:.0} events, sim s / wall s {:.3}  (brisk {:.2} s, {:.0} events, {:.3})",
                    ns3.wall,
                    ns3.events,
                    sim_s / ns3.wall,
                    b.wall,
                    b.events,
                    sim_s / b.wall,
                );
                println!("  {}", speed_ratio(&ns3, &b, bytes.is_some()));
            }
            Some(Err(e)) => println!("ns-3 run failed, skipped: {e}"),
            None => println!("ns-3 not found, skipped"),
        }
    }
    Ok(())
}

/// What one side of `bench scale`'s ns-3 comparison did at [`PEER_FLOWS`] flows.
struct PeerLoad {
    /// Wall seconds of the run alone (no build, no import).
    wall: f64,
    /// Events as the simulator counts them (brisk's and ns-3's are not the same unit).
    events: f64,
    /// Flows that received data.
    active: f64,
    /// Flows that received all their bytes (sized flows).
    done: f64,
    /// Bytes received by every sink together.
    rx_bytes: f64,
}

/// The speed line of the ns-3 comparison: a ratio only on a matched load, i.e. the same
/// flows getting data and, for sized flows, the same flows finished with the same bytes
/// (a SYN storm that lets 880 flows through in one and 198 in the other is not the same
/// work). Bulk flows' bytes follow each stack's dynamics and are printed, not matched.
fn speed_ratio(ns3: &PeerLoad, brisk: &PeerLoad, sized: bool) -> String {
    let matched = ns3.active == brisk.active
        && (!sized || (ns3.done == brisk.done && ns3.rx_bytes == brisk.rx_bytes));
    if !matched {
        return "no ratio: the loads differ (flows with data, finished or bytes), not matched"
            .into();
    }
    let per_event = |p: &PeerLoad| p.wall * 1e9 / p.events;
    let per_flow = |p: &PeerLoad| p.wall * 1e3 / p.active;
    format!(
        "matched load: brisk {:.1}x faster per flow with data ({:.2} ms against ns-3's {:.2}); per event {:.0} ns against {:.0} (events counted differently: ratio {:.1}x)",
        per_flow(ns3) / per_flow(brisk),
        per_flow(brisk),
        per_flow(ns3),
        per_event(brisk),
        per_event(ns3),
        per_event(ns3) / per_event(brisk),
    )
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
fn run_ns3_scale(
    n: u32,
    sim_s: f64,
    rate: u64,
    bytes: Option<u64>,
) -> Option<anyhow::Result<serde_json::Value>> {
    let py = ns3_python(NS3_SCALE_SCRIPT)?;
    println!("ns-3: running {NS3_SCALE_SCRIPT} with {n} flows (minutes)...");
    let mut cmd = Command::new(&py);
    cmd.arg(NS3_SCALE_SCRIPT);
    if let Some(b) = bytes {
        cmd.args(["--bytes", &b.to_string()]);
    }
    let out = cmd
        .args(["--flows", &n.to_string(), "--duration", &sim_s.to_string()])
        .args([
            "--rate",
            &format!("{rate}bps"),
            "--rate-bps",
            &rate.to_string(),
        ])
        .output();
    Some(last_json_line(out))
}

/// The last line of a script's stdout that is a JSON object (ns-3's scripts print
/// their result last), or the script's stderr as the error when it failed.
fn last_json_line(out: std::io::Result<std::process::Output>) -> anyhow::Result<serde_json::Value> {
    let out = out?;
    if !out.status.success() {
        anyhow::bail!("{}", String::from_utf8_lossy(&out.stderr).trim());
    }
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().rev().find(|l| l.trim_start().starts_with('{'));
    Ok(serde_json::from_str(line.unwrap_or("{}"))?)
}

/// Runs the ns-3 twin (`bench/ns3/bufferbloat.py`, which needs the `ns3` Python
/// wheel) if ns-3 is importable. The script prints one JSON object with `goodput_bps`,
/// `rtt_ms_mean` and `wall_s` (its simulation time only, without the slow import).
/// Returns None if ns-3 or the script is absent. The Python is `$BRISK_NS3_PYTHON`
/// (a venv with the wheel, as `brisk repro` and `bench/ns3/compare.sh` use), else
/// `python3`.
/// What `bench/ns3/bufferbloat.py` reports of its run.
struct Ns3Run {
    wall_s: f64,
    /// CPU seconds of `Simulator::Run` (None from a script that does not report it).
    cpu_s: Option<f64>,
    goodput_bps: f64,
    rtt_ms: f64,
}

/// Runs `bench/ns3/bufferbloat.py` with the Python `py` (see [`ns3_python`]).
fn run_ns3(py: &str, sim_s: f64) -> anyhow::Result<Ns3Run> {
    // ns-3 takes minutes for what brisk does in seconds: say so before the wait.
    println!("ns-3: running {NS3_SCRIPT} on the same scenario (about 50x brisk's wall time)...");
    let out = Command::new(py)
        .args([NS3_SCRIPT, "--duration", &sim_s.to_string()])
        .output();
    let v = last_json_line(out)?;
    let field = |k: &str| {
        v[k].as_f64()
            .ok_or_else(|| anyhow::anyhow!("ns-3 output lacks {k}: {v}"))
    };
    Ok(Ns3Run {
        wall_s: field("wall_s")?,
        cpu_s: v["cpu_s"].as_f64(),
        goodput_bps: field("goodput_bps")?,
        rtt_ms: field("rtt_ms_mean")?,
    })
}

/// The ns-3 twin of one `brisk bench ns3-cc` row.
const NS3_CC_SCRIPT: &str = "bench/ns3/cc.py";

/// `brisk bench ns3-cc`'s paths: (label, brisk `[bottleneck]` body, cc.py arguments).
const NS3_CC_PATHS: [(&str, &str, &[&str]); 2] = [
    (
        "bufferbloat (20 Mbit/s, 40 ms, 1000-pkt drop-tail)",
        "rate = \"20Mbit\"\nqueue = { kind = \"droptail\", packets = 1000 }\n",
        &["--queue", "1000"],
    ),
    (
        "lossy (20 Mbit/s, 40 ms, 100-pkt drop-tail, 1 % loss)",
        "rate = \"20Mbit\"\nqueue = { kind = \"droptail\", packets = 100 }\nloss = { kind = \"bernoulli\", p = 0.01 }\n",
        &["--queue", "100", "--loss", "0.01"],
    ),
];

/// One side's (goodput Mbit/s, mean RTT ms) over the seeds of a row.
type Side = Vec<(f64, f64)>;

/// brisk's run of `cc` (with its `[flow.tcp]` lines) on path `path` with `seed` (the
/// loss draws on the lossy path, and any controller's own randomness such as BBR's
/// initial gain-cycle phase).
fn ns3_cc_brisk(
    cc: &str,
    tcp: &str,
    path: usize,
    d: Duration,
    seed: u64,
) -> anyhow::Result<(f64, f64)> {
    let text = format!(
        "name = \"ns3-cc\"\nseed = {seed}\nduration = \"{}ms\"\n[bottleneck]\n{}[[flow]]\nrtt = \"40ms\"\ncc = \"{cc}\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}",
        d.as_millis(),
        NS3_CC_PATHS[path].1
    );
    let sc = Scenario::from_toml_str_named(&text, "ns3-cc")?;
    let r = brisk_sim::run_with(&sc, sc.seed, &RunOptions::default())?;
    let f = r.flows.first().ok_or_else(|| anyhow::anyhow!("no flow"))?;
    Ok((
        f.goodput_bps / 1e6,
        f.rtt.map_or(f64::NAN, |x| x.mean / 1e6),
    ))
}

/// The file of ns-3's result for `model` on path `path` with run number `seed` in a
/// `--ns3-cache` directory: `<model without ns3::>-<path index>-<duration s>.json`
/// for seed 1 (ns-3's default run), `...-s<seed>.json` for the others.
pub fn ns3_cc_cache_name(model: &str, path: usize, d: Duration, seed: u64) -> String {
    format!(
        "{}-{path}-{}{}.json",
        model.trim_start_matches("ns3::"),
        d.as_secs_f64(),
        if seed == 1 {
            String::new()
        } else {
            format!("-s{seed}")
        }
    )
}

/// ns-3's run of `model` on path `path` with run number `seed` (`bench/ns3/cc.py
/// --seed`); with `cache`, its JSON line is read from (or written to) the cache
/// directory: ns-3's runs are deterministic per run number and take 10-300 s each.
fn ns3_cc_ns3(
    py: &str,
    model: &str,
    path: usize,
    d: Duration,
    seed: u64,
    cache: Option<&Path>,
) -> anyhow::Result<(f64, f64)> {
    let file = cache.map(|c| c.join(ns3_cc_cache_name(model, path, d, seed)));
    let cached = file
        .as_ref()
        .and_then(|f| std::fs::read_to_string(f).ok())
        .and_then(|t| serde_json::from_str::<serde_json::Value>(t.trim()).ok());
    let v = match cached {
        Some(v) => v,
        None => {
            let out = Command::new(py)
                .args([
                    NS3_CC_SCRIPT,
                    "--cc",
                    model,
                    "--rate",
                    "20Mbps",
                    "--rtt-ms",
                    "40",
                ])
                .args(NS3_CC_PATHS[path].2)
                .args(["--duration", &d.as_secs_f64().to_string()])
                .args(["--seed", &seed.to_string()])
                .output();
            let v = last_json_line(out)?;
            if let Some(f) = &file {
                std::fs::write(f, format!("{v}\n"))
                    .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
            }
            v
        }
    };
    Ok((
        v["goodput_bps"]
            .as_f64()
            .ok_or_else(|| anyhow::anyhow!("ns-3 output lacks goodput_bps: {v}"))?
            / 1e6,
        v["rtt_ms_mean"].as_f64().unwrap_or(f64::NAN),
    ))
}

/// Mean over seeds of one coordinate, and its cell: the mean, with the seeds' range
/// in parentheses when they differ.
fn seeds_cell(v: &[(f64, f64)], pick: fn(&(f64, f64)) -> f64, digits: usize) -> (f64, String) {
    let xs: Vec<f64> = v.iter().map(pick).collect();
    let mean = xs.iter().sum::<f64>() / xs.len().max(1) as f64;
    let (lo, hi) = xs
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
            (l.min(*x), h.max(*x))
        });
    let cell = if xs.len() > 1 && format!("{lo:.digits$}") != format!("{hi:.digits$}") {
        format!("{mean:.digits$} ({lo:.digits$}–{hi:.digits$})")
    } else {
        format!("{mean:.digits$}")
    };
    (mean, cell)
}

/// A markdown cell for a ratio, with whether it is within 10 %.
fn ratio_cell(a: f64, b: f64) -> (String, Option<bool>) {
    if !(a.is_finite() && b.is_finite()) || b <= 0.0 {
        return ("-".into(), None);
    }
    let r = a / b;
    let ok = (r - 1.0).abs() <= 0.10;
    (format!("{r:.2}"), Some(ok))
}

/// `brisk bench ns3-cc`: every controller of `brisk_repro::roster::CONTROLLERS` that
/// ns-3.44 has (and `roster::NS3_ALSO`), brisk's model beside ns-3's on a bufferbloated
/// and a lossy path: goodput and mean RTT, each the mean over `seeds` seeds on both
/// sides (with the seeds' range), and their ratios, as a markdown table (stdout, and
/// `out` if given). A controller brisk does not have yet is a "not built here yet"
/// row; without the ns3 wheel the ns-3 columns say so. `only`: restrict to these `cc`
/// names.
pub fn cmd_bench_ns3_cc(
    d: Duration,
    out: Option<&Path>,
    only: &[String],
    cache: Option<&Path>,
    seeds: u64,
) -> anyhow::Result<()> {
    if let Some(c) = cache {
        std::fs::create_dir_all(c).map_err(|e| anyhow::anyhow!("{}: {e}", c.display()))?;
    }
    use std::fmt::Write as _;
    let py = ns3_python(NS3_CC_SCRIPT);
    let mut md = String::new();
    let _ = writeln!(
        md,
        "Each cell is the mean over seeds 1-{seeds} (brisk: the scenario seed; ns-3: the run number), the seeds' range in parentheses where they differ; the ratios are brisk / ns-3 of the means.\n"
    );
    let _ = writeln!(
        md,
        "| controller | ns-3 model | path | goodput brisk | goodput ns-3 | ratio | mean RTT brisk | mean RTT ns-3 | ratio | both within 10 % |\n|---|---|---|---|---|---|---|---|---|---|"
    );
    let rows = brisk_repro::roster::CONTROLLERS
        .iter()
        .filter_map(|c| c.ns3.map(|m| (c, m)))
        .chain(
            brisk_repro::roster::NS3_ALSO
                .iter()
                .filter_map(|(cc, m)| brisk_repro::roster::by_name(cc).map(|c| (c, *m))),
        );
    for (c, model) in rows {
        if !only.is_empty() && !only.iter().any(|o| o == c.cc) {
            continue;
        }
        for (pi, (plabel, ..)) in NS3_CC_PATHS.iter().enumerate() {
            eprintln!("ns3-cc: {} / {model} on {plabel} ...", c.label);
            let ours: Option<Side> = match c.algorithm() {
                Some(_) => Some(
                    (1..=seeds)
                        .map(|s| ns3_cc_brisk(c.cc, c.tcp, pi, d, s))
                        .collect::<anyhow::Result<_>>()?,
                ),
                None => None,
            };
            let theirs: Result<Side, String> = match &py {
                Some(py) if ours.is_some() => (1..=seeds)
                    .map(|s| ns3_cc_ns3(py, model, pi, d, s, cache))
                    .collect::<anyhow::Result<_>>()
                    .map_err(|e| format!("ns-3 failed: {e}")),
                Some(_) => Err("-".into()),
                None => Err("ns-3 not installed".into()),
            };
            let row = match (ours, &theirs) {
                (None, _) => format!(
                    "| {} | {model} | {plabel} | not built here yet | | | | | | |",
                    c.label
                ),
                (Some(v), Err(e)) => format!(
                    "| {} | {model} | {plabel} | {} | {e} | | {} | | | |",
                    c.label,
                    seeds_cell(&v, |p| p.0, 2).1,
                    seeds_cell(&v, |p| p.1, 1).1
                ),
                (Some(v), Ok(n)) => {
                    let (g, gc) = seeds_cell(&v, |p| p.0, 2);
                    let (r, rc) = seeds_cell(&v, |p| p.1, 1);
                    let (ng, ngc) = seeds_cell(n, |p| p.0, 2);
                    let (nr, nrc) = seeds_cell(n, |p| p.1, 1);
                    let (gr, gok) = ratio_cell(g, ng);
                    let (rr, rok) = ratio_cell(r, nr);
                    let both = match (gok, rok) {
                        (Some(true), Some(true)) => "yes",
                        (Some(_), Some(_)) => "no",
                        _ => "-",
                    };
                    format!(
                        "| {} | {model} | {plabel} | {gc} | {ngc} | {gr} | {rc} | {nrc} | {rr} | {both} |",
                        c.label
                    )
                }
            };
            let _ = writeln!(md, "{row}");
            println!("{row}");
        }
    }
    if let Some(p) = out {
        std::fs::write(p, &md).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?;
        eprintln!("ns3-cc: table written to {}", p.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{speed_ratio, PeerLoad};

    fn load(wall: f64, active: f64, done: f64, rx_bytes: f64) -> PeerLoad {
        PeerLoad {
            wall,
            events: 1000.0,
            active,
            done,
            rx_bytes,
        }
    }

    #[test]
    fn ratio_only_on_a_matched_load() {
        // The same 1000 sized flows, all finished with the same bytes: quoted.
        let ns3 = load(6.0, 1000.0, 1000.0, 2e7);
        let brisk = load(0.6, 1000.0, 1000.0, 2e7);
        let line = speed_ratio(&ns3, &brisk, true);
        assert!(
            line.starts_with("matched load: brisk 10.0x faster"),
            "{line}"
        );
        // The SYN storm the ratio was withheld for: 202 against 1000 flows with data.
        let ns3 = load(0.8, 202.0, 202.0, 4.04e6);
        assert!(speed_ratio(&ns3, &brisk, true).starts_with("no ratio"));
        // Sized flows: same flows with data but fewer finished, or other bytes.
        let ns3 = load(6.0, 1000.0, 990.0, 2e7);
        assert!(speed_ratio(&ns3, &brisk, true).starts_with("no ratio"));
        let ns3 = load(6.0, 1000.0, 1000.0, 1.9e7);
        assert!(speed_ratio(&ns3, &brisk, true).starts_with("no ratio"));
        // Bulk flows: bytes follow each stack's dynamics; the flows with data decide.
        let ns3 = load(60.0, 880.0, 0.0, 2.29e8);
        let brisk = load(3.0, 880.0, 0.0, 2.357e8);
        assert!(speed_ratio(&ns3, &brisk, false).starts_with("matched load: brisk 20.0x"));
        let ns3 = load(60.0, 1000.0, 0.0, 2.29e8);
        assert!(speed_ratio(&ns3, &brisk, false).starts_with("no ratio"));
    }
}

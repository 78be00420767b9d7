//! `brisk run --real SCENARIO.toml`: the scenario format over real packets (crate
//! `brisk-emu`). Each flow's sender is `stack = "brisk"` (default) or `"linux"`, mixed
//! freely in one run; for Linux flows `cc` names a kernel module (cubic, reno, bbr).
//! All flows share the one emulated bottleneck, each behind its own `rtt`; receivers
//! are Linux kernels. Apps: `bulk` and `records`. Output mirrors `brisk run`'s JSON.
//!
//! Also `brisk bench emu` (emulator capacity) and `brisk bench real` (brisk vs Linux
//! goodput and CPU on an emulated 1 Gbit/s, 10 ms path).

use std::path::{Path, PathBuf};

use brisk_emu::path::QueueSpec;
use brisk_emu::realrun::{run_real, FlowStack, RealResult, RealRun};
use brisk_emu::EmuConfig;
use brisk_scenario::Scenario;
use brisk_time::Duration;

/// Loads a scenario for a real run: the one scenario loader and validation
/// (brisk-scenario), then brisk-emu's mapping of the flows onto real ones.
pub fn load_real(path: &Path, seed: Option<u64>) -> anyhow::Result<RealRun> {
    let sc = Scenario::load(path)?;
    crate::warn(&sc);
    Ok(brisk_emu::realrun::real_run(
        &sc,
        &path.display().to_string(),
        seed,
    )?)
}

pub fn cmd_run_real(
    path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    pcap: bool,
    link_log: bool,
    json: bool,
) -> anyhow::Result<()> {
    let mut run = load_real(path, seed)?;
    if link_log {
        // clap requires --out with --link-log.
        run.link_log_dir = out.clone();
    }
    if pcap {
        let dir = out
            .clone()
            .ok_or_else(|| anyhow::anyhow!("--pcap needs --out DIR (pcaps are written there)"))?;
        std::fs::create_dir_all(&dir)?;
        run.pcap_dir = Some(dir);
    }
    let res = run_real(&run)?;
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        crate::stamp_run(dir, path)?;
    }
    crate::print_run(json, out.as_deref(), || res.to_json(), || res.table())
}

/// `brisk run --real FLOWS.toml --paths NET.toml`: the flows over the two-path lab
/// built from the multi-homed network scenario (brisk-emu `realrun::twopath`).
pub fn cmd_run_two_path(
    path: &Path,
    net_path: &Path,
    seed: Option<u64>,
    out: Option<PathBuf>,
    pcap: bool,
    json: bool,
) -> anyhow::Result<()> {
    let sc = Scenario::load(path)?;
    crate::warn(&sc);
    let net = brisk_sim::topo_build::load(net_path)?;
    let mut tp = brisk_emu::realrun::twopath::two_path_run(
        &sc,
        &path.display().to_string(),
        &net,
        &net_path.display().to_string(),
        seed,
    )?;
    eprintln!(
        "two-path run: {}'s [bottleneck] and flow rtt are replaced by the paths of {} (seed {})",
        path.display(),
        net_path.display(),
        tp.run.seed
    );
    if pcap {
        let dir = out
            .clone()
            .ok_or_else(|| anyhow::anyhow!("--pcap needs --out DIR (pcaps are written there)"))?;
        std::fs::create_dir_all(&dir)?;
        tp.run.pcap_dir = Some(dir);
    }
    let res = brisk_emu::realrun::twopath::run_two_path(&tp)?;
    if let Some(dir) = &out {
        res.write_dir(dir)?;
        crate::stamp_run(dir, path)?;
    }
    crate::print_run(json, out.as_deref(), || res.to_json(), || res.table())
}

/// `brisk bench emu`: the emulator's capacity benchmark (`relay`: also the bare
/// TUN relay, the ceiling of the emulator's I/O).
pub fn cmd_bench_emu(rate: u64, d: Duration, relay: bool) -> anyhow::Result<()> {
    brisk_emu::bench_capacity_opts(rate, d, relay)?;
    Ok(())
}

fn bench_run(
    stack: FlowStack,
    secs: Duration,
    rate: u64,
    rtt: Duration,
) -> anyhow::Result<RealResult> {
    let mut path = EmuConfig::bottleneck(rate, rtt);
    // 1000 packets: a BDP-sized queue at the default 1 Gbit/s, 10 ms (~830 packets).
    path.bottleneck.queue = Some(QueueSpec::droptail_packets(1000));
    Ok(run_real(&RealRun::one_bulk_flow(
        format!("bench-real-{}", stack.name()),
        secs,
        path,
        stack,
        "cubic",
        brisk_tcp::Config::default(),
    )?)?)
}

/// `brisk bench real`: brisk vs Linux CUBIC, one bulk flow each over the same
/// emulated 1 Gbit/s, 10 ms path; goodput and process CPU seconds per GB delivered.
pub fn cmd_bench_real(d: Duration, rate: u64, rtt: Duration) -> anyhow::Result<()> {
    let linux = bench_run(FlowStack::Linux, d, rate, rtt)?;
    let brisk = bench_run(FlowStack::Brisk, d, rate, rtt)?;
    println!(
        "brisk bench real: 1 bulk CUBIC flow, emulated {:.2} Gbit/s, {:.1} ms RTT, 1000-pkt queue, {:.0} s each",
        rate as f64 / 1e9,
        rtt.as_secs_f64() * 1e3,
        d.as_secs_f64()
    );
    let row = |name: &str, r: &RealResult| -> (f64, f64) {
        let f = &r.flows[0];
        let gb = f.bytes_delivered as f64 / 1e9;
        let cpu_per_gb = r.cpu_s / gb.max(1e-9);
        println!(
            "  {name:<6} goodput {:>7.1} Mbit/s  srtt {:>6.2} ms  retx {:>6}  process CPU {:>6.2} s = {:>6.2} CPU s/GB{}  intact {}",
            f.goodput_bps / 1e6,
            f.srtt.map_or(f64::NAN, |s| s.mean / 1e6),
            f.retransmitted_packets,
            r.cpu_s,
            cpu_per_gb,
            if r.brisk_busy_s > 0.0 {
                format!(" (of which {:.2} s inside brisk's endpoint)", r.brisk_busy_s)
            } else {
                String::new()
            },
            f.stream_ok,
        );
        let h = &r.emulator.health;
        println!(
            "         emulator: busy {:.0} % (headroom {:.0} %), serviceable {:.2} Gbit/s, delivery error p99 {:.1} us, kernel drops {}: {}",
            h.busy_fraction * 100.0,
            h.headroom * 100.0,
            h.serviceable_bps / 1e9,
            h.late_p99_us,
            h.kernel_drops.map_or("?".into(), |d| d.to_string()),
            if h.is_clean() { "clean" } else { "DISTORTED" }
        );
        if let Some(t) = &r.emulator.stack_thread {
            println!(
                "         stack thread ({}, {}, {} duty-cycle sleeps): {:.2} CPU s; queue to loop p50 {:.1} us p99 {:.1} us (full {}x, cap {}), to stack p50 {:.1} us p99 {:.1} us (dropped {}, cap {})",
                brisk_emu::threaded::STACK_THREAD_ENV,
                t.scheduling,
                t.duty_sleeps,
                t.thread_cpu_s,
                t.to_loop_delay.p50_ns as f64 / 1e3,
                t.to_loop_delay.p99_ns as f64 / 1e3,
                t.to_loop_full,
                t.to_loop_cap,
                t.to_side_delay.p50_ns as f64 / 1e3,
                t.to_side_delay.p99_ns as f64 / 1e3,
                t.to_side_dropped,
                t.to_side_cap,
            );
        }
        for w in &h.warnings {
            println!("         WARNING (emulator): {w}");
        }
        (f.goodput_bps, cpu_per_gb)
    };
    let (lg, lc) = row("linux", &linux);
    let (bg, bc) = row("brisk", &brisk);
    // The emulated rate counts IP bytes: a full-sized packet (1500 bytes, timestamps
    // on) carries 1448 payload bytes, so the path holds at most this much goodput.
    let payload_bps = rate as f64 * 1448.0 / 1500.0;
    println!(
        "  of the path's payload capacity ({:.1} Mbit/s = rate x 1448/1500): linux {:.1} %, brisk {:.1} % (goal >= 98 %)",
        payload_bps / 1e6,
        lg / payload_bps * 100.0,
        bg / payload_bps * 100.0,
    );
    println!(
        "  ratio brisk/linux: goodput {:.2}x (goal >= 1.0), CPU per GB {:.2}x (goal <= 2.0)",
        bg / lg,
        bc / lc
    );
    println!(
        "  (process CPU includes the emulator and the receiving kernel, identical in both runs)"
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_emu::realrun::LinuxKnobs;

    fn knobs(tcp: &str) -> anyhow::Result<LinuxKnobs> {
        let text = format!(
            "name = \"k\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nstack = \"linux\"\nrtt = \"10ms\"\ncc = \"cubic\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\n{tcp}\n"
        );
        let sc = Scenario::from_toml_str_named(&text, "k.toml")?;
        Ok(brisk_emu::realrun::real_run(&sc, "k.toml", None)?.flows[0]
            .linux
            .clone())
    }

    #[test]
    fn linux_flows_take_kernel_knobs_and_refuse_the_rest_by_name() {
        let k = knobs("ecn = true\ninitial_cwnd = 4\nmss = 1200\ndscp = 4\n[flow.tcp.recovery]\nrack = false\nmin_rto = \"50ms\"").unwrap();
        assert_eq!(k.ecn, Some(true));
        assert_eq!(k.dscp, Some(4));
        assert_eq!(k.initial_cwnd, Some(4));
        assert_eq!(k.mss, Some(1200));
        assert_eq!(k.rack, Some(false));
        assert_eq!(k.min_rto, Some(Duration::from_millis(50)));
        for (knob, line) in [
            ("delayed_ack", "delayed_ack = false"),
            ("initial_rto", "initial_rto = \"200ms\""),
            ("delay_correlation", "delay_correlation = true"),
            ("unordered", "unordered = true"),
        ] {
            let e = knobs(line).unwrap_err().to_string();
            assert!(
                e.contains(&format!("flow[0].tcp.{knob}")) && e.contains("stack = \"linux\""),
                "{e}"
            );
        }
    }

    /// The real path carries ECN and ABE for brisk flows as the simulator does, and
    /// ECN (only) for Linux flows (`brisk repro real-ecn` mixes the two).
    #[test]
    fn brisk_flows_take_abe_and_linux_flows_ecn() {
        let text = "name = \"e\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = { kind = \"codel\", ecn = true }\n\
             [[flow]]\nrtt = \"100ms\"\ncc = \"cubic\"\napp = { kind = \"bulk\" }\n[flow.tcp]\necn = true\nabe = true\nbeta_ecn = 0.85\n\
             [[flow]]\nstack = \"linux\"\nrtt = \"100ms\"\ncc = \"cubic\"\napp = { kind = \"bulk\" }\n[flow.tcp]\necn = true\n";
        let path = std::env::temp_dir().join(format!("brisk-real-abe-{}.toml", std::process::id()));
        std::fs::write(&path, text).unwrap();
        let run = load_real(&path, None);
        let _ = std::fs::remove_file(&path);
        let run = run.unwrap();
        let b = &run.flows[0];
        assert_eq!(b.stack, FlowStack::Brisk);
        assert!(b.tcp.ecn.enabled);
        assert_eq!(
            b.tcp.congestion.controller.abe().and_then(|a| a.beta_ecn),
            Some(0.85)
        );
        let l = &run.flows[1];
        assert_eq!((l.stack, l.linux.ecn), (FlowStack::Linux, Some(true)));
    }

    /// The real dumbbell is IPv4 only: an IPv6 scenario is refused by its field.
    #[test]
    fn ipv6_scenarios_are_refused_by_field() {
        let base = "name = \"v\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n";
        for (text, field) in [
            (format!("ip = \"v6\"\n{base}"), "k.toml: ip:"),
            (format!("{base}ip = \"v6\"\n"), "k.toml: flow[0].ip:"),
        ] {
            let path =
                std::env::temp_dir().join(format!("brisk-real-v6-{}.toml", std::process::id()));
            std::fs::write(&path, &text).unwrap();
            let e = load_real(&path, None).map(drop).unwrap_err().to_string();
            let _ = std::fs::remove_file(&path);
            let e = e.replace(&path.display().to_string(), "k.toml");
            assert!(e.starts_with(field) && e.contains("IPv4 only"), "{e}");
        }
    }
}

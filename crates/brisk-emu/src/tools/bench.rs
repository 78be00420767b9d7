//! Kernel↔emulator↔kernel runs: [`baseline`] sets up the two-host lab, runs the
//! emulator on its own thread and a kernel TCP bulk transfer through it, and tears
//! everything down; [`bench_capacity`] is the emulator's throughput benchmark (a
//! 10 Gbit/s zero-delay path for ~5 s) that `brisk bench emu` runs, with the bare
//! TUN relay ([`relay_baseline`], `--relay`) and a veth pair as its yardsticks.

use brisk_time::Duration;
use serde::Serialize;
use serde_json::{json, Value};

use crate::emu::emulator::{EmuReport, Emulator, EmulatorOptions};
use crate::emu::path::EmuConfig;
use crate::emu::relay::{self, RelayReport};
use crate::error::Result;
use crate::os::tun::DEFAULT_MTU;
use crate::stack::bulk::{run_bulk, Amount, BulkConfig, BulkReport};
use crate::tools::lab::{TwoHosts, ADDR_B};

/// A baseline run's results.
#[derive(Clone, Debug, Serialize)]
pub struct BaselineReport {
    pub transfer: BulkReport,
    pub emulator: EmuReport,
}

impl BaselineReport {
    /// A summary shaped like the simulator's `summary.json` (one flow).
    pub fn to_json(&self, scenario: &str) -> Value {
        let t = &self.transfer;
        let f = &self.emulator.forward;
        json!({
            "scenario": scenario,
            "mode": "kernel-emulated",
            "duration_s": self.emulator.elapsed_s,
            "flows": [{
                "id": 0,
                "cc": t.cc,
                "goodput_bps": t.goodput_bps,
                "bytes_delivered": t.bytes_received,
                "bytes_sent": t.bytes_sent,
                "retransmitted_packets": t.sender.total_retrans,
                "fct_s": t.seconds,
                "rtt_ms": {
                    "srtt": f64::from(t.sender.srtt_us) / 1e3,
                    "min": f64::from(t.sender.min_rtt_us) / 1e3,
                    "rttvar": f64::from(t.sender.rttvar_us) / 1e3,
                },
                "stream_ok": t.intact,
            }],
            "bottleneck": {
                "drops": f.dropped_queue_full + f.dropped_loss + f.dropped_outage + f.dropped_overflow,
                "max_queue_packets": f.max_queue_packets,
            },
            "emulator": {
                "health": &self.emulator.health,
                "iterations": self.emulator.iterations,
                "forward": &self.emulator.forward,
                "reverse": &self.emulator.reverse,
            },
        })
    }
}

/// Builds the lab, runs `bulk` from A to B through a path `path`, tears down.
pub fn baseline(
    path: &EmuConfig,
    bulk: &BulkConfig,
    opts: EmulatorOptions,
) -> Result<BaselineReport> {
    let (hosts, tun_a, tun_b) = TwoHosts::with_default_mtu()?;
    let emu = Emulator::new(tun_a, tun_b, path, opts)?;
    // Bounded even if the transfer hangs: the loop stops by itself after this.
    let handle = emu.spawn(Some(
        Duration::from(bulk.timeout).saturating_add(Duration::from_secs(5)),
    ))?;
    let transfer = run_bulk(hosts.ns_a(), hosts.ns_b(), ADDR_B, bulk);
    let emulator = handle.stop()?;
    hosts.teardown()?;
    Ok(BaselineReport {
        transfer: transfer?,
        emulator,
    })
}

/// The same bulk transfer over a veth pair, without TUN devices or emulator: the
/// peer of [`bench_capacity_with`], what the two kernels and the tool manage alone.
pub fn veth_baseline(bulk: &BulkConfig) -> Result<BulkReport> {
    let hosts = TwoHosts::veth(DEFAULT_MTU)?;
    let transfer = run_bulk(hosts.ns_a(), hosts.ns_b(), ADDR_B, bulk);
    hosts.teardown()?;
    transfer
}

/// CPU time of the whole process (CLOCK_PROCESS_CPUTIME_ID: every thread, the ended
/// ones included, with the kernel work done in their context, such as the TCP that
/// runs inside a TUN write), in seconds.
fn process_cpu_s() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 / 1e9
}

/// CPU seconds per GB delivered.
fn per_gb(cpu_s: f64, bytes: u64) -> f64 {
    cpu_s / (bytes as f64 / 1e9).max(1e-9)
}

/// The same bulk transfer through the two TUN devices joined by the bare relay
/// (emu/relay.rs: every frame written as read, no model): the TUN design's ceiling.
pub fn relay_baseline(bulk: &BulkConfig) -> Result<(BulkReport, RelayReport)> {
    let (hosts, tun_a, tun_b) = TwoHosts::with_default_mtu()?;
    let handle = relay::spawn(
        tun_a,
        tun_b,
        relay::threads_from_env(),
        crate::os::sched::default_priority(),
    )?;
    let transfer = run_bulk(hosts.ns_a(), hosts.ns_b(), ADDR_B, bulk);
    let report = handle.stop()?;
    hosts.teardown()?;
    Ok((transfer?, report))
}

/// Capacity benchmark: kernel cubic through an emulated `rate_bps`, zero-delay path
/// for `seconds`, printing goodput and delivery-time error percentiles, then the
/// same transfer over a veth pair (the peer) and the ratio.
pub fn bench_capacity_with(rate_bps: u64, seconds: Duration) -> Result<BaselineReport> {
    bench_capacity_opts(rate_bps, seconds, false)
}

/// [`bench_capacity_with`]; with `relay`, between the emulator's run and the peer's,
/// the same transfer through the bare TUN relay ([`relay_baseline`]), and the three
/// goodputs side by side.
pub fn bench_capacity_opts(
    rate_bps: u64,
    seconds: Duration,
    relay: bool,
) -> Result<BaselineReport> {
    let path = EmuConfig::bottleneck(rate_bps, Duration::ZERO);
    let bulk = BulkConfig {
        amount: Amount::Time(seconds.into()),
        cc: "cubic".into(),
        timeout: seconds.saturating_add(Duration::from_secs(20)).into(),
        ..BulkConfig::default()
    };
    let opts = EmulatorOptions::default();
    println!(
        "bench emu: kernel CUBIC -> emulated {:.2} Gbit/s zero-delay path -> kernel, {:.0} s; TUN offloads {}, loop scheduling requested {}",
        rate_bps as f64 / 1e9,
        seconds.as_secs_f64(),
        match crate::os::tun::offload_from_env() {
            Ok(true) => "on",
            Ok(false) => "off",
            Err(_) => "invalid BRISK_TUN_OFFLOAD",
        },
        opts.realtime.map_or("normal".into(), |p| format!("SCHED_FIFO {p}")),
    );
    let c0 = process_cpu_s();
    let r = baseline(&path, &bulk, opts)?;
    let emu_cpu = per_gb(process_cpu_s() - c0, r.transfer.bytes_received);
    let e = &r.emulator.forward.delivery_error;
    let h = &r.emulator.health;
    println!(
        "capacity: {:.2} Gbit/s goodput over {:.1} s ({} MB, intact: {}); loop {} ({} duty-cycle sleeps, {} at quiet moments); emulator delivery error p50 {:.1} us, p99 {:.1} us, max {:.1} us over {} packets; {} iterations; emulator busy {:.0} % (headroom {:.0} %), serviceable {:.2} Gbit/s, thread CPU {:.2} s, kernel drops {}; coalesced {} of {} forward packets into {} super-packet writes",
        r.transfer.goodput_bps / 1e9,
        r.transfer.seconds,
        r.transfer.bytes_received / 1_000_000,
        r.transfer.intact,
        r.emulator.scheduling,
        r.emulator.duty_sleeps,
        r.emulator.duty_quiet_sleeps,
        e.p50_ns as f64 / 1e3,
        e.p99_ns as f64 / 1e3,
        e.max_ns as f64 / 1e3,
        e.count,
        r.emulator.iterations,
        h.busy_fraction * 100.0,
        h.headroom * 100.0,
        h.serviceable_bps / 1e9,
        h.thread_cpu_s,
        h.kernel_drops.map_or("?".into(), |d| d.to_string()),
        r.emulator.forward.gso_packets,
        r.emulator.forward.delivered_packets,
        r.emulator.forward.gso_writes,
    );
    let (w, rv) = (
        &r.emulator.forward.write_cost,
        &r.emulator.reverse.delivery_error,
    );
    println!(
        "detail: forward write cost p50 {:.1} us, p99 {:.1} us; reverse delivery error p50 {:.1} us, p99 {:.1} us; reverse {} packets in {} writes; loop CPU {:.3} s per GB delivered; {} timer wake-ups; loop CPU {}, bulk CPUs {}",
        w.p50_ns as f64 / 1e3,
        w.p99_ns as f64 / 1e3,
        rv.p50_ns as f64 / 1e3,
        rv.p99_ns as f64 / 1e3,
        r.emulator.reverse.delivered_packets,
        r.emulator.reverse.write_cost.count,
        h.thread_cpu_s / (r.transfer.bytes_received as f64 / 1e9).max(1e-9),
        r.emulator.timer_wakeups,
        std::env::var(crate::os::sched::EMU_CPU_ENV).unwrap_or_else(|_| "any".into()),
        std::env::var(crate::os::sched::BULK_CPU_ENV).unwrap_or_else(|_| "any".into()),
    );
    print!("{}", r.emulator.warning_lines());
    if r.emulator.health.is_clean() {
        println!("emulator: clean (no late-delivery, headroom or rate warning)");
    }
    let relayed = if relay {
        let c0 = process_cpu_s();
        let (t, rr) = relay_baseline(&bulk)?;
        let relay_cpu = per_gb(process_cpu_s() - c0, t.bytes_received);
        let (f, rv) = (&rr.forward, &rr.reverse);
        println!(
            "relay (TUN to TUN, every frame written as read, no model): {:.2} Gbit/s goodput over {:.1} s (intact: {}); {} thread(s), {} ({} duty-cycle sleeps), thread CPU {:.2} s = {:.3} s per GB delivered; forward {} frames, {:.1} KB each, reverse {} frames; write errors {}, read errors {}",
            t.goodput_bps / 1e9,
            t.seconds,
            t.intact,
            rr.threads,
            rr.scheduling,
            rr.duty_sleeps,
            rr.thread_cpu_s,
            rr.thread_cpu_s / (t.bytes_received as f64 / 1e9).max(1e-9),
            f.frames,
            f.bytes as f64 / f.frames.max(1) as f64 / 1e3,
            rv.frames,
            f.write_errors + rv.write_errors,
            f.read_errors + rv.read_errors,
        );
        Some((t.goodput_bps, relay_cpu))
    } else {
        None
    };
    let c0 = process_cpu_s();
    let peer = veth_baseline(&bulk)?;
    let veth_cpu = per_gb(process_cpu_s() - c0, peer.bytes_received);
    println!(
        "peer (veth, no emulator): {:.2} Gbit/s goodput over {:.1} s (intact: {}); emulator / veth = {:.2}",
        peer.goodput_bps / 1e9,
        peer.seconds,
        peer.intact,
        r.transfer.goodput_bps / peer.goodput_bps.max(1.0),
    );
    // Load-robust where goodput is not: what each design costs the machine per GB
    // (the senders, the receivers, both kernels' TCP and, but for the veth, the
    // loop or relay), and the goodput that cost allows when every CPU is busy.
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    let cap = |s_per_gb: f64| cpus / s_per_gb.max(1e-9) * 8.0;
    let relay_cpu = relayed.map(|(_, c)| c);
    println!(
        "cpu: process CPU per GB delivered: emulator {:.3} s, relay {}, veth {:.3} s; with {} CPUs all busy that allows emulator {:.1}, relay {}, veth {:.1} Gbit/s",
        emu_cpu,
        relay_cpu.map_or("-".into(), |c| format!("{c:.3} s")),
        veth_cpu,
        cpus,
        cap(emu_cpu),
        relay_cpu.map_or("-".into(), |c| format!("{:.1}", cap(c))),
        cap(veth_cpu),
    );
    if let Some((g, _)) = relayed {
        println!(
            "ceiling: relay / veth = {:.2}, emulator / relay = {:.2} (emulator {:.2}, relay {:.2}, veth {:.2} Gbit/s)",
            g / peer.goodput_bps.max(1.0),
            r.transfer.goodput_bps / g.max(1.0),
            r.transfer.goodput_bps / 1e9,
            g / 1e9,
            peer.goodput_bps / 1e9,
        );
    }
    Ok(r)
}

/// The standard capacity benchmark: 10 Gbit/s, zero delay, 5 s.
pub fn bench_capacity() -> Result<BaselineReport> {
    bench_capacity_with(10_000_000_000, Duration::from_secs(5))
}

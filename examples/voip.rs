//! A VoIP-like call over uCOBS on brisk's real socket API (Minion, NSDI 2012 §8.2).
//!
//! A sender on an ordinary Linux socket (today's OS, in the lab's namespace) sends
//! 640-byte voice frames every 20 ms, each one uCOBS datagram, through the emulated
//! path with random loss. brisk receives them twice: first reading in order (what any
//! TCP gives), then with unordered receive (uTCP), so a frame behind a lost segment
//! is played as soon as its own bytes arrive. The program prints, for each call, how
//! many frames missed a 200-ms playout deadline and the latency percentiles.
//!
//! Run it against the lab (root and /dev/net/tun; everything it creates is removed
//! when it ends):
//!
//! ```sh
//! cargo build --release --example voip
//! sudo target/release/examples/voip            # --loss 0.05 --rtt-ms 60 --secs 10
//! ```

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use brisk_emu::kernel_stream::KernelStream;
use brisk_emu::path::{Dur, LossSpec, PathSpec};
use brisk_emu::{BriskLab, EmuConfig, EmulatorOptions, StackConfig, BRISK_ADDR};
use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
use clap::Parser;

/// A voice call over uCOBS: a Linux sender, a brisk receiver, in order and unordered.
#[derive(Parser, Debug)]
struct Args {
    /// Random loss on the path, each way (0 to 0.2).
    #[arg(long, default_value_t = 0.05)]
    loss: f64,
    /// Round-trip time of the emulated path, in ms (1 to 1000).
    #[arg(long, default_value_t = 60)]
    rtt_ms: u64,
    /// Length of each call, in seconds (1 to 120).
    #[arg(long, default_value_t = 10)]
    secs: u64,
}

const FRAME: usize = 640;
const EVERY: Duration = Duration::from_millis(20);
const PLAYOUT: Duration = Duration::from_millis(200);

/// Frame `i`: its index, then bytes derived from it (checked on arrival).
fn frame(i: u32) -> Vec<u8> {
    let mut f = i.to_be_bytes().to_vec();
    f.extend((0..FRAME - 4).map(|k| (i as usize * 31 + k * 7) as u8));
    f
}

struct Call {
    latencies: Vec<Duration>,
    out_of_order: u64,
    frames: u32,
}

fn call(args: &Args, unordered: bool, port: u16) -> anyhow::Result<Call> {
    let spec = PathSpec {
        loss: Some(LossSpec::Bernoulli { p: args.loss }),
        ..PathSpec::default()
    };
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(args.rtt_ms))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 1,
    };
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.tcp.unordered = unordered;
    let limit = Duration::from_secs(args.secs + 60);
    let lab = BriskLab::new(&path, stack, EmulatorOptions::default(), Some(limit.into()))
        .context("starting the lab (needs root and /dev/net/tun)")?;
    let listener = lab.stack().listen(port)?;
    let to = SocketAddr::from((BRISK_ADDR, port));
    let linux = lab
        .kernel()
        .run_in(move || std::net::TcpStream::connect_timeout(&to, Duration::from_secs(5)))??;
    linux.set_nodelay(true)?;
    brisk_emu::bulk::set_cc(&linux, "cubic")?;
    let (mut brisk, _) = listener.accept()?;
    brisk.set_read_timeout(Some(limit))?;
    let frames = (args.secs * 1000 / EVERY.as_millis() as u64) as u32;
    let start = Instant::now();
    let result = std::thread::scope(|s| {
        let rx = s.spawn(|| -> anyhow::Result<Call> {
            let mut rx = UcobsReceiver::new(Limits::default(), 16 * 1024)?;
            let mut latencies = Vec::new();
            let mut bad = 0u64;
            rx.poll(&mut brisk, &mut |d| {
                let Some(i) = d
                    .data
                    .get(..4)
                    .map(|b| u32::from_be_bytes(b.try_into().unwrap()))
                else {
                    bad += 1;
                    return;
                };
                if d.data != frame(i) {
                    bad += 1;
                    return;
                }
                let due = start + EVERY * i;
                latencies.push(Instant::now().saturating_duration_since(due));
            })?;
            if bad > 0 {
                bail!("{bad} frames arrived corrupt");
            }
            Ok(Call {
                latencies,
                out_of_order: rx.counters().delivered_out_of_order,
                frames,
            })
        });
        let mut tx = UcobsSender::new();
        let mut ks = KernelStream::new(&linux);
        for i in 0..frames {
            let due = start + EVERY * i;
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
            // A blocking kernel socket takes the frame whole.
            while !tx.send(&mut ks, &frame(i), 0)? {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        while !tx.flush(&mut ks)? {
            std::thread::sleep(Duration::from_millis(1));
        }
        linux.shutdown(std::net::Shutdown::Write)?;
        rx.join().expect("receiver thread")
    });
    drop(linux);
    lab.stop()?;
    result
}

fn report(name: &str, c: &mut Call) {
    c.latencies.sort_unstable();
    let n = c.latencies.len();
    let pct = |q: f64| {
        c.latencies
            .get(((n.max(1) - 1) as f64 * q).round() as usize)
            .map_or(f64::NAN, |d| d.as_secs_f64() * 1e3)
    };
    let late = c.latencies.iter().filter(|&&d| d > PLAYOUT).count();
    println!(
        "{name:<22} {n:>5} of {} frames, {:>4} out of order, {late:>4} miss the {} ms playout ({:.1} %), latency p50 {:.0} / p95 {:.0} / p99 {:.0} ms",
        c.frames,
        c.out_of_order,
        PLAYOUT.as_millis(),
        late as f64 * 100.0 / c.frames.max(1) as f64,
        pct(0.5),
        pct(0.95),
        pct(0.99)
    );
}

fn main() {
    if let Err(e) = run(&Args::parse()) {
        eprintln!("voip: {e:#}");
        std::process::exit(2);
    }
}

fn run(args: &Args) -> anyhow::Result<()> {
    if !(0.0..=0.2).contains(&args.loss) {
        bail!("--loss: must be between 0 and 0.2, got {}", args.loss);
    }
    if !(1..=1000).contains(&args.rtt_ms) {
        bail!("--rtt-ms: must be between 1 and 1000, got {}", args.rtt_ms);
    }
    if !(1..=120).contains(&args.secs) {
        bail!("--secs: must be between 1 and 120, got {}", args.secs);
    }
    if let Some(why) = brisk_emu::netns::unsupported_reason() {
        bail!("the lab is not available here: {why}");
    }
    println!(
        "Linux sender -> brisk receiver, {FRAME}-byte frames every {} ms over uCOBS, RTT {} ms, loss {} % each way, {} s per call",
        EVERY.as_millis(),
        args.rtt_ms,
        args.loss * 100.0,
        args.secs
    );
    let mut ordered = call(args, false, 7001)?;
    report("brisk, in order (TCP)", &mut ordered);
    let mut unordered = call(args, true, 7002)?;
    report("brisk, unordered", &mut unordered);
    Ok(())
}

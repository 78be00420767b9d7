//! `brisk trace`: writes Mahimahi delivery traces (one millisecond timestamp per line,
//! each a 1500-byte delivery opportunity; see brisk-net's `mahimahi` module) for
//! `trace = "FILE"` in a scenario's link or `brisk lab --trace`.
//!
//! - `brisk trace constant --rate 12Mbit [--period 1s]`
//! - `brisk trace stepped --step 24Mbit:5s --step 6Mbit:5s ...`
//! - `brisk trace lte-like [--min 1Mbit] [--max 40Mbit] [--period 60s] [--seed 1]`
//! - `brisk trace info FILE`: its period, opportunities and mean rate.
//!
//! The traces in `traces/` were written by these commands (tests/traces.rs checks it).

use std::path::PathBuf;

use brisk_net::mahimahi::{generate, DeliveryTrace};
use brisk_time::Duration;

#[derive(clap::Subcommand)]
pub enum TraceCmd {
    /// A constant rate.
    Constant {
        #[arg(long, value_parser = crate::args::rate)]
        rate: u64,
        /// Length of the trace (it repeats), whole milliseconds.
        #[arg(long, default_value = "1s", value_parser = period)]
        period: Duration,
    },
    /// Piecewise-constant rates, each RATE:DURATION in turn, e.g. --step 24Mbit:5s.
    Stepped {
        #[arg(long = "step", required = true, value_parser = step)]
        steps: Vec<(u64, Duration)>,
    },
    /// A synthetic cellular-like trace: a random walk of the rate between --min and
    /// --max, bursty opportunities and occasional outages (not a recording).
    LteLike {
        #[arg(long, default_value = "1Mbit", value_parser = crate::args::rate)]
        min: u64,
        #[arg(long, default_value = "40Mbit", value_parser = crate::args::rate)]
        max: u64,
        #[arg(long, default_value = "60s", value_parser = period)]
        period: Duration,
        #[arg(long, default_value_t = 1)]
        seed: u64,
    },
    /// Describe a trace file.
    Info { file: PathBuf },
}

fn period(s: &str) -> Result<Duration, String> {
    let d = crate::args::positive_duration(s)?;
    if d.subsec_nanos() % 1_000_000 != 0 || d < Duration::from_millis(1) {
        return Err("must be a whole number of milliseconds, at least 1ms".into());
    }
    if d > Duration::from_secs(3600) {
        return Err("must be at most 1h".into());
    }
    Ok(d)
}

fn step(s: &str) -> Result<(u64, Duration), String> {
    let (r, d) = s
        .split_once(':')
        .ok_or_else(|| format!("expected RATE:DURATION, e.g. 24Mbit:5s, got {s:?}"))?;
    Ok((crate::args::rate(r)?, period(d)?))
}

fn ms(d: Duration) -> u64 {
    d.as_millis() as u64
}

pub fn cmd_trace(cmd: TraceCmd) -> anyhow::Result<()> {
    let trace = match cmd {
        TraceCmd::Constant { rate, period } => generate::constant(rate, ms(period)),
        TraceCmd::Stepped { steps } => {
            let steps: Vec<(u64, u64)> = steps.iter().map(|&(r, d)| (r, ms(d))).collect();
            anyhow::ensure!(
                steps.iter().map(|s| s.1).sum::<u64>() <= 3_600_000,
                "--step: the steps must last at most 1h in total"
            );
            generate::stepped(&steps)
        }
        TraceCmd::LteLike {
            min,
            max,
            period,
            seed,
        } => {
            anyhow::ensure!(min < max, "--min must be below --max");
            generate::lte_like(min, max, ms(period), seed)
        }
        TraceCmd::Info { file } => {
            let text = brisk_scenario::input::read_text(&file)
                .map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            let t = DeliveryTrace::parse(&text)
                .map_err(|e| anyhow::anyhow!("{} {e}", file.display()))?;
            return crate::emit(&format!(
                "{}: {} opportunities in {} ms (repeats), mean {:.3} Mbit/s\n",
                file.display(),
                t.len(),
                t.period_ms(),
                t.mean_rate_bps() / 1e6
            ));
        }
    };
    crate::emit(&trace.to_text())
}

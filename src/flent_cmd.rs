//! `brisk flent <rrul|tcp-upload|tcp-download>`: one of flent's standard tests in the
//! simulator for any controller and queue (brisk-repro's `exp::flent`, which `brisk
//! repro flent` runs for CUBIC and BBR), written as an HTML page with flent's plots:
//! throughput per direction and latency over time per seed, and the ping-like round
//! trip's CDF and box plot over the seeds.

use brisk_repro::exp::flent::{self, Setup, Test};
use brisk_repro::{html, runner, ExperimentResult, Progress};
use brisk_time::Duration;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct FlentArgs {
    /// The test: rrul, tcp-upload or tcp-download.
    #[arg(value_parser = |s: &str| Test::parse(s))]
    test: Test,
    /// The TCP flows' controller (any `cc` a scenario takes, e.g. cubic, bbr, cdg).
    #[arg(long, default_value = "cubic")]
    cc: String,
    /// The queue both ways: droptail (200 ms), codel, pie, fq_codel, red, or an inline
    /// TOML table as in a scenario, e.g. '{ kind = "droptail", packets = 100 }'.
    #[arg(long, default_value = "droptail")]
    queue: String,
    /// Upload (and, without --down-rate, download) rate.
    #[arg(long, default_value = "20Mbit", value_parser = crate::args::rate)]
    rate: u64,
    /// Download rate (default: --rate).
    #[arg(long, value_parser = crate::args::rate)]
    down_rate: Option<u64>,
    /// Base round-trip time.
    #[arg(long, default_value = "40ms", value_parser = crate::args::positive_duration)]
    rtt: Duration,
    /// Seconds of load after 5 s of idle probes (flent's `length`).
    #[arg(long, default_value = "60s", value_parser = crate::args::positive_duration)]
    length: Duration,
    /// Seeds, e.g. 1..3 (≤ 1 ms seeded jitter on both links makes them differ).
    #[arg(long, default_value = "1..3", value_parser = crate::seeds::parse_range)]
    seeds: std::ops::RangeInclusive<u64>,
    /// Directory for the page (index.html and each figure's SVG and CSV).
    #[arg(long, default_value = "target/flent")]
    out: PathBuf,
}

/// The queue flag as an inline TOML table.
fn queue_table(q: &str) -> String {
    match q.trim() {
        "droptail" | "drop-tail" => "{ kind = \"droptail\", time = \"200ms\" }".into(),
        k @ ("codel" | "pie" | "fq_codel" | "red") => format!("{{ kind = \"{k}\" }}"),
        other => other.to_string(),
    }
}

pub fn cmd_flent(a: FlentArgs) -> anyhow::Result<()> {
    let seeds: Vec<u64> = a.seeds.clone().collect();
    if seeds.is_empty() || seeds.len() > 100 {
        anyhow::bail!("--seeds: give 1 to 100 seeds, like 1..3");
    }
    let entry = brisk_repro::roster::by_name(&a.cc);
    let setup = Setup {
        test: a.test,
        cc_label: entry.map_or(a.cc.clone(), |c| c.label.to_string()),
        cc: a.cc.clone(),
        tcp: entry.map_or(String::new(), |c| c.tcp.to_string()),
        queue_label: a.queue.clone(),
        queue: queue_table(&a.queue),
        up_mbit: a.rate as f64 / 1e6,
        down_mbit: a.down_rate.unwrap_or(a.rate) as f64 / 1e6,
        rtt_ms: a.rtt.as_millis() as u64,
        length_s: a.length.as_secs_f64().ceil() as u64,
    };
    let setups = vec![setup];
    let jobs = flent::jobs(&setups, &seeds).map_err(anyhow::Error::msg)?;
    let progress = Progress::stderr(true);
    let runs: Vec<_> = runner::run_jobs(&jobs, runner::threads(), &progress)
        .into_iter()
        .collect::<Result<_, _>>()
        .map_err(anyhow::Error::msg)?;
    let ms = flent::measure_all(&setups, seeds.len(), &runs);
    let mut r = ExperimentResult::new(flent::ID, flent::TITLE);
    r.notes.push(format!(
        "brisk flent {}: {} Mbit/s up, {} down, base RTT {} ms, queue {} both ways, seeds {:?}, {} s idle then {} s of load.",
        setups[0].test.name(),
        setups[0].up_mbit,
        setups[0].down_mbit,
        setups[0].rtt_ms,
        setups[0].queue,
        a.seeds,
        flent::IDLE_S,
        setups[0].length_s
    ));
    flent::report(&mut r, &setups, &ms);
    for n in &r.notes {
        println!("{n}");
    }
    let acc = brisk_repro::accepted::Accepted::default();
    let path = html::write(&a.out, &[r], false, &acc, None)
        .map_err(|e| anyhow::anyhow!("{}: {e}", a.out.display()))?;
    println!("page: {}", path.display());
    Ok(())
}

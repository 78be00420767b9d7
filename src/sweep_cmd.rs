//! `brisk sweep FILE [--jobs N] [--out DIR [--force]] [--json]`: a parameter sweep
//! (crate `brisk-sweep`) on this machine's cores, with a progress bar on a terminal.
//! The same file runs from Python, locally or on Ray (python/), with the same results.

use brisk_sweep::{run_local, Sweep, SweepResult};
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct SweepArgs {
    /// The sweep file (TOML: base, grid, seeds; see docs/sweeps.md).
    file: PathBuf,
    /// Runs at once (default: every core).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=1024))]
    jobs: Option<u32>,
    /// Write rows.csv (one row per cell, seed and flow), summary.csv (per cell and
    /// flow: mean and 95 % CI of every metric) and runs.jsonl (each run's summary) here.
    #[arg(long)]
    out: Option<PathBuf>,
    /// With --out: replace brisk's output files already in the directory.
    #[arg(long, requires = "out")]
    force: bool,
    /// Print {"rows": [...], "summary": [...]} as JSON instead of the table.
    #[arg(long)]
    json: bool,
}

pub fn cmd_sweep(args: SweepArgs) -> anyhow::Result<()> {
    use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
    let sweep = Sweep::load(&args.file)?;
    if let Some(dir) = &args.out {
        crate::provenance::prepare_out(dir, args.force)?;
    }
    let threads = args
        .jobs
        .map_or_else(brisk_repro::runner::threads, |j| j as usize);
    let total = sweep.cells.len() * sweep.seeds.len();
    let bar = ProgressBar::with_draw_target(Some(total as u64), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(
        "{prefix} [{elapsed_precise}] {wide_bar} {pos}/{len} runs, eta {eta}",
    ) {
        bar.set_style(style);
    }
    bar.set_prefix(format!("brisk sweep {}", sweep.name));
    let runs = run_local(&sweep, threads, &|k, _| bar.set_position(k as u64));
    bar.finish_and_clear();
    let res = SweepResult::assemble(&sweep, runs);
    if let Some(dir) = &args.out {
        res.write_dir(dir)
            .map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
    }
    let text = if args.json {
        format!(
            "{}\n",
            serde_json::json!({ "rows": res.rows, "summary": res.summary })
        )
    } else {
        let mut t = res.table(&sweep);
        if let Some(dir) = &args.out {
            t.push_str(&format!("wrote {}\n", dir.display()));
        }
        t
    };
    crate::emit(&text)?;
    let failures = res.failures();
    if !failures.is_empty() {
        anyhow::bail!("{} of {total} runs failed", failures.len());
    }
    Ok(())
}

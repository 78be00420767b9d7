//! `brisk repro [ID ...|all] [--quick] [--json] [--out DIR] [--timings] [--real-parallel N]`: runs the
//! reproduction suite (crate `brisk-repro`), prints one row per claim (or the JSON
//! document) and, with `--timings`, where the time went, and writes the HTML report.
//! Fails (exit 2) when a claim fails that is not listed in
//! `repro/accepted-failures.toml`.

use brisk_repro::{accepted, html, report, run_suite_timed, select, Progress};
use std::io::Write;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct ReproArgs {
    /// Experiments to run by id (`--list` shows them with their claims), or all (the
    /// default). The real-* experiments need root and TUN, and aqm-vs-ns3 a Python with
    /// the ns3 wheel (BRISK_NS3_PYTHON); elsewhere their claims are n/a.
    ids: Vec<String>,
    /// Fewer seeds and shorter runs (about 5 minutes on 2 cores, most of it the
    /// real-time runs).
    #[arg(long)]
    quick: bool,
    /// List the experiments (id, kind, claims, title) and exit.
    #[arg(long)]
    list: bool,
    /// Print {"experiments": [...]} as JSON instead of the table.
    #[arg(long)]
    json: bool,
    /// Directory for the report (index.html).
    #[arg(long, default_value = "target/repro")]
    out: PathBuf,
    /// At the end, print where the time went: wall and CPU seconds per experiment (its
    /// simulator runs and its analysis) and per phase; also written into the report
    /// (timings.md, and a section of index.html).
    #[arg(long)]
    timings: bool,
    /// Real-time experiments allowed at once, 1..=8 (default: BRISK_REAL_PARALLEL,
    /// else 2; never more than the CPUs). Each runs in namespaces of its own; one that
    /// ran beside another while an emulator reported a warning runs again alone, and
    /// the rest run one at a time (docs/repro.md).
    #[arg(long, value_name = "N")]
    real_parallel: Option<usize>,
}

pub fn cmd_repro(args: ReproArgs) -> anyhow::Result<()> {
    if args.list {
        let mut out = std::io::stdout().lock();
        for e in brisk_repro::REGISTRY {
            let kind = match e.kind {
                brisk_repro::Kind::Simulated => "sim",
                _ => "real time",
            };
            let claims = match (e.claims.first(), e.claims.last()) {
                (Some(a), Some(b)) if a != b => format!("{a}..{b}"),
                (Some(a), _) => a.to_string(),
                _ => String::new(),
            };
            writeln!(out, "{:<18} {:<9} {:<24} {}", e.id, kind, claims, e.title)?;
        }
        return Ok(());
    }
    let exps = select(&args.ids).map_err(anyhow::Error::msg)?;
    match args.real_parallel {
        Some(n) => brisk_repro::real_phase::set_parallel(n),
        None => brisk_repro::real_phase::parallel_setting().map(drop),
    }
    .map_err(anyhow::Error::msg)?;
    let acc = accepted::embedded(accepted::Mode::of(args.quick)).map_err(anyhow::Error::msg)?;
    let progress = Progress::stderr(!args.json);
    let (results, timings) = run_suite_timed(&exps, args.quick, &progress);
    let prov = crate::provenance::provenance(None, None);
    let prov = format!(
        "brisk {} (commit {}), command `{}`, {} on host {}",
        prov["brisk_version"].as_str().unwrap_or("?"),
        prov["git_commit"].as_str().unwrap_or("?"),
        prov["command"]
            .as_array()
            .map(|a| a
                .iter()
                .filter_map(|x| x.as_str())
                .collect::<Vec<_>>()
                .join(" "))
            .unwrap_or_default(),
        prov["date_utc"].as_str().unwrap_or("?"),
        prov["host"].as_str().unwrap_or("?"),
    );
    let path = html::write(&args.out, &results, args.quick, &acc, Some(&prov))
        .map_err(|e| anyhow::anyhow!("{}: {e}", args.out.display()))?;
    if args.timings {
        html::write_timings(&args.out, &timings)
            .map_err(|e| anyhow::anyhow!("{}: {e}", args.out.display()))?;
    }
    let mut stdout = std::io::stdout().lock();
    let printed = if args.json {
        writeln!(stdout, "{:#}", report::to_json(&results, &acc))
    } else {
        write!(stdout, "{}", report::table(&results, &acc))
            .and_then(|()| writeln!(stdout, "report: {}", path.display()))
    };
    // The JSON document stays one document on stdout: the timings go to stderr then.
    let printed = printed.and_then(|()| match (args.timings, args.json) {
        (false, _) => Ok(()),
        (true, false) => write!(stdout, "\n{}", timings.table()),
        (true, true) => {
            eprint!("{}", timings.table());
            Ok(())
        }
    });
    match printed {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => return Err(e.into()),
        _ => {}
    }
    let reg = accepted::check(&results, &acc);
    for id in &reg.now_passing {
        eprintln!("brisk repro: note: accepted failure {id} now passes; remove it from repro/accepted-failures.toml");
    }
    if !reg.unexpected.is_empty() {
        anyhow::bail!(
            "{} claim(s) failed that are not in repro/accepted-failures.toml: {}",
            reg.unexpected.len(),
            reg.unexpected.join(", ")
        );
    }
    Ok(())
}

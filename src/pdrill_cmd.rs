//! `brisk pdrill`: runs packetdrill scripts against brisk's sans-IO endpoint in
//! virtual time (crates/brisk-pdrill) and prints one result per script plus a tally.

use brisk_pdrill::{run_script, Outcome, RunConfig};
use std::collections::BTreeMap;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct PdrillArgs {
    /// Scripts (.pkt) or directories to search for them (recursively).
    #[arg(required = true)]
    pub scripts: Vec<PathBuf>,
    /// Timing tolerance for outbound packets and blocking calls, µs (packetdrill's
    /// --tolerance_usecs; a script's own --tolerance_usecs line wins).
    #[arg(long, default_value_t = 4000)]
    pub tolerance_usecs: i64,
    /// Print every packet (in script space) and call of each script.
    #[arg(short, long)]
    pub verbose: bool,
    /// Print only the tally and the unsupported/fail reasons grouped, not every script.
    #[arg(long)]
    pub summary: bool,
}

fn collect(p: &PathBuf, out: &mut Vec<PathBuf>) -> anyhow::Result<()> {
    if p.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(p)?
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            if e.is_dir() || e.extension().is_some_and(|x| x == "pkt") {
                collect(&e, out)?;
            }
        }
    } else {
        out.push(p.clone());
    }
    Ok(())
}

/// The first words of a reason, for grouping ("setsockopt TCP_FASTOPEN", "bad outbound TCP options").
fn group(o: &Outcome) -> String {
    match o {
        Outcome::Pass => "pass".into(),
        Outcome::Unsupported { feature, .. } => format!("unsupported: {feature}"),
        Outcome::Fail { msg, .. } => {
            let first = msg.lines().next().unwrap_or("");
            let cut = first
                .find(|c: char| c.is_ascii_digit())
                .unwrap_or(first.len());
            format!("fail: {}", first[..cut].trim_end_matches([' ', ':']))
        }
        Outcome::Parse(e) => format!("parse error: {}", e.msg.split('"').next().unwrap_or("")),
    }
}

pub fn cmd_pdrill(args: PdrillArgs) -> anyhow::Result<bool> {
    let mut files = Vec::new();
    for p in &args.scripts {
        collect(p, &mut files)?;
    }
    let cfg = RunConfig {
        tolerance_us: args.tolerance_usecs,
        trace: args.verbose,
        ..RunConfig::default()
    };
    let (mut pass, mut fail, mut unsup, mut parse) = (0, 0, 0, 0);
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let src =
            std::fs::read_to_string(f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
        let r = run_script(&src, &cfg);
        match r.outcome {
            Outcome::Pass => pass += 1,
            Outcome::Fail { .. } => fail += 1,
            Outcome::Unsupported { .. } => unsup += 1,
            Outcome::Parse(_) => parse += 1,
        }
        if !args.summary {
            for l in &r.log {
                println!("  {l}");
            }
            println!("{}: {r}", f.display());
        }
        groups
            .entry(group(&r.outcome))
            .or_default()
            .push(f.display().to_string());
    }
    println!(
        "{} scripts: {pass} pass, {fail} fail, {unsup} unsupported, {parse} parse errors",
        files.len()
    );
    if args.summary {
        let mut g: Vec<_> = groups.into_iter().filter(|(k, _)| k != "pass").collect();
        g.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        for (k, v) in g {
            println!("{:4}  {k}", v.len());
        }
    }
    Ok(fail == 0 && parse == 0)
}

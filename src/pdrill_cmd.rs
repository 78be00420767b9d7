//! `brisk pdrill`: runs packetdrill scripts against brisk's sans-IO endpoint in
//! virtual time (crates/brisk-pdrill) and prints one result per script plus a tally.

use brisk_pdrill::{known_failure, run_script, Outcome, ParseError, Report, RunConfig};
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

/// Largest script read, bytes. Upstream scripts are under 20 KB; a larger file is not
/// read (nor allocated) but reported as that script's parse error.
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// Exit status: every script passed.
pub const EXIT_PASS: u8 = 0;
/// Exit status: at least one script failed or did not parse.
pub const EXIT_FAIL: u8 = 1;
/// Exit status: nothing failed, but at least one script was unsupported (not a pass).
/// Status 2 is the command's own error (bad argument, unreadable path).
pub const EXIT_UNSUPPORTED: u8 = 3;

/// Reads a script, refusing files over [`MAX_SCRIPT_BYTES`] before reading them.
fn read_script(f: &std::path::Path) -> anyhow::Result<Result<String, String>> {
    use std::io::Read;
    let file = std::fs::File::open(f).map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
    let mut src = String::new();
    // Read one byte past the cap so that a file growing under us is still caught.
    let n = file
        .take(MAX_SCRIPT_BYTES + 1)
        .read_to_string(&mut src)
        .map_err(|e| anyhow::anyhow!("{}: {e}", f.display()))?;
    if n as u64 > MAX_SCRIPT_BYTES {
        return Ok(Err(format!(
            "the script is larger than {MAX_SCRIPT_BYTES} bytes (the limit for a script file)"
        )));
    }
    Ok(Ok(src))
}

/// Runs the scripts; returns the exit status ([`EXIT_PASS`], [`EXIT_FAIL`] or
/// [`EXIT_UNSUPPORTED`]).
pub fn cmd_pdrill(args: PdrillArgs) -> anyhow::Result<u8> {
    let mut files = Vec::new();
    for p in &args.scripts {
        collect(p, &mut files)?;
    }
    let cfg = RunConfig {
        tolerance_us: args.tolerance_usecs,
        trace: args.verbose,
        ..RunConfig::default()
    };
    let (mut pass, mut fail, mut unsup, mut parse, mut known) = (0, 0, 0, 0, 0);
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let mut mark = None;
        let r = match read_script(f)? {
            Ok(src) => {
                mark = known_failure(&src).map(str::to_string);
                run_script(&src, &cfg)
            }
            Err(msg) => Report {
                outcome: Outcome::Parse(ParseError {
                    line: 0,
                    col: 0,
                    msg,
                }),
                skipped: Vec::new(),
                events_run: 0,
                log: Vec::new(),
            },
        };
        // A script marked `// xfail:` that fails at a packet or call is a known
        // failure, not a failure; one that ends otherwise (passes, say) is a failure
        // until its mark is removed.
        let (verdict, key) = match (&mark, &r.outcome) {
            (Some(reason), Outcome::Fail { .. }) => {
                known += 1;
                (
                    Some(format!("known failure ({reason}): {r}")),
                    "known failure".to_string(),
                )
            }
            (Some(reason), _) => {
                fail += 1;
                (
                    Some(format!(
                        "marked xfail ({reason}) but ended {r}; remove the mark if it passes"
                    )),
                    "fail: marked xfail but did not fail".to_string(),
                )
            }
            (None, o) => {
                match o {
                    Outcome::Pass => pass += 1,
                    Outcome::Fail { .. } => fail += 1,
                    Outcome::Unsupported { .. } => unsup += 1,
                    Outcome::Parse(_) => parse += 1,
                }
                (None, group(o))
            }
        };
        if !args.summary {
            for l in &r.log {
                println!("  {l}");
            }
            match &verdict {
                Some(v) => println!("{}: {v}", f.display()),
                None => println!("{}: {r}", f.display()),
            }
        }
        groups.entry(key).or_default().push(f.display().to_string());
    }
    println!(
        "{} scripts: {pass} pass, {fail} fail, {known} known failures, {unsup} unsupported, {parse} parse errors",
        files.len()
    );
    if args.summary {
        let mut g: Vec<_> = groups.into_iter().filter(|(k, _)| k != "pass").collect();
        g.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
        for (k, v) in g {
            println!("{:4}  {k}", v.len());
        }
    }
    Ok(if fail + parse > 0 {
        EXIT_FAIL
    } else if unsup > 0 {
        EXIT_UNSUPPORTED
    } else {
        EXIT_PASS
    })
}

//! Where a run's output came from: the brisk version and git commit, the command line,
//! the date and host, and the scenario (its SHA-256, and a copy beside the results).
//! Written into `summary.json` as a `provenance` object; everything else in that file
//! stays byte-identical across runs of the same scenario and seed.
//!
//! Also the rule for `--out`: a directory that already holds files is refused unless
//! `--force` is given, and then only the files brisk writes are removed first, so stale
//! pcaps never sit beside new CSVs and nothing else of the user's is touched.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The files and suffixes a run or sweep writes into `--out` (the only ones `--force`
/// removes).
const OURS: &[&str] = &[
    "summary.json",
    "scenario.toml",
    ".csv",
    ".pcap",
    ".pcapng",
    ".svg",
    ".md",
    ".mm.log",
    ".trace",
    "plot.html",
    "runs.jsonl",
];

fn is_ours(name: &str) -> bool {
    OURS.iter().any(|p| {
        if p.starts_with('.') {
            name.ends_with(p)
        } else {
            name == *p
        }
    })
}

/// `seed-<k>`: the per-seed directories `brisk run --seeds --out` writes.
fn is_seed_dir(name: &str) -> bool {
    name.strip_prefix("seed-")
        .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether `dir` holds nothing but brisk's output files.
fn only_ours(dir: &Path) -> anyhow::Result<bool> {
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        if !(e.file_type()?.is_file() && is_ours(&e.file_name().to_string_lossy())) {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Makes `dir` ready for a run's files: created if missing; refused if it holds files,
/// unless `force`, which removes brisk's own output files (and refuses if others stay).
pub fn prepare_out(dir: &Path, force: bool) -> anyhow::Result<()> {
    if !dir.exists() {
        std::fs::create_dir_all(dir)?;
        return Ok(());
    }
    anyhow::ensure!(dir.is_dir(), "--out {}: not a directory", dir.display());
    let mut others = Vec::new();
    let mut ours = Vec::new();
    for e in std::fs::read_dir(dir)? {
        let e = e?;
        let name = e.file_name().to_string_lossy().into_owned();
        if e.file_type()?.is_file() && is_ours(&name) {
            ours.push(e.path());
        } else if e.file_type()?.is_dir() && is_seed_dir(&name) && only_ours(&e.path())? {
            // A `--seeds` run's per-seed output: brisk's, removed whole by --force.
            ours.push(e.path());
        } else {
            others.push(name);
        }
    }
    if ours.is_empty() && others.is_empty() {
        return Ok(());
    }
    anyhow::ensure!(
        force,
        "--out {}: the directory is not empty ({} files); give --force to replace brisk's output files in it, or choose an empty directory",
        dir.display(),
        ours.len() + others.len()
    );
    anyhow::ensure!(
        others.is_empty(),
        "--out {}: --force removes only brisk's output files, and the directory also holds {:?}",
        dir.display(),
        others
    );
    for p in ours {
        if p.is_dir() {
            std::fs::remove_dir_all(p)?;
        } else {
            std::fs::remove_file(p)?;
        }
    }
    Ok(())
}

/// Hex SHA-256 of `bytes`.
pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// UTC date and time now, RFC 3339 (the CLI's clock; the simulator never reads one).
fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let (days, rem) = (secs / 86_400, secs % 86_400);
    // Civil date from days since 1970-01-01 (H. Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The provenance object for a run of the scenario file `scenario` (its text).
pub fn provenance(scenario_path: Option<&Path>, scenario_text: Option<&str>) -> Value {
    json!({
        "brisk_version": env!("CARGO_PKG_VERSION"),
        "git_commit": env!("BRISK_GIT_COMMIT"),
        "command": std::env::args().collect::<Vec<_>>(),
        "date_utc": now_utc(),
        "host": host(),
        "scenario_file": scenario_path.map(|p| p.display().to_string()),
        "scenario_sha256": scenario_text.map(|t| sha256_hex(t.as_bytes())),
    })
}

/// Adds `provenance` to `dir/summary.json` and copies the scenario text beside it.
pub fn stamp(dir: &Path, prov: Value, scenario_text: Option<&str>) -> anyhow::Result<()> {
    let path = dir.join("summary.json");
    let mut v: Value = serde_json::from_slice(&std::fs::read(&path)?)?;
    if let Some(o) = v.as_object_mut() {
        o.insert("provenance".into(), prov);
    }
    std::fs::write(&path, format!("{}\n", serde_json::to_string_pretty(&v)?))?;
    if let Some(t) = scenario_text {
        std::fs::write(dir.join("scenario.toml"), t)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(tag: &str) -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("brisk-prov-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn out_dirs_are_refused_when_not_empty_and_force_removes_only_ours() {
        let d = tmp("out");
        prepare_out(&d, false).unwrap();
        std::fs::write(d.join("rtt.csv"), "x").unwrap();
        std::fs::write(d.join("10.0.0.1.pcap"), "x").unwrap();
        assert!(prepare_out(&d, false)
            .unwrap_err()
            .to_string()
            .contains("--force"));
        prepare_out(&d, true).unwrap();
        assert_eq!(std::fs::read_dir(&d).unwrap().count(), 0);
        std::fs::write(d.join("notes.txt"), "mine").unwrap();
        std::fs::write(d.join("rtt.csv"), "x").unwrap();
        assert!(
            prepare_out(&d, true).is_err(),
            "a foreign file stops --force"
        );
        assert!(d.join("notes.txt").exists() && d.join("rtt.csv").exists());
        let _ = std::fs::remove_dir_all(&d);
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        let s = now_utc();
        assert_eq!(s.len(), 20, "{s}");
        assert!(s.ends_with('Z') && s.as_bytes()[10] == b'T', "{s}");
        assert!(s.starts_with("20"), "{s}");
    }
}

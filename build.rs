//! Records the git commit brisk is built from, for the provenance of every run
//! (`BRISK_GIT_COMMIT`: short hash, "+dirty" with uncommitted changes, or "unknown"
//! outside a git checkout).
//!
//! Two rules keep a second `cargo build` from recompiling brisk:
//! - git runs with `--no-optional-locks`: a plain `git status` refreshes the index's
//!   cached file times and rewrites `.git/index` (always so in a fresh clone), which
//!   this script watches, so every build would see a changed index and run again.
//! - only files that exist are watched, found with `git rev-parse --git-path` (in a
//!   worktree `.git` is a file, and a path that does not exist reruns the script on
//!   every build): HEAD, the index (staging and commits change it), the checked-out
//!   branch's ref and `packed-refs`.

use std::path::{Path, PathBuf};
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .arg("--no-optional-locks")
        .args(args)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Watches `path` (relative to the working directory, as git prints it) if it exists.
fn watch(path: Option<String>) {
    if let Some(p) = path.map(PathBuf::from).filter(|p| p.exists()) {
        println!("cargo:rerun-if-changed={}", p.display());
    }
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).map_or("unknown".to_string(), |c| {
        let dirty =
            git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
        if dirty {
            format!("{c}+dirty")
        } else {
            c
        }
    });
    println!("cargo:rustc-env=BRISK_GIT_COMMIT={commit}");
    // The cargo profile this binary is built with (`release`, `ci`, ...), so a benchmark
    // says which build it measured: cargo's PROFILE says only release or debug, but the
    // profile names the directory the build writes to (target/<profile>/build/<pkg>/out).
    let profile = std::env::var("OUT_DIR").ok().and_then(|d| {
        let p = Path::new(&d).ancestors().nth(3)?.file_name()?;
        Some(p.to_string_lossy().into_owned())
    });
    println!(
        "cargo:rustc-env=BRISK_PROFILE={}",
        profile.as_deref().unwrap_or("unknown")
    );
    if !Path::new(".git").exists() {
        return;
    }
    watch(git(&["rev-parse", "--git-path", "HEAD"]));
    watch(git(&["rev-parse", "--git-path", "index"]));
    watch(git(&["rev-parse", "--git-path", "packed-refs"]));
    if let Some(branch) = git(&["symbolic-ref", "-q", "HEAD"]) {
        watch(git(&["rev-parse", "--git-path", &branch]));
    }
}

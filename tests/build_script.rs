//! build.rs, which stamps the git commit into brisk, must not make the next
//! `cargo build` recompile: it once ran a plain `git status`, which rewrites
//! `.git/index` (always so in a fresh clone), and watched that index, so every build
//! found it changed (24 s of recompiling brisk on the second `cargo run`). Checked on a
//! one-file crate built with brisk's own build.rs in a fresh repository.

use std::path::Path;
use std::process::Command;

fn run(dir: &Path, cmd: &str, args: &[&str]) -> String {
    let out = Command::new(cmd)
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .output()
        .unwrap_or_else(|e| panic!("{cmd}: {e}"));
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{cmd} {args:?}: {text}");
    text
}

#[test]
fn a_second_build_reuses_the_first_and_a_change_says_dirty() {
    if Command::new("git").arg("--version").output().is_err() {
        eprintln!("skipped: git is not installed");
        return;
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build_rs = Path::new(env!("CARGO_MANIFEST_DIR")).join("build.rs");
    let dir = std::env::temp_dir().join(format!("brisk-build-rs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"stamp\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
    )
    .unwrap();
    std::fs::copy(&build_rs, dir.join("build.rs")).unwrap();
    std::fs::write(
        dir.join("src/main.rs"),
        "fn main() { print!(\"{}\", env!(\"BRISK_GIT_COMMIT\")); }\n",
    )
    .unwrap();
    std::fs::write(dir.join(".gitignore"), "/target\n").unwrap();
    let git = |args: &[&str]| {
        let mut a = vec!["-c", "user.name=t", "-c", "user.email=t@example.org"];
        a.extend_from_slice(args);
        run(&dir, "git", &a)
    };
    git(&["init", "-q"]);
    git(&["add", "."]);
    git(&["commit", "-q", "-m", "one"]);
    // Rewrite a tracked file with the same bytes: its cached time in the index is now
    // stale, so a plain `git status` would refresh and rewrite the index, as after a
    // fresh clone.
    std::fs::write(
        dir.join("src/main.rs"),
        std::fs::read(dir.join("src/main.rs")).unwrap(),
    )
    .unwrap();
    let head = git(&["rev-parse", "--short=12", "HEAD"]);

    let first = run(&dir, &cargo, &["build", "--offline"]);
    assert!(first.contains("Compiling stamp"), "{first}");
    let second = run(&dir, &cargo, &["build", "--offline"]);
    assert!(
        !second.contains("Compiling"),
        "the second build recompiled:\n{second}"
    );
    let stamp = run(
        &dir,
        &dir.join("target/debug/stamp").display().to_string(),
        &[],
    );
    assert_eq!(stamp, head.trim());

    // A staged change is one: the index changed, so the stamp says +dirty.
    std::fs::write(dir.join("notes.txt"), "x\n").unwrap();
    git(&["add", "notes.txt"]);
    run(&dir, &cargo, &["build", "--offline"]);
    let stamp = run(
        &dir,
        &dir.join("target/debug/stamp").display().to_string(),
        &[],
    );
    assert_eq!(stamp, format!("{}+dirty", head.trim()));
    let _ = std::fs::remove_dir_all(&dir);
}

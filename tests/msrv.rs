//! The declared minimum Rust version (`rust-version` in the workspace) covers what the
//! locked dependencies declare they need, dev-dependencies included (the README's test
//! command builds them). Reads `cargo metadata` for the lockfile's own answer.

use std::process::Command;

fn version(s: &str) -> Option<(u64, u64, u64)> {
    let mut it = s.trim().split('.').map(|p| p.parse::<u64>().ok());
    Some((
        it.next()??,
        it.next().flatten().unwrap_or(0),
        it.next().flatten().unwrap_or(0),
    ))
}

#[test]
fn declared_rust_version_covers_every_locked_dependency() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).expect("metadata is JSON");
    let packages = meta["packages"].as_array().expect("packages");
    let ours = packages
        .iter()
        .find(|p| p["name"] == "brisk")
        .and_then(|p| p["rust_version"].as_str())
        .and_then(version)
        .expect("brisk declares rust-version");
    let mut too_new = Vec::new();
    for p in packages {
        // Our own crates share the workspace's value; they must all declare it.
        if p["source"].is_null() {
            let v = p["rust_version"].as_str().and_then(version);
            assert_eq!(v, Some(ours), "{} must inherit rust-version", p["name"]);
            continue;
        }
        if let Some(v) = p["rust_version"].as_str().and_then(version) {
            if v > ours {
                too_new.push(format!(
                    "{} {} needs {}",
                    p["name"], p["version"], p["rust_version"]
                ));
            }
        }
    }
    assert!(
        too_new.is_empty(),
        "rust-version {ours:?} is below what the lockfile needs: {too_new:?}"
    );
}

//! Shared helpers for the lab tests.
#![allow(dead_code)]

use std::process::Command;

/// Whether the lab can run here; prints why not to stderr when it cannot.
pub fn lab_available(test: &str) -> bool {
    match brisk_emu::netns::unsupported_reason() {
        Some(why) => {
            eprintln!("SKIPPED {test}: {why}");
            false
        }
        None => true,
    }
}

/// Namespaces `ip netns list` shows.
pub fn ip_netns_list() -> Vec<String> {
    let out = Command::new(brisk_emu::netns::ip_binary())
        .args(["netns", "list"])
        .output()
        .expect("ip netns list runs");
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

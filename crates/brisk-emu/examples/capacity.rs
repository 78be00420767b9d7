//! Emulator capacity benchmark: kernel TCP through an emulated 10 Gbit/s, zero-delay
//! path for ~5 s. Needs root and /dev/net/tun. Prints a one-line summary, then JSON.
//!
//! `cargo run --release -p brisk-emu --example capacity [rate_bps] [seconds]`

use brisk_emu::{bench_capacity_with, netns};

fn main() {
    if let Some(why) = netns::unsupported_reason() {
        eprintln!("capacity: cannot run here: {why}");
        std::process::exit(2);
    }
    let mut args = std::env::args().skip(1);
    let rate: u64 = args
        .next()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000_000_000);
    let secs: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    match bench_capacity_with(rate, brisk_time::Duration::from_secs(secs)) {
        Ok(r) => println!(
            "{}",
            serde_json::to_string_pretty(&r.to_json("capacity")).unwrap_or_default()
        ),
        Err(e) => {
            eprintln!("capacity: {e}");
            std::process::exit(1);
        }
    }
}

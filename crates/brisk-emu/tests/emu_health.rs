//! The emulator knows when it falls behind (issue 15 §1): a kernel CUBIC transfer
//! through an impossible emulated rate (100 Gbit/s, far beyond what one userspace
//! thread moves on any machine) ends with a "could not keep up" warning in the
//! report, while the same transfer through a modest 10 Mbit/s link is clean (one of
//! up to three runs: late deliveries on an overloaded shared host are real). Needs
//! root and /dev/net/tun; bounded transfers (3 s each), everything torn down by the
//! lab's guards.

mod common;

use brisk_emu::{baseline, Amount, BulkConfig, EmuConfig, EmulatorOptions};
use brisk_time::Duration;
use common::lab_available;

fn run(rate_bps: u64, secs: u64) -> brisk_emu::BaselineReport {
    run_with(rate_bps, secs, EmulatorOptions::default())
}

fn run_with(rate_bps: u64, secs: u64, opts: EmulatorOptions) -> brisk_emu::BaselineReport {
    let path = EmuConfig::bottleneck(rate_bps, Duration::ZERO);
    let bulk = BulkConfig {
        amount: Amount::Time(std::time::Duration::from_secs(secs)),
        cc: "cubic".into(),
        timeout: std::time::Duration::from_secs(secs + 20),
        ..BulkConfig::default()
    };
    baseline(&path, &bulk, opts).unwrap()
}

#[test]
fn an_impossible_rate_is_reported_and_a_modest_one_is_clean() {
    if !lab_available("an_impossible_rate_is_reported_and_a_modest_one_is_clean") {
        return;
    }
    // With TUN offloads and egress coalescing the loop carries a run in a fraction of
    // its time (the kernels and the applications, on the same cores, set the pace,
    // and the self-check rightly stays quiet), so it is made to fall behind the way
    // it does without them: every packet in its own write (no coalescing wait).
    let one_per_write = EmulatorOptions {
        coalesce_slack: Duration::ZERO,
        ..EmulatorOptions::default()
    };
    let fast = run_with(100_000_000_000, 3, one_per_write);
    let h = &fast.emulator.health;
    eprintln!("100 Gbit/s: {h:?}");
    assert!(fast.transfer.intact);
    assert!(
        h.warnings
            .iter()
            .any(|w| w.starts_with("could not keep up")),
        "{:?}",
        h.warnings
    );
    assert!(h.serviceable_bps > 0.0 && h.serviceable_bps < 100e9);
    let json = fast.to_json("health");
    assert!(json["emulator"]["health"]["warnings"][0].is_string());

    // A modest rate never makes the loop fall behind: no headroom, rate or drop
    // warning in any run. Late deliveries are a different matter: on a shared,
    // overloaded machine the thread can be preempted for milliseconds, and then the
    // warning is the truth. So up to three runs, and one of them must be clean, unless
    // the machine is overloaded (more runnable tasks than cores): then a late-delivery
    // warning is what an honest emulator must say, and the test only checks it is
    // consistent with the measured p99.
    let mut clean = false;
    let mut overloaded = false;
    for attempt in 0..3 {
        let slow = run(10_000_000, 3);
        let h = &slow.emulator.health;
        eprintln!("10 Mbit/s, run {attempt}: {h:?}");
        assert!(slow.transfer.intact);
        assert!(
            h.warnings.iter().all(|w| w.starts_with("late deliveries")),
            "{:?}",
            h.warnings
        );
        assert!(h.headroom > 0.5, "{h:?}");
        assert_eq!(h.kernel_drops, Some(0));
        assert!(h.link_utilization.unwrap() > 0.8, "{h:?}");
        assert_eq!(
            h.warnings.iter().any(|w| w.starts_with("late deliveries")),
            h.late_p99_us > h.late_threshold_us,
            "{h:?}"
        );
        if h.is_clean() {
            clean = true;
            break;
        }
        overloaded |= machine_overloaded();
    }
    if !clean && overloaded {
        eprintln!(
            "every 10 Mbit/s run had late deliveries while the machine was overloaded \
             (load above its cores): the warning was the truth, not a false alarm"
        );
        return;
    }
    assert!(clean, "three 10 Mbit/s runs all had late deliveries");
}

/// Whether the 1-minute load average exceeds the cores this process may use.
fn machine_overloaded() -> bool {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .and_then(|s| s.split_whitespace().next()?.parse::<f64>().ok())
        .is_some_and(|load| {
            eprintln!("load average {load:.2} on {cores} cores");
            load > cores
        })
}

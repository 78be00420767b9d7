//! Strict priority by DSCP over real packets (RC3, NSDI 2014 §5.2's priority test;
//! claim RC3-16): two long Linux CUBIC flows through one emulated 20 Mbit/s
//! bottleneck whose queue is brisk-net's `prio` (2 bands, one shared 2-BDP buffer,
//! push-out). One sender marks its socket DSCP 0 (`IP_TOS` 0x00, band 0), the other
//! DSCP 4 (`IP_TOS` 0x10, band 1). Whichever starts first, once both run the DSCP-0
//! flow takes at least 95 % of what the two receive: the queue reads the class from
//! the real IP header the kernel wrote, through the TUN device, unchanged.
//!
//! Each flow has RTT 20 ms (10 ms each way on its access path). Needs root and
//! /dev/net/tun (skips otherwise); the run's namespaces, TUN devices and sockets go
//! with the dumbbell when the run returns, also on an error.

mod common;

use brisk_emu::path::{EmuConfig, PathSpec, QueueSpec, Rate};
use brisk_emu::realrun::{run_real, RealFlow, RealResult, RealRun};
use brisk_scenario::units::Size;
use brisk_time::Duration;
use common::lab_available;

const RATE_BPS: u64 = 20_000_000;
const RTT_MS: u64 = 20;
/// When the second flow joins, and when the run ends.
const JOIN_S: u64 = 3;
const END_S: u64 = 9;
/// The share is measured from this long after the join (the joining flow's slow
/// start and the first flow's reaction) to the end.
const SETTLE_MS: u64 = 500;

fn flow(dscp: u8, start_s: u64) -> RealFlow {
    RealFlow::linux_bulk(
        "cubic",
        Some(dscp),
        Duration::from_secs(start_s),
        Duration::from_millis(RTT_MS),
    )
}

/// Runs DSCP 0 and DSCP 4 flows, the low-priority one first if `low_first`; returns
/// the result with flow 0 the high-priority one.
fn run(low_first: bool) -> RealResult {
    let (high_at, low_at) = if low_first { (JOIN_S, 0) } else { (0, JOIN_S) };
    let bdp = RATE_BPS * RTT_MS / 1000 / 8;
    let run = RealRun {
        name: format!(
            "prio-real-{}",
            if low_first { "low-first" } else { "high-first" }
        ),
        seed: 1,
        duration: Duration::from_secs(END_S),
        path: EmuConfig {
            rtt: None,
            bottleneck: PathSpec {
                rate: Some(Rate(RATE_BPS)),
                queue: Some(QueueSpec::Prio {
                    bands: Some(2),
                    packets: None,
                    bytes: Some(Size(2 * bdp)),
                    push_out: None,
                    band0_pie: None,
                }),
                ..PathSpec::default()
            },
            reverse: None,
            seed: 1,
        },
        flows: vec![flow(0, high_at), flow(4, low_at)],
        sample_interval: Duration::from_millis(100),
        pcap_dir: None,
        link_log_dir: None,
    };
    let r = run_real(&run).expect("real run");
    eprintln!("{}", r.table());
    r
}

/// Bytes each flow's receiver read in `[from, to)` ns since the run's start.
fn bytes_between(r: &RealResult, from: u64, to: u64) -> Vec<u64> {
    r.flows
        .iter()
        .map(|f| {
            f.goodput_series
                .iter()
                .filter(|(end, _)| *end > from && *end <= to)
                .map(|(_, b)| *b)
                .sum()
        })
        .collect()
}

fn check(r: &RealResult, order: &str) {
    for f in &r.flows {
        assert!(f.stream_ok, "{order}: flow {} intact: {:?}", f.id, f.error);
        assert_eq!(
            f.bytes_delivered + f.drain.bytes,
            f.bytes_sent,
            "{order}: flow {} counted once",
            f.id
        );
    }
    let from = (JOIN_S * 1000 + SETTLE_MS) * 1_000_000;
    let to = END_S * 1_000_000_000;
    let b = bytes_between(r, from, to);
    let total = (b[0] + b[1]) as f64;
    let secs = (to - from) as f64 / 1e9;
    let share = b[0] as f64 / total.max(1.0);
    let bands = r.emulator.forward.prio_bands.clone().unwrap_or_default();
    eprintln!(
        "{order}: high {:.2} Mbit/s, low {:.2} Mbit/s over the overlap, high share {:.1} %; bands {bands:?}",
        b[0] as f64 * 8.0 / secs / 1e6,
        b[1] as f64 * 8.0 / secs / 1e6,
        share * 100.0
    );
    // The link is used: the two together get most of the rate.
    assert!(
        total * 8.0 / secs > 0.8 * RATE_BPS as f64,
        "{order}: {total} bytes in {secs} s"
    );
    assert!(share >= 0.95, "{order}: high-priority share {share}");
    // Both bands saw traffic: the queue classified the real packets by their DSCP
    // rather than sending all to one band. (A starved low flow sends little, so its
    // band's count is small when it joins second.)
    assert_eq!(
        bands.len(),
        2,
        "{order}: the bottleneck runs the prio queue"
    );
    assert!(
        bands[0].enqueued > 1000 && bands[1].enqueued > 20,
        "{order}: {bands:?}"
    );
}

#[test]
fn the_dscp_0_flow_takes_the_link_whatever_the_start_order() {
    if !lab_available("the_dscp_0_flow_takes_the_link_whatever_the_start_order") {
        return;
    }
    if !brisk_emu::bulk::available_congestion_controls()
        .iter()
        .any(|c| c == "cubic")
    {
        eprintln!("SKIPPED prio_real: the kernel offers no cubic congestion control");
        return;
    }
    let t0 = std::time::Instant::now();
    let a = run(true);
    let b = run(false);
    // The runs' namespaces (and with them the TUN devices and sockets) are gone.
    let mine = format!("brisk-{}-", std::process::id());
    let left: Vec<String> = brisk_emu::netns::list_lab_namespaces()
        .expect("list namespaces")
        .into_iter()
        .filter(|n| n.starts_with(&mine))
        .collect();
    assert!(left.is_empty(), "namespaces left behind: {left:?}");
    check(&a, "low first");
    check(&b, "high first");
    eprintln!("both orders took {:.1} s", t0.elapsed().as_secs_f64());
}

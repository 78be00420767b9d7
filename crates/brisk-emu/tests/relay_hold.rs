//! Issue 36 §5's two measuring tools over real packets: the bare TUN relay
//! (`emu/relay.rs`, `brisk bench emu --relay`) carries a kernel transfer intact with
//! whole TSO frames, and the emulator with its coalescing wait held in the loop
//! (`EmulatorOptions::coalesce_hold`, `BRISK_EMU_HOLD=1`) carries one intact with
//! every packet delivered no earlier than its departure. Needs root and
//! /dev/net/tun; bounded transfers (1 s each), everything torn down by the lab's
//! guards.

mod common;

use brisk_emu::bench::relay_baseline;
use brisk_emu::{baseline, Amount, BulkConfig, EmuConfig, EmulatorOptions};
use brisk_time::Duration;
use common::lab_available;

fn bulk(secs: u64) -> BulkConfig {
    BulkConfig {
        amount: Amount::Time(std::time::Duration::from_secs(secs)),
        cc: "cubic".into(),
        timeout: std::time::Duration::from_secs(secs + 20),
        ..BulkConfig::default()
    }
}

#[test]
fn the_bare_relay_carries_a_kernel_transfer_intact_in_whole_frames() {
    if !lab_available("the_bare_relay_carries_a_kernel_transfer_intact_in_whole_frames") {
        return;
    }
    let (t, r) = relay_baseline(&bulk(1)).unwrap();
    eprintln!(
        "relay: {:.2} Gbit/s, {:?}",
        t.goodput_bps / 1e9,
        (r.forward, r.reverse)
    );
    assert!(t.intact, "the receiver saw the stream corrupted");
    assert!(t.bytes_received > 0);
    assert_eq!(r.forward.write_errors + r.reverse.write_errors, 0);
    assert_eq!(r.forward.read_errors + r.reverse.read_errors, 0);
    // Every payload byte went through the relay, with headers on top.
    assert!(r.forward.bytes >= t.bytes_received);
    // Offloads are on by default, so the sender's TSO frames go through whole:
    // far fewer frames than 1448-byte segments.
    if brisk_emu::tun::offload_from_env().unwrap() {
        assert!(
            r.forward.frames * 1448 * 2 < r.forward.bytes,
            "{} frames for {} bytes",
            r.forward.frames,
            r.forward.bytes
        );
    }
    assert!(r.reverse.frames > 0, "the ACKs went back through the relay");
}

#[test]
fn holding_for_coalescing_keeps_the_transfer_intact_and_the_timing_honest() {
    if !lab_available("holding_for_coalescing_keeps_the_transfer_intact_and_the_timing_honest") {
        return;
    }
    let opts = EmulatorOptions {
        coalesce_hold: true,
        coalesce_slack: Duration::from_micros(20),
        delivery_log: 50_000,
        ..EmulatorOptions::default()
    };
    let path = EmuConfig::bottleneck(2_000_000_000, Duration::ZERO);
    let r = baseline(&path, &bulk(1), opts).unwrap();
    let f = &r.emulator.forward;
    eprintln!(
        "hold: {:.2} Gbit/s, {} packets in {} super-packet writes of {}, p50 {} ns, p99 {} ns",
        r.transfer.goodput_bps / 1e9,
        f.gso_packets,
        f.gso_writes,
        f.delivered_packets,
        f.delivery_error.p50_ns,
        f.delivery_error.p99_ns
    );
    assert!(r.transfer.intact, "the receiver saw the stream corrupted");
    assert!(f.delivered_packets > 1000);
    assert_eq!(f.write_errors, 0);
    assert!(f.gso_writes > 0 && f.gso_packets > f.gso_writes);
    // Held or not, no packet is written before the model lets it leave, and each
    // record's error is its own write time minus its own departure.
    assert!(!f.deliveries.is_empty());
    for d in &f.deliveries {
        assert!(
            d.written >= d.scheduled,
            "{d:?} written before its departure"
        );
        assert!(d.scheduled >= d.read_at, "{d:?} left before it arrived");
    }
}

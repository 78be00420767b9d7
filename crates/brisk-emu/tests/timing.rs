//! Emulator timing on real packets: a burst of 1500-byte UDP datagrams through an
//! emulated 10 Mbit/s link leaves 1.2 ms apart, as the model schedules them, and the
//! emulator writes each within a small error of its scheduled time. Needs root.

mod common;

use std::net::UdpSocket;
use std::time::Duration;

use brisk_emu::lab::{ADDR_A, ADDR_B};
use brisk_emu::{EmuConfig, Emulator, EmulatorOptions, TwoHosts};
use common::lab_available;

const PKTS: usize = 60;
const PAYLOAD: usize = 1500 - 20 - 8;
const SPACING_NS: i64 = 1_200_000; // 1500 B at 10 Mbit/s

#[test]
fn packets_leave_at_the_serialisation_rate() {
    if !lab_available("packets_leave_at_the_serialisation_rate") {
        return;
    }
    let (hosts, tun_a, tun_b) = TwoHosts::with_default_mtu().unwrap();
    let pcap = std::env::temp_dir().join(format!("brisk-emu-timing-{}.pcap", std::process::id()));
    let opts = EmulatorOptions {
        delivery_log: 10_000,
        event_log: 10_000,
        pcap_b: Some(pcap.clone()),
        ..EmulatorOptions::default()
    };
    let cfg = EmuConfig::bottleneck(10_000_000, brisk_time::Duration::ZERO);
    let emu = Emulator::new(tun_a, tun_b, &cfg, opts).unwrap();
    let handle = emu
        .spawn(Some(brisk_time::Duration::from_secs(20)))
        .unwrap();

    let rx = hosts
        .ns_b()
        .run_in(|| UdpSocket::bind((ADDR_B, 9000)))
        .unwrap()
        .unwrap();
    rx.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
    let tx = hosts
        .ns_a()
        .run_in(|| UdpSocket::bind((ADDR_A, 0)))
        .unwrap()
        .unwrap();
    let payload = vec![0xabu8; PAYLOAD];
    for i in 0..PKTS {
        let mut p = payload.clone();
        p[0] = i as u8;
        tx.send_to(&p, (ADDR_B, 9000)).unwrap();
    }
    let mut buf = [0u8; 2048];
    let mut got = Vec::new();
    while got.len() < PKTS {
        let (n, _) = rx.recv_from(&mut buf).expect("datagram arrives");
        assert_eq!(n, PAYLOAD);
        got.push(buf[0]);
    }
    let report = handle.stop().unwrap();
    drop(hosts);

    assert_eq!(got, (0..PKTS as u8).collect::<Vec<_>>(), "order kept");
    let d: Vec<_> = report
        .forward
        .deliveries
        .iter()
        .filter(|d| d.bytes == 1500)
        .collect();
    assert_eq!(d.len(), PKTS);
    // The model: back-to-back departures exactly one serialisation time apart (the
    // burst arrives faster than 1.2 ms per packet, so the queue never empties).
    for w in d.windows(2) {
        let gap = w[1].scheduled.as_nanos() as i64 - w[0].scheduled.as_nanos() as i64;
        assert_eq!(gap, SPACING_NS, "{:?}", w);
    }
    // Real time: written spacing follows the model within tolerance.
    let mut gaps: Vec<i64> = d
        .windows(2)
        .map(|w| w[1].written.as_nanos() as i64 - w[0].written.as_nanos() as i64)
        .collect();
    gaps.sort_unstable();
    let median = gaps[gaps.len() / 2];
    assert!(
        (median - SPACING_NS).abs() < 50_000,
        "median gap {median} ns"
    );
    let span = d[PKTS - 1].written.as_nanos() as i64 - d[0].written.as_nanos() as i64;
    let mean = span / (PKTS as i64 - 1);
    assert!((mean - SPACING_NS).abs() < 100_000, "mean gap {mean} ns");
    let e = report.forward.delivery_error;
    eprintln!(
        "delivery error: {e:?}; gaps {:?}..{:?}",
        gaps[0],
        gaps[gaps.len() - 1]
    );
    assert!(e.p50_ns < 100_000, "{e:?}");
    assert!(
        report.forward.events.len() >= 3 * PKTS,
        "enqueue, dequeue, depart logged"
    );
}

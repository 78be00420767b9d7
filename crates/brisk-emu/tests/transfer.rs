//! Kernel TCP ↔ emulator ↔ kernel TCP: bulk transfers through an emulated
//! 100 Mbit/s, 10 ms RTT path arrive intact, at no more than the link rate, with at
//! least the emulated RTT; with 1 % loss the data still arrives and the losses show
//! up as emulator drops and sender retransmissions. Needs root and /dev/net/tun.

mod common;

use std::time::Duration;

use brisk_emu::bulk::{Amount, BulkConfig};
use brisk_emu::path::{LossSpec, QueueSpec, Rate};
use brisk_emu::{baseline, EmuConfig, EmulatorOptions};

use common::lab_available;

const MB: u64 = 1_000_000;

fn path(loss: Option<LossSpec>) -> EmuConfig {
    let mut cfg = EmuConfig::bottleneck(100_000_000, brisk_time::Duration::from_millis(10));
    cfg.bottleneck.queue = Some(QueueSpec::droptail_packets(200));
    cfg.bottleneck.loss = loss;
    cfg.seed = 42;
    cfg
}

fn bulk(bytes: u64) -> BulkConfig {
    BulkConfig {
        amount: Amount::Bytes(bytes),
        cc: "cubic".into(),
        port: 5201,
        seed: 7,
        timeout: Duration::from_secs(25),
    }
}

#[test]
fn twenty_megabytes_cross_a_100mbit_10ms_path_intact() {
    if !lab_available("twenty_megabytes_cross_a_100mbit_10ms_path_intact") {
        return;
    }
    let r = baseline(&path(None), &bulk(20 * MB), EmulatorOptions::default()).unwrap();
    let t = &r.transfer;
    eprintln!("{}", r.to_json("transfer-100mbit-10ms"));
    assert!(t.intact, "hashes differ: {t:?}");
    assert_eq!(t.bytes_received, 20 * MB);
    assert_eq!(t.mismatch_at, None);
    // The emulated link is the bottleneck: goodput cannot beat 100 Mbit/s...
    assert!(
        t.goodput_bps < 100e6,
        "goodput {} above link rate",
        t.goodput_bps
    );
    assert!(
        t.goodput_bps > 20e6,
        "goodput {} implausibly low",
        t.goodput_bps
    );
    // ...and every round trip carries the 10 ms of emulated propagation delay.
    assert!(t.sender.min_rtt_us >= 10_000, "{:?}", t.sender);
    assert!(t.sender.min_rtt_us < 30_000, "{:?}", t.sender);
    let f = &r.emulator.forward;
    assert!(f.delivered_packets >= 20 * MB / 1500);
    assert_eq!(f.dropped_loss, 0);
    assert!(f.max_queue_packets <= 200);
}

#[test]
fn one_percent_loss_costs_retransmissions_but_not_data() {
    if !lab_available("one_percent_loss_costs_retransmissions_but_not_data") {
        return;
    }
    let loss = Some(LossSpec::Bernoulli { p: 0.01 });
    let r = baseline(&path(loss), &bulk(20 * MB), EmulatorOptions::default()).unwrap();
    let t = &r.transfer;
    eprintln!("{}", r.to_json("transfer-100mbit-10ms-1pct"));
    assert!(t.intact, "hashes differ: {t:?}");
    assert_eq!(t.bytes_received, 20 * MB);
    let f = &r.emulator.forward;
    assert!(f.dropped_loss > 0);
    let loss_rate = f.dropped_loss as f64 / f.read_packets as f64;
    assert!((0.005..0.02).contains(&loss_rate), "loss rate {loss_rate}");
    assert!(
        u64::from(t.sender.total_retrans) >= f.dropped_loss / 2,
        "{:?}",
        t.sender
    );
}

#[test]
fn rate_keys_match_the_simulator_spelling() {
    // No lab needed: the path config accepts the simulator's bottleneck keys.
    let cfg: EmuConfig = EmuConfig::from_toml(
        r#"
        rtt = "10ms"
        [bottleneck]
        rate = "100Mbit"
        queue = { kind = "droptail", packets = 200 }
        loss = { kind = "bernoulli", p = 0.01 }
        "#,
    )
    .unwrap();
    assert_eq!(cfg.bottleneck.rate, Some(Rate(100_000_000)));
    assert_eq!(cfg, {
        let mut p = path(Some(LossSpec::Bernoulli { p: 0.01 }));
        p.seed = 1;
        p
    });
}

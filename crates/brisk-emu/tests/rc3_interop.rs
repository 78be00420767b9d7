//! RC3 against an unmodified Linux receiver (issue 11 §2, spec A21): brisk sends with
//! RC3's recursive-low-priority copies on; Linux's ACKs for them come back at DSCP 0
//! and are classified by content. The stream must arrive intact (SHA-256), clean and
//! through 1 % loss, and the copies must really have been sent. Needs root and
//! /dev/net/tun (skipped with a message otherwise).

mod common;

use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::path::{LossSpec, PathSpec};
use brisk_emu::tools::{sink, source};
use brisk_emu::{BriskLab, EmuConfig, KERNEL_ADDR};
use common::*;

const IO_TIMEOUT: Duration = Duration::from_secs(50);
const BYTES: u64 = 4_000_000;

fn path(p: f64) -> EmuConfig {
    let spec = PathSpec {
        loss: (p > 0.0).then_some(LossSpec::Bernoulli { p }),
        ..PathSpec::default()
    };
    EmuConfig {
        rtt: Some(brisk_emu::path::Dur(brisk_time::Duration::from_millis(20))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 11,
    }
}

fn rc3_sends_to_linux(name: &str, loss: f64, seed: u64) {
    if !lab_available(name) {
        return;
    }
    let mut stack = brisk_emu::StackConfig::new(brisk_emu::BRISK_ADDR);
    stack.tcp.transmit.rc3 = Some(brisk_tcp::rc3::Rc3Config::default());
    let lab = BriskLab::new(
        &path(loss),
        stack,
        brisk_emu::EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab");
    let port = 5001;
    let l = kernel_listen(lab.kernel(), port);
    // Several writes: each is a chunk of its own for the RLP.
    let mut brisk = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, port)))
        .expect("brisk connects to Linux");
    let mut linux = kernel_accept(&l, IO_TIMEOUT);
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let (sent, got) = std::thread::scope(|s| {
        let rx = s.spawn(move || sink(&mut linux, u64::MAX));
        let sent = source(&mut brisk, BYTES, seed).expect("brisk sends");
        brisk.shutdown(Shutdown::Write).unwrap();
        (sent, rx.join().unwrap().expect("Linux receives"))
    });
    let stats = lab.stack().stats();
    let rc3 = brisk.info().and_then(|i| i.rc3);
    eprintln!(
        "{name}: {} bytes; brisk stats {stats:?}; rc3 {rc3:?}",
        got.bytes
    );
    assert_eq!(sent.bytes, BYTES);
    assert_eq!(got, sent, "received stream differs from the sent one");
    let rc3 = rc3.expect("RC3 counters");
    assert!(
        rc3.rlp_packets > 0 && rc3.low_acks > 0,
        "the copies went and Linux's ACKs for them were classified low: {rc3:?}"
    );
    let rep = lab.stop().expect("emulator report");
    assert_eq!(rep.forward.read_errors + rep.reverse.read_errors, 0);
}

#[test]
fn rc3_sends_to_linux_intact() {
    rc3_sends_to_linux("rc3_sends_to_linux_intact", 0.0, 3);
}

#[test]
fn rc3_sends_to_linux_intact_through_one_percent_loss() {
    rc3_sends_to_linux(
        "rc3_sends_to_linux_intact_through_one_percent_loss",
        0.01,
        4,
    );
}

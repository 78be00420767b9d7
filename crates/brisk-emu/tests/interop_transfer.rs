//! brisk against Linux TCP through the emulator: bulk transfers in both directions and
//! both roles, checked by SHA-256, clean and with loss and reordering. Needs root and
//! /dev/net/tun (skipped with a message otherwise). CI runs 20 MB per transfer;
//! `BRISK_LONG_TESTS=1` runs the 100 MB. The lossy transfers run over IPv6
//! too, in a dual-stack lab.

mod common;

use std::net::{IpAddr, Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::path::{JitterSpec, LossSpec, PathSpec};
use brisk_emu::tools::{sink, source};
use brisk_emu::{EmuConfig, BRISK_ADDR, BRISK_ADDR6, KERNEL_ADDR, KERNEL_ADDR6};
use common::*;

const IO_TIMEOUT: Duration = Duration::from_secs(50);

fn bytes() -> u64 {
    if long_tests() {
        100_000_000
    } else {
        20_000_000
    }
}

#[derive(Clone, Copy, Debug)]
enum Role {
    /// brisk connects to a Linux listener.
    BriskClient,
    /// Linux connects to a brisk listener.
    BriskServer,
}

#[derive(Clone, Copy, Debug)]
enum Dir {
    BriskSends,
    LinuxSends,
}

/// Runs one transfer and asserts the received stream equals the sent one.
fn transfer(name: &str, path: EmuConfig, role: Role, dir: Dir, seed: u64) {
    transfer_over(name, path, role, dir, seed, false);
}

/// As [`transfer`], over IPv6 in a dual-stack lab with `v6`.
fn transfer_over(name: &str, path: EmuConfig, role: Role, dir: Dir, seed: u64, v6: bool) {
    if !lab_available(name) {
        return;
    }
    let n = bytes();
    let lab = if v6 {
        dual_stack_lab(&path)
    } else {
        lab_with(&path, None)
    };
    let (kernel_ip, brisk_ip): (IpAddr, IpAddr) = if v6 {
        (KERNEL_ADDR6.into(), BRISK_ADDR6.into())
    } else {
        (KERNEL_ADDR.into(), BRISK_ADDR.into())
    };
    let port = 5001;
    let t0 = std::time::Instant::now();
    let (mut brisk, mut linux) = match role {
        Role::BriskClient => {
            let l = kernel_listen_on(lab.kernel(), kernel_ip, port);
            let b = lab
                .stack()
                .connect(SocketAddr::new(kernel_ip, port))
                .expect("brisk connects to Linux");
            (b, kernel_accept(&l, IO_TIMEOUT))
        }
        Role::BriskServer => {
            let mut l = lab.stack().listen(port).expect("brisk listens");
            l.set_accept_timeout(Some(IO_TIMEOUT));
            let k = kernel_connect(lab.kernel(), brisk_ip, port, IO_TIMEOUT);
            let (b, peer) = l.accept().expect("brisk accepts");
            assert_eq!(peer.ip(), kernel_ip, "Linux connected over its own family");
            (b, k)
        }
    };
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let (sent, got) = std::thread::scope(|s| match dir {
        Dir::BriskSends => {
            let rx = s.spawn(move || sink(&mut linux, u64::MAX));
            let sent = source(&mut brisk, n, seed).expect("brisk sends");
            brisk.shutdown(Shutdown::Write).unwrap();
            (sent, rx.join().unwrap().expect("Linux receives"))
        }
        Dir::LinuxSends => {
            let tx = s.spawn(move || {
                let d = source(&mut linux, n, seed);
                linux.shutdown(Shutdown::Write).unwrap();
                // Keep the socket open until brisk has read everything.
                let mut one = [0u8; 1];
                let _ = std::io::Read::read(&mut linux, &mut one);
                d
            });
            let got = sink(&mut brisk, u64::MAX).expect("brisk receives");
            brisk.shutdown(Shutdown::Write).unwrap();
            (tx.join().unwrap().expect("Linux sends"), got)
        }
    });
    let secs = t0.elapsed().as_secs_f64();
    eprintln!(
        "{name}: {} bytes in {secs:.2} s ({:.1} Mbit/s); brisk stats {:?}",
        got.bytes,
        got.bytes as f64 * 8.0 / secs / 1e6,
        lab.stack().stats()
    );
    assert_eq!(sent.bytes, n);
    assert_eq!(got, sent, "received stream differs from the sent one");
    if v6 {
        // Only TCP reached brisk: no neighbour discovery, RS or MLD from the kernel.
        let st = lab.stack().stats();
        assert_eq!((st.drop_parse, st.drop_not_local), (0, 0), "{st:?}");
    }
    let rep = lab.stop().expect("emulator report");
    assert_eq!(rep.forward.read_errors + rep.reverse.read_errors, 0);
}

fn lossy(p: f64, rtt_ms: u64) -> EmuConfig {
    let spec = PathSpec {
        loss: (p > 0.0).then_some(LossSpec::Bernoulli { p }),
        ..PathSpec::default()
    };
    EmuConfig {
        rtt: Some(brisk_emu::path::Dur(brisk_time::Duration::from_millis(
            rtt_ms,
        ))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 7,
    }
}

#[test]
fn brisk_client_sends_to_linux_intact() {
    transfer(
        "brisk_client_sends_to_linux_intact",
        lossy(0.0, 2),
        Role::BriskClient,
        Dir::BriskSends,
        1,
    );
}

#[test]
fn brisk_client_receives_from_linux_intact() {
    transfer(
        "brisk_client_receives_from_linux_intact",
        lossy(0.0, 2),
        Role::BriskClient,
        Dir::LinuxSends,
        2,
    );
}

#[test]
fn brisk_server_receives_from_linux_intact() {
    transfer(
        "brisk_server_receives_from_linux_intact",
        lossy(0.0, 2),
        Role::BriskServer,
        Dir::LinuxSends,
        3,
    );
}

#[test]
fn brisk_server_sends_to_linux_intact() {
    transfer(
        "brisk_server_sends_to_linux_intact",
        lossy(0.0, 2),
        Role::BriskServer,
        Dir::BriskSends,
        4,
    );
}

#[test]
fn brisk_sends_intact_through_one_percent_loss() {
    transfer(
        "brisk_sends_intact_through_one_percent_loss",
        lossy(0.01, 2),
        Role::BriskClient,
        Dir::BriskSends,
        5,
    );
}

#[test]
fn brisk_sends_intact_through_one_percent_loss_over_ipv6() {
    transfer_over(
        "brisk_sends_intact_through_one_percent_loss_over_ipv6",
        lossy(0.01, 2),
        Role::BriskClient,
        Dir::BriskSends,
        5,
        true,
    );
}

#[test]
fn brisk_receives_intact_through_one_percent_loss_over_ipv6() {
    transfer_over(
        "brisk_receives_intact_through_one_percent_loss_over_ipv6",
        lossy(0.01, 2),
        Role::BriskServer,
        Dir::LinuxSends,
        6,
        true,
    );
}

#[test]
fn brisk_receives_intact_through_one_percent_loss() {
    transfer(
        "brisk_receives_intact_through_one_percent_loss",
        lossy(0.01, 2),
        Role::BriskServer,
        Dir::LinuxSends,
        6,
    );
}

#[test]
fn brisk_sends_intact_through_three_percent_loss() {
    transfer(
        "brisk_sends_intact_through_three_percent_loss",
        lossy(0.03, 2),
        Role::BriskServer,
        Dir::BriskSends,
        7,
    );
}

#[test]
fn brisk_receives_intact_through_three_percent_loss() {
    transfer(
        "brisk_receives_intact_through_three_percent_loss",
        lossy(0.03, 2),
        Role::BriskClient,
        Dir::LinuxSends,
        8,
    );
}

fn reordering() -> EmuConfig {
    // Up to 1 ms of jitter per packet at ~100 Mbit/s packet spacing (~120 us)
    // reorders packets by several positions.
    let spec = PathSpec {
        rate: Some(brisk_emu::path::Rate(100_000_000)),
        jitter: Some(JitterSpec {
            max: brisk_emu::path::Dur(brisk_time::Duration::from_millis(1)),
            reorder: true,
        }),
        ..PathSpec::default()
    };
    EmuConfig {
        rtt: Some(brisk_emu::path::Dur(brisk_time::Duration::from_millis(4))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 9,
    }
}

#[test]
fn brisk_sends_intact_through_reordering() {
    transfer(
        "brisk_sends_intact_through_reordering",
        reordering(),
        Role::BriskClient,
        Dir::BriskSends,
        10,
    );
}

#[test]
fn brisk_receives_intact_through_reordering() {
    transfer(
        "brisk_receives_intact_through_reordering",
        reordering(),
        Role::BriskServer,
        Dir::LinuxSends,
        11,
    );
}

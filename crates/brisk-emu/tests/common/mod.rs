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

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use brisk_emu::{BriskLab, Netns, KERNEL_ADDR};

/// A kernel listener in `ns` on `KERNEL_ADDR:port`.
pub fn kernel_listen(ns: &Netns, port: u16) -> std::net::TcpListener {
    kernel_listen_on(ns, KERNEL_ADDR.into(), port)
}

/// A kernel listener in `ns` on `ip:port` (the kernel's address of either family).
pub fn kernel_listen_on(ns: &Netns, ip: IpAddr, port: u16) -> std::net::TcpListener {
    let addr = SocketAddr::new(ip, port);
    let l = ns
        .run_in(move || std::net::TcpListener::bind(addr))
        .expect("namespace thread")
        .expect("bind in the kernel namespace");
    l.set_nonblocking(true).unwrap();
    l
}

/// Accepts one connection within `timeout` (blocking stream, with IO timeouts).
pub fn kernel_accept(l: &std::net::TcpListener, timeout: Duration) -> std::net::TcpStream {
    let end = Instant::now() + timeout;
    loop {
        match l.accept() {
            Ok((s, _)) => {
                s.set_nonblocking(false).unwrap();
                s.set_read_timeout(Some(timeout)).unwrap();
                s.set_write_timeout(Some(timeout)).unwrap();
                return s;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(Instant::now() < end, "kernel accept timed out");
                std::thread::sleep(Duration::from_millis(1));
            }
            Err(e) => panic!("kernel accept: {e}"),
        }
    }
}

/// A kernel connection from `ns` to brisk at `addr:port`.
pub fn kernel_connect(
    ns: &Netns,
    addr: impl Into<IpAddr>,
    port: u16,
    timeout: Duration,
) -> std::net::TcpStream {
    let to = SocketAddr::new(addr.into(), port);
    let s = ns
        .run_in(move || std::net::TcpStream::connect_timeout(&to, Duration::from_secs(5)))
        .expect("namespace thread")
        .expect("kernel connect to brisk");
    s.set_read_timeout(Some(timeout)).unwrap();
    s.set_write_timeout(Some(timeout)).unwrap();
    s
}

/// A brisk stream with IO timeouts.
pub fn brisk_timeouts(s: &mut brisk_emu::TcpStream, timeout: Duration) {
    s.set_read_timeout(Some(timeout)).unwrap();
    s.set_write_timeout(Some(timeout)).unwrap();
}

/// Whether long (100 MB) variants should run: `BRISK_LONG_TESTS=1`.
pub fn long_tests() -> bool {
    std::env::var("BRISK_LONG_TESTS").is_ok_and(|v| v == "1")
}

pub fn lab_with(
    path: &brisk_emu::EmuConfig,
    pcaps: Option<(&std::path::Path, &std::path::Path)>,
) -> BriskLab {
    let opts = brisk_emu::EmulatorOptions {
        pcap_a: pcaps.map(|p| p.0.to_path_buf()),
        pcap_b: pcaps.map(|p| p.1.to_path_buf()),
        ..brisk_emu::EmulatorOptions::default()
    };
    BriskLab::new(
        path,
        brisk_emu::StackConfig::new(brisk_emu::BRISK_ADDR),
        opts,
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab")
}

/// A dual-stack lab on `path`: brisk and the kernel have their IPv6 addresses
/// (`BRISK_ADDR6`, `KERNEL_ADDR6`) as well.
pub fn dual_stack_lab(path: &brisk_emu::EmuConfig) -> BriskLab {
    let mut stack = brisk_emu::StackConfig::new(brisk_emu::BRISK_ADDR);
    stack.local6 = Some(brisk_emu::BRISK_ADDR6);
    BriskLab::new(
        path,
        stack,
        brisk_emu::EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("dual-stack brisk lab")
}

/// Sets a kernel socket's congestion control to CUBIC (new namespaces default to the
/// host's, here bbr).
pub fn set_cubic(s: &std::net::TcpStream) {
    brisk_emu::bulk::set_cc(s, "cubic").expect("TCP_CONGESTION cubic");
}

/// A lab with Bernoulli `loss` each way and `rtt_ms`, brisk's stack with Nagle off and
/// unordered receive / prioritised send as asked (the Minion tests' path).
pub fn lossy_lab(
    loss: f64,
    rtt_ms: u64,
    seed: u64,
    unordered: bool,
    prioritised: bool,
) -> BriskLab {
    use brisk_emu::path::{Dur, LossSpec, PathSpec};
    let spec = PathSpec {
        loss: Some(LossSpec::Bernoulli { p: loss }),
        ..PathSpec::default()
    };
    let path = brisk_emu::EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(rtt_ms))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed,
    };
    let mut stack = brisk_emu::StackConfig::new(brisk_emu::BRISK_ADDR);
    stack.tcp.unordered = unordered;
    stack.tcp.unordered_send = prioritised;
    stack.tcp.nagle = false;
    BriskLab::new(
        &path,
        stack,
        brisk_emu::EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab")
}

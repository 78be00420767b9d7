//! Lab setup and teardown: nothing is left behind, also when the test body panics.
//! Needs root and /dev/net/tun; skips (with a message on stderr) otherwise.

mod common;

use std::net::{TcpListener, UdpSocket};
use std::process::Command;
use std::sync::Mutex;

use brisk_emu::lab::{ADDR_A, ADDR_B, TUN_NAME};
use brisk_emu::netns::{clean_leftovers, ip_binary, Netns};
use brisk_emu::{EmuError, Tun, TwoHosts};
use common::{ip_netns_list, lab_available};

#[test]
fn dropping_the_lab_removes_its_namespaces_and_devices() {
    if !lab_available("dropping_the_lab_removes_its_namespaces_and_devices") {
        return;
    }
    let (hosts, tun_a, tun_b) = TwoHosts::with_default_mtu().unwrap();
    let names = hosts.lab().names();
    assert_eq!(names.len(), 2);
    let listed = ip_netns_list();
    for n in &names {
        assert!(n.starts_with("brisk-"), "{n}");
        assert!(listed.contains(n), "{n} not in {listed:?}");
    }
    let link = hosts
        .ns_a()
        .exec(&["ip", "-o", "addr", "show", "dev", TUN_NAME])
        .unwrap();
    let link = String::from_utf8_lossy(&link.stdout);
    assert!(link.contains(&format!("{ADDR_A}/32")), "{link}");
    let mtu = hosts
        .ns_b()
        .exec(&["cat", &format!("/sys/class/net/{TUN_NAME}/mtu")])
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&mtu.stdout).trim(), "1500");
    drop((tun_a, tun_b));
    drop(hosts);
    let listed = ip_netns_list();
    for n in &names {
        assert!(!listed.contains(n), "{n} survived teardown");
    }
}

#[test]
fn a_panicking_test_body_still_tears_the_lab_down() {
    if !lab_available("a_panicking_test_body_still_tears_the_lab_down") {
        return;
    }
    let seen = Mutex::new(Vec::new());
    let result = std::panic::catch_unwind(|| {
        let (hosts, _a, _b) = TwoHosts::with_default_mtu().unwrap();
        seen.lock().unwrap().extend(hosts.lab().names());
        panic!("test body fails while the lab is up");
    });
    assert!(result.is_err());
    let names = seen.into_inner().unwrap();
    assert_eq!(names.len(), 2);
    let listed = ip_netns_list();
    for n in &names {
        assert!(!listed.contains(n), "{n} survived the panic");
    }
}

#[test]
fn sockets_opened_inside_a_namespace_live_there() {
    if !lab_available("sockets_opened_inside_a_namespace_live_there") {
        return;
    }
    let (hosts, _a, _b) = TwoHosts::with_default_mtu().unwrap();
    // B's address exists only in B: binding it works there and nowhere else.
    let in_b = hosts
        .ns_b()
        .run_in(|| TcpListener::bind((ADDR_B, 0)).map(drop))
        .unwrap();
    assert!(in_b.is_ok(), "{in_b:?}");
    let in_a = hosts
        .ns_a()
        .run_in(|| UdpSocket::bind((ADDR_B, 0)).map(drop))
        .unwrap();
    assert!(in_a.is_err());
    assert!(
        UdpSocket::bind((ADDR_B, 0)).is_err(),
        "root namespace has no lab address"
    );
}

#[test]
fn addresses_outside_the_lab_range_are_refused() {
    if !lab_available("addresses_outside_the_lab_range_are_refused") {
        return;
    }
    let ns = Netns::create("range").unwrap();
    let tun = Tun::open(&ns, "brisk-x").unwrap();
    let err = tun
        .configure(&ns, "10.0.0.1".parse().unwrap(), ADDR_B, 1500)
        .unwrap_err();
    assert!(matches!(err, EmuError::Config(_)), "{err}");
    let out = ns
        .exec(&["ip", "-o", "addr", "show", "dev", "brisk-x"])
        .unwrap();
    assert!(!String::from_utf8_lossy(&out.stdout).contains("inet "));
}

#[test]
fn clean_leftovers_removes_dead_runs_but_not_live_ones() {
    if !lab_available("clean_leftovers_removes_dead_runs_but_not_live_ones") {
        return;
    }
    // A pid above the kernel's pid_max cannot be alive.
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .map(|s| s.trim().parse().unwrap_or(4_194_304))
        .unwrap_or(4_194_304);
    let stale = format!("brisk-{}-0-stale{}", pid_max + 1, std::process::id() % 1000);
    let st = Command::new(ip_binary())
        .args(["netns", "add", &stale])
        .status()
        .unwrap();
    assert!(st.success());
    let live = Netns::create("live").unwrap();
    let removed = clean_leftovers().unwrap();
    let listed = ip_netns_list();
    assert!(removed.contains(&stale), "{removed:?}");
    assert!(!listed.contains(&stale));
    assert!(
        listed.iter().any(|n| n == live.name()),
        "live namespace removed"
    );
    assert!(!removed.iter().any(|n| n == live.name()));
}

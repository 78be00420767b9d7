//! Real programs talking to brisk: `curl` downloads from brisk's HTTP server, brisk's
//! HTTP client downloads from `python3 -m http.server`, over IPv4 and over IPv6 (a
//! dual-stack lab: one brisk listener serves curl over both families). Skipped (with a
//! message) when the lab, curl or python3 is unavailable.

mod common;

use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use brisk_emu::http;
use brisk_emu::path::Dur;
use brisk_emu::{BriskLab, EmuConfig, BRISK_ADDR, BRISK_ADDR6, KERNEL_ADDR, KERNEL_ADDR6};
use common::*;
use rand::{RngCore, SeedableRng};

fn have(prog: &str, arg: &str) -> bool {
    let ok = Command::new(prog)
        .arg(arg)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("SKIPPED: {prog} is not installed");
    }
    ok
}

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brisk-prog-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn random_file(path: &std::path::Path, len: usize, seed: u64) -> Vec<u8> {
    let mut v = vec![0u8; len];
    rand_chacha::ChaCha8Rng::seed_from_u64(seed).fill_bytes(&mut v);
    std::fs::write(path, &v).unwrap();
    v
}

fn path() -> EmuConfig {
    EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(4))),
        ..EmuConfig::default()
    }
}

/// Kills (by its own pid) and reaps a child we started, also on panic.
struct ChildGuard(Child);

impl Drop for ChildGuard {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A lab on `path()`; dual-stack (brisk and the kernel with 2001:db8:18::1 and ::2
/// as well) with `v6`.
fn lab(v6: bool) -> BriskLab {
    let mut stack = brisk_emu::StackConfig::new(BRISK_ADDR);
    stack.local6 = v6.then_some(BRISK_ADDR6);
    BriskLab::new(
        &path(),
        stack,
        brisk_emu::EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab")
}

/// An address as a URL host: IPv6 literals in brackets (RFC 3986 §3.2.2).
fn url_host(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(a) => a.to_string(),
        IpAddr::V6(a) => format!("[{a}]"),
    }
}

/// The segment size both ends settle on over a 1500-byte link with timestamps: Linux
/// and brisk advertise 1460 over IPv4 and 1440 over IPv6 (MTU − 60).
fn segment_size(ip: IpAddr) -> u32 {
    if ip.is_ipv6() {
        1440 - 12
    } else {
        1460 - 12
    }
}

/// Nothing but TCP for brisk reached it: in a dual-stack lab the kernel's namespace
/// must send no neighbour discovery, router solicitation or MLD packet (each would
/// be counted as unparsable) and nothing to another address.
fn assert_no_stray_packets(lab: &BriskLab) {
    let st = lab.stack().stats();
    assert_eq!(
        (st.drop_parse, st.drop_not_local, st.drop_checksum),
        (0, 0, 0),
        "stray packets reached brisk: {st:?}"
    );
}

/// curl downloads a 5 MB file from brisk's HTTP server once from each address in
/// `targets`, all through one brisk listener on port 80.
fn curl_downloads(test: &str, v6: bool, targets: &[IpAddr]) {
    if !lab_available(test) || !have("curl", "--version") {
        return;
    }
    let dir = tmp(test);
    let data = random_file(&dir.join("file.bin"), 5_000_000, 1);
    let lab = lab(v6);
    let mut listener = lab.stack().listen(80).unwrap();
    listener.set_accept_timeout(Some(Duration::from_secs(20)));
    let root = dir.clone();
    let n = targets.len();
    let server = std::thread::spawn(move || {
        (0..n)
            .map(|_| {
                let (mut s, peer) = listener.accept().expect("curl connects");
                s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
                s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
                let served = http::serve_one(&mut s, &root).expect("serves");
                let mss = s.info().map(|i| i.mss);
                s.shutdown(std::net::Shutdown::Write).unwrap();
                // Wait for curl's FIN so the close is orderly.
                let _ = std::io::Read::read(&mut s, &mut [0u8; 1]);
                (served.status, peer, mss)
            })
            .collect::<Vec<_>>()
    });
    for (i, ip) in targets.iter().enumerate() {
        let out = dir.join(format!("got-{i}.bin"));
        let url = format!("http://{}/file.bin", url_host(*ip));
        let status = lab
            .kernel()
            .exec(&[
                "curl",
                "-sS",
                "-g",
                "--fail",
                "--max-time",
                "30",
                "-o",
                out.to_str().unwrap(),
                &url,
            ])
            .expect("curl succeeds");
        assert!(status.status.success());
        assert_eq!(
            std::fs::read(&out).unwrap(),
            data,
            "curl's copy from {url} differs"
        );
    }
    let served = server.join().unwrap();
    for ((status, peer, mss), ip) in served.iter().zip(targets) {
        assert_eq!(*status, 200);
        assert_eq!(*mss, Some(segment_size(*ip)), "MSS over {ip}");
        // The kernel's address of the family it connected to.
        let kernel: IpAddr = if ip.is_ipv6() {
            KERNEL_ADDR6.into()
        } else {
            KERNEL_ADDR.into()
        };
        assert_eq!(peer.ip(), kernel);
    }
    if v6 {
        assert_no_stray_packets(&lab);
    }
    lab.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn curl_downloads_a_file_from_brisks_http_server_byte_identical() {
    curl_downloads("curl_downloads_from_brisk", false, &[BRISK_ADDR.into()]);
}

/// Dual stack: one brisk listener serves curl over IPv6, then over IPv4.
#[test]
fn curl_downloads_from_brisk_over_ipv6_and_ipv4_from_one_listener() {
    curl_downloads(
        "curl_downloads_from_brisk_v6",
        true,
        &[BRISK_ADDR6.into(), BRISK_ADDR.into()],
    );
}

/// brisk's HTTP client downloads a 5 MB file from `python3 -m http.server` bound to
/// the kernel's address of `v6`'s family.
fn brisk_downloads_from_python(test: &str, v6: bool) {
    if !lab_available(test) || !have("python3", "--version") {
        return;
    }
    let dir = tmp(test);
    let data = random_file(&dir.join("file.bin"), 5_000_000, 2);
    let lab = lab(v6);
    let server_ip: IpAddr = if v6 {
        KERNEL_ADDR6.into()
    } else {
        KERNEL_ADDR.into()
    };
    let child = Command::new(brisk_emu::netns::ip_binary())
        .args([
            "netns",
            "exec",
            lab.kernel().name(),
            "python3",
            "-m",
            "http.server",
            "8000",
        ])
        .args([
            "--bind",
            &server_ip.to_string(),
            "--directory",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let _guard = ChildGuard(child);
    // Wait (bounded) for the server to listen; a refused connect is retried.
    let addr = SocketAddr::new(server_ip, 8000);
    let end = std::time::Instant::now() + Duration::from_secs(15);
    let mut s = loop {
        match lab.stack().connect(addr) {
            Ok(s) => break s,
            Err(e) => {
                assert!(
                    std::time::Instant::now() < end,
                    "python never listened: {e}"
                );
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    };
    assert_eq!(s.peer_addr().unwrap(), addr);
    brisk_timeouts(&mut s, Duration::from_secs(20));
    let resp = http::get(&mut s, &url_host(server_ip), "/file.bin", 10_000_000).unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body.len(), data.len());
    assert!(resp.body == data, "downloaded bytes differ");
    assert_eq!(s.info().map(|i| i.mss), Some(segment_size(server_ip)));
    drop(s);
    if v6 {
        assert_no_stray_packets(&lab);
    }
    lab.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn brisk_client_downloads_from_python_http_server() {
    brisk_downloads_from_python("brisk_downloads_from_python", false);
}

#[test]
fn brisk_client_downloads_from_python_http_server_over_ipv6() {
    brisk_downloads_from_python("brisk_downloads_from_python_v6", true);
}

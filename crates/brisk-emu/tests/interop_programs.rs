//! Real programs talking to brisk: `curl` downloads from brisk's HTTP server, brisk's
//! HTTP client downloads from `python3 -m http.server`. Skipped (with a message) when
//! the lab, curl or python3 is unavailable.

mod common;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use brisk_emu::http;
use brisk_emu::path::Dur;
use brisk_emu::{EmuConfig, BRISK_ADDR, KERNEL_ADDR};
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
        rtt: Some(Dur(Duration::from_millis(4))),
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

#[test]
fn curl_downloads_a_file_from_brisks_http_server_byte_identical() {
    if !lab_available("curl_downloads_from_brisk") || !have("curl", "--version") {
        return;
    }
    let dir = tmp("curl");
    let data = random_file(&dir.join("file.bin"), 5_000_000, 1);
    let lab = lab_with(&path(), None);
    let mut listener = lab.stack().listen(80).unwrap();
    listener.set_accept_timeout(Some(Duration::from_secs(20)));
    let root = dir.clone();
    let server = std::thread::spawn(move || {
        let (mut s, _) = listener.accept().expect("curl connects");
        s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
        s.set_write_timeout(Some(Duration::from_secs(20))).unwrap();
        let served = http::serve_one(&mut s, &root).expect("serves");
        s.shutdown(std::net::Shutdown::Write).unwrap();
        // Wait for curl's FIN so the close is orderly.
        let _ = std::io::Read::read(&mut s, &mut [0u8; 1]);
        served
    });
    let out = dir.join("got.bin");
    let url = format!("http://{BRISK_ADDR}/file.bin");
    let status = lab
        .kernel()
        .exec(&[
            "curl",
            "-sS",
            "--fail",
            "--max-time",
            "30",
            "-o",
            out.to_str().unwrap(),
            &url,
        ])
        .expect("curl succeeds");
    assert!(status.status.success());
    let served = server.join().unwrap();
    assert_eq!(served.status, 200);
    assert_eq!(std::fs::read(&out).unwrap(), data, "curl's copy differs");
    lab.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn brisk_client_downloads_from_python_http_server() {
    if !lab_available("brisk_downloads_from_python") || !have("python3", "--version") {
        return;
    }
    let dir = tmp("python");
    let data = random_file(&dir.join("file.bin"), 5_000_000, 2);
    let lab = lab_with(&path(), None);
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
            &KERNEL_ADDR.to_string(),
            "--directory",
            dir.to_str().unwrap(),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let _guard = ChildGuard(child);
    // Wait (bounded) for the server to listen; a refused connect is retried.
    let addr = SocketAddr::from((KERNEL_ADDR, 8000));
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
    brisk_timeouts(&mut s, Duration::from_secs(20));
    let resp = http::get(&mut s, &KERNEL_ADDR.to_string(), "/file.bin", 10_000_000).unwrap();
    assert_eq!(resp.status, 200);
    assert_eq!(resp.body.len(), data.len());
    assert!(resp.body == data, "downloaded bytes differ");
    drop(s);
    lab.stop().unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

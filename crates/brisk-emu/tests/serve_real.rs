//! The event-loop server (`stack::serve`, what `brisk lab up` runs) against Linux
//! clients: many idle connections cost no threads, and a new client's echo round
//! trip stays fast; echo and HTTP work over IPv4 and IPv6. Needs root and
//! /dev/net/tun (skipped with a message otherwise).

mod common;

use std::io::{Read, Write};
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use brisk_emu::serve::{serve, Echo, HttpFiles, ServeConfig, ServeStats, Service, Session};
use brisk_emu::{BriskLab, EmuConfig, EmulatorOptions, StackConfig, BRISK_ADDR, BRISK_ADDR6};
use common::*;

/// Idle connections opened by the thread test (`BRISK_IDLE_CONNS` overrides, up to
/// 20 000, for measuring).
fn idle_conns() -> usize {
    std::env::var("BRISK_IDLE_CONNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2000)
        .min(20_000)
}

fn threads() -> usize {
    std::fs::read_dir("/proc/self/task").unwrap().count()
}

struct Record {
    done: Arc<Mutex<Vec<Result<String, String>>>>,
    http: Option<Arc<std::path::PathBuf>>,
}

impl Service for Record {
    fn open(&mut self, _peer: SocketAddr) -> Box<dyn Session> {
        match &self.http {
            Some(d) => Box::new(HttpFiles::new(Arc::clone(d))),
            None => Box::<Echo>::default(),
        }
    }
    fn closed(&mut self, _peer: SocketAddr, outcome: std::io::Result<String>) {
        self.done
            .lock()
            .unwrap()
            .push(outcome.map_err(|e| e.to_string()));
    }
}

type Done = Arc<Mutex<Vec<Result<String, String>>>>;

/// A dual-stack lab with the server on port 7 in a thread of its own, serving until
/// the lab stops.
fn start(
    http: Option<std::path::PathBuf>,
) -> (BriskLab, std::thread::JoinHandle<ServeStats>, Done) {
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.local6 = Some(BRISK_ADDR6);
    stack.backlog = 1024;
    let lab = BriskLab::new(
        &EmuConfig {
            rtt: Some(brisk_emu::path::Dur(brisk_time::Duration::from_millis(2))),
            ..EmuConfig::default()
        },
        stack,
        EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab");
    let _listener = lab.stack().listen(7).unwrap();
    let done: Done = Arc::default();
    let (st, dn) = (lab.stack().clone(), Arc::clone(&done));
    let server = std::thread::spawn(move || {
        let mut svc = Record {
            done: dn,
            http: http.map(Arc::new),
        };
        let end = Instant::now() + Duration::from_secs(110);
        serve(&st, 7, &mut svc, &ServeConfig::default(), end).unwrap()
    });
    (lab, server, done)
}

/// An echo round trip on a fresh kernel connection; its duration.
fn probe(lab: &BriskLab, ip: IpAddr) -> Duration {
    let addr = SocketAddr::new(ip, 7);
    lab.kernel()
        .run_in(move || {
            let t0 = Instant::now();
            let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
            s.set_read_timeout(Some(Duration::from_secs(10)))?;
            s.write_all(&[7u8; 64])?;
            let mut got = [0u8; 64];
            s.read_exact(&mut got)?;
            assert_eq!(got, [7u8; 64]);
            s.shutdown(std::net::Shutdown::Write)?;
            let mut rest = Vec::new();
            s.read_to_end(&mut rest)?;
            assert!(rest.is_empty());
            std::io::Result::Ok(t0.elapsed())
        })
        .unwrap()
        .expect("echo probe")
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

#[test]
fn many_idle_connections_cost_no_threads_and_no_latency() {
    if !lab_available("many_idle_connections_cost_no_threads_and_no_latency") {
        return;
    }
    let n = idle_conns();
    let (lab, server, done) = start(None);
    let before: Vec<Duration> = (0..10).map(|_| probe(&lab, BRISK_ADDR.into())).collect();
    let threads_before = threads();
    // N idle kernel connections, opened in the kernel's namespace and held here.
    let addr = SocketAddr::new(BRISK_ADDR.into(), 7);
    let t0 = Instant::now();
    let idle: Vec<std::net::TcpStream> = lab
        .kernel()
        .run_in(move || {
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(std::net::TcpStream::connect_timeout(
                    &addr,
                    Duration::from_secs(10),
                )?);
            }
            std::io::Result::Ok(v)
        })
        .unwrap()
        .expect("idle connections");
    let open_s = t0.elapsed().as_secs_f64();
    // Let the server accept the last of them.
    let t1 = Instant::now();
    while lab.stack().connection_count() < n && t1.elapsed() < Duration::from_secs(20) {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        lab.stack().connection_count() >= n,
        "{}",
        lab.stack().connection_count()
    );
    let threads_with = threads();
    let with: Vec<Duration> = (0..20).map(|_| probe(&lab, BRISK_ADDR.into())).collect();
    let (m0, m1) = (median(before), median(with.clone()));
    let worst = with.iter().max().copied().unwrap();
    eprintln!(
        "{n} idle connections (opened in {open_s:.1} s): threads {threads_before} -> {threads_with}; \
         echo probe median {:.2} ms -> {:.2} ms, worst {:.2} ms",
        m0.as_secs_f64() * 1e3,
        m1.as_secs_f64() * 1e3,
        worst.as_secs_f64() * 1e3
    );
    // The run_in thread has ended; the server's one thread was there before.
    assert!(
        threads_with <= threads_before + 1,
        "threads grew from {threads_before} to {threads_with} with {n} connections"
    );
    // The path's RTT is 2 ms: a probe is a handshake and one round trip. Idle
    // connections cost the server nothing per turn, so no probe waits behind them.
    assert!(
        m1 < Duration::from_millis(50),
        "median probe {m1:?} with {n} idle"
    );
    drop(idle);
    // Every probe was reported as a clean echo.
    let t2 = Instant::now();
    while t2.elapsed() < Duration::from_secs(10) {
        let ok = done
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.as_deref() == Ok("echoed 64 bytes"))
            .count();
        if ok >= 30 {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let ok = done
        .lock()
        .unwrap()
        .iter()
        .filter(|r| r.as_deref() == Ok("echoed 64 bytes"))
        .count();
    assert_eq!(ok, 30, "{:?}", &done.lock().unwrap()[..5.min(ok)]);
    lab.stop().unwrap();
    let stats = server.join().unwrap();
    assert!(stats.accepted >= n as u64 + 30, "{stats:?}");
    assert!(stats.peak_open >= n, "{stats:?}");
}

#[test]
fn echo_and_http_over_ipv4_and_ipv6() {
    if !lab_available("echo_and_http_over_ipv4_and_ipv6") {
        return;
    }
    // Echo: a fresh connection on each family.
    let (lab, server, _done) = start(None);
    for ip in [IpAddr::from(BRISK_ADDR), IpAddr::from(BRISK_ADDR6)] {
        let d = probe(&lab, ip);
        assert!(d < Duration::from_secs(5), "{ip}: {d:?}");
    }
    // A bulk echo that needs the server's backpressure: 4 MB through 256 KiB of
    // output buffer, checked byte for byte.
    let addr = SocketAddr::new(BRISK_ADDR6.into(), 7);
    let data: Vec<u8> = (0..4_000_000u32)
        .map(|i| (i * 7 + i / 4093) as u8)
        .collect();
    let back = lab
        .kernel()
        .run_in(move || {
            let s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
            s.set_read_timeout(Some(Duration::from_secs(30)))?;
            let mut w = s.try_clone()?;
            let d2 = data.clone();
            let writer = std::thread::spawn(move || {
                w.write_all(&d2)?;
                w.shutdown(std::net::Shutdown::Write)
            });
            let mut got = Vec::new();
            (&s).read_to_end(&mut got)?;
            writer.join().unwrap()?;
            std::io::Result::Ok((got, data))
        })
        .unwrap()
        .expect("bulk echo");
    assert!(
        back.0 == back.1,
        "echoed {} of {} bytes, or different",
        back.0.len(),
        back.1.len()
    );
    lab.stop().unwrap();
    server.join().unwrap();

    // HTTP: a 1 MB file over IPv6, and a 404.
    let dir = std::env::temp_dir().join(format!("brisk-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let body: Vec<u8> = (0..1_000_000u32).map(|i| (i % 251) as u8).collect();
    std::fs::write(dir.join("f.bin"), &body).unwrap();
    let (lab, server, done) = start(Some(dir.clone()));
    for (ip, target, status, len) in [
        (IpAddr::from(BRISK_ADDR6), "/f.bin", 200u16, body.len()),
        (IpAddr::from(BRISK_ADDR), "/f.bin", 200, body.len()),
        (IpAddr::from(BRISK_ADDR6), "/nope", 404, 0),
    ] {
        let addr = SocketAddr::new(ip, 7);
        let target = target.to_string();
        let r = lab
            .kernel()
            .run_in(move || {
                let mut s = std::net::TcpStream::connect_timeout(&addr, Duration::from_secs(10))?;
                s.set_read_timeout(Some(Duration::from_secs(30)))?;
                brisk_emu::http::get(&mut s, &addr.to_string(), &target, 10_000_000)
            })
            .unwrap()
            .expect("http get");
        assert_eq!(r.status, status);
        assert_eq!(r.body.len(), len);
        if status == 200 {
            assert!(r.body == body);
        }
    }
    let t = Instant::now();
    while done.lock().unwrap().len() < 3 && t.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(50));
    }
    let got = done.lock().unwrap().clone();
    assert!(
        got.contains(&Ok("200 /f.bin (1000000 bytes)".to_string())),
        "{got:?}"
    );
    assert!(
        got.contains(&Ok("404 /nope (0 bytes)".to_string())),
        "{got:?}"
    );
    lab.stop().unwrap();
    server.join().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
}

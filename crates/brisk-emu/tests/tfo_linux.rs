//! TCP Fast Open over real packets (RFC 7413; docs/mechanisms/tfo.md), Linux's
//! client against brisk's server: the kernel namespace has
//! `net.ipv4.tcp_fastopen = 3` (set inside it only), a client sends its request
//! with `sendto(MSG_FASTOPEN)` twice. The first SYN asks for a cookie and brisk's
//! SYN-ACK carries one; the second SYN carries the cookie and the request, which
//! brisk's application reads and answers before the client's third ACK reaches it
//! (shown in the pcap at brisk's side). Linux's `nstat` counts it
//! (`TcpExtTCPFastOpenActive`), brisk's counters agree, tshark finds no malformed
//! packet, and the time to the first response byte drops by about one RTT.
//! The other way, brisk's client against Linux's server (`TCP_FASTOPEN` on the
//! listener): the same two connections, Linux's `TcpExtTCPFastOpenPassive` and
//! `TCPFastOpenCookieReqd` count them.
//! Bounded: two connections each, one lab (removed at the end by `BriskLab`'s drop), the
//! pcaps deleted.

mod common;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddrV4, TcpStream};
use std::os::fd::FromRawFd;
use std::process::Command;
use std::time::{Duration, Instant};

use brisk_emu::path::{Dur, EmuConfig};
use brisk_emu::{BriskLab, EmulatorOptions, StackConfig, BRISK_ADDR};
use common::*;

const PORT: u16 = 7300;
/// One lab at a time (tests of one binary run in parallel; parallel real-time runs
/// distort each other's timing).
static LAB: std::sync::Mutex<()> = std::sync::Mutex::new(());
const RTT_MS: u64 = 60;

fn reply_to(ask: &[u8]) -> Vec<u8> {
    let mut r = b"reply to ".to_vec();
    r.extend_from_slice(ask);
    r.resize(3000, b'.');
    r
}

/// Linux's client: a socket with CUBIC, the request sent with `MSG_FASTOPEN`
/// (with a cookie the kernel puts it on the SYN; without, it asks for one and sends
/// the data after the handshake), then the reply read to its end. Returns the time
/// to the first reply byte and the reply.
fn linux_fastopen(to: SocketAddrV4, ask: &[u8]) -> std::io::Result<(Duration, Vec<u8>)> {
    let start = Instant::now();
    // SAFETY: plain socket calls on a descriptor this function owns; the address and
    // buffers outlive the calls.
    let fd = unsafe { libc::socket(libc::AF_INET, libc::SOCK_STREAM, 0) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let stream = unsafe { TcpStream::from_raw_fd(fd) };
    brisk_emu::bulk::set_cc(&stream, "cubic").map_err(|e| std::io::Error::other(e.to_string()))?;
    let addr = libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: to.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*to.ip()).to_be(),
        },
        sin_zero: [0; 8],
    };
    let n = unsafe {
        libc::sendto(
            fd,
            ask.as_ptr().cast(),
            ask.len(),
            libc::MSG_FASTOPEN,
            (&addr as *const libc::sockaddr_in).cast(),
            std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t,
        )
    };
    if n < 0 {
        return Err(std::io::Error::last_os_error());
    }
    let mut s = stream;
    if (n as usize) < ask.len() {
        s.write_all(&ask[n as usize..])?;
    }
    s.set_read_timeout(Some(Duration::from_secs(5)))?;
    let mut first = [0u8; 1];
    s.read_exact(&mut first)?;
    let t = start.elapsed();
    let mut got = first.to_vec();
    s.shutdown(Shutdown::Write)?;
    s.read_to_end(&mut got)?;
    Ok((t, got))
}

/// `nstat` counters of the current namespace (absolute, history untouched).
fn nstat() -> String {
    let out = Command::new("nstat")
        .args(["-asz"])
        .output()
        .expect("nstat");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn counter(nstat: &str, name: &str) -> u64 {
    nstat
        .lines()
        .find_map(|l| {
            let mut f = l.split_whitespace();
            (f.next() == Some(name)).then(|| f.next()?.parse().ok())?
        })
        .unwrap_or(0)
}

fn have(tool: &str) -> bool {
    Command::new("sh")
        .args(["-c", &format!("command -v {tool}")])
        .output()
        .is_ok_and(|o| o.status.success())
}

/// (time s, source port, flags, payload length, TFO cookie hex or "") of each
/// TCP packet of `pcap`, and the count of malformed packets, by tshark.
type Row = (f64, u16, u16, usize, String);

fn dissect(pcap: &std::path::Path) -> (Vec<Row>, usize) {
    let out = Command::new("tshark")
        .args(["-r"])
        .arg(pcap)
        .args([
            "-T",
            "fields",
            "-e",
            "frame.time_relative",
            "-e",
            "tcp.srcport",
            "-e",
            "tcp.flags",
            "-e",
            "tcp.len",
            "-e",
            "tcp.options.tfo.cookie",
            "-e",
            "tcp.options.tfo.request",
        ])
        .output()
        .expect("tshark");
    let text = String::from_utf8_lossy(&out.stdout);
    let rows = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((
                f.first()?.parse().ok()?,
                f.get(1)?.parse().ok()?,
                u16::from_str_radix(f.get(2)?.trim_start_matches("0x"), 16).ok()?,
                f.get(3)?.parse().ok()?,
                format!(
                    "{}{}",
                    f.get(4).unwrap_or(&""),
                    f.get(5)
                        .map_or("", |r| if r.is_empty() { "" } else { "request" })
                ),
            ))
        })
        .collect();
    let bad = Command::new("tshark")
        .args(["-r"])
        .arg(pcap)
        .args(["-Y", "_ws.malformed || _ws.expert.severity >= \"error\""])
        .output()
        .expect("tshark");
    let malformed = String::from_utf8_lossy(&bad.stdout).lines().count();
    (rows, malformed)
}

#[test]
fn linux_client_gets_a_cookie_then_sends_its_request_on_the_syn_to_brisk() {
    if !lab_available("tfo_linux_client") {
        return;
    }
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    for t in ["tshark", "nstat"] {
        if !have(t) {
            eprintln!("skipped: {t} missing");
            return;
        }
    }
    let dir = std::env::temp_dir().join(format!("brisk-tfo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let (pcap_a, pcap_b) = (dir.join("brisk.pcap"), dir.join("kernel.pcap"));
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.tcp.fastopen = Some(Box::new(brisk_tcp::tfo::TfoConfig::both(16)));
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(RTT_MS))),
        ..EmuConfig::default()
    };
    let lab = BriskLab::new(
        &path,
        stack,
        EmulatorOptions {
            pcap_a: Some(pcap_a.clone()),
            pcap_b: Some(pcap_b.clone()),
            ..EmulatorOptions::default()
        },
        Some(brisk_time::Duration::from_secs(60)),
    )
    .expect("brisk lab");
    lab.kernel()
        .run_in(|| std::fs::write("/proc/sys/net/ipv4/tcp_fastopen", "3"))
        .unwrap()
        .expect("net.ipv4.tcp_fastopen = 3 in the lab's namespace");
    let mut listener = lab.stack().listen(PORT).expect("brisk listens");
    listener.set_accept_timeout(Some(Duration::from_secs(10)));
    let to = SocketAddrV4::new(BRISK_ADDR, PORT);
    let asks = [
        b"GET /one HTTP/1.1\r\n\r\n".to_vec(),
        b"GET /two HTTP/1.1\r\n\r\n".to_vec(),
    ];
    let mut times = Vec::new();
    std::thread::scope(|s| {
        let server = s.spawn(|| {
            let mut got = Vec::new();
            for ask in &asks {
                let (mut c, _) = listener.accept().expect("brisk accepts");
                brisk_timeouts(&mut c, Duration::from_secs(5));
                let mut req = vec![0u8; ask.len()];
                c.read_exact(&mut req).expect("request");
                c.write_all(&reply_to(&req)).expect("reply");
                let mut rest = Vec::new();
                let _ = c.read_to_end(&mut rest);
                let _ = c.shutdown(Shutdown::Write);
                got.push(req);
            }
            got
        });
        for ask in &asks {
            let ask = ask.clone();
            let (t, reply) = lab
                .kernel()
                .run_in(move || linux_fastopen(to, &ask))
                .unwrap()
                .expect("Linux client");
            times.push((t, reply));
            std::thread::sleep(Duration::from_millis(200));
        }
        let got = server.join().unwrap();
        assert_eq!(got, asks);
    });
    for ((_, reply), ask) in times.iter().zip(&asks) {
        assert_eq!(reply, &reply_to(ask));
    }
    std::thread::sleep(Duration::from_millis(300));
    let ns = lab.kernel().run_in(nstat).unwrap();
    let st = lab.stack().with_endpoint(|ep| ep.fastopen_stats());
    let report = lab.stop().unwrap();
    let _ = report;
    let (t1, t2) = (times[0].0, times[1].0);
    println!(
        "Linux client -> brisk server, RTT {RTT_MS} ms: first reply byte after {:.1} ms \
         (cookie request) and {:.1} ms (data on the SYN): saved {:.1} ms",
        t1.as_secs_f64() * 1e3,
        t2.as_secs_f64() * 1e3,
        (t1.as_secs_f64() - t2.as_secs_f64()) * 1e3
    );
    let active = counter(&ns, "TcpExtTCPFastOpenActive");
    let active_fail = counter(&ns, "TcpExtTCPFastOpenActiveFail");
    println!("Linux nstat: TCPFastOpenActive {active}, TCPFastOpenActiveFail {active_fail}; brisk {st:?}");
    let (rows, malformed) = dissect(&pcap_a);
    let _ = dissect(&pcap_b);
    for f in [&pcap_a, &pcap_b] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir(&dir);
    // brisk side: one request answered with a cookie, one SYN's data accepted.
    assert_eq!(st.server.cookie_reqd, 1, "{st:?}");
    assert_eq!(st.server.passive, 1, "{st:?}");
    assert_eq!(st.server.passive_fail, 0, "{st:?}");
    // Linux side: the second connection's SYN data was acknowledged by the SYN-ACK.
    assert_eq!(active, 1, "{ns}");
    assert_eq!(active_fail, 0, "{ns}");
    assert_eq!(malformed, 0, "tshark found malformed packets");
    // The pcap at brisk's side: the second SYN carries the cookie and the request;
    // brisk's first reply byte leaves before the client's third ACK arrives.
    let syns: Vec<_> = rows.iter().filter(|r| r.2 == 0x002).collect();
    assert_eq!(syns.len(), 2, "{rows:?}");
    assert!(
        syns[0].4.contains("request") && syns[0].3 == 0,
        "{:?}",
        syns[0]
    );
    assert!(
        !syns[1].4.is_empty() && syns[1].3 == asks[1].len(),
        "{:?}",
        syns[1]
    );
    let port = syns[1].1;
    let third_ack = rows
        .iter()
        .find(|r| r.1 == port && r.2 == 0x010 && r.0 > syns[1].0)
        .expect("third ACK");
    let reply = rows
        .iter()
        .find(|r| r.1 == PORT && r.3 > 0 && r.0 > syns[1].0)
        .expect("reply data");
    assert!(
        reply.0 < third_ack.0,
        "reply {reply:?} third ACK {third_ack:?}"
    );
    // About one RTT saved (the lab's path RTT; scheduling adds a few ms).
    let saved = t1.as_secs_f64() - t2.as_secs_f64();
    assert!(saved > RTT_MS as f64 * 0.5e-3, "saved {saved} s");
}

/// The lab with brisk's Fast Open on and the kernel namespace's
/// `net.ipv4.tcp_fastopen = 3`, pcaps at both sides in `dir`.
fn fastopen_lab(dir: &std::path::Path) -> BriskLab {
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.tcp.fastopen = Some(Box::new(brisk_tcp::tfo::TfoConfig::both(16)));
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(RTT_MS))),
        ..EmuConfig::default()
    };
    let lab = BriskLab::new(
        &path,
        stack,
        EmulatorOptions {
            pcap_a: Some(dir.join("brisk.pcap")),
            pcap_b: Some(dir.join("kernel.pcap")),
            ..EmulatorOptions::default()
        },
        Some(brisk_time::Duration::from_secs(60)),
    )
    .expect("brisk lab");
    lab.kernel()
        .run_in(|| std::fs::write("/proc/sys/net/ipv4/tcp_fastopen", "3"))
        .unwrap()
        .expect("net.ipv4.tcp_fastopen = 3 in the lab's namespace");
    lab
}

#[test]
fn brisk_client_gets_a_cookie_then_sends_its_request_on_the_syn_to_linux() {
    use std::os::fd::AsRawFd;
    if !lab_available("tfo_brisk_client") {
        return;
    }
    for t in ["tshark", "nstat"] {
        if !have(t) {
            eprintln!("skipped: {t} missing");
            return;
        }
    }
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    let dir = std::env::temp_dir().join(format!("brisk-tfo-c-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let lab = fastopen_lab(&dir);
    let listener = kernel_listen(lab.kernel(), PORT);
    let qlen: libc::c_int = 16;
    // SAFETY: setsockopt on the listener's own descriptor with a c_int value.
    let r = unsafe {
        libc::setsockopt(
            listener.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_FASTOPEN,
            (&qlen as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0, "TCP_FASTOPEN on the listener");
    let to = std::net::SocketAddr::from((brisk_emu::KERNEL_ADDR, PORT));
    let asks = [
        b"GET /one HTTP/1.1\r\n\r\n".to_vec(),
        b"GET /two HTTP/1.1\r\n\r\n".to_vec(),
    ];
    let cfg = brisk_tcp::Config {
        fastopen: Some(Box::new(brisk_tcp::tfo::TfoConfig::both(16))),
        ..Default::default()
    };
    let mut times = Vec::new();
    std::thread::scope(|s| {
        let server = s.spawn(|| {
            let mut got = Vec::new();
            for ask in &asks {
                let mut c = kernel_accept(&listener, Duration::from_secs(10));
                set_cubic(&c);
                c.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                let mut req = vec![0u8; ask.len()];
                c.read_exact(&mut req).expect("request");
                c.write_all(&reply_to(&req)).expect("reply");
                let mut rest = Vec::new();
                let _ = c.read_to_end(&mut rest);
                got.push(req);
            }
            got
        });
        for ask in &asks {
            let start = Instant::now();
            let mut c = brisk_emu::TcpStream::connect_fastopen(
                lab.stack(),
                to,
                cfg.clone(),
                ask,
                Some(Duration::from_secs(5)),
            )
            .expect("brisk connects");
            brisk_timeouts(&mut c, Duration::from_secs(5));
            let mut first = [0u8; 1];
            c.read_exact(&mut first).expect("reply");
            let t = start.elapsed();
            let mut reply = first.to_vec();
            c.shutdown(Shutdown::Write).unwrap();
            let _ = c.read_to_end(&mut reply);
            times.push((t, reply));
            std::thread::sleep(Duration::from_millis(200));
        }
        assert_eq!(server.join().unwrap(), asks);
    });
    for ((_, reply), ask) in times.iter().zip(&asks) {
        assert_eq!(reply, &reply_to(ask));
    }
    std::thread::sleep(Duration::from_millis(300));
    let ns = lab.kernel().run_in(nstat).unwrap();
    let st = lab.stack().with_endpoint(|ep| ep.fastopen_stats());
    lab.stop().unwrap();
    let (t1, t2) = (times[0].0, times[1].0);
    println!(
        "brisk client -> Linux server, RTT {RTT_MS} ms: first reply byte after {:.1} ms \
         (cookie request) and {:.1} ms (data on the SYN): saved {:.1} ms",
        t1.as_secs_f64() * 1e3,
        t2.as_secs_f64() * 1e3,
        (t1.as_secs_f64() - t2.as_secs_f64()) * 1e3
    );
    let names = [
        "TcpExtTCPFastOpenPassive",
        "TcpExtTCPFastOpenPassiveFail",
        "TcpExtTCPFastOpenCookieReqd",
        "TcpExtTCPFastOpenListenOverflow",
    ];
    let vals: Vec<u64> = names.iter().map(|n| counter(&ns, n)).collect();
    println!(
        "Linux nstat: {:?}; brisk {st:?}",
        names.iter().zip(&vals).collect::<Vec<_>>()
    );
    let (pcap_a, pcap_b) = (dir.join("brisk.pcap"), dir.join("kernel.pcap"));
    let (rows, malformed) = dissect(&pcap_b);
    let (_, malformed_a) = dissect(&pcap_a);
    for f in [&pcap_a, &pcap_b] {
        let _ = std::fs::remove_file(f);
    }
    let _ = std::fs::remove_dir(&dir);
    assert_eq!(st.client.cookie_requests, 1, "{st:?}");
    assert_eq!(st.client.cookies_received, 1, "{st:?}");
    assert_eq!(st.client.syn_with_cookie, 1, "{st:?}");
    assert_eq!((st.client.active, st.client.active_fail), (1, 0), "{st:?}");
    assert_eq!(vals, [1, 0, 1, 0], "{ns}");
    assert_eq!(malformed + malformed_a, 0, "tshark found malformed packets");
    // The pcap at Linux's side: the second SYN carries brisk's cookie and request.
    let syns: Vec<_> = rows.iter().filter(|r| r.2 == 0x002).collect();
    assert_eq!(syns.len(), 2, "{rows:?}");
    assert!(
        syns[0].4.contains("request") && syns[0].3 == 0,
        "{:?}",
        syns[0]
    );
    assert!(
        !syns[1].4.is_empty() && syns[1].3 == asks[1].len(),
        "{:?}",
        syns[1]
    );
    let port = syns[1].1;
    let third_ack = rows
        .iter()
        .find(|r| r.1 == port && r.2 == 0x010 && r.0 > syns[1].0);
    let reply = rows
        .iter()
        .find(|r| r.1 == PORT && r.3 > 0 && r.0 > syns[1].0);
    println!("Linux's reply left at {reply:?}, brisk's third ACK arrived at {third_ack:?}");
    // Linux's application read the request and answered before the third ACK.
    assert!(
        reply.expect("reply").0 < third_ack.expect("third ACK").0,
        "{rows:?}"
    );
    let saved = t1.as_secs_f64() - t2.as_secs_f64();
    assert!(saved > RTT_MS as f64 * 0.5e-3, "saved {saved} s");
}

//! brisk against Linux TCP: option negotiation checked from the pcap, half-close,
//! resets from either side, zero windows and persist probes, keepalive, a 3-second
//! outage. Needs root and /dev/net/tun (skipped with a message otherwise).

mod common;

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::path::PathBuf;
use std::time::Duration;

use brisk_emu::path::{Dur, OutageSpec, PathSpec, Rate};
use brisk_emu::pcapread;
use brisk_emu::tools::{sink, source};
use brisk_emu::{BriskLab, EmuConfig, EmulatorOptions, StackConfig, BRISK_ADDR, KERNEL_ADDR};
use brisk_wire::{parse_tcp_packet, IpRepr};
use common::*;

const T: Duration = Duration::from_secs(30);

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("brisk-emu-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn rtt(ms: u64) -> EmuConfig {
    EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(ms))),
        ..EmuConfig::default()
    }
}

fn lab_cfg(path: &EmuConfig, stack: StackConfig, dir: Option<&PathBuf>) -> BriskLab {
    let opts = EmulatorOptions {
        pcap_a: dir.map(|d| d.join("brisk.pcap")),
        pcap_b: dir.map(|d| d.join("kernel.pcap")),
        ..EmulatorOptions::default()
    };
    BriskLab::new(path, stack, opts, Some(brisk_time::Duration::from_secs(60))).expect("brisk lab")
}

/// Segments in a pcap, with who sent them (true: brisk).
fn segments(path: &std::path::Path) -> Vec<(u64, bool, Vec<u8>)> {
    pcapread::read(path)
        .unwrap()
        .into_iter()
        .map(|r| {
            let from_brisk = matches!(parse_tcp_packet(&r.data), Ok((IpRepr::V4(ip), _)) if ip.src == BRISK_ADDR);
            (r.ts_ns, from_brisk, r.data)
        })
        .collect()
}

fn check_handshake(dir: &std::path::Path, brisk_is_client: bool) {
    let segs = segments(&dir.join("brisk.pcap"));
    assert!(!segs.is_empty());
    let mut syn = None;
    let mut synack = None;
    for (_, _, d) in &segs {
        let (_, t) =
            parse_tcp_packet(d).expect("every captured packet parses with valid checksums");
        if t.flags.syn() && !t.flags.ack() && syn.is_none() {
            syn = Some((
                t.mss,
                t.window_scale,
                t.sack_permitted,
                t.timestamps.is_some(),
            ));
        }
        if t.flags.syn() && t.flags.ack() && synack.is_none() {
            synack = Some((
                t.mss,
                t.window_scale,
                t.sack_permitted,
                t.timestamps.is_some(),
            ));
        }
    }
    let (syn, synack) = (syn.expect("a SYN"), synack.expect("a SYN-ACK"));
    for (who, o) in [("SYN", syn), ("SYN-ACK", synack)] {
        assert_eq!(o.0, Some(1460), "{who} MSS");
        assert!(o.1.is_some(), "{who} window scale");
        assert!(o.2, "{who} SACK-permitted");
        assert!(o.3, "{who} timestamps");
    }
    // Both ends then use timestamps on every segment, and brisk's data carries the
    // negotiated MSS (1448 payload bytes with timestamps).
    let mut max_payload = 0;
    for (_, from_brisk, d) in &segs {
        let (_, t) = parse_tcp_packet(d).unwrap();
        if !t.flags.syn() && !t.flags.rst() {
            assert!(t.timestamps.is_some(), "timestamps on every segment");
        }
        if *from_brisk {
            max_payload = max_payload.max(t.payload.len());
        }
    }
    assert_eq!(max_payload, 1448, "full-sized segments from brisk");
    let _ = brisk_is_client;
    for f in ["brisk.pcap", "kernel.pcap"] {
        let recs = pcapread::read(&dir.join(f)).unwrap();
        assert!(
            pcapread::check_well_formed(&recs).is_empty(),
            "{f}: malformed"
        );
        match pcapread::tshark_malformed(&dir.join(f)) {
            Some(r) => assert_eq!(r.expect("tshark runs"), 0, "{f}: tshark flags packets"),
            None => {
                eprintln!("tshark not installed: malformed-packet check done by brisk-wire only")
            }
        }
    }
}

fn handshake(name: &str, brisk_is_client: bool) {
    if !lab_available(name) {
        return;
    }
    let dir = tmp(name);
    let lab = lab_cfg(&rtt(2), StackConfig::new(BRISK_ADDR), Some(&dir));
    let (mut b, mut k) = if brisk_is_client {
        let l = kernel_listen(lab.kernel(), 6001);
        let b = lab
            .stack()
            .connect(SocketAddr::from((KERNEL_ADDR, 6001)))
            .unwrap();
        (b, kernel_accept(&l, T))
    } else {
        let l = lab.stack().listen(6001).unwrap();
        let k = kernel_connect(lab.kernel(), BRISK_ADDR, 6001, T);
        (l.accept().unwrap().0, k)
    };
    brisk_timeouts(&mut b, T);
    let sent = source(&mut b, 1_000_000, 1).unwrap();
    b.shutdown(Shutdown::Write).unwrap();
    assert_eq!(sink(&mut k, u64::MAX).unwrap(), sent);
    drop(k);
    let _ = b.wait_closed(Duration::from_secs(2));
    drop(b);
    lab.stop().unwrap();
    check_handshake(&dir, brisk_is_client);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn handshake_negotiates_mss_ws_sack_ts_as_client() {
    handshake("handshake_client", true);
}

#[test]
fn handshake_negotiates_mss_ws_sack_ts_as_server() {
    handshake("handshake_server", false);
}

#[test]
fn half_close_both_ways() {
    if !lab_available("half_close_both_ways") {
        return;
    }
    let lab = lab_cfg(&rtt(2), StackConfig::new(BRISK_ADDR), None);
    // brisk half-closes first; Linux answers after seeing EOF.
    let l = kernel_listen(lab.kernel(), 6002);
    let mut b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6002)))
        .unwrap();
    brisk_timeouts(&mut b, T);
    let mut k = kernel_accept(&l, T);
    b.write_all(b"request").unwrap();
    b.shutdown(Shutdown::Write).unwrap();
    let mut req = Vec::new();
    k.read_to_end(&mut req).unwrap();
    assert_eq!(req, b"request");
    let reply = source(&mut k, 300_000, 3).unwrap();
    k.shutdown(Shutdown::Write).unwrap();
    assert_eq!(sink(&mut b, u64::MAX).unwrap(), reply);
    b.wait_closed(Duration::from_secs(5)).unwrap_or(());
    // Linux half-closes first; brisk keeps sending after reading EOF.
    let bl = lab.stack().listen(6003).unwrap();
    let mut k = kernel_connect(lab.kernel(), BRISK_ADDR, 6003, T);
    let (mut b, _) = bl.accept().unwrap();
    brisk_timeouts(&mut b, T);
    k.write_all(b"ask").unwrap();
    k.shutdown(Shutdown::Write).unwrap();
    let mut got = Vec::new();
    b.read_to_end(&mut got).unwrap();
    assert_eq!(got, b"ask");
    let reply = source(&mut b, 300_000, 4).unwrap();
    b.shutdown(Shutdown::Write).unwrap();
    assert_eq!(sink(&mut k, u64::MAX).unwrap(), reply);
    lab.stop().unwrap();
}

fn set_linger_zero(s: &std::net::TcpStream) {
    let lg = libc::linger {
        l_onoff: 1,
        l_linger: 0,
    };
    // SAFETY: sets SO_LINGER from a live struct.
    let r = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&lg as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(r, 0);
}

#[test]
fn resets_from_either_side_end_the_connection() {
    if !lab_available("resets_from_either_side_end_the_connection") {
        return;
    }
    let lab = lab_cfg(&rtt(2), StackConfig::new(BRISK_ADDR), None);
    // Linux resets (SO_LINGER 0 + close): brisk's read fails with ConnectionReset.
    let l = kernel_listen(lab.kernel(), 6004);
    let mut b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6004)))
        .unwrap();
    brisk_timeouts(&mut b, T);
    let k = kernel_accept(&l, T);
    set_linger_zero(&k);
    drop(k);
    let mut buf = [0u8; 16];
    let e = b.read(&mut buf).expect_err("read after RST fails");
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert!(b.write(b"x").is_err(), "write after RST fails");
    // brisk resets: Linux's read fails with ConnectionReset.
    let l = kernel_listen(lab.kernel(), 6005);
    let b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6005)))
        .unwrap();
    let mut k = kernel_accept(&l, T);
    b.abort().unwrap();
    let e = k
        .read(&mut buf)
        .expect_err("Linux read after brisk's RST fails");
    assert_eq!(e.kind(), ErrorKind::ConnectionReset);
    assert!(lab.stack().stats().rst_sent >= 1);
    lab.stop().unwrap();
}

#[test]
fn slow_reader_zero_window_and_persist_probes() {
    if !lab_available("slow_reader_zero_window_and_persist_probes") {
        return;
    }
    let dir = tmp("zero_window");
    let mut cfg = StackConfig::new(BRISK_ADDR);
    cfg.tcp.recv_buffer = 64 * 1024;
    let lab = lab_cfg(&rtt(2), cfg, Some(&dir));
    // Linux sends to brisk, which does not read for 2 s: brisk's window closes, Linux
    // probes it, and after the reader resumes every byte arrives.
    let bl = lab.stack().listen(6006).unwrap();
    let mut k = kernel_connect(lab.kernel(), BRISK_ADDR, 6006, T);
    let (mut b, _) = bl.accept().unwrap();
    brisk_timeouts(&mut b, T);
    let n = 2_000_000;
    let sent = std::thread::scope(|s| {
        let tx = s.spawn(move || {
            let d = source(&mut k, n, 5).unwrap();
            k.shutdown(Shutdown::Write).unwrap();
            let _ = k.read(&mut [0u8; 1]);
            d
        });
        std::thread::sleep(Duration::from_secs(2));
        let got = sink(&mut b, u64::MAX).unwrap();
        let sent = tx.join().unwrap();
        assert_eq!(got, sent);
        sent
    });
    assert_eq!(sent.bytes, n);
    // brisk as sender to a Linux reader that stalls with a small receive buffer.
    let l = kernel_listen(lab.kernel(), 6007);
    let mut b2 = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6007)))
        .unwrap();
    brisk_timeouts(&mut b2, T);
    let mut k2 = kernel_accept(&l, T);
    let sent2 = std::thread::scope(|s| {
        let tx = s.spawn(move || {
            let d = source(&mut b2, n, 6).unwrap();
            b2.shutdown(Shutdown::Write).unwrap();
            b2.wait_acked(T).unwrap();
            d
        });
        std::thread::sleep(Duration::from_secs(3));
        let got = sink(&mut k2, u64::MAX).unwrap();
        let sent = tx.join().unwrap();
        assert_eq!(got, sent);
        sent
    });
    assert_eq!(sent2.bytes, n);
    lab.stop().unwrap();
    // From the pcap: zero windows advertised by both and probes sent into them.
    let segs = segments(&dir.join("brisk.pcap"));
    let mut zero_from = [false, false]; // [linux, brisk]
    let mut probes_after_zero = [0u32, 0u32];
    let mut zero_open = [false, false];
    for (_, from_brisk, d) in &segs {
        let (_, t) = parse_tcp_packet(d).unwrap();
        let me = usize::from(*from_brisk);
        let peer = 1 - me;
        if t.window == 0 && !t.flags.syn() && !t.flags.rst() {
            zero_from[me] = true;
            zero_open[me] = true;
        } else if t.window > 0 {
            zero_open[me] = false;
        }
        // A segment sent while the peer's window is zero is a (zero-window) probe.
        if zero_open[peer] && !t.flags.rst() {
            probes_after_zero[me] += 1;
        }
    }
    assert!(zero_from[1], "brisk advertised a zero window");
    assert!(zero_from[0], "Linux advertised a zero window");
    assert!(
        probes_after_zero[0] >= 1,
        "Linux probed brisk's zero window"
    );
    assert!(
        probes_after_zero[1] >= 1,
        "brisk probed Linux's zero window"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn keepalive_probes_are_answered_both_ways() {
    if !lab_available("keepalive_probes_are_answered_both_ways") {
        return;
    }
    let dir = tmp("keepalive");
    let mut cfg = StackConfig::new(BRISK_ADDR);
    cfg.tcp.timeouts.keepalive = Some(brisk_time::Duration::from_millis(500));
    cfg.tcp.timeouts.keepalive_interval = brisk_time::Duration::from_millis(500);
    let lab = lab_cfg(&rtt(2), cfg, Some(&dir));
    let l = kernel_listen(lab.kernel(), 6008);
    let mut b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6008)))
        .unwrap();
    brisk_timeouts(&mut b, T);
    let mut k = kernel_accept(&l, T);
    // Linux keepalive too: idle 1 s, interval 1 s.
    for (opt, v) in [(libc::TCP_KEEPIDLE, 1), (libc::TCP_KEEPINTVL, 1)] {
        // SAFETY: integer socket options from live values.
        unsafe {
            libc::setsockopt(
                k.as_raw_fd(),
                libc::IPPROTO_TCP,
                opt,
                (&v as *const i32).cast(),
                4,
            );
        }
    }
    let one = 1i32;
    // SAFETY: as above.
    unsafe {
        libc::setsockopt(
            k.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_KEEPALIVE,
            (&one as *const i32).cast(),
            4,
        );
    }
    std::thread::sleep(Duration::from_millis(3500));
    // The idle connection still works both ways.
    b.write_all(b"ping").unwrap();
    let mut buf = [0u8; 4];
    k.read_exact(&mut buf).unwrap();
    k.write_all(b"pong").unwrap();
    b.read_exact(&mut buf).unwrap();
    assert_eq!(&buf, b"pong");
    lab.stop().unwrap();
    // Keepalive probes: a segment with seq = SND.NXT - 1 and at most one byte, sent
    // while idle; each side's probes are ACKed by the other.
    let segs = segments(&dir.join("brisk.pcap"));
    let mut probes = [0u32, 0u32];
    let mut last_seq_end = [None::<u32>, None::<u32>];
    for (_, from_brisk, d) in &segs {
        let (_, t) = parse_tcp_packet(d).unwrap();
        let me = usize::from(*from_brisk);
        let len = t.payload.len() as u32 + u32::from(t.flags.syn()) + u32::from(t.flags.fin());
        if let Some(end) = last_seq_end[me] {
            if t.payload.len() <= 1 && !t.flags.syn() && t.seq.0 == end.wrapping_sub(1) {
                probes[me] += 1;
                continue;
            }
        }
        last_seq_end[me] = Some(t.seq.0.wrapping_add(len));
    }
    assert!(probes[1] >= 2, "brisk sent keepalive probes ({probes:?})");
    assert!(probes[0] >= 1, "Linux sent keepalive probes ({probes:?})");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn transfer_survives_a_three_second_outage() {
    if !lab_available("transfer_survives_a_three_second_outage") {
        return;
    }
    let spec = PathSpec {
        rate: Some(Rate(20_000_000)),
        outages: vec![OutageSpec {
            start: Dur(brisk_time::Duration::from_secs(1)),
            duration: Dur(brisk_time::Duration::from_secs(3)),
        }],
        ..PathSpec::default()
    };
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(10))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 3,
    };
    let lab = lab_cfg(&path, StackConfig::new(BRISK_ADDR), None);
    let l = kernel_listen(lab.kernel(), 6009);
    let mut b = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, 6009)))
        .unwrap();
    brisk_timeouts(&mut b, T);
    let mut k = kernel_accept(&l, T);
    let t0 = std::time::Instant::now();
    let n = 6_000_000; // ~2.4 s at 20 Mbit/s: the outage hits mid-transfer
    let (sent, got) = std::thread::scope(|s| {
        let rx = s.spawn(move || sink(&mut k, u64::MAX).unwrap());
        let sent = source(&mut b, n, 9).unwrap();
        b.shutdown(Shutdown::Write).unwrap();
        (sent, rx.join().unwrap())
    });
    let took = t0.elapsed();
    assert_eq!(got, sent);
    assert!(
        took > Duration::from_secs(4),
        "the outage delayed the transfer ({took:?})"
    );
    let rep = lab.stop().unwrap();
    assert!(
        rep.forward.dropped_outage > 0,
        "packets were lost to the outage"
    );
}

//! Inner Space over real packets (docs/mechanisms/inner-space.md): brisk's dual
//! handshake against Linux, a legacy server. The SYN-U's TCP Data (the InSpace
//! option) reaches Linux's listener, which answers with an ordinary SYN/ACK
//! acknowledging only the SYN; brisk resets that connection at once and keeps the
//! Ordinary one, with no added round trip. Linux's application accepts exactly one
//! connection and reads exactly the request: never an InSpace or Inner Option byte.
//! And with Inner Space on (client and server), brisk still talks to Linux both
//! ways with plain connections. Bounded: three connections, one lab (removed by
//! `BriskLab`'s drop).

mod common;

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use brisk_emu::path::{Dur, EmuConfig};
use brisk_emu::{BriskLab, EmulatorOptions, StackConfig, BRISK_ADDR, KERNEL_ADDR};
use brisk_tcp::inspace::InSpaceConfig;
use common::*;

const PORT: u16 = 7400;
const RTT_MS: u64 = 40;
static LAB: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn inspace_config() -> brisk_tcp::Config {
    brisk_tcp::Config {
        inspace: Some(Box::new(InSpaceConfig::both())),
        ..Default::default()
    }
}

fn lab() -> BriskLab {
    let mut stack = StackConfig::new(BRISK_ADDR);
    stack.tcp = inspace_config();
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(RTT_MS))),
        ..EmuConfig::default()
    };
    BriskLab::new(
        &path,
        stack,
        EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(60)),
    )
    .expect("brisk lab")
}

#[test]
fn dual_handshake_to_linux_keeps_the_ordinary_connection_and_linux_reads_no_inner_bytes() {
    if !lab_available("inspace_dual_linux") {
        return;
    }
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    let lab = lab();
    let listener = kernel_listen(lab.kernel(), PORT);
    let to = SocketAddr::from((KERNEL_ADDR, PORT));
    let clock = lab.stack().clock();
    let start = Instant::now();
    let pair = lab
        .stack()
        .with_endpoint(|ep| ep.connect_dual(clock.now(), to, inspace_config()))
        .expect("connect_dual");
    let stats = loop {
        let st = lab.stack().with_endpoint(|ep| ep.inspace_stats());
        if st.won_ordinary + st.won_upgraded + st.failed > 0 {
            break st;
        }
        assert!(start.elapsed() < Duration::from_secs(5), "no decision");
        std::thread::sleep(Duration::from_micros(200));
    };
    let decided = start.elapsed();
    println!(
        "dual handshake to Linux, RTT {RTT_MS} ms: decided after {:.1} ms; {stats:?}",
        decided.as_secs_f64() * 1e3
    );
    assert_eq!(
        (stats.won_ordinary, stats.won_upgraded, stats.failed),
        (1, 0, 0)
    );
    // No added round trip: decided at the SYN/ACKs' arrival, one RTT (plus the lab's
    // scheduling), well before a second RTT.
    assert!(decided < Duration::from_millis(RTT_MS * 2), "{decided:?}");
    let req = b"GET /inner-space HTTP/1.1\r\n\r\n";
    lab.stack().with_endpoint(|ep| {
        let c = ep.conn_mut(pair.ordinary).expect("the Ordinary connection");
        assert_eq!(c.write(req), req.len());
        c.close();
    });
    let mut s = kernel_accept(&listener, Duration::from_secs(5));
    let mut got = Vec::new();
    s.read_to_end(&mut got).expect("read to the FIN");
    assert_eq!(got, req, "Linux's application read exactly the request");
    // Exactly one connection reached Linux's application: the Upgraded one was
    // reset before its handshake completed.
    std::thread::sleep(Duration::from_millis(RTT_MS * 3));
    assert!(
        listener.accept().is_err(),
        "a second connection reached Linux's application"
    );
    lab.stop().unwrap();
}

#[test]
fn brisk_with_inner_space_on_talks_to_linux_both_ways() {
    if !lab_available("inspace_plain_linux") {
        return;
    }
    let _one = LAB.lock().unwrap_or_else(|e| e.into_inner());
    let lab = lab();
    // Linux's client to brisk's listener (Inner Space server on).
    let bl = brisk_emu::TcpListener::bind(lab.stack(), PORT + 1).expect("brisk listen");
    let msg = b"hello from Linux".to_vec();
    std::thread::scope(|sc| {
        let srv = sc.spawn(|| {
            let (mut c, _) = bl.accept().expect("brisk accept");
            brisk_timeouts(&mut c, Duration::from_secs(5));
            let mut buf = vec![0u8; msg.len()];
            c.read_exact(&mut buf).expect("brisk reads");
            c.write_all(&buf).expect("brisk echoes");
            buf
        });
        let mut k = kernel_connect(lab.kernel(), BRISK_ADDR, PORT + 1, Duration::from_secs(5));
        set_cubic(&k);
        k.write_all(&msg).unwrap();
        let mut back = vec![0u8; msg.len()];
        k.read_exact(&mut back).expect("Linux reads the echo");
        assert_eq!(back, msg);
        assert_eq!(srv.join().unwrap(), msg);
    });
    // brisk's client (Inner Space config, a plain connect) to Linux's listener.
    let listener = kernel_listen(lab.kernel(), PORT + 2);
    let to = SocketAddr::from((KERNEL_ADDR, PORT + 2));
    let mut c = brisk_emu::TcpStream::connect_with(
        lab.stack(),
        to,
        inspace_config(),
        Some(Duration::from_secs(5)),
    )
    .expect("brisk connects");
    brisk_timeouts(&mut c, Duration::from_secs(5));
    let mut k = kernel_accept(&listener, Duration::from_secs(5));
    set_cubic(&k);
    c.write_all(b"ping").unwrap();
    let mut b4 = [0u8; 4];
    k.read_exact(&mut b4).unwrap();
    assert_eq!(&b4, b"ping");
    k.write_all(b"pong").unwrap();
    c.read_exact(&mut b4).unwrap();
    assert_eq!(&b4, b"pong");
    let st = lab.stack().with_endpoint(|ep| ep.inspace_stats());
    assert_eq!(st.syn_u, 0, "Linux's SYNs are ordinary");
    lab.stop().unwrap();
}

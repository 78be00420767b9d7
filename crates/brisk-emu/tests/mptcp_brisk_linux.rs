//! brisk's MPTCP connection (`brisk-tcp` `conn/mp.rs`, one subflow) against Linux's
//! MPTCP over real packets in the one-path lab: brisk connects with MP_CAPABLE to a
//! Linux `IPPROTO_MPTCP` listener, and Linux connects to a brisk MPTCP listener
//! (cubic set on Linux's socket); 4 MB each way in each role, checked by SHA-256,
//! closed with DATA_FIN. Linux's `nstat`
//! MPTcp* counters must show the MP_CAPABLE handshake and no fallback, checksum or
//! mapping error; brisk's endpoint must count no refusal or fallback. Needs root, TUN
//! and an MPTCP kernel; skips with a message otherwise.

mod common;

use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::path::PathSpec;
use brisk_emu::stack::mptcp_kernel as mptcp;
use brisk_emu::tools::{sink, source};
use brisk_emu::{EmuConfig, KERNEL_ADDR};
use brisk_tcp::mptcp::MptcpConfig;
use brisk_tcp::Config;
use common::*;

const BYTES: u64 = 4 << 20;
const PORT: u16 = 5301;
const IO_TIMEOUT: Duration = Duration::from_secs(30);

/// Counters that must stay zero (Linux's MIB names, as `mptcp_join.sh` reads them).
const ERRORS: [&str; 10] = [
    "MPTcpExtDataCsumErr",
    "MPTcpExtDSSNotMatching",
    "MPTcpExtDSSNoMatchTCP",
    "MPTcpExtDSSTCPMismatch",
    "MPTcpExtInfiniteMapRx",
    "MPTcpExtMPFailRx",
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtDSSFallback",
    "MPTcpExtMPFastcloseRx",
];

fn run(brisk_sends: bool, brisk_client: bool) {
    let name = match (brisk_client, brisk_sends) {
        (true, true) => "brisk_mptcp_client_sends_to_linux",
        (true, false) => "brisk_mptcp_client_receives_from_linux",
        (false, true) => "brisk_mptcp_server_sends_to_linux",
        (false, false) => "brisk_mptcp_server_receives_from_linux",
    };
    if !lab_available(name) {
        return;
    }
    if let Some(why) = mptcp::unsupported_reason() {
        eprintln!("SKIPPED {name}: {why}");
        return;
    }
    let path = EmuConfig {
        rtt: Some(brisk_emu::path::Dur(brisk_time::Duration::from_millis(10))),
        bottleneck: PathSpec::default(),
        reverse: Some(PathSpec::default()),
        seed: 7,
    };
    let mut stack = brisk_emu::StackConfig::new(brisk_emu::BRISK_ADDR);
    stack.tcp = Config {
        mptcp: Some(Box::new(MptcpConfig::default())),
        ..Config::default()
    };
    let lab = brisk_emu::tools::brisklab::BriskLab::new(
        &path,
        stack,
        brisk_emu::EmulatorOptions::default(),
        Some(brisk_time::Duration::from_secs(120)),
    )
    .expect("brisk lab");
    mptcp::enable(lab.kernel()).expect("net.mptcp.enabled=1");
    let before = mptcp::counters(lab.kernel()).expect("nstat");
    let (mut brisk, mut linux) = if brisk_client {
        let l = mptcp::listen(
            lab.kernel(),
            SocketAddr::new(KERNEL_ADDR.into(), PORT),
            "cubic",
        )
        .expect("Linux MPTCP listener");
        l.set_nonblocking(true).unwrap();
        let b = lab
            .stack()
            .connect(SocketAddr::new(KERNEL_ADDR.into(), PORT))
            .expect("brisk connects to Linux");
        (b, kernel_accept(&l, IO_TIMEOUT))
    } else {
        let mut l = lab.stack().listen(PORT).expect("brisk listens");
        l.set_accept_timeout(Some(IO_TIMEOUT));
        let k = mptcp::connect(
            lab.kernel(),
            SocketAddr::new(brisk_emu::BRISK_ADDR.into(), PORT),
            "cubic",
            IO_TIMEOUT,
        )
        .expect("Linux MPTCP connects to brisk");
        k.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
        let (b, _) = l.accept().expect("brisk accepts");
        (b, k)
    };
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let (sent, got) = std::thread::scope(|s| {
        if brisk_sends {
            let rx = s.spawn(move || {
                let got = sink(&mut linux, u64::MAX);
                let _ = linux.shutdown(Shutdown::Write);
                got
            });
            let sent = source(&mut brisk, BYTES, 7).expect("brisk sends");
            brisk.shutdown(Shutdown::Write).unwrap();
            let got = rx.join().unwrap().expect("Linux receives");
            // Linux's DATA_FIN: brisk reads the end of stream.
            let rest = sink(&mut brisk, u64::MAX).expect("brisk sees Linux's close");
            assert_eq!(rest.bytes, 0);
            (sent, got)
        } else {
            let tx = s.spawn(move || {
                let d = source(&mut linux, BYTES, 8);
                linux.shutdown(Shutdown::Write).unwrap();
                let mut one = [0u8; 1];
                let _ = std::io::Read::read(&mut linux, &mut one);
                d
            });
            let got = sink(&mut brisk, u64::MAX).expect("brisk receives");
            brisk.shutdown(Shutdown::Write).unwrap();
            (tx.join().unwrap().expect("Linux sends"), got)
        }
    });
    assert_eq!(sent.bytes, BYTES);
    assert_eq!(got, sent, "{name}: received stream differs (SHA-256)");
    std::thread::sleep(Duration::from_millis(300));
    let after = mptcp::counters(lab.kernel()).expect("nstat");
    let d = mptcp::delta(&before, &after);
    eprintln!(
        "{name}: Linux MPTCP counters {d:?}; brisk stats {:?}",
        lab.stack().stats()
    );
    let handshake: &[&str] = if brisk_client {
        &["MPTcpExtMPCapableSYNRX", "MPTcpExtMPCapableACKRX"]
    } else {
        &["MPTcpExtMPCapableSYNTX", "MPTcpExtMPCapableSYNACKRX"]
    };
    for k in handshake {
        assert!(
            d.get(*k).copied().unwrap_or(0) >= 1,
            "{name}: Linux counted no {k}: {d:?}"
        );
    }
    for e in ERRORS {
        assert_eq!(d.get(e).copied().unwrap_or(0), 0, "{e}: {d:?}");
    }
    let st = lab.stack().stats();
    assert_eq!((st.mptcp_fallbacks, st.mptcp_refused), (0, 0), "{st:?}");
    let rep = lab.stop().expect("emulator report");
    assert_eq!(rep.forward.read_errors + rep.reverse.read_errors, 0);
}

#[test]
fn brisk_mptcp_client_sends_to_linux() {
    run(true, true);
}

#[test]
fn brisk_mptcp_client_receives_from_linux() {
    run(false, true);
}

#[test]
fn brisk_mptcp_server_sends_to_linux() {
    run(true, false);
}

#[test]
fn brisk_mptcp_server_receives_from_linux() {
    run(false, false);
}

//! brisk's MPTCP with joins against Linux's, over real packets in the two-path lab
//! (issue 31 §3): brisk's stack has an address on each path (198.18.k.3,
//! `MultiPathOptions::brisk`), Linux is host B (198.18.0.2 and 198.18.1.2).
//!
//! * **brisk client → Linux server**: brisk's fullmesh path manager has its path-1
//!   address as a `subflow` endpoint and joins the server's initial address from it
//!   (198.18.1.3 → 198.18.0.2: path 1 both ways).
//! * **Linux client → brisk server**: Linux's in-kernel path manager has a `subflow`
//!   endpoint on path 1 (`ip mptcp endpoint add 198.18.1.2 dev brisk-tun1 subflow`,
//!   limits `subflows 2 add_addr_accepted 2`, as `mptcp_join.sh`) and joins brisk's
//!   initial address from it.
//!
//! Each role sends [`bytes`] one way, closes with DATA_FIN, then the other way, and
//! closes again: SHA-256 equal, both paths carry data in both directions (the
//! emulators' per-path byte counters), the join in Linux's `nstat` counters and in
//! the capture (MP_JOIN only on path 1), no MPTCP checksum, join, mapping or
//! fallback error counter, and tshark (mapping analysis and relative sequence
//! numbers on) finds no malformed packet and no MPTCP expert item. Then a fast close
//! from each side (MP_FASTCLOSE), and MPTCP options stripped on one path: on path 0's
//! SYN the connection falls back to TCP; on everything path 1 carries the join is
//! refused; the stream arrives intact either way.
//!
//! Size: `BRISK_MPTCP_BYTES` (bytes; default 16 MiB each way, 100 MB with
//! `BRISK_LONG_TESTS=1`). Needs root, TUN and an MPTCP kernel; skips with a message
//! otherwise. Every wait is bounded; the lab (namespaces, devices, threads) is
//! removed when a test ends, also when it fails.

mod common;

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, Shutdown, SocketAddr};
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use brisk_emu::emu::mptcp_strip::StripPackets;
use brisk_emu::stack::mptcp_kernel as mptcp;
use brisk_emu::tools::multipath::{
    addr_b, brisk_addr, brisk_subflow_endpoints, tun_name, MultiPathConfig, MultiPathLab,
    MultiPathOptions, StripDirection, StripSpec,
};
use brisk_emu::tools::{sink, source, StreamDigest};
use brisk_emu::{EmuReport, StackConfig};
use brisk_tcp::mptcp::MptcpConfig;
use brisk_tcp::{Config, EndpointConfig};
use common::*;

const PORT: u16 = 5401;
const IO_TIMEOUT: Duration = Duration::from_secs(60);

/// Path 0: 40 Mbit/s, 10 ms; path 1: 20 Mbit/s, 20 ms; both directions rate-limited
/// (each direction carries one phase's data), 100-packet queues.
const PATHS: &str = r#"
[[path]]
rtt = "10ms"
bottleneck = { rate = "40Mbit", queue = { kind = "droptail", packets = 100 } }
reverse = { rate = "40Mbit", queue = { kind = "droptail", packets = 100 } }
[[path]]
rtt = "20ms"
bottleneck = { rate = "20Mbit", queue = { kind = "droptail", packets = 100 } }
reverse = { rate = "20Mbit", queue = { kind = "droptail", packets = 100 } }
"#;

/// Linux MPTCP counters that must stay zero (its MIB names, as `mptcp_join.sh`'s
/// `chk_csum_nr`, `chk_fail_nr`, `chk_join_nr` read them).
const ERRORS: [&str; 12] = [
    "MPTcpExtDataCsumErr",
    "MPTcpExtDSSNotMatching",
    "MPTcpExtDSSNoMatchTCP",
    "MPTcpExtDSSTCPMismatch",
    "MPTcpExtInfiniteMapRx",
    "MPTcpExtMPFailRx",
    "MPTcpExtMPJoinSynAckHMacFailure",
    "MPTcpExtMPJoinAckHMacFailure",
    "MPTcpExtMPJoinNoTokenFound",
    "MPTcpExtMPCapableFallbackACK",
    "MPTcpExtMPCapableFallbackSYNACK",
    "MPTcpExtDSSFallback",
];

/// Bytes each way: `BRISK_MPTCP_BYTES`, else 100 MB with `BRISK_LONG_TESTS=1`, else
/// 16 MiB.
fn bytes() -> u64 {
    if let Some(b) = std::env::var("BRISK_MPTCP_BYTES")
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
    {
        return b.clamp(1 << 16, 1 << 31);
    }
    if long_tests() {
        100_000_000
    } else {
        16 << 20
    }
}

fn available(test: &str) -> bool {
    if !lab_available(test) {
        return false;
    }
    if let Some(why) = mptcp::unsupported_reason() {
        eprintln!("SKIPPED {test}: {why}");
        return false;
    }
    true
}

/// A scratch directory for the captures, removed on drop (also when a test fails).
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Scratch {
        let p = std::env::temp_dir().join(format!("brisk-mpjoin-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("scratch dir");
        Scratch(p)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        if std::env::var_os("BRISK_KEEP_PCAP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        } else {
            eprintln!("captures kept in {}", self.0.display());
        }
    }
}

/// The lab with brisk on both paths (MPTCP, a `subflow` endpoint on path 1) and
/// Linux's MPTCP on host B; `strip` on one path; captures in `pcap` (large
/// transfers are not captured: tshark over 4 × 100 MB would take minutes).
fn lab(
    strip: Option<(usize, StripSpec)>,
    pcap: Option<&Path>,
    linux_subflow: bool,
) -> MultiPathLab {
    let mut cfg = MultiPathConfig::from_toml(PATHS).unwrap();
    if let Some((k, s)) = strip {
        cfg.paths[k].strip_mptcp = Some(s);
    }
    let mut mc = MptcpConfig::default();
    brisk_subflow_endpoints(&mut mc, cfg.paths.len());
    let mut stack = StackConfig::new(brisk_addr(0));
    stack.tcp = Config {
        mptcp: Some(Box::new(mc)),
        send_buffer: 4 << 20,
        recv_buffer: 4 << 20,
        ..Config::default()
    };
    stack.endpoint = EndpointConfig::seeded([0x31; 16], 31);
    let opts = MultiPathOptions {
        pcap_dir: pcap.map(Path::to_path_buf),
        limit: Some(brisk_time::Duration::from_secs(600)),
        brisk: Some(stack),
        ..MultiPathOptions::default()
    };
    let lab = MultiPathLab::start(&cfg, &opts).expect("multipath lab with brisk");
    let nb = lab.ns_b();
    mptcp::enable(nb).unwrap();
    mptcp::set_limits(nb, 2, 2).unwrap();
    if linux_subflow {
        mptcp::add_endpoint(nb, addr_b(1), &tun_name(1), &["subflow"]).unwrap();
    }
    lab
}

/// A connected pair: brisk's stream and Linux's MPTCP socket, brisk the client or
/// not, and the listener (kept open: Linux takes joins through its listening socket,
/// and a join SYN to a closed one gets a plain RST).
fn connect(
    lab: &MultiPathLab,
    brisk_client: bool,
) -> (brisk_emu::TcpStream, std::net::TcpStream, Listening) {
    let stack = lab.stack().expect("brisk stack");
    let (mut b, k, l) = if brisk_client {
        let l = mptcp::listen(
            lab.ns_b(),
            SocketAddr::from((Ipv4Addr::UNSPECIFIED, PORT)),
            "cubic",
        )
        .expect("Linux MPTCP listener");
        l.set_nonblocking(true).unwrap();
        let b = stack
            .connect(SocketAddr::from((addr_b(0), PORT)))
            .expect("brisk connects to Linux");
        let k = kernel_accept(&l, IO_TIMEOUT);
        (b, k, Listening::Linux(l))
    } else {
        let mut l = stack.listen(PORT).expect("brisk listens");
        l.set_accept_timeout(Some(IO_TIMEOUT));
        let k = mptcp::connect(
            lab.ns_b(),
            SocketAddr::from((brisk_addr(0), PORT)),
            "cubic",
            IO_TIMEOUT,
        )
        .expect("Linux MPTCP connects to brisk");
        let (b, _) = l.accept().expect("brisk accepts");
        (b, k, Listening::Brisk(l))
    };
    brisk_timeouts(&mut b, IO_TIMEOUT);
    k.set_read_timeout(Some(IO_TIMEOUT)).unwrap();
    k.set_write_timeout(Some(IO_TIMEOUT)).unwrap();
    (b, k, l)
}

/// The server's listening socket, held while the connection runs.
#[allow(dead_code)]
enum Listening {
    Linux(std::net::TcpListener),
    Brisk(brisk_emu::TcpListener),
}

/// Sends `n` bytes (seed `seed`) from `tx` to `rx` and half-closes `tx`; `rx` reads
/// to the end of stream. Returns (sent, received, seconds).
fn one_way<T, R>(tx: &mut T, rx: &mut R, n: u64, seed: u64) -> (StreamDigest, StreamDigest, f64)
where
    T: Write + Send + HalfClose,
    R: Read + Send,
{
    let t0 = Instant::now();
    let (sent, got) = std::thread::scope(|s| {
        let r = s.spawn(|| sink(rx, u64::MAX));
        let sent = match source(tx, n, seed) {
            Ok(d) => d,
            Err(e) => {
                eprintln!("sender failed: {e}; {}", tx.state());
                panic!("sender: {e}");
            }
        };
        tx.half_close();
        (sent, r.join().expect("receiver thread").expect("receiver"))
    });
    (sent, got, t0.elapsed().as_secs_f64())
}

trait HalfClose {
    fn half_close(&mut self);
    /// What to print when a transfer fails.
    fn state(&self) -> String;
}

impl HalfClose for brisk_emu::TcpStream {
    fn half_close(&mut self) {
        self.shutdown(Shutdown::Write).expect("brisk DATA_FIN");
    }
    fn state(&self) -> String {
        format!("brisk: {:?}", self.mptcp())
    }
}

impl HalfClose for std::net::TcpStream {
    fn half_close(&mut self) {
        self.shutdown(Shutdown::Write).expect("Linux DATA_FIN");
    }
    fn state(&self) -> String {
        "Linux".into()
    }
}

fn get(m: &BTreeMap<String, u64>, k: &str) -> u64 {
    m.get(k).copied().unwrap_or(0)
}

fn mptcp_only(m: &BTreeMap<String, u64>) -> BTreeMap<&str, u64> {
    m.iter()
        .filter(|(k, v)| k.starts_with("MPTcpExt") && **v > 0)
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

fn paths_summary(reports: &[EmuReport]) {
    for (k, r) in reports.iter().enumerate() {
        eprintln!(
            "path {k}: A->B {} pkts {} B, B->A {} pkts {} B; drops fwd {} rev {}; stripped fwd {} rev {}; refused {}/{}; health {:?}",
            r.forward.delivered_packets,
            r.forward.delivered_bytes,
            r.reverse.delivered_packets,
            r.reverse.delivered_bytes,
            r.forward.dropped_queue_full + r.forward.dropped_loss,
            r.reverse.dropped_queue_full + r.reverse.dropped_loss,
            r.forward.mptcp_stripped_packets,
            r.reverse.mptcp_stripped_packets,
            r.forward.write_refused,
            r.reverse.write_refused,
            r.health.warnings,
        );
    }
}

// ---- tshark -----------------------------------------------------------------

fn tshark_available() -> bool {
    ["tshark", "mergecap"].iter().all(|tool| {
        Command::new(tool)
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// tshark's preferences: MPTCP mapping analysis and relative sequence numbers on, TCP
/// stream reassembly off. Reassembly flagged brisk's retransmissions as malformed
/// ("New fragment overlaps old data (retransmission?)", group Malformed, so
/// `_ws.malformed`): in a kept capture of 2026-12-07 the 7 flagged frames were the
/// retransmissions of the 7 segments the emulator dropped on path 1, each with the
/// same sequence number, DSS mapping and payload (SHA-256) as the original and no
/// "Conflicting data" item. That was the intermittent flag of
/// `brisk_fast_closes_to_linux` (only when drops hit path 1 and tshark did not call
/// every resend a retransmission). The checks are about options and mappings; the
/// streams' bytes are checked by SHA-256.
const TSHARK_PREFS: [&str; 6] = [
    "-o",
    "mptcp.analyze_mappings:TRUE",
    "-o",
    "mptcp.relative_sequence_numbers:TRUE",
    "-o",
    "tcp.desegment_tcp_streams:FALSE",
];

/// Packets of `pcap` matching `filter`, with [`TSHARK_PREFS`].
fn tshark_count(pcap: &Path, filter: &str) -> usize {
    let out = Command::new("tshark")
        .arg("-n")
        .args(TSHARK_PREFS)
        .arg("-r")
        .arg(pcap)
        .args(["-Y", filter, "-T", "fields", "-e", "frame.number"])
        .output()
        .expect("tshark runs");
    assert!(
        out.status.success(),
        "tshark -Y {filter:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).lines().count()
}

/// Side A's captures of both paths in one file (brisk's packets as sent, Linux's as
/// delivered to brisk).
fn merged(dir: &Path) -> PathBuf {
    let out = dir.join("all-a.pcap");
    let ok = Command::new("mergecap")
        .arg("-w")
        .arg(&out)
        .arg(dir.join("path0-a.pcap"))
        .arg(dir.join("path1-a.pcap"))
        .status()
        .is_ok_and(|s| s.success());
    assert!(ok, "mergecap failed");
    out
}

/// Malformed packets and every MPTCP expert item of Wireshark 4.0 (mapping analysis
/// on). "No mapping available" counts only on segments with payload: 4.0 also flags
/// zero-length segments just past the last mapping, which need none (RFC 8684 §3.3).
const TSHARK_PROBLEMS: &str = "_ws.malformed || mptcp.connection.echoed_key_mismatch || \
    mptcp.connection.missing_algorithm || mptcp.connection.unsupported_algorithm || \
    (mptcp.dss.missing_mapping && tcp.len > 0) || mptcp.dss.infinite_mapping";

/// The terms of [`TSHARK_PROBLEMS`], one by one, to say which matched.
const TSHARK_TERMS: [&str; 6] = [
    "_ws.malformed",
    "mptcp.connection.echoed_key_mismatch",
    "mptcp.connection.missing_algorithm",
    "mptcp.connection.unsupported_algorithm",
    "mptcp.dss.missing_mapping && tcp.len > 0",
    "mptcp.dss.infinite_mapping",
];

/// Copies the captures of `dir` to a directory that outlives the test (the scratch
/// directory is removed when the test unwinds), and returns it.
fn keep_captures(dir: &Path) -> PathBuf {
    let name = dir
        .file_name()
        .map_or("capture".into(), |n| n.to_string_lossy().into_owned());
    let kept = std::env::temp_dir().join(format!("kept-{name}"));
    let _ = std::fs::create_dir_all(&kept);
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            let _ = std::fs::copy(e.path(), kept.join(e.file_name()));
        }
    }
    kept
}

/// The capture checks of a joined MPTCP connection: MP_JOIN on path 1 only (SYN,
/// SYN-ACK, third ACK, fourth ACK), no problem, and `extra` (filter, at least) more.
fn check_capture(dir: &Path, extra: &[(&str, usize)]) {
    if !tshark_available() {
        eprintln!("tshark or mergecap missing: capture checks skipped");
        return;
    }
    let all = merged(dir);
    let options = tshark_count(&all, "mptcp");
    let joins1 = tshark_count(&dir.join("path1-a.pcap"), "tcp.options.mptcp.subtype == 1");
    let joins0 = tshark_count(&dir.join("path0-a.pcap"), "tcp.options.mptcp.subtype == 1");
    let problems = tshark_count(&all, TSHARK_PROBLEMS);
    eprintln!("capture: {options} packets with MPTCP options, MP_JOIN on path 1: {joins1}, on path 0: {joins0}, {problems} problems");
    assert!(options > 100, "MPTCP options in the capture: {options}");
    assert!(joins1 >= 3, "MP_JOIN packets on path 1: {joins1}");
    assert_eq!(joins0, 0, "the join belongs on path 1");
    if problems > 0 {
        // Which term matched, and the captures kept for a look.
        let terms: Vec<String> = TSHARK_TERMS
            .iter()
            .map(|t| format!("{t}: {}", tshark_count(&all, t)))
            .collect();
        let kept = keep_captures(dir);
        eprintln!("tshark problems by term: {}", terms.join(", "));
        eprintln!("captures kept in {}", kept.display());
        // Which packets and why, for the failure message.
        let out = Command::new("tshark")
            .arg("-n")
            .args(TSHARK_PREFS)
            .arg("-r")
            .arg(&all)
            .args(["-Y", TSHARK_PROBLEMS, "-T", "fields", "-e", "frame.number"])
            .args(["-e", "ip.src", "-e", "tcp.len", "-e", "_ws.expert.message"])
            .output()
            .expect("tshark runs");
        let text = String::from_utf8_lossy(&out.stdout);
        let head: Vec<&str> = text.lines().take(20).collect();
        panic!(
            "tshark flags {problems} MPTCP problems ({}; captures kept in {}):\n{}",
            terms.join(", "),
            kept.display(),
            head.join("\n")
        );
    }
    for (filter, least) in extra {
        let n = tshark_count(&all, filter);
        eprintln!("capture: {n} packets match {filter}");
        assert!(n >= *least, "{filter}: {n} < {least}");
    }
}

// ---- the cases --------------------------------------------------------------

/// Both ways over one connection with DATA_FIN closes: client → server, the
/// client's DATA_FIN, server → client, the server's DATA_FIN.
fn both_ways(name: &str, brisk_client: bool) {
    if !available(name) {
        return;
    }
    let n = bytes();
    let scratch = Scratch::new(name);
    let pcap = (n <= 32 << 20).then_some(scratch.0.as_path());
    let mut lab = lab(None, pcap, !brisk_client);
    let (nb, stack) = (lab.ns_b(), lab.stack().unwrap().clone());
    let before = mptcp::counters(nb).unwrap();
    let (mut b, mut k, _listening) = connect(&lab, brisk_client);
    // Phase 1: client to server; phase 2: back.
    let (s1, r1, t1) = if brisk_client {
        one_way(&mut b, &mut k, n, 1)
    } else {
        one_way(&mut k, &mut b, n, 1)
    };
    let view = b.mptcp().expect("brisk's connection");
    let (s2, r2, t2) = if brisk_client {
        one_way(&mut k, &mut b, n, 2)
    } else {
        one_way(&mut b, &mut k, n, 2)
    };
    eprintln!(
        "{name}: {n} B client->server in {t1:.2} s ({:.1} Mbit/s), back in {t2:.2} s ({:.1} Mbit/s); brisk's subflows after phase 1: {:?}",
        n as f64 * 8.0 / t1 / 1e6,
        n as f64 * 8.0 / t2 / 1e6,
        view.subflows
    );
    drop(k);
    b.wait_closed(Duration::from_secs(10)).ok();
    drop(b);
    std::thread::sleep(Duration::from_millis(300));
    let d = mptcp::delta(&before, &mptcp::counters(nb).unwrap());
    let st = stack.stats();
    let reports = lab.stop().expect("emulator reports");
    drop(lab);
    paths_summary(&reports);
    eprintln!("{name}: Linux MPTcpExt {:?}", mptcp_only(&d));
    eprintln!(
        "{name}: brisk fallbacks {} refused {}",
        st.mptcp_fallbacks, st.mptcp_refused
    );
    assert_eq!((s1.bytes, s2.bytes), (n, n));
    assert_eq!(r1, s1, "{name}: client->server stream differs (SHA-256)");
    assert_eq!(r2, s2, "{name}: server->client stream differs (SHA-256)");
    assert!(view.is_mptcp && view.fallback.is_none(), "{view:?}");
    assert_eq!(view.subflows.len(), 2, "brisk's subflows: {view:?}");
    let (l1, r1a) = (view.subflows[1].0, view.subflows[1].1);
    if brisk_client {
        assert_eq!(
            (l1.ip(), r1a.ip()),
            (brisk_addr(1).into(), addr_b(0).into())
        );
    } else {
        assert_eq!(
            (l1.ip(), r1a.ip()),
            (brisk_addr(0).into(), addr_b(1).into())
        );
    }
    // Both paths carried data both ways: brisk's (A -> B) and Linux's (B -> A).
    for (k, r) in reports.iter().enumerate() {
        assert!(
            r.forward.delivered_bytes > n / 20 && r.reverse.delivered_bytes > n / 20,
            "path {k}: A->B {} B, B->A {} B (each should exceed 5 % of {n})",
            r.forward.delivered_bytes,
            r.reverse.delivered_bytes
        );
        assert_eq!(r.forward.write_refused + r.reverse.write_refused, 0);
    }
    let joins: &[&str] = if brisk_client {
        &[
            "MPTcpExtMPCapableSYNRX",
            "MPTcpExtMPCapableACKRX",
            "MPTcpExtMPJoinSynRx",
            "MPTcpExtMPJoinAckRx",
        ]
    } else {
        &[
            "MPTcpExtMPCapableSYNTX",
            "MPTcpExtMPCapableSYNACKRX",
            "MPTcpExtMPJoinSynAckRx",
        ]
    };
    for c in joins {
        assert!(
            get(&d, c) >= 1,
            "{name}: Linux counted no {c}: {:?}",
            mptcp_only(&d)
        );
    }
    for e in ERRORS {
        assert_eq!(get(&d, e), 0, "{name}: {e}: {:?}", mptcp_only(&d));
    }
    assert_eq!(get(&d, "MPTcpExtMPFastcloseRx"), 0);
    assert_eq!((st.mptcp_fallbacks, st.mptcp_refused), (0, 0), "{st:?}");
    if pcap.is_some() {
        // DATA_FIN from both ends.
        check_capture(
            &scratch.0,
            &[
                ("tcp.options.mptcp.datafin.flag == 1 && ip.src == 198.18.0.2", 1),
                (
                    "tcp.options.mptcp.datafin.flag == 1 && (ip.src == 198.18.0.3 || ip.src == 198.18.1.3)",
                    1,
                ),
            ],
        );
    }
}

#[test]
fn brisk_client_joins_linux_server_both_ways() {
    both_ways("brisk_client_joins", true);
}

#[test]
fn linux_client_joins_brisk_server_both_ways() {
    both_ways("linux_client_joins", false);
}

/// SO_LINGER on a kernel socket.
fn linger(s: &std::net::TcpStream, secs: i32) {
    let l = libc::linger {
        l_onoff: 1,
        l_linger: secs,
    };
    // SAFETY: setsockopt with a live fd and a linger struct of the right size.
    let rc = unsafe {
        libc::setsockopt(
            s.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_LINGER,
            (&l as *const libc::linger).cast(),
            std::mem::size_of::<libc::linger>() as libc::socklen_t,
        )
    };
    assert_eq!(rc, 0, "SO_LINGER");
}

/// Fast close (RFC 8684 §3.5): after the client's data arrived intact, brisk
/// (`abort`) or Linux (closing with data unread, `mptcp_do_fastclose`) ends the
/// connection with MP_FASTCLOSE; the other side sees a reset.
fn fast_close(name: &str, brisk_client: bool) {
    if !available(name) {
        return;
    }
    let n = bytes().min(16 << 20);
    let scratch = Scratch::new(name);
    let mut lab = lab(None, Some(&scratch.0), !brisk_client);
    let (nb, stack) = (lab.ns_b(), lab.stack().unwrap().clone());
    let before = mptcp::counters(nb).unwrap();
    let (mut b, mut k, _listening) = connect(&lab, brisk_client);
    // The client's data, read by the server without a close.
    let (sent, got) = std::thread::scope(|s| {
        if brisk_client {
            let r = s.spawn(|| sink(&mut (&mut k).take(n), n));
            let sent = source(&mut b, n, 3).expect("brisk sends");
            (sent, r.join().unwrap().expect("Linux receives"))
        } else {
            let r = s.spawn(|| sink(&mut (&mut b).take(n), n));
            let sent = source(&mut k, n, 3).expect("Linux sends");
            (sent, r.join().unwrap().expect("brisk receives"))
        }
    });
    assert_eq!(got, sent, "{name}: stream differs (SHA-256)");
    let view = b.mptcp().expect("brisk's connection");
    assert_eq!(view.subflows.len(), 2, "{view:?}");
    let mut one = [0u8; 1];
    if brisk_client {
        // brisk resets: MP_FASTCLOSE with Linux's key, then RSTs.
        b.abort().expect("brisk abort");
        let r = k.read(&mut one);
        assert!(
            matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
            "Linux's read after brisk's fast close: {r:?}"
        );
    } else {
        // brisk's server sends a little that Linux never reads; Linux's close with
        // data unread is its fast close.
        b.write_all(&[7u8; 4096]).expect("brisk writes");
        std::thread::sleep(Duration::from_millis(300));
        linger(&k, 0);
        drop(k);
        let r = b.read(&mut one);
        assert!(
            matches!(&r, Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset),
            "brisk's read after Linux's fast close: {r:?}"
        );
    }
    std::thread::sleep(Duration::from_millis(300));
    let d = mptcp::delta(&before, &mptcp::counters(nb).unwrap());
    let st = stack.stats();
    drop(b);
    let reports = lab.stop().expect("emulator reports");
    drop(lab);
    paths_summary(&reports);
    eprintln!("{name}: Linux MPTcpExt {:?}", mptcp_only(&d));
    let c = if brisk_client {
        "MPTcpExtMPFastcloseRx"
    } else {
        "MPTcpExtMPFastcloseTx"
    };
    assert!(get(&d, c) >= 1, "{name}: no {c}: {:?}", mptcp_only(&d));
    for e in ERRORS {
        assert_eq!(get(&d, e), 0, "{name}: {e}: {:?}", mptcp_only(&d));
    }
    assert_eq!((st.mptcp_fallbacks, st.mptcp_refused), (0, 0), "{st:?}");
    let from = if brisk_client {
        "(ip.src == 198.18.0.3 || ip.src == 198.18.1.3)"
    } else {
        "(ip.src == 198.18.0.2 || ip.src == 198.18.1.2)"
    };
    // brisk resets each of its two subflows with MP_FASTCLOSE (before the fix in
    // `mp_terminate`, only the first left).
    let fastcloses = if brisk_client { 2 } else { 1 };
    check_capture(
        &scratch.0,
        &[(
            &format!("tcp.options.mptcp.subtype == 7 && {from}"),
            fastcloses,
        )],
    );
}

/// Was quarantined on 2026-12-07 (docs/mechanisms/mptcp.md, "Joins over real
/// packets"): Linux's read after brisk's abort once saw no reset within 60 s, because
/// only the first subflow's RST with MP_FASTCLOSE left brisk (the endpoint reaped the
/// connection once the application saw `Closed`); fixed in `conn/mp.rs`
/// (`mp_terminate`). An intermittent tshark flag on brisk's path-1 data frames (about
/// 1 run in 5 under load, 2026-12-06/07) was not seen since; if it recurs the test
/// names the matching term and keeps the captures.
#[test]
fn brisk_fast_closes_to_linux() {
    fast_close("brisk_fast_close", true);
}

#[test]
fn linux_fast_closes_to_brisk() {
    fast_close("linux_fast_close", false);
}

/// brisk as client with MPTCP options stripped on one path (RFC 8684 §3.7): the
/// stream arrives intact; returns brisk's view after the transfer, the reports and
/// Linux's counter deltas.
fn stripped(
    name: &str,
    k: usize,
    s: StripSpec,
) -> Option<(
    brisk_emu::socket::MptcpView,
    Vec<EmuReport>,
    BTreeMap<String, u64>,
)> {
    if !available(name) {
        return None;
    }
    let n = bytes().min(8 << 20);
    let mut lab = lab(Some((k, s)), None, false);
    let nb = lab.ns_b();
    let before = mptcp::counters(nb).unwrap();
    let (mut b, mut kk, _listening) = connect(&lab, true);
    let (sent, got, t) = one_way(&mut b, &mut kk, n, 5);
    assert_eq!(got, sent, "{name}: stream differs (SHA-256)");
    // Give a join time to be tried (and refused) before looking.
    std::thread::sleep(Duration::from_millis(300));
    let view = b.mptcp().expect("brisk's connection");
    let (s2, r2, _) = one_way(&mut kk, &mut b, n / 4, 6);
    assert_eq!(r2, s2, "{name}: stream back differs (SHA-256)");
    drop(kk);
    drop(b);
    std::thread::sleep(Duration::from_millis(300));
    let d = mptcp::delta(&before, &mptcp::counters(nb).unwrap());
    let reports = lab.stop().expect("emulator reports");
    drop(lab);
    paths_summary(&reports);
    eprintln!(
        "{name}: {n} B in {t:.2} s; brisk {view:?}; Linux MPTcpExt {:?}",
        mptcp_only(&d)
    );
    Some((view, reports, d))
}

/// MP_CAPABLE stripped from path 0's SYN: Linux answers as plain TCP and brisk
/// falls back (no join is tried: a connection that fell back has no token).
#[test]
fn mp_capable_stripped_on_path_0_falls_back_to_tcp() {
    let s = StripSpec {
        direction: StripDirection::Forward,
        packets: StripPackets::Syn,
    };
    let Some((view, reports, d)) = stripped("mpc_stripped", 0, s) else {
        return;
    };
    assert!(!view.is_mptcp, "{view:?}");
    assert!(view.fallback.is_some(), "{view:?}");
    assert!(reports[0].forward.mptcp_stripped_packets >= 1);
    assert_eq!(get(&d, "MPTcpExtMPCapableSYNRX"), 0);
    assert_eq!(get(&d, "MPTcpExtMPJoinSynRx"), 0);
    // Plain TCP on path 0 only: path 1 stays silent.
    assert_eq!(
        reports[1].forward.read_packets + reports[1].reverse.read_packets,
        0
    );
}

/// Every MPTCP option stripped on path 1, both ways: the join's SYN reaches Linux
/// as a plain SYN, so no join completes; the connection stays MPTCP on path 0, which
/// carries the whole stream.
#[test]
fn options_stripped_on_path_1_refuse_the_join() {
    let s = StripSpec {
        direction: StripDirection::Both,
        packets: StripPackets::All,
    };
    let Some((view, reports, d)) = stripped("join_stripped", 1, s) else {
        return;
    };
    assert!(view.is_mptcp && view.fallback.is_none(), "{view:?}");
    let carrying = view.subflows.iter().filter(|s| s.3).count();
    assert_eq!(
        carrying, 1,
        "only the initial subflow may carry data: {view:?}"
    );
    assert!(
        reports[1].forward.mptcp_stripped_packets >= 1,
        "the join was tried"
    );
    assert_eq!(get(&d, "MPTcpExtMPJoinAckRx"), 0);
    for e in ERRORS {
        assert_eq!(get(&d, e), 0, "{e}: {:?}", mptcp_only(&d));
    }
}

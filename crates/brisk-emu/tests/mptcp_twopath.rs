//! Linux MPTCP ↔ Linux MPTCP over the two-path lab (tools/multipath.rs), the
//! reference brisk's MPTCP will be checked against (issue 31 §2–§3):
//! * both paths carry data (the emulators' per-path byte counters), on two path
//!   sets, the join is seen in Linux's counters and in the capture, no MPTCP
//!   checksum/mapping/HMAC error, tshark dissects it without a malformed packet or
//!   MPTCP expert error, SHA-256 intact at both ends, every subflow runs the
//!   congestion control set on the socket;
//! * with MPTCP options stripped from path 0's SYN, or from its SYN-ACK, Linux falls
//!   back to plain TCP (RFC 8684 §3.7) and the transfer is still intact;
//! * with DSS stripped from data: on a lone subflow both ends fall back, intact; on
//!   the joined subflow that subflow is reset and the connection goes on, intact; on
//!   the initial subflow while a join is under way Linux stalls (an ignored test that
//!   records the finding).
//!
//! Set-up as Linux's `mptcp_join.sh`: `net.mptcp.enabled=1`, limits `subflows 2
//! add_addr_accepted 2` on both hosts, and the server (B) announcing its path-1
//! address (`ip mptcp endpoint add 198.18.1.2 dev brisk-tun1 signal`); the client's
//! in-kernel path manager opens the second subflow to it from 198.18.1.1 (the route's
//! source hint), so each subflow has a path of its own. Needs root, TUN and an MPTCP
//! kernel; skips with a message otherwise. Each test is bounded (30-s transfer
//! timeout, 60-s emulator limit) and moves 4 MB.

mod common;

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use brisk_emu::emu::mptcp_strip::StripPackets;
use brisk_emu::stack::mptcp_kernel as mptcp;
use brisk_emu::tools::multipath::{
    addr_b, tun_name, MultiPathConfig, MultiPathLab, MultiPathOptions, StripDirection, StripSpec,
};
use brisk_emu::EmuReport;

const BYTES: u64 = 4 << 20;
const PORT: u16 = 5201;
const TIMEOUT: Duration = Duration::from_secs(30);

/// Path 0: 20 Mbit/s, 10 ms; path 1: 10 Mbit/s, 30 ms; 100-packet queues. Different
/// enough that a scheduler has a choice, fast enough for 4 MB in about a second.
const PATHS: &str = r#"
[[path]]
rtt = "10ms"
bottleneck = { rate = "20Mbit", queue = { kind = "droptail", packets = 100 } }
[[path]]
rtt = "30ms"
bottleneck = { rate = "10Mbit", queue = { kind = "droptail", packets = 100 } }
"#;

/// MPTCP counters that must stay zero in a clean run (Linux's MIB names, as
/// `mptcp_join.sh`'s `chk_csum_nr`, `chk_fail_nr`, `chk_join_nr` read them).
const ERRORS: [&str; 9] = [
    "MPTcpExtDataCsumErr",
    "MPTcpExtDSSNotMatching",
    "MPTcpExtDSSNoMatchTCP",
    "MPTcpExtInfiniteMapRx",
    "MPTcpExtMPFailRx",
    "MPTcpExtMPJoinSynAckHMacFailure",
    "MPTcpExtMPJoinAckHMacFailure",
    "MPTcpExtMPJoinNoTokenFound",
    "MPTcpExtMPCapableFallbackSYNACK",
];

fn available(test: &str) -> bool {
    if !common::lab_available(test) {
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
        let p = std::env::temp_dir().join(format!("brisk-mptcp-{}-{name}", std::process::id()));
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

struct Outcome {
    /// `ss -tni` of the client's established connections halfway through.
    ss: String,
    transfer: Result<mptcp::MptcpTransfer, String>,
    reports: Vec<EmuReport>,
    /// Counter deltas over the transfer in A (client) and B (server).
    a: BTreeMap<String, u64>,
    b: BTreeMap<String, u64>,
    wall: Duration,
}

/// Path 0: 10 Mbit/s, 40 ms, 0.5 % loss; path 1: 30 Mbit/s, 10 ms: the faster and
/// cleaner path is the joined one.
const PATHS_LOSSY: &str = r#"
[[path]]
rtt = "40ms"
seed = 11
bottleneck = { rate = "10Mbit", queue = { kind = "droptail", packets = 100 }, loss = { kind = "bernoulli", p = 0.005 } }
[[path]]
rtt = "10ms"
seed = 12
bottleneck = { rate = "30Mbit", queue = { kind = "droptail", packets = 100 } }
"#;

/// Builds the lab of `paths` with `strip` on path `strip_on`, configures MPTCP as
/// the module docs say, runs the transfer A → B and stops the emulators.
fn run(paths: &str, strip_on: usize, strip: Option<StripSpec>, pcap_dir: &Path) -> Outcome {
    run_for(paths, strip_on, strip, pcap_dir, TIMEOUT, true)
}

fn run_for(
    paths: &str,
    strip_on: usize,
    strip: Option<StripSpec>,
    pcap_dir: &Path,
    timeout: Duration,
    announce: bool,
) -> Outcome {
    let mut cfg = MultiPathConfig::from_toml(paths).unwrap();
    cfg.paths[strip_on].strip_mptcp = strip;
    let opts = MultiPathOptions {
        pcap_dir: Some(pcap_dir.to_path_buf()),
        limit: Some(brisk_time::Duration::from_secs(60)),
        ..MultiPathOptions::default()
    };
    let mut lab = MultiPathLab::start(&cfg, &opts).expect("multipath lab");
    let (na, nb) = (lab.ns_a(), lab.ns_b());
    for ns in [na, nb] {
        mptcp::enable(ns).unwrap();
        mptcp::set_limits(ns, 2, 2).unwrap();
    }
    if announce {
        mptcp::add_endpoint(nb, addr_b(1), &tun_name(1), &["signal"]).unwrap();
    }
    let (a0, b0) = (mptcp::counters(na).unwrap(), mptcp::counters(nb).unwrap());
    let t0 = Instant::now();
    // Halfway through, the client's subflows as `ss` shows them: the congestion
    // control set on the MPTCP socket must have reached every subflow.
    let (transfer, ss) = std::thread::scope(|sc| {
        let probe = sc.spawn(|| {
            std::thread::sleep(Duration::from_millis(500));
            na.exec(&[
                "ss",
                "-tniH",
                "state",
                "established",
                "dst",
                "198.18.0.0/15",
            ])
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
        });
        let spec = mptcp::TransferSpec {
            listen_on: SocketAddr::from((Ipv4Addr::UNSPECIFIED, PORT)),
            connect_to: SocketAddr::from((addr_b(0), PORT)),
            cc: "cubic".into(),
            bytes: BYTES,
            seed: 7,
            timeout,
        };
        let t = mptcp::transfer(na, nb, &spec).map_err(|e| e.to_string());
        (t, probe.join().expect("ss probe"))
    });
    let wall = t0.elapsed();
    // Let the closing handshakes finish before counting.
    std::thread::sleep(Duration::from_millis(200));
    let a = mptcp::delta(&a0, &mptcp::counters(na).unwrap());
    let b = mptcp::delta(&b0, &mptcp::counters(nb).unwrap());
    let reports = lab.stop().expect("emulator reports");
    drop(lab);
    Outcome {
        ss,
        transfer,
        reports,
        a,
        b,
        wall,
    }
}

impl Outcome {
    fn ok(&self) -> &mptcp::MptcpTransfer {
        self.transfer.as_ref().expect("MPTCP transfer")
    }
}

fn mptcp_counters(m: &BTreeMap<String, u64>) -> BTreeMap<&str, u64> {
    m.iter()
        .filter(|(k, _)| k.starts_with("MPTcpExt"))
        .map(|(k, v)| (k.as_str(), *v))
        .collect()
}

fn summary(o: &Outcome) {
    for (k, r) in o.reports.iter().enumerate() {
        eprintln!(
            "path {k}: A->B {} pkts {} B delivered, B->A {} pkts {} B; stripped fwd {} rev {}; \
             drops {}; health {:?}",
            r.forward.delivered_packets,
            r.forward.delivered_bytes,
            r.reverse.delivered_packets,
            r.reverse.delivered_bytes,
            r.forward.mptcp_stripped_packets,
            r.reverse.mptcp_stripped_packets,
            r.forward.dropped_queue_full + r.forward.dropped_loss,
            r.health.warnings,
        );
    }
    match &o.transfer {
        Ok(t) => eprintln!(
            "transfer: {} B in {:.3} s ({:.2} Mbit/s), wall {:.3} s, sha256 {} intact {}",
            t.received.bytes,
            t.seconds,
            t.goodput_bps / 1e6,
            o.wall.as_secs_f64(),
            t.received.sha256,
            t.intact
        ),
        Err(e) => eprintln!("transfer failed after {:.3} s: {e}", o.wall.as_secs_f64()),
    }
    eprintln!("client subflows halfway:\n{}", o.ss.trim_end());
    eprintln!("client (A) MPTcpExt: {:?}", mptcp_counters(&o.a));
    eprintln!("server (B) MPTcpExt: {:?}", mptcp_counters(&o.b));
}

/// tshark and mergecap (both in Debian's tshark package) for the capture checks.
fn tshark_available() -> bool {
    ["tshark", "mergecap"].iter().all(|tool| {
        Command::new(tool)
            .arg("-v")
            .output()
            .is_ok_and(|o| o.status.success())
    })
}

/// Packets of `pcap` matching `filter`, with MPTCP mapping analysis on and TCP stream
/// reassembly off: reassembly calls a retransmission that overlaps its (identical)
/// original "malformed" (`_ws.malformed`; found in `mptcp_brisk_linux_joins.rs`,
/// whose `TSHARK_PREFS` says more).
fn tshark_count(pcap: &Path, filter: &str) -> usize {
    let out = Command::new("tshark")
        .args(["-n", "-o", "mptcp.analyze_mappings:TRUE"])
        .args(["-o", "tcp.desegment_tcp_streams:FALSE", "-r"])
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

/// The A-side captures of all paths in one file (`mergecap`), or path 0's alone.
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

/// MPTCP problems the dissector flags: malformed packets and its MPTCP expert
/// items (mapping analysis on). "No mapping available" counts only on segments that
/// carry data: Wireshark 4.0 also flags zero-length segments (duplicate ACKs, the
/// subflow FIN) whose sequence number lies just past the last mapping, though no
/// mapping is needed for them (RFC 8684 §3.3: a mapping covers data).
const TSHARK_PROBLEMS: &str = "_ws.malformed || mptcp.connection.echoed_key_mismatch || \
    mptcp.connection.missing_algorithm || mptcp.connection.unsupported_algorithm || \
    (mptcp.dss.missing_mapping && tcp.len > 0) || mptcp.dss.infinite_mapping";

#[test]
fn linux_mptcp_uses_both_paths() {
    both_paths("linux_mptcp_uses_both_paths", PATHS);
}

#[test]
fn linux_mptcp_uses_both_paths_when_the_first_is_slow_and_lossy() {
    both_paths("both_paths_lossy", PATHS_LOSSY);
}

/// The congestion control set on the MPTCP socket reached `subflows` subflows (and
/// none runs the namespace's default, bbr).
fn assert_cubic(ss: &str, subflows: usize) {
    let cubic = ss.matches(" cubic ").count();
    assert!(cubic >= subflows, "{cubic} cubic subflows in\n{ss}");
    assert!(!ss.contains(" bbr "), "a subflow runs bbr:\n{ss}");
}

fn both_paths(name: &str, paths: &str) {
    if !available(name) {
        return;
    }
    let scratch = Scratch::new(name);
    let o = run(paths, 0, None, &scratch.0);
    summary(&o);
    assert_cubic(&o.ss, 2);
    assert!(o.ok().intact, "SHA-256 differs: {:?}", o.ok());
    assert_eq!(o.ok().received.bytes, BYTES);
    // Both paths carried data A → B: at least 5 % of the stream each (the IP bytes
    // include headers, so this is a floor on payload too).
    for (k, r) in o.reports.iter().enumerate() {
        assert!(
            r.forward.delivered_bytes > BYTES / 20,
            "path {k} carried only {} bytes A -> B",
            r.forward.delivered_bytes
        );
        assert_eq!(r.forward.mptcp_stripped_packets, 0);
    }
    // MPTCP on the initial subflow, the address announced and the join completed.
    let (a, b) = (&o.a, &o.b);
    assert_eq!(get(b, "MPTcpExtMPCapableSYNRX"), 1, "server saw MP_CAPABLE");
    assert_eq!(
        get(a, "MPTcpExtMPCapableSYNACKRX"),
        1,
        "client saw MP_CAPABLE"
    );
    assert!(get(a, "MPTcpExtAddAddr") >= 1, "client got ADD_ADDR");
    assert!(
        get(a, "MPTcpExtMPJoinSynAckRx") >= 1,
        "client: join SYN-ACK"
    );
    assert!(get(b, "MPTcpExtMPJoinSynRx") >= 1, "server: join SYN");
    assert!(get(b, "MPTcpExtMPJoinAckRx") >= 1, "server: join third ACK");
    for e in ERRORS {
        assert_eq!(get(a, e) + get(b, e), 0, "{e} counted");
    }
    if !tshark_available() {
        eprintln!("tshark or mergecap missing: capture checks skipped");
        return;
    }
    let all = merged(&scratch.0);
    let options = tshark_count(&all, "mptcp");
    let joins = tshark_count(&all, "tcp.options.mptcp.subtype == 1");
    let add_addr = tshark_count(&all, "tcp.options.mptcp.subtype == 3");
    let problems = tshark_count(&all, TSHARK_PROBLEMS);
    let unmapped_empty = tshark_count(&all, "mptcp.dss.missing_mapping && tcp.len == 0");
    eprintln!(
        "capture: {options} packets with MPTCP options, {joins} with MP_JOIN, {add_addr} with \
         ADD_ADDR, {problems} problems ({unmapped_empty} zero-length segments without mapping)"
    );
    assert!(add_addr >= 2, "ADD_ADDR and its echo: {add_addr}");
    assert!(options > 100, "MPTCP options in the capture: {options}");
    // SYN, SYN-ACK, third ACK (and the ACK of it) of the join, on path 1.
    assert!(joins >= 3, "MP_JOIN packets: {joins}");
    assert_eq!(
        tshark_count(
            &scratch.0.join("path0-a.pcap"),
            "tcp.options.mptcp.subtype == 1"
        ),
        0,
        "the join belongs on path 1"
    );
    assert_eq!(problems, 0, "tshark flags MPTCP problems");
}

/// Strips MPTCP options from path 0's handshake in `direction`, and checks that
/// Linux falls back to plain TCP and the stream arrives intact.
fn fallback(name: &str, direction: StripDirection) {
    if !available(name) {
        return;
    }
    let scratch = Scratch::new(name);
    let strip = StripSpec {
        direction,
        packets: StripPackets::Syn,
    };
    let o = run(PATHS, 0, Some(strip), &scratch.0);
    summary(&o);
    assert_cubic(&o.ss, 1);
    assert!(o.ok().intact, "SHA-256 differs: {:?}", o.ok());
    assert_eq!(o.ok().received.bytes, BYTES);
    let p0 = &o.reports[0];
    let stripped = match direction {
        StripDirection::Forward => p0.forward.mptcp_stripped_packets,
        _ => p0.reverse.mptcp_stripped_packets,
    };
    assert!(stripped >= 1, "the stripper saw the handshake");
    // Plain TCP: no second subflow, so path 1 stays silent.
    let p1 = &o.reports[1];
    assert_eq!(
        p1.forward.read_packets + p1.reverse.read_packets,
        0,
        "path 1 carried packets after a fallback"
    );
    // The client got a SYN-ACK without MP_CAPABLE either way (RFC 8684 §3.7).
    assert_eq!(get(&o.a, "MPTcpExtMPCapableFallbackSYNACK"), 1);
    assert_eq!(get(&o.a, "MPTcpExtMPJoinSynAckRx"), 0);
    assert_eq!(get(&o.b, "MPTcpExtMPJoinSynRx"), 0);
    match direction {
        // The server never saw MP_CAPABLE.
        StripDirection::Forward => assert_eq!(get(&o.b, "MPTcpExtMPCapableSYNRX"), 0),
        // The server offered MPTCP, then got a third ACK without it.
        _ => {
            assert_eq!(get(&o.b, "MPTcpExtMPCapableSYNRX"), 1);
            assert_eq!(get(&o.b, "MPTcpExtMPCapableFallbackACK"), 1);
        }
    }
    if !tshark_available() {
        eprintln!("tshark or mergecap missing: capture checks skipped");
        return;
    }
    // After the handshake no packet on either side of path 0 carries an MPTCP option.
    for side in ["a", "b"] {
        let pcap = scratch.0.join(format!("path0-{side}.pcap"));
        let late = tshark_count(&pcap, "tcp.option_kind == 30 && tcp.flags.syn == 0");
        let problems = tshark_count(&pcap, "_ws.malformed");
        eprintln!(
            "path 0 side {side}: {late} non-SYN packets with MPTCP options, {problems} malformed"
        );
        assert_eq!(late, 0, "MPTCP options after the fallback (side {side})");
        assert_eq!(problems, 0);
    }
    // Where the stripped packets arrive, no MPTCP option at all.
    let arrive = match direction {
        StripDirection::Forward => "path0-b.pcap",
        _ => "path0-a.pcap",
    };
    let seen = tshark_count(
        &scratch.0.join(arrive),
        match direction {
            StripDirection::Forward => "tcp.option_kind == 30 && ip.src == 198.18.0.1",
            _ => "tcp.option_kind == 30 && ip.src == 198.18.0.2",
        },
    );
    assert_eq!(seen, 0, "stripped options reached the host ({arrive})");
}

#[test]
fn mp_capable_stripped_from_the_syn_falls_back_to_tcp() {
    fallback("syn_stripped", StripDirection::Forward);
}

#[test]
fn mp_capable_stripped_from_the_syn_ack_falls_back_to_tcp() {
    fallback("synack_stripped", StripDirection::Reverse);
}

/// DSS mappings (and the v1 MP_CAPABLE that rides on the first data) stripped
/// from the data segments of path `k`, A → B; `announce`: B announces path 1.
fn data_stripped(name: &str, k: usize, announce: bool) -> Outcome {
    let scratch = Scratch::new(name);
    let strip = StripSpec {
        direction: StripDirection::Forward,
        packets: StripPackets::Data,
    };
    let o = run_for(
        PATHS,
        k,
        Some(strip),
        &scratch.0,
        Duration::from_secs(10),
        announce,
    );
    summary(&o);
    o
}

fn get(m: &BTreeMap<String, u64>, k: &str) -> u64 {
    m.get(k).copied().unwrap_or(0)
}

/// One subflow whose data lose their DSS: the receiver falls back to TCP (infinite
/// mapping, RFC 8684 §3.7), then the sender too; the stream arrives intact.
#[test]
fn dss_stripped_on_a_single_subflow_falls_back_to_tcp() {
    if !available("dss_single") {
        return;
    }
    let o = data_stripped("dss_single", 0, false);
    assert!(o.ok().intact, "SHA-256 differs: {:?}", o.ok());
    assert!(o.reports[0].forward.mptcp_stripped_packets >= 1);
    assert_eq!(get(&o.b, "MPTcpExtDssFallback"), 1, "server fell back");
    assert_eq!(
        get(&o.a, "MPTcpExtMPCapableDataFallback"),
        1,
        "client fell back"
    );
}

/// The joined subflow's data lose their DSS: the server resets that subflow
/// (MP_TCPRST), the data it carried are re-sent on path 0, and the connection stays
/// MPTCP; the stream arrives intact.
#[test]
fn dss_stripped_on_the_joined_path_resets_that_subflow() {
    if !available("dss_joined") {
        return;
    }
    let o = data_stripped("dss_joined", 1, true);
    assert!(o.ok().intact, "SHA-256 differs: {:?}", o.ok());
    assert!(o.reports[1].forward.mptcp_stripped_packets >= 1);
    assert!(get(&o.b, "MPTcpExtMPRstTx") >= 1, "server reset the join");
    assert!(get(&o.a, "MPTcpExtMPRstRx") >= 1, "client saw the reset");
    for k in ["MPTcpExtDssFallback", "MPTcpExtMPCapableDataFallback"] {
        assert_eq!(get(&o.a, k) + get(&o.b, k), 0, "{k}: no fallback");
    }
}

/// A finding, not a requirement (run with `--ignored`): with a join under way, DSS
/// stripped from the *initial* subflow's data makes Linux 6.18's server fall back
/// (`MPTcpExtDssFallback`) while its client, which has opened a join, does not (it
/// resets the join and retransmits at the data level, `MPTcpExtMPTCPRetrans`); the
/// transfer stalls after ~160 KB until the timeout. Without the join (above) both
/// fall back and the transfer completes. Asserts the stall, so a kernel that
/// handles it shows up as a failure here.
#[test]
#[ignore = "documents a Linux stall; 10-s timeout"]
fn dss_stripped_on_the_initial_path_with_a_join_stalls_linux() {
    if !available("dss_initial") {
        return;
    }
    let o = data_stripped("dss_initial", 0, true);
    assert!(o.transfer.is_err(), "Linux completed: {:?}", o.transfer);
    assert_eq!(get(&o.b, "MPTcpExtDssFallback"), 1);
    assert_eq!(get(&o.a, "MPTcpExtMPCapableDataFallback"), 0);
    assert!(get(&o.a, "MPTcpExtMPTCPRetrans") > 0);
}

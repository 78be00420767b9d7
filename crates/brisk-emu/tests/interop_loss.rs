//! Loss recovery across stacks, judged from both ends: a Linux sender must back off
//! as much and retransmit as little when brisk receives as when Linux receives
//! (brisk's ACK stream — SACK, D-SACK, timestamps — must not mislead it), and a brisk
//! sender must retransmit about what the path dropped. Needs root and /dev/net/tun.
//! `BRISK_PCAP_DIR=dir` writes the emulator's pcaps there.

mod common;

use std::net::{Shutdown, SocketAddr};
use std::time::Duration;

use brisk_emu::bulk::tcp_stats;
use brisk_emu::path::{Dur, LossSpec, PathSpec, Rate};
use brisk_emu::tools::{sink, source};
use brisk_emu::{
    baseline, Amount, BulkConfig, EmuConfig, EmulatorOptions, Netns, BRISK_ADDR, KERNEL_ADDR,
};
use common::*;

const IO_TIMEOUT: Duration = Duration::from_secs(60);
const BYTES: u64 = 20_000_000;
const SEGMENTS: u64 = BYTES / 1448;

/// `rate` (None: unlimited) both ways, `rtt`; Bernoulli loss `data_loss` on the data
/// direction and `ack_loss` on the other.
fn path(
    rate: Option<u64>,
    rtt_ms: u64,
    data_loss: f64,
    ack_loss: f64,
    data_fwd: bool,
) -> EmuConfig {
    let spec = |p: f64| PathSpec {
        rate: rate.map(Rate),
        loss: (p > 0.0).then_some(LossSpec::Bernoulli { p }),
        ..PathSpec::default()
    };
    let (fwd, rev) = if data_fwd {
        (spec(data_loss), spec(ack_loss))
    } else {
        (spec(ack_loss), spec(data_loss))
    };
    EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(rtt_ms))),
        bottleneck: fwd,
        reverse: Some(rev),
        seed: 21,
    }
}

fn pcaps(tag: &str) -> Option<(std::path::PathBuf, std::path::PathBuf)> {
    let dir = std::path::PathBuf::from(std::env::var_os("BRISK_PCAP_DIR")?);
    Some((
        dir.join(format!("{tag}-brisk.pcap")),
        dir.join(format!("{tag}-kernel.pcap")),
    ))
}

/// `TCP_CONGESTION` on a kernel socket before it sends (the host default may be BBR).
fn set_cc(s: &std::net::TcpStream, cc: &str) {
    brisk_emu::bulk::set_cc(s, cc).expect("TCP_CONGESTION");
}

/// Packets the kernel dropped on its own TUN device (its transmit queue overflows
/// when the emulated path is unlimited): losses the emulator never sees.
fn device_tx_dropped(ns: &Netns) -> u64 {
    let out = ns
        .exec(&["cat", "/sys/class/net/brisk-tun/statistics/tx_dropped"])
        .expect("tx_dropped");
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or(0)
}

/// The Linux host's non-zero recovery counters, for the log.
fn print_recovery_counters(ns: &Netns) {
    let Ok(out) = ns.exec(&["nstat", "-az"]) else {
        return;
    };
    let keep = ["Retrans", "Recovery", "DSACK", "Undo", "Reorder", "PAWS"];
    for l in String::from_utf8_lossy(&out.stdout).lines() {
        let nonzero = l.split_whitespace().nth(1).is_some_and(|v| v != "0");
        if nonzero && keep.iter().any(|k| l.contains(k)) {
            eprintln!("  {l}");
        }
    }
}

#[derive(Debug)]
struct Outcome {
    mbps: f64,
    /// Retransmitted segments (the sender's count).
    retrans: u64,
    /// Segments the path or the sender's device dropped.
    dropped: u64,
    /// Data segments that arrived wholly below the receiver's RCV.NXT (brisk only).
    duplicates: u64,
    /// Segments brisk dropped by PAWS.
    paws: u64,
}

/// Linux (`cc`, or the host default) sends `BYTES` to a brisk listener.
fn linux_to_brisk(tag: &str, path: &EmuConfig, cc: Option<&str>) -> Outcome {
    let pc = pcaps(tag);
    let lab = lab_with(path, pc.as_ref().map(|(a, b)| (a.as_path(), b.as_path())));
    let port = 5301;
    let mut l = lab.stack().listen(port).expect("brisk listens");
    l.set_accept_timeout(Some(IO_TIMEOUT));
    let mut linux = kernel_connect(lab.kernel(), BRISK_ADDR, port, IO_TIMEOUT);
    if let Some(cc) = cc {
        set_cc(&linux, cc);
    }
    let mut brisk = l.accept().expect("brisk accepts").0;
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let t0 = std::time::Instant::now();
    let (sent, got, secs, stats) = std::thread::scope(|s| {
        let tx = s.spawn(move || {
            let d = source(&mut linux, BYTES, 31);
            linux.shutdown(Shutdown::Write).unwrap();
            // brisk closes after reading everything: every retransmission is counted.
            let mut one = [0u8; 1];
            let _ = std::io::Read::read(&mut linux, &mut one);
            (d, tcp_stats(&linux).expect("TCP_INFO"))
        });
        let got = sink(&mut brisk, u64::MAX).expect("brisk receives");
        let secs = t0.elapsed().as_secs_f64();
        brisk.shutdown(Shutdown::Write).unwrap();
        let (d, st) = tx.join().unwrap();
        (d.expect("Linux sends"), got, secs, st)
    });
    assert_eq!(got, sent, "received stream differs from the sent one");
    let bstats = lab.stack().stats();
    print_recovery_counters(lab.kernel());
    let dev = device_tx_dropped(lab.kernel());
    let rep = lab.stop().expect("emulator report");
    let o = Outcome {
        mbps: BYTES as f64 * 8.0 / secs / 1e6,
        retrans: u64::from(stats.total_retrans),
        dropped: rep.reverse.dropped_loss + rep.reverse.dropped_queue_full + dev,
        duplicates: bstats.drop_out_of_window,
        paws: bstats.drop_paws,
    };
    eprintln!("{tag}: Linux -> brisk {o:?}; Linux {stats:?}; brisk {bstats:?}");
    o
}

/// The same transfer between two Linux hosts (CUBIC).
fn linux_to_linux(tag: &str, path: &EmuConfig) -> Outcome {
    let pc = pcaps(tag);
    let opts = EmulatorOptions {
        pcap_a: pc.as_ref().map(|p| p.0.clone()),
        pcap_b: pc.as_ref().map(|p| p.1.clone()),
        ..EmulatorOptions::default()
    };
    let bulk = BulkConfig {
        amount: Amount::Bytes(BYTES),
        cc: "cubic".into(),
        port: 5302,
        seed: 32,
        timeout: IO_TIMEOUT,
    };
    let r = baseline(path, &bulk, opts).expect("Linux to Linux");
    assert!(r.transfer.intact);
    let o = Outcome {
        mbps: r.transfer.goodput_bps / 1e6,
        retrans: u64::from(r.transfer.sender.total_retrans),
        dropped: r.emulator.forward.dropped_loss + r.emulator.forward.dropped_queue_full,
        duplicates: 0,
        paws: 0,
    };
    eprintln!("{tag}: Linux -> Linux {o:?}; {:?}", r.transfer.sender);
    o
}

/// brisk (CUBIC) sends `BYTES` to a Linux listener.
fn brisk_to_linux(tag: &str, path: &EmuConfig) -> (Outcome, brisk_tcp::TcpInfo) {
    let pc = pcaps(tag);
    let lab = lab_with(path, pc.as_ref().map(|(a, b)| (a.as_path(), b.as_path())));
    let port = 5303;
    let l = kernel_listen(lab.kernel(), port);
    let mut brisk = lab
        .stack()
        .connect(SocketAddr::from((KERNEL_ADDR, port)))
        .expect("brisk connects");
    let mut linux = kernel_accept(&l, IO_TIMEOUT);
    brisk_timeouts(&mut brisk, IO_TIMEOUT);
    let t0 = std::time::Instant::now();
    let (sent, got, secs, info) = std::thread::scope(|s| {
        let rx = s.spawn(move || {
            let g = sink(&mut linux, u64::MAX);
            (g, t0.elapsed().as_secs_f64())
        });
        let sent = source(&mut brisk, BYTES, 33).expect("brisk sends");
        brisk.wait_acked(IO_TIMEOUT).expect("all data acknowledged");
        let info = brisk.info().expect("brisk info");
        brisk.shutdown(Shutdown::Write).unwrap();
        let (g, secs) = rx.join().unwrap();
        (sent, g.expect("Linux receives"), secs, info)
    });
    assert_eq!(got, sent, "received stream differs from the sent one");
    let paws = lab.stack().stats().drop_paws;
    let rep = lab.stop().expect("emulator report");
    let o = Outcome {
        mbps: BYTES as f64 * 8.0 / secs / 1e6,
        retrans: info.retransmits,
        dropped: rep.forward.dropped_loss + rep.forward.dropped_queue_full,
        duplicates: 0,
        paws,
    };
    eprintln!("{tag}: brisk -> Linux {o:?}; brisk {info:?}");
    (o, info)
}

/// Retransmissions answer losses: at least one per drop (the data arrived intact),
/// and few beyond (a spurious one per `slack` drops, plus a constant for tail probes).
fn retransmissions_match_drops(o: &Outcome, who: &str) {
    assert!(
        o.retrans >= o.dropped && o.retrans <= o.dropped * 3 / 2 + 20,
        "{who} retransmitted {} segments for {} drops",
        o.retrans,
        o.dropped
    );
}

#[test]
fn linux_cubic_sender_backs_off_under_loss_when_brisk_receives() {
    if !lab_available("linux_cubic_sender_backs_off_under_loss_when_brisk_receives") {
        return;
    }
    // 100 Mbit/s, 10 ms, 1 % loss: CUBIC is loss-limited (Mathis: ~14 Mbit/s).
    let b = linux_to_brisk(
        "cubic-to-brisk",
        &path(Some(100_000_000), 10, 0.01, 0.0, false),
        Some("cubic"),
    );
    let k = linux_to_linux(
        "cubic-to-linux",
        &path(Some(100_000_000), 10, 0.01, 0.0, true),
    );
    assert!(b.duplicates * 100 < SEGMENTS, "{b:?}");
    retransmissions_match_drops(&b, "Linux");
    assert!(
        b.mbps < k.mbps * 1.5 + 2.0 && b.mbps > k.mbps / 1.5 - 2.0,
        "Linux->brisk {:.1} Mbit/s vs Linux->Linux {:.1} Mbit/s",
        b.mbps,
        k.mbps
    );
}

#[test]
fn linux_sender_learns_every_sack_when_brisk_receives_in_batches() {
    if !lab_available("linux_sender_learns_every_sack_when_brisk_receives_in_batches") {
        return;
    }
    // Unlimited rate, 2 ms, 1 % loss both ways, the host's default congestion control:
    // packets reach brisk in large batches, with many holes between them.
    let b = linux_to_brisk("batch-to-brisk", &path(None, 2, 0.01, 0.01, false), None);
    assert!(
        b.duplicates * 100 < SEGMENTS,
        "{} segments retransmitted spuriously to brisk: {b:?}",
        b.duplicates
    );
    retransmissions_match_drops(&b, "Linux");
}

#[test]
fn brisk_sender_retransmits_about_what_was_lost() {
    if !lab_available("brisk_sender_retransmits_about_what_was_lost") {
        return;
    }
    let path = path(Some(100_000_000), 10, 0.01, 0.0, true);
    let (b, info) = brisk_to_linux("brisk-to-linux", &path);
    retransmissions_match_drops(&b, "brisk");
    assert!(info.dsack_received * 10 <= b.dropped + 10, "{info:?}");
    let k = linux_to_linux("cubic-to-linux-2", &path);
    assert!(
        b.mbps < k.mbps * 1.5 + 2.0 && b.mbps > k.mbps / 1.5 - 2.0,
        "brisk->Linux {:.1} Mbit/s vs Linux->Linux {:.1} Mbit/s",
        b.mbps,
        k.mbps
    );
}

#[test]
fn brisk_sender_uses_reordered_acks_instead_of_dropping_them_by_paws() {
    if !lab_available("brisk_sender_uses_reordered_acks_instead_of_dropping_them_by_paws") {
        return;
    }
    // No loss; up to 1 ms of jitter reorders data and ACKs by several positions, so
    // ACKs arrive with TSvals a tick behind ones already seen.
    let spec = PathSpec {
        rate: Some(Rate(100_000_000)),
        jitter: Some(brisk_emu::path::JitterSpec {
            max: Dur(brisk_time::Duration::from_millis(1)),
            reorder: true,
        }),
        ..PathSpec::default()
    };
    let path = EmuConfig {
        rtt: Some(Dur(brisk_time::Duration::from_millis(4))),
        bottleneck: spec.clone(),
        reverse: Some(spec),
        seed: 9,
    };
    let (b, info) = brisk_to_linux("reorder-to-linux", &path);
    assert_eq!(b.dropped, 0);
    // What PAWS may still drop are ACKs that were overtaken by a newer cumulative ACK
    // (ack below SND.UNA, TSval two or more ticks behind), which Linux's
    // `tcp_disordered_ack_check` drops too. Their number depends on real-time
    // scheduling: 0.06-1.04 % of the ACKs in repeated runs on a 2-core host (a run at
    // 1.04 % failed CI at the former 1 % bound), so the bound is 2 %.
    assert!(b.paws * 50 < info.segs_in, "{b:?} {info:?}");
    // Every retransmission here is spurious; RACK keeps them rare only if it sees the
    // SACK information of the reordered ACKs.
    assert!(b.retrans * 100 < SEGMENTS, "{b:?} {info:?}");
}

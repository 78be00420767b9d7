//! `brisk run --pcap` also captures the bottleneck as pcapng, in two files:
//! `bottleneck.pcapng` with every packet as it leaves the link and
//! `bottleneck.drops.pcapng` with each dropped packet and its reason as its comment.
//! The drops in the file are the drops in the summary (Wireshark's filter
//! `frame.comment contains "drop"` finds them), and Wireshark's TCP analysis of the
//! departures stays right: the drops once shared the file, and each drop, stamped when
//! it arrived at the full queue, sat before up to 1.2 s of departures of lower sequence
//! numbers, so Wireshark counted 993 "suspected retransmissions" and 1272 out-of-order
//! segments where the sender retransmitted 254. Checked with tshark when it is
//! installed.

use std::path::Path;
use std::process::Command;

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::{Block, PcapNgReader};

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

/// (packets, their comments) of a pcapng file, checking snaplen and time order.
fn read(path: &Path) -> (u64, Vec<String>) {
    let bytes = std::fs::read(path).unwrap();
    let mut r = PcapNgReader::new(&bytes[..]).unwrap();
    let (mut packets, mut comments, mut last_ts) = (0u64, Vec::new(), 0u128);
    while let Some(b) = r.next_block() {
        if let Block::EnhancedPacket(e) = b.unwrap() {
            packets += 1;
            assert!(e.data.len() <= 128, "snaplen");
            assert!(e.timestamp.as_nanos() >= last_ts, "time order");
            last_ts = e.timestamp.as_nanos();
            comments.extend(e.options.iter().filter_map(|o| match o {
                EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                _ => None,
            }));
        }
    }
    (packets, comments)
}

/// tshark's output for `args` on `path`, or None (with a note) when tshark is missing.
fn tshark(path: &Path, args: &[&str]) -> Option<String> {
    match Command::new("tshark")
        .arg("-r")
        .arg(path)
        .args(args)
        .output()
    {
        Ok(o) if o.status.success() => Some(String::from_utf8_lossy(&o.stdout).into_owned()),
        Ok(o) => panic!("tshark {args:?}: {}", String::from_utf8_lossy(&o.stderr)),
        Err(_) => {
            eprintln!(
                "skipped the tshark checks: tshark is not installed (apt-get install tshark)"
            );
            None
        }
    }
}

/// The frequency of each expert-info line of `tshark -q -z expert` whose summary
/// contains `what`, summed.
fn expert_count(report: &str, what: &str) -> u64 {
    report
        .lines()
        .filter(|l| l.contains(what))
        .filter_map(|l| l.split_whitespace().next()?.parse::<u64>().ok())
        .sum()
}

#[test]
fn the_bottleneck_capture_holds_every_departure_and_every_drop_apart() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::temp_dir().join(format!("brisk-pcapng-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let out = Command::new(BIN)
        .args([
            "run",
            "scenarios/bufferbloat-cubic.toml",
            "--json",
            "--pcap",
            "--snaplen",
            "128",
            "--out",
        ])
        .arg(&dir)
        .current_dir(root)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let drops = v["bottleneck"]["drops"].as_u64().unwrap();
    let retransmitted = v["flows"][0]["retransmitted_packets"].as_u64().unwrap();
    assert!(drops > 0, "the bufferbloat run overflows its queue");

    let departures = dir.join("bottleneck.pcapng");
    let (packets, comments) = read(&departures);
    assert!(comments.is_empty(), "{comments:?}");
    assert!(packets > 10 * drops);
    let dropped = dir.join("bottleneck.drops.pcapng");
    let (n, comments) = read(&dropped);
    assert_eq!(n, drops);
    assert_eq!(comments.len() as u64, drops);
    assert!(
        comments.iter().all(|c| c == "drop: queue_full"),
        "{comments:?}"
    );

    if let Some(o) = tshark(&dropped, &["-Y", "frame.comment contains \"drop\""]) {
        assert_eq!(
            o.lines().count() as u64,
            drops,
            "tshark's filter finds the drops"
        );
    }
    if let Some(report) = tshark(&departures, &["-q", "-z", "expert"]) {
        // Behind the queue a dropped segment is a gap ("previous segment(s) not
        // captured"), and its retransmission, which leaves right after segments above it,
        // fills the gap: Wireshark calls it out-of-order (it never saw the original here,
        // and it came within the first RTT of the last segment) or a retransmission. Each
        // such segment is one the sender retransmitted; all of those that got through are
        // there (at most the few retransmissions that were dropped themselves are not).
        // With the drops in the same file it counted 993 retransmissions and 1272
        // out-of-order segments for the sender's 254.
        let filled =
            expert_count(&report, "retransmission") + expert_count(&report, "out-of-order");
        assert!(
            filled <= retransmitted && filled + retransmitted / 10 >= retransmitted,
            "Wireshark finds {filled} gap-filling segments, the sender retransmitted \
             {retransmitted}:\n{report}"
        );
        let gaps = expert_count(&report, "not captured");
        assert!(
            gaps <= drops && gaps + drops / 10 >= drops,
            "{gaps} gaps for {drops} drops:\n{report}"
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

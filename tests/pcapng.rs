//! `brisk run --pcap` also captures the bottleneck, as pcapng with each dropped
//! packet's reason as its comment: the drops in the file are the drops in the summary,
//! and Wireshark's filter `frame.comment contains "drop"` finds them (checked with
//! tshark when it is installed).

use std::process::Command;

use pcap_file::pcapng::blocks::enhanced_packet::EnhancedPacketOption;
use pcap_file::pcapng::{Block, PcapNgReader};

const BIN: &str = env!("CARGO_BIN_EXE_brisk");

#[test]
fn the_bottleneck_capture_holds_every_drop_with_its_reason() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
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
    assert!(drops > 0, "the bufferbloat run overflows its queue");
    let path = dir.join("bottleneck.pcapng");
    let bytes = std::fs::read(&path).unwrap();
    let mut r = PcapNgReader::new(&bytes[..]).unwrap();
    let (mut packets, mut dropped, mut last_ts) = (0u64, 0u64, 0u128);
    while let Some(b) = r.next_block() {
        if let Block::EnhancedPacket(e) = b.unwrap() {
            packets += 1;
            assert!(e.data.len() <= 128, "snaplen");
            assert!(e.timestamp.as_nanos() >= last_ts, "time order");
            last_ts = e.timestamp.as_nanos();
            let comment = e.options.iter().find_map(|o| match o {
                EnhancedPacketOption::Comment(c) => Some(c.to_string()),
                _ => None,
            });
            if let Some(c) = comment {
                assert_eq!(c, "drop: queue_full");
                dropped += 1;
            }
        }
    }
    assert_eq!(dropped, drops);
    assert!(packets > 10 * drops);
    if let Ok(o) = Command::new("tshark")
        .arg("-r")
        .arg(&path)
        .args(["-Y", "frame.comment contains \"drop\""])
        .output()
    {
        if o.status.success() {
            let n = String::from_utf8_lossy(&o.stdout).lines().count() as u64;
            assert_eq!(n, drops, "tshark's filter finds the drops");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

//! The tunnel of `brisk_sim::vpn` (Minion §8.4): every inner packet is delivered
//! exactly once or counted dropped, inner data arrives intact (SHA-256 of what was
//! written = SHA-256 of what was read), in every variant; runs are deterministic.

use brisk_sim::vpn::{run, Framing, TunnelCounters, VpnConfig, VpnError};
use brisk_time::Duration;

const VARIANTS: [(Framing, bool, bool); 4] = [
    (Framing::LengthPrefix, false, false),
    (Framing::Ucobs, true, false),
    (Framing::LengthPrefix, false, true),
    (Framing::Ucobs, true, true),
];

fn finite(framing: Framing, unordered: bool, pri_acks: bool, tun_queue: usize) -> VpnConfig {
    VpnConfig {
        framing,
        unordered,
        pri_acks,
        tun_queue,
        uploads: 2,
        downloads: 2,
        flow_bytes: Some(300_000),
        duration: Duration::from_secs(300),
        warmup: Duration::ZERO,
        ..VpnConfig::default()
    }
}

/// Every packet into one end was dropped, is still queued or was written; every
/// record written was read at the other end exactly once (the run ends idle).
fn conserved(from: &TunnelCounters, to: &TunnelCounters) {
    assert_eq!(
        from.packets_in,
        from.tun_drops + from.too_big + from.queued_at_end + from.records_sent,
        "{from:?}"
    );
    assert_eq!(from.queued_at_end, 0);
    assert_eq!(from.records_sent, to.delivered, "{from:?} → {to:?}");
    assert_eq!(to.bad_records, 0);
}

#[test]
fn every_variant_delivers_inner_data_intact_and_every_packet_once_or_dropped() {
    for (framing, unordered, pri) in VARIANTS {
        // A 100-packet TUN queue (OpenVPN's) and a tiny one that drops often.
        for tq in [100, 4] {
            let r = run(&finite(framing, unordered, pri, tq)).unwrap();
            let what = format!("{framing:?} unordered {unordered} priACKs {pri} tun {tq}");
            for f in &r.flows {
                assert_eq!(f.received, 300_000, "{what}: {f:?}");
                assert!(f.done_at.is_some(), "{what}");
                assert_eq!(f.bad_bytes, 0, "{what}");
                assert!(f.tx_sha256.is_some());
                assert_eq!(f.tx_sha256, f.rx_sha256, "{what}");
            }
            assert!(r.intact(), "{what}");
            conserved(&r.client, &r.server);
            conserved(&r.server, &r.client);
            if tq == 4 {
                assert!(
                    r.client.tun_drops + r.server.tun_drops > 0,
                    "{what}: a 4-packet TUN queue must overflow"
                );
            }
            // Pure ACKs are prioritised only with priACKs; out-of-order delivery only
            // with unordered receive.
            let prio = r.client.acks_prioritised + r.server.acks_prioritised;
            assert_eq!(prio > 0, pri, "{what}");
            if !unordered {
                assert_eq!(
                    r.client.delivered_out_of_order + r.server.delivered_out_of_order,
                    0
                );
            }
        }
    }
}

#[test]
fn unordered_receive_delivers_out_of_order_when_the_outer_connection_loses() {
    // Bulk uploads fill the 50-packet uplink queue, so the outer connection loses
    // segments and uCOBS hands later records over ahead of the hole.
    let cfg = VpnConfig {
        framing: Framing::Ucobs,
        unordered: true,
        uploads: 1,
        downloads: 3,
        outer_buffer: 4 << 20,
        duration: Duration::from_secs(30),
        warmup: Duration::from_secs(5),
        ..VpnConfig::default()
    };
    let r = run(&cfg).unwrap();
    assert!(r.up_drops > 0);
    assert!(r.server.delivered_out_of_order > 0, "{:?}", r.server);
    assert!(r.intact());
    assert!(r.download_mbps() > 0.0 && r.upload_mbps() > 0.0);
}

#[test]
fn runs_are_deterministic_and_seeds_differ() {
    let cfg = VpnConfig {
        uploads: 1,
        downloads: 1,
        pri_acks: true,
        duration: Duration::from_secs(20),
        warmup: Duration::from_secs(5),
        ..VpnConfig::default()
    };
    let a = run(&cfg).unwrap();
    let b = run(&cfg).unwrap();
    assert_eq!(a.flows, b.flows);
    assert_eq!(a.client, b.client);
    assert_eq!(a.server, b.server);
    let c = run(&VpnConfig { seed: 2, ..cfg }).unwrap();
    assert_ne!(a.flows, c.flows);
}

#[test]
fn bad_configs_name_the_field() {
    let e = run(&VpnConfig {
        unordered: true,
        ..VpnConfig::default()
    })
    .unwrap_err();
    assert_eq!(e, VpnError::UnorderedNeedsUcobs);
    for (cfg, field) in [
        (
            VpnConfig {
                queue_packets: 0,
                ..VpnConfig::default()
            },
            "queue_packets",
        ),
        (
            VpnConfig {
                tun_queue: 0,
                ..VpnConfig::default()
            },
            "tun_queue",
        ),
        (
            VpnConfig {
                uploads: 0,
                downloads: 0,
                ..VpnConfig::default()
            },
            "uploads + downloads",
        ),
        (
            VpnConfig {
                outer_buffer: 100,
                ..VpnConfig::default()
            },
            "outer_buffer",
        ),
        (
            VpnConfig {
                warmup: Duration::from_secs(60),
                ..VpnConfig::default()
            },
            "warmup",
        ),
    ] {
        let e = run(&cfg).unwrap_err().to_string();
        assert!(e.contains(field), "{e}");
    }
}

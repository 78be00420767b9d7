//! MPTCP composed with brisk's single-path latency mechanisms (issue 32 §5,
//! `brisk repro mp-compose`): unordered receive (uTCP) at the data level, and RDB on
//! the subflows. Each is checked for what it must never break (the stream, byte for
//! byte) and for doing something at all.

use super::harness::*;
use super::mptcp_join::{cfg, client_port, establish_joined, sha};
use crate::config::Config;
use crate::mptcp::pm::PmMode;
use crate::mptcp::sched::SchedKind;
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn pair(client: Config, server: Config) -> Pair {
    Pair::with_configs(Duration::from_millis(10), client, server)
}

fn ndiff_cfg() -> Config {
    cfg(PmMode::NDiffPorts { n: 2 }, 8, Vec::new())
}

/// Drops `p` of the packets of subflow 1 (either direction), from `seed`.
fn lossy_second_subflow(pr: &mut Pair, c: crate::endpoint::ConnHandle, p: f64, seed: u64) {
    let lossy = client_port(pr, c, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    pr.set_hook(move |x| {
        if (x.src_port == lossy || x.dst_port == lossy) && rng.gen_bool(p) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
}

/// `Config::unordered` on an MPTCP connection hands data-level bytes out ahead of a
/// hole left by a loss on the other subflow, each at its data-stream offset and equal
/// to what was sent there; the in-order stream stays intact.
#[test]
fn unordered_reads_at_the_data_level_run_ahead_of_holes() {
    for seed in [1u64, 2, 3] {
        let mut client = ndiff_cfg();
        client.unordered = true;
        let mut p = pair(client, ndiff_cfg());
        let (c, s) = establish_joined(&mut p, 2);
        lossy_second_subflow(&mut p, c, 0.03, seed);
        let n = 2 << 20;
        let data = pattern(n, seed);
        let (mut sent, mut in_order, mut ahead) = (0usize, Vec::new(), 0usize);
        let mut buf = vec![0u8; 8192];
        let end = p.now + Duration::from_secs(120);
        // The greeting's byte came first.
        let base = 1u64;
        while in_order.len() < n && p.now < end {
            if sent < n {
                sent += p.server.conn_mut(s).unwrap().write(&data[sent..]);
            }
            while let Some(u) = p.client.conn_mut(c).unwrap().read_unordered(&mut buf) {
                let at = (u.offset - base) as usize;
                assert_eq!(
                    &buf[..u.len],
                    &data[at..at + u.len],
                    "seed {seed}: bytes at offset {}",
                    u.offset
                );
                if u.in_order {
                    assert_eq!(at, in_order.len(), "seed {seed}: in-order offset");
                    in_order.extend_from_slice(&buf[..u.len]);
                } else {
                    assert!(at > in_order.len(), "seed {seed}: ahead of the hole");
                    ahead += u.len;
                }
            }
            if !p.step_until(end) {
                break;
            }
        }
        assert_eq!(sha(&in_order), sha(&data), "seed {seed}: in-order stream");
        assert!(ahead > 0, "seed {seed}: nothing handed out ahead of a hole");
    }
}

/// Without `Config::unordered`, `read_unordered` on an MPTCP connection reads only in
/// order (as on plain TCP).
#[test]
fn without_the_switch_mptcp_reads_stay_in_order() {
    let mut p = pair(ndiff_cfg(), ndiff_cfg());
    let (c, s) = establish_joined(&mut p, 2);
    lossy_second_subflow(&mut p, c, 0.03, 7);
    let data = pattern(1 << 20, 7);
    let (mut sent, mut got) = (0usize, 0usize);
    let mut buf = vec![0u8; 8192];
    let end = p.now + Duration::from_secs(60);
    while got < data.len() && p.now < end {
        if sent < data.len() {
            sent += p.server.conn_mut(s).unwrap().write(&data[sent..]);
        }
        while let Some(u) = p.client.conn_mut(c).unwrap().read_unordered(&mut buf) {
            assert!(u.in_order);
            got += u.len;
        }
        if !p.step_until(end) {
            break;
        }
    }
    assert_eq!(got, data.len());
}

/// RDB on every subflow of an MPTCP connection carrying a thin stream (200-byte
/// messages every 10 ms, RTT 20 ms) with loss on one subflow, under min-RTT and under
/// round-robin (consecutive messages on alternate subflows, so a subflow's
/// consecutive mappings are not contiguous in DSN): bundles go out, and the stream
/// arrives intact and without mapping errors. A bundle that reached back across two
/// mappings would label bytes with the wrong DSN (it did, under round-robin, until
/// RDB learned to stop at record ends: `conn/select.rs`); now min-RTT bundles and
/// round-robin cannot.
#[test]
fn rdb_on_mptcp_subflows_keeps_a_thin_stream_intact() {
    for (seed, sched) in [
        (11u64, SchedKind::MinRtt),
        (12, SchedKind::MinRtt),
        (13, SchedKind::RoundRobin),
        (14, SchedKind::RoundRobin),
    ] {
        let mut cl = ndiff_cfg();
        let mut sv = ndiff_cfg();
        for c in [&mut cl, &mut sv] {
            c.transmit.rdb = Some(crate::rdb::RdbConfig {
                thin: crate::rdb::ThinTest::Spifl(4),
                ..Default::default()
            });
            c.nagle = false;
            if let Some(m) = c.mptcp.as_deref_mut() {
                m.scheduler = sched;
            }
        }
        let mut p = pair(cl, sv);
        let (c, s) = establish_joined(&mut p, 2);
        lossy_second_subflow(&mut p, c, 0.05, seed);
        let msgs = 400usize;
        let data = pattern(msgs * 200, seed);
        let mut got = Vec::new();
        for i in 0..msgs {
            assert_eq!(
                p.server
                    .conn_mut(s)
                    .unwrap()
                    .write(&data[i * 200..(i + 1) * 200]),
                200
            );
            p.advance(Duration::from_millis(10));
            Pair::read_all(&mut p.client, c, &mut got);
        }
        p.run_until(Duration::from_secs(30), |p| {
            Pair::read_all(&mut p.client, c, &mut got);
            got.len() >= data.len()
        });
        // The greeting's byte was read by `establish_joined`.
        assert_eq!(got.len(), data.len(), "seed {seed}: length");
        assert_eq!(sha(&got), sha(&data), "seed {seed}: SHA-256");
        let conn = p.server.conn(s).unwrap();
        let bundles: u64 = conn
            .mptcp_subflow_infos()
            .iter()
            .map(|i| i.rdb_packets)
            .sum();
        // Under round-robin each subflow's next message is never the DSN after its
        // last one, so no bundle may go (one DSS mapping per segment).
        assert_eq!(
            bundles > 0,
            sched == SchedKind::MinRtt,
            "seed {seed} {sched:?}: {bundles} bundles"
        );
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let m = ep.conn(h).unwrap().mptcp_counters().unwrap();
            assert_eq!(
                m.csum_bad + m.map_refused + m.no_dss_reset + m.bad_data_acks,
                0,
                "seed {seed}: {m:?}"
            );
        }
    }
}

/// RC3 on every subflow of an MPTCP connection (the record-end guard RDB got, for
/// RC3's low-priority copies): 20 kB messages every 10 ms, so the scheduler hands a
/// subflow a window's worth at once and pacing (on) holds it behind the primary
/// loop, where the RLP copies it; min-RTT and round-robin, loss on one subflow. A copy
/// is one MSS-aligned slice of an RLP chunk, and a chunk merges consecutive writes;
/// on a subflow, consecutive writes under round-robin are not contiguous in DSN
/// (`sub_dsn_break` ends a record between them), so a copy crossing that record end
/// would carry the second write's bytes under the first one's DSS mapping. The stream
/// must arrive intact (SHA-256) with no mapping error at either end, and copies must
/// go out (else the check says nothing).
#[test]
fn rc3_copies_on_mptcp_subflows_keep_the_stream_intact() {
    for (seed, sched) in [
        (21u64, SchedKind::MinRtt),
        (22, SchedKind::MinRtt),
        (23, SchedKind::RoundRobin),
        (24, SchedKind::RoundRobin),
        (25, SchedKind::RoundRobin),
    ] {
        let mut cl = ndiff_cfg();
        let mut sv = ndiff_cfg();
        for c in [&mut cl, &mut sv] {
            c.transmit.rc3 = Some(crate::rc3::Rc3Config::default());
            c.congestion.pacing = true;
            c.nagle = false;
            if let Some(m) = c.mptcp.as_deref_mut() {
                m.scheduler = sched;
            }
        }
        let mut p = pair(cl, sv);
        let (c, s) = establish_joined(&mut p, 2);
        lossy_second_subflow(&mut p, c, 0.03, seed);
        let (msgs, size) = (300usize, 20_000usize);
        let data = pattern(msgs * size, seed);
        let mut got = Vec::new();
        let mut sent = 0usize;
        for i in 0..msgs {
            let end = (i + 1) * size;
            sent += p.server.conn_mut(s).unwrap().write(&data[sent..end]);
            p.advance(Duration::from_millis(10));
            Pair::read_all(&mut p.client, c, &mut got);
        }
        p.run_until(Duration::from_secs(60), |p| {
            if sent < data.len() {
                sent += p.server.conn_mut(s).unwrap().write(&data[sent..]);
            }
            Pair::read_all(&mut p.client, c, &mut got);
            got.len() >= data.len()
        });
        assert_eq!(got.len(), data.len(), "seed {seed} {sched:?}: length");
        assert_eq!(sha(&got), sha(&data), "seed {seed} {sched:?}: SHA-256");
        let copies: u64 = p
            .server
            .conn(s)
            .unwrap()
            .mptcp_subflow_infos()
            .iter()
            .filter_map(|i| i.rc3.map(|r| r.rlp_packets))
            .sum();
        assert!(copies > 0, "seed {seed} {sched:?}: no RLP copy went out");
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let m = ep.conn(h).unwrap().mptcp_counters().unwrap();
            assert_eq!(
                m.csum_bad + m.map_refused + m.no_dss_reset + m.bad_data_acks,
                0,
                "seed {seed} {sched:?}: {m:?}"
            );
        }
        eprintln!("seed {seed} {sched:?}: {copies} RLP copies, intact");
    }
}

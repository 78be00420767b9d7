//! The schedulers' connection-level mechanisms (issue 32): LowRTT+RP's opportunistic
//! retransmission and penalisation, STTF's sends ahead of the in-order cursor. Two
//! subflows over ndiffports, one of them made slow (a fixed extra delay both ways,
//! and some loss), a small receive buffer so that the slow subflow's data blocks the
//! connection-level window: every byte arrives intact (SHA-256) both ways, and the
//! mechanism under test acted.

use super::harness::*;
use super::mptcp_join::{cfg, check_transfer, client_port, establish_joined};
use crate::mptcp::pm::PmMode;
use crate::mptcp::sched::{SchedKind, SchedStats};
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn pair(sched: SchedKind, recv: usize) -> Pair {
    let set = |mut c: crate::config::Config| {
        c.recv_buffer = recv;
        if let Some(m) = c.mptcp.as_mut() {
            m.scheduler = sched;
            m.recv.capacity = recv as u32;
        }
        c
    };
    Pair::with_configs(
        Duration::from_millis(10),
        set(cfg(PmMode::NDiffPorts { n: 2 }, 8, Vec::new())),
        set(cfg(PmMode::Fullmesh, 8, Vec::new())),
    )
}

fn stats(
    p: &Pair,
    c: crate::endpoint::ConnHandle,
    s: crate::endpoint::ConnHandle,
) -> [SchedStats; 2] {
    [
        p.client.conn(c).unwrap().mptcp_sched_stats().unwrap(),
        p.server.conn(s).unwrap().mptcp_sched_stats().unwrap(),
    ]
}

/// Two bottlenecks, one per subflow and direction, as a hook: serialisation at a
/// rate with a drop-tail queue of at most 60 ms, the first subflow 20 Mbit/s, the
/// second 3 Mbit/s with 60 ms more delay each way and 0.5 % random loss (a WLAN/3G-
/// like pair over the harness's 10-ms link).
fn slow_second(p: &mut Pair, c: crate::endpoint::ConnHandle, seed: u64) {
    let slow = client_port(p, c, 1);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Per (path, direction): when the link is next free.
    let mut free = [[None::<brisk_time::Instant>; 2]; 2];
    p.set_hook(move |x| {
        let path = usize::from(x.src_port == slow || x.dst_port == slow);
        let dir = usize::from(x.to_server);
        let rate = if path == 1 { 3_000_000u64 } else { 20_000_000 };
        let bytes = (x.len + 52) as u64;
        let ser = Duration::from_nanos(bytes * 8 * 1_000_000_000 / rate);
        let start = free[path][dir].map_or(x.at, |f| f.max(x.at));
        let wait = start.saturating_duration_since(x.at);
        if wait > Duration::from_millis(60) || (path == 1 && rng.gen::<f64>() < 0.005) {
            return Action::Drop;
        }
        free[path][dir] = Some(start + ser);
        let extra = if path == 1 {
            Duration::from_millis(60)
        } else {
            Duration::ZERO
        };
        Action::Delay(wait + ser + extra)
    });
}

#[test]
fn lowrtt_rp_retransmits_and_penalises_and_data_stays_intact() {
    for seed in [1u64, 2, 3] {
        let mut p = pair(SchedKind::LowRttRp, 96 << 10);
        let (c, s) = establish_joined(&mut p, 2);
        slow_second(&mut p, c, seed);
        check_transfer(&mut p, c, s, 3 << 20, seed);
        let st = stats(&p, c, s);
        eprintln!("seed {seed}: {st:?}");
        for x in st {
            assert!(
                x.opportunistic > 0 && x.opportunistic_bytes > 0,
                "seed {seed}: {x:?}"
            );
            assert!(x.penalised > 0, "seed {seed}: {x:?}");
            assert_eq!(x.ahead_runs, 0);
        }
    }
}

#[test]
fn plain_min_rtt_does_neither() {
    let mut p = pair(SchedKind::MinRtt, 96 << 10);
    let (c, s) = establish_joined(&mut p, 2);
    slow_second(&mut p, c, 1);
    check_transfer(&mut p, c, s, 1 << 20, 1);
    for x in stats(&p, c, s) {
        assert_eq!(x, SchedStats::default());
    }
}

#[test]
fn sttf_sends_ahead_on_the_slow_subflow_and_data_stays_intact() {
    for seed in [1u64, 2, 3] {
        let mut p = pair(SchedKind::Sttf, 1 << 20);
        let (c, s) = establish_joined(&mut p, 2);
        slow_second(&mut p, c, seed);
        check_transfer(&mut p, c, s, 3 << 20, seed);
        let st = stats(&p, c, s);
        eprintln!("seed {seed}: {st:?}");
        for x in st {
            assert!(x.ahead_runs > 0 && x.ahead_bytes > 0, "seed {seed}: {x:?}");
            assert_eq!(x.opportunistic + x.penalised, 0);
        }
        // Every Data ACK was taken, also one that covers a run sent ahead after
        // that run left STTF's book (the sender's `hi`, not its in-order cursor).
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let m = ep.conn(h).unwrap().mptcp_counters().unwrap();
            eprintln!("seed {seed}: refused Data ACKs {}", m.bad_data_acks);
            assert_eq!(m.bad_data_acks, 0, "seed {seed}: {m:?}");
        }
        // STTF's estimate ran on measured rates: every subflow of the sender has a
        // delivery rate and a minimum RTT, the slow one's rate below its 3 Mbit/s
        // bottleneck and the fast one's above it.
        let views = p.client.conn(c).unwrap().mptcp_subflow_views();
        eprintln!("seed {seed}: {views:?}");
        assert_eq!(views.len(), 2);
        for v in &views {
            assert!(v.rate > 0 && !v.min_rtt.is_zero(), "seed {seed}: {v:?}");
        }
        assert!(
            views[1].rate <= 3_000_000 / 8,
            "seed {seed}: {:?}",
            views[1]
        );
        assert!(views[0].rate > views[1].rate, "seed {seed}: {views:?}");
    }
}

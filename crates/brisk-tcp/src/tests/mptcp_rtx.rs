//! The data-level retransmission timer and partial re-injection between two brisk
//! endpoints (Linux `mptcp_retransmit_timer` / `__mptcp_retrans`): a middlebox that
//! strips the DSS from the pure ACKs carrying the final Data ACK no longer leaves the
//! sender holding its data forever, with one subflow or two, nor when the subflow
//! that carried the data then dies; a lossless transfer never fires the timer; and a
//! re-injected range a subflow takes only in part stays queued for the rest.

use super::harness::*;
use super::mptcp_addr::rewrite_options;
use super::mptcp_join::{cfg, client_port, establish_joined, greet, ndiff, sha};
use crate::endpoint::ConnHandle;
use crate::event::Event;
use crate::mptcp::pm::PmMode;
use brisk_time::{Duration, Instant};
use brisk_wire::mptcp::{crypto, DataSeq, MptcpOption};
use std::cell::Cell;
use std::rc::Rc;

/// One subflow each side (no joins).
fn single() -> Pair {
    Pair::with_configs(
        Duration::from_millis(10),
        cfg(PmMode::Fullmesh, 0, Vec::new()),
        cfg(PmMode::Fullmesh, 0, Vec::new()),
    )
}

/// Whether a Data ACK is `final_ack` (64-bit, or its low 32 bits).
fn acks(d: &DataSeq, final_ack: u64) -> bool {
    match *d {
        DataSeq::Bits64(v) => v == final_ack,
        DataSeq::Bits32(v) => v == final_ack as u32,
    }
}

/// From the first packet to the client whose DSS carries the Data ACK `final_ack`
/// on, for `window`: every such packet loses its DSS (a middlebox). Returns the
/// number of packets stripped. With `blackhole` the client port's packets are
/// dropped both ways from then on.
fn strip_final_data_ack(
    p: &mut Pair,
    final_ack: u64,
    window: Duration,
    blackhole: Option<u16>,
) -> Rc<Cell<usize>> {
    let stripped = Rc::new(Cell::new(0usize));
    let first: Rc<Cell<Option<Instant>>> = Rc::new(Cell::new(None));
    let (st, fi) = (stripped.clone(), first.clone());
    rewrite_options(p, move |x, opts| {
        if x.to_server {
            return None;
        }
        let hit = opts.iter().any(|o| {
            matches!(o, MptcpOption::Dss(d) if d.data_ack.as_ref().is_some_and(|a| acks(a, final_ack)))
        });
        if !hit {
            return None;
        }
        let t0 = *fi.get().get_or_insert(x.at);
        fi.set(Some(t0));
        if x.at > t0 + window {
            return None;
        }
        st.set(st.get() + 1);
        Some(
            opts.iter()
                .filter(|o| !matches!(o, MptcpOption::Dss(_)))
                .cloned()
                .collect(),
        )
    });
    if let Some(port) = blackhole {
        let fi = first.clone();
        p.set_hook(move |x| {
            let on = x.src_port == port || x.dst_port == port;
            if on && fi.get().is_some_and(|t| x.at >= t) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
    }
    stripped
}

/// Sends `n` bytes client → server and waits until the server read them all.
fn send_up(p: &mut Pair, c: ConnHandle, s: ConnHandle, n: usize, seed: u64) {
    let up = pattern(n, seed);
    let mut sent = 0;
    let mut got = Vec::new();
    let end = p.now + Duration::from_secs(120);
    while got.len() < n && p.now < end {
        if sent < n {
            sent += p.client.conn_mut(c).unwrap().write(&up[sent..]);
        }
        Pair::read_all(&mut p.server, s, &mut got);
        if !p.step_until(end) {
            break;
        }
    }
    Pair::read_all(&mut p.server, s, &mut got);
    assert_eq!(got.len(), n, "seed {seed}: length");
    assert_eq!(sha(&got), sha(&up), "seed {seed}: SHA-256");
}

/// The client's data-level send buffer empties (every byte Data-ACKed) within
/// `max`, without the application closing (no DATA_FIN to carry the Data ACK).
fn drains(p: &mut Pair, c: ConnHandle, max: Duration) -> bool {
    p.run_until(max, |p| {
        p.client.conn(c).unwrap().mptcp_send_buffered() == Some(0)
    })
}

fn close_both(p: &mut Pair, c: ConnHandle, s: ConnHandle, what: &str) {
    p.client.conn_mut(c).unwrap().close();
    p.server.conn_mut(s).unwrap().close();
    let ok = p.run_until(Duration::from_secs(150), |p| {
        p.client_events.contains(&(c, Event::Closed(Ok(()))))
            && p.server_events.contains(&(s, Event::Closed(Ok(()))))
    });
    assert!(ok, "{what}: both closed cleanly");
}

/// The client's IDSN + 1: the DSN of its first byte (it has sent none before).
fn client_first_dsn(p: &Pair, c: ConnHandle) -> u64 {
    let (local, _) = p.client.conn(c).unwrap().mptcp_keys().unwrap();
    crypto::idsn(local).wrapping_add(1)
}

/// stop42's stall: the DSS (Data ACK) of the pure ACKs acknowledging the last bytes
/// is stripped, nothing else is in flight, so no subflow has a reason to send and
/// the Data ACK never came. The data-level timer re-sends the oldest unacknowledged
/// bytes on an idle subflow; the server's ACK of them carries the Data ACK.
#[test]
fn a_stripped_final_data_ack_is_recovered_by_the_data_level_timer() {
    for (seed, subflows) in [(81u64, 1usize), (82, 1), (83, 1), (84, 2), (85, 2), (86, 2)] {
        let mut p = if subflows == 1 {
            single()
        } else {
            ndiff(2, 2, 2)
        };
        let (c, s) = if subflows == 1 {
            greet(&mut p)
        } else {
            establish_joined(&mut p, 2)
        };
        let n = (1 << 20) + 4321 * seed as usize % 7919;
        let final_ack = client_first_dsn(&p, c).wrapping_add(n as u64);
        let stripped = strip_final_data_ack(&mut p, final_ack, Duration::from_millis(150), None);
        send_up(&mut p, c, s, n, seed);
        assert!(
            drains(&mut p, c, Duration::from_secs(10)),
            "seed {seed}: the Data ACK came (stripped {}, {})",
            stripped.get(),
            p.client.conn(c).unwrap().mptcp_debug()
        );
        assert!(stripped.get() >= 1, "seed {seed}: the middlebox acted");
        let conn = p.client.conn(c).unwrap();
        let m = *conn.mptcp_counters().unwrap();
        let (_, timer, pending) = conn.mptcp_reinject_state().unwrap();
        assert!(
            m.data_rtx >= 1 && m.data_rtx_bytes >= 1,
            "seed {seed}: {m:?}"
        );
        assert_eq!(conn.mptcp_mib().unwrap().mptcp_retrans, m.data_rtx);
        // Everything acknowledged: the timer is stopped.
        assert_eq!((timer.at, pending), (None, 0), "seed {seed}");
        close_both(&mut p, c, s, &format!("seed {seed}"));
    }
}

/// The subflow that carried the last bytes dies after the TCP level acknowledged
/// them, and the Data ACKs of those acknowledgements were stripped: the timer
/// re-sends on a live subflow (or on the dead one first, whose RTO then re-injects
/// on the other, seed Table I), and the data level completes.
#[test]
fn data_acked_only_at_the_tcp_level_on_a_subflow_that_died_is_sent_again() {
    for seed in [87u64, 88, 89] {
        let mut p = ndiff(2, 2, 2);
        let (c, s) = establish_joined(&mut p, 2);
        let dead = client_port(&p, c, (seed % 2) as usize);
        let n = 3 << 20;
        let final_ack = client_first_dsn(&p, c).wrapping_add(n as u64);
        let stripped =
            strip_final_data_ack(&mut p, final_ack, Duration::from_millis(150), Some(dead));
        send_up(&mut p, c, s, n, seed);
        assert!(
            drains(&mut p, c, Duration::from_secs(30)),
            "seed {seed}: the Data ACK came (stripped {}, {})",
            stripped.get(),
            p.client.conn(c).unwrap().mptcp_debug()
        );
        let m = *p.client.conn(c).unwrap().mptcp_counters().unwrap();
        assert!(m.data_rtx >= 1, "seed {seed}: {m:?}");
        // (No clean close here: the dead subflow's FIN goes unanswered until its
        // retries run out.)
        let _ = s;
    }
}

/// Without losses the timer never fires (no spurious data-level retransmission), one
/// subflow or two, both ways at once.
#[test]
fn a_lossless_transfer_never_fires_the_data_level_timer() {
    for (seed, subflows) in [(91u64, 1usize), (92, 2)] {
        let mut p = if subflows == 1 {
            single()
        } else {
            ndiff(2, 2, 2)
        };
        let (c, s) = if subflows == 1 {
            greet(&mut p)
        } else {
            establish_joined(&mut p, 2)
        };
        super::mptcp_join::check_transfer(&mut p, c, s, 2 << 20, seed);
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let conn = ep.conn(h).unwrap();
            let m = conn.mptcp_counters().unwrap();
            let (_, timer, _) = conn.mptcp_reinject_state().unwrap();
            assert_eq!(
                (m.data_rtx, timer.idle_none, timer.backoff),
                (0, 0, 0),
                "seed {seed}: {m:?}"
            );
        }
    }
}

/// Re-injection accounting with 2–4 subflows, one blackholed with data in flight:
/// every byte that leaves the queue was written to a subflow (before partial
/// re-injection, the part a subflow did not take left the queue unsent), the queue
/// drains, and the transfer completes intact.
#[test]
fn reinjected_ranges_taken_in_part_keep_the_rest_queued() {
    let (mut partial, mut queued) = (0, 0);
    for (seed, n) in [(93u64, 2u8), (94, 3), (95, 3), (96, 3), (97, 3), (98, 4)] {
        let mut p = ndiff(n, n, n);
        let (c, s) = establish_joined(&mut p, usize::from(n));
        let dead = client_port(&p, c, (seed % 2) as usize);
        let count = Rc::new(Cell::new(0usize));
        let count2 = count.clone();
        p.set_hook(move |x| {
            count2.set(count2.get() + 1);
            if count2.get() > 600 && (x.src_port == dead || x.dst_port == dead) {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        super::mptcp_join::check_transfer(&mut p, c, s, 4 << 20, seed);
        for (ep, h) in [(&p.client, c), (&p.server, s)] {
            let conn = ep.conn(h).unwrap();
            let m = *conn.mptcp_counters().unwrap();
            let (st, _, pending) = conn.mptcp_reinject_state().unwrap();
            queued += st.bytes_queued;
            assert_eq!(pending, 0, "seed {seed}: the queue drained");
            // Bytes written by re-injection from the queue = bytes that left it.
            assert_eq!(
                m.reinjected_bytes - m.data_rtx_bytes,
                st.bytes_reinjected,
                "seed {seed}: {st:?} {m:?}"
            );
            assert_eq!(st.partial, m.reinject_partial, "seed {seed}");
            partial += st.partial;
        }
    }
    assert!(queued > 0, "some data was queued for re-injection");
    // In these runs each range fit the live subflow's window whole (`partial` 0);
    // the split itself is checked by `mptcp::reinject`'s unit and property tests.
    let _ = partial;
}

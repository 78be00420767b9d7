//! Closing an MPTCP connection whose first subflow is in RTO back-off when the
//! DATA_FIN is acknowledged (issue 32: 2 of 3 840 `mp-lisa` MP-5 flows ended with
//! `Reset` after every byte had arrived). The sender reset such a subflow as a dead
//! path after a single RTO; the peer, whose other subflow had already closed and
//! been reaped, took the reset of its first subflow for the connection's failure. A
//! subflow is now a dead path only when stale (`STALE_LOSS_CNT` RTOs in a row), and a
//! completed data-level close is `Closed(Ok)` however the subflows end.

use super::harness::*;
use super::mptcp_join::{client_port, establish_joined, ndiff, sha};
use crate::event::Event;
use brisk_time::Duration;

fn closed(
    events: &[(crate::endpoint::ConnHandle, Event)],
    h: crate::endpoint::ConnHandle,
) -> Option<Event> {
    events
        .iter()
        .find(|e| e.0 == h && matches!(e.1, Event::Closed(_)))
        .map(|e| e.1)
}

#[test]
fn one_rto_on_the_first_subflow_at_the_close_is_not_a_dead_path() {
    for seed in [91u64, 92, 93] {
        let mut p = ndiff(2, 2, 2);
        let (c, s) = establish_joined(&mut p, 2);
        let first = client_port(&p, c, 0);
        // The first subflow's ACKs (server → client) are lost for 600 ms: its RTO
        // fires once, its data is re-injected on the second subflow, which then
        // carries the rest, the Data ACKs and the DATA_FIN's acknowledgement while
        // the first is still backed off.
        let t0 = p.now;
        let blackout = Duration::from_millis(600);
        p.set_hook(move |x| {
            if !x.to_server && x.dst_port == first && x.at < t0 + blackout {
                Action::Drop
            } else {
                Action::Deliver
            }
        });
        let n = 200_000 + seed as usize * 1_000;
        let up = pattern(n, seed);
        let (mut sent, mut got) = (0, Vec::new());
        let (mut closed_c, mut closed_s) = (false, false);
        let mut peer_closed_at = None;
        // TIME_WAIT included.
        let end = p.now + Duration::from_secs(150);
        while p.now < end {
            if let Some(k) = p.client.conn_mut(c) {
                if sent < n {
                    sent += k.write(&up[sent..]);
                }
                if sent == n && !closed_c {
                    k.close();
                    closed_c = true;
                }
            }
            Pair::read_all(&mut p.server, s, &mut got);
            // The server's application closes 300 ms after the DATA_FIN arrived (as a
            // workload's receiver does once it has read and checked everything): the
            // client's DATA_FIN is acknowledged before the server's is sent.
            if !closed_s && p.server_events.contains(&(s, Event::PeerClosed)) {
                let at = *peer_closed_at.get_or_insert(p.now);
                if p.now >= at + Duration::from_millis(300) {
                    if let Some(k) = p.server.conn_mut(s) {
                        k.close();
                    }
                    closed_s = true;
                }
            }
            if closed(&p.client_events, c).is_some() && closed(&p.server_events, s).is_some() {
                break;
            }
            let next = if closed_s {
                end
            } else {
                p.now + Duration::from_millis(10)
            };
            if !p.step_until(next.min(end)) {
                if closed_s {
                    break;
                }
                // Nothing due for 10 ms: the server's application waits.
                p.advance(Duration::from_millis(10));
            }
        }
        Pair::read_all(&mut p.server, s, &mut got);
        assert_eq!(got.len(), n, "seed {seed}: length");
        assert_eq!(sha(&got), sha(&up), "seed {seed}: SHA-256");
        assert_eq!(
            closed(&p.client_events, c),
            Some(Event::Closed(Ok(()))),
            "seed {seed}: client"
        );
        assert_eq!(
            closed(&p.server_events, s),
            Some(Event::Closed(Ok(()))),
            "seed {seed}: server"
        );
        // The first subflow was backed off, not dead: closed with a FIN, not reset.
        let rst = p
            .log
            .iter()
            .any(|(x, _)| x.to_server && x.src_port == first && x.flags.rst());
        assert!(!rst, "seed {seed}: the client reset its first subflow");
    }
}

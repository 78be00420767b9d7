//! The peer's data-level window (RFC 8684 §3.3.4) over two subflows: the sender never
//! maps data beyond the right edge the receiver advertised, a Data ACK plus the
//! window of the same segment (Linux `ack_update_msk` keeps the highest such edge).
//!
//! A Linux receiver's window moves with its memory (out-of-order data, unread
//! bytes), so one subflow's last window can be wider than the newest: a sender that
//! joined the newest Data ACK with the widest subflow window overran the edge, and
//! Linux dropped the excess after ACKing it at the subflow level
//! (`mptcp_data_queue_ofo`, `MPTcpExtNoDSSInWindow`); the real runs against Linux
//! stalled 200-1000 ms on the data-level retransmission timer near their end. brisk's
//! own receiver advertises the same edge on every subflow, so here a middlebox halves
//! the window of the server's segments on the first subflow and the second
//! subflow's ACKs come later: the edges the client sees then differ by subflow, as
//! Linux's do.

use super::harness::*;
use super::mptcp_join::{both_ways, cfg, client_port, establish_joined};
use crate::event::Event;
use crate::mptcp::pm::PmMode;
use brisk_time::Duration;
use brisk_wire::mptcp::{self as wire, DataSeq, MptcpOption};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet};
use sha2::{Digest, Sha256};

const CAP: usize = 32 << 10;
const WSCALE: u8 = 7;

fn pair() -> Pair {
    pair_with(CAP)
}

fn pair_with(cap: usize) -> Pair {
    let set = |mut c: crate::config::Config| {
        c.recv_buffer = cap;
        if let Some(m) = c.mptcp.as_mut() {
            m.recv.capacity = cap as u32;
            m.recv.wscale = WSCALE;
        }
        c
    };
    Pair::with_configs(
        Duration::from_millis(10),
        set(cfg(PmMode::NDiffPorts { n: 2 }, 8, Vec::new())),
        set(cfg(PmMode::Fullmesh, 8, Vec::new())),
    )
}

/// The DSS of logged packet `i`, if any.
fn dss(p: &Pair, i: usize) -> Option<wire::Dss> {
    wire::options(&p.logged_repr(i).extra).find_map(|o| match o {
        Ok(MptcpOption::Dss(d)) => Some(d),
        _ => None,
    })
}

/// The window field the client received for a server segment (halved towards the
/// first subflow's port, as the middlebox does).
fn window_seen(seen: &Seen, first: u16) -> u16 {
    if seen.dst_port == first {
        seen.window / 2
    } else {
        seen.window
    }
}

/// Extra one-way delay of the server's segments on the second subflow.
const LATE: Duration = Duration::from_millis(15);

/// Client mappings that end beyond the highest right edge the server's segments
/// carried by the time the mapping left (each server segment counted from its
/// arrival at the client), as (mapping end, edge); and how many mappings were
/// checked.
fn overruns(p: &Pair, first: u16, second: u16) -> (Vec<(u64, u64)>, usize) {
    overruns_scaled(p, first, second, WSCALE)
}

/// As [`overruns`], with the server's window scale `shift`.
fn overruns_scaled(p: &Pair, first: u16, second: u16, shift: u8) -> (Vec<(u64, u64)>, usize) {
    let mut edges = Vec::new();
    let mut maps = Vec::new();
    for i in 0..p.log.len() {
        let seen = p.log[i].0;
        let Some(d) = dss(p, i) else { continue };
        if !seen.to_server {
            if let Some(DataSeq::Bits64(a)) = d.data_ack {
                let late = if seen.dst_port == second {
                    LATE
                } else {
                    Duration::ZERO
                };
                let e = a + (u64::from(window_seen(&seen, first)) << shift);
                edges.push((seen.at + p.latency + late, e));
            }
            continue;
        }
        let Some(m) = d.mapping else { continue };
        let DataSeq::Bits64(dsn) = m.dsn else {
            continue;
        };
        if seen.len == 0 || m.data_len == 0 {
            continue;
        }
        maps.push((seen.at, dsn + u64::from(m.data_len) - u64::from(d.data_fin)));
    }
    edges.sort_by_key(|x| x.0);
    let (mut over, mut checked) = (Vec::new(), 0);
    let (mut k, mut edge) = (0, None::<u64>);
    for (at, end) in maps {
        while k < edges.len() && edges[k].0 <= at {
            edge = Some(edge.map_or(edges[k].1, |x| x.max(edges[k].1)));
            k += 1;
        }
        let Some(e) = edge else { continue };
        checked += 1;
        if end > e {
            over.push((end, e));
        }
    }
    (over, checked)
}

#[test]
fn no_data_beyond_the_advertised_edge_when_subflow_windows_differ() {
    for seed in [1u64, 2, 3] {
        let mut p = pair();
        let (c, s) = establish_joined(&mut p, 2);
        let first = client_port(&p, c, 0);
        let second = client_port(&p, c, 1);
        // The second subflow's ACKs come 15 ms later: its last window is an older
        // Data ACK's when the first subflow's ACKs have moved the Data ACK on.
        p.set_hook(move |x| {
            if !x.to_server && x.dst_port == second {
                Action::Delay(LATE)
            } else {
                Action::Deliver
            }
        });
        p.set_rewrite(move |x, bytes| {
            if x.to_server || x.dst_port != first {
                return;
            }
            let copy = bytes.clone();
            let (ip, mut tcp) = parse_tcp_packet(&copy).unwrap();
            tcp.window /= 2;
            let mut out = Vec::new();
            emit_tcp_packet(&ip, &tcp, &mut out);
            *bytes = out;
        });
        let n = (2 << 20) + seed as usize * 77_777;
        let up = pattern(n, seed);
        let (got, _) = both_ways(&mut p, c, s, &up, &[], Duration::from_secs(600));
        assert_eq!(got.len(), n, "seed {seed}: length");
        let (a, b): ([u8; 32], [u8; 32]) =
            (Sha256::digest(&got).into(), Sha256::digest(&up).into());
        assert_eq!(a, b, "seed {seed}: SHA-256");
        let (over, checked) = overruns(&p, first, second);
        eprintln!(
            "seed {seed}: {checked} mappings checked, {} beyond the edge, first {:?}; subflows {:?}",
            over.len(),
            over.first(),
            p.client.conn(c).unwrap().mptcp_subflow_info()
        );
        assert!(checked > 100, "seed {seed}: {checked} mappings");
        assert!(
            over.is_empty(),
            "seed {seed}: {} overruns: {over:?}",
            over.len()
        );
    }
}

/// A slow reader with losses on one subflow, no middlebox: the server's duplicate
/// ACKs on the lossy subflow carry a Data ACK moved on by the other subflow's data and
/// a window shrunk by the unread bytes (the right edge stays put), which TCP's
/// window-update rule does not take (`tcp_may_update_window`: same ACK, same
/// sequence, smaller window). An edge built from the subflow's `snd_wnd` then ran
/// past the advertised one; the edge from each segment's own window field does not.
/// Also the bytes arrive intact and the connection closes cleanly at both ends.
#[test]
fn no_data_beyond_the_edge_behind_a_slow_reader_and_duplicate_acks() {
    const SLOW_CAP: usize = 64 << 10;
    for seed in [1u64, 2, 3] {
        let mut p = pair_with(SLOW_CAP);
        let (c, s) = establish_joined(&mut p, 2);
        let first = client_port(&p, c, 0);
        // Every 40th data segment on the first subflow is lost (shifted by seed).
        let mut k = seed * 7;
        p.set_hook(move |x| {
            if x.to_server && x.src_port == first && x.len > 0 {
                k += 1;
                if k % 40 == 0 {
                    return Action::Drop;
                }
            }
            Action::Deliver
        });
        let n = (1 << 20) + seed as usize * 33_333;
        let up = pattern(n, seed);
        // The reader takes 1.5 KB per ms of simulated time.
        let rate = 1_500u64;
        let (start, end) = (p.now, p.now + Duration::from_secs(600));
        let (mut sent, mut got) = (0, Vec::new());
        let mut buf = vec![0u8; 65536];
        let mut closed = false;
        while got.len() < n && p.now < end {
            if sent < n {
                sent += p.client.conn_mut(c).unwrap().write(&up[sent..]);
                if sent == n {
                    p.client.conn_mut(c).unwrap().close();
                }
            }
            let ms = (p.now - start).as_millis() as u64;
            let budget = (ms * rate).saturating_sub(got.len() as u64) as usize;
            if budget > 0 {
                if let Some(conn) = p.server.conn_mut(s) {
                    let k = conn.read(&mut buf[..budget.min(65536)]);
                    got.extend_from_slice(&buf[..k]);
                }
            }
            // The reader wakes every millisecond, events or not (a full data-level
            // window leaves no timer pending: the reader's window update is what
            // opens it, as with Linux).
            let tick = (p.now + Duration::from_millis(1)).min(end);
            if !p.step_until(tick) {
                p.advance(tick - p.now);
            }
        }
        // The receiver's own judgement: mappings it refused as starting beyond its
        // edge (each reset the subflow), and Linux's NoDSSInWindow.
        let refused = p
            .server
            .conn(s)
            .and_then(|x| x.mptcp_counters())
            .map(|m| m.map.outside_window);
        let mib = p
            .server
            .conn(s)
            .and_then(|x| x.mptcp_mib())
            .map(|m| (m.no_dss_in_window, m.ofo_queue, m.duplicate_data));
        // Both ends close and see Closed(Ok).
        if let Some(conn) = p.server.conn_mut(s) {
            conn.close();
        }
        // (The first to close waits out TIME-WAIT before its Closed.)
        let until = p.now + Duration::from_secs(300);
        while p.now < until {
            let done = p
                .client_events
                .iter()
                .any(|e| e.0 == c && matches!(e.1, Event::Closed(_)))
                && p.server_events
                    .iter()
                    .any(|e| e.0 == s && matches!(e.1, Event::Closed(_)));
            if done {
                closed = true;
                break;
            }
            if let Some(conn) = p.server.conn_mut(s) {
                let k = conn.read(&mut buf);
                got.extend_from_slice(&buf[..k]);
            }
            if !p.step_until(until) {
                break;
            }
        }
        let ends: Vec<_> = p
            .client_events
            .iter()
            .filter(|e| e.0 == c && matches!(e.1, Event::Closed(_)))
            .chain(
                p.server_events
                    .iter()
                    .filter(|e| e.0 == s && matches!(e.1, Event::Closed(_))),
            )
            .collect();
        // The server's window scale, from its SYN/ACK.
        let shift = (0..p.log.len())
            .find(|&i| !p.log[i].0.to_server && p.log[i].0.flags.syn())
            .and_then(|i| p.logged_repr(i).window_scale)
            .map_or(0, |w| w.get());
        let (over, checked) = overruns_scaled(&p, 0, 0, shift);
        eprintln!(
            "seed {seed}: server refused {refused:?} mappings past its edge; \
             MIB NoDSSInWindow/OFOQueue/DuplicateData {mib:?}"
        );
        eprintln!(
            "seed {seed}: {} bytes read by {:?}, {checked} mappings checked, {} beyond the edge, first {:?}; closed {closed} {ends:?}",
            got.len(),
            p.now - start,
            over.len(),
            over.first()
        );
        assert_eq!(got.len(), n, "seed {seed}: length");
        let (a, b): ([u8; 32], [u8; 32]) =
            (Sha256::digest(&got).into(), Sha256::digest(&up).into());
        assert_eq!(a, b, "seed {seed}: SHA-256");
        assert!(checked > 100, "seed {seed}: {checked} mappings");
        assert!(
            over.is_empty(),
            "seed {seed}: {} overruns: {over:?}",
            over.len()
        );
        assert_eq!(
            refused,
            Some(0),
            "seed {seed}: mappings refused past the edge"
        );
        assert_eq!(mib.map(|m| m.0), Some(0), "seed {seed}: NoDSSInWindow");
        assert!(
            mib.is_some_and(|m| m.1 > 0),
            "seed {seed}: OFOQueue counted"
        );
        assert!(closed, "seed {seed}: both ends closed: {ends:?}");
        assert!(
            ends.iter().all(|e| matches!(e.1, Event::Closed(Ok(())))),
            "seed {seed}: clean close at both ends: {ends:?}"
        );
    }
}

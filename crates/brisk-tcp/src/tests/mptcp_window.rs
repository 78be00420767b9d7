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
use crate::mptcp::pm::PmMode;
use brisk_time::Duration;
use brisk_wire::mptcp::{self as wire, DataSeq, MptcpOption};
use brisk_wire::{emit_tcp_packet, parse_tcp_packet};
use sha2::{Digest, Sha256};

const CAP: usize = 32 << 10;
const WSCALE: u8 = 7;

fn pair() -> Pair {
    let set = |mut c: crate::config::Config| {
        c.recv_buffer = CAP;
        if let Some(m) = c.mptcp.as_mut() {
            m.recv.capacity = CAP as u32;
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
                let e = a + (u64::from(window_seen(&seen, first)) << WSCALE);
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

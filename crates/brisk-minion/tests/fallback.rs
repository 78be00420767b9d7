//! MN-12, the uCOBS fallback matrix, over brisk's sans-IO TCP: sender {plain TCP,
//! prioritised send} × receiver {plain TCP, unordered receive}, through a link with
//! 20 ms one-way delay that drops data segments on their first sending. Every datagram
//! arrives exactly once and intact in all four; out-of-order delivery happens only at an
//! unordered receiver, and prioritisation only from a prioritised sender.

use brisk_minion::{Limits, UcobsReceiver, UcobsSender};
use brisk_tcp::endpoint::{Endpoint, EndpointConfig};
use brisk_tcp::{Config, Duration, Instant};
use std::collections::{BTreeMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const N: u32 = 400;
const URGENT_EVERY: u32 = 50;

fn datagram(id: u32) -> Vec<u8> {
    let len = 200 + (id as usize * 37) % 900;
    let mut d = id.to_be_bytes().to_vec();
    d.extend((0..len).map(|i| (id as usize * 13 + i) as u8));
    d
}

struct Outcome {
    delivered: Vec<u32>,
    out_of_order: u64,
    /// Mean position (in arrival order) of the urgent datagrams minus their send order.
    urgent_ahead: f64,
}

fn run(prioritised: bool, unordered: bool) -> Outcome {
    let ca = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1));
    let sa = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
    let ccfg = Config {
        unordered_send: prioritised,
        nagle: false,
        send_buffer: 256 << 10,
        ..Config::default()
    };
    let scfg = Config {
        unordered,
        ..Config::default()
    };
    let mut client = Endpoint::new(
        ca,
        // Fixed values, not the OS-drawn default: the same run every time.
        EndpointConfig::seeded([0x5a; 16], 1),
    );
    let mut server = Endpoint::new(
        sa,
        // Fixed values, not the OS-drawn default: the same run every time.
        EndpointConfig::seeded([0x5a; 16], 2),
    );
    server.listen(80, 8, scfg).unwrap();
    let mut now = Instant::ZERO;
    let c = client
        .connect(now, 5000, SocketAddr::new(sa, 80), ccfg)
        .unwrap();
    let mut sender = UcobsSender::new();
    let mut receiver = UcobsReceiver::new(Limits::default(), 4096).unwrap();
    let mut s = None;
    // The link: (arrival time, serial) -> (to server, bytes); 1 Mbit/s-ish pacing is
    // left to cwnd; drops every 11th data packet to the server on first sending.
    let mut wire: BTreeMap<(Instant, u64), (bool, Vec<u8>)> = BTreeMap::new();
    let mut serial = 0u64;
    let mut seen = HashSet::new();
    let mut data_pkts = 0u64;
    let mut next_id = 0u32;
    let mut delivered = Vec::new();
    let mut ooo = 0;
    let delay = Duration::from_millis(20);
    let mut buf = Vec::with_capacity(2048);
    for _ in 0..2_000_000 {
        // The application: offer datagrams while the sender takes them.
        if let Some(conn) = client.conn_mut(c) {
            while next_id < N {
                let urgent = next_id % URGENT_EVERY == URGENT_EVERY - 1;
                let prio = if urgent { 7 } else { 1 };
                if !sender.send(conn, &datagram(next_id), prio).unwrap() {
                    break;
                }
                next_id += 1;
            }
        }
        if s.is_none() {
            s = server.accept(80);
        }
        if let Some(h) = s {
            let conn = server.conn_mut(h).unwrap();
            receiver
                .poll(conn, &mut |d| {
                    let id = u32::from_be_bytes(d.data[..4].try_into().unwrap());
                    assert_eq!(d.data, &datagram(id)[..], "datagram {id} intact");
                    if !d.in_order {
                        ooo += 1;
                    }
                    delivered.push(id);
                })
                .unwrap();
        }
        if delivered.len() == N as usize {
            break;
        }
        // Emit.
        for (to_server, ep) in [(true, &mut client), (false, &mut server)] {
            buf.clear();
            while ep.poll_transmit(now, &mut buf).is_some() {
                let pkt = std::mem::take(&mut buf);
                let is_data = to_server && pkt.len() > 60;
                let key = (pkt[24..28].to_vec(), pkt.len());
                if is_data && seen.insert(key) {
                    data_pkts += 1;
                    if data_pkts.is_multiple_of(11) {
                        continue;
                    }
                }
                wire.insert((now + delay, serial), (to_server, pkt));
                serial += 1;
            }
        }
        // Advance to the next arrival or timer.
        let next_wire = wire.keys().next().map(|k| k.0);
        let next_timer = [client.poll_timeout(), server.poll_timeout()]
            .into_iter()
            .flatten()
            .min();
        let Some(t) = [next_wire, next_timer].into_iter().flatten().min() else {
            break;
        };
        now = now.max(t);
        while let Some(e) = wire.first_entry() {
            if e.key().0 > now {
                break;
            }
            let (to_server, pkt) = e.remove();
            if to_server {
                server.handle_packet(now, &pkt);
            } else {
                client.handle_packet(now, &pkt);
            }
        }
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    let urgent: Vec<f64> = delivered
        .iter()
        .enumerate()
        .filter(|(_, &id)| id % URGENT_EVERY == URGENT_EVERY - 1)
        .map(|(pos, &id)| id as f64 - pos as f64)
        .collect();
    Outcome {
        urgent_ahead: urgent.iter().sum::<f64>() / urgent.len().max(1) as f64,
        delivered,
        out_of_order: ooo,
    }
}

#[test]
fn mn12_every_datagram_exactly_once_in_all_four_combinations() {
    for prioritised in [false, true] {
        for unordered in [false, true] {
            let o = run(prioritised, unordered);
            let mut ids = o.delivered.clone();
            ids.sort_unstable();
            assert_eq!(
                ids,
                (0..N).collect::<Vec<_>>(),
                "sender prioritised {prioritised}, receiver unordered {unordered}"
            );
            eprintln!(
                "sender prioritised {prioritised:5}, receiver unordered {unordered:5}: {} out of order, urgent datagrams {:.1} places ahead",
                o.out_of_order, o.urgent_ahead
            );
            if unordered {
                assert!(o.out_of_order > 0, "losses give out-of-order deliveries");
            } else {
                assert_eq!(o.out_of_order, 0);
            }
            if prioritised {
                assert!(
                    o.urgent_ahead > 1.0,
                    "urgent datagrams overtake: {:.1}",
                    o.urgent_ahead
                );
            } else if !unordered {
                assert_eq!(o.urgent_ahead, 0.0, "in order: every datagram at its place");
            }
        }
    }
}

//! RC3 in the connection: the paper's worked example (NSDI 2014 §2.2, Fig. 3; claim
//! RC3-18, workplace check W-1) as an exact test, and RC3 against an unmodified
//! receiver (spec A21).
//!
//! The network is the example's: the sender's NIC is a strict-priority queue (by the
//! IP header's DSCP, FIFO within a priority) that puts 50 packets on the wire per RTT,
//! then a one-way delay; the way back is a delay only. Packets 21 and 22 (1-based, of
//! 66) are dropped on their first, low-priority, transmission.

use crate::config::Config;
use crate::endpoint::{ConnHandle, Endpoint, EndpointConfig};
use crate::rc3::Rc3Config;
use brisk_time::{Duration, Instant};
use brisk_wire::parse_tcp_packet;
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(198, 18, 0, 2));
const PORT: u16 = 80;
/// 66 segments fit the handshake's unscaled window (65 535 bytes, RFC 7323 §2.2), so the
/// whole example goes in the first round as in the paper.
const MSS: usize = 960;
const PACKETS: usize = 66;
/// One-way delay; the RTT is twice this plus one packet's serialisation.
const OWD: Duration = Duration::from_millis(10);
/// The NIC sends 50 packets per 20 ms.
const SER: Duration = Duration::from_micros(400);

/// One data packet as it left the sender's NIC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Departure {
    at: Instant,
    /// 1-based packet number of the flow (by sequence).
    pkt: usize,
    dscp: u8,
}

struct Run {
    /// Write to full acknowledgement, in RTTs.
    fct_rtts: f64,
    departures: Vec<Departure>,
    /// Time the application wrote (round 1 starts).
    t0: Instant,
    rtt: Duration,
    received: Vec<u8>,
    cwnd_trace: Vec<u32>,
    client_info: crate::TcpInfo,
}

fn config(rc3: bool, iw: u32) -> Config {
    let mut c = Config {
        mss: MSS as u16,
        ..Config::default()
    };
    c.congestion.initial_cwnd = iw;
    // Spec A10: the simulated receiver ACKs every segment.
    c.ack.delayed = false;
    c.options.timestamps = false;
    c.transmit.rc3 = rc3.then(Rc3Config::default);
    c
}

/// Runs the example: `sender_rc3` / `receiver_rc3` switch RC3 on either end.
fn run(sender_rc3: bool, receiver_rc3: bool, drop_21_22: bool) -> Run {
    run_with(sender_rc3, receiver_rc3, drop_21_22, false)
}

/// `run`, the sender writing by reference (`write_shared`) if `shared`.
fn run_with(sender_rc3: bool, receiver_rc3: bool, drop_21_22: bool, shared: bool) -> Run {
    let ep = |ip, seed: u8| {
        Endpoint::new(
            ip,
            EndpointConfig {
                isn_secret: [seed; 16],
                rng_seed: u64::from(seed),
                ..EndpointConfig::seeded([7; 16], 7)
            },
        )
    };
    let mut client = ep(CLIENT, 1);
    let mut server = ep(SERVER, 2);
    server.listen(PORT, 8, config(receiver_rc3, 4)).unwrap();
    let mut now = Instant::from_millis(1);
    let c = client
        .connect(now, 0, SocketAddr::new(SERVER, PORT), config(sender_rc3, 4))
        .unwrap();
    let mut s: Option<ConnHandle> = None;
    let data: Vec<u8> = (0..PACKETS * MSS)
        .map(|i| (i * 7 + i / 251) as u8)
        .collect();

    // NIC: (dscp, arrival order) -> packet; wire: (arrival time, order) -> packet.
    let mut nic: BTreeMap<(u8, u64), Vec<u8>> = BTreeMap::new();
    let mut nic_free = now;
    let mut to_server: BTreeMap<(Instant, u64), Vec<u8>> = BTreeMap::new();
    let mut to_client: BTreeMap<(Instant, u64), Vec<u8>> = BTreeMap::new();
    let mut order = 0u64;
    let mut buf = Vec::new();
    let mut departures = Vec::new();
    let mut first_tx = [true; PACKETS + 1];
    let mut t0 = None;
    let mut received = Vec::new();
    let mut cwnd_trace = Vec::new();
    let mut iss = None;
    let mut done_at = None;

    for _ in 0..200_000 {
        // Application: write once connected, read whatever arrives.
        if t0.is_none()
            && client
                .conn(c)
                .is_some_and(|k| k.state() == crate::State::Established)
        {
            let k = client.conn_mut(c).unwrap();
            let n = if shared {
                k.write_shared(&crate::SharedBytes::periodic(&data), 0, data.len())
            } else {
                k.write(&data)
            };
            assert_eq!(n, data.len());
            t0 = Some(now);
        }
        if s.is_none() {
            s = server.accept(PORT);
        }
        if let Some(h) = s {
            let mut rb = [0u8; 65536];
            if let Some(k) = server.conn_mut(h) {
                loop {
                    let n = k.read(&mut rb);
                    if n == 0 {
                        break;
                    }
                    received.extend_from_slice(&rb[..n]);
                }
            }
        }
        if let Some(k) = client.conn(c) {
            let cw = k.info().cwnd;
            if cwnd_trace.last() != Some(&cw) {
                cwnd_trace.push(cw);
            }
            if t0.is_some() && done_at.is_none() && k.acked_offset() == data.len() as u64 {
                done_at = Some(now);
            }
        }
        if done_at.is_some() {
            break;
        }
        // Output.
        while client.poll_transmit(now, &mut buf).is_some() {
            let (ip, _) = parse_tcp_packet(&buf).unwrap();
            order += 1;
            nic.insert((ip.dscp(), order), buf.clone());
        }
        while server.poll_transmit(now, &mut buf).is_some() {
            order += 1;
            to_client.insert((now + OWD, order), buf.clone());
        }
        // The NIC starts the next packet when free.
        if now >= nic_free {
            if let Some((_, pkt)) = nic.pop_first() {
                let (ip, tcp) = parse_tcp_packet(&pkt).unwrap();
                let isn = *iss.get_or_insert(tcp.seq.0.wrapping_add(u32::from(tcp.flags.syn())));
                let mut dropped = false;
                if !tcp.payload.is_empty() {
                    let off = tcp.seq.0.wrapping_sub(isn) as usize;
                    let k = off / MSS + 1;
                    dropped = drop_21_22 && first_tx[k] && (k == 21 || k == 22);
                    first_tx[k] = false;
                    departures.push(Departure {
                        at: now,
                        pkt: k,
                        dscp: ip.dscp(),
                    });
                }
                nic_free = now + SER;
                if !dropped {
                    order += 1;
                    to_server.insert((nic_free + OWD, order), pkt);
                }
            }
        }
        // Next event.
        let mut next = [
            to_server.first_key_value().map(|(k, _)| k.0),
            to_client.first_key_value().map(|(k, _)| k.0),
            client.poll_timeout(),
            server.poll_timeout(),
            (!nic.is_empty()).then_some(nic_free.max(now)),
        ]
        .into_iter()
        .flatten()
        .min()
        .expect("something to do");
        if next < now {
            next = now;
        }
        now = next;
        while let Some(e) = to_server.first_entry().filter(|e| e.key().0 <= now) {
            server.handle_packet(now, &e.remove());
        }
        while let Some(e) = to_client.first_entry().filter(|e| e.key().0 <= now) {
            client.handle_packet(now, &e.remove());
        }
        client.handle_timeout(now);
        server.handle_timeout(now);
    }
    let t0 = t0.expect("connected");
    let done = done_at.expect("transfer completed");
    let rtt = OWD * 2 + SER;
    Run {
        fct_rtts: (done - t0).as_secs_f64() / rtt.as_secs_f64(),
        departures,
        t0,
        rtt,
        received,
        cwnd_trace,
        client_info: client.conn(c).unwrap().info(),
    }
}

impl Run {
    /// The round (1-based) a time falls in, counted from the write.
    fn round(&self, at: Instant) -> u32 {
        ((at - self.t0).as_secs_f64() / self.rtt.as_secs_f64()).floor() as u32 + 1
    }
    fn p0(&self) -> impl Iterator<Item = &Departure> {
        self.departures.iter().filter(|d| d.dscp == 0)
    }
}

fn expected_data() -> Vec<u8> {
    (0..PACKETS * MSS)
        .map(|i| (i * 7 + i / 251) as u8)
        .collect()
}

/// W-1 (RC3-18): the paper's trace, exactly.
pub fn rc3_worked_example_finishes_in_4_rtts_against_5() {
    let r = run(true, true, true);
    assert_eq!(r.received, expected_data(), "stream intact");

    // The RLP: 66...27 at priority 1, 26...5 at priority 2, tail first, each once.
    let low: Vec<(usize, u8)> = r
        .departures
        .iter()
        .filter(|d| d.dscp != 0)
        .map(|d| (d.pkt, d.dscp))
        .collect();
    let mut want: Vec<(usize, u8)> = (27..=66).rev().map(|k| (k, 1)).collect();
    want.extend((5..=26).rev().map(|k| (k, 2)));
    assert_eq!(low, want, "copies: tail first, 40 at p1 then 22 at p2");
    let info = r.client_info.rc3.expect("rc3 counters");
    assert_eq!(info.rlp_packets, 62);
    assert_eq!(info.rlp_by_level, [40, 22, 0, 0]);

    // The primary loop: 1-4 in round 1, 5-12 in round 2, the holes 21 and 22 in round
    // 3. The paper's figure has *only* 21 and 22 in round 3; per packet, the ACKs for
    // 5-12 (priority 0, ahead of the copies at the NIC) come back before the SACKs of
    // the priority-2 copies of 13-20 sent after them, so slow start sends 13-19 again
    // before those SACKs arrive (docs/mechanisms/rc3.md, "W-1").
    let rounds: Vec<(u32, usize)> = r.p0().map(|d| (r.round(d.at), d.pkt)).collect();
    let in_round = |k: u32| -> Vec<usize> {
        rounds
            .iter()
            .filter(|(x, _)| *x == k)
            .map(|(_, p)| *p)
            .collect()
    };
    assert_eq!(in_round(1), [1, 2, 3, 4], "{rounds:?}");
    assert_eq!(in_round(2), (5..=12).collect::<Vec<_>>(), "{rounds:?}");
    assert_eq!(
        in_round(3),
        [13, 14, 15, 16, 17, 18, 19, 21, 22],
        "{rounds:?}"
    );
    assert!(in_round(4).is_empty(), "{rounds:?}");
    // Slow start without a loss response: 4 -> 8 -> 16 (and never down).
    assert!(
        r.cwnd_trace.windows(2).all(|w| w[1] >= w[0]),
        "{:?}",
        r.cwnd_trace
    );
    assert!(r.cwnd_trace.contains(&8) && r.cwnd_trace.contains(&16));
    // 16 once 1-12 are ACKed, plus the resent 13-19 that priority-0 ACKs covered
    // before the bump (they were sent by the primary loop, so they count, A4(c)).
    assert_eq!(*r.cwnd_trace.last().unwrap(), 19, "{:?}", r.cwnd_trace);
    assert_eq!(r.client_info.retransmits, 0, "holes go as new data");
    // The primary loop jumped over what the copies delivered: 23-66 at least.
    assert!(info.skipped_bytes >= 44 * MSS as u64, "{info:?}");
    assert!(
        r.fct_rtts <= 4.0,
        "RC3 done in round 4: {:.2} RTTs",
        r.fct_rtts
    );
    assert!(r.fct_rtts > 3.0, "{:.2} RTTs", r.fct_rtts);

    // Plain TCP on the same path (no loss: its packets all go at priority 0) needs
    // 4 + 8 + 16 + 32 + 6: five rounds.
    let t = run(false, false, false);
    assert_eq!(t.received, expected_data());
    // Its last round's 6 packets wait behind round 4's serialisation, so it ends just
    // past 5 RTTs: a round more than RC3.
    assert!(
        t.fct_rtts > 4.5 && t.fct_rtts < 5.5,
        "TCP: {:.2} RTTs",
        t.fct_rtts
    );
    assert!(
        t.fct_rtts - r.fct_rtts >= 1.0,
        "{:.2} vs {:.2}",
        t.fct_rtts,
        r.fct_rtts
    );
    assert!(t.departures.iter().all(|d| d.dscp == 0));
}

/// Spec A21: RC3 against a standard SACK receiver, whose ACKs for the copies come
/// back at DSCP 0. Classified by content, they start no recovery and the stream
/// arrives intact, as fast.
pub fn rc3_works_against_an_unmodified_receiver() {
    let r = run(true, false, true);
    assert_eq!(r.received, expected_data());
    let info = r.client_info.rc3.expect("rc3 counters");
    assert!(info.low_acks > 30, "{info:?}");
    assert_eq!(info.low_acks_sent, 0);
    assert_eq!(r.client_info.retransmits, 0);
    assert!(
        r.cwnd_trace.windows(2).all(|w| w[1] >= w[0]),
        "{:?}",
        r.cwnd_trace
    );
    assert!(r.fct_rtts <= 4.0, "{:.2} RTTs", r.fct_rtts);
}

/// The receiver's half alone: RC3 on the receiver, a plain sender. Nothing arrives
/// at low priority, so nothing changes.
pub fn an_rc3_receiver_behind_a_plain_sender_is_plain_tcp() {
    let a = run(false, true, false);
    let b = run(false, false, false);
    assert_eq!(a.received, expected_data());
    assert_eq!(a.fct_rtts, b.fct_rtts);
    assert_eq!(a.departures.len(), b.departures.len());
}

/// A sender writing by reference sends the same packets at the same times as one
/// writing a copy, with RC3's copies, a loss and its recovery.
pub fn a_shared_write_sends_what_a_copied_one_does() {
    let (a, b) = (run(true, true, true), run_with(true, true, true, true));
    assert_eq!(a.departures, b.departures);
    assert_eq!(a.received, b.received);
    assert_eq!(a.cwnd_trace, b.cwnd_trace);
    assert_eq!(a.fct_rtts, b.fct_rtts);
    assert_eq!(a.client_info.retransmits, b.client_info.retransmits);
}

//! The split-TCP PEP's relay (brisk_sim::pep): bytes cross intact both ways, and its
//! buffers stay bounded when a fast sender feeds a slow onward leg.

use brisk_app::payload::{Pattern, RxStream, TxStream};
use brisk_net::{DropTail, Element, Link, LinkParams, Loss, Packet, QueueLimit};
use brisk_sim::pep::Relay;
use brisk_tcp::{Config, ConnHandle, Endpoint, EndpointConfig, Event, State};
use brisk_time::{Duration, Instant};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const C: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
const S: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
const P: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);

fn link(bps: u64, ms: u64) -> Link<DropTail> {
    Link::new(
        LinkParams {
            rate_bps: bps,
            delay: Duration::from_millis(ms),
            ..LinkParams::default()
        },
        DropTail::new(QueueLimit::Packets(100)).unwrap(),
        Loss::none(),
    )
    .unwrap()
}

struct Side {
    h: Option<ConnHandle>,
    tx: TxStream,
    rx: RxStream,
    closed: bool,
}

impl Side {
    fn new(tx_seed: u64, rx_seed: u64) -> Self {
        Side {
            h: None,
            tx: TxStream::new(Pattern::new(tx_seed)),
            rx: RxStream::new(Pattern::new(rx_seed)),
            closed: false,
        }
    }
    /// Writes up to `total` bytes, half-closes after; reads and checks everything.
    fn app(&mut self, ep: &mut Endpoint, total: u64, buf: &mut [u8]) -> bool {
        let Some(h) = self.h else { return false };
        let Some(c) = ep.conn_mut(h) else {
            return false;
        };
        let mut moved = false;
        if !matches!(c.state(), State::Established | State::CloseWait) && !self.closed {
            return false;
        }
        if self.tx.bytes < total {
            moved |= self.tx.write_pattern(c, total - self.tx.bytes) > 0;
        } else if !self.closed {
            c.shutdown_write();
            self.closed = true;
            moved = true;
        }
        loop {
            let n = c.read(buf);
            if n == 0 {
                break;
            }
            self.rx.check_pattern(self.rx.bytes, &buf[..n]);
            self.rx.account(&buf[..n]);
            moved = true;
        }
        moved
    }
}

struct Outcome {
    up_ok: bool,
    down_ok: bool,
    high_water: usize,
    max_pep_socket: (usize, usize),
}

/// A client uploads `up` bytes and downloads `down` bytes through a PEP whose onward
/// leg is `onward_bps` with `onward_ms` one way; the PEP's pipes and sockets hold
/// `pep_buf` bytes.
fn transfer(
    seed: u64,
    up: u64,
    down: u64,
    onward_bps: u64,
    onward_ms: u64,
    pep_buf: usize,
) -> Outcome {
    let ep = |a, s| Endpoint::new(IpAddr::V4(a), EndpointConfig::seeded([7; 16], s));
    let (mut c, mut p, mut s) = (ep(C, seed), ep(P, seed ^ 1), ep(S, seed ^ 2));
    let leg = Config {
        send_buffer: pep_buf,
        recv_buffer: pep_buf,
        ..Config::default()
    };
    p.listen(80, 16, leg.clone()).unwrap();
    s.listen(80, 16, Config::default()).unwrap();
    let now0 = Instant::ZERO;
    let mut cli = Side::new(seed * 10 + 1, seed * 10 + 2);
    let mut srv = Side::new(seed * 10 + 2, seed * 10 + 1);
    cli.h = Some(
        c.connect(
            now0,
            0,
            SocketAddr::new(IpAddr::V4(P), 80),
            Config::default(),
        )
        .unwrap(),
    );
    let (mut c_p, mut p_c) = (link(100_000_000, 1), link(100_000_000, 1));
    let (mut p_s, mut s_p) = (link(onward_bps, onward_ms), link(onward_bps, onward_ms));
    let mut relays: Vec<Relay> = Vec::new();
    let mut now = now0;
    let mut buf = vec![0u8; 2048];
    let mut scratch = vec![0u8; 65536];
    let mut id = 0u64;
    let mut high_socket = (0, 0);
    let end = Instant::from_secs(600);
    let pkt = |b: &Vec<u8>, id: u64, now| Packet {
        data: b.clone(),
        id,
        flow: 0,
        sent_at: now,
        l4_csum_valid: true,
    };
    loop {
        for e in [&mut c, &mut p, &mut s] {
            if e.poll_timeout().is_some_and(|t| t <= now) {
                e.handle_timeout(now);
            }
        }
        let mut steps = 0;
        loop {
            let mut moved = false;
            while let Some((_, ev)) = p.poll_event() {
                if let Event::Incoming { port } = ev {
                    while let Some(a) = p.accept(port) {
                        let b = p
                            .connect(now, 0, SocketAddr::new(IpAddr::V4(S), 80), leg.clone())
                            .unwrap();
                        relays.push(Relay::new(a, b, pep_buf));
                        moved = true;
                    }
                }
            }
            while let Some((_, ev)) = s.poll_event() {
                if let Event::Incoming { port } = ev {
                    if let Some(h) = s.accept(port) {
                        srv.h = Some(h);
                        moved = true;
                    }
                }
            }
            while c.poll_event().is_some() {}
            for r in &mut relays {
                moved |= r.pump(&mut p, &mut scratch);
                high_socket.0 = high_socket.0.max(r.buffered());
            }
            // Every PEP socket stays within its buffers.
            for r in &relays {
                for h in [r.accepted, r.opened] {
                    if let Some(x) = p.conn(h) {
                        high_socket.1 = high_socket.1.max(x.send_buffered().max(x.readable()));
                    }
                }
            }
            moved |= cli.app(&mut c, up, &mut scratch);
            moved |= srv.app(&mut s, down, &mut scratch);
            while c.poll_transmit(now, &mut buf).is_some() {
                id += 1;
                c_p.handle_packet(now, pkt(&buf, id, now));
                moved = true;
            }
            while s.poll_transmit(now, &mut buf).is_some() {
                id += 1;
                s_p.handle_packet(now, pkt(&buf, id, now));
                moved = true;
            }
            while p.poll_transmit(now, &mut buf).is_some() {
                id += 1;
                let to_client = buf[16..20] == C.octets();
                if to_client {
                    p_c.handle_packet(now, pkt(&buf, id, now));
                } else {
                    p_s.handle_packet(now, pkt(&buf, id, now));
                }
                moved = true;
            }
            for l in [&mut c_p, &mut s_p] {
                while let Some(x) = l.poll_packet(now) {
                    p.handle_packet(now, &x.data);
                    moved = true;
                }
            }
            while let Some(x) = p_c.poll_packet(now) {
                c.handle_packet(now, &x.data);
                moved = true;
            }
            while let Some(x) = p_s.poll_packet(now) {
                s.handle_packet(now, &x.data);
                moved = true;
            }
            steps += 1;
            assert!(steps < 100_000, "livelock");
            if !moved {
                break;
            }
        }
        if cli.rx.bytes == down && srv.rx.bytes == up {
            break;
        }
        let next = [
            c.poll_timeout(),
            p.poll_timeout(),
            s.poll_timeout(),
            c_p.poll_timeout(),
            p_c.poll_timeout(),
            p_s.poll_timeout(),
            s_p.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min();
        match next {
            Some(t) if t < end => now = t.max(now),
            _ => break,
        }
    }
    let hw = relays
        .iter()
        .map(|r| r.counters().high_water)
        .max()
        .unwrap_or(0);
    Outcome {
        up_ok: srv.rx.bytes == up && srv.rx.bad_bytes == 0 && srv.rx.sha256() == cli.tx.sha256(),
        down_ok: cli.rx.bytes == down
            && cli.rx.bad_bytes == 0
            && cli.rx.sha256() == srv.tx.sha256(),
        high_water: hw.max(high_socket.0),
        max_pep_socket: high_socket,
    }
}

#[test]
fn bytes_cross_the_pep_intact_both_ways_over_seeds() {
    for seed in 1..=5 {
        let o = transfer(
            seed,
            300_000 + seed * 7_919,
            1_000_000 + seed * 104_729,
            8_000_000,
            50,
            256 * 1024,
        );
        assert!(o.up_ok, "seed {seed}: upload differs");
        assert!(o.down_ok, "seed {seed}: download differs");
    }
}

#[test]
fn pep_buffers_stay_bounded_under_a_fast_sender() {
    // 100 Mbit/s in, 1 Mbit/s on: without a bound the PEP would hold the whole upload.
    let cap = 32 * 1024;
    let o = transfer(3, 2_000_000, 1000, 1_000_000, 100, cap);
    assert!(o.up_ok && o.down_ok);
    assert!(
        o.high_water <= 2 * cap,
        "pipes held {} bytes (cap {cap} each way)",
        o.high_water
    );
    assert!(
        o.high_water >= cap / 2,
        "the pipe never filled: the test does not stress it"
    );
    assert!(
        o.max_pep_socket.1 <= cap,
        "a PEP socket held {} bytes over its {cap}-byte buffer",
        o.max_pep_socket.1
    );
}

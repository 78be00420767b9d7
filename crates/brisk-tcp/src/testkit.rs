//! Test kit, not API (hidden from the docs): shared by the unit tests and the design-claim
//! checks `brisk repro` runs (`claim_checks`).
//!
//! `Pair`: two endpoints, one clock, a configurable one-way latency and a per-packet
//! hook to drop, duplicate, delay or CE-mark packets. Packets go through `emit_tcp_packet` /
//! `parse_tcp_packet`, so the tests exercise the real wire format.

use crate::config::Config;
use crate::endpoint::{ConnHandle, Endpoint, EndpointConfig};
use crate::event::Event;
use brisk_time::{Duration, Instant};
use brisk_wire::{parse_tcp_packet, Ecn, Flags, SeqNum, TcpRepr};
use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

pub const CLIENT_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
pub const SERVER_IP: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
pub const PORT: u16 = 80;

/// What the hook decides for one packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    Deliver,
    Drop,
    Duplicate,
    /// Deliver after this much extra delay (reordering).
    Delay(Duration),
    /// Deliver with the IP ECN field set to CE (RFC 3168 §5), as an AQM would; a
    /// not-ECT packet is delivered unmarked (an AQM would drop it instead).
    MarkCe,
}

/// A parsed view of a packet for hooks and assertions (payload length only).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Seen {
    pub at: Instant,
    pub to_server: bool,
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: Flags,
    pub window: u16,
    pub len: usize,
    pub ecn: Ecn,
    /// Per-direction index of this packet (0-based).
    pub index: usize,
    /// TCP ports (an MPTCP connection's subflows differ by them).
    pub src_port: u16,
    pub dst_port: u16,
}

type Hook = Box<dyn FnMut(&Seen) -> Action>;
/// Rewrites a packet's bytes in flight (after logging, before the hook's action), as
/// a middlebox would.
type Rewrite = Box<dyn FnMut(&Seen, &mut Vec<u8>)>;

pub struct Pair {
    pub now: Instant,
    pub client: Endpoint,
    pub server: Endpoint,
    pub latency: Duration,
    /// Every packet emitted, in order (before the hook).
    pub log: Vec<(Seen, Vec<u8>)>,
    pub client_events: Vec<(ConnHandle, Event)>,
    pub server_events: Vec<(ConnHandle, Event)>,
    hook: Option<Hook>,
    rewrite: Option<Rewrite>,
    client_cfg: Config,
    wire: BTreeMap<(Instant, u64), (bool, Vec<u8>)>,
    next_id: u64,
    sent: [usize; 2],
    buf: Vec<u8>,
}

impl Pair {
    pub fn new(latency: Duration) -> Self {
        Self::with_configs(latency, Config::default(), Config::default())
    }

    pub fn with_configs(latency: Duration, client: Config, server: Config) -> Self {
        let ccfg = EndpointConfig {
            isn_secret: [1; 16],
            rng_seed: 1,
            ..EndpointConfig::seeded([7; 16], 7)
        };
        let scfg = EndpointConfig {
            isn_secret: [2; 16],
            rng_seed: 2,
            ..EndpointConfig::seeded([7; 16], 7)
        };
        let mut s = Endpoint::new(SERVER_IP, scfg);
        s.listen(PORT, 128, server).unwrap();
        Pair {
            now: Instant::from_millis(1),
            client: Endpoint::new(CLIENT_IP, ccfg),
            server: s,
            latency,
            log: Vec::new(),
            client_events: Vec::new(),
            server_events: Vec::new(),
            hook: None,
            rewrite: None,
            client_cfg: client,
            wire: BTreeMap::new(),
            next_id: 0,
            sent: [0, 0],
            buf: Vec::new(),
        }
    }

    pub fn set_hook(&mut self, f: impl FnMut(&Seen) -> Action + 'static) {
        self.hook = Some(Box::new(f));
    }
    pub fn clear_hook(&mut self) {
        self.hook = None;
    }

    /// Rewrites packets in flight (a middlebox); the log keeps what was sent.
    pub fn set_rewrite(&mut self, f: impl FnMut(&Seen, &mut Vec<u8>) + 'static) {
        self.rewrite = Some(Box::new(f));
    }

    pub fn server_addr() -> SocketAddr {
        SocketAddr::new(SERVER_IP, PORT)
    }

    /// Starts a connection with the client endpoint's default config.
    pub fn connect(&mut self) -> ConnHandle {
        let cfg = self.client_default();
        self.client
            .connect(self.now, 0, Self::server_addr(), cfg)
            .unwrap()
    }

    fn client_default(&self) -> Config {
        // Endpoint keeps the default config private; rebuild from our own copy.
        self.client_cfg.clone()
    }

    /// Connects and accepts; returns (client handle, server handle).
    pub fn establish(&mut self) -> (ConnHandle, ConnHandle) {
        let c = self.connect();
        self.drive();
        let s = self.server.accept(PORT).expect("server accepted");
        (c, s)
    }

    /// Moves every pending output onto the wire.
    fn flush(&mut self) {
        for to_server in [true, false] {
            loop {
                let ep = if to_server {
                    &mut self.client
                } else {
                    &mut self.server
                };
                let Some(_t) = ep.poll_transmit(self.now, &mut self.buf) else {
                    break;
                };
                let bytes = self.buf.clone();
                let (ip, tcp) = parse_tcp_packet(&bytes).expect("we emit valid packets");
                let dir = usize::from(!to_server);
                let seen = Seen {
                    at: self.now,
                    to_server,
                    seq: tcp.seq,
                    ack: tcp.ack,
                    flags: tcp.flags,
                    window: tcp.window,
                    len: tcp.payload.len(),
                    ecn: ip.ecn(),
                    index: self.sent[dir],
                    src_port: tcp.src_port,
                    dst_port: tcp.dst_port,
                };
                self.sent[dir] += 1;
                self.log.push((seen, bytes.clone()));
                let mut bytes = bytes;
                if let Some(r) = self.rewrite.as_mut() {
                    r(&seen, &mut bytes);
                }
                let action = self.hook.as_mut().map_or(Action::Deliver, |h| h(&seen));
                match action {
                    Action::Deliver => self.schedule(self.latency, to_server, bytes),
                    Action::Drop => {}
                    Action::Duplicate => {
                        self.schedule(self.latency, to_server, bytes.clone());
                        self.schedule(self.latency, to_server, bytes);
                    }
                    Action::Delay(d) => self.schedule(self.latency + d, to_server, bytes),
                    Action::MarkCe => {
                        let mut bytes = bytes;
                        brisk_wire::mark_ce(&mut bytes);
                        self.schedule(self.latency, to_server, bytes);
                    }
                }
            }
        }
    }

    fn schedule(&mut self, delay: Duration, to_server: bool, bytes: Vec<u8>) {
        self.wire
            .insert((self.now + delay, self.next_id), (to_server, bytes));
        self.next_id += 1;
    }

    /// Injects raw bytes to the server (or client) after the latency.
    pub fn inject(&mut self, to_server: bool, bytes: Vec<u8>) {
        self.schedule(self.latency, to_server, bytes);
    }

    fn collect_events(&mut self) {
        while let Some(e) = self.client.poll_event() {
            self.client_events.push(e);
        }
        while let Some(e) = self.server.poll_event() {
            self.server_events.push(e);
        }
    }

    /// The next instant anything happens (packet arrival or timer).
    fn next_time(&self) -> Option<Instant> {
        let arrival = self.wire.keys().next().map(|k| k.0);
        [
            arrival,
            self.client.poll_timeout(),
            self.server.poll_timeout(),
        ]
        .into_iter()
        .flatten()
        .min()
    }

    /// Flushes output, then advances to the next event (not beyond `limit`) and
    /// processes it. Returns false if nothing is due before `limit`.
    pub fn step_until(&mut self, limit: Instant) -> bool {
        self.flush();
        self.collect_events();
        let Some(t) = self.next_time() else {
            return false;
        };
        if t > limit {
            return false;
        }
        self.now = self.now.max(t);
        while let Some(entry) = self.wire.first_entry() {
            if entry.key().0 > self.now {
                break;
            }
            let (to_server, bytes) = entry.remove();
            if to_server {
                self.server.handle_packet(self.now, &bytes);
            } else {
                self.client.handle_packet(self.now, &bytes);
            }
        }
        self.client.handle_timeout(self.now);
        self.server.handle_timeout(self.now);
        self.flush();
        self.collect_events();
        true
    }

    /// Runs while packets are in flight; timers fire only if due before the next
    /// arrival. Stops when the wire is empty.
    pub fn drive(&mut self) {
        for _ in 0..1_000_000 {
            self.flush();
            if self.wire.is_empty() {
                self.collect_events();
                return;
            }
            self.step_until(Instant::MAX);
        }
        panic!("drive did not settle");
    }

    /// Runs everything (timers included) for `d` of virtual time.
    pub fn advance(&mut self, d: Duration) {
        let end = self.now + d;
        let mut n = 0;
        while self.step_until(end) {
            n += 1;
            assert!(n < 10_000_000, "advance did not settle");
        }
        self.now = self.now.max(end);
        self.flush();
        self.collect_events();
    }

    /// Runs (timers included) until `pred` holds or `max` elapses; returns whether it held.
    pub fn run_until(&mut self, max: Duration, mut pred: impl FnMut(&mut Pair) -> bool) -> bool {
        let end = self.now + max;
        loop {
            if pred(self) {
                return true;
            }
            if !self.step_until(end) {
                return pred(self);
            }
        }
    }

    /// Packets logged in one direction.
    pub fn seen(&self, to_server: bool) -> Vec<Seen> {
        self.log
            .iter()
            .filter(|(s, _)| s.to_server == to_server)
            .map(|(s, _)| *s)
            .collect()
    }

    /// Parses a logged packet again (for option-level assertions).
    pub fn logged_repr(&self, i: usize) -> TcpRepr<'_> {
        parse_tcp_packet(&self.log[i].1).unwrap().1
    }

    pub fn client_has(&self, ev: Event) -> bool {
        self.client_events.iter().any(|e| e.1 == ev)
    }
    pub fn server_has(&self, ev: Event) -> bool {
        self.server_events.iter().any(|e| e.1 == ev)
    }

    pub fn read_all(ep: &mut Endpoint, h: ConnHandle, out: &mut Vec<u8>) {
        let mut buf = [0u8; 65536];
        if let Some(c) = ep.conn_mut(h) {
            loop {
                let n = c.read(&mut buf);
                if n == 0 {
                    break;
                }
                out.extend_from_slice(&buf[..n]);
            }
        }
    }
}

/// `n` seeded pseudo-random bytes (ChaCha8), the payload of the transfer tests.
pub fn pattern(n: usize, seed: u64) -> Vec<u8> {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    (0..n).map(|_| rng.gen()).collect()
}

//! Targets `endpoint` and `conn`: brisk-tcp's `Endpoint` at 10.0.0.1 against peers
//! the harness plays, with virtual time.
//!
//! Each peer is a reference sender: every payload byte it puts at sequence number `s`
//! is [`stream_byte`]`(peer, s)`, whatever the segment (retransmission, overlap, a SYN
//! with data, a wild sequence number). The harness learns each connection's IRS from
//! the endpoint's SYN-ACK (its ACK field is IRS + 1), or, for an active open, from the
//! SYN-ACK that moved it out of SYN-SENT, so every byte the application reads, in order
//! (`read`) or out of order (`read_unordered`, at its stated offset), must be the
//! peer's byte at IRS + 1 + offset. Reassembly that duplicates, shifts, drops or splices
//! bytes breaks that check.
//!
//! After every input the harness also checks that every emitted packet parses and
//! round-trips, and that tables, queues and buffers are within their configured limits.

use crate::input::Input;
use crate::mp_peer::{self, MpPeer, SegCtx};
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::{Config, ConnHandle, Endpoint, EndpointConfig, Event, State};
use brisk_time::{Duration, Instant};
use brisk_wire::{
    emit_tcp_packet, parse_tcp_packet, Ecn, Flags, IpRepr, Ipv4Repr, SackBlock, SeqNum, TcpRepr,
    Timestamps, WindowScale, IPPROTO_TCP,
};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};

const LOCAL: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const LISTEN_PORT: u16 = 80;
/// A second listener, with MPTCP configured (`Config::mptcp`): peers 2 and 3 talk to
/// it with MPTCP options on their segments.
const MPTCP_PORT: u16 = 81;
const ACTIVE_PORT: u16 = 5555;
const PEERS: usize = 4;
/// Most operations per input, so no input runs for long.
const MAX_OPS: usize = 256;
/// Most packets one poll loop may emit: far above any legitimate burst of the small
/// buffers configured here, so reaching it means the endpoint does not go quiet.
const MAX_BURST: usize = 20_000;
/// The endpoint's bounds on queued stateless RSTs and on queued events
/// (`MAX_PENDING_RSTS`, `MAX_EVENTS` in endpoint.rs).
const MAX_PENDING_RSTS: usize = 1024;
const MAX_EVENTS: usize = 1 << 16;

/// The reference stream: the byte a peer sends at sequence number `seq`.
pub fn stream_byte(peer: usize, seq: u32) -> u8 {
    let x = (seq ^ (peer as u32).wrapping_mul(0x85eb_ca6b)).wrapping_mul(0x9e37_79b1);
    (x >> 24) as u8 ^ (x >> 11) as u8
}

#[derive(Clone, Copy, Debug)]
struct Peer {
    addr: SocketAddr,
    /// Local port the peer talks to (the listener, or the active opener's port).
    local_port: u16,
    /// The peer's ISN: its SYNs carry it unless the input says otherwise.
    isn: u32,
    /// Next sequence number the peer sends in order.
    next: u32,
    /// The endpoint's ISN and the highest sequence it has sent (seq + len).
    ep_iss: u32,
    ep_max: u32,
    /// The connection's IRS as the endpoint holds it.
    irs: Option<u32>,
    /// Last TSval the endpoint sent (echoed in our TSecr).
    ep_tsval: u32,
    /// MPTCP: the peer's key, the endpoint's once seen; off for peers 0 and 1.
    mp: MpPeer,
    /// The peer has sent its MP_CAPABLE third ACK (reset by its next SYN).
    mp_done: bool,
}

struct Track {
    h: ConnHandle,
    peer: usize,
    /// Bytes read in order so far.
    read: u64,
}

struct Limits {
    max_connections: usize,
    backlog: usize,
    config: Config,
}

struct World {
    ep: Endpoint,
    now: Instant,
    peers: [Peer; PEERS],
    tracks: Vec<Track>,
    limits: Limits,
    unordered: bool,
    out: Vec<u8>,
    pkt: Vec<u8>,
    buf: Vec<u8>,
}

impl World {
    /// An endpoint listening on port 80, its limits and options from `cfg`.
    fn new(cfg: u8) -> World {
        Self::with_cc(cfg, CcAlgorithm::default())
    }

    /// As [`World::new`], every connection running the controller `cc`.
    fn with_cc(cfg: u8, cc: CcAlgorithm) -> World {
        let mut config = Config {
            recv_buffer: if cfg & 1 == 0 { 4096 } else { 65_536 },
            send_buffer: if cfg & 2 == 0 { 8192 } else { 65_536 },
            max_ooo_segments: if cfg & 4 == 0 { 4 } else { 64 },
            unordered: cfg & 8 != 0,
            ..Config::default()
        };
        config.congestion.controller = cc.into();
        config.options.sack = cfg & 16 == 0;
        config.options.timestamps = cfg & 32 == 0;
        config.options.window_scaling = cfg & 64 == 0;
        let limits = Limits {
            max_connections: if cfg & 128 == 0 { 3 } else { 8 },
            backlog: if cfg & 128 == 0 { 1 } else { 4 },
            config,
        };
        let mut ec = EndpointConfig::seeded([7; 16], 1);
        ec.max_connections = limits.max_connections;
        let mut ep = Endpoint::new(IpAddr::V4(LOCAL), ec);
        ep.listen(LISTEN_PORT, limits.backlog, limits.config.clone())
            .expect("listen on a fresh endpoint");
        ep.listen(MPTCP_PORT, limits.backlog, mptcp_config(&limits.config))
            .expect("listen on a fresh endpoint");
        let peers = std::array::from_fn(|k| {
            let isn = 0x1000_0000u32.wrapping_mul(k as u32 + 1).wrapping_sub(1000);
            let mptcp = k >= 2;
            Peer {
                addr: SocketAddr::new(
                    IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2 + (k / 2) as u8)),
                    40_000 + (k % 2) as u16,
                ),
                local_port: if mptcp { MPTCP_PORT } else { LISTEN_PORT },
                isn,
                next: isn.wrapping_add(1),
                ep_iss: 0,
                ep_max: 0,
                irs: None,
                ep_tsval: 0,
                mp: MpPeer::new(mptcp, k),
                mp_done: false,
            }
        });
        World {
            ep,
            now: Instant::from_secs(1),
            peers,
            tracks: Vec::new(),
            unordered: limits.config.unordered,
            limits,
            out: Vec::new(),
            pkt: Vec::new(),
            buf: vec![0; 70_000],
        }
    }

    fn peer_of(&self, remote: SocketAddr, local_port: u16) -> Option<usize> {
        self.peers
            .iter()
            .position(|p| p.addr == remote && p.local_port == local_port)
    }

    fn ip(&self, k: usize) -> IpRepr {
        let IpAddr::V4(src) = self.peers[k].addr.ip() else {
            unreachable!("peers are IPv4")
        };
        IpRepr::V4(Ipv4Repr {
            src,
            dst: LOCAL,
            protocol: IPPROTO_TCP,
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 0,
            dont_frag: true,
            payload_len: 0,
        })
    }

    /// The live connection with peer `k`, found by scanning the (small) table.
    fn find(&self, k: usize) -> Option<ConnHandle> {
        let p = &self.peers[k];
        (0..self.limits.max_connections as u32 + 1)
            .map(ConnHandle)
            .find(|&h| {
                self.ep
                    .conn(h)
                    .is_some_and(|c| c.remote() == p.addr && c.local().port() == p.local_port)
            })
    }

    /// Sends `seg` from peer `k` (its payload already the reference bytes).
    fn send(&mut self, k: usize, seg: &TcpRepr<'_>) {
        let active = self
            .find(k)
            .filter(|_| self.peers[k].local_port == ACTIVE_PORT);
        let before = active.and_then(|h| self.ep.conn(h)).map(|c| c.state());
        let ip = self.ip(k);
        emit_tcp_packet(&ip, seg, &mut self.pkt);
        let pkt = std::mem::take(&mut self.pkt);
        self.ep.handle_packet(self.now, &pkt);
        self.pkt = pkt;
        // An active open learns its IRS from the SYN that took it out of SYN-SENT.
        let after = active.and_then(|h| self.ep.conn(h)).map(|c| c.state());
        if before == Some(State::SynSent) && after != before && seg.flags.syn() {
            self.peers[k].irs = Some(seg.seq.0);
        }
        // The peer's in-order point moves when it sends the next bytes.
        let p = &mut self.peers[k];
        if seg.flags.syn() {
            p.mp_done = false;
        } else if seg.flags.ack() && p.mp.ep_key.is_some() {
            p.mp_done = true;
        }
        let start = seg.seq + u32::from(seg.flags.syn());
        let end = seg.seq + seg.seg_len();
        if start.diff(SeqNum(p.next)) <= 0 && end.diff(SeqNum(p.next)) > 0 {
            p.next = end.0;
        }
        self.pump();
    }

    /// Drains the endpoint's output and events, then checks the limits.
    fn pump(&mut self) {
        let mut n = 0;
        while let Some(t) = self.ep.poll_transmit(self.now, &mut self.out) {
            n += 1;
            assert!(n <= MAX_BURST, "endpoint keeps transmitting: {n} packets");
            assert_eq!(t.len, self.out.len());
            let (ip, tcp) = parse_tcp_packet(&self.out).expect("emitted packet parses");
            crate::wire::round_trip(&ip, &tcp);
            assert_eq!(ip.src(), IpAddr::V4(LOCAL), "source address");
            let remote = SocketAddr::new(ip.dst(), tcp.dst_port);
            let Some(k) = self.peer_of(remote, tcp.src_port) else {
                continue; // an RST to a raw packet's source
            };
            let p = &mut self.peers[k];
            if tcp.flags.syn() {
                p.ep_iss = tcp.seq.0;
                p.ep_max = tcp.seq.0.wrapping_add(1);
                if tcp.flags.ack() {
                    p.irs = Some(tcp.ack.0.wrapping_sub(1));
                }
            }
            let end = tcp.seq + tcp.seg_len();
            if end.diff(SeqNum(p.ep_max)) > 0 {
                p.ep_max = end.0;
            }
            if let Some(ts) = tcp.timestamps {
                p.ep_tsval = ts.tsval;
            }
            if p.mp.on {
                p.mp.learn(&tcp.extra);
            }
        }
        while let Some((h, ev)) = self.ep.poll_event() {
            match ev {
                Event::Incoming { port } => {
                    while let Some(h) = self.ep.accept(port) {
                        self.track(h);
                    }
                }
                Event::Connected => self.track(h),
                Event::Closed(_) => self.tracks.retain(|t| t.h != h),
                _ => {}
            }
        }
        self.check_limits();
    }

    fn track(&mut self, h: ConnHandle) {
        if self.tracks.iter().any(|t| t.h == h) {
            return;
        }
        let Some(c) = self.ep.conn(h) else { return };
        if let Some(peer) = self.peer_of(c.remote(), c.local().port()) {
            self.tracks.push(Track { h, peer, read: 0 });
        }
    }

    /// Memory within the configured limits.
    fn check_limits(&self) {
        let l = &self.limits;
        assert!(self.ep.connection_count() <= l.max_connections);
        let [slots, table, _timers, events, replies] = self.ep.footprint();
        assert!(slots <= l.max_connections, "slots {slots}");
        assert!(table <= l.max_connections, "4-tuple table {table}");
        assert!(events <= MAX_EVENTS, "events {events}");
        assert!(replies <= MAX_PENDING_RSTS, "queued RSTs {replies}");
        for i in 0..slots as u32 {
            let Some(c) = self.ep.conn(ConnHandle(i)) else {
                continue;
            };
            // An MPTCP connection's data level may hold one window granule more
            // than its buffer: the advertised edge never moves left, so the window
            // is rounded up to the scale (`mptcp::recv::DataRecv::advertise`, Linux
            // `mptcp_set_rwin`).
            let slack = if c.is_mptcp() {
                1usize << mptcp_config(&l.config).mptcp.map_or(0, |m| m.recv.wscale)
            } else {
                0
            };
            assert!(
                c.readable() <= l.config.recv_buffer + slack,
                "readable {} > recv_buffer {} + {slack}",
                c.readable(),
                l.config.recv_buffer
            );
            assert!(
                c.ooo_ranges() <= l.config.max_ooo_segments,
                "{} out-of-order ranges > max_ooo_segments {}",
                c.ooo_ranges(),
                l.config.max_ooo_segments
            );
            assert!(c.send_buffered() <= l.config.send_buffer, "send buffer");
        }
    }

    /// Reads what the application can and checks it against the reference stream.
    fn read(&mut self, which: u8) {
        if self.tracks.is_empty() {
            return;
        }
        let i = usize::from(which) % self.tracks.len();
        let (h, k) = (self.tracks[i].h, self.tracks[i].peer);
        let Some(irs) = self.peers[k].irs else { return };
        let base = irs.wrapping_add(1);
        let unordered = self.unordered;
        let Some(c) = self.ep.conn_mut(h) else { return };
        if unordered {
            while let Some(r) = c.read_unordered(&mut self.buf) {
                for (j, &b) in self.buf[..r.len].iter().enumerate() {
                    let seq = base.wrapping_add((r.offset + j as u64) as u32);
                    assert_eq!(
                        b,
                        stream_byte(k, seq),
                        "unordered read: byte {} of the stream differs from what peer {k} sent",
                        r.offset + j as u64
                    );
                }
            }
        } else {
            let n = c.read(&mut self.buf);
            let t = &mut self.tracks[i];
            for (j, &b) in self.buf[..n].iter().enumerate() {
                let seq = base.wrapping_add((t.read + j as u64) as u32);
                assert_eq!(
                    b,
                    stream_byte(k, seq),
                    "read: byte {} of the stream differs from what peer {k} sent",
                    t.read + j as u64
                );
            }
            t.read += n as u64;
        }
        self.pump();
    }

    fn advance(&mut self, d: Duration) {
        self.now = self.now.saturating_add(d);
        if self.ep.poll_timeout().is_some_and(|t| t <= self.now) {
            self.ep.handle_timeout(self.now);
        }
        self.pump();
    }

    /// A segment from peer `k`, its fields decoded from the input relative to what the
    /// peer knows (so most land near the windows), or raw.
    fn segment(&mut self, k: usize, inp: &mut Input<'_>) {
        const COMMON: [Flags; 12] = [
            Flags::ACK,
            Flags::ACK.union(Flags::PSH),
            Flags::ACK.union(Flags::FIN),
            Flags::SYN,
            Flags::SYN.union(Flags::ACK),
            Flags::RST,
            Flags::RST.union(Flags::ACK),
            Flags::FIN,
            Flags::ACK.union(Flags::URG),
            Flags::NONE,
            Flags::ACK.union(Flags::ECE),
            Flags::SYN.union(Flags::ECE).union(Flags::CWR),
        ];
        let fb = inp.u8();
        let flags = if fb < 240 {
            COMMON[usize::from(fb) % COMMON.len()]
        } else {
            Flags::from_bits_truncate(inp.u16())
        };
        let p = self.peers[k];
        let sm = inp.u8();
        let seq = match sm % 5 {
            0 if flags.syn() => p.isn,
            0 => p.next,
            1 => p.next.wrapping_add(u32::from(inp.u8()) * 8),
            2 => p.next.wrapping_sub(u32::from(inp.u8())),
            3 => p.next.wrapping_add((inp.u16() as i16 as i32 * 64) as u32),
            _ => inp.u32(),
        };
        let am = inp.u8();
        let ack = match am % 5 {
            0 => p.ep_max,
            1 => p.ep_max.wrapping_sub(u32::from(inp.u8())),
            2 => p.ep_iss.wrapping_add(1),
            3 => p.ep_max.wrapping_add((inp.u16() as i16 as i32) as u32),
            _ => inp.u32(),
        };
        // Bit 2 of the window byte: MPTCP options decoded from the input after the
        // payload length (the canonical ones otherwise, for an MPTCP peer).
        let wb = inp.u8();
        let window = match wb % 4 {
            0 => 65_535,
            1 => 0,
            _ => inp.u16(),
        };
        let ob = inp.u8();
        let mut seg = TcpRepr {
            src_port: p.addr.port(),
            dst_port: p.local_port,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window,
            urgent: if flags.contains(Flags::URG) {
                inp.u16()
            } else {
                0
            },
            mss: (ob & 1 != 0).then(|| if ob & 2 != 0 { inp.u16() } else { 1460 }),
            window_scale: (ob & 4 != 0)
                .then(|| WindowScale::clamped(if ob & 8 != 0 { inp.u8() } else { 7 })),
            sack_permitted: ob & 16 != 0,
            ..TcpRepr::default()
        };
        if ob & 32 != 0 {
            let tsval = if ob & 64 != 0 {
                inp.u32()
            } else {
                (self.now.as_millis() as u32).wrapping_add(k as u32 * 1000)
            };
            seg.timestamps = Some(Timestamps {
                tsval,
                tsecr: p.ep_tsval,
            });
        }
        if ob & 128 != 0 {
            for _ in 0..inp.u8() % 5 {
                let left = p.ep_max.wrapping_sub(u32::from(inp.u16()));
                let right = left.wrapping_add(u32::from(inp.u16()));
                seg.sack.push(SackBlock {
                    left: SeqNum(left),
                    right: SeqNum(right),
                });
            }
        }
        let len = match inp.u8() {
            0..=127 => 0,
            l @ 128..=191 => usize::from(l - 127) * 24,
            l @ 192..=254 => usize::from(l - 191) * 23,
            255 => usize::from(inp.u16() % 4000),
        };
        let len = if flags.rst() && len > 0 && fb.is_multiple_of(2) {
            0
        } else {
            len
        };
        let data_seq = seq.wrapping_add(u32::from(flags.syn()));
        let payload: Vec<u8> = (0..len as u32)
            .map(|i| stream_byte(k, data_seq.wrapping_add(i)))
            .collect();
        seg.payload = &payload;
        if p.mp.on || wb & 4 != 0 {
            let ctx = self.seg_ctx(k, flags, data_seq, &payload);
            seg.extra = if wb & 4 != 0 {
                mp_peer::fuzzed(&p.mp, inp, &ctx)
            } else {
                mp_peer::scripted(&p.mp, &ctx)
            };
        }
        self.send(k, &seg);
    }

    /// Where a segment of peer `k` with payload at `data_seq` sits, for its MPTCP
    /// options.
    fn seg_ctx<'a>(&self, k: usize, flags: Flags, data_seq: u32, payload: &'a [u8]) -> SegCtx<'a> {
        let p = &self.peers[k];
        let irs = p.irs.unwrap_or(p.isn);
        SegCtx {
            flags,
            sub_off: u64::from(data_seq.wrapping_sub(irs.wrapping_add(1))),
            payload,
            ep_acked: u64::from(p.ep_max.wrapping_sub(p.ep_iss.wrapping_add(1))),
            handshake: !p.mp_done,
        }
    }

    /// One operation decoded from the input.
    fn op(&mut self, inp: &mut Input<'_>, peers: usize) {
        let op = inp.u8();
        match op % 16 {
            0..=6 => {
                let k = usize::from(inp.u8()) % peers;
                self.segment(k, inp);
            }
            7 | 8 => self.read(inp.u8()),
            9 => {
                const STEPS: [u64; 10] =
                    [1, 5, 40, 200, 1000, 3000, 10_000, 60_000, 121_000, 600_000];
                let b = inp.u8();
                let ms = STEPS[usize::from(b) % STEPS.len()];
                self.advance(Duration::from_millis(ms));
            }
            10 => {
                // Run the timers for a while (retransmissions, keepalive, TIME-WAIT).
                for _ in 0..64 {
                    match self.ep.poll_timeout() {
                        Some(t) if t <= self.now.saturating_add(Duration::from_secs(300)) => {
                            self.now = self.now.max(t);
                            self.ep.handle_timeout(self.now);
                            self.pump();
                        }
                        _ => break,
                    }
                }
            }
            11 => {
                let Some(t) = self.pick(inp.u8()) else { return };
                let n = usize::from(inp.u16()) % 20_000;
                let data = vec![0x5a; n];
                if let Some(c) = self.ep.conn_mut(t) {
                    let w = c.write(&data);
                    assert!(w <= n);
                }
                self.pump();
            }
            12 => {
                let Some(t) = self.pick(inp.u8()) else { return };
                let how = inp.u8();
                if let Some(c) = self.ep.conn_mut(t) {
                    match how % 8 {
                        0..=4 => c.close(),
                        5 | 6 => c.shutdown_write(),
                        _ => c.abort(),
                    }
                }
                self.pump();
            }
            13 => {
                // A raw packet from a peer's address, checksums fixed up.
                let n = usize::from(inp.u8());
                let mut raw = inp.bytes(n).to_vec();
                if raw.len() >= 20 {
                    let k = usize::from(op >> 4) % peers;
                    let ip = self.ip(k);
                    let mut pkt = Vec::new();
                    ip.emit(&mut pkt);
                    let total = (pkt.len() + raw.len()) as u16;
                    pkt[2..4].copy_from_slice(&total.to_be_bytes());
                    pkt.append(&mut raw);
                    crate::wire::fix_checksums(&mut pkt);
                    self.ep.handle_packet(self.now, &pkt);
                    self.pump();
                }
            }
            14 => {
                // Arbitrary bytes as a packet.
                let n = usize::from(inp.u8());
                let raw = inp.bytes(n).to_vec();
                self.ep.handle_packet(self.now, &raw);
                self.pump();
            }
            _ => {
                // A burst: the peer sends its next segments in order.
                let k = usize::from(inp.u8()) % peers;
                let n = inp.u8() % 16;
                for _ in 0..n {
                    let p = self.peers[k];
                    let payload: Vec<u8> = (0..1000u32)
                        .map(|i| stream_byte(k, p.next.wrapping_add(i)))
                        .collect();
                    let extra = if p.mp.on {
                        let ctx = self.seg_ctx(k, Flags::ACK, p.next, &payload);
                        mp_peer::scripted(&p.mp, &ctx)
                    } else {
                        Default::default()
                    };
                    let seg = TcpRepr {
                        src_port: p.addr.port(),
                        dst_port: p.local_port,
                        seq: SeqNum(p.next),
                        ack: SeqNum(p.ep_max),
                        flags: Flags::ACK,
                        window: 65_535,
                        payload: &payload,
                        extra,
                        ..TcpRepr::default()
                    };
                    self.send(k, &seg);
                }
            }
        }
    }

    fn pick(&self, which: u8) -> Option<ConnHandle> {
        if self.tracks.is_empty() {
            return None;
        }
        Some(self.tracks[usize::from(which) % self.tracks.len()].h)
    }

    /// A well-formed segment from peer `k` at its next sequence number.
    fn scripted(&mut self, k: usize, flags: Flags, ack: u32, data: usize, opts: u8) {
        let p = self.peers[k];
        let seq = if flags.syn() { p.isn } else { p.next };
        let data_seq = seq.wrapping_add(u32::from(flags.syn()));
        let payload: Vec<u8> = (0..data as u32)
            .map(|i| stream_byte(k, data_seq.wrapping_add(i)))
            .collect();
        let syn = flags.syn();
        let extra = if p.mp.on {
            mp_peer::scripted(&p.mp, &self.seg_ctx(k, flags, data_seq, &payload))
        } else {
            Default::default()
        };
        let seg = TcpRepr {
            src_port: p.addr.port(),
            dst_port: p.local_port,
            seq: SeqNum(seq),
            ack: SeqNum(ack),
            flags,
            window: 65_535,
            mss: (syn && opts & 1 == 0).then_some(1460),
            window_scale: (syn && opts & 2 == 0).then_some(WindowScale::clamped(7)),
            sack_permitted: syn && opts & 4 == 0,
            timestamps: (opts & 8 == 0).then(|| Timestamps {
                tsval: (self.now.as_millis() as u32).wrapping_add(k as u32 * 1000),
                tsecr: p.ep_tsval,
            }),
            payload: &payload,
            extra,
            ..TcpRepr::default()
        };
        self.send(k, &seg);
    }

    fn state(&self, k: usize) -> Option<State> {
        self.find(k)
            .and_then(|h| self.ep.conn(h))
            .map(|c| c.state())
    }
}

/// `base` with MPTCP on (Linux 6.18's defaults, checksums as the config's byte says
/// elsewhere: off).
fn mptcp_config(base: &Config) -> Config {
    Config {
        mptcp: Some(Box::default()),
        ..base.clone()
    }
}

/// Target `endpoint`: the first byte picks limits and options; then up to 256
/// operations: segments from four peers, raw packets, time steps, reads, writes and
/// closes.
pub fn endpoint(data: &[u8]) {
    endpoint_with(data, CcAlgorithm::default());
}

/// Target `endpoint` with every connection running the controller `cc` (the smoke
/// run drives each controller that needs more of the connection than CUBIC, or that
/// sets cwnd outside `cong_avoid`, through the same inputs).
pub fn endpoint_with(data: &[u8], cc: CcAlgorithm) {
    let mut inp = Input::new(data);
    let mut w = World::with_cc(inp.u8(), cc);
    for _ in 0..MAX_OPS {
        if inp.is_empty() {
            break;
        }
        w.op(&mut inp, PEERS);
    }
    w.read(0);
    w.advance(Duration::from_secs(1));
}

/// The states `conn` drives a connection to before fuzzing it.
const TARGET_STATES: [State; 11] = [
    State::SynSent,
    State::SynReceived,
    State::SynReceived, // by simultaneous open
    State::Established,
    State::Established, // with data both ways
    State::FinWait1,
    State::FinWait2,
    State::CloseWait,
    State::Closing,
    State::LastAck,
    State::TimeWait,
];

/// Target `conn`: byte 0 picks the state (and whether the connection was opened
/// actively), byte 1 the limits and options, byte 2 the handshake's options (bit 4:
/// the connection is MPTCP, its peer's segments carrying MPTCP options; bit 5: the
/// peer asks for DSS checksums); a scripted exchange takes one connection to that
/// state, then up to 256 operations from its peer follow.
pub fn conn(data: &[u8]) {
    let mut inp = Input::new(data);
    let pick = inp.u8();
    let which = usize::from(pick & 0x7f) % TARGET_STATES.len();
    let active = which == 0 || which == 2 || (which != 1 && pick & 0x80 != 0);
    let mut w = World::new(inp.u8());
    let opts = inp.u8();
    let mptcp = opts & 0x10 != 0;
    if mptcp {
        let p = &mut w.peers[0];
        p.mp = MpPeer::new(true, 0);
        p.mp.csum = opts & 0x20 != 0;
        p.local_port = MPTCP_PORT;
    }
    let reached = script(&mut w, which, active, opts);
    // An MPTCP connection may take its own path through the states (DATA_FIN before
    // FIN, a fallback, a reset): the scripted prefix is not held to its state then.
    assert!(
        mptcp || reached == Some(TARGET_STATES[which]),
        "the scripted prefix must reach its state (script {which}, active {active}): {reached:?}"
    );
    for _ in 0..MAX_OPS {
        if inp.is_empty() {
            break;
        }
        w.op(&mut inp, 1);
    }
    w.read(0);
    w.advance(Duration::from_secs(1));
}

/// Drives peer 0's connection to `TARGET_STATES[which]`; returns the state reached.
fn script(w: &mut World, which: usize, active: bool, opts: u8) -> Option<State> {
    let k = 0;
    if active {
        w.peers[k].local_port = ACTIVE_PORT;
        let cfg = if w.peers[k].mp.on {
            mptcp_config(&w.limits.config)
        } else {
            w.limits.config.clone()
        };
        let remote = w.peers[k].addr;
        w.ep.connect(w.now, ACTIVE_PORT, remote, cfg).ok()?;
        w.pump();
        if which == 0 {
            return w.state(k);
        }
        if which == 2 {
            // Simultaneous open: the peer's own SYN crosses ours.
            w.scripted(k, Flags::SYN, 0, 0, opts);
            return w.state(k);
        }
        let ack = w.peers[k].ep_iss.wrapping_add(1);
        w.scripted(k, Flags::SYN | Flags::ACK, ack, 0, opts);
    } else {
        w.scripted(k, Flags::SYN, 0, 0, opts);
        if which == 1 {
            return w.state(k);
        }
        let ack = w.peers[k].ep_iss.wrapping_add(1);
        w.scripted(k, Flags::ACK, ack, 0, opts);
    }
    let h = w.find(k)?;
    if which == 4 {
        // Data both ways, acknowledged.
        if let Some(c) = w.ep.conn_mut(h) {
            let _ = c.write(&[0xa5; 3000]);
        }
        w.pump();
        let ack = w.peers[k].ep_max;
        w.scripted(k, Flags::ACK | Flags::PSH, ack, 1000, opts);
        w.read(0);
    }
    if which <= 4 {
        return w.state(k);
    }
    let una = w.peers[k].ep_max;
    match TARGET_STATES[which] {
        State::CloseWait | State::LastAck => {
            w.scripted(k, Flags::FIN | Flags::ACK, una, 0, opts);
            if TARGET_STATES[which] == State::LastAck {
                w.ep.conn_mut(h)?.close();
                w.pump();
            }
        }
        _ => {
            w.ep.conn_mut(h)?.close();
            w.pump();
            let fin_acked = w.peers[k].ep_max; // covers our FIN
            match TARGET_STATES[which] {
                State::FinWait2 => w.scripted(k, Flags::ACK, fin_acked, 0, opts),
                State::Closing => w.scripted(k, Flags::FIN | Flags::ACK, una, 0, opts),
                State::TimeWait => {
                    w.scripted(k, Flags::ACK, fin_acked, 0, opts);
                    w.scripted(k, Flags::FIN | Flags::ACK, fin_acked, 0, opts);
                }
                _ => {}
            }
        }
    }
    w.state(k)
}

/// Seed encoders: the bytes [`World::op`] decodes into one operation.
mod enc {
    /// A segment from peer `k`: flags by index into `COMMON`, sequence and ACK modes,
    /// timestamps on (`opts` adds MSS, window scale and SACK-permitted on SYNs), and a
    /// length code (see `segment`).
    pub fn seg(k: u8, flags: u8, seq_mode: u8, ack_mode: u8, syn: bool, len: u8) -> Vec<u8> {
        let opts = if syn { 1 | 4 | 16 | 32 } else { 32 };
        vec![0, k, flags, seq_mode, ack_mode, 0, opts, len]
    }
    /// As [`seg`], with MPTCP options decoded from `mp` (count, then per option a
    /// selector, a variant byte and fields: see `mp_peer::fuzzed`).
    pub fn seg_mp(k: u8, flags: u8, len: u8, syn: bool, mp: &[u8]) -> Vec<u8> {
        let mut s = seg(k, flags, 0, 0, syn, len);
        s[5] = 4;
        s.extend_from_slice(mp);
        s
    }
    pub const SYN: u8 = 3;
    pub const ACK: u8 = 0;
    pub const ACK_PSH: u8 = 1;
    pub const ACK_FIN: u8 = 2;
    pub fn read(which: u8) -> Vec<u8> {
        vec![7, which]
    }
    /// Time step by index into `STEPS`.
    pub fn wait(step: u8) -> Vec<u8> {
        vec![9, step]
    }
    pub fn timers() -> Vec<u8> {
        vec![10]
    }
    pub fn write(which: u8, n: u16) -> Vec<u8> {
        let [a, b] = n.to_be_bytes();
        vec![11, which, a, b]
    }
    pub fn close(which: u8) -> Vec<u8> {
        vec![12, which, 0]
    }
    pub fn burst(k: u8, n: u8) -> Vec<u8> {
        vec![15, k, n]
    }
}

/// Seeds: handshakes, transfers with holes, reads, closes and time.
pub(crate) fn endpoint_seeds() -> Vec<Vec<u8>> {
    use enc::*;
    let mut seeds = Vec::new();
    for cfg in [0u8, 0x81, 0x08, 0xff, 0x09] {
        let mut s = vec![cfg];
        for k in 0..2 {
            s.extend(seg(k, SYN, 0, 0, true, 0));
            s.extend(seg(k, ACK, 0, 0, false, 0));
        }
        s.extend(burst(0, 3));
        s.extend(seg(1, ACK_PSH, 1, 0, false, 150)); // past a hole
        s.push(2); // (the hole's size in sequence mode 1: 2 * 8 bytes)
        s.extend(seg(1, ACK_PSH, 0, 0, false, 130));
        s.extend(read(0));
        s.extend(read(1));
        s.extend(write(0, 5000));
        s.extend(wait(3));
        s.extend(seg(0, ACK, 0, 0, false, 0));
        s.extend(close(1));
        s.extend(seg(0, ACK_FIN, 0, 0, false, 0));
        s.extend(timers());
        s.extend(wait(8));
        seeds.push(s);
    }
    // MPTCP peers (2 and 3, the MPTCP listener): the handshake and data with the
    // canonical options, then each control option, valid and mangled.
    for cfg in [0u8, 0x81, 0x08] {
        let mut s = vec![cfg];
        for k in 2..4 {
            s.extend(seg(k, SYN, 0, 0, true, 0));
            s.extend(seg(k, ACK, 0, 0, false, 0));
        }
        s.extend(burst(2, 3));
        s.extend(seg(3, ACK_PSH, 0, 0, false, 130));
        s.extend(read(0));
        s.extend(write(0, 3000));
        // ADD_ADDR (good HMAC, v4 with port), echo, MP_PRIO, REMOVE_ADDR.
        s.extend(seg_mp(
            2,
            ACK,
            0,
            false,
            &[2, 3, 2, 5, 0, 1, 2, 0x1f, 0x90, 5, 1],
        ));
        s.extend(seg_mp(2, ACK, 0, false, &[2, 3, 0, 5, 0, 1, 2, 4, 0, 7]));
        // DSS with a good data ACK and mapping; one 1 GiB ahead; a mangled one.
        s.extend(seg_mp(3, ACK_PSH, 140, false, &[2, 2, 6, 0, 2, 15]));
        s.extend(seg_mp(3, ACK_PSH, 140, false, &[1, 0x82, 6, 0, 3, 1]));
        // MP_FAIL, MP_TCPRST, MP_FASTCLOSE (our key).
        s.extend(seg_mp(2, ACK, 0, false, &[2, 6, 0, 8, 1, 2]));
        s.extend(seg_mp(3, ACK, 0, false, &[1, 7, 0]));
        // An MP_JOIN SYN with the endpoint's token, and raw bytes.
        s.extend(seg_mp(
            2,
            SYN,
            0,
            true,
            &[2, 1, 0, 1, 0, 0, 0, 9, 9, 4, 0x10, 0x30],
        ));
        s.extend(timers());
        seeds.push(s);
    }
    seeds
}

pub(crate) fn conn_seeds() -> Vec<Vec<u8>> {
    use enc::*;
    let mut seeds = Vec::new();
    for state in 0..TARGET_STATES.len() as u8 {
        for (cfg, active, opts) in [
            (0u8, 0u8, 0u8),
            (0xff, 0x80, 0),
            (0x08, 0x80, 0),
            (0, 0, 0x10),
            (0x81, 0x80, 0x30),
        ] {
            let mut s = vec![state | active, cfg, opts];
            s.extend(seg(0, ACK_PSH, 0, 0, false, 130));
            s.extend(seg(0, ACK_PSH, 1, 0, false, 140));
            s.push(9);
            s.extend(read(0));
            s.extend(seg(0, ACK_FIN, 0, 0, false, 0));
            s.extend(wait(4));
            s.extend(timers());
            seeds.push(s);
        }
    }
    seeds
}

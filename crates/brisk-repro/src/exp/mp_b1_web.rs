//! MP-10's page loads (seed 004 B.1 §V, Figs 21–22; spec §1.3 "Web"): a browser
//! fetches a page's objects from one server over up to 6 parallel connections, on the
//! two-path network of `mp_b1_net` (same links, background and endpoints; this module
//! only drives several foreground connections instead of one).
//!
//! The browser, as HTTP/1.1 browsers do (6 connections per host, no pipelining):
//! connection 0 opens at the start and fetches the page's first object (the HTML);
//! when it has arrived, the browser opens the other connections (up to 6 in all, no
//! more than there are objects left) and every idle connection requests the next
//! object in document order, one request outstanding per connection. A request is
//! 100 bytes (as `mp_b1_net`'s) naming the object's size; the server answers with
//! that many bytes. The page load time is from the first connection's open to the
//! last object's last byte read (rendering ignored, as the seed's metric). With
//! MPTCP every connection is an MPTCP connection with its own two subflows, as a
//! browser's sockets on a multipath host are.
//!
//! The pages' object lists are not in the seed (only counts and totals): sizes are
//! drawn log-normally (σ = 1, per seed) and scaled to the page's total, which gives
//! the heavy-tailed mix of small icons and a few large images typical of pages of the
//! time; the first object is the HTML.

use super::mp_b1_net::{
    bg_ip, client_ip, endpoint, mptcp_config, route, tcp_config, Link, OnOff, PathSpec, Transport,
    BG_PORT, BG_SERVER, MSS_PACKET, N_BG, N_BG_SERVER, N_CLIENT, N_SERVER, PORT, SERVER, UDP_BYTES,
};
use brisk_tcp::cc::CcAlgorithm;
use brisk_tcp::{ConnHandle, Endpoint};
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::net::SocketAddr;
use std::sync::Arc;

/// Browsers' connections per host (HTTP/1.1; the seed's 6).
pub const CONNS: usize = 6;
/// A request's size (an HTTP GET); its first 4 bytes carry the object's size.
const REQUEST: usize = 100;

/// One of the seed's pages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Page {
    pub name: &'static str,
    pub objects: usize,
    pub bytes: u64,
}

/// B.1's three pages (spec §1.3): small, medium, large.
pub const PAGES: [Page; 3] = [
    Page {
        name: "Wikipedia",
        objects: 15,
        bytes: 72 * 1024,
    },
    Page {
        name: "Amazon",
        objects: 54,
        bytes: 1024 * 1024,
    },
    Page {
        name: "HuffPost",
        objects: 138,
        bytes: 3994 * 1024,
    },
];

/// The page's object sizes for configuration `seed`: log-normal draws (σ = 1) scaled
/// so that they sum to the page's total exactly, each at least 100 bytes.
pub fn objects(page: &Page, seed: u64) -> Vec<u32> {
    let mut rng = ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(
        seed,
        "mp-b1-web",
        page.objects as u64,
    ));
    let w: Vec<f64> = (0..page.objects)
        .map(|_| {
            // Box-Muller: a standard normal from two uniforms.
            let (u1, u2): (f64, f64) = (rng.gen_range(f64::EPSILON..1.0), rng.gen());
            let z = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            z.exp()
        })
        .collect();
    let floor = 100u64;
    let spare = page.bytes.saturating_sub(floor * page.objects as u64) as f64;
    let sum: f64 = w.iter().sum();
    let mut out: Vec<u32> = w
        .iter()
        .map(|x| (floor + (spare * x / sum) as u64) as u32)
        .collect();
    // Rounding: the remainder goes to the largest object.
    let got: u64 = out.iter().map(|&b| u64::from(b)).sum();
    if let Some(big) = out.iter_mut().max() {
        *big += (page.bytes - got) as u32;
    }
    out
}

/// One page load's set-up.
#[derive(Clone, Debug)]
pub struct WebSpec {
    pub paths: [PathSpec; 2],
    pub transport: Transport,
    pub objects: Vec<u32>,
    pub send_buffer: u32,
    pub recv_buffer: u32,
    pub background: bool,
    /// The page load starts at this time (background from time 0).
    pub start: Duration,
    /// Hard stop.
    pub limit: Duration,
    pub seed: u64,
}

/// What one page load measured.
#[derive(Clone, Debug, Default)]
pub struct WebOutcome {
    /// From the first connection's open to the last object's last byte read; None
    /// if the page did not finish by the limit.
    pub plt: Option<Duration>,
    /// Foreground data packets (server to client, with payload) on each path, their
    /// payload bytes, and how many the path lost.
    pub data_pkts: [u64; 2],
    pub data_bytes: [u64; 2],
    pub data_lost: [u64; 2],
    /// Connections the browser opened; objects read whole.
    pub conns: usize,
    pub objects_done: usize,
    /// Subflows over all connections at the end (0 for TCP).
    pub subflows: usize,
}

impl WebOutcome {
    /// Share of the foreground's data bytes on path `p`, percent.
    pub fn share(&self, p: usize) -> f64 {
        let t = self.data_bytes[0] + self.data_bytes[1];
        if t == 0 {
            f64::NAN
        } else {
            100.0 * self.data_bytes[p] as f64 / t as f64
        }
    }
}

/// A browser connection (client side).
struct Tab {
    h: ConnHandle,
    /// Request bytes not yet accepted by the socket.
    req_left: usize,
    req: [u8; REQUEST],
    /// Bytes of the current object still to read; None when idle.
    left: Option<u64>,
}

/// A server connection: the partial request read so far and the bytes owed.
#[derive(Default)]
struct Served {
    rx: usize,
    size_bytes: [u8; 4],
    owe: u64,
}

/// Runs one page load. Errors name what failed.
pub fn run(spec: &WebSpec) -> Result<WebOutcome, String> {
    let seed = spec.seed;
    let mut rng = ChaCha8Rng::seed_from_u64(brisk_scenario::seed::derive_seed(
        seed,
        "mp-b1-web-links",
        0,
    ));
    let fg_cc = match spec.transport {
        Transport::Tcp { cc, .. } | Transport::Mptcp { cc, .. } => cc,
    };
    let fg_cfg = tcp_config(fg_cc, spec.send_buffer, spec.recv_buffer);
    let (client_cfg, server_cfg) = match spec.transport {
        Transport::Mptcp { sched, .. } => (
            mptcp_config(&fg_cfg, sched, true),
            mptcp_config(&fg_cfg, sched, false),
        ),
        Transport::Tcp { .. } => (fg_cfg.clone(), fg_cfg.clone()),
    };
    let local = match spec.transport {
        Transport::Tcp { path, .. } => client_ip(path),
        Transport::Mptcp { .. } => client_ip(0),
    };
    let client_cfg = Arc::new(client_cfg);
    let mut nodes: Vec<Endpoint> = Vec::with_capacity(5);
    let mut client = endpoint(client_ip(0), seed, 0);
    client
        .add_address(client_ip(1))
        .map_err(|e| e.to_string())?;
    nodes.push(client);
    let mut server = endpoint(SERVER, seed, 1);
    server
        .listen(PORT, 64, server_cfg)
        .map_err(|e| format!("listen: {e:?}"))?;
    nodes.push(server);
    let bg_cfg = tcp_config(CcAlgorithm::Cubic, 1 << 20, 2 << 20);
    let mut bgs = endpoint(BG_SERVER, seed, 2);
    bgs.listen(BG_PORT, 16, bg_cfg.clone())
        .map_err(|e| format!("listen: {e:?}"))?;
    nodes.push(bgs);
    for p in 0..2 {
        nodes.push(endpoint(bg_ip(p), seed, 3 + p as u64));
    }
    let mut links = [
        [Link::new(spec.paths[0]), Link::new(spec.paths[0])],
        [Link::new(spec.paths[1]), Link::new(spec.paths[1])],
    ];
    let mut udp: Vec<OnOff> = Vec::new();
    let mut now = Instant::ZERO;
    let start = Instant::ZERO + spec.start;
    let end = Instant::ZERO + spec.limit;
    let mut bg_conns: Vec<(usize, ConnHandle)> = Vec::new();
    if spec.background {
        for p in 0..2 {
            let h = nodes[N_BG[p]]
                .connect_from(
                    now,
                    SocketAddr::new(bg_ip(p), 0),
                    SocketAddr::new(BG_SERVER, BG_PORT),
                    Arc::new(bg_cfg.clone()),
                )
                .map_err(|e| format!("background connect: {e:?}"))?;
            bg_conns.push((N_BG[p], h));
            for _ in 0..4 {
                udp.push(OnOff::new(p, spec.paths[p].rate_bps / 40, &mut rng));
            }
        }
    }
    let mut bg_server_conns: Vec<ConnHandle> = Vec::new();
    let zeros = vec![0u8; 64 * 1024];
    let mut scratch = vec![0u8; 64 * 1024];

    let objs = &spec.objects;
    let mut tabs: Vec<Tab> = Vec::with_capacity(CONNS);
    let mut served: HashMap<ConnHandle, Served> = HashMap::new();
    let mut next_obj = 0usize;
    let mut out = WebOutcome::default();
    let mut wire: BinaryHeap<Reverse<(Instant, u64, usize)>> = BinaryHeap::new();
    let mut packets: HashMap<u64, Vec<u8>> = HashMap::new();
    let mut next_id = 0u64;
    let mut buf = Vec::with_capacity(MSS_PACKET + 100);
    let mut steps = 0u64;
    let open = |nodes: &mut Vec<Endpoint>, now: Instant| -> Result<ConnHandle, String> {
        nodes[N_CLIENT]
            .connect_from(
                now,
                SocketAddr::new(local, 0),
                SocketAddr::new(SERVER, PORT),
                client_cfg.clone(),
            )
            .map_err(|e| format!("connect: {e:?}"))
    };
    let request = |t: &mut Tab, size: u32| {
        t.req = [0u8; REQUEST];
        t.req[..4].copy_from_slice(&size.to_le_bytes());
        t.req_left = REQUEST;
        t.left = Some(u64::from(size));
    };
    loop {
        steps += 1;
        if steps > 200_000_000 {
            return Err("run did not settle".into());
        }
        // The browser: the HTML on the first connection, then the rest.
        if tabs.is_empty() && now >= start && !objs.is_empty() {
            let h = open(&mut nodes, now)?;
            let mut t = Tab {
                h,
                req_left: 0,
                req: [0u8; REQUEST],
                left: None,
            };
            request(&mut t, objs[0]);
            next_obj = 1;
            tabs.push(t);
        }
        // Client reads, and idle connections take the next object.
        let mut html_done = false;
        for t in tabs.iter_mut() {
            if let Some(c) = nodes[N_CLIENT].conn_mut(t.h) {
                if t.req_left > 0 {
                    let at = REQUEST - t.req_left;
                    t.req_left -= c.write(&t.req[at..]);
                }
                loop {
                    let n = c.read(&mut scratch);
                    if n == 0 {
                        break;
                    }
                    if let Some(l) = t.left.as_mut() {
                        *l = l.saturating_sub(n as u64);
                    }
                }
            }
            if t.left == Some(0) {
                t.left = None;
                out.objects_done += 1;
                html_done |= out.objects_done == 1;
            }
        }
        if html_done {
            let more = (objs.len() - next_obj).min(CONNS - 1);
            for _ in 0..more {
                let h = open(&mut nodes, now)?;
                tabs.push(Tab {
                    h,
                    req_left: 0,
                    req: [0u8; REQUEST],
                    left: None,
                });
            }
        }
        if out.objects_done >= 1 {
            for t in tabs.iter_mut() {
                if t.left.is_none() && next_obj < objs.len() {
                    request(t, objs[next_obj]);
                    next_obj += 1;
                    if let Some(c) = nodes[N_CLIENT].conn_mut(t.h) {
                        t.req_left -= c.write(&t.req);
                    }
                }
            }
        }
        if out.plt.is_none() && out.objects_done == objs.len() && !objs.is_empty() {
            out.plt = Some(now.saturating_duration_since(start));
        }
        // The server: read requests, write what is owed.
        while let Some(h) = nodes[N_SERVER].accept(PORT) {
            served.insert(h, Served::default());
        }
        for (h, s) in served.iter_mut() {
            let Some(c) = nodes[N_SERVER].conn_mut(*h) else {
                continue;
            };
            loop {
                let n = c.read(&mut scratch);
                if n == 0 {
                    break;
                }
                for &b in &scratch[..n] {
                    if s.rx < 4 {
                        s.size_bytes[s.rx] = b;
                    }
                    s.rx += 1;
                    if s.rx == REQUEST {
                        s.owe += u64::from(u32::from_le_bytes(s.size_bytes));
                        s.rx = 0;
                    }
                }
            }
            while s.owe > 0 {
                let n = (s.owe as usize).min(zeros.len());
                let w = c.write(&zeros[..n]);
                if w == 0 {
                    break;
                }
                s.owe -= w as u64;
            }
        }
        while let Some(h) = nodes[N_BG_SERVER].accept(BG_PORT) {
            bg_server_conns.push(h);
        }
        for &h in &bg_server_conns {
            if let Some(c) = nodes[N_BG_SERVER].conn_mut(h) {
                while c.write(&zeros) > 0 {}
            }
        }
        for (n, h) in &bg_conns {
            if let Some(c) = nodes[*n].conn_mut(*h) {
                while c.read(&mut scratch) > 0 {}
            }
        }
        for e in nodes.iter_mut() {
            while e.poll_event().is_some() {}
        }
        if out.plt.is_some() || now >= end {
            break;
        }
        // Output onto the links.
        for (ni, e) in nodes.iter_mut().enumerate() {
            while e.poll_transmit(now, &mut buf).is_some() {
                let Ok((iph, tcp)) = brisk_wire::parse_tcp_packet(&buf) else {
                    continue;
                };
                let Some((p, down, to)) = route(iph.src(), iph.dst()) else {
                    continue;
                };
                let fg_data = ni == N_SERVER && down && !tcp.payload.is_empty();
                if fg_data {
                    out.data_pkts[p] += 1;
                    out.data_bytes[p] += tcp.payload.len() as u64;
                }
                let dir = usize::from(!down);
                match links[p][dir].send(now, buf.len(), &mut rng) {
                    Some(at) => {
                        packets.insert(next_id, buf.clone());
                        wire.push(Reverse((at, next_id, to)));
                        next_id += 1;
                    }
                    None => {
                        if fg_data {
                            out.data_lost[p] += 1;
                        }
                    }
                }
            }
        }
        for s in udp.iter_mut() {
            while s.next <= now {
                // Occupies the link; discarded on arrival.
                let _ = links[s.path][0].send(now, UDP_BYTES, &mut rng);
                s.fire(&mut rng);
            }
        }
        // Next event.
        let mut next = end;
        if let Some(Reverse((t, _, _))) = wire.peek() {
            next = next.min(*t);
        }
        for e in &nodes {
            if let Some(t) = e.poll_timeout() {
                next = next.min(t);
            }
        }
        if tabs.is_empty() {
            next = next.min(start);
        }
        for s in &udp {
            next = next.min(s.next);
        }
        now = next.max(now);
        while wire.peek().is_some_and(|Reverse((t, _, _))| *t <= now) {
            let Some(Reverse((_, id, to))) = wire.pop() else {
                break;
            };
            if let Some(bytes) = packets.remove(&id) {
                nodes[to].handle_packet_trusted(now, &bytes);
            }
        }
        for e in nodes.iter_mut() {
            e.handle_timeout(now);
        }
    }
    out.conns = tabs.len();
    for h in served.keys() {
        if let Some(c) = nodes[N_SERVER].conn(*h) {
            out.subflows += c.mptcp_subflows();
        }
    }
    if tabs.is_empty() {
        return Err("the page load never started".into());
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::super::mp_b1_net::Kind;
    use super::*;
    use brisk_tcp::mptcp::sched::SchedKind;

    #[test]
    fn objects_sum_to_the_page_and_differ_per_seed() {
        for p in PAGES {
            let a = objects(&p, 1);
            assert_eq!(a.len(), p.objects);
            assert_eq!(a.iter().map(|&b| u64::from(b)).sum::<u64>(), p.bytes);
            assert!(a.iter().all(|&b| b >= 100));
            assert_ne!(a, objects(&p, 2));
            assert_eq!(a, objects(&p, 1));
        }
    }

    /// Every arm loads every page over WLAN + 3G with all objects read; MPTCP's
    /// connections each open their second subflow; TCP stays on its path.
    #[test]
    fn pages_load_over_six_connections() {
        for seed in [1u64, 2] {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let paths = [Kind::Wlan.draw(&mut rng), Kind::G3.draw(&mut rng)];
            for page in PAGES {
                for tr in [
                    Transport::Tcp {
                        path: 0,
                        cc: CcAlgorithm::Cubic,
                    },
                    Transport::Mptcp {
                        sched: SchedKind::LowRttRp,
                        cc: CcAlgorithm::Olia,
                    },
                ] {
                    let s = WebSpec {
                        paths,
                        transport: tr,
                        objects: objects(&page, seed),
                        send_buffer: 1 << 20,
                        recv_buffer: 2 << 20,
                        background: false,
                        start: Duration::ZERO,
                        limit: Duration::from_secs(60),
                        seed,
                    };
                    let o = run(&s).unwrap();
                    eprintln!(
                        "seed {seed} {} {tr:?}: plt {:?} conns {} subflows {} bytes {:?}",
                        page.name, o.plt, o.conns, o.subflows, o.data_bytes
                    );
                    assert!(o.plt.is_some(), "{} {tr:?} seed {seed}", page.name);
                    assert_eq!(o.objects_done, page.objects);
                    assert_eq!(o.conns, CONNS);
                    // Every byte of every object arrived (headers aside).
                    assert!(o.data_bytes[0] + o.data_bytes[1] >= page.bytes);
                    match tr {
                        Transport::Tcp { .. } => assert_eq!(o.data_pkts[1], 0),
                        Transport::Mptcp { .. } => assert_eq!(o.subflows, 2 * CONNS),
                    }
                }
            }
        }
    }
}

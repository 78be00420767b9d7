//! What one connection costs in memory (issue 11 §5: per-connection state is small and
//! freed when a flow ends). A counting allocator (this test binary's own) measures the
//! heap an endpoint holds for N established idle connections, then after each has
//! carried data, then after they are closed and reaped. Numbers are printed (run with
//! `--nocapture`) and bounded loosely, so a regression that keeps whole buffers per
//! idle connection, or leaks a closed one, fails.

use brisk_tcp::endpoint::{Endpoint, EndpointConfig};
use brisk_tcp::Config;
use brisk_time::{Duration, Instant};
use std::alloc::{GlobalAlloc, Layout, System};
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicIsize, Ordering};

struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        LIVE.fetch_add(l.size() as isize, Ordering::Relaxed);
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size() as isize, Ordering::Relaxed);
        // SAFETY: `p` came from `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        LIVE.fetch_add(new as isize - l.size() as isize, Ordering::Relaxed);
        // SAFETY: as `alloc`/`dealloc`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

/// The counter is the process's: each test holds this while it measures, so tests run
/// in parallel by the harness do not count each other's allocations.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

const N: u16 = 200;

/// Moves packets both ways (no delay) and advances time until nothing is left.
fn pump(a: &mut Endpoint, b: &mut Endpoint, now: &mut Instant, rounds: usize) {
    let mut buf = Vec::with_capacity(2048);
    for _ in 0..rounds {
        let mut moved = false;
        for dir in 0..2 {
            let (src, dst) = if dir == 0 {
                (&mut *a, &mut *b)
            } else {
                (&mut *b, &mut *a)
            };
            buf.clear();
            while src.poll_transmit(*now, &mut buf).is_some() {
                dst.handle_packet(*now, &buf);
                buf.clear();
                moved = true;
            }
        }
        *now = now.saturating_add(Duration::from_millis(1));
        for e in [&mut *a, &mut *b] {
            if e.poll_timeout().is_some_and(|t| t <= *now) {
                e.handle_timeout(*now);
                moved = true;
            }
        }
        if !moved {
            // Idle: jump to the next timer (TIME-WAIT) instead of ticking.
            match (a.poll_timeout(), b.poll_timeout()) {
                (None, None) => return,
                (x, y) => *now = (*now).max(x.into_iter().chain(y).min().unwrap_or(*now)),
            }
        }
    }
}

/// Heap per connection (both ends averaged): idle, after 64 KB, closed; and the number
/// of connections left unreaped.
#[derive(Clone, Copy)]
struct Cost {
    idle: f64,
    used: f64,
    closed: f64,
    left: usize,
}

/// Set up N pairs with `config`, carry 64 KB on each, close and reap them.
fn measure(config: &Config) -> Cost {
    let ca = Ipv4Addr::new(198, 18, 0, 1);
    let sa = Ipv4Addr::new(198, 18, 0, 2);
    let mut now = Instant::ZERO;
    let before = live();
    let mut client = Endpoint::new(IpAddr::V4(ca), EndpointConfig::seeded([7; 16], 7));
    let mut server = Endpoint::new(IpAddr::V4(sa), EndpointConfig::seeded([7; 16], 7));
    server.listen(80, 1024, config.clone()).unwrap();
    let empty = live() - before;
    let mut cs = Vec::new();
    for i in 0..N {
        let h = client
            .connect(
                now,
                10_000 + i,
                SocketAddr::new(IpAddr::V4(sa), 80),
                config.clone(),
            )
            .unwrap();
        cs.push(h);
    }
    pump(&mut client, &mut server, &mut now, 50);
    let mut ss = Vec::new();
    while let Some(h) = server.accept(80) {
        ss.push(h);
    }
    assert_eq!(ss.len(), N as usize, "all established");
    let idle = (live() - before - empty) as f64 / (2.0 * f64::from(N));

    // Each connection carries 64 KB one way and it is read.
    let data = vec![7u8; 64 << 10];
    for &h in &cs {
        client.conn_mut(h).unwrap().write(&data);
    }
    let mut sink = vec![0u8; 1 << 16];
    for _ in 0..200 {
        pump(&mut client, &mut server, &mut now, 5);
        for &h in &ss {
            while server.conn_mut(h).unwrap().read(&mut sink) > 0 {}
        }
    }
    let used = (live() - before - empty) as f64 / (2.0 * f64::from(N));

    for &h in &cs {
        client.conn_mut(h).unwrap().close();
    }
    for &h in &ss {
        server.conn_mut(h).unwrap().close();
    }
    // The application drains events as it goes (a Closed event reaps the slot).
    for _ in 0..2000 {
        pump(&mut client, &mut server, &mut now, 100);
        while client.poll_event().is_some() || server.poll_event().is_some() {}
        if client.connection_count() + server.connection_count() == 0 {
            break;
        }
    }
    let left = client.connection_count() + server.connection_count();
    if left > 0 {
        let st = |e: &Endpoint, h| e.conn(h).map(|c| format!("{:?}", c.state()));
        eprintln!(
            "client {:?} server {:?} at {now:?}, timers {:?} {:?}",
            st(&client, cs[0]),
            st(&server, ss[0]),
            client.poll_timeout(),
            server.poll_timeout()
        );
    }
    let closed = (live() - before - empty) as f64 / (2.0 * f64::from(N));
    drop((client, server));
    Cost {
        idle,
        used,
        closed,
        left,
    }
}

/// B per idle TCP connection: 3.5 KB until 2026-12-07; +128 B when issue 35's
/// controllers were merged (the idle connection measured 3 634 B: the congestion
/// config carries the new controllers' tuning), still 384 B under issue 15's 4 KB target.
const IDLE_BOUND: f64 = 3712.0;

fn check(name: &str, c: &Cost) {
    check_within(name, c, IDLE_BOUND);
}

/// [`check`] with `idle_bound` (B per idle connection) in place of TCP's 3.5 KB.
fn check_within(name: &str, c: &Cost, idle_bound: f64) {
    let Cost {
        idle,
        used,
        closed,
        left,
    } = *c;
    eprintln!(
        "heap per connection ({name}): idle {idle:.0} B, after 64 KB {used:.0} B, closed {closed:.0} B ({left} left); size_of::<Connection>() {} B",
        std::mem::size_of::<brisk_tcp::Connection>()
    );
    // Issue 15's target is at most 4 KB per idle established connection; the bound
    // keeps some margin below it (TCP measured about 2.8 KB, RC3 about 3.1 KB), so a
    // change that adds a few hundred bytes to every connection fails here first.
    // Nothing proportional to the configured buffers (4 MiB send, 6 MiB receive) is
    // held by an idle connection; after 64 KB a connection keeps about 64 KB of grown
    // buffers plus its idle state.
    assert!(
        idle < idle_bound,
        "idle {idle:.0} B (bound {idle_bound:.0} B; TCP's target: at most 4096 B)"
    );
    // After 64 KB: the idle bound's margin over TCP's plus TCP's 96 KB.
    let used_bound = 96.0 * 1024.0 + idle_bound - IDLE_BOUND;
    assert!(
        used < used_bound,
        "used {used:.0} B (bound {used_bound:.0} B)"
    );
    assert_eq!(left, 0, "closed connections are reaped");
    // What stays is the endpoint's slot table (a Vec of boxed slots, 8 B each, reused
    // by later connections), its hash map's capacity and the timer heap's: less than
    // the idle cost, never the buffers a used connection held.
    assert!(
        closed < idle / 2.0 && closed < used / 10.0,
        "closed {closed:.0} B against idle {idle:.0} B and used {used:.0} B"
    );
}

/// One test for TCP and RC3 (the counter is shared: `serial`): plain TCP, then
/// RC3 senders (whose RLP keeps chunk and range state per write), then MPTCP's row
/// (printed and checked for reaping here; its bounds are the test below).
#[test]
fn idle_and_used_connections_cost_little_and_closed_ones_nothing() {
    let _one = serial();
    let tcp = measure(&Config::default());
    check("TCP", &tcp);
    let mut rc3 = Config::default();
    rc3.transmit.rc3 = Some(brisk_tcp::rc3::Rc3Config::default());
    check("RC3", &measure(&rc3));
    let m = measure(&mptcp_config());
    report_mptcp(&m, &tcp);
    assert_eq!(m.left, 0, "closed MPTCP connections are reaped");
    assert!(
        m.closed < tcp.idle,
        "closed MPTCP {:.0} B: the data level is freed with the connection",
        m.closed
    );
}

/// MPTCP (RFC 8684) over one subflow, both ends offering it.
fn mptcp_config() -> Config {
    Config {
        mptcp: Some(Box::new(brisk_tcp::mptcp::MptcpConfig::default())),
        ..Config::default()
    }
}

/// Prints the MPTCP row beside TCP's, with the two up-front allocations split out.
fn report_mptcp(m: &Cost, tcp: &Cost) {
    let rc = brisk_tcp::mptcp::MptcpConfig::default().recv;
    // The data-level ring grows with use to at most capacity plus one window-scale
    // unit of slack (`DataRecv`, mptcp/recv.rs); an idle connection holds none of it.
    let ring = f64::from(rc.capacity) + f64::from(1u32 << rc.wscale);
    eprintln!(
        "heap per connection (MPTCP, 1 subflow): idle {:.0} B ({:.1}x TCP's idle {:.0} B; the data-level ring, up to {ring:.0} B, grows with use); after 64 KB {:.0} B; closed {:.0} B ({} left)",
        m.idle,
        m.idle / tcp.idle,
        tcp.idle,
        m.used,
        m.closed,
        m.left
    );
}

/// Issue 31 §5: an idle MPTCP connection beside TCP's. The outer connection keeps its
/// own dormant TCP parts beside the meta and the subflow's full connection, so an idle
/// MPTCP connection is about two TCP connections plus the data level: the bound is
/// two TCP bounds (2 x 3.5 KB) plus 1 KB for the meta (keys, DSN state, counters, the
/// subflow table), and nothing proportional to the configured buffers, as for TCP:
/// the data-level receive ring and the subflow's mapping tables grow with use
/// (`mptcp/recv.rs`, `mptcp/dsn.rs`). Run alone, the counter is the process's.
///
/// Since MP_JOIN is wired, the meta also holds the path manager, whose tables
/// (addresses, subflow slots, announcements, actions) are fixed arrays bounded by
/// RFC 8684's and Linux's limits: about 3 KB inline (`size_of::<PathManager>()`),
/// allowed here by its measured size so that growth anywhere else still fails. Making
/// those tables lazy or growable is left to issue 36 (idle MPTCP was 6.3 KB before
/// the joins, 10.4 KB with them).
#[test]
fn idle_mptcp_connection_costs_at_most_two_tcp_connections() {
    let _one = serial();
    let tcp = measure(&Config::default());
    let m = measure(&mptcp_config());
    report_mptcp(&m, &tcp);
    let pm = std::mem::size_of::<brisk_tcp::mptcp::pm::PathManager>() as f64;
    // The data-level retransmission timer and the scheduler's state (LowRTT+RP's
    // penalty clock and counters, STTF's book of runs sent ahead) are inline in the
    // meta (64 B and 256 B today); allowed by their measured size, as the path
    // manager is, so growth anywhere else still fails.
    let timer = std::mem::size_of::<brisk_tcp::mptcp::reinject::DataRtxTimer>() as f64;
    let sched = std::mem::size_of::<brisk_tcp::mptcp::sched::Scheduler>() as f64;
    // The data-level send buffer is a `SendBuffer` since issue 36 §4 (it holds the
    // application's shared bytes by reference, as a subflow's does), no longer a bare
    // `VecDeque`: its inline size is allowed by measurement too.
    let dsend = std::mem::size_of::<brisk_tcp::conn::send::SendBuffer>() as f64;
    eprintln!(
        "inline: path manager {pm} B, data-level timer {timer} B, scheduler {sched} B, data-level send buffer {dsend} B"
    );
    check_within(
        "MPTCP, 1 subflow",
        &m,
        2.0 * IDLE_BOUND + 1024.0 + pm + timer + sched + dsend,
    );
}

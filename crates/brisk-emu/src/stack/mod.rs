//! brisk as a real endpoint: the sans-IO [`Endpoint`] behind a priority-inheriting
//! mutex (os/pi_lock.rs), shared between the packet loop and application threads.
//!
//! ```text
//!  app threads ──TcpStream/TcpListener──▶ PiMutex<Core{Endpoint, sockets}> ◀── StackSide ◀── emulator loop ◀── TUN / path
//!        ▲  Notify (events: readable, writable, connected, closed)  │  eventfd (output pending) ──▶ loop
//! ```
//! [`StackSide`] is an emulator [`Side`]: the loop hands it packets (`send` →
//! `handle_packet`), takes its packets (`recv` → `handle_timeout` if due, then
//! `poll_transmit`), and sleeps until its `poll_timeout` or until an application call
//! makes output (the [`Waker`] eventfd, which is the side's `poll_fd`). So "brisk on a
//! TUN device" is the emulator with brisk as one side and the device as the other —
//! with an empty path for a plain endpoint, or any path for experiments — and one
//! thread runs both the network model and brisk's timers (docs/emulator.md).
//!
//! Time: one [`Clock`] (CLOCK_MONOTONIC, ns since the stack was made) for the loop and
//! the application threads; the core never lets `now` run backwards between them. The
//! sans-IO core is used unchanged.

pub mod bulk;
pub mod kernel_stream;
pub mod mptcp_kernel;
pub mod pattern;
pub mod serve;
pub mod socket;

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;

use brisk_tcp::{Config, ConnError, ConnHandle, Endpoint, EndpointConfig, EndpointStats, Event};
use brisk_time::Instant;

use crate::emu::side::Side;
use crate::error::Result;
use crate::os::clock::{monotonic_ns, Clock};
use crate::os::pi_lock::{Notify, PiGuard, PiMutex};
use crate::os::wake::Waker;
use crate::stack::socket::{TcpListener, TcpStream};

/// How a stack is set up.
#[derive(Clone, Debug)]
pub struct StackConfig {
    /// brisk's own address: one the kernel on the other side does not own.
    pub local: Ipv4Addr,
    /// brisk's IPv6 address, if any: the stack is then dual-stack (listeners accept
    /// both families, `connect` takes either; brisk-tcp's `Endpoint::dual_stack`).
    pub local6: Option<Ipv6Addr>,
    /// Endpoint-wide settings (ISN secret, RNG seed, table size).
    pub endpoint: EndpointConfig,
    /// Per-connection settings for `connect` and for listeners.
    pub tcp: Config,
    /// Accept backlog of listeners.
    pub backlog: usize,
}

impl StackConfig {
    pub fn new(local: Ipv4Addr) -> StackConfig {
        StackConfig {
            local,
            local6: None,
            endpoint: EndpointConfig::default(),
            tcp: Config::default(),
            backlog: 128,
        }
    }
}

/// Application-side state of one socket.
#[derive(Debug, Default)]
pub(crate) struct Sock {
    pub handle: Option<ConnHandle>,
    pub connected: bool,
    pub peer_closed: bool,
    pub closed: bool,
    pub error: Option<ConnError>,
    /// [`socket::TcpStream::set_notsent_limit`]'s floor: a write waits while the bytes
    /// written but not sent reach the larger of this and the bytes in flight.
    pub notsent_floor: Option<usize>,
    /// A write is blocked on that limit (the loop wakes it once it no longer holds).
    pub notsent_waiting: bool,
}

/// Bytes `c` holds that were written but not sent yet, and bytes sent but not yet
/// acknowledged.
pub(crate) fn unsent_and_in_flight(c: &brisk_tcp::Connection) -> (u64, u64) {
    let (acked, sent) = (c.acked_offset(), c.sent_offset());
    let written = acked + c.send_buffered() as u64;
    (written.saturating_sub(sent), sent.saturating_sub(acked))
}

/// Whether a write to a socket with `floor` may go ahead (Linux's
/// `tcp_stream_memory_free` with `TCP_NOTSENT_LOWAT`, with the mark at least the bytes
/// in flight, as Linux's autotuned send buffer, `tcp_sndbuf_expand`, is about two
/// windows).
pub(crate) fn below_notsent_limit(c: &brisk_tcp::Connection, floor: usize) -> bool {
    let (unsent, in_flight) = unsent_and_in_flight(c);
    unsent < (floor as u64).max(in_flight)
}

/// Everything behind the lock.
pub(crate) struct Core {
    pub ep: Endpoint,
    pub tcp: Config,
    pub backlog: usize,
    /// The latest `now` handed to the endpoint (time never runs back).
    last: Instant,
    /// Output may be pending: the loop should poll at once.
    dirty: bool,
    /// Application threads blocked on the condvar (skip the futex call when none).
    pub waiters: usize,
    /// Sockets with `notsent_waiting` set (skip the check per packet when none).
    pub notsent_waiting: usize,
    /// The loop is gone: blocking calls fail instead of waiting for ever.
    pub stopped: bool,
    pub socks: HashMap<u64, Sock>,
    /// Wall time the packet loop spent inside the endpoint (for CPU accounting: the
    /// loop thread is busy throughout).
    busy_ns: u64,
    by_handle: HashMap<ConnHandle, u64>,
    next_id: u64,
    /// Connections owned by an event-loop server (serve.rs), whose events it takes.
    pub(crate) served: serve::ServedConns,
}

impl Core {
    /// `now` for the endpoint: `t`, or the last time used if that is later.
    pub fn advance(&mut self, t: Instant) -> Instant {
        self.last = self.last.max(t);
        self.last
    }

    /// Registers an application socket for `h`.
    pub fn add_sock(&mut self, h: ConnHandle, connected: bool) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.socks.insert(
            id,
            Sock {
                handle: Some(h),
                connected,
                ..Sock::default()
            },
        );
        self.by_handle.insert(h, id);
        id
    }

    pub fn remove_sock(&mut self, id: u64) {
        if let Some(s) = self.socks.remove(&id) {
            if s.notsent_waiting {
                self.notsent_waiting -= 1;
            }
            if let Some(h) = s.handle {
                self.by_handle.remove(&h);
            }
        }
    }

    /// Marks that the loop has output to collect.
    pub fn mark_dirty(&mut self) {
        self.dirty = true;
    }

    /// Clears the waits on the not-sent limit that no longer hold (the connection
    /// sent or lost data, or is gone); true if any did, so their writers are woken.
    /// Costs nothing per packet while no write waits on the limit.
    fn notsent_released(&mut self) -> bool {
        if self.notsent_waiting == 0 {
            return false;
        }
        let mut released = false;
        for s in self.socks.values_mut().filter(|s| s.notsent_waiting) {
            let floor = s.notsent_floor.unwrap_or(0);
            let free = s
                .handle
                .and_then(|h| self.ep.conn(h))
                .is_none_or(|c| below_notsent_limit(c, floor));
            if free {
                s.notsent_waiting = false;
                self.notsent_waiting -= 1;
                released = true;
            }
        }
        released
    }

    /// Applies the endpoint's events to the sockets; true if any arrived.
    fn process_events(&mut self) -> bool {
        let mut any = false;
        while let Some((h, ev)) = self.ep.poll_event() {
            any = true;
            if self.served.take(h, &ev) {
                continue;
            }
            let Some(&id) = self.by_handle.get(&h) else {
                continue; // a listener's Incoming, or a socket already dropped
            };
            let Some(s) = self.socks.get_mut(&id) else {
                continue;
            };
            match ev {
                Event::Connected => s.connected = true,
                Event::PeerClosed => s.peer_closed = true,
                Event::Closed(r) => {
                    s.closed = true;
                    s.error = r.err();
                    // The endpoint reaps the slot and may reuse the handle.
                    s.handle = None;
                    self.by_handle.remove(&h);
                }
                Event::Readable | Event::Writable | Event::Incoming { .. } => {}
            }
        }
        any
    }
}

pub(crate) struct Shared {
    /// Priority-inheriting (os/pi_lock.rs): the packet side that takes it runs under
    /// `SCHED_FIFO`, the application threads that also take it do not.
    pub core: PiMutex<Core>,
    /// Application threads wait here for events (readable, writable, connected,
    /// closed).
    pub cond: Notify,
    pub waker: Waker,
    pub clock: Clock,
    pub local: Ipv4Addr,
}

impl Shared {
    pub fn lock(&self) -> PiGuard<'_, Core> {
        // A panicking application thread cannot leave the endpoint half-updated in a
        // way the loop could not continue from; the lock is not poisoned and keeps
        // serving the other sockets.
        self.core.lock()
    }

    /// Wakes blocked application threads if there are any.
    fn notify(&self, core: &Core) {
        if core.waiters > 0 {
            self.cond.notify_all();
        }
    }
}

/// A handle to a running brisk stack; cheap to clone. Sockets are made from it.
#[derive(Clone)]
pub struct BriskStack {
    pub(crate) shared: Arc<Shared>,
}

impl std::fmt::Debug for BriskStack {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BriskStack")
            .field("local", &self.shared.local)
            .finish()
    }
}

impl BriskStack {
    /// A stack and the [`StackSide`] through which a packet loop (an
    /// [`Emulator`](crate::Emulator)) drives it. Give the loop the stack's
    /// [`clock`](BriskStack::clock) via `EmulatorOptions::clock`.
    pub fn new(cfg: StackConfig) -> Result<(BriskStack, StackSide)> {
        let clock = Clock::start();
        let core = Core {
            ep: match cfg.local6 {
                Some(v6) => Endpoint::dual_stack(cfg.local, v6, cfg.endpoint),
                None => Endpoint::new(cfg.local.into(), cfg.endpoint),
            },
            tcp: cfg.tcp,
            backlog: cfg.backlog.max(1),
            last: Instant::ZERO,
            dirty: false,
            waiters: 0,
            notsent_waiting: 0,
            stopped: false,
            socks: HashMap::new(),
            busy_ns: 0,
            by_handle: HashMap::new(),
            next_id: 0,
            served: serve::ServedConns::default(),
        };
        let shared = Arc::new(Shared {
            core: PiMutex::new(core),
            cond: Notify::default(),
            waker: Waker::new()?,
            clock,
            local: cfg.local,
        });
        Ok((
            BriskStack {
                shared: Arc::clone(&shared),
            },
            StackSide { shared },
        ))
    }

    pub fn clock(&self) -> Clock {
        self.shared.clock
    }

    pub fn local_addr(&self) -> Ipv4Addr {
        self.shared.local
    }

    /// The endpoint's counters (packets in/out, drops by reason, RSTs, challenge ACKs).
    pub fn stats(&self) -> EndpointStats {
        self.shared.lock().ep.stats().clone()
    }

    /// Live connections in the endpoint's table.
    pub fn connection_count(&self) -> usize {
        self.shared.lock().ep.connection_count()
    }

    /// Seconds the packet loop has spent inside brisk's endpoint so far.
    pub fn busy_seconds(&self) -> f64 {
        self.shared.lock().busy_ns as f64 / 1e9
    }

    /// Whether the packet loop still drives the stack.
    pub fn is_running(&self) -> bool {
        !self.shared.lock().stopped
    }

    /// Opens a connection (blocking until established); see [`TcpStream::connect`].
    pub fn connect(&self, addr: SocketAddr) -> io::Result<TcpStream> {
        TcpStream::connect(self, addr)
    }

    /// Listens on `port`; see [`TcpListener::bind`].
    pub fn listen(&self, port: u16) -> io::Result<TcpListener> {
        TcpListener::bind(self, port)
    }

    /// Runs `f` on the endpoint under the lock, then lets the loop collect any output
    /// (for tests and tools that need the raw sans-IO API).
    pub fn with_endpoint<T>(&self, f: impl FnOnce(&mut Endpoint) -> T) -> T {
        let mut core = self.shared.lock();
        let r = f(&mut core.ep);
        core.mark_dirty();
        drop(core);
        self.shared.waker.wake();
        r
    }
}

/// The packet-loop end of a [`BriskStack`]: an emulator [`Side`]. Dropping it (when
/// the loop ends) stops the stack: blocked socket calls return errors.
pub struct StackSide {
    shared: Arc<Shared>,
}

impl Side for StackSide {
    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.shared.waker.as_raw_fd())
    }

    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        // Drain first: a wake-up after this point is seen on the next wait.
        self.shared.waker.drain();
        let t0 = monotonic_ns();
        let mut core = self.shared.lock();
        let now = core.advance(now);
        if core.ep.poll_timeout().is_some_and(|t| t <= now) {
            core.ep.handle_timeout(now);
        }
        let got = core.ep.poll_transmit(now, buf).is_some();
        if !got {
            core.dirty = false;
        }
        if core.process_events() | core.notsent_released() {
            self.shared.notify(&core);
        }
        core.busy_ns += monotonic_ns().saturating_sub(t0);
        Ok(got)
    }

    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool> {
        let t0 = monotonic_ns();
        let mut core = self.shared.lock();
        let now = core.advance(now);
        core.ep.handle_packet(now, pkt);
        core.dirty = true;
        if core.process_events() | core.notsent_released() {
            self.shared.notify(&core);
        }
        core.busy_ns += monotonic_ns().saturating_sub(t0);
        Ok(true)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        let core = self.shared.lock();
        if core.dirty {
            // Due now: the loop polls `recv` again before it sleeps.
            Some(Instant::ZERO)
        } else {
            core.ep.poll_timeout()
        }
    }
}

impl Drop for StackSide {
    fn drop(&mut self) {
        let mut core = self.shared.lock();
        core.stopped = true;
        drop(core);
        self.shared.cond.notify_all();
    }
}

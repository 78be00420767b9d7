//! A readiness-driven server over a [`BriskStack`]: one thread serves every
//! connection of a listener, however many, from the sans-IO endpoint's events —
//! no thread per connection (the blocking [`TcpListener`](crate::TcpListener) /
//! [`TcpStream`](crate::TcpStream) API needs one). `brisk lab up` serves its echo,
//! sink and HTTP file modes with it.
//!
//! ```text
//!  emulator loop ── StackSide ── Core::process_events ──▶ ready handles / closed / incoming
//!                                                              │ Notify
//!  server thread ◀─────────────────────────────────────────────┘
//!    per ready connection, lock held only around the endpoint calls:
//!    write pending output → read a chunk → (unlocked) Session::input / eof / refill
//! ```
//! Events of served connections never reach a socket: [`Core::process_events`]
//! queues each connection's handle once (a set deduplicates), so the work per turn
//! is the connections with news, not all of them; an idle connection costs its
//! small [`Conn`] record and nothing per turn. A connection closed by the endpoint
//! (its handle may be reused) is finished before new ones are accepted, under the
//! same lock hold, so a reused handle never meets the old session.
//!
//! Backpressure: a connection's unsent output is held to [`OUT_HIGH`] bytes; above
//! it the server stops reading from that connection until the peer takes data
//! (TCP's window then stops the peer). Idle connections are reset after the
//! configured idle time, checked once a second.

use std::collections::{HashMap, HashSet, VecDeque};
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration as StdDuration, Instant as WallInstant};

use brisk_tcp::{ConnError, ConnHandle};

use crate::stack::{BriskStack, Core, Shared};

/// Most unsent output bytes a connection holds before the server stops reading it.
pub const OUT_HIGH: usize = 256 * 1024;
/// Bytes read from a connection per step.
const CHUNK: usize = 64 * 1024;
/// Steps one connection gets per turn before the others get theirs.
const STEPS_PER_TURN: usize = 8;

/// The application side of one connection, driven by the server: never blocks.
pub trait Session: Send {
    /// Bytes the peer sent; append any reply to `out`.
    fn input(&mut self, data: &[u8], out: &mut Vec<u8>) -> io::Result<()>;
    /// The peer will send no more (FIN); append any final reply to `out`.
    fn eof(&mut self, out: &mut Vec<u8>) -> io::Result<()>;
    /// `out` has been sent: append more (a file body), if any.
    fn refill(&mut self, _out: &mut Vec<u8>) -> io::Result<()> {
        Ok(())
    }
    /// Whether the reply is complete: the server sends FIN once `out` is sent.
    fn finished(&self) -> bool;
    /// A line for the log when the connection ends.
    fn report(&self) -> String;
}

/// Makes a [`Session`] per accepted connection and hears how each ended.
pub trait Service {
    fn open(&mut self, peer: SocketAddr) -> Box<dyn Session>;
    /// A connection is done: `Ok(report)` after a clean end, else the error.
    fn closed(&mut self, peer: SocketAddr, outcome: io::Result<String>);
}

/// Server settings.
#[derive(Clone, Debug)]
pub struct ServeConfig {
    /// Reset a connection that made no progress for this long (the blocking lab
    /// server's 60 s read/write timeouts).
    pub idle: StdDuration,
}

impl Default for ServeConfig {
    fn default() -> Self {
        ServeConfig {
            idle: StdDuration::from_secs(60),
        }
    }
}

/// What a served connection's events leave for the server (inside [`Core`]).
#[derive(Debug, Default)]
pub(crate) struct ServedConns {
    /// Ports whose listeners the server accepts from.
    pub ports: Vec<u16>,
    /// A served port has a connection to accept.
    pub incoming: bool,
    /// Handles owned by the server.
    pub owned: HashSet<ConnHandle>,
    /// Owned handles with events since the server last looked, each once.
    pub ready: VecDeque<ConnHandle>,
    pub queued: HashSet<ConnHandle>,
    /// Owned connections the endpoint has closed (and may reuse the handle of).
    pub closed: Vec<(ConnHandle, Result<(), ConnError>)>,
}

impl ServedConns {
    /// Takes an endpoint event for `h`, if it is the server's; false if not.
    pub fn take(&mut self, h: ConnHandle, ev: &brisk_tcp::Event) -> bool {
        if let brisk_tcp::Event::Incoming { port } = ev {
            if self.ports.contains(port) {
                self.incoming = true;
                return true;
            }
        }
        if !self.owned.contains(&h) {
            return false;
        }
        match ev {
            brisk_tcp::Event::Closed(r) => {
                self.owned.remove(&h);
                self.queued.remove(&h);
                self.closed.push((h, *r));
            }
            _ => {
                if self.queued.insert(h) {
                    self.ready.push_back(h);
                }
            }
        }
        true
    }

    fn has_news(&self) -> bool {
        self.incoming || !self.ready.is_empty() || !self.closed.is_empty()
    }
}

/// One served connection.
struct Conn {
    peer: SocketAddr,
    session: Box<dyn Session>,
    /// Unsent output; `out[sent..]` is still to go.
    out: Vec<u8>,
    sent: usize,
    eof_seen: bool,
    fin_sent: bool,
    last_progress: WallInstant,
    error: Option<io::Error>,
    /// Reported as done (both FINs exchanged) before the endpoint let it go.
    reported: bool,
}

/// What one turn took from the core.
#[derive(Default)]
struct Turn {
    closed: Vec<(ConnHandle, Result<(), ConnError>)>,
    ready: Vec<ConnHandle>,
    accepted: Vec<(ConnHandle, SocketAddr)>,
}

/// Counters of a server run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ServeStats {
    pub accepted: u64,
    pub closed: u64,
    pub idle_resets: u64,
    /// Most connections open at once.
    pub peak_open: usize,
}

/// Serves `port` (already listening, e.g. by [`BriskStack::listen`]) with
/// `service` on the calling thread until `deadline` or until the stack stops
/// (its packet loop ended); connections still open then are reset and reported.
pub fn serve(
    stack: &BriskStack,
    port: u16,
    service: &mut dyn Service,
    cfg: &ServeConfig,
    deadline: WallInstant,
) -> io::Result<ServeStats> {
    let shared = Arc::clone(&stack.shared);
    shared.lock().served.ports.push(port);
    let mut server = Server {
        shared,
        port,
        conns: HashMap::new(),
        scratch: vec![0u8; CHUNK],
        stats: ServeStats::default(),
    };
    let r = server.run(service, cfg, deadline);
    server.shutdown(service);
    r.map(|()| server.stats)
}

struct Server {
    shared: Arc<Shared>,
    port: u16,
    conns: HashMap<ConnHandle, Conn>,
    scratch: Vec<u8>,
    stats: ServeStats,
}

impl Server {
    fn run(
        &mut self,
        service: &mut dyn Service,
        cfg: &ServeConfig,
        deadline: WallInstant,
    ) -> io::Result<()> {
        let mut next_sweep = WallInstant::now() + StdDuration::from_secs(1);
        // Connections that used their steps this turn and want more.
        let mut again: Vec<ConnHandle> = Vec::new();
        loop {
            let now = WallInstant::now();
            if now >= deadline {
                return Ok(());
            }
            let wait = if again.is_empty() {
                Some(next_sweep.min(deadline).saturating_duration_since(now))
            } else {
                Some(StdDuration::ZERO)
            };
            let Some(turn) = self.take_turn(wait) else {
                return Ok(()); // the stack stopped: nothing more to serve
            };
            for (h, r) in turn.closed {
                self.finish(h, r, service);
            }
            for (h, peer) in turn.accepted {
                self.stats.accepted += 1;
                let conn = Conn {
                    peer,
                    session: service.open(peer),
                    out: Vec::new(),
                    sent: 0,
                    eof_seen: false,
                    fin_sent: false,
                    last_progress: WallInstant::now(),
                    error: None,
                    reported: false,
                };
                self.conns.insert(h, conn);
                again.push(h);
            }
            self.stats.peak_open = self.stats.peak_open.max(self.conns.len());
            let mut work: Vec<ConnHandle> = std::mem::take(&mut again);
            work.extend(turn.ready);
            work.sort_unstable();
            work.dedup();
            for h in work {
                if self.drive(h) {
                    again.push(h);
                }
                self.report_if_done(h, service);
            }
            if WallInstant::now() >= next_sweep {
                self.sweep(cfg.idle);
                next_sweep = WallInstant::now() + StdDuration::from_secs(1);
            }
        }
    }

    /// Waits up to `wait` for news, then takes it under one lock hold: closed
    /// connections, ready handles, and every connection waiting to be accepted.
    /// `None` once the stack has stopped.
    fn take_turn(&mut self, wait: Option<StdDuration>) -> Option<Turn> {
        let shared = &*self.shared;
        let until = wait.map(|w| WallInstant::now() + w);
        let mut core = shared.lock();
        loop {
            // Events the loop has not yet moved out of the endpoint (e.g. a Closed
            // made by our own calls) go first, so the closed list is complete
            // before any handle is accepted.
            if core.process_events() {
                shared.notify(&core);
            }
            if core.stopped {
                return None;
            }
            let timed_out = until.is_some_and(|u| WallInstant::now() >= u);
            if core.served.has_news() || timed_out {
                return Some(Self::take(&mut core, self.port));
            }
            core.waiters += 1;
            let ticket = shared.cond.ticket();
            drop(core);
            let left = until.map(|u| u.saturating_duration_since(WallInstant::now()));
            shared.cond.wait(ticket, left);
            core = shared.lock();
            core.waiters -= 1;
        }
    }

    fn take(core: &mut Core, port: u16) -> Turn {
        let mut turn = Turn {
            closed: std::mem::take(&mut core.served.closed),
            ready: core.served.ready.drain(..).collect(),
            accepted: Vec::new(),
        };
        core.served.queued.clear();
        core.served.incoming = false;
        while let Some(h) = core.ep.accept(port) {
            let Some(peer) = core.ep.conn(h).map(|c| c.remote()) else {
                continue;
            };
            core.served.owned.insert(h);
            turn.accepted.push((h, peer));
        }
        if !turn.accepted.is_empty() {
            core.mark_dirty();
        }
        turn
    }

    /// Moves connection `h` on as far as it goes (bounded); true if it may go
    /// further at once (give it another turn).
    fn drive(&mut self, h: ConnHandle) -> bool {
        for _ in 0..STEPS_PER_TURN {
            match self.step(h) {
                Ok(true) => {}
                Ok(false) => return false,
                Err(e) => {
                    if let Some(c) = self.conns.get_mut(&h) {
                        c.error.get_or_insert(e);
                    }
                    self.with_conn(h, |c| c.abort());
                    return false;
                }
            }
        }
        true
    }

    /// Runs `f` on the endpoint's connection `h` under the lock and lets the loop
    /// send what it made. `None` if the endpoint no longer has it.
    fn with_conn<T>(
        &self,
        h: ConnHandle,
        f: impl FnOnce(&mut brisk_tcp::Connection) -> T,
    ) -> Option<T> {
        let mut core = self.shared.lock();
        let r = core.ep.conn_mut(h).map(f);
        core.mark_dirty();
        drop(core);
        self.shared.waker.wake();
        r
    }

    /// One step of connection `h`: send, read, hand to the session. Ok(true) if
    /// anything moved.
    fn step(&mut self, h: ConnHandle) -> io::Result<bool> {
        let Some(conn) = self.conns.get_mut(&h) else {
            return Ok(false);
        };
        if conn.error.is_some() {
            return Ok(false);
        }
        let want_read = !conn.eof_seen && conn.out.len() - conn.sent < OUT_HIGH;
        let pending = &conn.out[conn.sent..];
        let fin_due = !conn.fin_sent && pending.is_empty() && conn.session.finished();
        let scratch = &mut self.scratch;
        let mut core = self.shared.lock();
        let Some(c) = core.ep.conn_mut(h) else {
            return Ok(false);
        };
        let wrote = if pending.is_empty() {
            0
        } else {
            c.write(pending)
        };
        if fin_due {
            c.shutdown_write();
        }
        let got = if want_read { c.read(scratch) } else { 0 };
        let eof = want_read && got == 0 && c.peer_closed() && c.readable() == 0;
        core.mark_dirty();
        drop(core);
        self.shared.waker.wake();

        let mut moved = wrote > 0 || got > 0 || fin_due;
        conn.sent += wrote;
        if conn.sent == conn.out.len() {
            conn.out.clear();
            conn.sent = 0;
        } else if conn.sent > OUT_HIGH {
            conn.out.drain(..conn.sent);
            conn.sent = 0;
        }
        if fin_due {
            conn.fin_sent = true;
        }
        if got > 0 {
            conn.session.input(&scratch[..got], &mut conn.out)?;
        } else if eof {
            conn.eof_seen = true;
            conn.session.eof(&mut conn.out)?;
            moved = true;
        }
        if conn.out.is_empty() && !conn.fin_sent {
            conn.session.refill(&mut conn.out)?;
            moved |= !conn.out.is_empty();
        }
        if conn.out.is_empty() && !conn.fin_sent && conn.session.finished() {
            moved = true; // the FIN goes on the next step
        }
        if moved {
            conn.last_progress = WallInstant::now();
        }
        // Free an idle connection's buffer.
        if conn.out.is_empty() && conn.out.capacity() > CHUNK {
            conn.out = Vec::new();
        }
        Ok(moved)
    }

    /// Reports a connection whose exchange is over (both FINs) at once, rather
    /// than when the endpoint lets it go (after TIME-WAIT, if brisk closed first).
    fn report_if_done(&mut self, h: ConnHandle, service: &mut dyn Service) {
        let Some(conn) = self.conns.get_mut(&h) else {
            return;
        };
        if conn.fin_sent && conn.eof_seen && !conn.reported && conn.error.is_none() {
            conn.reported = true;
            service.closed(conn.peer, Ok(conn.session.report()));
        }
    }

    /// The endpoint closed `h`: report it (if not yet) and forget it.
    fn finish(&mut self, h: ConnHandle, r: Result<(), ConnError>, service: &mut dyn Service) {
        let Some(conn) = self.conns.remove(&h) else {
            return;
        };
        self.stats.closed += 1;
        if conn.reported {
            return;
        }
        let outcome = match (conn.error, r) {
            (Some(e), _) => Err(e),
            (None, Err(e)) if !conn.fin_sent || !conn.eof_seen => {
                Err(io::Error::other(format!("{e} ({})", conn.session.report())))
            }
            _ => Ok(conn.session.report()),
        };
        service.closed(conn.peer, outcome);
    }

    /// Resets connections idle for longer than `idle`.
    fn sweep(&mut self, idle: StdDuration) {
        let now = WallInstant::now();
        let stale: Vec<ConnHandle> = self
            .conns
            .iter()
            .filter(|(_, c)| c.error.is_none() && now.duration_since(c.last_progress) > idle)
            .map(|(h, _)| *h)
            .collect();
        for h in stale {
            self.stats.idle_resets += 1;
            if let Some(c) = self.conns.get_mut(&h) {
                c.error = Some(io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("idle for {} s", idle.as_secs()),
                ));
            }
            self.with_conn(h, |c| c.abort());
        }
    }

    /// Stops serving: resets what is left, reports it, and hands the port back.
    fn shutdown(&mut self, service: &mut dyn Service) {
        let mut core = self.shared.lock();
        core.served.ports.retain(|&p| p != self.port);
        for h in self.conns.keys() {
            if let Some(c) = core.ep.conn_mut(*h) {
                c.abort();
            }
            core.served.owned.remove(h);
        }
        core.mark_dirty();
        drop(core);
        self.shared.waker.wake();
        for (_, conn) in self.conns.drain() {
            if conn.reported {
                continue;
            }
            let outcome = Err(conn
                .error
                .unwrap_or_else(|| io::Error::new(io::ErrorKind::Interrupted, "server stopped")));
            service.closed(conn.peer, outcome);
        }
    }
}

/// Echo: every byte back, FIN after the peer's.
#[derive(Default)]
pub struct Echo {
    bytes: u64,
    done: bool,
}

impl Session for Echo {
    fn input(&mut self, data: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        out.extend_from_slice(data);
        self.bytes += data.len() as u64;
        Ok(())
    }
    fn eof(&mut self, _out: &mut Vec<u8>) -> io::Result<()> {
        self.done = true;
        Ok(())
    }
    fn finished(&self) -> bool {
        self.done
    }
    fn report(&self) -> String {
        format!("echoed {} bytes", self.bytes)
    }
}

/// Sink: reads to the peer's FIN, hashing; reports bytes and SHA-256.
#[derive(Default)]
pub struct Sink {
    bytes: u64,
    hash: sha2::Sha256,
    digest: Option<String>,
}

impl Session for Sink {
    fn input(&mut self, data: &[u8], _out: &mut Vec<u8>) -> io::Result<()> {
        use sha2::Digest;
        self.hash.update(data);
        self.bytes += data.len() as u64;
        Ok(())
    }
    fn eof(&mut self, _out: &mut Vec<u8>) -> io::Result<()> {
        use sha2::Digest;
        let h = std::mem::take(&mut self.hash);
        self.digest = Some(crate::tools::hex(&h.finalize()));
        Ok(())
    }
    fn finished(&self) -> bool {
        self.digest.is_some()
    }
    fn report(&self) -> String {
        format!(
            "sink: {} bytes, sha256 {}",
            self.bytes,
            self.digest.as_deref().unwrap_or("-")
        )
    }
}

/// HTTP/1.1 files from a directory, one request per connection
/// ([`crate::http::reply_to`]), the body streamed from the file as the peer takes it.
pub struct HttpFiles {
    root: Arc<std::path::PathBuf>,
    head: Vec<u8>,
    reply: Option<crate::http::Reply>,
    body_left: u64,
}

impl HttpFiles {
    pub fn new(root: Arc<std::path::PathBuf>) -> HttpFiles {
        HttpFiles {
            root,
            head: Vec::new(),
            reply: None,
            body_left: 0,
        }
    }

    fn answer(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        let mut r: &[u8] = &self.head;
        let reply = crate::http::reply_to(&mut r, &self.root)?;
        out.extend_from_slice(&reply.head);
        self.body_left = reply.body.as_ref().map_or(0, |b| b.1);
        self.head = Vec::new();
        self.reply = Some(reply);
        Ok(())
    }
}

impl Session for HttpFiles {
    fn input(&mut self, data: &[u8], out: &mut Vec<u8>) -> io::Result<()> {
        if self.reply.is_some() {
            return Ok(()); // one request per connection: the rest is ignored
        }
        let room = crate::http::MAX_HEAD + 1 - self.head.len().min(crate::http::MAX_HEAD + 1);
        self.head.extend_from_slice(&data[..data.len().min(room)]);
        if crate::http::head_complete(&self.head) || self.head.len() > crate::http::MAX_HEAD {
            self.answer(out)?;
        }
        Ok(())
    }
    fn eof(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        if self.reply.is_none() {
            if self.head.is_empty() {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "connection closed",
                ));
            }
            self.answer(out)?;
        }
        Ok(())
    }
    fn refill(&mut self, out: &mut Vec<u8>) -> io::Result<()> {
        use std::io::Read;
        let Some((file, _)) = self.reply.as_mut().and_then(|r| r.body.as_mut()) else {
            return Ok(());
        };
        if self.body_left == 0 {
            return Ok(());
        }
        let want = (CHUNK as u64).min(self.body_left) as usize;
        let at = out.len();
        out.resize(at + want, 0);
        let n = file.read(&mut out[at..])?;
        out.truncate(at + n);
        if n == 0 {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the file got shorter while being sent",
            ));
        }
        self.body_left -= n as u64;
        if let Some(r) = self.reply.as_mut() {
            r.served.body_bytes += n as u64;
        }
        Ok(())
    }
    fn finished(&self) -> bool {
        self.reply.is_some() && self.body_left == 0
    }
    fn report(&self) -> String {
        match &self.reply {
            Some(r) => format!(
                "{} {} ({} bytes)",
                r.served.status, r.served.path, r.served.body_bytes
            ),
            None => "no request".into(),
        }
    }
}

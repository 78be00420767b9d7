//! A blocking, `std::net`-shaped socket API over a [`BriskStack`], for programs that
//! want brisk where they would use `std::net::{TcpListener, TcpStream}`:
//!
//! ```no_run
//! # fn demo(stack: &brisk_emu::BriskStack) -> std::io::Result<()> {
//! use std::io::{Read, Write};
//! let listener = brisk_emu::TcpListener::bind(stack, 8080)?;
//! let (mut conn, peer) = listener.accept()?;
//! let mut buf = [0u8; 1024];
//! let n = conn.read(&mut buf)?;
//! conn.write_all(&buf[..n])?;
//! conn.shutdown(std::net::Shutdown::Write)?;
//! # let _ = peer; Ok(()) }
//! ```
//! Semantics follow `std::net` and Linux: `read` blocks until data, returns `Ok(0)` at
//! the peer's FIN and `ConnectionReset` after an RST; `write` blocks until at least one
//! byte fits in the send buffer and returns how many did (`write_all` loops);
//! `shutdown(Write)` sends FIN after queued data; dropping a stream closes it
//! gracefully, or with RST if received data was left unread (like Linux `close`).
//! Timeouts: `set_read_timeout`/`set_write_timeout` (`WouldBlock`-free: expiry gives
//! `TimedOut`), `connect_timeout`, `accept_timeout`. Every call is safe from any
//! thread; the streams are `Send + Sync` and `&TcpStream` implements `Read`/`Write`.

use std::io::{self, ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration as StdDuration;

use brisk_tcp::stream::ByteStream;
use brisk_tcp::{ConnError, TcpInfo, TraceEvent, UnorderedRead};

use crate::stack::{BriskStack, Core, Shared};

fn conn_error(e: ConnError) -> io::Error {
    let kind = match e {
        ConnError::Reset => ErrorKind::ConnectionReset,
        ConnError::Refused => ErrorKind::ConnectionRefused,
        ConnError::TimedOut { .. } | ConnError::UserTimeout | ConnError::KeepaliveTimeout => {
            ErrorKind::TimedOut
        }
        ConnError::Aborted => ErrorKind::ConnectionAborted,
        ConnError::AddrInUse => ErrorKind::AddrInUse,
        ConnError::TableFull => ErrorKind::OutOfMemory,
        ConnError::Unsupported => ErrorKind::Unsupported,
    };
    io::Error::new(kind, e)
}

fn stopped() -> io::Error {
    io::Error::new(
        ErrorKind::NotConnected,
        "the brisk stack's packet loop has stopped",
    )
}

/// Waits for the stack's events (`Shared::cond`) until `f` gives an answer or `timeout` passes.
fn wait_for<T>(
    shared: &Shared,
    timeout: Option<StdDuration>,
    mut f: impl FnMut(&mut Core) -> Option<io::Result<T>>,
) -> io::Result<T> {
    let deadline = timeout.map(|t| std::time::Instant::now() + t);
    let mut core = shared.lock();
    loop {
        if let Some(r) = f(&mut core) {
            return r;
        }
        if core.stopped {
            return Err(stopped());
        }
        core.waiters += 1;
        // Read under the lock: a notify after this point is not lost.
        let ticket = shared.cond.ticket();
        drop(core);
        let left = deadline.map(|d| d.saturating_duration_since(std::time::Instant::now()));
        if left.is_some_and(|l| l.is_zero()) {
            shared.lock().waiters -= 1;
            return Err(io::Error::new(ErrorKind::TimedOut, "timed out"));
        }
        shared.cond.wait(ticket, left);
        core = shared.lock();
        core.waiters -= 1;
    }
}

/// What [`TcpStream::mptcp`] reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MptcpView {
    pub is_mptcp: bool,
    /// Why the connection fell back to plain TCP, if it offered MPTCP and did.
    pub fallback: Option<String>,
    /// Per subflow: (local, remote, bytes sent at least once, may carry data).
    pub subflows: Vec<(SocketAddr, SocketAddr, u64, bool)>,
    /// The connection's MPTCP counters (`Debug`), `None` for plain TCP.
    pub counters: Option<String>,
    /// The data level's state in one line (`Connection::mptcp_debug`).
    pub debug: String,
}

/// A brisk TCP connection; see the module docs.
pub struct TcpStream {
    shared: Arc<Shared>,
    id: u64,
    local: SocketAddr,
    peer: SocketAddr,
    read_timeout: Option<StdDuration>,
    write_timeout: Option<StdDuration>,
    read_shut: AtomicBool,
}

impl std::fmt::Debug for TcpStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpStream")
            .field("local", &self.local)
            .field("peer", &self.peer)
            .finish()
    }
}

impl TcpStream {
    /// Active open to `addr`, blocking until established (or refused / timed out after
    /// the SYN retries, as Linux: about two minutes with the defaults).
    pub fn connect(stack: &BriskStack, addr: SocketAddr) -> io::Result<TcpStream> {
        Self::connect_opt(stack, addr, None)
    }

    /// As [`TcpStream::connect`], giving up after `timeout` (the attempt is aborted).
    pub fn connect_timeout(
        stack: &BriskStack,
        addr: SocketAddr,
        timeout: StdDuration,
    ) -> io::Result<TcpStream> {
        Self::connect_opt(stack, addr, Some(timeout))
    }

    /// As [`TcpStream::connect_timeout`] with this connection's own TCP settings
    /// (congestion control, buffers, ...) instead of the stack's.
    pub fn connect_with(
        stack: &BriskStack,
        addr: SocketAddr,
        cfg: brisk_tcp::Config,
        timeout: Option<StdDuration>,
    ) -> io::Result<TcpStream> {
        Self::connect_cfg(stack, addr, Some(cfg), timeout, &[], None)
    }

    /// As [`TcpStream::connect_with`], from the stack's local address `local` (one of
    /// a multi-homed stack's addresses, e.g. the two-path lab's `198.18.k.3`): the
    /// flow leaves on that address's path (brisk-tcp's `Endpoint::connect_from`).
    pub fn connect_from(
        stack: &BriskStack,
        local: std::net::IpAddr,
        addr: SocketAddr,
        cfg: brisk_tcp::Config,
        timeout: Option<StdDuration>,
    ) -> io::Result<TcpStream> {
        Self::connect_cfg(stack, addr, Some(cfg), timeout, &[], Some(local))
    }

    /// As [`TcpStream::connect_with`], with `first` written before the SYN goes out
    /// (Linux's `TCP_FASTOPEN_CONNECT`: with `cfg.fastopen` and a cookie cached for
    /// `addr`, the SYN carries up to an MSS of it; otherwise it waits for the
    /// handshake).
    pub fn connect_fastopen(
        stack: &BriskStack,
        addr: SocketAddr,
        cfg: brisk_tcp::Config,
        first: &[u8],
        timeout: Option<StdDuration>,
    ) -> io::Result<TcpStream> {
        Self::connect_cfg(stack, addr, Some(cfg), timeout, first, None)
    }

    fn connect_opt(
        stack: &BriskStack,
        addr: SocketAddr,
        timeout: Option<StdDuration>,
    ) -> io::Result<TcpStream> {
        Self::connect_cfg(stack, addr, None, timeout, &[], None)
    }

    fn connect_cfg(
        stack: &BriskStack,
        addr: SocketAddr,
        cfg: Option<brisk_tcp::Config>,
        timeout: Option<StdDuration>,
        first: &[u8],
        from: Option<std::net::IpAddr>,
    ) -> io::Result<TcpStream> {
        let shared = &stack.shared;
        let (id, local) = {
            let mut core = shared.lock();
            if core.stopped {
                return Err(stopped());
            }
            let now = core.advance(shared.clock.now());
            let cfg = cfg.unwrap_or_else(|| core.tcp.clone());
            let h = match from {
                Some(ip) => core.ep.connect_from(
                    now,
                    SocketAddr::new(ip, 0),
                    addr,
                    std::sync::Arc::new(cfg),
                ),
                None => core.ep.connect(now, 0, addr, cfg),
            }
            .map_err(conn_error)?;
            if !first.is_empty() {
                if let Some(c) = core.ep.conn_mut(h) {
                    if c.write(first) < first.len() {
                        return Err(io::Error::new(
                            io::ErrorKind::InvalidInput,
                            "the first write does not fit the send buffer",
                        ));
                    }
                }
            }
            let local = core.ep.conn(h).map(|c| c.local()).unwrap_or(addr);
            core.mark_dirty();
            (core.add_sock(h, false), local)
        };
        shared.waker.wake();
        let stream = TcpStream {
            shared: Arc::clone(shared),
            id,
            local,
            peer: addr,
            read_timeout: None,
            write_timeout: None,
            read_shut: AtomicBool::new(false),
        };
        wait_for(shared, timeout, |core| {
            let s = core.socks.get(&id)?;
            if s.connected {
                Some(Ok(()))
            } else if s.closed {
                Some(Err(conn_error(s.error.unwrap_or(ConnError::Refused))))
            } else {
                None
            }
        })?;
        // On error `stream` drops here, which aborts the attempt.
        Ok(stream)
    }

    pub fn peer_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.peer)
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(self.local)
    }

    pub fn set_read_timeout(&mut self, t: Option<StdDuration>) -> io::Result<()> {
        self.read_timeout = t;
        Ok(())
    }

    pub fn set_write_timeout(&mut self, t: Option<StdDuration>) -> io::Result<()> {
        self.write_timeout = t;
        Ok(())
    }

    /// Bounds how far writes run ahead of the network, as Linux's `TCP_NOTSENT_LOWAT`
    /// does (`tcp_stream_memory_free`): with `Some(floor)` a write waits while the
    /// bytes written but not yet sent reach the larger of `floor` and the bytes in
    /// flight (Linux's autotuned send buffer, `tcp_sndbuf_expand`, holds about two
    /// windows: one in flight, one to send). The stack sends exactly as before as long
    /// as the writer refills in time; what it changes is how much is left to send when
    /// the writer stops. `None` (the default): only the send buffer bounds writes.
    pub fn set_notsent_limit(&self, floor: Option<usize>) -> io::Result<()> {
        let mut core = self.shared.lock();
        let s = core.socks.get_mut(&self.id).ok_or_else(stopped)?;
        s.notsent_floor = floor;
        Ok(())
    }

    /// `Write`: FIN after queued data (half-close); `Read`: later reads return 0;
    /// `Both`: both.
    pub fn shutdown(&self, how: Shutdown) -> io::Result<()> {
        if matches!(how, Shutdown::Read | Shutdown::Both) {
            self.read_shut.store(true, Ordering::Relaxed);
        }
        if matches!(how, Shutdown::Write | Shutdown::Both) {
            self.with_conn(|c| c.shutdown_write())?;
        }
        Ok(())
    }

    /// Resets the connection (RST now, buffers dropped), like `SO_LINGER` 0 + close.
    pub fn abort(&self) -> io::Result<()> {
        self.with_conn(|c| c.abort())
    }

    /// A `TCP_INFO`-like snapshot; `None` once the connection is gone.
    pub fn info(&self) -> Option<TcpInfo> {
        let core = self.shared.lock();
        let h = core.socks.get(&self.id)?.handle?;
        core.ep.conn(h).map(|c| c.info())
    }

    /// Each subflow's `TcpInfo` of an MPTCP connection, the initial one first (empty
    /// for plain TCP or once the connection is gone): `info` is the first subflow's
    /// only, so a connection's retransmissions and compound cwnd are sums of these.
    pub fn mptcp_subflow_infos(&self) -> Vec<TcpInfo> {
        let core = self.shared.lock();
        let Some(h) = core.socks.get(&self.id).and_then(|s| s.handle) else {
            return Vec::new();
        };
        core.ep
            .conn(h)
            .map_or_else(Vec::new, |c| c.mptcp_subflow_infos())
    }

    /// The MPTCP view of the connection (`None` once it is gone): whether it runs
    /// MPTCP, why it fell back if it did, and each subflow's (local, remote, bytes
    /// sent at least once, may carry data), the initial subflow first.
    pub fn mptcp(&self) -> Option<MptcpView> {
        let core = self.shared.lock();
        let h = core.socks.get(&self.id)?.handle?;
        core.ep.conn(h).map(|c| MptcpView {
            is_mptcp: c.is_mptcp(),
            fallback: c.mptcp_fallback().map(|f| format!("{f:?}")),
            subflows: c.mptcp_subflow_info(),
            counters: c.mptcp_counters().map(|k| format!("{k:?}")),
            debug: c.mptcp_debug(),
        })
    }

    /// Records RTT samples, cwnd changes and retransmissions (bounded) for
    /// [`TcpStream::drain_trace`].
    pub fn set_trace(&self, on: bool) -> io::Result<()> {
        self.with_conn(|c| c.set_trace(on))
    }

    pub fn drain_trace(&self, out: &mut Vec<TraceEvent>) {
        let mut core = self.shared.lock();
        if let Some(h) = core.socks.get(&self.id).and_then(|s| s.handle) {
            if let Some(c) = core.ep.conn_mut(h) {
                c.drain_trace(out);
            }
        }
    }

    /// Bytes written but not yet acknowledged by the peer.
    pub fn unacked(&self) -> usize {
        let core = self.shared.lock();
        core.socks
            .get(&self.id)
            .and_then(|s| s.handle)
            .and_then(|h| core.ep.conn(h))
            .map_or(0, |c| c.send_buffered())
    }

    /// Blocks until everything written has been acknowledged (or the connection ends),
    /// up to `timeout`.
    pub fn wait_acked(&self, timeout: StdDuration) -> io::Result<()> {
        // Acknowledgements carry no event; poll at a short interval.
        let end = std::time::Instant::now() + timeout;
        loop {
            {
                let core = self.shared.lock();
                let s = core.socks.get(&self.id);
                let live = s.and_then(|s| s.handle).and_then(|h| core.ep.conn(h));
                match live {
                    Some(c) if c.send_buffered() > 0 => {}
                    Some(_) => return Ok(()),
                    None => {
                        return match s.and_then(|s| s.error) {
                            Some(e) => Err(conn_error(e)),
                            None => Ok(()),
                        }
                    }
                }
            }
            if std::time::Instant::now() >= end {
                return Err(io::Error::new(
                    ErrorKind::TimedOut,
                    "data still unacknowledged",
                ));
            }
            std::thread::sleep(StdDuration::from_millis(1));
        }
    }

    /// Blocks until the connection has fully closed (e.g. after `shutdown(Both)` and
    /// the peer's FIN, through TIME-WAIT), up to `timeout`. Returns how it ended.
    pub fn wait_closed(&self, timeout: StdDuration) -> io::Result<()> {
        let id = self.id;
        wait_for(&self.shared, Some(timeout), |core| {
            let s = core.socks.get(&id)?;
            s.closed
                .then(|| s.error.map_or(Ok(()), |e| Err(conn_error(e))))
        })
    }

    fn with_conn<T>(&self, f: impl FnOnce(&mut brisk_tcp::Connection) -> T) -> io::Result<T> {
        let mut core = self.shared.lock();
        let s = core.socks.get(&self.id).ok_or_else(stopped)?;
        let Some(h) = s.handle else {
            return Err(match s.error {
                Some(e) => conn_error(e),
                None => io::Error::new(ErrorKind::NotConnected, "connection closed"),
            });
        };
        let Some(c) = core.ep.conn_mut(h) else {
            return Err(io::Error::new(ErrorKind::NotConnected, "connection closed"));
        };
        let r = f(c);
        core.mark_dirty();
        drop(core);
        self.shared.waker.wake();
        Ok(r)
    }

    fn do_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        self.read_with(buf, 0, |c, buf| {
            let n = c.read(buf);
            (n > 0).then_some(n)
        })
    }

    /// Blocks until `f` takes something from the connection (giving `Some`) or the
    /// stream ends (giving `eof`); shared by in-order and unordered reads.
    fn read_with<T>(
        &self,
        buf: &mut [u8],
        eof: T,
        mut f: impl FnMut(&mut brisk_tcp::Connection, &mut [u8]) -> Option<T>,
    ) -> io::Result<T> {
        if buf.is_empty() || self.read_shut.load(Ordering::Relaxed) {
            return Ok(eof);
        }
        let id = self.id;
        let waker = &self.shared.waker;
        let mut eof = Some(eof);
        wait_for(&self.shared, self.read_timeout, |core| {
            let s = core.socks.get(&id)?;
            let (handle, peer_closed, error) = (s.handle, s.peer_closed, s.error);
            let Some(h) = handle else {
                return Some(match error {
                    Some(e) => Err(conn_error(e)),
                    None => Ok(eof.take()?),
                });
            };
            let c = core.ep.conn_mut(h)?;
            if let Some(got) = f(c, buf) {
                // Reading may open the window: let the loop send the update.
                core.mark_dirty();
                waker.wake();
                return Some(Ok(got));
            }
            if peer_closed || c.peer_closed() {
                return Some(Ok(eof.take()?));
            }
            None
        })
    }

    fn do_write(&self, buf: &[u8]) -> io::Result<usize> {
        self.write_prio(buf, 0)
    }

    /// Writes all of `buf`, then shuts the write side; the last piece and the FIN are
    /// queued under one lock, so the stack cannot send the data before the FIN is
    /// queued and the FIN rides on the last data segment, as when an application's
    /// final `send()` and `shutdown()` reach the stack together (the simulator's apps
    /// write and close in one event).
    pub fn write_all_then_shutdown(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.write_inner(buf, 0, true)?;
            buf = &buf[n..];
        }
        self.shutdown(Shutdown::Write)
    }

    fn write_prio(&self, buf: &[u8], priority: u8) -> io::Result<usize> {
        self.write_inner(buf, priority, false)
    }

    /// `fin`: if all of `buf` is taken, queue the FIN behind it before the stack runs.
    fn write_inner(&self, buf: &[u8], priority: u8, fin: bool) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        let id = self.id;
        let waker = &self.shared.waker;
        wait_for(&self.shared, self.write_timeout, |core| {
            let s = core.socks.get(&id)?;
            let (handle, error) = (s.handle, s.error);
            let Some(h) = handle else {
                return Some(Err(error.map_or_else(
                    || io::Error::new(ErrorKind::BrokenPipe, "connection closed"),
                    conn_error,
                )));
            };
            let floor = s.notsent_floor;
            let c = core.ep.conn_mut(h)?;
            if let Err(e) = c.check_whole_write(buf.len()) {
                return Some(Err(e));
            }
            use brisk_tcp::State;
            let open = matches!(
                c.state(),
                State::SynSent | State::SynReceived | State::Established | State::CloseWait
            );
            // A connection that can no longer take data answers below, not by waiting.
            if let Some(floor) = floor.filter(|_| open) {
                let free = super::below_notsent_limit(c, floor);
                let s = core.socks.get_mut(&id)?;
                if free && s.notsent_waiting {
                    s.notsent_waiting = false;
                    core.notsent_waiting -= 1;
                } else if !free {
                    // The loop wakes this writer once the limit no longer holds.
                    if !s.notsent_waiting {
                        s.notsent_waiting = true;
                        core.notsent_waiting += 1;
                    }
                    return None;
                }
            }
            let c = core.ep.conn_mut(h)?;
            let n = c.write_with_priority(buf, priority);
            if n > 0 {
                if fin && n == buf.len() {
                    c.shutdown_write();
                }
                core.mark_dirty();
                waker.wake();
                return Some(Ok(n));
            }
            if !open {
                return Some(Err(io::Error::new(
                    ErrorKind::BrokenPipe,
                    "connection is shut down for writing",
                )));
            }
            None
        })
    }
}

impl Read for TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.do_read(buf)
    }
}

impl Read for &TcpStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.do_read(buf)
    }
}

impl Write for TcpStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.do_write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl Write for &TcpStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.do_write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// brisk's real stream as brisk-tcp's [`ByteStream`], blocking as `Read`/`Write`
/// are: `read_unordered` waits for data and returns out-of-order runs when the
/// connection has unordered receive on (`brisk_tcp::Config::unordered`).
impl ByteStream for &TcpStream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        self.do_write(data)
    }
    fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
        self.write_prio(data, priority)
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.do_read(buf)
    }
    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        self.read_with(buf, None, |c, buf| c.read_unordered(buf).map(Some))
    }
    fn supports_unordered(&self) -> bool {
        self.with_conn(|c| c.unordered()).unwrap_or(false)
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
}

impl ByteStream for TcpStream {
    fn write(&mut self, data: &[u8]) -> io::Result<usize> {
        ByteStream::write(&mut &*self, data)
    }
    fn write_with_priority(&mut self, data: &[u8], priority: u8) -> io::Result<usize> {
        (&*self).write_with_priority(data, priority)
    }
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        ByteStream::read(&mut &*self, buf)
    }
    fn read_unordered(&mut self, buf: &mut [u8]) -> io::Result<Option<UnorderedRead>> {
        (&*self).read_unordered(buf)
    }
    fn supports_unordered(&self) -> bool {
        (&self).supports_unordered()
    }
    fn shutdown_write(&mut self) -> io::Result<()> {
        self.shutdown(Shutdown::Write)
    }
}

impl Drop for TcpStream {
    fn drop(&mut self) {
        let mut core = self.shared.lock();
        if let Some(h) = core.socks.get(&self.id).and_then(|s| s.handle) {
            if let Some(c) = core.ep.conn_mut(h) {
                // Linux: closing with unread data resets the connection (RFC 2525 §2.17).
                if c.readable() > 0 || !c.state().synchronized() {
                    c.abort();
                } else {
                    c.close();
                }
            }
            core.mark_dirty();
        }
        core.remove_sock(self.id);
        drop(core);
        self.shared.waker.wake();
    }
}

/// A brisk listening socket on the stack's address.
pub struct TcpListener {
    shared: Arc<Shared>,
    port: u16,
    accept_timeout: Option<StdDuration>,
}

impl std::fmt::Debug for TcpListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TcpListener")
            .field("port", &self.port)
            .finish()
    }
}

impl TcpListener {
    /// Listens on `port` (non-zero) with the stack's backlog and TCP config. The
    /// endpoint keeps listening on the port for the stack's life.
    pub fn bind(stack: &BriskStack, port: u16) -> io::Result<TcpListener> {
        let mut core = stack.shared.lock();
        let (backlog, cfg) = (core.backlog, core.tcp.clone());
        core.ep.listen(port, backlog, cfg).map_err(conn_error)?;
        Ok(TcpListener {
            shared: Arc::clone(&stack.shared),
            port,
            accept_timeout: None,
        })
    }

    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        Ok(SocketAddr::V4(SocketAddrV4::new(
            self.shared.local,
            self.port,
        )))
    }

    /// Bounds later `accept` calls (`TimedOut` on expiry); `None` blocks.
    pub fn set_accept_timeout(&mut self, t: Option<StdDuration>) {
        self.accept_timeout = t;
    }

    /// The next established connection and its peer's address.
    pub fn accept(&self) -> io::Result<(TcpStream, SocketAddr)> {
        let port = self.port;
        let local = self.local_addr()?;
        let (id, peer) = wait_for(&self.shared, self.accept_timeout, |core| {
            let h = core.ep.accept(port)?;
            let peer = core.ep.conn(h).map(|c| c.remote())?;
            core.mark_dirty();
            Some(Ok((core.add_sock(h, true), peer)))
        })?;
        self.shared.waker.wake();
        Ok((
            TcpStream {
                shared: Arc::clone(&self.shared),
                id,
                local,
                peer,
                read_timeout: None,
                write_timeout: None,
                read_shut: AtomicBool::new(false),
            },
            peer,
        ))
    }
}

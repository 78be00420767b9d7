//! One side behind several loops: brisk's stack with an address on each path of the
//! multipath lab (tools/multipath.rs) is one endpoint, but every path is its own
//! emulator loop, and a loop takes one [`Side`] per end. [`split`] shares one inner
//! side (brisk's [`StackSide`](crate::StackSide), or the [`ThreadedSide`] in front of
//! it) between N loops: port `k` is path `k`'s side.
//!
//! ```text
//!                 ┌ port 0 ◀═▶ emulator 0 (path 0)
//!  inner side ◀─ lock ┤
//!                 └ port 1 ◀═▶ emulator 1 (path 1)
//! ```
//!
//! * **Out** (`recv`): a port takes its own queue first; otherwise it takes packets
//!   from the inner side and routes each by the caller's `route` (for the lab: the
//!   path of the packet's addresses, the way the lab's namespaces route). A packet for
//!   another port waits in that port's queue (bounded, [`QUEUE`]; full: dropped and
//!   counted, like a full transmit ring) and that port's eventfd wakes its loop. A
//!   packet no port owns is dropped and counted.
//! * **In** (`send`): any port hands its packet to the inner side (one endpoint,
//!   several interfaces).
//! * **Readiness**: a port's `poll_fd` is an epoll set of the inner side's fd and the
//!   port's own eventfd; `poll_timeout` is the inner side's (brisk's timers), so
//!   whichever loop gets there first runs them.
//!
//! Why a shared lock rather than a stack per path: the MPTCP connection is one
//! endpoint's (its token table, its subflows' 4-tuples), so its subflows on different
//! paths must reach the same `Endpoint`. brisk already serialises the endpoint behind
//! one lock; the ports add a second short one (a queue pop or one inner call). The
//! alternative, one loop driving all paths' links, would have meant a new emulator
//! loop; this keeps each path's loop, report and self-check unchanged.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use brisk_time::Instant;

use crate::emu::side::Side;
use crate::error::{EmuError, Result};
use crate::os::poll::Epoll;
use crate::os::wake::Waker;

/// Packets one port holds for its loop (taken from the inner side by another port).
pub const QUEUE: usize = 1024;
/// Most packets a port takes from the inner side in one `recv` before it returns
/// (the rest is taken on the next call; the inner side's fd stays readable).
const BATCH: usize = 64;
/// Most ports (the lab has at most 4 paths).
pub const MAX_PORTS: usize = 8;

/// Which port a packet leaves by (`None`: no port; the packet is dropped).
pub type Route = Arc<dyn Fn(&[u8]) -> Option<usize> + Send + Sync>;

/// Packets the split dropped, readable while the loops run.
#[derive(Debug, Default)]
pub struct SplitStats {
    /// A port's queue was full.
    pub queue_full: AtomicU64,
    /// `route` named no port.
    pub unroutable: AtomicU64,
    /// Packets handed from one port's queue to another's loop.
    pub handed_over: AtomicU64,
}

impl SplitStats {
    /// What the emulator's self-check adds: a dropped packet is a loss the model did
    /// not make.
    pub fn warnings(&self) -> Vec<String> {
        let mut w = Vec::new();
        let full = self.queue_full.load(Ordering::Relaxed);
        if full > 0 {
            w.push(format!(
                "{full} packets of brisk's stack dropped: a path's queue from the stack ({QUEUE} packets) was full"
            ));
        }
        let lost = self.unroutable.load(Ordering::Relaxed);
        if lost > 0 {
            w.push(format!(
                "{lost} packets of brisk's stack had an address on no path and were dropped"
            ));
        }
        w
    }
}

struct Inner {
    side: Box<dyn Side + Send>,
    queues: Vec<VecDeque<Vec<u8>>>,
    /// Spent buffers, reused for the next hand-over (no allocation in steady state).
    free: Vec<Vec<u8>>,
}

struct Shared {
    inner: Mutex<Inner>,
    wakers: Vec<Waker>,
    route: Route,
    stats: Arc<SplitStats>,
}

/// Port `k` of a split side: path `k`'s loop's side (module docs).
pub struct SplitPort {
    k: usize,
    shared: Arc<Shared>,
    epoll: Epoll,
}

/// Splits `side` into `ports` sides, routing its output with `route`.
pub fn split(
    side: Box<dyn Side + Send>,
    ports: usize,
    route: Route,
) -> Result<(Vec<SplitPort>, Arc<SplitStats>)> {
    if ports == 0 || ports > MAX_PORTS {
        return Err(EmuError::Config(format!(
            "a split side has 1..={MAX_PORTS} ports, not {ports}"
        )));
    }
    let Some(inner_fd) = side.poll_fd() else {
        return Err(EmuError::Config(
            "a split side needs an inner side with a poll fd".into(),
        ));
    };
    let stats = Arc::new(SplitStats::default());
    let shared = Arc::new(Shared {
        inner: Mutex::new(Inner {
            side,
            queues: (0..ports).map(|_| VecDeque::new()).collect(),
            free: Vec::new(),
        }),
        wakers: (0..ports).map(|_| Waker::new()).collect::<Result<_>>()?,
        route,
        stats: Arc::clone(&stats),
    });
    let mut out = Vec::with_capacity(ports);
    for k in 0..ports {
        let epoll = Epoll::new()?;
        epoll.add(inner_fd, 0)?;
        epoll.add(shared.wakers[k].as_raw_fd(), 1)?;
        out.push(SplitPort {
            k,
            shared: Arc::clone(&shared),
            epoll,
        });
    }
    Ok((out, stats))
}

impl Shared {
    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        // A loop that panicked holding the lock left at worst a queue half-served.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Side for SplitPort {
    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.epoll.as_raw_fd())
    }

    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        let sh = &*self.shared;
        let mut inner = sh.lock();
        if let Some(p) = inner.queues[self.k].pop_front() {
            buf.clear();
            buf.extend_from_slice(&p);
            inner.free.push(p);
            return Ok(true);
        }
        // Queue empty, under the lock: no hand-over can slip between this and the
        // drain.
        sh.wakers[self.k].drain();
        for _ in 0..BATCH {
            if !inner.side.recv(now, buf)? {
                return Ok(false);
            }
            match (sh.route)(buf) {
                Some(j) if j == self.k => return Ok(true),
                Some(j) if j < inner.queues.len() => {
                    if inner.queues[j].len() >= QUEUE {
                        sh.stats.queue_full.fetch_add(1, Ordering::Relaxed);
                        continue;
                    }
                    let mut p = inner.free.pop().unwrap_or_default();
                    p.clear();
                    p.extend_from_slice(buf);
                    inner.queues[j].push_back(p);
                    sh.stats.handed_over.fetch_add(1, Ordering::Relaxed);
                    sh.wakers[j].wake();
                }
                _ => {
                    sh.stats.unroutable.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
        Ok(false)
    }

    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool> {
        self.shared.lock().side.send(now, pkt)
    }

    fn poll_timeout(&self) -> Option<Instant> {
        self.shared.lock().side.poll_timeout()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// An inner side backed by an eventfd and a queue of packets whose first byte
    /// names the port they belong to.
    struct Fake {
        fd: OwnedFd,
        out: VecDeque<Vec<u8>>,
        got: Got,
    }

    impl Side for Fake {
        fn poll_fd(&self) -> Option<RawFd> {
            Some(self.fd.as_raw_fd())
        }
        fn recv(&mut self, _: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
            match self.out.pop_front() {
                Some(p) => {
                    buf.clear();
                    buf.extend_from_slice(&p);
                    Ok(true)
                }
                None => Ok(false),
            }
        }
        fn send(&mut self, _: Instant, pkt: &[u8]) -> io::Result<bool> {
            self.got.lock().unwrap().push(pkt.to_vec());
            Ok(true)
        }
    }

    /// What the fake inner side was handed.
    type Got = Arc<Mutex<Vec<Vec<u8>>>>;

    fn fake(out: Vec<Vec<u8>>) -> (Box<dyn Side + Send>, Got) {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK) };
        assert!(raw >= 0);
        let got = Arc::default();
        let f = Fake {
            // SAFETY: fresh fd.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
            out: out.into(),
            got: Arc::clone(&got),
        };
        (Box::new(f), got)
    }

    fn by_first_byte() -> Route {
        Arc::new(|p: &[u8]| p.first().map(|b| usize::from(*b)))
    }

    fn drain(p: &mut SplitPort) -> Vec<Vec<u8>> {
        let mut v = Vec::new();
        let mut buf = Vec::new();
        // Bounded: the fake holds a little over QUEUE packets.
        for _ in 0..4 * QUEUE {
            match p.recv(Instant::ZERO, &mut buf) {
                Ok(true) => v.push(buf.clone()),
                _ => break,
            }
        }
        v
    }

    #[test]
    fn each_port_gets_its_packets_in_order_and_the_rest_is_counted() {
        let pkts = vec![
            vec![1, 10],
            vec![0, 11],
            vec![1, 12],
            vec![7, 13], // no such port
            vec![0, 14],
        ];
        let (inner, got) = fake(pkts);
        let (mut ports, stats) = split(inner, 2, by_first_byte()).unwrap();
        let mut epoll1 = Epoll::new().unwrap();
        epoll1.add(ports[1].poll_fd().unwrap(), 9).unwrap();
        let p0 = drain(&mut ports[0]);
        assert_eq!(p0, vec![vec![0, 11], vec![0, 14]]);
        // Port 1's packets were handed over and its loop woken.
        assert_eq!(epoll1.wait(0).unwrap(), 1 << 9);
        let p1 = drain(&mut ports[1]);
        assert_eq!(p1, vec![vec![1, 10], vec![1, 12]]);
        assert_eq!(stats.unroutable.load(Ordering::Relaxed), 1);
        assert_eq!(stats.handed_over.load(Ordering::Relaxed), 2);
        assert_eq!(stats.warnings().len(), 1);
        // Both ports deliver into the one inner side.
        assert!(ports[1].send(Instant::ZERO, &[5]).unwrap());
        assert!(ports[0].send(Instant::ZERO, &[6]).unwrap());
        assert_eq!(*got.lock().unwrap(), vec![vec![5], vec![6]]);
    }

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_growing() {
        let pkts = (0..QUEUE + 10).map(|i| vec![1, i as u8]).collect();
        let (inner, _) = fake(pkts);
        let (mut ports, stats) = split(inner, 2, by_first_byte()).unwrap();
        // One call takes at most BATCH packets from the inner side.
        for _ in 0..(QUEUE + 10) / BATCH + 1 {
            assert!(drain(&mut ports[0]).is_empty());
        }
        assert_eq!(stats.queue_full.load(Ordering::Relaxed), 10);
        assert_eq!(drain(&mut ports[1]).len(), QUEUE);
        assert!(!stats.warnings().is_empty());
    }

    #[test]
    fn bad_shapes_are_refused() {
        let (inner, _) = fake(vec![]);
        assert!(split(inner, 0, by_first_byte()).is_err());
        let (inner, _) = fake(vec![]);
        assert!(split(inner, MAX_PORTS + 1, by_first_byte()).is_err());
    }
}

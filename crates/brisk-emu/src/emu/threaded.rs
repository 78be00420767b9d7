//! A [`Side`] on a thread of its own: [`ThreadedSide`] owns an inner side (brisk's
//! [`StackSide`](crate::StackSide) in real runs) on a dedicated thread under the normal
//! scheduling policy and hands packets to and from the emulator loop through two
//! bounded queues, so the inner side's work (brisk's TCP) no longer runs on the loop's
//! thread.
//!
//! ```text
//!  emulator loop ── send: copy into a pooled buffer ─▶ [to_side queue] ── eventfd ─▶ side thread: inner.send
//!  emulator loop ◀─ recv: copy out of the buffer ◀── [to_loop queue] ◀─ eventfd ── side thread: inner.recv
//! ```
//!
//! * **Bounded.** At most [`ThreadedOptions::to_side`] packets wait for the side thread
//!   and [`ThreadedOptions::to_loop`] for the loop. The loop cannot wait (it is the
//!   network), so a full `to_side` queue refuses the packet (`send` returns
//!   `Ok(false)`, which the loop counts as `write_refused`) and counts it, like a NIC's
//!   receive ring. The side thread can: when `to_loop` is full it stops polling the
//!   inner side (so the endpoint keeps its data, like a qdisc behind a full
//!   transmit ring) until the loop has taken half of the queue.
//! * **No allocation per packet in steady state.** Buffers circulate through each
//!   queue's free list; the consumer returns them in batches.
//! * **Wake-ups are coalesced.** Each consumer sleeps on an eventfd ([`Waker`]); a
//!   producer writes it only when no wake-up is pending, and the consumer clears it
//!   only after finding its queue empty, so a busy pipeline costs no syscalls and no
//!   wake-up is lost. Nobody spins: the side thread sleeps in epoll on its inbound
//!   eventfd, the inner side's own fd and a timerfd at the inner side's `poll_timeout`.
//! * **Time.** One [`Clock`] for both threads. The inner side sees each packet at the
//!   time its thread handles it; the loop stamps a packet when it takes it from the
//!   queue. The queueing delay this adds in each direction is measured (log-linear
//!   histograms) and reported as [`ThreadedReport`] when the side is dropped.
//! * **CPU.** The side thread is pinned to one CPU (the last, by default) and the
//!   dumbbell keeps the real-time loop off that CPU (`EmulatorOptions::avoid_cpu`):
//!   unpinned, the side thread was now and then queued behind the `SCHED_FIFO` loop on
//!   the loop's CPU for milliseconds, until the load balancer moved it.
//! * **Shutdown.** Dropping the adaptor stops and joins the thread (which drops the
//!   inner side); a panic on the side thread is caught at the join and reported, and
//!   the adaptor's `recv`/`send` then fail instead of waiting for it.

use std::collections::VecDeque;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use brisk_time::{Duration, Instant};
use serde::Serialize;

use crate::emu::side::Side;
use crate::error::{panic_message, EmuError, Result};
use crate::os::clock::{Clock, TimerFd};
use crate::os::poll::Epoll;
use crate::os::sched::{self, DutyCycle, RtGuard};
use crate::os::wake::Waker;
use crate::tools::hist::{Histogram, LatencySummary};

/// The environment switch for real runs: `BRISK_STACK_THREAD=1` (the default) runs
/// brisk's endpoint on a thread of its own ([`ThreadedSide`]), `=0` on the loop's
/// thread.
pub const STACK_THREAD_ENV: &str = "BRISK_STACK_THREAD";

/// Whether real runs put brisk's endpoint on its own thread (see [`STACK_THREAD_ENV`]).
pub fn stack_thread_enabled() -> bool {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // On one CPU a second busy thread only adds a queue between brisk and the path.
    cpus >= 2 && enabled_from(std::env::var(STACK_THREAD_ENV).ok().as_deref())
}

fn enabled_from(env: Option<&str>) -> bool {
    match env.map(str::trim) {
        Some("1") | Some("on") | Some("yes") => true,
        Some("0") | Some("off") | Some("no") => false,
        _ => DEFAULT_ON,
    }
}

/// The default without the environment variable: on (where the machine has two CPUs
/// or more; `BRISK_STACK_THREAD=0` puts the endpoint back on the loop's thread). With
/// its own thread brisk's endpoint carries about a third more at 10 Gbit/s, zero
/// delay (0.72-0.78x Linux's goodput against 0.57-0.68x on the loop's thread, load 4),
/// and since the thread runs under `SCHED_FIFO` behind a priority-inheriting lock its
/// queues hold packets 156 us at p99 at 1 Gbit/s, 10 ms, under load 4-5 (2.6-7 ms
/// before). The real-packet experiments of `brisk repro --quick` gave the same verdicts
/// either way (23 pass, 4 accepted failures, docs/performance.md).
const DEFAULT_ON: bool = true;

/// `BRISK_STACK_NICE=N` sets the side thread's nice value (-20..=19); without it the
/// thread keeps the caller's (0). At 10 Gbit/s -10 cut the acknowledgements' wait for
/// the thread (p50 190-750 us -> 25-65 us), but at 1 Gbit/s, 10 ms it cost 11-15 % of
/// brisk's goodput (three runs; docs/performance.md), so it is not the default.
fn nice_from_env() -> Option<i32> {
    std::env::var("BRISK_STACK_NICE")
        .ok()
        .and_then(|v| v.trim().parse::<i32>().ok())
        .map(|n| n.clamp(-20, 19))
}

/// The side thread's CPU: `BRISK_STACK_CPU=N`, `=none` for no pinning; by default the
/// last CPU when there are two or more. Unpinned, the side thread was now and then
/// queued behind the real-time loop on the loop's CPU until the load balancer moved
/// it (milliseconds): at 1 Gbit/s, 10 ms brisk then reached 84-88 % of the path
/// instead of 98-99 % (docs/performance.md).
fn cpu_from(env: Option<&str>, cpus: usize) -> Option<usize> {
    match env.map(str::trim) {
        Some("none") | Some("off") | Some("-1") => None,
        Some(v) if v.parse::<usize>().is_ok() => v.parse().ok(),
        _ => (cpus >= 2).then(|| cpus - 1),
    }
}

/// The side thread's scheduling: `BRISK_STACK_RT=0` the normal policy, `=N` (2..=99)
/// `SCHED_FIFO` at N; by default `SCHED_FIFO` one below the loop's
/// ([`sched::RT_DEFAULT_PRIO`]), never on a single CPU (the same switch as the loop's,
/// [`sched::priority_from_env`]). Why real-time: under the normal policy the side
/// thread shares its CPU with the applications and the kernels' TCP, and packets
/// waited for it up to 1.1-5.9 ms (p99) although it was idle most of the time
/// (docs/performance.md). It sleeps in epoll whenever it has nothing to do and keeps
/// the same duty cycle as the loop ([`sched::DutyCycle`]), so it cannot starve its CPU.
const STACK_RT_PRIO: i32 = sched::RT_DEFAULT_PRIO - 1;

/// Queue limits, in packets.
#[derive(Clone, Copy, Debug)]
pub struct ThreadedOptions {
    /// Packets from the loop waiting for the side thread (full: refused, counted).
    pub to_side: usize,
    /// Packets from the side waiting for the loop (full: the side is not polled).
    pub to_loop: usize,
    /// Capacity of a fresh buffer (packets are at most the MTU; a larger one grows it).
    pub buf_size: usize,
    /// Most packets the side thread takes from the inner side before it looks at its
    /// inbound queue again.
    pub batch: usize,
    /// The side thread's nice value (normal policy; negative: more CPU share and
    /// earlier wake-ups than the other normal threads). `None` keeps the caller's.
    pub nice: Option<i32>,
    /// Pins the side thread to this CPU (default: the last CPU; `BRISK_STACK_CPU=N`
    /// or `=none`); give the loop
    /// `EmulatorOptions::avoid_cpu` = the same CPU, so the real-time loop never holds
    /// the side thread off it. `None`: no pinning.
    pub cpu: Option<usize>,
    /// `SCHED_FIFO` priority of the side thread (`BRISK_STACK_RT`; see
    /// [`STACK_RT_PRIO`]); `None`: the normal policy.
    pub rt: Option<i32>,
}

impl Default for ThreadedOptions {
    fn default() -> Self {
        ThreadedOptions {
            to_side: 4096,
            to_loop: 1024,
            buf_size: 2048,
            batch: 64,
            nice: nice_from_env(),
            cpu: cpu_from(
                std::env::var("BRISK_STACK_CPU").ok().as_deref(),
                std::thread::available_parallelism().map_or(1, |n| n.get()),
            ),
            rt: sched::priority_from_env("BRISK_STACK_RT", STACK_RT_PRIO),
        }
    }
}

/// What the adaptor measured, filled in when it is dropped.
#[derive(Clone, Debug, Default, Serialize)]
pub struct ThreadedReport {
    pub to_side_cap: usize,
    pub to_loop_cap: usize,
    /// Loop → side: from the loop's `send` to the side thread taking the packet.
    pub to_side_delay: LatencySummary,
    /// Side → loop: from the inner side emitting the packet to the loop taking it
    /// (the loop stamps its departure then, so this is the delay the adaptor adds to
    /// brisk's packets).
    pub to_loop_delay: LatencySummary,
    /// Packets the loop handed over that a full `to_side` queue refused.
    pub to_side_dropped: u64,
    /// Times the side thread found `to_loop` full and stopped polling the side.
    pub to_loop_full: u64,
    /// CPU seconds of the side thread (`CLOCK_THREAD_CPUTIME_ID`).
    pub thread_cpu_s: f64,
    /// The side thread's scheduling: `SCHED_FIFO 9`, or `normal` (with the reason
    /// when `SCHED_FIFO` was refused).
    pub scheduling: String,
    /// Duty-cycle sleeps of a real-time side thread ([`sched::DutyCycle`]).
    pub duty_sleeps: u64,
    /// The side thread's error or panic, if it ended with one.
    pub error: Option<String>,
}

impl ThreadedReport {
    /// What the emulator's self-check adds for the side thread (emu/health.rs): its
    /// queues delay packets the model had already released (or, towards the side,
    /// handed over), so a p99 above `late_threshold_ns` is a late delivery like the
    /// loop's own, a refused packet is a loss the model did not make, and a thread
    /// that ended with an error ended the side's traffic.
    pub fn warnings(&self, late_threshold_ns: u64) -> Vec<String> {
        let mut w = Vec::new();
        for (name, d) in [
            ("towards the stack", &self.to_side_delay),
            ("towards the loop", &self.to_loop_delay),
        ] {
            if d.count >= 100 && d.p99_ns > late_threshold_ns {
                w.push(format!(
                    "late deliveries: the stack thread's queue {name} delayed packets by p99 {:.0} us > {:.0} us: brisk saw other timing than the model's",
                    d.p99_ns as f64 / 1e3,
                    late_threshold_ns as f64 / 1e3
                ));
            }
        }
        if self.to_side_dropped > 0 {
            w.push(format!(
                "stack thread drops: its full queue refused {} packets: losses the model did not make",
                self.to_side_dropped
            ));
        }
        if let Some(e) = &self.error {
            w.push(format!("stack thread failed: {e}"));
        }
        w
    }
}

/// A bounded single-producer single-consumer packet queue with a buffer free list.
struct Chan {
    q: Mutex<VecDeque<(Instant, Vec<u8>)>>,
    /// Packets queued or in the consumer's taken batch, not yet consumed.
    len: AtomicUsize,
    free: Mutex<Vec<Vec<u8>>>,
    cap: usize,
    /// The consumer's wake-up.
    waker: Waker,
}

impl Chan {
    fn new(cap: usize) -> Result<Chan> {
        Ok(Chan {
            q: Mutex::new(VecDeque::with_capacity(cap)),
            len: AtomicUsize::new(0),
            free: Mutex::new(Vec::new()),
            cap,
            waker: Waker::new()?,
        })
    }

    fn is_full(&self) -> bool {
        self.len.load(Ordering::Acquire) >= self.cap
    }
}

/// The producer's end: a local cache of free buffers.
struct Tx {
    chan: Arc<Chan>,
    cache: Vec<Vec<u8>>,
    buf_size: usize,
}

impl Tx {
    fn buffer(&mut self) -> Vec<u8> {
        if self.cache.is_empty() {
            let mut free = self.chan.free.lock().unwrap_or_else(|e| e.into_inner());
            std::mem::swap(&mut self.cache, &mut *free);
        }
        self.cache
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(self.buf_size))
    }

    /// Queues `buf` stamped `t`; gives it back if the queue is full.
    fn push(&mut self, t: Instant, buf: Vec<u8>) -> std::result::Result<(), Vec<u8>> {
        if self.chan.is_full() {
            return Err(buf);
        }
        self.chan.len.fetch_add(1, Ordering::AcqRel);
        self.chan
            .q
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push_back((t, buf));
        self.chan.waker.wake();
        Ok(())
    }
}

/// The consumer's end: the batch it took, and buffers to give back.
struct Rx {
    chan: Arc<Chan>,
    batch: VecDeque<(Instant, Vec<u8>)>,
    spent: Vec<Vec<u8>>,
}

impl Rx {
    /// The next packet, if any. The consumer's eventfd is cleared only when the queue
    /// was found empty (then looked at once more, so a racing push is not lost).
    fn pop(&mut self) -> Option<(Instant, Vec<u8>)> {
        if self.batch.is_empty() {
            self.refill();
            if self.batch.is_empty() {
                self.chan.waker.drain();
                self.refill();
            }
        }
        let item = self.batch.pop_front()?;
        self.chan.len.fetch_sub(1, Ordering::AcqRel);
        Some(item)
    }

    fn refill(&mut self) {
        let mut q = self.chan.q.lock().unwrap_or_else(|e| e.into_inner());
        std::mem::swap(&mut self.batch, &mut *q);
    }

    /// Gives a consumed buffer back to the producer (in batches of 32).
    fn recycle(&mut self, buf: Vec<u8>) {
        self.spent.push(buf);
        if self.spent.len() >= 32 {
            let mut free = self.chan.free.lock().unwrap_or_else(|e| e.into_inner());
            // Bounded: never more buffers than the queue can hold, plus a batch.
            if free.len() < self.chan.cap + 64 {
                free.append(&mut self.spent);
            } else {
                self.spent.clear();
            }
        }
    }
}

/// State both threads see.
struct Shared {
    stop: AtomicBool,
    /// The side thread is running (false once it returned or panicked).
    alive: AtomicBool,
    to_side_dropped: AtomicU64,
    to_loop_full: AtomicU64,
    /// Set by the side thread when it stopped polling because `to_loop` was full; the
    /// loop wakes it once the queue is half empty.
    blocked: AtomicBool,
}

/// What the side thread hands back when it ends.
struct ThreadEnd {
    to_side_delay: Histogram,
    thread_cpu_s: f64,
    scheduling: String,
    duty_sleeps: u64,
}

/// See the module docs.
pub struct ThreadedSide {
    to_side: Tx,
    to_loop: Rx,
    /// The side thread's inbound channel (for its wake-ups when space frees up).
    side_chan: Arc<Chan>,
    shared: Arc<Shared>,
    clock: Clock,
    to_loop_delay: Histogram,
    join: Option<JoinHandle<Result<ThreadEnd>>>,
    report: Arc<Mutex<Option<ThreadedReport>>>,
    opts: ThreadedOptions,
}

impl ThreadedSide {
    /// Moves `inner` to a new thread named `name`. The returned slot receives the
    /// [`ThreadedReport`] when the adaptor is dropped (after the thread is joined).
    pub fn spawn<S: Side + Send + 'static>(
        inner: S,
        clock: Clock,
        name: &str,
        opts: ThreadedOptions,
    ) -> Result<(ThreadedSide, Arc<Mutex<Option<ThreadedReport>>>)> {
        let opts = ThreadedOptions {
            to_side: opts.to_side.max(1),
            to_loop: opts.to_loop.max(2),
            batch: opts.batch.max(1),
            ..opts
        };
        let side_chan = Arc::new(Chan::new(opts.to_side)?);
        let loop_chan = Arc::new(Chan::new(opts.to_loop)?);
        let shared = Arc::new(Shared {
            stop: AtomicBool::new(false),
            alive: AtomicBool::new(true),
            to_side_dropped: AtomicU64::new(0),
            to_loop_full: AtomicU64::new(0),
            blocked: AtomicBool::new(false),
        });
        let worker = Worker {
            inner,
            rx: Rx {
                chan: Arc::clone(&side_chan),
                batch: VecDeque::with_capacity(opts.to_side),
                spent: Vec::with_capacity(64),
            },
            tx: Tx {
                chan: Arc::clone(&loop_chan),
                cache: Vec::new(),
                buf_size: opts.buf_size,
            },
            shared: Arc::clone(&shared),
            clock,
            batch: opts.batch,
            nice: opts.nice,
            cpu: opts.cpu,
            rt: opts.rt,
        };
        let join = std::thread::Builder::new()
            .name(name.into())
            .spawn(move || worker.run())
            .map_err(|e| EmuError::io("spawning the side thread", e))?;
        let report = Arc::new(Mutex::new(None));
        Ok((
            ThreadedSide {
                to_side: Tx {
                    chan: Arc::clone(&side_chan),
                    cache: Vec::new(),
                    buf_size: opts.buf_size,
                },
                to_loop: Rx {
                    chan: loop_chan,
                    batch: VecDeque::with_capacity(opts.to_loop),
                    spent: Vec::with_capacity(64),
                },
                side_chan,
                shared,
                clock,
                to_loop_delay: Histogram::default(),
                join: Some(join),
                report: Arc::clone(&report),
                opts,
            },
            report,
        ))
    }

    fn dead() -> io::Error {
        io::Error::new(io::ErrorKind::BrokenPipe, "the side thread has ended")
    }
}

impl Side for ThreadedSide {
    fn poll_fd(&self) -> Option<RawFd> {
        Some(self.to_loop.chan.waker.as_raw_fd())
    }

    fn recv(&mut self, _now: Instant, buf: &mut Vec<u8>) -> io::Result<bool> {
        match self.to_loop.pop() {
            Some((t, pkt)) => {
                let taken = self.clock.now();
                self.to_loop_delay
                    .record(taken.as_nanos().saturating_sub(t.as_nanos()));
                buf.clear();
                buf.extend_from_slice(&pkt);
                self.to_loop.recycle(pkt);
                // The side thread stopped polling on a full queue: wake it once half
                // of the queue is free again.
                if self.shared.blocked.load(Ordering::Acquire)
                    && self.to_loop.chan.len.load(Ordering::Acquire) <= self.opts.to_loop / 2
                    && self.shared.blocked.swap(false, Ordering::AcqRel)
                {
                    self.side_chan.waker.wake();
                }
                Ok(true)
            }
            None if !self.shared.alive.load(Ordering::Acquire) => Err(Self::dead()),
            None => Ok(false),
        }
    }

    fn send(&mut self, now: Instant, pkt: &[u8]) -> io::Result<bool> {
        if !self.shared.alive.load(Ordering::Acquire) {
            return Err(Self::dead());
        }
        let mut buf = self.to_side.buffer();
        buf.clear();
        buf.extend_from_slice(pkt);
        match self.to_side.push(now, buf) {
            Ok(()) => Ok(true),
            Err(buf) => {
                self.to_side.cache.push(buf);
                self.shared.to_side_dropped.fetch_add(1, Ordering::Relaxed);
                Ok(false)
            }
        }
    }
}

impl Drop for ThreadedSide {
    fn drop(&mut self) {
        self.shared.stop.store(true, Ordering::Release);
        self.side_chan.waker.wake();
        let end = match self.join.take().map(|j| j.join()) {
            Some(Ok(Ok(end))) => Ok(end),
            Some(Ok(Err(e))) => Err(e.to_string()),
            Some(Err(p)) => Err(format!("panicked: {}", panic_message(&*p))),
            None => Err("not joined".into()),
        };
        if let Err(e) = &end {
            eprintln!("brisk-emu: the side thread ended with an error: {e}");
        }
        let report = ThreadedReport {
            to_side_cap: self.opts.to_side,
            to_loop_cap: self.opts.to_loop,
            to_side_delay: end
                .as_ref()
                .map(|e| e.to_side_delay.summary())
                .unwrap_or_default(),
            to_loop_delay: self.to_loop_delay.summary(),
            to_side_dropped: self.shared.to_side_dropped.load(Ordering::Relaxed),
            to_loop_full: self.shared.to_loop_full.load(Ordering::Relaxed),
            thread_cpu_s: end.as_ref().map_or(0.0, |e| e.thread_cpu_s),
            scheduling: end
                .as_ref()
                .map_or_else(|_| String::new(), |e| e.scheduling.clone()),
            duty_sleeps: end.as_ref().map_or(0, |e| e.duty_sleeps),
            error: end.err(),
        };
        *self.report.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
    }
}

const TOKEN_IN: u64 = 0;
const TOKEN_INNER: u64 = 1;
const TOKEN_TIMER: u64 = 2;
/// Longest sleep without a deadline (the stop flag also wakes the thread).
const MAX_WAIT_MS: i32 = 100;

/// The side thread.
struct Worker<S> {
    inner: S,
    rx: Rx,
    tx: Tx,
    shared: Arc<Shared>,
    clock: Clock,
    batch: usize,
    nice: Option<i32>,
    cpu: Option<usize>,
    rt: Option<i32>,
}

/// Marks the side thread gone when it returns or unwinds.
struct AliveGuard(Arc<Shared>);

impl Drop for AliveGuard {
    fn drop(&mut self) {
        self.0.alive.store(false, Ordering::Release);
    }
}

impl<S: Side> Worker<S> {
    fn run(mut self) -> Result<ThreadEnd> {
        let _alive = AliveGuard(Arc::clone(&self.shared));
        // SAFETY: prctl with an integer argument; failure only costs timer precision.
        unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong) };
        if let Some(n) = self.nice {
            // SAFETY: gettid has no preconditions; setpriority on this thread's id
            // changes only its nice value. A refusal leaves it as it was.
            unsafe {
                let tid = libc::gettid();
                libc::setpriority(libc::PRIO_PROCESS, tid as libc::id_t, n);
            }
        }
        if let Some(cpu) = self.cpu {
            // A CPU that does not exist leaves the thread unpinned.
            let _ = crate::os::sched::set_affinity(|c| c == cpu);
        }
        // After the pinning: a real-time thread must not be moved onto the loop's CPU.
        let rt = RtGuard::enter(self.rt);
        let cpu0 = crate::emu::health::thread_cpu_s();
        let mut duty = DutyCycle::start(self.clock.now());
        let mut timer = TimerFd::new(self.clock)?;
        let mut ep = Epoll::new()?;
        ep.add(self.rx.chan.waker.as_raw_fd(), TOKEN_IN)?;
        if let Some(fd) = self.inner.poll_fd() {
            ep.add(fd, TOKEN_INNER)?;
        }
        ep.add(timer.as_raw_fd(), TOKEN_TIMER)?;
        // While the loop's queue is full only inbound packets and "room again" (both
        // on the inbound eventfd) matter: the inner side's fd may stay readable.
        let mut ep_in = Epoll::new()?;
        ep_in.add(self.rx.chan.waker.as_raw_fd(), TOKEN_IN)?;
        let inner_polled = self.inner.poll_fd().is_none();
        let mut hist = Histogram::default();
        let mut ready = 1 << TOKEN_INNER;
        while !self.shared.stop.load(Ordering::Acquire) {
            // Busy for a whole window (a sender at 10 Gbit/s): leave the CPU a moment.
            if rt.is_realtime() && duty.check(self.clock.now(), || self.clock.now()) {
                ready |= 1 << TOKEN_INNER;
            }
            if ready & (1 << TOKEN_TIMER) != 0 {
                timer.ack();
            }
            let mut progress = false;
            // Inbound: everything queued, each at the time it is handled.
            while let Some((t, pkt)) = self.rx.pop() {
                let now = self.clock.now();
                hist.record(now.as_nanos().saturating_sub(t.as_nanos()));
                // A refusal is the inner side's own drop; nothing to do here.
                let _ = self.inner.send(now, &pkt);
                self.rx.recycle(pkt);
                progress = true;
            }
            // Outbound: up to a batch, while the loop's queue has room.
            let mut blocked = false;
            let mut more = false;
            let due = |t: Option<Instant>, now: Instant| t.is_some_and(|t| t <= now);
            let now = self.clock.now();
            if inner_polled
                || ready & (1 << TOKEN_INNER) != 0
                || due(self.inner.poll_timeout(), now)
            {
                more = true;
                for _ in 0..self.batch {
                    if self.tx.chan.is_full() {
                        blocked = true;
                        break;
                    }
                    let mut buf = self.tx.buffer();
                    match self.inner.recv(self.clock.now(), &mut buf) {
                        Ok(true) => {
                            progress = true;
                            let t = self.clock.now();
                            if let Err(buf) = self.tx.push(t, buf) {
                                // Raced to full (the check above is the only producer's).
                                self.tx.cache.push(buf);
                            }
                        }
                        Ok(false) => {
                            self.tx.cache.push(buf);
                            more = false;
                            break;
                        }
                        Err(_) => {
                            self.tx.cache.push(buf);
                            more = false;
                            break;
                        }
                    }
                }
            }
            if blocked {
                self.shared.to_loop_full.fetch_add(1, Ordering::Relaxed);
                self.shared.blocked.store(true, Ordering::Release);
                // The loop may have emptied the queue between the check and the flag.
                if !self.tx.chan.is_full() && self.shared.blocked.swap(false, Ordering::AcqRel) {
                    ready = ep.wait(0)? | (1 << TOKEN_INNER);
                    continue;
                }
                timer
                    .disarm()
                    .map_err(|e| EmuError::io("timerfd_settime", e))?;
                // Wait for inbound packets or the loop's "room again" (both on TOKEN_IN).
                ready = ep_in.wait(MAX_WAIT_MS)?;
                if !self.shared.blocked.load(Ordering::Acquire) {
                    ready |= 1 << TOKEN_INNER;
                }
                continue;
            }
            if more {
                ready = ep.wait(0)? | (1 << TOKEN_INNER);
                continue;
            }
            let now = self.clock.now();
            match self.inner.poll_timeout() {
                Some(t) if t <= now => {
                    if progress {
                        ready = ep.wait(0)? | (1 << TOKEN_INNER);
                        continue;
                    }
                    // Due but nothing came out last time: do not spin on it.
                    timer
                        .arm_at(now + Duration::from_micros(5))
                        .map_err(|e| EmuError::io("timerfd_settime", e))?;
                }
                Some(t) => timer
                    .arm_at(t)
                    .map_err(|e| EmuError::io("timerfd_settime", e))?,
                None => timer
                    .disarm()
                    .map_err(|e| EmuError::io("timerfd_settime", e))?,
            }
            ready = ep.wait(MAX_WAIT_MS)?;
            if ready & (1 << TOKEN_TIMER) != 0 {
                ready |= 1 << TOKEN_INNER;
            }
        }
        Ok(ThreadEnd {
            to_side_delay: hist,
            thread_cpu_s: crate::emu::health::thread_cpu_s() - cpu0,
            scheduling: rt.description.clone(),
            duty_sleeps: duty.sleeps,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::fd::{FromRawFd, OwnedFd};

    /// An echo side: answers every packet at once, with an eventfd as its poll fd
    /// that never turns readable (it only speaks when spoken to).
    struct Echo {
        fd: OwnedFd,
        out: VecDeque<Vec<u8>>,
        panic_on: Option<u8>,
        slow: bool,
    }

    impl Side for Echo {
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
            if self.slow {
                std::thread::sleep(std::time::Duration::from_micros(200));
            }
            if self.panic_on.is_some_and(|b| pkt.first() == Some(&b)) {
                panic!("echo told to panic");
            }
            self.out.push_back(pkt.to_vec());
            Ok(true)
        }
        fn poll_timeout(&self) -> Option<Instant> {
            (!self.out.is_empty()).then_some(Instant::ZERO)
        }
    }

    fn echo(panic_on: Option<u8>, slow: bool) -> Echo {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
        assert!(raw >= 0);
        Echo {
            // SAFETY: fresh fd.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
            out: VecDeque::new(),
            panic_on,
            slow,
        }
    }

    fn wait_readable(fd: RawFd, ms: i32) -> bool {
        let mut pfd = libc::pollfd {
            fd,
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        unsafe { libc::poll(&mut pfd, 1, ms) == 1 }
    }

    #[test]
    fn packets_come_back_in_order_and_delays_are_reported() {
        let clock = Clock::start();
        let (mut side, slot) =
            ThreadedSide::spawn(echo(None, false), clock, "echo", ThreadedOptions::default())
                .unwrap();
        let n = 3000u32;
        let mut got = Vec::new();
        let mut buf = Vec::new();
        let mut sent = 0u32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while got.len() < n as usize && std::time::Instant::now() < deadline {
            // Send in bursts of 100 (below the to_side limit), then drain.
            for _ in 0..100 {
                if sent < n {
                    assert!(side.send(clock.now(), &sent.to_be_bytes()).unwrap());
                    sent += 1;
                }
            }
            wait_readable(side.poll_fd().unwrap(), 100);
            while side.recv(clock.now(), &mut buf).unwrap() {
                got.push(u32::from_be_bytes(buf[..4].try_into().unwrap()));
            }
        }
        assert_eq!(got, (0..n).collect::<Vec<_>>());
        drop(side);
        let r = slot.lock().unwrap().take().unwrap();
        assert_eq!(r.to_loop_delay.count, u64::from(n));
        assert_eq!(r.to_side_delay.count, u64::from(n));
        assert_eq!(r.to_side_dropped, 0);
        assert!(r.error.is_none());
    }

    #[test]
    fn a_full_queue_refuses_and_counts() {
        let clock = Clock::start();
        // A slow echo (200 us a packet) nobody reads: its inbound queue (8) fills and
        // the loop's sends are refused; its answers fill to_loop (4) and it stops
        // polling.
        let opts = ThreadedOptions {
            to_side: 8,
            to_loop: 4,
            ..ThreadedOptions::default()
        };
        let (mut side, slot) = ThreadedSide::spawn(echo(None, true), clock, "echo", opts).unwrap();
        let mut refused = 0;
        for i in 0..2000u32 {
            if !side.send(clock.now(), &i.to_be_bytes()).unwrap() {
                refused += 1;
            }
            if i % 100 == 0 {
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        }
        assert!(refused > 0);
        // What was taken comes out, in order, and nothing is lost beyond the refusals.
        let mut buf = Vec::new();
        let mut got = 0u32;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while std::time::Instant::now() < deadline && got < 2000 - refused {
            wait_readable(side.poll_fd().unwrap(), 50);
            while side.recv(clock.now(), &mut buf).unwrap() {
                got += 1;
            }
        }
        assert_eq!(got, 2000 - refused);
        drop(side);
        let r = slot.lock().unwrap().take().unwrap();
        assert_eq!(r.to_side_dropped, u64::from(refused));
        assert!(r.to_loop_full > 0);
    }

    #[test]
    fn a_panicking_side_is_joined_and_reported() {
        let clock = Clock::start();
        let (mut side, slot) = ThreadedSide::spawn(
            echo(Some(7), false),
            clock,
            "echo",
            ThreadedOptions::default(),
        )
        .unwrap();
        assert!(side.send(clock.now(), &[7]).unwrap());
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut buf = Vec::new();
        loop {
            match side.recv(clock.now(), &mut buf) {
                Err(e) => {
                    assert_eq!(e.kind(), io::ErrorKind::BrokenPipe);
                    break;
                }
                Ok(_) => assert!(std::time::Instant::now() < deadline),
            }
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert!(side.send(clock.now(), &[1]).is_err());
        drop(side);
        let r = slot.lock().unwrap().take().unwrap();
        assert!(r.error.unwrap().contains("echo told to panic"));
    }

    fn rt_from(env: Option<&str>, cpus: usize) -> Option<i32> {
        sched::priority_from(env, cpus, STACK_RT_PRIO)
    }

    #[test]
    fn the_switch_reads_the_environment_value() {
        assert!(enabled_from(Some("1")));
        assert!(!enabled_from(Some("0")));
        assert_eq!(enabled_from(None), DEFAULT_ON);
        assert_eq!(cpu_from(None, 2), Some(1));
        assert_eq!(cpu_from(None, 1), None);
        assert_eq!(cpu_from(Some("none"), 4), None);
        assert_eq!(cpu_from(Some("0"), 4), Some(0));
        assert_eq!(rt_from(None, 2), Some(sched::RT_DEFAULT_PRIO - 1));
        assert_eq!(rt_from(Some("0"), 2), None);
        assert_eq!(rt_from(Some("20"), 2), Some(20));
        assert_eq!(rt_from(None, 1), None, "never on one CPU");
    }

    #[test]
    fn its_delays_and_drops_reach_the_self_check() {
        let summary = |p99_ns| LatencySummary {
            count: 1000,
            p99_ns,
            ..LatencySummary::default()
        };
        let mut r = ThreadedReport {
            to_side_cap: 4096,
            to_loop_cap: 1024,
            to_side_delay: summary(50_000),
            to_loop_delay: summary(80_000),
            to_side_dropped: 0,
            to_loop_full: 3,
            thread_cpu_s: 1.0,
            scheduling: "normal".into(),
            duty_sleeps: 0,
            error: None,
        };
        assert!(r.warnings(1_000_000).is_empty(), "within the threshold");
        r.to_side_delay = summary(4_100_000);
        r.to_side_dropped = 2;
        let w = r.warnings(1_000_000);
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(w[0].contains("towards the stack") && w[0].contains("4100 us"));
        assert!(w[1].contains("refused 2 packets"));
    }
}

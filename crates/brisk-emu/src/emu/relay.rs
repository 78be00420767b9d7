//! The bare TUN-to-TUN relay: the ceiling of the emulator's I/O design on this
//! machine (issue 36 §5, `brisk bench emu --relay`).
//!
//! Every frame read from one device is written to the other as it was read, virtio
//! header included: a TSO super-packet of up to 64 KB stays one write, the checksum
//! the sending kernel left to the device stays `NEEDS_CSUM`. No segmenting, no model,
//! no timing, no coalescing wait: what is left is exactly the TUN path's own cost,
//! the copy out of the sending kernel (`tun_do_read`), the copy into the receiving
//! one and its TCP running inside the write (`tun_get_user`), one syscall per frame
//! each way. So the emulator, which must cut every super-packet into the link's
//! packets and can merge back only the ones due together, can carry at most what
//! this carries, and the veth pair beside it shows what the two kernels manage
//! without a device in user space.
//!
//! The thread runs with the emulator loop's scheduling (`SCHED_FIFO` and its duty
//! cycle, os/sched.rs) so that the comparison is like for like. `threads = 2` puts
//! each direction on a thread of its own (the same two fds, one reads what the other
//! writes; TUN's fd operations are safe from two threads), to see whether splitting
//! the directions raises the ceiling on two cores.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use brisk_time::Instant;
use serde::Serialize;

use crate::emu::health;
use crate::error::{cvt_size, EmuError, Result};
use crate::os::clock::Clock;
use crate::os::poll::Epoll;
use crate::os::sched::{self, RtGuard};
use crate::os::tun::Tun;
use crate::os::vnet::{MAX_READ, VNET_HDR_LEN};

/// Most frames read from one device before looking at the other.
const BATCH: usize = 64;
/// Longest blocking wait, so the stop flag is seen promptly.
const MAX_WAIT_MS: i32 = 10;

/// The environment switch for the number of relay threads (1 or 2).
pub const RELAY_THREADS_ENV: &str = "BRISK_EMU_RELAY_THREADS";

/// One direction's counts.
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct RelayDir {
    /// Frames read and written (a super-packet counts once).
    pub frames: u64,
    /// Bytes of IP carried (virtio header not counted).
    pub bytes: u64,
    /// Writes the destination refused (would block) or failed.
    pub write_errors: u64,
    pub read_errors: u64,
}

/// What [`relay`] did.
#[derive(Clone, Debug, Default, Serialize)]
pub struct RelayReport {
    pub elapsed_s: f64,
    pub threads: usize,
    /// A → B and B → A.
    pub forward: RelayDir,
    pub reverse: RelayDir,
    /// CPU seconds of the relay thread(s), and the scheduling they ran under.
    pub thread_cpu_s: f64,
    pub scheduling: String,
    pub duty_sleeps: u64,
}

/// A relay running on its own thread(s); [`RelayHandle::stop`] ends it.
pub struct RelayHandle {
    stop: Arc<AtomicBool>,
    joins: Vec<std::thread::JoinHandle<Result<DirsOut>>>,
    start: Instant,
    clock: Clock,
    threads: usize,
    // The devices live as long as the relay.
    _devs: Arc<(Tun, Tun)>,
}

/// One thread's result: per direction it served (index 0 forward, 1 reverse).
struct DirsOut {
    dirs: [RelayDir; 2],
    served: [bool; 2],
    cpu_s: f64,
    scheduling: String,
    duty_sleeps: u64,
}

/// Starts relaying between `a` and `b` on `threads` (1 or 2) threads under
/// `realtime` scheduling (the emulator's default: [`sched::default_priority`]).
pub fn spawn(a: Tun, b: Tun, threads: usize, realtime: Option<i32>) -> Result<RelayHandle> {
    if !(1..=2).contains(&threads) {
        return Err(EmuError::Config(format!(
            "relay threads {threads}: use 1 or 2"
        )));
    }
    // Bytes counted are IP bytes: without the virtio header an offloading device adds.
    let hdr = if a.offload() { VNET_HDR_LEN } else { 0 };
    let devs = Arc::new((a, b));
    let (fa, fb) = (devs.0.as_raw_fd(), devs.1.as_raw_fd());
    let stop = Arc::new(AtomicBool::new(false));
    let clock = Clock::start();
    // Per thread: the (source, destination, direction index) pairs it serves.
    let plans: Vec<Vec<(RawFd, RawFd, usize)>> = if threads == 1 {
        vec![vec![(fa, fb, 0), (fb, fa, 1)]]
    } else {
        vec![vec![(fa, fb, 0)], vec![(fb, fa, 1)]]
    };
    let mut joins = Vec::with_capacity(plans.len());
    for plan in plans {
        let (flag, keep) = (Arc::clone(&stop), Arc::clone(&devs));
        let j = std::thread::Builder::new()
            .name("brisk-relay".into())
            .spawn(move || {
                let out = run(&plan, hdr, &flag, clock, realtime);
                drop(keep);
                out
            })
            .map_err(|e| EmuError::io("spawning the relay thread", e))?;
        joins.push(j);
    }
    Ok(RelayHandle {
        stop,
        joins,
        start: clock.now(),
        clock,
        threads,
        _devs: devs,
    })
}

/// Relay threads from [`RELAY_THREADS_ENV`] (default 1; anything but `2` is 1).
pub fn threads_from_env() -> usize {
    match std::env::var(RELAY_THREADS_ENV).as_deref() {
        Ok("2") => 2,
        _ => 1,
    }
}

impl RelayHandle {
    /// Stops the threads and returns what they carried.
    pub fn stop(mut self) -> Result<RelayReport> {
        self.stop.store(true, Ordering::Relaxed);
        let mut r = RelayReport {
            threads: self.threads,
            ..RelayReport::default()
        };
        for j in self.joins.drain(..) {
            let out = j
                .join()
                .map_err(|p| EmuError::Panicked(crate::error::panic_message(&*p)))??;
            if out.served[0] {
                r.forward = out.dirs[0];
            }
            if out.served[1] {
                r.reverse = out.dirs[1];
            }
            r.thread_cpu_s += out.cpu_s;
            r.duty_sleeps += out.duty_sleeps;
            r.scheduling = out.scheduling;
        }
        r.elapsed_s = (self.clock.now() - self.start).as_secs_f64();
        Ok(r)
    }
}

impl Drop for RelayHandle {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for j in self.joins.drain(..) {
            let _ = j.join();
        }
    }
}

/// One relay thread: reads each source until it would block (or [`BATCH`] frames)
/// and writes every frame at once to its destination; waits on epoll when all are
/// empty. Keeps the emulator's real-time duty cycle.
fn run(
    plan: &[(RawFd, RawFd, usize)],
    hdr: usize,
    stop: &AtomicBool,
    clock: Clock,
    realtime: Option<i32>,
) -> Result<DirsOut> {
    let rt = RtGuard::enter(realtime);
    let cpu0 = health::thread_cpu_s();
    let mut ep = Epoll::new()?;
    for (i, (src, _, _)) in plan.iter().enumerate() {
        ep.add(*src, i as u64)?;
    }
    let mut dirs = [RelayDir::default(); 2];
    let mut served = [false; 2];
    for (_, _, d) in plan {
        served[*d] = true;
    }
    let mut buf = vec![0u8; MAX_READ];
    let mut duty = sched::DutyCycle::deferring(clock.now());
    let realtime = rt.is_realtime();
    while !stop.load(Ordering::Relaxed) {
        let now: Instant = clock.now();
        if realtime && duty.check(now, || clock.now()) {
            continue;
        }
        let mut full = false;
        for (src, dst, d) in plan {
            let dir = &mut dirs[*d];
            let mut n = 0;
            while n < BATCH {
                // SAFETY: reads at most `buf.len()` bytes into `buf`.
                let r = unsafe { libc::read(*src, buf.as_mut_ptr().cast(), buf.len()) };
                let len = match cvt_size(r) {
                    Ok(len) => len,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => {
                        dir.read_errors += 1;
                        break;
                    }
                };
                n += 1;
                // SAFETY: writes `len` bytes the kernel just filled.
                let w = unsafe { libc::write(*dst, buf.as_ptr().cast(), len) };
                match cvt_size(w) {
                    Ok(_) => {
                        dir.frames += 1;
                        dir.bytes += len.saturating_sub(hdr) as u64;
                    }
                    Err(_) => dir.write_errors += 1,
                }
            }
            full |= n == BATCH;
        }
        if full {
            continue;
        }
        if realtime && duty.pay_if_quiet(clock.now(), None, || clock.now()) {
            continue;
        }
        ep.wait(MAX_WAIT_MS)?;
    }
    Ok(DirsOut {
        dirs,
        served,
        cpu_s: health::thread_cpu_s() - cpu0,
        scheduling: rt.description.clone(),
        duty_sleeps: duty.sleeps,
    })
}

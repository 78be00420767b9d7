//! Real-time scheduling for the emulator's loop thread (sched(7), `SCHED_FIFO`).
//!
//! Why: the emulator shares the machine with the endpoints it serves. In `bench emu`
//! three busy threads (the sending application with its kernel's TCP, the receiving
//! one, and the loop) share two cores, so under the normal policy the loop waits for
//! a time slice behind the endpoints and its delivery-time error p99 reaches
//! milliseconds (1.4 ms measured, docs/performance.md) although it has a third of its
//! time to spare. Under `SCHED_FIFO` it runs the moment its timer or a TUN fd wakes
//! it. The loop sleeps whenever it has nothing due, and the kernel's RT throttling
//! (`sched_rt_runtime_us`, 95 % by default) bounds even a loop that never sleeps, so
//! the endpoints cannot be starved outright.
//!
//! The policy is per thread and restored when the guard drops, so a caller that runs
//! the loop on its own thread gets its old policy back.

use std::io;

/// The environment switch: `BRISK_EMU_RT=0` keeps the normal policy; a number
/// 1..=99 sets the `SCHED_FIFO` priority.
pub const RT_ENV: &str = "BRISK_EMU_RT";
/// Low among real-time priorities: above every normal thread, below the kernel's own
/// RT threads (migration, watchdogs at 99).
pub const RT_DEFAULT_PRIO: i32 = 10;

/// The priority the emulator asks for: `None` when turned off by [`RT_ENV`] or on a
/// single CPU, where a spinning RT loop would leave the endpoints 5 % of the machine.
pub fn default_priority() -> Option<i32> {
    priority_from_env(RT_ENV, RT_DEFAULT_PRIO)
}

/// The `SCHED_FIFO` priority an environment switch asks for: unset, `1` or `on`
/// give `default`, `0` or `off` none, 2..=99 that priority (anything else: `default`);
/// never on a single CPU.
pub fn priority_from_env(var: &str, default: i32) -> Option<i32> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    priority_from(std::env::var(var).ok().as_deref(), cpus, default)
}

pub(crate) fn priority_from(env: Option<&str>, cpus: usize, default: i32) -> Option<i32> {
    if cpus < 2 {
        return None;
    }
    match env.map(str::trim) {
        None | Some("") | Some("1") | Some("on") => Some(default),
        Some("0") | Some("off") => None,
        Some(v) => match v.parse::<i32>() {
            Ok(p) if (1..=99).contains(&p) => Some(p),
            _ => Some(default),
        },
    }
}

/// How the emulator loop takes its duty-cycle sleeps: `defer` (at quiet moments) or
/// `now` (at the end of the window).
pub const DUTY_ENV: &str = "BRISK_EMU_DUTY";

/// Whether the loop defers its duty-cycle sleeps ([`DUTY_ENV`]).
pub fn duty_defer_from_env() -> bool {
    !matches!(std::env::var(DUTY_ENV).as_deref(), Ok("now"))
}

/// Pins the emulator loop's thread to one CPU while it runs (unset: no pinning).
pub const EMU_CPU_ENV: &str = "BRISK_EMU_CPU";
/// Pins the bulk tool's sender and receiver threads (`N`, or `S,R` for each).
pub const BULK_CPU_ENV: &str = "BRISK_BULK_CPU";

/// The CPU an environment variable names, if it is a number below the CPU count.
pub fn cpu_from_env(var: &str) -> Option<usize> {
    cpus_from_env(var).map(|(c, _)| c)
}

/// `N` → (N, N); `S,R` → (S, R); each below the CPU count, else `None`.
pub fn cpus_from_env(var: &str) -> Option<(usize, usize)> {
    let v = std::env::var(var).ok()?;
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let parse = |x: &str| x.trim().parse::<usize>().ok().filter(|c| *c < cpus);
    match v.split_once(',') {
        Some((a, b)) => Some((parse(a)?, parse(b)?)),
        None => parse(&v).map(|c| (c, c)),
    }
}

/// The calling thread's CPU affinity, restored on drop.
pub struct AffinityGuard(libc::cpu_set_t);

impl AffinityGuard {
    /// Restricts the calling thread to the CPUs `keep` accepts, remembering the old
    /// set; `None` when nothing changed (no CPU left, or the call was refused).
    pub fn restrict(keep: impl Fn(usize) -> bool) -> Option<AffinityGuard> {
        // SAFETY: cpu_set_t is plain data; the kernel fills it for this thread (0).
        let mut old: libc::cpu_set_t = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: `old` is a valid cpu_set_t of `size` bytes.
        if unsafe { libc::sched_getaffinity(0, size, &mut old) } != 0 {
            return None;
        }
        set_affinity(keep).ok().map(|()| AffinityGuard(old))
    }
}

impl Drop for AffinityGuard {
    fn drop(&mut self) {
        // SAFETY: restores a set the kernel gave us for this thread.
        unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &self.0) };
    }
}

/// Restricts the calling thread to the online CPUs `keep` accepts (sched_setaffinity).
/// Fails without changing anything when no CPU is left.
pub fn set_affinity(keep: impl Fn(usize) -> bool) -> io::Result<()> {
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    // SAFETY: cpu_set_t is plain data; all-zero is the empty set.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    let mut any = false;
    for c in (0..cpus).filter(|c| keep(*c)) {
        // SAFETY: c < available CPUs <= CPU_SETSIZE on any machine this runs on.
        unsafe { libc::CPU_SET(c, &mut set) };
        any = true;
    }
    if !any {
        return Err(io::Error::from(io::ErrorKind::InvalidInput));
    }
    // SAFETY: `set` is a valid cpu_set_t of the size passed; 0 is this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The calling thread's scheduling, restored on drop.
#[derive(Debug)]
pub struct RtGuard {
    policy: libc::c_int,
    param: libc::sched_param,
    /// Whether `enter` switched the thread to `SCHED_FIFO` (and drop switches it back).
    realtime: bool,
    /// What the thread runs under now, for reports: `SCHED_FIFO 10`, or
    /// `normal (SCHED_FIFO refused: ...)`.
    pub description: String,
}

impl RtGuard {
    /// Puts the calling thread under `SCHED_FIFO` at `prio`; `None` leaves it as it
    /// is. A refusal (no `CAP_SYS_NICE`, or an RT budget of 0 in a cgroup) is not an
    /// error: the loop runs under the normal policy and the report says so.
    pub fn enter(prio: Option<i32>) -> RtGuard {
        // SAFETY: queries of the calling thread (pid 0); `param` is written by the kernel.
        let policy = unsafe { libc::sched_getscheduler(0) };
        let mut param = libc::sched_param { sched_priority: 0 };
        unsafe { libc::sched_getparam(0, &mut param) };
        let mut guard = RtGuard {
            policy,
            param,
            realtime: false,
            description: "normal".into(),
        };
        let Some(p) = prio else {
            return guard;
        };
        let want = libc::sched_param { sched_priority: p };
        // SAFETY: sets the calling thread's policy from a live struct.
        let rc = unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &want) };
        guard.realtime = rc == 0;
        guard.description = if guard.realtime {
            format!("SCHED_FIFO {p}")
        } else {
            format!(
                "normal (SCHED_FIFO refused: {})",
                io::Error::last_os_error()
            )
        };
        guard
    }

    pub fn is_realtime(&self) -> bool {
        self.realtime
    }
}

impl Drop for RtGuard {
    fn drop(&mut self) {
        if self.realtime && self.policy >= 0 {
            // SAFETY: restores the calling thread's policy read in `enter`.
            unsafe { libc::sched_setscheduler(0, self.policy, &self.param) };
        }
    }
}

/// The duty cycle a real-time thread keeps itself.
///
/// Why: a `SCHED_FIFO` thread that never sleeps is stopped by the kernel for ~50 ms
/// in every second so that normal threads on its CPU run (RT throttling, or the fair
/// server on newer kernels): a 50 ms stall in the deliveries, measured as p99.9
/// delivery error 51 ms at 1 Gbit/s, where a deadline falls due every 12 µs.
/// Sleeping per packet instead does not help in a VM, where arming a timer costs
/// microseconds. So the thread gives the CPU away itself, in slices short enough to
/// stay inside the error budget: after each [`DutyCycle::WINDOW`] in which it used
/// more than [`DutyCycle::MAX`] of the CPU it sleeps [`DutyCycle::SLEEP`] (the TUN
/// rings and queues hold what arrives meanwhile). At most 250/(250+25) = 91 % of a
/// CPU over any stretch, below the kernel's 95 %; work due during a sleep is at most
/// ~25 µs (plus the wake-up) late.
///
/// **Deferred sleeps** ([`DutyCycle::deferring`], the emulator loop's): a window
/// above the limit makes the sleep *owed* instead of taking it at once; the loop pays
/// it at its next wait where nothing is due within the sleep ([`DutyCycle::pay_if_quiet`]),
/// so no packet the model has released waits for it (what arrives meanwhile waits in
/// the TUN ring, before the model's clock starts for it). A debt still open one
/// window later is paid at once, as before, so the share stays bounded: at most
/// 500/(500+25) = 95 % over a stretch of two windows.
#[derive(Debug)]
pub struct DutyCycle {
    start: brisk_time::Instant,
    cpu_s: f64,
    /// Sleeps taken so far.
    pub sleeps: u64,
    /// Of those, the ones taken at a quiet moment (deferred).
    pub quiet_sleeps: u64,
    defer: bool,
    owed_since: Option<brisk_time::Instant>,
}

impl DutyCycle {
    pub const WINDOW: brisk_time::Duration = brisk_time::Duration::from_micros(250);
    pub const MAX: f64 = 0.9;
    pub const SLEEP: brisk_time::Duration = brisk_time::Duration::from_micros(25);

    /// Starts the first window at `now`, with the calling thread's CPU time.
    pub fn start(now: brisk_time::Instant) -> DutyCycle {
        DutyCycle {
            start: now,
            cpu_s: crate::emu::health::thread_cpu_s(),
            sleeps: 0,
            quiet_sleeps: 0,
            defer: false,
            owed_since: None,
        }
    }

    /// The same cycle, its sleeps deferred to quiet moments (see the type's doc).
    pub fn deferring(now: brisk_time::Instant) -> DutyCycle {
        DutyCycle {
            defer: true,
            ..DutyCycle::start(now)
        }
    }

    /// Takes an owed sleep if nothing is due before `next` could be missed by it:
    /// `next` is the earliest deadline (`None`: none). Returns true if it slept.
    pub fn pay_if_quiet(
        &mut self,
        now: brisk_time::Instant,
        next: Option<brisk_time::Instant>,
        after: impl FnOnce() -> brisk_time::Instant,
    ) -> bool {
        if self.owed_since.is_none() || next.is_some_and(|n| n < now.saturating_add(Self::SLEEP)) {
            return false;
        }
        self.quiet_sleeps += 1;
        self.sleep(after);
        true
    }

    fn sleep(&mut self, after: impl FnOnce() -> brisk_time::Instant) {
        sleep_for(Self::SLEEP);
        self.sleeps += 1;
        self.owed_since = None;
        (self.start, self.cpu_s) = (after(), crate::emu::health::thread_cpu_s());
    }

    /// Called often by the thread that keeps the cycle, with the time now: at the end
    /// of a window above [`DutyCycle::MAX`] it sleeps and returns true. `after` reads
    /// the clock again once the sleep is over, so the next window measures work only.
    pub fn check(
        &mut self,
        now: brisk_time::Instant,
        after: impl FnOnce() -> brisk_time::Instant,
    ) -> bool {
        if let Some(since) = self.owed_since {
            if now - since < Self::WINDOW {
                return false;
            }
            // No quiet moment came: pay now.
            self.sleep(after);
            return true;
        }
        if now - self.start < Self::WINDOW {
            return false;
        }
        let cpu = crate::emu::health::thread_cpu_s();
        let share = (cpu - self.cpu_s) / (now - self.start).as_secs_f64();
        (self.start, self.cpu_s) = (now, cpu);
        self.window_ended(share, now, after)
    }

    /// A window just ended at `now` with the thread's CPU `share`: sleeps (true),
    /// owes a sleep (deferring) or does nothing.
    fn window_ended(
        &mut self,
        share: f64,
        now: brisk_time::Instant,
        after: impl FnOnce() -> brisk_time::Instant,
    ) -> bool {
        if share <= Self::MAX {
            return false;
        }
        if self.defer {
            self.owed_since = Some(now);
            return false;
        }
        self.sleep(after);
        true
    }
}

/// Sleeps `d` on the monotonic clock (an early return on a signal is fine).
pub fn sleep_for(d: brisk_time::Duration) {
    let ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: d.as_nanos().min(999_999_999) as libc::c_long,
    };
    // SAFETY: a relative sleep from a live timespec; an early return (EINTR) is fine.
    unsafe { libc::clock_nanosleep(libc::CLOCK_MONOTONIC, 0, &ts, std::ptr::null_mut()) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deferred_duty_sleep_waits_for_a_quiet_moment_but_not_past_a_window() {
        use brisk_time::{Duration, Instant};
        let t0 = Instant::from_micros(1_000);
        let now = || Instant::from_micros(2_000);
        let mut d = DutyCycle::deferring(t0);
        assert!(
            !d.window_ended(0.5, t0, now),
            "under the limit: nothing owed"
        );
        assert!(!d.pay_if_quiet(t0, None, now));
        assert!(
            !d.window_ended(0.95, t0, now),
            "over the limit: owed, not slept"
        );
        assert_eq!(d.sleeps, 0);
        let soon = t0.saturating_add(Duration::from_micros(10));
        assert!(
            !d.pay_if_quiet(t0, Some(soon), now),
            "a packet due within the sleep"
        );
        let later = t0.saturating_add(DutyCycle::SLEEP);
        assert!(
            d.pay_if_quiet(t0, Some(later), now),
            "nothing due within the sleep"
        );
        assert_eq!((d.sleeps, d.quiet_sleeps), (1, 1));
        assert!(!d.pay_if_quiet(t0, None, now), "the debt is paid");
        // Owed again, and no quiet moment within a window: paid at once.
        assert!(!d.window_ended(0.95, t0, now));
        let t1 = t0.saturating_add(Duration::from_micros(100));
        assert!(!d.check(t1, now), "still within the window");
        let t2 = t0.saturating_add(DutyCycle::WINDOW);
        assert!(d.check(t2, now), "a window later: forced");
        assert_eq!((d.sleeps, d.quiet_sleeps), (2, 1));
        // The old cycle sleeps at the end of the window.
        let mut old = DutyCycle::start(t0);
        assert!(old.window_ended(0.95, t0, now));
        assert!(!old.pay_if_quiet(t0, None, now), "owes nothing");
        assert_eq!((old.sleeps, old.quiet_sleeps), (1, 0));
    }

    #[test]
    fn env_values() {
        assert_eq!(
            priority_from(None, 2, RT_DEFAULT_PRIO),
            Some(RT_DEFAULT_PRIO)
        );
        assert_eq!(priority_from(Some("0"), 2, RT_DEFAULT_PRIO), None);
        assert_eq!(priority_from(Some("off"), 8, RT_DEFAULT_PRIO), None);
        assert_eq!(priority_from(Some("42"), 2, RT_DEFAULT_PRIO), Some(42));
        assert_eq!(
            priority_from(Some("100"), 2, RT_DEFAULT_PRIO),
            Some(RT_DEFAULT_PRIO)
        );
        assert_eq!(
            priority_from(Some("junk"), 2, RT_DEFAULT_PRIO),
            Some(RT_DEFAULT_PRIO)
        );
        assert_eq!(
            priority_from(None, 1, RT_DEFAULT_PRIO),
            None,
            "never on one CPU"
        );
    }

    #[test]
    fn guard_restores_the_policy() {
        // Runs on a scratch thread so the test harness's threads are untouched.
        std::thread::spawn(|| {
            let before = unsafe { libc::sched_getscheduler(0) };
            {
                let g = RtGuard::enter(Some(RT_DEFAULT_PRIO));
                if g.is_realtime() {
                    assert_eq!(unsafe { libc::sched_getscheduler(0) }, libc::SCHED_FIFO);
                } else {
                    assert!(g.description.contains("refused"), "{}", g.description);
                }
            }
            assert_eq!(unsafe { libc::sched_getscheduler(0) }, before);
            let off = RtGuard::enter(None);
            assert_eq!(off.description, "normal");
        })
        .join()
        .unwrap();
    }
}

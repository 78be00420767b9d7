//! Real time for the sans-IO elements: [`Clock`] maps CLOCK_MONOTONIC to
//! [`Instant`] = nanoseconds since the clock was started, and [`TimerFd`] wakes the
//! loop at an absolute `Instant` with nanosecond resolution (timerfd with
//! `TFD_TIMER_ABSTIME`, so no millisecond rounding as with `poll`/`epoll_wait`
//! timeouts, and no drift from converting to relative sleeps).

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use brisk_time::Instant;

use crate::error::{cvt, EmuError, Result};

const NS_PER_S: u64 = 1_000_000_000;

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec; CLOCK_MONOTONIC always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    (ts.tv_sec as u64)
        .saturating_mul(NS_PER_S)
        .saturating_add(ts.tv_nsec as u64)
}

/// The emulator's time base: `Instant::ZERO` is the moment it was started.
#[derive(Clone, Copy, Debug)]
pub struct Clock {
    origin_ns: u64,
}

impl Clock {
    pub fn start() -> Clock {
        Clock {
            origin_ns: monotonic_ns(),
        }
    }

    /// Now, as time since start.
    pub fn now(&self) -> Instant {
        Instant::from_nanos(monotonic_ns().saturating_sub(self.origin_ns))
    }

    /// The CLOCK_MONOTONIC reading of `t`.
    pub fn to_monotonic_ns(&self, t: Instant) -> u64 {
        self.origin_ns.saturating_add(t.as_nanos())
    }
}

/// A CLOCK_MONOTONIC timerfd armed at absolute instants of a [`Clock`].
#[derive(Debug)]
pub struct TimerFd {
    fd: OwnedFd,
    clock: Clock,
    armed: Option<Instant>,
}

impl TimerFd {
    pub fn new(clock: Clock) -> Result<TimerFd> {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = cvt(unsafe {
            libc::timerfd_create(
                libc::CLOCK_MONOTONIC,
                libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
            )
        })
        .map_err(|e| EmuError::io("timerfd_create", e))?;
        Ok(TimerFd {
            // SAFETY: `raw` is a fresh fd owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
            clock,
            armed: None,
        })
    }

    /// Fires once at `at` (immediately if it has passed). Re-arming at the same
    /// instant is free.
    pub fn arm_at(&mut self, at: Instant) -> io::Result<()> {
        if self.armed == Some(at) {
            return Ok(());
        }
        // An all-zero it_value disarms, so the earliest expressible deadline is 1 ns.
        let ns = self.clock.to_monotonic_ns(at).max(1);
        self.set(ns)?;
        self.armed = Some(at);
        Ok(())
    }

    pub fn disarm(&mut self) -> io::Result<()> {
        if self.armed.is_none() {
            return Ok(());
        }
        self.set(0)?;
        self.armed = None;
        Ok(())
    }

    /// Clears a pending expiry (after epoll reported the fd readable).
    pub fn ack(&mut self) {
        let mut ticks = 0u64;
        // SAFETY: reads the 8-byte expiry count; EAGAIN (nothing pending) is fine.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), (&mut ticks as *mut u64).cast(), 8) };
        if n == 8 {
            // A one-shot timer that fired is disarmed.
            self.armed = None;
        }
    }

    fn set(&self, abs_ns: u64) -> io::Result<()> {
        let spec = libc::itimerspec {
            it_interval: libc::timespec {
                tv_sec: 0,
                tv_nsec: 0,
            },
            it_value: libc::timespec {
                tv_sec: (abs_ns / NS_PER_S) as libc::time_t,
                tv_nsec: (abs_ns % NS_PER_S) as libc::c_long,
            },
        };
        // SAFETY: `spec` is a valid itimerspec; the old value is not requested.
        cvt(unsafe {
            libc::timerfd_settime(
                self.fd.as_raw_fd(),
                libc::TFD_TIMER_ABSTIME,
                &spec,
                std::ptr::null_mut(),
            )
        })
        .map(drop)
    }
}

impl AsRawFd for TimerFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clock_starts_near_zero_and_never_runs_back() {
        let c = Clock::start();
        let a = c.now();
        let b = c.now();
        assert!(b >= a);
        assert!(a < Instant::from_secs(1));
    }

    #[test]
    fn timer_fires_no_earlier_than_its_deadline() {
        let c = Clock::start();
        let mut t = TimerFd::new(c).unwrap();
        let at = c.now() + brisk_time::Duration::from_micros(300);
        t.arm_at(at).unwrap();
        let mut pfd = libc::pollfd {
            fd: t.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd.
        let n = unsafe { libc::poll(&mut pfd, 1, 1000) };
        assert_eq!(n, 1);
        assert!(c.now() >= at);
        t.ack();
        assert_eq!(t.armed, None);
    }
}

//! An eventfd (eventfd(2)) through which application threads wake an event loop that
//! sleeps in epoll: a write makes the fd readable, a read clears it. A flag in front
//! of it coalesces wake-ups, so a burst of socket calls costs one syscall, not one each.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::{cvt, EmuError, Result};

#[derive(Debug)]
pub struct Waker {
    fd: OwnedFd,
    pending: AtomicBool,
}

impl Waker {
    pub fn new() -> Result<Waker> {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) })
            .map_err(|e| EmuError::io("eventfd", e))?;
        Ok(Waker {
            // SAFETY: fresh fd owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
            pending: AtomicBool::new(false),
        })
    }

    /// Makes the fd readable unless a wake-up is already pending.
    pub fn wake(&self) {
        if !self.pending.swap(true, Ordering::AcqRel) {
            let one = 1u64;
            // SAFETY: writes 8 bytes from a live u64. The counter cannot overflow at
            // one write per drained wake-up, so failure is impossible in practice.
            unsafe { libc::write(self.fd.as_raw_fd(), (&one as *const u64).cast(), 8) };
        }
    }

    /// Clears a pending wake-up (the loop calls this before looking for work, so a
    /// wake-up that races with the look is not lost).
    pub fn drain(&self) {
        if self.pending.swap(false, Ordering::AcqRel) {
            let mut v = 0u64;
            // SAFETY: reads 8 bytes into a live u64; EAGAIN is harmless.
            unsafe { libc::read(self.fd.as_raw_fd(), (&mut v as *mut u64).cast(), 8) };
        }
    }
}

impl AsRawFd for Waker {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

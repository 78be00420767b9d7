//! A minimal level-triggered epoll set: the emulator waits on its sides' fds and its
//! timerfd at once. Level-triggered suits a loop that reads each fd until it would
//! block (or a batch limit) and comes back: unread packets simply report again.

use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};

use crate::error::{cvt, EmuError, Result};

/// Most readiness events taken per wait.
pub const MAX_EVENTS: usize = 8;

#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
    events: [libc::epoll_event; MAX_EVENTS],
}

impl Epoll {
    pub fn new() -> Result<Epoll> {
        // SAFETY: plain syscall; the fd is owned below.
        let raw = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })
            .map_err(|e| EmuError::io("epoll_create1", e))?;
        Ok(Epoll {
            // SAFETY: fresh fd owned by nothing else.
            fd: unsafe { OwnedFd::from_raw_fd(raw) },
            events: [libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS],
        })
    }

    /// Watches `fd` for readability, reporting it as `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: registers a caller-owned fd; `ev` is copied by the kernel.
        cvt(unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })
            .map(drop)
            .map_err(|e| EmuError::io("epoll_ctl(ADD)", e))
    }

    /// Waits up to `timeout_ms` (-1: forever, 0: just check) and returns the tokens
    /// of ready fds as a bit set (tokens must be < 64). EINTR counts as "none ready".
    pub fn wait(&mut self, timeout_ms: i32) -> Result<u64> {
        // SAFETY: the kernel writes at most MAX_EVENTS events into our array.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                self.events.as_mut_ptr(),
                MAX_EVENTS as i32,
                timeout_ms,
            )
        };
        let n = match cvt(n) {
            Ok(n) => n as usize,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(EmuError::io("epoll_wait", e)),
        };
        let mut ready = 0u64;
        for ev in &self.events[..n] {
            let token = ev.u64;
            if token < 64 {
                ready |= 1 << token;
            }
        }
        Ok(ready)
    }
}

/// An epoll set is itself pollable: readable while any fd in it is ready. That lets a
/// side made of several fds ([`crate::emu::mux::MuxSide`]) give the loop one fd.
impl AsRawFd for Epoll {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

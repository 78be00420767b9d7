//! A priority-inheriting mutex and a wake-up counter on Linux futexes (futex(2),
//! `FUTEX_LOCK_PI`; the protocol of `PTHREAD_PRIO_INHERIT` mutexes).
//!
//! Why: brisk's endpoint in real runs sits behind one lock that the packet side (the
//! real-time emulator loop, or the real-time stack thread, emu/threaded.rs) and the
//! application threads (normal policy) share. With a plain mutex an application
//! thread that is preempted while it holds the lock — by a compiler on a shared
//! machine, say — holds the real-time side off for a whole time slice: at 1 Gbit/s,
//! 10 ms, 225 of 119 330 lock waits on the stack thread took over 0.5 ms (max 9.1 ms)
//! and packets waited for it 4-7 ms at p99 although the thread ran under
//! `SCHED_FIFO` (docs/performance.md). Under priority inheritance the kernel runs
//! the holder at the waiter's priority until it unlocks, so a real-time waiter waits
//! only for the critical section itself.
//!
//! std's `Condvar` needs std's `Mutex`, so waiting for a change is a separate
//! [`Notify`]: a counter the waiter reads under the lock and sleeps on after
//! unlocking (`FUTEX_WAIT` returns at once if it moved), which the notifier bumps and
//! wakes without taking any lock, so no wake-up is lost and the notifier never blocks.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::Duration;

/// The futex word's owner field (the holder's thread id); the other bits are the
/// kernel's (`FUTEX_WAITERS`, `FUTEX_OWNER_DIED`).
const TID_MASK: u32 = 0x3fff_ffff;

thread_local! {
    static TID: u32 = {
        // SAFETY: gettid has no preconditions.
        (unsafe { libc::gettid() }) as u32
    };
}

fn futex(word: &AtomicU32, op: libc::c_int, val: u32, timeout: Option<&libc::timespec>) -> i64 {
    let ts = timeout.map_or(std::ptr::null(), |t| t as *const libc::timespec);
    // SAFETY: `word` is a live, aligned u32 for the duration of the call; the kernel
    // reads `ts` only if non-null, and it points to a live timespec.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            op | libc::FUTEX_PRIVATE_FLAG,
            val,
            ts,
        ) as i64
    }
}

/// A mutex whose holder inherits the priority of a real-time waiter. Not poisoned by
/// a panic: the guard unlocks while unwinding and the data stays as left (the
/// endpoint's users already treated a poisoned lock as usable).
pub struct PiMutex<T> {
    /// 0, or the holder's thread id with the kernel's flags.
    word: AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the lock gives one thread at a time access to `data`, as std's Mutex does.
unsafe impl<T: Send> Send for PiMutex<T> {}
// SAFETY: as above: `&PiMutex` only hands out `&mut T` under the lock.
unsafe impl<T: Send> Sync for PiMutex<T> {}

impl<T> PiMutex<T> {
    pub fn new(data: T) -> PiMutex<T> {
        PiMutex {
            word: AtomicU32::new(0),
            data: UnsafeCell::new(data),
        }
    }

    /// Locks, sleeping in the kernel (which boosts the holder) while another thread
    /// holds it. Locking twice on one thread is a bug: the kernel refuses it
    /// (`EDEADLK`) and this panics rather than deadlock.
    pub fn lock(&self) -> PiGuard<'_, T> {
        let tid = TID.with(|t| *t);
        if self
            .word
            .compare_exchange(0, tid, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            loop {
                if futex(&self.word, libc::FUTEX_LOCK_PI, 0, None) == 0 {
                    break;
                }
                let e = std::io::Error::last_os_error();
                match e.raw_os_error() {
                    // Interrupted, or the holder was exiting: try again.
                    Some(libc::EINTR) | Some(libc::EAGAIN) => continue,
                    _ => panic!("FUTEX_LOCK_PI failed: {e}"),
                }
            }
            debug_assert_eq!(self.word.load(Ordering::Relaxed) & TID_MASK, tid);
        }
        PiGuard {
            lock: self,
            _not_send: PhantomData,
        }
    }

    fn unlock(&self) {
        let tid = TID.with(|t| *t);
        // Fast path: no waiter queued. Otherwise the kernel hands the lock over.
        if self
            .word
            .compare_exchange(tid, 0, Ordering::Release, Ordering::Relaxed)
            .is_err()
        {
            futex(&self.word, libc::FUTEX_UNLOCK_PI, 0, None);
        }
    }
}

/// Access to a [`PiMutex`]'s data; unlocks on drop. Not `Send`: only the thread that
/// locked may unlock (the kernel refuses `FUTEX_UNLOCK_PI` from another, which would
/// leave the lock held for ever).
pub struct PiGuard<'a, T> {
    lock: &'a PiMutex<T>,
    _not_send: PhantomData<*const ()>,
}

impl<T> Deref for PiGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard proves this thread holds the lock.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for PiGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard proves this thread holds the lock, and `&mut self` that
        // no other reference from this guard is live.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for PiGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}

/// A change counter threads can sleep on (see the module docs).
#[derive(Default)]
pub struct Notify {
    seq: AtomicU32,
}

impl Notify {
    /// The counter now: read it under the lock that guards the awaited state.
    pub fn ticket(&self) -> u32 {
        self.seq.load(Ordering::Acquire)
    }

    /// Sleeps until [`Notify::notify_all`] runs after `ticket` was read (at once if it
    /// already has), `timeout` passes, or a spurious wake-up: callers re-check.
    pub fn wait(&self, ticket: u32, timeout: Option<Duration>) {
        let ts = timeout.map(|d| libc::timespec {
            tv_sec: d.as_secs().min(i32::MAX as u64) as libc::time_t,
            tv_nsec: d.subsec_nanos() as libc::c_long,
        });
        // The result does not matter: EAGAIN (it moved), EINTR, ETIMEDOUT and a
        // wake-up all send the caller back to its check.
        futex(&self.seq, libc::FUTEX_WAIT, ticket, ts.as_ref());
    }

    /// Wakes every thread waiting on an older ticket.
    pub fn notify_all(&self) {
        self.seq.fetch_add(1, Ordering::Release);
        futex(&self.seq, libc::FUTEX_WAKE, i32::MAX as u32, None);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn counts_under_contention() {
        let m = Arc::new(PiMutex::new(0u64));
        let threads: Vec<_> = (0..4)
            .map(|_| {
                let m = Arc::clone(&m);
                std::thread::spawn(move || {
                    for _ in 0..20_000 {
                        *m.lock() += 1;
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        assert_eq!(*m.lock(), 80_000);
        assert_eq!(m.word.load(Ordering::Relaxed), 0, "left unlocked");
    }

    #[test]
    fn a_notify_after_the_ticket_is_never_lost() {
        let state = Arc::new((PiMutex::new(false), Notify::default()));
        let s2 = Arc::clone(&state);
        let waiter = std::thread::spawn(move || {
            let (m, n) = &*s2;
            let mut g = m.lock();
            while !*g {
                let t = n.ticket();
                drop(g);
                n.wait(t, None);
                g = m.lock();
            }
        });
        std::thread::sleep(Duration::from_millis(20));
        let (m, n) = &*state;
        *m.lock() = true;
        n.notify_all();
        waiter.join().unwrap();
    }

    #[test]
    fn wait_times_out() {
        let n = Notify::default();
        let t0 = std::time::Instant::now();
        n.wait(n.ticket(), Some(Duration::from_millis(20)));
        let waited = t0.elapsed();
        assert!(waited >= Duration::from_millis(15), "{waited:?}");
        // A stale ticket returns at once.
        let t = n.ticket();
        n.notify_all();
        n.wait(t, None);
    }

    #[test]
    fn a_panicking_holder_unlocks() {
        let m = Arc::new(PiMutex::new(1u32));
        let m2 = Arc::clone(&m);
        let r = std::thread::spawn(move || {
            let _g = m2.lock();
            panic!("holder panics");
        })
        .join();
        assert!(r.is_err());
        assert_eq!(*m.lock(), 1);
    }
}

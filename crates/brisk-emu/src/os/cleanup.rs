//! Process-wide record of the namespaces this process created, so that an interrupt
//! (Ctrl-C, SIGTERM, SIGHUP) can remove them before the process dies, and so that
//! [`clean_leftovers`](crate::os::netns::clean_leftovers) can tell ours from a dead run's.
//!
//! It also records the process groups of commands started in lab namespaces (`lab
//! shell`), which a signal ends (SIGTERM, then SIGKILL) and reaps before the
//! namespaces are deleted.
//!
//! Normal teardown (including a panic unwinding through a test) is the RAII guards'
//! job ([`Netns`](crate::os::netns::Netns)'s and [`Lab`](crate::os::netns::Lab)'s `Drop`); this
//! registry only covers the paths on which no destructor runs. A signal handler may not
//! take locks or spawn processes, so it writes the signal number to a pipe and a
//! watcher thread does the cleanup, then re-raises the signal with its default action.

use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::{Mutex, MutexGuard, Once};

use crate::error::{cvt, EmuError, Result};

/// Most namespaces one process may hold at once (keeps the registry bounded).
pub const MAX_NAMESPACES: usize = 1024;

/// Most process groups one process may register (keeps the registry bounded).
pub const MAX_GROUPS: usize = 64;

static REGISTRY: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Process groups of commands run inside lab namespaces (`lab shell`'s inside and
/// outside commands), ended before the namespaces go on a signal.
static GROUPS: Mutex<Vec<libc::pid_t>> = Mutex::new(Vec::new());
/// Set by the watcher when a signal arrived: teardown is its job from then on.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);
static PIPE_WRITE: AtomicI32 = AtomicI32::new(-1);
static INSTALL: Once = Once::new();

fn registry() -> MutexGuard<'static, Vec<String>> {
    // A panic while holding the lock cannot leave the Vec inconsistent; keep going.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

pub(crate) fn register(name: &str) -> Result<()> {
    let mut r = registry();
    if r.len() >= MAX_NAMESPACES {
        return Err(EmuError::Config(format!(
            "more than {MAX_NAMESPACES} lab namespaces in one process"
        )));
    }
    r.push(name.to_string());
    Ok(())
}

pub(crate) fn unregister(name: &str) {
    registry().retain(|n| n != name);
}

pub(crate) fn is_registered(name: &str) -> bool {
    registry().iter().any(|n| n == name)
}

/// Whether a handled signal is ending the process (its watcher is tearing down).
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

fn groups() -> MutexGuard<'static, Vec<libc::pid_t>> {
    GROUPS.lock().unwrap_or_else(|e| e.into_inner())
}

/// Records the process group `pgid` (led by our child `pgid`) so that an interrupt
/// ends it, and reaps its leader, before the namespaces are removed.
pub fn register_group(pgid: libc::pid_t) -> Result<()> {
    let mut g = groups();
    if g.len() >= MAX_GROUPS {
        return Err(EmuError::Config(format!(
            "more than {MAX_GROUPS} lab process groups in one process"
        )));
    }
    g.push(pgid);
    Ok(())
}

/// Forgets `pgid` (its leader has been reaped by the normal path).
pub fn unregister_group(pgid: libc::pid_t) {
    groups().retain(|&p| p != pgid);
}

/// Whether `pid` (our child) has exited; reaps it if so. A pid that is not (or no
/// longer) our child counts as gone.
fn reaped(pid: libc::pid_t) -> bool {
    let mut status = 0;
    // SAFETY: waitpid with WNOHANG on one pid; `status` outlives the call.
    let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
    r != 0
}

/// Ends the registered process groups as a normal exit of `lab shell` does: SIGTERM,
/// up to `grace` for the leaders to exit, then SIGKILL to whatever is left of each
/// group; reaps the leaders. Returns how many groups there were.
pub fn end_registered_groups(grace: std::time::Duration) -> usize {
    let pgs: Vec<libc::pid_t> = std::mem::take(&mut *groups());
    for &pg in &pgs {
        // SAFETY: kill(2) with a negative pid signals a group we created.
        unsafe { libc::kill(-pg, libc::SIGTERM) };
    }
    let until = std::time::Instant::now() + grace;
    let mut live: Vec<libc::pid_t> = pgs.clone();
    while !live.is_empty() && std::time::Instant::now() < until {
        live.retain(|&pg| !reaped(pg));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    for &pg in &pgs {
        // SAFETY: as above; stragglers of the group (a shell's jobs) go too.
        unsafe { libc::kill(-pg, libc::SIGKILL) };
    }
    for &pg in &live {
        let mut status = 0;
        // SAFETY: blocking waitpid on our own child after SIGKILL.
        unsafe { libc::waitpid(pg, &mut status, 0) };
    }
    pgs.len()
}

/// Deletes every namespace this process created and has not deleted yet; returns how
/// many were removed. Meant for interrupt paths: live [`Netns`](crate::os::netns::Netns)
/// guards of other threads lose their namespace.
pub fn cleanup_registered() -> usize {
    let names: Vec<String> = std::mem::take(&mut *registry());
    names
        .iter()
        .filter(|n| crate::os::netns::delete_netns(n).is_ok())
        .count()
}

extern "C" fn on_signal(sig: libc::c_int) {
    let fd = PIPE_WRITE.load(Ordering::Relaxed);
    if fd >= 0 {
        let b = sig as u8;
        // SAFETY: write(2) is async-signal-safe; `b` lives for the call.
        unsafe { libc::write(fd, (&b as *const u8).cast(), 1) };
    }
}

/// Installs (once per process) handlers for SIGINT, SIGTERM and SIGHUP that delete
/// every registered namespace and then let the signal kill the process as usual.
pub fn install_interrupt_cleanup() -> Result<()> {
    let mut result = Ok(());
    INSTALL.call_once(|| result = install());
    result
}

fn install() -> Result<()> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    cvt(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) })
        .map_err(|e| EmuError::io("pipe2 for the interrupt handler", e))?;
    let [read_fd, write_fd] = fds;
    PIPE_WRITE.store(write_fd, Ordering::Relaxed);
    std::thread::Builder::new()
        .name("brisk-emu-cleanup".into())
        .spawn(move || watch(read_fd))
        .map_err(|e| EmuError::io("spawning the cleanup thread", e))?;
    for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction is valid; the handler only calls write(2).
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as usize;
            libc::sigemptyset(&mut sa.sa_mask);
            cvt(libc::sigaction(sig, &sa, std::ptr::null_mut()))
                .map_err(|e| EmuError::io("sigaction", e))?;
        }
    }
    Ok(())
}

fn watch(read_fd: libc::c_int) {
    let mut b = 0u8;
    loop {
        // SAFETY: reads one byte into `b`.
        let n = unsafe { libc::read(read_fd, (&mut b as *mut u8).cast(), 1) };
        if n == 1 {
            break;
        }
        if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
    INTERRUPTED.store(true, Ordering::SeqCst);
    // The commands first (as a normal exit stops them), so none is left running
    // without its namespace, orphaned to init.
    let ended = end_registered_groups(std::time::Duration::from_secs(2));
    let removed = cleanup_registered();
    eprintln!(
        "brisk-emu: signal {b}: ended {ended} command group(s), removed {removed} lab namespace(s)"
    );
    // SAFETY: restoring the default action and re-raising ends the process the way
    // the signal would have without us.
    unsafe {
        libc::signal(libc::c_int::from(b), libc::SIG_DFL);
        libc::raise(libc::c_int::from(b));
    }
}

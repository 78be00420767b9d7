//! Ctrl-C for long simulations: the first SIGINT asks the running simulation to stop
//! at its next control step and report what it has; a second one ends the process as
//! usual. (The simulator reads no signal itself: `brisk_sim::run_controlled` asks its
//! caller whether to go on.)

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::Relaxed);
    // SAFETY: signal(2) with SIG_DFL is async-signal-safe; the next Ctrl-C kills.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
    }
}

/// Installs the handler; from now on [`interrupted`] reports a Ctrl-C.
pub fn install() {
    // SAFETY: the handler only stores to an atomic and calls signal(2).
    unsafe {
        libc::signal(
            libc::SIGINT,
            on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t,
        );
    }
}

/// Whether Ctrl-C was pressed since [`install`].
pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::Relaxed)
}

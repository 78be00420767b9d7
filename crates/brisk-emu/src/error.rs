//! Errors of the lab and the emulator. Setting up namespaces and devices can fail in
//! many ways (not root, no TUN, a stale name); each error says what was being done.

use std::io;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum EmuError {
    /// A system call or file operation failed.
    #[error("{context}: {source}")]
    Io {
        context: String,
        #[source]
        source: io::Error,
    },
    /// An external command (`ip ...`) exited unsuccessfully.
    #[error("`{command}` failed ({status}): {stderr}")]
    Command {
        command: String,
        status: String,
        stderr: String,
    },
    /// A bad parameter: an address outside the lab range, a malformed rate, ...
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A network element rejected its parameters.
    #[error(transparent)]
    Net(#[from] brisk_net::NetError),
    /// The lab cannot run here (not root, no /dev/net/tun).
    #[error("unsupported environment: {0}")]
    Unsupported(String),
    /// A worker thread panicked.
    #[error("worker thread panicked: {0}")]
    Panicked(String),
}

impl EmuError {
    /// An I/O error with what was being done (public for the experiments built on the
    /// lab, e.g. brisk-repro's bufferbloat).
    pub fn io(context: impl Into<String>, source: io::Error) -> Self {
        EmuError::Io {
            context: context.into(),
            source,
        }
    }
}

pub type Result<T, E = EmuError> = std::result::Result<T, E>;

/// Turns a libc return value into an `io::Result`, reading `errno` on -1.
pub(crate) fn cvt(ret: libc::c_int) -> io::Result<libc::c_int> {
    if ret == -1 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

/// Like [`cvt`] for `ssize_t` results.
pub(crate) fn cvt_size(ret: libc::ssize_t) -> io::Result<usize> {
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret as usize)
    }
}

/// A short description of a panic payload.
pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = p.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = p.downcast_ref::<String>() {
        s.clone()
    } else {
        "non-string panic payload".to_string()
    }
}

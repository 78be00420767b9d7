//! Network namespaces for the lab: creation and deletion with iproute2
//! (`ip netns add/del`, which bind-mounts the namespace at `/var/run/netns/NAME`),
//! commands inside one (`ip -n NAME ...`, `ip netns exec`), and code inside one: a
//! thread that `setns(2)`s into the namespace file (CLONE_NEWNET is per thread), so a
//! socket or TUN fd it opens belongs to that namespace and stays so wherever it is used.
//!
//! Naming: `brisk-<pid>-<counter>-<tag>`, so parallel test processes never collide and
//! [`clean_leftovers`] can find namespaces whose process is gone. Every [`Netns`]
//! deletes its namespace on drop (also while a panic unwinds); [`Lab`] owns a set of
//! them; [`crate::os::cleanup`] covers interrupts.

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::JoinHandle;

use crate::error::{cvt, panic_message, EmuError, Result};
use crate::os::cleanup;

/// Prefix of every namespace (and device) the lab creates.
pub const PREFIX: &str = "brisk-";
/// Where iproute2 keeps named namespaces.
pub const NETNS_DIR: &str = "/var/run/netns";
/// Longest tag accepted by [`Netns::create`].
pub const MAX_TAG_LEN: usize = 8;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The iproute2 binary: `/usr/sbin/ip` when present, else `ip` from `PATH`.
pub fn ip_binary() -> &'static str {
    if Path::new("/usr/sbin/ip").exists() {
        "/usr/sbin/ip"
    } else {
        "ip"
    }
}

/// Why the lab cannot run here, if it cannot: not root, or no `/dev/net/tun`.
pub fn unsupported_reason() -> Option<String> {
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("not running as root (namespaces and TUN need CAP_NET_ADMIN)".into());
    }
    if !Path::new("/dev/net/tun").exists() {
        return Some("/dev/net/tun is missing".into());
    }
    if Command::new(ip_binary()).arg("-V").output().is_err() {
        return Some("iproute2 `ip` is not installed".into());
    }
    None
}

/// Errors with [`EmuError::Unsupported`] when the lab cannot run here.
pub fn check_supported() -> Result<()> {
    match unsupported_reason() {
        Some(r) => Err(EmuError::Unsupported(r)),
        None => Ok(()),
    }
}

/// A fresh name `brisk-<pid>-<n>-<tag>`.
pub fn unique_name(tag: &str) -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    format!("{PREFIX}{}-{n}-{tag}", std::process::id())
}

/// Runs `cmd`, turning a failure to start or a non-zero exit into an error.
pub(crate) fn run_command(cmd: &mut Command) -> Result<Output> {
    let shown = format!("{cmd:?}").replace('"', "");
    let out = cmd
        .output()
        .map_err(|e| EmuError::io(format!("running {shown}"), e))?;
    if !out.status.success() {
        return Err(EmuError::Command {
            command: shown,
            status: out.status.to_string(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out)
}

/// With `BRISK_REAL_PHASES` set, prints the wall time since `t0` of a lab step to
/// stderr (where a real run's set-up and tear-down time goes).
pub fn phase(what: &str, t0: std::time::Instant) {
    if std::env::var_os("BRISK_REAL_PHASES").is_some() {
        eprintln!("  lab {what}: {:.3} s", t0.elapsed().as_secs_f64());
    }
}

/// `ip netns del NAME`.
pub(crate) fn delete_netns(name: &str) -> Result<()> {
    run_command(Command::new(ip_binary()).args(["netns", "del", name])).map(drop)
}

/// Names of all `brisk-*` namespaces on the machine.
pub fn list_lab_namespaces() -> Result<Vec<String>> {
    let dir = match std::fs::read_dir(NETNS_DIR) {
        Ok(d) => d,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(EmuError::io(format!("listing {NETNS_DIR}"), e)),
    };
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with(PREFIX))
        .collect();
    names.sort();
    Ok(names)
}

/// The pid encoded in a lab namespace name, if it has one.
fn owner_pid(name: &str) -> Option<u32> {
    name.strip_prefix(PREFIX)?.split('-').next()?.parse().ok()
}

/// Removes every `brisk-*` namespace whose creating process is gone (or whose name has
/// no pid), and those of this process that no guard owns any more. Namespaces of live
/// processes are left alone, so this is safe while other lab runs are in progress.
/// Returns the names removed.
pub fn clean_leftovers() -> Result<Vec<String>> {
    let me = std::process::id();
    let mut removed = Vec::new();
    for name in list_lab_namespaces()? {
        let stale = match owner_pid(&name) {
            Some(pid) if pid == me => !cleanup::is_registered(&name),
            Some(pid) => !Path::new(&format!("/proc/{pid}")).exists(),
            None => true,
        };
        if stale {
            delete_netns(&name)?;
            removed.push(name);
        }
    }
    Ok(removed)
}

/// Moves the calling thread into the namespace behind `file`.
fn enter(file: &File) -> Result<()> {
    // SAFETY: setns on a valid namespace fd only changes this thread's namespace.
    cvt(unsafe { libc::setns(file.as_raw_fd(), libc::CLONE_NEWNET) })
        .map(drop)
        .map_err(|e| EmuError::io("setns(CLONE_NEWNET)", e))
}

/// Runs `f` on a short-lived thread inside the existing namespace `name` (one this
/// process made; used by a device that only knows its namespace's name).
pub(crate) fn run_in_named<T: Send, F: FnOnce() -> T + Send>(name: &str, f: F) -> Result<T> {
    let path = Path::new(NETNS_DIR).join(name);
    let file =
        File::open(&path).map_err(|e| EmuError::io(format!("opening {}", path.display()), e))?;
    std::thread::scope(|s| {
        let h = s.spawn(move || enter(&file).map(|()| f()));
        h.join()
            .map_err(|p| EmuError::Panicked(panic_message(&*p)))?
    })
}

/// A named network namespace, deleted when dropped.
#[derive(Debug)]
pub struct Netns {
    name: String,
}

impl Netns {
    /// Creates `brisk-<pid>-<n>-<tag>` and brings its loopback up. `tag` is 1 to
    /// [`MAX_TAG_LEN`] lowercase letters or digits.
    pub fn create(tag: &str) -> Result<Netns> {
        if tag.is_empty()
            || tag.len() > MAX_TAG_LEN
            || !tag
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        {
            return Err(EmuError::Config(format!(
                "namespace tag {tag:?}: use 1..={MAX_TAG_LEN} lowercase letters or digits"
            )));
        }
        let name = unique_name(tag);
        cleanup::register(&name)?;
        if let Err(e) = run_command(Command::new(ip_binary()).args(["netns", "add", &name])) {
            cleanup::unregister(&name);
            return Err(e);
        }
        // From here on Drop removes the namespace, whatever fails next.
        let ns = Netns { name };
        ns.ip(&["link", "set", "lo", "up"])?;
        Ok(ns)
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The namespace file that `setns` takes.
    pub fn path(&self) -> PathBuf {
        Path::new(NETNS_DIR).join(&self.name)
    }

    /// `ip -n NAME <args>`.
    pub fn ip(&self, args: &[&str]) -> Result<()> {
        run_command(
            Command::new(ip_binary())
                .arg("-n")
                .arg(&self.name)
                .args(args),
        )
        .map(drop)
    }

    /// Runs a program inside the namespace (`ip netns exec NAME argv...`) and waits.
    pub fn exec(&self, argv: &[&str]) -> Result<Output> {
        run_command(
            Command::new(ip_binary())
                .args(["netns", "exec", &self.name])
                .args(argv),
        )
    }

    /// Runs `f` on a short-lived thread inside the namespace and returns its result.
    /// Sockets and fds `f` opens belong to the namespace for their whole life.
    pub fn run_in<T: Send, F: FnOnce() -> T + Send>(&self, f: F) -> Result<T> {
        let file = self.open()?;
        std::thread::scope(|s| {
            let h = s.spawn(move || enter(&file).map(|()| f()));
            h.join()
                .map_err(|p| EmuError::Panicked(panic_message(&*p)))?
        })
    }

    /// Spawns a long-lived thread inside the namespace running `f`.
    pub fn spawn_in<T, F>(&self, thread_name: &str, f: F) -> Result<JoinHandle<Result<T>>>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let file = self.open()?;
        std::thread::Builder::new()
            .name(thread_name.to_string())
            .spawn(move || enter(&file).map(|()| f()))
            .map_err(|e| EmuError::io("spawning a namespace thread", e))
    }

    /// Writes a sysctl of this namespace (`key` like `net.ipv6.conf.all.disable_ipv6`).
    pub fn sysctl(&self, key: &str, value: &str) -> Result<()> {
        if !key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
        {
            return Err(EmuError::Config(format!("sysctl key {key:?}")));
        }
        let path = format!("/proc/sys/{}", key.replace('.', "/"));
        let value = value.to_string();
        // /proc/sys/net resolves against the opening thread's namespace.
        self.run_in(move || std::fs::write(&path, value).map_err(|e| EmuError::io(path, e)))?
    }

    /// Deletes the namespace now, reporting failure (drop ignores it).
    pub fn delete(mut self) -> Result<()> {
        let name = std::mem::take(&mut self.name);
        let r = delete_netns(&name);
        cleanup::unregister(&name);
        r
    }

    fn open(&self) -> Result<File> {
        File::open(self.path())
            .map_err(|e| EmuError::io(format!("opening {}", self.path().display()), e))
    }
}

impl Drop for Netns {
    fn drop(&mut self) {
        if self.name.is_empty() {
            return; // already deleted by `delete`
        }
        if let Err(e) = delete_netns(&self.name) {
            eprintln!("brisk-emu: could not delete namespace {}: {e}", self.name);
        }
        cleanup::unregister(&self.name);
    }
}

/// A set of namespaces torn down together (in reverse order of creation) when the
/// guard drops — at the end of a test, on error, and while a panic unwinds.
#[derive(Debug, Default)]
pub struct Lab {
    namespaces: Vec<Netns>,
}

impl Lab {
    /// Checks that the lab can run here and installs the interrupt cleanup.
    pub fn new() -> Result<Lab> {
        check_supported()?;
        cleanup::install_interrupt_cleanup()?;
        Ok(Lab::default())
    }

    /// Creates a namespace owned by the lab; returns its index.
    pub fn add_netns(&mut self, tag: &str) -> Result<usize> {
        self.namespaces.push(Netns::create(tag)?);
        Ok(self.namespaces.len() - 1)
    }

    /// The `i`th namespace; panics on a bad index (a programming error).
    pub fn netns(&self, i: usize) -> &Netns {
        &self.namespaces[i]
    }

    pub fn names(&self) -> Vec<String> {
        self.namespaces.iter().map(|n| n.name.clone()).collect()
    }

    /// Tears the lab down now, reporting the first failure.
    pub fn teardown(mut self) -> Result<()> {
        let mut first = Ok(());
        while let Some(ns) = self.namespaces.pop() {
            let r = ns.delete();
            if first.is_ok() {
                first = r;
            }
        }
        first
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        while let Some(ns) = self.namespaces.pop() {
            drop(ns);
        }
    }
}

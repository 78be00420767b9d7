//! `brisk lab shell`: brisk's emulator on its own, in the spirit of Mahimahi's `mm-link`
//! and `mm-delay` shells. Two Linux namespaces, *outside* (198.18.0.1) and *inside*
//! (198.18.0.2), joined only by the emulator ([`crate::tools::lab::TwoHosts`]); any
//! command runs on each side: a server outside, and a client (or an interactive shell)
//! inside.
//!
//! ```text
//!  netns …-a "outside" 198.18.0.1 ══ emulator: downlink (bottleneck) ══▶ netns …-b "inside" 198.18.0.2
//!                                 ◀══ uplink (reverse) ═════════════════
//! ```
//! As in Mahimahi, `MAHIMAHI_BASE` inside names the outside address; brisk also sets
//! `BRISK_OUTSIDE` and `BRISK_INSIDE` on both sides. With `ipv6` the hosts are
//! dual-stack (2001:db8:18::1 outside, 2001:db8:18::2 inside, in
//! `BRISK_OUTSIDE6`/`BRISK_INSIDE6`).
//!
//! Job control: the inside command runs in its own process group and, when stdin is a
//! terminal, becomes the terminal's foreground group, so Ctrl-C reaches it (and an
//! interactive shell's jobs) and not brisk; brisk tears down when it exits. The
//! outside command runs in its own process group too and is sent SIGTERM, then
//! SIGKILL after a grace period, at the end. If brisk itself gets SIGINT, SIGTERM or
//! SIGHUP, the interrupt handler (os/cleanup.rs) ends both commands' process groups
//! the same way (SIGTERM, then SIGKILL) and reaps them before it removes the
//! namespaces, so nothing is left running orphaned. The namespaces go with the lab's
//! RAII guards, or with the interrupt handler if brisk itself is killed.

use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus};
use std::time::{Duration as StdDuration, Instant as WallInstant};

use brisk_time::Duration;

use crate::emu::emulator::{EmuReport, Emulator, EmulatorOptions};
use crate::emu::path::EmuConfig;
use crate::error::{EmuError, Result};
use crate::os::cleanup;
use crate::os::netns::{ip_binary, Netns};
use crate::tools::lab::{TwoHosts, ADDR_A, ADDR_A6, ADDR_B, ADDR_B6};
use crate::tools::multipath::{self, MultiPathConfig, MultiPathLab, MultiPathOptions};

/// What to run where.
#[derive(Clone, Debug, Default)]
pub struct ShellConfig {
    /// `sh -c` command line for the outside namespace, started first (a server).
    pub outside: Option<String>,
    /// Time the outside command gets before the inside one starts (a server binding).
    pub outside_settle: StdDuration,
    /// Program and arguments for the inside namespace; empty: an interactive `$SHELL`.
    pub inside: Vec<String>,
    /// The emulator stops by itself after this long (bounds a forgotten shell).
    pub limit: Option<Duration>,
    /// Dual-stack: the hosts also have [`ADDR_A6`] (outside) and [`ADDR_B6`]
    /// (inside), named by `BRISK_OUTSIDE6` and `BRISK_INSIDE6`.
    pub ipv6: bool,
}

/// How it went.
#[derive(Debug)]
pub struct ShellReport {
    /// The inside command's exit status.
    pub status: ExitStatus,
    pub emulator: EmuReport,
}

fn env_cmd(ns: &Netns, cmd: &mut Command, ipv6: bool) {
    cmd.env("BRISK_OUTSIDE", ADDR_A.to_string())
        .env("BRISK_INSIDE", ADDR_B.to_string())
        .env("MAHIMAHI_BASE", ADDR_A.to_string())
        .env("BRISK_NETNS", ns.name());
    if ipv6 {
        cmd.env("BRISK_OUTSIDE6", ADDR_A6.to_string())
            .env("BRISK_INSIDE6", ADDR_B6.to_string());
    }
}

fn in_netns(ns: &Netns, argv: &[String], ipv6: bool, env: &[(String, String)]) -> Command {
    let mut c = Command::new(ip_binary());
    c.args(["netns", "exec", ns.name()]).args(argv);
    env_cmd(ns, &mut c, ipv6);
    c.envs(env.iter().map(|(k, v)| (k, v)));
    // Its own process group: signals for it (and from its terminal) stay off brisk.
    c.process_group(0);
    c
}

/// Makes `pgid` the terminal's foreground process group if stdin is a terminal;
/// returns the group to give it back to.
fn take_terminal(pgid: libc::pid_t) -> Option<libc::pid_t> {
    // SAFETY: isatty/tcgetpgrp/tcsetpgrp/signal take plain integers. SIGTTOU is ignored
    // around tcsetpgrp so that a background brisk may hand the terminal over.
    unsafe {
        if libc::isatty(0) != 1 {
            return None;
        }
        let ours = libc::tcgetpgrp(0);
        if ours < 0 {
            return None;
        }
        let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        let ok = libc::tcsetpgrp(0, pgid) == 0;
        libc::signal(libc::SIGTTOU, old);
        ok.then_some(ours)
    }
}

fn give_back_terminal(pgid: libc::pid_t) {
    // SAFETY: as in take_terminal.
    unsafe {
        let old = libc::signal(libc::SIGTTOU, libc::SIG_IGN);
        libc::tcsetpgrp(0, pgid);
        libc::signal(libc::SIGTTOU, old);
    }
}

/// Waits up to `d` for `child` to exit by itself.
fn exits_within(child: &mut Child, d: StdDuration) -> bool {
    let until = WallInstant::now() + d;
    loop {
        if matches!(child.try_wait(), Ok(Some(_))) {
            return true;
        }
        if WallInstant::now() >= until {
            return false;
        }
        std::thread::sleep(StdDuration::from_millis(20));
    }
}

/// Ends a process group: a moment to finish by itself (a one-shot server printing its
/// summary), then SIGTERM, then SIGKILL after `grace`; reaps the leader.
fn stop_group(child: &mut Child, grace: StdDuration) {
    let pgid = child.id() as libc::pid_t;
    if exits_within(child, StdDuration::from_millis(500)) {
        return;
    }
    // SAFETY: kill(2) with a negative pid signals the group we created.
    unsafe { libc::kill(-pgid, libc::SIGTERM) };
    // Whether or not the leader went within the grace, stragglers of its group go now.
    exits_within(child, grace);
    // SAFETY: as above.
    unsafe { libc::kill(-pgid, libc::SIGKILL) };
    let _ = child.wait();
}

/// Starts `cmd` and registers its process group with the interrupt handler, which
/// ends it before removing the namespaces if brisk gets SIGINT/SIGTERM/SIGHUP.
fn spawn_group(cmd: &mut Command, what: &str) -> Result<Child> {
    let child = cmd
        .spawn()
        .map_err(|e| EmuError::io(format!("starting the {what} command"), e))?;
    if let Err(e) = cleanup::register_group(child.id() as libc::pid_t) {
        let mut child = child;
        stop_group(&mut child, StdDuration::ZERO);
        return Err(e);
    }
    Ok(child)
}

/// After the normal path has reaped `child`: the handler must not signal its pid.
fn forget_group(child: &Child) {
    cleanup::unregister_group(child.id() as libc::pid_t);
}

/// If a signal's watcher has taken over the teardown (it ends the commands, removes
/// the namespaces and re-raises the signal), this thread waits for the end instead
/// of racing it to tear down and exit with a status of its own.
fn yield_to_interrupt() {
    while cleanup::interrupted() {
        std::thread::sleep(StdDuration::from_secs(1));
    }
}

/// Builds the two namespaces and the emulator with `path` (bottleneck = downlink,
/// outside → inside; reverse = uplink), runs the commands, tears everything down.
pub fn run_shell(
    path: &EmuConfig,
    cfg: &ShellConfig,
    opts: EmulatorOptions,
) -> Result<ShellReport> {
    crate::os::cleanup::install_interrupt_cleanup()?;
    let (hosts, tun_a, tun_b) = if cfg.ipv6 {
        TwoHosts::dual_stack(crate::os::tun::DEFAULT_MTU)?
    } else {
        TwoHosts::with_default_mtu()?
    };
    let emu = Emulator::new(tun_a, tun_b, path, opts)?;
    let handle = emu.spawn(cfg.limit)?;
    let status = run_commands(hosts.ns_a(), hosts.ns_b(), cfg, &[]);
    let emulator = handle.stop();
    hosts.teardown()?;
    Ok(ShellReport {
        status: status?,
        emulator: emulator?,
    })
}

/// What a multipath shell ([`run_multipath_shell`]) did.
#[derive(Debug)]
pub struct MultiPathShellReport {
    /// The inside command's exit status.
    pub status: ExitStatus,
    /// Each path's emulator, path 0 first.
    pub paths: Vec<EmuReport>,
}

/// As [`run_shell`], over the multipath lab (tools/multipath.rs): the outside host is
/// its host A (198.18.k.1 on path k), the inside host its host B (198.18.k.2); path
/// `k`'s `bottleneck` is its downlink. Besides `BRISK_OUTSIDE`/`BRISK_INSIDE`
/// (path 0's), both commands get `BRISK_PATHS` (the number of paths) and
/// `BRISK_OUTSIDE_<k>`, `BRISK_INSIDE_<k>` and `BRISK_DEV_<k>` (the device) per path,
/// for `ip mptcp endpoint add $BRISK_INSIDE_1 dev $BRISK_DEV_1 subflow` and the like.
/// IPv4 only.
pub fn run_multipath_shell(
    paths: &MultiPathConfig,
    cfg: &ShellConfig,
    opts: &MultiPathOptions,
) -> Result<MultiPathShellReport> {
    if cfg.ipv6 {
        return Err(EmuError::Config(
            "the multipath lab is IPv4 only (no --ipv6 with --paths)".into(),
        ));
    }
    crate::os::cleanup::install_interrupt_cleanup()?;
    let lab = MultiPathLab::start(paths, opts)?;
    let mut env = vec![("BRISK_PATHS".to_string(), lab.paths().to_string())];
    for k in 0..lab.paths() {
        env.push((
            format!("BRISK_OUTSIDE_{k}"),
            multipath::addr_a(k).to_string(),
        ));
        env.push((
            format!("BRISK_INSIDE_{k}"),
            multipath::addr_b(k).to_string(),
        ));
        env.push((format!("BRISK_DEV_{k}"), multipath::tun_name(k)));
    }
    let status = run_commands(lab.ns_a(), lab.ns_b(), cfg, &env);
    let reports = lab.teardown();
    Ok(MultiPathShellReport {
        status: status?,
        paths: reports?,
    })
}

/// Runs the outside command (if any) and then the inside one in their namespaces,
/// waits for the inside one, ends the outside one; returns the inside status.
fn run_commands(
    outside: &Netns,
    inside: &Netns,
    cfg: &ShellConfig,
    env: &[(String, String)],
) -> Result<ExitStatus> {
    let mut server = match &cfg.outside {
        Some(line) => {
            let argv = ["sh".to_string(), "-c".to_string(), line.clone()];
            let child = spawn_group(&mut in_netns(outside, &argv, cfg.ipv6, env), "outside")?;
            std::thread::sleep(cfg.outside_settle);
            Some(child)
        }
        None => None,
    };
    let argv = if cfg.inside.is_empty() {
        vec![std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into())]
    } else {
        cfg.inside.clone()
    };
    let status =
        spawn_group(&mut in_netns(inside, &argv, cfg.ipv6, env), "inside").and_then(|mut child| {
            let back = take_terminal(child.id() as libc::pid_t);
            let st = child.wait();
            yield_to_interrupt();
            forget_group(&child);
            if let Some(pg) = back {
                give_back_terminal(pg);
            }
            st.map_err(|e| EmuError::io("waiting for the inside command", e))
        });
    if let Some(s) = server.as_mut() {
        stop_group(s, StdDuration::from_secs(2));
        forget_group(s);
    }
    yield_to_interrupt();
    status
}

//! The simulator's dumbbell over real packets, with each flow's sender chosen per flow:
//! brisk (this process) or the Linux kernel (a namespace). All flows cross **one**
//! emulated bottleneck element, behind their own access delays ([`crate::emu::route`]).
//!
//! ```text
//!  brisk (198.18.0.1, in-process) ══ StackSide ─┐                                         netns r (receivers)
//!                                               ├ MuxSide ═ emulator ═ TUN ═ brisk-tun ── 198.19.0.1/32 flow 0
//!  netns s: Linux senders 198.18.0.2 ─ TUN ═════┘  fwd: access_i → bottleneck              198.19.0.2/32 flow 1 ...
//!                                                  rev: [reverse] → back_i                route 198.18.0.0/16
//! ```
//! Receivers are always Linux kernels in namespace `r`, one address per flow
//! (`brisk_sim::topology::receiver_ip(i)`, as in the simulator), which is how the
//! emulator tells flows apart. Linux senders share namespace `s` (one address; the
//! flows differ by receiver). brisk's address is owned by no kernel, so nothing
//! answers its segments with RSTs. Namespace `s` exists only when a Linux flow does,
//! the brisk stack only when a brisk flow does. brisk's `StackSide` runs on a thread
//! of its own behind a [`ThreadedSide`] (emu/threaded.rs), or with
//! `BRISK_STACK_THREAD=0` (and on a single CPU) on the loop's thread. One [`Clock`] is time zero for the
//! emulator, the stack, and the flows' start times.

use std::net::Ipv4Addr;
use std::sync::{Arc, Mutex};

use brisk_time::{Duration, Instant};

use crate::emu::emulator::{EmuReport, Emulator, EmulatorHandle, EmulatorOptions};
use crate::emu::mux::MuxSide;
use crate::emu::path::EmuConfig;
use crate::emu::route::Route;
use crate::emu::side::Side;
use crate::emu::threaded::{self, ThreadedOptions, ThreadedReport, ThreadedSide};
use crate::error::{EmuError, Result};
use crate::os::clock::Clock;
use crate::os::netns::{Lab, Netns};
use crate::os::tun::{in_lab_range, Tun, DEFAULT_MTU};
use crate::stack::{BriskStack, StackConfig};
use crate::tools::lab::TUN_NAME;

/// brisk's sender address.
pub const BRISK_SENDER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 1);
/// The Linux senders' address (namespace `s`).
pub const LINUX_SENDER: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 2);
/// Most flows of one dumbbell (each costs an address, a few threads and sockets).
pub const MAX_FLOWS: usize = 256;

/// Flow `i`'s receiver address, 198.19.x.y with x.y = i + 1 (the simulator's).
pub fn receiver_addr(i: usize) -> Ipv4Addr {
    let [_, _, x, y] = (i as u32).wrapping_add(1).to_be_bytes();
    Ipv4Addr::new(198, 19, x, y)
}

/// What to build.
#[derive(Clone, Debug)]
pub struct DumbbellConfig {
    /// The shared `bottleneck` and `reverse` and the seed; `rtt` must be unset (each
    /// flow has its own, in `rtts`).
    pub path: EmuConfig,
    /// Each flow's base RTT, split rtt/2 per direction on its own access path.
    pub rtts: Vec<Duration>,
    /// A brisk stack as a sender (its `local` is replaced by [`BRISK_SENDER`]).
    pub brisk: Option<StackConfig>,
    /// A namespace of Linux senders.
    pub linux: bool,
    /// More addresses of the Linux senders' namespace beside [`LINUX_SENDER`] (MPTCP
    /// endpoints: subflows from them cross the same access path, which is chosen by
    /// the receiver's address).
    pub linux_extra: Vec<Ipv4Addr>,
    /// Meter the forward bottleneck: (interval, until); rows are bounded by their ratio.
    pub meter: Option<(Duration, Instant)>,
    pub opts: EmulatorOptions,
    /// The emulator's time limit.
    pub limit: Option<Duration>,
}

/// A running dumbbell. Dropping it stops the emulator and deletes the namespaces.
pub struct Dumbbell {
    // Field order is drop order: the loop stops before the namespaces go.
    emu: Option<EmulatorHandle>,
    stack: Option<BriskStack>,
    /// Where brisk's side thread leaves its report (when it has one).
    stack_thread: Option<Arc<Mutex<Option<ThreadedReport>>>>,
    clock: Clock,
    senders: Option<usize>,
    receivers: usize,
    lab: Lab,
}

/// Opens TUN `brisk-tun` in `ns` with `addrs` (each /32) and `routes` through it.
fn device(ns: &Netns, addrs: &[Ipv4Addr], routes: &[(Ipv4Addr, u8)]) -> Result<Tun> {
    let all = addrs.iter().chain(routes.iter().map(|r| &r.0));
    if let Some(a) = all.clone().find(|a| !in_lab_range(**a)) {
        return Err(EmuError::Config(format!(
            "address {a} is outside the lab range 198.18.0.0/15"
        )));
    }
    if routes.iter().any(|(a, len)| *len < 15 || !in_lab_range(*a)) {
        return Err(EmuError::Config(
            "lab routes must stay inside 198.18.0.0/15".into(),
        ));
    }
    let _ = ns.sysctl("net.ipv6.conf.all.disable_ipv6", "1");
    let _ = ns.sysctl("net.ipv6.conf.default.disable_ipv6", "1");
    let tun = Tun::open(ns, TUN_NAME)?;
    let mtu = DEFAULT_MTU.to_string();
    ns.ip(&["link", "set", "dev", TUN_NAME, "mtu", &mtu, "up"])?;
    for a in addrs {
        ns.ip(&["addr", "add", &format!("{a}/32"), "dev", TUN_NAME])?;
    }
    for (a, len) in routes {
        ns.ip(&["route", "add", &format!("{a}/{len}"), "dev", TUN_NAME])?;
    }
    Ok(tun)
}

impl Dumbbell {
    pub fn new(cfg: DumbbellConfig) -> Result<Dumbbell> {
        let n = cfg.rtts.len();
        if n == 0 || n > MAX_FLOWS {
            return Err(EmuError::Config(format!(
                "a dumbbell has 1..={MAX_FLOWS} flows, not {n}"
            )));
        }
        if cfg.path.rtt.is_some() {
            return Err(EmuError::Config(
                "dumbbell: rtt is per flow (DumbbellConfig::rtts), not on the path".into(),
            ));
        }
        if cfg.brisk.is_none() && !cfg.linux {
            return Err(EmuError::Config(
                "dumbbell: no sender (neither brisk nor Linux)".into(),
            ));
        }
        let t0 = std::time::Instant::now();
        let mut lab = Lab::new()?;
        let receivers = lab.add_netns("r")?;
        crate::os::netns::phase("netns r", t0);
        let raddrs: Vec<Ipv4Addr> = (0..n).map(receiver_addr).collect();
        let tun_r = device(
            lab.netns(receivers),
            &raddrs,
            &[(Ipv4Addr::new(198, 18, 0, 0), 16)],
        )?;
        crate::os::netns::phase("tun r", t0);
        let mut members: Vec<(Box<dyn Side + Send>, Vec<Ipv4Addr>)> = Vec::new();
        let (mut stack, mut clock, mut stack_thread, mut stack_cpu) = (None, None, None, None);
        if let Some(sc) = cfg.brisk {
            let (s, side) = BriskStack::new(StackConfig {
                local: BRISK_SENDER,
                // The dumbbell's devices and multiplexer are IPv4 only.
                local6: None,
                ..sc
            })?;
            clock = Some(s.clock());
            if threaded::stack_thread_enabled() {
                let topts = ThreadedOptions::default();
                stack_cpu = topts.cpu;
                let (t, slot) = ThreadedSide::spawn(side, s.clock(), "brisk-stack", topts)?;
                stack_thread = Some(slot);
                members.push((Box::new(t), vec![BRISK_SENDER]));
            } else {
                members.push((Box::new(side), vec![BRISK_SENDER]));
            }
            stack = Some(s);
        }
        crate::os::netns::phase("brisk stack", t0);
        let mut senders = None;
        if cfg.linux {
            let s = lab.add_netns("s")?;
            let mut addrs = vec![LINUX_SENDER];
            for a in &cfg.linux_extra {
                if *a == BRISK_SENDER || addrs.contains(a) {
                    return Err(EmuError::Config(format!(
                        "dumbbell: Linux sender address {a} given twice or brisk's"
                    )));
                }
                addrs.push(*a);
            }
            let tun_s = device(lab.netns(s), &addrs, &[(Ipv4Addr::new(198, 19, 0, 0), 16)])?;
            members.push((Box::new(tun_s), addrs));
            senders = Some(s);
        }
        crate::os::netns::phase("netns+tun s", t0);
        let clock = clock.unwrap_or_else(Clock::start);
        let (fwd_chain, rev_chain) = cfg.path.build()?;
        let halves: Vec<Duration> = cfg.rtts.iter().map(|r| *r / 2).collect();
        // Rounding: an odd-nanosecond RTT puts the extra nanosecond on the way back.
        let backs: Vec<Duration> = cfg.rtts.iter().zip(&halves).map(|(r, h)| *r - *h).collect();
        let mut fwd = Route::forward(halves, fwd_chain);
        if let Some((interval, until)) = cfg.meter {
            let iv = (interval.as_nanos() as u64).max(1);
            let rows = (until.as_nanos() / iv).saturating_add(2).min(1 << 20) as usize;
            fwd = fwd.with_meter(iv, rows, n, until);
        }
        let rev = Route::reverse(rev_chain, backs);
        let mut opts = cfg.opts;
        opts.clock = Some(clock);
        if stack_cpu.is_some() {
            opts.avoid_cpu = stack_cpu;
        }
        let emu = Emulator::with_routes(MuxSide::new(members)?, tun_r, fwd, rev, opts)?
            .spawn(cfg.limit)?;
        crate::os::netns::phase("emulator spawn", t0);
        Ok(Dumbbell {
            emu: Some(emu),
            stack,
            stack_thread,
            clock,
            senders,
            receivers,
            lab,
        })
    }

    /// The shared time base (zero = when the dumbbell was built).
    pub fn clock(&self) -> Clock {
        self.clock
    }

    /// The brisk sender stack, if built.
    pub fn stack(&self) -> Option<&BriskStack> {
        self.stack.as_ref()
    }

    /// The Linux senders' namespace, if built.
    pub fn senders(&self) -> Option<&Netns> {
        self.senders.map(|i| self.lab.netns(i))
    }

    /// The receivers' namespace.
    pub fn receivers(&self) -> &Netns {
        self.lab.netns(self.receivers)
    }

    /// Stops the emulator, returns its report and deletes the namespaces.
    pub fn stop(mut self) -> Result<EmuReport> {
        let t0 = std::time::Instant::now();
        let mut report = match self.emu.take() {
            Some(h) => h.stop(),
            None => Err(EmuError::Config("emulator already stopped".into())),
        };
        // The loop's sides, the side thread's adaptor among them, are dropped (and
        // that thread joined) by the time the loop's thread is joined.
        if let (Ok(r), Some(slot)) = (&mut report, &self.stack_thread) {
            r.stack_thread = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            // The thread's queues are part of the path brisk sees: a run they
            // distorted must not look clean (same threshold as the loop's).
            if let Some(t) = &r.stack_thread {
                let threshold_ns = (r.health.late_threshold_us * 1e3) as u64;
                let w = t.warnings(threshold_ns);
                for line in &w {
                    eprint!("{}", crate::emu::emulator::warning_line(line));
                }
                crate::emu::health::note_reported(w.len());
                r.health.warnings.extend(w);
            }
        }
        crate::os::netns::phase("emulator stop", t0);
        let lab = std::mem::take(&mut self.lab);
        lab.teardown()?;
        crate::os::netns::phase("teardown", t0);
        report
    }
}

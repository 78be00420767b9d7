//! The lab with several paths (issue 31 §2, "the lab with two paths"): namespaces
//! `A` and `B` joined by N ≤ [`MAX_PATHS`] emulated links, each with its own rate,
//! delay, loss, queue and impairments, and its own emulator loop; path `k` is TUN
//! device `brisk-tun<k>` on each side, with addresses 198.18.k.1 (A) and 198.18.k.2
//! (B):
//!
//! ```text
//!  netns brisk-<pid>-<n>-a                                        netns brisk-<pid>-<n>-b
//!  198.18.0.1 ── brisk-tun0 ◀═ fd ═▶ emulator 0: fwd/rev chains ◀═ fd ═▶ brisk-tun0 ── 198.18.0.2
//!  198.18.1.1 ── brisk-tun1 ◀═ fd ═▶ emulator 1: fwd/rev chains ◀═ fd ═▶ brisk-tun1 ── 198.18.1.2
//! ```
//! **Routing: a packet takes the link of its source address**, as on a multi-homed
//! host whose addresses each belong to one access link. In each namespace the main
//! table has `/32` routes to the peer's address of each path through that path's
//! device *with its own address as the source hint* (`src`), so a socket that
//! leaves the source to the kernel gets the address of the path it will use; and a
//! rule per address (`from 198.18.k.x lookup 100+k`) sends everything from that
//! address, to any lab address, through path `k`'s device. An address pair (k, k)
//! therefore uses link `k` both ways; a crossed pair (198.18.1.1 → 198.18.0.2) goes
//! out on link 1 and comes back on link 0. `rp_filter` is off (as in Linux's
//! `mptcp_join.sh`), so such asymmetric pairs are accepted. IPv6 is off, so the only
//! packets on the links are the lab's own.
//!
//! Each path is one [`Emulator`] on its own thread, with its own report (and pcaps
//! `path<k>-a.pcap`, `path<k>-b.pcap` with [`MultiPathOptions::pcap_dir`];
//! `mergecap` joins them). A path may strip MPTCP options in either direction
//! ([`StripSpec`], emu/mptcp_strip.rs). Configuration in TOML:
//!
//! ```toml
//! [[path]]                       # path 0: 198.18.0.1 <-> 198.18.0.2
//! rtt = "10ms"
//! bottleneck = { rate = "20Mbit", queue = { kind = "droptail", packets = 100 } }
//! [[path]]                       # path 1: 198.18.1.1 <-> 198.18.1.2
//! rtt = "40ms"
//! bottleneck = { rate = "10Mbit", loss = { kind = "bernoulli", p = 0.002 } }
//! strip_mptcp = { direction = "forward", packets = "syn" }
//! ```

use std::net::Ipv4Addr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use brisk_time::Duration;
use serde::{Deserialize, Serialize};

use crate::emu::emulator::{EmuReport, Emulator, EmulatorHandle, EmulatorOptions};
use crate::emu::mptcp_strip::StripPackets;
use crate::emu::mux::MuxSide;
use crate::emu::path::{Dur, EmuConfig, PathSpec};
use crate::emu::side::Side;
use crate::emu::threaded::{self, ThreadedOptions, ThreadedSide};
use crate::error::{EmuError, Result};
use crate::os::clock::Clock;
use crate::os::netns::{Lab, Netns};
use crate::os::tun::{in_lab_range, Tun, DEFAULT_MTU};
use crate::stack::{BriskStack, StackConfig};
use crate::tools::lab::disable_ipv6;

/// Most paths of one lab (each is a TUN device per side and an emulator thread).
pub const MAX_PATHS: usize = 4;
/// Routing table of path `k` is `TABLE_BASE + k` (its rule has that preference).
const TABLE_BASE: usize = 100;

/// Host A's address on path `k`: 198.18.k.1.
pub fn addr_a(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, k as u8, 1)
}

/// Host B's address on path `k`: 198.18.k.2.
pub fn addr_b(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, k as u8, 2)
}

/// brisk's address when [`MultiPathOptions::brisk`] puts its stack on host A's side:
/// 198.18.0.3, on path 0 only (see [`MultiPathOptions::brisk`]).
pub const BRISK_ON_PATH0: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);

/// Path `k`'s TUN device name on either side.
pub fn tun_name(k: usize) -> String {
    format!("brisk-tun{k}")
}

/// Which direction of a path the MPTCP-option stripper works on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StripDirection {
    /// A → B.
    #[default]
    Forward,
    /// B → A.
    Reverse,
    Both,
}

/// An MPTCP-option-stripping middlebox on a path (emu/mptcp_strip.rs).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct StripSpec {
    #[serde(default)]
    pub direction: StripDirection,
    #[serde(default)]
    pub packets: StripPackets,
}

impl StripSpec {
    /// The stripper of the (forward, reverse) directions.
    pub fn per_direction(self) -> (Option<StripPackets>, Option<StripPackets>) {
        let p = Some(self.packets);
        match self.direction {
            StripDirection::Forward => (p, None),
            StripDirection::Reverse => (None, p),
            StripDirection::Both => (p, p),
        }
    }
}

/// One path: the two-host lab's [`EmuConfig`] keys, plus an optional stripper.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PathConfig {
    #[serde(default)]
    pub rtt: Option<Dur>,
    /// A → B.
    #[serde(default)]
    pub bottleneck: PathSpec,
    /// B → A; default unlimited and lossless.
    #[serde(default)]
    pub reverse: Option<PathSpec>,
    /// Default: the path's number + 1, so paths draw different random streams.
    #[serde(default)]
    pub seed: Option<u64>,
    #[serde(default)]
    pub strip_mptcp: Option<StripSpec>,
}

impl PathConfig {
    /// A lossless path: `rate_bps` (0: unlimited) A → B, `rtt` split over both
    /// directions, the default queue.
    pub fn simple(rate_bps: u64, rtt: Duration) -> PathConfig {
        let cfg = EmuConfig::bottleneck(rate_bps, rtt);
        PathConfig {
            rtt: cfg.rtt,
            bottleneck: cfg.bottleneck,
            ..PathConfig::default()
        }
    }

    /// Path `k`'s emulator configuration.
    pub fn emu_config(&self, k: usize) -> EmuConfig {
        EmuConfig {
            rtt: self.rtt,
            bottleneck: self.bottleneck.clone(),
            reverse: self.reverse.clone(),
            seed: self.seed.unwrap_or(k as u64 + 1),
        }
    }
}

/// The paths of a lab, path 0 first.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MultiPathConfig {
    #[serde(rename = "path", default)]
    pub paths: Vec<PathConfig>,
}

impl MultiPathConfig {
    /// Parses a TOML document (module docs) and checks it.
    pub fn from_toml(s: &str) -> Result<MultiPathConfig> {
        let cfg: MultiPathConfig =
            toml::from_str(s).map_err(|e| EmuError::Config(e.to_string()))?;
        cfg.validate()?;
        Ok(cfg)
    }

    /// 1..=[`MAX_PATHS`] paths, each a valid path.
    pub fn validate(&self) -> Result<()> {
        if self.paths.is_empty() || self.paths.len() > MAX_PATHS {
            return Err(EmuError::Config(format!(
                "path: {} given, a multipath lab has 1..={MAX_PATHS}",
                self.paths.len()
            )));
        }
        for (k, p) in self.paths.iter().enumerate() {
            p.emu_config(k)
                .build()
                .map_err(|e| EmuError::Config(format!("path {k}: {e}")))?;
        }
        Ok(())
    }
}

/// How to run the lab.
#[derive(Clone, Debug)]
pub struct MultiPathOptions {
    pub mtu: u32,
    /// Options of every path's emulator (its `pcap_a`/`pcap_b` are replaced when
    /// `pcap_dir` is set).
    pub emulator: EmulatorOptions,
    /// Writes `path<k>-a.pcap` and `path<k>-b.pcap` (side A's and side B's view of
    /// path `k`) here.
    pub pcap_dir: Option<PathBuf>,
    /// Bound on each emulator's run.
    pub limit: Option<Duration>,
    /// A brisk stack on host A's side of **path 0**, at [`BRISK_ON_PATH0`] (its
    /// `local` is replaced): path 0's side A is then host A's device *and* brisk's
    /// stack, told apart by destination address ([`MuxSide`]), as in the dumbbell.
    /// The stack has that one address, so a brisk connection uses path 0 only: a
    /// second address on path 1 would need the one stack split over two emulator
    /// loops, which is not built (brisk's MPTCP opens one subflow so far).
    pub brisk: Option<StackConfig>,
}

impl Default for MultiPathOptions {
    fn default() -> Self {
        MultiPathOptions {
            mtu: DEFAULT_MTU,
            emulator: EmulatorOptions::default(),
            pcap_dir: None,
            limit: Some(Duration::from_secs(600)),
            brisk: None,
        }
    }
}

/// A running multipath lab: both namespaces and one emulator per path. Dropping it
/// stops the emulators, then deletes the namespaces (and with them the devices).
pub struct MultiPathLab {
    // Declared first, so dropped first: the loops stop before their devices vanish.
    emulators: Vec<EmulatorHandle>,
    stack: Option<BriskStack>,
    /// Where brisk's side thread leaves its report (when it has one).
    stack_thread: Option<Arc<Mutex<Option<threaded::ThreadedReport>>>>,
    /// Every path's time zero (and brisk's stack's).
    clock: Clock,
    lab: Lab,
    paths: usize,
}

impl std::fmt::Debug for MultiPathLab {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MultiPathLab")
            .field("namespaces", &self.lab.names())
            .field("paths", &self.paths)
            .finish()
    }
}

impl MultiPathLab {
    /// Builds the namespaces, devices, addresses and routes, and starts one emulator
    /// per path.
    pub fn start(cfg: &MultiPathConfig, opts: &MultiPathOptions) -> Result<MultiPathLab> {
        cfg.validate()?;
        let n = cfg.paths.len();
        let mut lab = Lab::new()?;
        let a = lab.add_netns("a")?;
        let b = lab.add_netns("b")?;
        let tuns_a = host(lab.netns(a), n, addr_a, addr_b, opts.mtu)?;
        let tuns_b = host(lab.netns(b), n, addr_b, addr_a, opts.mtu)?;
        let (mut stack, mut brisk_side, mut stack_thread, mut avoid_cpu) = (None, None, None, None);
        if let Some(sc) = &opts.brisk {
            // Host B reaches brisk over path 0 (its rule for 198.18.0.2 already
            // sends everything from there through path 0).
            let (b32, src) = (format!("{BRISK_ON_PATH0}/32"), addr_b(0).to_string());
            lab.netns(b)
                .ip(&["route", "add", &b32, "dev", &tun_name(0), "src", &src])?;
            let (s, side) = BriskStack::new(StackConfig {
                local: BRISK_ON_PATH0,
                local6: None,
                ..sc.clone()
            })?;
            let side: Box<dyn Side + Send> = if threaded::stack_thread_enabled() {
                let topts = ThreadedOptions::default();
                avoid_cpu = topts.cpu;
                let (t, slot) = ThreadedSide::spawn(side, s.clock(), "brisk-stack", topts)?;
                stack_thread = Some(slot);
                Box::new(t)
            } else {
                Box::new(side)
            };
            brisk_side = Some(side);
            stack = Some(s);
        }
        let clock = stack.as_ref().map_or_else(Clock::start, BriskStack::clock);
        let mut emulators = Vec::with_capacity(n);
        for (k, ((p, ta), tb)) in cfg.paths.iter().zip(tuns_a).zip(tuns_b).enumerate() {
            let mut eo = opts.emulator.clone();
            eo.clock = Some(clock);
            if avoid_cpu.is_some() {
                eo.avoid_cpu = avoid_cpu;
            }
            if let Some(dir) = &opts.pcap_dir {
                eo.pcap_a = Some(dir.join(format!("path{k}-a.pcap")));
                eo.pcap_b = Some(dir.join(format!("path{k}-b.pcap")));
            }
            let handle = match brisk_side.take().filter(|_| k == 0) {
                // Host A's device takes every address of A: a crossed pair's reply
                // may come back over path 0.
                Some(bs) => {
                    let mux = MuxSide::new(vec![
                        (Box::new(ta), (0..n).map(addr_a).collect()),
                        (bs, vec![BRISK_ON_PATH0]),
                    ])?;
                    spawn_path(Emulator::new(mux, tb, &p.emu_config(k), eo)?, p, opts)?
                }
                None => spawn_path(Emulator::new(ta, tb, &p.emu_config(k), eo)?, p, opts)?,
            };
            emulators.push(handle);
        }
        Ok(MultiPathLab {
            emulators,
            stack,
            stack_thread,
            clock,
            lab,
            paths: n,
        })
    }

    /// The brisk stack on path 0, if [`MultiPathOptions::brisk`] asked for one.
    pub fn stack(&self) -> Option<&BriskStack> {
        self.stack.as_ref()
    }

    /// The emulators' (and brisk's) time zero.
    pub fn clock(&self) -> Clock {
        self.clock
    }

    pub fn paths(&self) -> usize {
        self.paths
    }

    pub fn ns_a(&self) -> &Netns {
        self.lab.netns(0)
    }

    pub fn ns_b(&self) -> &Netns {
        self.lab.netns(1)
    }

    /// Stops every path's emulator and returns their reports, path 0 first; the
    /// namespaces stay until the lab is dropped. brisk's stack thread, if any, is
    /// part of path 0: its report and warnings go to path 0's (as the dumbbell's).
    pub fn stop(&mut self) -> Result<Vec<EmuReport>> {
        let mut reports = Vec::with_capacity(self.emulators.len());
        let mut first_err = None;
        for h in self.emulators.drain(..) {
            match h.stop() {
                Ok(r) => reports.push(r),
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        if let (Some(r), Some(slot)) = (reports.first_mut(), &self.stack_thread) {
            r.stack_thread = slot.lock().unwrap_or_else(|e| e.into_inner()).take();
            if let Some(t) = &r.stack_thread {
                let threshold_ns = (r.health.late_threshold_us * 1e3) as u64;
                r.health.warnings.extend(t.warnings(threshold_ns));
            }
        }
        match first_err {
            Some(e) => Err(e),
            None => Ok(reports),
        }
    }

    /// Stops the emulators and deletes the namespaces now, reporting failures.
    pub fn teardown(mut self) -> Result<Vec<EmuReport>> {
        let reports = self.stop();
        let lab = std::mem::take(&mut self.lab);
        lab.teardown()?;
        reports
    }
}

/// Starts path `p`'s loop, with its MPTCP-option stripper if it has one.
fn spawn_path<A, B>(
    mut emu: Emulator<A, B>,
    p: &PathConfig,
    opts: &MultiPathOptions,
) -> Result<EmulatorHandle>
where
    A: Side + Send + 'static,
    B: Side + Send + 'static,
{
    if let Some(s) = p.strip_mptcp {
        let (fwd, rev) = s.per_direction();
        emu.strip_mptcp(fwd, rev);
    }
    emu.spawn(opts.limit)
}

/// One host of the lab: a device per path with `local(k)/32`, a `/32` route to
/// `peer(k)` with `local(k)` as the source hint, and a rule sending everything from
/// `local(k)` through path `k` (module docs).
fn host(
    ns: &Netns,
    n: usize,
    local: fn(usize) -> Ipv4Addr,
    peer: fn(usize) -> Ipv4Addr,
    mtu: u32,
) -> Result<Vec<Tun>> {
    disable_ipv6(ns);
    // Asymmetric (crossed) pairs arrive on another device than their replies leave.
    for key in ["all", "default"] {
        ns.sysctl(&format!("net.ipv4.conf.{key}.rp_filter"), "0")?;
    }
    let mtu = mtu.to_string();
    let mut tuns = Vec::with_capacity(n);
    for k in 0..n {
        let (l, p) = (local(k), peer(k));
        debug_assert!(in_lab_range(l) && in_lab_range(p));
        let dev = tun_name(k);
        let tun = Tun::open(ns, &dev)?;
        let table = (TABLE_BASE + k).to_string();
        let (l32, p32, ls) = (format!("{l}/32"), format!("{p}/32"), l.to_string());
        ns.ip(&["link", "set", "dev", &dev, "mtu", &mtu, "up"])?;
        ns.ip(&["addr", "add", &l32, "dev", &dev])?;
        ns.ip(&["route", "add", &p32, "dev", &dev, "src", &ls])?;
        ns.ip(&[
            "rule", "add", "from", &l32, "lookup", &table, "pref", &table,
        ])?;
        ns.ip(&[
            "route",
            "add",
            "198.18.0.0/15",
            "dev",
            &dev,
            "src",
            &ls,
            "table",
            &table,
        ])?;
        tuns.push(tun);
    }
    Ok(tuns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn toml_paths_with_a_stripper() {
        let cfg = MultiPathConfig::from_toml(
            r#"
            [[path]]
            rtt = "10ms"
            bottleneck = { rate = "20Mbit" }
            [[path]]
            rtt = "40ms"
            bottleneck = { rate = "10Mbit", loss = { kind = "bernoulli", p = 0.002 } }
            strip_mptcp = { direction = "both", packets = "syn" }
            "#,
        )
        .unwrap();
        assert_eq!(cfg.paths.len(), 2);
        assert_eq!(cfg.paths[0].strip_mptcp, None);
        let s = cfg.paths[1].strip_mptcp.unwrap();
        assert_eq!(
            s.per_direction(),
            (Some(StripPackets::Syn), Some(StripPackets::Syn))
        );
        assert_eq!(cfg.paths[0].emu_config(0).seed, 1);
        assert_eq!(cfg.paths[1].emu_config(1).seed, 2);
        let d = StripSpec::default().per_direction();
        assert_eq!(d, (Some(StripPackets::All), None));
    }

    #[test]
    fn bad_configs_name_the_problem() {
        for (bad, want) in [
            ("", "path: 0 given"),
            (&"[[path]]\n".repeat(MAX_PATHS + 1) as &str, "path: 5 given"),
            ("[[path]]\nstrip_mptcp = { packets = \"fin\" }", "fin"),
            ("[[path]]\nstrip_mptcp = { direction = \"up\" }", "up"),
            ("[[path]]\nbottleneck = { rate = 0 }", "rate"),
            ("[[path]]\nspeed = 1", "speed"),
        ] {
            let e = MultiPathConfig::from_toml(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{bad:?}: {e}");
        }
    }

    #[test]
    fn addresses_stay_in_the_lab_range() {
        for k in 0..MAX_PATHS {
            assert!(in_lab_range(addr_a(k)) && in_lab_range(addr_b(k)));
            assert_ne!(addr_a(k), addr_b(k));
        }
        assert_eq!(addr_a(1), Ipv4Addr::new(198, 18, 1, 1));
        assert_eq!(tun_name(1), "brisk-tun1");
    }
}

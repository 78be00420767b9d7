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
//! **Routing: a packet takes the link of its highest-numbered address.** Path 0 is
//! the hosts' primary path; an address on path `k ≥ 1` exists only on link `k` (as
//! a phone's 3G address is reachable only over 3G). So a packet whose source or
//! destination is on path `k ≥ 1` takes link `k` (the larger `k` if both are), and a
//! packet between two path-0 addresses takes link 0: both directions of every
//! subflow use the same link, a matched pair (k, k) as well as a crossed one
//! (198.18.1.1 → 198.18.0.2, a `subflow` endpoint joining the peer's initial
//! address, which is what brisk's fullmesh path manager and Linux's do without
//! ADD_ADDR). In each namespace: for `k` from the highest path down, a rule `to
//! 198.18.k.0/24` (k ≥ 1) then a rule `from 198.18.k.x`, both looking up table
//! `100 + k`, which sends all of 198.18.0.0/15 through path `k`'s device; the main
//! table has `/32` routes to the peer's address of each path through that path's
//! device *with its own address as the source hint* (`src`), so a socket that leaves
//! the source to the kernel gets the address of the path it will use. `rp_filter` is
//! off (as in Linux's `mptcp_join.sh`). IPv6 is off, so the only packets on the
//! links are the lab's own.
//!
//! **brisk on every path** ([`MultiPathOptions::brisk`]): one brisk stack on host A's
//! side with the address [`brisk_addr`]`(k)` = 198.18.k.3 on every path `k`. Each
//! path's loop has host A's device *and* a port of brisk's stack as its A side
//! ([`MuxSide`], told apart by destination); the stack's output is split over the
//! paths by the same rule as the namespaces' routes (emu/split.rs). One stack
//! rather than one per path: an MPTCP connection's subflows on both paths belong to
//! one endpoint (its token table, its subflows' 4-tuples).
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
use crate::emu::split::{split, Route, SplitStats};
use crate::emu::threaded::{self, ThreadedOptions, ThreadedSide};
use crate::error::{EmuError, Result};
use crate::os::clock::Clock;
use crate::os::netns::{Lab, Netns};
use crate::os::tun::{in_lab_range, Tun, DEFAULT_MTU};
use crate::stack::{BriskStack, StackConfig};
use crate::tools::lab::disable_ipv6;

/// Most paths of one lab (each is a TUN device per side and an emulator thread).
pub const MAX_PATHS: usize = 4;
/// Routing table of path `k` is `TABLE_BASE + k` (its rules' preferences: `rule_prefs`).
const TABLE_BASE: usize = 100;

/// Host A's address on path `k`: 198.18.k.1.
pub fn addr_a(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, k as u8, 1)
}

/// Host B's address on path `k`: 198.18.k.2.
pub fn addr_b(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, k as u8, 2)
}

/// brisk's address on path 0 when [`MultiPathOptions::brisk`] puts its stack on host
/// A's side: 198.18.0.3, its first address ([`brisk_addr`]`(0)`).
pub const BRISK_ON_PATH0: Ipv4Addr = Ipv4Addr::new(198, 18, 0, 3);

/// brisk's address on path `k`: 198.18.k.3.
pub fn brisk_addr(k: usize) -> Ipv4Addr {
    Ipv4Addr::new(198, 18, k as u8, 3)
}

/// Makes an MPTCP configuration use every path of an `paths`-path lab from brisk's
/// stack ([`MultiPathOptions::brisk`]): with the fullmesh path manager and no
/// endpoints of its own, brisk's address on each path `k ≥ 1` becomes a `subflow`
/// endpoint (id `k`; Linux: `ip mptcp endpoint add 198.18.k.3 id k subflow`) and the
/// `subflows` limit is raised to `paths - 1`, so a client opens one subflow per
/// path to the server's initial address. Other path managers, or endpoints already
/// set, are left alone.
pub fn brisk_subflow_endpoints(mc: &mut brisk_tcp::mptcp::MptcpConfig, paths: usize) {
    use brisk_tcp::mptcp::pm::{Addr, LocalEndpoint, PmMode};
    if mc.pm.mode != PmMode::Fullmesh || !mc.pm.endpoints.is_empty() || paths < 2 {
        return;
    }
    let extra = (paths - 1).min(MAX_PATHS) as u8;
    mc.pm.limits.subflows = mc.pm.limits.subflows.max(extra);
    mc.pm.endpoints = (1..paths.min(MAX_PATHS))
        .map(|k| LocalEndpoint {
            addr: Addr {
                id: k as u8,
                ip: brisk_addr(k).into(),
                port: 0,
            },
            signal: false,
            subflow: true,
            backup: false,
        })
        .collect();
}

/// The path of a lab address: `k` for 198.18.k.x with `k < paths`, else `None`.
pub fn path_of(a: Ipv4Addr, paths: usize) -> Option<usize> {
    let o = a.octets();
    (o[0] == 198 && o[1] == 18 && usize::from(o[2]) < paths).then_some(usize::from(o[2]))
}

/// The link an IPv4 packet takes (module docs): the higher path of its source and
/// destination; `None` if either is not a lab address.
pub fn path_of_packet(pkt: &[u8], paths: usize) -> Option<usize> {
    let s = path_of(brisk_wire::peek::ipv4_src(pkt)?, paths)?;
    let d = path_of(brisk_wire::peek::ipv4_dst(pkt)?, paths)?;
    Some(s.max(d))
}

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
    /// A brisk stack on host A's side of every path, at [`brisk_addr`]`(k)` on path
    /// `k` (its `local` is replaced by [`BRISK_ON_PATH0`], the others are added):
    /// each path's side A is then host A's device *and* a port of brisk's stack, told
    /// apart by destination address ([`MuxSide`]), as in the dumbbell; the stack's
    /// output is split over the paths by [`path_of_packet`] (emu/split.rs).
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
    /// What splitting brisk's output over the paths dropped (several paths only).
    split: Option<Arc<SplitStats>>,
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
        let (mut stack, mut stack_thread, mut avoid_cpu) = (None, None, None);
        // brisk's side of each path (one port per path when there are several).
        let mut brisk_ports: Vec<Option<Box<dyn Side + Send>>> = Vec::new();
        let mut split_stats = None;
        if let Some(sc) = &opts.brisk {
            // Host B reaches brisk's address on path k over path k (the to-rule of
            // k >= 1 covers it too; the main-table route gives an unbound socket its
            // source).
            for k in 0..n {
                let (b32, src) = (format!("{}/32", brisk_addr(k)), addr_b(k).to_string());
                lab.netns(b)
                    .ip(&["route", "add", &b32, "dev", &tun_name(k), "src", &src])?;
            }
            let (s, side) = BriskStack::new(StackConfig {
                local: BRISK_ON_PATH0,
                local6: None,
                ..sc.clone()
            })?;
            for k in 1..n {
                s.with_endpoint(|ep| ep.add_address(brisk_addr(k).into()))
                    .map_err(|e| EmuError::Config(format!("brisk's address on path {k}: {e}")))?;
            }
            let side: Box<dyn Side + Send> = if threaded::stack_thread_enabled() {
                let topts = ThreadedOptions::default();
                avoid_cpu = topts.cpu;
                let (t, slot) = ThreadedSide::spawn(side, s.clock(), "brisk-stack", topts)?;
                stack_thread = Some(slot);
                Box::new(t)
            } else {
                Box::new(side)
            };
            if n == 1 {
                brisk_ports.push(Some(side));
            } else {
                let route: Route = Arc::new(move |p: &[u8]| path_of_packet(p, n));
                let (ports, stats) = split(side, n, route)?;
                split_stats = Some(stats);
                brisk_ports.extend(
                    ports
                        .into_iter()
                        .map(|p| Some(Box::new(p) as Box<dyn Side + Send>)),
                );
            }
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
            let handle = match brisk_ports.get_mut(k).and_then(Option::take) {
                // Path k carries packets to any address of A or brisk on a path up to
                // k (a crossed pair takes the higher path).
                Some(bs) => {
                    let mux = MuxSide::new(vec![
                        (Box::new(ta), (0..n).map(addr_a).collect()),
                        (bs, (0..n).map(brisk_addr).collect()),
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
            split: split_stats,
            clock,
            lab,
            paths: n,
        })
    }

    /// The brisk stack on every path, if [`MultiPathOptions::brisk`] asked for one.
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
                let w = t.warnings(threshold_ns);
                crate::emu::health::note_reported(w.len());
                r.health.warnings.extend(w);
            }
        }
        if let (Some(r), Some(st)) = (reports.first_mut(), &self.split) {
            let w = st.warnings();
            crate::emu::health::note_reported(w.len());
            r.health.warnings.extend(w);
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
/// `peer(k)` with `local(k)` as the source hint, and rules sending a packet to or
/// from an address of path `k` through path `k`, the higher path first (module
/// docs).
fn host(
    ns: &Netns,
    n: usize,
    local: fn(usize) -> Ipv4Addr,
    peer: fn(usize) -> Ipv4Addr,
    mtu: u32,
) -> Result<Vec<Tun>> {
    disable_ipv6(ns);
    // Crossed pairs may arrive on another device than the one their source address
    // would pick.
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
        let (to_pref, from_pref) = rule_prefs(k);
        if k > 0 {
            let net = format!("198.18.{k}.0/24");
            ns.ip(&[
                "rule",
                "add",
                "to",
                &net,
                "lookup",
                &table,
                "pref",
                &to_pref.to_string(),
            ])?;
        }
        ns.ip(&[
            "rule",
            "add",
            "from",
            &l32,
            "lookup",
            &table,
            "pref",
            &from_pref.to_string(),
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

/// Preferences of path `k`'s rules (to, from): lower is tried first, so path `k`'s
/// rules come before path `k - 1`'s and a packet takes its higher path; all below
/// the main table's 32766.
fn rule_prefs(k: usize) -> (usize, usize) {
    let to = 90 - 2 * k;
    (to, to + 1)
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
        for k in 0..MAX_PATHS {
            assert!(in_lab_range(brisk_addr(k)));
            assert_eq!(path_of(brisk_addr(k), MAX_PATHS), Some(k));
        }
        assert_eq!(path_of(Ipv4Addr::new(198, 18, 2, 1), 2), None);
        assert_eq!(path_of(Ipv4Addr::new(10, 0, 0, 1), 2), None);
    }

    /// A packet takes the higher path of its two addresses, the way the rules of
    /// `host` route it: both directions of a pair use one link.
    #[test]
    fn a_pair_takes_its_higher_path_both_ways() {
        let pkt = |s: Ipv4Addr, d: Ipv4Addr| {
            let mut p = vec![0u8; 20];
            p[0] = 0x45;
            p[12..16].copy_from_slice(&s.octets());
            p[16..20].copy_from_slice(&d.octets());
            p
        };
        for (s, d, want) in [
            (brisk_addr(0), addr_b(0), 0),
            (brisk_addr(1), addr_b(0), 1),
            (brisk_addr(1), addr_b(1), 1),
            (brisk_addr(0), addr_b(1), 1),
            (brisk_addr(2), addr_b(1), 2),
        ] {
            assert_eq!(path_of_packet(&pkt(s, d), 3), Some(want), "{s} -> {d}");
            assert_eq!(path_of_packet(&pkt(d, s), 3), Some(want), "{d} -> {s}");
        }
        assert_eq!(path_of_packet(&pkt(brisk_addr(3), addr_b(0)), 3), None);
        assert_eq!(path_of_packet(&[0x45, 0, 0], 3), None);
        // The rules: path k's before path k-1's, "to" before "from", all before main.
        let mut prev = usize::MAX;
        for k in 0..MAX_PATHS {
            let (to, from) = rule_prefs(k);
            assert!(to < from && from < prev && to > 0, "path {k}");
            prev = to;
        }
    }
}

//! Real runs over the two-path lab (issue 31 §2, "the lab with two paths", as a
//! scenario runner): the flows of a [`RealRun`] between namespaces `A` (senders) and
//! `B` (receivers) joined by N ≤ [`MAX_PATHS`] emulated links
//! ([`crate::tools::multipath`]), each link with its own rate, delay, loss and queue.
//!
//! * **Paths from a multi-homed scenario** ([`paths_from_net`]): the network
//!   scenario's multi-homed host (as `scenarios/mp-two-path-client.toml`) is host A,
//!   the other host is B, and address k's path (its k-th `[[link]]`, then the
//!   least-delay route through the routers) becomes emulated path k: the sum of the
//!   delays each way, and the path's slowest link (rate, queue, loss) as its
//!   bottleneck. `model = "wlan" | "3g"` links are drawn exactly as the simulator
//!   draws them for the seed (same stream per link), so both worlds see the same
//!   path parameters; a test checks the draw against brisk-sim's.
//! * **Linux flows** send from A's kernel: MPTCP flows (`[flow.tcp.mptcp]`) open an
//!   `IPPROTO_MPTCP` socket to B's address on path 0; B announces its address on every
//!   further path (`ip mptcp endpoint add 198.18.k.2 dev brisk-tunk signal`) and both
//!   namespaces' limits are raised to at least N − 1 subflows and accepted addresses,
//!   so A's in-kernel path manager opens one subflow per path, each from its own
//!   address (the route's source hint) to B's on the same path. That is one subflow
//!   per address pair on matching paths; Linux's `fullmesh` flag would add the crossed
//!   pairs too (out on one path, back on the other), which no Table III network has.
//! * **brisk flows** send from brisk's stack, which has an address on every path
//!   ([`MultiPathOptions::brisk`]: 198.18.k.3 on path k), from [`BRISK_ON_PATH0`]. An
//!   MPTCP flow's fullmesh path manager gets brisk's other addresses as `subflow`
//!   endpoints ([`brisk_subflow_endpoints`]), so it opens one subflow per path, each
//!   from brisk's address on that path to B's initial address (the pair takes the
//!   higher path both ways).
//! * **Receivers** are B's kernel, one port per flow (`RECEIVER_PORT + i`), listening
//!   on every address so that joins to B's other addresses find the listener.
//!
//! Output per flow as the single-bottleneck runner's (goodput, stream check, srtt,
//! record latency for `records` apps, Linux subflows), plus per path
//! ([`PathUse`]): the emulators' byte and drop counters, whose shares say which path
//! carried the data. The per-path counters are the run's, not a flow's: run one flow
//! to have a flow's. The emulator's health is every path's: a warning on any path
//! makes the run distorted. The ACK tap (record latency after first transmission,
//! ACK latency) is off: it tells flows apart by receiver address, and here all flows
//! share B's.

use std::net::{Ipv4Addr, SocketAddr};
use std::time::Duration as StdDuration;

use brisk_report::BottleneckResult;
use brisk_scenario::network::{NetScenario, NodeKind};
use brisk_time::Duration;
use serde::Serialize;

use super::{
    check, mptcp_counters_of, mptcp_settings, process_cpu_s, run_flows_watched, std_dur, Ctx,
    FlowStack, Hosts, MptcpCounters, RealResult, RealRun, RECEIVER_PORT,
};
use crate::emu::emulator::{EmuReport, EmulatorOptions};
use crate::emu::path::{Dur, PathSpec};
use crate::error::{EmuError, Result};
use crate::os::netns::Netns;
use crate::stack::mptcp_kernel::{self, delta, mptcp_only};
use crate::stack::{BriskStack, StackConfig};
use crate::tools::multipath::{
    addr_b, brisk_addr, brisk_subflow_endpoints, tun_name, MultiPathConfig, MultiPathLab,
    MultiPathOptions, PathConfig, BRISK_ON_PATH0, MAX_PATHS,
};

/// A real run over several paths: the flows (and duration, seed, sampling) of `run`,
/// whose `path` must be left at its default (the paths are `paths`) and whose flows'
/// `rtt` is not used (each path has its own).
#[derive(Clone, Debug)]
pub struct TwoPathRun {
    pub run: RealRun,
    pub paths: MultiPathConfig,
}

/// What one path carried over a run (the path's emulator counters, including the
/// drain after the scenario's end) and how it was set up.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct PathUse {
    pub path: usize,
    /// A → B rate (`None`: unlimited).
    pub rate_bps: Option<u64>,
    pub rtt_ms: f64,
    /// A → B Bernoulli loss probability (0 without).
    pub loss: f64,
    /// IP bytes and packets delivered A → B (the senders' data) and B → A.
    pub forward_bytes: u64,
    pub forward_packets: u64,
    pub reverse_bytes: u64,
    /// A → B drops: queue full and random loss.
    pub dropped_queue: u64,
    pub dropped_loss: u64,
    /// This path's share of all paths' A → B bytes (0..1).
    pub share: f64,
    /// Whether this path's emulator kept the model's timing.
    pub clean: bool,
}

/// Extras of a two-path run beyond [`TwoPathRun`] ([`run_two_path_with`]).
#[derive(Clone, Debug, Default)]
pub struct TwoPathOptions {
    /// The path each flow uses, by flow (empty: every plain flow on path 0, as
    /// [`run_two_path`]). Flow `i` on path `k` connects to host B's address on path
    /// `k` (`198.18.k.2`), from brisk's address there (`198.18.k.3`) or, for a Linux
    /// flow, from the address A's route gives it (`198.18.k.1`), so both directions
    /// take link `k`. An MPTCP flow's first subflow starts on its path.
    pub flow_paths: Vec<usize>,
    /// Turn brisk's shared-bottleneck detector on with these settings (issue 33 §4);
    /// without, it is on only when a brisk flow's FSE follows it (`realrun/sbd.rs`).
    pub sbd: Option<brisk_tcp::cc::sbd::SbdHostConfig>,
}

/// The lab with each flow on its own path ([`TwoPathOptions::flow_paths`]).
struct OnPaths<'a> {
    lab: &'a MultiPathLab,
    paths: &'a [usize],
    brisk: Vec<bool>,
}

impl OnPaths<'_> {
    fn path(&self, i: usize) -> usize {
        self.paths.get(i).copied().unwrap_or(0)
    }
}

impl Hosts for OnPaths<'_> {
    fn stack(&self) -> Option<&BriskStack> {
        self.lab.stack()
    }
    fn senders(&self) -> Option<&Netns> {
        Some(self.lab.ns_a())
    }
    fn receivers(&self) -> &Netns {
        self.lab.ns_b()
    }
    fn receiver(&self, i: usize) -> SocketAddr {
        SocketAddr::from((addr_b(self.path(i)), port(i)))
    }
    fn listen_on(&self, i: usize) -> SocketAddr {
        SocketAddr::from((Ipv4Addr::UNSPECIFIED, port(i)))
    }
    fn source(&self, i: usize) -> Option<std::net::IpAddr> {
        let k = self.path(i);
        (k > 0 && self.brisk.get(i) == Some(&true)).then(|| brisk_addr(k).into())
    }
}

fn port(i: usize) -> u16 {
    RECEIVER_PORT.saturating_add(i as u16)
}

/// Most flows of a two-path run (one receiver port each).
pub const MAX_TWO_PATH_FLOWS: usize = 64;

fn check_two_path(tp: &TwoPathRun) -> Result<()> {
    check(&tp.run)?;
    tp.paths.validate()?;
    if tp.run.flows.len() > MAX_TWO_PATH_FLOWS {
        return Err(EmuError::Config(format!(
            "flow: a two-path run takes 1..={MAX_TWO_PATH_FLOWS} flows, not {}",
            tp.run.flows.len()
        )));
    }
    if tp.run.path != crate::emu::path::EmuConfig::default() {
        return Err(EmuError::Config(
            "a two-path run's paths are its `paths`; leave the run's `path` at its default".into(),
        ));
    }
    for (i, f) in tp.run.flows.iter().enumerate() {
        let l = &f.linux;
        // These are per-route settings, and the lab's routes are per path.
        for (set, key) in [
            (l.initial_cwnd.is_some(), "initial_cwnd"),
            (l.min_rto.is_some(), "min_rto"),
            (l.mss.is_some(), "mss"),
        ] {
            if set && f.stack == FlowStack::Linux {
                return Err(EmuError::Config(format!(
                    "flow[{i}].tcp.{key}: not in two-path runs (yet): Linux sets it per route, and the lab's routes are per path"
                )));
            }
        }
        if l.mptcp.as_ref().is_some_and(|m| !m.endpoints.is_empty()) {
            return Err(EmuError::Config(format!(
                "flow[{i}].tcp.mptcp.endpoint: not in two-path runs: host B announces its address on every path, and host A's addresses are the paths'"
            )));
        }
    }
    Ok(())
}

/// Runs `tp` over real packets; needs root, /dev/net/tun and, for MPTCP flows, an
/// MPTCP kernel. Everything it starts (namespaces, devices, emulator and stack
/// threads) is gone when it returns, also on error.
pub fn run_two_path(tp: &TwoPathRun) -> Result<RealResult> {
    run_two_path_with(tp, &TwoPathOptions::default())
}

/// [`run_two_path`] with each flow on its own path and, if asked, brisk's
/// shared-bottleneck detector on ([`TwoPathOptions`]).
pub fn run_two_path_with(tp: &TwoPathRun, o: &TwoPathOptions) -> Result<RealResult> {
    check_two_path(tp)?;
    let n = tp.paths.paths.len();
    if !o.flow_paths.is_empty() && o.flow_paths.len() != tp.run.flows.len() {
        return Err(EmuError::Config(format!(
            "flow_paths: one path per flow ({} flows), not {}",
            tp.run.flows.len(),
            o.flow_paths.len()
        )));
    }
    if let Some((i, k)) = o.flow_paths.iter().enumerate().find(|(_, &k)| k >= n) {
        return Err(EmuError::Config(format!(
            "flow_paths[{i}] = {k}: the lab has paths 0..={}",
            n - 1
        )));
    }
    // brisk's MPTCP flows open a subflow from its address on every path.
    let mut run = tp.run.clone();
    for f in run.flows.iter_mut().filter(|f| f.stack == FlowStack::Brisk) {
        if let Some(mc) = f.tcp.mptcp.as_mut() {
            brisk_subflow_endpoints(mc, n);
        }
    }
    let run = &run;
    let sbd_cfg = super::sbd::needed(run, o.sbd.as_ref());
    let mptcp = mptcp_settings(run)?;
    let brisk = run.flows.iter().any(|f| f.stack == FlowStack::Brisk);
    let mut stack = StackConfig::new(BRISK_ON_PATH0);
    let mut isn_secret = [0x5a; 16];
    isn_secret[..8].copy_from_slice(&run.seed.to_le_bytes());
    stack.endpoint = brisk_tcp::EndpointConfig::seeded(isn_secret, run.seed);
    let opts = MultiPathOptions {
        emulator: EmulatorOptions::default(),
        pcap_dir: run.pcap_dir.clone(),
        limit: Some(run.duration.saturating_add(Duration::from_secs(25))),
        brisk: brisk.then_some(stack),
        ..MultiPathOptions::default()
    };
    // Dropped on every early return: emulators stopped, namespaces deleted.
    let mut lab = MultiPathLab::start(&tp.paths, &opts)?;
    for f in run.flows.iter().filter(|f| f.stack == FlowStack::Linux) {
        f.linux.apply_namespace(lab.ns_a())?;
    }
    let mut counters0 = None;
    if let Some(m) = &mptcp {
        let least = (n as u8).saturating_sub(1);
        let (sub, acc) = (m.subflows.max(least), m.add_addr_accepted.max(least));
        let tun0 = tun_name(0);
        for ns in [lab.ns_a(), lab.ns_b()] {
            m.without_endpoints().apply(ns, &tun0)?;
            mptcp_kernel::set_limits(ns, u32::from(sub), u32::from(acc))?;
        }
        for k in 1..n {
            mptcp_kernel::add_endpoint(lab.ns_b(), addr_b(k), &tun_name(k), &["signal"])?;
        }
        counters0 = Some(mptcp_counters_of(Some(lab.ns_a()), lab.ns_b())?);
    }
    if let (Some(cfg), Some(stack)) = (sbd_cfg, lab.stack()) {
        super::sbd::enable(stack, cfg)?;
    }
    let cpu0 = process_cpu_s();
    let cx = Ctx {
        clock: lab.clock(),
        end: std_dur(run.duration),
        grace: StdDuration::from_secs(15),
        interval: std_dur(run.sample_interval),
    };
    let on_paths = OnPaths {
        lab: &lab,
        paths: &o.flow_paths,
        brisk: run
            .flows
            .iter()
            .map(|f| f.stack == FlowStack::Brisk)
            .collect(),
    };
    let (flows, sbd_report) = run_flows_watched(run, &on_paths, cx);
    let busy = lab.stack().map_or(0.0, |s| s.busy_seconds());
    let mptcp = match counters0 {
        Some((s0, r0)) => {
            let (s1, r1) = mptcp_counters_of(Some(lab.ns_a()), lab.ns_b())?;
            Some(MptcpCounters {
                senders: mptcp_only(delta(&s0, &s1)),
                receivers: mptcp_only(delta(&r0, &r1)),
            })
        }
        None => None,
    };
    let reports = lab.stop();
    lab.teardown()?;
    let reports = reports?;
    let flows = flows?;
    let cpu_s = process_cpu_s() - cpu0;
    let paths = path_uses(&tp.paths, &reports);
    Ok(RealResult {
        scenario: run.name.clone(),
        seed: run.seed,
        duration: run.duration,
        flows,
        bottleneck: path0_bottleneck(&paths, run.duration),
        emulator: merged_report(reports),
        cpu_s,
        brisk_busy_s: busy,
        mptcp,
        paths,
        sbd: sbd_report,
    })
}

/// The "bottleneck" of the run's summary: path 0's link (no meter watches it, so
/// only its drops and its utilisation from the delivered bytes, drain included; each
/// path's numbers are in `paths`).
fn path0_bottleneck(paths: &[PathUse], d: Duration) -> BottleneckResult {
    let p = paths.first().cloned().unwrap_or_default();
    let cap = p.rate_bps.map_or(0.0, |r| r as f64 * d.as_secs_f64());
    BottleneckResult {
        utilization: if cap > 0.0 {
            (p.forward_bytes as f64 * 8.0 / cap).min(1.0)
        } else {
            0.0
        },
        drops: p.dropped_queue + p.dropped_loss,
        ce_marked: 0,
        first_drop: None,
        queue_delay: None,
        max_queue_packets: 0,
        queue_series: Vec::new(),
        drop_records: Vec::new(),
    }
}

/// Path 0's report, carrying every path's warnings (prefixed with the path), so
/// that a run any path distorted is not clean.
fn merged_report(reports: Vec<EmuReport>) -> EmuReport {
    let mut it = reports.into_iter().enumerate();
    let Some((_, mut first)) = it.next() else {
        return EmuReport::default();
    };
    let mut warnings: Vec<String> = first
        .health
        .warnings
        .iter()
        .map(|w| format!("path 0: {w}"))
        .collect();
    for (k, r) in it {
        warnings.extend(r.health.warnings.iter().map(|w| format!("path {k}: {w}")));
    }
    first.health.warnings = warnings;
    first
}

fn path_uses(cfg: &MultiPathConfig, reports: &[EmuReport]) -> Vec<PathUse> {
    let total: u64 = reports.iter().map(|r| r.forward.delivered_bytes).sum();
    cfg.paths
        .iter()
        .zip(reports)
        .enumerate()
        .map(|(k, (p, r))| PathUse {
            path: k,
            rate_bps: p.bottleneck.rate.map(|r| r.0),
            rtt_ms: p.rtt.map_or(0.0, |d| d.0.as_secs_f64() * 1e3),
            loss: match p.bottleneck.loss {
                Some(crate::emu::path::LossSpec::Bernoulli { p }) => p,
                _ => 0.0,
            },
            forward_bytes: r.forward.delivered_bytes,
            forward_packets: r.forward.delivered_packets,
            reverse_bytes: r.reverse.delivered_bytes,
            dropped_queue: r.forward.dropped_queue_full,
            dropped_loss: r.forward.dropped_loss,
            share: r.forward.delivered_bytes as f64 / total.max(1) as f64,
            clean: r.health.is_clean(),
        })
        .collect()
}

/// Link `i` of `sc` in the direction `a → b` (`forward`) or back, with a path model
/// drawn for `seed` as the simulator draws it (`brisk_sim::topo_build`).
fn link_dir(sc: &NetScenario, i: usize, seed: u64, forward: bool) -> PathSpec {
    let l = &sc.links[i];
    match l.model {
        Some(m) => m.draw_for_run(seed, i),
        None if forward => l.forward(),
        None => l.backward(),
    }
}

/// The flows of the dumbbell scenario `flows` over the paths of the multi-homed
/// network scenario `net` (`brisk run --real FLOWS.toml --paths NET.toml`). The
/// flows file's `[bottleneck]`, `[reverse]` and flow `rtt`s are its single-path view
/// (what the simulator runs) and are replaced by `net`'s paths; its flows, apps,
/// stacks, knobs and duration are taken. `seed` (default: `net`'s) draws the paths
/// and seeds the flows, as the simulator's `--seed` does.
pub fn two_path_run(
    flows: &brisk_scenario::Scenario,
    flows_file: &str,
    net: &NetScenario,
    net_file: &str,
    seed: Option<u64>,
) -> std::result::Result<TwoPathRun, brisk_scenario::ScenarioError> {
    let seed = seed.unwrap_or(net.seed);
    let mut run = super::real_run(flows, flows_file, Some(seed))?;
    let paths =
        paths_from_net(net, seed).map_err(|(field, message)| brisk_scenario::ScenarioError {
            file: net_file.to_string(),
            field,
            message,
        })?;
    run.path = crate::emu::path::EmuConfig::default();
    let rtt0 = paths.paths[0].rtt.map_or(Duration::ZERO, |d| d.0);
    for f in &mut run.flows {
        f.rtt = rtt0;
    }
    Ok(TwoPathRun { run, paths })
}

/// A scenario problem: (field, message), as brisk-scenario's errors.
pub type Field = (String, String);

/// The paths of a multi-homed network scenario (module docs), drawn for `seed`:
/// path k is the multi-homed host's address k to the other host.
pub fn paths_from_net(sc: &NetScenario, seed: u64) -> std::result::Result<MultiPathConfig, Field> {
    let err = |f: &str, m: String| Err((f.to_string(), m));
    if sc.topology.is_some() {
        return err(
            "topology",
            "a two-path real run needs explicit [[node]] and [[link]] entries (a multi-homed host and one other host), not a generated topology".into(),
        );
    }
    let hosts: Vec<usize> = (0..sc.nodes.len())
        .filter(|&i| sc.nodes[i].kind == NodeKind::Host)
        .collect();
    let multi: Vec<usize> = hosts
        .iter()
        .copied()
        .filter(|&i| sc.nodes[i].addresses.unwrap_or(1) >= 2)
        .collect();
    if hosts.len() != 2 || multi.len() != 1 {
        return err(
            "node",
            format!(
                "a two-path real run takes two hosts, one of them multi-homed (addresses = 2 to {MAX_PATHS}); this scenario has {} hosts, {} multi-homed",
                hosts.len(),
                multi.len()
            ),
        );
    }
    let client = multi[0];
    let server = hosts.iter().copied().find(|&h| h != client).unwrap_or(0);
    let n = sc.nodes[client].addresses.unwrap_or(1) as usize;
    if n > MAX_PATHS {
        return err(
            &format!("node[{client}].addresses"),
            format!("{n}: the lab has at most {MAX_PATHS} paths"),
        );
    }
    let name = |i: usize| sc.nodes[i].name.as_str();
    let index = |s: &str| sc.nodes.iter().position(|x| x.name == s);
    // Address k's link is the host's k-th link in file order.
    let access: Vec<usize> = (0..sc.links.len())
        .filter(|&i| sc.links[i].a == name(client) || sc.links[i].b == name(client))
        .collect();
    if access.len() != n {
        return err(
            "link",
            format!(
                "host \"{}\" has {n} addresses but {} links",
                name(client),
                access.len()
            ),
        );
    }
    let mut paths = Vec::with_capacity(n);
    for (k, &first) in access.iter().enumerate() {
        let l = &sc.links[first];
        let from_client = l.a == name(client);
        let far = index(if from_client { &l.b } else { &l.a }).ok_or_else(|| {
            (
                format!("link[{first}]"),
                "names a node that does not exist".to_string(),
            )
        })?;
        let mut hops = vec![(first, from_client)];
        hops.extend(route(sc, seed, far, server, client).ok_or_else(|| {
            (
                format!("link[{first}]"),
                format!(
                    "no route from \"{}\" to \"{}\" that avoids \"{}\"",
                    name(far),
                    name(server),
                    name(client)
                ),
            )
        })?);
        paths.push(collapse(sc, seed, k, &hops)?);
    }
    let cfg = MultiPathConfig { paths };
    cfg.validate()
        .map_err(|e| ("link".to_string(), e.to_string()))?;
    Ok(cfg)
}

/// The least-delay route (links with their direction: `true` = a → b) from node
/// `from` to node `to` through routers, avoiding node `avoid` (Dijkstra on the
/// scenario's links; the graph has a handful of nodes).
fn route(
    sc: &NetScenario,
    seed: u64,
    from: usize,
    to: usize,
    avoid: usize,
) -> Option<Vec<(usize, bool)>> {
    let nodes = sc.nodes.len();
    let index = |s: &str| sc.nodes.iter().position(|x| x.name == s);
    let mut dist = vec![u128::MAX; nodes];
    let mut prev: Vec<Option<(usize, usize, bool)>> = vec![None; nodes];
    let mut done = vec![false; nodes];
    dist[from] = 0;
    for _ in 0..nodes {
        let u = (0..nodes)
            .filter(|&i| !done[i] && dist[i] != u128::MAX)
            .min_by_key(|&i| dist[i])?;
        if u == to {
            break;
        }
        done[u] = true;
        if u != from && sc.nodes[u].kind == NodeKind::Host {
            continue; // hosts do not forward
        }
        for (i, l) in sc.links.iter().enumerate() {
            let (a, b) = (index(&l.a)?, index(&l.b)?);
            for (x, y, fwd) in [(a, b, true), (b, a, false)] {
                if x != u || y == avoid || done[y] {
                    continue;
                }
                let d = link_dir(sc, i, seed, fwd)
                    .delay
                    .map_or(0, |d| d.0.as_nanos());
                if dist[u] + d < dist[y] {
                    dist[y] = dist[u] + d;
                    prev[y] = Some((u, i, fwd));
                }
            }
        }
    }
    let mut out = Vec::new();
    let mut at = to;
    while at != from {
        let (p, l, fwd) = prev[at]?;
        out.push((l, fwd));
        at = p;
    }
    out.reverse();
    Some(out)
}

/// One emulated path for the links `hops` (client to server): the delays summed each
/// way, the slowest link's rate, queue and loss each way. Any other impairment, or
/// loss or a queue limit on a link that is not the slowest, is refused: one emulated
/// link cannot hold it.
fn collapse(
    sc: &NetScenario,
    seed: u64,
    k: usize,
    hops: &[(usize, bool)],
) -> std::result::Result<PathConfig, Field> {
    let mut rtt = Duration::ZERO;
    let mut dirs = [Vec::new(), Vec::new()];
    for &(i, fwd) in hops {
        for (d, f) in [(0, fwd), (1, !fwd)] {
            let s = link_dir(sc, i, seed, f);
            rtt = rtt.saturating_add(s.delay.map_or(Duration::ZERO, |d| d.0));
            dirs[d].push((i, s));
        }
    }
    let mut pick = |d: usize| -> std::result::Result<PathSpec, Field> {
        let links = std::mem::take(&mut dirs[d]);
        // The slowest link (an unlimited one is never the slowest).
        let slow = links
            .iter()
            .enumerate()
            .min_by_key(|(_, (_, s))| s.rate.map_or(u64::MAX, |r| r.0))
            .map(|(j, _)| j)
            .unwrap_or(0);
        let mut out = PathSpec::default();
        for (j, (i, s)) in links.into_iter().enumerate() {
            let extra = s.jitter.is_some()
                || s.duplicate.is_some()
                || s.corrupt.is_some()
                || !s.outages.is_empty()
                || s.trace.is_some();
            if extra || (j != slow && (s.loss.is_some() || s.queue.is_some() && s.rate.is_some())) {
                return Err((
                    format!("link[{i}]"),
                    format!("path {k}: a two-path real run emulates each path as one link (the delays summed, the slowest link's rate, queue and loss); this link's loss, queue or impairment cannot be kept"),
                ));
            }
            if j == slow {
                out = PathSpec { delay: None, ..s };
            }
        }
        Ok(out)
    };
    let bottleneck = pick(0)?;
    let reverse = pick(1)?;
    Ok(PathConfig {
        rtt: Some(Dur(rtt)),
        bottleneck,
        reverse: Some(reverse),
        seed: Some(brisk_scenario::derive_seed(seed, "real-path", k as u64)),
        strip_mptcp: None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NET: &str = include_str!("../../../../scenarios/mp-two-path-client.toml");

    fn net() -> NetScenario {
        NetScenario::from_toml_str_named(NET, "mp-two-path-client.toml").unwrap()
    }

    /// The shipped two-path client: path 0 is the WLAN draw, path 1 the 3G draw,
    /// each with the rest of the route's delay (the server link's 1 ms each way).
    #[test]
    fn the_two_path_client_becomes_a_wlan_and_a_3g_path() {
        for seed in 1..=5 {
            let cfg = paths_from_net(&net(), seed).unwrap();
            assert_eq!(cfg.paths.len(), 2);
            let (w, g) = (&cfg.paths[0], &cfg.paths[1]);
            let rate = |p: &PathConfig| p.bottleneck.rate.unwrap().0;
            let rtt_ms = |p: &PathConfig| p.rtt.unwrap().0.as_secs_f64() * 1e3;
            assert!((20_000_000..=30_000_000).contains(&rate(w)), "{w:?}");
            assert!((3_000_000..=5_000_000).contains(&rate(g)), "{g:?}");
            // 2 x (20..25 ms + 1 ms) and 2 x (65..75 ms + 1 ms).
            assert!((42.0..=52.0).contains(&rtt_ms(w)), "{}", rtt_ms(w));
            assert!((132.0..=152.0).contains(&rtt_ms(g)), "{}", rtt_ms(g));
            assert!(matches!(
                w.bottleneck.loss,
                Some(crate::emu::path::LossSpec::Bernoulli { p }) if (0.01..=0.02).contains(&p)
            ));
            assert!(g.bottleneck.loss.is_none());
            // Both directions of a model link are alike (the seed's CORE links).
            assert_eq!(w.reverse.as_ref().unwrap().rate, w.bottleneck.rate);
            assert_eq!(w.reverse.as_ref().unwrap().loss, w.bottleneck.loss);
        }
        assert_ne!(paths_from_net(&net(), 1), paths_from_net(&net(), 2));
    }

    /// The model draws are the simulator's: for several seeds, every `model` link of
    /// the scenario gets the spec brisk-sim's graph has for it, both ways.
    #[test]
    fn model_draws_match_the_simulators() {
        let sc = net();
        for seed in [1, 2, 7, 1234] {
            let (g, _) = brisk_sim::topo_build::graph_seeded(&sc, seed).unwrap();
            let mut seen = 0;
            for (i, l) in sc.links.iter().enumerate() {
                if l.model.is_none() {
                    continue;
                }
                let (a, b) = (g.node_index(&l.a).unwrap(), g.node_index(&l.b).unwrap());
                for (x, y, fwd) in [(a, b, true), (b, a, false)] {
                    let gl = g
                        .links()
                        .iter()
                        .find(|gl| gl.from == x && gl.to == y)
                        .unwrap();
                    assert_eq!(gl.spec, link_dir(&sc, i, seed, fwd), "seed {seed} link {i}");
                    seen += 1;
                }
            }
            assert_eq!(seen, 4);
        }
    }

    #[test]
    fn scenarios_the_lab_cannot_hold_are_refused_by_field() {
        let single = NET.replace("addresses = 2\n", "");
        for (text, field, words) in [
            (single.as_str(), "node", "one of them multi-homed"),
            (
                &NET.replace(
                    "rate = \"1Gbps\"\ndelay = \"1ms\"",
                    "rate = \"1Gbps\"\ndelay = \"1ms\"\nloss = { kind = \"bernoulli\", p = 0.01 }",
                ) as &str,
                "link[4]",
                "one link",
            ),
        ] {
            let sc = NetScenario::from_toml_str_named(text, "t.toml");
            let Ok(sc) = sc else { continue };
            let (f, m) = paths_from_net(&sc, 1).unwrap_err();
            assert_eq!(f, field, "{m}");
            assert!(m.contains(words), "{m}");
        }
    }
}

//! Building the network a scenario describes: a dumbbell.
//!
//! ```text
//!  S_i ─ access_i (rtt/2) ─┐                         ┌─ R_i
//!                          ├─ bottleneck ─[impair]───┤
//!  S_j ─ access_j (rtt/2) ─┘  (rate, queue, loss,    └─ R_j
//!                              delay, outages)
//!  R_i ─ [reverse bottleneck] ─ back_i (rtt/2) ─ S_i
//! ```
//!
//! Each flow's base RTT is split as rtt/2 one-way on its own access links, one per
//! direction (unlimited rate, no loss); the bottleneck adds `bottleneck.delay` (default
//! 0) plus serialisation and queuing. The reverse path has an optional shared
//! bottleneck (default: none, so ACKs are never lost or queued). Sender `S_i` is
//! 198.18.x.y and receiver `R_i` 198.19.x.y with `x.y` = `i + 1` (RFC 2544's
//! benchmarking range 198.18.0.0/15); a flow with `ip = "v6"` uses 2001:db8:18::n and
//! 2001:db8:19::n with `n` = `i + 1` instead (RFC 3849's documentation prefix, the
//! same 18/19 split). Routing is per node by destination address, so a
//! generic multi-hop `[[link]]` description can reuse the same engine later.
//!
//! Every random stream (endpoint ISNs and ports, loss, impairments, app jitter) is
//! seeded from `(scenario seed, stable name)` through SipHash-1-3, so adding a flow
//! never changes another component's randomness.

use brisk_net::{LinkBuildError, LinkElements, LinkSeeds, NetError};
use brisk_tcp::{Endpoint, EndpointConfig};
use brisk_time::{Duration, Instant};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::Arc;

use crate::app::{ClientApp, Pattern, ServerApp};
use crate::engine::{Engine, NodeId};
use crate::host::{ClientSide, Host, Role, ServerSide, BASE_PORT};
use crate::node::{LinkMeter, LinkNode, SimNode};
use crate::scenario::{AppSpec, IpVersion, LinkSpec, Scenario};
use crate::web::{Page, SizeQueue, DEFAULT_WEB_CONNECTIONS};

/// A derived 64-bit seed for a component (brisk-scenario's, shared with real runs).
pub use brisk_scenario::derive_seed;

pub fn sender_ip(i: u32) -> IpAddr {
    let [_, _, x, y] = (i + 1).to_be_bytes();
    IpAddr::V4(Ipv4Addr::new(198, 18, x, y))
}

pub fn receiver_ip(i: u32) -> IpAddr {
    let [_, _, x, y] = (i + 1).to_be_bytes();
    IpAddr::V4(Ipv4Addr::new(198, 19, x, y))
}

/// Flow `i`'s sender over IPv6: 2001:db8:18::(i + 1).
pub fn sender_ip6(i: u32) -> IpAddr {
    IpAddr::V6(v6_host(0x18, i))
}

/// Flow `i`'s receiver over IPv6: 2001:db8:19::(i + 1).
pub fn receiver_ip6(i: u32) -> IpAddr {
    IpAddr::V6(v6_host(0x19, i))
}

fn v6_host(net: u16, i: u32) -> Ipv6Addr {
    let n = u64::from(i) + 1;
    Ipv6Addr::new(0x2001, 0xdb8, net, 0, 0, 0, (n >> 16) as u16, n as u16)
}

/// Flow `i`'s (sender, receiver) addresses for IP version `ip`.
pub fn flow_ips(i: u32, ip: IpVersion) -> (IpAddr, IpAddr) {
    match ip {
        IpVersion::V4 => (sender_ip(i), receiver_ip(i)),
        IpVersion::V6 => (sender_ip6(i), receiver_ip6(i)),
    }
}

/// One flow's place in the built network.
#[derive(Clone, Debug)]
pub struct FlowInfo {
    pub id: u32,
    /// Index of the `[[flow]]` entry it came from.
    pub spec: usize,
    pub cc: String,
    pub start: Instant,
    pub app: AppSpec,
    pub sender: NodeId,
    pub receiver: NodeId,
}

/// A built network, ready to run.
pub struct Network {
    pub engine: Engine<SimNode>,
    pub flows: Vec<FlowInfo>,
    pub bottleneck: NodeId,
    pub reverse: Option<NodeId>,
    /// The node packets leave the bottleneck from (its impairment stage, if any).
    pub bottleneck_exit: NodeId,
}

/// Errors while building the network from a (validated) scenario.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    #[error("{field}: {source}")]
    Net {
        field: String,
        #[source]
        source: NetError,
    },
    /// A network scenario's workload cannot be built (field, message).
    #[error("{field}: {message}")]
    Workload { field: String, message: String },
    #[error("flow {flow}: cannot listen: {source}")]
    Listen {
        flow: u32,
        #[source]
        source: brisk_tcp::ConnError,
    },
    /// The host an FSE group's earlier flow made is not a host (an internal error).
    #[error("flow {flow}: the sender host of its FSE group is missing")]
    SharedSender { flow: u32 },
}

impl From<LinkBuildError> for BuildError {
    fn from(e: LinkBuildError) -> Self {
        BuildError::Net {
            field: e.field,
            source: e.source,
        }
    }
}

/// A link (plus an impairment stage if the spec asks for one). Returns the entry node
/// and the exit node (they are the same without impairments).
pub(crate) fn add_link(
    e: &mut Engine<SimNode>,
    spec: &LinkSpec,
    name: &str,
    seed: u64,
    meter: Option<LinkMeter>,
) -> Result<(NodeId, NodeId), BuildError> {
    let seeds = LinkSeeds {
        loss: derive_seed(seed, name, 1),
        impair: derive_seed(seed, name, 2),
    };
    Ok(add_elements(
        e,
        spec.build(name, Duration::ZERO, seeds)?,
        meter,
    ))
}

/// [`add_link`] of elements already built.
fn add_elements(
    e: &mut Engine<SimNode>,
    LinkElements { link, impairment }: LinkElements,
    meter: Option<LinkMeter>,
) -> (NodeId, NodeId) {
    let node = match meter {
        Some(m) => LinkNode::metered(link, m),
        None => LinkNode::new(link),
    };
    let entry = e.add_node(SimNode::Link(Box::new(node)));
    let Some(imp) = impairment else {
        return (entry, entry);
    };
    let exit = e.add_node(SimNode::Impair(Box::new(imp)));
    e.routes_mut(entry).set_default(exit);
    (entry, exit)
}

/// A pure delay line (unlimited rate, no loss), built: every access line of one
/// delay is the same (its seeds are fixed, as it draws nothing), so a scenario entry
/// builds its two once and its flows add clones (`add_elements`). Building each one
/// from its description (two SipHash seed derivations, the conversion, the checks)
/// was ~3 k instructions per link, 4 × 10^5 links at 10^5 flows (issue 36 §2).
fn delay_line(delay: Duration) -> Result<LinkElements, BuildError> {
    let spec = LinkSpec {
        delay: Some(crate::units::Dur(delay)),
        ..LinkSpec::default()
    };
    let seeds = LinkSeeds {
        loss: derive_seed(0, "access", 1),
        impair: derive_seed(0, "access", 2),
    };
    Ok(spec.build("access", Duration::ZERO, seeds)?)
}

/// Builds the dumbbell for `sc` with `seed`; the streams keep SHA-256 digests.
pub fn build(sc: &Scenario, seed: u64) -> Result<Network, BuildError> {
    build_with(sc, seed, true)
}

/// Builds the dumbbell; `hash_streams = false` leaves only the per-byte pattern check.
pub fn build_with(sc: &Scenario, seed: u64, hash_streams: bool) -> Result<Network, BuildError> {
    build_mptcp(sc, seed, hash_streams, None)
}

/// [`build_with`], with every flow's connections (both ends) made MPTCP with `mptcp`
/// when it is given: `brisk bench sim`'s MPTCP line (`RunOptions::mptcp`).
pub fn build_mptcp(
    sc: &Scenario,
    seed: u64,
    hash_streams: bool,
    mptcp: Option<&brisk_tcp::mptcp::MptcpConfig>,
) -> Result<Network, BuildError> {
    let mut e: Engine<SimNode> = Engine::new();
    let interval = sc.sample_interval();
    let rows =
        (brisk_time::dur_nanos(sc.duration.0) / brisk_time::dur_nanos(interval)) as usize + 2;
    let nflows = sc.total_flows() as usize;

    let meter = LinkMeter::new(brisk_time::dur_nanos(interval), rows, nflows);
    let (b_in, b_out) = add_link(&mut e, &sc.bottleneck, "bottleneck", seed, Some(meter))?;
    let reverse = match &sc.reverse {
        Some(r) => Some(add_link(&mut e, r, "reverse", seed, None)?),
        None => None,
    };

    let mut flows = Vec::with_capacity(nflows);
    // Further sender addresses already given to a flow (`sender_extra_addrs`).
    let mut taken: Vec<IpAddr> = Vec::new();
    // FSE groups by name: the sender node and address their flows share.
    let mut fse_hosts: Vec<(String, NodeId, IpAddr)> = Vec::new();
    let mut id = 0u32;
    // The run's hosts keep their connections' adjusted configs in one cache: one
    // IPv6 copy of an entry's config per run, not one per host (~1 KB a flow).
    let conn_configs = brisk_tcp::ConnConfigs::default();
    let endpoint = |ip: IpAddr, cfg: EndpointConfig| {
        let mut ep = Endpoint::new(ip, cfg);
        ep.share_conn_configs(&conn_configs);
        ep
    };
    for (si, f) in sc.flows.iter().enumerate() {
        // The entry's connection config, built once: its flows' hosts and connections
        // share it by reference (a copy per side and per connection cost ~2 KB a flow).
        // A flow whose MPTCP endpoints name its own address gets its own copy below.
        let entry_config = {
            let mut config = f.tcp.to_config(f.cc);
            if let Some(m) = mptcp {
                config.mptcp = Some(Box::new(m.clone()));
            }
            Arc::new(config)
        };
        // The entry's access lines, built at its first flow (`delay_line`).
        let mut access: Option<(LinkElements, LinkElements)> = None;
        for _ in 0..f.count {
            let (s_ip, r_ip) = flow_ips(id, f.ip.unwrap_or(sc.ip));
            let mut config = entry_config.clone();
            // The flow's own MPTCP endpoints (not the benchmark's override).
            let mp_knobs = f.tcp.mptcp.as_ref().filter(|_| mptcp.is_none());
            if let Some(m) = mp_knobs.filter(|m| m.has_index_endpoints()) {
                // A dumbbell sender has one address: index 0 (load checks the rest).
                let c = m
                    .config_for(&[s_ip])
                    .map_err(|(k, message)| BuildError::Workload {
                        field: format!("flow[{si}].{k}"),
                        message,
                    })?;
                Arc::make_mut(&mut config).mptcp = Some(Box::new(c));
            }
            // A sized bulk transfer's forward stream has a known length: its pattern
            // holds only those bytes (the same bytes; see `Pattern::with_length`).
            let fwd_len = match &f.app {
                AppSpec::Bulk { bytes: Some(b), .. } => Some(b.0),
                _ => None,
            };
            let fwd = Pattern::with_length(
                derive_seed(seed, "pattern-fwd", u64::from(id)),
                hash_streams,
                fwd_len,
            );
            let rev = Pattern::with_hashing(
                derive_seed(seed, "pattern-rev", u64::from(id)),
                hash_streams,
            );
            let ep_cfg = |role: &str| {
                let mut isn_secret = [0u8; 16];
                isn_secret[..8]
                    .copy_from_slice(&derive_seed(seed, role, u64::from(id) * 2).to_le_bytes());
                isn_secret[8..]
                    .copy_from_slice(&derive_seed(seed, role, u64::from(id) * 2 + 1).to_le_bytes());
                // Secret and seed come from the scenario seed, never from the OS:
                // the same seed must give the same run.
                EndpointConfig::seeded(isn_secret, derive_seed(seed, role, u64::from(id)))
            };

            // Flows naming one FSE group send from one host, so that its endpoint
            // couples them (brisk-tcp cc/fse/tcp.rs); every other flow has its own.
            let fse_group = config
                .congestion
                .controller
                .fse
                .as_ref()
                .and_then(|f| f.group.clone());
            let shared = fse_group
                .as_ref()
                .and_then(|name| fse_hosts.iter().find(|h| &h.0 == name))
                .map(|h| (h.1, h.2));
            let s_ip = shared.map_or(s_ip, |h| h.1);
            let mut own = match shared {
                None => Some(Host::new(s_ip, endpoint(s_ip, ep_cfg("sender")))),
                Some(_) => None,
            };
            let sender: &mut Host = match (&mut own, shared) {
                (Some(h), _) => h,
                (None, Some((node, _))) => e
                    .node_mut(node)
                    .as_host_mut()
                    .ok_or(BuildError::SharedSender { flow: id })?,
                (None, None) => return Err(BuildError::SharedSender { flow: id }),
            };
            let mut receiver = Host::new(r_ip, endpoint(r_ip, ep_cfg("receiver")));
            let app_seed = derive_seed(seed, "app", u64::from(id));
            let start = Instant::ZERO + f.start.0;
            let listen = |source| BuildError::Listen { flow: id, source };
            if let AppSpec::Web {
                objects,
                connections,
                request,
            } = &f.app
            {
                // A page: its connections share the page state; each pairs with its
                // own server (port BASE_PORT + k) through the queue of object sizes.
                let conns = connections.unwrap_or(DEFAULT_WEB_CONNECTIONS);
                let request = request.map_or(crate::app::DEFAULT_WEB_REQUEST, |r| r.0);
                let sizes: Vec<u64> = objects.iter().map(|o| o.0).collect();
                let page = Page::new(&sizes, conns);
                for k in 0..conns {
                    let port = BASE_PORT + k as u16;
                    let queue = SizeQueue::default();
                    let app = ClientApp::web(
                        page.clone(),
                        k,
                        request,
                        queue.clone(),
                        fwd.clone(),
                        rev.clone(),
                        app_seed.wrapping_add(u64::from(k)),
                    );
                    let remote = SocketAddr::new(r_ip, port);
                    let client = ClientSide::new(app, remote, start, config.clone(), rows);
                    sender
                        .add_flow(id, Role::Client(Box::new(client)))
                        .map_err(listen)?;
                    let server = ServerApp::web(request, queue, fwd.clone(), rev.clone());
                    let side = ServerSide::new(server, port, config.clone(), rows);
                    receiver
                        .add_flow(id, Role::Server(Box::new(side)))
                        .map_err(listen)?;
                }
            } else {
                let port = BASE_PORT;
                let app = ClientApp::new(&f.app, fwd.clone(), rev.clone(), app_seed);
                let remote = SocketAddr::new(r_ip, port);
                let client = ClientSide::new(app, remote, start, config.clone(), rows);
                sender
                    .add_flow(id, Role::Client(Box::new(client)))
                    .map_err(listen)?;
                let side = ServerSide::new(
                    ServerApp::new(&f.app, fwd, rev, port),
                    port,
                    config.clone(),
                    rows,
                );
                receiver
                    .add_flow(id, Role::Server(Box::new(side)))
                    .map_err(listen)?;
            }

            let s = match (own, shared) {
                (Some(h), _) => {
                    let s = e.add_node(SimNode::Host(Box::new(h)));
                    if let Some(name) = fse_group {
                        fse_hosts.push((name, s, s_ip));
                    }
                    s
                }
                (None, Some((node, _))) => node,
                (None, None) => return Err(BuildError::SharedSender { flow: id }),
            };
            // The sender takes its `addr` endpoints as further addresses, as a real
            // run adds them to the Linux sender's namespace: subflows from them share
            // the flow's access lines and the bottleneck.
            let extra = match mp_knobs {
                Some(m) => sender_extra_addrs(&mut e, s, s_ip, m, si, nflows, &mut taken)?,
                None => Vec::new(),
            };
            let r = e.add_node(SimNode::Host(Box::new(receiver)));
            let (fwd_line, back_line) = match &access {
                Some(lines) => lines,
                None => {
                    let half = f.rtt.0 / 2;
                    // Rounding: an odd-nanosecond RTT puts the extra nanosecond on the
                    // way back.
                    access.insert((delay_line(half)?, delay_line(f.rtt.0 - half)?))
                }
            };
            let fwd_access = add_elements(&mut e, fwd_line.clone(), None).0;
            let back_access = add_elements(&mut e, back_line.clone(), None).0;

            if shared.is_some() || fse_hosts.last().is_some_and(|h| h.1 == s) {
                // A shared sender: each flow's packets take its own access line.
                e.routes_mut(s).add(r_ip, fwd_access);
            } else {
                e.routes_mut(s).set_default(fwd_access);
            }
            e.routes_mut(fwd_access).set_default(b_in);
            // The forward access line only delays, and every packet it carries goes
            // on to the bottleneck: folded into it, a data segment costs one wake-up
            // and two hand-overs instead of two and three (`Engine::fold_delay_line`).
            if let Some((delay, limit)) = e
                .node(fwd_access)
                .as_link()
                .and_then(|l| Some((l.link.pure_delay()?, l.link.delay_line_limit())))
            {
                e.fold_delay_line(fwd_access, b_in, delay, limit);
            }
            e.routes_mut(b_out).add(r_ip, r);
            match reverse {
                Some((rv_in, rv_out)) => {
                    e.routes_mut(r).set_default(rv_in);
                    e.routes_mut(rv_out).add(s_ip, back_access);
                    for &a in &extra {
                        e.routes_mut(rv_out).add(a, back_access);
                    }
                }
                None => e.routes_mut(r).set_default(back_access),
            }
            e.routes_mut(back_access).set_default(s);

            flows.push(FlowInfo {
                id,
                spec: si,
                // A UDP flow has no congestion control.
                cc: match f.app {
                    AppSpec::Udp { .. } => "none".into(),
                    _ => config.cc_name(),
                },
                start: Instant::ZERO + f.start.0,
                app: f.app.clone(),
                sender: s,
                receiver: r,
            });
            id += 1;
        }
    }
    Ok(Network {
        engine: e,
        flows,
        bottleneck: b_in,
        reverse: reverse.map(|r| r.0),
        bottleneck_exit: b_out,
    })
}

/// Gives sender node `s` (first address `s_ip`) flow spec `si`'s `addr` endpoints
/// as further addresses, and returns them. An address that is a dumbbell flow's own
/// (198.18/198.19 numbering) or already another sender's is refused by field: the
/// receivers' routes towards it would be ambiguous.
fn sender_extra_addrs(
    e: &mut Engine<SimNode>,
    s: NodeId,
    s_ip: IpAddr,
    m: &brisk_scenario::knobs::MptcpKnobs,
    si: usize,
    nflows: usize,
    taken: &mut Vec<IpAddr>,
) -> Result<Vec<IpAddr>, BuildError> {
    let mut out = Vec::new();
    for (k, ep) in m.endpoints.iter().enumerate() {
        let Some(a) = ep.addr.filter(|&a| a != s_ip) else {
            continue;
        };
        let bad = |message: String| BuildError::Workload {
            field: format!("flow[{si}].tcp.mptcp.endpoint[{k}].addr"),
            message,
        };
        if let Some(j) = dumbbell_flow_of(a, nflows) {
            return Err(bad(format!(
                "{a} is flow {j}'s own address in the dumbbell (198.18.0.1 up and 198.19.0.1 up are the flows'); pick one outside them, e.g. 198.18.255.x beyond the flow count"
            )));
        }
        if taken.contains(&a) {
            return Err(bad(format!(
                "{a} is already another flow's endpoint address; each sender needs its own (a flow with count > 1 gives every copy the same)"
            )));
        }
        let host = e
            .node_mut(s)
            .as_host_mut()
            .ok_or(BuildError::SharedSender { flow: si as u32 })?;
        host.ep.add_address(a).map_err(|err| bad(err.to_string()))?;
        taken.push(a);
        out.push(a);
    }
    Ok(out)
}

/// The dumbbell flow whose sender or receiver address `a` is, among `nflows`.
fn dumbbell_flow_of(a: IpAddr, nflows: usize) -> Option<u32> {
    let n = match a {
        IpAddr::V4(v) => {
            let o = v.octets();
            if o[0] != 198 || !(o[1] == 18 || o[1] == 19) {
                return None;
            }
            u32::from(o[2]) << 8 | u32::from(o[3])
        }
        IpAddr::V6(v) => {
            let g = v.segments();
            if g[..2] != [0x2001, 0xdb8] || !(g[2] == 0x18 || g[2] == 0x19) || g[3..6] != [0; 3] {
                return None;
            }
            u32::from(g[6]) << 16 | u32::from(g[7])
        }
    };
    (n >= 1 && n as usize <= nflows).then(|| n - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn derived_seeds_differ_by_name_index_and_seed() {
        let a = derive_seed(1, "loss", 0);
        assert_eq!(a, derive_seed(1, "loss", 0));
        assert_ne!(a, derive_seed(2, "loss", 0));
        assert_ne!(a, derive_seed(1, "loss", 1));
        assert_ne!(a, derive_seed(1, "los", 0));
    }

    #[test]
    fn addresses_are_unique_and_in_the_benchmark_range() {
        assert_eq!(sender_ip(0), IpAddr::V4(Ipv4Addr::new(198, 18, 0, 1)));
        assert_eq!(receiver_ip(0), IpAddr::V4(Ipv4Addr::new(198, 19, 0, 1)));
        assert_eq!(sender_ip(255), IpAddr::V4(Ipv4Addr::new(198, 18, 1, 0)));
    }

    #[test]
    fn ipv6_addresses_are_unique_and_in_the_documentation_prefix() {
        let (s, r) = flow_ips(0, IpVersion::V6);
        assert_eq!(s, "2001:db8:18::1".parse::<IpAddr>().unwrap());
        assert_eq!(r, "2001:db8:19::1".parse::<IpAddr>().unwrap());
        assert_eq!(
            receiver_ip6(0x1_0000),
            "2001:db8:19::1:1".parse::<IpAddr>().unwrap()
        );
        assert_ne!(sender_ip6(u32::MAX), sender_ip6(u32::MAX - 1));
    }
}

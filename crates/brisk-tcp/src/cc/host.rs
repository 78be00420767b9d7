//! The congestion state a host's flows share, and how a controller reaches it.
//!
//! Coupled congestion control needs state above one connection: FSE's group rate or
//! window (RFC 8699 §5.2), LIA/OLIA's coupled increase over a connection's subflows
//! (RFC 6356 §3; Khalili et al. 2013), and the per-flow delay statistics a
//! shared-bottleneck detector groups flows by (RFC 8382 §3). This module is the room
//! for them. The coupled MPTCP controllers (LIA, OLIA, BALIA and LISA, `coupled/`)
//! are its first users: each subflow publishes its window, RTT and loss distances in
//! [`FlowStats`] and reads its siblings' there.
//!
//! Ownership, without a lock or a shared pointer:
//! - [`HostCc`] is plain data owned by the host's `Endpoint` (in a [`HostHome`]). The
//!   simulator's hosts and brisk-emu's real-run stack each own one `Endpoint`, so each
//!   owns its host state; nothing is global.
//! - Each connection's controller sits in a [`FlowCc`]: the boxed controller plus the
//!   flow's [`FlowId`] in its host.
//! - While the endpoint drives one connection (`handle_segment`, `poll_transmit`,
//!   `handle_timeout`), it *lends* the host state to that connection's `FlowCc`: one
//!   pointer moved in and moved back out ([`HostHome::lend_to`] /
//!   [`HostHome::take_back`]). Every hook then receives a [`FlowCtx`]: the flow's
//!   variables ([`CcState`], through `Deref`), its identity and the lent host state.
//!   Only one connection runs at a time, so no other flow can see the state half
//!   updated, and the same inputs give the same bytes.
//! - Outside an endpoint (unit tests, [`crate::Config::build_cc`]) a controller runs
//!   alone: [`FlowCtx::alone`] has no host, no group and no published statistics.

use super::fse::tcp::FseGroup;
use super::fse::{Algorithm, FseError, FseFlow};
use super::sbd::host::SbdHost;
use super::{CcState, FlowCc};
use brisk_time::{Duration, Instant};
use std::collections::BTreeMap;
use std::net::{IpAddr, SocketAddr};
use std::ops::{Deref, DerefMut};

/// A flow's identity in its host's [`HostCc`]: the path a controller runs on. Valid
/// from the controller's build until its connection leaves the endpoint; then the
/// number may be reused.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FlowId(u32);

impl FlowId {
    /// The flow's index in its host's table (for traces and reports).
    pub fn index(self) -> u32 {
        self.0
    }

    pub(crate) fn from_index(i: u32) -> Self {
        FlowId(i)
    }
}

/// A group of flows that share congestion state (one bottleneck for FSE or SBD; one
/// MPTCP connection's subflows for LIA/OLIA).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct GroupId(u32);

impl GroupId {
    pub fn index(self) -> u32 {
        self.0
    }
}

/// What puts flows in one group. Two flows with equal keys are in the same group.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum GroupKey {
    /// All flows to one remote host: RFC 8699 §2's "flows between the same pair of
    /// hosts", the ensemble RFC 2140 shares state over.
    RemoteHost(IpAddr),
    /// A group a host-level detector (SBD, RFC 8382) made; the number is the
    /// caller's.
    Assigned(u64),
    /// A group named in configuration (`[flow.tcp] fse = { group = "..." }`): the
    /// name's 64-bit FNV-1a hash ([`GroupKey::named`]).
    Named(u64),
    /// The subflows of one MPTCP connection (RFC 6356 §3's coupled set): the
    /// number is the connection's handle in its endpoint (`endpoint/join.rs`).
    Subflows(u32),
    /// A stable group of the host's shared-bottleneck detector (`sbd/stable.rs`),
    /// for flows whose FSE follows it (`fse = { sbd = true }`); the number is the
    /// group's smallest detector slot.
    Detected(u32),
}

impl GroupKey {
    /// The key of the group called `name` (FNV-1a, 64 bits: deterministic across runs
    /// and platforms, unlike std's `DefaultHasher`).
    pub fn named(name: &str) -> GroupKey {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        GroupKey::Named(h)
    }
}

/// Which group the endpoint puts a new flow in ([`crate::EndpointConfig`]'s
/// `cc_grouping`). Default: none, every flow alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum Grouping {
    #[default]
    None,
    /// One group per remote host ([`GroupKey::RemoteHost`]).
    RemoteHost,
}

impl Grouping {
    /// The key a flow to `remote` gets.
    pub fn key(self, remote: SocketAddr) -> Option<GroupKey> {
        match self {
            Grouping::None => None,
            Grouping::RemoteHost => Some(GroupKey::RemoteHost(remote.ip())),
        }
    }
}

/// What the factory knows about the path a controller will run on, as quinn's
/// `ControllerFactory::build(now, mtu)` and s2n-quic's `PathInfo` give theirs.
#[derive(Clone, Copy, Debug)]
pub struct PathInfo {
    pub local: SocketAddr,
    pub remote: SocketAddr,
    /// The sender MSS the connection starts with, bytes (the peer's MSS option may
    /// lower it; [`CcState::mss`] holds the value in use).
    pub mss: u32,
    /// The initial window, segments.
    pub initial_cwnd: u32,
    /// The RTO before the first RTT sample (RFC 6298 §2.1): the only RTT hint a new
    /// connection has. A route-metrics cache (Linux `tcp_metrics`) would add a
    /// remembered RTT here.
    pub initial_rto: Duration,
    /// When the connection is set up.
    pub now: Instant,
    /// The flow's identity in its host.
    pub flow: FlowId,
    /// The group the flow joined, if the host groups flows.
    pub group: Option<GroupId>,
}

/// RFC 8382 §3's per-flow summary over one base interval T, the statistics a
/// shared-bottleneck detector groups flows by. Written by a measuring layer; zero
/// until one exists.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct OwdSummary {
    /// Skewness estimate of the one-way delay (skew_est, §3.1).
    pub skew_est: f64,
    /// Variability estimate (var_est, §3.1).
    pub var_est: f64,
    /// Oscillation frequency estimate (freq_est, §3.1).
    pub freq_est: f64,
    /// Packet loss fraction (pkt_loss, §3.1).
    pub pkt_loss: f64,
    /// Intervals summarised so far.
    pub intervals: u32,
}

/// What one flow publishes for the host: its controller writes it in its hooks
/// ([`FlowCtx::stats_mut`]); a host-level detector or a coupled sibling reads it
/// ([`HostCc::flow_stats`], [`HostCc::members`]). Only the coupled controllers
/// (`coupled/`) publish, so a single-path flow pays nothing.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct FlowStats {
    /// Congestion window, segments (LIA's cwnd_i, FSE's FSE_R(i) as a window).
    pub cwnd: u32,
    pub mss: u32,
    /// Smoothed RTT (LIA's rtt_i).
    pub srtt: Duration,
    /// FSE's priority P(i) (RFC 8699 §5.1); 0 until set.
    pub priority: u8,
    pub owd: OwdSummary,
    /// What a coupled controller (`coupled/`) publishes for its siblings.
    pub coupled: CoupledStats,
}

/// Most members a coupled computation reads: Linux's `MPTCP_SUBFLOWS_MAX` (8 subflows
/// per MPTCP connection). A coupled controller reads the first `MAX_COUPLED` members
/// of its group plus itself, so its per-ACK cost is bounded whatever the group size;
/// members beyond the bound couple against those eight, and are not seen by them (the
/// MPTCP path manager keeps to Linux's limit, so this bounds cost, not behaviour).
pub const MAX_COUPLED: usize = 8;

/// A coupled controller's published per-flow state (RFC 6356 §3's cwnd_i and rtt_i
/// are [`FlowStats::cwnd`] and [`FlowStats::srtt`]; these are the rest).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CoupledStats {
    /// The flow takes part in the coupled computation: it has an RTT sample (Linux
    /// `mptcp_sk_can_send() && srtt`).
    pub active: bool,
    /// Whether the flow is in slow start (cwnd < ssthresh): LISA's donors.
    pub slow_start: bool,
    /// Segments in flight at the flow's last hook (LISA's `inflight`, spec L2).
    pub in_flight: u32,
    /// OLIA's l1r: bytes delivered between the last two losses (Khalili et al. 2013 §IV).
    pub inter_loss: u64,
    /// OLIA's l2r: bytes delivered since the last loss.
    pub since_loss: u64,
    /// LISA's mailbox: segments a joining sibling took from this flow's cwnd, applied
    /// by this flow's controller at its next ACK (seed 004 B.2 Alg. 1 lines 6, 12).
    pub lisa_debit: u32,
    /// LISA's mailbox: slow-start ACKs (segments) this flow is to ignore (lines 21–23).
    pub lisa_ignore: u32,
}

/// State shared by one group's flows.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct GroupState {
    /// The group window, bytes: FSE's sum of calculated windows (S_CR, RFC 8699
    /// §5.2, window-based) or the coupled increase's cwnd_total (RFC 6356 §3). Written
    /// by coupled controllers only; 0 until one runs.
    pub window: u64,
    /// FSE's sum of priorities (S_P).
    pub priority_sum: u32,
}

#[derive(Clone, Debug)]
struct FlowEntry {
    local: SocketAddr,
    remote: SocketAddr,
    group: Option<GroupId>,
    stats: FlowStats,
    /// The flow's handle in its group's FSE, while it is registered there.
    fse: Option<FseFlow>,
    /// The flow's group follows the detector's stable groups ([`HostCc::group_by_sbd`]).
    by_sbd: bool,
}

#[derive(Clone, Debug)]
struct GroupEntry {
    key: GroupKey,
    members: Vec<FlowId>,
    state: GroupState,
    /// The group's Flow State Exchange, made when its first FSE flow registers
    /// (`fse/tcp.rs`); `None` for groups without FSE flows.
    fse: Option<Box<FseGroup>>,
}

/// The congestion state of one host: its flows (path, group, published statistics)
/// and its groups (members and group state). Owned by the endpoint; lent to a
/// connection's controller for the duration of one call (module doc).
///
/// Bounded: one flow entry per live connection (the endpoint's `max_connections`),
/// released when the connection leaves; a group lives while it has members.
#[derive(Clone, Debug, Default)]
pub struct HostCc {
    flows: Vec<Option<FlowEntry>>,
    free_flows: Vec<u32>,
    groups: Vec<Option<GroupEntry>>,
    free_groups: Vec<u32>,
    by_key: BTreeMap<GroupKey, GroupId>,
    live: usize,
    built: u64,
    /// The host's shared-bottleneck detector, when enabled (`sbd/host.rs`).
    sbd: Option<Box<SbdHost>>,
    /// The detector's `coupling_changes` last applied to the flows' groups.
    sbd_applied: u64,
}

impl HostCc {
    pub const fn new() -> Self {
        HostCc {
            flows: Vec::new(),
            free_flows: Vec::new(),
            groups: Vec::new(),
            free_groups: Vec::new(),
            by_key: BTreeMap::new(),
            live: 0,
            built: 0,
            sbd: None,
            sbd_applied: 0,
        }
    }

    /// A new flow on `local`→`remote`, in the group of `key` (created if new).
    pub fn join(
        &mut self,
        local: SocketAddr,
        remote: SocketAddr,
        key: Option<GroupKey>,
    ) -> (FlowId, Option<GroupId>) {
        let entry = FlowEntry {
            local,
            remote,
            group: None,
            stats: FlowStats::default(),
            fse: None,
            by_sbd: false,
        };
        let id = match self.free_flows.pop() {
            Some(i) => {
                self.flows[i as usize] = Some(entry);
                FlowId(i)
            }
            None => {
                // Most hosts carry one flow: room for exactly one at first (the
                // default growth reserves four, ~2 KB a host unused).
                if self.flows.is_empty() {
                    self.flows.reserve_exact(1);
                }
                self.flows.push(Some(entry));
                FlowId((self.flows.len() - 1) as u32)
            }
        };
        self.live += 1;
        if let Some(s) = self.sbd.as_deref_mut() {
            s.join(id);
        }
        let group = key.map(|k| self.enter_group(id, k));
        (id, group)
    }

    /// The flow's connection left the endpoint: its entry and group membership go.
    pub fn leave(&mut self, flow: FlowId) {
        if let Some(g) = self.entry(flow).and_then(|e| e.group) {
            self.leave_group(flow, g);
        }
        let Some(_entry) = self.flows.get_mut(flow.0 as usize).and_then(Option::take) else {
            return;
        };
        if let Some(s) = self.sbd.as_deref_mut() {
            s.leave(flow);
        }
        self.free_flows.push(flow.0);
        self.live -= 1;
    }

    /// Moves `flow` to the group of `key` (or to no group): what a shared-bottleneck
    /// detector does when its grouping changes. Returns the new group.
    pub fn regroup(&mut self, flow: FlowId, key: Option<GroupKey>) -> Option<GroupId> {
        let old = self.entry(flow)?.group;
        if let Some(g) = old {
            if key.is_some() && self.groups[g.0 as usize].as_ref().map(|e| e.key) == key {
                return old;
            }
            self.leave_group(flow, g);
            if let Some(e) = self.entry_mut(flow) {
                e.group = None;
            }
        }
        key.map(|k| self.enter_group(flow, k))
    }

    /// From now on `flow`'s group is the detector's stable group it is in
    /// ([`GroupKey::Detected`]), or none while it is in none: what an FSE flow with
    /// `sbd = true` asks for (issue 33 §4). It takes its current group at once.
    pub fn group_by_sbd(&mut self, flow: FlowId) {
        let Some(e) = self.entry_mut(flow) else {
            return;
        };
        e.by_sbd = true;
        let key = self.sbd_key(flow);
        self.regroup(flow, key);
    }

    fn sbd_key(&self, flow: FlowId) -> Option<GroupKey> {
        let g = self.sbd.as_deref()?.coupled_group_of(flow)?;
        Some(GroupKey::Detected(g))
    }

    /// One ACK's sample for the detector (`SbdHost::on_ack`); when its stable groups
    /// changed, the flows that follow it move (`regroup`: a flow leaves its old
    /// group's FSE with its share and registers in the new one at its next hook).
    /// That happens once per change of the stable groups, not per ACK.
    pub fn sbd_on_ack(
        &mut self,
        flow: FlowId,
        now: Instant,
        tsval: u32,
        tsecr: u32,
        delivered: u32,
        lost_total: u64,
    ) {
        let Some(s) = self.sbd.as_deref_mut() else {
            return;
        };
        s.on_ack(flow, now, tsval, tsecr, delivered, lost_total);
        let changes = s.coupling_changes();
        if changes == self.sbd_applied {
            return;
        }
        self.sbd_applied = changes;
        for i in 0..self.flows.len() {
            let f = FlowId(i as u32);
            if self.entry(f).is_some_and(|e| e.by_sbd) {
                let key = self.sbd_key(f);
                self.regroup(f, key);
            }
        }
    }

    fn enter_group(&mut self, flow: FlowId, key: GroupKey) -> GroupId {
        let g = match self.by_key.get(&key) {
            Some(&g) => g,
            None => {
                let entry = GroupEntry {
                    key,
                    members: Vec::new(),
                    state: GroupState::default(),
                    fse: None,
                };
                let g = match self.free_groups.pop() {
                    Some(i) => {
                        self.groups[i as usize] = Some(entry);
                        GroupId(i)
                    }
                    None => {
                        self.groups.push(Some(entry));
                        GroupId((self.groups.len() - 1) as u32)
                    }
                };
                self.by_key.insert(key, g);
                g
            }
        };
        if let Some(e) = self.groups[g.0 as usize].as_mut() {
            e.members.push(flow);
        }
        if let Some(e) = self.entry_mut(flow) {
            e.group = Some(g);
        }
        g
    }

    fn leave_group(&mut self, flow: FlowId, g: GroupId) {
        let handle = self.entry_mut(flow).and_then(|e| e.fse.take());
        let Some(e) = self.groups.get_mut(g.0 as usize).and_then(Option::as_mut) else {
            return;
        };
        if let (Some(h), Some(fse)) = (handle, e.fse.as_deref_mut()) {
            fse.leave(h);
        }
        e.members.retain(|&f| f != flow);
        if e.members.is_empty() {
            self.by_key.remove(&e.key);
            self.groups[g.0 as usize] = None;
            self.free_groups.push(g.0);
        }
    }

    fn entry(&self, flow: FlowId) -> Option<&FlowEntry> {
        self.flows.get(flow.0 as usize)?.as_ref()
    }

    fn entry_mut(&mut self, flow: FlowId) -> Option<&mut FlowEntry> {
        self.flows.get_mut(flow.0 as usize)?.as_mut()
    }

    /// The flow's path (local, remote).
    pub fn path(&self, flow: FlowId) -> Option<(SocketAddr, SocketAddr)> {
        self.entry(flow).map(|e| (e.local, e.remote))
    }

    pub fn flow_stats(&self, flow: FlowId) -> Option<&FlowStats> {
        self.entry(flow).map(|e| &e.stats)
    }

    pub fn flow_stats_mut(&mut self, flow: FlowId) -> Option<&mut FlowStats> {
        self.entry_mut(flow).map(|e| &mut e.stats)
    }

    pub fn group_of(&self, flow: FlowId) -> Option<GroupId> {
        self.entry(flow)?.group
    }

    pub fn group(&self, g: GroupId) -> Option<&GroupState> {
        Some(&self.groups.get(g.0 as usize)?.as_ref()?.state)
    }

    pub fn group_mut(&mut self, g: GroupId) -> Option<&mut GroupState> {
        Some(&mut self.groups.get_mut(g.0 as usize)?.as_mut()?.state)
    }

    /// The group's flows, in the order they joined.
    pub fn members(&self, g: GroupId) -> &[FlowId] {
        match self.groups.get(g.0 as usize) {
            Some(Some(e)) => &e.members,
            _ => &[],
        }
    }

    /// The first [`MAX_COUPLED`] members of `g`: what a coupled computation reads.
    pub fn coupled_members(&self, g: GroupId) -> &[FlowId] {
        let m = self.members(g);
        &m[..m.len().min(MAX_COUPLED)]
    }

    /// Registers `flow` in its group's Flow State Exchange with priority `p` and the
    /// window (or rate) its controller starts from; makes the group's FSE (running
    /// `algorithm`, holding at most `max_flows`) if it has none. Allocates only when
    /// it makes the FSE, at a join, never per ACK. Refused: a flow in no group, a
    /// group running another algorithm ("the same algorithm must be applied to all
    /// flows", draft -05 §5.3), a full group, a priority out of range.
    pub fn fse_register(
        &mut self,
        flow: FlowId,
        algorithm: Algorithm,
        max_flows: usize,
        p: f64,
        initial: f64,
    ) -> Result<FseFlow, FseError> {
        let Some(g) = self.group_of(flow) else {
            return Err(FseError::NoGroup);
        };
        if let Some(h) = self.entry(flow).and_then(|e| e.fse) {
            return Ok(h);
        }
        let Some(ge) = self.groups.get_mut(g.0 as usize).and_then(Option::as_mut) else {
            return Err(FseError::NoGroup);
        };
        if ge.fse.is_none() {
            ge.fse = Some(Box::new(FseGroup::new(algorithm, max_flows)?));
        }
        let fg = ge.fse.as_deref_mut().ok_or(FseError::NoGroup)?;
        if fg.algorithm() != algorithm {
            return Err(FseError::Mixed);
        }
        let h = fg.register(p, initial)?;
        if let Some(e) = self.entry_mut(flow) {
            e.fse = Some(h);
        }
        Ok(h)
    }

    /// Takes `flow` out of its group's FSE, with its share (a leave, step 2); it
    /// stays in the group, and its controller may register it again.
    pub fn fse_leave(&mut self, flow: FlowId) {
        let Some(e) = self.entry_mut(flow) else {
            return;
        };
        let (Some(h), Some(g)) = (e.fse.take(), e.group) else {
            return;
        };
        if let Some(fg) = self
            .groups
            .get_mut(g.0 as usize)
            .and_then(Option::as_mut)
            .and_then(|ge| ge.fse.as_deref_mut())
        {
            fg.leave(h);
        }
    }

    /// The FSE of `flow`'s group and the flow's handle there, if it is registered.
    pub fn fse_mut(&mut self, flow: FlowId) -> Option<(&mut FseGroup, FseFlow)> {
        let e = self.entry(flow)?;
        let (g, h) = (e.group?, e.fse?);
        let fg = self
            .groups
            .get_mut(g.0 as usize)?
            .as_mut()?
            .fse
            .as_deref_mut()?;
        Some((fg, h))
    }

    /// The FSE of group `g`, if one of its flows registered.
    pub fn group_fse(&self, g: GroupId) -> Option<&FseGroup> {
        self.groups.get(g.0 as usize)?.as_ref()?.fse.as_deref()
    }

    /// Every live flow with its statistics, in index order (a detector's input).
    pub fn flows(&self) -> impl Iterator<Item = (FlowId, &FlowStats)> + '_ {
        self.flows
            .iter()
            .enumerate()
            .filter_map(|(i, e)| Some((FlowId(i as u32), &e.as_ref()?.stats)))
    }

    /// Live flows.
    pub fn flow_count(&self) -> usize {
        self.live
    }

    /// Groups with at least one member.
    pub fn group_count(&self) -> usize {
        self.by_key.len()
    }

    /// Controllers built for this host so far (FSE's flow count needs it first).
    pub fn controllers_built(&self) -> u64 {
        self.built
    }

    /// Turns on shared-bottleneck detection for the flows that join from now on.
    pub fn enable_sbd(&mut self, sbd: SbdHost) {
        self.sbd = Some(Box::new(sbd));
    }

    /// The host's shared-bottleneck detector, if enabled.
    pub fn sbd(&self) -> Option<&SbdHost> {
        self.sbd.as_deref()
    }

    #[inline]
    pub fn sbd_mut(&mut self) -> Option<&mut SbdHost> {
        self.sbd.as_deref_mut()
    }

    pub(crate) fn count_built(&mut self) {
        self.built += 1;
    }

    /// Table sizes (flow slots, group slots), for tests that check they stay bounded.
    pub fn footprint(&self) -> (usize, usize) {
        (self.flows.len(), self.groups.len())
    }
}

/// Where the endpoint keeps its [`HostCc`] between connection calls, and from where it
/// lends it (module doc). The host is always at home except while a connection call
/// runs, and then the home is mutably borrowed by the lending code, so nobody can look.
#[derive(Debug)]
pub struct HostHome(Option<Box<HostCc>>);

/// What the home shows if a panic (caught by the caller) ended a call before the
/// host came back.
static EMPTY_HOST: HostCc = HostCc::new();

impl Default for HostHome {
    fn default() -> Self {
        HostHome(Some(Box::default()))
    }
}

impl HostHome {
    pub fn get(&self) -> &HostCc {
        self.0.as_deref().unwrap_or(&EMPTY_HOST)
    }

    pub fn get_mut(&mut self) -> &mut HostCc {
        self.0.get_or_insert_with(Box::default)
    }

    /// Lends the host to `flow` for one connection call. A swap, not an assignment:
    /// neither side's old value needs dropping (the drop glue cost 1 % of a bulk
    /// run's instructions).
    #[inline]
    pub(crate) fn lend_to(&mut self, flow: &mut FlowCc) {
        debug_assert!(flow.lent.is_none());
        std::mem::swap(&mut self.0, &mut flow.lent);
    }

    /// Takes the host back from `flow` after the call.
    #[inline]
    pub(crate) fn take_back(&mut self, flow: &mut FlowCc) {
        debug_assert!(self.0.is_none());
        std::mem::swap(&mut self.0, &mut flow.lent);
    }
}

/// What every controller hook receives: the flow's variables (`Deref` to
/// [`CcState`], so `cc.cwnd` reads as before), the flow's identity, and the host's
/// shared state while the endpoint lends it.
pub struct FlowCtx<'a> {
    vars: &'a mut CcState,
    flow: Option<FlowId>,
    host: Option<&'a mut HostCc>,
}

impl<'a> FlowCtx<'a> {
    pub fn new(vars: &'a mut CcState, flow: Option<FlowId>, host: Option<&'a mut HostCc>) -> Self {
        FlowCtx { vars, flow, host }
    }

    /// A flow in no host: no group, nothing published (unit tests, standalone use).
    pub fn alone(vars: &'a mut CcState) -> Self {
        FlowCtx {
            vars,
            flow: None,
            host: None,
        }
    }

    pub fn vars(&mut self) -> &mut CcState {
        self.vars
    }

    /// The flow's identity in its host; `None` alone.
    pub fn flow(&self) -> Option<FlowId> {
        self.flow
    }

    /// The host's shared state, if lent.
    pub fn host(&self) -> Option<&HostCc> {
        self.host.as_deref()
    }

    pub fn host_mut(&mut self) -> Option<&mut HostCc> {
        self.host.as_deref_mut()
    }

    /// The flow's group, if it is in one.
    pub fn group_id(&self) -> Option<GroupId> {
        self.host()?.group_of(self.flow?)
    }

    pub fn group(&self) -> Option<&GroupState> {
        let g = self.group_id()?;
        self.host()?.group(g)
    }

    pub fn group_mut(&mut self) -> Option<&mut GroupState> {
        let g = self.group_id()?;
        self.host_mut()?.group_mut(g)
    }

    /// This flow's published statistics, to write.
    pub fn stats_mut(&mut self) -> Option<&mut FlowStats> {
        let f = self.flow?;
        self.host_mut()?.flow_stats_mut(f)
    }
}

impl Deref for FlowCtx<'_> {
    type Target = CcState;
    fn deref(&self) -> &CcState {
        self.vars
    }
}

impl DerefMut for FlowCtx<'_> {
    fn deref_mut(&mut self) -> &mut CcState {
        self.vars
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(host: u8, port: u16) -> SocketAddr {
        SocketAddr::from(([198, 18, 0, host], port))
    }

    #[test]
    fn flows_join_and_leave_groups_by_key_and_tables_stay_bounded() {
        let mut h = HostCc::new();
        let me = addr(1, 80);
        // Hostile churn: many short flows to a few peers, never more than 8 alive.
        let mut alive = std::collections::VecDeque::new();
        for i in 0..10_000u32 {
            let peer = addr(2 + (i % 3) as u8, 1000);
            let key = Grouping::RemoteHost.key(peer);
            let (f, g) = h.join(me, peer, key);
            assert_eq!(h.group_of(f), g);
            assert!(h.members(g.unwrap()).contains(&f));
            alive.push_back(f);
            if alive.len() > 8 {
                h.leave(alive.pop_front().unwrap());
            }
        }
        assert_eq!(h.flow_count(), 8);
        assert_eq!(h.group_count(), 3);
        let (flow_slots, group_slots) = h.footprint();
        assert!(
            flow_slots <= 9 && group_slots <= 3,
            "{flow_slots} {group_slots}"
        );
        for f in alive.drain(..) {
            h.leave(f);
            h.leave(f); // a second leave is a no-op
        }
        assert_eq!((h.flow_count(), h.group_count()), (0, 0));
    }

    #[test]
    fn a_detector_moves_flows_between_groups() {
        let mut h = HostCc::new();
        let (a, _) = h.join(addr(1, 1), addr(2, 1), None);
        let (b, _) = h.join(addr(1, 2), addr(3, 1), None);
        assert_eq!(h.group_count(), 0);
        let g = h.regroup(a, Some(GroupKey::Assigned(7))).unwrap();
        assert_eq!(h.regroup(b, Some(GroupKey::Assigned(7))), Some(g));
        assert_eq!(h.members(g), &[a, b]);
        assert_eq!(
            h.regroup(a, Some(GroupKey::Assigned(7))),
            Some(g),
            "no change"
        );
        h.group_mut(g).unwrap().window = 99;
        let g2 = h.regroup(a, Some(GroupKey::Assigned(8))).unwrap();
        assert_ne!(g, g2);
        assert_eq!(h.members(g), &[b]);
        assert_eq!(
            h.group(g).unwrap().window,
            99,
            "the old group keeps its state"
        );
        assert_eq!(h.regroup(b, None), None);
        assert_eq!(h.group(g), None, "an empty group goes");
        assert_eq!(h.group_count(), 1);
        assert_eq!(h.path(a), Some((addr(1, 1), addr(2, 1))));
    }

    /// Issue 33 §4: the detector's stable groups move the flows that follow it.
    /// Synthetic one-way delays (1-ms timestamps) through `sbd_on_ack`: flows 0 and 1
    /// behind bottleneck A (a standing queue alternating 40/36 ms every 5 T, with
    /// dips), 2 and 3 behind B (60/55 ms every 2 T), flow 4 uncongested (spikes over an
    /// idle queue), flow 5 on A but not following the detector.
    #[test]
    fn the_detectors_stable_groups_move_the_flows_that_follow_it() {
        use crate::cc::sbd::{FeedConfig, SbdConfig, SbdHost, SbdHostConfig};
        let mut h = HostCc::new();
        h.enable_sbd(
            SbdHost::new(SbdHostConfig {
                sbd: SbdConfig::improved(),
                feed: FeedConfig {
                    skew_correction: false,
                    ..FeedConfig::default()
                },
                ..SbdHostConfig::default()
            })
            .unwrap(),
        );
        let flows: Vec<FlowId> = (0..6)
            .map(|i| h.join(addr(1, 100 + i), addr(2 + i as u8, 80), None).0)
            .collect();
        for &f in &flows[..5] {
            h.group_by_sbd(f);
            assert_eq!(h.group_of(f), None, "no stable group before any decision");
        }
        let base = [10, 45, 20, 70, 30, 15];
        // `a_or_b[i]`: which bottleneck flow i is behind (0 A, 1 B, 2 none).
        let drive = |h: &mut HostCc, from: usize, to: usize, a_or_b: [usize; 6]| {
            for k in from..to {
                let qa = if (k / 5) % 2 == 0 { 40 } else { 36 };
                let qb = if (k / 2) % 2 == 0 { 60 } else { 55 };
                for j in 0..35u32 {
                    let t_us = k as u64 * 350_000 + u64::from(j) * 10_000 + 1;
                    let now = Instant::ZERO + Duration::from_micros(t_us);
                    let ms = (t_us / 1000) as u32;
                    for (i, &f) in flows.iter().enumerate() {
                        let dip = j % 9 == 0;
                        let owd = base[i]
                            + match a_or_b[i] {
                                0 => qa - if dip { 30 } else { 0 },
                                1 => qb - if dip { 30 } else { 0 },
                                _ => {
                                    if dip {
                                        20
                                    } else {
                                        0
                                    }
                                }
                            };
                        h.sbd_on_ack(f, now, ms + owd, ms, 1, 0);
                    }
                }
            }
        };
        drive(&mut h, 0, 120, [0, 0, 1, 1, 2, 0]);
        let g: Vec<Option<GroupId>> = flows.iter().map(|&f| h.group_of(f)).collect();
        assert!(g[0].is_some() && g[0] == g[1], "{g:?}");
        assert!(g[2].is_some() && g[2] == g[3] && g[2] != g[0], "{g:?}");
        assert_eq!(
            (g[4], g[5]),
            (None, None),
            "uncongested; not following: {g:?}"
        );
        let key = |g: Option<GroupId>| h.groups[g.unwrap().0 as usize].as_ref().unwrap().key;
        assert!(matches!(key(g[0]), GroupKey::Detected(_)));
        // The FSE: flows 0 and 1 register in their group's FSE.
        for f in &flows[..2] {
            h.fse_register(*f, Algorithm::ConservativeActive, 8, 1.0, 10.0)
                .unwrap();
        }
        // Flow 1 moves behind B: it leaves A's group (and its FSE) once the pair
        // 0–1 falls below 90 % of the window, and joins B's once 1–2 and 1–3 are
        // stable (its statistics need up to N·T to forget A). Flow 0 stays in A's
        // group, named by its smallest slot: flow 5 is behind A too (tracked, not
        // following), so the component {0, 5} still stands and flow 0's FSE remains,
        // now with flow 0 alone in it.
        drive(&mut h, 120, 320, [0, 1, 1, 1, 2, 0]);
        let g2: Vec<Option<GroupId>> = flows.iter().map(|&f| h.group_of(f)).collect();
        assert!(
            g2[1].is_some() && g2[1] == g2[2] && g2[2] == g2[3],
            "{g2:?}"
        );
        assert_eq!(g2[0], g[0], "{g2:?}");
        assert_eq!(h.members(g2[0].unwrap()), &flows[..1]);
        let (fg, _) = h.fse_mut(flows[0]).unwrap();
        assert_eq!(fg.fse().len(), 1, "flow 1 left A's FSE with its share");
        assert!(
            h.fse_mut(flows[1]).is_none(),
            "registers in B's at its next hook"
        );
        assert!(h.sbd().unwrap().coupling_changes() >= 2);
    }

    #[test]
    fn hooks_reach_the_host_only_while_it_is_lent() {
        let mut home = HostHome::default();
        let (flow, _) = home
            .get_mut()
            .join(addr(1, 1), addr(2, 1), Some(GroupKey::Assigned(1)));
        let mut fc = FlowCc::new(Box::new(super::super::reno::Reno), Some(flow));
        let mut vars = CcState::new(10, 1448);
        {
            let mut cx = FlowCtx::new(&mut vars, fc.flow(), fc.lent.as_deref_mut());
            assert!(cx.host().is_none() && cx.group().is_none() && cx.stats_mut().is_none());
        }
        home.lend_to(&mut fc);
        assert_eq!(home.get().flow_count(), 0, "away while lent");
        {
            let mut cx = FlowCtx::new(&mut vars, fc.flow(), fc.lent.as_deref_mut());
            cx.stats_mut().unwrap().cwnd = cx.cwnd;
            cx.group_mut().unwrap().window = 5;
            cx.cwnd += 1; // the variables, through Deref
        }
        home.take_back(&mut fc);
        assert!(fc.lent.is_none());
        let h = home.get();
        assert_eq!(h.flow_stats(flow).unwrap().cwnd, 10);
        assert_eq!(h.group(h.group_of(flow).unwrap()).unwrap().window, 5);
        assert_eq!(vars.cwnd, 11);
        let mut alone = CcState::new(3, 1000);
        let cx = FlowCtx::alone(&mut alone);
        assert_eq!((cx.flow(), cx.group_id(), cx.cwnd), (None, None, 3));
    }
}

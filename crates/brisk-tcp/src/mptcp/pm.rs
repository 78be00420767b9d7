//! Path management, shaped like Linux's in-kernel path manager (`pm_kernel.c`, formerly
//! `pm_netlink.c`, with the shared helpers of `pm.c`), as decisions: the caller feeds
//! events (established, ADD_ADDR / echo / REMOVE_ADDR received, a join offered, a
//! subflow closed, time) and polls [`PmAction`]s (open a subflow, send ADD_ADDR or its
//! echo, send REMOVE_ADDR, close a subflow).
//!
//! - **Modes.** [`PmMode::Fullmesh`]: a subflow per (local, remote) address pair, the
//!   local addresses being the initial one and the endpoints flagged `subflow`, the
//!   remote ones the initial address and every accepted ADD_ADDR (Linux: endpoints with
//!   the `subflow fullmesh` flags). [`PmMode::NDiffPorts`]: `n` subflows in all over the
//!   initial address pair, each from its own source port (the out-of-tree v0.89
//!   `ndiffports` manager the seed's Linux had; upstream has no such mode).
//! - **Limits** ([`Limits`]): `subflows`, the additional subflows per connection (both
//!   opened and accepted joins, `mptcp_pm_allow_new_subflow`), and `add_addr_accepted`,
//!   the ADD_ADDRs acted on. Defaults are this kernel's (`ip mptcp limits show` in a
//!   fresh namespace: `add_addr_accepted 0 subflows 2`); each is at most 8
//!   (`MPTCP_PM_ADDR_MAX`; larger is "limit greater than maximum (8)").
//! - **Tables**, all fixed arrays: local endpoints and known remote addresses (8 each,
//!   `MPTCP_PM_ADDR_MAX`), subflow slots ([`MAX_SUBFLOWS`]), announcements awaiting their
//!   echo (8), and the action queue ([`ACTION_QUEUE`]); overflow is refused and counted.
//! - **ADD_ADDR retransmission** (`mptcp_pm_add_timer`, `mptcp_adjust_add_addr_timeout`
//!   in 6.18 — present in this 6.18 kernel's `/proc/kallsyms`): an announcement not
//!   echoed is re-sent after `min(largest subflow RTO, add_addr_timeout)` (the sysctl
//!   alone when no RTO is known; 0 disables), the first wait included
//!   (`mptcp_pm_alloc_anno_list` uses it too), the wait doubling each time, at most
//!   [`ADD_ADDR_RETRANS_MAX`] times.
//! - A received ADD_ADDR is always echoed (`mptcp_pm_add_addr_received`), and acted on
//!   only within the limits and if the address is new.

use super::{SubflowMask, MAX_SUBFLOWS};
use brisk_time::{Duration, Instant};
use std::fmt;
use std::net::IpAddr;

/// Linux's `MPTCP_PM_ADDR_MAX`: endpoints per namespace, and the largest limit.
pub const ADDR_MAX: usize = 8;
/// Linux's `ADD_ADDR_RETRANS_MAX`.
pub const ADD_ADDR_RETRANS_MAX: u8 = 3;
/// `net.mptcp.add_addr_timeout` default (120 s on this kernel).
pub const DEFAULT_ADD_ADDR_TIMEOUT: Duration = Duration::from_secs(120);
/// Pending actions held before the caller polls them.
pub const ACTION_QUEUE: usize = 32;

/// The path manager's limits (per connection, as Linux's per-namespace `limits`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Additional subflows (beyond the initial one), opened or accepted.
    pub subflows: u8,
    /// Received ADD_ADDRs acted on.
    pub add_addr_accepted: u8,
}

impl Default for Limits {
    /// This kernel's defaults (`ip mptcp limits show`: add_addr_accepted 0 subflows 2).
    fn default() -> Self {
        Limits {
            subflows: 2,
            add_addr_accepted: 0,
        }
    }
}

/// A configuration value out of range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmConfigError {
    Limit { field: &'static str, got: u8 },
    NDiffPorts { got: u8 },
    Endpoints { got: usize },
    DuplicateId { id: u8 },
}

impl fmt::Display for PmConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PmConfigError::Limit { field, got } => write!(
                f,
                "mptcp limit {field} = {got} out of range 0..={ADDR_MAX} (Linux: limit greater than maximum)"
            ),
            PmConfigError::NDiffPorts { got } => write!(
                f,
                "mptcp ndiffports = {got} out of range 1..={MAX_SUBFLOWS} subflows"
            ),
            PmConfigError::Endpoints { got } => write!(
                f,
                "mptcp endpoints: {got} given, at most {ADDR_MAX} (MPTCP_PM_ADDR_MAX)"
            ),
            PmConfigError::DuplicateId { id } => {
                write!(f, "mptcp endpoint id {id} given twice (ids 1..=255, unique)")
            }
        }
    }
}

impl std::error::Error for PmConfigError {}

/// An address with its MPTCP address id (0 is the connection's initial address) and
/// port (0: the connection's).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr {
    pub id: u8,
    pub ip: IpAddr,
    pub port: u16,
}

impl Addr {
    fn same_place(&self, o: &Addr) -> bool {
        self.ip == o.ip && self.port == o.port
    }
}

/// A local endpoint (`ip mptcp endpoint add ADDR id ID [signal] [subflow] [backup]`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LocalEndpoint {
    pub addr: Addr,
    /// Announce it to the peer with ADD_ADDR.
    pub signal: bool,
    /// Open subflows from it.
    pub subflow: bool,
    /// Subflows from it are backups.
    pub backup: bool,
}

/// How subflows are made.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmMode {
    Fullmesh,
    /// `n` subflows in all over the initial pair.
    NDiffPorts {
        n: u8,
    },
}

/// The path manager's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PmConfig {
    pub mode: PmMode,
    pub limits: Limits,
    /// Local endpoints (ids 1..=255, unique), at most [`ADDR_MAX`].
    pub endpoints: Vec<LocalEndpoint>,
    /// `net.mptcp.add_addr_timeout`: the longest wait before re-sending an ADD_ADDR;
    /// zero disables re-sending.
    pub add_addr_timeout: Duration,
}

impl Default for PmConfig {
    fn default() -> Self {
        PmConfig {
            mode: PmMode::Fullmesh,
            limits: Limits::default(),
            endpoints: Vec::new(),
            add_addr_timeout: DEFAULT_ADD_ADDR_TIMEOUT,
        }
    }
}

impl PmConfig {
    pub fn validate(&self) -> Result<(), PmConfigError> {
        for (field, got) in [
            ("subflows", self.limits.subflows),
            ("add_addr_accepted", self.limits.add_addr_accepted),
        ] {
            if usize::from(got) > ADDR_MAX {
                return Err(PmConfigError::Limit { field, got });
            }
        }
        if let PmMode::NDiffPorts { n } = self.mode {
            if n == 0 || usize::from(n) > MAX_SUBFLOWS {
                return Err(PmConfigError::NDiffPorts { got: n });
            }
        }
        if self.endpoints.len() > ADDR_MAX {
            return Err(PmConfigError::Endpoints {
                got: self.endpoints.len(),
            });
        }
        for (i, e) in self.endpoints.iter().enumerate() {
            if e.addr.id == 0 || self.endpoints[..i].iter().any(|o| o.addr.id == e.addr.id) {
                return Err(PmConfigError::DuplicateId { id: e.addr.id });
            }
        }
        Ok(())
    }
}

/// A decision for the caller to carry out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PmAction {
    /// Open a subflow with MP_JOIN from `local` to `remote`, in subflow slot `slot`
    /// (report failure with [`PathManager::on_subflow_closed`]).
    OpenSubflow {
        slot: usize,
        local: Addr,
        remote: Addr,
        backup: bool,
    },
    /// Send ADD_ADDR announcing `addr` (first time or a retransmission).
    AddAddr { addr: Addr },
    /// Echo a received ADD_ADDR.
    AddAddrEcho { addr: Addr },
    /// Send REMOVE_ADDR for local address `id`.
    RemoveAddr { id: u8 },
    /// Close the subflow in `slot` (its address went away).
    CloseSubflow { slot: usize },
}

/// Counters (Linux MIB in brackets).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PmStats {
    /// ADD_ADDR received [AddAddr].
    pub add_addr_rx: u64,
    /// ADD_ADDR not acted on: limit reached or address known.
    pub add_addr_ignored: u64,
    /// ADD_ADDR not acted on: the remote address table is full.
    pub add_addr_table_full: u64,
    /// Echoes received [EchoAdd] and echoes matching nothing announced.
    pub echo_rx: u64,
    pub echo_unknown: u64,
    /// ADD_ADDR re-sent by the timer [AddAddrTx retransmissions].
    pub add_addr_retrans: u64,
    /// REMOVE_ADDR received [RmAddr] and those naming no known address.
    pub rm_addr_rx: u64,
    pub rm_addr_unknown: u64,
    /// Joins refused at the subflow limit [JoinRejected].
    pub join_refused: u64,
    /// Actions dropped because the queue was full [AddAddrDrop for echoes].
    pub actions_dropped: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Slot {
    local: Addr,
    remote: Addr,
    /// Opened by the path manager or accepted (counted against `subflows`), not the
    /// initial subflow.
    extra: bool,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Announce {
    addr: Addr,
    retrans: u8,
    deadline: Option<Instant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Remote {
    addr: Addr,
    /// Came from an ADD_ADDR acted on (counts against `add_addr_accepted`).
    accepted: bool,
}

/// The path manager of one connection.
#[derive(Clone, Debug)]
pub struct PathManager {
    mode: PmMode,
    limits: Limits,
    add_addr_timeout: Duration,
    local: [Option<LocalEndpoint>; ADDR_MAX],
    announced: [bool; ADDR_MAX],
    /// Index 0: the initial remote address; the rest from ADD_ADDR.
    remote: [Option<Remote>; ADDR_MAX + 1],
    initial_local: Option<Addr>,
    slots: [Option<Slot>; MAX_SUBFLOWS],
    anno: [Option<Announce>; ADDR_MAX],
    /// The earliest of `anno`'s deadlines, kept by every change to them: the
    /// connection's `poll_timeout` asks for it after every call (each poll and
    /// input), and the scan over `anno` was a fifth of that.
    anno_next: Option<Instant>,
    extra_subflows: u8,
    add_addr_accepted: u8,
    actions: [Option<PmAction>; ACTION_QUEUE],
    head: usize,
    queued: usize,
    pub stats: PmStats,
}

impl PathManager {
    pub fn new(cfg: &PmConfig) -> Result<PathManager, PmConfigError> {
        cfg.validate()?;
        let mut local = [None; ADDR_MAX];
        for (slot, e) in local.iter_mut().zip(&cfg.endpoints) {
            *slot = Some(*e);
        }
        Ok(PathManager {
            mode: cfg.mode,
            limits: cfg.limits,
            add_addr_timeout: cfg.add_addr_timeout,
            local,
            announced: [false; ADDR_MAX],
            remote: [None; ADDR_MAX + 1],
            initial_local: None,
            slots: [None; MAX_SUBFLOWS],
            anno: [None; ADDR_MAX],
            anno_next: None,
            extra_subflows: 0,
            add_addr_accepted: 0,
            actions: [None; ACTION_QUEUE],
            head: 0,
            queued: 0,
            stats: PmStats::default(),
        })
    }

    fn push(&mut self, a: PmAction) -> bool {
        if self.queued >= ACTION_QUEUE {
            self.stats.actions_dropped += 1;
            return false;
        }
        self.actions[(self.head + self.queued) % ACTION_QUEUE] = Some(a);
        self.queued += 1;
        true
    }

    /// The next decision to carry out.
    pub fn poll_action(&mut self) -> Option<PmAction> {
        if self.queued == 0 {
            return None;
        }
        let a = self.actions[self.head].take();
        self.head = (self.head + 1) % ACTION_QUEUE;
        self.queued -= 1;
        a
    }

    /// The connection is established (MP_CAPABLE done) over `local` → `remote`, the
    /// initial subflow in slot 0. As `mptcp_pm_nl_fully_established` →
    /// `mptcp_pm_create_subflow_or_signal_addr`: announce the `signal` endpoints and
    /// open the mode's subflows. The client calls this; a server's path manager
    /// usually only announces (its endpoints have `signal`, not `subflow`). `max_rto`
    /// is the largest subflow RTO now (None if unknown): the first re-send wait is
    /// taken from it already, as `mptcp_pm_alloc_anno_list` calls
    /// `mptcp_adjust_add_addr_timeout`.
    pub fn on_established(
        &mut self,
        now: Instant,
        local: Addr,
        remote: Addr,
        max_rto: Option<Duration>,
    ) {
        let local = Addr { id: 0, ..local };
        let remote = Addr { id: 0, ..remote };
        self.initial_local = Some(local);
        self.remote[0] = Some(Remote {
            addr: remote,
            accepted: false,
        });
        self.slots[0] = Some(Slot {
            local,
            remote,
            extra: false,
        });
        for i in 0..ADDR_MAX {
            let Some(e) = self.local[i] else { continue };
            if e.signal && !self.announced[i] {
                self.announce(now, e.addr, max_rto);
                self.announced[i] = true;
            }
        }
        self.fill_subflows();
    }

    fn announce(&mut self, now: Instant, addr: Addr, max_rto: Option<Duration>) {
        let Some(free) = self.anno.iter().position(|a| a.is_none()) else {
            self.stats.actions_dropped += 1;
            return;
        };
        let wait = self.timeout(max_rto);
        self.anno[free] = Some(Announce {
            addr,
            retrans: 0,
            deadline: (!wait.is_zero()).then(|| now + wait),
        });
        self.anno_next = self.scan_anno();
        self.push(PmAction::AddAddr { addr });
    }

    /// `mptcp_adjust_add_addr_timeout`: the largest subflow RTO if known and smaller
    /// than the sysctl, else the sysctl.
    fn timeout(&self, max_rto: Option<Duration>) -> Duration {
        match max_rto {
            Some(r) if !r.is_zero() && r < self.add_addr_timeout => r,
            _ => self.add_addr_timeout,
        }
    }

    fn can_add_subflow(&self) -> bool {
        self.extra_subflows < self.limits.subflows && self.slots.iter().any(|s| s.is_none())
    }

    fn has_pair(&self, local: &Addr, remote: &Addr) -> bool {
        self.slots
            .iter()
            .flatten()
            .any(|s| s.local.same_place(local) && s.remote.same_place(remote))
    }

    fn open(&mut self, local: Addr, remote: Addr, backup: bool) -> bool {
        if !self.can_add_subflow() {
            return false;
        }
        let Some(slot) = self.slots.iter().position(|s| s.is_none()) else {
            return false;
        };
        if !self.push(PmAction::OpenSubflow {
            slot,
            local,
            remote,
            backup,
        }) {
            return false;
        }
        self.slots[slot] = Some(Slot {
            local,
            remote,
            extra: true,
        });
        self.extra_subflows += 1;
        true
    }

    /// Opens what the mode asks for and the limits allow.
    fn fill_subflows(&mut self) {
        let Some(init_local) = self.initial_local else {
            return;
        };
        match self.mode {
            PmMode::NDiffPorts { n } => {
                let Some(r) = self.remote[0] else { return };
                let open = self.slots.iter().flatten().count();
                for _ in open..usize::from(n) {
                    if !self.open(init_local, r.addr, false) {
                        break;
                    }
                }
            }
            PmMode::Fullmesh => {
                // Local addresses: the initial one, then `subflow` endpoints.
                for li in 0..=ADDR_MAX {
                    let (laddr, backup) = if li == 0 {
                        (init_local, false)
                    } else {
                        match self.local[li - 1] {
                            Some(e) if e.subflow => (e.addr, e.backup),
                            _ => continue,
                        }
                    };
                    for ri in 0..=ADDR_MAX {
                        let Some(r) = self.remote[ri] else { continue };
                        if self.has_pair(&laddr, &r.addr) {
                            continue;
                        }
                        if !self.open(laddr, r.addr, backup) {
                            return;
                        }
                    }
                }
            }
        }
    }

    /// An ADD_ADDR arrived (its HMAC already checked). Always echoed; acted on within
    /// the limits if the address is new (`mptcp_pm_nl_add_addr_received`).
    pub fn on_add_addr(&mut self, addr: Addr) {
        self.stats.add_addr_rx += 1;
        self.push(PmAction::AddAddrEcho { addr });
        let known = self
            .remote
            .iter()
            .flatten()
            .any(|r| r.addr.same_place(&addr) || (r.addr.id == addr.id && r.accepted));
        if known
            || self.add_addr_accepted >= self.limits.add_addr_accepted
            || self.extra_subflows >= self.limits.subflows
        {
            self.stats.add_addr_ignored += 1;
            return;
        }
        let Some(free) = self.remote.iter().skip(1).position(|r| r.is_none()) else {
            self.stats.add_addr_table_full += 1;
            return;
        };
        self.remote[free + 1] = Some(Remote {
            addr,
            accepted: true,
        });
        self.add_addr_accepted += 1;
        if self.initial_local.is_some() {
            match self.mode {
                PmMode::Fullmesh => self.fill_subflows(),
                // ndiffports has no use for other addresses; open one subflow to it.
                PmMode::NDiffPorts { .. } => {
                    if let Some(l) = self.initial_local {
                        self.open(l, addr, false);
                    }
                }
            }
        }
    }

    /// The peer echoed our ADD_ADDR: stop re-sending it (`mptcp_pm_del_add_timer`).
    pub fn on_add_addr_echo(&mut self, addr: Addr) {
        self.stats.echo_rx += 1;
        let hit = self
            .anno
            .iter_mut()
            .flatten()
            .find(|a| a.addr.id == addr.id && a.addr.same_place(&addr));
        match hit {
            Some(a) => a.deadline = None,
            None => self.stats.echo_unknown += 1,
        }
        self.anno_next = self.scan_anno();
    }

    /// When [`PathManager::on_timeout`] wants to run next.
    pub fn poll_timeout(&self) -> Option<Instant> {
        debug_assert_eq!(self.anno_next, self.scan_anno());
        self.anno_next
    }

    fn scan_anno(&self) -> Option<Instant> {
        self.anno.iter().flatten().filter_map(|a| a.deadline).min()
    }

    /// Time passed: re-send each ADD_ADDR not echoed by its deadline; `max_rto` is the
    /// largest RTO among the subflows (None if unknown).
    pub fn on_timeout(&mut self, now: Instant, max_rto: Option<Duration>) {
        let wait = self.timeout(max_rto);
        for i in 0..ADDR_MAX {
            let Some(mut a) = self.anno[i] else { continue };
            let Some(d) = a.deadline else { continue };
            if d > now {
                continue;
            }
            self.push(PmAction::AddAddr { addr: a.addr });
            self.stats.add_addr_retrans += 1;
            a.retrans += 1;
            a.deadline = (a.retrans < ADD_ADDR_RETRANS_MAX && !wait.is_zero())
                .then(|| now + wait * (1u32 << a.retrans));
            self.anno[i] = Some(a);
        }
        self.anno_next = self.scan_anno();
    }

    /// REMOVE_ADDR for remote address `id`: close its subflows, forget it (an accepted
    /// ADD_ADDR frees its place in the limit, as `mptcp_pm_nl_rm_addr_received`).
    pub fn on_rm_addr(&mut self, id: u8) {
        self.stats.rm_addr_rx += 1;
        let Some(ri) = self
            .remote
            .iter()
            .position(|r| r.is_some_and(|r| r.addr.id == id))
        else {
            self.stats.rm_addr_unknown += 1;
            return;
        };
        let r = self.remote[ri].take().unwrap_or_else(|| unreachable!());
        if r.accepted {
            self.add_addr_accepted = self.add_addr_accepted.saturating_sub(1);
        }
        for slot in 0..MAX_SUBFLOWS {
            if self.slots[slot].is_some_and(|s| s.remote.same_place(&r.addr)) {
                self.push(PmAction::CloseSubflow { slot });
                self.on_subflow_closed(slot);
            }
        }
    }

    /// Withdraw local endpoint `id`: REMOVE_ADDR if it was announced, close its
    /// subflows (`mptcp_pm_remove_addrs_and_subflows`).
    pub fn remove_local(&mut self, id: u8) {
        let Some(li) = self
            .local
            .iter()
            .position(|e| e.is_some_and(|e| e.addr.id == id))
        else {
            return;
        };
        let e = self.local[li].take().unwrap_or_else(|| unreachable!());
        if std::mem::take(&mut self.announced[li]) {
            self.push(PmAction::RemoveAddr { id });
        }
        for a in self.anno.iter_mut() {
            if a.is_some_and(|a| a.addr.id == id) {
                *a = None;
            }
        }
        self.anno_next = self.scan_anno();
        for slot in 0..MAX_SUBFLOWS {
            if self.slots[slot].is_some_and(|s| s.local.same_place(&e.addr)) {
                self.push(PmAction::CloseSubflow { slot });
                self.on_subflow_closed(slot);
            }
        }
    }

    /// A peer's MP_JOIN (HMAC checked) asks for a subflow `local` ← `remote`:
    /// `Some(slot)` to accept it there, `None` at the limit (Linux
    /// `mptcp_pm_allow_new_subflow`; the join is refused with a RST).
    pub fn allow_join(&mut self, local: Addr, remote: Addr) -> Option<usize> {
        let slot = self.slots.iter().position(|s| s.is_none());
        match slot {
            Some(slot) if self.extra_subflows < self.limits.subflows => {
                self.slots[slot] = Some(Slot {
                    local,
                    remote,
                    extra: true,
                });
                self.extra_subflows += 1;
                Some(slot)
            }
            _ => {
                self.stats.join_refused += 1;
                None
            }
        }
    }

    /// The subflow in `slot` closed (or its join failed): its place is free.
    pub fn on_subflow_closed(&mut self, slot: usize) {
        if let Some(s) = self.slots.get_mut(slot).and_then(Option::take) {
            if s.extra {
                self.extra_subflows = self.extra_subflows.saturating_sub(1);
            }
        }
    }

    /// The configured id of local endpoint `ip` (`mptcp_pm_get_local_id`).
    pub fn local_id(&self, ip: IpAddr) -> Option<u8> {
        self.local
            .iter()
            .flatten()
            .find(|e| e.addr.ip == ip)
            .map(|e| e.addr.id)
    }

    /// Whether a local endpoint has address id `id`.
    pub fn has_local_id(&self, id: u8) -> bool {
        self.local.iter().flatten().any(|e| e.addr.id == id)
    }

    /// Subflow slots in use.
    pub fn subflows(&self) -> SubflowMask {
        let mut m = SubflowMask::EMPTY;
        for (i, s) in self.slots.iter().enumerate() {
            if s.is_some() {
                m = m.with(i);
            }
        }
        m
    }

    /// Remote addresses known (the initial one included).
    pub fn remote_count(&self) -> usize {
        self.remote.iter().flatten().count()
    }

    /// ADD_ADDRs acted on, now.
    pub fn add_addr_accepted(&self) -> u8 {
        self.add_addr_accepted
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }
}

#[cfg(test)]
mod tests;

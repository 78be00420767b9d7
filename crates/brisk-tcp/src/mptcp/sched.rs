//! Schedulers: which subflow sends the next segment, as a pure decision over a slice of
//! [`SubflowView`]s (at most [`MAX_SUBFLOWS`]; later entries are ignored). Enum dispatch,
//! no allocation, no trait object on the per-packet path.
//!
//! - [`SchedKind::MinRtt`] — the lowest smoothed RTT among subflows with room in their
//!   window ("LowRTT", the default of the out-of-tree Linux MPTCP v0.89 the seed used,
//!   `get_available_subflow` in `mptcp_sched.c`), nothing more.
//! - [`SchedKind::LowRttRp`] — the same pick with **penalisation** and
//!   **opportunistic retransmission** (Raiciu et al., "How hard can it be? Designing and
//!   implementing a deployable multipath TCP", NSDI 2012 §4.2; the seed's "LowRTT + RP";
//!   v0.89's `mptcp_rcv_buf_optimization`, checked against its source in
//!   `net/mptcp/mptcp_sched.c`): [`MinRtt::opportunistic`], [`penalty`], run by the
//!   connection (`conn/mp.rs`, `mp_lowrtt_rp`) when nothing new may be sent.
//! - [`SchedKind::Linger`] — Linux 6.x's default (`mptcp_subflow_get_send`,
//!   `protocol.c`): the lowest *linger time*, bytes the subflow still has to push (in
//!   flight and queued) over its rate estimate, window room not required (TCP sends what
//!   the window allows). It has no penalisation and no opportunistic retransmission;
//!   data stuck on a subflow is re-injected only by the data-level retransmission timer
//!   (`mptcp_subflow_get_retrans`). This is how 6.x's default differs from the seed's.
//! - [`SchedKind::RoundRobin`] — one segment per turn over the subflows with room (v0.89
//!   `mptcp_rr.c` with `num_segments = 1`).
//! - [`SchedKind::Redundant`] — every subflow with room sends the segment (v0.89
//!   `mptcp_redundant.c`).
//! - [`SchedKind::Sttf`] — shortest transfer time first (the seed's main body §3.2.1):
//!   the subflow on which the segment would *arrive* first, counting data already
//!   queued on it and its window, even a subflow whose window is full; unsent data is
//!   re-assigned on every decision ([`sttf_reschedule`]); while the head waits for a
//!   busy faster subflow, a slower one with room sends from deeper in the backlog
//!   ([`sttf_ahead_offset`], [`SttfBook`]).
//!
//! **The STTF estimate** (the seed gives no formula: "the expected transfer time of
//! the packet over each path, including the time needed for data that has already been
//! queued on the corresponding path"; the spec's reading, §1.2.4 [INTERP], is
//! `(queued + pkt)/rate + RTT/2`). For a segment of `len` bytes on subflow `i` with
//! `F` bytes in flight and `Q` bytes queued on it unsent, delivery rate `R` (bytes/s,
//! Linux's `tcpi_delivery_rate`, `crate::rate`) and minimum RTT `m`:
//!
//! ```text
//!   T_i = m/2 + max(0, F + Q + len − R·m) / R
//! ```
//!
//! `R·m` is the path's pipe, the bytes it holds in flight without a standing queue;
//! what is in flight beyond it sits in the bottleneck's queue ahead of the segment, and
//! the subflow's unsent bytes and the segment itself join that queue; all of it drains
//! at `R`; then the one-way propagation delay `m/2`. The in-flight term is what makes
//! the estimate see the queue a subflow's own sends built: a 3G path whose window has
//! grown into a 3750-packet queue has room, yet a segment sent on it waits behind
//! seconds of data (MP-7b; the window-drain estimate below called it `srtt/2`).
//!
//! Before the subflow has a rate sample (or where the sampler does not run) the
//! estimate falls back to the fluid window-drain model with `R = cwnd/srtt` and
//! `m = srtt`, which is the formula above with the pipe taken to be the window:
//!
//! ```text
//!   T_i = srtt/2 + srtt · max(0, F + Q + len − cwnd) / cwnd
//! ```
//!
//! STTF is the RITE project's own (seed §3.2, which cites no paper and gives no
//! formula; nor does the spec); the estimate is brisk's. It shares the
//! completion-time idea of ECF (Lim, Nahum, Towsley, Gibbens, "ECF: An MPTCP path
//! scheduler to manage heterogeneous paths", ACM CoNEXT 2017), whose rule is different
//! (docs/mechanisms/mptcp.md). Departures: window growth during the wait (slow start
//! doubling) is not modelled, and a delivery rate measured in slow start is below the
//! path's capacity, both of which make STTF conservative about a slow-starting path;
//! serialisation time is folded into the rate term. A subflow with no RTT sample yet
//! counts as the slowest sampled one.
//!
//! Candidates (every kind): usable subflows not excluded by the caller; backup subflows
//! only when no non-backup subflow is usable (RFC 8684 §3.3.8; Linux keeps
//! `send_info[SSK_MODE_BACKUP]` apart the same way).

use super::{SubflowMask, MAX_SUBFLOWS};
use brisk_time::{Duration, Instant};
use std::fmt;
use std::str::FromStr;

/// What the scheduler sees of one subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SubflowView {
    /// Smoothed RTT; zero when there is no sample yet.
    pub srtt: Duration,
    /// Congestion window, bytes.
    pub cwnd: u32,
    /// Bytes in flight.
    pub in_flight: u32,
    /// Bytes assigned to this subflow and not yet sent.
    pub queued: u32,
    /// Maximum segment size, bytes.
    pub mss: u32,
    /// The subflow is a backup (MP_JOIN / MP_PRIO B bit).
    pub backup: bool,
    /// Estimated send rate, bytes per second (delivery or pacing rate); 0 unknown.
    /// The connection fills it with the subflow's delivery rate where the rate
    /// sampler runs (STTF turns it on), else 0.
    pub rate: u64,
    /// Minimum RTT (Linux `tcp_min_rtt`); zero when there is no sample yet.
    pub min_rtt: Duration,
    /// Established, not closing, not stale: may carry data.
    pub usable: bool,
    /// Congestion state Open (not in recovery or loss): penalisation touches only these.
    pub ca_open: bool,
}

impl SubflowView {
    /// Room in the window for one more segment, as v0.89's `mptcp_is_temp_unavailable`
    /// (used by its default, round-robin and redundant schedulers): in flight below
    /// the window, and what is already queued on the subflow unsent does not overfill
    /// the room left (`write_seq - snd_nxt > (cwnd - in_flight) · mss` means no).
    pub fn has_room(&self) -> bool {
        self.in_flight < self.cwnd && self.queued <= self.cwnd - self.in_flight
    }
}

/// The scheduler's answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pick {
    /// Send (or, for STTF and linger, queue) on this subflow.
    One(usize),
    /// Send a copy on each of these subflows (redundant).
    Many(SubflowMask),
    /// No subflow may take the segment now.
    None,
}

/// The scheduler kinds, as configured.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchedKind {
    /// Plain minimum RTT: the lowest-RTT subflow with room, nothing more.
    MinRtt,
    /// The seed's "LowRTT + RP": minimum RTT with v0.89's opportunistic
    /// retransmission and penalisation ([`MinRtt::opportunistic`]), which the
    /// connection runs when the peer's data-level window or the send buffer blocks.
    LowRttRp,
    Linger,
    RoundRobin,
    Redundant,
    Sttf,
}

impl SchedKind {
    pub const NAMES: &'static str = "minrtt, lowrtt+rp, linger, roundrobin, redundant, sttf";

    pub fn name(self) -> &'static str {
        match self {
            SchedKind::MinRtt => "minrtt",
            SchedKind::LowRttRp => "lowrtt+rp",
            SchedKind::Linger => "linger",
            SchedKind::RoundRobin => "roundrobin",
            SchedKind::Redundant => "redundant",
            SchedKind::Sttf => "sttf",
        }
    }
}

/// An unknown scheduler name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownScheduler(pub String);

impl fmt::Display for UnknownScheduler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown mptcp scheduler '{}' (expected one of {})",
            self.0,
            SchedKind::NAMES
        )
    }
}

impl std::error::Error for UnknownScheduler {}

impl FromStr for SchedKind {
    type Err = UnknownScheduler;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s {
            "minrtt" => SchedKind::MinRtt,
            "lowrtt+rp" => SchedKind::LowRttRp,
            "linger" => SchedKind::Linger,
            "roundrobin" => SchedKind::RoundRobin,
            "redundant" => SchedKind::Redundant,
            "sttf" => SchedKind::Sttf,
            _ => return Err(UnknownScheduler(s.to_string())),
        })
    }
}

/// A scheduler with its state.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scheduler {
    MinRtt(MinRtt),
    Linger,
    RoundRobin { next: usize },
    Redundant,
    Sttf(SttfBook),
}

impl Scheduler {
    pub fn new(kind: SchedKind) -> Scheduler {
        match kind {
            SchedKind::MinRtt => Scheduler::MinRtt(MinRtt::default()),
            SchedKind::LowRttRp => Scheduler::MinRtt(MinRtt {
                rp: true,
                ..MinRtt::default()
            }),
            SchedKind::Linger => Scheduler::Linger,
            SchedKind::RoundRobin => Scheduler::RoundRobin { next: 0 },
            SchedKind::Redundant => Scheduler::Redundant,
            SchedKind::Sttf => Scheduler::Sttf(SttfBook::default()),
        }
    }

    pub fn kind(&self) -> SchedKind {
        match self {
            Scheduler::MinRtt(m) if m.rp => SchedKind::LowRttRp,
            Scheduler::MinRtt(_) => SchedKind::MinRtt,
            Scheduler::Linger => SchedKind::Linger,
            Scheduler::RoundRobin { .. } => SchedKind::RoundRobin,
            Scheduler::Redundant => SchedKind::Redundant,
            Scheduler::Sttf(_) => SchedKind::Sttf,
        }
    }

    /// What the scheduler did beyond picking (penalties, opportunistic and
    /// out-of-order sends), for counters and experiments.
    pub fn stats(&self) -> SchedStats {
        match self {
            Scheduler::MinRtt(m) => m.stats,
            Scheduler::Sttf(b) => b.stats,
            _ => SchedStats::default(),
        }
    }

    /// STTF holds no run sent ahead of the data-level cursor (always true for the
    /// other schedulers).
    pub fn ahead_empty(&self) -> bool {
        match self {
            Scheduler::Sttf(b) => b.is_empty(),
            _ => true,
        }
    }

    /// The caller's clock, passed on every input and poll: the connection's fill
    /// loop has no `now` of its own, and LowRTT+RP's once-per-RTT penalty needs one.
    pub fn tick(&mut self, now: Instant) {
        if let Scheduler::MinRtt(m) = self {
            m.now = Some(now);
        }
    }

    /// Which subflow takes the next segment of `len` bytes; subflows in `exclude` are
    /// not considered (a re-injection excludes the subflow that failed).
    pub fn pick(&mut self, views: &[SubflowView], len: u32, exclude: SubflowMask) -> Pick {
        let views = &views[..views.len().min(MAX_SUBFLOWS)];
        let cand = candidates(views, exclude);
        match self {
            Scheduler::MinRtt(_) => min_rtt(views, cand).map_or(Pick::None, Pick::One),
            Scheduler::Linger => argmin(views, cand, linger_key).map_or(Pick::None, Pick::One),
            Scheduler::RoundRobin { next } => {
                let n = views.len();
                for k in 0..n {
                    let i = (*next + k) % n;
                    if cand.contains(i) && views[i].has_room() {
                        *next = (i + 1) % n;
                        return Pick::One(i);
                    }
                }
                Pick::None
            }
            Scheduler::Redundant => {
                let mut m = SubflowMask::EMPTY;
                for i in cand.iter().filter(|&i| views[i].has_room()) {
                    m = m.with(i);
                }
                if m.is_empty() {
                    Pick::None
                } else {
                    Pick::Many(m)
                }
            }
            Scheduler::Sttf(_) => sttf_pick(views, cand, exclude, len),
        }
    }
}

/// Usable, not excluded; backups only when no non-backup subflow is usable.
pub fn candidates(views: &[SubflowView], exclude: SubflowMask) -> SubflowMask {
    let (mut active, mut backup) = (SubflowMask::EMPTY, SubflowMask::EMPTY);
    for (i, v) in views.iter().enumerate().take(MAX_SUBFLOWS) {
        if !v.usable || exclude.contains(i) {
            continue;
        }
        if v.backup {
            backup = backup.with(i);
        } else {
            active = active.with(i);
        }
    }
    if active.is_empty() {
        backup
    } else {
        active
    }
}

/// The largest sampled RTT among the candidates (what an unsampled subflow counts as).
fn slowest(views: &[SubflowView], cand: SubflowMask) -> Duration {
    cand.iter()
        .map(|i| views[i].srtt)
        .max()
        .unwrap_or(Duration::ZERO)
}

fn rtt_or(v: &SubflowView, slow: Duration) -> Duration {
    if v.srtt.is_zero() {
        slow
    } else {
        v.srtt
    }
}

/// Index of the smallest key among the candidates; ties to the lowest index.
fn argmin<K: Ord>(
    views: &[SubflowView],
    cand: SubflowMask,
    key: impl Fn(&SubflowView) -> K,
) -> Option<usize> {
    let mut best: Option<(K, usize)> = None;
    for i in cand.iter() {
        let k = key(&views[i]);
        if best.as_ref().is_none_or(|(b, _)| k < *b) {
            best = Some((k, i));
        }
    }
    best.map(|(_, i)| i)
}

/// Minimum RTT among candidates with room.
fn min_rtt(views: &[SubflowView], cand: SubflowMask) -> Option<usize> {
    let slow = slowest(views, cand);
    let mut room = SubflowMask::EMPTY;
    for i in cand.iter().filter(|&i| views[i].has_room()) {
        room = room.with(i);
    }
    argmin(views, room, |v| rtt_or(v, slow))
}

/// Linux 6.x's linger time, `(in flight + queued) << 32 / rate`; the rate falls back
/// to `cwnd / srtt` (what `sk_pacing_rate` is built from) and a subflow with no rate
/// at all lingers 0 (it has nothing measured against it yet).
pub fn linger_key(v: &SubflowView) -> u128 {
    let bytes = u128::from(v.in_flight) + u128::from(v.queued);
    let rate = if v.rate > 0 {
        u128::from(v.rate)
    } else if !v.srtt.is_zero() {
        u128::from(v.cwnd) * 1_000_000_000 / v.srtt.as_nanos().max(1)
    } else {
        0
    };
    (bytes << 32).checked_div(rate).unwrap_or(0)
}

/// The STTF estimate of the module docs, in nanoseconds; `slow` stands in for a missing
/// RTT sample. A subflow with no window at all never wins. With a delivery rate: the
/// bytes ahead beyond the pipe (rate × minimum RTT) drained at the rate, plus half the
/// minimum RTT; without one: the window-drain model.
pub fn sttf_time(v: &SubflowView, len: u32, slow: Duration) -> u128 {
    if v.cwnd == 0 {
        return u128::MAX;
    }
    let rtt = rtt_or(v, slow).as_nanos();
    let ahead = u128::from(v.in_flight) + u128::from(v.queued) + u128::from(len);
    if v.rate == 0 || v.srtt.is_zero() {
        let excess = ahead.saturating_sub(u128::from(v.cwnd));
        return rtt / 2 + rtt * excess / u128::from(v.cwnd);
    }
    let base = if v.min_rtt.is_zero() {
        rtt
    } else {
        v.min_rtt.as_nanos().min(rtt)
    };
    let rate = u128::from(v.rate);
    let pipe = rate * base / 1_000_000_000;
    base / 2 + ahead.saturating_sub(pipe) * 1_000_000_000 / rate
}

impl SubflowView {
    /// Window full: what is in flight and queued fills the window. A subflow the
    /// connection marks not usable only because of this (`conn/mp.rs` sets `usable`
    /// from the room left in the window) is still a place STTF may wait for.
    pub fn busy(&self) -> bool {
        !self.srtt.is_zero()
            && self.cwnd > 0
            && u64::from(self.in_flight) + u64::from(self.queued) >= u64::from(self.cwnd)
    }
}

/// The subflows STTF weighs: the candidates, and the *busy* ones ([`SubflowView::busy`])
/// not excluded, backups among them only when no non-backup subflow is a candidate or
/// busy.
pub fn sttf_set(views: &[SubflowView], cand: SubflowMask, exclude: SubflowMask) -> SubflowMask {
    let views = &views[..views.len().min(MAX_SUBFLOWS)];
    let waitable = |i: usize, v: &SubflowView| !exclude.contains(i) && (v.usable || v.busy());
    let active = views
        .iter()
        .enumerate()
        .any(|(i, v)| !v.backup && waitable(i, v));
    let mut set = cand;
    for (i, v) in views.iter().enumerate() {
        if !v.usable && v.busy() && !exclude.contains(i) && (!v.backup || !active) {
            set = set.with(i);
        }
    }
    if active {
        // Candidates may be backups only when nothing active is usable; an active
        // busy subflow outranks them (RFC 8684 §3.3.8).
        for i in set.iter() {
            if views[i].backup {
                set = SubflowMask(set.0 & !(1 << i));
            }
        }
    }
    set
}

/// STTF's decision for the next segment (`len` capped at each subflow's MSS: the seed
/// schedules per packet). The least [`sttf_time`] over [`sttf_set`]; if that subflow
/// is busy rather than a candidate, the segment waits for it: `Pick::None`, and the
/// data stays at the data level, which is where STTF's assignment to a full subflow
/// leaves it until the window opens (the caller asks again on every ACK). Without
/// this, a connection that offers only subflows with room (as `conn/mp.rs` does) made
/// STTF pick among those alone, which is min-RTT with another tie-break: the slow path
/// took data whenever the fast one's window was full.
fn sttf_pick(views: &[SubflowView], cand: SubflowMask, exclude: SubflowMask, len: u32) -> Pick {
    let set = sttf_set(views, cand, exclude);
    let slow = slowest(views, set);
    match argmin(views, set, |v| sttf_time(v, len.min(v.mss.max(1)), slow)) {
        Some(i) if cand.contains(i) => Pick::One(i),
        _ => Pick::None,
    }
}

/// STTF's re-scheduling of unsent data: the `queued` of every view is cleared and the
/// unsent segments (lengths in data order) are assigned again one by one, each to the
/// subflow with the least [`sttf_time`] given the segments assigned before it;
/// `assign(k, i)` reports segment `k` going to subflow `i` (the caller moves it). No
/// allocation; O(segments × subflows) — the caller bounds the unsent data it passes.
pub fn sttf_reschedule(
    views: &mut [SubflowView],
    segs: impl IntoIterator<Item = u32>,
    exclude: SubflowMask,
    mut assign: impl FnMut(usize, usize),
) {
    let n = views.len().min(MAX_SUBFLOWS);
    let views = &mut views[..n];
    for v in views.iter_mut() {
        v.queued = 0;
    }
    let cand = candidates(views, exclude);
    let slow = slowest(views, cand);
    for (k, len) in segs.into_iter().enumerate() {
        let Some(i) = argmin(views, cand, |v| sttf_time(v, len, slow)) else {
            return;
        };
        views[i].queued = views[i].queued.saturating_add(len);
        assign(k, i);
    }
}

/// Most runs STTF keeps sent ahead of the in-order cursor at once (a run per
/// out-of-order decision; more would only follow the slow path deeper into the
/// backlog, which the window already bounds).
pub const AHEAD_MAX: usize = 8;

/// Data-level bytes `[start, end)` (offsets in the data-level send stream) that STTF
/// sent on a subflow ahead of the in-order cursor; `tag` names the subflow (the
/// caller's stable key: indices shift when subflows leave).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AheadRun {
    pub start: u64,
    pub end: u64,
    pub tag: u64,
}

/// STTF's out-of-order book (the seed's "reschedule unsent data", main body
/// §3.2.1): the runs sent ahead of the data-level cursor, sorted and disjoint, every
/// one starting after the cursor. The in-order fill skips them; a run whose subflow
/// left is dropped and its bytes go out again in order. Bounded by [`AHEAD_MAX`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SttfBook {
    runs: [AheadRun; AHEAD_MAX],
    len: usize,
    pub stats: SchedStats,
}

impl SttfBook {
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn runs(&self) -> &[AheadRun] {
        &self.runs[..self.len]
    }

    /// Drops the runs whose subflow `alive` no longer holds; returns how many.
    pub fn retain(&mut self, alive: impl Fn(u64) -> bool) -> usize {
        let mut k = 0;
        for i in 0..self.len {
            if alive(self.runs[i].tag) {
                self.runs[k] = self.runs[i];
                k += 1;
            }
        }
        let dropped = self.len - k;
        self.len = k;
        self.stats.ahead_dropped += dropped as u64;
        dropped
    }

    /// The in-order cursor `nxt` moved past every run it has reached; those runs
    /// leave the book. Returns the new cursor.
    pub fn skip(&mut self, mut nxt: u64) -> u64 {
        let mut k = 0;
        while k < self.len && self.runs[k].start <= nxt {
            nxt = nxt.max(self.runs[k].end);
            k += 1;
        }
        self.runs.copy_within(k..self.len, 0);
        self.len -= k;
        nxt
    }

    /// Where the first run starts (after [`SttfBook::skip`], after the cursor).
    pub fn next_start(&self) -> Option<u64> {
        self.runs().first().map(|r| r.start)
    }

    /// The offset of the `k`-th unassigned byte at or after `nxt` (bytes in runs
    /// skipped), and where the unassigned stretch holding it ends (the next run's
    /// start, `u64::MAX` when none follows).
    pub fn locate(&self, nxt: u64, k: u64) -> (u64, u64) {
        let (mut pos, mut left) = (nxt, k);
        for r in self.runs() {
            let gap = r.start.saturating_sub(pos);
            if left < gap {
                return (pos + left, r.start);
            }
            left -= gap;
            pos = pos.max(r.end);
        }
        (pos.saturating_add(left), u64::MAX)
    }

    /// Records a run; false (nothing recorded) when the book is full or the run is
    /// empty or overlaps one held.
    pub fn insert(&mut self, run: AheadRun) -> bool {
        if self.len == AHEAD_MAX || run.start >= run.end {
            return false;
        }
        let at = self.runs().partition_point(|r| r.end <= run.start);
        if at < self.len && self.runs[at].start < run.end {
            return false;
        }
        self.runs.copy_within(at..self.len, at + 1);
        self.runs[at] = run;
        self.len += 1;
        self.stats.ahead_runs += 1;
        self.stats.ahead_bytes += run.end - run.start;
        true
    }
}

/// STTF's out-of-order placement for subflow `j` (a candidate with room), when the
/// head of the backlog waits for a busy faster subflow ([`sttf_pick`] said
/// `Pick::None`): how many unassigned backlog bytes, in data order, STTF's per-segment
/// assignment ([`sttf_reschedule`]'s rule: each segment to the least [`sttf_time`]
/// given those before it, ties to the lower index) puts on the other subflows before
/// the first segment it puts on `j`. Each other subflow's times grow with the
/// segments queued on it, so the count is, per subflow, the segments whose time beats
/// `j`'s first (a binary search on that monotone sequence: O(subflows · log), no
/// per-segment loop). `j`'s time stays flat while its window has room, so the
/// segments after that offset go to `j` for as long as its room lasts. `None` when
/// the offset reaches `limit` (the unassigned bytes the window allows).
pub fn sttf_ahead_offset(
    views: &[SubflowView],
    j: usize,
    exclude: SubflowMask,
    limit: u64,
) -> Option<u64> {
    let views = &views[..views.len().min(MAX_SUBFLOWS)];
    let cand = candidates(views, exclude);
    if !cand.contains(j) {
        return None;
    }
    let set = sttf_set(views, cand, exclude);
    let slow = slowest(views, set);
    let vj = views[j];
    let tj = sttf_time(&vj, vj.mss.max(1), slow);
    let mut total = 0u64;
    for i in set.iter().filter(|&i| i != j) {
        let v = views[i];
        let l = u64::from(v.mss.max(1));
        // Does the `m`-th further segment on `i` come before `j`'s first?
        let before = |m: u64| -> bool {
            let mut w = v;
            w.queued = (u64::from(w.queued) + m * l).min(u64::from(u32::MAX)) as u32;
            let t = sttf_time(&w, l as u32, slow);
            t < tj || (t == tj && i < j)
        };
        if !before(0) {
            continue;
        }
        // The count is at most limit / l (beyond that the answer is None anyway).
        let cap = limit / l + 1;
        let (mut lo, mut hi) = (0u64, 1u64);
        while before(hi) {
            lo = hi;
            if hi >= cap {
                return None;
            }
            hi = (hi * 2).min(cap);
        }
        // before(lo) is true, before(hi) false.
        while hi - lo > 1 {
            let mid = lo + (hi - lo) / 2;
            if before(mid) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        total = total.saturating_add(hi * l);
        if total >= limit {
            return None;
        }
    }
    Some(total)
}

/// Minimum-RTT state: per subflow, when it last penalised a slower one (v0.89 keeps
/// `last_rbuf_opti` in each subflow's `defsched_priv`, not per connection).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MinRtt {
    last_penalised: [Option<Instant>; MAX_SUBFLOWS],
    /// Retransmission and penalisation on ("lowrtt+rp"); off, plain min-RTT.
    pub rp: bool,
    /// The last clock the caller passed ([`Scheduler::tick`]).
    pub now: Option<Instant>,
    pub stats: SchedStats,
}

/// Counts of what a scheduler did beyond picking a subflow.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SchedStats {
    /// LowRTT+RP: slow subflows whose window was halved.
    pub penalised: u64,
    /// LowRTT+RP: opportunistic retransmissions of the data-level head, and bytes.
    pub opportunistic: u64,
    pub opportunistic_bytes: u64,
    /// STTF: runs sent out of data order on a subflow ahead of the in-order cursor,
    /// and bytes.
    pub ahead_runs: u64,
    pub ahead_bytes: u64,
    /// STTF: ahead runs dropped because their subflow left (their bytes are sent
    /// again in order).
    pub ahead_dropped: u64,
}

/// What [`MinRtt::opportunistic`] decided.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Opportunistic {
    /// Send the segment at the data-level SND.UNA again on this subflow.
    pub retransmit_on: Option<usize>,
    /// Penalise this subflow: the caller sets its window and ssthresh to [`penalty`]'s
    /// answer through its congestion control.
    pub penalise: Option<usize>,
}

/// v0.89's penalty on a slower subflow (`mptcp_rcv_buf_optimization`, in segments
/// there, in bytes here): the window halved, at least one segment; ssthresh halved, at
/// least two segments, but only if the subflow is not in slow start (window at or
/// above ssthresh before the cut). Returns `(cwnd, ssthresh)`.
pub fn penalty(cwnd: u32, ssthresh: u32, mss: u32) -> (u32, u32) {
    let mss = mss.max(1);
    let new_ssthresh = if cwnd >= ssthresh {
        (ssthresh / 2).max(2 * mss)
    } else {
        ssthresh
    };
    ((cwnd / 2).max(mss), new_ssthresh)
}

impl MinRtt {
    /// Subflow `i` was created at `now`: as v0.89's `defsched_init`, it may not
    /// penalise before one of its RTTs has passed. A subflow never started this way
    /// may penalise at once.
    pub fn subflow_started(&mut self, i: usize, now: Instant) {
        if let Some(t) = self.last_penalised.get_mut(i) {
            *t = Some(now);
        }
    }

    /// The head-of-line segment (the data-level SND.UNA, sent and not yet
    /// data-acknowledged, carried so far by the subflows in `carriers`) may be what
    /// blocks the receiver. v0.89's `mptcp_rcv_buf_optimization` (NSDI 2012 §4.2),
    /// run for the minimum-RTT subflow with room (the "fast" one, what
    /// `get_available_subflow` returns):
    /// - `penal` is true when v0.89 may penalise: the peer's data-level window blocks
    ///   the next new segment (`mptcp_next_segment`, `penal = 1`), or the send buffer
    ///   is full (`!sk_stream_memory_free`). False (the application waits for send
    ///   space, `__mptcp_next_segment`, `penal = 0`, buffer not full): retransmission
    ///   only.
    /// - **penalise** only the *first* carrier other than the fast subflow (v0.89
    ///   breaks after it; brisk walks subflows in index order, v0.89 its connection
    ///   list), and only if its srtt is larger than the fast one's and its congestion
    ///   state is Open; at most once per srtt of the fast subflow (per-subflow time,
    ///   updated only when a penalty is given).
    /// - **retransmit opportunistically** on the fast subflow if it has not carried
    ///   the segment: walking the carriers, the first whose window (after this call's
    ///   penalty) is at most 4 segments means yes, the first with srtt at most 4× the
    ///   fast one's means no; when every carrier's srtt exceeds 4× the fast one's, yes.
    pub fn opportunistic(
        &mut self,
        now: Instant,
        views: &[SubflowView],
        carriers: SubflowMask,
        penal: bool,
    ) -> Opportunistic {
        let views = &views[..views.len().min(MAX_SUBFLOWS)];
        let cand = candidates(views, SubflowMask::EMPTY);
        let Some(fast) = min_rtt(views, cand) else {
            return Opportunistic::default();
        };
        let f = views[fast];
        let mut out = Opportunistic::default();
        let others = || carriers.iter().filter(|&j| j != fast && j < views.len());
        let due =
            self.last_penalised[fast].is_none_or(|t| now.saturating_duration_since(t) >= f.srtt);
        if penal && due {
            if let Some(j) = others().next() {
                if f.srtt < views[j].srtt && views[j].ca_open {
                    out.penalise = Some(j);
                    self.last_penalised[fast] = Some(now);
                }
            }
        }
        if !carriers.contains(fast) {
            let mut retrans = false;
            for j in others() {
                let v = views[j];
                let mss = v.mss.max(1);
                let cwnd = if out.penalise == Some(j) {
                    penalty(v.cwnd, u32::MAX, mss).0
                } else {
                    v.cwnd
                };
                if cwnd <= 4 * mss {
                    retrans = true;
                    break;
                }
                if f.srtt * 4 >= v.srtt {
                    retrans = false;
                    break;
                }
                retrans = true;
            }
            if retrans {
                out.retransmit_on = Some(fast);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;

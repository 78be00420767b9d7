//! The discrete-event core: integer-nanosecond virtual time, nodes addressed by index,
//! per-node routing by destination IP, and a wake-up heap keyed by
//! `(time, insertion sequence)` so that simultaneous events always run in the same order.
//!
//! Packets move between nodes without delay (links model their own delay as elements),
//! so the only scheduled events are node wake-ups derived from `poll_timeout()`. Each
//! node has at most one *valid* heap entry; an entry is stale if it does not match the
//! node's recorded `(time, seq)` and is skipped when popped (lazy invalidation). A later
//! wish is never pushed while an earlier entry is pending: that entry fires early, the
//! node is re-checked and rescheduled. Stale entries can only come from moves to an
//! earlier time and are purged when the heap outgrows the node count, so the heap stays
//! bounded. With few nodes (a dumbbell has five) there is no heap: the next wake-up is
//! the least valid `(time, seq)` found by scanning the nodes' entries, which is the
//! entry the heap would pop, so events run in the same order.

use brisk_net::Packet;
use brisk_time::Instant;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::hash::{BuildHasherDefault, Hasher};
use std::net::IpAddr;

/// FxHash (rustc's): a multiply-rotate hash with no key. Route lookups run once per
/// packet per hop, and SipHash was a measurable share of them; the keys are the
/// scenario's own addresses (nothing adversarial), and the result is the same in
/// every run, so iteration order could not make runs differ either.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl FxHasher {
    const K: u64 = 0x517c_c1b7_2722_0a95;
    fn add(&mut self, w: u64) {
        self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(Self::K);
    }
}

impl Hasher for FxHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            self.add(u64::from_le_bytes(c.try_into().expect("8 bytes")));
        }
        let mut last = [0u8; 8];
        let rest = chunks.remainder();
        if !rest.is_empty() {
            last[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(last));
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.add(u64::from(i));
    }
    fn write_u16(&mut self, i: u16) {
        self.add(u64::from(i));
    }
    fn write_u32(&mut self, i: u32) {
        self.add(u64::from(i));
    }
    fn write_u64(&mut self, i: u64) {
        self.add(i);
    }
    fn write_usize(&mut self, i: usize) {
        self.add(i as u64);
    }
    fn finish(&self) -> u64 {
        // A multiply carries bits only upwards, so without this the low bits (the
        // table's bucket index) ignore the high bytes of the last word: IPv6 host
        // addresses that differ only there (2001:db8:19::n) all collided, making a
        // 10^5-host route table quadratic to build and linear to search. MurmurHash3's
        // fmix64 folds the high bits down.
        let mut h = self.0;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h
    }
}

/// A `HashMap` hasher builder for [`FxHasher`].
pub type FxBuild = BuildHasherDefault<FxHasher>;

/// Index of a node in the engine.
pub type NodeId = usize;

/// Recycled packet buffers, so the steady state allocates nothing per packet: full
/// size ones to build packets in, and small ones that short packets move to.
#[derive(Debug, Default)]
pub struct BufPool {
    free: Vec<Vec<u8>>,
    small: Vec<Vec<u8>>,
}

impl BufPool {
    /// Buffers kept for reuse; beyond this they are freed.
    const MAX_FREE: usize = 8192;
    /// Capacity of a fresh buffer: a full Ethernet-MTU IP packet (1500 B). Queued and
    /// in-flight packets hold their buffers, so with many open flows (RC3's
    /// low-priority copies of every flow's send buffer) the capacity is most of the
    /// run's memory: 1536 cost a quarter less than 2048, and 1500 another 2 % (malloc
    /// blocks of 1520 B instead of 1552 B). A larger packet (a bigger MTU) grows its
    /// buffer, which then stays in the pool.
    const BUF_CAP: usize = 1500;
    /// Capacity of a small buffer: a pure ACK, SYN or FIN with options (IPv6 with
    /// timestamps and three SACK blocks is 104 B). With 10^5 open flows a sixth of the
    /// packets in flight are these, and a full-size buffer each cost 1.4 KB more.
    const SMALL_CAP: usize = 128;

    /// An empty buffer, recycled if possible.
    pub fn take(&mut self) -> Vec<u8> {
        self.free
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(Self::BUF_CAP))
    }

    /// `buf`'s bytes in a small buffer if they fit one (and `buf` back to the pool),
    /// else `buf`: for a host's packet before it is sent on, so that a short packet
    /// queued or in flight does not hold a full-size buffer. Contents are unchanged.
    ///
    /// Inline: two thirds of a bulk flow's packets are full-size and keep their
    /// buffer, decided without a call (it cost about 50 instructions a packet).
    #[inline]
    pub fn fit(&mut self, buf: Vec<u8>) -> Vec<u8> {
        if buf.len() > Self::SMALL_CAP || buf.capacity() <= Self::SMALL_CAP {
            return buf;
        }
        self.move_to_small(buf)
    }

    #[inline(never)]
    fn move_to_small(&mut self, buf: Vec<u8>) -> Vec<u8> {
        let mut small = self
            .small
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(Self::SMALL_CAP));
        small.extend_from_slice(&buf);
        self.give(buf);
        small
    }

    /// Returns a buffer for reuse (to the small ones if it is one).
    pub fn give(&mut self, mut buf: Vec<u8>) {
        let list = if buf.capacity() >= Self::BUF_CAP {
            &mut self.free
        } else if buf.capacity() >= Self::SMALL_CAP {
            &mut self.small
        } else {
            return;
        };
        if list.len() < Self::MAX_FREE {
            buf.clear();
            list.push(buf);
        }
    }
}

/// What nodes get besides `now`: the buffer pool, the run-wide packet-id counter and
/// a scratch buffer.
#[derive(Debug, Default)]
pub struct Ctx {
    pub pool: BufPool,
    next_packet_id: u64,
    /// Scratch space any node may use within one call (apps read into it). One per run
    /// rather than per host, since a run with 10^5 hosts cannot afford 64 KB each.
    scratch: Vec<u8>,
    /// The run's samples so far and the hosts changed since they were last sampled
    /// (`crate::host::Sampling`).
    pub(crate) sampling: crate::host::Sampling,
}

impl Ctx {
    /// The run's scratch buffer, at least `len` bytes (its contents are whatever the
    /// last user left).
    pub fn scratch(&mut self, len: usize) -> &mut [u8] {
        if self.scratch.len() < len {
            self.scratch.resize(len, 0);
        }
        &mut self.scratch[..len]
    }

    /// A fresh run-unique packet id.
    pub fn next_packet_id(&mut self) -> u64 {
        self.next_packet_id = self.next_packet_id.wrapping_add(1);
        self.next_packet_id
    }
}

/// Anything the engine can drive: a host or a network element.
///
/// Contract: after `handle_packet` or `handle_timeout`, the engine calls `poll_packet`
/// until it returns `None`, then reads `poll_timeout`.
pub trait Node {
    fn handle_packet(&mut self, now: Instant, pkt: Packet, ctx: &mut Ctx);
    fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet>;
    /// Called when `poll_timeout()` has come (never early).
    fn handle_timeout(&mut self, now: Instant, ctx: &mut Ctx);
    fn poll_timeout(&self) -> Option<Instant>;

    /// Takes in the pure delay lines of `delay_ns` (each holding at most `limit`
    /// packets) that [`Engine::fold_delay_line`] folds into this node; false (the
    /// default) if the node cannot, and the line stays a node of its own.
    fn fold_line(&mut self, _delay_ns: u64, _limit: usize) -> bool {
        false
    }

    /// A packet handed at `now` to a delay line of `delay_ns` folded into this node:
    /// it arrives `delay_ns` later, and the node takes it then, lazily. The engine
    /// polls no packet after this call (nothing can leave before the arrival), only
    /// `poll_timeout`. Only called on nodes whose `fold_line` accepted that delay.
    fn handle_delayed(&mut self, _now: Instant, _delay_ns: u64, _pkt: Packet) {
        debug_assert!(false, "handle_delayed on a node that folds no line");
    }

    /// Takes every folded arrival up to `now`, so that the node's state is what it
    /// would be had the lines delivered them (`Engine::run_until`'s end, before a
    /// caller reads or changes nodes). Never makes a packet due by `now`.
    fn settle(&mut self, _now: Instant) {}
}

/// Watches every packet hand-over (for trace hashes and pcaps).
pub trait Observer {
    fn on_packet(&mut self, now: Instant, from: NodeId, to: NodeId, pkt: &Packet);
}

impl Observer for () {
    fn on_packet(&mut self, _: Instant, _: NodeId, _: NodeId, _: &Packet) {}
}

/// Next hop by destination address, with an optional default.
///
/// Most nodes route by their default alone (hosts, access links) or by a handful of
/// addresses (a dumbbell's bottleneck: one): those entries are searched in a short
/// list, since hashing an address cost more than comparing it, and a node with no
/// entries does not even read the packet's address. Tables that outgrow the list
/// (a workload's routers) move to a hash map.
///
/// Two rarer kinds of entry live out of the common path, in [`MultiRoutes`]: a
/// multi-homed host's routes by *source* address (each address leaves on its own
/// link), and equal-cost groups, from which a packet's next hop is picked by the hash
/// of its 5-tuple (ECMP).
#[derive(Clone, Debug, Default)]
pub struct RouteTable {
    /// The entries while there are at most `SMALL_ROUTES` (empty once `by_dst` is used).
    small: Vec<(IpAddr, NodeId)>,
    by_dst: HashMap<IpAddr, NodeId, FxBuild>,
    default: Option<NodeId>,
    /// Source routes and ECMP groups; `None` on almost every node, so the common
    /// lookup pays one test.
    multi: Option<Box<MultiRoutes>>,
}

/// A destination entry at or above this names ECMP group `entry - GROUP_BASE`.
const GROUP_BASE: NodeId = NodeId::MAX / 2;

/// Most next hops in one ECMP group (Linux's `fib_multipath` takes up to 256 nexthops
/// per route; a k = 32 fat tree needs 16).
pub const MAX_ECMP_WAYS: usize = 256;

/// Source routes of a multi-homed host and ECMP groups of a router.
#[derive(Clone, Debug, Default)]
pub struct MultiRoutes {
    /// (source address, next hop), looked up before the destination.
    by_src: Vec<(IpAddr, NodeId)>,
    /// Next-hop sets, in a fixed order.
    groups: Vec<Box<[NodeId]>>,
    /// Key of this router's flow hash (SipHash-1-3), from the run's seed and the
    /// router's name: each router hashes with its own key, as each Linux machine has
    /// its own random `hashrnd`, so equal hashes do not make every hop choose alike.
    key: (u64, u64),
}

/// Linux's `fib_multipath_hash` with `fib_multipath_hash_policy = 1` (layer 3 + 4):
/// source and destination address, protocol, source and destination port; a packet
/// without ports (a later fragment, or too short) hashes its addresses only, as the
/// policy does. The 31-bit result is compared with equal per-next-hop upper bounds
/// (`fib_select_multipath`'s hash-threshold, RFC 2992), so a flow keeps its path and
/// the flows of a group spread evenly.
pub fn ecmp_pick(key: (u64, u64), data: &[u8], ways: usize) -> usize {
    let mut h = siphasher::sip::SipHasher13::new_with_keys(key.0, key.1);
    let mut addr = |ip: IpAddr| match ip {
        IpAddr::V4(a) => h.write(&a.octets()),
        IpAddr::V6(a) => h.write(&a.octets()),
    };
    match brisk_wire::peek::flow_key(data) {
        Some(k) => {
            addr(k.src);
            addr(k.dst);
            h.write_u8(k.protocol);
            h.write_u16(k.src_port);
            h.write_u16(k.dst_port);
        }
        None => {
            if let Some(a) = brisk_wire::peek::src_addr(data) {
                addr(a);
            }
            if let Some(a) = brisk_wire::peek::dst_addr(data) {
                addr(a);
            }
        }
    }
    let hash = h.finish() >> 33; // 31 bits, as Linux's `hash >> 1`
    let n = ways.max(1) as u64;
    // Upper bound of next hop i: round(2^31 · (i + 1) / n) − 1, so `hash` below
    // round(2^31 · (i + 1) / n).
    (0..n)
        .find(|&i| hash < ((1u64 << 31) * (i + 1) + n / 2) / n)
        .unwrap_or(n - 1) as usize
}

/// Entries a route table searches as a list before it moves them to a hash map.
const SMALL_ROUTES: usize = 8;

impl RouteTable {
    pub fn add(&mut self, dst: IpAddr, next: NodeId) {
        if !self.by_dst.is_empty() {
            self.by_dst.insert(dst, next);
        } else if let Some(e) = self.small.iter_mut().find(|e| e.0 == dst) {
            e.1 = next;
        } else if self.small.len() < SMALL_ROUTES {
            self.small.push((dst, next));
        } else {
            self.by_dst.extend(self.small.drain(..));
            self.by_dst.insert(dst, next);
        }
    }
    pub fn set_default(&mut self, next: NodeId) {
        self.default = Some(next);
    }
    /// Packets from `src` go to `next`, whatever their destination (a multi-homed
    /// host's address and its link).
    pub fn add_source(&mut self, src: IpAddr, next: NodeId) {
        let m = self.multi.get_or_insert_with(Default::default);
        m.by_src.retain(|e| e.0 != src);
        m.by_src.push((src, next));
    }
    /// Packets to `dst` go to one of `nexts`, chosen by the flow hash with `key`
    /// (at most [`MAX_ECMP_WAYS`]; one next hop is a plain entry).
    pub fn add_group(&mut self, dst: IpAddr, nexts: &[NodeId], key: (u64, u64)) {
        if nexts.len() < 2 {
            if let Some(&n) = nexts.first() {
                self.add(dst, n);
            }
            return;
        }
        let nexts = &nexts[..nexts.len().min(MAX_ECMP_WAYS)];
        let m = self.multi.get_or_insert_with(Default::default);
        m.key = key;
        // Tables are built once: groups with the same next hops share an entry.
        let g = match m.groups.iter().position(|g| **g == *nexts) {
            Some(g) => g,
            None => {
                m.groups.push(nexts.into());
                m.groups.len() - 1
            }
        };
        self.add(dst, GROUP_BASE + g);
    }
    /// The next hop by source route, destination and ECMP group (cold: only nodes
    /// with source routes or groups come here).
    #[inline(never)]
    fn lookup_multi(&self, m: &MultiRoutes, data: &[u8]) -> Option<NodeId> {
        if !m.by_src.is_empty() {
            if let Some(src) = brisk_wire::peek::src_addr(data) {
                if let Some(e) = m.by_src.iter().find(|e| e.0 == src) {
                    return Some(e.1);
                }
            }
        }
        let next = self.lookup(brisk_wire::peek::dst_addr(data))?;
        if next < GROUP_BASE {
            return Some(next);
        }
        let g = m.groups.get(next - GROUP_BASE)?;
        Some(g[ecmp_pick(m.key, data, g.len())])
    }
    pub fn lookup(&self, dst: Option<IpAddr>) -> Option<NodeId> {
        let hit = match dst {
            Some(d) if !self.by_dst.is_empty() => self.by_dst.get(&d).copied(),
            Some(d) => self.small.iter().find(|e| e.0 == d).map(|e| e.1),
            None => None,
        };
        hit.or(self.default)
    }
    /// The next hop of an IP packet (its destination address, read only if the table
    /// has entries besides the default).
    #[inline]
    pub fn lookup_packet(&self, data: &[u8]) -> Option<NodeId> {
        if let Some(m) = &self.multi {
            return self.lookup_multi(m, data);
        }
        if self.small.is_empty() && self.by_dst.is_empty() {
            return self.default;
        }
        self.lookup(brisk_wire::peek::dst_addr(data))
    }
}

/// Run-wide counters of the engine itself.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EngineStats {
    /// Wake-ups that did work (stale heap entries excluded).
    pub events: u64,
    /// Packet hand-overs between nodes.
    pub packets: u64,
    /// Packets with no route from the node that emitted them (discarded).
    pub unroutable: u64,
    /// Heap entries skipped as stale.
    pub stale: u64,
    /// Wake-ups that came early and only rescheduled.
    pub early: u64,
}

#[derive(Clone, Copy, Debug)]
struct Wake {
    at: Instant,
    seq: u64,
    node: NodeId,
}

impl Wake {
    /// `(at, seq)` as one integer, ordered as the pair is.
    #[inline]
    fn key(&self) -> u128 {
        (u128::from(self.at.as_nanos()) << 64) | u128::from(self.seq)
    }

    /// The wake-up of `node` whose `key` is `key`.
    #[inline]
    fn from_key(key: u128, node: NodeId) -> Wake {
        Wake {
            at: Instant::from_nanos((key >> 64) as u64),
            seq: key as u64,
            node,
        }
    }
}

// Ordered by `(at, seq)` alone, compared as one `u128`: `seq` is unique per push, so
// no two entries tie on it and `node` never decided (the derived order compared the
// three fields in turn, at every level of every sift).
impl PartialEq for Wake {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl Eq for Wake {}

impl PartialOrd for Wake {
    #[inline]
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Wake {
    #[inline]
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.key().cmp(&other.key())
    }
}

/// `Engine::wake` of a node with no pending wake-up (no valid entry has it: `seq`
/// never reaches `u64::MAX`).
const NO_WAKE: u128 = u128::MAX;

/// Up to this many nodes the engine finds the next wake-up by scanning every node's
/// entry instead of keeping a heap: for a handful of nodes a scan is a few compares,
/// where a heap pop and push cost about 150 instructions per event (`bench sim`'s
/// dumbbell, five nodes).
const SCAN_MAX_NODES: usize = 16;

/// The simulator core, generic over the node type so that enum dispatch (no `dyn`) is
/// possible and tests can plug in fakes.
pub struct Engine<N: Node> {
    now: Instant,
    nodes: Vec<N>,
    routes: Vec<RouteTable>,
    /// Wake-ups by `(at, seq)`, used only above `SCAN_MAX_NODES` nodes.
    heap: BinaryHeap<Reverse<Wake>>,
    /// The one valid wake-up per node as its `Wake::key`, or `NO_WAKE`.
    wake: Vec<u128>,
    seq: u64,
    /// The oldest ready hand-over when it arrived with nothing else ready (the
    /// common case: one packet at a time); the rest, in order, in `ready`. Filled
    /// only while `ready` is empty too, so it always holds the oldest entry and the
    /// two together are one FIFO (`push_ready`, `pop_ready`).
    ready_first: Option<(NodeId, NodeId, Packet)>,
    ready: VecDeque<(NodeId, NodeId, Packet)>,
    /// Per node: `(into, delay)` when it is a pure delay line folded into node
    /// `into` (`fold_delay_line`): packets handed to it go to `into`, arriving
    /// `delay` ns later.
    folded: Vec<Option<(NodeId, u64)>>,
    /// The nodes lines are folded into, each once (settled at `run_until`'s end).
    fold_targets: Vec<NodeId>,
    ctx: Ctx,
    stats: EngineStats,
    /// Every node's wake-up is read again at the next `run_until` (nodes were added
    /// since the last one, which may have been built with pending timers).
    rescan: bool,
    /// Nodes lent out by `node_mut` since the last `run_until`, whose wake-up is read
    /// again there: the caller may have changed it. Any other node's pending wake-up
    /// is current, as the engine reschedules a node after every call into it (at 10^5
    /// flows, reading all 4 × 10^5 nodes' wake-ups at each 100-ms step was ~10 % of
    /// the run's simulated LL misses; issue 36 §2).
    lent: Vec<NodeId>,
}

impl<N: Node> Default for Engine<N> {
    fn default() -> Self {
        Self::new()
    }
}

impl<N: Node> Engine<N> {
    pub fn new() -> Self {
        Engine {
            now: Instant::ZERO,
            nodes: Vec::new(),
            routes: Vec::new(),
            heap: BinaryHeap::new(),
            wake: Vec::new(),
            seq: 0,
            ready_first: None,
            ready: VecDeque::new(),
            folded: Vec::new(),
            fold_targets: Vec::new(),
            ctx: Ctx::default(),
            stats: EngineStats::default(),
            rescan: true,
            lent: Vec::new(),
        }
    }

    /// Adds a node; returns its id.
    pub fn add_node(&mut self, node: N) -> NodeId {
        self.nodes.push(node);
        self.routes.push(RouteTable::default());
        self.wake.push(NO_WAKE);
        self.rescan = true;
        self.folded.push(None);
        if self.nodes.len() == SCAN_MAX_NODES + 1 {
            // From scanning to the heap: it gets every pending wake-up.
            for (node, &key) in self.wake.iter().enumerate() {
                if key != NO_WAKE {
                    self.heap.push(Reverse(Wake::from_key(key, node)));
                }
            }
        }
        self.nodes.len() - 1
    }

    /// Whether the next wake-up is found by scanning `wake` (no heap).
    #[inline]
    fn scans(&self) -> bool {
        self.nodes.len() <= SCAN_MAX_NODES
    }

    /// The pending wake-up with the least `(at, seq)`, by scanning.
    #[inline]
    fn scan_next(&self) -> Option<Wake> {
        let mut best = NO_WAKE;
        let mut node = 0;
        for (i, &key) in self.wake.iter().enumerate() {
            if key < best {
                best = key;
                node = i;
            }
        }
        (best != NO_WAKE).then(|| Wake::from_key(best, node))
    }

    /// Folds `line`, a pure delay line of `delay` holding at most `limit` packets
    /// whose every packet goes on to `into`, into `into`: from now on a packet handed
    /// to `line` at `t` is handed to `into` at once, to arrive at `t + delay`
    /// (`Node::handle_delayed`), and `line` never wakes. Saves a wake-up and a
    /// hand-over per packet; `into` must take each arrival at its time (brisk-sim's
    /// links do, lazily). Build time only, before `line` holds a packet. False, and
    /// nothing changes, if `into` cannot fold lines.
    ///
    /// The observer sees the packet's hand-over as one from its sender to `into`, at
    /// the time it was handed to the line.
    pub fn fold_delay_line(
        &mut self,
        line: NodeId,
        into: NodeId,
        delay: brisk_time::Duration,
        limit: usize,
    ) -> bool {
        let delay_ns = brisk_time::dur_nanos(delay);
        if line == into || !self.nodes[into].fold_line(delay_ns, limit) {
            return false;
        }
        self.folded[line] = Some((into, delay_ns));
        if !self.fold_targets.contains(&into) {
            self.fold_targets.push(into);
        }
        true
    }

    /// The routing table of `node` (panics on a bad id: topology construction is internal).
    pub fn routes_mut(&mut self, node: NodeId) -> &mut RouteTable {
        &mut self.routes[node]
    }

    pub fn node(&self, id: NodeId) -> &N {
        &self.nodes[id]
    }
    /// The node, to change (its wake-up is read again at the next `run_until`).
    pub fn node_mut(&mut self, id: NodeId) -> &mut N {
        if !self.rescan {
            if self.lent.len() < self.nodes.len() {
                self.lent.push(id);
            } else {
                // As many as there are nodes: read them all (bounds the list).
                self.rescan = true;
                self.lent.clear();
            }
        }
        &mut self.nodes[id]
    }
    /// Frees the recycled packet buffers and the scratch space, for a caller done
    /// running (`run_until` afterwards allocates them again). The results are built
    /// while the nodes are still there; the pool, sized by the most packets ever in
    /// flight at once, need not be as well (it was ~7 KB per flow at the end of a run
    /// of short flows, docs/performance.md "Issue 36 status: scale").
    pub fn release_buffers(&mut self) {
        self.ctx.pool = BufPool::default();
        self.ctx.scratch = Vec::new();
    }

    pub fn nodes(&self) -> &[N] {
        &self.nodes
    }
    pub fn now(&self) -> Instant {
        self.now
    }
    pub fn stats(&self) -> &EngineStats {
        &self.stats
    }
    /// The run's sampling book (`crate::host::Sampling`), shared with the hosts.
    pub(crate) fn sampling_mut(&mut self) -> &mut crate::host::Sampling {
        &mut self.ctx.sampling
    }
    /// Current heap size (valid plus stale entries), for boundedness tests; 0 while
    /// the engine scans (`SCAN_MAX_NODES`).
    pub fn heap_len(&self) -> usize {
        self.heap.len()
    }

    /// Runs every event with time `<= end`, then sets the clock to `end`.
    pub fn run_until(&mut self, end: Instant, obs: &mut impl Observer) {
        // Nodes may have been built with pending timers (flow starts, samplers), and
        // nodes lent out since may have new ones.
        if std::mem::take(&mut self.rescan) {
            self.lent.clear();
            for id in 0..self.nodes.len() {
                self.reschedule(id);
            }
        } else {
            let mut lent = std::mem::take(&mut self.lent);
            for &id in &lent {
                self.reschedule(id);
            }
            lent.clear();
            self.lent = lent;
        }
        loop {
            let w = if self.scans() {
                match self.scan_next() {
                    Some(w) if w.at <= end => w,
                    _ => break,
                }
            } else {
                match self.heap.peek() {
                    Some(&Reverse(w)) if w.at <= end => {
                        self.heap.pop();
                        if self.wake[w.node] != w.key() {
                            self.stats.stale += 1;
                            continue;
                        }
                        w
                    }
                    _ => break,
                }
            };
            self.wake[w.node] = NO_WAKE;
            debug_assert!(w.at >= self.now, "time went backwards");
            self.now = w.at;
            let due = self.nodes[w.node]
                .poll_timeout()
                .is_some_and(|t| t <= self.now);
            if due {
                self.stats.events += 1;
                self.nodes[w.node].handle_timeout(self.now, &mut self.ctx);
                self.flush(w.node);
                self.deliver_ready(obs);
            } else {
                self.stats.early += 1;
                self.reschedule(w.node);
            }
        }
        self.now = self.now.max(end);
        // Folded arrivals up to `end` that nothing has woken for yet (they leave
        // after it): taken now, so that results read after the run, and changes
        // made between runs, meet the state the lines' own wake-ups left.
        // Settling moves packets into the links' queues, so their wake-ups are read
        // again at the next `run_until`, as a lent node's are.
        let now = self.now;
        for i in 0..self.fold_targets.len() {
            let n = self.fold_targets[i];
            self.node_mut(n).settle(now);
        }
    }

    /// Injects a packet into `node` at the current time (for tests and traffic sources).
    pub fn inject(&mut self, node: NodeId, pkt: Packet, obs: &mut impl Observer) {
        self.push_ready((node, node, pkt));
        self.deliver_ready(obs);
    }

    /// Drains `node`'s output into the ready queue, then reschedules it.
    fn flush(&mut self, node: NodeId) {
        while let Some(pkt) = self.nodes[node].poll_packet(self.now, &mut self.ctx) {
            match self.routes[node].lookup_packet(&pkt.data) {
                Some(next) => self.push_ready((node, next, pkt)),
                None => {
                    self.stats.unroutable += 1;
                    self.ctx.pool.give(pkt.data);
                }
            }
        }
        self.reschedule(node);
    }

    /// Appends a hand-over to the ready FIFO.
    #[inline]
    fn push_ready(&mut self, e: (NodeId, NodeId, Packet)) {
        if self.ready_first.is_none() && self.ready.is_empty() {
            self.ready_first = Some(e);
        } else {
            self.ready.push_back(e);
        }
    }

    /// The oldest ready hand-over: `ready_first` if set (it was pushed when nothing
    /// else was ready, and everything pushed since went behind it into `ready`).
    #[inline]
    fn pop_ready(&mut self) -> Option<(NodeId, NodeId, Packet)> {
        match self.ready_first.take() {
            Some(e) => Some(e),
            None => self.ready.pop_front(),
        }
    }

    /// Hands every ready packet to its next node, FIFO, at the current time.
    fn deliver_ready(&mut self, obs: &mut impl Observer) {
        while let Some((from, to, pkt)) = self.pop_ready() {
            self.stats.packets += 1;
            if let Some((into, delay_ns)) = self.folded[to] {
                obs.on_packet(self.now, from, into, &pkt);
                self.nodes[into].handle_delayed(self.now, delay_ns, pkt);
                self.reschedule(into);
                continue;
            }
            obs.on_packet(self.now, from, to, &pkt);
            self.nodes[to].handle_packet(self.now, pkt, &mut self.ctx);
            self.flush(to);
        }
    }

    /// Inline: `flush` calls it after every hand-over and every event (about 970 000
    /// times in `bench sim`'s 2 s run), and most calls only confirm the pending
    /// wake-up, for less than the call's register saves cost. `always`: the plain
    /// hint was not taken.
    #[inline(always)]
    fn reschedule(&mut self, node: NodeId) {
        let Some(t) = self.nodes[node].poll_timeout() else {
            return; // a pending entry, if any, fires early and is harmless
        };
        let t = t.max(self.now);
        let pending = self.wake[node];
        if pending != NO_WAKE && (pending >> 64) as u64 <= t.as_nanos() {
            return;
        }
        self.seq += 1;
        let w = Wake {
            at: t,
            seq: self.seq,
            node,
        };
        self.wake[node] = w.key();
        if self.scans() {
            return;
        }
        self.heap.push(Reverse(w));
        if self.heap.len() > 4 * self.nodes.len() + 1024 {
            self.compact();
        }
    }

    /// Drops stale heap entries (amortised O(1) per push).
    fn compact(&mut self) {
        let wake = &self.wake;
        let before = self.heap.len();
        self.heap.retain(|Reverse(w)| wake[w.node] == w.key());
        self.stats.stale += (before - self.heap.len()) as u64;
    }
}

#[cfg(test)]
mod tests {

    /// An IPv4 TCP header (no payload) with these ports, enough for `flow_key`.
    fn tcp_pkt(src: [u8; 4], dst: [u8; 4], sport: u16, dport: u16) -> Vec<u8> {
        let mut b = vec![0u8; 40];
        b[0] = 0x45;
        b[2..4].copy_from_slice(&40u16.to_be_bytes());
        b[9] = 6;
        b[12..16].copy_from_slice(&src);
        b[16..20].copy_from_slice(&dst);
        b[20..22].copy_from_slice(&sport.to_be_bytes());
        b[22..24].copy_from_slice(&dport.to_be_bytes());
        b
    }

    #[test]
    fn ecmp_keeps_a_flow_on_one_path_and_spreads_flows_evenly() {
        let key = (1, 2);
        for ways in [2usize, 3, 4, 8] {
            let mut count = vec![0u32; ways];
            let n = 20_000u32;
            for i in 0..n {
                let p = tcp_pkt(
                    [10, 0, 0, 1],
                    [10, 0, 1, 1],
                    32_768 + (i % 28_000) as u16,
                    5001 + (i / 28_000) as u16,
                );
                let k = ecmp_pick(key, &p, ways);
                assert_eq!(k, ecmp_pick(key, &p, ways), "deterministic");
                count[k] += 1;
            }
            let even = f64::from(n) / ways as f64;
            for c in &count {
                assert!(
                    (f64::from(*c) - even).abs() < 0.05 * even,
                    "{ways}: {count:?}"
                );
            }
        }
        // Ports matter (policy 1): two subflows of one address pair may part ways;
        // and another router's key makes another choice for some flows.
        let picks: std::collections::BTreeSet<usize> = (0..64)
            .map(|i| {
                ecmp_pick(
                    key,
                    &tcp_pkt([10, 0, 0, 1], [10, 0, 1, 1], 40_000 + i, 80),
                    4,
                )
            })
            .collect();
        assert_eq!(picks.len(), 4);
        let differ = (0..64)
            .filter(|&i| {
                let p = tcp_pkt([10, 0, 0, 1], [10, 0, 1, 1], 40_000 + i, 80);
                ecmp_pick(key, &p, 2) != ecmp_pick((3, 4), &p, 2)
            })
            .count();
        assert!((16..=48).contains(&differ), "{differ}");
        // A group entry routes by the hash; source routes come first.
        let mut t = RouteTable::default();
        let dst: IpAddr = "10.0.1.1".parse().unwrap();
        t.add_group(dst, &[7, 8], key);
        let p = tcp_pkt([10, 0, 0, 1], [10, 0, 1, 1], 40_000, 80);
        assert_eq!(t.lookup_packet(&p), Some([7, 8][ecmp_pick(key, &p, 2)]));
        t.add_source("10.0.0.1".parse().unwrap(), 9);
        assert_eq!(t.lookup_packet(&p), Some(9));
    }

    use super::*;
    use brisk_time::Duration;
    use std::net::Ipv4Addr;

    fn v4(last: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, last))
    }

    fn pkt_to(dst: u8, id: u64) -> Packet {
        let mut data = vec![0u8; 20];
        data[0] = 0x45;
        data[16..20].copy_from_slice(&[10, 0, 0, dst]);
        Packet {
            data,
            id,
            flow: 0,
            sent_at: Instant::ZERO,
            l4_csum_valid: false,
        }
    }

    /// Holds each packet for a fixed delay, FIFO.
    struct Delay {
        d: Duration,
        q: VecDeque<(Instant, Packet)>,
    }

    /// Records arrivals; optionally emits a burst at given times.
    struct Sink {
        got: Vec<(Instant, u64)>,
        timers: VecDeque<Instant>,
        emit_to: u8,
        out: VecDeque<Packet>,
        fired: Vec<Instant>,
    }

    enum Fake {
        Delay(Delay),
        Sink(Sink),
    }

    impl Node for Fake {
        fn handle_packet(&mut self, now: Instant, pkt: Packet, _ctx: &mut Ctx) {
            match self {
                Fake::Delay(d) => d.q.push_back((now + d.d, pkt)),
                Fake::Sink(s) => s.got.push((now, pkt.id)),
            }
        }
        fn poll_packet(&mut self, now: Instant, ctx: &mut Ctx) -> Option<Packet> {
            match self {
                Fake::Delay(d) => {
                    if d.q.front().is_some_and(|(t, _)| *t <= now) {
                        d.q.pop_front().map(|(_, p)| p)
                    } else {
                        None
                    }
                }
                Fake::Sink(s) => s.out.pop_front().map(|mut p| {
                    p.id = ctx.next_packet_id();
                    p
                }),
            }
        }
        fn handle_timeout(&mut self, now: Instant, _ctx: &mut Ctx) {
            if let Fake::Sink(s) = self {
                assert!(s.timers.front().is_some_and(|t| *t <= now), "woken early");
                s.timers.pop_front();
                s.fired.push(now);
                s.out.push_back(pkt_to(s.emit_to, 0));
            }
        }
        fn poll_timeout(&self) -> Option<Instant> {
            match self {
                Fake::Delay(d) => d.q.front().map(|(t, _)| *t),
                Fake::Sink(s) => s.timers.front().copied(),
            }
        }
    }

    fn sink(timers: &[u64], emit_to: u8) -> Fake {
        Fake::Sink(Sink {
            got: Vec::new(),
            timers: timers.iter().map(|&t| Instant::from_millis(t)).collect(),
            emit_to,
            out: VecDeque::new(),
            fired: Vec::new(),
        })
    }

    fn delay(ms: u64) -> Fake {
        Fake::Delay(Delay {
            d: Duration::from_millis(ms),
            q: VecDeque::new(),
        })
    }

    #[test]
    fn the_ready_slot_and_queue_are_one_fifo() {
        // Pushes and pops interleaved every way two and three deep, against a plain
        // queue: the order must be the pushes' order.
        let mut e: Engine<Fake> = Engine::new();
        let mut model = VecDeque::new();
        let mut next = 0u64;
        for step in [1, 1, 0, 1, 0, 0, 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 1, 0] {
            if step == 1 {
                e.push_ready((0, 1, pkt_to(2, next)));
                model.push_back(next);
                next += 1;
            } else {
                let got = e.pop_ready().map(|(_, _, p)| p.id);
                assert_eq!(got, model.pop_front());
            }
        }
        assert!(e.pop_ready().is_none());
    }

    #[test]
    fn fx_hash_spreads_ipv6_hosts_over_buckets() {
        use std::hash::BuildHasher;
        // Addresses that differ only in their last bytes must differ in the low bits
        // (the bucket index) too.
        let low: std::collections::HashSet<u64> = (1..=4096u32)
            .map(|n| {
                let a = IpAddr::V6(std::net::Ipv6Addr::new(
                    0x2001,
                    0xdb8,
                    0x19,
                    0,
                    0,
                    0,
                    (n >> 16) as u16,
                    n as u16,
                ));
                FxBuild::default().hash_one(a) & 0xfff
            })
            .collect();
        assert!(low.len() > 2000, "{} distinct buckets of 4096", low.len());
    }

    #[test]
    fn route_tables_answer_alike_as_a_list_and_as_a_map() {
        let mut t = RouteTable::default();
        assert_eq!(t.lookup(Some(v4(1))), None);
        t.set_default(99);
        for n in 1..=20u8 {
            t.add(v4(n), usize::from(n));
            // A re-added address takes the new hop, in either form.
            t.add(v4(1), 100 + usize::from(n));
            for m in 1..=21u8 {
                let want = match m {
                    1 => Some(100 + usize::from(n)),
                    m if m <= n => Some(usize::from(m)),
                    _ => Some(99),
                };
                assert_eq!(t.lookup(Some(v4(m))), want, "{n} entries, {m}");
                assert_eq!(
                    t.lookup_packet(&pkt_to(m, 0).data),
                    want,
                    "{n} entries, {m}"
                );
            }
            assert_eq!(t.small.is_empty(), n as usize > SMALL_ROUTES);
        }
        assert_eq!(t.lookup(None), Some(99));
        let mut d = RouteTable::default();
        d.set_default(7);
        assert_eq!(d.lookup_packet(&[]), Some(7));
    }

    #[test]
    fn packets_follow_routes_through_delays() {
        let mut e: Engine<Fake> = Engine::new();
        let a = e.add_node(sink(&[1, 2, 3], 2));
        let link = e.add_node(delay(10));
        let b = e.add_node(sink(&[], 1));
        e.routes_mut(a).set_default(link);
        e.routes_mut(link).add(v4(2), b);
        e.run_until(Instant::from_millis(100), &mut ());
        let Fake::Sink(s) = e.node(b) else { panic!() };
        let times: Vec<u64> = s.got.iter().map(|(t, _)| t.as_millis()).collect();
        assert_eq!(times, vec![11, 12, 13]);
        assert_eq!(e.now(), Instant::from_millis(100));
    }

    #[test]
    fn events_stop_at_the_end_time_and_resume_later() {
        let mut e: Engine<Fake> = Engine::new();
        let a = e.add_node(sink(&[5, 50], 9));
        e.run_until(Instant::from_millis(10), &mut ());
        let Fake::Sink(s) = e.node(a) else { panic!() };
        assert_eq!(s.fired, vec![Instant::from_millis(5)]);
        e.run_until(Instant::from_millis(60), &mut ());
        let Fake::Sink(s) = e.node(a) else { panic!() };
        assert_eq!(s.fired.len(), 2);
        // The packets had no route: counted, not lost silently.
        assert_eq!(e.stats().unroutable, 2);
    }

    #[test]
    fn a_timer_set_through_node_mut_between_steps_fires() {
        // `run_until` reads again only the wake-ups of nodes lent out by `node_mut`
        // since the last step: a timer added that way must fire on time, with the
        // scan (few nodes) and with the heap (more than `SCAN_MAX_NODES`).
        for nodes in [2, SCAN_MAX_NODES + 4] {
            let mut e: Engine<Fake> = Engine::new();
            let ids: Vec<_> = (0..nodes).map(|_| e.add_node(sink(&[], 0))).collect();
            e.run_until(Instant::from_millis(10), &mut ());
            let a = ids[nodes - 1];
            let Fake::Sink(s) = e.node_mut(a) else {
                panic!()
            };
            s.timers.push_back(Instant::from_millis(15));
            e.run_until(Instant::from_millis(20), &mut ());
            // An untouched step in between, then one more timer.
            e.run_until(Instant::from_millis(30), &mut ());
            let Fake::Sink(s) = e.node_mut(a) else {
                panic!()
            };
            s.timers.push_back(Instant::from_millis(35));
            e.run_until(Instant::from_millis(40), &mut ());
            let Fake::Sink(s) = e.node(a) else { panic!() };
            let want = [15, 35].map(Instant::from_millis);
            assert_eq!(s.fired, want, "{nodes} nodes");
        }
    }

    #[test]
    fn simultaneous_wakeups_run_in_insertion_order() {
        let mut e: Engine<Fake> = Engine::new();
        let sink_id = 3;
        let mut ids = Vec::new();
        for _ in 0..3 {
            ids.push(e.add_node(sink(&[7], 4)));
        }
        let b = e.add_node(sink(&[], 0));
        assert_eq!(b, sink_id);
        for &i in &ids {
            e.routes_mut(i).set_default(b);
        }
        e.run_until(Instant::from_millis(7), &mut ());
        let Fake::Sink(s) = e.node(b) else { panic!() };
        // Packet ids are assigned at emission, so the order of emission is visible.
        assert_eq!(s.got.iter().map(|g| g.1).collect::<Vec<_>>(), vec![1, 2, 3]);
    }

    #[test]
    fn heap_stays_bounded_when_wakeups_keep_moving_earlier() {
        /// A node whose desired wake time moves earlier on every packet.
        struct Shrinking {
            next: Instant,
        }
        impl Node for Shrinking {
            fn handle_packet(&mut self, now: Instant, _p: Packet, _c: &mut Ctx) {
                self.next = now + (self.next - now) / 2 + Duration::from_nanos(1);
            }
            fn poll_packet(&mut self, _: Instant, _: &mut Ctx) -> Option<Packet> {
                None
            }
            fn handle_timeout(&mut self, now: Instant, _: &mut Ctx) {
                self.next = now + Duration::from_secs(1000);
            }
            fn poll_timeout(&self) -> Option<Instant> {
                Some(self.next)
            }
        }
        let mut e: Engine<Shrinking> = Engine::new();
        let n = e.add_node(Shrinking {
            next: Instant::from_secs(u64::from(u32::MAX)),
        });
        // Enough nodes that the engine keeps a heap (with fewer it scans and has none).
        for _ in 0..SCAN_MAX_NODES {
            e.add_node(Shrinking {
                next: Instant::from_secs(u64::from(u32::MAX)),
            });
        }
        let nodes = SCAN_MAX_NODES + 1;
        e.run_until(Instant::ZERO, &mut ());
        for i in 0..100_000 {
            e.inject(n, pkt_to(1, i), &mut ());
            assert!(e.heap_len() <= 4 * nodes + 1024 + 1);
        }
    }

    #[test]
    fn scanning_and_the_heap_run_events_in_the_same_order() {
        // Three senders with timers at shared instants, through a delay to a sink:
        // once with five nodes (scanned), once with idle nodes added (heap).
        let run = |idle: usize| {
            let mut e: Engine<Fake> = Engine::new();
            let l = e.add_node(delay(3));
            let b = e.add_node(sink(&[], 0));
            for k in 0..3u64 {
                let a = e.add_node(sink(&[1, 2 + k % 2, 4, 4 + k, 9], 2));
                e.routes_mut(a).set_default(l);
            }
            e.routes_mut(l).add(v4(2), b);
            for _ in 0..idle {
                e.add_node(sink(&[], 0));
            }
            e.run_until(Instant::from_millis(5), &mut ());
            e.run_until(Instant::from_millis(50), &mut ());
            let Fake::Sink(s) = e.node(b) else { panic!() };
            (s.got.clone(), e.stats().events, e.stats().packets)
        };
        let scanned = run(0);
        assert_eq!(scanned.0.len(), 15);
        assert_eq!(run(SCAN_MAX_NODES), scanned);
    }

    #[test]
    fn observer_sees_every_handover() {
        struct Count(u64);
        impl Observer for Count {
            fn on_packet(&mut self, _: Instant, _: NodeId, _: NodeId, _: &Packet) {
                self.0 += 1;
            }
        }
        let mut e: Engine<Fake> = Engine::new();
        let a = e.add_node(sink(&[1, 2], 2));
        let l = e.add_node(delay(1));
        let b = e.add_node(sink(&[], 0));
        e.routes_mut(a).set_default(l);
        e.routes_mut(l).set_default(b);
        let mut c = Count(0);
        e.run_until(Instant::from_secs(1), &mut c);
        assert_eq!(c.0, 4);
        assert_eq!(e.stats().packets, 4);
    }

    #[test]
    fn short_packets_move_to_small_buffers() {
        let mut pool = BufPool::default();
        let mut ack = pool.take();
        ack.extend_from_slice(&[7; 72]);
        let ack = pool.fit(ack);
        assert_eq!(ack, [7; 72]);
        assert!(ack.capacity() <= BufPool::SMALL_CAP);
        // The full-size buffer went back and is reused; a full packet keeps its own.
        let mut data = pool.take();
        assert!(data.capacity() >= BufPool::BUF_CAP);
        data.extend_from_slice(&[1; 1500]);
        let ptr = data.as_ptr();
        let data = pool.fit(data);
        assert_eq!(data.as_ptr(), ptr);
        // A small buffer given back serves the next short packet, never a full one.
        let small_ptr = ack.as_ptr();
        pool.give(ack);
        assert!(pool.take().capacity() >= BufPool::BUF_CAP);
        let mut syn = pool.take();
        syn.extend_from_slice(&[2; 80]);
        let syn = pool.fit(syn);
        assert_eq!((syn.as_ptr(), &syn[..]), (small_ptr, &[2u8; 80][..]));
    }
}

//! The seam for sender mechanisms: what changes how the stream's bytes go out beside
//! the primary send loop (RFC 9293's "send what the window allows, in order"). Each
//! mechanism is a variant of [`Mechanism`], held by value in [`Mechanisms`] (as
//! brisk-net's `AnyQueue` holds its queues), so the per-packet path matches on an
//! enum instead of calling through a vtable. The connection calls the named hooks
//! below at fixed points of the send and ACK paths and applies what they return;
//! a mechanism never reaches into the subflow's fields (it is lent what it reads).
//!
//! | hook | where | RC3 | RDB | prioritised send |
//! |---|---|---|---|---|
//! | [`whole_writes`](Mechanisms::whole_writes), [`on_write_queued`](Mechanisms::on_write_queued) | a write is queued | chunk per write | | whole writes, by priority |
//! | [`before_new_data`](Mechanisms::before_new_data) | which bytes go next (primary) | skip delivered | | |
//! | [`segment_start`](Mechanisms::segment_start) | a primary segment is built | | bundle | |
//! | [`extra_segment`](Mechanisms::extra_segment) | which bytes go next (after primary) | copies | | |
//! | [`on_sack_classified`](Mechanisms::on_sack_classified), [`ack_is_low`](Mechanisms::ack_is_low), [`hidden_loss`](Mechanisms::hidden_loss), [`copied`](Mechanisms::copied), [`on_cumulative_ack`](Mechanisms::on_cumulative_ack), [`on_sacked_beyond`](Mechanisms::on_sacked_beyond) | an ACK was classified | D-SACK off, low ACKs, ACK bump | hidden loss | |
//! | [`quiet_on_idle_ack`](Mechanisms::quiet_on_idle_ack), [`sends_extras`](Mechanisms::sends_extras) | is anything of a mechanism pending | no (counts low ACKs) | yes | yes |
//!
//! The fast paths (the idle ACK, the exhausted poll) ask these once, through flags
//! kept when the set changes, instead of naming each mechanism.

use super::sack_classify::SackClass;
use crate::config::Config;
use crate::rc3::rlp::{Copy, Rc3Info, Rlp};
use crate::rdb::{LossInference, RdbConfig};
use crate::recovery::scoreboard::Scoreboard;
use brisk_time::Duration;

/// One sender mechanism.
#[derive(Debug)]
pub(super) enum Mechanism {
    /// RC3 (`crate::rc3`, `rc3_send`): the recursive-low-priority loop. Boxed: its
    /// range sets are several times the others' size.
    Rc3(Box<Rlp>),
    /// Redundant data bundling for thin streams (`crate::rdb`).
    Rdb(RdbConfig),
    /// uTCP's prioritised send (`Config::unordered_send`; `docs/mechanisms/utcp.md`):
    /// writes taken whole and placed ahead of unsent lower-priority writes.
    Prioritised,
}

/// What the primary loop may send next after the mechanisms had their say
/// ([`Mechanisms::before_new_data`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct NextBytes {
    /// SND.NXT moved over data the mechanism already delivered (or unchanged).
    pub snd_nxt: u64,
    /// Where the next range the mechanism delivered begins: the next segment ends
    /// there at the latest (u64::MAX: no bound).
    pub bound: u64,
}

/// What an RDB bundle may carry, read from the subflow (built only when RDB runs).
pub(super) struct BundleView<'a> {
    pub board: &'a Scoreboard,
    pub min_rtt: Option<Duration>,
    pub mss: u32,
}

/// The mechanisms a connection runs, at most one of each kind, in a fixed order
/// (RC3, RDB, prioritised send), with the answers the fast paths need kept as flags.
#[derive(Debug, Default)]
pub(super) struct Mechanisms {
    list: Vec<Mechanism>,
    /// Prioritised send is on: writes are taken whole (cached from `list`).
    whole_writes: bool,
    /// No mechanism acts on an ACK that changes nothing else (cached from `list`).
    quiet_on_idle_ack: bool,
    /// No mechanism sends segments of its own after the primary loop.
    no_extras: bool,
}

impl Mechanisms {
    /// The mechanisms `config` turns on. RC3 turns prioritised send off (its chunks
    /// are writes in order).
    pub fn new(config: &Config) -> Self {
        let mut list = Vec::new();
        if let Some(r) = config.transmit.rc3.as_ref() {
            list.push(Mechanism::Rc3(Box::new(Rlp::new(r.levels.clone()))));
        }
        if let Some(rdb) = config.transmit.rdb {
            list.push(Mechanism::Rdb(rdb));
        }
        let mut m = Mechanisms {
            list,
            ..Mechanisms::default()
        };
        m.set_prioritised(config.unordered_send);
        m
    }

    /// Prioritised send switched on or off (`Connection::set_unordered_send`); no
    /// effect while RC3 runs.
    pub fn set_prioritised(&mut self, on: bool) {
        let has = self
            .list
            .iter()
            .any(|m| matches!(m, Mechanism::Prioritised));
        if on && !has && self.rc3().is_none() {
            self.list.push(Mechanism::Prioritised);
        } else if !on && has {
            self.list.retain(|m| !matches!(m, Mechanism::Prioritised));
        }
        self.whole_writes = self
            .list
            .iter()
            .any(|m| matches!(m, Mechanism::Prioritised));
        self.quiet_on_idle_ack = self.list.iter().all(Mechanism::quiet_on_idle_ack);
        self.no_extras = self.list.iter().all(|m| !matches!(m, Mechanism::Rc3(_)));
    }

    // ----- a write is queued -----

    /// Writes are taken whole or not at all and placed by priority.
    #[inline]
    pub fn whole_writes(&self) -> bool {
        self.whole_writes
    }

    /// Bytes `[start, end)` (sequence space) were queued as one write.
    pub fn on_write_queued(&mut self, start: u64, end: u64) {
        for m in &mut self.list {
            if let Mechanism::Rc3(rlp) = m {
                // RC3 §4.2.1: each write is a chunk of its own for the RLP.
                rlp.on_write(start, end);
            }
        }
    }

    // ----- which bytes go next -----

    /// Before the primary loop sends new data at `snd_nxt` (data ends before
    /// `data_end`): RC3 jumps over data SACKs showed delivered (spec A5), and a hole
    /// ends where the next delivered range begins.
    #[inline]
    pub fn before_new_data(&mut self, snd_nxt: u64, data_end: u64) -> NextBytes {
        let mut next = NextBytes {
            snd_nxt,
            bound: u64::MAX,
        };
        for m in &mut self.list {
            if let Mechanism::Rc3(rlp) = m {
                if let Some(e) = rlp.delivered_end(next.snd_nxt) {
                    let e = e.min(data_end);
                    if e > next.snd_nxt {
                        rlp.info.skipped_bytes += e - next.snd_nxt;
                        next.snd_nxt = e;
                    }
                }
                next.bound = rlp.next_delivered_after(next.snd_nxt).unwrap_or(u64::MAX);
            }
        }
        next
    }

    /// Where the packet carrying new bytes `[start, start + len)` begins (RDB: earlier
    /// unacknowledged segments go in front when the stream is thin with `pif` packets
    /// in flight before this one; never on a FIN, never on an empty segment).
    #[inline]
    pub fn segment_start<'v>(
        &self,
        start: u64,
        len: u32,
        fin: bool,
        pif: u32,
        view: impl FnOnce() -> BundleView<'v>,
    ) -> u64 {
        for m in &self.list {
            if let Mechanism::Rdb(rdb) = m {
                return rdb_bundle_start(rdb, start, len, fin, pif, view());
            }
        }
        start
    }

    /// A segment of a mechanism's own after the primary loop has sent what it may
    /// (RC3's copies, tail first).
    pub fn extra_segment(&mut self, snd_nxt: u64, wnd_end: u64, mss: u32) -> Option<Copy> {
        self.rc3_mut()?.next_copy(snd_nxt, wnd_end, mss)
    }

    // ----- an ACK was classified -----

    /// RC3 (§4.2.4 turns D-SACK off): copies and the primary loop overlap by design,
    /// so duplicates say nothing about spurious retransmissions.
    pub fn on_sack_classified(&mut self, class: &mut SackClass) {
        if let Some(rlp) = self.rc3_mut() {
            if class.dsack.take().is_some() {
                rlp.info.dsacks_ignored += 1;
            }
        }
    }

    /// Whether an ACK is of low priority (RC3, `rc3_send`'s module doc): such an ACK
    /// updates the scoreboard and the cumulative ACK only.
    pub fn ack_is_low(&mut self, dscp: u8, advanced: bool, p0_sacked: bool, blocks: bool) -> bool {
        let Some(rlp) = self.rc3_mut() else {
            return false;
        };
        let low = dscp != 0 || (!advanced && !p0_sacked && blocks);
        if low {
            rlp.info.low_acks += 1;
        }
        low
    }

    /// RDB's fairness fix 1 (RDB §III-A): an ACK that advances SND.UNA to the end of
    /// a bundle while segments the bundle carried were still unacknowledged reveals
    /// losses the bundle hid. Asked before the scoreboard forgets them.
    pub fn hidden_loss(
        &self,
        board: &Scoreboard,
        ack: u64,
        prior_una: u64,
        dsack: Option<(u64, u64)>,
    ) -> bool {
        for m in &self.list {
            if let Mechanism::Rdb(rdb) = m {
                let received = match rdb.loss_inference {
                    LossInference::Off => return false,
                    LossInference::Ack => None,
                    LossInference::Dsack => dsack,
                };
                return ack > prior_una && board.hidden_by_bundle(ack, received) > 0;
            }
        }
        false
    }

    /// RC3 (spec A4(d)): whether `[start, end)` was also sent by a mechanism's copy, so
    /// its delivery may be the copy's and its timing says nothing about this send.
    /// `None`: no mechanism sends copies.
    #[inline]
    pub fn copies(&self) -> Option<&Rlp> {
        self.rc3()
    }

    /// A cumulative ACK to `ack`: returns SND.NXT moved up to it when it passed
    /// SND.NXT (RC3's ACK bump, §4.1.1: the primary loop crossed the copies).
    pub fn on_cumulative_ack(&mut self, ack: u64, snd_nxt: u64) -> Option<u64> {
        let rlp = self.rc3_mut()?;
        rlp.on_cumulative(ack);
        (ack > snd_nxt).then(|| {
            rlp.info.ack_bumps += 1;
            ack
        })
    }

    /// What SACKs show beyond the primary loop (above SND.NXT) was delivered by RC3's
    /// copies: the primary loop skips it (spec A5).
    pub fn on_sacked_beyond(&mut self, blocks: &[(u64, u64)], snd_nxt: u64) {
        if let Some(rlp) = self.rc3_mut() {
            for &(l, r) in blocks {
                if r > snd_nxt {
                    rlp.on_sacked(l.max(snd_nxt), r);
                }
            }
        }
    }

    // ----- is anything of a mechanism pending -----

    /// No mechanism acts on an ACK that changes nothing else (the idle-ACK fast path
    /// may run). RC3 counts low ACKs, so it does.
    #[inline]
    pub fn quiet_on_idle_ack(&self) -> bool {
        self.quiet_on_idle_ack
    }

    /// Some mechanism sends segments of its own after the primary loop.
    #[inline]
    pub fn sends_extras(&self) -> bool {
        !self.no_extras
    }

    // ----- RC3's other points (receiver ACKs, SND.MAX, counters) -----

    /// The highest sequence sent: SND.NXT or the end of RC3's highest copy beyond it.
    #[inline]
    pub fn snd_max(&self, snd_nxt: u64) -> u64 {
        match self.rc3() {
            Some(r) => snd_nxt.max(r.high()),
            None => snd_nxt,
        }
    }

    pub fn rc3_info(&self) -> Option<Rc3Info> {
        self.rc3().map(|r| r.info)
    }

    #[inline]
    pub fn runs_rc3(&self) -> bool {
        self.rc3().is_some()
    }

    /// A low-priority ACK went out as a receiver (RC3 §4.1.2).
    pub fn on_low_ack_sent(&mut self) {
        if let Some(rlp) = self.rc3_mut() {
            rlp.info.low_acks_sent += 1;
        }
    }

    /// RC3's loop: always first in the list when present.
    #[inline]
    fn rc3(&self) -> Option<&Rlp> {
        match self.list.first() {
            Some(Mechanism::Rc3(rlp)) => Some(rlp),
            _ => None,
        }
    }

    #[inline]
    fn rc3_mut(&mut self) -> Option<&mut Rlp> {
        match self.list.first_mut() {
            Some(Mechanism::Rc3(rlp)) => Some(rlp),
            _ => None,
        }
    }
}

impl Mechanism {
    fn quiet_on_idle_ack(&self) -> bool {
        match self {
            // `ack_is_low` counts every low ACK.
            Mechanism::Rc3(_) => false,
            // Its hidden-loss check needs SND.UNA to advance.
            Mechanism::Rdb(_) => true,
            Mechanism::Prioritised => true,
        }
    }
}

/// RDB (`crate::rdb`): where the packet carrying new bytes `[start, start + len)`
/// begins (the patch's `tcp_transmit_rdb_skb`).
fn rdb_bundle_start(
    rdb: &RdbConfig,
    start: u64,
    len: u32,
    fin: bool,
    pif: u32,
    view: BundleView<'_>,
) -> u64 {
    if len == 0 || fin || view.board.is_empty() {
        return start;
    }
    if !rdb.thin.is_thin(pif, view.min_rtt) {
        return start;
    }
    let cap = rdb.max_bytes.map_or(view.mss, |m| m.min(view.mss));
    crate::rdb::bundle_start(view.board, start, len, cap, rdb.lim).0
}

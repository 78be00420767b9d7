//! The scoreboard against a reference model: a plain vector of segments, with every
//! operation written as the obvious linear scan (what the scoreboard did before issue
//! 13 made it logarithmic, without the last-blocks cache). Random sequences of sends,
//! retransmissions, SACKs, cumulative ACKs, loss marks, RTOs, undos, renegings and RACK walks must
//! give the same segments, counters and callback orders in both.

use super::{Scoreboard, SentSegment, Walk};
use crate::sent::SentInfo;
use brisk_time::Instant;
use proptest::prelude::*;

#[derive(Clone, Debug, Default)]
struct Model {
    segs: Vec<SentSegment>,
    next_id: u64,
    next_tx: u64,
}

impl Model {
    fn push(&mut self, start: u64, end: u64, info: SentInfo) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.segs.push(SentSegment {
            id,
            start,
            end,
            fin: false,
            xmit_ts: info.sent_at,
            info,
            sacked: false,
            lost: false,
            retrans: false,
            ever_retrans: false,
            gen: 0,
            tx_start: start,
            tx_order: self.next_tx,
        });
        self.next_tx += 1;
        id
    }
    fn seg(&mut self, id: u64) -> Option<&mut SentSegment> {
        self.segs.iter_mut().find(|s| s.id == id)
    }
    fn retransmit(&mut self, id: u64, info: SentInfo) {
        let tx = self.next_tx;
        self.next_tx += 1;
        let s = self.seg(id).expect("known id");
        s.retrans = true;
        s.ever_retrans = true;
        s.tx_start = s.start;
        s.gen = s.gen.wrapping_add(1);
        s.xmit_ts = info.sent_at;
        s.info = info;
        s.tx_order = tx;
    }
    fn mark_lost(&mut self, id: u64) -> bool {
        let Some(s) = self.seg(id) else { return false };
        if s.sacked || (s.lost && !s.retrans) {
            return false;
        }
        s.retrans = false;
        s.lost = true;
        true
    }
    fn sack(&mut self, blocks: &[(u64, u64)]) -> Vec<u64> {
        let mut newly = vec![];
        for &(l, r) in blocks {
            for s in self.segs.iter_mut() {
                if l <= s.start && s.end <= r && !s.sacked {
                    s.sacked = true;
                    s.lost = false;
                    s.retrans = false;
                    newly.push(s.id);
                }
            }
        }
        newly
    }
    fn ack(&mut self, una: u64) -> Vec<u64> {
        let delivered = self
            .segs
            .iter()
            .filter(|s| s.end <= una && !s.sacked)
            .map(|s| s.id)
            .collect();
        self.segs.retain(|s| s.end > una);
        if let Some(s) = self.segs.first_mut() {
            s.start = s.start.max(una);
        }
        delivered
    }
    /// RACK's candidates in transmission order.
    fn time_order(&self) -> Vec<u64> {
        let mut v: Vec<&SentSegment> = self
            .segs
            .iter()
            .filter(|s| !s.sacked && (!s.lost || s.retrans))
            .collect();
        v.sort_by_key(|s| (s.xmit_ts, s.tx_order));
        v.iter().map(|s| s.id).collect()
    }
    fn counters(&self) -> (u32, u32, u32) {
        let n = |f: fn(&SentSegment) -> bool| self.segs.iter().filter(|s| f(s)).count() as u32;
        (n(|s| s.sacked), n(|s| s.lost), n(|s| s.retrans))
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// Send this many bytes (a new segment).
    Send(u64),
    /// Retransmit the lowest lost segment.
    Retransmit,
    /// SACK blocks, as fractions (per mille) of the outstanding range.
    Sack(Vec<(u16, u16)>),
    /// Cumulative ACK at this fraction (per mille) of the outstanding range.
    Ack(u16),
    /// Mark the segment at this position lost.
    MarkLost(u16),
    Rto,
    Undo,
    /// The receiver reneged: every SACK mark is forgotten.
    Renege,
    /// A RACK walk that marks lost what was sent before this fraction of the clock.
    Rack(u16),
    /// Let time pass.
    Tick(u8),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (1u64..300).prop_map(Op::Send),
        2 => Just(Op::Retransmit),
        4 => prop::collection::vec((0u16..1001, 0u16..1001), 1..5).prop_map(Op::Sack),
        1 => (0u16..1001).prop_map(Op::Ack),
        1 => any::<u16>().prop_map(Op::MarkLost),
        1 => Just(Op::Rto),
        1 => Just(Op::Undo),
        1 => Just(Op::Renege),
        2 => (0u16..1001).prop_map(Op::Rack),
        2 => (0u8..4).prop_map(Op::Tick),
    ]
}

fn info(at: Instant) -> SentInfo {
    SentInfo {
        sent_at: at,
        ..Default::default()
    }
}

proptest! {
    #[test]
    fn scoreboard_matches_the_linear_reference(ops in prop::collection::vec(op(), 1..200)) {
        let mut b = Scoreboard::new();
        let mut m = Model::default();
        let mut now = Instant::from_millis(1);
        let mut nxt = 1u64;
        let mut una = 1u64;
        for op in ops {
            let span = |f: u16| una + (nxt - una) * u64::from(f) / 1000;
            match op {
                Op::Send(len) => {
                    prop_assert_eq!(b.push(nxt, nxt + len, false, info(now)), m.push(nxt, nxt + len, info(now)));
                    nxt += len;
                }
                Op::Retransmit => {
                    let want = m.segs.iter().find(|s| s.lost && !s.retrans && !s.sacked).map(|s| s.id);
                    prop_assert_eq!(b.next_lost().map(|s| s.id), want);
                    if let Some(id) = want {
                        b.on_retransmit(id, info(now));
                        m.retransmit(id, info(now));
                    }
                }
                Op::Sack(blocks) => {
                    let blocks: Vec<(u64, u64)> = blocks
                        .iter()
                        .map(|&(a, c)| (span(a.min(c)), span(a.max(c))))
                        .collect();
                    let mut got = vec![];
                    let n = b.sack(&blocks, |s| got.push(s.id));
                    let want = m.sack(&blocks);
                    prop_assert_eq!(n as usize, want.len());
                    prop_assert_eq!(got, want);
                }
                Op::Ack(f) => {
                    let to = span(f);
                    let mut got = vec![];
                    b.ack_cumulative(to, |s| got.push(s.id));
                    prop_assert_eq!(got, m.ack(to));
                    una = una.max(to);
                }
                Op::MarkLost(i) => {
                    if let Some(id) = m.segs.get(usize::from(i) % m.segs.len().max(1)).map(|s| s.id) {
                        prop_assert_eq!(b.mark_lost(id), m.mark_lost(id));
                    }
                }
                Op::Rto => {
                    let ids: Vec<u64> = m.segs.iter().map(|s| s.id).collect();
                    let want = ids.into_iter().filter(|&id| m.mark_lost(id)).count() as u32;
                    prop_assert_eq!(b.mark_all_lost(), want);
                }
                Op::Undo => {
                    b.unmark_all_lost();
                    m.segs.iter_mut().for_each(|s| s.lost = false);
                }
                Op::Renege => {
                    b.clear_sacked();
                    m.segs.iter_mut().for_each(|s| s.sacked = false);
                    prop_assert_eq!(b.highest_sacked(), 0);
                }
                Op::Rack(f) => {
                    // Sent up to `cut` is lost; the walk stops at the first sent after.
                    let first = Instant::from_millis(1);
                    let cut = first + (now - first) * u32::from(f) / 1000;
                    let mut got = vec![];
                    b.walk_time_order(|s| {
                        got.push(s.id);
                        if s.xmit_ts <= cut { Walk::MarkLost } else { Walk::Stop }
                    });
                    let order = m.time_order();
                    let mut want = vec![];
                    for id in order {
                        want.push(id);
                        let s = *m.seg(id).expect("known");
                        if s.xmit_ts > cut {
                            break;
                        }
                        m.mark_lost(id);
                    }
                    prop_assert_eq!(got, want);
                    // The latest RACK candidate sent before each (time, end) probe.
                    for s in m.segs.clone() {
                        let order = m.time_order();
                        let want = order
                            .iter()
                            .map(|&id| *m.seg(id).expect("known"))
                            .take_while(|c| super::super::rack::sent_after(s.xmit_ts, s.end, c.xmit_ts, c.end))
                            .last()
                            .map(|c| c.xmit_ts);
                        prop_assert_eq!(b.latest_send_before(s.xmit_ts, s.end), want);
                    }
                }
                Op::Tick(ms) => now += brisk_time::Duration::from_millis(u64::from(ms)),
            }
            let (sacked, lost, retrans) = m.counters();
            prop_assert_eq!((b.sacked_out(), b.lost_out(), b.retrans_out()), (sacked, lost, retrans));
            prop_assert_eq!(b.iter().copied().collect::<Vec<_>>(), m.segs.clone());
            let mut order = vec![];
            b.walk_time_order(|s| {
                order.push(s.id);
                Walk::Skip
            });
            prop_assert_eq!(order, m.time_order());
        }
    }
}

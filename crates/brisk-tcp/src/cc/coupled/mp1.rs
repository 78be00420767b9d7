//! Claim MP-1 (seed 004 B.2 Algorithm 1 and §3) as data and one function, shared by
//! the unit tests (`lisa.rs`, `tests.rs`) and `brisk repro mp-lisa`'s MP-1 row, so the
//! arithmetic the row reports is the one the tests check.

use super::lisa::{Credit, Donor};
use super::{Coupled, CoupledConfig, Coupling};
use crate::cc::host::{FlowCtx, FlowId, GroupKey, HostCc};
use crate::cc::{AckSample, CcState, CongestionControl};
use brisk_time::{Duration, Instant};
use std::net::SocketAddr;

const fn d(cwnd: u32, in_flight: u32) -> Option<Donor> {
    Some(Donor { cwnd, in_flight })
}

const fn c(new_cwnd: u32, take: u32, ignore: u32) -> Credit {
    Credit {
        new_cwnd,
        take,
        ignore,
    }
}

/// The credit table, every branch and boundary of Algorithm 1, with the seed's values:
/// (donor's cwnd and segments in flight) → (new subflow's IW, taken, ACKs ignored),
/// for a joiner whose own IW is 10.
pub const CREDIT_TABLE: [(Option<Donor>, Credit); 14] = [
    (d(40, 40), c(10, 10, 10)), // the paper's worked example: 30 + 10, ignore 10
    (d(40, 30), c(10, 10, 0)),  // flight already within the kept window
    (d(40, 0), c(10, 10, 0)),
    (d(20, 20), c(10, 10, 10)), // body §3.3: 20 → 10 / 10
    (d(21, 21), c(10, 10, 10)),
    (d(1000, 1000), c(10, 10, 10)),
    (d(19, 19), c(9, 9, 9)), // 6–19: halve (integer), donor keeps 10
    (d(19, 5), c(9, 9, 0)),
    (d(7, 7), c(3, 3, 3)), // L3: 7/2 = 3, donor keeps 4
    (d(6, 6), c(3, 3, 3)),
    (d(6, 2), c(3, 3, 0)),
    (d(5, 5), c(3, 0, 0)), // < 6: min IW, nothing taken (L4)
    (d(1, 1), c(3, 0, 0)),
    (None, c(10, 0, 0)), // no slow-start donor: the IW
];

/// The seed's worked example's compound windows after one RTT: with LISA, LISA
/// without ignoring ACKs, uncoupled.
pub const WORKED_EXAMPLE_PAPER: [u32; 3] = [80, 90, 100];

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([198, 18, 0, 1], port))
}

/// One subflow driven by hand through the host room: its controller and variables.
pub(crate) struct Sub {
    pub(crate) ctrl: Coupled,
    pub(crate) cc: CcState,
    pub(crate) id: FlowId,
}

impl Sub {
    pub(crate) fn new(
        host: &mut HostCc,
        port: u16,
        ctrl: Coupled,
        cwnd: u32,
        in_flight: u32,
    ) -> Sub {
        let (id, _) = host.join(addr(port), addr(9), Some(GroupKey::Assigned(7)));
        let mut cc = CcState::new(cwnd, 1448);
        cc.in_flight = in_flight;
        cc.srtt = Duration::from_millis(40);
        cc.cwnd_limited = true;
        Sub { ctrl, cc, id }
    }
    pub(crate) fn init(&mut self, host: &mut HostCc) {
        let mut cx = FlowCtx::new(&mut self.cc, Some(self.id), Some(host));
        self.ctrl.init(&mut cx, Instant::ZERO);
    }
    /// One ACK of one segment, as the connection calls the hooks.
    pub(crate) fn ack(&mut self, host: &mut HostCc) {
        self.cc.in_flight = self.cc.in_flight.saturating_sub(1);
        self.cc.delivered += 1;
        self.cc.snd_una += 1448;
        let ack = AckSample {
            acked_segs: 1,
            acked_bytes: 1448,
            ..Default::default()
        };
        let mut cx = FlowCtx::new(&mut self.cc, Some(self.id), Some(host));
        self.ctrl.on_ack(&mut cx, &ack);
        self.ctrl.cong_avoid(&mut cx, &ack);
    }
}

/// MP-1's worked example (seed 004 B.2 §3) through the controllers and the host room:
/// a LIA subflow in slow start at cwnd 40 with 40 segments in flight; a second joins.
/// Returns (donor's cwnd, new subflow's cwnd, ACKs the donor was told to ignore) after
/// one RTT, in which every segment in flight is ACKed once. `lisa` off is uncoupled
/// slow start; `ignore` off clears the ACK count (the seed's "90" case).
pub fn worked_example(lisa: bool, ignore: bool) -> (u32, u32, u32) {
    let mut host = HostCc::new();
    let lia = |lisa| Coupled::new(Coupling::Lia, CoupledConfig { lisa });
    let mut old = Sub::new(&mut host, 1, lia(lisa), 40, 40);
    old.init(&mut host); // the first subflow: its window is never changed
    let mut new = Sub::new(&mut host, 2, lia(lisa), 10, 0);
    new.init(&mut host);
    let ignored = host.flow_stats(old.id).map_or(0, |s| s.coupled.lisa_ignore);
    if !ignore {
        if let Some(s) = host.flow_stats_mut(old.id) {
            s.coupled.lisa_ignore = 0;
        }
    }
    new.cc.in_flight = new.cc.cwnd;
    let (old_flight, new_flight) = (old.cc.in_flight, new.cc.in_flight);
    for _ in 0..old_flight {
        old.ack(&mut host);
    }
    for _ in 0..new_flight {
        new.ack(&mut host);
    }
    (old.cc.cwnd, new.cc.cwnd, ignored)
}

//! The coupled controllers on the host room: MP-1 (LISA's arithmetic), a lone member
//! is its base controller, the member bound, the factory names, and RFC 6356 §2's
//! goals as properties over the multipath model (`model.rs`) on several seeds and
//! paths.

use super::model::{Link, Model};
use super::*;
use crate::cc::host::{GroupKey, HostCc};
use crate::cc::reno::Reno;
use crate::cc::spec::{CcContext, CcFactory, CcSpec, StandardCcFactory};
use crate::cc::{CcAlgorithm, CcState, PathInfo};
use brisk_time::Duration;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::net::SocketAddr;

fn addr(port: u16) -> SocketAddr {
    SocketAddr::from(([198, 18, 0, 1], port))
}

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn coupled(kind: Coupling, lisa: bool) -> Coupled {
    Coupled::new(kind, CoupledConfig { lisa })
}

/// One subflow driven by hand: its controller and variables.
struct Sub {
    ctrl: Coupled,
    cc: CcState,
    id: crate::cc::FlowId,
}

impl Sub {
    fn new(host: &mut HostCc, port: u16, ctrl: Coupled, cwnd: u32, in_flight: u32) -> Sub {
        let (id, _) = host.join(addr(port), addr(9), Some(GroupKey::Assigned(7)));
        let mut cc = CcState::new(cwnd, 1448);
        cc.in_flight = in_flight;
        cc.srtt = ms(40);
        cc.cwnd_limited = true;
        Sub { ctrl, cc, id }
    }
    fn init(&mut self, host: &mut HostCc) {
        let mut cx = FlowCtx::new(&mut self.cc, Some(self.id), Some(host));
        self.ctrl.init(&mut cx, Instant::ZERO);
    }
    /// One ACK of one segment, as the connection calls the hooks.
    fn ack(&mut self, host: &mut HostCc) {
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

/// MP-1's worked example (seed 004 B.2 §3): a subflow in slow start at cwnd 40 with
/// 40 segments in flight; a second subflow joins. Returns (donor, new) after one RTT,
/// in which every segment in flight is ACKed once.
fn worked_example(lisa: bool, ignore: bool) -> (u32, u32, u32) {
    let mut host = HostCc::new();
    let mut old = Sub::new(&mut host, 1, coupled(Coupling::Lia, lisa), 40, 40);
    old.init(&mut host); // the first subflow: its window is never changed
    assert_eq!(old.cc.cwnd, 40);
    let mut new = Sub::new(&mut host, 2, coupled(Coupling::Lia, lisa), 10, 0);
    new.init(&mut host);
    let ignored = host.flow_stats(old.id).unwrap().coupled.lisa_ignore;
    if !ignore {
        host.flow_stats_mut(old.id).unwrap().coupled.lisa_ignore = 0;
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

#[test]
fn mp1_worked_example_80_against_90_and_100() {
    // LISA: old 40 → 30, new 10, 10 ACKs ignored; after one RTT 60 + 20 = 80.
    assert_eq!(worked_example(true, true), (60, 20, 10));
    // Without ignoring the ACKs of the 40 in flight: 70 + 20 = 90.
    let (o, n, _) = worked_example(true, false);
    assert_eq!((o, n, o + n), (70, 20, 90));
    // Uncoupled slow start (no LISA): 80 + 20 = 100.
    let (o, n, ignored) = worked_example(false, true);
    assert_eq!((o, n, o + n, ignored), (80, 20, 100, 0));
}

#[test]
fn lisa_takes_from_the_fastest_slow_starter_and_a_reduction_drops_the_rest() {
    let mut host = HostCc::new();
    let mut a = Sub::new(&mut host, 1, coupled(Coupling::Olia, true), 24, 24);
    a.cc.srtt = ms(80);
    a.init(&mut host);
    let mut b = Sub::new(&mut host, 2, coupled(Coupling::Olia, true), 10, 22);
    b.init(&mut host);
    assert_eq!(b.cc.cwnd, 10, "a ≥ 20 gives 10");
    let st = host.flow_stats(a.id).unwrap().coupled;
    assert_eq!((st.lisa_debit, st.lisa_ignore), (10, 10), "24 in flight − 14 kept");
    a.ack(&mut host);
    assert_eq!(a.cc.cwnd, 14, "the debit is applied at the donor's next ACK");
    assert_eq!(a.ctrl.lisa_ignoring(), 9);
    for _ in 0..6 {
        b.ack(&mut host);
    }
    assert_eq!((b.cc.cwnd, b.cc.in_flight), (16, 16));
    // c joins: b sends 16 per 40 ms, faster than a's 14 per 80 ms: b is the donor.
    let mut c = Sub::new(&mut host, 3, coupled(Coupling::Olia, true), 10, 0);
    c.init(&mut host);
    assert_eq!(c.cc.cwnd, 8, "6–19 halves");
    let st = host.flow_stats(b.id).unwrap().coupled;
    assert_eq!((st.lisa_debit, st.lisa_ignore), (8, 8));
    b.ack(&mut host);
    assert_eq!(b.cc.cwnd, 8, "debit applied, this ACK's increase ignored");
    assert_eq!(b.ctrl.lisa_ignoring(), 7);
    let mut cx = FlowCtx::new(&mut b.cc, Some(b.id), Some(&mut host));
    b.ctrl.on_event(&mut cx, Instant::ZERO, CcEvent::EnterRecovery);
    assert_eq!(b.ctrl.lisa_ignoring(), 0, "L5: a reduction drops the rest");
    // Members in congestion avoidance are no donors: with none, the joiner keeps its IW.
    for s in [&mut a, &mut b, &mut c] {
        s.cc.ssthresh = 5;
        s.ack(&mut host);
    }
    let mut d = Sub::new(&mut host, 4, coupled(Coupling::Olia, true), 10, 0);
    d.init(&mut host);
    assert_eq!(d.cc.cwnd, 10);
    let st = host.flow_stats(a.id).unwrap().coupled;
    assert_eq!((st.lisa_debit, st.lisa_ignore), (0, 0));
}

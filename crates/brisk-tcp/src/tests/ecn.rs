//! ECN end to end through the harness's CE marking (RFC 3168 §6.1): the receiver
//! echoes ECE until CWR, the sender reduces once per window with cause `Ecn` and
//! never undoes it, and nothing is retransmitted.

use super::harness::{Action, Pair};
use crate::conn::CaState;
use crate::Config;
use brisk_time::Duration;
use brisk_wire::Flags;

fn ecn_pair() -> Pair {
    let cfg = {
        let mut c = Config::default();
        c.ecn.enabled = true;
        c
    };
    Pair::with_configs(Duration::from_millis(10), cfg.clone(), cfg)
}

#[test]
fn one_ce_mark_gives_one_reduction_echoed_until_cwr() {
    let mut p = ecn_pair();
    let (c, s) = p.establish();
    // Let cwnd grow, then mark one data segment.
    let mut marked = false;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 && x.index == 40 && !marked {
            marked = true;
            Action::MarkCe
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&vec![7u8; 200_000]);
    let mut got = Vec::new();
    let done = p.run_until(Duration::from_secs(10), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 200_000
    });
    assert!(done, "transfer finished");
    assert!(got.iter().all(|&b| b == 7));
    let info = p.client.conn(c).unwrap().info();
    assert_eq!(info.retransmits, 0, "ECN costs no retransmission");
    assert!(
        info.ssthresh < u32::MAX,
        "the mark reduced the window: {info:?}"
    );
    // The receiver echoed ECE, the sender answered with exactly one CWR.
    let ece = p
        .seen(false)
        .iter()
        .filter(|x| x.flags.contains(Flags::ECE))
        .count();
    let cwr = p
        .seen(true)
        .iter()
        .filter(|x| x.flags.contains(Flags::CWR))
        .count();
    assert!(ece >= 1, "ECE echoed");
    assert_eq!(
        cwr, 2,
        "CWR on the SYN (negotiation) and once in reply to ECE"
    );
    // After CWR, no more ECE once the receiver has seen it.
    let last_cwr = p
        .seen(true)
        .iter()
        .rev()
        .find(|x| x.flags.contains(Flags::CWR) && x.len > 0)
        .map(|x| x.at)
        .expect("a data segment carried CWR");
    let late_ece = p
        .seen(false)
        .iter()
        .filter(|x| x.at > last_cwr + Duration::from_millis(25) && x.flags.contains(Flags::ECE))
        .count();
    assert_eq!(late_ece, 0, "ECE stops after CWR arrives");
    assert_eq!(p.client.conn(c).unwrap().ca_state(), CaState::Open);
}

#[test]
fn ce_marks_without_ecn_negotiated_change_nothing() {
    let mut p = Pair::new(Duration::from_millis(10));
    let (c, s) = p.establish();
    p.set_hook(|x| {
        if x.len > 0 {
            Action::MarkCe
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&vec![1u8; 100_000]);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(10), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 100_000
    }));
    // Not-ECT packets cannot be marked; no ECE is ever echoed.
    assert!(p.seen(false).iter().all(|x| !x.flags.contains(Flags::ECE)));
    assert_eq!(p.client.conn(c).unwrap().info().ssthresh, u32::MAX);
}

/// A layer that records the causes its inner controller is asked to reduce for,
/// built by a custom factory: the endpoint's factory hook and the layer trait in one.
mod recording {
    use crate::cc::spec::{CcContext, CcFactory, StandardCcFactory};
    use crate::cc::{CcLayer, CcSpec, CongestionCause, CongestionControl, FlowCtx};
    use brisk_time::Instant;
    use std::sync::{Arc, Mutex};

    #[derive(Debug)]
    pub struct Recorder {
        pub inner: Box<dyn CongestionControl>,
        pub causes: Arc<Mutex<Vec<CongestionCause>>>,
    }
    impl CcLayer for Recorder {
        fn tag(&self) -> &'static str {
            "rec"
        }
        fn inner(&self) -> &dyn CongestionControl {
            self.inner.as_ref()
        }
        fn inner_mut(&mut self) -> &mut dyn CongestionControl {
            self.inner.as_mut()
        }
        fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
            self.causes.lock().unwrap().push(cause);
            self.inner.ssthresh(cc, now, cause)
        }
    }

    #[derive(Debug, Default)]
    pub struct RecordingFactory {
        pub causes: Arc<Mutex<Vec<CongestionCause>>>,
    }
    impl CcFactory for RecordingFactory {
        fn build(&self, spec: &CcSpec, ctx: CcContext<'_>) -> Box<dyn CongestionControl> {
            Box::new(Recorder {
                inner: StandardCcFactory.build(spec, ctx),
                causes: self.causes.clone(),
            })
        }
    }
}

#[test]
fn reductions_reach_the_controller_with_their_cause() {
    use crate::cc::CongestionCause;
    use crate::endpoint::{Endpoint, EndpointConfig};
    use std::sync::Arc;
    let factory = Arc::new(recording::RecordingFactory::default());
    let causes = factory.causes.clone();
    let mut p = ecn_pair();
    // Swap the client endpoint for one whose factory records.
    p.client = Endpoint::new(
        super::harness::CLIENT_IP,
        EndpointConfig {
            isn_secret: [1; 16],
            rng_seed: 1,
            cc_factory: factory,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    let (c, s) = p.establish();
    assert_eq!(p.client.conn(c).unwrap().info().cc.as_ref(), "cubic+rec");
    let mut n = 0;
    p.set_hook(move |x| {
        if !x.to_server || x.len == 0 {
            return Action::Deliver;
        }
        n += 1;
        match n {
            30 => Action::MarkCe,
            // Much later, a loss.
            400 => Action::Drop,
            _ => Action::Deliver,
        }
    });
    p.client.conn_mut(c).unwrap().write(&vec![3u8; 1_000_000]);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(30), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 1_000_000
    }));
    let causes = causes.lock().unwrap().clone();
    assert_eq!(causes.first(), Some(&CongestionCause::Ecn), "{causes:?}");
    // One mark, one reduction: the ECE still echoed on the ACK of high_seq (the
    // receiver has not yet seen CWR) must not start a second CWR episode.
    let ecn = causes
        .iter()
        .filter(|c| **c == CongestionCause::Ecn)
        .count();
    assert_eq!(ecn, 1, "{causes:?}");
    assert!(
        causes[1..]
            .iter()
            .any(|c| matches!(c, CongestionCause::Loss | CongestionCause::ProbeLoss)),
        "{causes:?}"
    );
}

/// Every data segment CE-marked, so the receiver echoes ECE on every ACK for the whole
/// transfer (as a hostile or broken receiver that never stops echoing would): the
/// sender reduces at most once per window, never below two segments, and the
/// transfer still completes.
#[test]
fn ece_on_every_ack_neither_stalls_nor_drives_cwnd_below_the_floor() {
    for base in crate::cc::CcAlgorithm::ALL {
        every_segment_marked(base);
    }
}

/// Every data segment CE-marked, for each controller (DCTCP's α goes to 1, CDG's
/// reductions are ECN's): the transfer completes, intact, without retransmission, with
/// ssthresh never below 2 and at most one reduction per RTT.
fn every_segment_marked(base: crate::cc::CcAlgorithm) {
    let mut p = pair_with(base);
    let (c, s) = p.establish();
    p.set_hook(|x| {
        if x.to_server && x.len > 0 {
            Action::MarkCe
        } else {
            Action::Deliver
        }
    });
    let data = vec![9u8; 300_000];
    p.client.conn_mut(c).unwrap().write(&data);
    let mut got = Vec::new();
    let mut min_ssthresh = u32::MAX;
    let done = p.run_until(Duration::from_secs(60), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        min_ssthresh = min_ssthresh.min(p.client.conn(c).unwrap().info().ssthresh);
        got.len() == data.len()
    });
    assert!(done, "{base:?}: the transfer completes under permanent ECE");
    assert!(got == data);
    let info = p.client.conn(c).unwrap().info();
    assert!(min_ssthresh >= 2, "{base:?}: floor: {min_ssthresh}");
    assert_eq!(info.retransmits, 0, "{base:?}: marks are not losses");
    // At most one reduction per window: CWR flags sent ≤ windows elapsed (each at
    // least one RTT of 20 ms here).
    let cwr = p
        .seen(true)
        .iter()
        .filter(|x| x.len > 0 && x.flags.contains(Flags::CWR))
        .count();
    let elapsed_ms = p.now.as_nanos() / 1_000_000;
    // RTT 20 ms here (the pair's 10 ms each way).
    assert!(
        cwr as u64 <= elapsed_ms / 20 + 1,
        "{base:?}: {cwr} CWRs in {elapsed_ms} ms"
    );
    assert!(cwr >= 2, "{base:?}: reductions happened: {cwr}");
    assert!(
        info.ecn_cwr >= cwr as u64,
        "{base:?}: every CWR flag answers a counted ECN reduction"
    );
}

fn pair_with(base: crate::cc::CcAlgorithm) -> Pair {
    let mut c = Config::default();
    c.ecn.enabled = true;
    c.congestion.controller = base.into();
    Pair::with_configs(Duration::from_millis(10), c.clone(), c)
}

/// RFC 8257 §3.2: a DCTCP receiver's ECE says exactly whether the segments an ACK
/// newly covers were CE-marked; a change of CE state flushes the held-back ACK first,
/// so no ACK covers marked and unmarked segments together. CWR does not stop the echo.
#[test]
fn dctcp_receiver_echoes_each_ce_mark_on_its_own_acks() {
    use std::collections::HashMap;
    let mut p = pair_with(crate::cc::CcAlgorithm::Dctcp);
    let (c, s) = p.establish();
    // Mark data segments in runs of varying length (odd and even, so delayed ACKs
    // straddle state changes).
    let ce = |i: usize| i % 7 < 3 || (40..55).contains(&i);
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 && ce(x.index) {
            Action::MarkCe
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&vec![3u8; 150_000]);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(10), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 150_000
    }));
    assert!(got.iter().all(|&b| b == 3));
    assert_eq!(p.client.conn(c).unwrap().info().retransmits, 0);
    // Each data segment's end sequence number, and whether it was marked.
    let marked: HashMap<u32, bool> = p
        .seen(true)
        .iter()
        .filter(|x| x.len > 0)
        .map(|x| ((x.seq + x.len as u32).0, ce(x.index)))
        .collect();
    let data: Vec<_> = p.seen(true).into_iter().filter(|x| x.len > 0).collect();
    let mut prev_ack: Option<brisk_wire::SeqNum> = None;
    let (mut checked, mut ece_acks) = (0, 0);
    for a in p
        .seen(false)
        .iter()
        .filter(|x| x.flags.contains(Flags::ACK))
    {
        let Some(&end_marked) = marked.get(&a.ack.0) else {
            continue;
        };
        if let Some(prev) = prev_ack.filter(|&pr| a.ack > pr) {
            // Every segment this ACK newly covers has the ACK's CE state.
            for d in data.iter().filter(|d| d.seq >= prev && d.seq < a.ack) {
                assert_eq!(
                    ce(d.index),
                    a.flags.contains(Flags::ECE),
                    "ACK {:?} (prev {:?}) covers segment {:?} (#{}) with another CE state",
                    a.ack,
                    prev,
                    d.seq,
                    d.index
                );
            }
            checked += 1;
        }
        assert_eq!(end_marked, a.flags.contains(Flags::ECE), "ACK {:?}", a.ack);
        ece_acks += usize::from(end_marked);
        prev_ack = Some(a.ack);
    }
    assert!(
        checked > 30 && ece_acks > 5,
        "{checked} ACKs checked, {ece_acks} ECE"
    );
}

/// DCTCP's sender counts the segments its ACKs report marked, and α follows the
/// marked fraction; marks cost no retransmission. (α averages F over windows, not
/// segments, and cwnd is small here, so α sits above the 10 % of segments.)
#[test]
fn dctcp_sender_counts_marked_segments_and_alpha_follows_them() {
    let mut p = pair_with(crate::cc::CcAlgorithm::Dctcp);
    let (c, s) = p.establish();
    // One data segment in ten is marked.
    p.set_hook(|x| {
        if x.to_server && x.len > 0 && x.index % 10 == 0 {
            Action::MarkCe
        } else {
            Action::Deliver
        }
    });
    p.client.conn_mut(c).unwrap().write(&vec![5u8; 2_000_000]);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(30), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 2_000_000
    }));
    let conn = p.client.conn(c).unwrap();
    assert_eq!(conn.info().retransmits, 0);
    let Some(crate::cc::CcDiagnostics::Dctcp(d)) = conn.info().cc_diag else {
        panic!("DCTCP reports its state");
    };
    assert!(d.alpha > 0.02 && d.alpha < 0.35, "{d:?}");
    assert!(d.windows > 50, "{d:?}");
    assert!(d.delivered_ce * 12 > d.delivered && d.delivered_ce * 8 < d.delivered);
}

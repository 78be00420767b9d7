use super::*;
use crate::mptcp::dsn::SendMap;
use crate::mptcp::sched::SchedKind;
use brisk_time::Duration;
use proptest::prelude::*;

fn view(rtt_ms: u64) -> SubflowView {
    SubflowView {
        srtt: Duration::from_millis(rtt_ms),
        cwnd: 10_000,
        in_flight: 0,
        queued: 0,
        mss: 1_000,
        backup: false,
        rate: 0,
        usable: true,
        ca_open: true,
    }
}

#[test]
fn fast_retransmit_stays_rto_reinjects_elsewhere() {
    let first = u64::MAX - 500; // wraps inside
    let mut map = SendMap::new(0, 16);
    map.push(first, 0, 1_000).unwrap();
    map.push(first.wrapping_add(3_000), 1_000, 1_000).unwrap();
    let mut r = Reinjector::new(first, 16);
    // Table I: a fast retransmit repairs on the same subflow only.
    assert!(!r.on_loss(LossKind::FastRetransmit, 0, map.outstanding()));
    assert_eq!(r.pending(), 0);
    // The Data ACK already covers the first 400 bytes.
    r.on_data_ack(first.wrapping_add(400));
    assert!(r.on_loss(LossKind::Rto, 0, map.outstanding()));
    assert_eq!(r.pending(), 600 + 1_000);
    assert_eq!(r.excluded(), SubflowMask::one(0));
    // Subflow 0 is the fastest, but it timed out: the scheduler picks among the rest.
    let views = [view(10), view(50), view(30)];
    let mut s = Scheduler::new(SchedKind::MinRtt);
    let a = r.next(&mut s, &views, 500).unwrap();
    assert_eq!(
        (a.dsn, a.len, a.on),
        (first.wrapping_add(400), 500, Pick::One(2))
    );
    r.on_data_ack(first.wrapping_add(3_500));
    let b = r.next(&mut s, &views, 5_000).unwrap();
    assert_eq!((b.dsn, b.len), (first.wrapping_add(3_500), 500));
    assert_eq!(r.next(&mut s, &views, 5_000), None);
    assert!(r.excluded().is_empty());
}

#[test]
fn nothing_to_reinject_when_no_other_subflow_can_send() {
    let mut map = SendMap::new(0, 4);
    map.push(0, 0, 1_000).unwrap();
    let mut r = Reinjector::new(0, 4);
    r.on_loss(LossKind::Rto, 0, map.outstanding());
    let mut views = [view(10), view(50)];
    views[1].in_flight = views[1].cwnd;
    let mut s = Scheduler::new(SchedKind::MinRtt);
    assert_eq!(r.next(&mut s, &views, 1_000), None);
    assert_eq!(r.pending(), 1_000, "still queued");
}

#[test]
fn flood_of_scattered_mappings_is_bounded() {
    let mut r = Reinjector::new(0, 32);
    let maps: Vec<Mapping> = (0..5_000u64)
        .map(|i| Mapping {
            dsn: i * 10,
            sub_off: i,
            len: 1,
            data_fin: false,
        })
        .collect();
    r.on_loss(LossKind::Rto, 1, maps.iter());
    assert_eq!(r.ranges(), 32);
    assert_eq!(r.stats.refused, 5_000 - 32);
}

proptest! {
    /// Whatever is lost and acknowledged, nothing below the Data ACK is re-injected and
    /// the subflows that timed out are never picked.
    #[test]
    fn reinjections_are_above_the_data_ack_and_avoid_failed_subflows(
        ops in proptest::collection::vec((0u8..3, 0usize..3, 0u64..20_000, 1u64..2_000), 1..60)
    ) {
        let mut r = Reinjector::new(1_000, 64);
        let mut s = Scheduler::new(SchedKind::MinRtt);
        let views = [view(10), view(20), view(30)];
        let mut una = 1_000u64;
        for (op, sub, a, b) in ops {
            match op {
                0 => {
                    let m = Mapping { dsn: 1_000 + a, sub_off: 0, len: b as u16, data_fin: false };
                    r.on_loss(LossKind::Rto, sub, [&m]);
                }
                1 => {
                    una = una.max(1_000 + a);
                    r.on_data_ack(una);
                }
                _ => {
                    let ex = r.excluded();
                    if let Some(x) = r.next(&mut s, &views, b) {
                        prop_assert!(x.dsn >= una);
                        if let Pick::One(i) = x.on {
                            prop_assert!(!ex.contains(i));
                        }
                    }
                }
            }
        }
    }
}

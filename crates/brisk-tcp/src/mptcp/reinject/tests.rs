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
        min_rtt: Duration::ZERO,
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

/// Partial re-injection: a subflow that takes only part of the range handed out
/// leaves the rest queued; every byte leaves the queue exactly once.
#[test]
fn a_range_taken_in_part_keeps_the_rest_queued() {
    let mut map = SendMap::new(0, 4);
    map.push(0, 0, 10_000).unwrap();
    map.push(10_000, 10_000, 5_000).unwrap();
    let mut r = Reinjector::new(0, 4);
    assert!(r.on_loss(LossKind::Rto, 0, map.outstanding()));
    assert_eq!(r.pending(), 15_000);
    let views = [view(10), view(50)];
    let mut s = Scheduler::new(SchedKind::MinRtt);
    let a = r.peek(&mut s, &views, 8_000).unwrap();
    assert_eq!((a.dsn, a.len, a.on), (0, 8_000, Pick::One(1)));
    // Peeking takes nothing.
    assert_eq!(r.pending(), 15_000);
    // The subflow took 1 200 bytes (its window): the rest waits.
    r.consume(&a, 1_200);
    assert_eq!((r.pending(), r.stats.partial), (13_800, 1));
    let b = r.peek(&mut s, &views, 64_000).unwrap();
    assert_eq!((b.dsn, b.len), (1_200, 13_800));
    // Nothing taken: nothing leaves.
    r.consume(&b, 0);
    assert_eq!(r.pending(), 13_800);
    r.consume(&b, b.len);
    assert_eq!(r.pending(), 0);
    assert_eq!(r.stats.bytes_reinjected, 15_000);
    assert!(r.excluded().is_empty());
}

proptest! {
    /// Whatever the subflows take of each range handed out, the bytes handed out
    /// are each queued byte exactly once, in order.
    #[test]
    fn partial_takes_hand_out_every_byte_once(
        lens in proptest::collection::vec(1u64..5_000, 1..8),
        takes in proptest::collection::vec(0u64..3_000, 1..64),
    ) {
        let mut map = SendMap::new(0, 16);
        let mut at = 0;
        for l in &lens {
            map.push(at, at, *l).unwrap();
            at += l;
        }
        let mut r = Reinjector::new(0, 16);
        r.on_loss(LossKind::Rto, 0, map.outstanding());
        let views = [view(10), view(20)];
        let mut s = Scheduler::new(SchedKind::MinRtt);
        let mut next = 0;
        // Each take hands out at least one byte: as many rounds as bytes suffice
        // (a fixed 4 096 did not when 4 097 bytes went one at a time).
        for t in takes.iter().cycle().take(at as usize + 1) {
            let Some(x) = r.peek(&mut s, &views, 64_000) else { break };
            prop_assert_eq!(x.dsn, next);
            let t = (*t).max(1);
            r.consume(&x, t);
            next += t.min(x.len);
        }
        prop_assert_eq!(next, at);
        prop_assert_eq!(r.stats.bytes_reinjected, at);
        prop_assert_eq!(r.pending(), 0);
    }
}

/// The data-level timer: armed while data is outstanding, lazily moved by Data ACK
/// progress, doubling per expiry up to its bounds, stopped when all is acknowledged.
#[test]
fn the_data_level_timer_backs_off_and_restarts_on_progress() {
    let t0 = Instant::from_millis(1_000);
    let base = Duration::from_millis(300);
    let mut t = DataRtxTimer::default();
    t.update(t0, 0, 0, || base);
    assert_eq!(t.at, None, "nothing outstanding");
    t.update(t0, 0, 5_000, || base);
    assert_eq!(t.at, Some(t0 + base));
    // Progress at +100 ms: the deadline moves when looked at, not per ACK.
    t.update(t0 + Duration::from_millis(100), 2_000, 5_000, || base);
    assert_eq!(t.at, Some(t0 + base));
    assert!(!t.on_expiry(t0 + base, 2_000, 5_000, base));
    assert_eq!(t.at, Some(t0 + Duration::from_millis(400)));
    // No progress: it fires, and each expiry doubles the interval, bounded.
    let mut now = t0 + Duration::from_millis(400);
    let mut gaps = Vec::new();
    for _ in 0..12 {
        assert!(t.on_expiry(now, 2_000, 5_000, base));
        let next = t.at.unwrap();
        gaps.push((next - now).as_millis());
        now = next;
    }
    assert_eq!(
        gaps,
        [600, 1_200, 2_400, 4_800, 9_600, 19_200, 19_200, 19_200, 19_200, 19_200, 19_200, 19_200]
    );
    assert_eq!(
        DataRtxTimer::interval(Duration::from_secs(5), 9),
        DATA_RTX_MAX,
        "capped at 120 s"
    );
    assert_eq!(
        DataRtxTimer::interval(Duration::from_millis(5), 0),
        DATA_RTX_MIN,
        "at least 200 ms"
    );
    // Progress resets the backoff; acknowledging everything stops the timer.
    t.update(now, 3_000, 5_000, || base);
    assert_eq!(t.backoff, 0);
    t.update(now, 5_000, 5_000, || base);
    assert_eq!(t.at, None);
}

use super::*;
use crate::queue::test_packets::{fold, ip6, ip_tos};
use proptest::prelude::*;

const T: Instant = Instant::ZERO;

/// An IPv4 packet of `len` bytes with DSCP `dscp` (ECN bits ECT(0), which must not
/// change the band).
fn pkt(id: u64, dscp: u8, len: usize) -> Packet {
    ip_tos(id, len, (dscp << 2) | 0b10)
}

fn prio(bands: usize, limit: QueueLimit, push_out: bool) -> Prio {
    Prio::new(PrioParams {
        bands,
        limit,
        push_out,
    })
    .unwrap()
}

fn drain(q: &mut Prio) -> Vec<u64> {
    std::iter::from_fn(|| q.dequeue(T))
        .map(|d| d.pkt.id)
        .collect()
}

fn drops(q: &mut Prio) -> Vec<u64> {
    std::iter::from_fn(|| q.poll_drop())
        .map(|d| {
            assert!(d.overflow, "push-outs are overflow drops");
            d.pkt.id
        })
        .collect()
}

#[test]
fn higher_bands_go_first_and_each_band_is_fifo() {
    let mut q = prio(4, QueueLimit::Packets(100), true);
    // (id, dscp): interleaved arrivals over bands 0..=3.
    for (id, dscp) in [
        (1, 2),
        (2, 0),
        (3, 3),
        (4, 1),
        (5, 0),
        (6, 2),
        (7, 1),
        (8, 3),
    ] {
        q.enqueue(T, pkt(id, dscp, 100)).unwrap();
    }
    assert_eq!(drain(&mut q), vec![2, 5, 4, 7, 1, 6, 3, 8]);
    assert!(q.is_empty());
    assert_eq!(q.len_bytes(), 0);
}

#[test]
fn a_high_arrival_overtakes_a_backlog_at_the_next_dequeue() {
    let mut q = prio(2, QueueLimit::Packets(100), true);
    for id in 0..10 {
        q.enqueue(T, pkt(id, 1, 1500)).unwrap();
    }
    assert_eq!(q.dequeue(T).unwrap().pkt.id, 0);
    q.enqueue(T, pkt(99, 0, 1500)).unwrap();
    assert_eq!(q.dequeue(T).unwrap().pkt.id, 99);
    assert_eq!(q.dequeue(T).unwrap().pkt.id, 1);
}

#[test]
fn push_out_evicts_the_lowest_band_newest_first() {
    let mut q = prio(3, QueueLimit::Packets(4), true);
    for (id, dscp) in [(1, 1), (2, 2), (3, 2), (4, 1)] {
        q.enqueue(T, pkt(id, dscp, 1000)).unwrap();
        assert!(q.poll_drop().is_none());
    }
    // Full. Band 0 arrivals take band 2's newest, then its oldest, then band 1's newest.
    q.enqueue(T, pkt(10, 0, 1000)).unwrap();
    assert_eq!(drops(&mut q), vec![3]);
    q.enqueue(T, pkt(11, 0, 1000)).unwrap();
    assert_eq!(drops(&mut q), vec![2]);
    q.enqueue(T, pkt(12, 0, 1000)).unwrap();
    assert_eq!(drops(&mut q), vec![4]);
    assert_eq!(q.len_packets(), 4);
    assert_eq!(drain(&mut q), vec![10, 11, 12, 1]);
    let c = q.band_counters();
    assert_eq!(c[2].pushed_out, 2);
    assert_eq!(c[1].pushed_out, 1);
    assert_eq!(c[0].pushed_out, 0);
}

#[test]
fn a_middle_band_pushes_out_only_bands_below_it() {
    let mut q = prio(3, QueueLimit::Packets(3), true);
    for (id, dscp) in [(1, 0), (2, 2), (3, 1)] {
        q.enqueue(T, pkt(id, dscp, 100)).unwrap();
    }
    q.enqueue(T, pkt(4, 1, 100)).unwrap();
    assert_eq!(drops(&mut q), vec![2], "band 2 goes, band 0 stays");
    // Now bands 0 and 1 only: another band 1 arrival has nothing below it.
    let back = q.enqueue(T, pkt(5, 1, 100)).unwrap_err();
    assert_eq!(back.id, 5);
    assert!(q.poll_drop().is_none());
    assert_eq!(drain(&mut q), vec![1, 3, 4]);
}

#[test]
fn an_arrival_with_nothing_lower_is_rejected() {
    let mut q = prio(3, QueueLimit::Packets(2), true);
    q.enqueue(T, pkt(1, 0, 100)).unwrap();
    q.enqueue(T, pkt(2, 1, 100)).unwrap();
    // Equal and lower priorities find nothing below them.
    assert_eq!(q.enqueue(T, pkt(3, 1, 100)).unwrap_err().id, 3);
    assert_eq!(q.enqueue(T, pkt(4, 2, 100)).unwrap_err().id, 4);
    assert!(q.poll_drop().is_none());
    let c = q.band_counters();
    assert_eq!((c[1].rejected, c[2].rejected), (1, 1));
    assert_eq!(drain(&mut q), vec![1, 2]);
}

#[test]
fn byte_limit_evicts_as_many_lower_packets_as_the_arrival_needs() {
    let mut q = prio(4, QueueLimit::Bytes(3000), true);
    q.enqueue(T, pkt(1, 0, 1000)).unwrap();
    q.enqueue(T, pkt(2, 2, 400)).unwrap();
    q.enqueue(T, pkt(3, 3, 400)).unwrap();
    q.enqueue(T, pkt(4, 3, 400)).unwrap();
    q.enqueue(T, pkt(5, 3, 400)).unwrap();
    assert_eq!(q.len_bytes(), 2600);
    // 1500 bytes need 1100 freed: band 3's three packets (1200), newest first; band 2
    // is untouched.
    q.enqueue(T, pkt(6, 1, 1500)).unwrap();
    assert_eq!(drops(&mut q), vec![5, 4, 3]);
    assert_eq!(q.len_bytes(), 2900);
    // Exactly full: a 100-byte band 0 arrival fits without evicting.
    q.enqueue(T, pkt(7, 0, 100)).unwrap();
    assert!(q.poll_drop().is_none());
    assert_eq!(q.len_bytes(), 3000);
    assert_eq!(drain(&mut q), vec![1, 7, 6, 2]);
}

#[test]
fn nothing_is_evicted_when_evicting_all_lower_packets_would_not_make_room() {
    let mut q = prio(2, QueueLimit::Bytes(3000), true);
    q.enqueue(T, pkt(1, 0, 2000)).unwrap();
    q.enqueue(T, pkt(2, 1, 500)).unwrap();
    // Even without band 1's 500 bytes, 2000 + 1001 > 3000: rejected, band 1 kept.
    assert_eq!(q.enqueue(T, pkt(3, 0, 1001)).unwrap_err().id, 3);
    assert!(q.poll_drop().is_none());
    assert_eq!(q.band_len(1), 1);
    // 2000 + 1000 = 3000 fits once band 1 goes.
    q.enqueue(T, pkt(4, 0, 1000)).unwrap();
    assert_eq!(drops(&mut q), vec![2]);
}

#[test]
fn a_packet_larger_than_the_whole_limit_evicts_nothing() {
    let mut q = prio(2, QueueLimit::Bytes(1000), true);
    q.enqueue(T, pkt(1, 1, 500)).unwrap();
    assert_eq!(q.enqueue(T, pkt(2, 0, 1001)).unwrap_err().id, 2);
    assert!(q.poll_drop().is_none());
    assert_eq!(q.len_packets(), 1);
}

#[test]
fn packet_limit_counts_packets_not_bytes() {
    let mut q = prio(2, QueueLimit::Packets(3), true);
    for id in 0..3 {
        q.enqueue(T, pkt(id, 0, 1500)).unwrap();
    }
    assert_eq!(q.len_bytes(), 4500);
    assert!(q.enqueue(T, pkt(3, 0, 20)).is_err());
    q.dequeue(T).unwrap();
    q.enqueue(T, pkt(4, 0, 20)).unwrap();
    assert_eq!(q.len_packets(), 3);
}

#[test]
fn without_push_out_every_band_is_tail_dropped_against_the_shared_limit() {
    let mut q = prio(2, QueueLimit::Packets(3), false);
    for id in 0..3 {
        q.enqueue(T, pkt(id, 1, 100)).unwrap();
    }
    assert_eq!(q.enqueue(T, pkt(10, 0, 100)).unwrap_err().id, 10);
    assert!(q.poll_drop().is_none());
    q.dequeue(T).unwrap();
    q.enqueue(T, pkt(11, 0, 100)).unwrap();
    // Scheduling is still strict.
    assert_eq!(drain(&mut q), vec![11, 1, 2]);
    let c = q.band_counters();
    assert_eq!(c[0].rejected, 1);
    assert_eq!(c[1].pushed_out, 0);
}

#[test]
fn counters_account_for_every_packet() {
    let mut q = prio(3, QueueLimit::Packets(4), true);
    for id in 0..6 {
        let _ = q.enqueue(T, pkt(id, 2, 100));
    }
    q.dequeue(T).unwrap();
    q.enqueue(T, pkt(10, 0, 100)).unwrap();
    q.enqueue(T, pkt(11, 1, 100)).unwrap();
    let _ = drops(&mut q);
    let c = q.band_counters();
    assert_eq!(
        c[2],
        BandCounters {
            enqueued: 4,
            dequeued: 1,
            rejected: 2,
            pushed_out: 1,
        }
    );
    assert_eq!(c[0].enqueued + c[1].enqueued, 2);
    for (b, c) in c.iter().enumerate() {
        assert_eq!(
            c.enqueued,
            c.dequeued + c.pushed_out + q.band_len(b) as u64,
            "band {b}"
        );
    }
}

#[test]
fn the_band_is_the_dscp_capped_at_the_last_band_for_ipv4_and_ipv6() {
    let mut q = prio(4, QueueLimit::Packets(100), true);
    // (dscp, band): DSCP 0 is band 0; DSCP beyond the bands goes to the last; ECN bits
    // play no part.
    for (dscp, band) in [(0u8, 0usize), (1, 1), (3, 3), (4, 3), (46, 3), (63, 3)] {
        let mut v4 = prio(4, QueueLimit::Packets(10), true);
        v4.enqueue(T, ip_tos(0, 60, (dscp << 2) | 0b11)).unwrap();
        assert_eq!(v4.band_len(band), 1, "IPv4 DSCP {dscp}");
        let mut v6 = prio(4, QueueLimit::Packets(10), true);
        v6.enqueue(T, ip6(0, 60, (dscp << 2) | 0b01)).unwrap();
        assert_eq!(v6.band_len(band), 1, "IPv6 DSCP {dscp}");
        q.enqueue(T, ip6(u64::from(dscp), 60, dscp << 2)).unwrap();
    }
    assert_eq!(q.unclassified(), 0);
    // With two bands (the paper's priority 0 and 1), TOS 0x10 (DSCP 4) is band 1.
    let mut two = prio(2, QueueLimit::Packets(10), true);
    two.enqueue(T, ip_tos(1, 60, 0x10)).unwrap();
    two.enqueue(T, ip_tos(2, 60, 0x00)).unwrap();
    assert_eq!((two.band_len(0), two.band_len(1)), (1, 1));
    assert_eq!(drain(&mut two), vec![2, 1]);
}

#[test]
fn unreadable_packets_go_to_the_lowest_band_and_are_counted() {
    let mut q = prio(3, QueueLimit::Packets(3), true);
    let junk = |id, data: Vec<u8>| Packet {
        data,
        id,
        flow: 0,
        sent_at: T,
        l4_csum_valid: false,
    };
    q.enqueue(T, junk(1, vec![])).unwrap();
    q.enqueue(T, junk(2, vec![0x45; 10])).unwrap(); // IPv4 nibble, but truncated
    q.enqueue(T, junk(3, vec![0x00; 60])).unwrap(); // version 0
    assert_eq!(q.band_len(2), 3);
    assert_eq!(q.unclassified(), 3);
    // They are the first to be pushed out.
    q.enqueue(T, pkt(4, 1, 100)).unwrap();
    assert_eq!(drops(&mut q), vec![3]);
}

#[test]
fn the_header_is_untouched() {
    let mut q = prio(2, QueueLimit::Packets(10), true);
    let p = pkt(1, 4, 100);
    let before = p.data.clone();
    q.enqueue(T, p).unwrap();
    let d = q.dequeue(T).unwrap();
    assert_eq!(d.pkt.data, before);
    assert_eq!(fold(&d.pkt.data), 0xffff);
    assert!(!d.ce_marked);
}

#[test]
fn bad_parameters_name_the_field_and_range() {
    for bands in [0, 17] {
        let e = Prio::new(PrioParams {
            bands,
            ..PrioParams::default()
        })
        .unwrap_err();
        let s = e.to_string();
        assert!(
            s.contains("queue.bands") && s.contains("between 1 and 16"),
            "{s}"
        );
    }
    let e = Prio::new(PrioParams {
        limit: QueueLimit::Bytes(0),
        ..PrioParams::default()
    })
    .unwrap_err();
    assert!(e.to_string().contains("queue.limit"), "{e}");
    assert!(Prio::new(PrioParams {
        bands: 16,
        ..PrioParams::default()
    })
    .is_ok());
}

#[derive(Clone, Debug)]
enum Op {
    /// Offer a packet of this DSCP and length.
    Offer(u8, usize),
    Dequeue,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => (0u8..8, 0usize..1600).prop_map(|(d, l)| Op::Offer(d, l)),
        2 => Just(Op::Dequeue),
    ]
}

/// Records how packet `id` left; a second ending is a duplicate.
fn settle(
    id: u64,
    what: &'static str,
    fate: &mut [Option<&'static str>],
) -> Result<(), TestCaseError> {
    let slot = &mut fate[id as usize];
    prop_assert!(
        slot.is_none(),
        "packet {} ended twice: {:?} then {}",
        id,
        slot,
        what
    );
    *slot = Some(what);
    Ok(())
}

proptest! {
    /// Occupancy never exceeds the limit; strict priority holds at every dequeue; and
    /// every offered packet ends exactly once as rejected, pushed out, dequeued or
    /// still queued, matching the band counters.
    #[test]
    fn occupancy_bounded_and_every_packet_accounted_for(
        bands in 1usize..=6,
        bytes in proptest::bool::ANY,
        n in 1usize..6000,
        push_out in proptest::bool::ANY,
        ops in proptest::collection::vec(op(), 1..400),
    ) {
        let limit = if bytes { QueueLimit::Bytes(n) } else { QueueLimit::Packets(n / 100 + 1) };
        let mut q = prio(bands, limit, push_out);
        // Model: id → band of the packets inside.
        let mut inside: std::collections::BTreeMap<u64, usize> = Default::default();
        let mut fate: Vec<Option<&'static str>> = Vec::new();
        for o in ops.into_iter().chain(std::iter::repeat_n(Op::Dequeue, 2000)) {
            match o {
                Op::Offer(dscp, len) => {
                    let id = fate.len() as u64;
                    fate.push(None);
                    let band = usize::from(dscp).min(bands - 1);
                    match q.enqueue(T, pkt(id, dscp, len.max(20))) {
                        Ok(()) => { inside.insert(id, band); }
                        Err(p) => {
                            prop_assert_eq!(p.id, id);
                            settle(id, "rejected", &mut fate)?;
                        }
                    }
                    while let Some(d) = q.poll_drop() {
                        prop_assert!(push_out, "no push-out in the ablation");
                        let b = inside.remove(&d.pkt.id);
                        prop_assert!(b.is_some_and(|b| b > band), "evicted a band not below {}", band);
                        settle(d.pkt.id, "pushed out", &mut fate)?;
                    }
                }
                Op::Dequeue => {
                    let Some(d) = q.dequeue(T) else {
                        prop_assert!(inside.is_empty());
                        continue;
                    };
                    prop_assert!(q.poll_drop().is_none());
                    let b = inside.remove(&d.pkt.id);
                    let best = inside.values().copied().min().unwrap_or(usize::MAX);
                    prop_assert!(b.is_some_and(|b| b <= best), "not strict priority");
                    settle(d.pkt.id, "dequeued", &mut fate)?;
                }
            }
            prop_assert_eq!(q.len_packets(), inside.len());
            match limit {
                QueueLimit::Packets(n) => prop_assert!(q.len_packets() <= n),
                QueueLimit::Bytes(n) => {
                    prop_assert!(q.len_bytes() <= n && q.len_packets() <= n)
                }
            }
        }
        prop_assert!(q.is_empty() && inside.is_empty());
        prop_assert!(fate.iter().all(Option::is_some), "a packet vanished");
        let c = q.band_counters();
        let count = |w: &str| fate.iter().filter(|f| **f == Some(w)).count() as u64;
        prop_assert_eq!(c.iter().map(|c| c.rejected).sum::<u64>(), count("rejected"));
        prop_assert_eq!(c.iter().map(|c| c.pushed_out).sum::<u64>(), count("pushed out"));
        prop_assert_eq!(c.iter().map(|c| c.dequeued).sum::<u64>(), count("dequeued"));
        for c in c {
            prop_assert_eq!(c.enqueued, c.dequeued + c.pushed_out);
        }
    }
}

/// Band 0 under PIE, fed at 1.25 × the service rate with ECN-capable packets while
/// band 1 holds a standing backlog: PIE marks band 0 (and holds its delay near the
/// target), never touches band 1, and strict priority still serves band 0 first.
#[test]
fn pie_on_band_0_marks_band_0_only() {
    let pie = super::PieParams {
        ecn: true,
        ecn_drop_above: None,
        ..super::PieParams::default()
    };
    let mut q = prio(2, QueueLimit::Packets(100_000), true)
        .with_band0_pie(pie, 7)
        .unwrap();
    let svc = 1500.0 * 8.0 / 10e6; // 10 Mbit/s
    let gap = svc / 1.25;
    let (mut t_in, mut t_out, mut id) = (0.0f64, svc, 0u64);
    let (mut marks0, mut marks1, mut out1) = (0u64, 0u64, 0u64);
    // A standing band-1 backlog, ECN-capable too: PIE must not mark it.
    for _ in 0..50 {
        q.enqueue(T, pkt(1_000_000 + id, 1, 1500)).unwrap();
        id += 1;
    }
    let secs = 20.0;
    while t_in < secs {
        if t_in <= t_out {
            let now = Instant::from_nanos((t_in * 1e9) as u64);
            let _ = q.enqueue(now, pkt(id, 0, 1500));
            id += 1;
            t_in += gap;
        } else {
            let now = Instant::from_nanos((t_out * 1e9) as u64);
            if let Some(d) = q.dequeue(now) {
                if d.pkt.id >= 1_000_000 {
                    out1 += 1;
                    marks1 += u64::from(d.ce_marked);
                } else {
                    marks0 += u64::from(d.ce_marked);
                }
            }
            t_out += svc;
        }
    }
    assert!(marks0 > 100, "band 0 marked {marks0}");
    assert_eq!(marks1, 0);
    // Marks still queued are counted at enqueue.
    assert!(q.band0_pie_marked() >= marks0);
    // Band 0 is overloaded the whole time, so band 1 gets nothing but what left
    // before the first band-0 arrival queued.
    assert!(out1 <= 1, "band 1 served {out1}");
    assert_eq!(q.band_len(1), 50 - out1 as usize);
    assert!(q.band0_pie_prob().unwrap() > 0.0);
    let c = q.band_counters();
    assert_eq!(c[0].enqueued, c[0].dequeued + q.band_len(0) as u64);
    // Marking removes nothing: band 0 grows, held only by the shared limit.
    assert_eq!(c[0].rejected, 0);
}

/// Without ECN, PIE on band 0 drops band-0 arrivals early (counted as `rejected`).
#[test]
fn pie_on_band_0_drops_when_not_marking() {
    let mut q = prio(2, QueueLimit::Packets(100_000), true)
        .with_band0_pie(super::PieParams::default(), 7)
        .unwrap();
    let svc = 1500.0 * 8.0 / 10e6;
    let gap = svc / 1.25;
    let (mut t_in, mut t_out, mut id) = (0.0f64, svc, 0u64);
    let mut refused = 0u64;
    while t_in < 20.0 {
        if t_in <= t_out {
            let now = Instant::from_nanos((t_in * 1e9) as u64);
            refused += u64::from(q.enqueue(now, ip_tos(id, 1500, 0)).is_err());
            id += 1;
            t_in += gap;
        } else {
            let _ = q.dequeue(Instant::from_nanos((t_out * 1e9) as u64));
            t_out += svc;
        }
    }
    assert!(refused > 100, "{refused}");
    assert_eq!(q.band_counters()[0].rejected, refused);
    assert_eq!(q.band0_pie_marked(), 0);
    // PIE holds band 0's backlog near its 20-ms target (10 Mbit/s: 17 packets).
    assert!(q.band_len(0) < 100, "{}", q.band_len(0));
}

use super::super::{Arrival, RecvBuffer};
use proptest::prelude::*;

/// Byte `i` of the test stream (not periodic in any small segment size).
fn byte(i: u64) -> u8 {
    (i.wrapping_mul(2_654_435_761) >> 13) as u8
}

fn stream(off: u64, len: usize) -> Vec<u8> {
    (off..off + len as u64).map(byte).collect()
}

/// One `read_unordered`-style read: in-order data first, else out-of-order.
fn read_any(r: &mut RecvBuffer, buf: &mut [u8]) -> Option<(u64, usize, bool)> {
    if r.readable() > 0 {
        let off = r.read_offset();
        let n = r.read(buf);
        return Some((off, n, true));
    }
    r.read_ooo(buf).map(|(o, n)| (o, n, false))
}

#[test]
fn arrivals_1_3_2_read_as_1_then_3_ooo_then_2_and_3_in_order() {
    // UT-4 / Minion Fig. 3: three 100-byte segments arrive as 1, 3, 2.
    let mut r = RecvBuffer::new(10_000, 8);
    let mut buf = [0u8; 100];
    let mut reads = vec![];
    for seg in [0u64, 2, 1] {
        r.insert(seg * 100, &stream(seg * 100, 100));
        while let Some((off, n, in_order)) = read_any(&mut r, &mut buf) {
            assert_eq!(&buf[..n], &stream(off, n)[..]);
            reads.push((off, n, in_order));
        }
    }
    assert_eq!(
        reads,
        vec![
            (0, 100, true),
            (200, 100, false),
            (100, 100, true),
            (200, 100, true)
        ]
    );
}

#[test]
fn large_buffer_reads_filled_hole_and_redelivery_as_one_in_order_run() {
    let mut r = RecvBuffer::new(10_000, 8);
    let mut buf = [0u8; 1000];
    r.insert(200, &stream(200, 100));
    assert_eq!(r.read_ooo(&mut buf), Some((200, 100)));
    assert_eq!(r.read_ooo(&mut buf), None, "handed out once only");
    r.insert(0, &stream(0, 200));
    assert_eq!(read_any(&mut r, &mut buf), Some((0, 300, true)));
    assert_eq!(r.unordered_intervals(), 0, "in-order bytes are forgotten");
}

#[test]
fn reads_take_the_lowest_undelivered_run_and_skip_delivered_bytes() {
    let mut r = RecvBuffer::new(10_000, 8);
    let mut buf = [0u8; 50];
    r.insert(500, &stream(500, 100));
    r.insert(300, &stream(300, 100));
    assert_eq!(r.read_ooo(&mut buf), Some((300, 50)));
    assert_eq!(r.read_ooo(&mut buf), Some((350, 50)));
    assert_eq!(r.read_ooo(&mut buf), Some((500, 50)));
    // A segment lands below everything handed out so far and bridges both ranges.
    r.insert(200, &stream(200, 400));
    let mut got = vec![];
    while let Some((o, n)) = r.read_ooo(&mut buf) {
        assert_eq!(&buf[..n], &stream(o, n)[..]);
        got.push((o, n));
    }
    assert_eq!(
        got,
        vec![(200, 50), (250, 50), (400, 50), (450, 50), (550, 50)]
    );
    assert_eq!(r.unordered_intervals(), 1);
}

#[test]
fn unordered_reads_leave_window_sack_and_store_untouched() {
    let mut with = RecvBuffer::new(10_000, 8);
    let mut without = RecvBuffer::new(10_000, 8);
    let mut buf = [0u8; 64];
    for (off, len) in [(300u64, 100usize), (100, 50), (600, 10), (150, 100)] {
        let a = with.insert(off, &stream(off, len));
        let b = without.insert(off, &stream(off, len));
        assert_eq!(a, b);
        while with.read_ooo(&mut buf).is_some() {}
        let (mut sa, mut sb) = (vec![], vec![]);
        with.sack_blocks(4, &mut sa);
        without.sack_blocks(4, &mut sb);
        assert_eq!(sa, sb);
        assert_eq!(with.free(), without.free());
        assert_eq!(with.nxt(), without.nxt());
        assert_eq!(with.ooo_bytes(), without.ooo_bytes());
    }
}

#[test]
fn hostile_peer_cannot_grow_unordered_bookkeeping_beyond_its_cap() {
    let max_ranges = 8;
    let mut r = RecvBuffer::new(1 << 20, max_ranges);
    let mut buf = [0u8; 1];
    // Rounds of: many 1-byte islands, each read one byte at a time, then bridged by a
    // segment that leaves undelivered bytes between every delivered island.
    let mut base = 1_000_000u64;
    for _ in 0..200 {
        base -= 64;
        for i in 0..max_ranges as u64 * 4 {
            let off = base + i * 2;
            r.insert(off, &stream(off, 1));
            let _ = r.read_ooo(&mut buf);
        }
        // Bridge down to the previous round's range: one range, many delivered islands.
        r.insert(base, &stream(base, 64));
        let _ = r.read_ooo(&mut buf);
        assert!(r.ooo_ranges() <= max_ranges);
        assert!(r.unordered_intervals() <= 2 * max_ranges);
    }
    assert_eq!(
        r.unordered_intervals(),
        2 * max_ranges,
        "the cap was reached"
    );
    assert!(r.unordered_declined() > 0);
    // Whatever was declined still arrives in order once the hole fills.
    r.insert(0, &stream(0, 1_000_000));
    let mut big = vec![0u8; 1 << 21];
    let mut total = 0;
    while let Some((off, n, in_order)) = read_any(&mut r, &mut big) {
        assert!(in_order);
        assert_eq!(off, total as u64);
        total += n;
    }
    assert_eq!(total as u64, r.nxt());
    assert_eq!(r.unordered_intervals(), 0);
}

#[test]
fn duplicate_and_dropped_arrivals_do_not_reopen_handed_out_bytes() {
    let mut r = RecvBuffer::new(10_000, 1);
    let mut buf = [0u8; 1000];
    r.insert(100, &stream(100, 100));
    assert_eq!(r.read_ooo(&mut buf), Some((100, 100)));
    assert_eq!(r.insert(120, &stream(120, 10)), Arrival::Duplicate);
    assert_eq!(r.insert(500, &stream(500, 10)), Arrival::Dropped);
    assert_eq!(r.read_ooo(&mut buf), None);
    // Extending the handed-out range hands out only the new bytes.
    r.insert(150, &stream(150, 100));
    assert_eq!(r.read_ooo(&mut buf), Some((200, 50)));
}

/// A segment: (offset, len) into the test stream.
fn segments(total: u64, cuts: &[u64]) -> Vec<(u64, usize)> {
    let mut points: Vec<u64> = cuts.iter().map(|c| c % total).filter(|&c| c > 0).collect();
    points.push(0);
    points.push(total);
    points.sort_unstable();
    points.dedup();
    points
        .windows(2)
        .map(|w| (w[0], (w[1] - w[0]) as usize))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// UT-4's properties under random segmentation, arrival order, duplication and
    /// reader buffer sizes: every byte is delivered at least once with the right
    /// content; every byte read out of order is read out of order exactly once and
    /// then exactly once in order; the in-order reads are exactly the sent stream.
    #[test]
    fn every_byte_arrives_at_least_once_and_ooo_bytes_exactly_once_more_in_order(
        total in 1u64..3000,
        cuts in proptest::collection::vec(any::<u64>(), 0..40),
        order in proptest::collection::vec(any::<u32>(), 0..120),
        dups in proptest::collection::vec(any::<u32>(), 0..20),
        bufsizes in proptest::collection::vec(1usize..400, 1..20),
        reads_per_arrival in 0usize..4,
    ) {
        let segs = segments(total, &cuts);
        // Arrival order: a shuffle driven by `order`, then random duplicates.
        let mut arrivals: Vec<usize> = (0..segs.len()).collect();
        for (i, k) in order.iter().enumerate() {
            let a = i % arrivals.len();
            let b = *k as usize % arrivals.len();
            arrivals.swap(a, b);
        }
        for d in &dups {
            let at = *d as usize % (arrivals.len() + 1);
            arrivals.insert(at, (*d as usize >> 8) % segs.len());
        }
        let mut r = RecvBuffer::new(4096, 64);
        let mut ooo_count = vec![0u8; total as usize];
        let mut in_count = vec![0u8; total as usize];
        let mut in_order_stream = vec![];
        let mut buf = vec![0u8; 400];
        let mut k = 0;
        let mut read = |r: &mut RecvBuffer, limit: usize| {
            for _ in 0..limit {
                let sz = bufsizes[k % bufsizes.len()];
                k += 1;
                let Some((off, n, in_order)) = read_any(r, &mut buf[..sz]) else { break };
                prop_assert!(n > 0);
                prop_assert_eq!(&buf[..n], &stream(off, n)[..]);
                for i in off..off + n as u64 {
                    if in_order {
                        in_count[i as usize] += 1;
                    } else {
                        prop_assert_eq!(in_count[i as usize], 0, "OOO after in order");
                        ooo_count[i as usize] += 1;
                    }
                }
                if in_order {
                    in_order_stream.extend_from_slice(&buf[..n]);
                }
            }
            Ok(())
        };
        for &s in &arrivals {
            let (off, len) = segs[s];
            r.insert(off, &stream(off, len));
            read(&mut r, reads_per_arrival)?;
        }
        // Make sure every segment arrived at least once, then drain.
        for &(off, len) in &segs {
            r.insert(off, &stream(off, len));
        }
        read(&mut r, usize::MAX)?;
        prop_assert_eq!(in_order_stream, stream(0, total as usize));
        for i in 0..total as usize {
            prop_assert_eq!(in_count[i], 1);
            prop_assert!(ooo_count[i] <= 1);
        }
        prop_assert_eq!(r.unordered_intervals(), 0);
        prop_assert!(!r.has_ooo());
    }
}

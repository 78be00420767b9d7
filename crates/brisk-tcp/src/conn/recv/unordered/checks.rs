//! uTCP's unordered receive (UT-4, Minion Fig. 3): the unit tests in `tests.rs` and
//! `brisk repro design` run these same checks.

use super::super::{Arrival, RecvBuffer};
use crate::claim_checks::{cases, Cases};
use rand::Rng;

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

pub fn arrivals_1_3_2_read_as_1_then_3_ooo_then_2_and_3_in_order() {
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

pub fn large_buffer_reads_filled_hole_and_redelivery_as_one_in_order_run() {
    let mut r = RecvBuffer::new(10_000, 8);
    let mut buf = [0u8; 1000];
    r.insert(200, &stream(200, 100));
    assert_eq!(r.read_ooo(&mut buf), Some((200, 100)));
    assert_eq!(r.read_ooo(&mut buf), None, "handed out once only");
    r.insert(0, &stream(0, 200));
    assert_eq!(read_any(&mut r, &mut buf), Some((0, 300, true)));
    assert_eq!(r.unordered_intervals(), 0, "in-order bytes are forgotten");
}

pub fn reads_take_the_lowest_undelivered_run_and_skip_delivered_bytes() {
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

pub fn unordered_reads_leave_window_sack_and_store_untouched() {
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

pub fn hostile_peer_cannot_grow_unordered_bookkeeping_beyond_its_cap() {
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

pub fn duplicate_and_dropped_arrivals_do_not_reopen_handed_out_bytes() {
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

/// One case of UT-4's property under random segmentation, arrival order, duplication
/// and reader buffer sizes: every byte is delivered at least once with the right
/// content; every byte read out of order is read out of order exactly once and then
/// exactly once in order; the in-order reads are exactly the sent stream.
#[derive(Clone, Debug)]
pub struct Ut4Case {
    pub total: u64,
    pub cuts: Vec<u64>,
    pub order: Vec<u32>,
    pub dups: Vec<u32>,
    pub bufsizes: Vec<usize>,
    pub reads_per_arrival: usize,
}

macro_rules! ensure {
    ($c:expr, $($m:tt)+) => {
        if !$c {
            return Err(format!($($m)+));
        }
    };
}

pub fn ut4_case(c: &Ut4Case) -> Result<(), String> {
    let total = c.total;
    let bufsizes = &c.bufsizes;
    let segs = segments(total, &c.cuts);
    // Arrival order: a shuffle driven by `order`, then random duplicates.
    let mut arrivals: Vec<usize> = (0..segs.len()).collect();
    for (i, k) in c.order.iter().enumerate() {
        let a = i % arrivals.len();
        let b = *k as usize % arrivals.len();
        arrivals.swap(a, b);
    }
    for d in &c.dups {
        let at = *d as usize % (arrivals.len() + 1);
        arrivals.insert(at, (*d as usize >> 8) % segs.len());
    }
    let mut r = RecvBuffer::new(4096, 64);
    let mut ooo_count = vec![0u8; total as usize];
    let mut in_count = vec![0u8; total as usize];
    let mut in_order_stream = vec![];
    let mut buf = vec![0u8; 400];
    let mut k = 0;
    let mut read = |r: &mut RecvBuffer, limit: usize| -> Result<(), String> {
        for _ in 0..limit {
            let sz = bufsizes[k % bufsizes.len()];
            k += 1;
            let Some((off, n, in_order)) = read_any(r, &mut buf[..sz]) else {
                break;
            };
            ensure!(n > 0, "empty read");
            ensure!(
                buf[..n] == stream(off, n)[..],
                "wrong bytes at offset {off}"
            );
            for i in off..off + n as u64 {
                if in_order {
                    in_count[i as usize] += 1;
                } else {
                    ensure!(in_count[i as usize] == 0, "byte {i} OOO after in order");
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
        read(&mut r, c.reads_per_arrival)?;
    }
    // Make sure every segment arrived at least once, then drain.
    for &(off, len) in &segs {
        r.insert(off, &stream(off, len));
    }
    read(&mut r, usize::MAX)?;
    ensure!(
        in_order_stream == stream(0, total as usize),
        "the in-order reads are not the stream"
    );
    for i in 0..total as usize {
        ensure!(
            in_count[i] == 1,
            "byte {i} read in order {} times",
            in_count[i]
        );
        ensure!(
            ooo_count[i] <= 1,
            "byte {i} read out of order {} times",
            ooo_count[i]
        );
    }
    ensure!(
        r.unordered_intervals() == 0,
        "unordered bookkeeping left over"
    );
    ensure!(!r.has_ooo(), "out-of-order data left over");
    Ok(())
}

/// UT-4: Fig. 3's exact read sequence, and `n` seeded cases of the property (the
/// proptest's input ranges). Panics on a failure.
pub fn ut4(n: usize) -> String {
    arrivals_1_3_2_read_as_1_then_3_ooo_then_2_and_3_in_order();
    large_buffer_reads_filled_hole_and_redelivery_as_one_in_order_run();
    reads_take_the_lowest_undelivered_run_and_skip_delivered_bytes();
    duplicate_and_dropped_arrivals_do_not_reopen_handed_out_bytes();
    let mut g = Cases::new(0x0704);
    cases(n, |i| {
        let r = &mut g.rng;
        let case = Ut4Case {
            total: r.gen_range(1u64..3000),
            cuts: (0..r.gen_range(0..40)).map(|_| r.gen()).collect(),
            order: (0..r.gen_range(0..120)).map(|_| r.gen()).collect(),
            dups: (0..r.gen_range(0..20)).map(|_| r.gen()).collect(),
            bufsizes: (0..r.gen_range(1..20))
                .map(|_| r.gen_range(1usize..400))
                .collect(),
            reads_per_arrival: r.gen_range(0usize..4),
        };
        ut4_case(&case).map_err(|e| format!("case {i} ({case:?}): {e}"))
    });
    format!("arrivals 1, 3, 2 read as 1, 3 (OOO, offset 200), 2, 3 in order; every byte ≥ 1×, each OOO byte once more in order in {n} seeded cases")
}

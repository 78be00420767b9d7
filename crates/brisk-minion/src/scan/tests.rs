use super::checks::records;
use super::*;
use crate::frame::encode_record;

#[test]
fn w3_a_middle_segment_lost() {
    super::checks::w3_a_middle_segment_lost();
}

#[test]
fn w3_b_resegmented() {
    super::checks::w3_b_resegmented();
}

#[test]
fn w3_c_first_segment_lost() {
    super::checks::w3_c_first_segment_lost();
}

#[test]
fn w3_single_marker_counterfactuals() {
    super::checks::w3_single_marker_counterfactuals();
}

#[test]
fn malformed_and_oversized_records_are_counted_once_and_skipped() {
    let mut wire = Vec::new();
    encode_record(&[7; 5], &mut wire).unwrap();
    // A body whose code byte runs past its end.
    wire.extend([0, 9, 1, 1, 0]);
    encode_record(&[8; 200], &mut wire).unwrap();
    encode_record(&[9; 5], &mut wire).unwrap();
    let limits = Limits {
        max_datagram: 100,
        ..Limits::default()
    };
    // Out of order first (all but the first byte), then everything in order.
    let mut s = RecordScanner::new(limits).unwrap();
    let mut got = Vec::new();
    s.push_out_of_order(1, &wire[1..], &mut |g| got.push((g.data[0], g.in_order)));
    s.push_in_order(0, &wire, &mut |g| got.push((g.data[0], g.in_order)))
        .unwrap();
    assert_eq!(got, vec![(9, false), (7, true)]);
    let c = s.counters();
    assert_eq!((c.malformed, c.oversized, c.delivered), (1, 1, 2));
    assert_eq!(c.duplicates_skipped, 3, "the three handled out of order");
}

#[test]
fn a_gap_in_in_order_data_is_an_error_and_bad_limits_name_the_field() {
    let mut s = RecordScanner::new(Limits::default()).unwrap();
    let e = s.push_in_order(5, &[0, 1], &mut |_| {}).unwrap_err();
    assert_eq!(
        e,
        ScanError::Gap {
            expected: 0,
            got: 5
        }
    );
    let e = RecordScanner::new(Limits {
        max_datagram: 0,
        ..Limits::default()
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("max_datagram") && e.to_string().contains("1 to 16 MiB"),
        "{e}"
    );
}

#[test]
fn the_out_of_order_window_is_bounded_and_refused_bytes_come_in_order() {
    let (wire, dgs) = records(&[100; 20]);
    let limits = Limits {
        max_ooo_bytes: 500,
        ..Limits::default()
    };
    let mut s = RecordScanner::new(limits).unwrap();
    let mut got = Vec::new();
    // Everything but the first byte out of order: only what lies within 500 bytes of
    // the in-order point is kept.
    for o in (1..wire.len()).step_by(103) {
        let e = (o + 103).min(wire.len());
        s.push_out_of_order(o as u64, &wire[o..e], &mut |g| got.push(g.data.to_vec()));
    }
    assert!(s.ooo_held() <= 500);
    assert!(s.counters().ooo_bytes_refused > 0);
    s.push_in_order(0, &wire, &mut |g| got.push(g.data.to_vec()))
        .unwrap();
    got.sort();
    let mut want = dgs.clone();
    want.sort();
    assert_eq!(got, want, "every datagram exactly once");
}

proptest::proptest! {
    /// The uTCP contract, simulated: the stream is cut into segments that arrive in a
    /// random order; each arrival beyond the in-order point is handed out of order
    /// once, and the in-order point then hands every byte again in order. Every
    /// datagram is delivered exactly once, intact, and none out of order if the
    /// receiver is told nothing out of order.
    #[test]
    fn every_datagram_exactly_once_in_any_arrival_order(
        lens in proptest::collection::vec(0usize..700, 1..40),
        cuts in proptest::collection::vec(1usize..900, 1..200),
        seed in 0u64..1000,
        unordered in proptest::prelude::any::<bool>(),
    ) {
        use rand::seq::SliceRandom;
        use rand::SeedableRng;
        let mut wire = Vec::new();
        let mut dgs = Vec::new();
        for (k, &n) in lens.iter().enumerate() {
            let d: Vec<u8> = (0..n).map(|i| ((k * 131 + i * 7) % 256) as u8).collect();
            encode_record(&d, &mut wire).unwrap();
            dgs.push(d);
        }
        // Segments.
        let mut segs = Vec::new();
        let mut o = 0;
        let mut ci = 0;
        while o < wire.len() {
            let n = cuts[ci % cuts.len()].min(wire.len() - o);
            segs.push((o, n));
            o += n;
            ci += 1;
        }
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        segs.shuffle(&mut rng);
        let mut s = RecordScanner::new(Limits::default()).unwrap();
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut have = vec![false; wire.len()];
        let mut inorder = 0usize;
        for &(o, n) in &segs {
            have[o..o + n].iter_mut().for_each(|h| *h = true);
            let mut d = |g: Datagram<'_>| got.push((g.offset, g.data.to_vec()));
            if o > inorder && unordered {
                s.push_out_of_order(o as u64, &wire[o..o + n], &mut d);
            }
            let mut end = inorder;
            while end < wire.len() && have[end] {
                end += 1;
            }
            if end > inorder {
                s.push_in_order(inorder as u64, &wire[inorder..end], &mut d).unwrap();
                inorder = end;
            }
        }
        proptest::prop_assert_eq!(inorder, wire.len());
        got.sort();
        let delivered: Vec<Vec<u8>> = got.into_iter().map(|(_, d)| d).collect();
        proptest::prop_assert_eq!(&delivered, &dgs);
        if !unordered {
            proptest::prop_assert_eq!(s.counters().delivered_out_of_order, 0);
        }
        proptest::prop_assert_eq!(s.counters().malformed + s.counters().oversized, 0);
    }

    /// Garbage in, no panic, bounded state.
    #[test]
    fn garbage_streams_never_panic(
        bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..3000),
        split in 0usize..3000,
    ) {
        let limits = Limits { max_datagram: 256, max_ooo_bytes: 1024, max_ooo_runs: 8 };
        let mut s = RecordScanner::new(limits).unwrap();
        let split = split.min(bytes.len());
        let mut n = 0;
        s.push_out_of_order(split as u64 + 1, &bytes[split..], &mut |g| { n += 1; assert!(g.data.len() <= 256); });
        s.push_in_order(0, &bytes, &mut |g| { n += 1; assert!(g.data.len() <= 256); }).unwrap();
        proptest::prop_assert!(s.ooo_held() <= 1024);
    }
}

/// The decoder's fuzz loop (issue 12 §7): 3000 seeded sessions of valid uCOBS streams
/// damaged by flipped, inserted, deleted or zeroed bytes and truncation, cut into
/// segments that arrive in a random order under uTCP's contract (each arrival beyond
/// the in-order point once out of order, then every byte again in order). Never a
/// panic or an in-order error; the window and every datagram stay within their
/// limits; no record start is delivered twice; and every record the damage did not
/// touch (its two markers included) is delivered intact: damage stays local.
#[test]
fn fuzz_loop_damaged_streams_stay_bounded_and_damage_stays_local() {
    use rand::seq::SliceRandom;
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x75636f6273);
    let limits = Limits {
        max_datagram: 2048,
        max_ooo_bytes: 16 << 10,
        max_ooo_runs: 32,
    };
    let (mut intact_checked, mut damaged_sessions) = (0u64, 0u64);
    for _ in 0..3000 {
        // A valid stream; remember each record's [start, end) with its markers.
        let mut wire = Vec::new();
        let mut recs: Vec<(usize, usize, Vec<u8>)> = Vec::new();
        for k in 0..rng.gen_range(1..30) {
            let n = rng.gen_range(0..1500);
            let d: Vec<u8> = (0..n).map(|i| ((k * 37 + i * 11) % 256) as u8).collect();
            let start = wire.len();
            encode_record(&d, &mut wire).unwrap();
            recs.push((start, wire.len(), d));
        }
        // Damage: each edit marks the original bytes it touches.
        let mut touched = vec![false; wire.len() + 1];
        let mut out: Vec<u8> = Vec::with_capacity(wire.len() + 64);
        let mut map = vec![0usize; wire.len()]; // original index -> new index
        let edits = rng.gen_range(0..4);
        let mut at: Vec<usize> = (0..edits).map(|_| rng.gen_range(0..wire.len())).collect();
        at.sort_unstable();
        let mut next = at.iter().peekable();
        for (i, &b) in wire.iter().enumerate() {
            map[i] = out.len();
            if next.peek() == Some(&&i) {
                next.next();
                touched[i] = true;
                match rng.gen_range(0..4) {
                    0 => out.push(b ^ rng.gen_range(1..=255u8)),
                    1 => {
                        out.push(b);
                        let g = rng.gen_range(1..40);
                        out.extend((0..g).map(|_| rng.gen::<u8>()));
                        touched[i + 1] = true;
                    }
                    2 => {} // deleted
                    _ => out.push(0),
                }
                continue;
            }
            out.push(b);
        }
        let cut = if rng.gen_bool(0.2) {
            rng.gen_range(0..=out.len())
        } else {
            out.len()
        };
        damaged_sessions += u64::from(edits > 0 || cut < out.len());
        out.truncate(cut);
        // Segments in a random order under uTCP's contract.
        let mut segs = Vec::new();
        let mut o = 0;
        while o < out.len() {
            let n = rng.gen_range(1..1600).min(out.len() - o);
            segs.push((o, n));
            o += n;
        }
        segs.shuffle(&mut rng);
        let mut s = RecordScanner::new(limits).unwrap();
        let mut got: Vec<(u64, Vec<u8>)> = Vec::new();
        let mut have = vec![false; out.len()];
        let mut inorder = 0usize;
        for &(o, n) in &segs {
            have[o..o + n].iter_mut().for_each(|h| *h = true);
            let mut d = |g: Datagram<'_>| {
                assert!(g.data.len() <= limits.max_datagram);
                got.push((g.offset, g.data.to_vec()));
            };
            if o > inorder {
                s.push_out_of_order(o as u64, &out[o..o + n], &mut d);
            }
            assert!(s.ooo_held() <= limits.max_ooo_bytes as u64);
            let mut end = inorder;
            while end < out.len() && have[end] {
                end += 1;
            }
            if end > inorder {
                s.push_in_order(inorder as u64, &out[inorder..end], &mut d)
                    .expect("in-order bytes are never an error");
                inorder = end;
            }
        }
        let mut starts: Vec<u64> = got.iter().map(|g| g.0).collect();
        starts.sort_unstable();
        let n = starts.len();
        starts.dedup();
        assert_eq!(starts.len(), n, "a record start delivered twice");
        // Untouched records that survived the truncation arrive intact.
        for (a, b, d) in &recs {
            if touched[*a..=*b].iter().any(|&t| t) || map[b - 1] >= cut {
                continue;
            }
            intact_checked += 1;
            assert!(
                got.iter().any(|g| &g.1 == d),
                "an undamaged record ({a}..{b}) was lost"
            );
        }
    }
    eprintln!("uCOBS fuzz loop: 3000 sessions ({damaged_sessions} damaged), {intact_checked} undamaged records all delivered intact");
}

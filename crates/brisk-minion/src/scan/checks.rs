//! The uCOBS record scanner's design claim MN-11 (Minion §5.3, Fig. 4; workplace check
//! W-3): the unit tests in `tests.rs` and `brisk repro design` run these same checks.

use super::*;
use crate::frame::encode_record;

/// One record per datagram, each one byte repeated: datagram k is `[k; len]`.
pub fn records(lens: &[usize]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut wire = Vec::new();
    let mut dgs = Vec::new();
    for (k, &n) in lens.iter().enumerate() {
        let d = vec![k as u8 + 1; n];
        encode_record(&d, &mut wire).unwrap();
        dgs.push(d);
    }
    (wire, dgs)
}

/// Feeds `(offset, len, in_order)` pieces of `wire`; returns, per piece, the indices
/// (1-based, by first byte) of the datagrams delivered by it.
pub fn feed(wire: &[u8], pieces: &[(usize, usize, bool)]) -> Vec<Vec<u8>> {
    let mut s = RecordScanner::new(Limits::default()).unwrap();
    pieces
        .iter()
        .map(|&(o, n, in_order)| {
            let mut got = Vec::new();
            let mut d = |g: Datagram<'_>| got.push(g.data[0]);
            if in_order {
                s.push_in_order(o as u64, &wire[o..o + n], &mut d).unwrap();
            } else {
                s.push_out_of_order(o as u64, &wire[o..o + n], &mut d);
            }
            got
        })
        .collect()
}

/// Three records of 10-byte datagrams, two markers each: 13 bytes per record.
pub const R: usize = 13;

/// W-3 (a): three records in three segments, the middle one lost. Records 1 and 3 at
/// once, record 2 after the retransmission (uTCP then hands segment 3 again in order).
pub fn w3_a_middle_segment_lost() {
    let (wire, _) = records(&[10, 10, 10]);
    assert_eq!(wire.len(), 3 * R);
    let got = feed(
        &wire,
        &[
            (0, R, true),
            (2 * R, R, false),
            (R, R, true),
            (2 * R, R, true),
        ],
    );
    assert_eq!(got, vec![vec![1], vec![3], vec![2], vec![]]);
}

/// W-3 (b): a middlebox re-segments the three records into two segments whose
/// boundary splits record 2; no loss. Record 1 on segment 1, records 2 and 3 on 2.
pub fn w3_b_resegmented() {
    let (wire, _) = records(&[10, 10, 10]);
    let cut = R + 6;
    let got = feed(&wire, &[(0, cut, true), (cut, wire.len() - cut, true)]);
    assert_eq!(got, vec![vec![1], vec![2, 3]]);
}

/// W-3 (c): as (b) with the first segment lost: record 3 as soon as segment 2 arrives;
/// record 1 and the rest of record 2 after the retransmission.
pub fn w3_c_first_segment_lost() {
    let (wire, _) = records(&[10, 10, 10]);
    let cut = R + 6;
    // The retransmission fills the hole: uTCP's next in-order read returns both
    // segments' bytes at once.
    let got = feed(
        &wire,
        &[(cut, wire.len() - cut, false), (0, wire.len(), true)],
    );
    assert_eq!(got, vec![vec![3], vec![1, 2]]);
}

/// The counterfactuals of W-3 (a): a single marker per record. Prepend-only
/// (`00 E1 00 E2 00 E3`) blocks record 1 (it might run into the hole) and record 3 (no
/// marker after it); append-only (`E1 00 E2 00 E3 00`) delivers record 1 (the stream's
/// start bounds it) and blocks record 3 (it might run back into the hole).
pub fn w3_single_marker_counterfactuals() {
    let body = |k: u8| {
        let mut v = Vec::new();
        encode_record(&[k; 10], &mut v).unwrap();
        v[1..v.len() - 1].to_vec()
    };
    for (prepend, expect_first) in [(true, vec![]), (false, vec![1])] {
        let mut wire = Vec::new();
        let mut seg = Vec::new();
        for k in 1..=3 {
            let start = wire.len();
            if prepend {
                wire.push(0);
            }
            wire.extend(body(k));
            if !prepend {
                wire.push(0);
            }
            seg.push((start, wire.len() - start));
        }
        let got = feed(
            &wire,
            &[
                (seg[0].0, seg[0].1, true),
                (seg[2].0, seg[2].1, false),
                (seg[1].0, seg[1].1, true),
                (seg[2].0, seg[2].1, true),
            ],
        );
        assert_eq!(got[0], expect_first, "prepend-only {prepend}: record 1");
        assert_eq!(
            got[1],
            Vec::<u8>::new(),
            "prepend-only {prepend}: record 3 blocked"
        );
        // Once the hole fills, the rest comes in order (prepend-only still waits for
        // a marker after record 3).
        let all: Vec<u8> = got.concat();
        let want: Vec<u8> = if prepend { vec![1, 2] } else { vec![1, 2, 3] };
        assert_eq!(all, want, "prepend-only {prepend}");
    }
}

/// MN-11: the three cases of Fig. 4 and the single-marker counterfactuals. Panics on
/// a failure.
pub fn mn11() -> String {
    w3_a_middle_segment_lost();
    w3_b_resegmented();
    w3_c_first_segment_lost();
    w3_single_marker_counterfactuals();
    "(a) records 1 and 3 at once, 2 after the retransmission; (b) 1 on segment 1, 2 and 3 on segment 2; (c) 3 on segment 2's arrival; prepend-only blocks 1 and 3, append-only blocks 3".into()
}

use super::*;
use proptest::prelude::*;
use std::collections::BTreeMap;

const WIN: WindowCtx = WindowCtx {
    data_ack: 1_000,
    right_edge: 1_000 + 65_536,
};

fn map(dsn: u64, sub_off: u64, len: u16) -> Mapping {
    Mapping {
        dsn,
        sub_off,
        len,
        data_fin: false,
    }
}

#[test]
fn send_map_coalesces_contiguous_bytes_and_looks_up() {
    let mut s = SendMap::new(0, 4);
    s.push(1_000, 0, 1_000).unwrap();
    s.push(2_000, 1_000, 1_000).unwrap();
    assert_eq!(s.len(), 1, "contiguous at both levels: one mapping");
    // A jump in DSN (another subflow took 2000..3000) starts a new mapping.
    s.push(4_000, 2_000, 500).unwrap();
    assert_eq!(s.len(), 2);
    assert_eq!(s.lookup(1_999).unwrap().dsn, 1_000);
    assert_eq!(s.lookup(2_000).unwrap(), map(4_000, 2_000, 500));
    assert_eq!(s.lookup(2_500), None);
    s.on_subflow_ack(2_000);
    assert_eq!(s.len(), 1);
}

#[test]
fn send_map_errors_name_the_field() {
    let mut s = SendMap::new(10, 1);
    let e = s.push(0, 11, 5).unwrap_err();
    assert_eq!(
        e,
        MapError::NotContiguous {
            expected: 10,
            got: 11
        }
    );
    assert!(e.to_string().contains("expected 10"));
    assert!(matches!(
        s.push(0, 10, 70_000),
        Err(MapError::TooLong { len: 70_000 })
    ));
    s.push(0, 10, 5).unwrap();
    let e = s.push(100, 15, 5).unwrap_err();
    assert_eq!(e, MapError::Full { limit: 1 });
    assert!(e.to_string().contains("at most 1"));
}

#[test]
fn data_fin_joins_the_last_mapping_or_stands_alone() {
    let mut s = SendMap::new(0, 4);
    s.push(0, 0, 100).unwrap();
    let m = s.push_data_fin(100).unwrap();
    assert_eq!((m.len, m.data_fin, m.payload()), (101, true, 100));
    let mut s = SendMap::new(0, 4);
    let m = s.push_data_fin(7).unwrap();
    assert_eq!((m.len, m.payload(), m.wire_ssn()), (1, 0, 0));
    assert!(
        s.is_empty(),
        "a FIN-only mapping has no subflow bytes to hold it by"
    );
    // Once the DATA_FIN is mapped, the last mapping ends with it.
    let mut s = SendMap::new(0, 4);
    s.push(0, 0, 10).unwrap();
    s.push_data_fin(10).unwrap();
    assert_eq!(s.lookup(9).unwrap().len, 11);
    s.on_subflow_ack(10);
    assert!(s.is_empty());
}

#[test]
fn recv_map_verdicts_as_linux() {
    let mut r = RecvMap::new(8);
    let mut c = MapCounters::default();
    let mut v = |r: &mut RecvMap, m, off, len| {
        let v = r.on_mapping(m, off, len, WIN);
        c.count(v);
        v
    };
    assert_eq!(v(&mut r, map(1_000, 0, 1_000), 0, 500), MapVerdict::New);
    // The same mapping again on the next segment.
    assert_eq!(
        v(&mut r, map(1_000, 0, 1_000), 500, 500),
        MapVerdict::Duplicate
    );
    // Same bytes, other DSN.
    assert_eq!(
        v(&mut r, map(5_000, 0, 1_000), 0, 100),
        MapVerdict::Inconsistent
    );
    // The segment is not inside its mapping.
    assert_eq!(
        v(&mut r, map(3_000, 2_000, 100), 2_100, 10),
        MapVerdict::NotCovering
    );
    // Beyond the advertised right edge.
    assert_eq!(
        v(&mut r, map(WIN.right_edge, 5_000, 100), 5_000, 100),
        MapVerdict::OutsideWindow
    );
    assert_eq!(
        v(&mut r, Mapping::infinite(9, 9), 9, 1),
        MapVerdict::Infinite
    );
    // Consistent overlap extends.
    assert_eq!(
        v(&mut r, map(1_500, 500, 1_000), 1_000, 100),
        MapVerdict::Extended
    );
    assert_eq!(r.len(), 1);
    assert_eq!(r.lookup(1_499), Some((2_499, 1)));
    assert_eq!(r.lookup(1_500), None);
    assert_eq!(c.new, 1);
    assert_eq!(c.duplicate, 1);
    assert_eq!(c.inconsistent, 1);
    assert_eq!(c.not_covering, 1);
    assert_eq!(c.outside_window, 1);
    assert_eq!(c.infinite, 1);
    assert_eq!(c.extended, 1);
}

#[test]
fn recv_map_data_fin_rules() {
    let mut r = RecvMap::new(8);
    let fin = Mapping {
        dsn: 1_000,
        sub_off: 0,
        len: 101,
        data_fin: true,
    };
    assert_eq!(r.on_mapping(fin, 0, 100, WIN), MapVerdict::New);
    assert_eq!(r.data_fin_after(99), Some(1_100));
    // Data after the DATA_FIN on the same subflow.
    assert_eq!(
        r.on_mapping(map(1_050, 50, 100), 50, 100, WIN),
        MapVerdict::Inconsistent
    );
    let only = Mapping {
        dsn: 1_100,
        sub_off: 0,
        len: 1,
        data_fin: true,
    };
    assert_eq!(
        r.on_mapping(only, 0, 0, WIN),
        MapVerdict::DataFinOnly { dsn: 1_100 }
    );
}

#[test]
fn recv_map_flood_stays_bounded() {
    // A hostile peer maps every other byte: the table never passes its limit.
    let mut r = RecvMap::new(64);
    let mut full = 0;
    for i in 0..10_000u64 {
        let w = WindowCtx {
            data_ack: 0,
            right_edge: u64::MAX / 2,
        };
        if r.on_mapping(map(i * 2, i * 2, 1), i * 2, 1, w) == MapVerdict::TableFull {
            full += 1;
        }
        assert!(r.len() <= 64);
    }
    assert_eq!(full, 10_000 - 64);
    r.consumed(u64::MAX / 4);
    assert!(r.is_empty());
}

#[test]
fn wire_mappings_round_trip_through_brisk_wire() {
    // A subflow past 4 GiB: the 32-bit relative sequence number wrapped.
    let m = Mapping {
        dsn: 0x1_2345_6789_0000,
        sub_off: 0x1_0000_0005,
        len: 1_400,
        data_fin: false,
    };
    for dsn64 in [true, false] {
        let w = m.to_wire(dsn64);
        assert_eq!(w.subflow_seq, 6);
        assert_eq!(
            Mapping::from_wire(&w, false, m.dsn - 50_000, m.sub_off - 3_000),
            m
        );
    }
    // DATA_FIN alone: subflow sequence 0, placed at the reference.
    let fin = Mapping {
        dsn: 77,
        sub_off: 900,
        len: 1,
        data_fin: true,
    };
    let w = fin.to_wire(false);
    assert_eq!(w.subflow_seq, 0);
    assert_eq!(Mapping::from_wire(&w, true, 70, 900), fin);
    // The infinite mapping stays infinite.
    let w = Mapping::infinite(5, 0).to_wire(true);
    assert!(w.is_infinite());
    assert!(Mapping::from_wire(&w, false, 0, 0).is_infinite());
}

#[test]
fn expand32_examples() {
    // Data ACK just past a 32-bit wrap.
    assert_eq!(expand32(0x1_FFFF_FFF0, 0x10), 0x2_0000_0010);
    // A late (older) value just before the wrap.
    assert_eq!(expand32(0x2_0000_0010, 0xFFFF_FFF0), 0x1_FFFF_FFF0);
    assert_eq!(expand32(5, 5), 5);
}

proptest! {
    #[test]
    fn expand32_recovers_values_within_half_the_space(
        reference in any::<u64>(), dist in -(1i64 << 31)..(1i64 << 31)
    ) {
        let x = reference.wrapping_add(dist as u64);
        prop_assert_eq!(expand32(reference, x as u32), x);
    }

    /// Whatever mappings a peer sends, the held ones stay disjoint, each lookup agrees
    /// with the mapping that was stored for that byte, and the count stays bounded.
    #[test]
    fn recv_map_holds_disjoint_consistent_mappings(
        ops in proptest::collection::vec((0u64..4_000, 0u64..4_000, 1u16..600, any::<bool>()), 1..200)
    ) {
        let mut r = RecvMap::new(16);
        let w = WindowCtx { data_ack: 0, right_edge: 1 << 40 };
        let mut truth: BTreeMap<u64, u64> = BTreeMap::new();
        for (dsn, off, len, fin) in ops {
            let m = Mapping { dsn, sub_off: off, len, data_fin: fin && len > 1 };
            let v = r.on_mapping(m, off, 1, w);
            if matches!(v, MapVerdict::New | MapVerdict::Extended) {
                for b in off..off + m.payload() {
                    truth.insert(b, dsn + (b - off));
                }
            }
            prop_assert!(r.len() <= 16);
            prop_assert!(r.capacity() <= 16, "storage {} beyond the limit", r.capacity());
            let mut prev_end = 0;
            for h in &r.maps {
                prop_assert!(h.start >= prev_end, "held mappings overlap or are out of order");
                prev_end = h.end();
            }
        }
        for (b, d) in truth {
            prop_assert_eq!(r.lookup(b).map(|x| x.0), Some(d));
        }
    }

    /// The send map's lookup finds, for every mapped byte, the DSN it was given.
    #[test]
    fn send_map_lookup_matches_pushes(
        lens in proptest::collection::vec((1u64..3_000, 0u64..3), 1..100)
    ) {
        let mut s = SendMap::new(0, 1_000);
        let (mut off, mut dsn) = (0u64, 0u64);
        let mut pushed = Vec::new();
        for (len, gap) in lens {
            dsn += gap * 10_000; // other subflows took data between
            s.push(dsn, off, len).unwrap();
            pushed.push((off, dsn, len));
            off += len;
            dsn += len;
        }
        for (o, d, l) in pushed {
            for b in [o, o + l / 2, o + l - 1] {
                let m = s.lookup(b).unwrap();
                prop_assert_eq!(m.dsn + (b - m.sub_off), d + (b - o));
            }
        }
    }
}

/// Both tables start empty and grow with use, never past their limits, whatever a peer
/// sends: scattered one-segment mappings (each a new entry) on the receive side, a
/// subflow taking data in pieces no other mapping continues on the send side.
#[test]
fn tables_grow_with_use_and_never_past_their_limits() {
    for limit in [1usize, 7, 100, 4096] {
        let mut r = RecvMap::new(limit);
        assert_eq!(r.capacity(), 0, "an idle subflow holds no receive table");
        let w = WindowCtx {
            data_ack: 0,
            right_edge: 1 << 40,
        };
        let mut full = 0;
        // Hostile: one-byte mappings with gaps, in descending then ascending order.
        for i in (0..limit as u64 + 50)
            .rev()
            .chain(limit as u64 + 50..2 * limit as u64 + 100)
        {
            match r.on_mapping(map(i * 7, i * 3, 1), i * 3, 1, w) {
                MapVerdict::New => {}
                MapVerdict::TableFull => full += 1,
                v => panic!("limit {limit}: mapping {i}: {v:?}"),
            }
            assert!(
                r.len() <= limit && r.capacity() <= limit,
                "limit {limit}: {} entries, storage {}",
                r.len(),
                r.capacity()
            );
        }
        assert_eq!(r.len(), limit);
        assert_eq!(full, 2 * limit as u64 + 100 - limit as u64);
        let mut s = SendMap::new(0, limit);
        assert_eq!(s.capacity(), 0, "an idle subflow holds no send table");
        let mut off = 0;
        for i in 0..2 * limit as u64 + 10 {
            // A DSN jump each time: no coalescing.
            match s.push(i * 1_000_000, off, 10) {
                Ok(_) => off += 10,
                Err(MapError::Full { .. }) => {}
                Err(e) => panic!("{e}"),
            }
            assert!(s.len() <= limit && s.capacity() <= limit);
        }
        assert_eq!(s.len(), limit);
    }
}

#[test]
fn mapped_run_spans_adjacent_mappings_and_stops_at_a_gap_or_the_cap() {
    let mut r = RecvMap::new(16);
    let w = WindowCtx {
        data_ack: 0,
        right_edge: 1 << 40,
    };
    // [0, 100) and [100, 250) adjacent (different DSN deltas), then a gap, [300, 400).
    for (dsn, off, len) in [(5_000, 0, 100), (9_000, 100, 150), (20_000, 300, 100)] {
        assert_eq!(r.on_mapping(map(dsn, off, len), off, 1, w), MapVerdict::New);
    }
    assert_eq!(r.mapped_run(0, 1_000), 250);
    assert_eq!(r.mapped_run(40, 1_000), 210);
    assert_eq!(r.mapped_run(40, 100), 100, "capped");
    assert_eq!(r.mapped_run(120, 1_000), 130);
    assert_eq!(r.mapped_run(250, 1_000), 0, "the gap");
    assert_eq!(r.mapped_run(310, 1_000), 90);
    assert_eq!(r.mapped_run(400, 1_000), 0);
}

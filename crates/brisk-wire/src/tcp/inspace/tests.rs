use super::detect::{self, detect_syn, Magic, SynKind};
use super::mode::{FlagOption, ModeSwitch};
use super::overhead::{Inputs, Ratio};
use super::zombi::{self, StreamDecoder, ZombiError};
use super::*;
use crate::tcp::ExtraOptions;
use proptest::prelude::*;
use rand::{Rng, RngCore, SeedableRng};

// ---- IS-1: layouts and exact sizes ----

#[test]
fn syn_layout_is_bit_exact() {
    let m = Magic::BRISK;
    let s = SynInSpace {
        sds: 0x0123,
        inoo_words: 5,
        soo_words: 3,
    };
    let b = s.encode(m).unwrap();
    assert_eq!(b.len(), 12);
    assert_eq!(b[0..4], m.a.to_be_bytes());
    assert_eq!(b[4..6], [0x01, 0x23]);
    // InOO 5 words = 20 octets: half-word & 0xFFFC is the octet count; Len = 2 below.
    assert_eq!(u16::from_be_bytes([b[6], b[7]]), (20 | 2));
    assert_eq!(b[8..10], m.b.to_be_bytes());
    assert_eq!(u16::from_be_bytes([b[10], b[11]]) & 0xFFFC, 12);
    assert_eq!(b[11] & 3, 0, "CU zero");
    assert_eq!(SynInSpace::decode(&b, m), Ok(s));
}

#[test]
fn data_layouts_and_sizes() {
    let short_p = DataInSpace::shortest(SentSize::Exact(100), 4, 4);
    let short_s = DataInSpace::shortest(SentSize::Exact(100), 4, 0);
    let full = DataInSpace::shortest(SentSize::Exact(100), 4, 1);
    assert_eq!(short_p.suffix, SuffixAt::AllPrefix);
    assert_eq!(short_s.suffix, SuffixAt::AllSuffix);
    assert_eq!(full.suffix, SuffixAt::Words(1));
    let mut out = [0xAAu8; 12];
    assert_eq!(short_p.encode(3, &mut out), Ok(8));
    assert_eq!(out[..8], [0, 0, 0, 1, 0, 100, 0, 16 | 1]);
    assert_eq!(short_s.encode(3, &mut out), Ok(8));
    assert_eq!(out[..8], [0, 0, 0, 0, 0, 100, 0, 16 | 1]);
    assert_eq!(full.encode(3, &mut out), Ok(12));
    assert_eq!(out, [0, 0, 0, 0, 0, 100, 0, 16 | 2, 0, 0, 0, 4]);
    for d in [short_p, short_s, full] {
        let n = d.encode(0, &mut out).unwrap();
        assert_eq!(DataInSpace::decode(&out[..n], 0), Ok(d));
    }
}

#[test]
fn jumbo_sizes() {
    let cases = [
        (0, 0, 12usize),
        (7, 0, 16),
        (7, 7, 16),
        (7, 3, 20),
        (1 << 20, 1, 20),
    ];
    for (inoo, soo, len) in cases {
        let j = JumboInSpace {
            sds: 4 * inoo + 100,
            inoo_words: inoo,
            soo_words: soo,
        };
        let mut out = [0u8; 20];
        assert_eq!(j.encode(0, &mut out), Ok(len), "{j:?}");
        let lf = out[7] & 3;
        assert_eq!(lf, [2, 3, 0][(len - 12) / 4], "Len bits");
        assert_eq!(JumboInSpace::decode(&out[..len], 0), Ok(j));
    }
    let mut bad = [0u8; 20];
    bad[7] = 1;
    bad[11] = 40;
    assert_eq!(
        JumboInSpace::decode(&bad, 0),
        Err(InSpaceError::UnknownLen { len: 1 })
    );
}

#[test]
fn mode_switch_and_flag_options() {
    for (enabled, request) in [(true, true), (true, false), (false, true), (false, false)] {
        let m = ModeSwitch::new(enabled, request);
        let n = m.encode_native(200);
        assert_eq!(n.len(), 3);
        assert_eq!(n[1], 3);
        assert_eq!(ModeSwitch::decode(&n, 200), Ok(m));
        let e = m.encode_exp();
        assert_eq!(ModeSwitch::decode(&e, 200), Ok(m));
    }
    assert_eq!(
        ModeSwitch::decode(&[200, 4, 0, 0], 200),
        Err(mode::ModeError::BadLength { len: 4 })
    );
    assert!(ModeSwitch::decode(&[], 200).is_err());
    // CU bits survive a forward.
    let m = ModeSwitch::decode(&[200, 3, 0b1010_1110], 200).unwrap();
    assert_eq!(m.encode_native(200)[2], 0b1010_1110);
    for f in [FlagOption::InSpaceO, FlagOption::InSpaceU] {
        assert_eq!(f.encode_native(201).len(), 2);
        let mut x = ExtraOptions::new();
        assert!(!f.present(&x));
        f.push(&mut x).unwrap();
        assert!(f.present(&x));
        let other = if f == FlagOption::InSpaceO {
            FlagOption::InSpaceU
        } else {
            FlagOption::InSpaceO
        };
        assert!(!other.present(&x));
    }
}

// ---- IS-2: alignment, special values, accounting ----

#[test]
fn padding_aligns_to_the_isn() {
    for isn in [0u32, 1, 7, u32::MAX - 2, 0x8000_0001] {
        assert_eq!(pad_len(isn, isn), 0, "SYN: offset 0 (AMB-D2-7)");
        assert_eq!(pad_len(isn.wrapping_add(1), isn), 3, "first data byte");
        for x in 0u32..64 {
            let seq = isn.wrapping_add(1).wrapping_add(x);
            let p = pad_len(seq, isn);
            assert!(p <= 3);
            let s = seq.wrapping_add(p as u32);
            assert_eq!(s.wrapping_sub(isn) % 4, 0, "isn {isn} x {x}");
        }
    }
}

#[test]
fn sds_special_values() {
    assert_eq!(SentSize::from_sds(0), Err(InSpaceError::ZeroSds));
    assert_eq!(SentSize::from_sds(65_515), Ok(SentSize::Exact(65_515)));
    assert_eq!(u32::from(MAX_SENT_SIZE), (1 << 16) - 21);
    assert_eq!(
        SentSize::from_sds(65_516),
        Ok(SentSize::DistanceToNext(65_516))
    );
    assert_eq!(SentSize::from_sds(0xFFFF), Ok(SentSize::Sparse));
    for v in 1..=u16::MAX {
        assert_eq!(SentSize::from_sds(v).unwrap().sds(), v);
        assert_eq!(SentSize::from_sds(v).unwrap().check(), Ok(()));
    }
    // A sent size in the distance range would read back as a distance: refused.
    let d = DataInSpace::shortest(SentSize::Exact(65_520), 0, 0);
    assert_eq!(
        d.encode(0, &mut [0u8; 12]),
        Err(InSpaceError::SdsOutOfRange { sds: 65_520 })
    );
    assert!(SentSize::Exact(0).check().is_err());
    assert!(SentSize::DistanceToNext(100).check().is_err());
}

#[test]
fn unknown_len_is_an_error_with_the_len() {
    for len in [0u8, 3] {
        let b = [0, 0, 0, 0, 0, 50, 0, len, 0, 0, 0, 0];
        let e = DataInSpace::decode(&b, 0).unwrap_err();
        assert_eq!(e, InSpaceError::UnknownLen { len });
        assert!(e.to_string().contains("ACK up to"));
    }
    let mut b = SynInSpace {
        sds: 12,
        inoo_words: 0,
        soo_words: 0,
    }
    .encode(Magic::BRISK)
    .unwrap();
    b[7] = 1;
    assert_eq!(
        SynInSpace::decode(&b, Magic::BRISK),
        Err(InSpaceError::UnknownLen { len: 1 })
    );
}

#[test]
fn accounting_splits_sequence_and_window() {
    let a = Accounting {
        pad: 3,
        inspace: 12,
        prefix: 8,
        suffix: 4,
        payload: 100,
    };
    assert_eq!(a.seq_space(), 127);
    assert_eq!(a.rwnd_charge(), 104);
    assert_eq!(a.implicitly_acked(), 23);
    assert!(!a.is_impure_ack());
    let impure = Accounting {
        payload: 0,
        suffix: 0,
        ..a
    };
    assert!(impure.is_impure_ack());
    assert_eq!(impure.rwnd_charge(), 0);
    assert!(!Accounting::default().is_impure_ack(), "pure ACK");
}

#[test]
fn range_errors_name_the_field() {
    let s = SynInSpace {
        sds: 100,
        inoo_words: MAX_WORDS + 1,
        soo_words: 0,
    };
    let e = s.encode(Magic::BRISK).unwrap_err().to_string();
    assert!(e.contains("InOO") && e.contains("16383"), "{e}");
    let s = SynInSpace {
        sds: 100,
        inoo_words: 2,
        soo_words: 3,
    };
    assert!(matches!(
        s.encode(Magic::BRISK),
        Err(InSpaceError::SooAboveInoo { .. })
    ));
    let s = SynInSpace {
        sds: 19,
        inoo_words: 2,
        soo_words: 0,
    };
    assert!(matches!(
        s.encode(Magic::BRISK),
        Err(InSpaceError::SdsTooSmall { .. })
    ));
}

proptest! {
    #[test]
    fn syn_round_trip(inoo in 0u16..=MAX_WORDS, soo_frac in 0u16..=100, extra in 0u16..1000) {
        let soo = (u32::from(inoo) * u32::from(soo_frac) / 100) as u16;
        let sds = (12 + 4 * u32::from(inoo) + u32::from(extra)).min(u32::from(u16::MAX)) as u16;
        let s = SynInSpace { sds, inoo_words: inoo, soo_words: soo };
        match s.encode(Magic::BRISK) {
            Ok(b) => {
                prop_assert_eq!(SynInSpace::decode(&b, Magic::BRISK), Ok(s));
                let mut data = b.to_vec();
                data.resize(usize::from(sds), 0x55);
                prop_assert_eq!(detect_syn(&data, Magic::BRISK), SynKind::Upgraded);
            }
            Err(e) => {
                let ok = matches!(e, InSpaceError::SdsTooSmall { .. });
                prop_assert!(ok, "{}", e);
            }
        }
    }

    #[test]
    fn data_round_trip(inoo in 0u16..=MAX_WORDS, soo in 0u16..=MAX_WORDS, sds in 1u16..=u16::MAX, pad in 0usize..4) {
        let soo = soo.min(inoo);
        let d = DataInSpace::shortest(SentSize::from_sds(sds).unwrap(), inoo, soo);
        let mut out = [0u8; 12];
        match d.encode(pad, &mut out) {
            Ok(n) => prop_assert_eq!(DataInSpace::decode(&out[..n], pad), Ok(d)),
            Err(e) => {
                let ok = matches!(e, InSpaceError::SdsTooSmall { .. });
                prop_assert!(ok, "{}", e);
            }
        }
    }

    #[test]
    fn jumbo_round_trip(inoo in 0u32..=MAX_JUMBO_WORDS, soo in 0u32..=MAX_JUMBO_WORDS, extra in 0u32..100_000) {
        let soo = soo.min(inoo);
        let j = JumboInSpace { sds: (4 * u64::from(inoo) + 20 + u64::from(extra)).min(u64::from(u32::MAX)) as u32, inoo_words: inoo, soo_words: soo };
        let mut out = [0u8; 20];
        match j.encode(0, &mut out) {
            Ok(n) => prop_assert_eq!(JumboInSpace::decode(&out[..n], 0), Ok(j)),
            Err(e) => {
                let ok = matches!(e, InSpaceError::SdsTooSmall { .. });
                prop_assert!(ok, "{}", e);
            }
        }
    }

    #[test]
    fn decoders_never_panic(b in proptest::collection::vec(any::<u8>(), 0..24), pad in 0usize..8, kind in any::<u8>()) {
        let _ = SynInSpace::decode(&b, Magic::BRISK);
        let _ = DataInSpace::decode(&b, pad);
        let _ = JumboInSpace::decode(&b, pad);
        let _ = ModeSwitch::decode(&b, kind);
        let _ = detect_syn(&b, Magic::BRISK);
        let mut c = b.clone();
        let _ = zombi::decode_segment(&mut c, pad as u64);
        let mut c = b.clone();
        let _ = zombi::decode_jumbo(&mut c, pad);
        let mut c = b.clone();
        let _ = zombi::encode_segment(&mut c, pad);
        let mut c = b;
        let _ = zombi::encode_jumbo(&mut c, pad);
    }
}

// ---- IS-3: ZOMBI ----

/// One sent segment's TCP Data before ZOMBI: padding for its ISN-relative start, an
/// InSpace option, `inner` octets of Inner Options (a multiple of 4) and `payload`.
fn build_segment(rel: u64, inner: &[u8], payload: &[u8], short: bool) -> (Vec<u8>, usize) {
    let isn = 1000u32;
    let seq = isn.wrapping_add(rel as u32);
    let pad = pad_len(seq, isn);
    let inoo = (inner.len() / 4) as u16;
    let opt_len = if short { SHORT_LEN } else { FULL_LEN };
    let sds = (pad + opt_len + inner.len() + payload.len()) as u16;
    let d = if short {
        DataInSpace::shortest(SentSize::Exact(sds), inoo, inoo)
    } else {
        DataInSpace {
            sds: SentSize::Exact(sds),
            inoo_words: inoo,
            suffix: SuffixAt::Words(inoo / 2),
        }
    };
    let mut seg = vec![PAD_OCTET; pad];
    let mut opt = [0u8; 12];
    let n = d.encode(pad, &mut opt).unwrap();
    seg.extend_from_slice(&opt[..n]);
    seg.extend_from_slice(inner);
    seg.extend_from_slice(payload);
    (seg, pad)
}

#[derive(Debug, Clone)]
enum Fill {
    Random,
    Zero,
    Sparse,
}

fn content(rng: &mut impl RngCore, fill: &Fill, n: usize) -> Vec<u8> {
    let mut v = vec![0u8; n];
    match fill {
        Fill::Random => rng.fill_bytes(&mut v),
        Fill::Zero => {}
        Fill::Sparse => {
            for b in &mut v {
                *b = if rng.next_u32().is_multiple_of(4) {
                    7
                } else {
                    0
                };
            }
        }
    }
    v
}

/// A stream of `segs` encoded segments from ISN-relative offset `start`; returns the
/// plain stream, the encoded stream and the markers' offsets in it.
fn build_stream(seed: u64, segs: usize, fill: Fill, start: u64) -> (Vec<u8>, Vec<u8>, Vec<usize>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let (mut plain, mut enc, mut markers) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..segs {
        let rel = start + plain.len() as u64;
        let ilen = 4 * rng.gen_range(0..4);
        let inner = content(&mut rng, &fill, ilen);
        let plen = match rng.gen_range(0..4) {
            0 => 0,
            1 => rng.gen_range(1..8),
            2 => 2 * rng.gen_range(0..200) + 1, // odd
            _ => rng.gen_range(0..1500),
        };
        let payload = content(&mut rng, &fill, plen);
        let (seg, pad) = build_segment(rel, &inner, &payload, rng.gen_bool(0.5));
        let mut e = seg.clone();
        zombi::encode_segment(&mut e, pad).unwrap();
        assert_eq!(e.len(), seg.len(), "ZOMBI never changes the length");
        markers.push(enc.len() + pad);
        plain.extend_from_slice(&seg);
        enc.extend_from_slice(&e);
    }
    (plain, enc, markers)
}

/// The encoded stream's aligned zero shorts are exactly the markers.
fn aligned_zero_shorts(enc: &[u8], start: u64) -> Vec<usize> {
    (0..enc.len().saturating_sub(1))
        .filter(|&i| (start + i as u64).is_multiple_of(2) && enc[i] == 0 && enc[i + 1] == 0)
        .collect()
}

#[test]
fn zombi_all_zero_payload_round_trips_and_keeps_only_markers() {
    for start in [1u64, 2, 3, 4, 13] {
        let (plain, enc, markers) = build_stream(7, 40, Fill::Zero, start);
        assert_eq!(aligned_zero_shorts(&enc, start), markers);
        let mut buf = enc.clone();
        let mut d = StreamDecoder::new(start);
        d.feed(&mut buf).unwrap();
        assert_eq!(buf, plain);
        assert_eq!(d.segments(), 40);
        assert!(d.at_boundary());
    }
}

#[test]
fn zombi_odd_segment_of_zeros() {
    // Odd length ending in 0x00: the pseudo octet makes the last half short non-zero.
    let (seg, pad) = build_segment(1, &[], &[0, 0, 0], true);
    assert_eq!(seg.len() % 2, 0, "3 pad + 8 + 3 = 14");
    let (seg2, pad2) = build_segment(2, &[], &[0, 0, 0, 0], true);
    assert_eq!(seg2.len() % 2, 0);
    for (s, p, rel) in [(seg, pad, 1u64), (seg2, pad2, 2)] {
        for extra in [0usize, 1] {
            let mut s = s.clone();
            s.truncate(s.len() - extra);
            // Fix SDS for the truncated copy.
            let sds = s.len() as u16;
            s[p + 4..p + 6].copy_from_slice(&sds.to_be_bytes());
            let plain = s.clone();
            zombi::encode_segment(&mut s, p).unwrap();
            zombi::decode_segment(&mut s, rel).unwrap();
            assert_eq!(s, plain);
        }
    }
}

#[test]
fn zombi_refuses_malformed_input() {
    let (seg, pad) = build_segment(1, &[], &[1, 2, 3, 4], true);
    let mut e = seg.clone();
    zombi::encode_segment(&mut e, pad).unwrap();
    // A marker that is not zero.
    let mut bad = e.clone();
    bad[pad] = 9;
    assert_eq!(
        zombi::decode_segment(&mut bad, 1),
        Err(ZombiError::NoMarker { at: 4 })
    );
    // A zero pad octet.
    let mut bad = e.clone();
    bad[0] = 0;
    assert!(matches!(
        zombi::decode_segment(&mut bad, 1),
        Err(ZombiError::ZeroPad { .. })
    ));
    // A broken chain.
    let mut bad = e.clone();
    bad[pad + 3] ^= 0x10;
    assert!(zombi::decode_segment(&mut bad, 1).is_err());
    // Encoding refuses short segments, zero padding and a non-zero ZOMBI field.
    assert!(zombi::encode_segment(&mut [0u8; 7], 0).is_err());
    assert!(zombi::encode_segment(&mut [0u8; 12], 1).is_err());
    let mut nz = seg.clone();
    nz[pad + 2] = 1;
    assert!(matches!(
        zombi::encode_segment(&mut nz, pad),
        Err(ZombiError::FieldNotZero { .. })
    ));
    assert!(zombi::encode_segment(&mut vec![0u8; 70_000], 0).is_err());
    // A decoder that failed stays failed.
    let mut d = StreamDecoder::new(1);
    let mut bad = e.clone();
    bad[pad] = 9;
    assert!(d.feed(&mut bad).is_err());
    assert_eq!(d.feed(&mut e.clone()), Err(ZombiError::Failed));
}

#[test]
fn jumbo_zombi_round_trip() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(3);
    for n in [0usize, 1, 2, 3, 4, 5, 100, 4097] {
        for fill in [Fill::Random, Fill::Zero, Fill::Sparse] {
            let pad = rng.gen_range(0..4);
            let j = JumboInSpace {
                sds: (pad + 16 + 8 + n) as u32,
                inoo_words: 2,
                soo_words: 2,
            };
            let mut seg = vec![PAD_OCTET; pad];
            let mut o = [0u8; 20];
            let l = j.encode(pad, &mut o).unwrap();
            seg.extend_from_slice(&o[..l]);
            seg.extend(content(&mut rng, &fill, 8 + n));
            let plain = seg.clone();
            zombi::encode_jumbo(&mut seg, pad).unwrap();
            let zeros: Vec<usize> = (pad..seg.len().saturating_sub(3))
                .step_by(4)
                .filter(|&i| seg[i..i + 4] == [0; 4])
                .collect();
            assert_eq!(zeros, vec![pad], "only the jumbo marker is a zero word");
            zombi::decode_jumbo(&mut seg, pad).unwrap();
            assert_eq!(seg, plain);
            assert_eq!(JumboInSpace::decode(&seg[pad..], pad), Ok(j));
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    /// IS-3: round-trip identity for random, all-zero and sparse (many zero shorts)
    /// payloads with odd lengths, the only aligned zero shorts being markers, and
    /// decoding through any resegmentation, odd cuts included.
    #[test]
    fn zombi_survives_any_resegmentation(
        seed in any::<u64>(),
        segs in 1usize..12,
        fill in prop_oneof![Just(Fill::Random), Just(Fill::Zero), Just(Fill::Sparse)],
        start in 1u64..9,
        cuts in proptest::collection::vec(1usize..2000, 0..40),
    ) {
        let (plain, enc, markers) = build_stream(seed, segs, fill, start);
        prop_assert_eq!(aligned_zero_shorts(&enc, start), markers.clone());
        let mut buf = enc.clone();
        let mut d = StreamDecoder::new(start);
        let mut at = 0usize;
        for c in cuts.iter().chain(std::iter::once(&usize::MAX)) {
            let end = at.saturating_add(*c).min(buf.len());
            d.feed(&mut buf[at..end]).unwrap();
            at = end;
            if at == buf.len() { break; }
        }
        prop_assert_eq!(&buf, &plain);
        prop_assert_eq!(d.segments(), segs as u64);
        // Every decoded InSpace option reads back.
        let mut rel = 0usize;
        for &m in &markers {
            let pad = m - rel;
            let d = DataInSpace::decode(&buf[m..], pad).unwrap();
            let SentSize::Exact(sds) = d.sds else { panic!("not exact") };
            rel += usize::from(sds);
        }
        prop_assert_eq!(rel, buf.len());
    }

    #[test]
    fn stream_decoder_never_panics(b in proptest::collection::vec(any::<u8>(), 0..300), start in 0u64..8, cut in 0usize..300) {
        let mut b = b;
        let mut d = StreamDecoder::new(start);
        let cut = cut.min(b.len());
        let (x, y) = b.split_at_mut(cut);
        let _ = d.feed(x);
        let _ = d.feed(y);
    }
}

// ---- IS-4: detection ----

#[test]
fn data_less_and_short_syns_are_never_upgraded() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(11);
    // Even the 11 octets an upgraded SYN would start with are not enough.
    let full = SynInSpace {
        sds: 12,
        inoo_words: 0,
        soo_words: 0,
    }
    .encode(Magic::BRISK)
    .unwrap();
    for len in 0..12 {
        assert_eq!(detect_syn(&full[..len], Magic::BRISK), SynKind::Ordinary);
        for _ in 0..1000 {
            let mut d = vec![0u8; len];
            rng.fill_bytes(&mut d);
            assert_eq!(detect_syn(&d, Magic::BRISK), SynKind::Ordinary);
        }
    }
    assert_eq!(detect_syn(&full, Magic::BRISK), SynKind::Upgraded);
}

#[test]
fn analytic_false_positive_rate_is_2_to_minus_66() {
    // From the field widths: Magic A 32 + SDS 16 + Len 2 + Magic B 16.
    assert_eq!(detect::checked_bits(), 32 + 16 + 2 + 16);
    assert_eq!(detect::false_positive_log2(), 66);
    let one_in = 2f64.powi(66);
    assert!((one_in / 1e18 - 73.8).abs() < 0.1, "1 in {one_in:e}");
    // Each checked bit matters: flipping it makes an upgraded SYN ordinary; flipping
    // an unchecked bit does not.
    let mut data = SynInSpace {
        sds: 40,
        inoo_words: 2,
        soo_words: 1,
    }
    .encode(Magic::BRISK)
    .unwrap()
    .to_vec();
    data.resize(40, 0xEE);
    for byte in 0..12 {
        for bit in 0..8 {
            let mut d = data.clone();
            d[byte] ^= 1 << bit;
            let checked = detect::CHECKED_MASK[byte] & (1 << bit) != 0;
            let want = if checked {
                SynKind::Ordinary
            } else {
                SynKind::Upgraded
            };
            assert_eq!(detect_syn(&d, Magic::BRISK), want, "byte {byte} bit {bit}");
        }
    }
}

#[test]
fn measured_false_positives_on_random_syns() {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0x154);
    let mut lr = rand_chacha::ChaCha8Rng::seed_from_u64(0x155);
    let n = 10_000_000;
    let c = detect::sample_ordinary_syns(
        n,
        Magic::BRISK,
        |h| rng.fill_bytes(h),
        || lr.gen_range(12..=1460),
    );
    assert_eq!(c.hits, 0);
    // The sampler reaches the checked bits: Len matches about n/4, B+Len about n/2^18.
    let q = n as f64 / 4.0;
    assert!((c.len_only as f64 - q).abs() < 5.0 * q.sqrt(), "{c:?}");
    let e = n as f64 / 262_144.0;
    assert!(
        (c.b_and_len as f64 - e).abs() < 5.0 * e.sqrt() + 1.0,
        "{c:?}"
    );
}

// ---- IS-6: overhead ----

#[test]
fn overhead_formulas_are_exact() {
    let i = Inputs::DRAFT;
    i.validate().unwrap();
    assert_eq!(i.h(), 92);
    assert_eq!(Inputs { ip_header: 40, ..i }.h(), 112);
    assert_eq!(i.connection_rate(), Ratio::new(2, 25));
    assert_eq!(i.connection_rate().percent(0), "8 %");
    assert_eq!(i.state(), Ratio::new(2, 75));
    assert_eq!(i.state().percent(1), "2.7 %");
    assert_eq!(i.handshake_bytes(), Ratio::new(23, 80_000));
    assert_eq!(i.handshake_bytes().percent(3), "0.029 %");
    assert_eq!(i.handshake_bytes().percent(2), "0.03 %");
    assert_eq!(i.handshake_packets(), Ratio::new(2, 875));
    assert_eq!(i.handshake_packets().percent(2), "0.23 %");
    assert_eq!(i.handshake_packets().percent(1), "0.2 %");
    assert_eq!(i.per_segment(), Ratio::new(8, 9375));
    assert_eq!(i.per_segment().percent(3), "0.085 %");
    assert_eq!(i.per_segment().percent(2), "0.09 %");
    assert!(Inputs { r_rtts: 0, ..i }.validate().is_err());
    assert!(Inputs { p_pct: 101, ..i }.validate().is_err());
}

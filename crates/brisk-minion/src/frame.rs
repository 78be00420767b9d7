//! The uCOBS record (Minion NSDI 2012 §5.2; spec `minion.md` §3.2–3.3): a datagram is
//! COBS-encoded, so it holds no zero byte, and written between two zero markers as
//! `00 ‖ COBS(d) ‖ 00` in one write.
//!
//! COBS comes from the `cobs` crate. Its encoder emits the canonical Cheshire–Baker
//! form, the variant conflict C-1 pins: a final run of 254 non-zero bytes is `FF` and
//! the bytes, with no trailing `01` (254 bytes encode to 255). Its decoder also accepts
//! the reference code's `FF … 01` form, and rejects a code byte that runs past the end
//! or a zero inside a frame.

use thiserror::Error;

/// The most a datagram may hold (a limit of this crate, far above any use: the
/// receiver's own limit, [`crate::Limits::max_datagram`], is usually much lower).
pub const MAX_DATAGRAM: usize = 16 << 20;

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum FrameError {
    #[error("datagram of {len} bytes exceeds the limit of {max} bytes")]
    TooBig { len: usize, max: usize },
    #[error("malformed COBS record")]
    Malformed,
}

/// Encoded length (without markers) of `n` bytes at worst: `n + 1 + ⌊n/254⌋`. The
/// canonical encoder reaches it except when `n` is a positive multiple of 254 and the
/// data holds no zero (one byte less), and zeros in the data only shorten it.
pub const fn max_encoded_len(n: usize) -> usize {
    n + 1 + n / 254
}

/// Wire bytes of one record at worst: `n + 3 + ⌊n/254⌋` (two markers; claim MN-4).
pub const fn max_record_len(n: usize) -> usize {
    max_encoded_len(n) + 2
}

/// Appends `00 ‖ COBS(d) ‖ 00` to `out`; returns the record's length.
pub fn encode_record(d: &[u8], out: &mut Vec<u8>) -> Result<usize, FrameError> {
    if d.len() > MAX_DATAGRAM {
        return Err(FrameError::TooBig {
            len: d.len(),
            max: MAX_DATAGRAM,
        });
    }
    let start = out.len();
    out.resize(start + max_record_len(d.len()), 0);
    let n = cobs::encode_including_sentinels(d, &mut out[start..]);
    out.truncate(start + n);
    Ok(n)
}

/// Decodes one record's COBS body (no markers, no zero byte) into `out`, replacing its
/// contents. `max` bounds the datagram: a longer one is `TooBig` without decoding.
pub fn decode_body(body: &[u8], out: &mut Vec<u8>, max: usize) -> Result<(), FrameError> {
    // A body longer than the longest encoding of `max` bytes cannot decode to `max`
    // bytes or fewer: refuse it before decoding. The decoded size is at most the
    // body's length minus one.
    if body.len() > max_encoded_len(max) {
        return Err(FrameError::TooBig {
            len: body.len() - 1,
            max,
        });
    }
    if body.is_empty() || body.contains(&0) {
        return Err(FrameError::Malformed);
    }
    out.clear();
    out.resize(body.len() - 1, 0);
    match cobs::decode(body, out) {
        Ok(r) if r.frame_size() <= max => {
            out.truncate(r.frame_size());
            Ok(())
        }
        Ok(r) => {
            out.clear();
            Err(FrameError::TooBig {
                len: r.frame_size(),
                max,
            })
        }
        Err(_) => {
            out.clear();
            Err(FrameError::Malformed)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(d: &[u8]) -> Vec<u8> {
        let mut v = Vec::new();
        encode_record(d, &mut v).unwrap();
        assert_eq!((v[0], v[v.len() - 1]), (0, 0), "markers");
        v[1..v.len() - 1].to_vec()
    }

    fn hex(s: &str) -> Vec<u8> {
        s.split_whitespace()
            .map(|b| u8::from_str_radix(b, 16).unwrap())
            .collect()
    }

    /// W-2 (MN-4): the canonical vectors.
    #[test]
    fn w2_vectors() {
        for (input, output) in [
            ("", "01"),
            ("00", "01 01"),
            ("00 00", "01 01 01"),
            ("00 11 00", "01 02 11 01"),
            ("11 22 00 33", "03 11 22 02 33"),
            ("11 22 33 44", "05 11 22 33 44"),
            ("11 00 00 00", "02 11 01 01 01"),
        ] {
            assert_eq!(body(&hex(input)), hex(output), "{input}");
        }
        let a255: Vec<u8> = (1..=255).collect();
        let mut e = vec![0xff];
        e.extend(1..=254u8);
        e.extend([0x02, 0xff]);
        assert_eq!(body(&a255), e);
        assert_eq!(e.len(), 257);
        // C-1: the encoder emits the canonical 254-byte form (255 bytes)...
        let a254: Vec<u8> = (1..=254).collect();
        let canonical: Vec<u8> = std::iter::once(0xff).chain(1..=254).collect();
        assert_eq!(body(&a254), canonical);
        // ...and the decoder accepts both it and the reference code's (256 bytes).
        let mut reference = canonical.clone();
        reference.push(0x01);
        let mut out = Vec::new();
        for form in [&canonical, &reference] {
            decode_body(form, &mut out, 1000).unwrap();
            assert_eq!(out, a254);
        }
    }

    #[test]
    fn sizes_match_the_paper() {
        let len = |n: usize| {
            let d = vec![0x5a; n];
            let mut v = Vec::new();
            encode_record(&d, &mut v).unwrap()
        };
        // COBS adds 6 at 1448 B and 259 at 65 535 B; a record adds two markers.
        assert_eq!(len(1448) - 1448, 8);
        assert_eq!(len(65_535) - 65_535, 259 + 2);
        assert_eq!(len(640) - 640, 5);
        // The worst case bound, reached except at positive multiples of 254.
        for n in [0, 1, 253, 255, 1000, 1448] {
            assert_eq!(len(n), max_record_len(n), "{n}");
        }
        assert_eq!(len(254), max_record_len(254) - 1);
        // Two records back to back: 00 E1 00 00 E2 00.
        let mut v = Vec::new();
        encode_record(&[0x11], &mut v).unwrap();
        encode_record(&[0x22], &mut v).unwrap();
        assert_eq!(v, hex("00 02 11 00 00 02 22 00"));
    }

    #[test]
    fn bad_bodies_are_errors() {
        let mut out = Vec::new();
        assert_eq!(decode_body(&[], &mut out, 10), Err(FrameError::Malformed));
        // A code byte that runs past the end.
        assert_eq!(
            decode_body(&[5, 1, 2], &mut out, 10),
            Err(FrameError::Malformed)
        );
        assert_eq!(
            decode_body(&[3, 1, 0, 2], &mut out, 10),
            Err(FrameError::Malformed)
        );
        // Longer than the limit: refused before decoding.
        assert!(matches!(
            decode_body(&[0xff; 300], &mut out, 100),
            Err(FrameError::TooBig { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_datagram_round_trips_without_zeros_inside(
            d in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..2000)
        ) {
            let b = body(&d);
            proptest::prop_assert!(!b.contains(&0));
            proptest::prop_assert!(b.len() + 2 <= max_record_len(d.len()));
            let mut out = Vec::new();
            decode_body(&b, &mut out, d.len()).unwrap();
            proptest::prop_assert_eq!(out, d);
        }

        #[test]
        fn garbage_never_panics(
            b in proptest::collection::vec(1u8..=255, 0..600)
        ) {
            let mut out = Vec::new();
            let _ = decode_body(&b, &mut out, 256);
            proptest::prop_assert!(out.len() <= 256);
        }
    }
}

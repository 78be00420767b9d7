//! inner-space: the pure pieces of Inner Space (seed 004 App. D.2/D.3,
//! draft-briscoe-tcpm-inspace-mode-tcpbis-00; spec `rite-satellite-web-innerspace-abe.md`
//! §2; claims IS-1 to IS-7; docs/mechanisms/inner-space.md).
//!
//! Design claims, checked in this process on `brisk_wire::tcp::inspace`'s codecs: each
//! row's verdict comes from checks the code runs here (round trips, exact sizes,
//! seeded random streams and SYNs), a panic or a mismatch being a failure with its
//! message. IS-5 runs brisk-tcp's dual handshake and IS-7 a stated round-count model
//! (`inner_space_dual.rs`).

use crate::claim::Claim;
use crate::exp::design::run_check;
use crate::experiment::{ExperimentResult, Plan};
use brisk_wire::tcp::inspace::detect::{self, Magic, SynKind};
use brisk_wire::tcp::inspace::mode::{FlagOption, ModeSwitch};
use brisk_wire::tcp::inspace::overhead::Inputs;
use brisk_wire::tcp::inspace::zombi::{self, StreamDecoder};
use brisk_wire::tcp::inspace::{
    pad_len, Accounting, DataInSpace, InSpaceError, JumboInSpace, SentSize, SuffixAt, SynInSpace,
    MAX_WORDS, PAD_OCTET,
};
use rand::{Rng, RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;

pub const ID: &str = "inner-space";
pub const TITLE: &str =
    "Inner Space: InSpace layouts, ZOMBI, SYN=1 detection, overhead (D1.3 App. D.2/D.3)";
pub const CLAIMS: &[&str] = &["IS-1", "IS-2", "IS-3", "IS-4", "IS-5", "IS-6", "IS-7"];

/// Sizes of the run.
#[derive(Clone, Copy)]
struct Size {
    cases: usize,
    streams: usize,
    syns: u64,
}

fn is1(s: Size) -> String {
    let m = Magic::BRISK;
    let mut rng = ChaCha8Rng::seed_from_u64(1);
    let mut sizes = Vec::new();
    let syn = SynInSpace {
        sds: 40,
        inoo_words: 4,
        soo_words: 2,
    };
    sizes.push(("SYN=1", syn.encode(m).unwrap().len(), 12));
    let mut out = [0u8; 20];
    for (name, d, want) in [
        (
            "SYN=0 Len 2",
            DataInSpace::shortest(SentSize::Exact(100), 4, 1),
            12,
        ),
        (
            "SYN=0 Len 1",
            DataInSpace::shortest(SentSize::Exact(100), 4, 4),
            8,
        ),
    ] {
        sizes.push((name, d.encode(0, &mut out).unwrap(), want));
    }
    for (name, inoo, soo, want) in [
        ("jumbo Len 2", 0, 0, 12),
        ("jumbo Len 3", 5, 5, 16),
        ("jumbo Len 4", 5, 2, 20),
    ] {
        let j = JumboInSpace {
            sds: 100_000,
            inoo_words: inoo,
            soo_words: soo,
        };
        sizes.push((name, j.encode(0, &mut out).unwrap(), want));
    }
    sizes.push((
        "ModeSwitch",
        ModeSwitch::new(true, true).encode_native(253).len(),
        3,
    ));
    sizes.push(("InSpaceO", FlagOption::InSpaceO.encode_native(253).len(), 2));
    sizes.push(("InSpaceU", FlagOption::InSpaceU.encode_native(253).len(), 2));
    for (name, got, want) in &sizes {
        assert_eq!(got, want, "{name}: {got} B, the draft says {want} B");
    }
    // Word units: the half-word masked with 0xFFFC is the octet count.
    let b = syn.encode(m).unwrap();
    assert_eq!(u16::from_be_bytes([b[6], b[7]]) & 0xFFFC, 16, "InOO octets");
    assert_eq!(u16::from_be_bytes([b[10], b[11]]) & 0xFFFC, 8, "SOO octets");
    // Seeded random round trips of every form.
    for _ in 0..s.cases {
        let inoo = rng.gen_range(0..=MAX_WORDS.min(16_000));
        let soo = rng.gen_range(0..=inoo);
        let sds = rng.gen_range(12 + 4 * u32::from(inoo)..=65_535) as u16;
        let syn = SynInSpace {
            sds,
            inoo_words: inoo,
            soo_words: soo,
        };
        assert_eq!(SynInSpace::decode(&syn.encode(m).unwrap(), m), Ok(syn));
        let pad = rng.gen_range(0..4);
        for d in [
            DataInSpace::shortest(SentSize::Exact(sds), inoo, soo),
            DataInSpace {
                sds: SentSize::Exact(sds),
                inoo_words: inoo,
                suffix: SuffixAt::Words(soo),
            },
        ] {
            match d.encode(pad, &mut out) {
                Ok(n) => assert_eq!(DataInSpace::decode(&out[..n], pad), Ok(d)),
                // Refused only when SDS is in the distance range or below the extents.
                Err(e) => assert!(
                    matches!(
                        e,
                        InSpaceError::SdsOutOfRange { .. } | InSpaceError::SdsTooSmall { .. }
                    ),
                    "{d:?}: {e}"
                ),
            }
        }
        let j = JumboInSpace {
            sds: rng.gen_range(20 + 4 * u32::from(inoo)..u32::MAX),
            inoo_words: u32::from(inoo),
            soo_words: u32::from(soo),
        };
        let n = j.encode(pad, &mut out).unwrap();
        assert_eq!(JumboInSpace::decode(&out[..n], pad), Ok(j));
        let ms = ModeSwitch::new(rng.gen(), rng.gen());
        assert_eq!(ModeSwitch::decode(&ms.encode_native(253), 253), Ok(ms));
    }
    format!(
        "{}; {} seeded round trips of each form identical",
        sizes
            .iter()
            .map(|(n, g, _)| format!("{n} {g} B"))
            .collect::<Vec<_>>()
            .join(", "),
        s.cases
    )
}

fn is2(s: Size) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(2);
    let mut checked = 0u64;
    for _ in 0..s.cases {
        let isn: u32 = rng.gen();
        assert_eq!(pad_len(isn, isn), 0, "SYN pads 0");
        for x in 0..64u32 {
            let seq = isn.wrapping_add(1).wrapping_add(x);
            let p = pad_len(seq, isn);
            assert!(p <= 3);
            assert_eq!((seq.wrapping_add(p as u32)).wrapping_sub(isn) % 4, 0);
            checked += 1;
        }
    }
    assert_eq!(SentSize::from_sds(65_515), Ok(SentSize::Exact(65_515)));
    assert_eq!(
        SentSize::from_sds(65_516),
        Ok(SentSize::DistanceToNext(65_516))
    );
    assert_eq!(SentSize::from_sds(0xFFFF), Ok(SentSize::Sparse));
    for len in [0u8, 3] {
        let b = [0, 0, 0, 0, 0, 50, 0, len, 0, 0, 0, 0];
        assert_eq!(
            DataInSpace::decode(&b, 0),
            Err(InSpaceError::UnknownLen { len })
        );
    }
    let a = Accounting {
        pad: 3,
        inspace: 12,
        prefix: 8,
        suffix: 4,
        payload: 100,
    };
    assert_eq!(
        (a.seq_space(), a.rwnd_charge(), a.implicitly_acked()),
        (127, 104, 23)
    );
    format!(
        "InSpace at (s − isn) ≡ 0 mod 4 for {checked} (isn, seq) pairs, pad 0 on the SYN; SDS 65 515 exact, 65 516–65 534 distance, 0xFFFF sparse; Len 0 and 3 refused; pad+InSpace+Prefix outside rwnd, all in sequence space"
    )
}

/// One encoded stream of random segments; returns (plain, encoded, markers).
fn stream(
    rng: &mut ChaCha8Rng,
    segs: usize,
    fill: u8,
    start: u64,
) -> (Vec<u8>, Vec<u8>, Vec<usize>) {
    let (mut plain, mut enc, mut markers) = (Vec::new(), Vec::new(), Vec::new());
    let isn = rng.gen::<u32>();
    for _ in 0..segs {
        let rel = start + plain.len() as u64;
        let pad = pad_len(isn.wrapping_add(rel as u32), isn);
        let inoo = rng.gen_range(0..4u16);
        let plen = match rng.gen_range(0..3) {
            0 => rng.gen_range(0..8),
            1 => 2 * rng.gen_range(0..300) + 1,
            _ => rng.gen_range(0..1460),
        };
        let mut body = vec![0u8; 4 * usize::from(inoo) + plen];
        match fill {
            0 => rng.fill_bytes(&mut body),
            1 => {}
            _ => body
                .iter_mut()
                .for_each(|b| *b = u8::from(rng.gen_bool(0.2))),
        }
        let short = rng.gen_bool(0.5);
        let opt = if short { 8 } else { 12 };
        let sds = SentSize::Exact((pad + opt + body.len()) as u16);
        let d = if short {
            DataInSpace::shortest(sds, inoo, 0)
        } else {
            DataInSpace {
                sds,
                inoo_words: inoo,
                suffix: SuffixAt::Words(inoo / 2),
            }
        };
        let mut seg = vec![PAD_OCTET; pad];
        let mut o = [0u8; 12];
        let n = d.encode(pad, &mut o).unwrap();
        seg.extend_from_slice(&o[..n]);
        seg.extend_from_slice(&body);
        let mut e = seg.clone();
        zombi::encode_segment(&mut e, pad).unwrap();
        assert_eq!(e.len(), seg.len(), "ZOMBI changed a segment's length");
        markers.push(enc.len() + pad);
        plain.extend_from_slice(&seg);
        enc.extend_from_slice(&e);
    }
    (plain, enc, markers)
}

fn is3(s: Size) -> String {
    let mut rng = ChaCha8Rng::seed_from_u64(3);
    let (mut segs, mut octets, mut odd) = (0u64, 0u64, 0u64);
    for k in 0..s.streams {
        let fill = (k % 3) as u8;
        let start = rng.gen_range(1..9u64);
        let n = rng.gen_range(1..20);
        let (plain, enc, markers) = stream(&mut rng, n, fill, start);
        let zeros: Vec<usize> = (0..enc.len().saturating_sub(1))
            .filter(|&i| (start + i as u64).is_multiple_of(2) && enc[i] == 0 && enc[i + 1] == 0)
            .collect();
        assert_eq!(
            zeros, markers,
            "stream {k}: aligned 0x0000 shorts are not only the markers"
        );
        let mut buf = enc.clone();
        let mut d = StreamDecoder::new(start);
        let mut at = 0usize;
        while at < buf.len() {
            let end = (at + rng.gen_range(1..1600)).min(buf.len());
            d.feed(&mut buf[at..end])
                .unwrap_or_else(|e| panic!("stream {k}: {e}"));
            at = end;
        }
        assert_eq!(buf, plain, "stream {k}: decoding is not the identity");
        assert_eq!(d.segments(), n as u64);
        segs += n as u64;
        octets += plain.len() as u64;
        // Odd-length sent segments, from the decoded SDS fields.
        odd += markers
            .iter()
            .filter(|&&m| u16::from_be_bytes([buf[m + 4], buf[m + 5]]) % 2 == 1)
            .count() as u64;
    }
    assert!(odd > 0, "no odd-length segment was drawn");
    format!(
        "{} streams ({segs} segments, {octets} octets; random, all-zero and 80 %-zero data, {odd} odd-length segments) cut at random: decoded identical; the only aligned 0x0000 shorts are the markers; encoded length = input length (overhead = the 4 B Marker + ZOMBI of each InSpace)",
        s.streams
    )
}

fn is4(s: Size) -> String {
    let m = Magic::BRISK;
    let mut rng = ChaCha8Rng::seed_from_u64(4);
    let mut short = 0u64;
    for len in 0..12 {
        for _ in 0..s.cases {
            let mut d = vec![0u8; len];
            rng.fill_bytes(&mut d);
            assert_eq!(detect::detect_syn(&d, m), SynKind::Ordinary);
            short += 1;
        }
    }
    let bits = detect::checked_bits();
    assert_eq!(bits, 66, "checked bits from the field widths");
    let mut lr = ChaCha8Rng::seed_from_u64(5);
    let c =
        detect::sample_ordinary_syns(s.syns, m, |h| rng.fill_bytes(h), || lr.gen_range(12..=1460));
    assert_eq!(
        c.hits, 0,
        "{} false positives in {} random SYNs",
        c.hits, c.samples
    );
    let q = c.samples as f64 / 4.0;
    assert!(
        (c.len_only as f64 - q).abs() < 6.0 * q.sqrt(),
        "Len matched {} times, expected about {q}",
        c.len_only
    );
    // An upgraded SYN is never read as ordinary.
    for _ in 0..s.cases {
        let inoo = rng.gen_range(0..100u16);
        let sds = rng.gen_range(12 + 4 * inoo..2000);
        let mut d = SynInSpace {
            sds,
            inoo_words: inoo,
            soo_words: 0,
        }
        .encode(m)
        .unwrap()
        .to_vec();
        d.resize(usize::from(sds), 0);
        assert_eq!(detect::detect_syn(&d, m), SynKind::Upgraded);
    }
    format!(
        "0 of {short} data-less/short SYNs; analytically 2^−{bits} (1 in {:.1} × 10^18) from the checked field widths (Magic A 32 + SDS 16 + Len 2 + Magic B 16); measured 0 of {} random SYNs (Len bits alone matched {}, Magic B + Len {}); {} upgraded SYNs all detected",
        2f64.powi(bits as i32) / 1e18,
        c.samples,
        c.len_only,
        c.b_and_len,
        s.cases
    )
}

fn is6(_: Size) -> String {
    let i = Inputs::DRAFT;
    i.validate().unwrap();
    let v6 = Inputs { ip_header: 40, ..i };
    let rows = [
        ("connection rate P·D", i.connection_rate().percent(0), "8 %"),
        ("state P·D/R", i.state().percent(1), "2.7 %"),
        (
            "handshake bytes 2·H·P·D/J",
            i.handshake_bytes().percent(3),
            "0.029 %",
        ),
        (
            "handshake packets 2·P·D/K",
            i.handshake_packets().percent(2),
            "0.23 %",
        ),
        ("per segment P·Q·8/F", i.per_segment().percent(3), "0.085 %"),
    ];
    for (what, got, want) in &rows {
        assert_eq!(got, want, "{what}");
    }
    assert_eq!((i.h(), v6.h()), (92, 112), "H IPv4 / IPv6");
    format!(
        "{}; H = {} B (IPv4), {} B (IPv6); exact fractions {}/{}, {}/{}, {}/{}, {}/{}, {}/{}",
        rows.iter()
            .map(|(w, g, _)| format!("{w} {g}"))
            .collect::<Vec<_>>()
            .join(", "),
        i.h(),
        v6.h(),
        i.connection_rate().num,
        i.connection_rate().den,
        i.state().num,
        i.state().den,
        i.handshake_bytes().num,
        i.handshake_bytes().den,
        i.handshake_packets().num,
        i.handshake_packets().den,
        i.per_segment().num,
        i.per_segment().den,
    )
}

type Check = fn(Size) -> String;

/// (id, description, paper value, check).
const ROWS: &[(&str, &str, &str, Check)] = &[
    (
        "IS-1",
        "InSpace option layouts, ModeSwitch and flag options: exact sizes and encode/decode round trips (D.2 §2.2, Fig. 3, App. B, C.1, C.2)",
        "SYN=1 12 B; SYN=0 12 B (Len 2) or 8 B (Len 1); jumbo 12/16/20 B; ModeSwitch 3 B; InSpaceO/U 2 B; octets = half-word & 0xFFFC",
        is1,
    ),
    (
        "IS-2",
        "Alignment, special SDS values, unknown Len, sequence and window accounting (D.2 §2.3.1.2–4, §2.4)",
        "pad = 3 − ((seq − isn − 1) mod 4); SDS > 65 515 = distance to next; 0xFFFF sparse; unknown Len → drop, ACK to option; pad/InSpace/Prefix outside rwnd",
        is2,
    ),
    (
        "IS-3",
        "ZOMBI: only markers are aligned 0x0000 after encoding, round-trip identity, decoding through any resegmentation (D.2 App. A; D.3 §2)",
        "fixed 4 B per segment (5 odd), never expands, zero-copy",
        is3,
    ),
    (
        "IS-4",
        "SYN=1 detection false positives (D.2 §3.2.2)",
        "data-less SYN: 0; ordinary SYN with data: 2^−66 (1 in 74 × 10^18)",
        is4,
    ),
    (
        "IS-6",
        "Overhead formulas, the draft's worked numbers (D.2 §4)",
        "+8 % connections, +2.7 % state, 0.03 % handshake bytes, 0.2 % packets, 0.09 % per segment",
        is6,
    ),
];

fn row(id: &str, what: &str, paper: &str, check: Check, s: Size) -> Claim {
    let c = Claim::new(id, what)
        .paper_text(paper)
        .tolerance("exact (checks run here on brisk_wire::tcp::inspace)");
    match run_check(|| check(s)) {
        Ok(ours) => c.ours_text(&ours).check(true),
        Err(msg) => c
            .ours_text("check failed")
            .check(false)
            .note(format!("It failed: {msg}")),
    }
}

pub fn plan(quick: bool) -> Result<Plan, String> {
    let s = if quick {
        Size {
            cases: 200,
            streams: 60,
            syns: 2_000_000,
        }
    } else {
        Size {
            cases: 2_000,
            streams: 1_000,
            syns: 100_000_000,
        }
    };
    Ok(Plan {
        jobs: Vec::new(),
        analyse: Box::new(move |_| {
            let mut r = ExperimentResult::new(ID, TITLE);
            for (id, what, paper, check) in ROWS {
                let c = row(id, what, paper, *check, s);
                r.claims.push(c);
                if *id == "IS-4" {
                    let c = Claim::new(
                        "IS-5",
                        "Dual handshake, implicit and explicit: zero added RTT, one survivor in all four arrival orders, only one SYN retransmitted (D.2 §2.1, App. C.1)",
                    )
                    .paper_text("zero added RTT with legacy and upgraded servers; exactly one connection survives; never both SYNs retransmitted")
                    .tolerance("exact (virtual time, brisk-tcp's dual handshake)");
                    r.claims
                        .push(match run_check(|| super::inner_space_dual::is5(quick)) {
                            Ok(ours) => c.ours_text(&ours).check(true),
                            Err(msg) => c
                                .ours_text("check failed")
                                .check(false)
                                .note(format!("It failed: {msg}")),
                        });
                }
            }
            let c = Claim::new(
                "IS-7",
                "tcpcrypt carried in Inner Space: round counts with and without Inner Space and Fast Open (D.3 §4)",
            )
            .paper_text("stock +1 round (50–100 % longer FCT for 1-RTT connections); Inner Space: secured data in the 1st round, server-sends-first after ½ round; resumption stock 1 round, Inner Space + TFO 0")
            .tolerance("exact (a stated message-sequence model, not tcpcrypt)");
            r.claims.push(match run_check(super::inner_space_dual::is7) {
                Ok(ours) => c.ours_text(&ours).check(true).note("Model: each protocol is its message sequence (RFC 8548 over RFC 8547; INIT1+/INIT2+ in the SYN-U/SYN/ACK-U), each message sent once what it depends on has arrived and taking ½ RTT; a side may send secured data once it holds the keys. Not checked: the claim's 9 of 18 tcpcrypt sub-options made unnecessary (tcpcrypt is not built)."),
                Err(msg) => c.ours_text("check failed").check(false).note(format!("It failed: {msg}")),
            });
            r.notes.push(format!(
                "Design rows: each verdict is the outcome of checks run in this process on the codecs (a panic or mismatch is a failure with its message). Sizes: {} seeded cases, {} ZOMBI streams, {} random SYNs (seeded ChaCha8). Magic numbers are brisk's private values (the draft's are TBA); byte order is network order (AMB-D2-4).",
                s.cases, s.streams, s.syns
            ));
            r
        }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quick_run_passes_every_built_row() {
        let p = plan(true).unwrap();
        let r = (p.analyse)(&[]);
        let ids: Vec<&str> = r.claims.iter().map(|c| c.id.as_str()).collect();
        assert_eq!(ids, CLAIMS);
        for c in &r.claims {
            let want = crate::Verdict::Pass;
            assert_eq!(c.verdict, want, "{}: {} {}", c.id, c.ours, c.note);
        }
    }

    #[test]
    fn a_failing_check_fails_its_row() {
        let c = row(
            "IS-X",
            "x",
            "p",
            |_| panic!("3 is not 4"),
            Size {
                cases: 1,
                streams: 1,
                syns: 1,
            },
        );
        assert_eq!(c.verdict, crate::Verdict::Fail);
        assert!(c.note.contains("3 is not 4"));
    }
}

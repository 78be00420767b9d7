//! The CI smoke run of every fuzz target (issue 13 §3): the seed corpus, the saved
//! regressions (`fuzz/regressions/TARGET/*`, inputs that once failed) and a few
//! thousand deterministic random inputs per target, some of them mutations of the
//! seeds. A failure names the target and the input (as hex) to replay.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::path::Path;

/// Random inputs per target (the whole run stays within a few seconds in release).
const RANDOM_INPUTS: usize = 3000;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn run(name: &str, f: fn(&[u8]), input: &[u8]) {
    let r = std::panic::catch_unwind(|| f(input));
    if let Err(e) = r {
        let msg = e
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default();
        panic!("target {name} failed ({msg}) on input {}", hex(input));
    }
}

fn smoke(name: &str) {
    let f = brisk_fuzz::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .expect("target")
        .1;
    let seeds = brisk_fuzz::seeds(name);
    assert!(!seeds.is_empty(), "{name} has seeds");
    for s in &seeds {
        run(name, f, s);
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("regressions")
        .join(name);
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            run(
                name,
                f,
                &std::fs::read(e.path()).expect("readable regression"),
            );
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(13);
    for i in 0..RANDOM_INPUTS {
        let input: Vec<u8> = if i % 2 == 0 {
            let len = rng.gen_range(0..400);
            (0..len).map(|_| rng.gen()).collect()
        } else {
            // A seed with a few bytes flipped, inserted or cut.
            let mut s = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..6) {
                match rng.gen_range(0..3) {
                    0 if !s.is_empty() => {
                        let at = rng.gen_range(0..s.len());
                        s[at] ^= 1 << rng.gen_range(0..8);
                    }
                    1 => {
                        let at = rng.gen_range(0..=s.len());
                        s.insert(at, rng.gen());
                    }
                    _ if !s.is_empty() => {
                        let at = rng.gen_range(0..s.len());
                        s.truncate(at.max(1));
                    }
                    _ => {}
                }
            }
            s
        };
        run(name, f, &input);
    }
}

#[test]
fn wire_smoke() {
    smoke("wire");
}

#[test]
fn endpoint_smoke() {
    smoke("endpoint");
}

#[test]
fn conn_smoke() {
    smoke("conn");
}

#[test]
fn minion_smoke() {
    smoke("minion");
}

#[test]
fn mptcp_smoke() {
    smoke("mptcp");
}

#[test]
fn mpctl_smoke() {
    smoke("mpctl");
}

/// The scripted prefix of `conn` reaches each of its states (else the target would
/// fuzz fewer states than it claims).
#[test]
fn conn_prefix_reaches_every_state() {
    for state in 0..11u8 {
        for active in [0u8, 0x80] {
            brisk_fuzz::conn(&[state | active, 0, 0]);
            brisk_fuzz::conn(&[state | active, 0xff, 0xff]);
        }
    }
}

/// The `endpoint` target's seeds and 500 random inputs with every connection running
/// Scalable, HighSpeed, Veno, YeAH or TCP-LP (TCP-LP reads the ACKs' timestamps and
/// sets cwnd in `pkts_acked`; YeAH sets cwnd and ssthresh in `cong_avoid`).
#[test]
fn endpoint_smoke_scalable_highspeed_veno_yeah_lp() {
    use brisk_tcp::cc::CcAlgorithm;
    let seeds = brisk_fuzz::seeds("endpoint");
    for cc in [
        CcAlgorithm::Scalable,
        CcAlgorithm::HighSpeed,
        CcAlgorithm::Veno,
        CcAlgorithm::Yeah,
        CcAlgorithm::Lp,
    ] {
        let mut rng = ChaCha8Rng::seed_from_u64(17);
        let mut inputs = seeds.clone();
        for _ in 0..500 {
            let mut s = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..6) {
                if !s.is_empty() {
                    let at = rng.gen_range(0..s.len());
                    s[at] ^= 1 << rng.gen_range(0..8);
                }
            }
            inputs.push(s);
        }
        for input in &inputs {
            let r = std::panic::catch_unwind(|| brisk_fuzz::endpoint_with(input, cc));
            assert!(
                r.is_ok(),
                "endpoint with {} failed on input {}",
                cc.name(),
                hex(input)
            );
        }
    }
}

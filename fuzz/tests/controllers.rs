//! The `endpoint` target over controllers the default (CUBIC) never reaches: its seed
//! corpus, saved regressions and deterministic random and mutated inputs, with every
//! connection (plain and MPTCP subflows) running the controller. A failure names the
//! controller and the input (as hex) to replay with `endpoint_with`.

use brisk_tcp::cc::CcAlgorithm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Random inputs per controller (a few seconds in release).
const RANDOM_INPUTS: usize = 1500;

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

fn smoke(cc: CcAlgorithm) {
    let run = |input: &[u8]| {
        if std::panic::catch_unwind(|| brisk_fuzz::endpoint_with(input, cc)).is_err() {
            panic!("endpoint with {} failed on input {}", cc.name(), hex(input));
        }
    };
    let seeds = brisk_fuzz::seeds("endpoint");
    assert!(!seeds.is_empty());
    for s in &seeds {
        run(s);
    }
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions/endpoint");
    if let Ok(rd) = std::fs::read_dir(dir) {
        for e in rd.flatten() {
            run(&std::fs::read(e.path()).expect("readable regression"));
        }
    }
    let mut rng = ChaCha8Rng::seed_from_u64(17);
    for i in 0..RANDOM_INPUTS {
        let input: Vec<u8> = if i % 2 == 0 {
            let len = rng.gen_range(0..400);
            (0..len).map(|_| rng.gen()).collect()
        } else {
            let mut s = seeds[rng.gen_range(0..seeds.len())].clone();
            for _ in 0..rng.gen_range(1..6) {
                if s.is_empty() {
                    break;
                }
                let at = rng.gen_range(0..s.len());
                if rng.gen_bool(0.5) {
                    s[at] ^= 1 << rng.gen_range(0..8);
                } else {
                    s.insert(at, rng.gen());
                }
            }
            s
        };
        run(&input);
    }
}

#[test]
fn endpoint_with_copa() {
    smoke(CcAlgorithm::Copa);
}

/// Linux's module ports (Vegas, Westwood+, Hybla, Illinois, H-TCP, BIC), some of which set cwnd or ssthresh outside `cong_avoid` or keep RTT state the plain
/// contract's users do not.
#[test]
fn endpoint_with_linux_module_ports() {
    for cc in [
        CcAlgorithm::Vegas,
        CcAlgorithm::Westwood,
        CcAlgorithm::Hybla,
        CcAlgorithm::Illinois,
        CcAlgorithm::Htcp,
        CcAlgorithm::Bic,
    ] {
        smoke(cc);
    }
}

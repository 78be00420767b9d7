//! The endpoint target with BBR v3 (`cc = "bbr3"`) on every connection (issue 35
//! §2: every controller fuzzed through the endpoint target): the endpoint seeds and
//! 2000 deterministic random inputs and seed mutations, no panic, the target's own
//! stream and limit checks holding.

use brisk_tcp::cc::CcAlgorithm;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn run(input: &[u8]) {
    let r = std::panic::catch_unwind(|| brisk_fuzz::endpoint_with(input, CcAlgorithm::Bbr3));
    if r.is_err() {
        let hex: String = input.iter().map(|x| format!("{x:02x}")).collect();
        panic!("endpoint with bbr3 failed on input {hex}");
    }
}

#[test]
fn endpoint_target_with_bbr3_never_panics() {
    let seeds = brisk_fuzz::seeds("endpoint");
    assert!(!seeds.is_empty());
    for s in &seeds {
        run(s);
    }
    let mut rng = ChaCha8Rng::seed_from_u64(35);
    for i in 0..2000 {
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
                s[at] ^= 1 << rng.gen_range(0..8);
            }
            s
        };
        run(&input);
    }
}

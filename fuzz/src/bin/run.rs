//! In-process mutation runs of one target, without AFL++: faster per input (no fork
//! server, no instrumentation) but blind to coverage, so it complements the AFL++
//! campaign rather than replacing it. Mutates the seeds and any corpus directories
//! given (such as an AFL++ queue) with a fixed-seed RNG, so a run is reproducible.
//!
//! `cargo run --release -p brisk-fuzz --bin run -- TARGET SECONDS [SEED] [DIR...]`
//!
//! Prints the executions and failures; failing inputs are written to
//! `target/fuzz/run-failures/TARGET-N`.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::time::{Duration, Instant};

fn mutate(rng: &mut ChaCha8Rng, corpus: &[Vec<u8>], s: &mut Vec<u8>) {
    for _ in 0..rng.gen_range(1..8) {
        match rng.gen_range(0..7) {
            0 if !s.is_empty() => {
                let at = rng.gen_range(0..s.len());
                s[at] ^= 1 << rng.gen_range(0..8);
            }
            1 if !s.is_empty() => {
                let at = rng.gen_range(0..s.len());
                s[at] = [0, 1, 0x7f, 0x80, 0xff, rng.gen()][rng.gen_range(0..6)];
            }
            2 if s.len() < 4096 => {
                let at = rng.gen_range(0..=s.len());
                for _ in 0..rng.gen_range(1..9) {
                    s.insert(at, rng.gen());
                }
            }
            3 if !s.is_empty() => {
                let at = rng.gen_range(0..s.len());
                let n = rng.gen_range(1..=(s.len() - at).min(16));
                s.drain(at..at + n);
            }
            4 if s.len() >= 4 => {
                // Copy a chunk within the input (repeats an operation).
                let a = rng.gen_range(0..s.len());
                let n = rng.gen_range(1..=(s.len() - a).min(32));
                let chunk = s[a..a + n].to_vec();
                let at = rng.gen_range(0..=s.len());
                s.splice(at..at, chunk);
            }
            5 if !corpus.is_empty() => {
                // Splice the tail of another input.
                let o = &corpus[rng.gen_range(0..corpus.len())];
                if !o.is_empty() {
                    let from = rng.gen_range(0..o.len());
                    let at = rng.gen_range(0..=s.len());
                    s.truncate(at);
                    s.extend_from_slice(&o[from..]);
                }
            }
            _ if s.len() >= 2 => {
                let at = rng.gen_range(0..s.len() - 1);
                let v: u16 = rng.gen();
                s[at..at + 2].copy_from_slice(&v.to_be_bytes());
            }
            _ => s.push(rng.gen()),
        }
    }
}

fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let (Some(name), Some(secs)) = (args.next(), args.next()) else {
        eprintln!("usage: run TARGET SECONDS [SEED] [DIR...]");
        std::process::exit(2);
    };
    let f = brisk_fuzz::TARGETS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|t| t.1)
        .unwrap_or_else(|| panic!("unknown target {name}"));
    let secs: u64 = secs.parse().expect("SECONDS");
    let seed: u64 = args.next().map_or(1, |s| s.parse().expect("SEED"));
    let mut corpus = brisk_fuzz::seeds(&name);
    for dir in args {
        for e in std::fs::read_dir(dir)?.flatten() {
            if e.path().is_file() {
                corpus.push(std::fs::read(e.path())?);
            }
        }
    }
    std::panic::set_hook(Box::new(|_| {}));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let end = Instant::now() + Duration::from_secs(secs);
    let (mut execs, mut failures) = (0u64, 0u64);
    let mut input = Vec::new();
    while Instant::now() < end {
        for _ in 0..256 {
            input.clear();
            input.extend_from_slice(&corpus[rng.gen_range(0..corpus.len())]);
            mutate(&mut rng, &corpus, &mut input);
            execs += 1;
            if std::panic::catch_unwind(|| f(&input)).is_err() {
                failures += 1;
                let dir = std::path::Path::new("target/fuzz/run-failures");
                std::fs::create_dir_all(dir)?;
                std::fs::write(dir.join(format!("{name}-{failures}")), &input)?;
            }
        }
    }
    println!(
        "target={name} seconds={secs} seed={seed} corpus={} execs={execs} failures={failures}",
        corpus.len()
    );
    Ok(())
}

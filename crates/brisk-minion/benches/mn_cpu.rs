//! MN-5, Minion's CPU cost (Minion NSDI 2012 §1 and §8.1, Fig. 6(a)(b); Nowlan's
//! thesis §6.2.1): uCOBS against raw TCP, and uTLS against stock TLS, for a bulk
//! transfer of 30 MB at an RTT of 60 ms and loss of 0, 1, 2 and 5 %.
//!
//! Claimed: uCOBS total CPU ≤ 5× raw TCP; uTLS receiver ≤ 1.07× TLS receiver; uTLS
//! sender = TLS sender ±3 %.
//!
//! The driver is `brisk_minion::cpu_cost` (shared with `brisk repro mn-cpu`, which
//! reports the same ratios as claim rows). How it runs (a benchmark, not a test: CPU
//! time is not deterministic):
//! - Two brisk sans-IO endpoints in one thread, as in `tests/fallback.rs`: a wire
//!   with 30 ms one-way delay, virtual time, no link rate (the transfer is
//!   cwnd-limited). Data packets towards the receiver are dropped with probability p
//!   (a seeded ChaCha8 RNG), first sendings and retransmissions alike.
//! - Four arms move the same payload in 1448-byte application writes, datagrams or
//!   records: raw TCP (in-order `read`), uCOBS (unordered receive), stock rustls
//!   (buffered API, in order) and uTLS (unordered receive). Both TLS arms use TLS 1.3
//!   with TLS13_AES_128_GCM_SHA256 (ring).
//! - CPU time is the thread's (`CLOCK_THREAD_CPUTIME_ID`): the whole run (both TCP
//!   endpoints, the wire and both applications), the sender application's calls and
//!   the receiver application's calls. The clock starts after the TCP (and TLS)
//!   handshake, so the handshake is not counted. A reading of that clock is a system
//!   call (about 0.8 µs here); its measured cost is subtracted once per timed call
//!   from the sender and receiver figures and three times per call from the total.
//! - Each run checks that every byte arrived exactly once and intact (the receiver
//!   compares against the payload) and aborts otherwise. One unmeasured warm-up run
//!   per arm comes first; then each cell runs 3 times (arms interleaved) and each
//!   figure printed is the median of its 3.
//!
//! `cargo bench -p brisk-minion --bench mn_cpu`; `MN_CPU_MB` shrinks the transfer
//! (default 30), `MN_CPU_REPS` changes the repeats (default 3). Run without `--bench`
//! (`cargo test --release -p brisk-minion --benches`) it is a 1-MiB smoke run.

use brisk_minion::cpu_cost::{measure, Arm, Payload, LOSSES};

/// Application write, datagram and record size (one MSS of plaintext).
const CHUNK: usize = 1448;

/// The thread's CPU time in ns.
fn cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID)");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

fn env_usize(name: &str, default: usize, range: std::ops::RangeInclusive<usize>) -> usize {
    match std::env::var(name) {
        Err(_) => default,
        Ok(s) => match s.parse::<usize>() {
            Ok(v) if range.contains(&v) => v,
            _ => {
                eprintln!("{name}={s}: expected an integer in {range:?}");
                std::process::exit(2);
            }
        },
    }
}

fn main() {
    // `cargo bench` passes `--bench`; without it (`cargo test --benches`) this is a
    // smoke run: 1 MiB, one run per cell, the byte checks all the same.
    let bench = std::env::args().any(|a| a == "--bench");
    let mb = env_usize("MN_CPU_MB", if bench { 30 } else { 1 }, 1..=1024);
    let reps = env_usize("MN_CPU_REPS", if bench { 3 } else { 1 }, 1..=99);
    let m = measure(mb, reps, &cpu_ns);
    println!(
        "MN-5: {} x {CHUNK} B = {:.2} MiB per run, RTT 60 ms, no link rate (cwnd-limited), \
         TLS 1.3 AES-128-GCM; CPU = CLOCK_THREAD_CPUTIME_ID after the handshake; \
         median of {reps} runs per cell",
        Payload::new(mb).chunks(),
        m.mib
    );
    let per_mb = |ns: u64| ns as f64 / m.mib;
    println!();
    println!(
        "one CLOCK_THREAD_CPUTIME_ID reading: {:.0} ns; subtracted once per timed call \
         (\"calls\") from the sender and receiver figures and three times from the total",
        m.clock_ns
    );
    println!(
        "{:>5}  {:<13} {:>14} {:>14} {:>14} {:>9} {:>9} {:>9}",
        "loss", "arm", "total ns/MiB", "sender ns/MiB", "recv ns/MiB", "early", "rexmit", "calls"
    );
    for row in &m.cells {
        for c in row {
            println!(
                "{:>4}%  {:<13} {:>14.0} {:>14.0} {:>14.0} {:>9} {:>9} {:>9}",
                c.loss * 100.0,
                c.arm.name(),
                per_mb(c.cost.total),
                per_mb(c.cost.sender),
                per_mb(c.cost.receiver),
                c.early,
                c.retransmits,
                c.calls,
            );
        }
    }
    println!();
    println!(
        "{:>5}  {:<34} {:>8}  {:<14} verdict",
        "loss", "ratio", "ratio", "claim"
    );
    let mut all = true;
    for (li, &loss) in LOSSES.iter().enumerate() {
        let rows: [(&str, f64, &str, f64, f64); 3] = [
            (
                "uCOBS total / raw TCP total",
                m.ratio(li, Arm::Ucobs, Arm::Raw, |c| c.total),
                "<= 5",
                0.0,
                5.0,
            ),
            (
                "uTLS receiver / TLS receiver",
                m.ratio(li, Arm::Utls, Arm::Tls, |c| c.receiver),
                "<= 1.07",
                0.0,
                1.07,
            ),
            (
                "uTLS sender / TLS sender",
                m.ratio(li, Arm::Utls, Arm::Tls, |c| c.sender),
                "1.00 +-3 %",
                0.97,
                1.03,
            ),
        ];
        for (what, r, claim, lo, hi) in rows {
            let pass = (lo..=hi).contains(&r);
            all &= pass;
            println!(
                "{:>4}%  {:<34} {:>8.3}  {:<14} {}",
                loss * 100.0,
                what,
                r,
                claim,
                if pass { "PASS" } else { "FAIL" }
            );
        }
    }
    println!();
    println!(
        "MN-5 overall: {} (CPU numbers vary run to run)",
        if all { "PASS" } else { "FAIL" }
    );
}

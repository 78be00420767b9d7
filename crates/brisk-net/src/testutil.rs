//! A minimal driver for unit tests: feeds timed arrivals into one element and polls it
//! exactly when it asks, as the simulator's event queue will.

use brisk_time::Instant;

use crate::element::{Element, Packet};

pub fn pkt(id: u64, len: usize) -> Packet {
    Packet {
        data: vec![0x45; len],
        id,
        flow: 0,
        sent_at: Instant::ZERO,
        l4_csum_valid: false,
    }
}

/// Runs `e` over `arrivals` (sorted by time) until it is idle; returns each packet with
/// the time it came out. Departures due at the same instant as an arrival come first.
pub fn run<E: Element>(e: &mut E, arrivals: Vec<(Instant, Packet)>) -> Vec<(Instant, Packet)> {
    debug_assert!(arrivals.windows(2).all(|w| w[0].0 <= w[1].0));
    let mut out = Vec::new();
    let mut arrivals = arrivals.into_iter().peekable();
    let mut steps = 0u64;
    loop {
        steps += 1;
        assert!(steps < 10_000_000, "driver made no progress");
        let wake = e.poll_timeout();
        let arr = arrivals.peek().map(|a| a.0);
        let take_arrival = match (wake, arr) {
            (None, None) => break,
            (Some(w), Some(a)) => a < w,
            (Some(_), None) => false,
            (None, Some(_)) => true,
        };
        if take_arrival {
            // NOTE(unwrap): `arr` is Some when an arrival is taken.
            let (t, p) = arrivals.next().unwrap();
            e.handle_packet(t, p);
            while let Some(p) = e.poll_packet(t) {
                out.push((t, p));
            }
        } else if let Some(w) = wake {
            while let Some(p) = e.poll_packet(w) {
                out.push((w, p));
            }
        }
    }
    out
}

/// `n` packets of `len` bytes, one every `gap_ns` from time 0, ids 0..n.
pub fn train(n: u64, len: usize, gap_ns: u64) -> Vec<(Instant, Packet)> {
    (0..n)
        .map(|i| (Instant::from_nanos(i * gap_ns), pkt(i, len)))
        .collect()
}

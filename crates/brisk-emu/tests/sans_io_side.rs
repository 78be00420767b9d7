//! The emulator loop drives fd-less sides purely by their `poll_timeout` (the shape a
//! brisk sans-IO `Endpoint` will have); no root needed.

use std::collections::VecDeque;
use std::os::fd::RawFd;
use std::sync::{Arc, Mutex};

use brisk_emu::{EmuConfig, Emulator, EmulatorOptions, Side};
use brisk_time::Instant;

type Log = Arc<Mutex<Vec<(Instant, Vec<u8>)>>>;

/// Emits scheduled packets; records what it is handed.
struct Script {
    out: VecDeque<(Instant, Vec<u8>)>,
    got: Log,
}

impl Side for Script {
    fn poll_fd(&self) -> Option<RawFd> {
        None
    }
    fn recv(&mut self, now: Instant, buf: &mut Vec<u8>) -> std::io::Result<bool> {
        match self.out.front() {
            Some((t, _)) if *t <= now => {
                let (_, p) = self.out.pop_front().unwrap();
                buf.clear();
                buf.extend_from_slice(&p);
                Ok(true)
            }
            _ => Ok(false),
        }
    }
    fn send(&mut self, now: Instant, pkt: &[u8]) -> std::io::Result<bool> {
        self.got.lock().unwrap().push((now, pkt.to_vec()));
        Ok(true)
    }
    fn poll_timeout(&self) -> Option<Instant> {
        self.out.front().map(|(t, _)| *t)
    }
}

#[test]
fn fdless_sides_are_driven_by_their_own_timeouts() {
    let at = Instant::from_millis(5);
    let a = Script {
        out: (0..20u8).map(|i| (at, vec![i; 1250])).collect(),
        got: Log::default(),
    };
    let b_got = Log::default();
    let b = Script {
        out: VecDeque::from([(Instant::from_millis(2), vec![0xee; 100])]),
        got: b_got.clone(),
    };
    let a_got = a.got.clone();
    // 10 Mbit/s: 1250 bytes take exactly 1 ms; 4 ms RTT -> 2 ms each way.
    let cfg = EmuConfig::bottleneck(10_000_000, brisk_time::Duration::from_millis(4));
    let opts = EmulatorOptions {
        delivery_log: 100,
        ..EmulatorOptions::default()
    };
    let mut emu = Emulator::new(a, b, &cfg, opts).unwrap();
    let stop = std::sync::atomic::AtomicBool::new(false);
    let r = emu
        .run(&stop, Some(brisk_time::Duration::from_millis(60)))
        .unwrap();

    let got = b_got.lock().unwrap();
    assert_eq!(got.len(), 20);
    for (i, (_, p)) in got.iter().enumerate() {
        assert_eq!(p[0], i as u8);
    }
    let d = &r.forward.deliveries;
    assert_eq!(d.len(), 20);
    // Read at (just after) 5 ms; each leaves 1 ms of serialisation + 2 ms later.
    let read = d[0].read_at;
    assert!(read >= at);
    for (k, x) in d.iter().enumerate() {
        let want = read + brisk_time::Duration::from_millis(k as u64 + 1 + 2);
        assert_eq!(x.scheduled, want, "packet {k}");
        assert!(x.written >= x.scheduled);
    }
    assert_eq!(a_got.lock().unwrap().len(), 1, "reverse packet delivered");
    assert_eq!(r.reverse.delivered_packets, 1);
    assert!(r.elapsed_s >= 0.06);
}

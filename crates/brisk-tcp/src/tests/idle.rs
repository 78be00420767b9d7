//! Restart after idle (RFC 5681 §4.1; Linux `tcp_slow_start_after_idle`).

use super::harness::*;
use crate::config::Config;
use brisk_time::Duration;

/// Sends `n` bytes from client to server and waits until they are all acknowledged.
fn send_and_drain(p: &mut Pair, c: crate::ConnHandle, s: crate::ConnHandle, n: usize) {
    let data = vec![7u8; n];
    let mut off = 0;
    let mut sink = Vec::new();
    p.run_until(Duration::from_secs(30), |p| {
        if off < data.len() {
            off += p.client.conn_mut(c).unwrap().write(&data[off..]);
        }
        Pair::read_all(&mut p.server, s, &mut sink);
        off == data.len() && p.client.conn(c).unwrap().info().in_flight == 0 && sink.len() == n
    });
}

fn cwnd_after_idle(idle: Duration, slow_start_after_idle: bool) -> (u32, u32) {
    let cfg = {
        let mut c = Config::default();
        c.congestion.slow_start_after_idle = slow_start_after_idle;
        c
    };
    let mut p = Pair::with_configs(Duration::from_millis(20), cfg, Config::default());
    let (c, s) = p.establish();
    send_and_drain(&mut p, c, s, 400_000);
    let before = p.client.conn(c).unwrap().info().cwnd;
    p.advance(idle);
    // One more small write: the restart happens when transmission starts again.
    send_and_drain(&mut p, c, s, 1000);
    (before, p.client.conn(c).unwrap().info().cwnd)
}

#[test]
fn short_idle_keeps_the_window() {
    let (before, after) = cwnd_after_idle(Duration::from_millis(100), true);
    assert!(
        before > 20,
        "slow start should have opened cwnd, got {before}"
    );
    assert!(after >= before, "{before} -> {after}");
}

#[test]
fn long_idle_decays_cwnd_towards_the_initial_window() {
    let (before, after) = cwnd_after_idle(Duration::from_secs(10), true);
    assert!(before > 20, "{before}");
    // Ten seconds is dozens of RTOs: cwnd halves down to (but not below) IW10, plus
    // growth from the one ACK of the restarting write.
    assert!((10..=11).contains(&after), "{before} -> {after}");
}

#[test]
fn restart_can_be_switched_off() {
    let (before, after) = cwnd_after_idle(Duration::from_secs(10), false);
    assert!(after >= before, "{before} -> {after}");
}

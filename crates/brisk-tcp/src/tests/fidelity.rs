//! Two details where brisk's window management must match Linux (issue 9, §0), checked
//! white-box through a `Pair`: the additive-increase credit is cleared when a reduction
//! starts (Linux `tcp_init_cwnd_reduction`), and a send that fills cwnd marks the window
//! cwnd-limited (Linux `tcp_write_xmit`), not only a send that cwnd blocks.

use super::harness::*;
use super::transfer::pattern;
use crate::conn::CaState;
use brisk_time::Duration;

/// A bulk transfer that drops every `every`-th data segment on its first transmission
/// once `after` segments went by; calls `check` after every step.
fn lossy_bulk(
    every: u64,
    after: u64,
    mut check: impl FnMut(&mut Pair, crate::endpoint::ConnHandle),
) {
    let mut p = Pair::new(Duration::from_millis(20));
    let (c, s) = p.establish();
    let mut n = 0u64;
    p.set_hook(move |x| {
        if x.to_server && x.len > 0 {
            n += 1;
            if n > after && n.is_multiple_of(every) {
                return Action::Drop;
            }
        }
        Action::Deliver
    });
    let data = pattern(3 << 20, 9);
    let (mut sent, mut got) = (0, Vec::new());
    let end = p.now + Duration::from_secs(60);
    while got.len() < data.len() && p.now < end {
        if sent < data.len() {
            sent += p.client.conn_mut(c).unwrap().write(&data[sent..]);
        }
        Pair::read_all(&mut p.server, s, &mut got);
        check(&mut p, c);
        if !p.step_until(end) {
            break;
        }
    }
    assert!(got == data, "stream intact");
}

#[test]
fn a_reduction_clears_the_additive_increase_credit() {
    let (mut reductions, mut credit_before) = (0u32, 0u32);
    let mut last = (CaState::Open, 0u32);
    lossy_bulk(400, 200, |p, c| {
        let (state, vars, _) = p.client.conn(c).unwrap().cc_probe();
        if state == CaState::Recovery && last.0 != CaState::Recovery {
            reductions += 1;
            if last.1 > 0 {
                credit_before += 1;
            }
            // Cleared at entry, and PRR owns cwnd until the exit: no credit accrues.
            assert_eq!(vars.cwnd_cnt, 0, "cwnd_cnt at recovery entry");
        }
        if state == CaState::Recovery {
            assert_eq!(vars.cwnd_cnt, 0, "cwnd_cnt during recovery");
        }
        last = (state, vars.cwnd_cnt);
    });
    assert!(reductions >= 3, "recoveries: {reductions}");
    assert!(
        credit_before >= 1,
        "some recovery began with credit to clear"
    );
}

#[test]
fn filling_cwnd_marks_the_window_cwnd_limited() {
    // Exactly cwnd segments of data: the last send fills cwnd, and no send is blocked.
    let mut p = Pair::new(Duration::from_millis(20));
    let (c, _s) = p.establish();
    let iw = crate::config::Config::default().congestion.initial_cwnd as usize;
    let mss = 1448;
    let n = p.client.conn_mut(c).unwrap().write(&pattern(iw * mss, 3));
    assert_eq!(n, iw * mss);
    // The segments leave at once; their ACKs are a round trip away.
    let t = p.now + Duration::from_millis(1);
    p.step_until(t);
    let (_, vars, limited) = p.client.conn(c).unwrap().cc_probe();
    assert_eq!(vars.cwnd as usize, iw);
    assert!(limited, "a send that fills cwnd is cwnd-limited");
}

//! Copa's target, velocity and mode logic on scripted samples, and a fixed-rate pipe.

use super::*;
use std::collections::VecDeque;

fn ms(x: u64) -> Duration {
    Duration::from_millis(x)
}

/// A controller past init with `cwnd`, fed `rtt` samples at `at`.
struct Script {
    copa: Copa,
    cc: CcState,
    now: Instant,
}

impl Script {
    fn new(cfg: CopaConfig, cwnd: u32) -> Self {
        let mut cc = CcState::new(cwnd, 1448);
        let mut copa = Copa::new(cfg);
        let now = Instant::from_millis(1);
        copa.init(&mut FlowCtx::alone(&mut cc), now);
        Script { copa, cc, now }
    }

    /// One ACK of one segment at `now + dt` with RTT `rtt` (srtt follows it).
    fn ack(&mut self, dt: Duration, rtt: Duration) {
        self.now += dt;
        self.cc.srtt = if self.cc.srtt.is_zero() {
            rtt
        } else {
            (self.cc.srtt * 7 + rtt) / 8
        };
        self.cc.snd_una += 1;
        self.cc.snd_nxt = self.cc.snd_una + u64::from(self.cc.cwnd);
        let ack = AckSample {
            now: self.now,
            acked_segs: 1,
            rtt: Some(rtt),
            ..Default::default()
        };
        self.copa
            .cong_control(&mut FlowCtx::alone(&mut self.cc), &ack);
    }
}

#[test]
fn target_is_standing_rtt_over_delta_times_queueing_delay() {
    let mut s = Script::new(CopaConfig::default(), 10);
    // RTTmin 20 ms, then 1 ms apart samples at 30 ms: RTTstanding (min over srtt/2)
    // becomes 30 ms once the 20 ms sample leaves its window.
    s.ack(ms(1), ms(20));
    assert_eq!(s.copa.target_cwnd(), f64::INFINITY, "no queue: no bound");
    for _ in 0..40 {
        s.ack(ms(1), ms(30));
    }
    assert_eq!(s.copa.min_rtt_us(), 20_000);
    assert_eq!(s.copa.standing_us(), 30_000);
    // λ_t = 1/(δ·d_q) = 1/(0.5 · 10 ms) = 200 pkt/s; at RTTstanding 30 ms that is a
    // window of 6.
    assert!(
        (s.copa.target_cwnd() - 6.0).abs() < 1e-9,
        "{}",
        s.copa.target_cwnd()
    );
    // δ = 0.1: five times the window.
    let mut s = Script::new(
        CopaConfig {
            delta: 0.1,
            mode_switch: false,
        },
        10,
    );
    s.ack(ms(1), ms(20));
    for _ in 0..40 {
        s.ack(ms(1), ms(30));
    }
    assert!((s.copa.target_cwnd() - 30.0).abs() < 1e-9);
}

#[test]
fn slow_start_doubles_until_the_rate_exceeds_the_target_then_steps_by_v_over_delta_cwnd() {
    let mut s = Script::new(CopaConfig::default(), 10);
    // No queue: +1 per ACKed segment.
    for _ in 0..20 {
        s.ack(Duration::from_micros(100), ms(20));
    }
    assert!(s.copa.in_slow_start());
    assert_eq!(s.cc.cwnd, 30);
    // A queue of 10 ms: once RTTstanding (the least RTT of the last srtt/2) shows
    // it, the target (6) is below cwnd and slow start ends...
    let mut n = 0;
    while s.copa.in_slow_start() {
        s.ack(ms(1), ms(30));
        n += 1;
        assert!(n < 100, "slow start never ended");
    }
    assert!(s.copa.target_cwnd() < f64::from(s.cc.cwnd));
    let exit = s.cc.cwnd;
    // ...and cwnd steps down by v/(δ·cwnd) per ACK.
    for _ in 0..40 {
        s.ack(ms(1), ms(30));
    }
    assert!(s.cc.cwnd < exit, "cwnd {} vs {exit} at exit", s.cc.cwnd);
    let before = s.copa.wnd;
    let v = s.copa.velocity();
    s.ack(ms(1), ms(30));
    let expect = before - v / (0.5 * before);
    assert!(
        (s.copa.wnd - expect).abs() < 1e-9,
        "{} vs {expect}",
        s.copa.wnd
    );
}

#[test]
fn velocity_doubles_after_three_windows_one_way_and_resets_on_a_turn() {
    let mut s = Script::new(
        CopaConfig {
            delta: 0.5,
            mode_switch: false,
        },
        10,
    );
    s.copa.slow_start = false;
    s.ack(ms(1), ms(20));
    // No queue: the target is unbounded and cwnd climbs every ACK. Walk windows
    // (SND.NXT passes each window's end) and watch v.
    let mut vs = Vec::new();
    for _ in 0..8 {
        let end = s.copa.window_end;
        while s.cc.snd_una < end {
            s.ack(Duration::from_micros(200), ms(20));
        }
        vs.push(s.copa.velocity());
    }
    // The ACK before the loop ended the first window (it set the direction); the
    // loop's first window is the second up in a row (v = 1), its second the third:
    // v doubles from there on each window, 2, 4, 8, ... (capped at δ·cwnd, far
    // above here).
    assert_eq!(vs[..3], [1.0, 2.0, 4.0], "{vs:?}");
    assert_eq!(vs[3], 8.0, "{vs:?}");
    assert!(vs[7] >= 16.0, "{vs:?}");
    // A queue far above the target turns cwnd down: v is 1 again at that window.
    s.ack(ms(1), ms(20));
    let mut turned = None;
    for i in 0..6 {
        let end = s.copa.window_end;
        while s.cc.snd_una < end {
            s.ack(ms(1), ms(60));
        }
        if s.copa.last_dir == -1 && turned.is_none() {
            turned = Some((i, s.copa.velocity()));
        }
    }
    assert_eq!(turned.map(|t| t.1), Some(1.0), "{turned:?}");
}

#[test]
fn a_queue_that_never_empties_switches_to_competitive_and_delta_moves_aimd() {
    let mut s = Script::new(CopaConfig::default(), 10);
    s.copa.slow_start = false;
    s.ack(ms(1), ms(20));
    // An empty queue now and then (every 40 ms, srtt about 30 ms): default mode.
    for i in 0..400 {
        let rtt = if i % 40 == 0 { ms(20) } else { ms(35) };
        s.ack(ms(1), rtt);
    }
    assert_eq!(s.copa.mode(), Mode::Default);
    assert_eq!(s.copa.delta(), 0.5);
    // The queue stays at 30-40 ms above RTTmin (a buffer-filler): after 5 RTTs
    // (srtt about 50 ms) without a nearly-empty sample, competitive mode.
    let mut switched_at = None;
    for i in 0..600u64 {
        s.ack(ms(1), ms(50 + (i % 10)));
        if switched_at.is_none() && s.copa.mode() == Mode::Competitive {
            switched_at = Some(i);
        }
    }
    let at = switched_at.expect("switched to competitive");
    assert!((150..420).contains(&at), "switched after {at} ms");
    // 1/δ grew by about one per RTT since (srtt about 55 ms).
    let inv = 1.0 / s.copa.delta();
    let rtts = (600 - at) as f64 / 55.0;
    assert!(
        (inv - 2.0 - rtts).abs() < 0.3 * rtts + 1.0,
        "1/δ {inv} after {rtts} RTTs"
    );
    // A loss halves 1/δ, once per RTT: two in a row count once.
    s.copa
        .ssthresh(&mut FlowCtx::alone(&mut s.cc), s.now, CongestionCause::Loss);
    s.ack(ms(1), ms(55));
    let halved = 1.0 / s.copa.delta();
    assert!((halved - inv / 2.0).abs() < 1.01, "{inv} -> {halved}");
    s.copa
        .ssthresh(&mut FlowCtx::alone(&mut s.cc), s.now, CongestionCause::Loss);
    s.ack(ms(1), ms(55));
    assert!((1.0 / s.copa.delta() - halved).abs() < 1.01);
    // The queue empties: back to default, δ = 0.5.
    s.ack(ms(1), ms(20));
    assert_eq!(s.copa.mode(), Mode::Default);
    assert_eq!(s.copa.delta(), 0.5);
    let d = s.copa.diag();
    assert_eq!(d.competitive_entries, 1);
    assert!(d.competitive_ms > 100, "{d:?}");
}

#[test]
fn without_the_mode_switch_delta_stays() {
    let mut s = Script::new(
        CopaConfig {
            delta: 0.5,
            mode_switch: false,
        },
        10,
    );
    s.copa.slow_start = false;
    s.ack(ms(1), ms(20));
    for _ in 0..2000 {
        s.ack(ms(1), ms(60));
    }
    assert_eq!(s.copa.mode(), Mode::Default);
    assert_eq!(s.copa.delta(), 0.5);
}

#[test]
fn config_ranges_name_the_parameter() {
    assert!(CopaConfig::default().validate().is_ok());
    for d in [0.0, -1.0, 1.5, f64::NAN] {
        let e = CopaConfig {
            delta: d,
            mode_switch: true,
        }
        .validate()
        .unwrap_err();
        assert_eq!(e.0, "delta");
    }
}

#[test]
fn loss_in_default_mode_leaves_the_window_and_an_rto_restarts_slow_start() {
    let mut s = Script::new(CopaConfig::default(), 10);
    s.ack(ms(1), ms(20));
    for _ in 0..40 {
        s.ack(ms(1), ms(30));
    }
    let w = s.cc.cwnd;
    let ss = s
        .copa
        .ssthresh(&mut FlowCtx::alone(&mut s.cc), s.now, CongestionCause::Loss);
    assert_eq!(ss, s.cc.ssthresh);
    assert_eq!(s.cc.cwnd, w);
    s.cc.cwnd = 1;
    let now = s.now;
    s.copa
        .on_event(&mut FlowCtx::alone(&mut s.cc), now, CcEvent::Rto);
    assert!(s.copa.in_slow_start());
    // Spurious: undo gives the window back.
    let back = s.copa.undo_cwnd(&mut FlowCtx::alone(&mut s.cc), w);
    assert!(back >= w - 1, "{back} vs {w}");
}

#[test]
fn pacing_is_twice_cwnd_over_standing_rtt() {
    let mut s = Script::new(CopaConfig::default(), 10);
    assert_eq!(s.copa.pacing_rate(&s.cc), None);
    s.ack(ms(1), ms(20));
    for _ in 0..40 {
        s.ack(ms(1), ms(30));
    }
    let r = s.copa.pacing_rate(&s.cc).unwrap();
    let expect = 2 * u64::from(s.cc.cwnd) * 1448 * 1000 / 30;
    assert!(r.abs_diff(expect) <= 1, "{r} vs {expect}");
}

/// A bottleneck of `rate` packets per ms behind a FIFO, base RTT `rtt_ms`, the
/// sender paced by Copa and limited by cwnd. Returns (packets delivered, mean
/// queueing delay ms after the first 5 s, the controller).
fn pipe(rate: u32, rtt_ms: u64, secs: u64) -> (u64, f64, Copa) {
    let mut cc = CcState::new(10, 1448);
    let mut copa = Copa::default();
    let step = Duration::from_micros(100);
    let mut now = Instant::from_millis(1);
    copa.init(&mut FlowCtx::alone(&mut cc), now);
    let service = Duration::from_micros(1000 / u64::from(rate));
    // Per packet: send time; the queue's departure times; ACK times.
    let mut queue: VecDeque<Instant> = VecDeque::new();
    let mut acks: VecDeque<(Instant, Instant)> = VecDeque::new();
    let mut next_free = now;
    let mut credit = 0u64;
    let (mut delivered, mut qsum, mut qn) = (0u64, 0f64, 0u64);
    let end = now + Duration::from_secs(secs);
    let trace = std::env::var("COPA_TRACE").is_ok();
    let mut tick = 0u64;
    while now < end {
        now += step;
        tick += 1;
        if trace && tick.is_multiple_of(500) {
            eprintln!(
                "{:>6} ms cwnd {:>4} inflight {:>4} queue {:>4} target {:>8.1} v {:>5.1} standing {} min {} ss {} mode {:?}",
                tick / 10,
                cc.cwnd,
                cc.in_flight,
                queue.len(),
                copa.target_cwnd(),
                copa.v,
                copa.standing_us(),
                copa.min_rtt_us(),
                copa.slow_start,
                copa.mode
            );
        }
        // Paced sends (at most one step's credit banked).
        let rate_bps = copa.pacing_rate(&cc).unwrap_or(10 * 1448 * 1000 / rtt_ms);
        let per_step = rate_bps / 10_000;
        credit = (credit + per_step).min(per_step.max(1448));
        while cc.in_flight < cc.cwnd && credit >= 1448 {
            credit -= 1448;
            cc.in_flight += 1;
            cc.snd_nxt += 1;
            queue.push_back(now);
        }
        // The bottleneck serves the queue's head.
        while let Some(&sent) = queue.front() {
            let start = sent.max(next_free);
            if start + service > now {
                break;
            }
            next_free = start + service;
            queue.pop_front();
            if tick > 50_000 {
                qsum += (start.saturating_duration_since(sent)).as_secs_f64() * 1e3;
                qn += 1;
            }
            acks.push_back((sent, next_free + ms(rtt_ms)));
        }
        while let Some(&(sent, at)) = acks.front() {
            if at > now {
                break;
            }
            acks.pop_front();
            delivered += 1;
            cc.in_flight -= 1;
            cc.snd_una += 1;
            let rtt = now.saturating_duration_since(sent);
            cc.srtt = if cc.srtt.is_zero() {
                rtt
            } else {
                (cc.srtt * 7 + rtt) / 8
            };
            let ack = AckSample {
                now,
                acked_segs: 1,
                rtt: Some(rtt),
                ..Default::default()
            };
            copa.cong_control(&mut FlowCtx::alone(&mut cc), &ack);
        }
    }
    (delivered, qsum / qn.max(1) as f64, copa)
}

#[test]
fn alone_on_a_pipe_copa_fills_it_with_a_small_queue_and_stays_in_default_mode() {
    for (rate, rtt) in [(1u32, 100u64), (1, 40), (2, 20)] {
        let secs = 20;
        let (delivered, q_ms, copa) = pipe(rate, rtt, secs);
        let util = delivered as f64 / (f64::from(rate) * 1000.0 * secs as f64);
        let d = copa.diag();
        eprintln!("rate {rate}/ms rtt {rtt} ms: util {util:.3}, mean queue {q_ms:.2} ms, {d:?}");
        assert!(util > 0.85, "utilisation {util}");
        // 1/δ = 2 packets of standing queue, oscillating (the paper: 0 to 2.5/δ):
        // a few packet times, far below the base RTT.
        let pkt_ms = 1.0 / f64::from(rate);
        assert!(q_ms < 8.0 * pkt_ms, "mean queue {q_ms} ms");
        // Alone, the queue should empty every few RTTs and keep Copa in default
        // mode. It does not always here: slow start's overshoot takes more than 5
        // RTTs to drain, and at 100 ms the oscillation's trough sometimes stays a
        // packet or two above empty, which the 10 % test reads as a standing queue
        // (docs/mechanisms/copa.md, "false competitive entries"). Bound it.
        assert!(u64::from(d.competitive_ms) < secs * 1000 / 5, "{d:?}");
    }
}

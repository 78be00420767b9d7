use super::*;
use crate::loss::LossModel;
use crate::queue::{DropTail, QueueLimit};
use crate::testutil::{pkt, run, train};

fn link(rate_bps: u64, delay: Duration, limit: QueueLimit) -> Link {
    let params = LinkParams {
        rate_bps,
        delay,
        ..LinkParams::default()
    };
    Link::new(params, DropTail::new(limit).unwrap().into(), Loss::none()).unwrap()
}

fn dt(limit: QueueLimit) -> AnyQueue {
    DropTail::new(limit).unwrap().into()
}

fn ns(out: &[(Instant, Packet)]) -> Vec<u64> {
    out.iter().map(|(t, _)| t.as_nanos()).collect()
}

fn ids(out: &[(Instant, Packet)]) -> Vec<u64> {
    out.iter().map(|(_, p)| p.id).collect()
}

#[test]
fn full_size_packet_at_10_mbps_leaves_after_1_2_ms() {
    let mut l = link(10_000_000, Duration::ZERO, QueueLimit::Packets(10));
    let out = run(&mut l, vec![(Instant::ZERO, pkt(0, 1500))]);
    assert_eq!(ns(&out), vec![1_200_000]);
}

#[test]
fn propagation_delay_adds_to_serialisation() {
    let mut l = link(
        10_000_000,
        Duration::from_millis(10),
        QueueLimit::Packets(10),
    );
    let out = run(&mut l, vec![(Instant::from_millis(1), pkt(0, 1500))]);
    assert_eq!(ns(&out), vec![12_200_000]);

    let mut l = link(0, Duration::from_millis(10), QueueLimit::Packets(10));
    let out = run(&mut l, train(3, 1500, 1000));
    assert_eq!(
        ns(&out),
        vec![10_000_000, 10_001_000, 10_002_000],
        "unlimited rate"
    );
}

#[test]
fn back_to_back_train_accumulates_no_drift() {
    let mut l = link(3, Duration::ZERO, QueueLimit::Packets(1000));
    let out = run(&mut l, train(1000, 1, 0));
    assert_eq!(out.len(), 1000);
    assert_eq!(ids(&out), (0..1000).collect::<Vec<_>>());
    let times = ns(&out);
    assert_eq!(*times.last().unwrap(), 8_000 * 1_000_000_000 / 3);
    for (k, t) in times.iter().enumerate() {
        // Packet k ends at floor((k+1) * 8e9 / 3) exactly.
        assert_eq!(*t, (k as u64 + 1) * 8_000_000_000 / 3, "packet {k}");
    }
    assert_eq!(l.counters().busy_ns, *times.last().unwrap());
}

#[test]
fn overhead_bytes_lengthen_serialisation_only() {
    let params = LinkParams {
        rate_bps: 10_000_000,
        overhead_bytes: 38,
        ..LinkParams::default()
    };
    let q = dt(QueueLimit::Packets(4));
    let mut l = Link::new(params, q, Loss::none()).unwrap();
    let out = run(&mut l, vec![(Instant::ZERO, pkt(0, 1500))]);
    assert_eq!(ns(&out), vec![1538 * 800]);
    assert_eq!(out[0].1.len(), 1500);
    assert_eq!(l.counters().output.bytes, 1500);
}

#[test]
fn packet_limit_counts_the_packet_on_the_wire_apart() {
    // One serialising plus three queued survive a burst of ten.
    let mut l = link(1_000_000, Duration::ZERO, QueueLimit::Packets(3));
    let out = run(&mut l, train(10, 1000, 0));
    assert_eq!(ids(&out), vec![0, 1, 2, 3]);
    let c = l.counters();
    assert_eq!(c.dropped(DropReason::QueueFull).packets, 6);
    assert_eq!(c.dropped(DropReason::QueueFull).bytes, 6000);
    assert_eq!(c.input.packets, 10);
    assert_eq!(c.output.packets, 4);
    assert_eq!(c.max_queue_packets, 3);
}

#[test]
fn byte_limit_drops_what_does_not_fit() {
    let mut l = link(1_000_000, Duration::ZERO, QueueLimit::Bytes(2500));
    let out = run(&mut l, train(5, 1000, 0));
    // Packet 0 on the wire, 1 and 2 queued (2000 B), 3 and 4 would exceed 2500 B.
    assert_eq!(ids(&out), vec![0, 1, 2]);
    assert_eq!(l.counters().dropped(DropReason::QueueFull).packets, 2);
    assert_eq!(l.counters().max_queue_bytes, 2000);
}

#[test]
fn queue_drains_and_refills_at_line_rate() {
    // 1000 B at 8 Mbit/s is 1 ms; arrivals every 0.5 ms build a queue.
    let mut l = link(8_000_000, Duration::ZERO, QueueLimit::Packets(100));
    let out = run(&mut l, train(10, 1000, 500_000));
    let want: Vec<u64> = (1..=10).map(|k| k * 1_000_000).collect();
    assert_eq!(ns(&out), want);
}

#[test]
fn packets_arriving_during_an_outage_are_dropped_and_counted() {
    let params = LinkParams {
        rate_bps: 0,
        delay: Duration::from_millis(5),
        outages: vec![Outage {
            start: Instant::from_millis(20),
            end: Instant::from_millis(50),
        }],
        ..LinkParams::default()
    };
    let q = dt(QueueLimit::Packets(10));
    let mut l = Link::new(params, q, Loss::none()).unwrap();
    let out = run(&mut l, train(100, 100, 1_000_000));
    let want: Vec<u64> = (0..20).chain(50..100).collect();
    assert_eq!(ids(&out), want);
    assert_eq!(l.counters().dropped(DropReason::Outage).packets, 30);
    assert_eq!(l.counters().dropped_total().packets, 30);
}

#[test]
fn loss_model_drops_on_arrival_before_the_queue() {
    let loss = Loss::new(LossModel::List(vec![1, 4]), 0).unwrap();
    let q = dt(QueueLimit::Packets(10));
    let mut l = Link::new(LinkParams::default(), q, loss).unwrap();
    let out = run(&mut l, train(6, 100, 10));
    assert_eq!(ids(&out), vec![0, 2, 3, 5]);
    assert_eq!(l.counters().dropped(DropReason::LossModel).packets, 2);
}

#[test]
fn event_log_reports_queue_occupancy_and_sojourn() {
    let mut l = link(8_000_000, Duration::from_millis(1), QueueLimit::Packets(1));
    l.enable_event_log(100);
    run(&mut l, train(3, 1000, 0));
    let mut ev = Vec::new();
    l.drain_events(&mut ev);
    let t = Instant::from_nanos;
    let want = vec![
        NetEvent::Enqueue {
            at: t(0),
            id: 0,
            flow: 0,
            bytes: 1000,
            queue_packets: 1,
            queue_bytes: 1000,
        },
        NetEvent::Dequeue {
            at: t(0),
            id: 0,
            flow: 0,
            bytes: 1000,
            sojourn: Duration::ZERO,
            queue_packets: 0,
            queue_bytes: 0,
            ce_marked: false,
        },
        NetEvent::Enqueue {
            at: t(0),
            id: 1,
            flow: 0,
            bytes: 1000,
            queue_packets: 1,
            queue_bytes: 1000,
        },
        NetEvent::Drop {
            at: t(0),
            id: 2,
            flow: 0,
            bytes: 1000,
            reason: DropReason::QueueFull,
        },
        NetEvent::Dequeue {
            at: t(1_000_000),
            id: 1,
            flow: 0,
            bytes: 1000,
            sojourn: Duration::from_millis(1),
            queue_packets: 0,
            queue_bytes: 0,
            ce_marked: false,
        },
        NetEvent::Depart {
            at: t(2_000_000),
            id: 0,
            flow: 0,
            bytes: 1000,
        },
        NetEvent::Depart {
            at: t(3_000_000),
            id: 1,
            flow: 0,
            bytes: 1000,
        },
    ];
    assert_eq!(ev, want);
    assert!(
        ev.windows(2).all(|w| w[0].at() <= w[1].at()),
        "time-ordered"
    );
}

#[test]
fn late_polling_gives_the_same_schedule_as_exact_polling() {
    let mut exact = link(
        8_000_000,
        Duration::from_millis(3),
        QueueLimit::Packets(100),
    );
    exact.enable_event_log(1000);
    run(&mut exact, train(20, 1000, 300_000));

    let mut late = link(
        8_000_000,
        Duration::from_millis(3),
        QueueLimit::Packets(100),
    );
    late.enable_event_log(1000);
    for (t, p) in train(20, 1000, 300_000) {
        late.handle_packet(t, p);
    }
    let end = Instant::from_secs(1);
    let mut n = 0;
    while late.poll_packet(end).is_some() {
        n += 1;
    }
    assert_eq!(n, 20);
    let (mut a, mut b) = (Vec::new(), Vec::new());
    exact.drain_events(&mut a);
    late.drain_events(&mut b);
    // The log is in processing order: late polling only delays when departures are
    // logged, never their times, nor any queue event.
    assert!(a.windows(2).all(|w| w[0].at() <= w[1].at()));
    b.sort_by_key(NetEvent::at);
    assert_eq!(a, b);
    assert_eq!(exact.poll_timeout(), None);
    assert_eq!(late.poll_timeout(), None);
}

#[test]
fn saturated_link_is_busy_the_whole_time() {
    let mut l = link(12_000_000, Duration::ZERO, QueueLimit::Packets(1000));
    let out = run(&mut l, train(100, 1500, 0));
    let end = out.last().unwrap().0;
    assert_eq!(l.counters().busy_ns, end.as_nanos());
    assert_eq!(end.as_nanos(), 100 * 1_000_000);
}

#[test]
fn delay_line_limit_bounds_packets_in_propagation() {
    let params = LinkParams {
        delay: Duration::from_secs(1),
        delay_line_limit: 5,
        ..LinkParams::default()
    };
    let q = dt(QueueLimit::Packets(10));
    let mut l = Link::new(params, q, Loss::none()).unwrap();
    let out = run(&mut l, train(8, 100, 1000));
    assert_eq!(out.len(), 5);
    assert_eq!(l.counters().dropped(DropReason::Overflow).packets, 3);

    let bad = LinkParams {
        delay_line_limit: 0,
        ..LinkParams::default()
    };
    let q = dt(QueueLimit::Packets(10));
    let e = Link::new(bad, q, Loss::none()).unwrap_err();
    assert!(e.to_string().contains("delay_line_limit"), "{e}");
}

#[test]
fn same_seed_gives_the_same_run() {
    let go = |seed| {
        let loss = Loss::new(LossModel::Bernoulli { p: 0.2 }, seed).unwrap();
        let params = LinkParams {
            rate_bps: 1_000_000,
            ..LinkParams::default()
        };
        let q = dt(QueueLimit::Packets(5));
        let mut l = Link::new(params, q, loss).unwrap();
        run(&mut l, train(500, 100, 700_000))
            .into_iter()
            .map(|(t, p)| (t, p.id))
            .collect::<Vec<_>>()
    };
    assert_eq!(go(1), go(1));
    assert_ne!(go(1), go(2));
}

#[test]
fn random_configs_and_traffic_conserve_packets() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(0xb15c);
    for round in 0..200 {
        let limit = if rng.gen() {
            QueueLimit::Packets(rng.gen_range(1..50))
        } else {
            QueueLimit::Bytes(rng.gen_range(1..60_000))
        };
        let start = rng.gen_range(0..50_000_000u64);
        // A quarter of the links are trace-driven, with random opportunity bursts.
        let trace = (round % 4 == 0).then(|| {
            let mut ms = 0u64;
            let text: String = (0..rng.gen_range(1..40))
                .map(|_| {
                    ms += rng.gen_range(0..5);
                    format!("{}\n", ms.max(1))
                })
                .collect();
            std::sync::Arc::new(crate::mahimahi::DeliveryTrace::parse(&text).unwrap())
        });
        let params = LinkParams {
            rate_bps: match trace {
                Some(_) => 0,
                None => [0, 1, 3, 56_000, 10_000_000, u64::MAX][rng.gen_range(0..6)],
            },
            trace,
            delay: Duration::from_nanos(rng.gen_range(0..20_000_000)),
            overhead_bytes: rng.gen_range(0..100),
            outages: vec![Outage {
                start: Instant::from_nanos(start),
                end: Instant::from_nanos(start + rng.gen_range(1..30_000_000)),
            }],
            delay_line_limit: rng.gen_range(1..100),
        };
        let loss = Loss::new(
            LossModel::Bernoulli {
                p: rng.gen_range(0.0..0.3),
            },
            round,
        )
        .unwrap();
        let mut l = Link::new(params, dt(limit), loss).unwrap();
        let mut t = 0u64;
        let mut arrivals = Vec::new();
        for id in 0..rng.gen_range(0..300) {
            t += rng.gen_range(0..1_000_000);
            arrivals.push((Instant::from_nanos(t), pkt(id, rng.gen_range(0..2000))));
        }
        let n = arrivals.len() as u64;
        // Stop early sometimes, so packets are left queued and in flight.
        let cut = rng.gen_range(0..=arrivals.len());
        let rest = arrivals.split_off(cut);
        let out = run(&mut l, arrivals);
        // The driver ran until idle; the rest arrive no earlier than it got to.
        let base = out.last().map_or(Instant::ZERO, |o| o.0);
        for (t, p) in rest {
            l.handle_packet(t.max(base), p);
        }
        let c = l.counters();
        let held = (l.queue().len_packets() + l.in_flight_packets()) as u64;
        assert_eq!(c.input.packets, n);
        assert_eq!(c.output.packets, out.len() as u64);
        assert_eq!(
            c.input.packets,
            c.output.packets + c.dropped_total().packets + held,
            "round {round}"
        );
    }
}

/// A packet that meets an empty drop-tail queue and a free serialiser skips the
/// queue's FIFO (`Link::pass_straight`): the same departures, counters and event log
/// as a link whose queue cannot take that shortcut (a marking threshold no packet
/// reaches), over arrivals that sometimes find the queue empty and sometimes not,
/// at a fixed rate and on a pure delay line, with drops at a small queue and a
/// short delay line.
#[test]
fn straight_through_an_empty_queue_is_the_queue_path() {
    let arrivals = || -> Vec<(Instant, Packet)> {
        // Bursts of 1..=4 packets of 40..1500 bytes, 0..3 ms apart (deterministic).
        let mut v = Vec::new();
        let (mut t, mut id, mut x) = (0u64, 0u64, 12345u64);
        for _ in 0..300 {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            t += (x >> 33) % 3_000_000;
            for _ in 0..1 + (x >> 20) % 4 {
                let len = 40 + ((x >> 40) % 1461) as usize;
                v.push((Instant::from_nanos(t), pkt(id, len)));
                id += 1;
            }
        }
        v
    };
    for (rate, delay, limit, line) in [
        (10_000_000, 1_000_000, QueueLimit::Packets(3), 1 << 20),
        (10_000_000, 0, QueueLimit::Bytes(3000), 1 << 20),
        (0, 5_000_000, QueueLimit::Packets(10), 1 << 20),
        (2_000_000, 50_000_000, QueueLimit::Packets(1000), 4),
    ] {
        let mk = |q: AnyQueue| {
            let params = LinkParams {
                rate_bps: rate,
                delay: Duration::from_nanos(delay),
                overhead_bytes: 38,
                delay_line_limit: line,
                ..LinkParams::default()
            };
            let mut l = Link::new(params, q, Loss::none()).unwrap();
            l.enable_event_log(1 << 16);
            l
        };
        let mut straight = mk(dt(limit));
        let never_marks = DropTail::new(limit)
            .unwrap()
            .with_ecn_threshold(QueueLimit::Packets(1 << 30));
        let mut queued = mk(never_marks.into());
        assert!(straight.queue().passes_straight(1500));
        assert!(!queued.queue().passes_straight(1500));
        let a = run(&mut straight, arrivals());
        let b = run(&mut queued, arrivals());
        assert_eq!(ns(&a), ns(&b), "{rate} {delay}");
        assert_eq!(ids(&a), ids(&b));
        assert_eq!(straight.counters(), queued.counters());
        assert_eq!(straight.events(), queued.events());
        assert!(straight.counters().dropped_total().packets > 0 || rate == 0);
    }
}

//! The Flow State Exchange on the seed's C.1 dumbbell (10 Mbit/s, RTT 100 ms, 62-packet
//! drop-tail queue): flows naming one FSE group send from one host and share one
//! window by priority; against the same flows uncoupled, the queue is shorter and the
//! link no busier. Docs: docs/mechanisms/fse.md.

use brisk_sim::{run, RunResult, Scenario};

/// `prios`: one flow per entry; `Some(p)`: in group "g" with priority p.
fn scenario(prios: &[Option<f64>], starts_ms: &[u64], secs: u64) -> Scenario {
    let mut s = format!(
        "name = \"fse\"\nduration = \"{secs}s\"\n[bottleneck]\nrate = \"10Mbit\"\nqueue = {{ kind = \"droptail\", packets = 62 }}\n"
    );
    for (p, start) in prios.iter().zip(starts_ms) {
        s.push_str(&format!(
            "[[flow]]\ncc = \"reno\"\nrtt = \"100ms\"\nstart = \"{start}ms\"\napp = {{ kind = \"bulk\" }}\n[flow.tcp]\nmss = 960\n"
        ));
        if let Some(p) = p {
            s.push_str(&format!("fse = {{ group = \"g\", priority = {p} }}\n"));
        }
    }
    Scenario::from_toml_str(&s).unwrap()
}

fn queue_ms(r: &RunResult) -> f64 {
    r.bottleneck
        .queue_delay
        .as_ref()
        .map_or(f64::NAN, |q| q.mean / 1e6)
}

#[test]
fn coupled_flows_share_by_priority_with_a_shorter_queue_than_uncoupled() {
    // The scenario draws nothing random: vary the start times (in the first second,
    // as C.1's random starts) instead of the seed.
    for (seed, starts) in [(1u64, [0, 310, 620, 870]), (2, [140, 40, 910, 505])] {
        let fse = run(
            &scenario(&[Some(1.0), Some(0.5), Some(1.0), Some(0.5)], &starts, 40),
            seed,
        )
        .unwrap();
        let plain = run(&scenario(&[None; 4], &starts, 40), seed).unwrap();
        assert!(fse.flows.iter().all(|f| f.cc == "reno+fse"));
        assert!(plain.flows.iter().all(|f| f.cc == "reno"));
        let b: Vec<f64> = fse.flows.iter().map(|f| f.bytes_delivered as f64).collect();
        let (hi, lo) = (b[0] + b[2], b[1] + b[3]);
        eprintln!(
            "seed {seed}: fse queue {:.1} ms util {:.3} shares {:?}; uncoupled queue {:.1} ms util {:.3}",
            queue_ms(&fse),
            fse.bottleneck.utilization,
            b.iter().map(|x| x / b.iter().sum::<f64>()).collect::<Vec<_>>(),
            queue_ms(&plain),
            plain.bottleneck.utilization
        );
        // P = 1 flows carry twice what P = 0.5 flows do.
        assert!((hi / lo - 2.0).abs() < 0.1, "ratio {}", hi / lo);
        assert!(queue_ms(&fse) < queue_ms(&plain));
        assert!(fse.bottleneck.utilization <= plain.bottleneck.utilization + 0.005);
        assert!(fse.bottleneck.utilization > 0.7);
    }
}

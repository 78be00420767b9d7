//! Issue 29: delay correlation must not lock below the link in any seed. On the
//! held-out path of `scenarios/dc-50mbit-80ms.toml` (50 Mbit/s × 80 ms, BDP ≈ 345
//! segments, one CUBIC flow with the layer) 3 of 15 seeds used to reach only 52–63 %
//! utilisation: slow-start bursts gave r = 1 with a line starting at half the window,
//! the layer clamped there, and its own dither bursts kept the clamp. Each seed draws a
//! different sampling stream, so the check runs over several.

use brisk_sim::{run, Scenario};

fn held_out(queue: Option<&str>) -> Scenario {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../scenarios/dc-50mbit-80ms.toml"
    );
    let mut text = std::fs::read_to_string(path).unwrap();
    // 12 s keeps the test fast; the trap held the window below the BDP for > 20 s.
    text = text.replace("duration = \"30s\"", "duration = \"12s\"");
    if let Some(q) = queue {
        text = text.replace(r#"queue = { kind = "droptail", time = "160ms" }"#, q);
        assert!(text.contains(q));
    }
    Scenario::from_toml_str(&text).unwrap()
}

fn worst_utilisation(sc: &Scenario, seeds: std::ops::RangeInclusive<u64>) -> (u64, f64) {
    seeds
        .map(|seed| {
            let res = run(sc, seed).unwrap();
            assert_eq!(res.flows[0].cc, "cubic+dc");
            (seed, res.bottleneck.utilization)
        })
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap()
}

#[test]
fn no_seed_locks_below_the_link_behind_drop_tail() {
    let (seed, u) = worst_utilisation(&held_out(None), 1..=15);
    assert!(u >= 0.9, "seed {seed}: utilisation {u:.3}");
}

#[test]
fn no_seed_locks_below_the_link_behind_fq_codel() {
    let (seed, u) = worst_utilisation(&held_out(Some(r#"queue = { kind = "fq_codel" }"#)), 1..=8);
    assert!(u >= 0.9, "seed {seed}: utilisation {u:.3}");
}

//! The fault campaign's scenario generator, shared by `fault_campaign` and the
//! behaviour snapshots (`snapshots`).

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::fmt::Write;

/// A random but valid scenario for `seed`, as TOML (so failures print a reproducible file).
pub fn scenario_for(seed: u64) -> String {
    scenario_over(seed, None)
}

/// What [`scenario_over`] puts in place of the generated controller and queue.
#[derive(Clone, Copy, Debug)]
pub struct Over {
    /// The flow's `cc`.
    pub cc: &'static str,
    /// The bottleneck's `queue` table; `None` keeps the generated drop-tail queue.
    pub queue: Option<&'static str>,
    /// Lines added to `[flow.tcp]` (keys the generator never writes: `ecn`, layers).
    pub tcp: &'static str,
}

/// `scenario_for(seed)` with the controller, queue and extra TCP knobs of `over`: the
/// generator draws the same numbers, so every other part of the scenario is the same.
pub fn scenario_over(seed: u64, over: Option<&Over>) -> String {
    let mut r = ChaCha8Rng::seed_from_u64(seed ^ 0xb415_c0de);
    let rate_mbit = r.gen_range(1..=50);
    let rtt_ms = r.gen_range(2..=200);
    let queue = r.gen_range(4..=300);
    let mut link = String::new();
    writeln!(link, "rate = \"{rate_mbit}Mbit\"").unwrap();
    match over.and_then(|o| o.queue) {
        Some(q) => writeln!(link, "queue = {q}").unwrap(),
        None => writeln!(link, "queue = {{ kind = \"droptail\", packets = {queue} }}").unwrap(),
    }
    match r.gen_range(0..4) {
        0 => {}
        1 | 2 => writeln!(link, "loss = {{ kind = \"bernoulli\", p = {:.4} }}", r.gen_range(0.0..0.10)).unwrap(),
        _ => writeln!(
            link,
            "loss = {{ kind = \"gilbert_elliott\", p_good_bad = {:.4}, p_bad_good = {:.3}, loss_bad = {:.2} }}",
            r.gen_range(0.001..0.05),
            r.gen_range(0.1..0.6),
            r.gen_range(0.3..1.0)
        )
        .unwrap(),
    }
    if r.gen_bool(0.4) {
        let reorder = r.gen_bool(0.6);
        writeln!(
            link,
            "jitter = {{ max = \"{}ms\", reorder = {reorder} }}",
            r.gen_range(1..=20)
        )
        .unwrap();
    }
    if r.gen_bool(0.3) {
        writeln!(link, "duplicate = {:.4}", r.gen_range(0.0..0.05)).unwrap();
    }
    if r.gen_bool(0.3) {
        writeln!(link, "corrupt = {:.4}", r.gen_range(0.0..0.05)).unwrap();
    }
    if r.gen_bool(0.2) {
        // An outage long enough for several (backed-off) RTOs.
        writeln!(
            link,
            "outages = [{{ start = \"{}ms\", duration = \"{}ms\" }}]",
            r.gen_range(0..3000),
            r.gen_range(500..4000)
        )
        .unwrap();
    }
    let mut reverse = String::new();
    if r.gen_bool(0.4) {
        reverse.push_str("[reverse]\n");
        writeln!(
            reverse,
            "loss = {{ kind = \"bernoulli\", p = {:.4} }}",
            r.gen_range(0.0..0.08)
        )
        .unwrap();
        if r.gen_bool(0.3) {
            writeln!(
                reverse,
                "jitter = {{ max = \"{}ms\", reorder = true }}",
                r.gen_range(1..=10)
            )
            .unwrap();
        }
        if r.gen_bool(0.2) {
            writeln!(reverse, "duplicate = {:.4}", r.gen_range(0.0..0.05)).unwrap();
        }
    }
    let app = match r.gen_range(0..4) {
        0 | 1 => format!(
            "{{ kind = \"bulk\", bytes = {} }}",
            r.gen_range(1..2_000_000)
        ),
        2 => format!(
            "{{ kind = \"records\", size = {}, interval = \"{}ms\", count = {} }}",
            r.gen_range(24..3000),
            r.gen_range(1..50),
            r.gen_range(1..60)
        ),
        _ => format!(
            "{{ kind = \"request_response\", request = {}, response = {}, count = {} }}",
            r.gen_range(1..2000),
            r.gen_range(1..60_000),
            r.gen_range(1..8)
        ),
    };
    let mut cc = if r.gen_bool(0.5) { "cubic" } else { "reno" };
    let mut tcp = String::new();
    if let Some(o) = over {
        cc = o.cc;
        tcp.push_str(o.tcp);
    }
    for knob in [
        "sack",
        "timestamps",
        "window_scaling",
        "nagle",
        "delayed_ack",
        "rack",
        "tlp",
    ] {
        if r.gen_bool(0.2) {
            writeln!(tcp, "{knob} = false").unwrap();
        }
    }
    if r.gen_bool(0.2) {
        writeln!(tcp, "recv_buffer = {}", r.gen_range(4_000..200_000)).unwrap();
    }
    format!(
        r#"name = "fault-{seed}"
duration = "900s"
[bottleneck]
{link}
{reverse}
[[flow]]
rtt = "{rtt_ms}ms"
cc = "{cc}"
app = {app}
[flow.tcp]
time_wait = "1s"
user_timeout = "30s"
{tcp}"#
    )
}

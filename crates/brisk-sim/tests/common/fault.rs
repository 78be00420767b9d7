//! The fault campaign's scenario generator, shared by `fault_campaign`, `fault_copa`
//! and the behaviour snapshots (`snapshots`), and the campaign's one runner with its
//! checks ([`campaign_over`]).

use brisk_sim::{run, Scenario};
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

/// How a seed's connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    Completed,
    Failed,
}

/// Runs one seed of `scenario_over(seed, over)` (`None`: the generated scenario) and
/// checks it: the flow ran `over`'s controller (its label's base, before any
/// "+layer"), the delivered stream equals the sent one, and the connection either
/// completed and closed cleanly on both sides or ended with a clear error. Returns
/// how it ended, or a description of what went wrong.
pub fn check_over(seed: u64, over: Option<&Over>) -> Result<Outcome, String> {
    let text = scenario_over(seed, over);
    let sc = Scenario::from_toml_str(&text).map_err(|e| format!("scenario: {e}\n{text}"))?;
    let res = run(&sc, seed).map_err(|e| format!("run: {e}\n{text}"))?;
    let f = &res.flows[0];
    let fail = |what: &str| Err(format!("seed {seed}: {what}\n{}\n{text}", res.table()));
    if let Some(o) = over {
        if f.cc.split('+').next() != Some(o.cc) {
            return fail(&format!("ran {} instead of {}", f.cc, o.cc));
        }
    }
    if !f.stream_ok {
        return fail("delivered stream differs from the sent one");
    }
    match &f.error {
        // A clear error (e.g. retries exhausted during a long outage) is an acceptable end.
        Some(e) if !e.is_empty() => Ok(Outcome::Failed),
        Some(_) => fail("empty error message"),
        None => {
            if f.fct.is_none() {
                return fail("transfer neither completed nor failed with an error");
            }
            if f.closed != [true, true] {
                return fail("connection did not close cleanly on both sides");
            }
            Ok(Outcome::Completed)
        }
    }
}

/// Seeds `0..seeds` through [`check_over`]: no panic and no failed check (it stops
/// after five failures), and connection errors in at most one seed of twenty.
pub fn campaign_over(seeds: u64, over: Option<&Over>) {
    let name = over.map_or("the generated controllers", |o| o.cc);
    let mut failures = Vec::new();
    let mut conn_errors = Vec::new();
    for seed in 0..seeds {
        match std::panic::catch_unwind(|| check_over(seed, over)) {
            Ok(Ok(Outcome::Completed)) => {}
            Ok(Ok(Outcome::Failed)) => conn_errors.push(seed),
            Ok(Err(e)) => failures.push(e),
            Err(_) => failures.push(format!("seed {seed}: PANIC\n{}", scenario_over(seed, over))),
        }
        if failures.len() >= 5 {
            break;
        }
    }
    eprintln!(
        "fault campaign over {name}: {seeds} seeds, {} ended with a connection error (user timeout or retries): {:?}",
        conn_errors.len(),
        conn_errors
    );
    assert!(
        failures.is_empty(),
        "{name}: {} failing seeds; first:\n{}",
        failures.len(),
        failures.join("\n---\n")
    );
    // Errors are acceptable endings (e.g. a user timeout while a packet-clocked
    // Gilbert-Elliott channel sits in its bad state through RTO backoff), but they must
    // stay rare: a regression that breaks recovery would show up here first.
    assert!(
        conn_errors.len() as u64 * 20 <= seeds.max(20),
        "{name}: {} of {seeds} seeds ended in a connection error",
        conn_errors.len()
    );
}

//! Building scenarios for the experiments. Scenarios are written as TOML text and
//! parsed by `brisk_sim::Scenario`, so every experiment runs exactly what a user could
//! put in a file (and the validation applies to them too).

use brisk_sim::Scenario;
use std::fmt::Write;

/// The shared bottleneck.
#[derive(Clone, Debug)]
pub struct Link {
    /// Rate in bit/s.
    pub rate_bps: u64,
    pub queue_packets: u64,
    /// Bernoulli loss probability on the forward (data) direction.
    pub loss: f64,
}

/// One flow.
#[derive(Clone, Debug)]
pub struct Flow {
    pub rtt_ms: u64,
    pub start_ms: u64,
    /// Inline TOML table for `app`.
    pub app: String,
    /// `key = value` lines for `[flow.tcp]`.
    pub tcp: Vec<String>,
}

impl Flow {
    pub fn bulk(rtt_ms: u64) -> Self {
        Flow {
            rtt_ms,
            start_ms: 0,
            app: r#"{ kind = "bulk" }"#.into(),
            tcp: Vec::new(),
        }
    }
    pub fn bulk_bytes(rtt_ms: u64, bytes: u64) -> Self {
        Flow {
            app: format!(r#"{{ kind = "bulk", bytes = {bytes} }}"#),
            ..Flow::bulk(rtt_ms)
        }
    }
    pub fn records(rtt_ms: u64, size: u64, interval_ms: u64) -> Self {
        Flow {
            app: format!(r#"{{ kind = "records", size = {size}, interval = "{interval_ms}ms" }}"#),
            ..Flow::bulk(rtt_ms)
        }
    }
    pub fn start(mut self, ms: u64) -> Self {
        self.start_ms = ms;
        self
    }
    pub fn knob(mut self, line: impl Into<String>) -> Self {
        self.tcp.push(line.into());
        self
    }
    /// Delay correlation on, with an optional window and threshold.
    pub fn dc(self, window: Option<usize>, threshold: Option<f64>) -> Self {
        let mut f = self.knob("delay_correlation = true");
        if let Some(w) = window {
            f = f.knob(format!("dc_window = {w}"));
        }
        if let Some(t) = threshold {
            f = f.knob(format!("dc_threshold = {t}"));
        }
        f
    }
    /// Send and receive buffers large enough that CUBIC is never buffer-limited
    /// (the thesis' "rcvbuf ≥ 4 MB" resolution, scaled to the largest sweep BDP).
    pub fn big_buffers(self) -> Self {
        self.knob(r#"send_buffer = "32MiB""#)
            .knob(r#"recv_buffer = "32MiB""#)
    }
}

/// The scenario text.
pub fn toml(name: &str, duration_ms: u64, sample_ms: u64, link: &Link, flows: &[Flow]) -> String {
    toml_jittered(name, duration_ms, sample_ms, link, 0, flows)
}

/// [`toml`] with `jitter_us` of uniform extra delay per packet on the bottleneck
/// (order kept), so that RTTs are not exactly equal on an idle path.
pub fn toml_jittered(
    name: &str,
    duration_ms: u64,
    sample_ms: u64,
    link: &Link,
    jitter_us: u64,
    flows: &[Flow],
) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "name = \"{name}\"\nduration = \"{duration_ms}ms\"");
    let _ = writeln!(s, "sample_interval = \"{sample_ms}ms\"");
    let _ = writeln!(s, "[bottleneck]\nrate = \"{}kbit\"", link.rate_bps / 1000);
    let _ = writeln!(
        s,
        "queue = {{ kind = \"droptail\", packets = {} }}",
        link.queue_packets
    );
    if link.loss > 0.0 {
        let _ = writeln!(s, "loss = {{ kind = \"bernoulli\", p = {} }}", link.loss);
    }
    if jitter_us > 0 {
        let _ = writeln!(s, "jitter = {{ max = \"{jitter_us}us\", reorder = false }}");
    }
    for f in flows {
        let _ = writeln!(
            s,
            "[[flow]]\nrtt = \"{}ms\"\ncc = \"cubic\"\nstart = \"{}ms\"\napp = {}",
            f.rtt_ms, f.start_ms, f.app
        );
        if !f.tcp.is_empty() {
            let _ = writeln!(s, "[flow.tcp]");
            for l in &f.tcp {
                let _ = writeln!(s, "{l}");
            }
        }
    }
    s
}

/// Builds and validates a scenario.
pub fn build(
    name: &str,
    duration_ms: u64,
    sample_ms: u64,
    link: &Link,
    flows: &[Flow],
) -> Result<Scenario, String> {
    let text = toml(name, duration_ms, sample_ms, link, flows);
    Scenario::from_toml_str_named(&text, name).map_err(|e| e.to_string())
}

/// [`build`] with bottleneck jitter (see [`toml_jittered`]).
pub fn build_jittered(
    name: &str,
    duration_ms: u64,
    sample_ms: u64,
    link: &Link,
    jitter_us: u64,
    flows: &[Flow],
) -> Result<Scenario, String> {
    let text = toml_jittered(name, duration_ms, sample_ms, link, jitter_us, flows);
    Scenario::from_toml_str_named(&text, name).map_err(|e| e.to_string())
}

/// One full-size packet's serialisation time at `rate_bps`, ms (1500-byte IP packet).
pub fn packet_ms(rate_bps: u64) -> f64 {
    1500.0 * 8.0 * 1000.0 / rate_bps as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_scenarios_parse_with_every_knob() {
        let link = Link {
            rate_bps: 10_000_000,
            queue_packets: 1000,
            loss: 0.01,
        };
        let flows = [
            Flow::bulk(10).dc(Some(64), Some(0.8)).big_buffers(),
            Flow::records(100, 1448, 20)
                .start(500)
                .knob("nagle = false"),
        ];
        let sc = build("t", 1000, 10, &link, &flows).unwrap();
        assert_eq!(sc.flows.len(), 2);
        assert_eq!(sc.flows[0].tcp.dc_window, Some(64));
        let cfg = sc.flows[0].tcp.to_config(sc.flows[0].cc);
        assert_eq!(cfg.cc_name(), "cubic+dc");
    }

    #[test]
    fn jittered_scenarios_carry_the_jitter_and_passive_knob() {
        let link = Link {
            rate_bps: 10_000_000,
            queue_packets: 1000,
            loss: 0.0,
        };
        let flows = [Flow::bulk(10).dc(None, None).knob("dc_passive = true")];
        let sc = build_jittered("t", 1000, 10, &link, 1000, &flows).unwrap();
        assert!(sc.bottleneck.jitter.is_some());
        assert!(build("t", 1000, 10, &link, &flows)
            .unwrap()
            .bottleneck
            .jitter
            .is_none());
        let dc = sc.flows[0].tcp.delay_correlation_config().unwrap();
        assert!(dc.passive);
    }
}

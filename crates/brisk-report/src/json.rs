//! JSON building blocks: summaries in milliseconds, finite numbers only.

use brisk_net::metrics::Summary;
use serde_json::{json, Value};

pub(crate) fn ms(ns: u64) -> f64 {
    ns as f64 / 1e6
}

pub(crate) fn ms_f(ns: f64) -> f64 {
    ns / 1e6
}

/// Finite floats only: JSON has no NaN or infinity.
pub fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// An RTT-like summary in milliseconds (`rtt_ms`, also the real runs' `srtt_ms`).
pub fn rtt_json(s: &Option<Summary>) -> Value {
    match s {
        Some(s) => json!({
            "min": num(ms(s.min)), "mean": num(ms_f(s.mean)), "p50": num(ms(s.p50)),
            "p95": num(ms(s.p95)), "p99": num(ms(s.p99)), "max": num(ms(s.max)),
            "samples": s.count, "exact": s.exact,
        }),
        None => Value::Null,
    }
}

/// The bottleneck's queueing-delay summary in milliseconds.
pub fn queue_delay_json(s: &Option<Summary>) -> Value {
    match s {
        Some(s) => json!({"mean": num(ms_f(s.mean)), "p50": num(ms(s.p50)),
            "p99": num(ms(s.p99)), "max": num(ms(s.max))}),
        None => Value::Null,
    }
}

/// A latency summary in milliseconds (`record_latency_ms`).
pub fn latency_json(s: &Option<Summary>) -> Value {
    match s {
        Some(s) => json!({
            "mean": num(ms_f(s.mean)), "p50": num(ms(s.p50)), "p95": num(ms(s.p95)),
            "p99": num(ms(s.p99)), "max": num(ms(s.max)), "count": s.count, "exact": s.exact,
        }),
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_finite_numbers_are_null() {
        assert_eq!(num(f64::NAN), Value::Null);
        assert_eq!(num(f64::INFINITY), Value::Null);
        assert_eq!(num(1.5), json!(1.5));
    }

    #[test]
    fn summaries_are_in_milliseconds() {
        let s = Summary::of(&[1_000_000, 3_000_000]);
        let j = rtt_json(&s);
        assert_eq!(j["min"], json!(1.0));
        assert_eq!(j["mean"], json!(2.0));
        assert_eq!(j["samples"], json!(2));
        assert_eq!(latency_json(&s)["count"], json!(2));
        assert_eq!(queue_delay_json(&s)["max"], json!(3.0));
        assert_eq!(rtt_json(&None), Value::Null);
    }
}

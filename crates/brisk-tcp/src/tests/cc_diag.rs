//! Controller diagnostics through the connection: `TraceEvent::CcState` and
//! `TcpInfo::cc_diag` (claim DC-3 measures r from them).

use super::harness::*;
use super::transfer::{pattern, transfer};
use crate::cc::delay_corr::DelayCorrConfig;
use crate::cc::CcDiagnostics;
use crate::config::Config;
use crate::event::TraceEvent;
use brisk_time::{Duration, Instant};
use std::cell::Cell;
use std::rc::Rc;

/// A pair whose client→server data crosses a FIFO bottleneck of `tx` per data
/// segment with an unbounded queue: RTT grows with the data in flight (bufferbloat).
fn bloated_pair(client: Config, tx: Duration) -> Pair {
    let mut p = Pair::with_configs(Duration::from_millis(5), client, Config::default());
    let busy_until = Rc::new(Cell::new(Instant::ZERO));
    p.set_hook(move |s| {
        if !s.to_server || s.len == 0 {
            return Action::Deliver;
        }
        let depart = busy_until.get().max(s.at) + tx;
        busy_until.set(depart);
        Action::Delay(depart - s.at)
    });
    p
}

fn dc_config() -> Config {
    let mut c = Config::default();
    c.congestion.controller = crate::cc::CcSpec::default().with_layer(
        crate::cc::LayerSpec::DelayCorrelation(DelayCorrConfig::default()),
    );
    c
}

fn cc_states(trace: &[TraceEvent]) -> Vec<(Instant, CcDiagnostics)> {
    trace
        .iter()
        .filter_map(|e| match e {
            TraceEvent::CcState { at, diag } => Some((*at, diag.clone())),
            _ => None,
        })
        .collect()
}

#[test]
fn delay_correlation_traces_every_consult_and_detects_bloat() {
    // 1 ms per segment (≈11.6 Mbit/s) behind 10 ms of propagation: BDP ≈ 10 segments.
    let mut p = bloated_pair(dc_config(), Duration::from_millis(1));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let data = pattern(3 << 20, 3);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(20));
    assert_eq!(got.len(), data.len());
    let mut trace = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut trace);
    let states = cc_states(&trace);
    let info = p.client.conn(c).unwrap().info();
    let Some(CcDiagnostics::DelayCorrelation(last)) = info.cc_diag else {
        panic!(
            "no delay-correlation diagnostics in TcpInfo: {:?}",
            info.cc_diag
        );
    };
    assert!(last.consults > 100, "{last:?}");
    assert!(
        last.clamps > 0,
        "the bloated path was never clamped: {last:?}"
    );
    // Every consult appears exactly once as a new consult count, in order, in time order.
    let mut seen = 0;
    let mut prev_at = Instant::ZERO;
    for (at, diag) in &states {
        let CcDiagnostics::DelayCorrelation(d) = diag else {
            panic!("not delay correlation: {diag:?}");
        };
        assert!(*at >= prev_at);
        prev_at = *at;
        assert!(
            d.consults == seen || d.consults == seen + 1,
            "skipped a consult"
        );
        seen = d.consults;
        assert_eq!(d.r.is_some(), d.consults > 0);
    }
    assert_eq!(states.last().map(|s| s.1.clone()), info.cc_diag);
    // While clamping, the statistic met the threshold and an estimate exists.
    let clamped: Vec<_> = states
        .iter()
        .filter_map(|(_, diag)| match diag {
            CcDiagnostics::DelayCorrelation(d) => Some(*d),
            _ => None,
        })
        .filter(|d| d.clamping)
        .collect();
    assert!(!clamped.is_empty());
    assert!(clamped
        .iter()
        .all(|d| d.r.is_some_and(|r| r >= 0.9) && d.estimate.is_some()));
}

#[test]
fn plain_cubic_reports_no_diagnostics() {
    let mut p = bloated_pair(Config::default(), Duration::from_millis(1));
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(true);
    let data = pattern(256 << 10, 4);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(10));
    assert_eq!(got.len(), data.len());
    let mut trace = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut trace);
    assert!(cc_states(&trace).is_empty());
    assert_eq!(p.client.conn(c).unwrap().info().cc_diag, None);
}

#[test]
fn diagnostics_are_not_traced_while_tracing_is_off() {
    let mut p = bloated_pair(dc_config(), Duration::from_millis(1));
    let (c, s) = p.establish();
    let data = pattern(1 << 20, 5);
    let got = transfer(&mut p, c, s, &data, Duration::from_secs(10));
    assert_eq!(got.len(), data.len());
    p.client.conn_mut(c).unwrap().set_trace(true);
    let mut trace = Vec::new();
    p.client.conn_mut(c).unwrap().drain_trace(&mut trace);
    assert!(trace.is_empty());
    // ...while TcpInfo still reports them.
    assert!(matches!(
        p.client.conn(c).unwrap().info().cc_diag,
        Some(CcDiagnostics::DelayCorrelation(d)) if d.consults > 0
    ));
}

#[test]
fn trace_events_stay_small() {
    // The trace buffer holds up to TRACE_LIMIT events per connection (only while
    // tracing is on). BBR v3's diagnostics (80 B) are boxed and Copa's counters
    // kept in 48 B to hold this.
    eprintln!(
        "TraceEvent {} B, CcDiagnostics {} B",
        std::mem::size_of::<TraceEvent>(),
        std::mem::size_of::<CcDiagnostics>()
    );
    assert!(std::mem::size_of::<TraceEvent>() <= 64);
    assert!(std::mem::size_of::<CcDiagnostics>() <= 56);
}

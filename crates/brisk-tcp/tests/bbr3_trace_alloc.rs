//! Tracing a BBR v3 sender allocates only for diagnostics that changed (issue 35 B):
//! its `CcDiagnostics` is boxed (80 B, so `TraceEvent` stays within 64 B), and the
//! connection used to build one per ACK to compare with the last traced value. Now the
//! controller compares in place (`CongestionControl::diagnostics_changed`).
//!
//! A counting allocator (this test binary's own, per thread) counts the allocations
//! of one deterministic BBR v3 transfer over a 10 Mbit/s bottleneck twice, tracing on
//! and off; everything else is the same run, so the difference is what tracing costs.
//! It must be at most one allocation per traced change (plus the trace buffer's
//! growth), and changes must be far fewer than ACKs.

use brisk_tcp::cc::{CcAlgorithm, CcSpec};
use brisk_tcp::testkit::{Action, Pair};
use brisk_tcp::{Config, TraceEvent};
use brisk_time::{Duration, Instant};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::rc::Rc;

struct Counting;

thread_local! {
    /// Allocations made by this thread (the harness allocates on its own threads).
    static ALLOCS: Cell<u64> = const { Cell::new(0) };
}

fn allocs() -> u64 {
    ALLOCS.with(Cell::get)
}

fn count() {
    // `try_with`: a thread being torn down has no slot left.
    let _ = ALLOCS.try_with(|c| c.set(c.get() + 1));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        count();
        // SAFETY: as `alloc`/`dealloc`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

/// What one run counted between 2 s and 10 s.
#[derive(Debug)]
struct Window {
    allocs: u64,
    acks: u64,
    changes: u64,
}

/// A BBR v3 bulk transfer through a 10 Mbit/s bottleneck (1.2 ms per data segment,
/// 100 ms of queue, then drops) and 20 ms of base RTT.
fn run(cc: CcAlgorithm, trace: bool) -> Window {
    let mut client = Config::default();
    client.congestion.controller = CcSpec::from(cc);
    let mut p = Pair::with_configs(Duration::from_millis(10), client, Config::default());
    let busy_until = Rc::new(Cell::new(Instant::ZERO));
    p.set_hook(move |s| {
        if !s.to_server || s.len == 0 {
            return Action::Deliver;
        }
        let depart = busy_until.get().max(s.at) + Duration::from_micros(1200);
        if depart - s.at > Duration::from_millis(100) {
            return Action::Drop;
        }
        busy_until.set(depart);
        Action::Delay(depart - s.at)
    });
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().set_trace(trace);
    let chunk = vec![7u8; 1 << 16];
    let mut sink = vec![0u8; 1 << 16];
    let mut trace_buf: Vec<TraceEvent> = Vec::with_capacity(1024);
    let (mut start, mut changes) = (None, 0u64);
    let acks_now = |p: &Pair| p.client.conn(c).unwrap().info().segs_in;
    let mut acks_at_start = 0;
    for step in 0..2000u32 {
        if step == 400 {
            start = Some(allocs());
            acks_at_start = acks_now(&p);
            changes = 0;
        }
        let conn = p.client.conn_mut(c).unwrap();
        while conn.write(&chunk) > 0 {}
        conn.drain_trace(&mut trace_buf);
        changes += trace_buf
            .iter()
            .filter(|e| matches!(e, TraceEvent::CcState { .. }))
            .count() as u64;
        trace_buf.clear();
        let server = p.server.conn_mut(s).unwrap();
        while server.read(&mut sink) > 0 {}
        // The kit logs every packet and event: bounded here, the same in both runs.
        p.log.clear();
        p.client_events.clear();
        p.server_events.clear();
        p.advance(Duration::from_millis(5));
    }
    Window {
        allocs: allocs() - start.unwrap(),
        acks: acks_now(&p) - acks_at_start,
        changes,
    }
}

#[test]
fn tracing_bbr3_allocates_only_for_changed_diagnostics() {
    let off = run(CcAlgorithm::Bbr3, false);
    let on = run(CcAlgorithm::Bbr3, true);
    let extra = on.allocs.saturating_sub(off.allocs);
    eprintln!(
        "bbr3: tracing off {off:?}; on {on:?}; tracing cost {extra} allocations for {} ACKs, {} changes",
        on.acks, on.changes
    );
    assert_eq!(on.acks, off.acks, "the two runs must be the same run");
    assert!(on.acks > 2000, "{on:?}");
    // One box per traced change, and a little for the trace buffer's growth; before
    // issue 35 it was one per ACK more, and a second per change (the clone kept).
    assert!(
        extra <= on.changes + 16,
        "tracing cost {extra} allocations for {} changes",
        on.changes
    );
    assert!(on.changes * 4 < on.acks, "{on:?}");
}

#[test]
fn tracing_an_unboxed_controller_allocates_nothing_per_ack() {
    // BBR v1's diagnostics are inline: tracing costs no allocation beyond the trace
    // buffer's growth, however often they change.
    let off = run(CcAlgorithm::Bbr, false);
    let on = run(CcAlgorithm::Bbr, true);
    let extra = on.allocs.saturating_sub(off.allocs);
    eprintln!("bbr: tracing off {off:?}; on {on:?}; tracing cost {extra} allocations");
    assert_eq!(on.acks, off.acks);
    assert!(on.changes > 0 && extra <= 16, "{extra} for {on:?}");
}

//! The FSE adds no allocation per ACK (issue 33): a counting allocator (this test
//! binary's own) counts the allocations of many `cong_avoid` and `ssthresh` hooks of
//! FSE-coupled flows after their registration, and finds none. The hooks reach the
//! group through the lent host state by index (`cc/host.rs`); nothing is locked,
//! which the types show (no `Mutex`, `RefCell` or `Rc` on the path).

use brisk_tcp::cc::fse::tcp::{FseConfig, FseLayer};
use brisk_tcp::cc::host::{FlowCtx, HostCc};
use brisk_tcp::cc::{AckSample, CcState, CongestionCause, CongestionControl};
use brisk_time::{Duration, Instant};
use std::alloc::{GlobalAlloc, Layout, System};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};

struct Counting;

static ALLOCS: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: forwarded to the system allocator with the caller's layout.
        unsafe { System.alloc(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        // SAFETY: `p` came from `alloc` above with this layout.
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: as `alloc`/`dealloc`.
        unsafe { System.realloc(p, l, new) }
    }
}

#[global_allocator]
static A: Counting = Counting;

#[test]
fn fse_hooks_allocate_nothing_per_ack() {
    let mut host = HostCc::new();
    let remote = SocketAddr::from(([198, 18, 0, 2], 80));
    let cfg = FseConfig {
        group: Some("bulk".into()),
        ..FseConfig::default()
    };
    let mut flows = Vec::new();
    for i in 0..8u16 {
        let local = SocketAddr::from(([198, 18, 0, 1], 1000 + i));
        let (id, _) = host.join(local, remote, Some(cfg.group_key(remote)));
        let mut vars = CcState::new(10, 1448);
        vars.srtt = Duration::from_millis(100);
        vars.cwnd_limited = true;
        let mut layer = FseLayer::new(brisk_tcp::cc::CcAlgorithm::Reno.build(), cfg.clone());
        CongestionControl::init(
            &mut layer,
            &mut FlowCtx::new(&mut vars, Some(id), Some(&mut host)),
            Instant::ZERO,
        );
        flows.push((id, layer, vars));
    }
    let before = ALLOCS.load(Ordering::Relaxed);
    let mut now = Instant::ZERO;
    for k in 0..200_000u32 {
        let i = (k % 8) as usize;
        let (id, layer, vars) = &mut flows[i];
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut host));
        let ack = AckSample {
            now,
            acked_segs: 1,
            ..Default::default()
        };
        CongestionControl::cong_avoid(layer, &mut cx, &ack);
        if k % 5_000 == 4_999 {
            let ss = CongestionControl::ssthresh(layer, &mut cx, now, CongestionCause::Loss);
            vars.ssthresh = ss;
            vars.cwnd = ss;
        }
        now += Duration::from_micros(100);
    }
    let allocs = ALLOCS.load(Ordering::Relaxed) - before;
    assert_eq!(allocs, 0, "allocations in 200000 FSE hooks");
    let g = host.group_of(flows[0].0).unwrap();
    assert_eq!(host.group_fse(g).unwrap().fse().len(), 8);
    assert!(host.group_fse(g).unwrap().decreases() > 0);
}

//! The FSE adds no allocation per ACK (issue 33): a counting allocator (this test
//! binary's own, counting per thread) counts the allocations of many `cong_avoid` and `ssthresh` hooks of
//! FSE-coupled flows after their registration, and finds none. The hooks reach the
//! group through the lent host state by index (`cc/host.rs`); nothing is locked,
//! which the types show (no `Mutex`, `RefCell` or `Rc` on the path).

use brisk_tcp::cc::fse::tcp::{FseConfig, FseLayer};
use brisk_tcp::cc::host::{FlowCtx, HostCc};
use brisk_tcp::cc::{AckSample, CcState, CongestionCause, CongestionControl};
use brisk_time::{Duration, Instant};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::net::SocketAddr;

struct Counting;

thread_local! {
    /// Allocations made by this thread: the test harness and the other tests of this
    /// binary allocate on their own threads meanwhile, which a process-wide count
    /// would add in.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn allocs() -> usize {
    ALLOCS.with(Cell::get)
}

fn count() {
    // `try_with`: a thread being torn down has no slot left; its frees do not count.
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

#[test]
fn fse_hooks_allocate_nothing_per_ack() {
    use brisk_tcp::cc::CcAlgorithm;
    for alg in [CcAlgorithm::Reno, CcAlgorithm::Cubic, CcAlgorithm::Ledbat] {
        fse_hooks_allocate_nothing(alg);
    }
}

/// Eight flows of controller `alg` in one FSE group: 200 000 ACKs (`on_ack` with an
/// RTT sample, then `cong_avoid`) and a loss every 5 000, after registration.
fn fse_hooks_allocate_nothing(alg: brisk_tcp::cc::CcAlgorithm) {
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
        let mut layer = FseLayer::new(alg.build(), cfg.clone());
        CongestionControl::init(
            &mut layer,
            &mut FlowCtx::new(&mut vars, Some(id), Some(&mut host)),
            Instant::ZERO,
        );
        flows.push((id, layer, vars));
    }
    let before = allocs();
    let mut now = Instant::ZERO;
    for k in 0..200_000u32 {
        let i = (k % 8) as usize;
        let (id, layer, vars) = &mut flows[i];
        // The flows fill their windows (as `cwnd_limited` says): with nothing in
        // flight LEDBAT would cap cwnd at flightsize + ALLOWED_INCREASE (RFC 6817
        // §2.4.2), i.e. at its MIN_CWND, and a halving of that is no decrease.
        let prior_in_flight = vars.cwnd;
        let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut host));
        let ack = AckSample {
            now,
            acked_segs: 1,
            prior_in_flight,
            rtt: Some(Duration::from_millis(100 + u64::from(k % 50))),
            ..Default::default()
        };
        CongestionControl::on_ack(layer, &mut cx, &ack);
        CongestionControl::cong_avoid(layer, &mut cx, &ack);
        if k % 5_000 == 4_999 {
            let ss = CongestionControl::ssthresh(layer, &mut cx, now, CongestionCause::Loss);
            vars.ssthresh = ss;
            vars.cwnd = ss;
        }
        now += Duration::from_micros(100);
    }
    let allocs = allocs() - before;
    assert_eq!(allocs, 0, "allocations in 200000 FSE hooks of {alg:?}");
    let g = host.group_of(flows[0].0).unwrap();
    assert_eq!(host.group_fse(g).unwrap().fse().len(), 8);
    // The loss path ran through the FSE too, for every controller.
    assert!(
        host.group_fse(g).unwrap().decreases() > 0,
        "no decrease reached the FSE for {alg:?}"
    );
}

/// Issue 33 §4: flows whose FSE group is the shared-bottleneck detector's stable
/// group. Once the groups are stable, a sample, an interval's close, a grouping
/// decision, the stability filter and the FSE hooks allocate nothing; only a change
/// of the stable groups moves flows (and may make a group), once per change.
#[test]
fn sbd_driven_fse_allocates_nothing_per_ack_while_groups_are_stable() {
    use brisk_tcp::cc::sbd::{FeedConfig, SbdConfig, SbdHost, SbdHostConfig};
    let mut host = HostCc::new();
    host.enable_sbd(
        SbdHost::new(SbdHostConfig {
            sbd: SbdConfig::improved(),
            feed: FeedConfig {
                skew_correction: false,
                ..FeedConfig::default()
            },
            ..SbdHostConfig::default()
        })
        .unwrap(),
    );
    let cfg = FseConfig {
        sbd: true,
        ..FseConfig::default()
    };
    let mut flows = Vec::new();
    for i in 0..4u8 {
        let local = SocketAddr::from(([198, 18, 0, 1], 1000 + u16::from(i)));
        let remote = SocketAddr::from(([198, 18, 0, 10 + i], 80));
        let (id, _) = host.join(local, remote, cfg.join_key(remote));
        host.group_by_sbd(id);
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
    // Flows 0, 1 behind one standing queue (40/36 ms, dips), 2, 3 behind another
    // (60/55 ms); every 10 ms each flow gets an ACK with its OWD and a hook.
    let drive = |host: &mut HostCc,
                 flows: &mut Vec<(brisk_tcp::cc::host::FlowId, FseLayer, CcState)>,
                 from: u64,
                 to: u64| {
        for k in from..to {
            let qa = if (k / 5) % 2 == 0 { 40 } else { 36 };
            let qb = if (k / 2) % 2 == 0 { 60 } else { 55 };
            for j in 0..35u32 {
                let t_us = k * 350_000 + u64::from(j) * 10_000 + 1;
                let now = Instant::ZERO + Duration::from_micros(t_us);
                let ms = (t_us / 1000) as u32;
                for (i, (id, layer, vars)) in flows.iter_mut().enumerate() {
                    let q = if i < 2 { qa } else { qb };
                    let owd = 10 * (i as u32 + 1) + q - if j % 9 == 0 { 30 } else { 0 };
                    host.sbd_on_ack(*id, now, ms + owd, ms, 1, 0);
                    let mut cx = FlowCtx::new(vars, Some(*id), Some(&mut *host));
                    let ack = AckSample {
                        now,
                        acked_segs: 1,
                        ..Default::default()
                    };
                    CongestionControl::cong_avoid(layer, &mut cx, &ack);
                }
            }
        }
    };
    drive(&mut host, &mut flows, 0, 120);
    let g: Vec<_> = flows.iter().map(|f| host.group_of(f.0)).collect();
    assert!(
        g[0].is_some() && g[0] == g[1] && g[2] == g[3] && g[0] != g[2],
        "{g:?}"
    );
    let changes = host.sbd().unwrap().coupling_changes();
    let before = allocs();
    drive(&mut host, &mut flows, 120, 240);
    let allocs = allocs() - before;
    assert_eq!(
        host.sbd().unwrap().coupling_changes(),
        changes,
        "groups stayed"
    );
    assert_eq!(
        allocs, 0,
        "allocations in 120 intervals (16 800 ACKs) of 4 flows"
    );
    assert_eq!(host.group_fse(g[0].unwrap()).unwrap().fse().len(), 2);
}

/// No lock and no shared ownership on the coupled path: the FSE, SBD and LEDBAT
/// modules and the host's congestion state (`cc/host.rs`) use none of the types that
/// would make one (the groups are reached by index through the host state the
/// endpoint lends to the flow it calls into). A source check: adding such a type to
/// these files fails here and must be argued for.
#[test]
fn the_coupled_state_uses_no_lock_or_shared_ownership() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/cc");
    let mut files = vec![root.join("host.rs")];
    for dir in ["fse", "sbd", "ledbat"] {
        for e in std::fs::read_dir(root.join(dir)).unwrap() {
            let p = e.unwrap().path();
            if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    assert!(files.len() >= 12, "{files:?}");
    let banned = [
        "Mutex",
        "RwLock",
        "RefCell",
        "Rc<",
        "Rc::",
        "Arc<",
        "Arc::",
        "atomic::",
        "Atomic",
        "thread_local",
        "static mut",
    ];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for (n, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for b in banned {
                assert!(
                    !code.contains(b),
                    "{}:{}: `{b}` on the coupled path: {line}",
                    f.display(),
                    n + 1
                );
            }
        }
    }
}

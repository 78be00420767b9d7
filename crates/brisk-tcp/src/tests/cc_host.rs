//! The host's congestion state through real endpoints (`crate::cc::host`): a custom
//! factory's layer publishes each flow's window and reads its group in every hook;
//! the test checks that the endpoint lent the host state on every call path (input,
//! output, timers), that grouped flows share one group, and that flows and groups
//! leave with their connections.

use super::harness::{Action, Pair, CLIENT_IP};
use crate::cc::host::{FlowCtx, GroupState, Grouping};
use crate::cc::spec::{CcContext, CcFactory, StandardCcFactory};
use crate::cc::{AckSample, CcLayer, CcSpec, CongestionCause, CongestionControl, SentInfo};
use crate::endpoint::{Endpoint, EndpointConfig};
use brisk_time::{Duration, Instant};
use std::sync::{Arc, Mutex};

/// What the layer saw, per hook: (hook, host lent, members of its group).
type Log = Arc<Mutex<Vec<(&'static str, bool, usize)>>>;

#[derive(Debug)]
struct Publisher {
    inner: Box<dyn CongestionControl>,
    log: Log,
}

impl Publisher {
    fn note(&self, hook: &'static str, cx: &FlowCtx<'_>) {
        let members = match (cx.host(), cx.group_id()) {
            (Some(h), Some(g)) => h.members(g).len(),
            _ => 0,
        };
        self.log
            .lock()
            .unwrap()
            .push((hook, cx.host().is_some(), members));
    }
}

impl CcLayer for Publisher {
    fn tag(&self) -> &'static str {
        "pub"
    }
    fn inner(&self) -> &dyn CongestionControl {
        self.inner.as_ref()
    }
    fn inner_mut(&mut self) -> &mut dyn CongestionControl {
        self.inner.as_mut()
    }
    fn on_ack(&mut self, cx: &mut FlowCtx<'_>, ack: &AckSample) {
        self.inner.on_ack(cx, ack);
        self.note("on_ack", cx);
    }
    fn cong_avoid(&mut self, cx: &mut FlowCtx<'_>, ack: &AckSample) {
        self.inner.cong_avoid(cx, ack);
        let (cwnd, mss, srtt) = (cx.cwnd, cx.mss, cx.srtt);
        if let Some(s) = cx.stats_mut() {
            s.cwnd = cwnd;
            s.mss = mss;
            s.srtt = srtt;
        }
        // A stand-in for a coupled window: count the increases the group saw.
        if let Some(g) = cx.group_mut() {
            g.window += 1;
        }
        self.note("cong_avoid", cx);
    }
    fn ssthresh(&mut self, cx: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        self.note(
            if cause == CongestionCause::Rto {
                "ssthresh_rto"
            } else {
                "ssthresh"
            },
            cx,
        );
        self.inner.ssthresh(cx, now, cause)
    }
    fn on_sent(&mut self, cx: &mut FlowCtx<'_>, info: &SentInfo) {
        self.inner.on_sent(cx, info);
        self.note("on_sent", cx);
    }
}

#[derive(Debug, Default)]
struct PublishingFactory {
    log: Log,
    /// The path information each build got: (mss, initial cwnd, group given).
    paths: Arc<Mutex<Vec<(u32, u32, bool)>>>,
}

impl CcFactory for PublishingFactory {
    fn build(&self, spec: &CcSpec, ctx: CcContext<'_>) -> Box<dyn CongestionControl> {
        self.paths.lock().unwrap().push((
            ctx.path.mss,
            ctx.path.initial_cwnd,
            ctx.path.group.is_some(),
        ));
        // The factory sees the host: the new flow is already in its table.
        assert!(ctx.host.flow_stats(ctx.path.flow).is_some());
        Box::new(Publisher {
            inner: StandardCcFactory.build(spec, ctx),
            log: self.log.clone(),
        })
    }
}

fn pair(grouping: Grouping) -> (Pair, Arc<PublishingFactory>) {
    let factory = Arc::new(PublishingFactory::default());
    let mut p = Pair::new(Duration::from_millis(10));
    p.client = Endpoint::new(
        CLIENT_IP,
        EndpointConfig {
            isn_secret: [1; 16],
            rng_seed: 1,
            cc_factory: factory.clone(),
            cc_grouping: grouping,
            ..EndpointConfig::seeded([7; 16], 7)
        },
    );
    (p, factory)
}

#[test]
fn every_hook_sees_the_lent_host_and_grouped_flows_share_a_group() {
    let (mut p, factory) = pair(Grouping::RemoteHost);
    let (c1, s1) = p.establish();
    let (c2, s2) = p.establish();
    assert_eq!(p.client.host_cc().flow_count(), 2);
    assert_eq!(p.client.host_cc().group_count(), 1);
    // Lose all data for two seconds, probes included: the RTO fires from
    // `handle_timeout`, so the timer path lends the host too.
    let mut start = None;
    p.set_hook(move |x| {
        if !x.to_server || x.len == 0 {
            return Action::Deliver;
        }
        let t0: Instant = *start.get_or_insert(x.at);
        if x.at >= t0 + Duration::from_millis(50) && x.at < t0 + Duration::from_secs(2) {
            Action::Drop
        } else {
            Action::Deliver
        }
    });
    let data = vec![5u8; 300_000];
    p.client.conn_mut(c1).unwrap().write(&data);
    p.client.conn_mut(c2).unwrap().write(&data);
    let (mut got1, mut got2) = (Vec::new(), Vec::new());
    assert!(p.run_until(Duration::from_secs(60), |p| {
        Pair::read_all(&mut p.server, s1, &mut got1);
        Pair::read_all(&mut p.server, s2, &mut got2);
        got1.len() == data.len() && got2.len() == data.len()
    }));
    let log = factory.log.lock().unwrap().clone();
    for hook in ["on_ack", "cong_avoid", "on_sent", "ssthresh_rto"] {
        assert!(log.iter().any(|e| e.0 == hook), "{hook} never ran");
    }
    assert!(log.iter().all(|e| e.1), "a hook ran without the host");
    assert!(log.iter().all(|e| e.2 == 2), "both flows are in one group");
    let host = p.client.host_cc();
    let flows: Vec<_> = host.flows().map(|(f, s)| (f, *s)).collect();
    assert_eq!(flows.len(), 2);
    let g = host.group_of(flows[0].0).unwrap();
    assert_eq!(host.group_of(flows[1].0), Some(g));
    assert_eq!(host.members(g).len(), 2);
    let increases = log.iter().filter(|e| e.0 == "cong_avoid").count() as u64;
    assert_eq!(host.group(g).map(|s| s.window), Some(increases));
    // What each flow published is its own window.
    for (h, (_, stats)) in [c1, c2].into_iter().zip(&flows) {
        let info = p.client.conn(h).unwrap().info();
        assert_eq!(stats.mss, info.mss);
        assert!(stats.cwnd > 0 && stats.srtt > Duration::ZERO);
    }
    let cfg = crate::Config::default();
    let want = (u32::from(cfg.mss), cfg.congestion.initial_cwnd, true);
    assert_eq!(*factory.paths.lock().unwrap(), vec![want, want]);
    // Flows and their group leave with the connections.
    p.client.conn_mut(c1).unwrap().abort();
    p.client.conn_mut(c2).unwrap().abort();
    p.run_until(Duration::from_secs(5), |p| p.client.connection_count() == 0);
    assert_eq!(p.client.connection_count(), 0);
    assert_eq!(p.client.host_cc().flow_count(), 0);
    assert_eq!(p.client.host_cc().group_count(), 0);
}

#[test]
fn without_grouping_flows_are_alone_but_still_in_the_host() {
    let (mut p, factory) = pair(Grouping::None);
    let (c, s) = p.establish();
    p.client.conn_mut(c).unwrap().write(&[1u8; 50_000]);
    let mut got = Vec::new();
    assert!(p.run_until(Duration::from_secs(10), |p| {
        Pair::read_all(&mut p.server, s, &mut got);
        got.len() == 50_000
    }));
    let log = factory.log.lock().unwrap().clone();
    assert!(!log.is_empty() && log.iter().all(|e| e.1 && e.2 == 0));
    let host = p.client.host_cc();
    assert_eq!((host.flow_count(), host.group_count()), (1, 0));
    let (flow, stats) = host.flows().next().unwrap();
    assert_eq!(host.group_of(flow), None);
    assert!(stats.cwnd > 0);
    assert_eq!(GroupState::default().window, 0);
}

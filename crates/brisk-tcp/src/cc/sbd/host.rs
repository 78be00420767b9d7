//! The detector as a host runs it: one [`Sbd`] over the host's TCP flows, fed from
//! their ACKs (`feed.rs`), closing an interval every T on the ACK clock.
//!
//! Opt-in per host (`Endpoint::enable_sbd`); without it the host holds no detector
//! and the ACK path's hook is one test of a `None`. Bounds (`docs/security.md`):
//! at most [`SbdConfig::max_flows`] flows are tracked (later flows are counted in
//! [`SbdHost::untracked`] and left out), each with N interval records and one
//! [`OwdFeed`] (a fixed 16-entry ring), all allocated when the flow joins; a sample
//! allocates nothing. The map from the host's flow ids is bounded by the endpoint's
//! connection limit (flow ids are reused).
//!
//! Time: the detector owns no clock. Intervals close when an ACK arrives at or after
//! the interval's end (T after the previous end, so the grid does not drift); after a
//! silence longer than T the missed intervals close empty (at most N of them: more
//! would only repeat the same empty record), so the statistics age as they would.
//!
//! The groups it finds are exposed per flow ([`SbdHost::group_of`],
//! [`SbdHost::groups`]); the groups that stayed stable (`stable.rs`, §3.2.2's "grouped
//! together 90 % of the time") are what the host's FSE couples
//! ([`SbdHost::coupled_group_of`], read by `HostCc` after each decision for the flows
//! whose FSE follows the detector: issue 33 §4).

use super::feed::{FeedConfig, OwdFeed};
use super::stable::{Stability, DEFAULT_SHARE, DEFAULT_WINDOW};
use super::{Sbd, SbdConfig, SbdError, SbdFlow};
use crate::cc::host::FlowId;
use brisk_time::Instant;

/// A host's detector settings.
#[derive(Clone, Debug, PartialEq)]
pub struct SbdHostConfig {
    pub sbd: SbdConfig,
    pub feed: FeedConfig,
    /// The stability filter's window, decisions (`stable.rs`): default 20 (7 s).
    pub stable_window: usize,
    /// The share of that window a pair must be grouped together in to be coupled:
    /// default 0.9 (§3.2.2).
    pub stable_share: f64,
}

impl Default for SbdHostConfig {
    fn default() -> Self {
        SbdHostConfig {
            sbd: SbdConfig::default(),
            feed: FeedConfig::default(),
            stable_window: DEFAULT_WINDOW,
            stable_share: DEFAULT_SHARE,
        }
    }
}

impl SbdHostConfig {
    pub fn validate(&self) -> Result<(), SbdError> {
        self.sbd.validate()?;
        if !(1..=1000).contains(&self.stable_window) {
            return Err(SbdError::Param {
                field: "stable_window",
                value: self.stable_window as f64,
                range: "1..=1000 decisions",
            });
        }
        if !(self.stable_share > 0.0 && self.stable_share <= 1.0) {
            return Err(SbdError::Param {
                field: "stable_share",
                value: self.stable_share,
                range: "0 < share <= 1",
            });
        }
        let f = &self.feed;
        for (field, v) in [("own_ts_hz", f.own_ts_hz), ("peer_ts_hz", f.peer_ts_hz)] {
            if !(1..=1_000_000).contains(&v) {
                return Err(SbdError::Param {
                    field,
                    value: f64::from(v),
                    range: "1..=1000000 Hz",
                });
            }
        }
        if !(0.0..=10_000.0).contains(&f.max_ppm) {
            return Err(SbdError::Param {
                field: "max_ppm",
                value: f.max_ppm,
                range: "0..=10000",
            });
        }
        Ok(())
    }
}

#[derive(Clone, Debug)]
struct Tracked {
    sbd: SbdFlow,
    feed: OwdFeed,
}

/// One host's detector and its flows' feeds.
#[derive(Clone, Debug)]
pub struct SbdHost {
    cfg: SbdHostConfig,
    sbd: Sbd,
    /// By the host's flow index: the flow's detector slot and feed.
    flows: Vec<Option<Tracked>>,
    next_close: Option<Instant>,
    /// Which groups stayed stable enough to couple.
    stable: Stability,
    /// Flows not tracked because the detector was full.
    pub untracked: u64,
    /// Samples fed.
    pub samples: u64,
}

impl SbdHost {
    pub fn new(cfg: SbdHostConfig) -> Result<Self, SbdError> {
        cfg.validate()?;
        Ok(SbdHost {
            sbd: Sbd::new(cfg.sbd.clone())?,
            stable: Stability::new(cfg.sbd.max_flows, cfg.stable_window, cfg.stable_share),
            cfg,
            flows: Vec::new(),
            next_close: None,
            untracked: 0,
            samples: 0,
        })
    }

    pub fn config(&self) -> &SbdHostConfig {
        &self.cfg
    }

    /// The detector (statistics per flow, decisions).
    pub fn detector(&self) -> &Sbd {
        &self.sbd
    }

    /// A flow joined the host: tracked if the detector has room.
    pub fn join(&mut self, flow: FlowId) {
        let i = flow.index() as usize;
        if self.flows.len() <= i {
            self.flows.resize_with(i + 1, || None);
        }
        self.leave(flow);
        match self.sbd.register() {
            Ok(s) => {
                self.stable.reset(s.index());
                self.flows[i] = Some(Tracked {
                    sbd: s,
                    feed: OwdFeed::new(),
                })
            }
            Err(_) => self.untracked += 1,
        }
    }

    /// A flow left the host.
    pub fn leave(&mut self, flow: FlowId) {
        if let Some(t) = self
            .flows
            .get_mut(flow.index() as usize)
            .and_then(Option::take)
        {
            self.sbd.remove(t.sbd);
            self.stable.reset(t.sbd.index());
        }
    }

    /// One ACK of `flow` that newly acknowledged `delivered` segments, carrying the
    /// peer's `tsval` and echoing our `tsecr`; `lost_total` is the connection's
    /// cumulative count of segments marked lost.
    pub fn on_ack(
        &mut self,
        flow: FlowId,
        now: Instant,
        tsval: u32,
        tsecr: u32,
        delivered: u32,
        lost_total: u64,
    ) {
        self.close_due(now);
        let Some(t) = self
            .flows
            .get_mut(flow.index() as usize)
            .and_then(Option::as_mut)
        else {
            return;
        };
        let lost = lost_total.saturating_sub(t.feed.lost_seen);
        t.feed.lost_seen = lost_total;
        let sample = t.feed.sample(now, tsval, tsecr, &self.cfg.feed);
        let s = t.sbd;
        let _ = self
            .sbd
            .on_packets(s, delivered, lost.min(u64::from(u32::MAX)) as u32);
        if let Some(owd) = sample {
            self.samples += 1;
            let _ = self.sbd.on_owd(s, owd);
        }
    }

    /// Closes the intervals that ended by `now` (module doc).
    pub fn close_due(&mut self, now: Instant) {
        let t = self.cfg.sbd.t;
        let Some(mut next) = self.next_close else {
            self.next_close = Some(now + t);
            return;
        };
        let mut closed = 0;
        while now >= next {
            if closed < self.cfg.sbd.n {
                self.sbd.close_all();
                if self.sbd.decisions() > 0 {
                    let sbd = &self.sbd;
                    self.stable.record(|i| sbd.group_of(SbdFlow(i as u32)));
                }
                closed += 1;
            }
            next += t;
        }
        self.next_close = Some(next);
    }

    /// The last decision's group of `flow`: `None` when it is not tracked, was not
    /// congested (only congested flows are grouped), or no decision was made yet.
    pub fn group_of(&self, flow: FlowId) -> Option<u32> {
        let t = self.flows.get(flow.index() as usize)?.as_ref()?;
        self.sbd.group_of(t.sbd)
    }

    /// The flow's coupled group: the stable group (`stable.rs`) it has been in with
    /// at least one other flow for `stable_share` of the last `stable_window`
    /// decisions, named by the group's smallest detector slot; `None` otherwise.
    pub fn coupled_group_of(&self, flow: FlowId) -> Option<u32> {
        let t = self.flows.get(flow.index() as usize)?.as_ref()?;
        self.stable.coupled_group(t.sbd.index())
    }

    /// How often the coupled groups changed (a caller that regroups compares it).
    pub fn coupling_changes(&self) -> u64 {
        self.stable.changes()
    }

    /// Every tracked flow with its group in the last decision.
    pub fn groups(&self) -> impl Iterator<Item = (FlowId, Option<u32>)> + '_ {
        self.flows.iter().enumerate().filter_map(|(i, t)| {
            let t = t.as_ref()?;
            Some((FlowId::from_index(i as u32), self.sbd.group_of(t.sbd)))
        })
    }

    /// The flow's detector statistics.
    pub fn stats(&self, flow: FlowId) -> Option<&super::FlowStats> {
        let t = self.flows.get(flow.index() as usize)?.as_ref()?;
        self.sbd.flow(t.sbd)
    }

    /// The flow's skew estimate, ppm.
    pub fn skew_ppm(&self, flow: FlowId) -> Option<f64> {
        Some(
            self.flows
                .get(flow.index() as usize)?
                .as_ref()?
                .feed
                .skew_ppm(),
        )
    }

    /// Grouping decisions so far.
    pub fn decisions(&self) -> u64 {
        self.sbd.decisions()
    }

    /// Table slots held (flow-id map, for bound tests).
    pub fn footprint(&self) -> usize {
        self.flows.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    #[test]
    fn a_flood_of_flows_stays_within_the_bounds() {
        let cfg = SbdHostConfig {
            sbd: SbdConfig {
                max_flows: 16,
                ..SbdConfig::default()
            },
            ..SbdHostConfig::default()
        };
        let mut h = SbdHost::new(cfg).unwrap();
        let mut alive = std::collections::VecDeque::new();
        let mut x = 7u64;
        // 20 000 flows join; 40 alive at a time (more than the 16 tracked), every
        // one acked with random timestamps and losses for a few ms each.
        for i in 0..20_000u32 {
            let id = FlowId::from_index(i % 40);
            if alive.len() == 40 {
                h.leave(alive.pop_front().unwrap());
            }
            h.join(id);
            alive.push_back(id);
            for k in 0..4u64 {
                x = x
                    .wrapping_mul(6364136223846793005)
                    .wrapping_add(1442695040888963407);
                let now = Instant::ZERO + Duration::from_micros(u64::from(i) * 1000 + k * 250);
                h.on_ack(
                    id,
                    now,
                    (x >> 32) as u32,
                    x as u32,
                    (x % 3) as u32,
                    x % 1000,
                );
            }
        }
        assert!(h.untracked > 0, "the table filled");
        assert!(h.footprint() <= 40, "{}", h.footprint());
        assert!(h.decisions() > 50, "{}", h.decisions());
        let tracked = h.groups().count();
        assert!(tracked <= 16, "{tracked}");
        for (f, _) in h.groups() {
            let e = h.stats(f).unwrap().estimates();
            assert!((-1.0..=1.0).contains(&e.skew_est), "{e:?}");
            assert!((0.0..=1.0).contains(&e.freq_est) && (0.0..=1.0).contains(&e.pkt_loss));
        }
    }

    #[test]
    fn intervals_close_on_the_ack_clock_without_drifting() {
        let mut h = SbdHost::new(SbdHostConfig::default()).unwrap();
        let f = FlowId::from_index(0);
        h.join(f);
        let ms = |m: u64| Instant::ZERO + Duration::from_millis(m);
        h.close_due(ms(0));
        // ACKs every 100 ms: intervals end at 350, 700, 1050, ... whatever the phase.
        for m in (100..=3500).step_by(100) {
            h.on_ack(f, ms(m), m as u32, m as u32, 1, 0);
        }
        assert_eq!(h.detector().flow(SbdFlow(0)).unwrap().intervals(), 10);
        // A silence of 100 s closes at most N empty intervals, then the grid resumes.
        h.close_due(ms(103_600));
        assert_eq!(h.detector().flow(SbdFlow(0)).unwrap().intervals(), 60);
        h.close_due(ms(103_950));
        assert_eq!(h.detector().flow(SbdFlow(0)).unwrap().intervals(), 61);
        let bad = SbdHostConfig {
            feed: FeedConfig {
                peer_ts_hz: 0,
                ..FeedConfig::default()
            },
            ..SbdHostConfig::default()
        };
        let e = SbdHost::new(bad).unwrap_err().to_string();
        assert!(e.contains("peer_ts_hz") && e.contains("1..=1000000"), "{e}");
    }
}

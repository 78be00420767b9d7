//! A multipath test model for the coupled controllers: several senders, each on its
//! own link or sharing one, all in one [`HostCc`] so that an MPTCP connection's
//! subflows are one group. It extends the single-path model (`cc/testmodel.rs`) with
//! what coupling needs: a drop-tail queue limit (losses), several flows in one event
//! order, and the host room lent to each hook.
//!
//! A link serves one segment per `tau`; a segment that finds `queue` segments waiting
//! is dropped. A sender is greedy and cwnd-limited, learns of a loss when the ACK
//! after the hole arrives (duplicate ACKs), enters recovery once per window with
//! cwnd = ssthresh at once (PRR's end point), retransmits the hole and leaves recovery
//! when the flight at the signal is ACKed. Seeded per-segment jitter (below τ) breaks
//! the phase locking a deterministic drop-tail queue otherwise shows. A link may also
//! drop at random before its queue (`loss_ppm`), a path whose congestion level is
//! set by the test.

use crate::cc::host::{FlowCtx, FlowId, GroupKey, HostCc};
use crate::cc::testmodel::MSS;
use crate::cc::{AckSample, CcEvent, CcState, CongestionCause, CongestionControl};
use brisk_time::{Duration, Instant};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::VecDeque;
use std::net::SocketAddr;

pub(crate) struct Link {
    pub tau: Duration,
    pub queue: u32,
    /// Random loss before the queue, parts per million (a lossy radio hop).
    pub loss_ppm: u32,
    last_depart: Instant,
    pub drops: u64,
}

impl Link {
    /// A link of `rate` segments per second with room for `queue` waiting segments.
    pub fn new(rate: u64, queue: u32) -> Self {
        Link {
            tau: Duration::from_micros(1_000_000 / rate),
            queue,
            loss_ppm: 0,
            last_depart: Instant::ZERO,
            drops: 0,
        }
    }
}

#[derive(Clone, Copy)]
struct Seg {
    seq: u64,
    sent_at: Instant,
    ack_at: Instant,
    lost: bool,
}

pub(crate) struct Flow {
    pub ctrl: Box<dyn CongestionControl>,
    pub cc: CcState,
    pub id: FlowId,
    pub link: usize,
    /// Propagation round trip (the RTT with empty queues).
    pub base: Duration,
    /// When the flow starts sending (its handshake completes).
    pub start: Instant,
    started: bool,
    flight: VecDeque<Seg>,
    next_seq: u64,
    recovery_until: Option<u64>,
    /// Segments delivered (ACKed) since the last [`Model::reset_counts`].
    pub delivered: u64,
    /// Congestion events (reductions) since then.
    pub losses: u64,
    /// (time, cwnd) after each ACK, when tracing.
    pub trace: Vec<(Instant, u32)>,
}

pub(crate) struct Model {
    pub host: HostCc,
    pub links: Vec<Link>,
    pub flows: Vec<Flow>,
    pub now: Instant,
    pub trace: bool,
    rng: ChaCha8Rng,
}

fn addr(i: usize) -> SocketAddr {
    SocketAddr::from(([198, 18, 0, 1], 1000 + i as u16))
}

impl Model {
    pub fn new(links: Vec<Link>, seed: u64) -> Self {
        Model {
            host: HostCc::new(),
            links,
            flows: Vec::new(),
            now: Instant::ZERO,
            trace: false,
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// A flow on `link` with propagation RTT `base`, in `group` (an MPTCP
    /// connection's number) or alone, starting at `start`. Returns its index.
    pub fn add(
        &mut self,
        ctrl: Box<dyn CongestionControl>,
        link: usize,
        base: Duration,
        group: Option<u64>,
        start: Duration,
    ) -> usize {
        let i = self.flows.len();
        let (id, _) = self
            .host
            .join(addr(i), addr(100), group.map(GroupKey::Assigned));
        let mut cc = CcState::new(10, MSS);
        cc.cwnd_limited = true;
        cc.cwnd_blocked = true;
        self.flows.push(Flow {
            ctrl,
            cc,
            id,
            link,
            base,
            start: Instant::ZERO + start,
            started: false,
            flight: VecDeque::new(),
            next_seq: 0,
            recovery_until: None,
            delivered: 0,
            losses: 0,
            trace: Vec::new(),
        });
        i
    }

    /// The flow's handshake completes: the controller's `init` (with an RTT sample
    /// from the handshake, as a joining subflow has), then its first window.
    pub fn start_flow(&mut self, i: usize) {
        let f = &mut self.flows[i];
        f.started = true;
        f.cc.srtt = f.base;
        f.cc.min_rtt = f.base;
        let now = self.now;
        f.ctrl.init(
            &mut FlowCtx::new(&mut f.cc, Some(f.id), Some(&mut self.host)),
            now,
        );
        self.fill(i);
    }

    fn send(&mut self, i: usize) {
        let now = self.now;
        let jitter = Duration::from_micros(
            self.rng
                .gen_range(0..self.links[self.flows[i].link].tau.as_micros().max(1) as u64),
        );
        let link_loss = self.links[self.flows[i].link].loss_ppm;
        let random_loss = link_loss > 0 && self.rng.gen_range(0..1_000_000) < link_loss;
        let f = &mut self.flows[i];
        let link = &mut self.links[f.link];
        let waiting = if link.last_depart > now {
            let q = (link.last_depart - now).as_micros() / link.tau.as_micros().max(1);
            q as u32
        } else {
            0
        };
        let prev_ack = f.flight.back().map(|s| s.ack_at).unwrap_or(now);
        let (ack_at, lost) = if random_loss || waiting >= link.queue {
            link.drops += 1;
            // Found by the duplicate ACKs that follow: one RTT on, after the previous.
            (prev_ack.max(now + f.base), true)
        } else {
            let depart = link.last_depart.max(now) + link.tau;
            link.last_depart = depart;
            let at = depart + f.base.saturating_sub(link.tau) + jitter;
            (at.max(prev_ack), false)
        };
        f.flight.push_back(Seg {
            seq: f.next_seq,
            sent_at: now,
            ack_at,
            lost,
        });
        f.next_seq += 1;
        f.cc.in_flight = f.flight.len() as u32;
        f.cc.snd_nxt = f.next_seq * u64::from(MSS);
    }

    fn fill(&mut self, i: usize) {
        while (self.flows[i].flight.len() as u32) < self.flows[i].cc.cwnd {
            self.send(i);
        }
    }

    /// Runs until `until`.
    pub fn run_until(&mut self, until: Duration) {
        let until = Instant::ZERO + until;
        loop {
            // The next event: a flow's start or the oldest ACK of a flow.
            let mut next: Option<(Instant, usize, bool)> = None;
            for (i, f) in self.flows.iter().enumerate() {
                let ev = if !f.started {
                    Some((f.start, i, true))
                } else {
                    f.flight.front().map(|s| (s.ack_at, i, false))
                };
                if let Some(e) = ev {
                    if next.is_none_or(|n| e.0 < n.0) {
                        next = Some(e);
                    }
                }
            }
            let Some((at, i, is_start)) = next else { break };
            if at > until {
                break;
            }
            self.now = self.now.max(at);
            if is_start {
                self.start_flow(i);
            } else {
                self.ack(i);
            }
        }
        self.now = until;
    }

    fn ack(&mut self, i: usize) {
        let now = self.now;
        let f = &mut self.flows[i];
        let Some(seg) = f.flight.pop_front() else {
            return;
        };
        f.cc.in_flight = f.flight.len() as u32;
        let mut cx = FlowCtx::new(&mut f.cc, Some(f.id), Some(&mut self.host));
        if seg.lost {
            if f.recovery_until.is_none() {
                let ss = f.ctrl.ssthresh(&mut cx, now, CongestionCause::Loss).max(2);
                cx.ssthresh = ss;
                cx.cwnd = ss;
                cx.cwnd_cnt = 0;
                f.recovery_until = Some(f.next_seq);
                f.losses += 1;
                f.ctrl.on_event(&mut cx, now, CcEvent::EnterRecovery);
            }
            // The retransmission of the hole.
            self.send(i);
            return;
        }
        f.delivered += 1;
        cx.delivered += 1;
        cx.snd_una = (seg.seq + 1) * u64::from(MSS);
        let rtt = now.saturating_duration_since(seg.sent_at);
        cx.srtt = if cx.srtt.is_zero() {
            rtt
        } else {
            (cx.srtt * 7 + rtt) / 8
        };
        let ack = AckSample {
            now,
            acked_segs: 1,
            acked_bytes: u64::from(MSS),
            rtt: Some(rtt),
            newest_acked: None,
            prior_in_flight: cx.in_flight + 1,
            ece: false,
            ..Default::default()
        };
        f.ctrl.on_ack(&mut cx, &ack);
        match f.recovery_until {
            Some(end) if seg.seq + 1 >= end => {
                f.recovery_until = None;
                cx.cwnd = cx.ssthresh.max(1);
                f.ctrl.on_event(&mut cx, now, CcEvent::ExitRecovery);
            }
            Some(_) => {}
            None => f.ctrl.cong_avoid(&mut cx, &ack),
        }
        if self.trace {
            f.trace.push((now, f.cc.cwnd));
        }
        self.fill(i);
    }

    /// Clears the per-flow counters (after a warm-up).
    pub fn reset_counts(&mut self) {
        for f in &mut self.flows {
            f.delivered = 0;
            f.losses = 0;
        }
    }

    /// Segments delivered by the flows `ids` since the last reset.
    pub fn delivered(&self, ids: &[usize]) -> u64 {
        ids.iter().map(|&i| self.flows[i].delivered).sum()
    }
}

//! Coupled congestion control for the subflows of one MPTCP connection: LIA (RFC
//! 6356), OLIA (Khalili et al. 2013) and BALIA (Peng et al. 2016), with LISA's linked
//! slow start (seed 004 B.2) as an option of each. Docs:
//! `docs/mechanisms/coupled-cc.md`.
//!
//! A connection's subflows are one group in the host room (`host.rs`,
//! `GroupKey::Subflows`, joined in `endpoint/join.rs`). Every subflow's controller
//! publishes its window, RTT, loss distances and slow-start state in its
//! [`FlowStats`] on each hook, and reads its siblings' there: a per-ACK computation
//! visits at most [`MAX_COUPLED`] members plus itself, on the stack ([`Members`]),
//! with no allocation. Its own values are read
//! from its variables, not from the published copy, so they are never stale.
//!
//! All three couple only congestion avoidance. Slow start, loss response (except
//! BALIA's), undo and the reduction path are Reno's (`reno.rs`), as in Linux's
//! `mptcp_coupled.c`, `mptcp_olia.c` and `mptcp_balia.c`. With one member taking part
//! (a lone subflow, a flow outside any host, or siblings without an RTT sample yet)
//! each is Reno exactly, as Linux falls back when `cnt_established <= 1`.
//!
//! LISA composes as an **option** of the coupled controller (`lia+lisa`), not as a
//! layer: it acts only in slow start, at a subflow's join and on the donor's ACKs,
//! needs the group room that only coupled controllers publish into, and as part of
//! the controller it costs no extra indirect call and leaves the layer order that
//! scenarios write (dc, cwv, abe) unchanged.

pub mod balia;
pub mod lia;
pub mod lisa;
#[cfg(test)]
pub(crate) mod model;
pub mod mp1;
pub mod olia;
#[cfg(test)]
mod tests;

use super::host::MAX_COUPLED;
use super::reno::{cong_avoid_ai, reno_ssthresh, slow_start};
use super::{AckSample, CcDiagnostics, CcEvent, CongestionCause, CongestionControl, FlowCtx};
use brisk_time::Instant;

/// Which coupled increase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Coupling {
    /// RFC 6356's Linked Increases Algorithm.
    Lia,
    /// Opportunistic LIA (Khalili et al.).
    Olia,
    /// Balanced Linked Adaptation (Peng et al.).
    Balia,
}

impl Coupling {
    pub fn name(self) -> &'static str {
        match self {
            Coupling::Lia => "lia",
            Coupling::Olia => "olia",
            Coupling::Balia => "balia",
        }
    }
}

/// The coupled controllers' one setting.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct CoupledConfig {
    /// LISA's linked slow start (seed 004 B.2 Algorithm 1).
    pub lisa: bool,
}

/// One member of the computation: what a sibling published, or this flow's own
/// variables.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Member {
    pub cwnd: u32,
    /// Smoothed RTT, µs; never zero here (members without a sample are left out).
    pub srtt_us: u64,
    /// OLIA's l1r and l2r, bytes.
    pub inter_loss: u64,
    pub since_loss: u64,
}

/// The members of this flow's computation, on the stack: at most [`MAX_COUPLED`]
/// siblings plus itself.
#[derive(Clone, Copy, Debug)]
pub struct Members {
    buf: [Member; MAX_COUPLED + 1],
    len: usize,
    me: usize,
}

impl Members {
    /// This flow (`own`) and the active members of its group, in join order.
    fn gather(cx: &FlowCtx<'_>, own: Member) -> Members {
        let mut ms = Members {
            buf: [Member::default(); MAX_COUPLED + 1],
            len: 0,
            me: usize::MAX,
        };
        if let (Some(host), Some(g), Some(me)) = (cx.host(), cx.group_id(), cx.flow()) {
            for &f in host.coupled_members(g) {
                if f == me {
                    ms.me = ms.len;
                    ms.push(own);
                } else if let Some(s) = host.flow_stats(f) {
                    if s.coupled.active && !s.srtt.is_zero() {
                        ms.push(Member {
                            cwnd: s.cwnd,
                            srtt_us: s.srtt.as_micros().max(1) as u64,
                            inter_loss: s.coupled.inter_loss,
                            since_loss: s.coupled.since_loss,
                        });
                    }
                }
            }
        }
        if ms.me == usize::MAX {
            ms.me = ms.len;
            ms.push(own);
        }
        ms
    }

    fn push(&mut self, m: Member) {
        if self.len < self.buf.len() {
            self.buf[self.len] = m;
            self.len += 1;
        }
    }

    pub fn as_slice(&self) -> &[Member] {
        &self.buf[..self.len]
    }

    /// This flow's index in [`Members::as_slice`].
    pub fn me(&self) -> usize {
        self.me
    }
}

/// What a coupled controller reports (`TcpInfo::cc_diag`, traces).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct CoupledDiagnostics {
    /// Members in the last coupled computation, this flow included (1: Reno).
    pub members: u8,
    /// LISA: segments of cwnd this flow has given to joining siblings, in total.
    pub lisa_given: u32,
    /// LISA: the initial window this flow took as a joiner (0: it took none).
    pub lisa_credit: u32,
    /// LISA: slow-start ACKs (segments) it still ignores.
    pub lisa_ignoring: u32,
}

/// LIA, OLIA or BALIA on one subflow, optionally with LISA.
#[derive(Debug)]
pub struct Coupled {
    kind: Coupling,
    lisa: bool,
    diag: CoupledDiagnostics,
    olia: olia::LossMarks,
    /// OLIA's fractional growth, 2⁻¹⁶ segments (may go negative).
    olia_cnt: i64,
    ignore: lisa::Ignore,
}

impl Coupled {
    pub fn new(kind: Coupling, cfg: CoupledConfig) -> Self {
        Coupled {
            kind,
            lisa: cfg.lisa,
            diag: CoupledDiagnostics {
                members: 1,
                ..Default::default()
            },
            olia: olia::LossMarks::default(),
            olia_cnt: 0,
            ignore: lisa::Ignore::default(),
        }
    }

    /// Slow-start ACKs this flow still ignores (LISA's donor side).
    pub fn lisa_ignoring(&self) -> u32 {
        self.ignore.left()
    }

    fn own(&self, cx: &FlowCtx<'_>) -> Member {
        Member {
            cwnd: cx.cwnd,
            srtt_us: cx.srtt.as_micros().max(1) as u64,
            inter_loss: self.olia.inter_loss(),
            since_loss: self.olia.since_loss(),
        }
    }

    /// Writes this flow's state into the host room for its siblings.
    fn publish(&self, cx: &mut FlowCtx<'_>) {
        let (cwnd, mss, srtt) = (cx.cwnd, cx.mss, cx.srtt);
        let (ss, in_flight) = (cx.in_slow_start(), cx.in_flight);
        let (l1, l2) = (self.olia.inter_loss(), self.olia.since_loss());
        if let Some(st) = cx.stats_mut() {
            st.cwnd = cwnd;
            st.mss = mss;
            st.srtt = srtt;
            let c = &mut st.coupled;
            c.active = !srtt.is_zero();
            c.slow_start = ss;
            c.in_flight = in_flight;
            c.inter_loss = l1;
            c.since_loss = l2;
        }
    }

    /// LISA at a join (Algorithm 1): pick a donor among the siblings, take the credit,
    /// post the debit and the ACKs to ignore in the donor's mailbox.
    fn lisa_join(&mut self, cx: &mut FlowCtx<'_>) {
        let (Some(me), Some(g)) = (cx.flow(), cx.group_id()) else {
            return;
        };
        let Some(host) = cx.host() else { return };
        let mut ids = [me; MAX_COUPLED];
        let mut cands = [lisa::Candidate {
            cwnd: 0,
            srtt_us: 0,
            slow_start: false,
            in_flight: 0,
        }; MAX_COUPLED];
        let mut n = 0;
        for &f in host.coupled_members(g) {
            if f == me {
                continue;
            }
            let Some(s) = host.flow_stats(f) else {
                continue;
            };
            ids[n] = f;
            cands[n] = lisa::Candidate {
                cwnd: s.cwnd,
                srtt_us: s.srtt.as_micros() as u64,
                slow_start: s.coupled.active && s.coupled.slow_start,
                in_flight: s.coupled.in_flight,
            };
            n += 1;
        }
        if n == 0 {
            return; // the first subflow: its IW is never changed
        }
        let donor = lisa::select_donor(&cands[..n]);
        let credit = lisa::credit(
            donor.map(|i| lisa::Donor {
                cwnd: cands[i].cwnd,
                in_flight: cands[i].in_flight,
            }),
            cx.cwnd,
        );
        cx.cwnd = credit.new_cwnd.min(cx.cwnd_clamp.max(1));
        if donor.is_some() {
            self.diag.lisa_credit = cx.cwnd;
        }
        if let (Some(i), Some(host)) = (donor, cx.host_mut()) {
            if let Some(s) = host.flow_stats_mut(ids[i]) {
                s.coupled.lisa_debit = s.coupled.lisa_debit.saturating_add(credit.take);
                s.coupled.lisa_ignore = s.coupled.lisa_ignore.saturating_add(credit.ignore);
                // What the joiner now sees of the donor, until the donor's next ACK.
                s.cwnd = s.cwnd.saturating_sub(credit.take);
            }
        }
    }

    /// LISA's donor side: collect the mailbox at an ACK.
    fn lisa_collect(&mut self, cx: &mut FlowCtx<'_>) {
        let Some(st) = cx.stats_mut() else { return };
        let debit = std::mem::take(&mut st.coupled.lisa_debit);
        let ignore = std::mem::take(&mut st.coupled.lisa_ignore);
        if debit > 0 {
            cx.cwnd = cx.cwnd.saturating_sub(debit).max(1);
            self.diag.lisa_given = self.diag.lisa_given.saturating_add(debit);
        }
        self.ignore.add(ignore);
    }

    /// Drops LISA's pending debit and the ACKs still to ignore (L5 (b)).
    fn lisa_drop(&mut self, cx: &mut FlowCtx<'_>) {
        self.ignore.clear();
        if let Some(st) = cx.stats_mut() {
            st.coupled.lisa_debit = 0;
            st.coupled.lisa_ignore = 0;
        }
    }
}

impl CongestionControl for Coupled {
    fn name(&self) -> &'static str {
        self.kind.name()
    }

    fn label(&self) -> String {
        if self.lisa {
            format!("{}+lisa", self.kind.name())
        } else {
            self.kind.name().to_string()
        }
    }

    fn init(&mut self, cx: &mut FlowCtx<'_>, _now: Instant) {
        self.olia = olia::LossMarks::new(cx.snd_una);
        self.olia_cnt = 0;
        if self.lisa {
            self.lisa_join(cx);
        }
        self.publish(cx);
    }

    fn on_ack(&mut self, cx: &mut FlowCtx<'_>, _ack: &AckSample) {
        self.olia.ack(cx.snd_una);
        if self.lisa {
            self.lisa_collect(cx);
        }
        self.publish(cx);
    }

    fn cong_avoid(&mut self, cx: &mut FlowCtx<'_>, ack: &AckSample) {
        self.grow(cx, ack);
        self.publish(cx);
    }

    fn ssthresh(&mut self, cx: &mut FlowCtx<'_>, _now: Instant, _cause: CongestionCause) -> u32 {
        if self.kind == Coupling::Balia {
            let ms = Members::gather(cx, self.own(cx));
            if ms.as_slice().len() > 1 {
                return balia::ssthresh(ms.as_slice(), ms.me());
            }
        }
        reno_ssthresh(cx.cwnd)
    }

    fn diagnostics(&self) -> Option<CcDiagnostics> {
        let mut d = self.diag;
        d.lisa_ignoring = self.ignore.left();
        Some(CcDiagnostics::Coupled(d))
    }

    fn on_event(&mut self, cx: &mut FlowCtx<'_>, _now: Instant, ev: CcEvent) {
        if matches!(
            ev,
            CcEvent::EnterRecovery | CcEvent::EnterCwr | CcEvent::Rto
        ) {
            // Linux keeps OLIA's own fractional counter across a loss; so do we.
            self.olia.loss();
            if self.lisa {
                self.lisa_drop(cx);
            }
        }
        self.publish(cx);
    }
}

impl Coupled {
    fn grow(&mut self, cx: &mut FlowCtx<'_>, ack: &AckSample) {
        if !cx.cwnd_limited {
            return;
        }
        let mut acked = ack.acked_segs;
        if cx.in_slow_start() {
            if self.lisa {
                acked = self.ignore.filter(acked);
            }
            acked = slow_start(cx, acked);
            if !cx.in_slow_start() {
                self.ignore.clear(); // L5 (b): slow start is over
            }
            if acked == 0 {
                return;
            }
        }
        let ms = Members::gather(cx, self.own(cx));
        let (members, me) = (ms.as_slice(), ms.me());
        self.diag.members = members.len() as u8;
        if members.len() <= 1 {
            let w = cx.cwnd;
            cong_avoid_ai(cx, w, acked);
            return;
        }
        match self.kind {
            Coupling::Lia => cong_avoid_ai(cx, lia::window(members, me), acked),
            Coupling::Balia => cong_avoid_ai(cx, balia::window(members, me), acked),
            Coupling::Olia => {
                let inc = olia::increment(members, me);
                self.olia_cnt = self
                    .olia_cnt
                    .saturating_add(inc.saturating_mul(i64::from(acked)));
                let one = 1i64 << olia::SCALE;
                let steps = self.olia_cnt / one; // rounds towards zero: keeps the rest
                self.olia_cnt -= steps * one;
                let n = u32::try_from(steps.unsigned_abs()).unwrap_or(u32::MAX);
                cx.cwnd = if steps >= 0 {
                    cx.cwnd.saturating_add(n).min(cx.cwnd_clamp.max(1))
                } else {
                    cx.cwnd.saturating_sub(n).max(1)
                };
            }
        }
    }
}

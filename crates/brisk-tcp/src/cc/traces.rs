//! Per-controller cwnd traces over the shared test model ([`super::testmodel`]),
//! recorded as insta snapshots, as s2n-quic's `recovery/simulation.rs` does: every base
//! controller and layer runs one fixed script of events and the snapshot holds cwnd,
//! ssthresh and the additive-increase credit after each event and each round that
//! changed them.
//!
//! The script: slow start from IW 10; a loss; congestion avoidance; a round of ACKs
//! with ECE and the ECN reduction; an idle second and a half (the connection's RFC 5681
//! restart, unless new-CWV governs idle time); an application-limited stretch; a
//! probe-repaired loss; an RTO and slow start again. The path is the model's FIFO:
//! 40 ms base RTT, one segment per ms at the bottleneck (BDP 40 segments), so delay-
//! based controllers see the queue they build.
//!
//! The driver mirrors the connection's calls (`conn/congestion.rs`) in its simplest
//! form: a reduction takes the controller's ssthresh (never below 2), sets cwnd to it
//! at once (PRR's end point), lasts while the flight at the signal is ACKed, without
//! `cong_avoid`, and ends with `ExitRecovery` (a probe-repaired loss's at once); an
//! RTO's Loss state ends with `ExitLoss` at the first ACK after it (recorded if it
//! moved the window). A lost segment is repaired within that round (its
//! retransmission's ACK stands in for the original's), so the byte counts a layer
//! keeps (new-CWV's rounds) stay consistent.
//!
//! A change to a snapshot here is a change of behaviour: its own commit, with the
//! reason. Review with `cargo insta review`, or accept with `INSTA_UPDATE=always cargo
//! test --release -p brisk-tcp cc::traces`.

use super::abe::{default_beta_ecn, Abe};
use super::cdg::{Cdg, CdgConfig};
use super::cubic::Cubic;
use super::dctcp::{Dctcp, DctcpConfig};
use super::delay_corr::{DelayCorrConfig, DelayCorrelation};
use super::new_cwv::{NewCwv, NewCwvConfig};
use super::reno::Reno;
use super::testmodel::{PathSender, MSS};
use super::{
    AckSample, CcAlgorithm, CcDiagnostics, CcEvent, CcState, CongestionCause, CongestionControl,
    FlowCtx,
};
use crate::sent::SentInfo;
use brisk_time::{Duration, Instant};
use std::fmt::Write;

/// A boxed controller as a [`CongestionControl`], so one model drives every composition.
#[derive(Debug)]
struct Dyn(Box<dyn CongestionControl>);

impl CongestionControl for Dyn {
    fn name(&self) -> &'static str {
        self.0.name()
    }
    fn label(&self) -> String {
        self.0.label()
    }
    fn init(&mut self, cc: &mut FlowCtx<'_>, now: Instant) {
        self.0.init(cc, now)
    }
    fn on_ack(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.0.on_ack(cc, ack)
    }
    fn cong_avoid(&mut self, cc: &mut FlowCtx<'_>, ack: &AckSample) {
        self.0.cong_avoid(cc, ack)
    }
    fn ssthresh(&mut self, cc: &mut FlowCtx<'_>, now: Instant, cause: CongestionCause) -> u32 {
        self.0.ssthresh(cc, now, cause)
    }
    fn on_event(&mut self, cc: &mut FlowCtx<'_>, now: Instant, ev: CcEvent) {
        self.0.on_event(cc, now, ev)
    }
    fn on_sent(&mut self, cc: &mut FlowCtx<'_>, info: &SentInfo) {
        self.0.on_sent(cc, info)
    }
    fn undo_cwnd(&mut self, cc: &mut FlowCtx<'_>, prior_cwnd: u32) -> u32 {
        self.0.undo_cwnd(cc, prior_cwnd)
    }
    fn pacing_rate(&self, cc: &CcState) -> Option<u64> {
        self.0.pacing_rate(cc)
    }
    fn diagnostics(&self) -> Option<CcDiagnostics> {
        self.0.diagnostics()
    }
    fn diagnostics_changed(&self, last: &mut Option<CcDiagnostics>) -> Option<CcDiagnostics> {
        self.0.diagnostics_changed(last)
    }
}

const IW: u32 = 10;
/// The RTO the idle restart measures idleness in (RFC 6298's floor of one second).
const RTO: Duration = Duration::from_secs(1);

/// How the application feeds the sender during a stretch of rounds.
#[derive(Clone, Copy)]
enum App {
    /// Always has data: the window is refilled after every ACK.
    Greedy,
    /// Writes this many segments at the start of each round, no more.
    Limited(u32),
}

struct Script {
    s: PathSender<Dyn>,
    /// Whether the controller has a new-CWV layer (the connection then skips the
    /// RFC 5681 idle restart, RFC 7661 §4.4).
    new_cwv: bool,
    /// The ACKs of the current reduction still to come (none: not reducing).
    reducing: Option<usize>,
    /// An RTO episode is open: the first ACK after it reaches its recovery point (the
    /// flight was cleared) and ends it with `ExitLoss`.
    in_loss: bool,
    out: String,
}

impl Script {
    fn new(ctrl: Box<dyn CongestionControl>, new_cwv: bool) -> Self {
        let s = PathSender::new(
            Dyn(ctrl),
            IW,
            u32::MAX,
            Duration::from_millis(40),
            Duration::from_millis(1),
        );
        let mut sc = Script {
            s,
            new_cwv,
            reducing: None,
            in_loss: false,
            out: String::new(),
        };
        sc.line("start");
        sc
    }

    fn line(&mut self, what: &str) {
        let cc = &self.s.cc;
        let ss = if cc.ssthresh == u32::MAX {
            "inf".to_string()
        } else {
            cc.ssthresh.to_string()
        };
        writeln!(
            self.out,
            "{:>9.3}s {what:<22} cwnd {:>4} ssthresh {:>4} cnt {:>3} in_flight {:>4}",
            self.s.now.as_secs_f64(),
            cc.cwnd,
            ss,
            cc.cwnd_cnt,
            self.s.flight.len()
        )
        .unwrap();
    }

    /// The sequence variables the controllers read (CDG's and DCTCP's rounds), in bytes.
    fn sync(&mut self) {
        let cc = &mut self.s.cc;
        cc.in_flight = self.s.flight.len() as u32;
        cc.snd_una = cc.delivered * u64::from(MSS);
        cc.snd_nxt = cc.snd_una + u64::from(cc.in_flight) * u64::from(MSS);
    }

    /// One segment onto the model's FIFO, departing after the newest one in flight.
    fn send_one(&mut self, app_limited: bool) {
        let s = &mut self.s;
        let prev = s
            .flight
            .back()
            .and_then(|&(_, at)| at.checked_sub(s.base.saturating_sub(s.tau)))
            .unwrap_or(Instant::ZERO);
        let depart = prev.max(s.now) + s.tau;
        let ack_at = depart + s.base.saturating_sub(s.tau);
        let info = SentInfo {
            sent_at: s.now,
            bytes: MSS,
            in_flight_at_send: s.flight.len() as u32 + 1,
            delivered_at_send: s.cc.delivered,
            app_limited,
            retransmit: false,
            ..Default::default()
        };
        s.flight.push_back((info, ack_at));
        self.sync();
        self.s
            .ctrl
            .on_sent(&mut FlowCtx::alone(&mut self.s.cc), &info);
    }

    fn fill(&mut self) {
        while (self.s.flight.len() as u32) < self.s.cc.cwnd {
            self.send_one(false);
        }
    }

    /// The oldest segment's ACK at its arrival time.
    fn ack(&mut self, ece: bool, app: App) {
        let Some((info, ack_at)) = self.s.flight.pop_front() else {
            return;
        };
        self.s.now = self.s.now.max(ack_at);
        let rtt = self.s.now.saturating_duration_since(info.sent_at);
        self.s.cc.delivered += 1;
        self.sync();
        self.s.cc.srtt = self.s.base;
        self.s.cc.min_rtt = self.s.base;
        let ack = AckSample {
            now: self.s.now,
            acked_segs: 1,
            acked_bytes: u64::from(MSS),
            rtt: Some(rtt),
            newest_acked: Some(info),
            prior_in_flight: self.s.cc.in_flight + 1,
            ece,
            ..Default::default()
        };
        self.s
            .ctrl
            .on_ack(&mut FlowCtx::alone(&mut self.s.cc), &ack);
        if std::mem::take(&mut self.in_loss) {
            let (now, before) = (self.s.now, self.window());
            self.s
                .ctrl
                .on_event(&mut FlowCtx::alone(&mut self.s.cc), now, CcEvent::ExitLoss);
            // Recorded only when it moved the window, as a round is.
            if self.window() != before {
                self.line("exit loss");
            }
        }
        match &mut self.reducing {
            Some(left) => {
                *left = left.saturating_sub(1);
                if *left == 0 {
                    self.reducing = None;
                    self.s.cc.cwnd = self.s.cc.ssthresh.max(1);
                    let now = self.s.now;
                    self.s.ctrl.on_event(
                        &mut FlowCtx::alone(&mut self.s.cc),
                        now,
                        CcEvent::ExitRecovery,
                    );
                    self.line("exit reduction");
                }
            }
            None => {
                self.s
                    .ctrl
                    .cong_avoid(&mut FlowCtx::alone(&mut self.s.cc), &ack);
                if std::mem::take(&mut self.s.cc.request_cwr) {
                    self.reduce(CongestionCause::Delay);
                }
            }
        }
        if let App::Greedy = app {
            self.fill();
        }
    }

    /// A congestion signal as `conn/congestion.rs` answers it.
    fn reduce(&mut self, cause: CongestionCause) {
        if self.reducing.is_some() && cause != CongestionCause::Rto {
            return;
        }
        self.sync();
        let now = self.s.now;
        let ss = self
            .s
            .ctrl
            .ssthresh(&mut FlowCtx::alone(&mut self.s.cc), now, cause)
            .max(2);
        self.s.cc.ssthresh = ss;
        self.s.cc.cwnd_cnt = 0;
        let ev = match cause {
            CongestionCause::Loss => CcEvent::EnterRecovery,
            CongestionCause::Rto => CcEvent::Rto,
            _ => CcEvent::EnterCwr,
        };
        match cause {
            CongestionCause::Rto => {
                self.s.flight.clear();
                self.s.cc.cwnd = 1;
                self.reducing = None;
                self.in_loss = true;
            }
            CongestionCause::ProbeLoss => self.s.cc.cwnd = ss,
            _ => {
                self.s.cc.cwnd = ss;
                self.reducing = Some(self.s.flight.len().max(1));
            }
        }
        self.sync();
        self.s
            .ctrl
            .on_event(&mut FlowCtx::alone(&mut self.s.cc), now, ev);
        if cause == CongestionCause::ProbeLoss {
            // The probe's reduction ends at once (Linux `tcp_process_tlp_ack`).
            self.s.ctrl.on_event(
                &mut FlowCtx::alone(&mut self.s.cc),
                now,
                CcEvent::ExitRecovery,
            );
        }
        let what = match cause {
            CongestionCause::Loss => "loss",
            CongestionCause::ProbeLoss => "probe loss",
            CongestionCause::Ecn => "ecn",
            CongestionCause::Rto => "rto",
            CongestionCause::Delay => "delay backoff",
            _ => "other",
        };
        self.line(what);
    }

    /// `n` rounds: each ACKs what was in flight at its start.
    fn rounds(&mut self, what: &str, n: usize, app: App, ece: bool) {
        for i in 1..=n {
            if let App::Limited(k) = app {
                self.s.cc.app_limited = true;
                self.s.cc.cwnd_limited = false;
                self.s.cc.cwnd_blocked = false;
                let room = self.s.cc.cwnd.saturating_sub(self.s.flight.len() as u32);
                for _ in 0..k.min(room) {
                    self.send_one(true);
                }
            } else {
                self.s.cc.app_limited = false;
                self.s.cc.cwnd_limited = true;
                self.s.cc.cwnd_blocked = true;
                self.fill();
            }
            let before = self.window();
            let k = self.s.flight.len();
            for _ in 0..k {
                self.ack(ece, app);
            }
            // Rounds that changed nothing are left out, except a stretch's last.
            if self.window() != before || i == n {
                self.line(&format!("{what} {i}"));
            }
        }
    }

    fn window(&self) -> (u32, u32, u32) {
        (self.s.cc.cwnd, self.s.cc.ssthresh, self.s.cc.cwnd_cnt)
    }

    /// The sender has nothing to send for `idle`, then restarts (`on_tx_start`).
    fn idle(&mut self, idle: Duration) {
        while !self.s.flight.is_empty() {
            self.ack(false, App::Limited(0));
        }
        self.s.now += idle;
        let now = self.s.now;
        self.sync();
        self.s.ctrl.on_event(
            &mut FlowCtx::alone(&mut self.s.cc),
            now,
            CcEvent::TxStart { idle },
        );
        if !self.new_cwv && idle > RTO && self.reducing.is_none() {
            let cc = &mut self.s.cc;
            let cwnd = cc.cwnd;
            cc.ssthresh = cc.ssthresh.max((cwnd >> 1) + (cwnd >> 2));
            let restart = IW.min(cwnd).max(1);
            let (mut w, mut left) = (cwnd, idle);
            while left > RTO && w > restart {
                left -= RTO;
                w >>= 1;
            }
            cc.cwnd = w.max(restart);
            cc.cwnd_cnt = 0;
            self.s.ctrl.on_event(
                &mut FlowCtx::alone(&mut self.s.cc),
                now,
                CcEvent::CwndRestart,
            );
        }
        self.line("idle 1.5s, restart");
    }

    fn run(mut self) -> String {
        let g = App::Greedy;
        self.rounds("slow start", 4, g, false);
        self.reduce(CongestionCause::Loss);
        self.rounds("avoidance", 8, g, false);
        self.rounds("ece", 1, g, true);
        self.reduce(CongestionCause::Ecn);
        self.rounds("avoidance", 4, g, false);
        self.idle(Duration::from_millis(1500));
        self.rounds("after idle", 3, g, false);
        let now = self.s.now;
        self.s.ctrl.on_event(
            &mut FlowCtx::alone(&mut self.s.cc),
            now,
            CcEvent::AppLimited,
        );
        self.rounds("app-limited", 60, App::Limited(5), false);
        self.rounds("greedy again", 3, g, false);
        self.reduce(CongestionCause::ProbeLoss);
        self.rounds("avoidance", 3, g, false);
        self.reduce(CongestionCause::Rto);
        self.rounds("after rto", 5, g, false);
        self.out
    }
}

fn trace(ctrl: Box<dyn CongestionControl>, new_cwv: bool) -> String {
    let label = ctrl.label();
    let mut out = format!("{label}\n");
    out.push_str(&Script::new(ctrl, new_cwv).run());
    out
}

fn settings() -> insta::Settings {
    let mut s = insta::Settings::clone_current();
    s.set_prepend_module_to_snapshot(false);
    s.set_omit_expression(true);
    s
}

fn check(name: &str, make: fn() -> Box<dyn CongestionControl>, new_cwv: bool) {
    let text = trace(make(), new_cwv);
    // The same script twice gives the same trace (no hidden state, no clock).
    assert_eq!(text, trace(make(), new_cwv), "{name} is not deterministic");
    settings().bind(|| insta::assert_snapshot!(format!("cwnd-{name}"), text));
}

fn dc(base: Box<dyn CongestionControl>) -> Box<dyn CongestionControl> {
    Box::new(DelayCorrelation::new(base, DelayCorrConfig::default()))
}

fn cwv(base: Box<dyn CongestionControl>) -> Box<dyn CongestionControl> {
    // A short non-validated period, so the script's app-limited stretch reaches it.
    let cfg = NewCwvConfig {
        nvp: Duration::from_millis(500),
    };
    Box::new(NewCwv::new(base, cfg))
}

fn abe(base: Box<dyn CongestionControl>, alg: CcAlgorithm) -> Box<dyn CongestionControl> {
    Box::new(Abe::new(base, default_beta_ecn(alg)))
}

#[test]
fn reno() {
    check("reno", || Box::new(Reno), false);
}

#[test]
fn cubic() {
    check("cubic", || Box::new(Cubic::default()), false);
}

#[test]
fn cdg() {
    check("cdg", || Box::new(Cdg::new(CdgConfig::default(), 7)), false);
}

#[test]
fn dctcp() {
    check(
        "dctcp",
        || Box::new(Dctcp::new(DctcpConfig::default())),
        false,
    );
}

#[test]
fn delay_correlation() {
    check("reno+dc", || dc(Box::new(Reno)), false);
    check("cubic+dc", || dc(Box::new(Cubic::default())), false);
}

#[test]
fn new_cwv() {
    check("reno+cwv", || cwv(Box::new(Reno)), true);
    check("cubic+cwv", || cwv(Box::new(Cubic::default())), true);
}

#[test]
fn abe_layer() {
    check("reno+abe", || abe(Box::new(Reno), CcAlgorithm::Reno), false);
    check(
        "cubic+abe",
        || abe(Box::new(Cubic::default()), CcAlgorithm::Cubic),
        false,
    );
}

#[test]
fn stacked_layers() {
    check(
        "cubic+dc+cwv+abe",
        || abe(cwv(dc(Box::new(Cubic::default()))), CcAlgorithm::Cubic),
        true,
    );
}

/// The coupled controllers outside any host (no group) are Reno, trace for trace;
/// their two-subflow traces are in `coupled/snapshots/`.
#[test]
fn coupled_alone_is_reno() {
    let reno = trace(Box::new(Reno), false);
    for alg in CcAlgorithm::COUPLED {
        let t = trace(alg.build(), false);
        assert_eq!(t.replacen(alg.name(), "reno", 1), reno, "{}", alg.name());
    }
}

/// Linux's Scalable, HighSpeed, Veno and YeAH over the script. TCP-LP is not here:
/// the model carries no TCP timestamps, without which TCP-LP is Reno (`lp.rs`).
#[test]
fn scalable_highspeed_veno_yeah() {
    for alg in [
        CcAlgorithm::Scalable,
        CcAlgorithm::HighSpeed,
        CcAlgorithm::Veno,
        CcAlgorithm::Yeah,
    ] {
        let name = alg.name();
        let text = trace(alg.build(), false);
        assert_eq!(
            text,
            trace(alg.build(), false),
            "{name} is not deterministic"
        );
        settings().bind(|| insta::assert_snapshot!(format!("cwnd-{name}"), text));
    }
}

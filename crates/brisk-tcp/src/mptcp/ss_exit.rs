//! Slow-start exits of an MPTCP connection's subflows: the samples seed 004 B.2 (LISA,
//! §2.3 of the spec) measures. Per subflow, its cwnd and retransmission count when it
//! left slow start; for the connection, the compound values when the *last* subflow
//! left it: R_ss ("retransmitted packets before the last subflow exits slow start")
//! and the sum of cwnd at that moment. The paper read these from Linux with
//! `trace_printk` at the server; here the connection keeps them itself (sans-IO: no
//! clock but the `now` it is given), and a simulator or the real stack reads them at
//! any time.
//!
//! A subflow's initial slow start (cwnd < ssthresh, Linux `tcp_in_slow_start`) ends at
//! the first input (an ACK or a timeout) after which cwnd ≥ ssthresh, or ssthresh is
//! below the first one seen: growth to ssthresh, or a loss that set it (fast
//! retransmit or RTO; after an RTO cwnd is 1, below the new ssthresh, and Linux's test
//! says slow start again, but that is loss recovery, not the start-up). The cwnd
//! recorded is the one it had in slow start just before that input (the window that
//! overshot; after the input PRR or the RTO has already begun to cut it), and the
//! retransmissions those the subflow had sent by the end of that input. The compound
//! is recorded when every subflow that carries data has left slow start, with the
//! pre-input cwnds summed; a subflow that joins later and leaves later replaces it,
//! so it always describes the last exit. Bounded: one record per subflow (in its
//! [`SubflowCtx`](super::meta::SubflowCtx)) and one per connection; the per-input
//! work is a pass over the subflows, without allocation.

use brisk_time::Instant;

/// One subflow's slow-start exit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SsExit {
    pub at: Instant,
    /// cwnd (segments) in slow start just before the input that ended it.
    pub cwnd: u32,
    /// ssthresh (segments) after that input.
    pub ssthresh: u32,
    /// The subflow's retransmitted segments by then.
    pub retransmits: u64,
}

/// The connection's compound values when its last subflow left slow start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SsExitSum {
    pub at: Instant,
    /// Subflows carrying data then (all of them had left slow start).
    pub subflows: u32,
    /// Sum of those subflows' cwnd (segments) just before the input that ended the
    /// last slow start.
    pub cwnd: u32,
    /// Sum of their retransmitted segments by the end of that input: R_ss.
    pub retransmits: u64,
}

/// Per-subflow tracking state (lives in the subflow's context).
#[derive(Clone, Copy, Debug, Default)]
pub struct SsTrack {
    /// cwnd at the end of the previous input (0 before the first).
    prev_cwnd: u32,
    /// ssthresh at the first input seen (0 before it).
    first_ssthresh: u32,
    pub exit: Option<SsExit>,
}

/// What [`observe`] reads of one subflow.
#[derive(Clone, Copy, Debug)]
pub struct SubNow {
    /// The subflow carries data (the initial one, or a join that completed).
    pub usable: bool,
    pub cwnd: u32,
    pub ssthresh: u32,
    pub retransmits: u64,
}

/// After an input at `now`: records the exits of subflows that just left slow
/// start and, when that made every usable subflow out of slow start, the compound.
/// `subs` yields each subflow's tracking state with what it reads now.
pub fn observe<'a>(
    now: Instant,
    subs: impl Iterator<Item = (&'a mut SsTrack, SubNow)>,
    sum: &mut Option<SsExitSum>,
) {
    let (mut any_new, mut all_out) = (false, true);
    let mut acc = SsExitSum {
        at: now,
        subflows: 0,
        cwnd: 0,
        retransmits: 0,
    };
    for (t, s) in subs {
        let before = if t.prev_cwnd == 0 {
            s.cwnd
        } else {
            t.prev_cwnd
        };
        t.prev_cwnd = s.cwnd;
        if t.first_ssthresh == 0 {
            t.first_ssthresh = s.ssthresh.max(1);
        }
        if !s.usable {
            continue;
        }
        if t.exit.is_none() && (s.cwnd >= s.ssthresh || s.ssthresh < t.first_ssthresh) {
            t.exit = Some(SsExit {
                at: now,
                cwnd: before,
                ssthresh: s.ssthresh,
                retransmits: s.retransmits,
            });
            any_new = true;
        }
        all_out &= t.exit.is_some();
        acc.subflows += 1;
        acc.cwnd = acc.cwnd.saturating_add(before);
        acc.retransmits += s.retransmits;
    }
    if any_new && all_out {
        *sum = Some(acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use brisk_time::Duration;

    fn sub(usable: bool, cwnd: u32, ssthresh: u32, retransmits: u64) -> SubNow {
        SubNow {
            usable,
            cwnd,
            ssthresh,
            retransmits,
        }
    }

    fn step(t: &mut [SsTrack], now: &[SubNow], at: u64, sum: &mut Option<SsExitSum>) {
        let at = Instant::ZERO + Duration::from_millis(at);
        observe(at, t.iter_mut().zip(now.iter().copied()), sum);
    }

    #[test]
    fn each_exit_keeps_the_window_before_the_cut_and_the_last_gives_the_compound() {
        let mut t = [SsTrack::default(); 3];
        let mut sum = None;
        // Three subflows growing in slow start; the third is still joining.
        step(
            &mut t,
            &[
                sub(true, 10, u32::MAX, 0),
                sub(true, 10, u32::MAX, 0),
                sub(false, 10, u32::MAX, 0),
            ],
            5,
            &mut sum,
        );
        step(
            &mut t,
            &[
                sub(true, 20, u32::MAX, 0),
                sub(true, 16, u32::MAX, 0),
                sub(true, 10, u32::MAX, 0),
            ],
            10,
            &mut sum,
        );
        // The first loses: ssthresh 10, PRR already took cwnd to 12.
        step(
            &mut t,
            &[
                sub(true, 12, 10, 1),
                sub(true, 18, u32::MAX, 0),
                sub(true, 12, u32::MAX, 0),
            ],
            15,
            &mut sum,
        );
        let e0 = t[0].exit.unwrap();
        assert_eq!((e0.cwnd, e0.ssthresh, e0.retransmits), (20, 10, 1));
        assert!(
            t[1].exit.is_none() && sum.is_none(),
            "two still in slow start"
        );
        // The second leaves by an RTO (cwnd 1): its pre-RTO window is kept.
        step(
            &mut t,
            &[
                sub(true, 11, 10, 2),
                sub(true, 1, 9, 1),
                sub(true, 14, u32::MAX, 0),
            ],
            20,
            &mut sum,
        );
        assert_eq!(t[1].exit.unwrap().cwnd, 18);
        assert!(sum.is_none(), "the third is still in slow start");
        // The third grows to its ssthresh: the last exit; the compound sums the
        // windows before this input (11 + 1 + 14) and every retransmission.
        step(
            &mut t,
            &[
                sub(true, 11, 10, 2),
                sub(true, 2, 9, 1),
                sub(true, 14, 14, 3),
            ],
            25,
            &mut sum,
        );
        let s = sum.unwrap();
        assert_eq!((s.subflows, s.cwnd, s.retransmits), (3, 26, 6));
        assert_eq!(s.at, Instant::ZERO + Duration::from_millis(25));
        // Later inputs change nothing: the exits are the first ones.
        step(
            &mut t,
            &[sub(true, 5, 4, 9), sub(true, 2, 1, 9), sub(true, 7, 7, 9)],
            30,
            &mut sum,
        );
        assert_eq!(sum.unwrap(), s);
        assert_eq!(t[0].exit.unwrap(), e0);
    }

    #[test]
    fn a_late_join_that_leaves_later_replaces_the_compound() {
        let mut t = [SsTrack::default(); 2];
        let mut sum = None;
        step(
            &mut t,
            &[sub(true, 30, u32::MAX, 0), sub(false, 10, u32::MAX, 0)],
            1,
            &mut sum,
        );
        step(
            &mut t,
            &[sub(true, 20, 15, 2), sub(false, 10, u32::MAX, 0)],
            2,
            &mut sum,
        );
        assert_eq!(sum.unwrap().subflows, 1);
        assert_eq!(sum.unwrap().cwnd, 30);
        step(
            &mut t,
            &[sub(true, 21, 15, 2), sub(true, 10, u32::MAX, 0)],
            3,
            &mut sum,
        );
        assert_eq!(sum.unwrap().subflows, 1, "the join is still in slow start");
        step(
            &mut t,
            &[sub(true, 22, 15, 2), sub(true, 8, 7, 1)],
            4,
            &mut sum,
        );
        let s = sum.unwrap();
        assert_eq!((s.subflows, s.cwnd, s.retransmits), (2, 31, 3));
    }
}

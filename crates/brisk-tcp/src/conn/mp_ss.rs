//! The connection's side of `crate::mptcp::ss_exit`: after every input the subflows'
//! windows are observed (called from `mp_after_input`), and the samples are read
//! with [`Connection::mptcp_ss_exits`] and [`Connection::mptcp_ss_exit_sum`].

use super::Connection;
use crate::mptcp::meta::Meta;
use crate::mptcp::ss_exit::{self, SsExit, SsExitSum, SubNow};
use brisk_time::Instant;

/// Records the slow-start exits the last input caused. One pass over the subflows,
/// no allocation (seed 004 B.2's R_ss and cwnd at the last exit).
pub(super) fn observe(m: &mut Meta, now: Instant) {
    let subs = m.subs.iter_mut().map(|s| {
        let v = &s.conn.sub.cong.vars;
        let read = SubNow {
            usable: s.usable,
            cwnd: v.cwnd,
            ssthresh: v.ssthresh,
            retransmits: s.conn.info.retransmits,
        };
        (&mut s.ss, read)
    });
    ss_exit::observe(now, subs, &mut m.ss_sum);
}

impl Connection {
    /// Each subflow's slow-start exit, in the order of `mptcp_subflow_infos` (None:
    /// still in slow start, or never carried data). Empty for plain TCP or after
    /// fallback. Allocates: for reports, not per packet.
    pub fn mptcp_ss_exits(&self) -> Vec<Option<SsExit>> {
        self.mp
            .as_deref()
            .map_or_else(Vec::new, |m| m.subs.iter().map(|s| s.ss.exit).collect())
    }

    /// The compound cwnd and retransmissions when the last subflow carrying data
    /// left slow start (None while one is still in it, and for plain TCP).
    pub fn mptcp_ss_exit_sum(&self) -> Option<SsExitSum> {
        self.mp.as_deref().and_then(|m| m.ss_sum)
    }
}

//! Proportional Rate Reduction (RFC 6937) with the slow-start reduction bound
//! (PRR-SSRB), as Linux's `tcp_cwnd_reduction`, counted in segments.
//!
//! During recovery the window is not cut in one step. While the pipe is above ssthresh,
//! PRR sends in proportion to what is delivered (`ssthresh / RecoverFS` segments per
//! delivered segment), so the reduction is spread over one RTT and the ACK clock keeps
//! running. Once the pipe falls below ssthresh (more losses), SSRB lets it grow back
//! towards ssthresh at most one segment faster than delivery, like slow start.
//!
//! Linux departs from RFC 6937 in two small ways that are kept here:
//! - the extra SSRB segment is given only when the ACK advanced snd.una and reported
//!   no new loss (so lost retransmissions don't inflate the pipe);
//! - the first ACK of recovery may always send one segment (the fast retransmit).

/// PRR state for one recovery (or CWR) episode.
#[derive(Clone, Debug, Default)]
pub struct Prr {
    ssthresh: u32,
    /// RFC 6937 RecoverFS (Linux uses `prior_cwnd`); never zero once entered.
    recover_fs: u32,
    /// Segments delivered (cumulatively or selectively) since entry.
    prr_delivered: u64,
    /// Segments sent since entry.
    prr_out: u64,
    /// The cwnd most recently returned, for ACKs that deliver nothing.
    cwnd: u32,
}

/// What one ACK reported, beyond the delivered count (Linux's `flag` and `newly_lost`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrrAck {
    /// Segments newly delivered by this ACK (cumulative + SACK).
    pub newly_delivered: u32,
    /// Segments in flight (pipe) after processing this ACK, before sending.
    pub in_flight: u32,
    /// This ACK advanced snd.una.
    pub snd_una_advanced: bool,
    /// This ACK caused segments to be marked lost.
    pub newly_lost: bool,
}

impl Prr {
    /// Start of recovery: `ssthresh` (segments) from the CC; `recover_fs` = segments in
    /// flight at entry (RFC 6937 RecoverFS).
    pub fn enter(&mut self, ssthresh: u32, recover_fs: u32) {
        let recover_fs = recover_fs.max(1);
        *self = Prr {
            ssthresh,
            recover_fs,
            prr_delivered: 0,
            prr_out: 0,
            cwnd: recover_fs,
        };
    }

    /// Per ACK during recovery: `newly_delivered` segments (cum+SACK) and the current
    /// `in_flight` (pipe). Returns the cwnd to use, `in_flight + sndcnt`, as Linux sets
    /// `snd_cwnd = pipe + sndcnt`. Assumes the ACK advanced snd.una and marked nothing
    /// newly lost; use [`Prr::on_ack_with`] when that is known. An ACK that delivers
    /// nothing returns the previous cwnd (Linux leaves cwnd alone then).
    pub fn on_ack(&mut self, newly_delivered: u32, in_flight: u32) -> u32 {
        self.on_ack_with(PrrAck {
            newly_delivered,
            in_flight,
            snd_una_advanced: true,
            newly_lost: false,
        })
        .unwrap_or(self.cwnd)
    }

    /// As [`Prr::on_ack`] with Linux's full inputs. `None` when nothing was delivered:
    /// keep the current cwnd.
    pub fn on_ack_with(&mut self, ack: PrrAck) -> Option<u32> {
        if ack.newly_delivered == 0 {
            return None;
        }
        let delivered = u64::from(ack.newly_delivered);
        self.prr_delivered = self.prr_delivered.saturating_add(delivered);
        let pipe = u64::from(ack.in_flight);
        let ssthresh = u64::from(self.ssthresh);
        let sndcnt = if pipe > ssthresh {
            // Proportional part: CEIL(prr_delivered · ssthresh / RecoverFS) − prr_out.
            let fs = u64::from(self.recover_fs);
            let target =
                (u128::from(self.prr_delivered) * u128::from(ssthresh)).div_ceil(u128::from(fs));
            u64::try_from(target)
                .unwrap_or(u64::MAX)
                .saturating_sub(self.prr_out)
        } else {
            // PRR-SSRB: grow back to ssthresh, at most one segment ahead of delivery.
            let mut limit = self
                .prr_delivered
                .saturating_sub(self.prr_out)
                .max(delivered);
            if ack.snd_una_advanced && !ack.newly_lost {
                limit = limit.saturating_add(1);
            }
            limit.min(ssthresh - pipe)
        };
        // The first ACK of recovery must be able to send the fast retransmit.
        let sndcnt = if self.prr_out == 0 {
            sndcnt.max(1)
        } else {
            sndcnt
        };
        let cwnd = pipe.saturating_add(sndcnt);
        self.cwnd = u32::try_from(cwnd).unwrap_or(u32::MAX);
        Some(self.cwnd)
    }

    /// Segments sent during recovery (`prr_out += n`).
    pub fn on_sent(&mut self, segs: u32) {
        self.prr_out = self.prr_out.saturating_add(u64::from(segs));
    }

    /// The cwnd when recovery ends (Linux `tcp_end_cwnd_reduction`): ssthresh, unless
    /// ssthresh is infinite, in which case the current cwnd stands.
    pub fn exit_cwnd(&self, cwnd: u32) -> u32 {
        if self.ssthresh == u32::MAX {
            cwnd
        } else {
            self.ssthresh
        }
    }

    pub fn ssthresh(&self) -> u32 {
        self.ssthresh
    }
    pub fn recover_fs(&self) -> u32 {
        self.recover_fs
    }
    pub fn prr_delivered(&self) -> u64 {
        self.prr_delivered
    }
    pub fn prr_out(&self) -> u64 {
        self.prr_out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Drive PRR like a sender: every ACK delivers `per_ack` segments; the sender then
    /// sends whatever `cwnd − pipe` allows. Returns segments sent per ACK.
    fn run(prr: &mut Prr, mut pipe: u32, acks: usize, per_ack: u32) -> (Vec<u32>, u32) {
        let mut sent = Vec::new();
        for _ in 0..acks {
            pipe = pipe.saturating_sub(per_ack);
            let cwnd = prr.on_ack(per_ack, pipe);
            let n = cwnd.saturating_sub(pipe);
            prr.on_sent(n);
            pipe += n;
            sent.push(n);
        }
        (sent, pipe)
    }

    #[test]
    fn proportional_part_sends_one_per_two_acks_when_halving() {
        // RFC 6937 §6 style: 20 in flight, one lost, ssthresh 10. Each ACK (SACK)
        // delivers one segment; the lost one leaves the pipe at entry.
        let mut prr = Prr::default();
        prr.enter(10, 20);
        let (sent, pipe) = run(&mut prr, 19, 18, 1);
        // ceil(d·10/20) − out: 1,0,1,0,... — the first is the fast retransmit.
        let expect: Vec<u32> = (0..16).map(|i| u32::from(i % 2 == 0)).collect();
        assert_eq!(sent[..16], expect[..]);
        // At the 17th ACK the pipe has reached ssthresh, so SSRB takes over: it sends
        // nothing then, and tops the pipe back up to ssthresh on the 18th.
        assert_eq!(sent[16..], [0, 1]);
        assert_eq!(prr.prr_out(), 9);
        assert_eq!(prr.prr_delivered(), 18);
        assert_eq!(pipe, 10);
    }

    #[test]
    fn proportional_rate_is_ssthresh_over_recover_fs() {
        // CUBIC's β = 0.7: 100 in flight → ssthresh 70. After 100 deliveries exactly
        // 70 segments have been sent.
        let mut prr = Prr::default();
        prr.enter(70, 100);
        let (sent, _) = run(&mut prr, 99, 99, 1);
        let total: u32 = sent.iter().sum();
        assert_eq!(u64::from(total), prr.prr_out());
        assert_eq!(total, 70);
    }

    #[test]
    fn ssrb_slow_starts_towards_ssthresh_when_pipe_is_small() {
        // Heavy loss: only 4 segments remain in flight, ssthresh 10.
        let mut prr = Prr::default();
        prr.enter(10, 20);
        let (sent, pipe) = run(&mut prr, 5, 4, 1);
        // Each ACK: max(delivered − out, 1) + 1 bounded by ssthresh − pipe. Sending two
        // per delivered segment grows the pipe by one per ACK, like slow start.
        assert_eq!(sent, vec![2, 2, 2, 2]);
        assert_eq!(pipe, 9);
        let (sent, pipe) = run(&mut prr, pipe, 6, 1);
        // Never above ssthresh once there.
        assert_eq!(pipe, 10);
        assert!(sent.iter().all(|&n| n <= 2));
    }

    #[test]
    fn ssrb_without_snd_una_advance_sends_no_extra() {
        let mut prr = Prr::default();
        prr.enter(10, 20);
        prr.on_sent(1); // fast retransmit already out
        let cwnd = prr.on_ack_with(PrrAck {
            newly_delivered: 1,
            in_flight: 4,
            snd_una_advanced: false,
            newly_lost: false,
        });
        // max(1 − 1, 1) = 1, no extra segment.
        assert_eq!(cwnd, Some(5));
        let cwnd = prr.on_ack_with(PrrAck {
            newly_delivered: 1,
            in_flight: 4,
            snd_una_advanced: true,
            newly_lost: true,
        });
        assert_eq!(cwnd, Some(5));
    }

    #[test]
    fn ack_delivering_nothing_keeps_the_previous_cwnd() {
        let mut prr = Prr::default();
        prr.enter(10, 20);
        let first = prr.on_ack(1, 18);
        assert_eq!(first, 19);
        assert_eq!(
            prr.on_ack_with(PrrAck {
                newly_delivered: 0,
                in_flight: 3,
                snd_una_advanced: false,
                newly_lost: false
            }),
            None
        );
        assert_eq!(prr.on_ack(0, 3), first);
        assert_eq!(prr.prr_delivered(), 1);
    }

    #[test]
    fn first_ack_always_allows_the_fast_retransmit() {
        // ssthresh 2 from 100 in flight: the proportional share of one delivery is
        // ceil(2/100) = 1 anyway, but with a zero ssthresh it would be 0.
        let mut prr = Prr::default();
        prr.enter(0, 100);
        assert_eq!(prr.on_ack(1, 98), 99);
        prr.on_sent(1);
        assert_eq!(prr.on_ack(1, 98), 98);
    }

    #[test]
    fn exit_sets_cwnd_to_ssthresh_unless_infinite() {
        let mut prr = Prr::default();
        prr.enter(10, 20);
        assert_eq!(prr.exit_cwnd(13), 10);
        prr.enter(u32::MAX, 20);
        assert_eq!(prr.exit_cwnd(13), 13);
    }

    #[test]
    fn huge_inputs_saturate_instead_of_overflowing() {
        let mut prr = Prr::default();
        prr.enter(u32::MAX - 1, 1);
        prr.on_sent(u32::MAX);
        let c = prr.on_ack(u32::MAX, u32::MAX);
        assert!(c >= u32::MAX - 1);
    }
}

//! F-RTO, detection of spurious retransmission timeouts (RFC 5682 §3, the SACK-enhanced
//! algorithm), as Linux runs it by default (`net.ipv4.tcp_frto = 2`; `tcp_enter_loss`,
//! `tcp_process_loss`, `tcp_xmit_recovery` in `tcp_input.c`).
//!
//! After an RTO only SND.UNA is retransmitted (step 1). If the first ACK after it
//! advances SND.UNA, new data is sent instead of further retransmissions (step 2b).
//! If a later ACK then acknowledges data that was never retransmitted (and was sent
//! before the timeout), the originals were merely delayed: the RTO was spurious
//! (step 3b). A duplicate ACK or SACK of the new data instead shows a real loss, and
//! conventional go-back-N recovery continues (step 3a). The connection does the undo.

/// What one ACK in the Loss state showed (Linux `FLAG_*` bits of `tcp_ack`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FrtoAck {
    /// SND.UNA advanced (`FLAG_SND_UNA_ADVANCED`).
    pub una_advanced: bool,
    /// A never-retransmitted segment at or below the recovery point was (S)ACKed
    /// (`FLAG_ORIG_SACK_ACKED`).
    pub orig_acked: bool,
    /// Newly SACKed data (`FLAG_DATA_SACKED`).
    pub data_sacked: bool,
    /// A pure duplicate ACK (Linux `num_dupack`).
    pub dupack: bool,
    /// SND.UNA reached the recovery point.
    pub recovered: bool,
    /// New data went out after the timeout (SND.NXT beyond the recovery point).
    pub new_data_sent: bool,
    /// Unsent data exists and the peer's window has room for it.
    pub can_send_new: bool,
}

/// F-RTO's verdict on one ACK.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FrtoVerdict {
    /// Step 3b: the RTO was spurious; undo.
    Spurious,
    /// Step 2b: move the recovery point to SND.NXT and send new data first.
    SendNewData,
    /// Step 2b without new data to send: move the recovery point, recover as usual.
    FallBack,
    /// No decision (or F-RTO not running).
    Continue,
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Frto {
    /// Linux `tp->frto`: the detector is running for the current timeout.
    active: bool,
    /// Step 2b is in progress: new data before retransmissions (Linux `REXMIT_NEW`).
    new_data_first: bool,
}

impl Frto {
    /// An RTO fired (Linux `tcp_enter_loss`): F-RTO runs unless a recovery was already
    /// under way, except for repeated timeouts on the same SND.UNA (RFC 5682 §3.2).
    pub fn on_rto(&mut self, enabled: bool, new_episode: bool, repeated: bool) {
        self.active = enabled && (new_episode || repeated);
        self.new_data_first = false;
    }

    pub fn is_active(&self) -> bool {
        self.active
    }

    /// Whether output should send new data before retransmissions.
    pub fn new_data_first(&self) -> bool {
        self.new_data_first
    }

    /// Stops the detector (Loss state left, or no new data could be sent in step 2b).
    pub fn stop(&mut self) {
        self.active = false;
        self.new_data_first = false;
    }

    /// Linux `tcp_process_loss`' F-RTO part for one ACK in the Loss state.
    pub fn on_ack(&mut self, a: &FrtoAck) -> FrtoVerdict {
        self.new_data_first = false;
        if !self.active {
            return FrtoVerdict::Continue;
        }
        if a.orig_acked {
            self.active = false;
            return FrtoVerdict::Spurious;
        }
        if a.new_data_sent {
            if a.data_sacked || a.dupack {
                self.active = false;
            }
        } else if a.una_advanced && !a.recovered {
            if a.can_send_new {
                self.new_data_first = true;
                return FrtoVerdict::SendNewData;
            }
            self.active = false;
            return FrtoVerdict::FallBack;
        }
        FrtoVerdict::Continue
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn running() -> Frto {
        let mut f = Frto::default();
        f.on_rto(true, true, false);
        f
    }

    #[test]
    fn delayed_originals_acked_after_new_data_mean_spurious() {
        let mut f = running();
        let step2 = FrtoAck {
            una_advanced: true,
            can_send_new: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(&step2), FrtoVerdict::SendNewData);
        assert!(f.new_data_first());
        let step3 = FrtoAck {
            una_advanced: true,
            orig_acked: true,
            new_data_sent: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(&step3), FrtoVerdict::Spurious);
        assert!(!f.is_active());
    }

    #[test]
    fn duplicate_ack_after_new_data_means_real_loss() {
        let mut f = running();
        f.on_ack(&FrtoAck {
            una_advanced: true,
            can_send_new: true,
            ..Default::default()
        });
        let dup = FrtoAck {
            dupack: true,
            new_data_sent: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(&dup), FrtoVerdict::Continue);
        assert!(!f.is_active());
        // Later original ACKs no longer count.
        let late = FrtoAck {
            orig_acked: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(&late), FrtoVerdict::Continue);
    }

    #[test]
    fn without_new_data_f_rto_falls_back() {
        let mut f = running();
        let a = FrtoAck {
            una_advanced: true,
            ..Default::default()
        };
        assert_eq!(f.on_ack(&a), FrtoVerdict::FallBack);
        assert!(!f.is_active());
    }

    #[test]
    fn timeout_during_recovery_does_not_start_f_rto() {
        let mut f = Frto::default();
        f.on_rto(true, false, false);
        assert!(!f.is_active());
        f.on_rto(true, false, true);
        assert!(f.is_active(), "repeated timeout on the same SND.UNA");
        f.on_rto(false, true, true);
        assert!(!f.is_active(), "disabled");
    }
}

//! The MP_JOIN handshake (RFC 8684 §3.2) as two small state holders, one per role,
//! that build the options to send and check the ones received. No clock, no I/O:
//! the caller owns the subflow's TCP handshake and puts the returned options on its
//! SYN, SYN/ACK and third ACK.
//!
//! ```text
//!   initiator A                                   responder B
//!   SYN      MP_JOIN(token(K_B), R_A, id, B)  →   (token resolved to the connection)
//!   SYN/ACK  ←  MP_JOIN(HMAC_B[0..64], R_B, id, B)   HMAC_B = HMAC(K_B‖K_A, R_B‖R_A)
//!   ACK      MP_JOIN(HMAC_A[0..160])            →    HMAC_A = HMAC(K_A‖K_B, R_A‖R_B)
//! ```
//!
//! Linux's counterparts: `subflow_check_req` and `subflow_token_join_request` (the
//! SYN), `subflow_finish_connect` with `subflow_thmac_valid` (the SYN/ACK, initiator
//! side), `subflow_syn_recv_sock` with `subflow_hmac_valid` (the third ACK), all in
//! net/mptcp/subflow.c. Every failure is a [`JoinError`] that names the Linux MIB
//! counter it bumps and the MP_TCPRST reason Linux resets the subflow with: a join
//! never falls back to plain TCP (RFC 8684 §3.2: "the subflow MUST be closed").

use brisk_wire::mptcp::{crypto, MpJoin, MptcpOption, ResetReason, Subtype};
use brisk_wire::ExtraOptions;

/// Why a join step failed. Each refusal resets the subflow (never a fallback).
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The segment carries no MP_JOIN where the handshake needs one (Linux
    /// `subflow_finish_connect`: a SYN/ACK without MP_JOIN resets the join).
    #[error("MP_JOIN missing from the {step}")]
    Missing { step: &'static str },
    /// Another subtype where MP_JOIN was expected.
    #[error("expected MP_JOIN on the {step}, got {got}")]
    NotMpJoin { step: &'static str, got: Subtype },
    /// MP_JOIN of the wrong layout for this step (e.g. the third ACK's on a SYN/ACK).
    #[error("MP_JOIN of the wrong form on the {step}: expected length {expected}")]
    WrongForm {
        step: &'static str,
        expected: &'static str,
    },
    /// The SYN's token is not the token of the key the caller resolved it to.
    #[error("MP_JOIN token {got:#010x} is not this connection's token {expected:#010x}")]
    TokenMismatch { got: u32, expected: u32 },
    /// No connection holds the SYN's token (the caller's [`super::token::TokenTable`]
    /// lookup failed) [MPJoinNoTokenFound].
    #[error("MP_JOIN token {token:#010x} names no connection")]
    UnknownToken { token: u32 },
    /// The connection takes no more subflows (`PathManager::allow_join` said no, or
    /// the connection fell back) [MPJoinRejected].
    #[error("MP_JOIN refused: the connection's subflow limit is reached")]
    LimitReached,
    /// The SYN/ACK's truncated HMAC is not HMAC(K_B‖K_A, R_B‖R_A)[0..64]
    /// [MPJoinSynAckHMacFailure].
    #[error("MP_JOIN SYN/ACK HMAC {got:#018x} does not verify")]
    BadSynAckHmac { got: u64 },
    /// The third ACK's 160-bit HMAC is not HMAC(K_A‖K_B, R_A‖R_B)[0..160]
    /// [MPJoinAckHMacFailure].
    #[error("MP_JOIN third-ACK HMAC does not verify")]
    BadAckHmac,
}

impl JoinError {
    /// The MP_TCPRST reason Linux puts on the RST for this failure: "MPTCP-specific
    /// error" for protocol faults (`MPTCP_RST_EMPTCP`: no token, missing or bad option,
    /// bad HMAC — Linux 7.1 moved the third ACK's bad HMAC here from
    /// "administratively prohibited"; 6.18 still sends 3), "administratively
    /// prohibited" for a join beyond the limit (`MPTCP_RST_EPROHIBIT`,
    /// `subflow_check_req`).
    pub fn reset_reason(&self) -> ResetReason {
        match self {
            JoinError::LimitReached => ResetReason::AdministrativelyProhibited,
            _ => ResetReason::MptcpError,
        }
    }

    /// The Linux MIB counter (`/proc/net/netstat` MPTcpExt) this failure bumps, when
    /// Linux has one.
    pub fn mib(&self) -> Option<&'static str> {
        match self {
            JoinError::UnknownToken { .. } => Some("MPJoinNoTokenFound"),
            JoinError::LimitReached => Some("MPJoinRejected"),
            JoinError::BadSynAckHmac { .. } => Some("MPJoinSynAckHMacFailure"),
            JoinError::BadAckHmac => Some("MPJoinAckHMacFailure"),
            _ => None,
        }
    }
}

/// The first MP_JOIN among a segment's kind-30 options (unparsable kind-30 items are
/// skipped, as Linux's parser ignores them); `Missing` if there is none.
pub fn find_join(extra: &ExtraOptions, step: &'static str) -> Result<MptcpOption, JoinError> {
    brisk_wire::mptcp::options(extra)
        .flatten()
        .find(|o| matches!(o, MptcpOption::MpJoin(_)))
        .ok_or(JoinError::Missing { step })
}

/// 160-bit comparison without an early exit, so the time taken does not tell a
/// forger how many leading bytes were right.
fn same_20(a: &[u8; 20], b: &[u8; 20]) -> bool {
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// What the peer told us in its half of the handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinPeer {
    /// The peer's address id for its end of the subflow.
    pub address_id: u8,
    /// The peer asks us to treat this subflow as a backup (flag B).
    pub backup: bool,
    pub nonce: u32,
}

/// The side that opens the subflow (A in RFC 8684 §3.2's figure).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinInitiator {
    local_key: u64,
    remote_key: u64,
    addr_id: u8,
    backup: bool,
    nonce: u32,
    peer: Option<JoinPeer>,
}

impl JoinInitiator {
    /// `addr_id` is the local address id of the subflow's source address, `nonce` a
    /// fresh random number from the caller's RNG.
    pub fn new(
        local_key: u64,
        remote_key: u64,
        addr_id: u8,
        backup: bool,
        nonce: u32,
    ) -> JoinInitiator {
        JoinInitiator {
            local_key,
            remote_key,
            addr_id,
            backup,
            nonce,
            peer: None,
        }
    }

    /// The SYN's MP_JOIN: the peer's token, our nonce, address id and backup flag.
    pub fn syn_option(&self) -> MptcpOption {
        MptcpOption::MpJoin(MpJoin::Syn {
            backup: self.backup,
            address_id: self.addr_id,
            token: crypto::token(self.remote_key),
            nonce: self.nonce,
        })
    }

    /// The SYN/ACK's MP_JOIN: checks the peer's truncated HMAC over both nonces
    /// (`subflow_thmac_valid`) and returns the third ACK's MP_JOIN with our 160-bit
    /// HMAC. A SYN/ACK retransmitted with the same nonce gives the same answer.
    pub fn on_synack(&mut self, opt: &MptcpOption) -> Result<MptcpOption, JoinError> {
        const STEP: &str = "SYN/ACK";
        let (backup, address_id, truncated_hmac, nonce) = match *opt {
            MptcpOption::MpJoin(MpJoin::SynAck {
                backup,
                address_id,
                truncated_hmac,
                nonce,
            }) => (backup, address_id, truncated_hmac, nonce),
            MptcpOption::MpJoin(_) => {
                return Err(JoinError::WrongForm {
                    step: STEP,
                    expected: "16",
                })
            }
            other => {
                return Err(JoinError::NotMpJoin {
                    step: STEP,
                    got: other.subtype(),
                })
            }
        };
        let want = crypto::join_synack_hmac(self.remote_key, self.local_key, nonce, self.nonce);
        if want != truncated_hmac {
            return Err(JoinError::BadSynAckHmac {
                got: truncated_hmac,
            });
        }
        self.peer = Some(JoinPeer {
            address_id,
            backup,
            nonce,
        });
        Ok(MptcpOption::MpJoin(MpJoin::Ack {
            hmac: crypto::join_ack_hmac(self.local_key, self.remote_key, self.nonce, nonce),
        }))
    }

    /// The peer's half, once its SYN/ACK verified.
    pub fn peer(&self) -> Option<JoinPeer> {
        self.peer
    }

    pub fn nonce(&self) -> u32 {
        self.nonce
    }

    pub fn address_id(&self) -> u8 {
        self.addr_id
    }

    pub fn backup(&self) -> bool {
        self.backup
    }
}

/// The side that accepts the subflow (B).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinResponder {
    local_key: u64,
    remote_key: u64,
    nonce: u32,
    addr_id: u8,
    backup: bool,
    peer: JoinPeer,
}

impl JoinResponder {
    /// A SYN with MP_JOIN arrived and the caller resolved its token to the connection
    /// whose keys are `local_key` (ours) and `remote_key`; `addr_id`, `backup` are our
    /// end's, `nonce` fresh. Returns the responder and the SYN/ACK's MP_JOIN
    /// (`subflow_token_join_request` + `subflow_init_req_cookie_join_save`'s HMAC).
    /// The token is checked again against `local_key`, so a caller that resolved the
    /// wrong connection is caught here.
    pub fn on_syn(
        local_key: u64,
        remote_key: u64,
        syn: &MptcpOption,
        addr_id: u8,
        backup: bool,
        nonce: u32,
    ) -> Result<(JoinResponder, MptcpOption), JoinError> {
        const STEP: &str = "SYN";
        let (peer_backup, peer_id, token, peer_nonce) = match *syn {
            MptcpOption::MpJoin(MpJoin::Syn {
                backup,
                address_id,
                token,
                nonce,
            }) => (backup, address_id, token, nonce),
            MptcpOption::MpJoin(_) => {
                return Err(JoinError::WrongForm {
                    step: STEP,
                    expected: "12",
                })
            }
            other => {
                return Err(JoinError::NotMpJoin {
                    step: STEP,
                    got: other.subtype(),
                })
            }
        };
        let expected = crypto::token(local_key);
        if token != expected {
            return Err(JoinError::TokenMismatch {
                got: token,
                expected,
            });
        }
        let r = JoinResponder {
            local_key,
            remote_key,
            nonce,
            addr_id,
            backup,
            peer: JoinPeer {
                address_id: peer_id,
                backup: peer_backup,
                nonce: peer_nonce,
            },
        };
        Ok((r, r.synack_option()))
    }

    /// The SYN/ACK's MP_JOIN (again, for a retransmitted SYN/ACK).
    pub fn synack_option(&self) -> MptcpOption {
        MptcpOption::MpJoin(MpJoin::SynAck {
            backup: self.backup,
            address_id: self.addr_id,
            truncated_hmac: crypto::join_synack_hmac(
                self.local_key,
                self.remote_key,
                self.nonce,
                self.peer.nonce,
            ),
            nonce: self.nonce,
        })
    }

    /// The third ACK's MP_JOIN: its 160-bit HMAC must be the initiator's
    /// (`subflow_hmac_valid`).
    pub fn on_ack(&self, opt: &MptcpOption) -> Result<(), JoinError> {
        const STEP: &str = "third ACK";
        let hmac = match opt {
            MptcpOption::MpJoin(MpJoin::Ack { hmac }) => hmac,
            MptcpOption::MpJoin(_) => {
                return Err(JoinError::WrongForm {
                    step: STEP,
                    expected: "24",
                })
            }
            other => {
                return Err(JoinError::NotMpJoin {
                    step: STEP,
                    got: other.subtype(),
                })
            }
        };
        let want =
            crypto::join_ack_hmac(self.remote_key, self.local_key, self.peer.nonce, self.nonce);
        if same_20(&want, hmac) {
            Ok(())
        } else {
            Err(JoinError::BadAckHmac)
        }
    }

    /// What the initiator said on its SYN.
    pub fn peer(&self) -> JoinPeer {
        self.peer
    }

    pub fn nonce(&self) -> u32 {
        self.nonce
    }
}

#[cfg(test)]
mod tests;

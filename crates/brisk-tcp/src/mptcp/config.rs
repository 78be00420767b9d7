//! A connection's MPTCP configuration (RFC 8684): whether it offers MP_CAPABLE, the
//! DSS checksum, the path manager, the scheduler and the data-level receive buffer.
//! `Config::mptcp` holds one; `None` is plain TCP. The coupled congestion controller
//! is the connection's `congestion.controller` (`lia`, `olia`, `balia`, `lia+lisa`):
//! uncoupled MPTCP is any single-path controller, each subflow running its own.
//!
//! Defaults follow this machine's Linux 6.18 (`sysctl net.mptcp`, `ip mptcp limits`):
//! checksums off (`checksum_enabled` 0), the in-kernel path manager in fullmesh with
//! `subflows 2 add_addr_accepted 0`, joins to the initial address and port allowed
//! (`allow_join_initial_addr_port` 1), and the default scheduler, which is minimum
//! RTT with opportunistic retransmission and penalisation (`linger`: Linux 6.x's
//! `mptcp_subflow_get_send`; `minrtt` is the seed's LowRTT).

use super::pm::{PmConfig, PmConfigError};
use super::recv::{RecvConfig, RecvConfigError};
use super::sched::SchedKind;
use std::fmt;

/// See the module doc.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MptcpConfig {
    /// Ask for DSS checksums in the MP_CAPABLE exchange (either side asking makes
    /// them used, RFC 8684 §3.1; Linux `net.mptcp.checksum_enabled`).
    pub checksum: bool,
    /// Accept MP_JOINs to the initial address and port (RFC 8684 §3.1's "C" flag is
    /// its inverse; Linux `net.mptcp.allow_join_initial_addr_port`).
    pub allow_join_initial_addr_port: bool,
    /// How subflows are made and announced, and the limits.
    pub pm: PmConfig,
    /// Which subflow takes the next data.
    pub scheduler: SchedKind,
    /// The data-level receive buffer (its capacity bounds the connection-level
    /// window, RFC 8684 §3.3.4). The connection uses the smaller of this capacity
    /// and its `Config::recv_buffer`: the data level is what the application reads,
    /// and `recv_buffer` is the socket's receive buffer (Linux: the MPTCP socket's
    /// `SO_RCVBUF`), as `send_buffer` sizes the data-level send buffer.
    pub recv: RecvConfig,
}

impl Default for MptcpConfig {
    fn default() -> Self {
        MptcpConfig {
            checksum: false,
            allow_join_initial_addr_port: true,
            pm: PmConfig::default(),
            scheduler: SchedKind::Linger,
            recv: RecvConfig::default(),
        }
    }
}

/// An [`MptcpConfig`] value out of range (each names its field and range).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MptcpConfigError {
    Pm(PmConfigError),
    Recv(RecvConfigError),
}

impl fmt::Display for MptcpConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MptcpConfigError::Pm(e) => e.fmt(f),
            MptcpConfigError::Recv(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for MptcpConfigError {}

impl MptcpConfig {
    pub fn validate(&self) -> Result<(), MptcpConfigError> {
        self.pm.validate().map_err(MptcpConfigError::Pm)?;
        self.recv.validate().map_err(MptcpConfigError::Recv)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mptcp::pm::PmMode;

    #[test]
    fn defaults_are_linux_and_valid() {
        let c = MptcpConfig::default();
        assert!(!c.checksum);
        assert_eq!(c.pm.limits.subflows, 2);
        assert_eq!(c.pm.limits.add_addr_accepted, 0);
        assert_eq!(c.pm.mode, PmMode::Fullmesh);
        c.validate().unwrap();
    }

    #[test]
    fn out_of_range_values_name_their_field() {
        let mut c = MptcpConfig::default();
        c.pm.mode = PmMode::NDiffPorts { n: 0 };
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("ndiffports") && e.contains("1..="), "{e}");
        let mut c = MptcpConfig::default();
        c.recv.wscale = 15;
        let e = c.validate().unwrap_err().to_string();
        assert!(e.contains("wscale") && e.contains("0..=14"), "{e}");
    }
}

//! The DSS checksum (RFC 8684 §3.3.1): the Internet checksum over a pseudo-header of
//! the 64-bit data sequence number, the 32-bit relative subflow sequence number, the
//! 16-bit data-level length and 16 zero bits, followed by the mapped payload.
//! Linux's `__mptcp_make_csum` (net/mptcp/options.c): the pseudo-header always holds
//! the 64-bit DSN, whichever width the option carries.
//!
//! A mapping may span several segments, so the payload is added in chunks of any
//! length ([`Accumulator`] handles odd offsets).

use crate::checksum::Accumulator;

/// A DSS checksum in progress: the pseudo-header, then the payload in order.
#[derive(Clone, Copy, Debug)]
pub struct DssChecksum {
    acc: Accumulator,
}

impl DssChecksum {
    /// Starts with the pseudo-header of the mapping (`dsn` expanded to 64 bits,
    /// `subflow_seq` relative to the subflow's ISN, `data_len` as in the option).
    pub fn new(dsn: u64, subflow_seq: u32, data_len: u16) -> DssChecksum {
        let mut acc = Accumulator::new();
        acc.add_u32((dsn >> 32) as u32);
        acc.add_u32(dsn as u32);
        acc.add_u32(subflow_seq);
        acc.add_u16(data_len);
        acc.add_u16(0); // the checksum field, zero while computing
        DssChecksum { acc }
    }

    /// Adds the next payload bytes the mapping covers.
    pub fn add(&mut self, payload: &[u8]) {
        self.acc.add_bytes(payload);
    }

    /// The value for the option's checksum field.
    pub fn checksum(self) -> u16 {
        self.acc.checksum()
    }

    /// True when `received` is the checksum of what was added (§3.3.1: the sum with
    /// the received checksum in its field is all ones).
    pub fn verifies(self, received: u16) -> bool {
        // Added as a word at an even offset (where the field sits in the pseudo-header);
        // the end-around carry makes the order of the words irrelevant.
        let t = u32::from(self.acc.sum()) + u32::from(received);
        (t & 0xffff) + (t >> 16) == 0xffff
    }
}

/// The DSS checksum of a mapping whose payload is all in `payload`.
pub fn dss_checksum(dsn: u64, subflow_seq: u32, data_len: u16, payload: &[u8]) -> u16 {
    let mut c = DssChecksum::new(dsn, subflow_seq, data_len);
    c.add(payload);
    c.checksum()
}

//! The MPTCP option (TCP option kind 30, RFC 8684, version 1 only), sans-IO.
//!
//! brisk-wire keeps every kind-30 item raw in [`ExtraOptions`] (a segment may carry
//! several: Linux sends DSS with ADD_ADDR or REMOVE_ADDR, MP_PRIO, MP_TCPRST with
//! MP_FASTCLOSE). This module types them on top: [`options`] iterates a segment's
//! kind-30 items as [`MptcpOption`]s, [`push`] adds one to a segment being built,
//! [`crypto`] derives tokens, IDSNs and HMACs, [`checksum`] the DSS checksum.
//! Nothing here keeps state: the connection checks that a form fits its segment
//! ([`MptcpOption::fits_segment`]) and what an option means.
//!
//! # Option space
//! TCP has 40 bytes of options per segment, shared with MSS, window scale,
//! SACK-permitted, timestamps (10 bytes, 12 aligned) and SACK blocks (2 + 8 per
//! block). What Linux does (`tcp_syn_options`, `tcp_established_options` in
//! net/ipv4/tcp_output.c, `mptcp_established_options` in net/mptcp/options.c), and
//! brisk-wire with it:
//! - SYN: MSS 4 + SACK-permitted/timestamps 12 + window scale 4 = 20, so
//!   MP_CAPABLE (4) or MP_JOIN (12) always fits; the SYN/ACK's MP_CAPABLE (12) and
//!   MP_JOIN (16) likewise.
//! - Established, timestamps on: 28 bytes remain, exactly a DSS with a 64-bit data
//!   ACK, a 64-bit mapping and a checksum (4 + 8 + 14 + 2). Linux always sends 64-bit
//!   DSNs and data ACKs of 32 or 64 bits (both seen in one 6.18 capture), so a data
//!   segment's DSS takes 24 or 28 bytes aligned.
//! - MPTCP before SACK: Linux sizes the MPTCP options first and gives SACK blocks
//!   what is left (none beside timestamps and a full DSS; one beside a DSS with only
//!   a data ACK). brisk-wire's emitter does the same: extras (kind 30 among them) get
//!   their room before SACK blocks, which are cut to fit, and are written after them,
//!   as Linux writes MPTCP last in `tcp_options_write`; extras that do not fit beside
//!   MSS/window scale/timestamps are left out whole.
//! - ADD_ADDR is long (16 to 30 bytes): Linux sends it on a pure ACK in place of
//!   the DSS ("drop other suboptions") and not at all on a segment where it does not
//!   fit; it keeps it for a later segment. An IPv6 ADD_ADDR with port and HMAC (30,
//!   32 aligned) cannot share a segment with timestamps (12).
//! - Padding: Linux writes each MPTCP option from a 4-byte boundary and fills its
//!   last word with NOPs (`mptcp_write_options`): MP_PRIO (3) is followed by one NOP,
//!   a 22-byte MP_CAPABLE or DSS (no checksum) and a 26-byte DSS by two. brisk-wire
//!   pads every extra the same way, after it, so the option bytes equal Linux's.
//! - On a RST: MP_FASTCLOSE or MP_FAIL (12) and MP_TCPRST (4).
//!
//! # Departures from Linux
//! - REMOVE_ADDR holds at most 8 ids, as Linux's parser (`MPTCP_RM_IDS_MAX`); the
//!   RFC allows as many as the option space holds.
//! - An MP_CAPABLE with the extensibility bit, no HMAC-SHA256 bit or another
//!   algorithm bit is an error, where Linux ignores the option silently; the caller
//!   falls back in both cases.
//! - Parsing does not look at the segment's flags; Linux picks MP_CAPABLE's
//!   expected length from SYN/ACK/payload and ignores MP_TCPRST without RST.
//!   [`MptcpOption::fits_segment`] is that check, for the caller.

pub mod checksum;
pub mod crypto;
mod option;

pub use option::{
    AddAddr, DataSeq, Dss, Mapping, MpCapable, MpCapableForm, MpJoin, MpTcpRst, MptcpError,
    MptcpOption, RemoveAddr, ResetReason, Subtype, KIND, MAX_DATA_LEN, MAX_REMOVE_IDS, VERSION,
};

use crate::{ExtraOptionError, ExtraOptions};

/// Every kind-30 item of a segment's extra options, in arrival order, parsed.
pub fn options(extra: &ExtraOptions) -> impl Iterator<Item = Result<MptcpOption, MptcpError>> + '_ {
    extra
        .iter()
        .filter(|&(kind, _)| kind == KIND)
        .map(|(_, data)| MptcpOption::parse(data))
}

/// Appends `opt` to a segment's extra options; refused when it does not fit (see the
/// module's "Option space").
pub fn push(extra: &mut ExtraOptions, opt: &MptcpOption) -> Result<(), ExtraOptionError> {
    let mut data = [0u8; MAX_DATA_LEN];
    let n = opt.data_len();
    // `data` holds the longest option, so emitting into it cannot fail.
    let _ = opt.emit_data(&mut data);
    extra.push(KIND, &data[..n])
}

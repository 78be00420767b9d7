//! A middlebox that strips MPTCP options (TCP option kind 30, RFC 8684 §3) from the
//! packets of one path direction, to test the fallback to plain TCP that RFC 8684
//! §3.7 prescribes: a SYN or SYN-ACK without MP_CAPABLE makes the connection plain
//! TCP, a join without MP_JOIN is refused, data without a DSS mapping falls back or
//! resets the subflow.
//!
//! Each kind-30 option is overwritten by NOPs (kind 1) of the same length, so the
//! header length, the other options and the payload stay where they were — what the
//! option-stripping middleboxes measured by Honda et al. ("Is it still possible to
//! extend TCP?", IMC 2011) do — and the TCP checksum is updated incrementally
//! (RFC 1624 eqn. 3, per changed 16-bit word), so a packet that arrived with a good
//! checksum leaves with a good one and a corrupted one stays corrupted. Which packets
//! are touched is [`StripPackets`]. A packet that is not TCP, an IPv4 fragment after
//! the first, an IPv6 packet with extension headers before TCP, or a header too short
//! for what it declares passes unchanged; an option walk stops at a malformed length
//! (the rest of the header is left alone, as a middlebox that cannot parse it would).
//! No allocation: the packet is edited in place.

use serde::{Deserialize, Serialize};

use brisk_wire::checksum::update_u16;

/// The TCP option kind of every MPTCP option (RFC 8684 §3, IANA).
pub const MPTCP_OPTION_KIND: u8 = 30;
const NOP: u8 = 1;
const EOL: u8 = 0;
const TCP_SYN: u8 = 0x02;
const TCP_CHECKSUM_AT: usize = 16;
const TCP_MIN_HEADER: usize = 20;

/// Which packets of the direction lose their MPTCP options.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StripPackets {
    /// Every TCP segment.
    #[default]
    All,
    /// Only segments with SYN set (SYN and SYN-ACK: MP_CAPABLE or MP_JOIN in the
    /// handshake).
    Syn,
    /// Only segments without SYN that carry payload (their DSS mappings).
    Data,
}

impl StripPackets {
    fn selects(self, flags: u8, payload: usize) -> bool {
        let syn = flags & TCP_SYN != 0;
        match self {
            StripPackets::All => true,
            StripPackets::Syn => syn,
            StripPackets::Data => !syn && payload > 0,
        }
    }
}

/// What [`strip`] did to one packet.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stripped {
    /// MPTCP options overwritten (0: the packet is unchanged).
    pub options: u32,
    /// Bytes of option overwritten.
    pub bytes: u32,
}

/// Where the TCP header of `pkt` starts and where the segment ends (the IP length,
/// bounded by the buffer); `None` for anything this middlebox does not edit.
fn tcp_bounds(pkt: &[u8]) -> Option<(usize, usize)> {
    match pkt.first()? >> 4 {
        4 => {
            let ihl = usize::from(pkt[0] & 0x0f) * 4;
            if ihl < 20 || pkt.len() < ihl {
                return None;
            }
            let frag = u16::from_be_bytes([pkt[6], pkt[7]]) & 0x1fff;
            let total = usize::from(u16::from_be_bytes([pkt[2], pkt[3]]));
            (frag == 0 && pkt[9] == 6).then_some((ihl, total.min(pkt.len())))
        }
        6 if pkt.len() >= 40 => {
            let payload = usize::from(u16::from_be_bytes([pkt[4], pkt[5]]));
            (pkt[6] == 6).then_some((40, (40 + payload).min(pkt.len())))
        }
        _ => None,
    }
}

/// Overwrites the MPTCP options of `pkt` (a raw IPv4 or IPv6 packet) with NOPs if
/// `which` selects it, fixing the TCP checksum; see the module docs.
pub fn strip(pkt: &mut [u8], which: StripPackets) -> Stripped {
    let mut out = Stripped::default();
    let Some((tcp, end)) = tcp_bounds(pkt) else {
        return out;
    };
    let Some(seg) = end.checked_sub(tcp).filter(|s| *s >= TCP_MIN_HEADER) else {
        return out;
    };
    let doff = usize::from(pkt[tcp + 12] >> 4) * 4;
    if doff < TCP_MIN_HEADER || doff > seg {
        return out;
    }
    if !which.selects(pkt[tcp + 13], seg - doff) {
        return out;
    }
    let opts_end = tcp + doff;
    let mut check =
        u16::from_be_bytes([pkt[tcp + TCP_CHECKSUM_AT], pkt[tcp + TCP_CHECKSUM_AT + 1]]);
    let mut i = tcp + TCP_MIN_HEADER;
    while i < opts_end {
        match pkt[i] {
            EOL => break,
            NOP => i += 1,
            kind => {
                let Some(&len) = pkt.get(i + 1).filter(|_| i + 1 < opts_end) else {
                    break;
                };
                let len = usize::from(len);
                if len < 2 || i + len > opts_end {
                    break;
                }
                if kind == MPTCP_OPTION_KIND {
                    check = overwrite(pkt, tcp, i, len, check);
                    out.options += 1;
                    out.bytes += len as u32;
                }
                i += len;
            }
        }
    }
    if out.options > 0 {
        pkt[tcp + TCP_CHECKSUM_AT..tcp + TCP_CHECKSUM_AT + 2].copy_from_slice(&check.to_be_bytes());
    }
    out
}

/// Sets `pkt[at..at + len]` to NOPs and returns the checksum updated for every
/// 16-bit word (counted from the TCP header, which starts at an even offset) that
/// changed. The words lie inside the TCP header (its length is a multiple of 4).
fn overwrite(pkt: &mut [u8], tcp: usize, at: usize, len: usize, mut check: u16) -> u16 {
    let first = tcp + ((at - tcp) & !1);
    let mut w = first;
    while w < at + len {
        let old = u16::from_be_bytes([pkt[w], pkt[w + 1]]);
        for (i, byte) in pkt[w..w + 2].iter_mut().enumerate() {
            if (at..at + len).contains(&(w + i)) {
                *byte = NOP;
            }
        }
        let new = u16::from_be_bytes([pkt[w], pkt[w + 1]]);
        check = update_u16(check, old, new);
        w += 2;
    }
    check
}

#[cfg(test)]
#[path = "mptcp_strip_tests.rs"]
mod tests;

//! The MPTCP option's subtypes (RFC 8684 §3, version 1): typed values, `parse` from
//! an option's data bytes (what follows the kind and length bytes) and `emit` into
//! a caller's buffer. The lengths and flag rules are Linux's
//! (`mptcp_parse_option` and `mptcp_write_options` in net/mptcp/options.c): an
//! option Linux would ignore is a typed error here, so a caller that drops errors
//! behaves as Linux does.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// TCP option kind of MPTCP (RFC 8684 §8).
pub const KIND: u8 = 30;
/// The only MPTCP version brisk speaks (RFC 8684).
pub const VERSION: u8 = 1;
/// Longest option data any subtype has (ADD_ADDR, IPv6, port and HMAC: 30 - 2).
pub const MAX_DATA_LEN: usize = 28;
/// Most address ids one REMOVE_ADDR carries (Linux's `MPTCP_RM_IDS_MAX`).
pub const MAX_REMOVE_IDS: usize = 8;

// MP_CAPABLE flag bits (RFC 8684 §3.1): A checksum required, B extensibility,
// C no further subflows to this address (Linux: "deny join id 0"), D-G other
// crypto algorithms, H HMAC-SHA256.
const CAP_A: u8 = 0x80;
const CAP_B: u8 = 0x40;
const CAP_C: u8 = 0x20;
const CAP_ALGOS: u8 = 0x1f;
const CAP_H: u8 = 0x01;
// DSS flag bits (RFC 8684 §3.3): F DATA_FIN, m DSN is 8 bytes, M mapping present,
// a data ACK is 8 bytes, A data ACK present.
const DSS_F: u8 = 0x10;
const DSS_M8: u8 = 0x08;
const DSS_M: u8 = 0x04;
const DSS_A8: u8 = 0x02;
const DSS_A: u8 = 0x01;

/// The nine subtypes of RFC 8684 (§8, "MPTCP Option Subtypes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Subtype {
    MpCapable = 0,
    MpJoin = 1,
    Dss = 2,
    AddAddr = 3,
    RemoveAddr = 4,
    MpPrio = 5,
    MpFail = 6,
    MpFastclose = 7,
    MpTcpRst = 8,
}

impl Subtype {
    fn from_nibble(n: u8) -> Option<Subtype> {
        Some(match n {
            0 => Subtype::MpCapable,
            1 => Subtype::MpJoin,
            2 => Subtype::Dss,
            3 => Subtype::AddAddr,
            4 => Subtype::RemoveAddr,
            5 => Subtype::MpPrio,
            6 => Subtype::MpFail,
            7 => Subtype::MpFastclose,
            8 => Subtype::MpTcpRst,
            _ => return None,
        })
    }

    /// The RFC's name.
    pub fn name(self) -> &'static str {
        match self {
            Subtype::MpCapable => "MP_CAPABLE",
            Subtype::MpJoin => "MP_JOIN",
            Subtype::Dss => "DSS",
            Subtype::AddAddr => "ADD_ADDR",
            Subtype::RemoveAddr => "REMOVE_ADDR",
            Subtype::MpPrio => "MP_PRIO",
            Subtype::MpFail => "MP_FAIL",
            Subtype::MpFastclose => "MP_FASTCLOSE",
            Subtype::MpTcpRst => "MP_TCPRST",
        }
    }
}

impl std::fmt::Display for Subtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// Why an MPTCP option did not parse or emit. Lengths are the option's length byte
/// (kind and length included), as RFC 8684's figures give them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum MptcpError {
    #[error("MPTCP option of length 2 has no subtype (length 3 to 30)")]
    Empty,
    #[error("MPTCP subtype {0} is not defined (0 to 8)")]
    UnknownSubtype(u8),
    #[error("MPTCP {subtype} option length {len} is not one of {expected}")]
    BadLength {
        subtype: Subtype,
        len: usize,
        expected: &'static str,
    },
    /// An MP_CAPABLE of another version: the caller falls back to plain TCP (RFC 8684
    /// §3.1). `len` tells a SYN (4) from the rest: Linux answers a SYN of a higher
    /// version with version 1, "gentle vs future versions".
    #[error("MP_CAPABLE version {version} (length {len}): only version 1 is supported")]
    UnsupportedVersion { version: u8, len: usize },
    /// H (HMAC-SHA256) clear, or one of the algorithm bits D-G set: Linux ignores the
    /// option (`mptcp_cap_flag_sha256`), so the connection falls back.
    #[error(
        "MP_CAPABLE flags {flags:#04x}: the crypto bits D-H must be exactly H (HMAC-SHA256, 0x01)"
    )]
    UnsupportedAlgorithm { flags: u8 },
    /// B (extensibility) set, which RFC 8684 leaves for a future specification.
    #[error("MP_CAPABLE flags {flags:#04x}: extensibility bit B (0x40) must be 0")]
    Extensibility { flags: u8 },
    #[error("REMOVE_ADDR with {count} address ids (1 to 8)")]
    RemoveAddrCount { count: usize },
    #[error("buffer of {have} bytes for an MPTCP option of {need} bytes")]
    BufferTooSmall { need: usize, have: usize },
}

/// An MPTCP option, one of the nine subtypes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MptcpOption {
    MpCapable(MpCapable),
    MpJoin(MpJoin),
    Dss(Dss),
    AddAddr(AddAddr),
    RemoveAddr(RemoveAddr),
    /// MP_PRIO (§3.3.8): the sender's subflow becomes backup (`true`) or regular.
    MpPrio {
        backup: bool,
    },
    /// MP_FAIL (§3.7): the 64-bit data sequence number where the checksum failed.
    MpFail {
        dsn: u64,
    },
    /// MP_FASTCLOSE (§3.5): the receiver's key, proving the sender knows it.
    MpFastclose {
        receiver_key: u64,
    },
    MpTcpRst(MpTcpRst),
}

/// MP_CAPABLE (§3.1), version 1, HMAC-SHA256.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpCapable {
    /// Flag A: the sender requires the DSS checksum.
    pub checksum_required: bool,
    /// Flag C: do not open subflows to the address this option came from.
    pub deny_join_id0: bool,
    pub form: MpCapableForm,
}

/// Which of the four MP_CAPABLE layouts; each has its own length.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpCapableForm {
    /// On the SYN: no key (length 4).
    Syn,
    /// On the SYN/ACK: the server's key (length 12).
    SynAck { sender_key: u64 },
    /// On the third ACK: both keys (length 20).
    Ack { sender_key: u64, receiver_key: u64 },
    /// On the first data when the third ACK may have been lost: both keys, the
    /// data-level length of the first mapping and, when checksums are in use, its
    /// checksum (length 22, or 24 with the checksum).
    AckData {
        sender_key: u64,
        receiver_key: u64,
        data_len: u16,
        checksum: Option<u16>,
    },
}

/// MP_JOIN (§3.2): one layout per handshake segment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MpJoin {
    /// On the SYN (length 12): the receiver's token and the sender's nonce.
    Syn {
        backup: bool,
        address_id: u8,
        token: u32,
        nonce: u32,
    },
    /// On the SYN/ACK (length 16): the leftmost 64 bits of the sender's HMAC.
    SynAck {
        backup: bool,
        address_id: u8,
        truncated_hmac: u64,
        nonce: u32,
    },
    /// On the third ACK (length 24): the leftmost 160 bits of the sender's HMAC.
    Ack { hmac: [u8; 20] },
}

/// A 32- or 64-bit data-level sequence number or data ACK (DSS flags `a`, `m`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DataSeq {
    Bits32(u32),
    Bits64(u64),
}

impl DataSeq {
    fn wire_len(self) -> usize {
        match self {
            DataSeq::Bits32(_) => 4,
            DataSeq::Bits64(_) => 8,
        }
    }

    /// The value as sent (a 32-bit one is the low half of the 64-bit number: the
    /// receiver expands it, as Linux's `__mptcp_expand_seq`).
    pub fn value(self) -> u64 {
        match self {
            DataSeq::Bits32(v) => u64::from(v),
            DataSeq::Bits64(v) => v,
        }
    }
}

/// DSS (§3.3): a data ACK, a mapping, DATA_FIN, in any combination.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Dss {
    /// Flag A (present) and `a` (8 bytes).
    pub data_ack: Option<DataSeq>,
    /// Flag M (present) and `m` (8-byte DSN).
    pub mapping: Option<Mapping>,
    /// Flag F: the mapping's last data-level byte is the DATA_FIN (§3.3.3).
    pub data_fin: bool,
}

/// A data sequence mapping (§3.3.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub dsn: DataSeq,
    /// Relative to the subflow's initial sequence number.
    pub subflow_seq: u32,
    /// Bytes mapped, DATA_FIN included; 0 is the infinite mapping (§3.7).
    pub data_len: u16,
    /// Present exactly when checksums were negotiated.
    pub checksum: Option<u16>,
}

impl Mapping {
    /// Data-level length 0: the "infinite mapping" of fallback (§3.7).
    pub fn is_infinite(&self) -> bool {
        self.data_len == 0
    }
}

/// ADD_ADDR (§3.4.1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AddAddr {
    pub address_id: u8,
    /// IPv4 or IPv6, told apart by the option's length.
    pub addr: IpAddr,
    pub port: Option<u16>,
    /// The rightmost 64 bits of the sender's HMAC; `None` is the echo (flag E), which
    /// carries none.
    pub hmac: Option<u64>,
}

impl AddAddr {
    /// Flag E: this acknowledges an ADD_ADDR received.
    pub fn is_echo(&self) -> bool {
        self.hmac.is_none()
    }
}

/// REMOVE_ADDR (§3.4.2): 1 to [`MAX_REMOVE_IDS`] address ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RemoveAddr {
    ids: [u8; MAX_REMOVE_IDS],
    len: u8,
}

impl RemoveAddr {
    pub fn new(ids: &[u8]) -> Result<RemoveAddr, MptcpError> {
        if ids.is_empty() || ids.len() > MAX_REMOVE_IDS {
            return Err(MptcpError::RemoveAddrCount { count: ids.len() });
        }
        let mut r = RemoveAddr {
            ids: [0; MAX_REMOVE_IDS],
            len: ids.len() as u8,
        };
        r.ids[..ids.len()].copy_from_slice(ids);
        Ok(r)
    }

    pub fn ids(&self) -> &[u8] {
        &self.ids[..usize::from(self.len)]
    }
}

/// MP_TCPRST (§3.6), carried on a RST.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MpTcpRst {
    /// Flag T: the error is temporary; the peer may open the subflow again.
    pub transient: bool,
    pub reason: ResetReason,
}

/// MP_TCPRST reason codes (RFC 8684 §3.6, IANA "MPTCP TCPRST Reason Codes").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ResetReason {
    Unspecified,
    MptcpError,
    LackOfResources,
    AdministrativelyProhibited,
    TooMuchOutstandingData,
    UnacceptablePerformance,
    MiddleboxInterference,
    /// A code RFC 8684 does not define (7 to 255); kept so it can be counted.
    Other(u8),
}

impl ResetReason {
    pub fn from_code(code: u8) -> ResetReason {
        match code {
            0 => ResetReason::Unspecified,
            1 => ResetReason::MptcpError,
            2 => ResetReason::LackOfResources,
            3 => ResetReason::AdministrativelyProhibited,
            4 => ResetReason::TooMuchOutstandingData,
            5 => ResetReason::UnacceptablePerformance,
            6 => ResetReason::MiddleboxInterference,
            c => ResetReason::Other(c),
        }
    }

    pub fn code(self) -> u8 {
        match self {
            ResetReason::Unspecified => 0,
            ResetReason::MptcpError => 1,
            ResetReason::LackOfResources => 2,
            ResetReason::AdministrativelyProhibited => 3,
            ResetReason::TooMuchOutstandingData => 4,
            ResetReason::UnacceptablePerformance => 5,
            ResetReason::MiddleboxInterference => 6,
            ResetReason::Other(c) => c,
        }
    }
}

/// Reads big-endian integers from a slice whose length the caller has checked.
struct Reader<'a> {
    b: &'a [u8],
    at: usize,
}

impl Reader<'_> {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        // Lengths are checked against the layout before any read; a short slice would
        // be a bug in that check, and reads zeros rather than panicking.
        if let Some(s) = self.b.get(self.at..self.at + N) {
            out.copy_from_slice(s);
        }
        self.at += N;
        out
    }
    fn u8(&mut self) -> u8 {
        self.bytes::<1>()[0]
    }
    fn u16(&mut self) -> u16 {
        u16::from_be_bytes(self.bytes())
    }
    fn u32(&mut self) -> u32 {
        u32::from_be_bytes(self.bytes())
    }
    fn u64(&mut self) -> u64 {
        u64::from_be_bytes(self.bytes())
    }
}

/// Writes into a slice of exactly the option's data length (checked by `emit`).
struct Writer<'a> {
    b: &'a mut [u8],
    at: usize,
}

impl Writer<'_> {
    fn put(&mut self, s: &[u8]) {
        self.b[self.at..self.at + s.len()].copy_from_slice(s);
        self.at += s.len();
    }
}

impl MptcpOption {
    /// Parses one MPTCP option from its data: the bytes after kind 30 and the length
    /// byte (so the option's length is `data.len() + 2`). Never panics.
    pub fn parse(data: &[u8]) -> Result<MptcpOption, MptcpError> {
        let len = data.len() + 2;
        let first = *data.first().ok_or(MptcpError::Empty)?;
        let subtype =
            Subtype::from_nibble(first >> 4).ok_or(MptcpError::UnknownSubtype(first >> 4))?;
        let bad = |expected| MptcpError::BadLength {
            subtype,
            len,
            expected,
        };
        let mut r = Reader { b: data, at: 1 };
        Ok(match subtype {
            Subtype::MpCapable => {
                // Version first: an MP_CAPABLE of another version is a fallback signal
                // whatever its length (v0's SYN was 12 bytes).
                let version = first & 0x0f;
                if version != VERSION {
                    return Err(MptcpError::UnsupportedVersion { version, len });
                }
                if !matches!(len, 4 | 12 | 20 | 22 | 24) {
                    return Err(bad(
                        "4 (SYN), 12 (SYN/ACK), 20 (ACK), 22 or 24 (ACK with data)",
                    ));
                }
                let flags = r.u8();
                if flags & CAP_ALGOS != CAP_H {
                    return Err(MptcpError::UnsupportedAlgorithm { flags });
                }
                if flags & CAP_B != 0 {
                    return Err(MptcpError::Extensibility { flags });
                }
                let form = match len {
                    4 => MpCapableForm::Syn,
                    12 => MpCapableForm::SynAck {
                        sender_key: r.u64(),
                    },
                    20 => MpCapableForm::Ack {
                        sender_key: r.u64(),
                        receiver_key: r.u64(),
                    },
                    _ => MpCapableForm::AckData {
                        sender_key: r.u64(),
                        receiver_key: r.u64(),
                        data_len: r.u16(),
                        checksum: (len == 24).then(|| r.u16()),
                    },
                };
                MptcpOption::MpCapable(MpCapable {
                    checksum_required: flags & CAP_A != 0,
                    deny_join_id0: flags & CAP_C != 0,
                    form,
                })
            }
            Subtype::MpJoin => {
                let backup = first & 0x01 != 0;
                MptcpOption::MpJoin(match len {
                    12 => MpJoin::Syn {
                        backup,
                        address_id: r.u8(),
                        token: r.u32(),
                        nonce: r.u32(),
                    },
                    16 => MpJoin::SynAck {
                        backup,
                        address_id: r.u8(),
                        truncated_hmac: r.u64(),
                        nonce: r.u32(),
                    },
                    24 => {
                        r.u8(); // reserved
                        MpJoin::Ack { hmac: r.bytes() }
                    }
                    _ => return Err(bad("12 (SYN), 16 (SYN/ACK) or 24 (third ACK)")),
                })
            }
            Subtype::Dss => {
                let flags = *data.get(1).ok_or(bad(DSS_LENGTHS))?;
                r.u8();
                let ack_len = match (flags & DSS_A != 0, flags & DSS_A8 != 0) {
                    (false, _) => 0,
                    (true, false) => 4,
                    (true, true) => 8,
                };
                let map_len = match (flags & DSS_M != 0, flags & DSS_M8 != 0) {
                    (false, _) => 0,
                    (true, false) => 10,
                    (true, true) => 14,
                };
                let base = 4 + ack_len + map_len;
                // The checksum belongs to the mapping: without one, no room for it.
                let with_checksum = map_len > 0 && len == base + 2;
                if len != base && !with_checksum {
                    return Err(bad(DSS_LENGTHS));
                }
                let data_ack = match ack_len {
                    0 => None,
                    4 => Some(DataSeq::Bits32(r.u32())),
                    _ => Some(DataSeq::Bits64(r.u64())),
                };
                let mapping = (map_len > 0).then(|| {
                    let dsn = if map_len == 10 {
                        DataSeq::Bits32(r.u32())
                    } else {
                        DataSeq::Bits64(r.u64())
                    };
                    Mapping {
                        dsn,
                        subflow_seq: r.u32(),
                        data_len: r.u16(),
                        checksum: with_checksum.then(|| r.u16()),
                    }
                });
                MptcpOption::Dss(Dss {
                    data_ack,
                    mapping,
                    data_fin: flags & DSS_F != 0,
                })
            }
            Subtype::AddAddr => {
                let echo = first & 0x01 != 0;
                let (v6, port) = match (echo, len) {
                    (true, 8) | (false, 16) => (false, false),
                    (true, 10) | (false, 18) => (false, true),
                    (true, 20) | (false, 28) => (true, false),
                    (true, 22) | (false, 30) => (true, true),
                    (true, _) => return Err(bad("8, 10 (IPv4) or 20, 22 (IPv6) with echo (E=1)")),
                    (false, _) => {
                        return Err(bad("16, 18 (IPv4) or 28, 30 (IPv6) with HMAC (E=0)"))
                    }
                };
                let address_id = r.u8();
                let addr = if v6 {
                    IpAddr::V6(Ipv6Addr::from(r.bytes::<16>()))
                } else {
                    IpAddr::V4(Ipv4Addr::from(r.bytes::<4>()))
                };
                MptcpOption::AddAddr(AddAddr {
                    address_id,
                    addr,
                    port: port.then(|| r.u16()),
                    hmac: (!echo).then(|| r.u64()),
                })
            }
            Subtype::RemoveAddr => {
                let ids = &data[1..];
                if ids.is_empty() || ids.len() > MAX_REMOVE_IDS {
                    return Err(bad("4 to 11 (1 to 8 address ids)"));
                }
                MptcpOption::RemoveAddr(RemoveAddr::new(ids)?)
            }
            Subtype::MpPrio => {
                // RFC 6824's MP_PRIO had an optional address id (length 4); RFC 8684
                // removed it and Linux accepts only 3.
                if len != 3 {
                    return Err(bad("3"));
                }
                MptcpOption::MpPrio {
                    backup: first & 0x01 != 0,
                }
            }
            Subtype::MpFail | Subtype::MpFastclose => {
                if len != 12 {
                    return Err(bad("12"));
                }
                r.u8(); // reserved
                let v = r.u64();
                if subtype == Subtype::MpFail {
                    MptcpOption::MpFail { dsn: v }
                } else {
                    MptcpOption::MpFastclose { receiver_key: v }
                }
            }
            Subtype::MpTcpRst => {
                if len != 4 {
                    return Err(bad("4"));
                }
                // Flags U, V, W are reserved and ignored on receipt.
                MptcpOption::MpTcpRst(MpTcpRst {
                    transient: first & 0x01 != 0,
                    reason: ResetReason::from_code(r.u8()),
                })
            }
        })
    }

    pub fn subtype(&self) -> Subtype {
        match self {
            MptcpOption::MpCapable(_) => Subtype::MpCapable,
            MptcpOption::MpJoin(_) => Subtype::MpJoin,
            MptcpOption::Dss(_) => Subtype::Dss,
            MptcpOption::AddAddr(_) => Subtype::AddAddr,
            MptcpOption::RemoveAddr(_) => Subtype::RemoveAddr,
            MptcpOption::MpPrio { .. } => Subtype::MpPrio,
            MptcpOption::MpFail { .. } => Subtype::MpFail,
            MptcpOption::MpFastclose { .. } => Subtype::MpFastclose,
            MptcpOption::MpTcpRst(_) => Subtype::MpTcpRst,
        }
    }

    /// The option's length byte: kind, length and data (before any NOP padding).
    pub fn len(&self) -> usize {
        match self {
            MptcpOption::MpCapable(c) => match c.form {
                MpCapableForm::Syn => 4,
                MpCapableForm::SynAck { .. } => 12,
                MpCapableForm::Ack { .. } => 20,
                MpCapableForm::AckData { checksum, .. } => 22 + 2 * usize::from(checksum.is_some()),
            },
            MptcpOption::MpJoin(MpJoin::Syn { .. }) => 12,
            MptcpOption::MpJoin(MpJoin::SynAck { .. }) => 16,
            MptcpOption::MpJoin(MpJoin::Ack { .. }) => 24,
            MptcpOption::Dss(d) => {
                4 + d.data_ack.map_or(0, DataSeq::wire_len)
                    + d.mapping.map_or(0, |m| {
                        6 + m.dsn.wire_len() + 2 * usize::from(m.checksum.is_some())
                    })
            }
            MptcpOption::AddAddr(a) => {
                4 + match a.addr {
                    IpAddr::V4(_) => 4,
                    IpAddr::V6(_) => 16,
                } + 2 * usize::from(a.port.is_some())
                    + 8 * usize::from(a.hmac.is_some())
            }
            MptcpOption::RemoveAddr(r) => 3 + r.ids().len(),
            MptcpOption::MpPrio { .. } => 3,
            MptcpOption::MpFail { .. } | MptcpOption::MpFastclose { .. } => 12,
            MptcpOption::MpTcpRst(_) => 4,
        }
    }

    /// Never true (every option has at least its subtype byte); for clippy's
    /// `len_without_is_empty`.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Bytes [`emit_data`](Self::emit_data) writes: `len() - 2`.
    pub fn data_len(&self) -> usize {
        self.len() - 2
    }

    /// Bytes this option takes in the header once NOP-padded to 4 (as
    /// [`crate::ExtraOptions`] emits it).
    pub fn aligned_len(&self) -> usize {
        self.len().div_ceil(4) * 4
    }

    /// Writes the whole option (kind 30, length, data) at the start of `buf`; returns
    /// the bytes written, [`len`](Self::len).
    pub fn emit(&self, buf: &mut [u8]) -> Result<usize, MptcpError> {
        let len = self.len();
        if buf.len() < len {
            return Err(MptcpError::BufferTooSmall {
                need: len,
                have: buf.len(),
            });
        }
        buf[0] = KIND;
        buf[1] = len as u8;
        self.emit_data(&mut buf[2..len])?;
        Ok(len)
    }

    /// Writes the option's data (what [`parse`](Self::parse) reads) at the start of
    /// `buf`; returns the bytes written, [`data_len`](Self::data_len). Reserved bits
    /// are written as zero (RFC 8684 §3).
    pub fn emit_data(&self, buf: &mut [u8]) -> Result<usize, MptcpError> {
        let n = self.data_len();
        let Some(b) = buf.get_mut(..n) else {
            return Err(MptcpError::BufferTooSmall {
                need: n,
                have: buf.len(),
            });
        };
        let st = (self.subtype() as u8) << 4;
        let mut w = Writer { b, at: 0 };
        match self {
            MptcpOption::MpCapable(c) => {
                let flags = CAP_H
                    | if c.checksum_required { CAP_A } else { 0 }
                    | if c.deny_join_id0 { CAP_C } else { 0 };
                w.put(&[st | VERSION, flags]);
                match c.form {
                    MpCapableForm::Syn => {}
                    MpCapableForm::SynAck { sender_key } => w.put(&sender_key.to_be_bytes()),
                    MpCapableForm::Ack {
                        sender_key,
                        receiver_key,
                    } => {
                        w.put(&sender_key.to_be_bytes());
                        w.put(&receiver_key.to_be_bytes());
                    }
                    MpCapableForm::AckData {
                        sender_key,
                        receiver_key,
                        data_len,
                        checksum,
                    } => {
                        w.put(&sender_key.to_be_bytes());
                        w.put(&receiver_key.to_be_bytes());
                        w.put(&data_len.to_be_bytes());
                        if let Some(c) = checksum {
                            w.put(&c.to_be_bytes());
                        }
                    }
                }
            }
            MptcpOption::MpJoin(j) => match *j {
                MpJoin::Syn {
                    backup,
                    address_id,
                    token,
                    nonce,
                } => {
                    w.put(&[st | u8::from(backup), address_id]);
                    w.put(&token.to_be_bytes());
                    w.put(&nonce.to_be_bytes());
                }
                MpJoin::SynAck {
                    backup,
                    address_id,
                    truncated_hmac,
                    nonce,
                } => {
                    w.put(&[st | u8::from(backup), address_id]);
                    w.put(&truncated_hmac.to_be_bytes());
                    w.put(&nonce.to_be_bytes());
                }
                MpJoin::Ack { hmac } => {
                    w.put(&[st, 0]);
                    w.put(&hmac);
                }
            },
            MptcpOption::Dss(d) => {
                let mut flags = if d.data_fin { DSS_F } else { 0 };
                match d.data_ack {
                    None => {}
                    Some(DataSeq::Bits32(_)) => flags |= DSS_A,
                    Some(DataSeq::Bits64(_)) => flags |= DSS_A | DSS_A8,
                }
                match d.mapping.map(|m| m.dsn) {
                    None => {}
                    Some(DataSeq::Bits32(_)) => flags |= DSS_M,
                    Some(DataSeq::Bits64(_)) => flags |= DSS_M | DSS_M8,
                }
                w.put(&[st, flags]);
                put_seq(&mut w, d.data_ack);
                if let Some(m) = d.mapping {
                    put_seq(&mut w, Some(m.dsn));
                    w.put(&m.subflow_seq.to_be_bytes());
                    w.put(&m.data_len.to_be_bytes());
                    if let Some(c) = m.checksum {
                        w.put(&c.to_be_bytes());
                    }
                }
            }
            MptcpOption::AddAddr(a) => {
                w.put(&[st | u8::from(a.is_echo()), a.address_id]);
                match a.addr {
                    IpAddr::V4(v4) => w.put(&v4.octets()),
                    IpAddr::V6(v6) => w.put(&v6.octets()),
                }
                if let Some(p) = a.port {
                    w.put(&p.to_be_bytes());
                }
                if let Some(h) = a.hmac {
                    w.put(&h.to_be_bytes());
                }
            }
            MptcpOption::RemoveAddr(r) => {
                w.put(&[st]);
                w.put(r.ids());
            }
            MptcpOption::MpPrio { backup } => w.put(&[st | u8::from(*backup)]),
            MptcpOption::MpFail { dsn: v } | MptcpOption::MpFastclose { receiver_key: v } => {
                w.put(&[st, 0]);
                w.put(&v.to_be_bytes());
            }
            MptcpOption::MpTcpRst(r) => w.put(&[st | u8::from(r.transient), r.reason.code()]),
        }
        debug_assert_eq!(w.at, n, "len() disagrees with emit_data");
        Ok(n)
    }

    /// Whether Linux accepts this option on a segment with `syn`, `ack`, `rst` flags
    /// and a payload (`has_data`): MP_CAPABLE's form must match the segment
    /// (`mptcp_parse_option` picks the expected length from the flags), and
    /// MP_TCPRST only rides a RST. Other subtypes are not checked by segment there.
    pub fn fits_segment(&self, syn: bool, ack: bool, rst: bool, has_data: bool) -> bool {
        match self {
            MptcpOption::MpCapable(c) => match c.form {
                MpCapableForm::Syn => syn && !ack,
                MpCapableForm::SynAck { .. } => syn && ack,
                MpCapableForm::Ack { .. } => !syn && !has_data,
                MpCapableForm::AckData { .. } => !syn && has_data,
            },
            MptcpOption::MpTcpRst(_) => rst,
            _ => true,
        }
    }
}

const DSS_LENGTHS: &str =
    "4 + data ACK (0, 4 or 8 by flags A, a) + mapping (0, 10 or 14 by flags M, m) + 2 if the mapping has a checksum";

fn put_seq(w: &mut Writer<'_>, s: Option<DataSeq>) {
    match s {
        None => {}
        Some(DataSeq::Bits32(v)) => w.put(&v.to_be_bytes()),
        Some(DataSeq::Bits64(v)) => w.put(&v.to_be_bytes()),
    }
}

//! TCP header and options (RFC 9293 §3.1, RFC 7323, RFC 2018, RFC 3168).

use crate::error::ParseError;
use crate::seq::SeqNum;

/// TCP flags, as the 12-bit field after the data offset (NS is bit 8, RFC 3540, historic).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(pub u16);

impl Flags {
    pub const FIN: Flags = Flags(0x001);
    pub const SYN: Flags = Flags(0x002);
    pub const RST: Flags = Flags(0x004);
    pub const PSH: Flags = Flags(0x008);
    pub const ACK: Flags = Flags(0x010);
    pub const URG: Flags = Flags(0x020);
    pub const ECE: Flags = Flags(0x040);
    pub const CWR: Flags = Flags(0x080);
    pub const NS: Flags = Flags(0x100);
    pub const NONE: Flags = Flags(0);

    pub const fn contains(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }
    pub const fn intersects(self, other: Flags) -> bool {
        self.0 & other.0 != 0
    }
    pub const fn union(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
    pub fn insert(&mut self, other: Flags) {
        self.0 |= other.0;
    }
    pub fn remove(&mut self, other: Flags) {
        self.0 &= !other.0;
    }
    pub fn syn(self) -> bool {
        self.contains(Flags::SYN)
    }
    pub fn ack(self) -> bool {
        self.contains(Flags::ACK)
    }
    pub fn fin(self) -> bool {
        self.contains(Flags::FIN)
    }
    pub fn rst(self) -> bool {
        self.contains(Flags::RST)
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, rhs: Flags) -> Flags {
        self.union(rhs)
    }
}

impl std::fmt::Debug for Flags {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        const NAMES: [(Flags, &str); 9] = [
            (Flags::SYN, "S"),
            (Flags::FIN, "F"),
            (Flags::RST, "R"),
            (Flags::PSH, "P"),
            (Flags::ACK, "."),
            (Flags::URG, "U"),
            (Flags::ECE, "E"),
            (Flags::CWR, "W"),
            (Flags::NS, "N"),
        ];
        write!(f, "[")?;
        for (flag, name) in NAMES {
            if self.contains(flag) {
                write!(f, "{name}")?;
            }
        }
        write!(f, "]")
    }
}

/// One SACK block: `[left, right)` in sequence space (RFC 2018 §3).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct SackBlock {
    pub left: SeqNum,
    pub right: SeqNum,
}

/// Up to four SACK blocks (three fit beside timestamps), without allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct SackBlocks {
    blocks: [SackBlock; 4],
    len: u8,
}

impl SackBlocks {
    pub const MAX: usize = 4;
    pub const fn new() -> Self {
        SackBlocks {
            blocks: [SackBlock {
                left: SeqNum(0),
                right: SeqNum(0),
            }; 4],
            len: 0,
        }
    }
    /// Appends a block; returns false (and drops it) when four are already present.
    pub fn push(&mut self, b: SackBlock) -> bool {
        if (self.len as usize) < Self::MAX {
            self.blocks[self.len as usize] = b;
            self.len += 1;
            true
        } else {
            false
        }
    }
    pub fn as_slice(&self) -> &[SackBlock] {
        &self.blocks[..self.len as usize]
    }
    pub fn len(&self) -> usize {
        self.len as usize
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn truncate(&mut self, n: usize) {
        self.len = self.len.min(n as u8);
    }
}

/// RFC 7323 timestamps option.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug)]
pub struct Timestamps {
    pub tsval: u32,
    pub tsecr: u32,
}

/// A parsed (or to-be-emitted) TCP segment. `payload` borrows from the packet buffer.
///
/// `ack` is meaningful only when `flags` has ACK; `window` is the raw 16-bit field
/// (the caller applies window scaling). `mss`, `window_scale` and `sack_permitted`
/// appear on SYNs.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TcpRepr<'a> {
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: SeqNum,
    pub ack: SeqNum,
    pub flags: Flags,
    pub window: u16,
    pub urgent: u16,
    pub mss: Option<u16>,
    pub window_scale: Option<u8>,
    pub sack_permitted: bool,
    pub sack: SackBlocks,
    pub timestamps: Option<Timestamps>,
    pub payload: &'a [u8],
}

impl Default for TcpRepr<'_> {
    fn default() -> Self {
        TcpRepr {
            src_port: 0,
            dst_port: 0,
            seq: SeqNum(0),
            ack: SeqNum(0),
            flags: Flags::NONE,
            window: 0,
            urgent: 0,
            mss: None,
            window_scale: None,
            sack_permitted: false,
            sack: SackBlocks::new(),
            timestamps: None,
            payload: &[],
        }
    }
}

impl<'a> TcpRepr<'a> {
    /// Sequence space the segment occupies: payload plus one for SYN and one for FIN.
    pub fn seg_len(&self) -> u32 {
        self.payload.len() as u32 + u32::from(self.flags.syn()) + u32::from(self.flags.fin())
    }

    /// Bytes of options as emitted (padded to a multiple of 4).
    pub fn options_len(&self) -> usize {
        todo!("brisk-wire helper")
    }

    /// TCP header length (20 + options).
    pub fn header_len(&self) -> usize {
        20 + self.options_len()
    }

    /// Parses a TCP segment; `checksum` is verified against the pseudo-header of `ip`
    /// unless `pseudo` is None.
    pub fn parse(
        buf: &'a [u8],
        pseudo: Option<&crate::ip::IpRepr>,
    ) -> Result<TcpRepr<'a>, ParseError> {
        let _ = (buf, pseudo);
        todo!("brisk-wire helper")
    }

    /// Appends header, options (Linux order and padding) and payload to `out`,
    /// computing the checksum over `ip`'s pseudo-header.
    pub fn emit(&self, ip: &crate::ip::IpRepr, out: &mut Vec<u8>) {
        let _ = (ip, out);
        todo!("brisk-wire helper")
    }
}

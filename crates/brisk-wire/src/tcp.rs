//! TCP header and options (RFC 9293 §3.1, RFC 7323, RFC 2018, RFC 3168).
//!
//! Options live in the `options` submodule; this module owns the fixed header and the
//! checksum.

mod extra;
pub mod fastopen;
pub mod inspace;
mod options;

pub use extra::{ExtraOptionError, ExtraOptions};
pub use options::{MAX_OPTIONS_LEN, MAX_WINDOW_SCALE};

use crate::checksum::Accumulator;
use crate::error::ParseError;
use crate::ip::{IpRepr, IPPROTO_TCP};
use crate::seq::SeqNum;

/// Fixed-header field offsets (RFC 9293 §3.1).
mod field {
    pub const SRC_PORT: usize = 0;
    pub const DST_PORT: usize = 2;
    pub const SEQ: usize = 4;
    pub const ACK: usize = 8;
    pub const OFFSET_FLAGS: usize = 12;
    pub const WINDOW: usize = 14;
    pub const CHECKSUM: usize = 16;
    pub const URGENT: usize = 18;
}

/// TCP flags: the nine bits RFC 9293 §3.1 and RFC 3168 define after the data offset
/// (NS is bit 8, RFC 3540, historic). The field is private and every constructor masks
/// to [`Flags::ALL`], so a `Flags` holds only what the header can carry and
/// `parse(emit(x)) == x` holds for every value (the three reserved bits are not
/// representable: they are ignored on parse and written as zero).
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Flags(u16);

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
    /// The bits the header can carry.
    pub const ALL: Flags = Flags(0x1ff);

    /// The flags of `bits`, bits above [`Flags::ALL`] dropped.
    pub const fn from_bits_truncate(bits: u16) -> Flags {
        Flags(bits & Flags::ALL.0)
    }
    /// The flag bits, as in the header's low nine bits.
    pub const fn bits(self) -> u16 {
        self.0
    }

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
/// Equality, hashing and `Debug` look only at the blocks present.
#[derive(Clone, Copy, Default)]
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
        self.len = self.len.min(n.min(Self::MAX) as u8);
    }
    pub fn clear(&mut self) {
        self.len = 0;
    }
    pub fn iter(&self) -> std::slice::Iter<'_, SackBlock> {
        self.as_slice().iter()
    }
    /// The first four blocks of `blocks`.
    pub fn from_slice(blocks: &[SackBlock]) -> Self {
        let mut s = SackBlocks::new();
        for b in blocks.iter().take(Self::MAX) {
            s.push(*b);
        }
        s
    }
}

impl PartialEq for SackBlocks {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl Eq for SackBlocks {}

impl std::hash::Hash for SackBlocks {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.as_slice().hash(state);
    }
}

impl std::fmt::Debug for SackBlocks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.iter().map(|b| b.left.0..b.right.0))
            .finish()
    }
}

/// A window-scale shift count (RFC 7323 §2.2), at most [`MAX_WINDOW_SCALE`] (14).
/// RFC 7323 §2.3 has a receiver treat a larger shift as 14 (Linux logs it and clamps
/// in `tcp_parse_options`); the parser does that through [`WindowScale::clamped`], and
/// no larger value can be built, so `parse(emit(x)) == x` holds for every value.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default, Debug)]
pub struct WindowScale(u8);

impl WindowScale {
    /// The largest shift, 14 (RFC 7323 §2.3).
    pub const MAX: WindowScale = WindowScale(MAX_WINDOW_SCALE);

    /// `shift`, or None above 14.
    pub const fn new(shift: u8) -> Option<WindowScale> {
        if shift <= MAX_WINDOW_SCALE {
            Some(WindowScale(shift))
        } else {
            None
        }
    }
    /// `shift`, a larger one taken as 14, as RFC 7323 §2.3 tells a receiver.
    pub const fn clamped(shift: u8) -> WindowScale {
        if shift <= MAX_WINDOW_SCALE {
            WindowScale(shift)
        } else {
            WindowScale::MAX
        }
    }
    /// The shift count, 0 to 14.
    pub const fn get(self) -> u8 {
        self.0
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
    pub window_scale: Option<WindowScale>,
    pub sack_permitted: bool,
    pub sack: SackBlocks,
    pub timestamps: Option<Timestamps>,
    /// Further options: Fast Open, MPTCP, experimental ones, and whatever a peer sent
    /// that is not interpreted above ([`ExtraOptions`]).
    pub extra: ExtraOptions,
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
            extra: ExtraOptions::new(),
            payload: &[],
        }
    }
}

impl<'a> TcpRepr<'a> {
    /// Sequence space the segment occupies: payload plus one for SYN and one for FIN.
    pub fn seg_len(&self) -> u32 {
        self.payload.len() as u32 + u32::from(self.flags.syn()) + u32::from(self.flags.fin())
    }

    /// Length of the fixed header, without options.
    pub const MIN_HEADER_LEN: usize = 20;

    /// Bytes of options as emitted (padded to a multiple of 4, at most
    /// [`MAX_OPTIONS_LEN`]).
    pub fn options_len(&self) -> usize {
        options::len(self)
    }

    /// How many SACK blocks `emit` writes: all of `sack` unless the 40-byte option
    /// space runs out (three fit beside timestamps), in which case the first ones.
    pub fn sack_blocks_emitted(&self) -> usize {
        options::sack_blocks_emitted(self)
    }

    /// TCP header length (20 + options).
    pub fn header_len(&self) -> usize {
        Self::MIN_HEADER_LEN + self.options_len()
    }

    /// Parses a TCP segment; `checksum` is verified against the pseudo-header of `ip`
    /// unless `pseudo` is None. `buf` must be exactly the segment (the IP layer has
    /// removed any link padding). Never allocates.
    pub fn parse(buf: &'a [u8], pseudo: Option<&IpRepr>) -> Result<TcpRepr<'a>, ParseError> {
        let mut repr = TcpRepr::default();
        repr.parse_into(buf, pseudo)?;
        Ok(repr)
    }

    /// [`parse`](Self::parse) into `self`, every field overwritten: the segment is
    /// built where the caller keeps it. Returned by value, the ~150-byte repr was
    /// copied out of the `Result` and again into the packet parser's tuple for every
    /// segment (a `memcpy` and moves, ~70 instructions per packet in `bench sim`,
    /// docs/performance.md "The receive path (§1, helper perfrecv)"). On an error
    /// `self` holds an unspecified mix of the old and the new segment's fields.
    pub fn parse_into(&mut self, buf: &'a [u8], pseudo: Option<&IpRepr>) -> Result<(), ParseError> {
        if buf.len() < Self::MIN_HEADER_LEN {
            return Err(ParseError::Truncated);
        }
        // Verify first, so any corruption (including of the data offset) is counted as
        // a checksum failure.
        if let Some(ip) = pseudo {
            let mut acc = ip.pseudo_header(IPPROTO_TCP, buf.len());
            acc.add_bytes(buf);
            if !acc.verifies() {
                return Err(ParseError::BadChecksum);
            }
        }
        let offset_flags = be16(buf, field::OFFSET_FLAGS);
        let header_len = usize::from(offset_flags >> 12) * 4;
        if header_len < Self::MIN_HEADER_LEN || header_len > buf.len() {
            return Err(ParseError::BadDataOffset);
        }
        *self = TcpRepr {
            src_port: be16(buf, field::SRC_PORT),
            dst_port: be16(buf, field::DST_PORT),
            seq: SeqNum(be32(buf, field::SEQ)),
            ack: SeqNum(be32(buf, field::ACK)),
            flags: Flags::from_bits_truncate(offset_flags),
            window: be16(buf, field::WINDOW),
            urgent: be16(buf, field::URGENT),
            payload: &buf[header_len..],
            ..TcpRepr::default()
        };
        options::parse(&buf[Self::MIN_HEADER_LEN..header_len], self)
    }

    /// Appends header, options (Linux order and padding) and payload to `out`,
    /// computing the checksum over `ip`'s pseudo-header.
    pub fn emit(&self, ip: &IpRepr, out: &mut Vec<u8>) {
        let start = out.len();
        // The fixed header and the options in one array, appended once (a capacity
        // check per field was measurable on every simulated segment); the checksum
        // field stays zero until the sum below. The options are written first, so
        // their length (the data offset) comes from what was written rather than
        // from a second pass over the repr.
        let mut h = [0u8; Self::MIN_HEADER_LEN + MAX_OPTIONS_LEN];
        let (fixed, opts) = h.split_at_mut(Self::MIN_HEADER_LEN);
        let opts: &mut [u8; MAX_OPTIONS_LEN] = opts.try_into().expect("40 option bytes");
        let standard = options::emit_standard(self, opts);
        let header_len = Self::MIN_HEADER_LEN + standard + options::extra_len(self);
        debug_assert_eq!(
            header_len,
            self.header_len(),
            "options_len disagrees with emit"
        );
        out.reserve(header_len + self.payload.len());
        let offset_flags = ((header_len / 4) as u16) << 12 | self.flags.0;
        fixed[0..2].copy_from_slice(&self.src_port.to_be_bytes());
        fixed[2..4].copy_from_slice(&self.dst_port.to_be_bytes());
        fixed[4..8].copy_from_slice(&self.seq.0.to_be_bytes());
        fixed[8..12].copy_from_slice(&self.ack.0.to_be_bytes());
        fixed[12..14].copy_from_slice(&offset_flags.to_be_bytes());
        fixed[14..16].copy_from_slice(&self.window.to_be_bytes());
        fixed[18..20].copy_from_slice(&self.urgent.to_be_bytes());
        // The common 32-byte header (timestamps only) as a copy of constant length, a
        // few moves where one of variable length is a `memcpy` call.
        const TS_HEADER_LEN: usize = TcpRepr::MIN_HEADER_LEN + 12;
        let written = Self::MIN_HEADER_LEN + standard;
        if written == TS_HEADER_LEN {
            out.extend_from_slice(&h[..TS_HEADER_LEN]);
        } else {
            out.extend_from_slice(&h[..written]);
        }
        options::emit_extra(self, out);
        debug_assert_eq!(
            out.len() - start,
            header_len,
            "extra_len disagrees with emit"
        );
        out.extend_from_slice(self.payload);
        let segment = &out[start..];
        let mut acc: Accumulator = ip.pseudo_header(IPPROTO_TCP, segment.len());
        acc.add_bytes(segment);
        let at = start + field::CHECKSUM;
        out[at..at + 2].copy_from_slice(&acc.checksum().to_be_bytes());
    }
}

/// Big-endian u16 at `at`; callers have checked the length.
fn be16(buf: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([buf[at], buf[at + 1]])
}

/// Big-endian u32 at `at`; callers have checked the length.
fn be32(buf: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([buf[at], buf[at + 1], buf[at + 2], buf[at + 3]])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ip::{Ecn, Ipv4Repr};
    use std::net::Ipv4Addr;

    fn ip(src: [u8; 4], dst: [u8; 4]) -> IpRepr {
        IpRepr::V4(Ipv4Repr {
            src: Ipv4Addr::from(src),
            dst: Ipv4Addr::from(dst),
            protocol: IPPROTO_TCP,
            dscp: 0,
            ecn: Ecn::NotEct,
            ttl: 64,
            ident: 0,
            dont_frag: true,
            payload_len: 0,
        })
    }

    /// An ECN-setup SYN as Linux sends it: "mss 1460,sackOK,TS val 287454020 ecr 0,nop,wscale 7".
    const SYN_BYTES: [u8; 40] = [
        0x9c, 0x40, 0x14, 0x51, // ports 40000 -> 5201
        0x01, 0x02, 0x03, 0x04, // seq
        0x00, 0x00, 0x00, 0x00, // ack
        0xa0, 0xc2, // data offset 10, CWR ECE SYN
        0xfa, 0xf0, // window 64240
        0x3f, 0x4f, // checksum
        0x00, 0x00, // urgent
        0x02, 0x04, 0x05, 0xb4, // MSS 1460
        0x04, 0x02, 0x08, 0x0a, // SACK_PERM, TS kind/len
        0x11, 0x22, 0x33, 0x44, 0x00, 0x00, 0x00, 0x00, // tsval, tsecr
        0x01, 0x03, 0x03, 0x07, // NOP, WS 7
    ];

    fn syn_repr() -> TcpRepr<'static> {
        TcpRepr {
            src_port: 40000,
            dst_port: 5201,
            seq: SeqNum(0x0102_0304),
            ack: SeqNum(0),
            flags: Flags::SYN | Flags::ECE | Flags::CWR,
            window: 64240,
            urgent: 0,
            mss: Some(1460),
            window_scale: WindowScale::new(7),
            sack_permitted: true,
            sack: SackBlocks::new(),
            timestamps: Some(Timestamps {
                tsval: 0x1122_3344,
                tsecr: 0,
            }),
            extra: ExtraOptions::new(),
            payload: &[],
        }
    }

    /// A pure ACK with ECE, timestamps and three SACK blocks: exactly 40 option bytes.
    const ACK_BYTES: [u8; 60] = [
        0x14, 0x51, 0x9c, 0x40, // ports 5201 -> 40000
        0x0a, 0x0b, 0x0c, 0x0d, // seq
        0x01, 0x02, 0x03, 0x05, // ack
        0xf0, 0x50, // data offset 15, ECE ACK
        0x01, 0xf5, // window 501
        0x16, 0x89, // checksum
        0x00, 0x00, // urgent
        0x01, 0x01, 0x08, 0x0a, // NOP NOP TS
        0xde, 0xad, 0xbe, 0xef, 0x11, 0x22, 0x33, 0x44, // tsval, tsecr
        0x01, 0x01, 0x05, 0x1a, // NOP NOP SACK len 26
        0x00, 0x00, 0x03, 0xe8, 0x00, 0x00, 0x07, 0xd0, // 1000-2000
        0x00, 0x00, 0x0b, 0xb8, 0x00, 0x00, 0x0f, 0xa0, // 3000-4000
        0xff, 0xff, 0xff, 0xf0, 0x00, 0x00, 0x00, 0x10, // across the wrap
    ];

    fn ack_repr() -> TcpRepr<'static> {
        let mut sack = SackBlocks::new();
        for (l, r) in [(1000, 2000), (3000, 4000), (0xffff_fff0, 0x10)] {
            sack.push(SackBlock {
                left: SeqNum(l),
                right: SeqNum(r),
            });
        }
        TcpRepr {
            src_port: 5201,
            dst_port: 40000,
            seq: SeqNum(0x0a0b_0c0d),
            ack: SeqNum(0x0102_0305),
            flags: Flags::ACK | Flags::ECE,
            window: 501,
            sack,
            timestamps: Some(Timestamps {
                tsval: 0xdead_beef,
                tsecr: 0x1122_3344,
            }),
            ..TcpRepr::default()
        }
    }

    const CLIENT: [u8; 4] = [10, 0, 0, 1];
    const SERVER: [u8; 4] = [10, 0, 0, 2];

    #[test]
    fn syn_emits_linux_option_layout() {
        let repr = syn_repr();
        assert_eq!(repr.options_len(), 20);
        let mut out = Vec::new();
        repr.emit(&ip(CLIENT, SERVER), &mut out);
        assert_eq!(out, SYN_BYTES);
    }

    #[test]
    fn syn_bytes_parse_to_repr() {
        let parsed = TcpRepr::parse(&SYN_BYTES, Some(&ip(CLIENT, SERVER))).unwrap();
        assert_eq!(parsed, syn_repr());
    }

    #[test]
    fn ack_with_three_sack_blocks_emits_forty_option_bytes() {
        let repr = ack_repr();
        assert_eq!(repr.options_len(), 40);
        let mut out = Vec::new();
        repr.emit(&ip(SERVER, CLIENT), &mut out);
        assert_eq!(out, ACK_BYTES);
    }

    #[test]
    fn ack_bytes_parse_to_repr() {
        let parsed = TcpRepr::parse(&ACK_BYTES, Some(&ip(SERVER, CLIENT))).unwrap();
        assert_eq!(parsed, ack_repr());
    }

    #[test]
    fn syn_ack_layouts_without_timestamps_or_sack_follow_linux() {
        let ts = Some(Timestamps { tsval: 5, tsecr: 6 });
        let cases: [(bool, Option<Timestamps>, &[u8]); 3] = [
            (
                false,
                ts,
                &[
                    2, 4, 5, 0xb4, 1, 1, 8, 10, 0, 0, 0, 5, 0, 0, 0, 6, 1, 3, 3, 7,
                ],
            ),
            (true, None, &[2, 4, 5, 0xb4, 1, 1, 4, 2, 1, 3, 3, 7]),
            (false, None, &[2, 4, 5, 0xb4, 1, 3, 3, 7]),
        ];
        for (sack_permitted, timestamps, expected) in cases {
            let repr = TcpRepr {
                flags: Flags::SYN | Flags::ACK,
                sack_permitted,
                timestamps,
                ..syn_repr()
            };
            let mut out = Vec::new();
            repr.emit(&ip(SERVER, CLIENT), &mut out);
            assert_eq!(&out[20..], expected);
            assert_eq!(repr.options_len(), expected.len());
            assert_eq!(
                TcpRepr::parse(&out, Some(&ip(SERVER, CLIENT))).unwrap(),
                repr
            );
        }
    }

    #[test]
    fn fourth_sack_block_is_dropped_beside_timestamps() {
        let mut repr = ack_repr();
        assert!(repr.sack.push(SackBlock {
            left: SeqNum(5000),
            right: SeqNum(6000),
        }));
        assert_eq!(repr.sack_blocks_emitted(), 3);
        let mut out = Vec::new();
        repr.emit(&ip(SERVER, CLIENT), &mut out);
        assert_eq!(out, ACK_BYTES);
    }

    #[test]
    fn all_nine_flags_round_trip() {
        let repr = TcpRepr {
            flags: Flags::ALL,
            payload: b"data",
            ..TcpRepr::default()
        };
        let mut out = Vec::new();
        repr.emit(&ip(CLIENT, SERVER), &mut out);
        assert_eq!(&out[12..14], &[0x51, 0xff]);
        let parsed = TcpRepr::parse(&out, Some(&ip(CLIENT, SERVER))).unwrap();
        assert_eq!(parsed.flags, Flags::ALL);
        assert_eq!(parsed.payload, b"data");
    }

    #[test]
    fn reserved_header_bits_are_ignored() {
        let mut seg = SYN_BYTES;
        seg[12] |= 0x0e;
        let parsed = TcpRepr::parse(&seg, None).unwrap();
        assert_eq!(parsed.flags, syn_repr().flags);
    }

    #[test]
    fn bad_data_offset_is_rejected() {
        for offset in [0u8, 4, 11, 15] {
            let mut seg = SYN_BYTES;
            seg[12] = offset << 4 | (seg[12] & 0x0f);
            assert_eq!(
                TcpRepr::parse(&seg, None),
                Err(ParseError::BadDataOffset),
                "{offset}"
            );
        }
        assert_eq!(
            TcpRepr::parse(&SYN_BYTES[..19], None),
            Err(ParseError::Truncated)
        );
    }

    #[test]
    fn corrupted_segment_fails_checksum() {
        let pseudo = ip(SERVER, CLIENT);
        for byte in 0..ACK_BYTES.len() {
            let mut seg = ACK_BYTES;
            seg[byte] ^= 0x10;
            assert_eq!(
                TcpRepr::parse(&seg, Some(&pseudo)),
                Err(ParseError::BadChecksum)
            );
        }
        // The pseudo-header binds the addresses too.
        assert_eq!(
            TcpRepr::parse(&ACK_BYTES, Some(&ip(SERVER, [10, 0, 0, 3]))),
            Err(ParseError::BadChecksum)
        );
    }

    #[test]
    fn sack_blocks_compare_by_contents_only() {
        let mut a = ack_repr().sack;
        let b = SackBlocks::from_slice(&a.as_slice()[..2]);
        assert_ne!(a, b);
        a.truncate(2);
        assert_eq!(a, b);
    }
}

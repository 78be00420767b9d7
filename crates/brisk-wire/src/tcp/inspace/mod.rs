//! Inner Space (draft-briscoe-tcpm-inspace-mode-tcpbis-00, RITE D1.3 App. D.2/D.3):
//! the InSpace option at the start of the TCP Data, its alignment and window accounting.
//! Pure codecs; brisk-tcp wires the SYN=1 option (dual handshake) and, on request,
//! the data-segment framing ([`frame`]) into its connection.
//!
//! Layouts (draft Fig. 3, App. C.2; bit 0 is the most significant bit of a 32-bit
//! word). The draft gives no byte order: brisk uses network byte order, as every other
//! TCP field (spec AMB-D2-4).
//!
//! - SYN=1 (SYN, SYN/ACK), 12 B, [`SynInSpace`]: `Magic A (32) | SDS (16) InOO (14)
//!   Len=2 (2) | Magic B (16) SOO (14) CU (2)`.
//! - SYN=0, Len=2, 12 B, [`DataInSpace`] with [`SuffixAt::Words`]:
//!   `Marker=0 (16) ZOMBI (15) CU (1) | SDS (16) InOO (14) Len (2) | CU=0 (16) SOO (14) CU (2)`.
//! - SYN=0, Len=1, 8 B, [`SuffixAt::AllPrefix`]/[`SuffixAt::AllSuffix`] (the P bit):
//!   `Marker=0 (16) ZOMBI (15) P (1) | SDS (16) InOO (14) Len=1 (2)`. The draft's
//!   §2.2.2 says the omitted word holds "CU and InOO"; the figure shows CU and SOO, so
//!   SOO is omitted (AMB-D2-6).
//! - Jumbo (SYN=0 only, App. C.2), [`JumboInSpace`]: `Marker=0 (32) | ZOMBI (30) Len (2)
//!   | SDS (32) [| InOO (30) C P] [| SOO (30) CU (2)]`, 12 / 16 / 20 B for Len 2 / 3 / 4
//!   (Len bits 00 mean 4).
//!
//! InOO and SOO are in 4-octet words placed 2 bits left of a word boundary, so the
//! 16-bit half-word masked with 0xFFFC is the value in octets. SDS counts octets of the
//! TCP Data as sent (padding included).
//!
//! The ZOMBI field and the marker are the encoder's ([`zombi`]): these codecs write
//! them as zero (keeping the P bit) and read them from ZOMBI-decoded bytes.

pub mod detect;
pub mod frame;
pub mod mode;
pub mod overhead;
pub mod zombi;

/// Octets of the SYN=1 InSpace option (Len = 2).
pub const SYN_LEN: usize = 12;
/// Octets of the SYN=0 short form (Len = 1).
pub const SHORT_LEN: usize = 8;
/// Octets of the SYN=0 full form (Len = 2).
pub const FULL_LEN: usize = 12;
/// Largest SDS that is a sent size: 2^16 − 21 (0xFFEB), the TCP Data of the largest
/// non-jumbo IPv6 packet. Larger values mean the distance to the next InSpace (§2.4).
pub const MAX_SENT_SIZE: u16 = 0xFFEB;
/// SDS value that lets a sender skip empty InSpace options (§2.4, App. B).
pub const SDS_SPARSE: u16 = 0xFFFF;
/// Largest InOO / SOO: a 14-bit count of 4-octet words.
pub const MAX_WORDS: u16 = (1 << 14) - 1;
/// Largest jumbo InOO / SOO: a 30-bit count of 4-octet words.
pub const MAX_JUMBO_WORDS: u32 = (1 << 30) - 1;
/// The non-zero octet brisk pads with before an InSpace option (any non-zero value is
/// allowed; NOP's value reads well in a hex dump).
pub const PAD_OCTET: u8 = 0x01;

/// A malformed or unencodable InSpace option. Messages name the field and its range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InSpaceError {
    #[error("InSpace option needs {need} octets, {have} available")]
    Short { need: usize, have: usize },
    #[error(
        "InSpace Len {len} is not recognised here (SYN=1: 2; SYN=0: 1 or 2; jumbo: 2, 3 or 0 \
         meaning 4): drop the segment and ACK up to the option's start (draft §2.4)"
    )]
    UnknownLen { len: u8 },
    #[error("InSpace {field} of {value} words is out of range 0..={max}")]
    WordsOutOfRange {
        field: &'static str,
        value: u32,
        max: u32,
    },
    #[error("InSpace SOO ({soo} words) exceeds InOO ({inoo} words)")]
    SooAboveInoo { soo: u32, inoo: u32 },
    #[error("InSpace SDS of 0: the sent size is always at least the option's own length")]
    ZeroSds,
    #[error(
        "InSpace SDS {sds} does not fit its meaning: a sent size is 1..=65515, a distance to \
         the next InSpace 65516..=65534"
    )]
    SdsOutOfRange { sds: u16 },
    #[error(
        "InSpace SDS {sds} octets is smaller than padding, option and Inner Options \
         ({need} octets)"
    )]
    SdsTooSmall { sds: u32, need: u32 },
    #[error("InSpace marker is {found:#06x}, must be 0x0000 (0x00000000 for jumbo)")]
    BadMarker { found: u32 },
    #[error("InSpace ZOMBI field is {found:#x} in decoded data, must be 0")]
    ZombiNotDecoded { found: u32 },
    #[error("InSpace magic numbers do not match: not an upgraded SYN=1 segment")]
    BadMagic,
    #[error("Short-form InSpace (Len 1) cannot carry SOO {soo} with InOO {inoo}: only 0 or InOO")]
    ShortFormSoo { soo: u16, inoo: u16 },
}

fn need(buf: &[u8], n: usize) -> Result<(), InSpaceError> {
    if buf.len() < n {
        return Err(InSpaceError::Short {
            need: n,
            have: buf.len(),
        });
    }
    Ok(())
}

fn be16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn be32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn check_words(field: &'static str, v: u16) -> Result<(), InSpaceError> {
    if v > MAX_WORDS {
        return Err(InSpaceError::WordsOutOfRange {
            field,
            value: u32::from(v),
            max: u32::from(MAX_WORDS),
        });
    }
    Ok(())
}

/// A 14-bit word count and a 2-bit tail packed into a half-word: `octets = hw & 0xFFFC`.
fn pack_words(words: u16, low2: u8) -> u16 {
    (words << 2) | u16::from(low2 & 3)
}

/// What an SDS value means (draft §2.2.2, §2.4).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SentSize {
    /// 1..=0xFFEB: octets of TCP Data as sent, padding included.
    Exact(u16),
    /// 0xFFEC..=0xFFFE: distance in octets to the next InSpace option.
    DistanceToNext(u16),
    /// 0xFFFF: the sender sends empty InSpace options less often.
    Sparse,
}

impl SentSize {
    pub fn from_sds(sds: u16) -> Result<Self, InSpaceError> {
        match sds {
            0 => Err(InSpaceError::ZeroSds),
            1..=MAX_SENT_SIZE => Ok(SentSize::Exact(sds)),
            SDS_SPARSE => Ok(SentSize::Sparse),
            d => Ok(SentSize::DistanceToNext(d)),
        }
    }

    /// Whether the value is in its meaning's range (a constructed `Exact(65_520)`
    /// would read back as a distance).
    pub fn check(self) -> Result<(), InSpaceError> {
        match SentSize::from_sds(self.sds())? == self {
            true => Ok(()),
            false => Err(InSpaceError::SdsOutOfRange { sds: self.sds() }),
        }
    }

    pub fn sds(self) -> u16 {
        match self {
            SentSize::Exact(v) | SentSize::DistanceToNext(v) => v,
            SentSize::Sparse => SDS_SPARSE,
        }
    }
}

/// The SYN=1 InSpace option (draft Fig. 3a): on an upgraded SYN or SYN/ACK, at offset
/// 0 of the TCP Data, no padding, not ZOMBI-encoded.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SynInSpace {
    /// Octets of TCP Data as sent (must equal the received TCP Data: a detection check).
    pub sds: u16,
    /// Inner Options (Prefix + Suffix), in 4-octet words.
    pub inoo_words: u16,
    /// Prefix Options (offset of the Suffix Options), in 4-octet words.
    pub soo_words: u16,
}

impl SynInSpace {
    pub const LEN_FIELD: u8 = 2;

    fn validate(&self) -> Result<(), InSpaceError> {
        check_words("InOO", self.inoo_words)?;
        check_words("SOO", self.soo_words)?;
        if self.soo_words > self.inoo_words {
            return Err(InSpaceError::SooAboveInoo {
                soo: u32::from(self.soo_words),
                inoo: u32::from(self.inoo_words),
            });
        }
        let need = SYN_LEN as u32 + 4 * u32::from(self.inoo_words);
        if u32::from(self.sds) < need {
            return Err(InSpaceError::SdsTooSmall {
                sds: u32::from(self.sds),
                need,
            });
        }
        Ok(())
    }

    /// The 12 octets, with `magic`'s numbers and the CU bits zero.
    pub fn encode(&self, magic: detect::Magic) -> Result<[u8; SYN_LEN], InSpaceError> {
        self.validate()?;
        let mut b = [0u8; SYN_LEN];
        b[0..4].copy_from_slice(&magic.a.to_be_bytes());
        b[4..6].copy_from_slice(&self.sds.to_be_bytes());
        b[6..8].copy_from_slice(&pack_words(self.inoo_words, Self::LEN_FIELD).to_be_bytes());
        b[8..10].copy_from_slice(&magic.b.to_be_bytes());
        b[10..12].copy_from_slice(&pack_words(self.soo_words, 0).to_be_bytes());
        Ok(b)
    }

    /// Reads the fields of a detected option ([`detect::detect_syn`] checks magic, Len
    /// and SDS); here the Inner Option extents are checked too. CU bits are ignored.
    pub fn decode(b: &[u8], magic: detect::Magic) -> Result<Self, InSpaceError> {
        need(b, SYN_LEN)?;
        if be32(b, 0) != magic.a || be16(b, 8) != magic.b {
            return Err(InSpaceError::BadMagic);
        }
        let len = b[7] & 3;
        if len != Self::LEN_FIELD {
            return Err(InSpaceError::UnknownLen { len });
        }
        let s = SynInSpace {
            sds: be16(b, 4),
            inoo_words: be16(b, 6) >> 2,
            soo_words: be16(b, 10) >> 2,
        };
        s.validate()?;
        Ok(s)
    }

    pub fn inner_octets(&self) -> usize {
        4 * usize::from(self.inoo_words)
    }

    pub fn prefix_octets(&self) -> usize {
        4 * usize::from(self.soo_words)
    }
}

/// Where the Suffix Options start in a SYN=0 InSpace: the full form's SOO, or the
/// short form's P bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SuffixAt {
    /// Len = 2 (12 B): SOO in words.
    Words(u16),
    /// Len = 1, P = 1: SOO = InOO, Prefix Options only.
    AllPrefix,
    /// Len = 1, P = 0: SOO = 0, Suffix Options only.
    AllSuffix,
}

/// The SYN=0 InSpace option (draft Fig. 3b/3c), as it reads after ZOMBI decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DataInSpace {
    pub sds: SentSize,
    pub inoo_words: u16,
    pub suffix: SuffixAt,
}

impl DataInSpace {
    /// Octets on the wire: 8 (Len 1) or 12 (Len 2).
    pub fn wire_len(&self) -> usize {
        match self.suffix {
            SuffixAt::Words(_) => FULL_LEN,
            _ => SHORT_LEN,
        }
    }

    pub fn len_field(&self) -> u8 {
        (self.wire_len() / 4 - 1) as u8
    }

    pub fn soo_words(&self) -> u16 {
        match self.suffix {
            SuffixAt::Words(w) => w,
            SuffixAt::AllPrefix => self.inoo_words,
            SuffixAt::AllSuffix => 0,
        }
    }

    /// The short form when SOO is 0 or InOO, else the full form.
    pub fn shortest(sds: SentSize, inoo_words: u16, soo_words: u16) -> Self {
        let suffix = if soo_words == 0 {
            SuffixAt::AllSuffix
        } else if soo_words == inoo_words {
            SuffixAt::AllPrefix
        } else {
            SuffixAt::Words(soo_words)
        };
        DataInSpace {
            sds,
            inoo_words,
            suffix,
        }
    }

    /// Checks ranges; `pad` is the padding before the option (counted in SDS).
    pub fn validate(&self, pad: usize) -> Result<(), InSpaceError> {
        self.sds.check()?;
        check_words("InOO", self.inoo_words)?;
        check_words("SOO", self.soo_words())?;
        if self.soo_words() > self.inoo_words {
            return Err(InSpaceError::SooAboveInoo {
                soo: u32::from(self.soo_words()),
                inoo: u32::from(self.inoo_words),
            });
        }
        if let SentSize::Exact(sds) = self.sds {
            let need = (pad + self.wire_len() + 4 * usize::from(self.inoo_words)) as u32;
            if u32::from(sds) < need {
                return Err(InSpaceError::SdsTooSmall {
                    sds: u32::from(sds),
                    need,
                });
            }
        }
        Ok(())
    }

    /// Writes the option into `out` (8 or 12 octets) with marker and ZOMBI zero, the P
    /// bit set for the short form's Prefix-only case, CU bits zero. Returns its length.
    pub fn encode(&self, pad: usize, out: &mut [u8]) -> Result<usize, InSpaceError> {
        self.validate(pad)?;
        let n = self.wire_len();
        need(out, n)?;
        out[0..2].fill(0);
        let p = u8::from(self.suffix == SuffixAt::AllPrefix);
        out[2..4].copy_from_slice(&u16::from(p).to_be_bytes());
        out[4..6].copy_from_slice(&self.sds.sds().to_be_bytes());
        out[6..8].copy_from_slice(&pack_words(self.inoo_words, self.len_field()).to_be_bytes());
        if let SuffixAt::Words(w) = self.suffix {
            out[8..10].fill(0);
            out[10..12].copy_from_slice(&pack_words(w, 0).to_be_bytes());
        }
        Ok(n)
    }

    /// Reads a ZOMBI-decoded option. The Len field sits at the same place in both forms
    /// (8 octets from the marker's left edge), so it is read first.
    pub fn decode(b: &[u8], pad: usize) -> Result<Self, InSpaceError> {
        need(b, SHORT_LEN)?;
        let marker = be16(b, 0);
        if marker != 0 {
            return Err(InSpaceError::BadMarker {
                found: u32::from(marker),
            });
        }
        let zombi = be16(b, 2) >> 1;
        if zombi != 0 {
            return Err(InSpaceError::ZombiNotDecoded {
                found: u32::from(zombi),
            });
        }
        let p = b[3] & 1 == 1;
        let sds = SentSize::from_sds(be16(b, 4))?;
        let inoo_words = be16(b, 6) >> 2;
        let suffix = match b[7] & 3 {
            1 if p => SuffixAt::AllPrefix,
            1 => SuffixAt::AllSuffix,
            2 => {
                need(b, FULL_LEN)?;
                SuffixAt::Words(be16(b, 10) >> 2)
            }
            len => return Err(InSpaceError::UnknownLen { len }),
        };
        let d = DataInSpace {
            sds,
            inoo_words,
            suffix,
        };
        d.validate(pad)?;
        Ok(d)
    }
}

/// The jumbo InSpace option (App. C.2, SYN=0 only), after ZOMBI decoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JumboInSpace {
    pub sds: u32,
    pub inoo_words: u32,
    /// SOO in words; with Len 3 only 0 or InOO (the P bit), with Len 2 both are 0.
    pub soo_words: u32,
}

impl JumboInSpace {
    /// The shortest form that carries the fields: 12, 16 or 20 octets.
    pub fn wire_len(&self) -> usize {
        if self.inoo_words == 0 {
            12
        } else if self.soo_words == 0 || self.soo_words == self.inoo_words {
            16
        } else {
            20
        }
    }

    fn validate(&self, pad: usize) -> Result<(), InSpaceError> {
        for (field, v) in [("InOO", self.inoo_words), ("SOO", self.soo_words)] {
            if v > MAX_JUMBO_WORDS {
                return Err(InSpaceError::WordsOutOfRange {
                    field,
                    value: v,
                    max: MAX_JUMBO_WORDS,
                });
            }
        }
        if self.soo_words > self.inoo_words {
            return Err(InSpaceError::SooAboveInoo {
                soo: self.soo_words,
                inoo: self.inoo_words,
            });
        }
        let need = pad as u64 + self.wire_len() as u64 + 4 * u64::from(self.inoo_words);
        if u64::from(self.sds) < need {
            return Err(InSpaceError::SdsTooSmall {
                sds: self.sds,
                need: need.min(u64::from(u32::MAX)) as u32,
            });
        }
        Ok(())
    }

    /// Writes 12, 16 or 20 octets (marker and ZOMBI zero). Returns the length.
    pub fn encode(&self, pad: usize, out: &mut [u8]) -> Result<usize, InSpaceError> {
        self.validate(pad)?;
        let n = self.wire_len();
        need(out, n)?;
        let len_bits = match n {
            12 => 2u32,
            16 => 3,
            _ => 0, // 00 means 4
        };
        out[0..4].fill(0);
        out[4..8].copy_from_slice(&len_bits.to_be_bytes());
        out[8..12].copy_from_slice(&self.sds.to_be_bytes());
        if n >= 16 {
            let p = u32::from(n == 16 && self.soo_words == self.inoo_words);
            out[12..16].copy_from_slice(&((self.inoo_words << 2) | p).to_be_bytes());
        }
        if n == 20 {
            out[16..20].copy_from_slice(&(self.soo_words << 2).to_be_bytes());
        }
        Ok(n)
    }

    pub fn decode(b: &[u8], pad: usize) -> Result<Self, InSpaceError> {
        need(b, 12)?;
        let marker = be32(b, 0);
        if marker != 0 {
            return Err(InSpaceError::BadMarker { found: marker });
        }
        let w1 = be32(b, 4);
        if w1 >> 2 != 0 {
            return Err(InSpaceError::ZombiNotDecoded { found: w1 >> 2 });
        }
        let sds = be32(b, 8);
        let j = match (w1 & 3) as u8 {
            2 => JumboInSpace {
                sds,
                inoo_words: 0,
                soo_words: 0,
            },
            3 => {
                need(b, 16)?;
                let w = be32(b, 12);
                let inoo = w >> 2;
                JumboInSpace {
                    sds,
                    inoo_words: inoo,
                    soo_words: if w & 1 == 1 { inoo } else { 0 },
                }
            }
            0 => {
                need(b, 20)?;
                JumboInSpace {
                    sds,
                    inoo_words: be32(b, 12) >> 2,
                    soo_words: be32(b, 16) >> 2,
                }
            }
            len => return Err(InSpaceError::UnknownLen { len }),
        };
        if sds == 0 {
            return Err(InSpaceError::ZeroSds);
        }
        j.validate(pad)?;
        Ok(j)
    }
}

/// Non-zero padding octets before a SYN=0 InSpace option (draft §2.3.1.2):
/// `3 − ((seq − isn − 1) mod 4)`, so the option starts at `s` with `(s − isn) ≡ 0 mod
/// 4`. In wrapping 32-bit arithmetic the SYN itself (`seq = isn`) gives 0, the draft's
/// implied special case (AMB-D2-7), since 2^32 is a multiple of 4.
pub fn pad_len(seq: u32, isn: u32) -> usize {
    3 - (seq.wrapping_sub(isn).wrapping_sub(1) % 4) as usize
}

/// How one upgraded segment's TCP Data is charged (draft §2.3.1.3–4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Accounting {
    pub pad: usize,
    pub inspace: usize,
    pub prefix: usize,
    pub suffix: usize,
    pub payload: usize,
}

impl Accounting {
    /// All TCP Data is inside the sequence space.
    pub fn seq_space(&self) -> usize {
        self.pad + self.inspace + self.prefix + self.suffix + self.payload
    }

    /// Suffix Options and Payload count against the peer's receive window.
    pub fn rwnd_charge(&self) -> usize {
        self.suffix + self.payload
    }

    /// Padding, InSpace and Prefix Options are implicitly acknowledged: not kept for
    /// retransmission, not charged to rwnd.
    pub fn implicitly_acked(&self) -> usize {
        self.pad + self.inspace + self.prefix
    }

    /// The segment is an Impure ACK: TCP Data but no Payload and no Suffix Options.
    pub fn is_impure_ack(&self) -> bool {
        self.seq_space() > 0 && self.rwnd_charge() == 0
    }
}

#[cfg(test)]
mod tests;

//! The ModeSwitch option (draft App. B; an Inner Option only) and the InSpaceO /
//! InSpaceU flag options (App. C.1; Outer Options on a SYN).
//!
//! The draft asks IANA for three kinds and, until then, kind 254 with ExIDs "0xUUUU,
//! 0xOOOO, 0xMMMM" (TBA, AMB-D2-5). Both forms are built here:
//! - the native form the draft draws, `kind len [flags]`: ModeSwitch 3 octets, the
//!   flag options 2 octets, with a kind the caller chooses (none is assigned);
//! - the RFC 6994 form, `254 len ExID(16) [flags]`: ModeSwitch 5 octets, flag options
//!   4, with brisk's private ExIDs below. Outer flag options ride in
//!   [`ExtraOptions`](crate::tcp::ExtraOptions) in this form.

use crate::tcp::{ExtraOptionError, ExtraOptions};

/// RFC 6994 experimental option kind.
pub const EXP_KIND: u8 = 254;
/// brisk's private ExIDs (the draft's 0xUUUU, 0xOOOO, 0xMMMM are placeholders).
pub const EXID_INSPACE_U: u16 = 0x1A55;
pub const EXID_INSPACE_O: u16 = 0x1A50;
pub const EXID_MODE_SWITCH: u16 = 0x1A5E;
/// ModeSwitch's length in the native form (the draft: "MUST be 3").
pub const MODE_SWITCH_LEN: usize = 3;
/// A flag option's length in the native form (kind and length only).
pub const FLAG_LEN: usize = 2;

/// A malformed ModeSwitch or flag option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModeError {
    #[error("ModeSwitch option of {len} octets: must be 3 (native) or 5 (kind 254 + ExID)")]
    BadLength { len: usize },
    #[error("option kind {found} is not the expected kind {expected}")]
    WrongKind { found: u8, expected: u8 },
    #[error("kind-254 option ExID {found:#06x} is not {expected:#06x}")]
    WrongExId { found: u16, expected: u16 },
}

/// ModeSwitch (App. B): a request (R = 1) or a confirmation (R = 0) of Inner Space
/// enabled (I = 1) or disabled (I = 0). The 6 CU flag bits are kept so a forwarder can
/// pass them unchanged; a sender zeroes them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ModeSwitch {
    pub enabled: bool,
    pub request: bool,
    pub cu: u8,
}

impl ModeSwitch {
    pub fn new(enabled: bool, request: bool) -> Self {
        ModeSwitch {
            enabled,
            request,
            cu: 0,
        }
    }

    fn flags(&self) -> u8 {
        (self.cu << 2) | (u8::from(self.enabled) << 1) | u8::from(self.request)
    }

    fn from_flags(f: u8) -> Self {
        ModeSwitch {
            enabled: f & 2 != 0,
            request: f & 1 != 0,
            cu: f >> 2,
        }
    }

    /// `kind 3 flags`.
    pub fn encode_native(&self, kind: u8) -> [u8; MODE_SWITCH_LEN] {
        [kind, MODE_SWITCH_LEN as u8, self.flags()]
    }

    /// `254 5 ExID flags`.
    pub fn encode_exp(&self) -> [u8; 5] {
        let x = EXID_MODE_SWITCH.to_be_bytes();
        [EXP_KIND, 5, x[0], x[1], self.flags()]
    }

    /// Parses either form from an option's full bytes (kind and length included).
    pub fn decode(b: &[u8], native_kind: u8) -> Result<Self, ModeError> {
        match b {
            [k, 3, f] if *k == native_kind => Ok(Self::from_flags(*f)),
            [EXP_KIND, 5, x0, x1, f] => {
                let x = u16::from_be_bytes([*x0, *x1]);
                if x != EXID_MODE_SWITCH {
                    return Err(ModeError::WrongExId {
                        found: x,
                        expected: EXID_MODE_SWITCH,
                    });
                }
                Ok(Self::from_flags(*f))
            }
            [k, ..] if *k != native_kind && *k != EXP_KIND => Err(ModeError::WrongKind {
                found: *k,
                expected: native_kind,
            }),
            _ => Err(ModeError::BadLength { len: b.len() }),
        }
    }
}

/// The two Outer flag options of the explicit dual handshake.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FlagOption {
    /// On the ordinary SYN (SYN-O): an upgraded server answers it with RST.
    InSpaceO,
    /// On an "Alternative SYN-U" without InSpace (App. C.1.4).
    InSpaceU,
}

impl FlagOption {
    pub fn exid(self) -> u16 {
        match self {
            FlagOption::InSpaceO => EXID_INSPACE_O,
            FlagOption::InSpaceU => EXID_INSPACE_U,
        }
    }

    /// `kind 2`.
    pub fn encode_native(self, kind: u8) -> [u8; FLAG_LEN] {
        [kind, FLAG_LEN as u8]
    }

    /// Appends the RFC 6994 form (`254 4 ExID`) to a segment's Outer extras.
    pub fn push(self, extra: &mut ExtraOptions) -> Result<(), ExtraOptionError> {
        extra.push(EXP_KIND, &self.exid().to_be_bytes())
    }

    /// Whether the segment's extras carry this flag (kind 254 with its ExID and no
    /// value; a longer one is not this option).
    pub fn present(self, extra: &ExtraOptions) -> bool {
        extra
            .iter()
            .any(|(k, d)| k == EXP_KIND && d == self.exid().to_be_bytes())
    }
}

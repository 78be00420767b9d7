//! The TCP Fast Open option (RFC 7413 §4.1.1), typed on top of [`ExtraOptions`].
//!
//! Two encodings, both accepted by Linux (`tcp_parse_options`,
//! `tcp_parse_fastopen_option` in net/ipv4/tcp_input.c):
//! - kind 34, `34 len cookie..`: the IANA kind;
//! - kind 254 with the magic 0xF989 (RFC 6994 experimental option), `254 len F9 89
//!   cookie..`: what Linux sent before kind 34 was assigned and still accepts.
//!
//! An option without a cookie is a cookie request; a cookie is 4 to 16 bytes of even
//! length (`TCP_FASTOPEN_COOKIE_MIN/MAX`); any other length is malformed. The option
//! means something only on a SYN or SYN-ACK: the caller checks the flags (Linux
//! ignores it elsewhere) and counts a malformed one ([`FastOpenError`]) before
//! ignoring it, as Linux does (it treats the option as absent).
//!
//! When a segment carries several, the last one counts, as in Linux, whose parser
//! overwrites its `tcp_fastopen_cookie` for each. A kind-254 option with another
//! magic is not Fast Open and is skipped.
//!
//! On emission the option rides in the extras, after SACK-permitted/timestamps and
//! window scale (a SYN's standard options take 20 bytes), padded with `NOP NOP` when
//! its length is 2 mod 4, as Linux's `tcp_options_write`; the longest (16-byte cookie:
//! 18 bytes, 20 aligned; experimental: 20) fills the SYN's 40-byte space exactly.

use super::extra::{ExtraOptionError, ExtraOptions};

/// The IANA option kind (RFC 7413 §4.1.1).
pub const KIND: u8 = 34;
/// The experimental option kind (RFC 6994) Linux accepts with [`EXP_MAGIC`].
pub const EXP_KIND: u8 = 254;
/// The experiment identifier of Fast Open in kind 254 (Linux's `TCPOPT_FASTOPEN_MAGIC`).
pub const EXP_MAGIC: u16 = 0xF989;
/// Shortest cookie (RFC 7413 §4.1.1, Linux's `TCP_FASTOPEN_COOKIE_MIN`).
pub const MIN_COOKIE_LEN: usize = 4;
/// Longest cookie (`TCP_FASTOPEN_COOKIE_MAX`).
pub const MAX_COOKIE_LEN: usize = 16;

/// A Fast Open cookie: 4 to 16 bytes, even length. `Copy`, no allocation.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct FastOpenCookie {
    bytes: [u8; MAX_COOKIE_LEN],
    len: u8,
}

impl FastOpenCookie {
    /// A cookie from its bytes; refused unless 4..=16 bytes of even length.
    pub fn new(bytes: &[u8]) -> Result<Self, FastOpenError> {
        let len = bytes.len();
        if !(MIN_COOKIE_LEN..=MAX_COOKIE_LEN).contains(&len) || !len.is_multiple_of(2) {
            return Err(FastOpenError::BadLength { cookie_len: len });
        }
        let mut c = FastOpenCookie {
            bytes: [0; MAX_COOKIE_LEN],
            len: len as u8,
        };
        c.bytes[..len].copy_from_slice(bytes);
        Ok(c)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }

    pub fn len(&self) -> usize {
        usize::from(self.len)
    }

    /// Never true (a cookie has at least 4 bytes); for clippy's `len` convention.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::fmt::Debug for FastOpenCookie {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "FastOpenCookie(")?;
        for b in self.as_bytes() {
            write!(f, "{b:02x}")?;
        }
        write!(f, ")")
    }
}

/// One Fast Open option: a cookie request (`cookie: None`) or a cookie, in either
/// encoding.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FastOpen {
    pub cookie: Option<FastOpenCookie>,
    /// Kind 254 with [`EXP_MAGIC`] rather than kind 34. A server answers in the
    /// encoding the client used, as Linux (`foc->exp`).
    pub experimental: bool,
}

/// A malformed Fast Open option.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum FastOpenError {
    #[error(
        "TCP Fast Open cookie of {cookie_len} bytes: must be 0 (a cookie request) or an even \
         length from 4 to 16"
    )]
    BadLength { cookie_len: usize },
}

impl FastOpen {
    /// A cookie request in the IANA encoding.
    pub const REQUEST: FastOpen = FastOpen {
        cookie: None,
        experimental: false,
    };

    /// A cookie in the IANA encoding.
    pub fn with_cookie(cookie: FastOpenCookie) -> Self {
        FastOpen {
            cookie: Some(cookie),
            experimental: false,
        }
    }

    /// Bytes the option takes on the wire, padding included.
    pub fn aligned_len(&self) -> usize {
        let base = if self.experimental { 4 } else { 2 };
        (base + self.cookie.map_or(0, |c| c.len())).div_ceil(4) * 4
    }

    /// Parses one option's data (after kind and length): `kind` 34 or 254. `Ok(None)`
    /// for a kind-254 option that is not Fast Open (another magic), or another kind.
    pub fn parse(kind: u8, data: &[u8]) -> Result<Option<FastOpen>, FastOpenError> {
        let (cookie, experimental) = match kind {
            KIND => (data, false),
            EXP_KIND => match data {
                [a, b, rest @ ..] if u16::from_be_bytes([*a, *b]) == EXP_MAGIC => (rest, true),
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        let cookie = if cookie.is_empty() {
            None
        } else {
            Some(FastOpenCookie::new(cookie)?)
        };
        Ok(Some(FastOpen {
            cookie,
            experimental,
        }))
    }
}

/// The segment's Fast Open option, if any: the last one, as Linux (see the module
/// doc). `Some(Err(..))` when that last one is malformed: the caller counts it and
/// treats the segment as carrying no Fast Open option.
pub fn parse(extra: &ExtraOptions) -> Option<Result<FastOpen, FastOpenError>> {
    if extra.is_empty() {
        return None;
    }
    extra
        .iter()
        .filter_map(|(kind, data)| FastOpen::parse(kind, data).transpose())
        .last()
}

/// Appends `opt` to a segment's extra options; refused when it does not fit.
pub fn push(extra: &mut ExtraOptions, opt: &FastOpen) -> Result<(), ExtraOptionError> {
    let cookie = opt.cookie.as_ref().map_or(&[][..], |c| c.as_bytes());
    if opt.experimental {
        let mut data = [0u8; 2 + MAX_COOKIE_LEN];
        data[..2].copy_from_slice(&EXP_MAGIC.to_be_bytes());
        data[2..2 + cookie.len()].copy_from_slice(cookie);
        extra.push(EXP_KIND, &data[..2 + cookie.len()])
    } else {
        extra.push(KIND, cookie)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cookie_lengths() {
        for len in 0usize..=20 {
            let ok = (4..=16).contains(&len) && len.is_multiple_of(2);
            assert_eq!(FastOpenCookie::new(&vec![7; len]).is_ok(), ok, "len {len}");
        }
        let e = FastOpenCookie::new(&[1, 2, 3]).unwrap_err();
        assert!(e.to_string().contains("3 bytes") && e.to_string().contains("4 to 16"));
    }

    #[test]
    fn request_cookie_and_experimental() {
        assert_eq!(FastOpen::parse(KIND, &[]), Ok(Some(FastOpen::REQUEST)));
        let c = FastOpenCookie::new(&[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        assert_eq!(
            FastOpen::parse(KIND, c.as_bytes()),
            Ok(Some(FastOpen::with_cookie(c)))
        );
        assert_eq!(
            FastOpen::parse(EXP_KIND, &[0xf9, 0x89, 1, 2, 3, 4, 5, 6, 7, 8]),
            Ok(Some(FastOpen {
                cookie: Some(c),
                experimental: true
            }))
        );
        assert_eq!(
            FastOpen::parse(EXP_KIND, &[0xf9, 0x89]),
            Ok(Some(FastOpen {
                cookie: None,
                experimental: true
            }))
        );
        // Another experiment's kind 254, and a truncated one: not Fast Open.
        assert_eq!(
            FastOpen::parse(EXP_KIND, &[0x12, 0x34, 1, 2, 3, 4]),
            Ok(None)
        );
        assert_eq!(FastOpen::parse(EXP_KIND, &[0xf9]), Ok(None));
        assert_eq!(FastOpen::parse(30, &[0; 4]), Ok(None));
        // Odd, too short, too long.
        for bad in [&[1u8][..], &[1, 2], &[1, 2, 3, 4, 5], &[0; 18]] {
            assert_eq!(
                FastOpen::parse(KIND, bad),
                Err(FastOpenError::BadLength {
                    cookie_len: bad.len()
                })
            );
        }
    }

    #[test]
    fn last_option_counts() {
        let mut x = ExtraOptions::new();
        x.push(KIND, &[1, 2, 3]).unwrap();
        x.push(KIND, &[1, 2, 3, 4]).unwrap();
        let got = parse(&x).unwrap().unwrap();
        assert_eq!(got.cookie.unwrap().as_bytes(), &[1, 2, 3, 4]);
        let mut y = ExtraOptions::new();
        y.push(KIND, &[1, 2, 3, 4]).unwrap();
        y.push(KIND, &[9]).unwrap();
        assert!(parse(&y).unwrap().is_err());
        assert!(parse(&ExtraOptions::new()).is_none());
        let mut z = ExtraOptions::new();
        z.push(30, &[0, 0]).unwrap();
        assert!(parse(&z).is_none());
    }

    #[test]
    fn push_encodings() {
        let c = FastOpenCookie::new(&[0xaa; 16]).unwrap();
        let mut x = ExtraOptions::new();
        push(
            &mut x,
            &FastOpen {
                cookie: Some(c),
                experimental: true,
            },
        )
        .unwrap();
        assert_eq!(x.get(EXP_KIND).unwrap()[..2], [0xf9, 0x89]);
        assert_eq!(x.aligned_len(), 20);
        assert_eq!(
            FastOpen {
                cookie: Some(c),
                experimental: true
            }
            .aligned_len(),
            20
        );
        assert_eq!(FastOpen::with_cookie(c).aligned_len(), 20);
        assert_eq!(FastOpen::REQUEST.aligned_len(), 4);
    }
}

//! TLS record framing for uTLS (RFC 5246 §6.2, RFC 8446 §5.1): the 5-byte header
//! `type(1) ‖ legacy_version(2) ‖ length(2)` and the bounds a plausible
//! out-of-order application-data header must meet (spec `minion.md` §4.3, with the
//! AEAD limits of §4.7 instead of the paper's CBC ones).

/// Bytes in a record header.
pub const HEADER_LEN: usize = 5;
/// Largest ciphertext length accepted (TLS 1.3's limit, RFC 8446 §5.2; TLS 1.2
/// allows 2^14 + 2048, but no AEAD suite rustls offers comes near it: 2^14 + 24).
pub const MAX_CIPHERTEXT: usize = (1 << 14) + 256;
/// Largest plaintext per record (both versions).
pub const MAX_FRAGMENT: usize = 1 << 14;
/// Content types (RFC 8446 §5.1).
pub const CHANGE_CIPHER_SPEC: u8 = 20;
pub const ALERT: u8 = 21;
pub const HANDSHAKE: u8 = 22;
pub const APPLICATION_DATA: u8 = 23;
/// The record-layer version every TLS 1.2 and 1.3 record after the ClientHello carries.
pub const LEGACY_VERSION: u16 = 0x0303;

/// A parsed record header.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub typ: u8,
    pub version: u16,
    /// Length of the record body (ciphertext) after the header.
    pub len: usize,
}

impl Header {
    /// The header at the start of `b`, if `b` holds five bytes (no checks).
    pub fn parse(b: &[u8]) -> Option<Header> {
        let h: &[u8; HEADER_LEN] = b.get(..HEADER_LEN)?.try_into().ok()?;
        Some(Header {
            typ: h[0],
            version: u16::from_be_bytes([h[1], h[2]]),
            len: usize::from(u16::from_be_bytes([h[3], h[4]])),
        })
    }

    /// Header plus body.
    pub fn wire_len(&self) -> usize {
        HEADER_LEN + self.len
    }
}

/// Whether `b` starts with a header that may be an application-data record of the
/// negotiated protocol: type 23, version `03 03`, body length in `[min_body,
/// MAX_CIPHERTEXT]`. Returns the header. A random position passes the type and version
/// test with probability 2^-24; whatever passes is only a candidate until it
/// authenticates.
pub fn plausible_app_data(b: &[u8], min_body: usize) -> Option<Header> {
    let h = Header::parse(b)?;
    (h.typ == APPLICATION_DATA
        && h.version == LEGACY_VERSION
        && (min_body..=MAX_CIPHERTEXT).contains(&h.len))
    .then_some(h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_bounds_headers() {
        let h = Header::parse(&[23, 3, 3, 0x01, 0x00, 9]).unwrap();
        assert_eq!(h.len, 256);
        assert_eq!(h.wire_len(), 261);
        assert!(Header::parse(&[23, 3, 3, 0]).is_none());
        assert!(plausible_app_data(&[23, 3, 3, 0, 17], 17).is_some());
        assert!(
            plausible_app_data(&[23, 3, 3, 0, 16], 17).is_none(),
            "below minimum"
        );
        assert!(
            plausible_app_data(&[22, 3, 3, 0, 40], 17).is_none(),
            "handshake type"
        );
        assert!(
            plausible_app_data(&[23, 3, 1, 0, 40], 17).is_none(),
            "TLS 1.0"
        );
        let big = (MAX_CIPHERTEXT + 1) as u16;
        let [a, b] = big.to_be_bytes();
        assert!(
            plausible_app_data(&[23, 3, 3, a, b], 17).is_none(),
            "too long"
        );
    }
}

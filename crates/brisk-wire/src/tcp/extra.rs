//! Options beyond the five brisk-wire knows by name: TCP Fast Open (kind 34,
//! RFC 7413), MPTCP (kind 30, RFC 8684), the experimental kinds 253/254 (RFC 6994)
//! and anything a peer sends that we do not interpret. Kept as raw `kind, len, data`
//! bytes in a fixed 40-byte buffer, so a `TcpRepr` stays `Copy` and allocation-free.
//! MPTCP's items are typed on top of this by [`crate::mptcp`].
//!
//! On emission the extras follow the standard options (Linux writes Fast Open and
//! MPTCP after SACK in `tcp_options_write`), each padded with NOPs *after* it to a
//! 4-byte boundary, as Linux pads them: `tcp_options_write` puts `NOP NOP` behind a
//! Fast Open cookie whose length is 2 mod 4, and `mptcp_write_options`
//! (net/mptcp/options.c) fills the last word of an option with NOPs (a 22-byte
//! MP_CAPABLE or DSS ends `.. NOP NOP`, MP_PRIO is `30 3 flags NOP`, REMOVE_ADDR's
//! last word is padded with NOPs). So a brisk segment's option bytes equal Linux's
//! for the same options. SACK blocks are truncated to leave the extras room. On parsing, every
//! option brisk-wire does not interpret is kept here in arrival order, as far as it
//! fits (a hostile peer cannot make it grow: the option space is 40 bytes).

use super::options::MAX_OPTIONS_LEN;

const NOP: u8 = 1;
/// The kinds brisk-wire interprets (MSS, window scale, SACK-permitted, SACK,
/// timestamps): the parser never keeps them here, so `push` refuses them, or
/// `parse(emit(x))` would turn them into the named fields.
const INTERPRETED: [u8; 5] = [2, 3, 4, 5, 8];

/// Raw options: a sequence of `kind, len, data` items.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExtraOptions {
    bytes: [u8; MAX_OPTIONS_LEN],
    len: u8,
}

/// An extra option does not fit in the 40-byte option space, or is malformed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("TCP option kind {kind} with {data_len} data bytes does not fit in the option space")]
pub struct ExtraOptionError {
    pub kind: u8,
    pub data_len: usize,
}

impl Default for ExtraOptions {
    fn default() -> Self {
        Self::new()
    }
}

impl ExtraOptions {
    pub const fn new() -> Self {
        ExtraOptions {
            bytes: [0; MAX_OPTIONS_LEN],
            len: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Appends option `kind` with `data` (its length byte is computed). Kinds 0-1 (EOL,
    /// NOP) carry no length and are refused, as are the kinds `TcpRepr` has fields for
    /// (2, 3, 4, 5, 8) and anything that would not fit.
    pub fn push(&mut self, kind: u8, data: &[u8]) -> Result<(), ExtraOptionError> {
        let err = ExtraOptionError {
            kind,
            data_len: data.len(),
        };
        let item = 2 + data.len();
        if kind <= NOP
            || INTERPRETED.contains(&kind)
            || item > usize::from(u8::MAX)
            || usize::from(self.len) + item > MAX_OPTIONS_LEN
        {
            return Err(err);
        }
        let at = usize::from(self.len);
        self.bytes[at] = kind;
        self.bytes[at + 1] = item as u8;
        self.bytes[at + 2..at + item].copy_from_slice(data);
        self.len += item as u8;
        Ok(())
    }

    /// The options as `(kind, data)`, in order.
    pub fn iter(&self) -> impl Iterator<Item = (u8, &[u8])> + '_ {
        let mut i = 0usize;
        let raw = &self.bytes[..usize::from(self.len)];
        std::iter::from_fn(move || {
            let kind = *raw.get(i)?;
            let len = usize::from(*raw.get(i + 1)?);
            let data = raw.get(i + 2..i + len)?;
            i += len;
            Some((kind, data))
        })
    }

    /// The first option of `kind`, if any.
    pub fn get(&self, kind: u8) -> Option<&[u8]> {
        self.iter().find(|&(k, _)| k == kind).map(|(_, d)| d)
    }

    /// Bytes these options take on the wire, each padded to 4 bytes.
    pub fn aligned_len(&self) -> usize {
        self.iter()
            .map(|(_, d)| (2 + d.len()).div_ceil(4) * 4)
            .sum()
    }

    /// Writes each option followed by NOPs up to a 4-byte boundary (Linux's layout,
    /// see the module doc).
    pub(super) fn emit(&self, out: &mut Vec<u8>) {
        for (kind, data) in self.iter() {
            let item = 2 + data.len();
            out.extend_from_slice(&[kind, item as u8]);
            out.extend_from_slice(data);
            out.extend(std::iter::repeat_n(NOP, item.div_ceil(4) * 4 - item));
        }
    }
}

impl std::fmt::Debug for ExtraOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn push_iter_get_and_bounds() {
        let mut x = ExtraOptions::new();
        assert!(x.is_empty());
        x.push(34, &[1, 2, 3, 4, 5, 6, 7, 8]).unwrap();
        x.push(254, &[0xf9, 0x89]).unwrap();
        assert_eq!(x.get(34), Some(&[1, 2, 3, 4, 5, 6, 7, 8][..]));
        assert_eq!(x.get(254), Some(&[0xf9, 0x89][..]));
        assert_eq!(x.get(30), None);
        assert_eq!(x.aligned_len(), 12 + 4);
        assert!(
            x.push(1, &[]).is_err(),
            "NOP is not an option with a length"
        );
        assert!(x.push(253, &[0; 30]).is_err(), "past 40 bytes");
        for kind in INTERPRETED {
            assert!(
                x.push(kind, &[0, 0]).is_err(),
                "kind {kind} has its own field"
            );
        }
        let mut full = ExtraOptions::new();
        full.push(253, &[7; 38]).unwrap();
        assert!(full.push(254, &[]).is_err());
    }

    #[test]
    fn emit_pads_each_option_after_it() {
        let mut x = ExtraOptions::new();
        x.push(34, &[9; 6]).unwrap(); // 8 bytes: no padding
        x.push(30, &[0x50]).unwrap(); // 3 bytes (MP_PRIO): one NOP, as Linux
        x.push(30, &[0x20, 1, 0, 0, 0, 2]).unwrap(); // 8 bytes: none
        x.push(254, &[0xf9, 0x89, 1, 2]).unwrap(); // 6 bytes: two NOPs
        let mut out = Vec::new();
        x.emit(&mut out);
        assert_eq!(
            out,
            [
                34, 8, 9, 9, 9, 9, 9, 9, 30, 3, 0x50, NOP, 30, 8, 0x20, 1, 0, 0, 0, 2, 254, 6,
                0xf9, 0x89, 1, 2, NOP, NOP
            ]
        );
        assert_eq!(out.len(), x.aligned_len());
    }
}

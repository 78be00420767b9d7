//! uTLS: secure datagrams on the TLS wire format (Minion, Nowlan et al., NSDI 2012
//! §6 and §7; Nowlan's thesis ch. 4; spec `minion.md` §4; claims MN-4, MN-6).
//!
//! One uTLS datagram is one TLS application-data record. The sender is unmodified TLS
//! ([`sender`]). The receiver ([`receiver`]) is TLS in order, and with uTCP's
//! unordered receive it also finds application-data records in out-of-order bytes
//! ([`record`]), guesses their sequence numbers ([`seq`]) and delivers those that
//! authenticate, each exactly once.
//!
//! All cryptography is rustls's: the handshake runs in rustls's unbuffered API; once
//! it is complete `dangerous_into_kernel_connection` hands over the traffic secrets
//! (and keeps the key schedule for KeyUpdate and tickets), and records are sealed and
//! opened with the negotiated suite's `MessageEncrypter` / `MessageDecrypter`, which
//! take the sequence number as an argument. That is what lets the receiver try a
//! record under a number of its choosing.
//!
//! Departure from the paper: rustls offers only AEAD suites (TLS 1.2 AES-GCM and
//! ChaCha20-Poly1305, TLS 1.3), not TLS 1.1 CBC, nor null or chained (RC4, TLS 1.0
//! CBC) suites. So the paper's "null suite disables out-of-order delivery" and
//! "chained suites fall back to in order" cannot arise here: every suite uTLS can
//! negotiate supports out-of-order opening. See `docs/mechanisms/utls.md`.
//!
//! Sans-IO: [`Utls`] is fed bytes and returns bytes; [`Utls::poll_once`] and
//! [`Utls::flush`] drive it over any [`ByteStream`].

pub mod receiver;
pub mod record;
pub mod sender;
pub mod seq;
mod session;

use record::HEADER_LEN;
pub use session::Utls;
use thiserror::Error;

/// The receiver's bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Most bytes held beyond the in-order point (0 to 1 GiB).
    pub max_ooo_bytes: usize,
    /// Most separate runs held beyond the in-order point (1 to 2^20).
    pub max_ooo_runs: usize,
    /// Most records delivered early that the in-order walk has not reached (1 to 2^20).
    pub max_ooo_records: usize,
    /// Most sequence numbers tried per candidate record (1 to 64).
    pub max_trials: usize,
    /// Largest post-handshake handshake message (tickets, KeyUpdate) (64 B to 1 MiB).
    pub max_handshake_message: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_ooo_bytes: 8 << 20,
            max_ooo_runs: 4096,
            max_ooo_records: 4096,
            max_trials: 8,
            max_handshake_message: 64 << 10,
        }
    }
}

impl Limits {
    fn check(&self) -> Result<(), UtlsError> {
        let check = |field, value: usize, lo: usize, hi: usize, range| {
            if (lo..=hi).contains(&value) {
                Ok(())
            } else {
                Err(UtlsError::BadLimit {
                    field,
                    value,
                    range,
                })
            }
        };
        check(
            "max_ooo_bytes",
            self.max_ooo_bytes,
            0,
            1 << 30,
            "0 to 1 GiB",
        )?;
        check(
            "max_ooo_runs",
            self.max_ooo_runs,
            1,
            1 << 20,
            "1 to 1 048 576",
        )?;
        check(
            "max_ooo_records",
            self.max_ooo_records,
            1,
            1 << 20,
            "1 to 1 048 576",
        )?;
        check("max_trials", self.max_trials, 1, 64, "1 to 64")?;
        check(
            "max_handshake_message",
            self.max_handshake_message,
            64,
            1 << 20,
            "64 B to 1 MiB",
        )
    }
}

/// What the receiver has seen and done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct UtlsCounters {
    /// Application-data records delivered (each exactly once).
    pub delivered: u64,
    /// Of those, delivered from out-of-order bytes.
    pub delivered_out_of_order: u64,
    /// In-order records skipped because they were delivered early.
    pub duplicates_skipped: u64,
    /// Out-of-order candidate records tried, and openings tried for them.
    pub ooo_candidates: u64,
    pub trials: u64,
    /// Candidates that authenticated under no tried number (not delivered; they wait
    /// for the in-order path).
    pub ooo_unauthenticated: u64,
    /// Candidates that authenticated but are not application data (left in order).
    pub ooo_control_left: u64,
    /// Candidates not tried because [`Limits::max_ooo_records`] early deliveries wait.
    pub ooo_table_full: u64,
    /// Out-of-order bytes not kept (window full); they arrive again in order.
    pub ooo_bytes_refused: u64,
    /// Out-of-order bytes that arrived before the keys existed (handled in order).
    pub ooo_bytes_before_keys: u64,
    /// KeyUpdates received, tickets received.
    pub key_updates: u64,
    pub tickets: u64,
}

/// One delivered datagram: the plaintext of one application-data record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Record<'a> {
    /// Stream offset of the record's header.
    pub offset: u64,
    /// Its TLS sequence number, in key epoch `epoch` (KeyUpdates before it).
    pub seq: u64,
    pub epoch: u32,
    /// Delivered by the in-order walk (false: early, from out-of-order bytes).
    pub in_order: bool,
    pub data: &'a [u8],
}

#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum UtlsError {
    #[error("TLS: {0}")]
    Tls(String),
    #[error("record at offset {offset} (number {seq}) failed authentication in order: {why} (bad_record_mac)")]
    BadRecordMac { offset: u64, seq: u64, why: String },
    #[error(
        "record at offset {offset} is {len} bytes, over the limit of 2^14 + 256 (record_overflow)"
    )]
    RecordTooLong { offset: u64, len: usize },
    #[error("record at offset {offset} has version {version:#06x}, expected 0x0303")]
    BadVersion { offset: u64, version: u16 },
    #[error("record at offset {offset} was delivered early as number {early} but is number {in_order} in order")]
    Inconsistent {
        offset: u64,
        early: u64,
        in_order: u64,
    },
    #[error(
        "in-order data at offset {got} but the stream is at {expected}: a hole in in-order data"
    )]
    Gap { expected: u64, got: u64 },
    #[error("peer sent alert {description} (level {level})")]
    Alert { level: u8, description: u8 },
    #[error("unexpected {0}")]
    Unexpected(&'static str),
    #[error("handshake message of {len} bytes over the limit of {max}")]
    HandshakeTooLong { len: usize, max: usize },
    #[error("the handshake has not finished")]
    Handshaking,
    #[error("the connection has failed")]
    Failed,
    #[error("{records} records sealed: the suite's confidentiality limit")]
    KeysExhausted { records: u64 },
    #[error("limit {field} = {value} is out of range ({range})")]
    BadLimit {
        field: &'static str,
        value: usize,
        range: &'static str,
    },
}

impl From<rustls::Error> for UtlsError {
    fn from(e: rustls::Error) -> Self {
        UtlsError::Tls(e.to_string())
    }
}

/// Bytes of a record carrying `n` plaintext bytes under the given shape, without
/// TLS 1.3 padding (for tests and docs: uTLS adds nothing to TLS's own framing).
pub fn record_wire_len(tls13: bool, gcm12: bool, n: usize) -> usize {
    HEADER_LEN
        + n
        + 16
        + if tls13 {
            1
        } else if gcm12 {
            8
        } else {
            0
        }
}

pub mod fuzz;
#[cfg(test)]
mod tests;

//! MPTCP's keys, tokens and HMACs (RFC 8684 §3.1, §3.2, §3.4.1), with RustCrypto's
//! `sha2` and `hmac`. Linux's counterparts are `mptcp_crypto_key_sha` and
//! `mptcp_crypto_hmac_sha` (net/mptcp/crypto.c), `subflow_generate_hmac`
//! (net/mptcp/subflow.c) and `add_addr_generate_hmac` (net/mptcp/options.c); the
//! byte orders below are theirs: keys and nonces big-endian, as on the wire.

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use std::net::IpAddr;

type HmacSha256 = Hmac<Sha256>;

/// SHA-256 of the 64-bit key in network byte order.
fn key_hash(key: u64) -> [u8; 32] {
    Sha256::digest(key.to_be_bytes()).into()
}

/// The connection token (§3.1): the most significant 32 bits of SHA-256(key).
pub fn token(key: u64) -> u32 {
    let h = key_hash(key);
    u32::from_be_bytes([h[0], h[1], h[2], h[3]])
}

/// The initial data sequence number (§3.1): the least significant 64 bits of
/// SHA-256(key).
pub fn idsn(key: u64) -> u64 {
    let h = key_hash(key);
    let mut low = [0u8; 8];
    low.copy_from_slice(&h[24..]);
    u64::from_be_bytes(low)
}

/// HMAC-SHA256 with key `key1 ‖ key2` (16 bytes) over `msg`.
pub fn hmac_sha256(key1: u64, key2: u64, msg: &[u8]) -> [u8; 32] {
    let mut key = [0u8; 16];
    key[..8].copy_from_slice(&key1.to_be_bytes());
    key[8..].copy_from_slice(&key2.to_be_bytes());
    // HMAC accepts a key of any length (RFC 2104 §2), so this cannot fail.
    let mut mac = HmacSha256::new_from_slice(&key).expect("HMAC takes any key length");
    mac.update(msg);
    mac.finalize().into_bytes().into()
}

/// The MP_JOIN HMAC a host sends (§3.2): key = its own key ‖ the peer's key, message
/// = its own nonce ‖ the peer's nonce. The responder (B) sends it on the SYN/ACK with
/// `sender = B`, the initiator (A) on the third ACK with `sender = A`.
pub fn join_hmac(
    sender_key: u64,
    receiver_key: u64,
    sender_nonce: u32,
    receiver_nonce: u32,
) -> [u8; 32] {
    let mut msg = [0u8; 8];
    msg[..4].copy_from_slice(&sender_nonce.to_be_bytes());
    msg[4..].copy_from_slice(&receiver_nonce.to_be_bytes());
    hmac_sha256(sender_key, receiver_key, &msg)
}

/// The SYN/ACK's truncated HMAC: the leftmost 64 bits of [`join_hmac`] computed by
/// the responder.
pub fn join_synack_hmac(
    sender_key: u64,
    receiver_key: u64,
    sender_nonce: u32,
    receiver_nonce: u32,
) -> u64 {
    let h = join_hmac(sender_key, receiver_key, sender_nonce, receiver_nonce);
    let mut left = [0u8; 8];
    left.copy_from_slice(&h[..8]);
    u64::from_be_bytes(left)
}

/// The third ACK's HMAC: the leftmost 160 bits of [`join_hmac`] computed by the
/// initiator.
pub fn join_ack_hmac(
    sender_key: u64,
    receiver_key: u64,
    sender_nonce: u32,
    receiver_nonce: u32,
) -> [u8; 20] {
    let h = join_hmac(sender_key, receiver_key, sender_nonce, receiver_nonce);
    let mut left = [0u8; 20];
    left.copy_from_slice(&h[..20]);
    left
}

/// The ADD_ADDR HMAC (§3.4.1): key = sender's key ‖ receiver's key, message =
/// address id ‖ address ‖ port (two bytes, zero when the option has none, as Linux
/// computes it), truncated to the rightmost 64 bits.
pub fn add_addr_hmac(
    sender_key: u64,
    receiver_key: u64,
    address_id: u8,
    addr: IpAddr,
    port: Option<u16>,
) -> u64 {
    let mut msg = [0u8; 19];
    msg[0] = address_id;
    let n = match addr {
        IpAddr::V4(a) => {
            msg[1..5].copy_from_slice(&a.octets());
            5
        }
        IpAddr::V6(a) => {
            msg[1..17].copy_from_slice(&a.octets());
            17
        }
    };
    msg[n..n + 2].copy_from_slice(&port.unwrap_or(0).to_be_bytes());
    let h = hmac_sha256(sender_key, receiver_key, &msg[..n + 2]);
    let mut right = [0u8; 8];
    right.copy_from_slice(&h[24..]);
    u64::from_be_bytes(right)
}

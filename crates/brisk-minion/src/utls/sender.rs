//! The uTLS sender: TLS's own record layer, nothing added (Minion NSDI 2012 §6.4: "the
//! current uTLS supports only receiver-side unordered delivery"; claim MN-4: uTLS wire
//! bytes = TLS wire bytes). Each application write becomes records of at most 2^14
//! plaintext bytes, sealed by rustls's AEAD under consecutive sequence numbers, in
//! stream order. Records are never reordered on the way out: a reordered record would
//! fail the MAC at any standard TLS receiver (spec §4.6), so uTLS writes at one
//! priority and does not use uTCP's prioritised send.

use super::record::{self, MAX_FRAGMENT};
use super::UtlsError;
use rustls::crypto::cipher::{MessageEncrypter, OutboundChunks, OutboundPlainMessage};
use rustls::{ContentType, ProtocolVersion};

pub struct RecordSender {
    enc: Box<dyn MessageEncrypter>,
    /// Number of the next record.
    seq: u64,
    /// Records sealed before the keys must change (the suite's confidentiality limit).
    limit: u64,
    /// Records and bytes produced.
    pub records: u64,
    pub bytes: u64,
}

impl RecordSender {
    pub fn new(enc: Box<dyn MessageEncrypter>, seq: u64, limit: u64) -> Self {
        RecordSender {
            enc,
            seq,
            limit,
            records: 0,
            bytes: 0,
        }
    }

    /// New keys after our KeyUpdate (numbering restarts at 0).
    pub fn rekey(&mut self, enc: Box<dyn MessageEncrypter>) {
        self.enc = enc;
        self.seq = 0;
    }

    /// Seals `data` as records of content type `typ`, appended to `out`. An empty
    /// `data` gives no record.
    pub fn seal(&mut self, typ: u8, data: &[u8], out: &mut Vec<u8>) -> Result<(), UtlsError> {
        for chunk in data.chunks(MAX_FRAGMENT) {
            if self.seq >= self.limit {
                return Err(UtlsError::KeysExhausted { records: self.seq });
            }
            let msg = OutboundPlainMessage {
                typ: ContentType::from(typ),
                version: ProtocolVersion::TLSv1_2,
                payload: OutboundChunks::Single(chunk),
            };
            let sealed = self
                .enc
                .encrypt(msg, self.seq)
                .map_err(|e| UtlsError::Tls(e.to_string()))?
                .encode();
            self.seq += 1;
            self.records += 1;
            self.bytes += sealed.len() as u64;
            out.extend_from_slice(&sealed);
        }
        Ok(())
    }

    /// The on-wire size of a record carrying `n` plaintext bytes (≤ 2^14).
    pub fn record_len(&self, n: usize) -> usize {
        record::HEADER_LEN + self.enc.encrypted_payload_len(n)
    }
}

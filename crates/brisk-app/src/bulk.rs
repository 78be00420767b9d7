//! The `bulk` app's sender: the pattern payload, as much as the stream takes, or a
//! sized transfer followed by a half-close.

use brisk_tcp::stream::ByteStream;

use crate::payload::TxStream;

/// A bulk sender (its bytes and their count are the [`TxStream`]'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkSource {
    /// Bytes in all; `None`: until the run ends.
    pub total: Option<u64>,
    /// Bytes per write call (`None`: as much as the send buffer takes).
    pub write_size: Option<usize>,
}

impl BulkSource {
    /// Bytes still to send (`u64::MAX` for an unsized transfer).
    pub fn remaining(&self, tx: &TxStream) -> u64 {
        self.total.map_or(u64::MAX, |t| t.saturating_sub(tx.bytes))
    }

    /// Whether a sized transfer has all been written.
    pub fn finished(&self, tx: &TxStream) -> bool {
        self.total.is_some_and(|t| tx.bytes >= t)
    }

    /// Writes what a non-blocking stream takes now; half-closes the stream once a
    /// sized transfer is all written and returns true then.
    pub fn write(&self, tx: &mut TxStream, p: &mut dyn ByteStream) -> bool {
        let max = self.remaining(tx);
        match self.write_size {
            None => tx.write_pattern(p, max),
            Some(m) => tx.write_sized(p, max, m),
        };
        if self.finished(tx) {
            let _ = p.shutdown_write();
            return true;
        }
        false
    }

    /// The next message of a sender that writes whole messages of up to `max` bytes
    /// (see [`TxStream::write_message`]): its length and whether it is the last one.
    /// `None` when a sized transfer is done.
    pub fn next_message(&self, tx: &TxStream, max: usize) -> Option<(usize, bool)> {
        let left = self.remaining(tx);
        if left == 0 {
            return None;
        }
        let n = left.min(max as u64) as usize;
        Some((n, self.total.is_some() && n as u64 == left))
    }
}

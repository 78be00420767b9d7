//! msTCP: several ordered message streams over one uTCP connection (Minion NSDI 2012
//! §8.5; Nowlan's thesis §6.2.3; spec `minion.md` §5; claim MN-10). Messages are cut
//! into chunks, each with a 16-byte header ([`header`]) naming its stream and its
//! place in the stream, and each chunk is one uCOBS datagram ([`crate::ucobs`]).
//! Because uCOBS over uTCP delivers a datagram as soon as its bytes arrive, a lost
//! segment holds back only the streams whose chunks it carried; the receiver puts
//! each stream's chunks back in order on its own ([`recv`]). The sender interleaves
//! the streams chunk by chunk ([`send`]).
//!
//! Sans-IO: nothing here owns a clock or a socket. Choices the papers leave open are
//! listed in docs/mechanisms/mstcp.md.

pub mod header;
pub mod recv;
pub mod send;

#[cfg(test)]
mod tests;

pub use header::{ChunkHeader, HeaderError, END_OF_MSG, END_OF_STREAM, HEADER_LEN};
pub use recv::{BreakReason, Demux, MsChunk, MsEvent, MsReceiver, RecvCounters, RecvLimits};
pub use send::{MsSender, SendCounters, SendLimits};

use thiserror::Error;

/// msTCP's errors (the sender's refusals and bad limits).
#[derive(Clone, Debug, PartialEq, Eq, Error)]
pub enum MsError {
    #[error("stream {0} has ended; its identifier is not reused")]
    StreamClosed(u16),
    #[error("{0} streams are open already (max_streams)")]
    TooManyStreams(usize),
    #[error("{queued} bytes are queued; the message would pass max_queued_bytes = {max}")]
    QueueFull { queued: usize, max: usize },
    #[error("a message of {0} bytes is longer than 2^32 - 1")]
    MessageTooLong(usize),
    #[error("limit {field} = {value} is out of range ({range})")]
    BadLimit {
        field: &'static str,
        value: usize,
        range: &'static str,
    },
    #[error("uCOBS: {0}")]
    Scan(crate::scan::ScanError),
}

fn check_limit(
    field: &'static str,
    value: usize,
    lo: usize,
    hi: usize,
    range: &'static str,
) -> Result<(), MsError> {
    if (lo..=hi).contains(&value) {
        Ok(())
    } else {
        Err(MsError::BadLimit {
            field,
            value,
            range,
        })
    }
}

/// A set of stream identifiers: a bitmap of 2^16 bits (8 KiB), allocated on first use.
#[derive(Clone, Debug, Default)]
struct IdSet(Vec<u64>);

impl IdSet {
    fn contains(&self, id: u16) -> bool {
        self.0
            .get(usize::from(id) / 64)
            .is_some_and(|w| w & (1 << (id % 64)) != 0)
    }
    fn insert(&mut self, id: u16) {
        if self.0.is_empty() {
            self.0 = vec![0; 1 << 10];
        }
        self.0[usize::from(id) / 64] |= 1 << (id % 64);
    }
}

//! The one seam between a subflow's sequence spaces and the stream's offsets.
//!
//! A subflow counts in its own RFC 9293 sequence spaces (offsets from the ISS on the
//! send side and from the IRS on the receive side, `parts::SendSpace` and
//! `parts::RecvSide`); the stream (`super::stream::Stream`) counts bytes from 0 in
//! each direction. Every place that turns one into the other goes through a
//! [`StreamMap`]: which stream bytes a subflow segment carries (the segment builder,
//! new-data selection), which stream bytes a cumulative ACK frees (`ack.rs`,
//! `Subflow::stream_acked`), and where an arriving payload lands in the stream
//! (`Connection::land`, the receive window's right edge, the SACK blocks).
//!
//! For plain TCP the map is the identity shifted by the SYN, which takes sequence
//! number 0 (ISS/IRS) and no stream byte: sequence offset `s` carries stream offset
//! `s - 1`. It is a zero-sized type and each method is `#[inline]`, so the seam costs
//! nothing. MPTCP (RFC 8684 §3.3.1, issue 31) replaces it by the subflow's data
//! sequence mapping: a bounded list of (data sequence number, subflow sequence
//! number, length) made when the subflow takes bytes from the stream and read from
//! the DSS option on arrival (Linux `mptcp_subflow_context`'s `map_seq` /
//! `map_subflow_seq` / `map_data_len`, `get_mapping_status` in `net/mptcp/subflow.c`).
//! There the methods below become lookups, and the FIN offsets differ: a subflow FIN
//! is not the stream's end (DATA_FIN is, §3.3.3). The tables are issue 31's
//! `mptcp::dsn` (`SendMap`, `RecvMap`), which count a subflow's bytes from 0 after
//! its SYN: their subflow offset is this module's sequence offset less one, the same
//! shift `snd_to_stream` / `rcv_to_stream` make here.

/// Subflow sequence offsets ↔ stream offsets (plain TCP: shifted by the SYN).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(super) struct StreamMap;

impl StreamMap {
    /// The stream offset that send-sequence offset `seq` carries. The SYN (0) carries
    /// no stream byte and maps to the stream's start.
    #[inline(always)]
    pub fn snd_to_stream(self, seq: u64) -> u64 {
        seq.saturating_sub(1)
    }

    /// The send-sequence offset that carries stream offset `off`.
    #[inline(always)]
    pub fn stream_to_snd(self, off: u64) -> u64 {
        off + 1
    }

    /// The stream offset where receive-sequence offset `seq` (at least 1: data never
    /// takes the peer's SYN) lands.
    #[inline(always)]
    pub fn rcv_to_stream(self, seq: u64) -> u64 {
        seq - 1
    }

    /// The receive-sequence offset of stream offset `off` (SACK blocks, the window's
    /// right edge).
    #[inline(always)]
    pub fn stream_to_rcv(self, off: u64) -> u64 {
        off + 1
    }
}

#[cfg(test)]
mod tests {
    use super::StreamMap;

    /// Plain TCP: the SYN takes one sequence number in each direction, and the two
    /// directions of the map invert each other on data.
    #[test]
    fn plain_tcp_is_the_identity_shifted_by_the_syn() {
        let m = StreamMap;
        assert_eq!(m.snd_to_stream(0), 0);
        for off in [0u64, 1, 1447, 1 << 40] {
            assert_eq!(m.stream_to_snd(off), off + 1);
            assert_eq!(m.snd_to_stream(m.stream_to_snd(off)), off);
            assert_eq!(m.rcv_to_stream(m.stream_to_rcv(off)), off);
        }
    }
}

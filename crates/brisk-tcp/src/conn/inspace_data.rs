//! Inner Space on data segments (draft-briscoe-tcpm-inspace-mode-tcpbis-00 §2.3.1,
//! §2.3.2.2, App. A, App. B; docs/mechanisms/inner-space.md "Data segments"): mode
//! (i), asked for by a ModeSwitch R = 1, I = 1 Inner Option on a data-less SYN-U and
//! confirmed on the SYN/ACK-U.
//!
//! Framing is done on the byte stream: each application write is cut into sent
//! segments of at most one MSS of TCP Data (non-zero padding, the 8-octet InSpace,
//! Suffix Options, Payload), ZOMBI-encoded (brisk-wire `inspace::frame`), queued in
//! the send buffer, and a record mark (`end_record`, Linux's `MSG_EOR`) after each
//! keeps two sent segments out of one TCP segment. So all TCP Data is in the sequence
//! space (§2.3.1.3). A TCP segment that leaves with part of a sent segment (a small
//! window) is a resegmentation the reader undoes by SDS. The reader takes the
//! in-order stream apart at the application's read, in place, through any cuts.
//!
//! Deviations, stated (the framing is in the stream, not per TCP segment): padding
//! and InSpace octets sit in the send and receive buffers, so they are retransmitted
//! with their Payload (a rebuilt sent segment of the same size, which §2.3.1.5 allows
//! for a gap) and charged to the receive window while buffered (§2.3.1.4 says they
//! must not be; brisk sends no Prefix Options, so no fire-and-forget object can
//! deadlock behind a zero window, and Snd.Wind.Min = 2 × 0). brisk never sends an
//! Impure ACK (it has no Prefix Option to send), so never answers one with one; an
//! Impure ACK received is read and counted. Suffix Options are acted on when the
//! application reads up to them (the draft: when the stream is in order).
//!
//! ModeSwitch I = 0 (App. B): `inspace_disable` queues a request (R = 1) as a Suffix
//! Option of an empty sent segment; the responder confirms (R = 0) and its half
//! leaves Inner Space right after that segment; the requester re-echoes (R = 0) and
//! leaves after its segment. The readers switch to plain bytes after the segment that
//! carries the peer's confirmation. Once off, a half never sends InSpace again.

use super::Connection;
use brisk_wire::tcp::inspace::frame::{self, Deframer, Piece};
use brisk_wire::tcp::inspace::mode::{ModeSwitch, EXID_MODE_SWITCH, EXP_KIND};
use brisk_wire::ExtraOptions;

/// What Inner Space on data segments did on one connection.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct InSpaceDataStats {
    /// Our half frames its writes.
    pub tx_on: bool,
    /// The peer's half is read as framed.
    pub rx_on: bool,
    pub segments_sent: u64,
    /// Padding, InSpace and Inner Option octets sent (first transmissions).
    pub overhead_sent: u64,
    pub segments_read: u64,
    pub impure_read: u64,
    pub overhead_read: u64,
    pub mode_switch_sent: u64,
    pub mode_switch_read: u64,
    /// The peer's stream did not read as Inner Space: the connection was aborted.
    pub malformed: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct DataMode {
    tx: bool,
    rx: Option<Box<Deframer>>,
    /// We asked to disable and wait for the peer's confirmation.
    asked_off: bool,
    /// A ModeSwitch R = 1, I = 0 to send.
    request_due: bool,
    /// A ModeSwitch R = 0, I = 0 to send; our half leaves after it.
    confirm_due: bool,
    scratch: Vec<u8>,
    stats: InSpaceDataStats,
}

impl DataMode {
    pub(crate) fn new(rx: bool) -> Self {
        DataMode {
            tx: true,
            rx: rx.then(|| Box::new(Deframer::new(1))),
            asked_off: false,
            request_due: false,
            confirm_due: false,
            scratch: Vec::new(),
            stats: InSpaceDataStats::default(),
        }
    }

    pub(crate) fn start_reading(&mut self) {
        self.rx = Some(Box::new(Deframer::new(1)));
    }
}

/// The 5-octet RFC 6994 form of a ModeSwitch (no kind is assigned, AMB-D2-5).
pub(crate) fn mode_switch_bytes(enabled: bool, request: bool) -> [u8; 5] {
    ModeSwitch::new(enabled, request).encode_exp()
}

/// Whether `extra` (Inner Options read as if Outer) holds this ModeSwitch.
pub(crate) fn has_mode_switch(extra: &ExtraOptions, enabled: bool, request: bool) -> bool {
    let x = EXID_MODE_SWITCH.to_be_bytes();
    extra.iter().any(|(k, d)| {
        k == EXP_KIND
            && d.len() == 3
            && d[..2] == x
            && (d[2] & 2 != 0) == enabled
            && (d[2] & 1 != 0) == request
    })
}

impl Connection {
    fn data_mode(&mut self) -> Option<&mut DataMode> {
        self.inspace.as_deref_mut()?.data.as_deref_mut()
    }

    /// Whether writes are framed (a client in SYN-SENT that asked, or either end
    /// after the confirmation, until its half leaves).
    #[inline]
    pub(super) fn inspace_frames_tx(&self) -> bool {
        let Some(is) = self.inspace.as_deref() else {
            return false;
        };
        match is.data.as_deref() {
            Some(d) => d.tx,
            None => is.data_req.get() && self.state == super::State::SynSent,
        }
    }

    /// Whether reads go through the Inner Space reader.
    #[inline]
    pub(super) fn inspace_reads_framed(&self) -> bool {
        self.inspace
            .as_deref()
            .and_then(|i| i.data.as_deref())
            .is_some_and(|d| d.rx.is_some())
    }

    /// Inner Space on data segments for this connection, if it is on.
    pub fn inspace_data_stats(&self) -> Option<InSpaceDataStats> {
        let d = self.inspace.as_deref()?.data.as_deref()?;
        let mut s = d.stats;
        s.tx_on = d.tx;
        s.rx_on = d.rx.as_ref().is_some_and(|r| !r.raw());
        if let Some(r) = &d.rx {
            let f = r.stats();
            s.segments_read = f.segments;
            s.impure_read = f.impure;
            s.overhead_read = f.overhead;
        }
        Some(s)
    }

    /// Asks the peer to leave Inner Space (App. B: ModeSwitch R = 1, I = 0). False
    /// when our half is not framing or a request is already out.
    pub fn inspace_disable(&mut self) -> bool {
        if !self.inspace_frames_tx() {
            return false;
        }
        let Some(d) = self.data_mode() else {
            return false;
        };
        if d.asked_off || d.confirm_due {
            return false;
        }
        d.asked_off = true;
        d.request_due = true;
        self.inspace_write(&[]);
        true
    }

    /// `write` on a framing half: sent segments of at most one MSS of TCP Data each.
    /// Returns the Payload octets taken.
    #[cold]
    #[inline(never)]
    pub(super) fn inspace_write(&mut self, data: &[u8]) -> usize {
        if self.data_mode().is_none() {
            // A client's writes in SYN-SENT after asking (the SYN-U has left).
            let Some(is) = self.inspace.as_deref_mut() else {
                return 0;
            };
            is.data = Some(Box::new(DataMode::new(false)));
        }
        let mss = (self.mss() as usize).max(64);
        let mut scratch = std::mem::take(&mut self.data_mode().expect("set above").scratch);
        let mut taken = 0;
        loop {
            let d = self.data_mode().expect("set above");
            let ctl = if d.confirm_due {
                Some(mode_switch_bytes(false, false))
            } else if d.request_due {
                Some(mode_switch_bytes(false, true))
            } else {
                None
            };
            let suffix: &[u8] = ctl.as_ref().map_or(&[], |c| &c[..]);
            let rel = self.stream.sendbuf.end() + 1;
            let oh = frame::overhead(rel, 0, suffix.len());
            let room = self.stream.send_capacity().min(mss);
            if room < oh || (room == oh && ctl.is_none()) {
                break;
            }
            let n = (room - oh).min(data.len() - taken);
            if n == 0 && ctl.is_none() {
                break;
            }
            scratch.clear();
            if frame::frame_segment(rel, &[], suffix, &data[taken..taken + n], &mut scratch)
                .is_err()
            {
                break; // cannot happen: room ≤ MSS < 65 515
            }
            if self.queue_write(&scratch, 0) != scratch.len() {
                break; // the state refuses writes (FIN queued, closing)
            }
            self.end_record();
            taken += n;
            let d = self.data_mode().expect("set above");
            d.stats.segments_sent += 1;
            d.stats.overhead_sent += oh as u64;
            if ctl.is_some() {
                d.stats.mode_switch_sent += 1;
                if d.confirm_due {
                    // App. B: our half leaves right after the segment carrying it.
                    d.confirm_due = false;
                    d.tx = false;
                } else {
                    d.request_due = false;
                }
            }
            if !d.tx {
                d.scratch = std::mem::take(&mut scratch);
                return taken + self.queue_write(&data[taken..], 0);
            }
            if taken == data.len() && !d.confirm_due && !d.request_due {
                break;
            }
        }
        if let Some(d) = self.data_mode() {
            d.scratch = scratch;
        }
        if taken < data.len() {
            self.stream.writable_wanted = true;
        }
        taken
    }

    /// `read` on a framed stream: raw bytes out of the receive buffer, taken apart in
    /// place, the Payload moved to the front of `buf`.
    #[cold]
    #[inline(never)]
    pub(super) fn inspace_read(&mut self, buf: &mut [u8]) -> usize {
        loop {
            let n = self.read_raw(buf);
            if n == 0 {
                return 0;
            }
            let (mut req_off, mut conf_off) = (false, false);
            let d = self.data_mode().expect("reads framed");
            let rx = d.rx.as_deref_mut().expect("reads framed");
            let r = rx.feed_compact(&mut buf[..n], &mut |p| {
                if let Piece::ModeSwitch { ms, suffix: true } = p {
                    if !ms.enabled {
                        req_off |= ms.request;
                        conf_off |= !ms.request;
                    }
                }
            });
            let Ok(w) = r else {
                d.stats.malformed += 1;
                self.abort();
                return 0;
            };
            if req_off || conf_off {
                d.stats.mode_switch_read += u64::from(req_off) + u64::from(conf_off);
                if req_off && d.tx {
                    d.confirm_due = true;
                }
                if conf_off && d.asked_off {
                    d.asked_off = false;
                    d.confirm_due = true; // the requester's re-echo
                }
                if d.confirm_due {
                    self.inspace_write(&[]);
                }
            }
            if w > 0 {
                return w;
            }
        }
    }
}

//! The uTLS record receiver (Minion NSDI 2012 §6; thesis ch. 4; spec `minion.md`
//! §4.3–4.5): TLS's in-order record layer plus out-of-order delivery of
//! application-data records, once the traffic keys are known.
//!
//! - **In order** it is plain TLS: each record is opened under the next sequence number;
//!   a record that fails is a fatal `bad_record_mac` (RFC 8446 §5.2). Records that are
//!   not application data (post-handshake messages, alerts) go back to the session.
//! - **Out of order** (bytes past the in-order point, from uTCP's unordered receive),
//!   the held run around each arrival is searched for plausible application-data
//!   headers ([`record::plausible_app_data`]) whose whole record has arrived. Each is
//!   opened under the numbers [`seq`] proposes. A candidate that authenticates under
//!   none is **not delivered** and not an error (the paper's "false positive": a wrong
//!   guess, a header-like run inside ciphertext, or tampering); it waits for the
//!   in-order path, where a failure is fatal as in TLS. Only a record whose inner type
//!   is application data is delivered early; an authenticated KeyUpdate, ticket or
//!   alert waits for its turn.
//! - **Exactly once.** Records delivered early are remembered by offset and number
//!   (`handled`) until the in-order walk reaches them: it opens them again (so the
//!   in-order path is byte-for-byte TLS) and skips delivery. A number is never
//!   delivered twice early either (a genuine record replayed at another offset).
//!
//! Bounds: a record is at most 5 + 2^14 + 256 bytes; the out-of-order window holds at
//! most [`Limits::max_ooo_bytes`] bytes in [`Limits::max_ooo_runs`] runs; at most
//! [`Limits::max_ooo_records`] early deliveries wait for the in-order walk; at most
//! [`Limits::max_trials`] openings per candidate. Whatever is refused arrives again in
//! order, so a bound only delays delivery.

use super::record::{self, Header, HEADER_LEN, MAX_CIPHERTEXT, MAX_FRAGMENT};
use super::seq::{trial_order, MeanSize, NonceRelation};
use super::{Limits, Record, UtlsCounters, UtlsError};
use crate::window::{Keep, OooWindow};
use rustls::crypto::cipher::{InboundOpaqueMessage, MessageDecrypter};
use rustls::{ContentType, ProtocolVersion};
use std::collections::{BTreeMap, BTreeSet};

/// Largest record on the wire.
pub const MAX_WIRE: usize = HEADER_LEN + MAX_CIPHERTEXT;

/// What the negotiated suite means for the record layer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SuiteShape {
    /// TLS 1.3 (inner content type, padding).
    pub tls13: bool,
    /// TLS 1.2 AES-GCM: an 8-byte explicit nonce leads the body.
    pub explicit_nonce: bool,
    /// Smallest body (ciphertext) an application-data record can have.
    pub min_body: usize,
}

/// One step of the in-order walk.
#[derive(Debug, PartialEq, Eq)]
pub enum Step {
    /// No complete record yet.
    NeedMore,
    /// An application-data record was handled (delivered, or skipped as delivered
    /// early).
    AppData,
    /// A record of another type, authenticated and opened: (content type, plaintext).
    Control(u8, Vec<u8>),
}

pub struct RecordReceiver {
    limits: Limits,
    shape: SuiteShape,
    dec: Box<dyn MessageDecrypter>,
    /// Key epoch (KeyUpdates processed).
    epoch: u32,
    /// Number and start offset of the next in-order record.
    seq: u64,
    rec_pos: u64,
    /// In-order byte point; `cur[head..]` is the stream from `rec_pos` to `pos`.
    pos: u64,
    cur: Vec<u8>,
    head: usize,
    /// Bytes read ahead of a hole, by stream offset.
    win: OooWindow,
    /// Records delivered early, by start: (number, end).
    handled: BTreeMap<u64, (u64, u64)>,
    handled_seqs: BTreeSet<u64>,
    /// Offsets where a record of known number starts (beyond the in-order point).
    anchors: BTreeMap<u64, u64>,
    nonce: NonceRelation,
    mean: MeanSize,
    scratch: Vec<u8>,
    pub counters: UtlsCounters,
}

impl RecordReceiver {
    /// A receiver whose next in-order record starts at stream offset `at` and has
    /// number `seq`, opened with `dec`.
    pub fn new(
        limits: Limits,
        shape: SuiteShape,
        dec: Box<dyn MessageDecrypter>,
        seq: u64,
        at: u64,
    ) -> Self {
        RecordReceiver {
            limits,
            shape,
            dec,
            epoch: 0,
            seq,
            rec_pos: at,
            pos: at,
            cur: Vec::new(),
            head: 0,
            win: OooWindow::new(limits.max_ooo_runs, at),
            handled: BTreeMap::new(),
            handled_seqs: BTreeSet::new(),
            anchors: BTreeMap::new(),
            nonce: NonceRelation::default(),
            mean: MeanSize::default(),
            scratch: Vec::with_capacity(MAX_WIRE),
            counters: UtlsCounters::default(),
        }
    }

    /// The in-order byte point.
    pub fn in_order_point(&self) -> u64 {
        self.pos
    }

    /// Bytes held out of order, and bytes buffered in order (less than one record once
    /// [`next_in_order`](Self::next_in_order) has returned `NeedMore`).
    pub fn held_bytes(&self) -> (u64, usize) {
        (self.win.held(), self.cur.len() - self.head)
    }

    /// Early deliveries waiting for the in-order walk.
    pub fn pending_early(&self) -> usize {
        self.handled.len()
    }

    /// New traffic keys after a KeyUpdate (RFC 8446 §4.6.3): numbering restarts at 0.
    /// What was learnt about the old epoch is dropped.
    pub fn rekey(&mut self, dec: Box<dyn MessageDecrypter>) {
        self.dec = dec;
        self.seq = 0;
        self.epoch += 1;
        self.handled.clear();
        self.handled_seqs.clear();
        self.anchors.clear();
        self.nonce = NonceRelation::default();
    }

    /// In-order bytes at `offset` (bytes already seen are skipped).
    pub fn push_in_order(&mut self, offset: u64, data: &[u8]) -> Result<(), UtlsError> {
        if offset > self.pos {
            return Err(UtlsError::Gap {
                expected: self.pos,
                got: offset,
            });
        }
        let skip = (self.pos - offset) as usize;
        if skip >= data.len() {
            return Ok(());
        }
        if self.head > 0 {
            // Less than one record remains before the new bytes: cheap to move.
            self.cur.drain(..self.head);
            self.head = 0;
        }
        self.cur.extend_from_slice(&data[skip..]);
        self.pos += (data.len() - skip) as u64;
        self.win.advance(self.pos);
        Ok(())
    }

    /// Opens the next in-order record if it is complete.
    pub fn next_in_order(
        &mut self,
        deliver: &mut dyn FnMut(Record<'_>),
    ) -> Result<Step, UtlsError> {
        let Some(h) = Header::parse(&self.cur[self.head..]) else {
            return Ok(Step::NeedMore);
        };
        let start = self.rec_pos;
        if h.len > MAX_CIPHERTEXT {
            return Err(UtlsError::RecordTooLong {
                offset: start,
                len: h.len,
            });
        }
        if h.version != record::LEGACY_VERSION {
            return Err(UtlsError::BadVersion {
                offset: start,
                version: h.version,
            });
        }
        if self.cur.len() - self.head < h.wire_len() {
            return Ok(Step::NeedMore);
        }
        let seq = self.seq;
        let wire = h.wire_len();
        let body = &mut self.cur[self.head + HEADER_LEN..self.head + wire];
        let nonce = (self.shape.explicit_nonce && body.len() >= 8)
            .then(|| u64::from_be_bytes(body[..8].try_into().expect("8 bytes")));
        let msg = InboundOpaqueMessage::new(
            ContentType::from(h.typ),
            ProtocolVersion::from(h.version),
            body,
        );
        let plain = self
            .dec
            .decrypt(msg, seq)
            .map_err(|e| UtlsError::BadRecordMac {
                offset: start,
                seq,
                why: e.to_string(),
            })?;
        if plain.payload.len() > MAX_FRAGMENT {
            return Err(UtlsError::RecordTooLong {
                offset: start,
                len: plain.payload.len(),
            });
        }
        self.head += wire;
        self.rec_pos += wire as u64;
        self.seq += 1;
        if let Some(n) = nonce {
            self.nonce.observe(seq, n);
        }
        // Early deliveries and anchors the walk has passed.
        while let Some((&s, _)) = self
            .anchors
            .first_key_value()
            .filter(|(&s, _)| s < self.rec_pos)
        {
            self.anchors.remove(&s);
        }
        let typ = u8::from(plain.typ);
        if typ != record::APPLICATION_DATA {
            return Ok(Step::Control(typ, plain.payload.to_vec()));
        }
        match self.handled.remove(&start) {
            Some((s, _)) => {
                self.handled_seqs.remove(&s);
                if s != seq {
                    // Impossible without a forgery: the same bytes authenticated under
                    // two numbers.
                    return Err(UtlsError::Inconsistent {
                        offset: start,
                        early: s,
                        in_order: seq,
                    });
                }
                self.counters.duplicates_skipped += 1;
            }
            // This number was delivered early from another offset: a genuine record
            // replayed further on authenticated there first. The plaintext is the
            // same (one key, one number, one tag), so it is not delivered again; the
            // copy fails in order when the walk reaches it, as in TLS.
            None if self.handled_seqs.contains(&seq) => {
                self.counters.duplicates_skipped += 1;
            }
            None => {
                self.mean.add(wire);
                self.counters.delivered += 1;
                deliver(Record {
                    offset: start,
                    seq,
                    epoch: self.epoch,
                    in_order: true,
                    data: plain.payload,
                });
            }
        }
        while let Some((&s, &(n, _))) = self
            .handled
            .first_key_value()
            .filter(|(&s, _)| s < self.rec_pos)
        {
            self.handled.remove(&s);
            self.handled_seqs.remove(&n);
        }
        Ok(Step::AppData)
    }

    /// Bytes beyond the in-order point (uTCP's out-of-order reads): keeps them and
    /// delivers every application-data record they complete that authenticates.
    pub fn push_out_of_order(
        &mut self,
        offset: u64,
        data: &[u8],
        deliver: &mut dyn FnMut(Record<'_>),
    ) {
        match self
            .win
            .keep(self.pos, offset, data, self.limits.max_ooo_bytes)
        {
            Keep::Below => {}
            Keep::Refused(n) => self.counters.ooo_bytes_refused += n,
            Keep::Kept(r) => self.scan_around(r.start, r.end, deliver),
        }
    }

    /// Tries every candidate record that the arrival `[a, end)` completed: those in its
    /// held run that end after `a` (each record is tried when its last byte arrives).
    fn scan_around(&mut self, a: u64, end: u64, deliver: &mut dyn FnMut(Record<'_>)) {
        let Some(run) = self.win.run_of(a) else {
            return;
        };
        let mut p = run.start.max(a.saturating_sub(MAX_WIRE as u64 - 1));
        while p < end && p + HEADER_LEN as u64 <= run.end {
            // Inside a record delivered early: no header can start there.
            if let Some((_, &(_, e))) = self.handled.range(..=p).next_back() {
                if e > p {
                    p = e;
                    continue;
                }
            }
            let to = end.min(run.end - HEADER_LEN as u64 + 1);
            let Some(k) = self
                .win
                .at(p, to)
                .iter()
                .position(|&b| b == record::APPLICATION_DATA)
            else {
                break;
            };
            if k > 0 {
                p += k as u64;
                continue;
            }
            if let Some(h) =
                record::plausible_app_data(self.win.at(p, run.end), self.shape.min_body)
            {
                let q = p + h.wire_len() as u64;
                if q <= run.end
                    && q > a
                    && !self.handled.contains_key(&p)
                    && self.try_record(p, h, deliver)
                {
                    p = q;
                    continue;
                }
            }
            p += 1;
        }
    }

    /// The numbers to try for a candidate at `p`.
    fn trials_for(&self, p: u64, h: Header) -> Vec<u64> {
        // The nearest anchor at or below p: the in-order record, the one after it if
        // its header is in, or an early-delivered record's start or end.
        let mut below = (self.rec_pos, self.seq);
        if let Some(cur) = Header::parse(&self.cur[self.head..]) {
            let next = self.rec_pos + cur.wire_len() as u64;
            if next <= p {
                below = (next, self.seq + 1);
            }
        }
        if let Some((&o, &s)) = self.anchors.range(..=p).next_back() {
            if o > below.0 {
                below = (o, s);
            }
        }
        let upper = self.anchors.range(p + 1..).next().map(|(_, &s)| s);
        let gap = p - below.0;
        if gap > 0 && self.shape.explicit_nonce && h.len >= 8 {
            let at = p + HEADER_LEN as u64;
            let n = u64::from_be_bytes(self.win.at(at, at + 8).try_into().expect("8 bytes"));
            let c: Vec<u64> = self
                .nonce
                .candidates(n)
                .filter(|&s| s > below.1 && upper.is_none_or(|u| s < u))
                .collect();
            if !c.is_empty() {
                return c;
            }
        }
        trial_order(
            below.1,
            gap,
            upper,
            self.mean.get(),
            (HEADER_LEN + self.shape.min_body) as u64,
            MAX_WIRE as u64,
            self.limits.max_trials,
        )
    }

    /// Opens the candidate at `p` under each proposed number; delivers it on success.
    fn try_record(&mut self, p: u64, h: Header, deliver: &mut dyn FnMut(Record<'_>)) -> bool {
        if self.handled.len() >= self.limits.max_ooo_records {
            self.counters.ooo_table_full += 1;
            return false;
        }
        self.counters.ooo_candidates += 1;
        let q = p + h.wire_len() as u64;
        for s in self
            .trials_for(p, h)
            .into_iter()
            .take(self.limits.max_trials)
        {
            if s < self.seq || self.handled_seqs.contains(&s) {
                continue;
            }
            // Opening is in place and leaves garbage on failure: copy per trial.
            self.scratch.clear();
            self.scratch.extend_from_slice(self.win.at(p, q));
            self.counters.trials += 1;
            let msg = InboundOpaqueMessage::new(
                ContentType::ApplicationData,
                ProtocolVersion::TLSv1_2,
                &mut self.scratch[HEADER_LEN..],
            );
            let Ok(plain) = self.dec.decrypt(msg, s) else {
                continue;
            };
            if plain.typ != ContentType::ApplicationData || plain.payload.len() > MAX_FRAGMENT {
                // Authentic but not ours to deliver early (a TLS 1.3 KeyUpdate, ticket
                // or alert): the in-order walk handles it.
                self.counters.ooo_control_left += 1;
                return false;
            }
            self.counters.delivered += 1;
            self.counters.delivered_out_of_order += 1;
            deliver(Record {
                offset: p,
                seq: s,
                epoch: self.epoch,
                in_order: false,
                data: plain.payload,
            });
            self.handled.insert(p, (s, q));
            self.handled_seqs.insert(s);
            if self.anchors.len() + 2 <= 2 * self.limits.max_ooo_records {
                self.anchors.insert(p, s);
                self.anchors.insert(q, s + 1);
            }
            self.mean.add(h.wire_len());
            return true;
        }
        self.counters.ooo_unauthenticated += 1;
        false
    }
}

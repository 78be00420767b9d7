//! The `page` application: one page load over one connection, in one of three
//! framings, for the msTCP web experiment (Minion NSDI 2012 §8.5, Fig. 13; thesis
//! §6.2.3 Fig. 6.10; spec `minion.md` §6.5; claim MN-10).
//!
//! The browser (the flow's client host) requests the primary object (index 0); once
//! it has all of it, it requests every secondary object at once (the paper: the
//! browser "cannot begin requesting secondary objects until it has downloaded the
//! primary object completely"). The server (the flow's receiver host) answers on the
//! same connection:
//!
//! - [`PageFraming::Pipelined`]: HTTP/1.1 pipelining. Responses are the objects'
//!   bytes back to back, in request order, read in order.
//! - [`PageFraming::Mstcp`]: HTTP/1.0-style parallel requests over msTCP
//!   (`brisk_minion::mstcp`): request and response of object `k` are one message each
//!   on stream `k`, the server's chunks interleaved round-robin over the objects,
//!   over uCOBS; with `[flow.tcp] unordered` the browser gets each chunk as soon as
//!   its stream allows, whatever other streams wait for.
//! - [`PageFraming::H2`]: HTTP/2-style multiplexing (ours, beyond the paper): each
//!   response cut into DATA frames of at most `frame` bytes with HTTP/2's 9-byte
//!   frame header (RFC 9113 §4.1), frames of the open responses round-robin, read in
//!   order. Flow-control windows, HEADERS and HPACK are not modelled (see
//!   docs/mechanisms/mstcp.md).
//!
//! A request is `request` bytes: "GET " and the object's index (u32, big-endian),
//! then the flow's forward pattern. Byte `j` of object `k` is the reverse pattern at
//! offset `k · OBJECT_STRIDE + j`, so the browser checks every byte it gets against
//! what the object must hold, wherever the byte sits on the wire.
//!
//! Times, ns since time zero: the page starts when the primary request is written;
//! per object the first byte and the last byte read by the browser.

use brisk_minion::mstcp::{MsEvent, MsReceiver, MsSender, RecvLimits, SendLimits};
use brisk_tcp::stream::ByteStream;
use brisk_time::Instant;
use std::collections::VecDeque;
use std::rc::Rc;

use brisk_app::payload::{Pattern, PATTERN_LEN};

/// The page's words and limits are the scenario vocabulary's.
pub use brisk_scenario::app::{
    PageConfig, PageFraming, DEFAULT_CHUNK, DEFAULT_FRAME, DEFAULT_PAGE_REQUEST, MAX_FRAME,
    MAX_OBJECT, MAX_PAGE, MAX_PAGE_OBJECTS, MIN_PAGE_REQUEST,
};
/// HTTP/2's frame header.
pub const H2_HEADER: usize = 9;

/// Appends an HTTP/2 frame header (RFC 9113 §4.1): 24-bit length, type, flags and
/// the 31-bit stream id. Shared with the satellite web driver (`sat_web.rs`).
pub(crate) fn h2_frame_header(out: &mut Vec<u8>, len: usize, ty: u8, flags: u8, stream: u32) {
    out.extend_from_slice(&(len as u32).to_be_bytes()[1..]);
    out.push(ty);
    out.push(flags);
    out.extend_from_slice(&stream.to_be_bytes());
}
/// Distance between objects' starting offsets in the pattern (a prime, so objects
/// start at different places of the 65 521-byte table).
const OBJECT_STRIDE: u64 = 1_000_003;
const REQUEST_MAGIC: &[u8; 4] = b"GET ";

/// `n` bytes of object `k` from offset `off` (`n` ≤ the pattern's length).
fn object_bytes(pat: &Pattern, k: usize, off: u64, n: usize) -> &[u8] {
    pat.at(k as u64 * OBJECT_STRIDE + off, n)
}

/// Whether `data` is object `k`'s bytes from `off`.
fn object_matches(pat: &Pattern, k: usize, off: u64, data: &[u8]) -> bool {
    data.chunks(PATTERN_LEN)
        .enumerate()
        .all(|(i, c)| c == object_bytes(pat, k, off + (i * PATTERN_LEN) as u64, c.len()))
}

fn request_bytes(pat: &Pattern, k: usize, size: u64) -> Vec<u8> {
    let mut r = Vec::with_capacity(size as usize);
    r.extend_from_slice(REQUEST_MAGIC);
    r.extend_from_slice(&(k as u32).to_be_bytes());
    let rest = (size as usize).saturating_sub(r.len());
    r.extend_from_slice(pat.at(k as u64 * OBJECT_STRIDE, rest));
    r
}

/// The object a request asks for, if it is one the browser could send.
fn parse_request(pat: &Pattern, r: &[u8], size: u64, objects: usize) -> Option<usize> {
    if r.len() as u64 != size || r.len() < 8 || &r[..4] != REQUEST_MAGIC {
        return None;
    }
    let k = u32::from_be_bytes([r[4], r[5], r[6], r[7]]) as usize;
    (k < objects && r == request_bytes(pat, k, size).as_slice()).then_some(k)
}

/// One object as the browser saw it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PageObject {
    pub size: u64,
    /// When its first and last bytes were read, ns since time zero.
    pub first_ns: Option<u64>,
    pub done_ns: Option<u64>,
}

/// A page load's results (`FlowResult::page`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PageResult {
    pub framing: &'static str,
    /// When the primary request was written, ns since time zero.
    pub start_ns: Option<u64>,
    pub objects: Vec<PageObject>,
    /// Response bytes that were not what their object must hold (or beyond it), and
    /// framing errors (bad frames, broken msTCP streams); 0 for a clean load.
    pub bad: u64,
    /// Requests the server could not parse.
    pub bad_requests: u64,
    /// msTCP: response chunks that waited for an earlier chunk of their stream, and
    /// uCOBS records delivered out of order.
    pub chunks_held: u64,
    pub records_out_of_order: u64,
    /// msTCP: datagrams that were not chunks, and uCOBS records that did not decode.
    pub malformed: u64,
}

impl PageResult {
    /// Every object arrived whole and nothing was wrong.
    pub fn clean(&self) -> bool {
        self.objects.iter().all(|o| o.done_ns.is_some())
            && self.bad == 0
            && self.bad_requests == 0
            && self.malformed == 0
    }

    /// Page load time: start to the last byte of the last object, ns.
    pub fn plt_ns(&self) -> Option<u64> {
        let start = self.start_ns?;
        let end = self
            .objects
            .iter()
            .map(|o| o.done_ns)
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .max()?;
        Some(end - start)
    }

    /// Mean over the objects of the time from the start to their first byte, ns.
    pub fn mean_ttfb_ns(&self) -> Option<f64> {
        let start = self.start_ns?;
        let v = self
            .objects
            .iter()
            .map(|o| o.first_ns.map(|t| (t - start) as f64))
            .collect::<Option<Vec<_>>>()?;
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    }
}

/// The in-order response parser of the pipelined and HTTP/2 framings.
#[derive(Debug, Default)]
struct InOrder {
    /// Pipelined: the objects in request order, and the current one's offset.
    order: VecDeque<usize>,
    /// HTTP/2: the frame header read so far, then the frame's object and bytes left.
    hdr: Vec<u8>,
    frame: Option<(usize, u64)>,
}

/// The browser.
#[derive(Debug)]
pub struct PageClient {
    cfg: PageConfig,
    fwd: Rc<Pattern>,
    rev: Rc<Pattern>,
    result: PageResult,
    /// Bytes of each object read so far.
    got: Vec<u64>,
    done: usize,
    /// Requests not yet taken by the stream (pipelined, HTTP/2).
    out: Vec<u8>,
    out_done: usize,
    ms_tx: Option<MsSender>,
    ms_rx: Option<MsReceiver>,
    parse: InOrder,
    secondaries_requested: bool,
    closed: bool,
}

impl PageClient {
    pub fn new(cfg: PageConfig, fwd: Rc<Pattern>, rev: Rc<Pattern>) -> Self {
        let n = cfg.sizes.len();
        let ms = cfg.framing == PageFraming::Mstcp;
        PageClient {
            result: PageResult {
                framing: cfg.framing.name(),
                objects: cfg
                    .sizes
                    .iter()
                    .map(|&size| PageObject {
                        size,
                        ..PageObject::default()
                    })
                    .collect(),
                ..PageResult::default()
            },
            got: vec![0; n],
            done: 0,
            out: Vec::new(),
            out_done: 0,
            // NOTE(expect): the default limits are valid, and the page's objects
            // (≤ MAX_PAGE_OBJECTS streams, ≤ MAX_PAGE bytes) fit them.
            ms_tx: ms.then(|| {
                MsSender::new(SendLimits {
                    max_chunk: cfg.chunk as usize,
                    ..SendLimits::default()
                })
                .expect("valid limits")
            }),
            ms_rx: ms.then(|| {
                MsReceiver::new(
                    RecvLimits {
                        max_chunk: cfg.chunk as usize,
                        max_held_bytes: MAX_PAGE as usize,
                        max_reorder_chunks: 32_767,
                        ..RecvLimits::default()
                    },
                    64 * 1024,
                )
                .expect("valid limits")
            }),
            parse: InOrder::default(),
            secondaries_requested: false,
            closed: false,
            cfg,
            fwd,
            rev,
        }
    }

    pub fn result(&self) -> &PageResult {
        &self.result
    }

    pub fn complete(&self) -> bool {
        self.done == self.cfg.sizes.len()
    }

    /// Response payload bytes read (each once).
    pub fn bytes(&self) -> u64 {
        self.got.iter().sum()
    }

    fn request(&mut self, k: usize) {
        let r = request_bytes(&self.fwd, k, self.cfg.request);
        match &mut self.ms_tx {
            Some(tx) => {
                if tx.send(k as u16, &r, true).is_err() {
                    self.result.bad += 1;
                }
            }
            None => {
                self.out.extend_from_slice(&r);
                self.parse.order.push_back(k);
            }
        }
    }

    /// The connection is up: ask for the primary object.
    pub fn start(&mut self, now: Instant, p: &mut dyn ByteStream) {
        self.result.start_ns = Some(now.as_nanos());
        self.request(0);
        self.write(p);
    }

    pub fn write(&mut self, p: &mut dyn ByteStream) {
        if let Some(tx) = &mut self.ms_tx {
            if tx.poll_write(p).is_err() {
                self.result.bad += 1;
            }
            return;
        }
        while self.out_done < self.out.len() {
            match p.write(&self.out[self.out_done..]) {
                Ok(n) if n > 0 => self.out_done += n,
                _ => break,
            }
        }
        if self.out_done == self.out.len() {
            self.out.clear();
            self.out_done = 0;
        }
    }

    /// `data` is object `k`'s next bytes.
    fn on_bytes(&mut self, now: Instant, k: usize, off: u64, data: &[u8]) {
        let size = self.cfg.sizes[k];
        if off != self.got[k] || off + data.len() as u64 > size {
            self.result.bad += data.len() as u64;
            return;
        }
        if !object_matches(&self.rev, k, off, data) {
            self.result.bad += data.len() as u64;
        }
        let o = &mut self.result.objects[k];
        if o.first_ns.is_none() && (!data.is_empty() || size == 0) {
            o.first_ns = Some(now.as_nanos());
        }
        self.got[k] += data.len() as u64;
        if self.got[k] == size && o.done_ns.is_none() {
            o.done_ns = Some(now.as_nanos());
            self.done += 1;
        }
    }

    /// Reads what the stream has; requests the secondaries once the primary is in;
    /// closes once every object is.
    pub fn read(&mut self, now: Instant, p: &mut dyn ByteStream, scratch: &mut [u8]) {
        if let Some(mut rx) = self.ms_rx.take() {
            let r = rx.poll(p, &mut |e| match e {
                MsEvent::Chunk(c) if usize::from(c.stream) < self.got.len() => {
                    self.on_bytes(now, usize::from(c.stream), u64::from(c.offset), c.data);
                }
                MsEvent::Chunk(c) => self.result.bad += c.data.len() as u64,
                MsEvent::Broken { .. } => self.result.bad += 1,
            });
            self.result.bad += u64::from(r.is_err());
            let c = rx.counters();
            self.result.chunks_held = c.held;
            self.result.records_out_of_order = rx.ucobs_counters().delivered_out_of_order;
            self.result.malformed = c.malformed + rx.ucobs_counters().malformed;
            self.ms_rx = Some(rx);
        } else {
            loop {
                let n = p.read(scratch).unwrap_or(0);
                if n == 0 {
                    break;
                }
                self.parse_in_order(now, &scratch[..n]);
            }
        }
        if !self.secondaries_requested && self.result.objects[0].done_ns.is_some() {
            self.secondaries_requested = true;
            for k in 1..self.cfg.sizes.len() {
                self.request(k);
            }
        }
        self.write(p);
        if self.complete() && !self.closed {
            self.closed = true;
            let _ = p.shutdown_write();
        }
    }

    fn parse_in_order(&mut self, now: Instant, mut data: &[u8]) {
        while !data.is_empty() {
            match self.cfg.framing {
                PageFraming::H2 => {
                    if let Some((k, left)) = self.parse.frame {
                        let n = (left as usize).min(data.len());
                        let off = self.got[k];
                        self.on_bytes(now, k, off, &data[..n]);
                        data = &data[n..];
                        self.parse.frame = (left > n as u64).then(|| (k, left - n as u64));
                        continue;
                    }
                    let need = H2_HEADER - self.parse.hdr.len();
                    let n = need.min(data.len());
                    self.parse.hdr.extend_from_slice(&data[..n]);
                    data = &data[n..];
                    if self.parse.hdr.len() == H2_HEADER {
                        let h = &self.parse.hdr;
                        let len = u64::from(h[0]) << 16 | u64::from(h[1]) << 8 | u64::from(h[2]);
                        let sid = u32::from_be_bytes([h[5], h[6], h[7], h[8]]) as usize;
                        let k = sid.saturating_sub(1) / 2;
                        let ok = h[3] == 0 && sid % 2 == 1 && k < self.got.len();
                        self.parse.hdr.clear();
                        if ok {
                            self.parse.frame = (len > 0).then_some((k, len));
                        } else {
                            // A frame we cannot place: count the rest as bad.
                            self.result.bad += data.len() as u64 + 1;
                            return;
                        }
                    }
                }
                _ => {
                    let Some(&k) = self.parse.order.front() else {
                        self.result.bad += data.len() as u64;
                        return;
                    };
                    let left = self.cfg.sizes[k] - self.got[k];
                    let n = (left as usize).min(data.len());
                    let off = self.got[k];
                    self.on_bytes(now, k, off, &data[..n]);
                    data = &data[n..];
                    if self.got[k] == self.cfg.sizes[k] {
                        self.parse.order.pop_front();
                    }
                }
            }
        }
    }
}

/// The server.
#[derive(Debug)]
pub struct PageServer {
    cfg: PageConfig,
    fwd: Rc<Pattern>,
    rev: Rc<Pattern>,
    /// Request bytes so far (pipelined, HTTP/2).
    req: Vec<u8>,
    /// Responses not fully written: object and bytes written (pipelined: the front
    /// one only, in order; HTTP/2: one frame each, round-robin).
    active: VecDeque<(usize, u64)>,
    /// The frame (HTTP/2) or piece (pipelined) being written, and how much is out.
    cur: Vec<u8>,
    cur_done: usize,
    ms_tx: Option<MsSender>,
    ms_rx: Option<MsReceiver>,
    /// msTCP: the request message being rebuilt, per stream (bounded by the request
    /// size; at most MAX_PAGE_OBJECTS streams).
    ms_req: Vec<Vec<u8>>,
    pub bad_requests: u64,
    /// Object bytes handed to the stream.
    pub sent: u64,
}

impl PageServer {
    pub fn new(cfg: PageConfig, fwd: Rc<Pattern>, rev: Rc<Pattern>) -> Self {
        let ms = cfg.framing == PageFraming::Mstcp;
        let n = cfg.sizes.len();
        PageServer {
            req: Vec::new(),
            active: VecDeque::new(),
            cur: Vec::new(),
            cur_done: 0,
            // NOTE(expect): as for the client.
            ms_tx: ms.then(|| {
                MsSender::new(SendLimits {
                    max_chunk: cfg.chunk as usize,
                    max_queued_bytes: MAX_PAGE as usize,
                    ..SendLimits::default()
                })
                .expect("valid limits")
            }),
            ms_rx: ms.then(|| {
                MsReceiver::new(
                    RecvLimits {
                        max_chunk: cfg.chunk as usize,
                        ..RecvLimits::default()
                    },
                    64 * 1024,
                )
                .expect("valid limits")
            }),
            ms_req: if ms { vec![Vec::new(); n] } else { Vec::new() },
            bad_requests: 0,
            sent: 0,
            cfg,
            fwd,
            rev,
        }
    }

    fn serve(&mut self, k: usize) {
        if let Some(tx) = &mut self.ms_tx {
            let size = self.cfg.sizes[k];
            let mut body = Vec::with_capacity(size as usize);
            let mut off = 0;
            while off < size {
                let n = (size - off).min(PATTERN_LEN as u64) as usize;
                body.extend_from_slice(object_bytes(&self.rev, k, off, n));
                off += n as u64;
            }
            if tx.send(k as u16, &body, true).is_err() {
                self.bad_requests += 1;
            }
        } else {
            self.active.push_back((k, 0));
        }
    }

    pub fn read(&mut self, p: &mut dyn ByteStream, scratch: &mut [u8]) {
        if let Some(mut rx) = self.ms_rx.take() {
            let mut asked = Vec::new();
            let (fwd, size, reqs, n) = (
                &self.fwd,
                self.cfg.request,
                &mut self.ms_req,
                self.cfg.sizes.len(),
            );
            let mut bad = 0;
            let r = rx.poll(p, &mut |e| match e {
                MsEvent::Chunk(c) => {
                    let Some(buf) = reqs.get_mut(usize::from(c.stream)) else {
                        bad += 1;
                        return;
                    };
                    if buf.len() + c.data.len() > size as usize {
                        bad += 1;
                        buf.clear();
                        return;
                    }
                    buf.extend_from_slice(c.data);
                    if c.end_of_msg {
                        match parse_request(fwd, buf, size, n) {
                            Some(k) if k == usize::from(c.stream) => asked.push(k),
                            _ => bad += 1,
                        }
                        buf.clear();
                    }
                }
                MsEvent::Broken { .. } => bad += 1,
            });
            self.bad_requests += bad + u64::from(r.is_err()) + rx.counters().malformed;
            self.ms_rx = Some(rx);
            for k in asked {
                self.serve(k);
            }
        } else {
            loop {
                let n = p.read(scratch).unwrap_or(0);
                if n == 0 {
                    break;
                }
                let mut data = &scratch[..n];
                let size = self.cfg.request as usize;
                while !data.is_empty() {
                    let take = (size - self.req.len()).min(data.len());
                    self.req.extend_from_slice(&data[..take]);
                    data = &data[take..];
                    if self.req.len() == size {
                        match parse_request(
                            &self.fwd,
                            &self.req,
                            self.cfg.request,
                            self.cfg.sizes.len(),
                        ) {
                            Some(k) => self.serve(k),
                            None => self.bad_requests += 1,
                        }
                        self.req.clear();
                    }
                }
            }
        }
        self.write(p);
    }

    /// Writes responses while the stream takes them.
    pub fn write(&mut self, p: &mut dyn ByteStream) {
        if let Some(tx) = &mut self.ms_tx {
            let before = tx.counters().payload_bytes;
            if tx.poll_write(p).is_err() {
                self.bad_requests += 1;
            }
            self.sent += tx.counters().payload_bytes - before;
            return;
        }
        loop {
            while self.cur_done < self.cur.len() {
                match p.write(&self.cur[self.cur_done..]) {
                    Ok(n) if n > 0 => self.cur_done += n,
                    _ => return,
                }
            }
            let Some((k, off)) = self.active.pop_front() else {
                return;
            };
            let size = self.cfg.sizes[k];
            self.cur.clear();
            self.cur_done = 0;
            let n = match self.cfg.framing {
                PageFraming::H2 => {
                    let n = (size - off).min(self.cfg.frame);
                    let sid = 2 * k as u32 + 1;
                    let end = u8::from(off + n == size);
                    h2_frame_header(&mut self.cur, n as usize, 0, end, sid);
                    n
                }
                _ => (size - off).min(PATTERN_LEN as u64),
            };
            let mut o = 0;
            while o < n {
                let m = (n - o).min(PATTERN_LEN as u64) as usize;
                self.cur
                    .extend_from_slice(object_bytes(&self.rev, k, off + o, m));
                o += m as u64;
            }
            self.sent += n;
            if off + n < size {
                match self.cfg.framing {
                    // Round-robin: the response goes to the back.
                    PageFraming::H2 => self.active.push_back((k, off + n)),
                    // In order: it stays in front.
                    _ => self.active.push_front((k, off + n)),
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_round_trip_and_reject_junk() {
        let pat = Pattern::new(1);
        let r = request_bytes(&pat, 7, 300);
        assert_eq!(r.len(), 300);
        assert_eq!(parse_request(&pat, &r, 300, 10), Some(7));
        assert_eq!(parse_request(&pat, &r, 300, 7), None);
        let mut bad = r.clone();
        bad[100] ^= 1;
        assert_eq!(parse_request(&pat, &bad, 300, 10), None);
    }

    #[test]
    fn object_bytes_span_the_pattern() {
        let pat = Pattern::new(2);
        let a: Vec<u8> = (0..200_000u64)
            .step_by(50_000)
            .flat_map(|o| object_bytes(&pat, 3, o, 50_000).to_vec())
            .collect();
        assert!(object_matches(&pat, 3, 0, &a));
        assert!(!object_matches(&pat, 4, 0, &a));
    }
}

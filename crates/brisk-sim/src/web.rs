//! A browser-like page download (the `web` app): the TLP paper's web test (RITE D1.3
//! App. A.1 §3.3; spec `rdb-tlp-rtor-newcwv.md` §2.2.3 and resolutions 14–15).
//!
//! The page is a list of object sizes, the first being the HTML. The browser (the
//! flow's client host) opens connection 0 and requests the HTML; once the HTML has
//! arrived it opens the other `connections − 1` persistent connections, and every
//! connection requests the next object whenever it is idle (HTTP/1.1 without
//! pipelining: "requests issued as connections free up"). When no object is left, an
//! idle connection closes.
//!
//! A request is `request` bytes of the flow's pattern. The object's size travels beside
//! the stream in a per-connection queue the server pops when a request is complete,
//! which stands in for the URL in an HTTP request line (the simulator checks the bytes,
//! not their meaning).
//!
//! Each object's completion time (OCT) runs from its request (written to TCP) to its
//! last byte read by the browser. Its byte range in its connection's response stream
//! is kept so the run can tell which objects had a retransmission among their last
//! four segments (the paper's selection).

use brisk_time::Instant;
use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;

/// The limits are the scenario vocabulary's.
pub use brisk_scenario::app::{
    DEFAULT_WEB_CONNECTIONS, MAX_WEB_CONNECTIONS as MAX_CONNECTIONS, MAX_WEB_OBJECTS as MAX_OBJECTS,
};

/// One object of the page, as the run saw it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebObject {
    pub size: u64,
    /// The connection that fetched it (0 for the HTML).
    pub conn: u32,
    /// Start of its bytes in that connection's response stream.
    pub resp_start: u64,
    /// When its request was written, ns since time zero.
    pub requested_ns: Option<u64>,
    /// When its last byte was read, ns since time zero.
    pub done_ns: Option<u64>,
}

impl WebObject {
    /// Object completion time: request to last byte, ns.
    pub fn oct_ns(&self) -> Option<u64> {
        Some(self.done_ns?.saturating_sub(self.requested_ns?))
    }
}

/// The page state the browser's connections share.
#[derive(Debug, Default)]
pub struct Page {
    pub objects: Vec<WebObject>,
    /// Next object to hand out.
    next: usize,
    done: usize,
    /// Response bytes asked for so far, per connection.
    requested_bytes: Vec<u64>,
}

/// A handle on the shared page.
pub type SharedPage = Rc<RefCell<Page>>;
/// Object sizes a connection's server still has to send, in request order.
pub type SizeQueue = Rc<RefCell<VecDeque<u64>>>;

impl Page {
    pub fn new(sizes: &[u64], connections: u32) -> SharedPage {
        Rc::new(RefCell::new(Page {
            objects: sizes
                .iter()
                .map(|&size| WebObject {
                    size,
                    ..WebObject::default()
                })
                .collect(),
            next: 0,
            done: 0,
            requested_bytes: vec![0; connections as usize],
        }))
    }

    pub fn html_done(&self) -> bool {
        self.objects.first().is_none_or(|o| o.done_ns.is_some())
    }

    /// Connection `conn` may open: connection 0 at once, the others after the HTML.
    pub fn may_connect(&self, conn: u32) -> bool {
        conn == 0 || self.html_done()
    }

    /// Every object has been handed out (an idle connection may close).
    pub fn exhausted(&self) -> bool {
        self.next >= self.objects.len()
    }

    pub fn complete(&self) -> bool {
        self.done == self.objects.len()
    }

    /// The next object for idle connection `conn`, if one may be requested now.
    pub fn take(&mut self, conn: u32, now: Instant) -> Option<usize> {
        let k = self.next;
        let ok = k < self.objects.len() && (k == 0 && conn == 0 || k > 0 && self.html_done());
        if !ok {
            return None;
        }
        self.next += 1;
        let c = conn as usize;
        let o = &mut self.objects[k];
        o.conn = conn;
        o.resp_start = self.requested_bytes[c];
        o.requested_ns = Some(now.as_nanos());
        self.requested_bytes[c] += o.size;
        Some(k)
    }

    /// Object `k`'s last byte was read.
    pub fn finish(&mut self, k: usize, now: Instant) {
        if let Some(o) = self.objects.get_mut(k) {
            if o.done_ns.is_none() {
                o.done_ns = Some(now.as_nanos());
                self.done += 1;
            }
        }
    }

    /// When the last object arrived (the page load time), ns since time zero.
    pub fn loaded_ns(&self) -> Option<u64> {
        if !self.complete() {
            return None;
        }
        self.objects.iter().filter_map(|o| o.done_ns).max()
    }
}

/// A page download's results (`FlowResult::web`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WebResult {
    pub objects: Vec<WebObject>,
    /// Per object: some retransmission carried bytes of its last four segments (the
    /// TLP paper's selection of downloads).
    pub tail_retransmitted: Vec<bool>,
    /// From the first connection's connect to the last object, if the page completed.
    pub load_time: Option<brisk_time::Duration>,
    /// The servers' counters, summed over the page's connections: data segments sent,
    /// retransmissions, and D-SACKs received (retransmissions the browser already had).
    pub data_segs_out: u64,
    pub retransmits: u64,
    pub dsack_received: u64,
}

impl WebResult {
    /// Collects a page's results: `servers` are each connection's server-side
    /// retransmission log and `TcpInfo` (in connection order), `connect_ns` when the
    /// first connection opened.
    pub fn collect(
        page: &Page,
        servers: &[(&ByteRanges, Option<&brisk_tcp::TcpInfo>)],
        connect_ns: Option<u64>,
    ) -> Self {
        let mut r = WebResult {
            objects: page.objects.clone(),
            ..WebResult::default()
        };
        for (_, info) in servers {
            if let Some(i) = info {
                r.data_segs_out += i.data_segs_out;
                r.retransmits += i.retransmits;
                r.dsack_received += i.dsack_received;
            }
        }
        r.tail_retransmitted = page
            .objects
            .iter()
            .map(|o| {
                let Some((log, info)) = servers.get(o.conn as usize) else {
                    return false;
                };
                let mss = info.map_or(1448, |i| u64::from(i.mss.max(1)));
                let end = o.resp_start + o.size;
                let tail = end.saturating_sub(TAIL_SEGMENTS * mss).max(o.resp_start);
                o.requested_ns.is_some() && log.overlaps(tail, end)
            })
            .collect();
        r.load_time = match (page.loaded_ns(), connect_ns) {
            (Some(done), Some(start)) => {
                Some(brisk_time::Duration::from_nanos(done.saturating_sub(start)))
            }
            _ => None,
        };
        r
    }
}

/// The segments at an object's (or flow's) end that make a loss a tail loss.
pub const TAIL_SEGMENTS: u64 = 4;

/// Merged byte ranges of a stream that were retransmitted, in stream offsets.
/// Bounded: beyond [`ByteRanges::CAP`] disjoint ranges, new ones are counted, not kept.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ByteRanges {
    ranges: Vec<(u64, u64)>,
    pub overflow: u64,
}

impl ByteRanges {
    pub const CAP: usize = 4096;

    /// Records a retransmission of `[start, end)` (a bare FIN: one byte past the data).
    pub fn add(&mut self, start: u64, end: u64) {
        let end = end.max(start + 1);
        // Ranges are sorted and disjoint; the first that ends at or after `start` is
        // where the new one merges or goes.
        let i = self.ranges.partition_point(|&(_, e)| e < start);
        let mut j = i;
        let (mut s, mut e) = (start, end);
        while j < self.ranges.len() && self.ranges[j].0 <= e {
            s = s.min(self.ranges[j].0);
            e = e.max(self.ranges[j].1);
            j += 1;
        }
        if i == j && self.ranges.len() >= Self::CAP {
            self.overflow += 1;
            return;
        }
        self.ranges.splice(i..j, [(s, e)]);
    }

    pub fn ranges(&self) -> &[(u64, u64)] {
        &self.ranges
    }

    /// Whether any retransmitted byte lies in `[start, end)`.
    pub fn overlaps(&self, start: u64, end: u64) -> bool {
        let i = self.ranges.partition_point(|&(_, e)| e <= start);
        self.ranges.get(i).is_some_and(|&(s, _)| s < end)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(ms: u64) -> Instant {
        Instant::from_nanos(ms * 1_000_000)
    }

    #[test]
    fn html_first_then_objects_on_any_idle_connection() {
        let page = Page::new(&[1000, 10, 20, 30], 3);
        let mut p = page.borrow_mut();
        assert!(p.may_connect(0) && !p.may_connect(1));
        assert_eq!(p.take(1, t(0)), None, "only connection 0 asks for the HTML");
        assert_eq!(p.take(0, t(0)), Some(0));
        assert_eq!(p.take(0, t(1)), None, "objects wait for the HTML");
        p.finish(0, t(5));
        assert!(p.may_connect(2));
        assert_eq!(p.take(2, t(6)), Some(1));
        assert_eq!(p.take(0, t(6)), Some(2));
        assert_eq!(p.take(2, t(7)), Some(3));
        assert!(p.exhausted() && !p.complete());
        assert_eq!(
            p.objects[2].resp_start, 1000,
            "after the HTML on connection 0"
        );
        assert_eq!(p.objects[3].resp_start, 10);
        for k in 1..4 {
            p.finish(k, t(9 + k as u64));
        }
        assert!(p.complete());
        assert_eq!(p.loaded_ns(), Some(12_000_000));
        assert_eq!(p.objects[0].oct_ns(), Some(5_000_000));
    }

    #[test]
    fn retransmitted_ranges_merge_and_answer_overlaps() {
        let mut r = ByteRanges::default();
        r.add(100, 200);
        r.add(300, 400);
        r.add(200, 250); // adjacent: merges
        assert_eq!(r.ranges(), &[(100, 250), (300, 400)]);
        r.add(0, 10);
        r.add(240, 310); // bridges two
        assert_eq!(r.ranges(), &[(0, 10), (100, 400)]);
        r.add(500, 500); // a bare FIN counts one byte
        assert_eq!(r.ranges().last(), Some(&(500, 501)));
        assert!(r.overlaps(399, 1000) && !r.overlaps(400, 500) && r.overlaps(500, 501));
        assert!(!r.overlaps(10, 100) && r.overlaps(9, 10));
    }

    #[test]
    fn retransmitted_ranges_are_bounded() {
        let mut r = ByteRanges::default();
        for i in 0..(ByteRanges::CAP as u64 + 10) {
            r.add(i * 10, i * 10 + 5);
        }
        assert_eq!(r.ranges().len(), ByteRanges::CAP);
        assert_eq!(r.overflow, 10);
        r.add(0, 3); // merging still works at the cap
        assert_eq!(r.ranges().len(), ByteRanges::CAP);
    }
}

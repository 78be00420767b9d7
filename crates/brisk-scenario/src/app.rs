//! What the application on a flow does (`app = { kind = ... }`), the limits of each
//! kind and their checks. The simulator's apps (brisk-sim `app`, `page_app`, `web`,
//! `udp_app`, `dgram_app`) and real runs read these; the limits live here so that
//! the words and their ranges are in one place.

use crate::units::{Dur, Size};
use serde::{Deserialize, Serialize};
use std::rc::Rc;

/// Every record starts with this header (index, send time, ...): brisk-app's.
pub const RECORD_HEADER_LEN: usize = brisk_app::records::HEADER_LEN;
/// Largest record of a `records` app: brisk-app's.
pub const MAX_RECORD: u64 = brisk_app::records::MAX_RECORD;
/// Largest `write_size` of a bulk app (16 MiB, the largest send buffer we expect).
pub const MAX_BULK_WRITE: u64 = 16 << 20;
/// Largest `size` of a `udp` flow: the largest UDP payload in an IPv4 packet.
pub const MAX_UDP_PAYLOAD: u64 = 65_535 - 20 - 8;
/// Most connections a `web` page may use.
pub const MAX_WEB_CONNECTIONS: u32 = 16;
/// Connections per `web` page when the scenario gives none (browsers use 6 per host
/// name).
pub const DEFAULT_WEB_CONNECTIONS: u32 = 6;
/// Most objects on a `web` page.
pub const MAX_WEB_OBJECTS: usize = 10_000;

/// Most objects on a page (each is one msTCP stream).
pub const MAX_PAGE_OBJECTS: usize = 1024;
/// Largest object.
pub const MAX_OBJECT: u64 = 16 << 20;
/// Largest page (all objects).
pub const MAX_PAGE: u64 = 64 << 20;
/// Request size when the scenario gives none (spec §6.5: "requests ≈ 300 B").
pub const DEFAULT_PAGE_REQUEST: u64 = 300;
/// Smallest request: "GET " and the index.
pub const MIN_PAGE_REQUEST: u64 = 8;
/// msTCP chunk payload when the scenario gives none (spec §5: a chunk's record fits
/// one 1448-byte segment).
pub const DEFAULT_CHUNK: u64 = 1400;
/// HTTP/2 frame payload when the scenario gives none (RFC 9113's initial
/// SETTINGS_MAX_FRAME_SIZE).
pub const DEFAULT_FRAME: u64 = 16_384;
/// HTTP/2's largest frame payload (2^24 − 1).
pub const MAX_FRAME: u64 = (1 << 24) - 1;
/// How the page's responses share the connection.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default)]
#[serde(rename_all = "snake_case")]
pub enum PageFraming {
    /// HTTP/1.1 pipelining over in-order TCP.
    #[default]
    Pipelined,
    /// HTTP/1.0-style parallel requests over msTCP (uCOBS; unordered with uTCP).
    Mstcp,
    /// HTTP/2-style frames, round-robin, over in-order TCP.
    H2,
}

impl PageFraming {
    pub fn name(self) -> &'static str {
        match self {
            PageFraming::Pipelined => "pipelined",
            PageFraming::Mstcp => "mstcp",
            PageFraming::H2 => "h2",
        }
    }
}

/// A page's settings (validated by the scenario).
#[derive(Clone, Debug)]
pub struct PageConfig {
    pub sizes: Rc<[u64]>,
    pub framing: PageFraming,
    pub request: u64,
    pub chunk: u64,
    pub frame: u64,
}

/// A pause of a bulk sender: from `at` (run time) for `for`.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct PauseSpec {
    pub at: Dur,
    #[serde(rename = "for")]
    pub length: Dur,
}

/// What the application on a flow does.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum AppSpec {
    /// Send as fast as TCP allows; with `bytes`, send that many then close.
    Bulk {
        #[serde(default)]
        bytes: Option<Size>,
        /// Write in calls of at most this many bytes (Minion's write-size sweep, MN-7);
        /// by default each call offers as much as the send buffer takes. With `[flow.tcp]
        /// unordered_send` each such write is taken whole or not at all.
        #[serde(default)]
        write_size: Option<Size>,
        /// Stop writing at `at` (run time) for `for` (the RMCAT media pause-and-resume
        /// test, FSE-4b); what the send buffer holds still goes out.
        #[serde(default)]
        pause: Option<PauseSpec>,
    },
    /// Fixed-size records every `interval` (plus uniform `jitter`), each stamped with its
    /// index and send time so the receiver measures per-record delivery latency.
    Records {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        /// Normal jitter with this standard deviation added to each interval (the RDB
        /// paper's per-stream ITT jitter, e.g. 3ms on 30ms); gaps never go below 0.
        #[serde(default)]
        jitter_sd: Option<Dur>,
        /// Stop (and close) after this many records.
        #[serde(default)]
        count: Option<u64>,
        /// A layered video source (1 to 16 layers): each interval emits one record
        /// per active layer, and the number of active layers adapts to the delay the
        /// sender measures from generation to ACK (brisk-sim's `app::LayerControl`; the
        /// CDG paper's SCC substitute, docs/mechanisms/cdg.md).
        #[serde(default)]
        layers: Option<u32>,
    },
    /// Datagrams over uCOBS (Minion §5, `crate::dgram_app`): `size`-byte datagrams
    /// (the 24-byte record header included) every `interval` (plus uniform `jitter`;
    /// `interval = 0`: network-limited, a new datagram whenever the stream has taken
    /// the previous one), each written as one uCOBS record; with `urgent_every = n`, every n-th datagram
    /// is written at a higher priority (it overtakes only with `[flow.tcp]
    /// unordered_send`). Latency is measured per datagram at its first delivery.
    Datagrams {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        #[serde(default)]
        count: Option<u64>,
        #[serde(default)]
        urgent_every: Option<u64>,
    },
    /// Datagrams over UDP (brisk-sim's `udp_app`): `size`-byte datagrams (the 24-byte record
    /// header included) every `interval` (plus uniform `jitter`), each sent as one IP/UDP
    /// packet at once, with no congestion control and no retransmission; accounted as
    /// `datagrams` (a datagram the network drops is never delivered). The flow's `cc`
    /// and `[flow.tcp]` do not apply.
    Udp {
        size: Size,
        interval: Dur,
        #[serde(default)]
        jitter: Option<Dur>,
        #[serde(default)]
        count: Option<u64>,
    },
    /// `request` bytes up, `response` bytes down, then `think` time; `count` exchanges
    /// (or until the end).
    RequestResponse {
        request: Size,
        response: Size,
        #[serde(default)]
        count: Option<u64>,
        #[serde(default)]
        think: Option<Dur>,
        /// Draw each think time from an exponential distribution with mean `think`
        /// (the CDG paper's download gaps) instead of waiting exactly `think`.
        #[serde(default)]
        think_exp: Option<bool>,
    },
    /// One page load on one connection (brisk-sim's `page_app`; the msTCP web experiment):
    /// `objects` are the sizes, the first being the primary (HTML) object, requested
    /// first; the rest are requested together once it has arrived. `framing`:
    /// "pipelined" (HTTP/1.1 pipelining, default), "mstcp" (a stream per object over
    /// msTCP; with `[flow.tcp] unordered` chunks arrive unordered), or "h2" (HTTP/2-
    /// style frames, round-robin). `request` (default 300 B), `chunk` (msTCP chunk
    /// payload, default 1400 B, mstcp only), `frame` (HTTP/2 frame payload, default
    /// 16 KiB, h2 only). The data flows from the receiver host to the flow's host.
    Page {
        objects: Vec<Size>,
        #[serde(default)]
        framing: PageFraming,
        #[serde(default)]
        request: Option<Size>,
        #[serde(default)]
        chunk: Option<Size>,
        #[serde(default)]
        frame: Option<Size>,
    },
    /// A browser-like page download (brisk-sim's `web`): `objects` are the sizes, the first
    /// being the HTML; the HTML comes over one connection, then the rest over up to
    /// `connections` persistent connections (default 6), each asking for the next
    /// object when idle. `request` is the size of each request (default 300 bytes).
    /// The data flows from the receiver host to the flow's (browser) host: use a
    /// `[reverse]` link to put a bottleneck on it.
    Web {
        objects: Vec<Size>,
        #[serde(default)]
        connections: Option<u32>,
        #[serde(default)]
        request: Option<Size>,
    },
}

impl AppSpec {
    /// A `page` app's settings with the defaults filled in.
    pub fn page_config(&self) -> Option<PageConfig> {
        let AppSpec::Page {
            objects,
            framing,
            request,
            chunk,
            frame,
        } = self
        else {
            return None;
        };
        Some(PageConfig {
            sizes: objects.iter().map(|o| o.0).collect(),
            framing: *framing,
            request: request.map_or(DEFAULT_PAGE_REQUEST, |r| r.0),
            chunk: chunk.map_or(DEFAULT_CHUNK, |c| c.0),
            frame: frame.map_or(DEFAULT_FRAME, |f| f.0),
        })
    }
}

/// Range checks of flow `i`'s app (serde checked the shape). Returns (field, message).
pub(crate) fn validate_app(i: usize, f: &crate::FlowSpec) -> Result<(), (String, String)> {
    let p = |k: &str| format!("flow[{i}].{k}");
    match &f.app {
        AppSpec::Bulk {
            bytes,
            write_size,
            pause,
        } => {
            if bytes.is_some_and(|b| b.0 == 0) {
                return Err((p("app.bytes"), "must be > 0".into()));
            }
            if pause.is_some_and(|q| q.length.0.is_zero()) {
                return Err((p("app.pause.for"), "must be > 0".into()));
            }
            if let Some(w) = write_size {
                if w.0 == 0 || w.0 > MAX_BULK_WRITE {
                    return Err((
                        p("app.write_size"),
                        format!("must be between 1 B and {MAX_BULK_WRITE} B"),
                    ));
                }
                let cfg = f.tcp.to_config(f.cc);
                if cfg.unordered_send && w.0 > cfg.send_buffer as u64 {
                    return Err((
                        p("app.write_size"),
                        format!(
                            "must be at most the send buffer ({} B): with unordered_send a write is taken whole",
                            cfg.send_buffer
                        ),
                    ));
                }
            }
        }
        AppSpec::Records {
            size,
            interval,
            count,
            jitter_sd,
            layers,
            ..
        } => {
            if layers.is_some_and(|n| n == 0 || n > 16) {
                return Err((p("app.layers"), "must be between 1 and 16".into()));
            }
            if jitter_sd.is_some_and(|j| j.0 > interval.0 * 10) {
                return Err((p("app.jitter_sd"), "must be at most 10 intervals".into()));
            }
            if size.0 < RECORD_HEADER_LEN as u64 || size.0 > MAX_RECORD {
                return Err((
                    p("app.size"),
                    format!(
                        "must be between {} (the record header) and 64MiB",
                        RECORD_HEADER_LEN
                    ),
                ));
            }
            if interval.0.is_zero() {
                return Err((p("app.interval"), "must be > 0".into()));
            }
            if *count == Some(0) {
                return Err((p("app.count"), "must be > 0".into()));
            }
        }
        AppSpec::Datagrams {
            size,
            interval,
            jitter,
            count,
            urgent_every,
        } => {
            if size.0 < RECORD_HEADER_LEN as u64 || size.0 > 65_536 {
                return Err((
                    p("app.size"),
                    format!(
                        "must be between {} (the record header) and 64KiB",
                        RECORD_HEADER_LEN
                    ),
                ));
            }
            if interval.0.is_zero() && jitter.is_some() {
                return Err((
                    p("app.jitter"),
                    "has no meaning with interval = 0 (a network-limited source)".into(),
                ));
            }
            if jitter.is_some_and(|j| j.0 > interval.0 * 10) {
                return Err((p("app.jitter"), "must be at most 10 intervals".into()));
            }
            if *count == Some(0) {
                return Err((p("app.count"), "must be > 0".into()));
            }
            if *urgent_every == Some(0) {
                return Err((p("app.urgent_every"), "must be > 0".into()));
            }
        }
        AppSpec::Udp {
            size,
            interval,
            jitter,
            count,
        } => {
            let max = MAX_UDP_PAYLOAD;
            if size.0 < RECORD_HEADER_LEN as u64 || size.0 > max {
                return Err((
                    p("app.size"),
                    format!(
                        "must be between {} (the record header) and {max} bytes (one IPv4 packet)",
                        RECORD_HEADER_LEN
                    ),
                ));
            }
            if interval.0.is_zero() {
                return Err((
                    p("app.interval"),
                    "must be > 0 (UDP has no congestion control to pace a network-limited source)"
                        .into(),
                ));
            }
            if jitter.is_some_and(|j| j.0 > interval.0 * 10) {
                return Err((p("app.jitter"), "must be at most 10 intervals".into()));
            }
            if *count == Some(0) {
                return Err((p("app.count"), "must be > 0".into()));
            }
        }
        AppSpec::RequestResponse {
            request,
            response,
            count,
            think,
            think_exp,
        } => {
            if *think_exp == Some(true) && think.is_none_or(|t| t.0.is_zero()) {
                return Err((
                    p("app.think_exp"),
                    "needs think > 0 (the mean of the exponential gaps)".into(),
                ));
            }
            if request.0 == 0 || request.0 > 64 << 20 {
                return Err((p("app.request"), "must be between 1 and 64MiB".into()));
            }
            if response.0 == 0 || response.0 > 64 << 20 {
                return Err((p("app.response"), "must be between 1 and 64MiB".into()));
            }
            if *count == Some(0) {
                return Err((p("app.count"), "must be > 0".into()));
            }
        }
        AppSpec::Page {
            objects,
            framing,
            request,
            chunk,
            frame,
        } => {
            if objects.is_empty() || objects.len() > MAX_PAGE_OBJECTS {
                return Err((
                    p("app.objects"),
                    format!(
                        "must list between 1 and {} object sizes (the first is the primary)",
                        MAX_PAGE_OBJECTS
                    ),
                ));
            }
            if let Some(k) = objects.iter().position(|o| o.0 == 0 || o.0 > MAX_OBJECT) {
                return Err((
                    format!("flow[{i}].app.objects[{k}]"),
                    "must be between 1 and 16MiB".into(),
                ));
            }
            if objects.iter().map(|o| o.0).sum::<u64>() > MAX_PAGE {
                return Err((p("app.objects"), "must add up to at most 64MiB".into()));
            }
            if request.is_some_and(|r| r.0 < MIN_PAGE_REQUEST || r.0 > 64 << 10) {
                return Err((p("app.request"), "must be between 8 and 64KiB".into()));
            }
            if let Some(c) = chunk {
                if *framing != PageFraming::Mstcp {
                    return Err((p("app.chunk"), "needs framing = \"mstcp\"".into()));
                }
                if c.0 == 0 || c.0 > 65_519 {
                    return Err((p("app.chunk"), "must be between 1 and 65519".into()));
                }
            }
            if let Some(f) = frame {
                if *framing != PageFraming::H2 {
                    return Err((p("app.frame"), "needs framing = \"h2\"".into()));
                }
                if f.0 == 0 || f.0 > MAX_FRAME {
                    return Err((p("app.frame"), "must be between 1 and 16777215".into()));
                }
            }
        }
        AppSpec::Web {
            objects,
            connections,
            request,
        } => {
            if objects.is_empty() || objects.len() > MAX_WEB_OBJECTS {
                return Err((
                    p("app.objects"),
                    format!(
                        "must list between 1 and {} object sizes (the first is the HTML)",
                        MAX_WEB_OBJECTS
                    ),
                ));
            }
            if let Some(k) = objects.iter().position(|o| o.0 == 0 || o.0 > 64 << 20) {
                return Err((
                    format!("flow[{i}].app.objects[{k}]"),
                    "must be between 1 and 64MiB".into(),
                ));
            }
            if connections.is_some_and(|c| c == 0 || c > MAX_WEB_CONNECTIONS) {
                return Err((
                    p("app.connections"),
                    format!("must be between 1 and {}", MAX_WEB_CONNECTIONS),
                ));
            }
            if request.is_some_and(|r| r.0 == 0 || r.0 > 64 << 10) {
                return Err((p("app.request"), "must be between 1 and 64KiB".into()));
            }
        }
    }
    Ok(())
}

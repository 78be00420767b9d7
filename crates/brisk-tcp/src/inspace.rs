//! Inner Space's dual handshake (draft-briscoe-tcpm-inspace-mode-tcpbis-00 §2.1,
//! App. C.1; docs/mechanisms/inner-space.md): the knobs. The codecs are brisk-wire's
//! `tcp::inspace`; the connection's part is `conn/inspace.rs`, the endpoint's (two
//! connections, one survivor) `endpoint/dual.rs`.
//!
//! brisk builds the draft's per-socket mode (iii), "enabled, self-disabling after the
//! SYN/ACK" (§5.3): the SYN-U and the SYN/ACK-U carry the SYN=1 InSpace option and
//! Inner Options in their TCP Data; after the handshake the upgraded connection's
//! segments are ordinary (no InSpace on data segments, no ZOMBI). Off by default.
//! With `data` a client asks to keep Inner Space on the data segments (mode (i),
//! `conn/inspace_data.rs`).

use brisk_wire::tcp::inspace::detect::Magic;

/// Which dual handshake a client runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DualVariant {
    /// §2.1: an Ordinary SYN and a SYN-U; the server's answers decide.
    Implicit,
    /// App. C.1: the Ordinary SYN is a SYN-O (the Outer InSpaceO flag option), which
    /// an upgraded server answers with RST.
    Explicit,
}

/// Inner Space knobs (`Config::inspace`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InSpaceConfig {
    /// Client: `Endpoint::connect_dual` runs this dual handshake.
    pub client: Option<DualVariant>,
    /// Server: a listener answers a SYN-U with a SYN/ACK-U and a SYN-O with RST.
    /// Off: the listener is a legacy server (a SYN-U's TCP Data is ignored, as any
    /// SYN data without Fast Open).
    pub server: bool,
    /// The magic numbers (AMB-D2-5: private values).
    pub magic: Magic,
    /// Client: ask, on a SYN-U without data, to keep Inner Space on the data segments
    /// (mode (i): every sent segment carries padding + InSpace, ZOMBI-encoded; App. B's
    /// default I = 1). The request is a ModeSwitch R = 1, I = 1 Inner Option on the
    /// SYN-U; an upgraded brisk server confirms it (R = 0, I = 1) on its SYN/ACK-U and
    /// both halves frame from then on. Off (the default): mode (iii), the InSpace
    /// option only on the SYN-U and SYN/ACK-U.
    pub data: bool,
}

impl Default for InSpaceConfig {
    fn default() -> Self {
        InSpaceConfig {
            client: None,
            server: false,
            magic: Magic::BRISK,
            data: false,
        }
    }
}

impl InSpaceConfig {
    /// Client and server, the implicit variant.
    pub fn both() -> Self {
        InSpaceConfig {
            client: Some(DualVariant::Implicit),
            server: true,
            ..InSpaceConfig::default()
        }
    }
}

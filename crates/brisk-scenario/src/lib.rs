//! brisk-scenario: the words a scenario is written in, and their one validation.
//!
//! A scenario file (TOML) names a dumbbell ([`Scenario`]: flows over one bottleneck)
//! with per-flow apps ([`app`]) and TCP knobs ([`knobs`]), over links and queues in
//! brisk-net's link vocabulary ([`link`], in the [`units`] quantities). The simulator
//! (brisk-sim), real runs (brisk-emu), sweeps (brisk-sweep), the CLI and Python all
//! read scenarios through here; every problem is a [`ScenarioError`] naming the file,
//! the field and the range. [`input`] is where files are read (with a size cap);
//! nothing below it (brisk-net, the simulator) reads a file.
//!
//! No simulator here: the crate depends on the TCP configuration the knobs build
//! (brisk-tcp) and on brisk-net's link description, not on anything that runs.

pub mod app;
pub mod dumbbell;
pub mod error;
pub mod input;
pub mod knobs;

/// Scenario quantities (`Dur`, `Rate`, `Size`), in brisk-net beside the link
/// description that uses them.
pub use brisk_net::units;

/// The link and queue vocabulary (`[bottleneck]`, `[reverse]`, topology links): brisk-net's
/// `spec`, which also builds a link's elements from it.
pub mod link {
    pub use brisk_net::spec::{
        BandPieSpec, JitterSpec, LinkSpec, LossSpec, OutageSpec, QueueSpec, SpecError, TraceFile,
    };
}

pub use app::{AppSpec, PageConfig, PageFraming};
pub use dumbbell::{FlowSpec, IpVersion, Scenario, Stack, MAX_DURATION};
pub use error::ScenarioError;
pub use knobs::TcpKnobs;

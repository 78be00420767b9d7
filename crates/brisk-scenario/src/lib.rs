//! brisk-scenario: the words a scenario is written in, and their one validation.
//!
//! A scenario file (TOML) names a dumbbell ([`Scenario`]: flows over one bottleneck)
//! with per-flow apps ([`app`]) and TCP knobs ([`knobs`]), over links and queues
//! ([`link`], in the [`units`] quantities). The simulator
//! (brisk-sim), real runs (brisk-emu), sweeps (brisk-sweep), the CLI and Python all
//! read scenarios through here; every problem is a [`ScenarioError`] naming the file,
//! the field and the range. [`input`] is where files are read (with a size cap);
//! nothing below it (brisk-net, the simulator) reads a file.
//!
//! No simulator here. The dependencies point from the words to what they configure:
//! the knobs build brisk-tcp's `Config`, a [`link::LinkSpec`] builds brisk-net's
//! `LinkConfig` (`LinkSpec::config`, the one conversion), as brisk-app's record header
//! gives the records app its size. The runtime crates know nothing of scenario files,
//! so a new key touches this crate and, at most, the parameter it sets.

pub mod app;
pub mod dumbbell;
pub mod error;
pub mod input;
pub mod knobs;
pub mod link;
pub mod network;
pub mod seed;
pub mod units;

pub use app::{AppSpec, PageConfig, PageFraming};
pub use dumbbell::{FlowSpec, IpVersion, Scenario, Stack, MAX_DURATION};
pub use error::ScenarioError;
pub use knobs::TcpKnobs;
pub use seed::derive_seed;

//! Scenario files (TOML): what to simulate. The vocabulary, its validation and the
//! loader are the brisk-scenario crate's (shared with real runs, sweeps, the CLI and
//! Python); this module re-exports them so `brisk_sim::scenario` paths hold.

pub use brisk_scenario::app::{AppSpec, MAX_BULK_WRITE};
pub use brisk_scenario::dumbbell::{
    FlowSpec, IpVersion, Scenario, Stack, MAX_DURATION, MAX_FLOWS, MAX_SAMPLE_ROWS, MAX_V4_FLOWS,
};
pub use brisk_scenario::error::ScenarioError;
pub use brisk_scenario::knobs::*;
/// The link description is brisk-net's, shared with the emulator's path.
pub use brisk_scenario::link::{JitterSpec, LinkSpec, LossSpec, OutageSpec, QueueSpec};

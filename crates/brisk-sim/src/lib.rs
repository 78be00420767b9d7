//! brisk-sim: the deterministic discrete-event simulator.
//!
//! A scenario (TOML, `scenario`) becomes a dumbbell topology (`topology`) of hosts
//! running brisk's TCP `Endpoint` with applications (`app`) and brisk-net elements,
//! driven by the event engine (`engine`) in integer-nanosecond virtual time. Same
//! scenario and seed give byte-identical outputs (`output`).

pub mod app;
#[doc(hidden)]
pub mod claim_checks;
pub mod dgram_app;
pub mod dropped;
pub mod engine;
pub mod fct;
pub mod graph;
pub mod host;
pub mod ingress;
pub mod node;
pub mod outcome;
pub mod output;
pub mod page_app;
pub mod pep;
pub mod run;
pub mod sat_tls;
pub mod sat_web;
pub mod scenario;
pub mod topo_build;
pub mod topo_gen;
pub mod topology;
pub mod udp_app;
pub mod unordered;
pub mod vpn;
pub mod web;
pub mod wl_host;
pub mod wl_output;
pub mod wl_pairs;
pub mod wl_run;
pub mod workload;

/// Scenario quantities (`Dur`, `Rate`, `Size`); defined in brisk-scenario next to the
/// link description that uses them, and re-exported here so `brisk_sim::units` paths hold.
pub use brisk_scenario::units;

/// Bounded sample sets and series; in brisk-net beside the link meter that fills them,
/// re-exported so `brisk_sim::metrics` paths hold.
pub use brisk_net::metrics;

pub use run::{
    build_for, run, run_controlled, run_network, run_with, FlowResult, Interruption, RunOptions,
    RunResult, SimError,
};
pub use scenario::{Scenario, ScenarioError};

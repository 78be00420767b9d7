//! brisk-pdrill: runs packetdrill scripts (google/packetdrill's format) against brisk's
//! sans-IO endpoint in virtual time.
//!
//! [`script`] parses the format; [`run`] executes it and reports pass, the first
//! mismatch (line, expected and actual packet), or the first unsupported feature.
//! MPTCP options use the MPTCP packetdrill fork's syntax ([`mptcp`]).
//! The scripts brisk ships live in `scripts/` (run by `tests/scripts.rs`); upstream
//! suites are measured, not vendored (`docs/conformance.md`).

mod mp_run;
pub mod mptcp;
pub mod run;
pub mod script;

pub use run::{linux_defaults, run_script, Outcome, Report, RunConfig};
pub use script::{parse, ParseError, Script};

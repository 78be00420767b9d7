//! brisk-report: what a run reports, simulated (`brisk run`) or over real packets
//! (`brisk run --real`), written once so the two compare field by field.
//!
//! [`FlowSummary`] is the per-flow summary both kinds of run print (the real runs add
//! [`RealFlowExtras`]); [`BottleneckResult`] is the shared link's measurements (from
//! brisk-net's `LinkMeter`); [`RunSummary::to_json`] writes the `--json` object both
//! extend with their own section, [`RunSummary::table`] the human-readable table
//! (one layout; [`TableExtras`] carries what only one kind of run has), and
//! [`queue_csv`]/[`drops_csv`] the bottleneck CSV files. Output is a pure function of its input, so equal runs give equal bytes.
//!
//! It sits above brisk-net (whose meter produces what it reports) and below both
//! brisk-sim and brisk-emu, so neither of those needs the other for its output.

pub mod delay;
pub mod json;
pub mod result;
pub mod sparse_hdr;
pub mod table;
pub mod write;

pub use delay::{DelaySummary, OneWayDelay};
pub use json::{latency_json, num, queue_delay_json, rtt_json};
pub use result::{
    jain_fairness, stream_status, BottleneckResult, Drain, FlowSummary, RealFlowExtras, RunSummary,
};
pub use table::{rdb_line, TableExtras};
pub use write::{drops_csv, queue_csv, write_files, WriteError, RECORDS_CSV_HEADER};

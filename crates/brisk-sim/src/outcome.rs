//! How any run (the dumbbell's, `crate::run`; a network scenario's, `crate::wl_run`)
//! can end besides with its results: an error, or an interruption by its controller.
//! Both runs use these, so they live below both.

use brisk_time::Duration;

use crate::topology::BuildError;

#[derive(Debug, thiserror::Error)]
pub enum SimError {
    #[error(transparent)]
    Build(#[from] BuildError),
    #[error("{path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    /// The scenario asks for something only real-packet runs can do.
    #[error("{0}")]
    Unsupported(String),
}

/// Where a run stopped when its controller ended it before the scenario's end
/// (`interrupted` in `brisk run --json` and summary.json; absent from a complete run).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Interruption {
    /// The simulated time reached: the results cover `[0, at]`.
    pub at: Duration,
    /// The scenario's duration.
    pub of: Duration,
    /// What asked for the stop, when the caller knows (`brisk run`: `SIGINT`).
    pub signal: Option<String>,
}

impl Interruption {
    /// `{"at_sim_time_s", "scenario_duration_s", "signal"}` (signal null when unknown).
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "at_sim_time_s": self.at.as_secs_f64(),
            "scenario_duration_s": self.of.as_secs_f64(),
            "signal": self.signal,
        })
    }
}

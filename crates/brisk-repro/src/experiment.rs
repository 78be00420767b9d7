//! Experiments: a plan (the scenario runs it needs) plus an analysis that turns the
//! runs' results into claim rows and plots.
//!
//! Planning and analysis are separate so that the suite can pool every run of every
//! selected experiment on one thread pool (`runner`), and so that the result of an
//! experiment depends only on its runs, never on scheduling.
//!
//! A [`Kind::RealTime`] experiment also runs over real packets (brisk-emu): its
//! analysis performs those runs, so the runner calls it only after the simulator pool
//! has finished, one such experiment at a time with nothing else running (real-time
//! fidelity), and skips it with `n/a` rows where the host cannot run it.

use crate::claim::Claim;
use brisk_sim::{RunResult, Scenario};

/// One simulation run: a scenario and a seed.
#[derive(Clone, Debug)]
pub struct Job {
    pub label: String,
    pub scenario: Scenario,
    pub seed: u64,
    /// Keep the flows' per-consult controller diagnostics (`FlowResult::cc_series`,
    /// up to ~19 MB per flow); otherwise the runner drops them after the run.
    pub keep_cc_series: bool,
    /// Keep only the flows' scalar results: drop their time series, quantile vectors
    /// and the bottleneck's series and drop records after the run (runs with thousands
    /// of flows, whose analysis reads FCTs and counters).
    pub lean: bool,
    /// Record each flow's bytes dropped at the bottleneck (`FlowResult::dropped_ranges`).
    pub dropped_ranges: bool,
    /// A network (workload) scenario to run instead of `scenario` (which then holds a
    /// placeholder); its results arrive in `RunResult::workload`.
    pub net: Option<Box<brisk_scenario::network::NetScenario>>,
}

impl Job {
    pub fn new(label: impl Into<String>, scenario: Scenario, seed: u64) -> Self {
        Job {
            label: label.into(),
            scenario,
            seed,
            keep_cc_series: false,
            lean: false,
            dropped_ranges: false,
            net: None,
        }
    }

    /// A run of a network (workload) scenario.
    pub fn network(
        label: impl Into<String>,
        net: brisk_scenario::network::NetScenario,
        seed: u64,
    ) -> Self {
        // The dumbbell field is unused for network runs; a minimal valid scenario keeps
        // `Job` one shape for the pool.
        let placeholder = Scenario::from_toml_str(
            "name = \"network\"\nduration = \"1s\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\nrtt = \"10ms\"\napp = { kind = \"bulk\" }\n",
        )
        // NOTE(expect): a constant, valid scenario.
        .expect("placeholder scenario parses");
        Job {
            net: Some(Box::new(net)),
            ..Job::new(label, placeholder, seed)
        }
    }

    /// Record each flow's dropped bytes (see `dropped_ranges`).
    pub fn with_dropped_ranges(mut self) -> Self {
        self.dropped_ranges = true;
        self
    }

    /// Keep only scalar per-flow results (see `lean`).
    pub fn lean(mut self) -> Self {
        self.lean = true;
        self
    }

    /// Keep the per-consult diagnostics for the analysis (see `keep_cc_series`).
    pub fn with_cc_series(mut self) -> Self {
        self.keep_cc_series = true;
        self
    }

    /// A rough cost (bottleneck bits over the run) used only to start long runs first.
    pub fn cost(&self) -> f64 {
        if let Some(n) = &self.net {
            // Hosts times simulated time: network runs are the pool's longest.
            return 1e12 * n.duration.0.as_secs_f64();
        }
        let rate = self.scenario.bottleneck.rate.map_or(1e9, |r| r.0 as f64);
        rate * self.scenario.duration.0.as_secs_f64()
    }
}

/// A figure for the report and its two-part caption.
#[derive(Clone, Debug)]
pub struct Plot {
    pub figure: crate::figure::Figure,
    /// What the paper's figure showed.
    pub paper: String,
    /// What our run shows.
    pub ours: String,
}

/// What one experiment produced.
#[derive(Clone, Debug)]
pub struct ExperimentResult {
    pub id: &'static str,
    pub title: &'static str,
    /// What the claims' reference column holds: "paper" for the papers' values; real-
    /// packet experiments compare with the simulator or Linux instead.
    pub reference: &'static str,
    pub claims: Vec<Claim>,
    pub plots: Vec<Plot>,
    /// Set-up facts (population, assumed parameters) and findings, for the report.
    pub notes: Vec<String>,
    /// An extra HTML fragment (e.g. a result grid); already escaped.
    pub html: String,
}

impl ExperimentResult {
    pub fn new(id: &'static str, title: &'static str) -> Self {
        ExperimentResult {
            id,
            title,
            reference: "paper",
            claims: Vec::new(),
            plots: Vec::new(),
            notes: Vec::new(),
            html: String::new(),
        }
    }
}

/// The analysis step: the runs' results, in the order of `Plan::jobs`.
pub type Analyse = Box<dyn FnOnce(&[RunResult]) -> ExperimentResult + Send>;

/// The runs an experiment needs and what to do with their results.
pub struct Plan {
    pub jobs: Vec<Job>,
    pub analyse: Analyse,
}

/// How an experiment runs.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// Simulator runs only.
    Simulated,
    /// Simulator runs on the pool, then real-time runs inside `analyse`, alone.
    RealTime {
        /// Why this host cannot run it (e.g. not root, no `/dev/net/tun`), if so.
        unsupported: fn() -> Option<String>,
    },
}

/// A registered experiment.
#[derive(Clone, Copy, Debug)]
pub struct Experiment {
    pub id: &'static str,
    pub title: &'static str,
    pub kind: Kind,
    /// Claim IDs it reports (for `--help`-style listings and docs).
    pub claims: &'static [&'static str],
    /// Builds the plan; `quick` selects fewer seeds and shorter runs.
    pub plan: fn(quick: bool) -> Result<Plan, String>,
}

impl Experiment {
    /// Runs this experiment alone (on the shared pool machinery).
    pub fn run(&self, quick: bool, progress: &crate::runner::Progress) -> ExperimentResult {
        crate::runner::run_experiments(&[*self], quick, progress)
            .pop()
            // NOTE(unwrap): run_experiments returns one result per experiment given.
            .expect("one experiment in, one result out")
    }
}

/// The result for an experiment whose plan or runs failed: one failing row per
/// declared claim, carrying the error.
pub fn failed(exp: &Experiment, error: &str) -> ExperimentResult {
    let mut r = ExperimentResult::new(exp.id, exp.title);
    for id in exp.claims {
        r.claims.push(
            Claim::new(id, "experiment did not run")
                .ours_text("error")
                .check(false)
                .note(error.to_string()),
        );
    }
    r.notes.push(format!("error: {error}"));
    r
}

/// The result for an experiment this host cannot run: one `n/a` row per declared
/// claim, carrying the reason.
pub fn skipped(exp: &Experiment, reason: &str) -> ExperimentResult {
    let mut r = ExperimentResult::new(exp.id, exp.title);
    for id in exp.claims {
        r.claims.push(
            Claim::new(id, "experiment skipped on this host")
                .ours_text("not run")
                .not_applicable(format!("Skipped: {reason}.")),
        );
    }
    r.notes.push(format!("skipped: {reason}"));
    r
}

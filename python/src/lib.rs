//! `brisk._brisk`: the native half of the Python package. Thin: every function parses
//! what Python hands over with the same code `brisk run`, `brisk sweep` and
//! `brisk repro` use, runs it with the GIL released, and returns text (JSON, CSV, TOML)
//! that the Python half (`brisk/`) turns into dicts and DataFrames. Keeping the
//! boundary to text keeps results byte-identical across the CLI, Python, and Ray
//! workers on other machines.

use brisk_sweep::{RunOutput, ScenarioKind, Sweep as SweepSpec, SweepResult};
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use std::path::Path;

create_exception!(
    brisk,
    ScenarioError,
    PyValueError,
    "A scenario, sweep or grid key that brisk cannot accept. `field` names the place \
     (e.g. `bottleneck.rate`, `grid.\"flow[0].tcp.cc\"`, `seeds`), `file` the file or \
     `<python>`, and the message says what is allowed."
);

/// A ScenarioError with `file`, `field` and `detail` attributes set.
fn scenario_error(py: Python<'_>, file: &str, field: &str, message: &str) -> PyErr {
    let e = ScenarioError::new_err(format!("{file}: {field}: {message}"));
    let v = e.value(py);
    let _ = v.setattr("file", file);
    let _ = v.setattr("field", field);
    let _ = v.setattr("detail", message);
    e
}

fn kind_of(kind: &str) -> PyResult<ScenarioKind> {
    match kind {
        "dumbbell" => Ok(ScenarioKind::Dumbbell),
        "network" => Ok(ScenarioKind::Network),
        other => Err(PyValueError::new_err(format!(
            "kind must be \"dumbbell\" or \"network\", got {other:?}"
        ))),
    }
}

fn kind_name(kind: ScenarioKind) -> &'static str {
    match kind {
        ScenarioKind::Dumbbell => "dumbbell",
        ScenarioKind::Network => "network",
    }
}

/// TOML text of a scenario given as JSON (a Python dict, `json.dumps`-ed).
#[pyfunction]
fn toml_from_json(py: Python<'_>, json: &str) -> PyResult<String> {
    let v: serde_json::Value = serde_json::from_str(json)
        .map_err(|e| scenario_error(py, "<python>", "(dict)", &e.to_string()))?;
    let t = brisk_sweep::spec::json_to_toml(&v, "")
        .map_err(|(f, m)| scenario_error(py, "<python>", &f, &m))?;
    let toml::Value::Table(t) = t else {
        return Err(scenario_error(py, "<python>", "(dict)", "expected a dict"));
    };
    toml::to_string(&t).map_err(|e| scenario_error(py, "<python>", "(dict)", &e.to_string()))
}

/// Whether TOML text is a network scenario (a topology with a `[workload]`).
#[pyfunction]
fn scenario_kind(text: &str) -> &'static str {
    if brisk_scenario::network::is_net_scenario(text) {
        "network"
    } else {
        "dumbbell"
    }
}

/// What a dumbbell scenario asks for and a run will not do, one line each (brisk
/// run's stderr warnings; `brisk.run` raises them as `UserWarning`s). Invalid or
/// network scenarios give none: `run` reports the former.
#[pyfunction]
fn scenario_warnings(text: &str, label: &str) -> Vec<String> {
    if brisk_scenario::network::is_net_scenario(text) {
        return Vec::new();
    }
    brisk_sim::Scenario::from_toml_str_named(text, label)
        .map(|sc| sc.warnings())
        .unwrap_or_default()
}

/// One run, as `brisk run` does it: returns (summary JSON, {file name: CSV text}).
/// `out`, if given, receives the files `brisk run --out` writes (without provenance).
#[pyfunction]
#[pyo3(signature = (text, label, seed=None, out=None))]
fn run(
    py: Python<'_>,
    text: &str,
    label: &str,
    seed: Option<u64>,
    out: Option<&str>,
) -> PyResult<(String, Vec<(String, String)>)> {
    let err = |e: brisk_sim::ScenarioError| scenario_error(py, &e.file, &e.field, &e.message);
    let io = |e: String| PyRuntimeError::new_err(e);
    if brisk_scenario::network::is_net_scenario(text) {
        let sc = brisk_sim::topo_build::from_toml_str_named(text, label).map_err(err)?;
        let seed = seed.unwrap_or(sc.seed);
        let res = py
            .detach(|| brisk_sim::wl_run::run_net(&sc, seed))
            .map_err(|e| io(e.to_string()))?;
        if let Some(dir) = out {
            res.write_dir(Path::new(dir))
                .map_err(|e| io(e.to_string()))?;
        }
        let summary = serde_json::to_string(&res.to_json()).map_err(|e| io(e.to_string()))?;
        return Ok((summary, vec![("flows.csv".into(), res.flows_csv())]));
    }
    let sc = brisk_sim::Scenario::from_toml_str_named(text, label).map_err(err)?;
    let seed = seed.unwrap_or(sc.seed);
    let res = py
        .detach(|| brisk_sim::run(&sc, seed))
        .map_err(|e| io(e.to_string()))?;
    if let Some(dir) = out {
        res.write_dir(Path::new(dir))
            .map_err(|e| io(e.to_string()))?;
    }
    let summary = serde_json::to_string(&res.to_json()).map_err(|e| io(e.to_string()))?;
    let mut files: Vec<(String, String)> = res
        .files()
        .into_iter()
        .filter(|(name, _)| *name != "summary.json")
        .map(|(n, c)| (n.to_string(), c))
        .collect();
    // `records.csv` is written only when a flow delivered records; the DataFrame is
    // always there (empty, with its columns).
    if !files.iter().any(|(n, _)| n == "records.csv") {
        files.push((
            "records.csv".into(),
            brisk_sim::output::RECORDS_CSV_HEADER.to_string(),
        ));
    }
    Ok((summary, files))
}

/// One sweep run: the summary JSON of `text` (a cell's scenario) under `seed`. What a
/// Ray worker calls.
#[pyfunction]
fn run_summary(py: Python<'_>, text: &str, label: &str, kind: &str, seed: u64) -> PyResult<String> {
    let kind = kind_of(kind)?;
    py.detach(|| brisk_sweep::job::run_summary(text, label, kind, seed))
        .map_err(PyRuntimeError::new_err)
}

/// A parsed, validated sweep (`brisk_sweep::Sweep`).
#[pyclass(frozen, module = "brisk._brisk")]
struct Sweep {
    inner: SweepSpec,
}

fn sweep_error(py: Python<'_>, e: brisk_sweep::SweepError) -> PyErr {
    scenario_error(py, &e.file, &e.field, &e.message)
}

#[pymethods]
impl Sweep {
    /// Reads a sweep file (TOML).
    #[staticmethod]
    fn load(py: Python<'_>, path: &str) -> PyResult<Sweep> {
        SweepSpec::load(Path::new(path))
            .map(|inner| Sweep { inner })
            .map_err(|e| sweep_error(py, e))
    }

    /// A sweep from its JSON form: {"base" | "base_toml", "grid", "seeds", "name"};
    /// relative paths resolve in `dir`.
    #[staticmethod]
    fn from_json(py: Python<'_>, json: &str, file: &str, dir: &str) -> PyResult<Sweep> {
        SweepSpec::from_json_str(json, file, Path::new(dir))
            .map(|inner| Sweep { inner })
            .map_err(|e| sweep_error(py, e))
    }

    #[getter]
    fn name(&self) -> String {
        self.inner.name.clone()
    }

    #[getter]
    fn kind(&self) -> &'static str {
        kind_name(self.inner.kind)
    }

    #[getter]
    fn label(&self) -> String {
        self.inner.base_label.clone()
    }

    #[getter]
    fn seeds(&self) -> Vec<u64> {
        self.inner.seeds.clone()
    }

    /// The grid keys, in cell order.
    #[getter]
    fn keys(&self) -> Vec<String> {
        self.inner
            .keys
            .iter()
            .map(|k| k.as_str().to_string())
            .collect()
    }

    fn __len__(&self) -> usize {
        self.inner.cells.len()
    }

    /// Cell `i`'s scenario (TOML text).
    fn scenario(&self, i: usize) -> PyResult<String> {
        self.inner
            .cells
            .get(i)
            .map(|c| c.scenario.clone())
            .ok_or_else(|| PyValueError::new_err(format!("no cell {i}")))
    }

    /// Cell `i`'s parameters as JSON ({grid key: value}).
    fn params_json(&self, i: usize) -> PyResult<String> {
        let c = self
            .inner
            .cells
            .get(i)
            .ok_or_else(|| PyValueError::new_err(format!("no cell {i}")))?;
        let m: serde_json::Map<String, serde_json::Value> = c
            .params
            .iter()
            .map(|(k, v)| (k.clone(), brisk_sweep::job::param_json(v)))
            .collect();
        Ok(serde_json::Value::Object(m).to_string())
    }

    /// Every run, cell-major: (cell, seed).
    fn jobs(&self) -> Vec<(usize, u64)> {
        self.inner.jobs()
    }

    /// Rows, summary and runs.jsonl of finished runs: `runs` holds (cell, seed,
    /// summary or None, error or None) in any order. Returns (rows JSON, summary JSON,
    /// runs.jsonl text, rows CSV, summary CSV, the table `brisk sweep` prints).
    #[allow(clippy::type_complexity)]
    fn assemble(
        &self,
        py: Python<'_>,
        runs: Vec<(usize, u64, Option<String>, Option<String>)>,
    ) -> (String, String, String, String, String, String) {
        let runs: Vec<RunOutput> = runs
            .into_iter()
            .map(|(cell, seed, ok, err)| RunOutput {
                cell,
                seed,
                summary: match (ok, err) {
                    (Some(s), None) => Ok(s),
                    (_, e) => Err(e.unwrap_or_else(|| "no result".into())),
                },
            })
            .collect();
        py.detach(|| {
            let r = SweepResult::assemble(&self.inner, runs);
            (
                serde_json::Value::from(r.rows.clone()).to_string(),
                serde_json::Value::from(r.summary.clone()).to_string(),
                r.runs_jsonl(),
                r.rows_csv(),
                r.summary_csv(),
                r.table(&self.inner),
            )
        })
    }
}

/// Runs reproduction experiments (`ids`; all when empty) and returns
/// `brisk repro --json`'s document.
#[pyfunction]
#[pyo3(signature = (ids, quick=false, out=None))]
fn repro(py: Python<'_>, ids: Vec<String>, quick: bool, out: Option<&str>) -> PyResult<String> {
    let exps = brisk_repro::select(&ids).map_err(PyValueError::new_err)?;
    let results =
        py.detach(|| brisk_repro::run_suite(&exps, quick, &brisk_repro::Progress::stderr(true)));
    report(py, results, quick, out)
}

/// One experiment's result in the cross-process form (`brisk_repro::remote`): what a
/// Ray worker returns.
#[pyfunction]
#[pyo3(signature = (id, quick=false))]
fn repro_run_one(py: Python<'_>, id: &str, quick: bool) -> PyResult<String> {
    py.detach(|| brisk_repro::remote::run_one(id, quick))
        .map(|r| brisk_repro::remote::result_to_json(&r))
        .map_err(PyValueError::new_err)
}

/// The report of results gathered from anywhere (in the order given): writes it under
/// `out` (if given) exactly as `brisk repro` would, and returns the `--json` document.
#[pyfunction]
#[pyo3(signature = (results, quick=false, out=None))]
fn repro_report(
    py: Python<'_>,
    results: Vec<String>,
    quick: bool,
    out: Option<&str>,
) -> PyResult<String> {
    let results = results
        .iter()
        .map(|s| brisk_repro::remote::result_from_json(s))
        .collect::<Result<Vec<_>, _>>()
        .map_err(PyValueError::new_err)?;
    report(py, results, quick, out)
}

fn report(
    py: Python<'_>,
    results: Vec<brisk_repro::ExperimentResult>,
    quick: bool,
    out: Option<&str>,
) -> PyResult<String> {
    let acc = brisk_repro::accepted::embedded(brisk_repro::accepted::Mode::of(quick))
        .map_err(PyRuntimeError::new_err)?;
    if let Some(dir) = out {
        py.detach(|| {
            brisk_repro::html::write(
                Path::new(dir),
                &results,
                quick,
                &acc,
                Some("brisk Python package"),
            )
        })
        .map_err(|e| PyRuntimeError::new_err(format!("{dir}: {e}")))?;
    }
    Ok(brisk_repro::report::to_json(&results, &acc).to_string())
}

/// The experiments: (id, kind, claims, title).
#[pyfunction]
fn repro_list() -> Vec<(String, String, Vec<String>, String)> {
    brisk_repro::REGISTRY
        .iter()
        .map(|e| {
            (
                e.id.to_string(),
                match e.kind {
                    brisk_repro::Kind::Simulated => "sim".to_string(),
                    _ => "real time".to_string(),
                },
                e.claims.iter().map(|c| c.to_string()).collect(),
                e.title.to_string(),
            )
        })
        .collect()
}

#[pymodule]
fn _brisk(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    // Version and commit: what a Ray worker must match (python/brisk/_ray.py).
    m.add("__build__", env!("BRISK_BUILD"))?;
    m.add_function(wrap_pyfunction!(toml_from_json, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_kind, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_warnings, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(run_summary, m)?)?;
    m.add_function(wrap_pyfunction!(repro, m)?)?;
    m.add_function(wrap_pyfunction!(repro_run_one, m)?)?;
    m.add_function(wrap_pyfunction!(repro_report, m)?)?;
    m.add_function(wrap_pyfunction!(repro_list, m)?)?;
    m.add_class::<Sweep>()?;
    Ok(())
}

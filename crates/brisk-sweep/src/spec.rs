//! The sweep file: a base scenario, a grid of scenario fields and their values, and
//! the seeds. One format for `brisk sweep FILE` and for Python's `brisk.sweep` (which
//! hands the same document over as JSON).
//!
//! ```toml
//! name = "abe-beta"                        # optional; default: the file's stem
//! base = "../scenarios/abe.toml"           # a scenario file, relative to this file;
//!                                          # or an inline [base] table
//! seeds = "1..5"                           # inclusive range, or a list [1, 2, 7]
//! [grid]
//! "bottleneck.rate" = ["10Mbit", "20Mbit"]
//! "flow[0].tcp.abe.beta_ecn" = [0.7, 0.85]
//! ```
//!
//! Cells are the grid's cartesian product with the keys in sorted order and the last
//! key varying fastest, so a cell's index depends only on the grid, never on how the
//! file or the Python dict happened to order it. Every cell is parsed as a scenario
//! before anything runs: a bad value fails the whole sweep at once, naming its key.

use crate::keypath::{KeyError, KeyPath};
use std::path::{Path, PathBuf};

/// Most cells, seeds and runs (cells × seeds) in one sweep: a typo in a grid should
/// fail fast, not plan a year of simulation or a job list that fills memory.
pub const MAX_CELLS: usize = 100_000;
pub const MAX_SEEDS: usize = 100_000;
pub const MAX_RUNS: usize = 1_000_000;
/// Most values one grid key may take.
pub const MAX_VALUES: usize = 10_000;

/// A sweep that could not be read; `field` names the place (`grid."bottleneck.rate"`,
/// `seeds`, `base`, or a field of the base scenario).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{file}: {field}: {message}")]
pub struct SweepError {
    pub file: String,
    pub field: String,
    pub message: String,
}

/// Which of brisk's two scenario kinds the base is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScenarioKind {
    /// A dumbbell (`[bottleneck]` and `[[flow]]`): rows per flow.
    Dumbbell,
    /// A network with a `[workload]`: rows per flow class.
    Network,
}

/// One point of the grid: its values and the scenario they make.
#[derive(Clone, Debug)]
pub struct Cell {
    pub index: usize,
    /// (grid key, value) in key order.
    pub params: Vec<(String, toml::Value)>,
    /// The complete scenario, as TOML text (what a remote worker receives).
    pub scenario: String,
}

/// A parsed, validated sweep.
#[derive(Clone, Debug)]
pub struct Sweep {
    pub name: String,
    /// Label of the base scenario: its file (relative trace paths resolve beside it)
    /// or `<inline>`.
    pub base_label: String,
    pub kind: ScenarioKind,
    pub keys: Vec<KeyPath>,
    pub cells: Vec<Cell>,
    pub seeds: Vec<u64>,
}

impl Sweep {
    /// Reads a sweep file.
    pub fn load(path: &Path) -> Result<Sweep, SweepError> {
        let file = path.display().to_string();
        let text = brisk_scenario::input::read_text(path).map_err(|e| SweepError {
            file: file.clone(),
            field: "(file)".into(),
            message: e.to_string(),
        })?;
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Self::from_toml_str(&text, &file, &dir)
    }

    /// Parses a sweep given as TOML; `file` labels errors and `dir` is where a relative
    /// `base` path is resolved.
    pub fn from_toml_str(text: &str, file: &str, dir: &Path) -> Result<Sweep, SweepError> {
        let doc: toml::Table = toml::from_str(text).map_err(|e| SweepError {
            file: file.to_string(),
            field: "(file)".into(),
            message: toml_message(text, &e),
        })?;
        Self::from_table(doc, file, dir)
    }

    /// Parses a sweep given as JSON (the Python package's form): the same fields, with
    /// `base` a table or a path, or `base_toml` the base scenario's TOML text.
    pub fn from_json_str(text: &str, file: &str, dir: &Path) -> Result<Sweep, SweepError> {
        let err = |field: &str, message: String| SweepError {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        let v: serde_json::Value =
            serde_json::from_str(text).map_err(|e| err("(json)", e.to_string()))?;
        let toml::Value::Table(mut doc) = json_to_toml(&v, "").map_err(|(f, m)| err(&f, m))? else {
            return Err(err("(json)", "expected an object".into()));
        };
        if let Some(t) = doc.remove("base_toml") {
            if doc.contains_key("base") {
                return Err(err("base_toml", "give base or base_toml, not both".into()));
            }
            let toml::Value::String(t) = t else {
                return Err(err("base_toml", "expected the scenario's TOML text".into()));
            };
            let table: toml::Table = toml::from_str(&t).map_err(|e| SweepError {
                file: "<base_toml>".into(),
                field: "(file)".into(),
                message: toml_message(&t, &e),
            })?;
            doc.insert("base".into(), toml::Value::Table(table));
        }
        Self::from_table(doc, file, dir)
    }

    fn from_table(mut doc: toml::Table, file: &str, dir: &Path) -> Result<Sweep, SweepError> {
        let err = |field: &str, message: String| SweepError {
            file: file.to_string(),
            field: field.to_string(),
            message,
        };
        for k in doc.keys() {
            if !["name", "base", "grid", "seeds"].contains(&k.as_str()) {
                return Err(err(
                    k,
                    "unknown field; a sweep has name, base, grid and seeds".into(),
                ));
            }
        }
        let (base, base_label) = match doc.remove("base") {
            None => {
                return Err(err(
                    "base",
                    "missing: the scenario to vary, as a path or a [base] table".into(),
                ))
            }
            Some(toml::Value::String(p)) => {
                let path: PathBuf = dir.join(&p);
                let label = path.display().to_string();
                let text = brisk_scenario::input::read_text(&path)
                    .map_err(|e| err("base", format!("{label}: {e}")))?;
                let t: toml::Table = toml::from_str(&text).map_err(|e| SweepError {
                    file: label.clone(),
                    field: "(file)".into(),
                    message: toml_message(&text, &e),
                })?;
                (t, label)
            }
            Some(toml::Value::Table(t)) => (t, "<inline base>".to_string()),
            Some(other) => {
                return Err(err(
                    "base",
                    format!("expected a path or a table, got a {}", other.type_str()),
                ))
            }
        };
        let name = match doc.remove("name") {
            None => Path::new(file)
                .file_stem()
                .map_or("sweep".to_string(), |s| s.to_string_lossy().into_owned()),
            Some(toml::Value::String(s)) => s,
            Some(other) => {
                return Err(err(
                    "name",
                    format!("expected text, got a {}", other.type_str()),
                ))
            }
        };
        let kind = if base.contains_key("workload") {
            ScenarioKind::Network
        } else {
            ScenarioKind::Dumbbell
        };
        let seeds = match doc.remove("seeds") {
            None => vec![base_seed(&base)],
            Some(v) => parse_seeds(&v).map_err(|m| err("seeds", m))?,
        };
        let grid = match doc.remove("grid") {
            None => toml::Table::new(),
            Some(toml::Value::Table(t)) => t,
            Some(other) => {
                return Err(err(
                    "grid",
                    format!(
                        "expected a table of key = [values], got a {}",
                        other.type_str()
                    ),
                ))
            }
        };
        // toml::Table iterates in sorted key order: the cell order of the module doc.
        let mut keys = Vec::new();
        let mut values = Vec::new();
        for (k, v) in grid {
            let field = format!("grid.{k:?}");
            let key = KeyPath::parse(&k).map_err(|e| err(&field, e.message))?;
            let toml::Value::Array(vs) = v else {
                return Err(err(&field, "expected a list of values, e.g. [1, 2]".into()));
            };
            if vs.is_empty() || vs.len() > MAX_VALUES {
                return Err(err(
                    &field,
                    format!("expected 1 to {MAX_VALUES} values, got {}", vs.len()),
                ));
            }
            keys.push(key);
            values.push(vs);
        }
        let mut ncells: usize = 1;
        for vs in &values {
            ncells = ncells.saturating_mul(vs.len());
        }
        if ncells > MAX_CELLS {
            return Err(err(
                "grid",
                format!("{ncells} cells; a sweep has at most {MAX_CELLS}"),
            ));
        }
        if ncells.saturating_mul(seeds.len()) > MAX_RUNS {
            return Err(err(
                "seeds",
                format!(
                    "{ncells} cells × {} seeds is more than {MAX_RUNS} runs",
                    seeds.len()
                ),
            ));
        }
        let mut cells = Vec::with_capacity(ncells);
        for index in 0..ncells {
            cells.push(make_cell(
                index,
                &base,
                &base_label,
                kind,
                &keys,
                &values,
                file,
            )?);
        }
        Ok(Sweep {
            name,
            base_label,
            kind,
            keys,
            cells,
            seeds,
        })
    }

    /// Every run, cell-major: (cell index, seed).
    pub fn jobs(&self) -> Vec<(usize, u64)> {
        self.cells
            .iter()
            .flat_map(|c| self.seeds.iter().map(move |&s| (c.index, s)))
            .collect()
    }
}

/// The scenario's own `seed` (1 when it has none, as brisk run's default).
fn base_seed(base: &toml::Table) -> u64 {
    base.get("seed")
        .and_then(toml::Value::as_integer)
        .and_then(|s| u64::try_from(s).ok())
        .unwrap_or(1)
}

/// `A..B` (inclusive, also `A..=B`) of at most `max` seeds: the one range syntax of
/// `brisk run --seeds` and a sweep's `seeds`.
pub fn seed_range(s: &str, max: u64) -> Result<std::ops::RangeInclusive<u64>, String> {
    let bad = || format!("expected a seed range such as 1..10, got {s:?}");
    let (a, b) = s.split_once("..").ok_or_else(bad)?;
    let b = b.strip_prefix('=').unwrap_or(b);
    let a: u64 = a.trim().parse().map_err(|_| bad())?;
    let b: u64 = b.trim().parse().map_err(|_| bad())?;
    if b < a {
        return Err(format!(
            "{s}: the range is empty (the end is below the start)"
        ));
    }
    if b - a >= max {
        return Err(format!("{s}: at most {max} seeds"));
    }
    Ok(a..=b)
}

/// `"A..B"` (inclusive, also `A..=B`) or a list of whole numbers; no repeats.
fn parse_seeds(v: &toml::Value) -> Result<Vec<u64>, String> {
    let seeds: Vec<u64> = match v {
        toml::Value::String(s) => seed_range(s, MAX_SEEDS as u64)?.collect(),
        toml::Value::Array(items) => {
            if items.len() > MAX_SEEDS {
                return Err(format!("at most {MAX_SEEDS} seeds"));
            }
            items
                .iter()
                .map(|x| {
                    x.as_integer()
                        .and_then(|i| u64::try_from(i).ok())
                        .ok_or_else(|| {
                            format!(
                                "each seed is a whole number from 0 to {}, got {x}",
                                i64::MAX
                            )
                        })
                })
                .collect::<Result<_, _>>()?
        }
        toml::Value::Integer(i) => vec![u64::try_from(*i)
            .map_err(|_| format!("a seed is a whole number from 0 to {}, got {i}", i64::MAX))?],
        other => {
            return Err(format!(
                "expected a range such as \"1..10\" or a list, got a {}",
                other.type_str()
            ))
        }
    };
    if seeds.is_empty() {
        return Err("the list is empty; give at least one seed".into());
    }
    let mut sorted = seeds.clone();
    sorted.sort_unstable();
    if let Some(w) = sorted.windows(2).find(|w| w[0] == w[1]) {
        return Err(format!("seed {} appears twice", w[0]));
    }
    Ok(seeds)
}

/// Builds and validates cell `index`: the base with each key's value for this cell.
fn make_cell(
    index: usize,
    base: &toml::Table,
    base_label: &str,
    kind: ScenarioKind,
    keys: &[KeyPath],
    values: &[Vec<toml::Value>],
    file: &str,
) -> Result<Cell, SweepError> {
    let mut table = base.clone();
    let mut params = Vec::with_capacity(keys.len());
    let mut rest = index;
    let mut picks = vec![0usize; keys.len()];
    for i in (0..keys.len()).rev() {
        picks[i] = rest % values[i].len();
        rest /= values[i].len();
    }
    for (i, key) in keys.iter().enumerate() {
        let v = values[i][picks[i]].clone();
        key.set(&mut table, v.clone())
            .map_err(|KeyError { key, message }| SweepError {
                file: file.to_string(),
                field: format!("grid.{key:?}"),
                message,
            })?;
        params.push((key.as_str().to_string(), v));
    }
    let scenario = toml::to_string(&table).map_err(|e| SweepError {
        file: file.to_string(),
        field: "base".into(),
        message: format!("cell {index} cannot be written as TOML: {e}"),
    })?;
    check_scenario(&scenario, base_label, kind).map_err(|(field, message)| {
        // A field the grid set is the grid's fault; anything else is the base's.
        match keys.iter().position(|k| {
            let k = k.as_str();
            field == k || field.starts_with(&format!("{k}.")) || field.starts_with(&format!("{k}["))
        }) {
            Some(i) => SweepError {
                file: file.to_string(),
                field: format!("grid.{:?}", keys[i].as_str()),
                message: format!("value {} (cell {index}): {message}", params[i].1),
            },
            None => SweepError {
                file: base_label.to_string(),
                field,
                message: if keys.is_empty() {
                    message
                } else {
                    format!("{message} (in cell {index})")
                },
            },
        }
    })?;
    Ok(Cell {
        index,
        params,
        scenario,
    })
}

/// Parses a cell's scenario as brisk run would; Err(field, message).
pub(crate) fn check_scenario(
    text: &str,
    label: &str,
    kind: ScenarioKind,
) -> Result<(), (String, String)> {
    match kind {
        ScenarioKind::Dumbbell => brisk_scenario::Scenario::from_toml_str_named(text, label)
            .map(|_| ())
            .map_err(|e| (e.field, e.message)),
        ScenarioKind::Network => brisk_sim::topo_build::from_toml_str_named(text, label)
            .map(|_| ())
            .map_err(|e| (e.field, e.message)),
    }
}

/// A TOML syntax error's message with its line.
fn toml_message(text: &str, e: &toml::de::Error) -> String {
    match e.span() {
        Some(span) => format!(
            "{} (line {})",
            e.message(),
            text[..span.start.min(text.len())].matches('\n').count() + 1
        ),
        None => e.message().to_string(),
    }
}

/// JSON to TOML; Err(path, message) for what TOML cannot hold (null, numbers out of
/// range).
pub fn json_to_toml(v: &serde_json::Value, path: &str) -> Result<toml::Value, (String, String)> {
    use serde_json::Value as J;
    let here = || {
        if path.is_empty() {
            "(json)".to_string()
        } else {
            path.to_string()
        }
    };
    Ok(match v {
        J::Null => {
            return Err((
                here(),
                "null (None) has no TOML form; leave the field out instead".into(),
            ))
        }
        J::Bool(b) => toml::Value::Boolean(*b),
        J::Number(n) => match (n.as_i64(), n.as_f64()) {
            (Some(i), _) => toml::Value::Integer(i),
            (None, Some(f)) if n.is_f64() => toml::Value::Float(f),
            _ => {
                return Err((
                    here(),
                    format!(
                        "{n} is out of range (integers from {} to {})",
                        i64::MIN,
                        i64::MAX
                    ),
                ))
            }
        },
        J::String(s) => toml::Value::String(s.clone()),
        J::Array(items) => toml::Value::Array(
            items
                .iter()
                .enumerate()
                .map(|(i, x)| json_to_toml(x, &format!("{}[{i}]", here())))
                .collect::<Result<_, _>>()?,
        ),
        J::Object(m) => {
            let mut t = toml::Table::new();
            for (k, x) in m {
                let p = if path.is_empty() {
                    k.clone()
                } else {
                    format!("{path}.{k}")
                };
                t.insert(k.clone(), json_to_toml(x, &p)?);
            }
            toml::Value::Table(t)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const BASE: &str = r#"
name = "t"
seed = 7
duration = "1s"
[bottleneck]
rate = "10Mbit"
[[flow]]
rtt = "10ms"
app = { kind = "bulk" }
"#;

    fn sweep(extra: &str) -> Result<Sweep, SweepError> {
        // The sweep's own fields first: after [base] they would belong to its last table.
        let text = format!(
            "{extra}\n[base]\n{}",
            BASE.replace("[bottleneck]", "[base.bottleneck]")
                .replace("[[flow]]", "[[base.flow]]")
        );
        Sweep::from_toml_str(&text, "s.toml", Path::new(""))
    }

    #[test]
    fn cells_are_the_sorted_cartesian_product_last_key_fastest() {
        let s = sweep("seeds = \"1..3\"\n[grid]\n\"flow[0].rtt\" = [\"10ms\", \"20ms\", \"40ms\"]\n\"bottleneck.rate\" = [\"5Mbit\", \"10Mbit\"]\n").unwrap();
        assert_eq!(s.cells.len(), 6);
        assert_eq!(s.seeds, vec![1, 2, 3]);
        assert_eq!(s.jobs().len(), 18);
        let keys: Vec<&str> = s.keys.iter().map(KeyPath::as_str).collect();
        assert_eq!(keys, ["bottleneck.rate", "flow[0].rtt"]);
        assert_eq!(s.cells[1].params[0].1.as_str(), Some("5Mbit"));
        assert_eq!(s.cells[1].params[1].1.as_str(), Some("20ms"));
        assert_eq!(s.cells[3].params[0].1.as_str(), Some("10Mbit"));
        assert!(s.cells[3].scenario.contains("rate = \"10Mbit\""));
    }

    #[test]
    fn without_seeds_the_scenario_seed_runs_once_and_without_grid_one_cell() {
        let s = sweep("").unwrap();
        assert_eq!(s.seeds, vec![7]);
        assert_eq!(s.cells.len(), 1);
        assert!(s.cells[0].params.is_empty());
    }

    #[test]
    fn errors_name_the_grid_key_or_the_field() {
        let e = sweep("[grid]\n\"bottleneck.rate\" = [\"10Mbit\", \"fast\"]\n").unwrap_err();
        assert_eq!(e.field, "grid.\"bottleneck.rate\"");
        assert!(
            e.message.contains("\"fast\"") && e.message.contains("cell 1"),
            "{e}"
        );
        let e = sweep("[grid]\n\"flow[0].tcp.no_such_knob\" = [1]\n").unwrap_err();
        assert_eq!(e.field, "grid.\"flow[0].tcp.no_such_knob\"", "{e}");
        let e = sweep("[grid]\n\"flow[3].rtt\" = [\"1ms\"]\n").unwrap_err();
        assert!(e.message.contains("1 entries in flow"), "{e}");
        let e = sweep("[grid]\n\"bottleneck.rate\" = []\n").unwrap_err();
        assert!(e.message.contains("1 to"), "{e}");
        let e = sweep("[grid]\n\"bottleneck.rate\" = \"10Mbit\"\n").unwrap_err();
        assert!(e.message.contains("list of values"), "{e}");
        for (seeds, want) in [
            ("\"5..1\"", "empty"),
            ("[1, 1]", "twice"),
            ("[-1]", "whole number"),
            ("\"x\"", "range such as"),
            ("\"0..200000\"", "at most"),
        ] {
            let e = sweep(&format!("seeds = {seeds}\n")).unwrap_err();
            assert_eq!(e.field, "seeds");
            assert!(e.message.contains(want), "{seeds}: {e}");
        }
        let e = Sweep::from_toml_str("grid = {}\n", "s.toml", Path::new("")).unwrap_err();
        assert_eq!(e.field, "base");
        let e =
            Sweep::from_toml_str("base = \"nope.toml\"\n", "s.toml", Path::new("")).unwrap_err();
        assert!(e.message.contains("nope.toml"), "{e}");
        let e = sweep("colour = 1\n").unwrap_err();
        assert_eq!(e.field, "colour");
    }

    #[test]
    fn grid_size_is_bounded_before_anything_is_built() {
        let vals: Vec<String> = (0..400).map(|i| format!("\"{}ms\"", i + 1)).collect();
        let grid = format!(
            "[grid]\n\"flow[0].rtt\" = [{v}]\n\"flow[0].start\" = [{v}]\n",
            v = vals.join(",")
        );
        let e = sweep(&grid).unwrap_err();
        assert!(e.message.contains("160000 cells"), "{e}");
    }

    #[test]
    fn json_form_is_the_same_sweep() {
        let toml_s =
            sweep("seeds = [3, 4]\n[grid]\n\"bottleneck.rate\" = [\"5Mbit\", \"10Mbit\"]\n")
                .unwrap();
        let js = serde_json::json!({
            "base_toml": BASE,
            "seeds": [3, 4],
            "grid": {"bottleneck.rate": ["5Mbit", "10Mbit"]},
        });
        let json_s = Sweep::from_json_str(&js.to_string(), "<python>", Path::new("")).unwrap();
        assert_eq!(json_s.cells.len(), 2);
        for (a, b) in toml_s.cells.iter().zip(&json_s.cells) {
            assert_eq!(a.scenario, b.scenario);
        }
        let e = Sweep::from_json_str(
            r#"{"base_toml": "x", "base": {}}"#,
            "<python>",
            Path::new(""),
        )
        .unwrap_err();
        assert!(e.message.contains("not both"), "{e}");
        let e = Sweep::from_json_str(r#"{"base": {"name": null}}"#, "<python>", Path::new(""))
            .unwrap_err();
        assert_eq!(e.field, "base.name");
    }
}

//! Claim rows: one checkable statement of a paper, with the paper's value, ours, the
//! tolerance and a verdict. IDs are those of `shared/claims.md` (a lower-case letter
//! names one part of a multi-part row, e.g. `DC-1a`); rows with no entry there use
//! their own prefix (`DC-SWEEP-*`).

use serde::Serialize;
use serde_json::Value;
use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Verdict {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    /// Not applicable: not measurable in this run (the note says why).
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Verdict {
    pub fn from_check(ok: bool) -> Self {
        if ok {
            Verdict::Pass
        } else {
            Verdict::Fail
        }
    }
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
            Verdict::NotApplicable => "n/a",
        }
    }
}

impl fmt::Display for Verdict {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One claim row. Serializes to exactly the JSON fields of the `--json` output.
#[derive(Clone, Debug, Serialize)]
pub struct Claim {
    pub id: String,
    pub description: String,
    /// The paper's value: a number, or text when the paper gives a bound or no number.
    pub paper: Value,
    /// Our value: a number, text, or null when not measured.
    pub ours: Value,
    pub unit: String,
    pub tolerance: String,
    pub verdict: Verdict,
    /// Why the verdict is what it is, where that needs saying (report only).
    #[serde(skip)]
    pub note: String,
}

/// A JSON number for finite values, else null (JSON has no NaN).
pub fn num(x: f64) -> Value {
    serde_json::Number::from_f64(x).map_or(Value::Null, Value::Number)
}

impl Claim {
    pub fn new(id: &str, description: &str) -> Self {
        Claim {
            id: id.into(),
            description: description.into(),
            paper: Value::Null,
            ours: Value::Null,
            unit: String::new(),
            tolerance: String::new(),
            verdict: Verdict::NotApplicable,
            note: String::new(),
        }
    }
    pub fn paper(mut self, v: f64) -> Self {
        self.paper = num(v);
        self
    }
    pub fn paper_text(mut self, v: &str) -> Self {
        self.paper = Value::String(v.into());
        self
    }
    pub fn ours(mut self, v: f64) -> Self {
        self.ours = num(v);
        self
    }
    pub fn ours_text(mut self, v: &str) -> Self {
        self.ours = Value::String(v.into());
        self
    }
    pub fn unit(mut self, u: &str) -> Self {
        self.unit = u.into();
        self
    }
    pub fn tolerance(mut self, t: &str) -> Self {
        self.tolerance = t.into();
        self
    }
    pub fn note(mut self, n: impl Into<String>) -> Self {
        self.note = n.into();
        self
    }
    /// Sets the verdict from a check; a check on a non-finite value of ours fails.
    pub fn check(mut self, ok: bool) -> Self {
        self.verdict = Verdict::from_check(ok);
        self
    }
    pub fn not_applicable(mut self, why: impl Into<String>) -> Self {
        self.verdict = Verdict::NotApplicable;
        self.note = why.into();
        self
    }
}

/// A value for tables: numbers with up to 4 significant digits, text as is.
pub fn show(v: &Value) -> String {
    match v {
        Value::Null => "-".into(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), fmt_num),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Up to 4 significant digits, no exponent for everyday magnitudes.
pub fn fmt_num(x: f64) -> String {
    if !x.is_finite() {
        return "-".into();
    }
    if x == 0.0 {
        return "0".into();
    }
    let mag = x.abs().log10().floor() as i32;
    if !(-4..=7).contains(&mag) {
        return format!("{x:.3e}");
    }
    let decimals = (3 - mag).max(0) as usize;
    let s = format!("{x:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_serialize_to_exactly_the_specified_fields() {
        let c = Claim::new("DC-1a", "mean RTT")
            .paper(13.5)
            .ours(f64::NAN)
            .unit("ms")
            .tolerance("±30 %")
            .note("hidden")
            .check(false);
        let v = serde_json::to_value(&c).unwrap();
        let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
        assert_eq!(keys.len(), 7);
        for k in [
            "id",
            "description",
            "paper",
            "ours",
            "unit",
            "tolerance",
            "verdict",
        ] {
            assert!(v.get(k).is_some(), "{k}");
        }
        assert_eq!(v["verdict"], "fail");
        assert!(v["ours"].is_null());
        let na = serde_json::to_value(Claim::new("X", "y")).unwrap();
        assert_eq!(na["verdict"], "n/a");
    }

    #[test]
    fn numbers_show_four_significant_digits() {
        assert_eq!(fmt_num(13.456), "13.46");
        assert_eq!(fmt_num(493.0), "493");
        assert_eq!(fmt_num(0.02), "0.02");
        assert_eq!(fmt_num(12345.0), "12345");
    }
}

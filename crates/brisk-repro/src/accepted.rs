//! Accepted failures: claims known to fail, each with the reason, kept in
//! `repro/accepted-failures.toml`: `"CLAIM-ID" = "reason"` for a failure in every
//! mode, or `"CLAIM-ID" = { reason = "...", modes = ["full"] }` for one that fails only
//! in the full (or only in the `--quick`) suite. The CI suite fails on any other failing
//! claim and warns when an accepted failure starts passing.

use crate::claim::Verdict;
use crate::experiment::ExperimentResult;
use std::collections::BTreeMap;

/// The list shipped with the repository.
pub const EMBEDDED: &str = include_str!("../../../repro/accepted-failures.toml");

/// Claim ID → reason: the failures accepted in the mode being run.
pub type Accepted = BTreeMap<String, String>;

/// Which suite a run is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Quick,
    Full,
}

impl Mode {
    pub fn of(quick: bool) -> Mode {
        if quick {
            Mode::Quick
        } else {
            Mode::Full
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Entry {
    Always(String),
    Scoped { reason: String, modes: Vec<Mode> },
}

/// Parses an accepted-failures file and keeps the entries that apply in `mode`.
pub fn parse(text: &str, mode: Mode) -> Result<Accepted, String> {
    let all = toml::from_str::<BTreeMap<String, Entry>>(text).map_err(|e| {
        format!("accepted failures: {e} (each entry is \"ID\" = \"reason\" or \"ID\" = {{ reason = \"...\", modes = [\"quick\" | \"full\"] }})")
    })?;
    Ok(all
        .into_iter()
        .filter_map(|(id, e)| match e {
            Entry::Always(reason) => Some((id, reason)),
            Entry::Scoped { reason, modes } => modes.contains(&mode).then_some((id, reason)),
        })
        .collect())
}

/// The embedded list for `mode` (an unparsable file is an error, not an empty list).
pub fn embedded(mode: Mode) -> Result<Accepted, String> {
    parse(EMBEDDED, mode)
}

/// What the suite's results mean against the accepted list.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Regressions {
    /// Failing claims that are not accepted: the suite fails.
    pub unexpected: Vec<String>,
    /// Accepted failures that now pass: the list should shrink.
    pub now_passing: Vec<String>,
}

pub fn check(results: &[ExperimentResult], accepted: &Accepted) -> Regressions {
    let mut r = Regressions::default();
    for c in results.iter().flat_map(|e| &e.claims) {
        match (c.verdict, accepted.contains_key(&c.id)) {
            (Verdict::Fail, false) => r.unexpected.push(c.id.clone()),
            (Verdict::Pass, true) => r.now_passing.push(c.id.clone()),
            _ => {}
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claim::Claim;

    #[test]
    fn embedded_list_parses() {
        embedded(Mode::Quick).unwrap();
        embedded(Mode::Full).unwrap();
    }

    #[test]
    fn scoped_entries_apply_only_in_their_modes() {
        let text = "\"A\" = \"always\"\n\"B\" = { reason = \"full only\", modes = [\"full\"] }\n";
        let q = parse(text, Mode::Quick).unwrap();
        let f = parse(text, Mode::Full).unwrap();
        assert_eq!(q.keys().collect::<Vec<_>>(), ["A"]);
        assert_eq!(f.keys().collect::<Vec<_>>(), ["A", "B"]);
        assert!(parse(
            "\"A\" = { reason = \"x\", modes = [\"sometimes\"] }",
            Mode::Full
        )
        .is_err());
    }

    #[test]
    fn only_unaccepted_failures_are_regressions() {
        let acc = parse("\"A\" = \"known\"\n\"B\" = \"known\"", Mode::Full).unwrap();
        let mut e = ExperimentResult::new("x", "y");
        e.claims.push(Claim::new("A", "").check(false));
        e.claims.push(Claim::new("B", "").check(true));
        e.claims.push(Claim::new("C", "").check(false));
        e.claims.push(Claim::new("D", ""));
        let r = check(&[e], &acc);
        assert_eq!(r.unexpected, vec!["C".to_string()]);
        assert_eq!(r.now_passing, vec!["B".to_string()]);
    }
}

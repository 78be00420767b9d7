//! Accepted failures: claims known to fail, each with the reason, kept in
//! `repro/accepted-failures.toml` (`"CLAIM-ID" = "reason"`). The CI suite fails on any
//! other failing claim and warns when an accepted failure starts passing.

use crate::claim::Verdict;
use crate::experiment::ExperimentResult;
use std::collections::BTreeMap;

/// The list shipped with the repository.
pub const EMBEDDED: &str = include_str!("../../../repro/accepted-failures.toml");

/// Claim ID → reason.
pub type Accepted = BTreeMap<String, String>;

/// Parses an accepted-failures file.
pub fn parse(text: &str) -> Result<Accepted, String> {
    toml::from_str::<Accepted>(text).map_err(|e| format!("accepted failures: {e}"))
}

/// The embedded list (an unparsable file is an error, not an empty list).
pub fn embedded() -> Result<Accepted, String> {
    parse(EMBEDDED)
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
        embedded().unwrap();
    }

    #[test]
    fn only_unaccepted_failures_are_regressions() {
        let acc = parse("\"A\" = \"known\"\n\"B\" = \"known\"").unwrap();
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

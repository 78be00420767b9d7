//! Grid keys: paths into a scenario's TOML, such as `bottleneck.rate` or
//! `flow[0].tcp.abe.beta_ecn`, and setting a value at one.
//!
//! The syntax is the one brisk's scenario errors already use for fields
//! (`flow[2].tcp.cc`), so a key can be copied from an error message. A missing table on
//! the way is created (a sweep over `flow[0].tcp.rdb.max_bundle` need not repeat the
//! `[flow.tcp.rdb]` table in the base); an array index must exist, since a `[[flow]]`
//! made out of nothing would be a flow nobody described. Whether the final field is one
//! the scenario knows is the scenario parser's call: it rejects unknown fields by name.

use std::fmt;

/// One step of a path: a table key, optionally followed by an array index.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    key: String,
    index: Option<usize>,
}

/// A parsed grid key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyPath {
    text: String,
    steps: Vec<Step>,
}

/// Why a key could not be parsed or applied; the message names the key.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("grid key {key:?}: {message}")]
pub struct KeyError {
    pub key: String,
    pub message: String,
}

/// Longest key accepted, and most steps in one: scenario paths are a few steps deep.
const MAX_KEY_LEN: usize = 256;
const MAX_STEPS: usize = 16;

impl KeyPath {
    /// Parses `a.b[3].c`: keys of letters, digits, `_` and `-`, each optionally indexed.
    pub fn parse(text: &str) -> Result<KeyPath, KeyError> {
        let err = |m: &str| KeyError {
            key: text.to_string(),
            message: m.to_string(),
        };
        if text.is_empty() {
            return Err(err("is empty; expected a path such as bottleneck.rate"));
        }
        if text.len() > MAX_KEY_LEN {
            return Err(err(&format!("is longer than {MAX_KEY_LEN} characters")));
        }
        let mut steps = Vec::new();
        for part in text.split('.') {
            let (key, index) = match part.split_once('[') {
                None => (part, None),
                Some((k, rest)) => {
                    let digits = rest.strip_suffix(']').ok_or_else(|| {
                        err(&format!(
                            "{part:?}: an index is written name[N], with a closing bracket"
                        ))
                    })?;
                    let n: usize = digits.parse().map_err(|_| {
                        err(&format!(
                            "{part:?}: the index must be a whole number from 0, got {digits:?}"
                        ))
                    })?;
                    (k, Some(n))
                }
            };
            if key.is_empty()
                || !key
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
            {
                return Err(err(&format!(
                    "{part:?} is not a field name (letters, digits, _ and -), in a path such as flow[0].tcp.cc"
                )));
            }
            steps.push(Step {
                key: key.to_string(),
                index,
            });
        }
        if steps.len() > MAX_STEPS {
            return Err(err(&format!("has more than {MAX_STEPS} steps")));
        }
        Ok(KeyPath {
            text: text.to_string(),
            steps,
        })
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// Sets `value` at this path in `root`, creating missing tables on the way.
    pub fn set(&self, root: &mut toml::Table, value: toml::Value) -> Result<(), KeyError> {
        let err = |m: String| KeyError {
            key: self.text.clone(),
            message: m,
        };
        let mut table = root;
        let last = self.steps.len() - 1;
        let mut at = String::new();
        for (i, step) in self.steps.iter().enumerate() {
            if !at.is_empty() {
                at.push('.');
            }
            at.push_str(&step.key);
            let slot = match step.index {
                None if i == last => {
                    table.insert(step.key.clone(), value);
                    return Ok(());
                }
                None => table
                    .entry(step.key.clone())
                    .or_insert_with(|| toml::Value::Table(toml::Table::new())),
                Some(n) => {
                    let Some(v) = table.get_mut(&step.key) else {
                        return Err(err(format!(
                            "the base scenario has no {at} to index (write [[{at}]] entries in it first)"
                        )));
                    };
                    let toml::Value::Array(items) = v else {
                        return Err(err(format!("{at} is not a list, so it has no [{n}]")));
                    };
                    let len = items.len();
                    let Some(item) = items.get_mut(n) else {
                        return Err(err(format!(
                            "the base scenario has {len} entries in {at} (indices 0 to {}), not [{n}]",
                            len.saturating_sub(1)
                        )));
                    };
                    at.push_str(&format!("[{n}]"));
                    if i == last {
                        *item = value;
                        return Ok(());
                    }
                    item
                }
            };
            table = match slot {
                toml::Value::Table(t) => t,
                other => {
                    return Err(err(format!(
                        "{at} is a {}, not a table, so it has no field {:?}",
                        other.type_str(),
                        self.steps[i + 1].key
                    )))
                }
            };
        }
        // NOTE(unreachable): the loop returns at the last step; parse rejects empty paths.
        Err(err("has no steps".into()))
    }
}

impl fmt::Display for KeyPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> toml::Table {
        toml::from_str(
            "name = \"x\"\n[bottleneck]\nrate = \"10Mbit\"\n[[flow]]\ncc = \"cubic\"\n[[flow]]\ncc = \"reno\"\n",
        )
        .unwrap()
    }

    #[test]
    fn sets_nested_and_indexed_fields_and_creates_missing_tables() {
        let mut t = base();
        KeyPath::parse("bottleneck.rate")
            .unwrap()
            .set(&mut t, "20Mbit".into())
            .unwrap();
        KeyPath::parse("flow[1].tcp.abe.beta_ecn")
            .unwrap()
            .set(&mut t, 0.85.into())
            .unwrap();
        assert_eq!(t["bottleneck"]["rate"].as_str(), Some("20Mbit"));
        assert_eq!(
            t["flow"][1]["tcp"]["abe"]["beta_ecn"].as_float(),
            Some(0.85)
        );
        assert!(t["flow"][0].get("tcp").is_none());
    }

    #[test]
    fn bad_keys_name_the_key_and_say_why() {
        for (key, want) in [
            ("", "is empty"),
            ("flow[x].cc", "whole number"),
            ("flow[0.cc", "closing bracket"),
            ("bottle neck.rate", "not a field name"),
            ("a..b", "not a field name"),
        ] {
            let e = KeyPath::parse(key).unwrap_err();
            assert_eq!(e.key, key);
            assert!(e.to_string().contains(want), "{key}: {e}");
        }
        let mut t = base();
        let e = KeyPath::parse("flow[2].cc")
            .unwrap()
            .set(&mut t, "reno".into())
            .unwrap_err();
        assert!(
            e.to_string().contains("2 entries in flow (indices 0 to 1)"),
            "{e}"
        );
        let e = KeyPath::parse("name.x")
            .unwrap()
            .set(&mut t, 1.into())
            .unwrap_err();
        assert!(
            e.to_string().contains("name is a string, not a table"),
            "{e}"
        );
        let e = KeyPath::parse("reverse[0].rate")
            .unwrap()
            .set(&mut t, 1.into())
            .unwrap_err();
        assert!(e.to_string().contains("no reverse to index"), "{e}");
        let e = KeyPath::parse("bottleneck[0]")
            .unwrap()
            .set(&mut t, 1.into())
            .unwrap_err();
        assert!(e.to_string().contains("not a list"), "{e}");
    }
}

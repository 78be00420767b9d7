//! A scenario problem names the file, the field and what is wrong, in the user's
//! words (ranges, not Rust type names).

use thiserror::Error;

/// A scenario problem: which file, which field, what is wrong.
#[derive(Clone, Debug, PartialEq, Eq, Error)]
#[error("{file}: {field}: {message}")]
pub struct ScenarioError {
    /// The file name (or `<string>` for in-memory scenarios).
    pub file: String,
    /// Dotted path of the offending key, e.g. `flow[0].rtt`; `(file)` for syntax errors.
    pub field: String,
    pub message: String,
}

impl ScenarioError {
    /// A `(field, message)` pair of a validation, placed in `file`.
    pub fn at(file: &str, (field, message): (String, String)) -> ScenarioError {
        ScenarioError {
            file: file.to_string(),
            field,
            message,
        }
    }
}

/// serde names Rust types in its messages ("expected u16"); a user needs the range.
pub fn humane_types(msg: &str) -> String {
    const RANGES: &[(&str, &str)] = &[
        ("expected u8", "expected an integer from 0 to 255"),
        ("expected u16", "expected an integer from 0 to 65535"),
        ("expected u32", "expected an integer from 0 to 4294967295"),
        (
            "expected u64",
            "expected an integer from 0 to 18446744073709551615",
        ),
        (
            "expected usize",
            "expected an integer from 0 to 18446744073709551615",
        ),
        ("expected i64", "expected an integer"),
        ("expected f64", "expected a number"),
        ("expected a boolean", "expected true or false"),
    ];
    let mut out = msg.to_string();
    for (rust, human) in RANGES {
        if let Some(i) = out.find(rust) {
            // Only whole words: "expected u16" but not "expected u160".
            let end = i + rust.len();
            if !out[end..].starts_with(|c: char| c.is_ascii_alphanumeric()) {
                out.replace_range(i..end, human);
            }
        }
    }
    out
}

/// Parses TOML `text` into `T`, strictly; a problem names `file`, the key path and
/// the line, in humane words. Every scenario kind (dumbbell, network, sweep base)
/// parses through here.
pub fn parse_toml<T: serde::de::DeserializeOwned>(
    text: &str,
    file: &str,
) -> Result<T, ScenarioError> {
    let de = toml::Deserializer::new(text);
    serde_path_to_error::deserialize(de).map_err(|e| {
        let path = e.path().to_string();
        let inner = e.into_inner();
        let mut message = humane_types(inner.message());
        if let Some(span) = inner.span() {
            let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
            message.push_str(&format!(" (line {line})"));
        }
        let field = if path.is_empty() || path == "." {
            "(file)".to_string()
        } else {
            path
        };
        ScenarioError {
            file: file.to_string(),
            field,
            message,
        }
    })
}

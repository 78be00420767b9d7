//! Reading local input files (scenarios, topologies, sweeps, delivery traces) with a
//! size cap. `std::fs::read_to_string` reads until the file ends, and some never do:
//! `brisk run /dev/zero` and `brisk trace info /dev/zero` read until allocation failed
//! (4.2 GB, issue 29). A file's reported length cannot be trusted for this (character
//! devices, pipes and `/proc` files report 0), so the cap is enforced while reading.
//!
//! This is the edge where brisk reads files: scenario text ([`read_file`]) and the
//! delivery traces links name ([`load_link_trace`]); brisk-net and the simulator only
//! get text.

use std::io::Read;
use std::path::Path;

use crate::error::ScenarioError;
use crate::link::{LinkSpec, SpecError};

/// The most brisk reads from one input file: 64 MiB. The largest legitimate input is
/// a delivery trace at its limit (`mahimahi::MAX_TRACE_LINES`, 5 million lines of up
/// to 9 digits, plus CRLF: under 55 MiB); scenarios and topologies are kilobytes, a
/// 100 000-flow scenario a few MiB.
pub const MAX_INPUT_FILE: u64 = 64 << 20;

/// The text of `path`, read to its end or to `MAX_INPUT_FILE` bytes, whichever comes
/// first. Errors (as `std::io::Error`, for callers that already report read errors
/// with the file's name in front) name the limit when the file is longer, and say so
/// when it is not UTF-8 text.
pub fn read_text(path: &Path) -> std::io::Result<String> {
    read_text_capped(path, MAX_INPUT_FILE)
}

/// [`read_text`] with another cap (for tests).
pub fn read_text_capped(path: &Path, cap: u64) -> std::io::Result<String> {
    let f = std::fs::File::open(path)?;
    let mut bytes = Vec::new();
    f.take(cap.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "larger than {}, the most brisk reads from an input file",
                size(cap)
            ),
        ));
    }
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!(
                "not UTF-8 text (invalid byte at offset {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// A scenario file's name (for messages) and text; an unreadable file is a
/// `ScenarioError` on the field `(file)`. Shared by every scenario kind.
pub fn read_file(path: &Path) -> Result<(String, String), ScenarioError> {
    let file = path.display().to_string();
    match read_text(path) {
        Ok(text) => Ok((file, text)),
        Err(e) => Err(ScenarioError {
            file,
            field: "(file)".into(),
            message: format!("cannot read: {e}"),
        }),
    }
}

/// Reads and attaches `link`'s `trace` file, if it names one not yet loaded,
/// resolving a relative path against `base` (the scenario file's directory). `name`
/// prefixes the field in errors (`bottleneck`, `--trace`, ...).
pub fn load_link_trace(link: &mut LinkSpec, base: &Path, name: &str) -> Result<(), SpecError> {
    let Some(file) = link.trace_to_load() else {
        return Ok(());
    };
    let path = base.join(file);
    // Capped while reading: a device or pipe reports no length.
    let text = read_text(&path).map_err(|e| SpecError {
        field: format!("{name}.trace"),
        message: format!("cannot read {}: {e}", path.display()),
    })?;
    link.attach_trace(&text, &path.display().to_string(), name)
}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 && bytes.is_multiple_of(1 << 20) {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_endless_file_is_refused_at_the_cap() {
        // (How fast is checked end to end in the binary's tests/input_caps.rs.)
        let e = read_text(Path::new("/dev/zero")).unwrap_err();
        assert!(e.to_string().contains("larger than 64 MiB"), "{e}");
    }

    #[test]
    fn files_within_the_cap_are_read_whole() {
        let dir = std::env::temp_dir().join(format!("brisk-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("a.txt");
        std::fs::write(&p, "0123456789").unwrap();
        assert_eq!(read_text_capped(&p, 10).unwrap(), "0123456789");
        let e = read_text_capped(&p, 9).unwrap_err();
        assert!(e.to_string().contains("larger than 9 bytes"), "{e}");
        std::fs::write(&p, [b'a', 0xff]).unwrap();
        let e = read_text_capped(&p, 10).unwrap_err();
        assert!(e.to_string().contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
